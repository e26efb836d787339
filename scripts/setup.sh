#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Set up bgboard in ./.venv on a fresh Debian-based machine (Debian 12, Raspberry Pi OS).
#
#   scripts/setup.sh          what the demo needs: Python 3.11+, a virtual environment, bgboard
#   scripts/setup.sh --test   also the test tools and the reference programs the tests run
#                             (GNU Backgammon from Debian, its Python bindings on x86-64; the
#                             AVR compiler and the simavr emulator that run the LED firmware;
#                             Blender's Python module for the 3D renderer, on Python 3.11 x86-64;
#                             Chromium, in which the live page is tested)
#
# Safe to run again: it installs only what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=run
case "${1:-}" in
  "") ;;
  --test) mode="test" ;;
  *) echo "usage: $0 [--test]" >&2; exit 2 ;;
esac

apt_packages=(python3-venv)
if [ "$mode" = test ]; then
  apt_packages+=(gnubg mosquitto gcc-avr avr-libc binutils-avr libsimavr-dev pkg-config gcc libc6-dev make shellcheck)
  # The live page's tests drive Debian's Chromium headless (Playwright, nothing downloaded).
  apt_packages+=(chromium)
  # Blender's Python module (the 3D renderer's tests, x86-64 only) links these even headless.
  if [ "$(uname -m)" = x86_64 ]; then
    apt_packages+=(libx11-6 libxrender1 libxxf86vm1 libxfixes3 libxi6 libxkbcommon0 libsm6 libice6 libxext6 libgl1 libgomp1)
  fi
fi

if command -v apt-get >/dev/null 2>&1 && command -v dpkg >/dev/null 2>&1; then
  missing=()
  for package in "${apt_packages[@]}"; do
    dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    sudo=""
    [ "$(id -u)" -ne 0 ] && sudo=sudo
    echo "installing system packages: ${missing[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
fi

python=${PYTHON:-python3}
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
  echo "bgboard needs Python 3.11 or newer; $python is $("$python" --version 2>&1)" >&2
  exit 1
fi

if [ ! -x .venv/bin/python ]; then
  "$python" -m venv .venv
fi
extra=""
# The tests render a tiny 3D setup with Blender's Python module (tools/render3d).
[ "$mode" = test ] && extra="[dev,render3d]"
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".${extra}"
if [ "$mode" = test ]; then
  # A Raspberry Pi's Python packages beside it: numpy below 2 (packaging/pi-constraints.txt),
  # hence OpenCV 4.11, whose API and dnn differ from OpenCV 5's. tests/vision/test_pi_stack.py
  # reads a board with them.
  if [ ! -x .venv-pi/bin/python ]; then
    "$python" -m venv .venv-pi
  fi
  .venv-pi/bin/python -m pip install --quiet --disable-pip-version-check -c packaging/pi-constraints.txt -e .
fi
echo "bgboard is set up in .venv ($mode)"
