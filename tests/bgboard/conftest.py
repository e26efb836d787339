# SPDX-License-Identifier: MIT
"""The app's tests' shared fixtures: the rendered board's profile and the referee's config."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from rendered_table import referee_config, save_profile

from bgboard.config import Config


@pytest.fixture(scope="module")
def profile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return save_profile(tmp_path_factory.mktemp("profile") / "board.toml")


@pytest.fixture
def config(profile: Path, tmp_path: Path) -> Config:
    return referee_config(profile, tmp_path / "matches.sqlite3")


@pytest.fixture
def referee_calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Config, dict[str, object]]]:
    """What ``bgboard referee`` builds its Referee with: the config and the other arguments."""
    calls: list[tuple[Config, dict[str, object]]] = []

    class Recorder:
        def __init__(self, config: Config, **options: object) -> None:
            calls.append((config, options))

        def run(self, stop: threading.Event) -> int:
            return 0

    monkeypatch.setattr("bgboard.referee.Referee", Recorder)
    return calls
