# SPDX-License-Identifier: MIT
"""The command-line contracts: ``moves --batch``, ``judge`` and ``show`` (``demo``: test_demo.py)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from bgboard.cli import main
from engine.dice import Dice
from engine.movegen import legal_plays
from engine.position import Position


def run(args: list[str], stdin: str = "") -> tuple[int, str]:
    out = io.StringIO()
    old = sys.stdin
    sys.stdin = io.StringIO(stdin)
    try:
        status = main(args, out=out)
    finally:
        sys.stdin = old
    return status, out.getvalue()


def test_moves_batch_writes_one_json_object_per_line() -> None:
    status, text = run(["moves", "--batch"], "4HPwATDgc/ABMA 65\nnot-an-id 31\n4HPwATDgc/ABMA 7\n27YBAOD/BwAACA 65\n")
    assert status == 0
    lines = [json.loads(line) for line in text.splitlines()]
    assert len(lines) == 4
    first = lines[0]
    assert first["position"] == "4HPwATDgc/ABMA"
    assert first["dice"] == [6, 5]
    assert first["results"] == sorted(first["results"])
    expected = legal_plays(Position.STARTING, Dice(6, 5)).results
    assert set(first["results"]) == {p.position_id() for p in expected}
    by_id = {p.position_id(): str(play) for p, play in expected.items()}
    assert first["plays"] == [by_id[r] for r in first["results"]]
    assert lines[1]["line"] == 2 and "Position ID" in lines[1]["error"]
    assert lines[2]["line"] == 3 and "error" in lines[2]
    assert lines[3] == {"position": "27YBAOD/BwAACA", "dice": [6, 5], "results": [], "plays": []}


def test_moves_batch_keeps_the_rolled_order() -> None:
    _, text = run(["moves", "--batch"], "4HPwATDgc/ABMA 13\n")
    assert json.loads(text)["dice"] == [1, 3]


def test_judge_json_has_the_contract_keys() -> None:
    after = next(p for p, play in legal_plays(Position.STARTING, Dice(6, 3)).results.items() if str(play) == "13/7 8/5")
    status, text = run(["judge", "4HPwATDgc/ABMA", "63", after.position_id(), "--json"])
    assert status == 0
    data = json.loads(text)
    assert data["verdict"] == "legal"
    assert data["play"] == "13/7 8/5"
    assert {"reasons", "marks", "nearest"} <= set(data)


def test_judge_an_illegal_move_names_the_reason_and_points() -> None:
    # 13/6 with 6-3: seven pips.
    mover = list(Position.STARTING[0])
    mover[12] -= 1
    mover[5] += 1
    after = Position(mover, Position.STARTING[1])
    _, text = run(["judge", "4HPwATDgc/ABMA", "63", after.position_id(), "--json"])
    data = json.loads(text)
    assert data["verdict"] == "illegal"
    assert data["reasons"] == ["7 pips were moved but the roll is 6-3"]
    assert data["marks"] == [13, 6]
    assert len(data["nearest"]) == 3
    _, text = run(["judge", "4HPwATDgc/ABMA", "63", after.position_id()])
    assert text.startswith("illegal\n  7 pips were moved")


def test_judge_too_many_checkers_is_unreadable() -> None:
    # 16 checkers for the side on roll still encode in 80 bits when the opponent has fewer.
    from engine.position import encode_position_id

    mover = list(Position.STARTING[0])
    mover[0] = 1
    opponent = [0] * 24 + [0]
    opponent[5] = 5
    after = encode_position_id(opponent, mover)
    before = Position(Position.STARTING[0], opponent).position_id()
    _, text = run(["judge", before, "31", after, "--json"])
    assert json.loads(text)["verdict"] == "unreadable"


def test_show_draws_the_board_with_ids_and_pips() -> None:
    status, text = run(["show", "4HPwATDgc/ABMA:cAkAAAAAAAAA"])
    assert status == 0
    assert "Position ID: 4HPwATDgc/ABMA" in text
    assert "Match ID   : cAkAAAAAAAAA" in text
    assert "XGID=-b----E-C---eE---c-e----B-" in text
    assert "Pip counts: X 167, O 167" in text
    assert " +13-14-15-16-17-18------19-20-21-22-23-24-+" in text


@pytest.mark.parametrize("given", ["4HPwATDgc/ABMA", "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10"])
def test_show_accepts_a_position_id_or_an_xgid(given: str) -> None:
    status, text = run(["show", given])
    assert status == 0
    assert "4HPwATDgc/ABMA" in text


def test_bad_ids_give_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    status, _ = run(["show", "nonsense"])
    assert status == 1
    assert "bgboard: error: 'nonsense' is not a Position ID, GNUbgID or XGID" in capsys.readouterr().err


def test_python_dash_m_runs_the_command_line() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bgboard", "moves", "4HPwATDgc/ABMA", "31"], capture_output=True, text=True, check=True
    )
    assert "8/5 6/5" in done.stdout
    assert "16 distinct results" in done.stdout


# -- a new user's first steps -----------------------------------------------------------------


def test_bgboard_alone_says_what_to_try_first() -> None:
    done = subprocess.run([sys.executable, "-m", "bgboard"], capture_output=True, text=True, check=False)
    assert done.returncode == 0 and done.stderr == ""
    for first in ("bgboard demo", "bgboard doctor", "docs/build-guide.md", "--help"):
        assert first in done.stdout


def test_version_is_the_installed_distributions() -> None:
    from importlib.metadata import version

    done = subprocess.run([sys.executable, "-m", "bgboard", "--version"], capture_output=True, text=True, check=True)
    assert done.stdout == f"bgboard {version('bgboard')}\n"


@pytest.mark.parametrize("argv", [["--bogus"], ["-v", "--json", "show"], ["--bogus=1", "demo"]])
def test_an_unknown_option_before_the_command_is_named(argv: list[str]) -> None:
    done = subprocess.run([sys.executable, "-m", "bgboard", *argv], capture_output=True, text=True, check=False)
    unknown = next(word for word in argv if word not in ("-v", "show", "demo"))
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines()[-1] == (
        f"bgboard: error: unrecognized option {unknown}: options go after the command (bgboard --help lists them)"
    )


def test_every_command_has_help_without_a_traceback() -> None:
    from bgboard.cli import build_parser

    parser = build_parser()
    commands: list[list[str]] = []
    for action in parser._subparsers._group_actions:  # type: ignore[union-attr]
        for name, sub in action.choices.items():
            commands.append([name])
            for inner in sub._actions:
                if isinstance(inner, type(action)):
                    commands += [[name, leaf] for leaf in inner.choices]
    assert len(commands) >= 18
    for command in commands:
        with pytest.raises(SystemExit) as exited:
            run([*command, "--help"])
        assert exited.value.code == 0, command


# -- one way to give a position ----------------------------------------------------------------

START_XGID = "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10"


def _after(play: str, dice: Dice) -> str:
    return next(p for p, q in legal_plays(Position.STARTING, dice).results.items() if str(q) == play).position_id()


@pytest.mark.parametrize("before", ["4HPwATDgc/ABMA", "4HPwATDgc/ABMA:cAkAAAAAAAAA", START_XGID])
def test_judge_takes_any_form_of_position(before: str) -> None:
    status, text = run(["judge", before, "63", _after("13/7 8/5", Dice(6, 3)), "--json"])
    assert status == 0 and json.loads(text)["play"] == "13/7 8/5"


def test_judge_exits_1_for_an_illegal_move() -> None:
    mover = list(Position.STARTING[0])
    mover[12] -= 1
    mover[5] += 1
    status, text = run(["judge", "4HPwATDgc/ABMA", "63", Position(mover, Position.STARTING[1]).position_id()])
    assert status == 1 and text.startswith("illegal")


def test_moves_takes_the_dice_from_an_xgid() -> None:
    with_dice = START_XGID.replace(":0:0:1:00:", ":0:0:1:31:")
    assert run(["moves", with_dice]) == run(["moves", "4HPwATDgc/ABMA", "31"])


def test_moves_without_a_roll_says_which_is_missing(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["moves", "4HPwATDgc/ABMA"])[0] == 1
    assert "which roll? 4HPwATDgc/ABMA has no dice" in capsys.readouterr().err


def test_moves_batch_refuses_a_position_on_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["moves", "--batch", "4HPwATDgc/ABMA", "65"], "4HPwATDgc/ABMA 31\n")[0] == 1
    assert "leave out the position and roll" in capsys.readouterr().err


def test_an_xgid_pasted_without_its_prefix_is_a_position() -> None:
    status, text = run(["show", START_XGID.removeprefix("XGID=")])
    assert status == 0 and "Position ID: 4HPwATDgc/ABMA" in text


@pytest.mark.parametrize("dice", ["77", "0", "1", "ab", "123"])
def test_bad_dice_are_one_line(dice: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["moves", "4HPwATDgc/ABMA", dice])[0] == 1
    err = capsys.readouterr().err
    assert err.startswith("bgboard: error: ") and err.count("\n") == 1


@pytest.mark.parametrize(
    "args",
    [
        ["demo", "--fps", "0"],
        ["demo", "--fps", "nan"],
        ["demo", "--fps", "-1"],
        ["demo", "--moves", "0"],
        ["demo", "--moves", "-3"],
        ["demo", "--noise", "-1"],
        ["demo", "--seed", "-1"],
        ["doctor", "--timeout", "nan"],
        ["replay", "x", "--hold", "0"],
        ["leds", "check", "--port", "loop://", "--step-ms", "-1"],
        ["vision", "markers", "-o", "m.png", "--size-mm", "0"],
        ["vision", "markers", "-o", "m.png", "--dpi", "inf"],
        ["vision", "calibrate", "x.png", "--markers", "-o", "p.toml", "--bar-width", "1.5"],
    ],
)
def test_bad_numbers_are_usage_errors(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        run(args)
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert f"argument {args[-2]}: " in err and "Traceback" not in err


def test_demo_out_naming_a_file_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plain = tmp_path / "plain.txt"
    plain.write_text("mine\n", encoding="utf-8")
    assert run(["demo", "--leds", "none", "--out", str(plain)])[0] == 1
    assert f"--out {plain} is a file, not a folder" in capsys.readouterr().err
    assert plain.read_text(encoding="utf-8") == "mine\n"


def test_vision_sample_refuses_a_file_and_makes_a_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plain = tmp_path / "plain.txt"
    plain.write_text("mine\n", encoding="utf-8")
    assert run(["vision", "sample", str(plain)])[0] == 1
    assert f"{plain} is a file, not a folder" in capsys.readouterr().err
    status, text = run(["vision", "sample", str(tmp_path / "new" / "samples"), "--moves", "1"])
    assert status == 0
    photos = sorted((tmp_path / "new" / "samples" / "photos").iterdir())
    assert [p.name for p in photos] == ["01.png", "02.png", "03.png"]
    assert "03.png  hbaltaci61 plays 24/23 13/8" in text


def test_calibrate_takes_the_position_in_any_form(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from bgboard.sim.samples import write_samples

    start = write_samples(tmp_path / "samples", moves=1).start
    profile = tmp_path / "board.toml"
    status, _ = run(["vision", "calibrate", str(start), "--markers", "--position", START_XGID, "-o", str(profile)])
    assert status == 0 and profile.exists()
    assert run(["vision", "calibrate", str(start), "--markers", "--position", "zz", "-o", str(profile)])[0] == 1
    assert "--position: 'zz' is not a Position ID, GNUbgID or XGID" in capsys.readouterr().err


def test_a_store_under_a_file_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from bgboard.sim.samples import write_samples

    samples = write_samples(tmp_path / "samples", moves=1)
    profile = tmp_path / "board.toml"
    assert run(["vision", "calibrate", str(samples.start), "--markers", "-o", str(profile)])[0] == 0
    plain = tmp_path / "plain"
    plain.write_text("x", encoding="utf-8")
    photos = str(samples.photos[0].parent)
    assert run(["replay", photos, "--profile", str(profile), "--store", str(plain / "s.sqlite3")])[0] == 2
    assert f"cannot make the match store's folder: {plain} is a file, not a folder" in capsys.readouterr().err
