# SPDX-License-Identifier: MIT
"""The real GNU Backgammon program reads our GNUbgIDs and XGIDs as we mean them.

Players paste the IDs that ``bgboard show`` prints into gnubg or eXtreme Gammon; here the gnubg
program from Debian (``gnubg -t``) is given them and its own board must show the same
Position ID and Match ID.
"""

from __future__ import annotations

import random
import re
import shutil
import subprocess

import pytest

from engine.dice import Dice
from engine.match import Double, MatchState, Move, OpeningRoll, Phase, Roll, Take

pytestmark = pytest.mark.oracle

GNUBG = shutil.which("gnubg") or "/usr/games/gnubg"


def _states(seed: int, count: int) -> list[MatchState]:
    """States met in random matches: some before rolling, most with the dice rolled."""
    rng = random.Random(seed)
    out: list[MatchState] = []
    while len(out) < count:
        length = rng.choice([0, 3, 5, 7, 11])
        state = MatchState.new_match(length) if length else MatchState.new_money_session()
        while state.phase is Phase.OPENING:
            state = state.apply(OpeningRoll(rng.randint(1, 6), rng.randint(1, 6)))
        while not state.is_over() and len(out) < count:
            if state.phase is Phase.ROLL:
                if state.can_double() and rng.random() < 0.05:
                    state = state.apply(Double()).apply(Take())
                    continue
                out.append(state)
                state = state.apply(Roll(Dice(rng.randint(1, 6), rng.randint(1, 6))))
            if state.phase is Phase.MOVE:
                if rng.random() < 0.3:
                    out.append(state)
                state = state.apply(Move(rng.choice(sorted(state.legal_plays().positions()) or [state.position])))
    return out


def _gnubg_reads(commands: list[str]) -> list[tuple[str, str]]:
    """Run gnubg on ``set ...`` commands; the Position ID and Match ID it shows after each."""
    script = ["set sound enable off"]
    for n, command in enumerate(commands):
        script += [command, "show board", f"end-of-case-{n}"]
    # gnubg writes boards to stdout and complaints to stderr; line buffering keeps them in
    # order in one stream, so each marker's complaint closes its case.
    done = subprocess.run(
        ["stdbuf", "-oL", "-eL", GNUBG, "-t", "-q", "-r"],
        input="\n".join(script) + "\n",
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=120,
        check=False,
    )
    text = done.stdout
    out = []
    for chunk in re.split(r"Unknown keyword `end-of-case-\d+'\.", text)[: len(commands)]:
        ids = re.findall(r"Position ID: (\S+)\s+Match ID\s+: (\S+)", chunk)
        assert ids, chunk[-500:]
        out.append(ids[-1])
    return out


def test_gnubg_reads_our_gnubgids_as_we_do() -> None:
    states = _states(1, 60)
    seen = _gnubg_reads([f"set gnubgid {s.gnubg_id()}" for s in states])
    assert [s.gnubg_id().split(":") for s in states] == [list(pair) for pair in seen]


def test_gnubg_reads_our_xgids_as_we_do() -> None:
    states = [s for s in _states(2, 60) if s.length]
    seen = _gnubg_reads([f"set xgid {s.xgid()}" for s in states])
    assert [s.gnubg_id().split(":") for s in states] == [list(pair) for pair in seen]
