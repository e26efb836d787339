# SPDX-License-Identifier: MIT
"""``bgboard matches`` and ``bgboard export``: listing the match store and writing match files."""

from __future__ import annotations

import io
import json
from datetime import datetime
from pathlib import Path

import pytest

from bgboard.cli import main
from bgboard.store import MatchStore
from engine.match import Double, Drop, MatchOptions, Move, OpeningRoll, Take

STARTED = datetime(2026, 11, 22, 14, 2, 30).astimezone()


def run(args: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    status = main(args, out=out)
    return status, out.getvalue()


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """A store with a finished 1-point match and a 7-point match in progress."""
    path = tmp_path / "matches.sqlite3"
    with MatchStore(path) as store:
        first = store.start_match(("Ann", "Bob"), 1, at=STARTED)
        for action in (OpeningRoll(3, 1), Move("8/5 6/5"), Double(), Drop()):
            store.record(first, action, source="button")
        second = store.start_match(("Zoë", "Bob"), 7, MatchOptions(), {"Event": "Club night"}, at=STARTED)
        for action in (OpeningRoll(6, 4), Move("24/14"), Double(), Take()):
            store.record(second, action, source="camera", confidence=0.9)
    return path


def test_matches_lists_every_match(db: Path) -> None:
    status, text = run(["matches", "--store", str(db)])
    assert status == 0
    lines = text.splitlines()
    assert lines[0].split() == ["id", "started", "players", "length", "score", "games", "status"]
    assert lines[1].split() == ["1", "2026-11-22", "14:02", "Ann", "-", "Bob", "1p", "0-1", "1", "finished"]
    assert lines[2].split() == ["2", "2026-11-22", "14:02", "Zoë", "-", "Bob", "7p", "0-0", "1", "in", "progress"]


def test_matches_json(db: Path) -> None:
    status, text = run(["matches", "--store", str(db), "--json"])
    assert status == 0
    first, second = (json.loads(line) for line in text.splitlines())
    assert first["id"] == 1 and first["players"] == ["Ann", "Bob"] and first["length"] == 1
    assert first["score"] == [0, 1] and first["games"] == 1 and first["status"] == "finished"
    assert first["finished"] is not None and first["actions"] == 4
    assert second["status"] == "in progress" and second["finished"] is None
    assert second["players"] == ["Zoë", "Bob"] and second["tags"]["Event"] == "Club night"
    assert second["file_name"] == "2026-11-22_1402_Zoë-vs-Bob_7p.mat"
    with MatchStore(db) as store:
        assert second["gnubgid"] == store.state(2).gnubg_id()
    assert second["started"].endswith("Z")


def test_matches_takes_the_store_from_the_environment(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BGBOARD_STORE", str(db))
    status, text = run(["matches", "--json"])
    assert status == 0 and len(text.splitlines()) == 2


def test_matches_without_a_store_says_so_and_creates_nothing(tmp_path: Path) -> None:
    path = tmp_path / "none.sqlite3"
    status, text = run(["matches", "--store", str(path)])
    assert status == 0 and f"no match store at {path}" in text
    assert not path.exists()
    assert run(["matches", "--store", str(path), "--json"]) == (0, "")


def test_export_to_a_folder_uses_the_usual_file_name(db: Path, tmp_path: Path) -> None:
    folder = tmp_path / "exports"
    folder.mkdir()
    status, text = run(["export", "2", "--format", "mat", "-o", str(folder), "--store", str(db)])
    assert status == 0
    written = folder / "2026-11-22_1402_Zoë-vs-Bob_7p.mat"
    assert text == f"{written}\n"
    content = written.read_text(encoding="utf-8")
    assert " 7 point match" in content and '; [Event "Club night"]' in content
    assert "Doubles => 2" in content and "Takes" in content
    assert [p.name for p in folder.iterdir()] == [written.name]  # no partial file left behind


def test_export_last_to_a_file(db: Path, tmp_path: Path) -> None:
    target = tmp_path / "out" / "mine.mat"
    status, text = run(["export", "last", "-o", str(tmp_path / "out") + "/", "--store", str(db)])
    assert status == 0 and text.strip().endswith("_Zoë-vs-Bob_7p.mat")
    status, text = run(["export", "1", "-o", str(target), "--store", str(db)])
    assert status == 0 and text == f"{target}\n"
    content = target.read_text(encoding="utf-8")
    assert " 1 point match" in content and "Wins 1 point" in content


def test_export_sgf(db: Path, tmp_path: Path) -> None:
    status, text = run(["export", "1", "--format", "sgf", "-o", str(tmp_path), "--store", str(db)])
    assert status == 0
    written = Path(text.strip())
    assert written.name == "2026-11-22_1402_Ann-vs-Bob_1p.sgf"
    assert "GM[6]" in written.read_text(encoding="utf-8")


def test_export_of_an_unknown_match_names_it_and_the_store(
    db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, text = run(["export", "42", "-o", str(tmp_path), "--store", str(db)])
    assert status == 1 and text == ""
    assert f"bgboard: error: no match 42 in {db}" in capsys.readouterr().err
    status, _ = run(["export", "first", "-o", str(tmp_path), "--store", str(db)])
    assert status == 1
    assert "a match is given by its number" in capsys.readouterr().err
    assert [p for p in tmp_path.iterdir() if p.suffix == ".mat"] == []


def test_export_from_an_empty_or_missing_store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty.sqlite3"
    MatchStore(empty).close()
    assert run(["export", "last", "--store", str(empty), "-o", str(tmp_path)])[0] == 1
    assert f"no matches in {empty}" in capsys.readouterr().err
    missing = tmp_path / "missing.sqlite3"
    assert run(["export", "1", "--store", str(missing), "-o", str(tmp_path)])[0] == 1
    assert f"{missing}: no match store there" in capsys.readouterr().err
    assert not missing.exists()


def test_export_refuses_a_bad_format(db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        run(["export", "1", "--format", "txt", "-o", str(tmp_path), "--store", str(db)])
    assert exited.value.code == 2
    assert "invalid choice: 'txt'" in capsys.readouterr().err


def test_export_into_a_missing_folder_fails_clearly(
    db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "no" / "such" / "folder" / "x.mat"
    assert run(["export", "1", "-o", str(target), "--store", str(db)])[0] == 1
    assert f"cannot write {target}" in capsys.readouterr().err


def test_a_garbage_store_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "garbage.sqlite3"
    path.write_bytes(b"not a database at all " * 100)
    assert run(["matches", "--store", str(path)])[0] == 1
    assert f"bgboard: error: {path}: not a bgboard match store" in capsys.readouterr().err


def test_export_never_replaces_a_file_without_force(
    db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "mine.mat"
    target.write_text("my own notes\n", encoding="utf-8")
    assert run(["export", "1", "-o", str(target), "--store", str(db)])[0] == 1
    assert f"{target} exists: use --force" in capsys.readouterr().err
    assert target.read_text(encoding="utf-8") == "my own notes\n"
    assert run(["export", "1", "-o", str(target), "--store", str(db), "--force"])[0] == 0
    assert " 1 point match" in target.read_text(encoding="utf-8")


def test_export_never_replaces_a_device_or_a_link_to_one(
    db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    link = tmp_path / "null.mat"
    link.symlink_to("/dev/null")
    for target in (Path("/dev/null"), link):
        assert run(["export", "1", "-o", str(target), "--store", str(db), "--force"])[0] == 1
        assert "exists and is not a regular file" in capsys.readouterr().err
    assert Path("/dev/null").is_char_device() and link.is_symlink()


def test_export_follows_the_suffix_and_refuses_a_contradiction(
    db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["export", "1", "-o", str(tmp_path / "m.sgf"), "--store", str(db)])[0] == 0
    assert (tmp_path / "m.sgf").read_text(encoding="utf-8").startswith("(;FF[4]GM[6]")
    assert run(["export", "1", "--format", "sgf", "-o", str(tmp_path / "m.mat"), "--store", str(db)])[0] == 1
    assert "names a .mat file but --format is sgf" in capsys.readouterr().err
    assert not (tmp_path / "m.mat").exists()


def test_export_under_a_file_fails_clearly(db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plain = tmp_path / "plain.txt"
    plain.write_text("x", encoding="utf-8")
    assert run(["export", "1", "-o", str(plain / "x.mat"), "--store", str(db)])[0] == 1
    err = capsys.readouterr().err
    assert f"cannot write {plain / 'x.mat'}" in err and "Traceback" not in err
    assert not any(p.name.endswith(".partial") for p in tmp_path.iterdir())


def test_listing_an_empty_file_or_a_folder_changes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty.sqlite3"
    empty.touch()
    assert run(["matches", "--store", str(empty)])[0] == 1
    assert "not a bgboard match store (the file is empty)" in capsys.readouterr().err
    assert empty.stat().st_size == 0
    assert run(["matches", "--store", str(tmp_path)])[0] == 1
    assert f"{tmp_path} is a folder, not a match store" in capsys.readouterr().err
    assert run(["matches", "--store", ""])[0] == 1
    assert "--store names no file" in capsys.readouterr().err


def test_db_is_still_accepted_for_the_store(db: Path) -> None:
    status, text = run(["matches", "--db", str(db), "--json"])
    assert status == 0 and len(text.splitlines()) == 2


def test_a_match_with_nothing_recorded_is_not_exported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "m.sqlite3"
    with MatchStore(path) as store:
        store.start_match(("Ann", "Bob"), 3, at=STARTED)
    for fmt in ("mat", "sgf"):
        assert run(["export", "1", "--format", fmt, "-o", str(tmp_path), "--store", str(path)])[0] == 1
        assert "match 1 has nothing recorded yet" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.sqlite3"]
