# SPDX-License-Identifier: MIT
"""The judge of a physical move: compare the board before and after with the roll.

The camera sees positions, never notation, so the judge works on positions only: a move is
legal exactly when the position after it is one of the legal results for the position before
and the roll. Anything else is on its way to a legal result (``partial``), against the rules
(``illegal``, with reasons in players' words, the points to light and the nearest legal
results), or not a backgammon position at all (``unreadable``).

>>> from engine.position import Position
>>> from engine.dice import Dice
>>> after = Position.from_points({6: 5, 8: 3, 13: 5, 24: 1, 18: 1}, {6: 5, 8: 3, 13: 5, 24: 2})
>>> j = judge(Position.STARTING, Dice(6, 3), after)
>>> j.verdict, str(j.play), j.reasons
('partial', '24/18', ('the 3 still to play',))
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

from engine.dice import Dice
from engine.movegen import LegalPlays, legal_plays
from engine.play import Play, Step
from engine.position import BAR, CHECKERS, OFF, Half, Position

Verdict = Literal["legal", "partial", "illegal", "unreadable"]

#: How many nearest legal results an illegal verdict offers.
NEAREST: Final = 3

Board = tuple[Half, Half]


@dataclass(frozen=True, slots=True)
class RawBoard:
    """Checker counts as read from a board, not yet known to be a position.

    Both halves are 25 counts in their own side's numbering (index 24 = bar), as in
    :class:`~engine.position.Position`, the side on roll first. ``off`` gives the borne-off
    counts when they were seen (a camera sees the trays), or ``None`` when they are implicit
    (as in a Position ID).
    """

    mover: tuple[int, ...]
    opponent: tuple[int, ...]
    off: tuple[int, int] | None = None

    def count_problems(self) -> list[str]:
        """Why these counts cannot be a backgammon position (empty when they can)."""
        out: list[str] = []
        for index, (name, half) in enumerate((("your", self.mover), ("your opponent's", self.opponent))):
            if len(half) != 25 or any(n < 0 for n in half):
                out.append(f"{name} checker counts are malformed")
                continue
            on_board = sum(half)
            total = on_board + (self.off[index] if self.off is not None else 0)
            if on_board > CHECKERS or (self.off is not None and total != CHECKERS):
                out.append(f"{name} checkers number {total}, not {CHECKERS}")
        return out

    def overlaps(self) -> list[int]:
        """Points (mover's numbering) where both sides have checkers."""
        return [i + 1 for i in range(24) if self.mover[i] and self.opponent[23 - i]]


@dataclass(frozen=True, slots=True)
class Judgement:
    """The judge's answer.

    :ivar verdict: ``legal``, ``partial``, ``illegal`` or ``unreadable``.
    :ivar play: the canonical play when legal (the empty play when there is no legal move);
        for a partial move, the part played so far.
    :ivar reasons: for an illegal or unreadable board, why, in players' words; for a partial
        move, what is left to play.
    :ivar marks: points to light, in the mover's numbering (25 = bar, 0 = off), high to low.
    :ivar nearest: the legal plays closest to the board as it stands (illegal only).
    :ivar nearest_positions: the positions those plays lead to.
    """

    verdict: Verdict
    play: Play | None = None
    reasons: tuple[str, ...] = ()
    marks: tuple[int, ...] = ()
    nearest: tuple[Play, ...] = ()
    nearest_positions: tuple[Position, ...] = ()

    def to_json(self) -> dict[str, object]:
        """A JSON-ready dict with the keys of ``bgboard judge --json``."""
        return {
            "verdict": self.verdict,
            "play": None if self.play is None else str(self.play),
            "reasons": list(self.reasons),
            "marks": list(self.marks),
            "nearest": [str(p) for p in self.nearest],
            "nearest_positions": [p.position_id() for p in self.nearest_positions],
        }


def judge(before: Position, dice: Dice, after: Position | RawBoard) -> Judgement:
    """Judge the board ``after`` against ``before`` (the side on roll to move) and ``dice``.

    :param before: the position before the move, from the side on roll.
    :param dice: the roll.
    :param after: the board now, from the same side (not swapped): a :class:`Position`, or a
        :class:`RawBoard` when it may not even be one.
    """
    legal = legal_plays(before, dice)
    if isinstance(after, RawBoard):
        problems = after.count_problems()
        if problems:
            return Judgement("unreadable", reasons=tuple(problems))
        board: Board = (tuple(after.mover), tuple(after.opponent))
        if after.overlaps():
            return _illegal(before, dice, legal, board)
        after = Position(*board)
    play = legal.play_for(after)
    if play is not None:
        return Judgement("legal", play=play)
    if not legal and after == before:
        return Judgement("legal", play=Play(), reasons=(_no_play_words(before, dice),))
    partial = _partial(before, dice, legal, after)
    if partial is not None:
        return partial
    return _illegal(before, dice, legal, after)


# -- partial moves -------------------------------------------------------------------------


def single_steps(board: Board, die: int) -> list[Board]:
    """Every board that one checker of the side on roll moving ``die`` pips reaches under the rules.

    :param board: ``(mover, opponent)`` halves, as in a :class:`~engine.position.Position`.
    """
    mover, opponent = board
    out: list[Board] = []
    sources = (24,) if mover[24] else [i for i in range(24) if mover[i]]
    all_home = not any(mover[6:])
    for s in sources:
        t = s - die
        o = opponent
        if t >= 0:
            there = opponent[23 - t]
            if there >= 2:
                continue
            if there == 1:
                ol = list(opponent)
                ol[23 - t] = 0
                ol[24] += 1
                o = tuple(ol)
        elif not all_home or (t < -1 and any(mover[s + 1 : 6])):
            continue
        m = list(mover)
        m[s] -= 1
        if t >= 0:
            m[t] += 1
        out.append((tuple(m), o))
    return out


def partial_positions(before: Position, dice: Dice, legal: LegalPlays | None = None) -> dict[Position, tuple[int, ...]]:
    """Positions part-way through a legal play, each with the dice still to play.

    A player moving checkers one at a time passes through these; the dice are tried in every
    order, and a state counts only if a legal result can still be reached from it.
    """
    legal = legal if legal is not None else legal_plays(before, dice)
    goals = legal.positions()
    used = legal.dice_used
    if used < 2:
        return {}
    orders = {dice.moves[:used]} if dice.is_double else {(dice.first, dice.second), (dice.second, dice.first)}
    out: dict[Position, tuple[int, ...]] = {}
    for order in orders:
        layer: dict[Board, bool] = {before: True}
        layers: list[dict[Board, list[Board]]] = []
        for k, die in enumerate(order):
            children: dict[Board, list[Board]] = {}
            for board in layer:
                children[board] = single_steps(board, die)
            layers.append(children)
            layer = {child: True for kids in children.values() for child in kids}
            if k == len(order) - 1:
                break
        # Walk back from the goals: a board is a prefix if one of its children is.
        good: set[Board] = {b for b in layer if b in goals}
        for k in range(len(layers) - 1, 0, -1):
            level = {board for board, kids in layers[k].items() if any(kid in good for kid in kids)}
            left = order[k:]
            for board in level:
                position = tuple.__new__(Position, board)
                if position not in out or len(left) < len(out[position]):
                    out[position] = left
            good = level
    return out


def remaining_dice(
    before: Position, dice: Dice, after: Position, legal: LegalPlays | None = None
) -> tuple[int, ...] | None:
    """The dice still to play when ``after`` is part-way through a legal play, else ``None``.

    Cheaper than :func:`partial_positions` for one board: it walks forward from ``before``
    only until ``after`` shows up, then checks that a legal result is still reachable.
    """
    legal = legal if legal is not None else legal_plays(before, dice)
    used = legal.dice_used
    if used < 2:
        return None
    goals = legal.positions()
    orders = [dice.moves[:used]] if dice.is_double else [(dice.first, dice.second), (dice.second, dice.first)]
    deepest = used - 1
    if _off(after[0]) == _off(before[0]):
        # Without bearing off, the pips moved say how many dice were used: walk only that far.
        moved = _pips(before[0]) - _pips(after[0])
        if dice.is_double:
            deepest = moved // dice.first
            if moved % dice.first or not 1 <= deepest < used:
                return None
        elif moved not in dice.moves:
            return None
    for order in orders:
        layer: set[Board] = {before}
        for k in range(1, deepest + 1):
            layer = {nxt for board in layer for nxt in single_steps(board, order[k - 1])}
            if after in layer:
                rest: set[Board] = {after}
                for die in order[k:]:
                    rest = {nxt for board in rest for nxt in single_steps(board, die)}
                if any(board in goals for board in rest):
                    return order[k:]
                break
    return None


def _partial(before: Position, dice: Dice, legal: LegalPlays, after: Position) -> Judgement | None:
    if after == before and legal:
        return Judgement("partial", play=Play(), reasons=(f"{_dice_words(dice.moves[: legal.dice_used])} to play",))
    left = remaining_dice(before, dice, after, legal)
    if left is None:
        return None
    return Judgement(
        "partial",
        play=_as_play(before, after),
        reasons=(f"{_dice_words(left)} still to play",),
        marks=_changed_points(before, after),
    )


def _dice_words(numbers: Sequence[int]) -> str:
    if len(numbers) > 1 and len(set(numbers)) == 1:
        return f"{len(numbers)} more {numbers[0]}s"
    return " and ".join(f"the {n}" for n in numbers)


# -- reading what happened -----------------------------------------------------------------


def _off(half: Sequence[int]) -> int:
    return CHECKERS - sum(half)


def _pips(half: Sequence[int]) -> int:
    return sum(n * (i + 1) for i, n in enumerate(half))


def _flows(before: Board, after: Board) -> tuple[list[int], list[int]]:
    """The mover's points checkers left and arrived at (0 = off), each high to low."""
    gone: list[int] = []
    came: list[int] = []
    for i in range(25):
        d = after[0][i] - before[0][i]
        if d < 0:
            gone += [i + 1] * -d
        elif d > 0:
            came += [i + 1] * d
    came += [OFF] * max(_off(after[0]) - _off(before[0]), 0)
    gone.sort(reverse=True)
    came.sort(reverse=True)
    return gone, came


def _hits(before: Board, after: Board) -> set[int]:
    """Mover's points where an opponent's blot was taken away."""
    o1, o2 = before[1], after[1]
    return {24 - j for j in range(24) if o2[j] < o1[j]}


def _as_play(before: Board, after: Board) -> Play:
    """How the mover's checkers seem to have moved, pairing sources and landings high to low."""
    gone, came = _flows(before, after)
    hits = _hits(before, after)
    return Play(Step(s, t, t in hits) for s, t in zip(gone, came, strict=False) if s > t)


def _changed_points(before: Board, after: Board) -> tuple[int, ...]:
    """Points whose checkers changed, in the mover's numbering, high to low (25 bar, 0 off)."""
    points = {i + 1 for i in range(25) if before[0][i] != after[0][i]}
    points |= {24 - j for j in range(24) if before[1][j] != after[1][j]}
    if _off(before[0]) != _off(after[0]):
        points.add(OFF)
    return tuple(sorted(points, reverse=True))


def _no_play_words(before: Position, dice: Dice) -> str:
    if before[0][24]:
        return f"no legal play: you cannot enter from the bar with {dice.spoken()}"
    return f"no legal play with {dice.spoken()}"


def _distance(a: Board, b: Board) -> int:
    """How many checkers would have to be picked up to turn one board into the other."""
    total = 0
    for side in (0, 1):
        total += sum(abs(x - y) for x, y in zip(a[side], b[side], strict=True)) + abs(_off(a[side]) - _off(b[side]))
    return total // 2


# -- illegal moves -------------------------------------------------------------------------


def _illegal(before: Position, dice: Dice, legal: LegalPlays, after: Board) -> Judgement:
    results = legal.position_list()
    # Ties on distance are broken by the layout itself, so the answer is deterministic.
    nearest = sorted(results, key=lambda p: (_distance(p, after), p))[:NEAREST]
    plays = [legal.play_for(p) or Play() for p in nearest]
    marks = set(_changed_points(before, after))
    reasons = _reasons(before, dice, legal, results, after, marks, str(plays[0]) if plays else "")
    if not legal:
        reasons.insert(0, _no_play_words(before, dice) + "; put the checkers back")
    return Judgement(
        "illegal",
        reasons=tuple(dict.fromkeys(reasons)),
        marks=tuple(sorted(marks, reverse=True)),
        nearest=tuple(plays) if plays else (Play(),),
        nearest_positions=tuple(nearest) if nearest else (before,),
    )


def _reasons(
    before: Position,
    dice: Dice,
    legal: LegalPlays,
    results: list[Position],
    after: Board,
    marks: set[int],
    example: str,
) -> list[str]:
    m0, o0 = before
    m1, o1 = after
    # The opponent's checkers: the only change allowed is a blot going to the bar.
    lost = [j for j in range(24) if o1[j] < o0[j]]
    hit_ok = all(o0[j] == 1 and o1[j] == 0 for j in lost)
    moved_opponent = any(o1[j] > o0[j] for j in range(24)) or not hit_ok
    if _off(o1) > _off(o0) or (o1[24] < o0[24] + len(lost) and not moved_opponent):
        marks.update(24 - j for j in lost)
        return ["a checker is missing: a hit checker goes on the bar" if lost else "a checker is missing"]
    if moved_opponent or o1[24] != o0[24] + len(lost):
        return ["your opponent's checkers were moved"]

    # Landing on the opponent's point (only a raw board can show both sides on one point).
    for p in sorted((i + 1 for i in range(24) if m1[i] and o1[23 - i]), reverse=True):
        marks.add(p)
        if o0[24 - p] >= 2:
            return [f"point {p} is blocked"]
        return [f"the blot on {p} is hit: put it on the bar"]

    gone, came = _flows(before, after)
    if m1[24] > m0[24] or (gone and came and max(came) >= max(gone)):
        return ["checkers only move forward, towards your home board"]
    borne_off = _off(m1) - _off(m0)
    if borne_off > max((_off(p[0]) - _off(m0) for p in results), default=0):
        if borne_off > len(dice.moves) or not any(s <= 6 for s in gone):
            return ["a checker is missing"]
        if any(m1[6:]) or any(s > 6 for s in gone):
            marks.update(i + 1 for i in range(6, 25) if m0[i])
            return ["you can't bear off with a checker outside your home board"]
    if m0[24] and legal:
        least_left = min(p[0][24] for p in results)
        if m1[24] > least_left and any(s != BAR for s in gone):
            marks.add(BAR)
            return ["you must enter from the bar first"]

    blocked = _blocked_route(before, dice, gone, came)
    if blocked:
        marks.update(blocked[1])
        return [blocked[0]]
    if not legal:
        return []
    return _dice_reasons(before, dice, legal, results, after, gone, came, example)


def _blocked_route(before: Board, dice: Dice, gone: list[int], came: list[int]) -> tuple[str, list[int]] | None:
    """One checker moved the whole roll, but every route crosses a point the opponent holds."""
    if len(gone) != 1 or len(came) != 1 or came[0] == OFF:
        return None
    source, dest = gone[0], came[0]
    opponent = before[1]
    steps = dice.moves
    if source - dest != sum(steps):
        return None
    if dice.is_double:
        routes = [[source - dice.first * k for k in range(1, len(steps))]]
    else:
        routes = [[source - dice.first], [source - dice.second]]
    held = [[p for p in route if 1 <= p <= 24 and opponent[24 - p] >= 2] for route in routes]
    if not all(held):
        return None
    points = sorted({p for route in held for p in route}, reverse=True)
    words = " and ".join(str(p) for p in points)
    verb = "is" if len(points) == 1 else "are"
    return f"{source}/{dest} is not possible: point {words} {verb} blocked", points


def _dice_reasons(
    before: Position,
    dice: Dice,
    legal: LegalPlays,
    results: list[Position],
    after: Board,
    gone: list[int],
    came: list[int],
    example: str,
) -> list[str]:
    """The roll was not used the way the rules require; ``example`` is the nearest legal play."""
    m0 = before[0]
    moved = _pips(m0) - _pips(after[0])
    drops = {_pips(m0) - _pips(p[0]) for p in results}
    bearing_off = not any(m0[6:])
    if legal.dice_used == 1 and not dice.is_double:
        only = legal.play_for(results[0]) or Play()
        die = only[0].source - only[0].dest if only[0].dest else None
        higher_playable = any(
            p[0].source - p[0].dest == dice.high or (p[0].dest == OFF and p[0].source <= dice.high) for p in legal
        )
        if higher_playable and moved == dice.low:
            return [f"you must play the {dice.high}: when only one die can be played, it must be the higher"]
        if die is not None and moved == dice.pips:
            return [f"only one die can be played here, e.g. {example}"]
    if moved in dice.moves and legal.dice_used >= 2 and moved not in drops:
        what = "both dice" if not dice.is_double else f"{legal.dice_used} {dice.first}s"
        return [f"{what} can be played, e.g. {example}"]
    if bearing_off or _off(after[0]) > _off(m0):
        reason = _bear_off_reason(before, dice, gone, came)
        if reason:
            return [reason]
    if moved not in drops and not bearing_off:
        return [f"{moved} pips were moved but the roll is {dice.spoken()}"]
    distances = sorted((s - t for s, t in zip(gone, came, strict=False) if t != OFF), reverse=True)
    if (
        len(gone) == len(came)
        and distances
        and len(distances) == len(gone)
        and sorted(distances) != sorted(dice.moves[: len(distances)])
    ):
        moves = " and ".join(str(d) for d in distances)
        return [f"the checkers moved {moves} pips, but the roll is {dice.spoken()}; e.g. {example}"]
    return [f"that is not a legal play for {dice.spoken()}; e.g. {example}"]


def _bear_off_reason(before: Position, dice: Dice, gone: list[int], came: list[int]) -> str | None:
    """A checker borne off with a number that cannot take it off."""
    m0 = before[0]
    highest = max((i + 1 for i in range(6) if m0[i]), default=0)
    off_from = [s for s, t in zip(gone, came, strict=False) if t == OFF]
    for source in off_from:
        if source in dice.moves:
            continue
        bigger = [d for d in dice.moves if d > source]
        if not bigger:
            return f"a {dice.high} can't bear off a checker from the {source}-point"
        if source < highest:
            return (
                f"the {min(bigger)} must move a checker from a higher point (your {highest}-point)"
                f" before it can bear off from the {source}-point"
            )
    return None
