# SPDX-License-Identifier: MIT
"""``bgboard check-match``: the JSON contract, the exit status, bad files, the progress bar."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from bgboard.cli import main
from engine.matcheck import EXAMPLE
from tests.engine.test_matfile import lost_move_file


def run(args: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    status = main(args, out=out)
    return status, out.getvalue()


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "good.mat").write_text(EXAMPLE, encoding="utf-8")
    (tmp_path / "lost.txt").write_text(lost_move_file(), encoding="utf-8")
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "illegal.mat").write_text(EXAMPLE.replace("64: 24/18 13/9", "64: 24/20 13/7"), encoding="utf-8")
    (bad / "garbled.mat").write_text(EXAMPLE.replace("  2)  Doubles", "  2) ~~~ Doubles"), encoding="utf-8")
    return tmp_path


def test_good_files_exit_0_and_a_lost_move_is_not_a_failure(files: Path) -> None:
    status, text = run(["check-match", str(files / "good.mat"), str(files / "lost.txt")])
    assert status == 0
    lines = text.splitlines()
    assert lines[0] == f"{files / 'good.mat'}: 1 game, 2 plays, 2 cube actions: ok"
    assert lines[1] == f"{files / 'lost.txt'}: 2 games, 12 plays, 4 cube actions: ok, 1 lost move"
    assert lines[2] == "  lost move: game 2, move 2, Ann: '32: ????' (line 24)"
    assert lines[-1] == "total: 2 files, 3 games, 14 plays: 0 illegal plays, 0 problems, 1 lost move"


def test_json_one_object_per_file_with_the_contract_keys(files: Path) -> None:
    status, text = run(["check-match", "--json", str(files)])
    assert status == 1
    reports = {Path(r["file"]).name: r for r in map(json.loads, text.splitlines())}
    assert sorted(reports) == ["garbled.mat", "good.mat", "illegal.mat", "lost.txt"]
    for report in reports.values():
        assert {"file", "games", "plays", "illegal", "problems"} <= set(report)
    assert reports["good.mat"]["illegal"] == [] and reports["good.mat"]["problems"] == []
    illegal = reports["illegal.mat"]["illegal"]
    assert [{k: e[k] for k in ("game", "move", "player", "play", "reason")} for e in illegal] == [
        {
            "game": 1,
            "move": 1,
            "player": "Bob",
            "play": "64: 24/20 13/7",
            "reason": "24/20 13/7 is not a legal play for 6-4",
        }
    ]
    assert reports["lost.txt"]["lost_moves"][0]["move"] == 2 and reports["lost.txt"]["problems"] == []


def test_a_garbled_file_names_the_file_line_and_text(files: Path) -> None:
    status, text = run(["check-match", "--json", str(files / "bad" / "garbled.mat")])
    assert status == 1
    (report,) = map(json.loads, text.splitlines())
    assert report["games"] == 1 and report["illegal"] == []
    assert report["problems"] == [
        f"{files / 'bad' / 'garbled.mat'}:8: game 1: unreadable text '~~~': '2) ~~~ Doubles => 2                Drops'"
    ]


def test_a_missing_file_is_a_problem_and_an_empty_folder_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, text = run(["check-match", str(tmp_path / "nope.mat")])
    assert status == 1
    assert "cannot read the file" in text
    empty = tmp_path / "empty"
    empty.mkdir()
    assert run(["check-match", str(empty)])[0] == 1
    assert "bgboard: error: no .mat or .txt match files in" in capsys.readouterr().err


def test_no_progress_bar_unless_stderr_is_a_terminal(files: Path) -> None:
    many = files / "many"
    many.mkdir()
    for n in range(25):
        (many / f"m{n:02d}.mat").write_text(EXAMPLE, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "bgboard", "check-match", str(many)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0
    assert done.stderr == ""
    assert done.stdout.splitlines()[-1].startswith("total: 25 files, 25 games")


def test_a_progress_bar_on_a_terminal(files: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    many = files / "many"
    many.mkdir()
    for n in range(25):
        (many / f"m{n:02d}.mat").write_text(EXAMPLE, encoding="utf-8")

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    err = Terminal()
    monkeypatch.setattr(sys, "stderr", err)
    status, text = run(["check-match", "--json", str(many)])
    assert status == 0
    assert len(text.splitlines()) == 25
    assert "] 25/25 files" in err.getvalue()
    # The bar is cleared at the end.
    assert err.getvalue().endswith("\r\x1b[K")


def test_an_empty_folder_beside_files_is_named(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = files / "empty"
    empty.mkdir()
    status, _ = run(["check-match", str(files / "good.mat"), str(empty)])
    assert status == 0
    assert f"bgboard: warning: {empty}: no .mat or .txt match files" in capsys.readouterr().err


def test_a_folder_of_other_files_gives_one_line_each(tmp_path: Path) -> None:
    for n in range(3):
        (tmp_path / f"label{n}.txt").write_text("0 0.5 0.5 0.1 0.1\n" * 40, encoding="utf-8")
    (tmp_path / "binary.mat").write_bytes(bytes(range(256)))
    status, text = run(["check-match", str(tmp_path)])
    assert status == 1
    problems = [line for line in text.splitlines() if line.startswith("  problem:")]
    assert len(problems) == 4
    assert "binary data at byte offset 0" in text and "not a .mat match file" in text
