#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install bgboard as an appliance on Raspberry Pi OS Bookworm (arm64); run as root.
#
#   sudo scripts/install-pi.sh                 install, or bring an installation up to date
#   sudo scripts/install-pi.sh --uninstall     remove the service, the udev rule, the venv
#   sudo scripts/install-pi.sh --uninstall --purge   ... and the config, the match store, the user
#   scripts/install-pi.sh --dry-run            say what would change; change nothing
#   scripts/install-pi.sh --root DIR           install the files under DIR (tests); no apt,
#                                              useradd, systemctl or udevadm (as --no-system)
#   --no-system                                skip apt, useradd, systemctl and udevadm: print them
#   --pip-args "ARGS"                          extra arguments for pip install (tests: --no-deps ...)
#
# What it does: apt packages (python3-venv, gnubg; python3-picamera2, python3-libcamera,
# python3-lgpio and avrdude when the archive has them); the user bgboard in the groups gpio,
# video and dialout; /opt/bgboard/venv (it sees the system's picamera2) with bgboard in it and
# /usr/local/bin/bgboard; /etc/bgboard/config.toml (only when there is none: yours is kept);
# /var/lib/bgboard for the match store; the udev rule 60-bgboard.rules naming the LED controller
# /dev/bgboard-leds by its USB ids (BGBOARD_USB_IDS, default "1a86:7523 0403:6001 2341:0043":
# CH340, FTDI and Arduino Nanos); and bgboard.service, enabled at boot.
#
# Running it again changes nothing that is already right: every file is compared before it is
# written, the venv is reinstalled only when the sources changed, and each step says "unchanged".
set -euo pipefail

source_dir="$(cd "$(dirname "$0")/.." && pwd)"
root=""
system=1
dry_run=0
action=install
purge=0
pip_args=()
usb_ids=${BGBOARD_USB_IDS:-"1a86:7523 0403:6001 2341:0043"}
python=${PYTHON:-python3}

usage() {
  sed -n '3,13p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit "${1:-2}"
}

while [ $# -gt 0 ]; do
  case "$1" in
    --root) [ $# -ge 2 ] || usage; root="$(mkdir -p "$2" && cd "$2" && pwd)"; system=0; shift ;;
    --no-system) system=0 ;;
    --dry-run) dry_run=1 ;;
    --uninstall) action=uninstall ;;
    --purge) purge=1 ;;
    --pip-args) [ $# -ge 2 ] || usage; read -r -a pip_args <<<"$2"; shift ;;
    -h | --help) usage 0 ;;
    *) echo "$0: unknown option $1" >&2; usage ;;
  esac
  shift
done
if [ "$purge" = 1 ] && [ "$action" != uninstall ]; then
  echo "$0: --purge goes with --uninstall" >&2
  exit 2
fi
if [ "$system" = 1 ] && [ "$dry_run" = 0 ] && [ "$(id -u)" -ne 0 ]; then
  echo "$0: run it as root: sudo $0 $*" >&2
  exit 1
fi

# Where things go, on the Pi (the paths in the unit and the config never carry --root).
user=bgboard
prefix=/opt/bgboard
venv=$prefix/venv
etc=/etc/bgboard
config=$etc/config.toml
profile=$etc/board.toml
state=/var/lib/bgboard
store=$state/matches.sqlite3
unit=/etc/systemd/system/bgboard.service
rule=/etc/udev/rules.d/60-bgboard.rules
command_link=/usr/local/bin/bgboard
led_device=/dev/bgboard-leds

changes=0
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

at() { printf '%s%s' "$root" "$1"; }
say() { printf '%s\n' "$*"; }

# A command that changes the system outside --root: printed instead under --no-system or --dry-run.
system_run() {
  if [ "$system" = 0 ] || [ "$dry_run" = 1 ]; then
    say "would run: $*"
  else
    "$@"
  fi
}

# install_file SOURCE DEST MODE: write DEST (under --root) from SOURCE unless it already holds that.
install_file() {
  local from=$1 dest mode=$3
  dest="$(at "$2")"
  if [ -f "$dest" ] && cmp -s "$from" "$dest"; then
    say "unchanged: $2"
    return 1
  fi
  local how=new
  [ -e "$dest" ] && how=changed
  changes=$((changes + 1))
  if [ "$dry_run" = 1 ]; then
    say "would write: $2 ($how)"
    return 0
  fi
  mkdir -p "$(dirname "$dest")"
  install -m "$mode" "$from" "$dest.tmp.$$"
  mv -f "$dest.tmp.$$" "$dest"
  say "wrote: $2 ($how)"
}

# make_dir DIR MODE: create the folder (under --root) if it is missing.
make_dir() {
  local dir
  dir="$(at "$1")"
  if [ -d "$dir" ]; then
    say "unchanged: $1/"
    return 1
  fi
  changes=$((changes + 1))
  if [ "$dry_run" = 1 ]; then
    say "would create: $1/"
  else
    mkdir -p "$(dirname "$dir")"
    mkdir -m "$2" "$dir"
    say "created: $1/"
  fi
}

remove() {
  local path
  path="$(at "$1")"
  if [ ! -e "$path" ] && [ ! -L "$path" ]; then
    say "absent: $1"
    return 1
  fi
  changes=$((changes + 1))
  if [ "$dry_run" = 1 ]; then
    say "would remove: $1"
  else
    rm -rf "$path"
    say "removed: $1"
  fi
}

render_unit() {
  sed -e "s|@USER@|$user|g" -e "s|@VENV@|$venv|g" -e "s|@CONFIG@|$config|g" -e "s|@STATE@|$state|g" \
    "$source_dir/packaging/bgboard.service"
}

render_rule() {
  local template="$source_dir/packaging/60-bgboard.rules" id vendor product
  grep '^#' "$template"
  for id in $usb_ids; do
    vendor=${id%%:*}
    product=${id##*:}
    if ! [[ "$vendor" =~ ^[0-9a-f]{4}$ && "$product" =~ ^[0-9a-f]{4}$ ]]; then
      echo "$0: BGBOARD_USB_IDS: $id is not VID:PID in lower-case hex (1a86:7523)" >&2
      exit 2
    fi
    grep -v '^#' "$template" | sed -e "s/@VENDOR@/$vendor/g" -e "s/@PRODUCT@/$product/g"
  done
}

# The appliance's config: the example with the Pi's camera, LED controller, profile and store.
render_config() {
  sed -e 's|^# source = "picamera2:"|source = "picamera2:"|' \
    -e "s|^# profile = \"calibration.toml\"|profile = \"$profile\"|" \
    -e "s|^panel = \"fake\"|panel = \"$led_device\"|" \
    -e "s|^# path = \"/var/lib/bgboard/matches.sqlite3\"|path = \"$store\"|" \
    "$source_dir/bgboard/config.example.toml"
}

# -- apt -------------------------------------------------------------------------------------

apt_packages() {
  local wanted=(python3-venv python3-pip gnubg) optional=(python3-picamera2 python3-libcamera python3-lgpio avrdude)
  local package missing=()
  if [ "$system" = 0 ]; then
    say "would run: apt-get install --no-install-recommends ${wanted[*]} (and of ${optional[*]}, those the archive has)"
    return
  fi
  # picamera2 and libcamera come from the Raspberry Pi archive: only Raspberry Pi OS has them.
  for package in "${optional[@]}"; do
    if apt-cache policy "$package" 2>/dev/null | grep -q 'Candidate: [^(]'; then
      wanted+=("$package")
    else
      say "not in the apt archive here: $package (skipped)"
    fi
  done
  for package in "${wanted[@]}"; do
    dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
  done
  if [ "${#missing[@]}" = 0 ]; then
    say "unchanged: apt packages (${wanted[*]})"
    return
  fi
  changes=$((changes + 1))
  system_run apt-get update -qq
  system_run env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

# -- the service user ------------------------------------------------------------------------

service_user() {
  local group
  if [ "$system" = 0 ]; then
    say "would run: useradd --system --user-group --home-dir $state --shell /usr/sbin/nologin $user"
    say "would run: usermod -aG gpio,video,dialout $user"
    return
  fi
  if id "$user" >/dev/null 2>&1; then
    say "unchanged: user $user"
  else
    changes=$((changes + 1))
    system_run useradd --system --user-group --home-dir "$state" --no-create-home --shell /usr/sbin/nologin "$user"
  fi
  for group in gpio video dialout; do
    if ! getent group "$group" >/dev/null; then
      say "no group $group here (not Raspberry Pi OS?): skipped"
    elif id -nG "$user" 2>/dev/null | tr ' ' '\n' | grep -qx "$group"; then
      say "unchanged: $user in group $group"
    else
      changes=$((changes + 1))
      system_run usermod -aG "$group" "$user"
    fi
  done
}

# -- the virtual environment -----------------------------------------------------------------

# The sources to install, without caches, builds or the developer's venv, so a pip build
# never writes into the checkout and the fingerprint covers only what gets installed.
stage_sources() {
  local stage=$work/src
  mkdir -p "$stage"
  (cd "$source_dir" && tar -cf - \
    --exclude=./.git --exclude=./.venv --exclude=./build --exclude=./dist --exclude='*.egg-info' \
    --exclude=__pycache__ --exclude=.mypy_cache --exclude=.ruff_cache --exclude=.pytest_cache \
    --exclude=.hypothesis --exclude=./firmware_bridge/avr/build --exclude=./firmware_bridge/sim/build .) |
    (cd "$stage" && tar -xf -)
  printf '%s' "$stage"
}

fingerprint() {
  local stage=$1
  {
    (cd "$stage" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum)
    printf 'pip: %s\n' "${pip_args[*]:-}"
    "$(at "$venv")/bin/python" -V 2>&1 || true
  } | sha256sum | cut -d' ' -f1
}

virtualenv() {
  local venv_dir stage stamp want
  venv_dir="$(at "$venv")"
  if [ -x "$venv_dir/bin/python" ]; then
    say "unchanged: $venv (virtual environment)"
  else
    changes=$((changes + 1))
    if [ "$dry_run" = 1 ]; then
      say "would run: $python -m venv --system-site-packages $venv"
    else
      # --system-site-packages: picamera2 and libcamera exist only as apt packages.
      "$python" -m venv --system-site-packages "$venv_dir"
      say "created: $venv (virtual environment, sees the system's packages)"
    fi
  fi
  stage="$(stage_sources)"
  stamp="$venv_dir/.bgboard-installed"
  want="$(fingerprint "$stage")"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    say "unchanged: bgboard in $venv (same sources)"
    return
  fi
  changes=$((changes + 1))
  # OpenCV and numpy come from PyPI wheels, not apt: Debian 12's python3-opencv is 4.6, older
  # than the ArucoDetector the calibration uses; the constraints keep numpy below 2 for picamera2.
  local pip=("$venv_dir/bin/python" -m pip install --quiet --disable-pip-version-check
    --constraint "$source_dir/packaging/pi-constraints.txt" "${pip_args[@]}" "${stage}[pi]")
  if [ "$dry_run" = 1 ]; then
    say "would run: pip install bgboard[pi] into $venv"
    return
  fi
  "${pip[@]}"
  printf '%s\n' "$want" >"$stamp"
  say "installed: bgboard into $venv"
}

command_link() {
  local link_path
  link_path="$(at "$command_link")"
  if [ -L "$link_path" ] && [ "$(readlink "$link_path")" = "$venv/bin/bgboard" ]; then
    say "unchanged: $command_link"
    return
  fi
  changes=$((changes + 1))
  if [ "$dry_run" = 1 ]; then
    say "would link: $command_link -> $venv/bin/bgboard"
  else
    mkdir -p "$(dirname "$link_path")"
    ln -sfn "$venv/bin/bgboard" "$link_path"
    say "linked: $command_link -> $venv/bin/bgboard"
  fi
}

# -- install and uninstall -------------------------------------------------------------------

do_install() {
  apt_packages
  service_user
  make_dir "$etc" 0755 || true
  if make_dir "$state" 0750; then
    system_run chown "$user:$user" "$state"
  fi
  virtualenv
  command_link

  if [ -e "$(at "$config")" ]; then
    say "kept: $config (yours; never overwritten)"
  else
    render_config >"$work/config.toml"
    install_file "$work/config.toml" "$config" 0644 || true
  fi

  render_rule >"$work/rule"
  if install_file "$work/rule" "$rule" 0644; then
    system_run udevadm control --reload-rules
    system_run udevadm trigger --subsystem-match=tty --action=add
  fi

  render_unit >"$work/unit"
  if install_file "$work/unit" "$unit" 0644; then
    system_run systemctl daemon-reload
  fi
  if [ "$system" = 1 ] && systemctl is-enabled --quiet bgboard.service 2>/dev/null; then
    say "unchanged: bgboard.service enabled"
  else
    [ "$system" = 1 ] && changes=$((changes + 1))
    system_run systemctl enable bgboard.service
  fi

  if [ "$changes" = 0 ]; then
    say "nothing changed: bgboard is installed and up to date"
  else
    say "done: $changes change(s)"
    say "next: calibrate (docs/build-guide.md), check with: bgboard doctor; start: sudo systemctl restart bgboard"
  fi
}

do_uninstall() {
  if [ "$system" = 1 ] && systemctl cat bgboard.service >/dev/null 2>&1; then
    system_run systemctl disable --now bgboard.service
  elif [ "$system" = 0 ]; then
    say "would run: systemctl disable --now bgboard.service"
  fi
  if remove "$unit"; then
    system_run systemctl daemon-reload
  fi
  if remove "$rule"; then
    system_run udevadm control --reload-rules
  fi
  remove "$command_link" || true
  remove "$prefix" || true
  if [ "$purge" = 1 ]; then
    remove "$etc" || true
    remove "$state" || true
    if [ "$system" = 0 ]; then
      say "would run: userdel $user"
    elif id "$user" >/dev/null 2>&1; then
      system_run userdel "$user"
    fi
  else
    say "kept: $config and $state (the config, the calibration and the match store; --purge removes them)"
  fi
  say "done: $changes change(s)"
}

"do_$action"
