# SPDX-License-Identifier: MIT
"""Match written play text to the legal play it stands for.

Notation leaves things out: one checker's moves may be joined (``24/13`` for 6-5), hits may be
unmarked (some match files never write ``*``), ``(2)`` repeats a move. What a written play
fixes is where the mover's checkers end up; the hits are then read from the marks and from the
points the text says a checker landed on, and where the text cannot tell (a joined move past
a blot), the route without a hit is taken.
"""

from __future__ import annotations

from collections.abc import Sequence

from engine.dice import Dice
from engine.errors import IllegalPlayError
from engine.movegen import legal_plays
from engine.play import Play, Step
from engine.position import BAR, OFF, Position


def hit_points(before: Position, after: Position) -> set[int]:
    """The mover's points where ``after`` has one opponent checker fewer than ``before``."""
    o1, o2 = before[1], after[1]
    return {24 - j for j in range(24) if o2[j] < o1[j]}


def resolve_play(position: Position, dice: Dice, steps: Sequence[Step]) -> tuple[Position, Play]:
    """The resulting position and canonical play that written ``steps`` stand for.

    :raises IllegalPlayError: no legal play for ``dice`` moves the checkers as written.
    """
    legal = legal_plays(position, dice)
    mover = list(position[0])
    for s in steps:
        if s.source == OFF or s.dest == BAR:
            raise IllegalPlayError(f"{s}: a checker cannot move from off or to the bar")
        mover[s.source - 1] -= 1
        if s.dest != OFF:
            mover[s.dest - 1] += 1
    written = Play(steps)
    if min(mover) < 0:
        empty = sorted({s.source for s in steps if mover[s.source - 1] < 0}, reverse=True)
        raise IllegalPlayError(f"{written}: no checker to move on {', '.join(map(str, empty))}")
    target = tuple(mover)
    candidates = [after for after in legal.positions() if after[0] == target]
    if not candidates:
        if not legal and not steps:
            return position, Play()
        raise IllegalPlayError(f"{written or 'no play'} is not a legal play for {dice.spoken()}")
    # A checker written as landing on a blot hit it, marked or not; a hit on a point the text
    # skips over (``13/5``) is known only from a mark.
    opponent = position[1]
    marked = {s.dest for s in steps if s.hit or (s.dest != OFF and opponent[24 - s.dest] == 1)}

    def preference(after: Position) -> tuple[int, int, str]:
        hits = hit_points(position, after)
        # Exactly the marked hits first, then as few unmarked hits as the play allows.
        return (0 if marked <= hits else 1, len(hits - marked), after.position_id())

    best = min(candidates, key=preference)
    return best, legal.results[best]
