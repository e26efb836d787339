# SPDX-License-Identifier: MIT
"""``bgboard analyse`` gives GNU Backgammon's own figures for a match.

A short corpus match (5 points, three games, every kind of cube error) is analysed at 0-ply by
``bgboard analyse``. Independently, the test runs the gnubg program itself on the corpus file
as written (``import mat``, ``analyse match``, ``show statistics match``, ``export match
text``) and reads what gnubg prints: each player's error rate, rating, luck and marked-move
counts, and from gnubg's annotated move list every checker play with its equity loss and every
cube decision's equities. Our report must say the same.
"""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from bgboard.cli import main
from bgboard.store import MatchStore
from engine.analysis import AnalysisError, MatchAnalysis, analyse_record, parse_statistics
from engine.hints import INSTALL_HINT
from engine.matfile import read_mat_file, write_mat
from tests.conftest import SHARED_DATA

GNUBG = shutil.which("gnubg") or "/usr/games/gnubg"

#: lasse v massiveblunder, 5 points, 3 games: checker errors of every size, a wrong double, a
#: wrong take and a wrong pass, missed doubles.
MATCH = SHARED_DATA / "matches" / "bglab" / "lasse" / "match1089993.txt"


def _needs_gnubg() -> None:
    # GNU Backgammon is the oracle: without it these tests fail, naming the install, never skip.
    if not Path(GNUBG).exists():
        pytest.fail(INSTALL_HINT)


@pytest.fixture
def gnubg_present() -> None:
    """The gnubg program is there (the test fails, naming the install, when it is not)."""
    _needs_gnubg()


needs_gnubg = pytest.mark.usefixtures("gnubg_present")


def run(args: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    status = main(args, out)
    return status, out.getvalue()


def gnubg_says(match: Path, work: Path) -> tuple[str, str]:
    """gnubg's ``show statistics match`` and its ``export match text`` (all games) for ``match`` at 0-ply."""
    export = work / "analysed.txt"
    commands = [
        "set sound enable off",
        "set confirm new off",
        f'import mat "{match}"',
        "set analysis chequerplay evaluation plies 0",
        "set analysis cubedecision evaluation plies 0",
        "analyse match",
        "show statistics match",
        f'export match text "{export}"',
    ]
    done = subprocess.run(
        [GNUBG, "-t", "-q", "-r"],
        input="\n".join(commands) + "\n",
        capture_output=True,
        text=True,
        timeout=120,
        env={"LC_ALL": "C.UTF-8", "PATH": "/usr/bin:/bin"},
    )
    # gnubg writes a file per game: analysed.txt, analysed_002.txt, ...
    games = sorted(work.glob("analysed*.txt"))
    return done.stdout, "\n".join(path.read_text(encoding="utf-8") for path in games)


def statistics_rows(text: str) -> dict[str, list[str]]:
    """Each ``Overall``/``Luck``/``Chequerplay`` row of gnubg's statistics: label -> two cells."""
    rows: dict[str, list[str]] = {}
    section = ""
    for line in text.splitlines():
        if line.endswith("statistics"):
            section = line.split()[0]
        elif line[:40].strip() and len(line) > 41:
            cells = re.split(r"\s{2,}", line[41:].strip())
            rows[f"{section}: {line[:40].strip()}"] = cells
    return rows


def annotated_decisions(text: str) -> tuple[set[tuple[str, str, str, float]], list[tuple[str, str, float]]]:
    """From gnubg's annotated move list: every checker play that lost equity, as (player, play,
    best, loss), and every cube decision that could be an error, as (player, decision, loss)."""
    plays: set[tuple[str, str, str, float]] = set()
    cube: list[tuple[str, str, float]] = []
    for block in re.split(r"(?m)^Move number \d+:", text)[1:]:
        acted = re.search(r"(?m)^\* (.+?) (moves|doubles|accepts|rejects|cannot move)(?: (.*))?$", block)
        if not acted:
            continue
        name, verb = acted.group(1), acted.group(2)
        # A play made outside the listed best is listed last, ranked "??".
        ranked = re.findall(r"(?m)^(\*?)\s+(?:\d+\.|\?\?)\s+Cubeful 0-ply\s+(.+?)\s+Eq\.: \S+(?: \((\S+)\))?$", block)
        if verb == "moves" and ranked and ranked[0][0] != "*":
            made = next(r for r in ranked if r[0] == "*")
            plays.add((name, made[1], ranked[0][1], abs(float(made[2]))))
        equities = dict(
            (words, float(eq))
            for words, eq in re.findall(r"(?m)^\d\. (No double|Double, take|Double, pass)\s+(\S+)", block)
        )
        if len(equities) == 3:
            nd, dt, dp = equities["No double"], equities["Double, take"], equities["Double, pass"]
            if verb == "doubles":
                cube.append((name, "double", nd - min(dt, dp)))
            elif verb == "accepts":  # the taker's view: the take costs what it is below the pass
                cube.append((name, "take", dp - dt))
            elif verb == "rejects":
                cube.append((name, "pass", dt - dp))
            else:
                cube.append((name, "no double", min(dt, dp) - nd))
    return plays, cube


@pytest.fixture(scope="module")
def analysed() -> dict[str, Any]:
    _needs_gnubg()
    assert MATCH.is_file(), f"the shared match corpus is not at {MATCH}"
    status, out = run(["analyse", str(MATCH), "--json"])
    assert status == 0
    report: dict[str, Any] = json.loads(out)
    return report


@needs_gnubg
@pytest.mark.oracle
def test_the_figures_are_gnubgs_statistics_of_the_same_match(analysed: dict[str, Any], tmp_path: Path) -> None:
    statistics, _ = gnubg_says(MATCH, tmp_path)
    rows = statistics_rows(statistics)
    names = rows.get("Chequerplay: Player")
    players = analysed["players"]
    assert [p["name"] for p in players] == ["lasse", "massiveblunder"]
    assert names is None or names == ["lasse", "massiveblunder"]
    for side, player in enumerate(players):
        assert -float(rows["Overall: Error rate mEMG (MWC)"][side * 2]) == player["error_rate"]
        assert rows["Overall: Overall rating"][side] == player["rating"]
        assert float(rows["Luck: Luck rate mEMG (MWC)"][side * 2]) == player["luck"]
        for label in ("doubtful", "bad", "very bad"):
            marked = int(rows[f"Chequerplay: Moves marked {label}"][side])
            ours = [e for e in player["errors"] if e["dice"] and e["label"] == label]
            assert len(ours) == marked, (player["name"], label)
    # Different players, different figures: the columns were not read twice.
    assert players[0]["error_rate"] != players[1]["error_rate"]
    assert players[0]["rating"] == "Advanced" and players[1]["rating"] == "Beginner"


@needs_gnubg
@pytest.mark.oracle
def test_every_marked_play_is_as_gnubgs_analysis_shows_it(analysed: dict[str, Any], tmp_path: Path) -> None:
    _, annotated = gnubg_says(MATCH, tmp_path)
    plays, cube = annotated_decisions(annotated)
    checker = [(p["name"], e) for p in analysed["players"] for e in p["errors"] if e["dice"]]
    cubes = [(p["name"], e) for p in analysed["players"] for e in p["errors"] if not e["dice"]]
    assert len(checker) == 7 and len(cubes) == 7
    for name, error in checker:
        assert (name, error["play"], error["best"], error["equity_lost"]) in plays
    for name, error in cubes:
        matching = [loss for who, what, loss in cube if who == name and what == error["play"]]
        assert any(abs(loss - error["equity_lost"]) <= 0.0015 for loss in matching), (name, error)
    assert {e["play"] for _, e in cubes} == {"double", "no double", "take", "pass"}
    assert {e["label"] for _, e in checker + cubes} == {"doubtful", "bad", "very bad"}


#: A ranked play of gnubg's annotated move list and the chances line under it.
RANKED = re.compile(
    r"(?m)^(\*?)\s+(\d+)\.\s+Cubeful \d-ply\s+(.+?)\s+Eq\.: (\S+)(?: \((\S+)\))?\n"
    r"\s+(\S+) (\S+) (\S+) - (\S+) (\S+) (\S+)$"
)
CUBEFUL = re.compile(r"(?m)^\d\. (No double|Double, take|Double, pass)\s+(\S+)")
PROPER = re.compile(r"(?m)^Proper cube action: (.+?)(?: \([\d.]+%\))?$")
CUBELESS = re.compile(r"(?m)^0-ply cubeless equity .*\n\s+(\S+) (\S+) (\S+) - (\S+) (\S+) (\S+)$")
VERBS = {"moves": "move", "cannot move": "move", "doubles": "double", "accepts": "take", "rejects": "pass"}
CHANCES = ("win", "win_gammon", "win_backgammon", "lose", "lose_gammon", "lose_backgammon")


def exported_decisions(work: Path) -> list[list[dict[str, Any]]]:
    """Per game (gnubg's ``export match text`` writes a file per game), every action of gnubg's
    annotated move list: who, what, the ranked plays and the cube analysis, as gnubg prints them."""
    games = []
    for path in sorted(work.glob("analysed*.txt")):
        found = []
        for block in re.split(r"(?m)^Move number \d+:", path.read_text(encoding="utf-8"))[1:]:
            acted = re.search(r"(?m)^\* (.+?) (moves|doubles|accepts|rejects|cannot move)", block)
            if not acted:
                continue
            plays = [
                {
                    "made": star == "*",
                    "rank": int(rank),
                    "play": play,
                    "equity": float(eq),
                    "difference": float(diff or 0),
                    "chances": dict(zip(CHANCES, map(float, chances), strict=True)),
                }
                for star, rank, play, eq, diff, *chances in RANKED.findall(block)
            ]
            equities = {words: float(eq) for words, eq in CUBEFUL.findall(block)}
            proper = PROPER.search(block)
            cubeless = CUBELESS.search(block)
            found.append(
                {
                    "name": acted.group(1),
                    "kind": VERBS[acted.group(2)],
                    "plays": plays,
                    "cube": equities or None,
                    "action": proper.group(1) if proper else None,
                    "chances": [float(c) for c in cubeless.groups()] if cubeless else None,
                }
            )
        games.append(found)
    return games


@needs_gnubg
@pytest.mark.oracle
def test_every_decision_has_gnubgs_alternatives_and_cube_figures(analysed: dict[str, Any], tmp_path: Path) -> None:
    gnubg_says(MATCH, tmp_path)
    exported = exported_decisions(tmp_path)
    names = [p["name"] for p in analysed["players"]]
    decisions = analysed["decisions"]
    assert len(exported) == 3 and len(decisions) == sum(len(game) for game in exported)
    checked_plays = checked_cubes = 0
    for number, game in enumerate(exported, 1):
        ours = [d for d in decisions if d["game"] == number]
        assert len(ours) == len(game)
        for decision, said in zip(ours, game, strict=True):
            where = (number, decision["move"], said["name"], said["kind"])
            assert (names[decision["player"]], decision["kind"]) == (said["name"], said["kind"]), where
            # The top 5 plays (and the play made), each with gnubg's equity, difference and chances.
            assert [{k: a[k] for k in said["plays"][0]} for a in decision["alternatives"]] == said["plays"], where
            checked_plays += bool(said["plays"])
            if decision["alternatives"]:
                made = next(a for a in decision["alternatives"] if a["made"])
                assert decision["play"] == made["play"] and decision["equity_lost"] == -made["difference"]
            cube = decision["cube"]
            assert (cube is None) == (said["cube"] is None), where
            if cube is None:
                continue
            checked_cubes += 1
            # At a take or a pass gnubg prints the taker's side; ours stay the doubler's.
            sign = -1 if decision["kind"] in ("take", "pass") else 1
            assert sign * cube["no_double"] == said["cube"]["No double"], where
            assert sign * cube["double_take"] == said["cube"]["Double, take"], where
            assert sign * cube["double_pass"] == said["cube"]["Double, pass"], where
            assert cube["action"] == said["action"], where
            chances = said["chances"] if sign == 1 else said["chances"][3:] + said["chances"][:3]
            assert [cube["chances"][k] for k in CHANCES] == chances, where
    assert checked_plays >= 60 and checked_cubes >= 40
    # A known position: game 1, massiveblunder's 41 off the bar, a bad play (gnubg's 4th).
    bad = next(d for d in decisions if d["game"] == 1 and d["dice"] == [4, 1] and d["label"] == "bad")
    first = bad["alternatives"][0]
    assert (first["rank"], first["play"], first["equity"], first["difference"]) == (1, "bar/21* 11/10", 0.233, 0.0)
    assert first["chances"]["win"] == 0.554 and first["chances"]["win_gammon"] == 0.169
    assert [(a["rank"], a["made"]) for a in bad["alternatives"] if a["made"]] == [(4, True)]
    assert (bad["play"], bad["equity_lost"]) == ("bar/21* 6/5", 0.062)
    # Its cube decision before the roll: no double, right.
    assert bad["cube"]["action"] == "No double, take" and bad["cube"]["equity_lost"] == 0.0
    # Game 3's wrong take: the doubler's figures, right was pass, the take lost 0.133.
    take = next(d for d in decisions if d["game"] == 3 and d["kind"] == "take" and d["cube"]["label"] == "very bad")
    assert take["cube"]["action"] == "Double, pass" and take["cube"]["best"] == "pass"
    assert (take["cube"]["played"], take["cube"]["equity_lost"]) == ("take", 0.133)
    assert (take["cube"]["double_take"], take["cube"]["double_pass"]) == (1.133, 1.0)
    # Every marked error is one of the decisions, with the same loss.
    for player, figures in enumerate(analysed["players"]):
        for error in figures["errors"]:
            where = (error["game"], error["move"], player)
            same = [d for d in decisions if (d["game"], d["move"], d["player"]) == where]
            if error["dice"]:
                assert any(d["play"] == error["play"] and d["equity_lost"] == error["equity_lost"] for d in same)
            else:
                assert any(
                    d["cube"] and d["cube"]["played"] == error["play"] and d["cube"]["best"] == error["best"]
                    for d in same
                ), error


def stored_corpus_match(folder: Path) -> tuple[Path, int]:
    """The corpus match imported into a new store in ``folder``: the store's file and the match."""
    db = folder / "matches.sqlite3"
    record = read_mat_file(MATCH).record
    with MatchStore(db) as store:
        match = store.start_match(record.players, record.length, record.options)
        for game in record.games:
            for action in game.actions:
                store.record(match, action, source="import")
    return db, match


@needs_gnubg
def test_a_stored_match_is_analysed_and_the_analysis_kept(tmp_path: Path, analysed: dict[str, Any]) -> None:
    db, match = stored_corpus_match(tmp_path)
    with MatchStore(db) as store:
        assert store.analysis(match) is None
    status, out = run(["analyse", "last", "--store", str(db), "--json"])
    assert status == 0
    assert json.loads(out) == analysed
    with MatchStore(db, create=False) as store:
        assert store.analysis(match, ply=0) == analysed
        assert store.analysis(match, ply=2) is None
    status, text = run(["analyse", str(match), "--store", str(db)])
    assert status == 0
    assert text.splitlines()[1].startswith("lasse: error rate 9.2 mEMG per move (Advanced)")
    assert "game 3, move 12: take, right was pass (-0.133, very bad)" in text


def test_an_unknown_match_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "matches.sqlite3"
    with MatchStore(db) as store:
        store.start_match(("Ann", "Bob"), 3)
    assert run(["analyse", "7", "--store", str(db)])[0] == 1
    assert "no match 7" in capsys.readouterr().err.lower().replace("number ", "")


def test_a_match_file_that_does_not_read_is_named_with_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.mat"
    bad.write_text("3 point match\n\n Game 1\n Ann : 0    Bob : 0\n  1) 31: 8/5 6/3\n", encoding="utf-8")
    assert run(["analyse", str(bad)])[0] == 1
    err = capsys.readouterr().err
    assert f"{bad}:5:" in err and "8/5 6/3" in err
    assert run(["analyse", str(tmp_path / "missing.mat")])[0] == 1
    assert "missing.mat: no such match file" in capsys.readouterr().err


def test_an_older_store_is_upgraded_with_a_table_for_analyses(tmp_path: Path) -> None:
    db = tmp_path / "old.sqlite3"
    with MatchStore(db) as store:
        match = store.start_match(("Ann", "Bob"), 3)
    import sqlite3

    raw = sqlite3.connect(db)
    raw.execute("DROP TABLE analyses")
    raw.execute("PRAGMA user_version=1")
    raw.commit()
    raw.close()
    with MatchStore(db, create=False) as store:
        assert store.analysis(match) is None
        store.save_analysis(match, {"players": []}, ply=0)
        assert store.analysis(match) == {"players": []}


STATISTICS = """\
Player                                   Ann                     Bob                    \n
Luck statistics

Luck rate mEMG (MWC)                         +10.3   ( +0.604%)      -74.5   ( -1.899%) \n
Luck rating                              None                    Go to bed              \n
Overall statistics

Error rate mEMG (MWC)                        -10.1   ( -0.254%)      -12.6   ( -0.126%) \n
Overall rating                           World class             Casual player          \n
"""


def test_gnubgs_statistics_are_read_per_column() -> None:
    figures = parse_statistics(STATISTICS)
    assert figures["error_rate"] == (10.1, 12.6)
    assert figures["rating"] == ("World class", "Casual player")
    assert figures["luck"] == (10.3, -74.5)
    assert figures["luck_rating"] == ("None", "Go to bed")
    with pytest.raises(AnalysisError, match="no match statistics"):
        parse_statistics("No game in progress.")


def test_an_analysis_reads_back_from_its_json(analysed: dict[str, Any]) -> None:
    again = MatchAnalysis.from_json(analysed)
    assert again.to_json() == analysed
    with pytest.raises(AnalysisError):
        MatchAnalysis.from_json({"players": [{"name": "Ann"}]})


#: A Galaxy money session (written "16 point match"): a missed double, a bad checker play.
MONEY = SHARED_DATA / "matches" / "bglab" / "lasse" / "match10315962.txt"


@needs_gnubg
@pytest.mark.oracle
def test_a_money_session_is_analysed_as_money_with_gnubgs_figures(tmp_path: Path) -> None:
    record = read_mat_file(MONEY).record
    assert record.length == 0
    # gnubg's own import of the file sees a 16-point match; given the session as money (the
    # .mat bgboard writes), its statistics are what bgboard reports.
    written = tmp_path / "money.mat"
    written.write_text(write_mat(record), encoding="utf-8")
    status, out = run(["analyse", str(MONEY), "--json"])
    assert status == 0
    players = json.loads(out)["players"]
    statistics, annotated = gnubg_says(written, tmp_path)
    rows = statistics_rows(statistics)
    rate = next(cells for label, cells in rows.items() if label.startswith("Overall: Error rate mEMG"))
    plays, cube = annotated_decisions(annotated)
    for side, player in enumerate(players):
        assert -float(rate[side * 2]) == player["error_rate"]
        assert rows["Overall: Overall rating"][side] == player["rating"]
    errors = [(p["name"], e) for p in players for e in p["errors"]]
    assert [(name, e["play"], e["label"]) for name, e in errors] == [
        ("easy058962", "no double", "very bad"),
        ("lasse", "10/9(2) 6/5(2)", "bad"),
    ]
    name, missed = errors[0]
    assert any(w == name and k == "no double" and abs(loss - missed["equity_lost"]) <= 0.0015 for w, k, loss in cube)
    name, play = errors[1]
    assert (name, play["play"], play["best"], play["equity_lost"]) in plays


class SaysOnly:
    """A stand-in for the gnubg process that answers every analysis with ``text``."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.commands: list[str] = []

    def run(self, commands: list[str], timeout: float | None = None) -> str:
        self.commands = commands
        return self.text


def test_a_match_gnubg_reads_only_in_part_is_not_analysed() -> None:
    record = read_mat_file(MATCH).record
    gnubg = SaysOnly('WARNING: Invalid move: " 24/20 24/23" encountered\n' + STATISTICS)
    with pytest.raises(AnalysisError, match=r"did not read the whole match: .*24/20 24/23"):
        analyse_record(record, gnubg, ply=2)
    assert "set analysis chequerplay evaluation plies 2" in gnubg.commands
    assert "set analysis cubedecision evaluation plies 2" in gnubg.commands
    with pytest.raises(AnalysisError, match="did not analyse the match"):
        analyse_record(record, SaysOnly("No game in progress.\n"))
    with pytest.raises(AnalysisError, match="did not list the marked plays"):
        analyse_record(record, SaysOnly(STATISTICS))
    with pytest.raises(ValueError, match="0 to 4 plies"):
        analyse_record(record, SaysOnly(STATISTICS), ply=7)


@needs_gnubg
def test_the_match_browser_shows_the_analysis_each_error_on_its_move(tmp_path: Path, analysed: dict[str, Any]) -> None:
    import httpx

    from bgboard.web.server import Bind, WebServer, history_app

    db, match = stored_corpus_match(tmp_path)
    with (
        WebServer(history_app(db), Bind("127.0.0.1", 0)) as server,
        httpx.Client(base_url=f"http://127.0.0.1:{server.port}") as client,
    ):
        assert client.get(f"/api/matches/{match}").json()["analysis"] is None
        with MatchStore(db) as store:
            store.save_analysis(match, analysed, ply=0)
        body = client.get(f"/api/matches/{match}").json()
    # The decisions go with their steps, not twice.
    assert body["analysis"] == {k: v for k, v in analysed.items() if k != "decisions"}
    decided = [s for s in body["steps"] if s["kind"] in ("move", "double", "take", "drop")]
    assert [s["decision"] for s in decided] == analysed["decisions"]
    for step in decided:
        kind = {"drop": "pass"}.get(step["kind"], step["kind"])
        assert (step["decision"]["kind"], step["decision"]["player"] + 1) == (kind, step["player"])
    assert all(s["decision"] is None for s in body["steps"] if s not in decided)
    marked = [s for s in body["steps"] if s["error"] is not None]
    errors = [(p, e) for p in range(2) for e in analysed["players"][p]["errors"]]
    # Every error but the missed doubles was made with a stored action, and is shown on it.
    assert len(marked) == len([e for _, e in errors if e["play"] != "no double"])
    kinds = {"double": "double", "take": "take", "pass": "drop"}
    for step in marked:
        error = step["error"]
        player, number = map(int, error["ref"].split("-"))
        assert analysed["players"][player]["errors"][number] == {k: v for k, v in error.items() if k != "ref"}
        assert step["player"] == player + 1 and step["game"] == error["game"]
        assert step["kind"] == ("move" if error["dice"] else kinds[error["play"]])
