# SPDX-License-Identifier: MIT
"""The demo: the shipped real game refereed from rendered frames, recorded, and exported."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from bgboard.cli import main
from bgboard.sim.simulation import demo_record
from bgboard.store import MatchStore
from engine.dice import Dice
from engine.hints import INSTALL_HINT, find_gnubg
from engine.match import Double, Move, OpeningRoll, Roll, Take
from engine.matfile import read_mat_file
from engine.movegen import legal_plays
from engine.position import Position

ROOT = Path(__file__).resolve().parents[2]
F = TypeVar("F", bound=Callable[..., Any])


def whole(test: F) -> F:
    """A test of the whole game: about a minute, shared by the tests in one worker; ``slow``,
    so that ``-m "not slow"`` leaves it out."""
    return pytest.mark.slow(pytest.mark.xdist_group("demo-whole-game")(test))  # type: ignore[no-any-return]


def _run(args: list[str]) -> tuple[int, list[dict[str, Any]]]:
    out = io.StringIO()
    status = main(args, out=out)
    return status, [json.loads(line) for line in out.getvalue().splitlines()]


@pytest.fixture(scope="module")
def whole_game(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, list[dict[str, Any]], Path]:
    folder = tmp_path_factory.mktemp("demo")
    status, events = _run(["demo", "--json", "--leds", "none", "--out", str(folder)])
    return status, events, folder


def _shape(action: object) -> object:
    """What a record must keep of an action: the play, the dice up to order, the cube action."""
    if isinstance(action, Roll):
        return ("roll", sorted((action.dice.first, action.dice.second)))
    if isinstance(action, OpeningRoll):
        return ("opening", action.die0, action.die1)
    if isinstance(action, Move):
        return ("move", str(action.play))
    return type(action).__name__


@whole
def test_the_demo_plays_the_shipped_game_to_the_end_of_the_match(
    whole_game: tuple[int, list[dict[str, Any]], Path],
) -> None:
    status, events, _ = whole_game
    assert status == 0
    kinds = [e["event"] for e in events]
    assert kinds[0] == "demo"
    assert "game-over" in kinds and "match-over" in kinds
    over = next(e for e in events if e["event"] == "match-over")
    assert over["score"] == [4, 0]
    summary = next(e for e in events if e["event"] == "summary")
    assert summary["moves"]["wrong"] == 0 and summary["rolls"]["wrong"] == 0
    # Most of the game is read from the camera alone, not typed in by the players.
    moves = [e for e in events if e["event"] == "move"]
    assert sum(e["source"] == "camera" for e in moves) >= 0.8 * len(moves)


@whole
def test_the_wrong_move_is_lit_as_illegal_then_played_right(
    whole_game: tuple[int, list[dict[str, Any]], Path],
) -> None:
    _, events, _ = whole_game
    kinds = [e["event"] for e in events]
    first = kinds.index("illegal")
    illegal = events[first]
    assert illegal["verdict"] == "illegal"
    assert illegal["reasons"] and illegal["marks"]
    # The same player's legal move is recorded after it; nothing was recorded in between.
    after = next(i for i in range(first, len(events)) if events[i]["event"] in ("move", "correction"))
    assert not any(e.get("action") for e in events[first:after])
    assert "legal-now" in kinds[first:after] or "put-back" in kinds[first:after]
    summary = next(e for e in events if e["event"] == "summary")
    assert summary["illegal_shown"] == 1 and summary["illegal_flagged"] == 1
    # The players' line names the move made (a play of another roll that leaves that board).
    wrong = next(e for e in events if e["event"] == "players" and "plays it wrong" in e["text"])
    named = wrong["text"].split("plays it wrong: ")[1].split(" that the ")[0]
    before, made = Position.from_id(wrong["before"]), Position.from_id(wrong["board"])
    rolls = [Dice(a, b) for a in range(1, 7) for b in range(1, a + 1)]
    assert any(str(legal_plays(before, d).play_for(made)) == named for d in rolls), named


@whole
def test_the_doubles_are_read_from_the_cube(whole_game: tuple[int, list[dict[str, Any]], Path]) -> None:
    _, events, _ = whole_game
    cube = [e for e in events if e["event"] in ("double", "take")]
    assert [(e["event"], e["cube"]) for e in cube] == [("double", 2), ("take", 2), ("double", 4), ("take", 4)]
    assert all(e["source"] == "camera" for e in cube)


@whole
def test_the_exported_mat_file_is_the_shipped_game(whole_game: tuple[int, list[dict[str, Any]], Path]) -> None:
    _, events, folder = whole_game
    last = events[-1]
    assert last["event"] == "exported"
    mat = Path(last["mat"])
    assert mat.parent == folder and mat.suffix == ".mat"
    read = read_mat_file(mat)
    assert not read.problems
    played = read.record.games[0]
    shipped = demo_record().games[0]
    assert [_shape(a) for a in played.actions] == [_shape(a) for a in shipped.actions]
    assert played.result == shipped.result
    assert any(isinstance(a, Double) for a in played.actions) and any(isinstance(a, Take) for a in played.actions)
    with MatchStore(last["store"]) as store:
        (summary,) = store.matches()
        assert summary.is_finished
        sources = {a.source for a in store.actions(summary.id)}
        assert "camera" in sources


def test_the_demo_drives_the_real_firmware_in_the_emulator(tmp_path: Path) -> None:
    status, events = _run(["demo", "--json", "--leds", "sim", "--moves", "7", "--out", str(tmp_path)])
    assert status == 0
    kinds = [e["event"] for e in events]
    assert kinds[1] == "leds" and "firmware 1." in events[1]["text"]
    # After the illegal move, the firmware lights the marked points red.
    first = kinds.index("illegal")
    shown = next(e for e in events[first:] if e["event"] == "firmware-leds")
    red = [name for name, rgb in shown["lit"].items() if name.startswith("point.") and rgb[1:3] != "00"]
    assert red, shown
    assert events[-1]["event"] == "exported" and Path(events[-1]["mat"]).exists()


def test_the_plain_demo_draws_the_lights_and_names_the_file(tmp_path: Path) -> None:
    out = io.StringIO()
    assert main(["demo", "--moves", "7", "--out", str(tmp_path)], out=out) == 0
    text = out.getvalue()
    assert "* lasse plays it wrong" in text
    assert "illegal move:" in text
    assert "player 2 " in text and "status" in text  # the LED board drawn
    assert text.rstrip().splitlines()[-1].startswith("match written to ")
    # The manual shows this stretch of the demo as it prints it, lights and all.
    manual = (ROOT / "docs" / "table.md").read_text(encoding="utf-8")
    start = manual.index("  * lasse plays it wrong")
    shown = manual[start : manual.index("```", start)].rstrip("\n").splitlines()
    printed = text.splitlines()
    first = printed.index(shown[0])
    assert printed[first : first + len(shown)] == shown


@pytest.mark.oracle
def test_the_teach_demo_says_the_hint_after_each_roll_and_the_verdict_after_each_move(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("BGBOARD_GNUBG", raising=False)
    if find_gnubg() is None:
        pytest.fail(INSTALL_HINT)
    out = io.StringIO()
    assert main(["demo", "--teach", "--moves", "3", "--leds", "none", "--out", str(tmp_path)], out=out) == 0
    lines = out.getvalue().splitlines()
    # The opening 1-5: gnubg's hint, then the move and its verdict (the player plays the hint).
    said = [line.split("s  ", 1)[1] for line in lines if "s  " in line and not line.startswith("  *")]
    hints = [text for text in said if text.startswith("hint: ")]
    verdicts = [text for text in said if text.endswith(": the best play") or " against " in text]
    assert len(hints) == 3 and len(verdicts) == 3
    assert hints[0].startswith("hint: 24/23 13/8 (gnubg 0-ply, equity ")
    assert said[said.index(hints[0]) + 2] == "24/23 13/8: the best play"
    with MatchStore(tmp_path / "demo.sqlite3", create=False) as store:
        summary = store.last_match()
        assert summary is not None
        notes = [a.note for a in store.actions(summary.id) if isinstance(a.action, Move)]
    assert notes[0] == "gnubg 0-ply: the best play"
    assert all(note and note.startswith("gnubg 0-ply: ") for note in notes)


def test_sigterm_stops_the_demo_as_ctrl_c_does_keeping_what_was_played(tmp_path: Path) -> None:
    """One rule for the table's commands: stopped by Ctrl-C or SIGTERM, the store is closed, what
    was played written out, and the status is 0, as the referee's."""
    import signal
    import subprocess
    import sys
    import time

    for number in (signal.SIGTERM, signal.SIGINT):
        out = tmp_path / f"demo-{number}"
        child = subprocess.Popen(
            [sys.executable, "-m", "bgboard", "demo", "--leds", "none", "--out", str(out)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert child.stdout is not None
        deadline = time.monotonic() + 120
        for line in child.stdout:
            if "rolled" in line or time.monotonic() > deadline:
                break
        child.send_signal(number)
        rest, err = child.communicate(timeout=60)
        assert child.returncode == 0, err
        assert "stopped: the game so far is in" in rest and "Traceback" not in err
        assert list(out.glob("*.mat")) and (out / "demo.sqlite3").exists()
