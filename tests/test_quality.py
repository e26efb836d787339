# SPDX-License-Identifier: MIT
"""Static checks the project keeps: ruff everywhere, mypy --strict on the libraries."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, check=False)


def test_ruff_finds_nothing() -> None:
    done = _run("ruff", "check", "--no-cache", ".")
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_strict_on_engine_and_firmware_bridge() -> None:
    done = _run("mypy", "--strict", "--no-incremental", "--cache-dir=/dev/null", "engine", "firmware_bridge")
    assert done.returncode == 0, done.stdout + done.stderr
