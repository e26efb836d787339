# SPDX-License-Identifier: MIT
"""What we write, the real GNU Backgammon program reads back as the same match.

Real corpus files are read, written again with :func:`~engine.matfile.write_mat` and
:func:`~engine.sgf.write_sgf`, and given to one gnubg process (``gnubg -t -q -r -p``), which
imports each with ``import mat`` / ``load match`` and dumps its match with its own Python API.
gnubg must print no warning, and its games must have our scores, plays (compared as the
positions they lead to), cube actions and results.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engine.match import Double, Drop, GameEnd, MatchState, Move, Resign, Roll, Take
from engine.matfile import read_mat_file, write_mat
from engine.position import Position
from engine.record import MatchRecord
from engine.sgf import write_sgf
from tests.conftest import SHARED_DATA

pytestmark = pytest.mark.oracle

GNUBG = shutil.which("gnubg") or "/usr/games/gnubg"
CORPUS = SHARED_DATA / "matches" / "bglab"

#: A varied sample: money sessions (with drops, with a Jacoby gammon), Crawford matches from
#: both sites, Studio files with bar/off, (2) and Cannot Move, drops, gammons and backgammons,
#: Galaxy resignations and forfeits, 1-, 9-, 11- and 17-point matches.
SAMPLE = (
    "lasse/match10315962.txt",  # money, drop
    "lasse/match1668002.txt",  # money, drops
    "lasse/match8239468.txt",  # money, an undoubled gammon scored 1 (Jacoby)
    "lasse/match7940391.txt",  # money, a doubled gammon
    "Llabba/match1281172.txt",  # Crawford match (Galaxy), gammon and backgammon
    "Llabba/match1301058.txt",  # Crawford game, drop, gammon, resignation (Galaxy)
    "Llabba/match2906190.txt",  # Crawford match (Galaxy), drops
    "Llabba/Bulgakov - Llabba 13pt Backgammon Studio 2023_09_12 13_54_06.txt",  # Studio, Crawford, Cannot Move
    "Llabba/GitteD - Llabba 13pt Backgammon Studio 2023_01_08 15_39_15.txt",  # Studio, Crawford game
    "Llabba/BoardLord - Llabba 7pt Backgammon Studio 2023_08_09 18_11_07.txt",  # Studio, bar/off, (2)
    "Llabba/CroatianFish - Llabba 13pt Backgammon Studio 2023_07_23 18_59_01.txt",  # Studio, drops, gammons
    "Llabba/DasWerl - Llabba 13pt Backgammon Studio 2023_01_04 13_11_05.txt",  # Studio, backgammon
    "lasse/Magic - Lasse 5pt Backgammon Studio 2024_04_22 19_06_30.txt",  # Studio, Crawford, six drops
    "Llabba/match1280660.txt",  # Galaxy, drop and gammon
    "Llabba/match1322784.txt",  # Galaxy, drop and gammon
    "lasse/match10030560.txt",  # Galaxy, resignations after "Losses"
    "lasse/match11926267.txt",  # Galaxy, a forfeit out of turn
    "lasse/match1495872.txt",  # 1-point match, gammon
    "Llabba/GrigoryRevaz - Llabba 9pt Backgammon Studio 2023_09_14 09_36_55.txt",  # 9 points
    "Llabba/Llabba - petruhl 11pt Backgammon Studio 2023_03_03 18_42_33.txt",  # 11 points
    "lasse/match7262743.txt",  # 17 points
)

_DUMP = """
import json, sys
import gnubg
gnubg.command("set confirm new off")
for name in open(sys.argv[1] if len(sys.argv) > 1 else {listing!r}).read().split("\\n"):
    if not name:
        continue
    print("@@BEGIN " + name)
    sys.stdout.flush()
    gnubg.command(("load match" if name.endswith(".sgf") else "import mat") + ' "' + name + '"')
    sys.stdout.flush()
    try:
        print("@@JSON " + json.dumps(gnubg.match(0, 0, 0, 0)))
    except Exception as exc:
        print("@@JSON " + json.dumps({{"error": str(exc)}}))
    sys.stdout.flush()
"""


def gnubg_reads(paths: list[Path], work: Path) -> dict[str, tuple[str, dict[str, Any]]]:
    """One gnubg process imports every file; for each, what it printed and its match."""
    listing = work / "files.txt"
    listing.write_text("\n".join(str(p) for p in paths) + "\n", encoding="utf-8")
    script = work / "dump.py"
    script.write_text(_DUMP.format(listing=str(listing)), encoding="utf-8")
    done = subprocess.run(
        [GNUBG, "-t", "-q", "-r", "-p", str(script)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=300,
        check=False,
    )
    out: dict[str, tuple[str, dict[str, Any]]] = {}
    for chunk in done.stdout.split("@@BEGIN ")[1:]:
        name, _, rest = chunk.partition("\n")
        said, _, dumped = rest.partition("@@JSON ")
        out[name] = (said, json.loads(dumped.splitlines()[0]) if dumped else {"error": "no match"})
    return out


def warnings_in(said: str) -> list[str]:
    """The lines gnubg prints about a file other than its board display."""
    board = ("GNU Backgammon", "Position ID", "Match ID", "+1", "+2", "|", "^|", "v|")
    return [line for line in said.splitlines() if line.strip() and not line.strip().startswith(board)]


def our_events(record: MatchRecord, index: int) -> Iterator[tuple[Any, ...]]:
    """A game's actions as gnubg's match dump lists them: kind, player, dice or points, and
    for a play the position after it (from the mover's side)."""
    state = record.initial_state(index)
    actions = record.games[index].actions
    for k, action in enumerate(actions):
        before: MatchState = state
        state = state.apply(action)
        if isinstance(action, Move):
            assert before.dice is not None
            dice = tuple(sorted((before.dice.first, before.dice.second)))
            yield ("move", before.on_roll, dice, (before.position, state.position.swap()))
        elif isinstance(action, Roll) and not (k + 1 < len(actions) and isinstance(actions[k + 1], Move)):
            yield ("set", before.on_roll, tuple(sorted((action.dice.first, action.dice.second))), None)
        elif isinstance(action, Double):
            yield ("double", before.on_roll, None, None)
        elif isinstance(action, Take | Drop):
            yield ("take" if isinstance(action, Take) else "drop", before.turn, None, None)
        elif isinstance(action, Resign):
            yield ("resign", before.on_roll, action.points, None)


def after_steps(position: Position, steps: list[list[int]]) -> Position:
    """Play gnubg's ``(from, to)`` steps (25 bar, 0 off) on ``position``, hitting blots."""
    mover, opponent = list(position[0]), list(position[1])
    for source, dest in steps:
        mover[source - 1] -= 1
        if dest:
            if opponent[24 - dest] == 1:
                opponent[24 - dest] = 0
                opponent[24] += 1
            mover[dest - 1] += 1
    return Position(mover, opponent)


def compare(record: MatchRecord, dumped: dict[str, Any]) -> list[str]:
    """How gnubg's match differs from ours (empty when they agree)."""
    if "error" in dumped:
        return [dumped["error"]]
    games = dumped["games"]
    diffs: list[str] = []
    if len(games) != len(record.games):
        diffs.append(f"{len(games)} games, we have {len(record.games)}")
    player = {"X": 0, "O": 1}
    for index, (ours, theirs) in enumerate(zip(record.games, games, strict=False)):
        where = f"game {index + 1}"
        info = theirs["info"]
        if (info["score-X"], info["score-O"]) != ours.score:
            diffs.append(f"{where}: score {info['score-X']}-{info['score-O']}, we have {ours.score}")
        if ours.result is not None:
            result = ours.result
            got = (player.get(info.get("winner", ""), -1), info.get("points-won"), info.get("resigned"))
            want = (result.winner, result.points, result.end is GameEnd.RESIGNED)
            if got != want:
                diffs.append(f"{where}: result {got}, we have {want}")
        events = [e for e in theirs["game"] if e["action"] != "set" or "dice" in e]
        mine = list(our_events(record, index))
        forfeit = ours.result is not None and ours.result.end is GameEnd.RESIGNED
        forfeit = forfeit and not any(m[0] == "resign" for m in mine)
        if forfeit and events and events[-1]["action"] == "resign":
            # A forfeit (a player left out of turn): our record has only the result, gnubg
            # makes it a resignation by the loser.
            events = events[:-1]
        if len(events) != len(mine):
            diffs.append(f"{where}: {len(events)} actions, we have {len(mine)}")
        for k, (event, (kind, who, extra, positions)) in enumerate(zip(events, mine, strict=False)):
            got_kind = event["action"]
            if got_kind != kind or player[event["player"]] != who:
                diffs.append(f"{where}, action {k + 1}: {got_kind} by {event['player']}, we have {kind} by {who}")
                break
            if kind in ("move", "set") and tuple(sorted(event["dice"])) != extra:
                diffs.append(f"{where}, action {k + 1}: dice {event['dice']}, we have {extra}")
            if kind == "resign" and event.get("points") != extra:
                diffs.append(f"{where}, action {k + 1}: resigns {event.get('points')}, we have {extra}")
            if kind == "move":
                before, after = positions
                if after_steps(before, event["move"]) != after:
                    diffs.append(f"{where}, action {k + 1}: {event['move']} leads elsewhere than our play")
    return diffs


@pytest.fixture(scope="module")
def round_trip(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    assert Path(GNUBG).exists(), "the gnubg program is not installed: scripts/setup.sh --test installs it"
    work = tmp_path_factory.mktemp("roundtrip")
    records: dict[str, MatchRecord] = {}
    paths: list[Path] = []
    for n, name in enumerate(SAMPLE):
        mat = read_mat_file(CORPUS / name)
        assert not list(mat.all_problems()), name
        records[name] = mat.record
        mat_path = work / f"f{n}.mat"
        mat_path.write_text(write_mat(mat.record), encoding="utf-8")
        sgf_path = work / f"f{n}.sgf"
        sgf_path.write_text(write_sgf(mat.record), encoding="utf-8")
        paths += [mat_path, sgf_path]
    read = gnubg_reads(paths, work)
    return {"records": records, "read": read, "work": work}


@pytest.mark.parametrize("suffix", [".mat", ".sgf"])
@pytest.mark.parametrize("n", range(len(SAMPLE)))
def test_gnubg_reads_what_we_write_as_the_same_match(round_trip: dict[str, Any], n: int, suffix: str) -> None:
    name = SAMPLE[n]
    path = str(round_trip["work"] / f"f{n}{suffix}")
    said, dumped = round_trip["read"][path]
    assert warnings_in(said) == [], name
    assert compare(round_trip["records"][name], dumped) == [], name


def test_gnubg_complains_about_a_broken_file(round_trip: dict[str, Any], tmp_path: Path) -> None:
    # The harness must be able to see a warning: spoil one play and gnubg says so.
    record = round_trip["records"][SAMPLE[4]]
    text = write_mat(record)
    lines = text.splitlines()
    row = next(k for k, line in enumerate(lines) if line.startswith("  3) "))
    lines[row] = lines[row][:5] + "66: 24/12 24/12" + lines[row][20:]
    broken = tmp_path / "broken.mat"
    broken.write_text("\n".join(lines) + "\n", encoding="utf-8")
    said, dumped = gnubg_reads([broken], tmp_path)[str(broken)]
    assert warnings_in(said) == ['WARNING: Invalid move: " 24/12 24/12" encountered']
    assert compare(record, dumped)
