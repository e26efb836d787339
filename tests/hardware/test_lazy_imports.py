# SPDX-License-Identifier: MIT
"""Importing any hardware module loads no hardware library: they come with the adapter that needs them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MODULES = [p.stem for p in (ROOT / "hardware").glob("*.py") if p.stem != "__init__"]


def test_no_hardware_library_is_imported_with_the_package() -> None:
    assert {"gpio", "buttons", "serial_panel", "devices"} <= set(MODULES)
    code = (
        "import sys, importlib\n"
        f"for name in {MODULES!r}: importlib.import_module('hardware.' + name)\n"
        "print(sorted(m for m in ('gpiozero', 'serial', 'RPi', 'lgpio', 'spidev') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
