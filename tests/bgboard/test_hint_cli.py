# SPDX-License-Identifier: MIT
"""``bgboard hint``: gnubg's ranked plays in its layout, or its cube advice; the JSON contract."""

from __future__ import annotations

import io
import json
import re

import pytest

from bgboard.cli import main
from engine.hints import INSTALL_HINT, find_gnubg
from engine.match import MatchState, OpeningRoll

pytestmark = pytest.mark.oracle

START_ROLL = "4HPwATDgc/ABMA:cAkAAAAAAAAA"  # money, the start, player 1 to roll
CLOSE_RACE = "7e4OAADb7g4AAA:MAEAAAAAAAAE"  # money, a race worth a double and a take


@pytest.fixture(autouse=True)
def _gnubg_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BGBOARD_GNUBG", raising=False)
    if find_gnubg() is None:
        pytest.fail(INSTALL_HINT)


def run(args: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    status = main(args, out=out)
    return status, out.getvalue()


def test_plays_are_printed_in_gnubgs_hint_layout() -> None:
    status, text = run(["hint", "--gnubgid", START_ROLL, "--dice", "31", "-n", "3"])
    assert status == 0
    lines = text.splitlines()
    assert re.fullmatch(r" 1\. 8/5 6/5 +Eq\.: \+0\.\d{3}", lines[0])
    assert re.fullmatch(r" +0\.\d{3} 0\.\d{3} 0\.\d{3} - 0\.\d{3} 0\.\d{3} 0\.\d{3}", lines[1])
    assert re.fullmatch(r" 2\. \S.* +Eq\.: [+-]\d\.\d{3} \(-\d\.\d{3}\)", lines[2])
    assert len([line for line in lines if re.match(r" ?\d\. ", line)]) == 3


def test_json_lists_plays_best_first_with_equity_and_error() -> None:
    status, text = run(["hint", "--gnubgid", START_ROLL, "--dice", "31", "--json"])
    assert status == 0
    record = json.loads(text)
    plays = record["plays"]
    assert len(plays) == 5
    assert plays[0]["play"] == "8/5 6/5"
    assert plays[0]["error"] == 0
    assert all({"play", "equity", "error"} <= set(p) for p in plays)
    assert [p["equity"] for p in plays] == sorted((p["equity"] for p in plays), reverse=True)
    assert all(p["error"] >= 0 for p in plays)
    assert record["dice"] == [3, 1]


def test_the_dice_in_the_gnubgid_are_used_without_dice() -> None:
    rolled = MatchState.new_match(5).apply(OpeningRoll(3, 1)).gnubg_id()
    status, text = run(["hint", "--gnubgid", rolled, "--json", "-n", "2", "--ply", "0"])
    assert status == 0
    assert json.loads(text)["plays"][0]["play"] == "8/5 6/5"


def test_a_bare_position_id_is_a_money_game() -> None:
    status, text = run(["hint", "--gnubgid", "4HPwATDgc/ABMA", "--dice", "31", "--json", "-n", "1"])
    assert status == 0
    assert json.loads(text)["plays"][0]["play"] == "8/5 6/5"


def test_an_xgid_works_too() -> None:
    xgid = "XGID=-b----E-C---eE---c-e----B-:0:0:1:52:0:0:0:0:10"
    status, text = run(["hint", "--xgid", xgid, "--json", "-n", "3"])
    assert status == 0
    gnubgid = MatchState.from_xgid(xgid).gnubg_id()
    assert run(["hint", "--gnubgid", gnubgid, "--json", "-n", "3"]) == (0, text)
    assert len(json.loads(text)["plays"]) == 3


def test_without_dice_the_cube_advice_is_printed() -> None:
    status, text = run(["hint", "--gnubgid", CLOSE_RACE])
    assert status == 0
    lines = text.splitlines()
    assert lines[0] == "Cube analysis (0-ply)"
    assert "Cubeful equities:" in lines
    assert re.fullmatch(r"1\. Double, take +\+0\.\d{3}", lines[lines.index("Cubeful equities:") + 1])
    assert lines[-1] == "Proper cube action: Double, take"


def test_json_cube_advice() -> None:
    status, text = run(["hint", "--gnubgid", CLOSE_RACE, "--json"])
    assert status == 0
    cube = json.loads(text)["cube"]
    assert cube["action"] == "Double, take"
    assert (cube["double"], cube["take"], cube["too_good"]) == (True, True, False)
    assert {"no_double", "double_take", "double_pass"} <= set(cube)
    status, text = run(["hint", "--gnubgid", START_ROLL, "--json"])
    assert json.loads(text)["cube"]["double"] is False


def test_a_dance_says_so() -> None:
    status, text = run(["hint", "--gnubgid", "27YBBwAA8P8DQA:MAEXAAAAAAAE"])
    assert status == 0
    assert text == "no legal play for 6-5 (dance)\n"
    status, text = run(["hint", "--gnubgid", "27YBBwAA8P8DQA:MAEXAAAAAAAE", "--json"])
    assert json.loads(text)["plays"] == []


def test_a_bad_id_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    status, text = run(["hint", "--gnubgid", "not-an-id", "--dice", "31"])
    assert status == 1
    assert text == ""
    assert "bgboard: error: 'not-an-id' is not a GNUbgID, XGID or Position ID" in capsys.readouterr().err
    status, _ = run(["hint", "--gnubgid", START_ROLL, "--dice", "71"])
    assert status == 1


def test_no_gnubg_is_an_error_saying_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("BGBOARD_GNUBG", "/nonexistent/gnubg")
    status, _ = run(["hint", "--gnubgid", START_ROLL, "--dice", "31"])
    assert status == 1
    err = capsys.readouterr().err
    assert err.startswith("bgboard: error: ")
    assert "apt-get install gnubg" in err


def test_the_position_can_be_given_as_for_show_and_moves(capsys: pytest.CaptureFixture[str]) -> None:
    flagged = run(["hint", "--gnubgid", START_ROLL, "--dice", "31", "--json"])
    assert run(["hint", START_ROLL, "--dice", "31", "--json"]) == flagged
    xgid = MatchState.from_gnubg_id(START_ROLL).xgid()
    assert json.loads(run(["hint", xgid, "--dice", "31", "--json"])[1])["plays"][0]["play"] == "8/5 6/5"
    # Pasted without its "XGID=", and starting with "-": still the position, not an option.
    assert json.loads(run(["hint", xgid.removeprefix("XGID="), "--dice", "31", "--json"])[1])["plays"]
    assert run(["hint", START_ROLL, "--gnubgid", START_ROLL])[0] == 1
    assert "give the position once" in capsys.readouterr().err
    assert run(["hint"])[0] == 1
    assert "give the position: bgboard hint ID" in capsys.readouterr().err


@pytest.mark.parametrize("bad", [["--timeout", "nan"], ["--timeout", "inf"], ["--timeout", "0"], ["-n", "0"]])
def test_bad_numbers_are_usage_errors(bad: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        run(["hint", START_ROLL, "--dice", "31", *bad])
    assert exited.value.code == 2
    assert f"argument {bad[0]}" in capsys.readouterr().err
