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
from typing import Any

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


# -- the app's referee tests: a rendered board's profile, the referee's config, the CLI's calls --
# (here rather than in tests/bgboard: two conftest modules of one name clash in doctest collection)


def _rendered_table() -> Any:
    """``tests/bgboard/rendered_table.py``, the rendered frames the referee tests share."""
    folder = str(ROOT / "tests" / "bgboard")
    if folder not in sys.path:
        sys.path.insert(0, folder)
    import rendered_table

    return rendered_table


@pytest.fixture(scope="module")
def profile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The rendered starting board's calibration profile."""
    path: Path = _rendered_table().save_profile(tmp_path_factory.mktemp("profile") / "board.toml")
    return path


@pytest.fixture
def config(profile: Path, tmp_path: Path) -> Any:
    """The referee tests' config: a fake camera, the rendered board's profile, Ann and Bob to 5."""
    return _rendered_table().referee_config(profile, tmp_path / "matches.sqlite3")


@pytest.fixture
def referee_calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, dict[str, object]]]:
    """What ``bgboard referee`` builds its Referee with: the config and the other arguments."""
    calls: list[tuple[Any, dict[str, object]]] = []

    class Recorder:
        def __init__(self, config: Any, **options: Any) -> None:
            calls.append((config, options))

        def run(self, stop: threading.Event) -> int:
            return 0

    monkeypatch.setattr("bgboard.referee.Referee", Recorder)
    return calls
