#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Check that bgboard installs and runs on the Raspberry Pi's architecture, without a Pi.
#
#   sudo scripts/arm64-check.sh        (or: sudo make arm64-check)
#
# On an x86-64 Debian machine, as root, this
#   1. installs qemu-user-static, debootstrap and binfmt-support on the host and makes sure the
#      kernel runs aarch64 programs through qemu (binfmt_misc qemu-aarch64 enabled);
#   2. builds an arm64 Debian 12 (bookworm) minbase root with debootstrap, from the mirror this
#      machine's apt uses, in ARM64_ROOT (default /var/cache/bgboard-arm64/root), or reuses it when
#      its stamp says it was built the same way (a second run skips this);
#   3. installs in the root the Debian arm64 packages the tests need (gnubg; gcc-avr avr-libc
#      binutils-avr libsimavr-dev pkg-config gcc libc6-dev make for the firmware emulator), not what
#      only the Raspberry Pi archive has (python3-picamera2, python3-libcamera);
#   4. copies the working tree (tracked files and untracked, not ignored ones, as they are on disk;
#      ARM64_SOURCE=head takes `git archive HEAD` instead) to /opt/bgboard-src in the root and
#      installs it as the Pi would: a venv that sees the system's packages (--system-site-packages),
#      `pip install --constraint packaging/pi-constraints.txt /opt/bgboard-src[pi,test]`
#      (the pins scripts/install-pi.sh uses), the real aarch64 wheels from PyPI;
#   5. runs, in the root (chroot, /proc /dev /dev/pts /dev/shm bind-mounted, always unmounted on exit):
#      platform.machine() (must be aarch64), the engine, vision and firmware-bridge tests, and
#      `bgboard demo --json --leds none --moves 6` (ARM64_DEMO_MOVES=all for the whole game), whose
#      last line must be the "exported" event naming a .mat file that exists;
#   6. prints each step's time and PASS or FAIL; the exit status is 0 only on PASS.
#
# Everything in the root runs emulated, 10-20 times slower than natively, and under `nice -n 19`.
#
# Settings (environment): ARM64_ROOT, ARM64_MIRROR (default: the host's Debian mirror),
# ARM64_SOURCE (worktree|head), ARM64_DEMO_MOVES (default 6; "all" for the whole game),
# ARM64_PYTEST_ARGS (replaces the test selection below), ARM64_SHARED_DATA (the shared match
# corpus some engine tests read; default: ../shared/data beside the checkout, bound read-only).
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
ROOT=${ARM64_ROOT:-/var/cache/bgboard-arm64/root}
ROOT=${ROOT%/}
SUITE=bookworm
SOURCE_MODE=${ARM64_SOURCE:-worktree}
DEMO_MOVES=${ARM64_DEMO_MOVES:-6}
SHARED_DATA=${ARM64_SHARED_DATA:-$REPO/../shared/data}
SRC=/opt/bgboard-src           # the copy of the checkout, in the root
VENV=/opt/bgboard/venv         # the virtual environment, in the root
INCLUDE=python3,python3-venv,ca-certificates
# What scripts/setup.sh --test installs with apt, less python3-venv (already in the root).
DEB_PACKAGES=(gnubg gcc-avr avr-libc binutils-avr libsimavr-dev pkg-config gcc libc6-dev make)
# Only in the Raspberry Pi archive: the check does without them (and says so).
PI_ONLY_PACKAGES=(python3-picamera2 python3-libcamera)
EXTRAS="pi,test"

# The test selection, and why:
# - tests/engine/test_gnubg_oracle.py and test_movegen_oracle.py import the PyPI gnubg / gnubg-nn
#   bindings, which have no aarch64 wheels (pyproject installs them on x86_64 only; on the Pi hints
#   come from the gnubg program, which tests/engine/test_hints.py and test_gnubg_*.py do run here).
# - -m "not slow": the slow tests (the whole 1,777-file corpus, the dice photo sweep) take minutes
#   natively and far too long emulated; they say nothing about the architecture.
# - A pytest plugin of this check (written below, not part of the tests) loads a Hypothesis
#   profile without the 200 ms per-example deadline, which code 10-20x slower can miss at random.
# - Tests that fail only because emulation is slow (timing) would be deselected by name here.
#   None needed: on 2026-11-22 all 537 selected tests passed emulated (39 minutes; the three
#   slowest, in tests/vision/test_reader.py, take 18 of them).
EMULATION_DESELECT=()
PYTEST_SELECTION=(
  tests/engine tests/vision tests/firmware_bridge
  -q -x -p no:cacheprovider -p bgboard_arm64_check
  -m "not slow"
  --ignore=tests/engine/test_gnubg_oracle.py
  --ignore=tests/engine/test_movegen_oracle.py
)

STEP_NAMES=()
STEP_TIMES=()
STEP_RESULTS=()
FAILED=0
MOUNTS=()
CURRENT_STEP=""
CHECK_START=$(date +%s)

log() { printf '[arm64-check %s] %s\n' "$(date +%H:%M:%S)" "$*"; }

# step NAME COMMAND...: run it (set -e does not apply inside a function called this way: the step
# functions check their commands with `|| return`), time it, remember the result; later steps are skipped after a failure.
step() {
  local name=$1; shift
  if [ "$FAILED" -ne 0 ]; then
    STEP_NAMES+=("$name"); STEP_TIMES+=("-"); STEP_RESULTS+=("skipped")
    return 0
  fi
  log "== $name"
  local start=$SECONDS status=0
  CURRENT_STEP=$name
  "$@" || status=$?
  CURRENT_STEP=""
  local took=$((SECONDS - start))
  STEP_NAMES+=("$name"); STEP_TIMES+=("$((took / 60))m$(printf '%02d' $((took % 60)))s")
  if [ "$status" -eq 0 ]; then
    STEP_RESULTS+=("ok${STEP_NOTE:+ ($STEP_NOTE)}")
  else
    STEP_RESULTS+=("FAILED (exit $status)${STEP_NOTE:+ ($STEP_NOTE)}")
    FAILED=1
  fi
  STEP_NOTE=""
  log "-- $name: ${STEP_RESULTS[-1]} in ${STEP_TIMES[-1]}"
}
STEP_NOTE=""

# Run a command in the root, emulated, with a clean environment, at the lowest priority.
in_root() {
  nice -n 19 chroot "$ROOT" /usr/bin/env -i \
    HOME=/root LANG=C.UTF-8 TERM=dumb \
    PATH="$VENV/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/usr/games" \
    PIP_CERT=/etc/ssl/certs/ca-certificates.crt PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_PROGRESS_BAR=off \
    PIP_DEFAULT_TIMEOUT=180 DEBIAN_FRONTEND=noninteractive PYTHONDONTWRITEBYTECODE= \
    "$@" 3>&- 4>&-
}

is_mounted() { mountpoint -q "$1"; }

bind_mount() {  # bind_mount SOURCE TARGET [ro]
  mkdir -p "$2" || return
  mount --bind "$1" "$2" || return
  MOUNTS+=("$2")
  if [ "${3:-}" = ro ]; then mount -o remount,bind,ro "$2" || return; fi
}

unmount_all() {
  local i
  for ((i = ${#MOUNTS[@]} - 1; i >= 0; i--)); do
    umount "${MOUNTS[i]}" 2>/dev/null || umount -l "${MOUNTS[i]}" 2>/dev/null || log "could not unmount ${MOUNTS[i]}"
  done
  MOUNTS=()
}

# Nothing of the host may be mounted under the root when it is deleted.
mounted_under_root() { awk -v r="$ROOT" '$2 == r || index($2, r "/") == 1 {print $2}' /proc/self/mounts; }

summary() {
  local status=$?
  # A signal can run this trap while a command's output is redirected to a file: write here.
  exec 1>&3 2>&4
  unmount_all
  [ "$status" -ne 0 ] && FAILED=1
  local total=$(($(date +%s) - CHECK_START)) i
  echo
  echo "arm64 check summary (root: $ROOT)"
  for i in "${!STEP_NAMES[@]}"; do
    printf '  %-44s %8s  %s\n' "${STEP_NAMES[i]}" "${STEP_TIMES[i]}" "${STEP_RESULTS[i]}"
  done
  [ -n "$CURRENT_STEP" ] && printf '  %-44s %8s  %s\n' "$CURRENT_STEP" "-" "INTERRUPTED (exit $status)"
  printf '  %-44s %8s\n' "total" "$((total / 60))m$(printf '%02d' $((total % 60)))s"
  if [ "$FAILED" -eq 0 ] && [ "${#STEP_NAMES[@]}" -gt 0 ]; then
    echo "PASS"
    exit 0
  fi
  echo "FAIL"
  exit 1
}

# ---------------------------------------------------------------------------------------------
host_packages() {
  local missing=() p
  for p in qemu-user-static debootstrap binfmt-support; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  if [ "${#missing[@]}" -eq 0 ]; then
    STEP_NOTE="already installed"
    return 0
  fi
  apt-get update -qq || return
  DEBIAN_FRONTEND=noninteractive nice -n 19 apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null || return
  STEP_NOTE="installed ${missing[*]}"
}

host_binfmt() {
  if [ ! -e /proc/sys/fs/binfmt_misc/status ]; then
    mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc || return
  fi
  if ! grep -qx enabled /proc/sys/fs/binfmt_misc/qemu-aarch64 2>/dev/null; then
    update-binfmts --enable qemu-aarch64 || return
    STEP_NOTE="enabled"
  fi
  grep -qx enabled /proc/sys/fs/binfmt_misc/qemu-aarch64 || { log "binfmt qemu-aarch64 is not enabled"; return 1; }
  # Fixed (F) means the kernel holds the interpreter open, so it works inside the chroot too.
  grep -q '^flags: .*F' /proc/sys/fs/binfmt_misc/qemu-aarch64 || log "note: qemu-aarch64 is registered without the F flag"
}

# The Debian mirror (and security mirror) this machine's apt uses for bookworm.
find_mirrors() {
  local files=() f
  [ -f /etc/apt/sources.list ] && files+=(/etc/apt/sources.list)
  for f in /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do [ -f "$f" ] && files+=("$f"); done
  python3 - "${files[@]}" <<'EOF'
import re, sys
main = security = None
for path in sys.argv[1:]:
    text = open(path, encoding="utf-8", errors="replace").read()
    entries = []
    if path.endswith(".sources"):
        for stanza in re.split(r"\n\s*\n", text):
            fields = {}
            for line in stanza.splitlines():
                if line.startswith("#") or ":" not in line or line[:1].isspace():
                    continue
                key, _, value = line.partition(":")
                fields[key.strip().lower()] = value.split()
            if "deb" in fields.get("types", []) and fields.get("enabled", ["yes"])[0] != "no":
                entries += [(uri, suite) for uri in fields.get("uris", []) for suite in fields.get("suites", [])]
    else:
        for line in text.splitlines():
            line = re.sub(r"\[[^]]*\]", "", line.split("#", 1)[0]).split()
            if len(line) >= 3 and line[0] == "deb":
                entries.append((line[1], line[2]))
    for uri, suite in entries:
        if suite == "bookworm" and main is None:
            main = uri
        elif suite in ("bookworm-security", "bookworm/updates") and security is None:
            security = uri
print(main or "", security or "")
EOF
}

ROOT_STAMP=""
build_root() {
  local mirror security
  read -r mirror security < <(find_mirrors)
  mirror=${ARM64_MIRROR:-$mirror}
  if [ -z "$mirror" ]; then
    log "no bookworm mirror in the host's apt sources; set ARM64_MIRROR"
    return 1
  fi
  ROOT_STAMP="debootstrap --arch=arm64 --variant=minbase --include=$INCLUDE $SUITE $mirror security=$security"
  if [ -f "$ROOT/.bgboard-arm64-stamp" ] && [ "$(cat "$ROOT/.bgboard-arm64-stamp")" = "$ROOT_STAMP" ]; then
    STEP_NOTE="reused $ROOT"
    return 0
  fi
  local stale
  for stale in "$ROOT" "$ROOT.partial"; do
    if [ -n "$(mounted_under_root | grep -F -- "$stale" || true)" ]; then
      log "something is still mounted under $stale; not deleting it:"; mounted_under_root
      return 1
    fi
    [ -e "$stale" ] && { log "removing $stale (no stamp, or built differently)"; rm -rf --one-file-system -- "$stale"; }
  done
  mkdir -p "$(dirname "$ROOT")" || return
  log "debootstrap from $mirror (about 5 minutes)"
  nice -n 19 debootstrap --arch=arm64 --variant=minbase --include="$INCLUDE" "$SUITE" "$ROOT.partial" "$mirror" \
    >"$(dirname "$ROOT")/debootstrap.log" 2>&1 || {
    log "debootstrap failed; the end of $(dirname "$ROOT")/debootstrap.log:"; tail -n 20 "$(dirname "$ROOT")/debootstrap.log"
    return 1
  }
  {
    echo "deb $mirror $SUITE main"
    echo "deb $mirror $SUITE-updates main"
    [ -n "$security" ] && echo "deb $security $SUITE-security main"
  } >"$ROOT.partial/etc/apt/sources.list" || return
  # Keep the root small and apt quiet: no recommends, no documentation.
  printf 'APT::Install-Recommends "false";\nAPT::Install-Suggests "false";\n' >"$ROOT.partial/etc/apt/apt.conf.d/90bgboard-check"
  mv "$ROOT.partial" "$ROOT" || return
  echo "$ROOT_STAMP" >"$ROOT/.bgboard-arm64-stamp"
  STEP_NOTE="built from $mirror"
}

mount_root() {
  cp /etc/resolv.conf "$ROOT/etc/resolv.conf" || return
  # The host's CA bundle, which pip and apt trust on this network.
  cp /etc/ssl/certs/ca-certificates.crt "$ROOT/etc/ssl/certs/ca-certificates.crt" || return
  bind_mount /proc "$ROOT/proc" || return
  bind_mount /dev "$ROOT/dev" || return
  bind_mount /dev/pts "$ROOT/dev/pts" || return    # the firmware emulator talks over a pseudo-terminal
  if [ -d /dev/shm ]; then bind_mount /dev/shm "$ROOT/dev/shm" || return; fi
  # tests/conftest.py reads the shared corpus at <checkout>/../shared/data.
  if [ -d "$SHARED_DATA" ]; then
    bind_mount "$SHARED_DATA" "$ROOT$(dirname "$SRC")/shared/data" ro || return
  else
    log "note: no shared data at $SHARED_DATA; tests that need the match corpus will fail"
  fi
}

root_packages() {
  local missing=() p policy
  for p in "${DEB_PACKAGES[@]}"; do
    in_root dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  if [ "${#missing[@]}" -eq 0 ]; then
    STEP_NOTE="already installed"
  else
    in_root apt-get update -qq || return
    for p in "${missing[@]}"; do
      # (grep on a variable: `apt-cache | grep -q` fails under pipefail when grep stops reading)
      policy=$(in_root apt-cache policy "$p" 2>&1) || return
      if ! grep -q 'Candidate: [0-9]' <<<"$policy"; then
        log "$p has no arm64 candidate in Debian $SUITE"
        return 1
      fi
    done
    in_root apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null || return
    in_root apt-get clean
    STEP_NOTE="installed ${#missing[@]} packages"
  fi
  for p in "${PI_ONLY_PACKAGES[@]}"; do
    policy=$(in_root apt-cache policy "$p" 2>/dev/null || true)
    if grep -q 'Candidate: [0-9]' <<<"$policy"; then
      log "note: $p is available here"
    else
      log "$p: not in Debian (Raspberry Pi archive only), done without"
    fi
  done
}

copy_source() {
  rm -rf --one-file-system -- "$ROOT$SRC" || return
  mkdir -p "$ROOT$SRC" || return
  if [ "$SOURCE_MODE" = head ]; then
    git -C "$REPO" archive --format=tar HEAD | tar -x -C "$ROOT$SRC" || return
    STEP_NOTE="HEAD $(git -C "$REPO" rev-parse --short HEAD)"
  else
    # Tracked and untracked (not ignored) files as they are on disk; deleted ones are skipped.
    (cd "$REPO" && git ls-files -z --cached --others --exclude-standard \
      | while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done \
      | tar --null -T - -c -f -) | tar -x -C "$ROOT$SRC" || return
    local dirty
    dirty=$(git -C "$REPO" status --porcelain | wc -l)
    STEP_NOTE="working tree at $(git -C "$REPO" rev-parse --short HEAD), $dirty changed files"
  fi
}

install_bgboard() {
  if [ ! -x "$ROOT$VENV/bin/python" ]; then
    in_root python3 -m venv --system-site-packages "$VENV" || return
  fi
  # A local directory is always reinstalled; the dependencies stay if they already satisfy it.
  local log=$ROOT/opt/bgboard-check/pip.log status=0
  mkdir -p "$ROOT/opt/bgboard-check"
  # The same pins as scripts/install-pi.sh (numpy below 2 for Raspberry Pi OS's picamera2, so
  # OpenCV 4.11), so the tests run with the versions a Pi gets.
  local constraint=()
  [ -f "$ROOT$SRC/packaging/pi-constraints.txt" ] && constraint=(--constraint "$SRC/packaging/pi-constraints.txt")
  in_root sh -c 'cd / && exec python -m pip install "$@"' pip "${constraint[@]}" "${SRC}[$EXTRAS]" >"$log" 2>&1 || status=$?
  grep -v -E '^(Requirement already satisfied|  )' "$log" || true
  [ "$status" -eq 0 ] || { log "pip install failed (exit $status); see $log"; return "$status"; }
  in_root python -m pip check || return
  in_root python -c 'import bgboard, cv2, numpy, serial, gpiozero; print("bgboard from", bgboard.__file__, "| OpenCV", cv2.__version__, "| numpy", numpy.__version__)'
}

check_machine() {
  local machine
  machine=$(in_root python -c 'import platform; print(platform.machine())') || return
  echo "platform.machine() = $machine"
  STEP_NOTE=$machine
  [ "$machine" = aarch64 ]
}

# A pytest plugin of this check, outside the tests: Hypothesis without its per-example deadline.
write_plugin() {
  mkdir -p "$ROOT/opt/bgboard-check" || return
  cat >"$ROOT/opt/bgboard-check/bgboard_arm64_check.py" <<'EOF'
"""Loaded by scripts/arm64-check.sh: emulated code is 10-20x slower, so no Hypothesis deadline."""
from hypothesis import settings

settings.register_profile("arm64-emulated", deadline=None)
settings.load_profile("arm64-emulated")
EOF
}

run_tests() {
  write_plugin
  local args=("${PYTEST_SELECTION[@]}")
  if [ -n "${ARM64_PYTEST_ARGS:-}" ]; then
    eval "args=($ARM64_PYTEST_ARGS)" || return   # shell words, so -m "not slow" stays one argument
    args+=(-p bgboard_arm64_check)
  fi
  local d
  for d in "${EMULATION_DESELECT[@]}"; do args+=(--deselect "$d"); done
  echo "pytest ${args[*]}"
  local out="$ROOT/opt/bgboard-check/pytest.log" status
  # shellcheck disable=SC2016 # $0 and $@ are for the shell inside the root, not this one
  { in_root sh -c 'cd "$0" && PYTHONPATH=/opt/bgboard-check exec python -m pytest "$@"' "$SRC" "${args[@]}" 2>&1
    echo $? >"$out.status"; } | tee "$out"
  status=$(cat "$out.status")
  STEP_NOTE=$(grep -E '^(=+ )?[0-9]+ (passed|failed)|[0-9]+ (passed|failed|deselected|skipped|error)' "$out" | tail -n 1 | tr -d '=' | xargs)
  return "$status"
}

run_demo() {
  local out=/tmp/bgboard-arm64-demo moves=()
  [ "$DEMO_MOVES" != all ] && moves=(--moves "$DEMO_MOVES")
  rm -rf --one-file-system -- "$ROOT$out"
  local status=0
  # shellcheck disable=SC2016 # $0 and $@ are for the shell inside the root, not this one
  in_root sh -c 'cd /tmp && exec bgboard demo --json --leds none --out "$0" "$@"' "$out" "${moves[@]}" \
    >"$ROOT/opt/bgboard-check/demo.jsonl" || status=$?
  tail -n 3 "$ROOT/opt/bgboard-check/demo.jsonl"
  [ "$status" -eq 0 ] || { log "bgboard demo exited with $status"; return "$status"; }
  local last mat
  last=$(tail -n 1 "$ROOT/opt/bgboard-check/demo.jsonl")
  mat=$(python3 -c 'import json, sys; e = json.loads(sys.argv[1]); assert e["event"] == "exported", e; print(e["mat"])' "$last") || {
    log "the demo's last line is not the exported event"; return 1
  }
  [ -s "$ROOT$mat" ] || { log "the demo named $mat, which is not there"; return 1; }
  STEP_NOTE="--moves $DEMO_MOVES: $(wc -l <"$ROOT/opt/bgboard-check/demo.jsonl") JSON lines, $mat $(wc -c <"$ROOT$mat") bytes"
}

# ---------------------------------------------------------------------------------------------
if [ "$(id -u)" -ne 0 ]; then
  echo "run as root (sudo $0): it installs packages, runs debootstrap and chroot" >&2
  exit 2
fi
if [ "$(dpkg --print-architecture 2>/dev/null)" != amd64 ]; then
  log "note: written for an x86-64 (amd64) Debian host; this one is $(dpkg --print-architecture 2>/dev/null || uname -m)"
fi
exec 3>&1 4>&2   # the summary's stdout and stderr (see summary)
trap summary EXIT
trap 'exit 130' INT TERM

step "host packages (qemu, debootstrap)" host_packages
step "binfmt qemu-aarch64" host_binfmt
step "arm64 bookworm root (debootstrap)" build_root
step "mount /proc /dev in the root" mount_root
step "Debian arm64 packages in the root" root_packages
step "copy the source to $SRC" copy_source
step "pip install bgboard[$EXTRAS] (venv)" install_bgboard
step "platform.machine()" check_machine
step "tests (engine, vision, firmware_bridge)" run_tests
step "bgboard demo --json --leds none (moves: $DEMO_MOVES)" run_demo
