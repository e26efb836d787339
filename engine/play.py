# SPDX-License-Identifier: MIT
"""Plays and their notation, written the way GNU Backgammon writes them.

A :class:`Play` is a sequence of :class:`Step` in canonical order (source point descending,
then destination descending). ``str(play)`` gives gnubg's canonical text: one checker's moves
joined (``13/5``, or ``13/7*/5`` when it hits on the way), repeated moves counted (``6/off(2)``),
``bar`` and ``off`` spelled out, hits marked once.

>>> str(Play.parse("8/5 6/5"))
'8/5 6/5'
>>> str(Play.parse("25/22 13/11*"))
'bar/22 13/11*'
>>> str(Play.parse("6/0 6/0"))
'6/off(2)'
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from engine.errors import InvalidNotationError, quoted
from engine.position import BAR, OFF, Position

#: Steps as the move generator records them: ``(source, dest)`` point pairs in the order played.
RawSteps = tuple[tuple[int, int], ...]


class Step(NamedTuple):
    """One checker moving from ``source`` to ``dest`` (25 = bar, 0 = off), hitting or not."""

    source: int
    dest: int
    hit: bool = False

    def __str__(self) -> str:
        return f"{format_point(self.source)}/{format_point(self.dest)}{'*' if self.hit else ''}"


def format_point(point: int) -> str:
    """``25`` is written ``bar``, ``0`` is ``off``, other points as numbers."""
    if point == BAR:
        return "bar"
    if point == OFF:
        return "off"
    return str(point)


def _canonical(steps: Iterable[Step]) -> tuple[Step, ...]:
    ordered = sorted(steps, key=lambda s: (-s.source, -s.dest))
    # A point is hit once, by the first move (in written order) that lands on it.
    hit_points = {s.dest for s in ordered if s.hit}
    out = []
    for s in ordered:
        hit = s.dest in hit_points
        if hit:
            hit_points.discard(s.dest)
        out.append(Step(s.source, s.dest, hit))
    return tuple(out)


class Play(tuple[Step, ...]):
    """A play: zero to four steps, kept in canonical order.

    The empty play (:data:`NO_PLAY`) stands for "no legal move"; it is falsy.
    """

    __slots__ = ()

    def __new__(cls, steps: Iterable[Step] = ()) -> Play:
        """Put ``steps`` in canonical order (hit marks go on the first landing on each point)."""
        return tuple.__new__(cls, _canonical(steps))

    @classmethod
    def parse(cls, text: str) -> Play:
        """Read a play in any common notation, keeping the steps as written.

        Accepts ``bar``/``25``, ``off``/``0``, ``*`` or no hit marks, ``(2)`` repeats, ``,`` or
        spaces between moves, one checker's moves joined (``24/13``, ``13/7*/5``), and the words
        ``Cannot Move`` or an empty string for no play. Which legal play the text means depends
        on the position and the dice: :meth:`LegalPlays.parse <engine.movegen.LegalPlays.parse>`
        answers that.

        :raises InvalidNotationError: the text is not a play.
        """
        return cls(parse_steps(text))

    def __str__(self) -> str:
        return format_steps(self)

    def __repr__(self) -> str:
        return f"Play.parse({str(self)!r})"

    def __bool__(self) -> bool:
        return len(self) > 0

    def sources_and_dests(self) -> tuple[list[int], list[int]]:
        """The points checkers leave and land on, in the mover's numbering."""
        return [s.source for s in self], [s.dest for s in self]


NO_PLAY = Play()


def format_steps(steps: Sequence[Step]) -> str:
    """gnubg's text for canonically ordered steps (see the module docstring)."""
    if not steps:
        return ""
    hit_points = {s.dest for s in steps if s.hit}
    chains: list[list[int]] = []
    used = [False] * len(steps)
    for i, s in enumerate(steps):
        if used[i]:
            continue
        used[i] = True
        chain = [s.source, s.dest]
        # Join the later steps that start where this checker stopped. An intermediate point
        # stays written only when a checker was hit there.
        for j in range(i + 1, len(steps)):
            if not used[j] and steps[j].source == chain[-1] and chain[-1] != OFF:
                used[j] = True
                if chain[-1] in hit_points:
                    chain.append(steps[j].dest)
                else:
                    chain[-1] = steps[j].dest
        chains.append(chain)
    counted: list[tuple[list[int], int]] = []
    for chain in chains:
        for k, (other, n) in enumerate(counted):
            if other == chain:
                counted[k] = (other, n + 1)
                break
        else:
            counted.append((chain, 1))
    marks = set(hit_points)
    parts = []
    for chain, n in counted:
        text = format_point(chain[0])
        for point in chain[1:]:
            text += "/" + format_point(point)
            if point in marks:
                text += "*"
                marks.discard(point)
        if n > 1:
            text += f"({n})"
        parts.append(text)
    return " ".join(parts)


_POINT = r"(?:bar|off|b|o|\d{1,2})"
_MOVE = re.compile(rf"^({_POINT}\*?(?:/{_POINT}\*?)+)(?:\((\d)\))?$", re.IGNORECASE)


def parse_point(text: str) -> int:
    """Read a point: ``1``-``25``, ``0``, ``bar`` or ``off``."""
    word = text.lower().rstrip("*")
    if word in ("bar", "b"):
        return BAR
    if word in ("off", "o"):
        return OFF
    if not word.isdigit() or not 0 <= int(word) <= 25:
        raise InvalidNotationError(f"not a point: {quoted(text)}")
    return int(word)


def parse_steps(text: str) -> list[Step]:
    """Split play text into written steps (joined moves become consecutive steps)."""
    cleaned = text.strip()
    if cleaned.lower() in ("", "cannot move", "can't move", "no move", "no play", "dance"):
        return []
    steps: list[Step] = []
    for token in cleaned.replace(",", " ").split():
        match = _MOVE.match(token)
        if not match:
            raise InvalidNotationError(f"not a move: {quoted(token)} in {quoted(text)}")
        parts = match.group(1).split("/")
        repeat = int(match.group(2) or 1)
        if repeat < 1 or repeat > 4:
            raise InvalidNotationError(f"bad repeat count in {quoted(token)}")
        points = [parse_point(p) for p in parts]
        for k in range(len(points) - 1):
            if points[k] == OFF or points[k + 1] == BAR:
                raise InvalidNotationError(f"a checker cannot move from off or to the bar: {quoted(token)}")
            if points[k + 1] >= points[k]:
                raise InvalidNotationError(f"a checker moves to a lower point: {quoted(token)}")
        hits = [p.endswith("*") for p in parts]
        for _ in range(repeat):
            for k in range(len(points) - 1):
                steps.append(Step(points[k], points[k + 1], hits[k + 1]))
    if len(steps) > 4:
        raise InvalidNotationError(f"more than four moves: {quoted(text)}")
    return steps


def play_from_steps(position: Position, raw: RawSteps) -> Play:
    """The :class:`Play` for generator steps played in order from ``position``."""
    opponent = position[1]
    # The opponent's point j + 1 is the mover's point 24 - j.
    remaining = {24 - j for j in range(24) if opponent[j]}
    steps = []
    for source, dest in raw:
        hit = dest in remaining
        if hit:
            remaining.discard(dest)
        steps.append(Step(source, dest, hit))
    return Play(steps)
