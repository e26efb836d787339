# SPDX-License-Identifier: MIT
"""Simulated players for the match store's tests, and the writer the crash test kills.

:func:`next_action` picks a random legal action for any state: opening rolls (equal ones too),
rolls, every form of move (the resulting position as a camera reads it, play text, a
:class:`Play`), doubles, takes, drops, beavers in money play, and now and then a resignation.

Run as a script, it is the crash test's child: ``python store_players.py DB SEED``. It opens the
store, resumes the last unfinished match (or starts one), prints ``match ID LIVE GNUBGID``,
then records actions for ever, printing ``ID SEQ`` for each one only after
:meth:`MatchStore.record` has returned, and ``over ID`` when a match ends (the next one starts
at once).
"""

from __future__ import annotations

import random
import sys

from bgboard.store import MatchStore
from engine.dice import Dice
from engine.match import (
    AcceptResign,
    Action,
    Beaver,
    Double,
    Drop,
    MatchOptions,
    MatchState,
    Move,
    OpeningRoll,
    Phase,
    RejectResign,
    Resign,
    Roll,
    Take,
)

#: The crash test's match: long enough for many kills, short enough to finish a few times.
CRASH_LENGTH = 11


def _die(rng: random.Random) -> int:
    return rng.randint(1, 6)


def next_action(state: MatchState, rng: random.Random, *, cube_rate: float = 0.08, resign_rate: float = 0.01) -> Action:
    """A random action the rules allow in ``state`` (the match must not be over)."""
    phase = state.phase
    if phase in (Phase.OPENING, Phase.GAME_OVER):
        return OpeningRoll(_die(rng), _die(rng))
    if phase is Phase.ROLL:
        if state.can_double() and rng.random() < cube_rate:
            return Double()
        if rng.random() < resign_rate:
            return Resign(rng.randint(1, 3))
        return Roll(Dice(_die(rng), _die(rng)), by=state.on_roll if rng.random() < 0.5 else None)
    if phase is Phase.DOUBLED:
        if state.can_beaver() and rng.random() < 0.3:
            return Beaver()
        return Take() if rng.random() < 0.7 else Drop()
    if phase is Phase.RESIGNED:
        return AcceptResign() if rng.random() < 0.5 else RejectResign()
    if phase is Phase.MOVE:
        legal = state.legal_plays()
        results = sorted(legal.results.items(), key=lambda item: item[0].position_id())
        if not results:
            return Move(state.position if rng.random() < 0.5 else "")
        after, play = rng.choice(results)
        form = rng.random()
        if form < 0.5:
            return Move(after)
        return Move(str(play) if form < 0.8 else play, by=state.on_roll)
    raise ValueError(f"no action after the match is over: {phase}")


def _writer(path: str, seed: int) -> None:
    rng = random.Random(seed)
    store = MatchStore(path)
    last = store.last_match(unfinished=True)
    if last is None:
        match = store.start_match(("Ann", "Bob"), CRASH_LENGTH, MatchOptions(), {"Event": "crash test"})
    else:
        match = last.id
    live = last.actions if last is not None else 0
    state = store.state(match)
    print(f"match {match} {live} {state.gnubg_id()}", flush=True)
    while True:
        if state.phase is Phase.MATCH_OVER:
            print(f"over {match}", flush=True)
            match = store.start_match(("Ann", "Bob"), CRASH_LENGTH, MatchOptions(), {"Event": "crash test"})
            state = store.state(match)
            print(f"match {match} 0 {state.gnubg_id()}", flush=True)
        stored = store.record(match, next_action(state, rng, resign_rate=0.0), source="camera", confidence=0.9)
        # Reported only now: record() has returned, so the action is committed.
        print(f"{stored.id} {stored.seq}", flush=True)
        state = store.state(match)


if __name__ == "__main__":
    _writer(sys.argv[1], int(sys.argv[2]))
