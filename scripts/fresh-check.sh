#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The README's commands on a brand-new Debian 12: a minimal root with nothing but Python 3 and
# apt (debootstrap, on a Debian x86-64 machine, as root), a fresh clone of this checkout in it,
# and the README's main command run there exactly as written; with --tests, the test command too.
#
#   sudo scripts/fresh-check.sh [--tests]      (or: sudo make fresh-check)
#
# The root is kept in $FRESH_ROOT (default /var/cache/bgboard-fresh/root) and reused; delete it
# to start from nothing. A machine behind a TLS-inspecting proxy needs its CA in the root: the
# certificates in /usr/local/share/ca-certificates are copied in.
set -euo pipefail
cd "$(dirname "$0")/.."
source_dir=$PWD

tests=false
case "${1:-}" in
  "") ;;
  --tests) tests=true ;;
  *) echo "usage: $0 [--tests]" >&2; exit 2 ;;
esac
[ "$(id -u)" -eq 0 ] || { echo "run as root (debootstrap and chroot)" >&2; exit 2; }

root=${FRESH_ROOT:-/var/cache/bgboard-fresh/root}
mirror=${FRESH_MIRROR:-http://deb.debian.org/debian}

log() { printf '%s  %s\n' "$(date +%H:%M:%S)" "$*"; }
readme_command() {
  sed -n "/<!-- $1 -->/,/<!-- \\/$1 -->/p" README.md | grep -v -e '^<!--' -e '^```'
}

if [ ! -x "$root/usr/bin/python3" ]; then
  command -v debootstrap >/dev/null || { apt-get update -qq; apt-get install -y -qq debootstrap >/dev/null; }
  log "debootstrap bookworm (minbase, python3) into $root"
  rm -rf --one-file-system "$root"
  mkdir -p "$(dirname "$root")"
  debootstrap --variant=minbase --include=python3,ca-certificates,sudo bookworm "$root" "$mirror" \
    >"$(dirname "$root")/debootstrap.log" 2>&1 || { tail -n 20 "$(dirname "$root")/debootstrap.log"; exit 1; }
fi
cp /etc/resolv.conf "$root/etc/resolv.conf"
if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
  cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
  chroot "$root" update-ca-certificates >/dev/null 2>&1
fi

mounted=()
cleanup() {
  local i
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[i]}" 2>/dev/null || true; done
}
trap cleanup EXIT
mount -t proc proc "$root/proc" && mounted+=("$root/proc")
mount --rbind /dev "$root/dev" && mounted+=("$root/dev")
home="$root/home/user"
rm -rf --one-file-system "$home/bgboard"
mkdir -p "$home/shared"
git clone --quiet "$source_dir" "$home/bgboard"
if [ -d "$source_dir/../shared" ]; then
  mount --bind "$source_dir/../shared" "$home/shared" && mounted+=("$home/shared")
fi

run() {
  chroot "$root" /usr/bin/env -i HOME=/home/user PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    LANG=C.UTF-8 /bin/bash -euo pipefail -c "cd /home/user/bgboard && $1"
}

log "Python in the root: $(chroot "$root" python3 --version)"
main=$(readme_command main-command)
log "main command: $main"
started=$SECONDS
run "$main" >"$home/main.log" 2>&1 || { tail -n 40 "$home/main.log"; log "FAIL: the main command"; exit 1; }
tail -n 3 "$home/main.log"
mat=$(tail -n 1 "$home/main.log" | sed -n 's/^match written to //p')
if [ -z "$mat" ] || [ ! -s "$root$mat" ]; then
  log "FAIL: no .mat file written"
  exit 1
fi
log "PASS: the main command, $((SECONDS - started)) s"

if $tests; then
  test_command=$(readme_command test-command)
  log "test command: $test_command"
  started=$SECONDS
  run "$test_command" >"$home/tests.log" 2>&1 || { tail -n 40 "$home/tests.log"; log "FAIL: the test command"; exit 1; }
  tail -n 1 "$home/tests.log"
  log "PASS: the test command, $((SECONDS - started)) s"
fi
