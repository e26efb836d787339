# SPDX-License-Identifier: MIT
"""One JSON shape for ``--json`` everywhere: ``referee``, ``replay`` and ``demo`` print the same
keys for the same events, because they print them through the same sinks."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import cv2
import pytest
from rendered_table import Cameras, FakeCamera, make_referee, move_frames, opening_frames, referee_config, save_profile

from bgboard.cli import main
from bgboard.config import Config
from bgboard.replay import replay
from bgboard.sim.samples import write_samples

#: Keys every line has, whichever command printed it.
COMMON = {"event", "text", "t"}


def _lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines()]


def _keys(events: list[dict[str, Any]], kinds: tuple[str, ...]) -> dict[str, set[str]]:
    """The keys of the first event of each kind."""
    out: dict[str, set[str]] = {}
    for event in events:
        if event["event"] in kinds and event["event"] not in out:
            out[event["event"]] = set(event)
    return out


@pytest.fixture(scope="module")
def profile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return save_profile(tmp_path_factory.mktemp("profile") / "board.toml")


@pytest.mark.usefixtures("referee_threads_end")
def test_the_referee_and_replay_print_the_same_keys_for_the_same_frames(profile: Path, tmp_path: Path) -> None:
    frames = opening_frames() + move_frames()
    config = referee_config(profile, tmp_path / "matches.sqlite3")
    refereed = io.StringIO()
    referee = make_referee(
        config,
        out=refereed,
        json_lines=True,
        source_factory=Cameras(FakeCamera("fake:camera", frames)),
        live=False,
        end_with_source=True,
    )
    assert referee.run() == 0

    folder = tmp_path / "photos"
    folder.mkdir()
    for n, image in enumerate(frames):
        assert cv2.imwrite(str(folder / f"{n:03d}.png"), image)
    replayed = io.StringIO()
    replay(str(folder), config, out=replayed, json_lines=True, fps=5.0)

    by_referee, by_replay = _lines(refereed.getvalue()), _lines(replayed.getvalue())
    assert all(set(e) >= COMMON for e in by_referee + by_replay)
    kinds = ("opening-roll", "move")
    assert _keys(by_referee, kinds) == _keys(by_replay, kinds)
    assert set(_keys(by_replay, kinds)) == set(kinds)


def test_the_demo_and_replay_print_the_same_keys_for_the_same_game(no_user_config: Path, tmp_path: Path) -> None:
    """The demo's game played at its rendered table, and the same game's photos replayed."""
    samples = write_samples(tmp_path / "samples", moves=2)
    out = io.StringIO()
    board = tmp_path / "board.toml"
    assert (
        main(["vision", "calibrate", str(samples.start), "--markers", "--die-size", "0.65", "-o", str(board)], out=out)
        == 0
    )
    config = Config().with_overrides(camera_profile=str(board), match_players="lasse,hbaltaci61", match_length="3")
    replayed = io.StringIO()
    replay(str(samples.start.parent / "photos"), config, out=replayed, json_lines=True, hold=2.0)

    played = io.StringIO()
    argv = ["demo", "--json", "--moves", "2", "--leds", "none", "--out", str(tmp_path / "demo")]
    assert main(argv, out=played) == 0

    by_demo, by_replay = _lines(played.getvalue()), _lines(replayed.getvalue())
    assert all(set(e) >= COMMON for e in by_demo + by_replay)
    kinds = ("opening-roll", "roll", "move")
    assert _keys(by_demo, kinds) == _keys(by_replay, kinds)
    assert set(_keys(by_demo, kinds)) == set(kinds)
