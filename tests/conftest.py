# SPDX-License-Identifier: MIT
"""Shared test set-up: the project root on the path (for ``bench.seeded``), shared data, no user config."""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

#: The read-only shared data (real match files, dice photos), beside the project checkout.
SHARED_DATA = ROOT.parent / "shared" / "data"


@pytest.fixture(autouse=True)
def _no_error_logs(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    """A test fails when the code logs an ERROR it did not expect."""
    yield
    errors = [r for r in caplog.get_records("call") if r.levelno >= logging.ERROR]
    assert not errors, f"unexpected ERROR log records: {[r.getMessage() for r in errors]}"


@pytest.fixture
def no_user_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No config file or BGBOARD_ variable of the user's gets in; an empty config file to pass."""
    for name in list(os.environ):
        if name.startswith("BGBOARD_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    empty = tmp_path / "config.toml"
    empty.write_text("", encoding="utf-8")
    return empty


@pytest.fixture
def referee_threads_end() -> Iterator[None]:
    """Fail a test that leaves a referee's camera or ticker thread running (5 s to end)."""
    before = set(threading.enumerate())
    yield
    # The keyboard's thread may wait for its stream's EOF; the referee's own threads end with it.
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        left = [t for t in set(threading.enumerate()) - before if t.name.startswith(("camera", "ticker"))]
        if not left:
            return
        time.sleep(0.05)
    raise AssertionError(f"threads left running: {left}")
