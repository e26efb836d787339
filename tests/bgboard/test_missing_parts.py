# SPDX-License-Identifier: MIT
"""A part that is not installed is named with the command that installs it, never a traceback.

Each test runs the real ``bgboard`` in a child Python in which the part cannot be found: a
module blocked at import, or a program left off ``PATH``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

#: A child that refuses to import the modules named in $BLOCKED, then runs the command line.
CHILD = """
import os, sys
blocked = set(os.environ["BLOCKED"].split(","))
class Blocker:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in blocked:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, Blocker())
from bgboard.cli import main
sys.exit(main(sys.argv[1:]))
"""


def bgboard(
    args: list[str], tmp_path: Path, *, blocked: str = "", path: str | None = None, gnubg: str | None = None
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "BLOCKED": blocked, "HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "config")}
    env.pop("BGBOARD_GNUBG", None)
    if gnubg is not None:
        env["BGBOARD_GNUBG"] = gnubg
    if path is not None:
        env["PATH"] = path
    return subprocess.run(
        [sys.executable, "-c", CHILD, *args],
        capture_output=True,
        text=True,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=120,
        check=False,
    )


def one_line_error(done: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in done.stderr, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("bgboard: error: ")]
    assert len(lines) == 1, done.stderr
    return lines[0]


def test_without_gnubg_hint_says_how_to_install_it(tmp_path: Path) -> None:
    # Debian's /usr/games/gnubg is found even off PATH, so name a program that is not there.
    done = bgboard(["hint", "4HPwATDgc/ABMA", "--dice", "31"], tmp_path, gnubg=str(tmp_path / "gnubg"))
    assert done.returncode == 1
    assert "sudo apt-get install gnubg" in one_line_error(done)


def test_without_the_avr_tools_the_simulated_leds_name_the_packages(tmp_path: Path) -> None:
    done = bgboard(
        ["demo", "--leds", "sim", "--moves", "1", "--out", str(tmp_path / "demo")],
        tmp_path,
        path=str(Path(sys.executable).parent),
    )
    assert done.returncode == 1
    error = one_line_error(done)
    assert "missing avr-gcc" in error
    assert "apt-get install --no-install-recommends gcc-avr avr-libc binutils-avr libsimavr-dev" in error


def test_without_pyserial_devices_says_how_to_install_it(tmp_path: Path) -> None:
    done = bgboard(["devices"], tmp_path, blocked="serial,picamera2")
    assert done.returncode == 0 and "Traceback" not in done.stderr
    assert "pyserial is not installed (pip install pyserial)" in done.stdout
    assert "sudo apt install python3-picamera2" in done.stdout


#: A child that opens LEDs or buttons on GPIO pins with gpiozero blocked, printing the error.
GPIO_CHILD = """
import sys
class Blocker:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "gpiozero":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, Blocker())
from hardware.panels import open_panel
from hardware.buttons import ButtonPanel
try:
    if sys.argv[1] == "buttons":
        ButtonPanel("done=5")
    else:
        open_panel(sys.argv[1])
except OSError as exc:
    print(exc)
"""


@pytest.mark.parametrize("address", ["gpio:turn.1=17", "gpio595:data=17,clock=27,latch=22", "buttons"])
def test_without_gpiozero_the_gpio_parts_say_how_to_install_it(address: str) -> None:
    done = subprocess.run([sys.executable, "-c", GPIO_CHILD, address], capture_output=True, text=True, check=False)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert "gpiozero is not installed: pip install gpiozero" in done.stdout
