# SPDX-License-Identifier: MIT
"""Pick the board that best explains a reading, among the few the rules allow.

With the position before a move and the dice known, the board can only be the position before
(nothing moved yet, or put back), a position part-way through a legal play, or a legal result.
Each of these is scored by how likely the reader's per-point probabilities make it; the board
exactly as read competes too, so that a confident reading of an illegal board is not bent into
a legal one. The winner counts only when it is clearly ahead of the runner-up; otherwise the
players are asked to check.

Positions here are seen from the player on roll (the engine's view); a reading is in player
1's absolute numbering, and ``seat`` (1 or 2) says where the player on roll sits.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Final, Literal

from engine.dice import Dice
from engine.errors import InvalidPositionError
from engine.judge import RawBoard, partial_positions
from engine.movegen import LegalPlays, legal_plays
from engine.play import Play
from engine.position import CHECKERS, Position
from vision.reading import BoardReading

Kind = Literal["before", "partial", "legal", "read"]

#: Log-likelihood lead (natural log) that makes the best explanation clear: about 20 to 1.
CLEAR: Final = math.log(20.0)
#: The log-odds bonus for the result of a play the players were just shown (teach mode's
#: hint): players often execute a shown play slightly wrong, so a doubtful reading near it is
#: most likely it. Modest, and below :data:`CLEAR` (see :func:`explain`'s ``prior``).
HINT_PRIOR: Final = math.log(4.0)
#: Prior odds (log) against the board being none of the boards the rules allow: a misread
#: point is more common than an illegal move, but a confident reading of one still wins.
READ_PRIOR: Final = math.log(100.0)
#: No count is ever ruled out completely: a reader can be confidently wrong.
FLOOR: Final = 1e-4
#: The reader gives no confidence for the bar; it is a short, plain strip and read well.
BAR_CONFIDENCE: Final = 0.95
#: Counts a point can take besides the reader's pick and runner-up (-15..15 less two).
_OTHER_COUNTS: Final = 29
#: Confidence assumed for a point the reading gives none for.
_DEFAULT_CONFIDENCE: Final = 0.9


@dataclass(frozen=True, slots=True)
class Candidate:
    """One board the reading may show.

    :ivar kind: ``before`` (nothing moved, or put back), ``partial`` (a legal play in
        progress), ``legal`` (a legal result), or ``read`` (the board exactly as read, when it is
        none of the others).
    :ivar position: the board from the player on roll, or ``None`` for a reading that is not a
        backgammon position (too many checkers).
    :ivar play: the legal play for a ``legal`` candidate (the empty play when none is possible).
    :ivar score: the log-likelihood of the reading if this were the board, plus the candidate's
        prior bonus when :func:`explain` applied one.
    """

    kind: Kind
    position: Position | None
    play: Play | None
    score: float


@dataclass(frozen=True, slots=True)
class Explanation:
    """The candidates for one reading, best first.

    :ivar candidates: every candidate, sorted by score, best first.
    :ivar raw: the board as read, as raw counts from the player on roll (for the judge).
    :ivar seat: the seat (1 or 2) of the player on roll.
    """

    candidates: tuple[Candidate, ...]
    raw: RawBoard
    seat: int

    @property
    def best(self) -> Candidate:
        """The candidate that explains the reading best."""
        return self.candidates[0]

    @property
    def margin(self) -> float:
        """How far (log-likelihood) the best is ahead of the runner-up; infinite when alone."""
        if len(self.candidates) < 2:
            return math.inf
        return self.candidates[0].score - self.candidates[1].score

    @property
    def clear(self) -> bool:
        """The best is clearly ahead: it may be acted on without asking."""
        return self.margin >= CLEAR

    @property
    def share(self) -> float:
        """The best candidate's share of the probability over all candidates (0..1)."""
        top = self.candidates[0].score
        total = sum(math.exp(c.score - top) for c in self.candidates)
        return 1.0 / total

    @property
    def best_known(self) -> Candidate | None:
        """The best candidate the rules allow (not the raw reading), if any."""
        return next((c for c in self.candidates if c.kind != "read"), None)

    def doubtful_points(self) -> tuple[int, ...]:
        """Points (player 1's numbering, 1-24) where the best and its close rivals differ."""
        best = self.candidates[0]
        if best.position is None:
            return ()
        a, _, _ = best.position.to_absolute(self.seat)
        points: set[int] = set()
        for rival in self.candidates[1:]:
            if best.score - rival.score >= CLEAR:
                break
            if rival.position is not None:
                b, _, _ = rival.position.to_absolute(self.seat)
                points.update(i + 1 for i in range(24) if a[i] != b[i])
        return tuple(sorted(points, reverse=True))


def raw_board(reading: BoardReading, seat: int) -> RawBoard:
    """The reading as raw counts seen from the player at ``seat`` (1 or 2), for the judge."""
    p1 = (*(max(n, 0) for n in reading.points), reading.bar[0])
    # Player 2's point n is player 1's point 25 - n.
    p2 = (*(max(-n, 0) for n in reversed(reading.points)), reading.bar[1])
    off1, off2 = reading.off
    if seat == 1:
        return RawBoard(p1, p2, (off1, off2))
    return RawBoard(p2, p1, (off2, off1))


def reading_position(reading: BoardReading, seat: int) -> Position | None:
    """The reading as a position from the player at ``seat``, or ``None`` if it is not one."""
    try:
        return Position.from_absolute(reading.points, reading.bar, on_roll=seat)
    except InvalidPositionError:
        return None


def _point_log_likelihood(reading: BoardReading, index: int, count: int) -> float:
    read = reading.points[index]
    confidence = reading.point_confidence[index] if index < len(reading.point_confidence) else _DEFAULT_CONFIDENCE
    runner, runner_p = reading.alternatives[index] if index < len(reading.alternatives) else (read, 0.0)
    if count == read:
        p = confidence
    elif count == runner:
        p = runner_p
    else:
        p = max(1.0 - confidence - runner_p, 0.0) / _OTHER_COUNTS
    return math.log(max(p, FLOOR))


def log_likelihood(points: tuple[int, ...] | list[int], bar: tuple[int, int], reading: BoardReading) -> float:
    """How likely the reading is if the board were ``points`` and ``bar`` (absolute numbering)."""
    total = sum(_point_log_likelihood(reading, i, points[i]) for i in range(24))
    for mine, seen in zip(bar, reading.bar, strict=True):
        p = BAR_CONFIDENCE if mine == seen else (1.0 - BAR_CONFIDENCE) / CHECKERS
        total += math.log(p)
    return total


def explain(
    before: Position,
    dice: Dice,
    reading: BoardReading,
    seat: int,
    *,
    legal: LegalPlays | None = None,
    partials: Mapping[Position, tuple[int, ...]] | None = None,
    prior: Mapping[Position, float] | None = None,
) -> Explanation:
    """Score the boards the rules allow against ``reading``; the board as read competes too.

    ``prior`` gives some legal results a log-odds bonus over the rest (teach mode gives the
    hinted play's result :data:`HINT_PRIOR`). It only settles doubt: when the reading alone
    clearly shows one board, the prior changes nothing, so a player who plays something other
    than the hint is recorded as before. Otherwise the bonus is added to those results' scores,
    as prior odds would be: a result the reading alone puts behind another by less than the
    bonus becomes the best guess (what "done" confirms), and one it puts ahead by at least
    ``CLEAR - bonus`` becomes clear. Every bonus must be below :data:`CLEAR`, so a clear lead
    (``reading lead + bonus >= CLEAR``) still needs the reading to put the result ahead: the
    prior never makes clear a result the reading alone puts behind another. Positions that are
    not legal results get no bonus (a hinted play half made is not favoured as if finished).

    :param before: the position before the move, from the player on roll.
    :param dice: the roll being played.
    :param reading: the still board as read.
    :param seat: the seat (1 or 2) of the player on roll.
    :param legal: the legal plays, if already known (they are cached by the caller).
    :param partials: the positions part-way through a legal play, if already known.
    :param prior: log-odds bonuses for legal results (position from the player on roll).
    :raises ValueError: a bonus that is negative, not finite, or not below :data:`CLEAR`.
    """
    bonus = dict(prior or {})
    for value in bonus.values():
        if not 0.0 <= value < CLEAR:
            raise ValueError(f"a prior bonus is from 0 to below CLEAR ({CLEAR:.3f}), not {value!r}")
    legal = legal if legal is not None else legal_plays(before, dice)
    partials = partials if partials is not None else partial_positions(before, dice, legal)
    kinds: dict[Position, tuple[Kind, Play | None]] = {}
    for position in partials:
        kinds[position] = ("partial", None)
    # With no legal play the position before is the legal result (the empty move).
    kinds[before] = ("legal", Play()) if not legal else ("before", None)
    for position, legal_play in legal.results.items():
        kinds[position] = ("legal", legal_play)
    plain: list[Candidate] = []
    for position, (kind, play) in kinds.items():
        points, bar, _ = position.to_absolute(seat)
        plain.append(Candidate(kind, position, play, log_likelihood(points, bar, reading)))
    as_read = reading_position(reading, seat)
    if as_read not in kinds:
        score = log_likelihood(reading.points, reading.bar, reading) - READ_PRIOR
        plain.append(Candidate("read", as_read, None, score))
    explanation = Explanation(_ranked(plain), raw_board(reading, seat), seat)
    if not bonus or explanation.clear:
        return explanation
    favoured = [
        replace(c, score=c.score + bonus[c.position])
        if c.kind == "legal" and c.position is not None and c.position in bonus
        else c
        for c in plain
    ]
    return Explanation(_ranked(favoured), explanation.raw, seat)


def _ranked(candidates: list[Candidate]) -> tuple[Candidate, ...]:
    """Best first; ties (equal scores) fall back to a fixed order, not to hashing."""
    order = {"legal": 0, "before": 1, "partial": 2, "read": 3}
    return tuple(
        sorted(candidates, key=lambda c: (-c.score, order[c.kind], c.position.position_id() if c.position else ""))
    )
