# SPDX-License-Identifier: MIT
"""At the end of a match in teach or log mode the referee says gnubg's analysis and keeps it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from test_referee import idle, start

from bgboard.config import Config
from bgboard.store import MatchStore
from engine.hints import INSTALL_HINT, find_gnubg

pytestmark = pytest.mark.usefixtures("referee_threads_end")


def play_a_one_point_match(config: Config) -> list[dict[str, object]]:
    """Player 1 opens in a 1-point match and resigns at once; the events said."""
    read_end, write_end = os.pipe()
    with os.fdopen(read_end, "r") as keyboard, os.fdopen(write_end, "w") as typing:
        run = start(config.with_overrides(match_length="1"), idle(), stdin=keyboard, stall=30.0)
        typing.write("dice 52\n13/8 13/11\nresign\naccept\n")
        typing.flush()
        run.finish()
    return run.events()


def kept(config: Config) -> object:
    assert config.store.path is not None
    with MatchStore(config.store.path, create=False) as store:
        summary = store.last_match()
        assert summary is not None
        return store.analysis(summary.id)


@pytest.mark.oracle
def test_log_mode_says_gnubgs_analysis_at_the_end_and_keeps_it(config: Config, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BGBOARD_GNUBG", raising=False)
    if find_gnubg() is None:
        pytest.fail(INSTALL_HINT)
    events = play_a_one_point_match(config.with_overrides(match_mode="log"))
    kinds = [e["event"] for e in events]
    assert kinds[-2:] == ["analysis", "stopped"]
    said = events[-2]
    assert str(said["text"]).startswith("GNU Backgammon's analysis (0-ply):")
    analysis = said["analysis"]
    assert isinstance(analysis, dict) and [p["name"] for p in analysis["players"]] == list(config.match.players)
    assert kept(config) == analysis


def test_without_gnubg_the_match_ends_as_before(
    config: Config, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("BGBOARD_GNUBG", raising=False)
    monkeypatch.setattr("engine.hints.DEBIAN_GNUBG", str(tmp_path / "gnubg"))
    events = play_a_one_point_match(config.with_overrides(match_mode="log"))
    assert [e["event"] for e in events][-1] == "stopped"
    assert "analysis" not in [e["event"] for e in events]
    assert kept(config) is None


def test_referee_mode_without_teach_prints_no_analysis(config: Config) -> None:
    events = play_a_one_point_match(config)
    assert "analysis" not in [e["event"] for e in events]
    assert kept(config) is None
