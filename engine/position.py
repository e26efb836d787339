# SPDX-License-Identifier: MIT
"""Checker layouts seen from the side on roll, and their gnubg Position IDs.

A :class:`Position` is gnubg's 2x25 board: for each side, index ``i`` holds the checkers on
that side's point ``i + 1`` and index 24 its checkers on the bar. Checkers not on the board are
borne off, so the fifteen-a-side invariant reads "at most 15 on the board".

>>> p = Position.STARTING
>>> p.position_id()
'4HPwATDgc/ABMA'
>>> p.pips()
(167, 167)
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable, Mapping, Sequence
from typing import Final

from engine.errors import InvalidIdError, InvalidPositionError, quoted

#: Point number of the bar, as a source of a move (gnubg and .mat use 25).
BAR: Final = 25
#: Point number of "borne off", as a destination (gnubg and .mat use 0).
OFF: Final = 0
#: Checkers each side has.
CHECKERS: Final = 15

Half = tuple[int, ...]


def _check_half(counts: Sequence[int], who: str) -> Half:
    half = tuple(counts)
    if len(half) != 25:
        raise InvalidPositionError(f"{who}: expected 25 counts (points 1-24 and the bar), got {len(half)}")
    for i, n in enumerate(half):
        if not isinstance(n, int) or n < 0:
            where = "the bar" if i == 24 else f"point {i + 1}"
            raise InvalidPositionError(f"{who}: {n!r} checkers on {where}")
    total = sum(half)
    if total > CHECKERS:
        raise InvalidPositionError(f"{who}: {total} checkers on the board, more than {CHECKERS}")
    return half


class Position(tuple[Half, Half]):
    """An immutable, hashable backgammon position from the point of view of the side on roll.

    ``position[0]`` is the side on roll (the mover), ``position[1]`` the opponent; each is a
    25-tuple of checker counts, index ``i`` for that side's own point ``i + 1`` and index 24 for
    its bar. Point ``p`` of the mover is point ``25 - p`` of the opponent.

    :param mover: the side on roll's 25 counts.
    :param opponent: the other side's 25 counts.
    :raises InvalidPositionError: negative counts, more than 15 checkers a side, or both sides on
        one point.
    """

    __slots__ = ()

    STARTING: Position

    def __new__(cls, mover: Sequence[int], opponent: Sequence[int]) -> Position:
        """Check the counts and build the position (see the class docstring)."""
        m = _check_half(mover, "side on roll")
        o = _check_half(opponent, "opponent")
        for i in range(24):
            if m[i] and o[23 - i]:
                raise InvalidPositionError(f"both sides have checkers on point {i + 1} (seen from the side on roll)")
        return tuple.__new__(cls, (m, o))

    @classmethod
    def _trusted(cls, mover: Half, opponent: Half) -> Position:
        """Build without checks; for generators whose output is valid by construction."""
        return tuple.__new__(cls, (mover, opponent))

    # -- constructors -----------------------------------------------------------------------

    @classmethod
    def from_points(
        cls,
        mover: Mapping[int, int],
        opponent: Mapping[int, int],
    ) -> Position:
        """Build from ``{point: checkers}`` maps, each in its own side's numbering (25 = bar).

        >>> Position.from_points({6: 5, 8: 3, 13: 5, 24: 2}, {6: 5, 8: 3, 13: 5, 24: 2}) == Position.STARTING
        True
        """
        return cls(_half_from_map(mover, "side on roll"), _half_from_map(opponent, "opponent"))

    @classmethod
    def from_board(cls, board: Sequence[Sequence[int]]) -> Position:
        """Build from gnubg's ``[[opponent x 25], [side on roll x 25]]`` layout."""
        if len(board) != 2:
            raise InvalidPositionError(f"expected two halves [opponent, side on roll], got {len(board)}")
        return cls(board[1], board[0])

    @classmethod
    def from_id(cls, position_id: str) -> Position:
        """Decode a gnubg Position ID (14 characters of base64)."""
        opponent, mover = decode_position_id(position_id)
        try:
            return cls(mover, opponent)
        except InvalidPositionError as exc:
            raise InvalidIdError(f"Position ID {position_id!r}: {exc}") from None

    @classmethod
    def from_absolute(
        cls,
        points: Sequence[int],
        bar: Sequence[int] = (0, 0),
        on_roll: int = 1,
    ) -> Position:
        """Build from a physical board read in player 1's numbering.

        :param points: 24 signed counts, index 0 = player 1's 1-point; positive for player 1's
            checkers, negative for player 2's.
        :param bar: checkers on the bar, ``(player 1, player 2)``.
        :param on_roll: 1 or 2, the player the position is seen from.
        """
        if len(points) != 24:
            raise InvalidPositionError(f"expected 24 points, got {len(points)}")
        if on_roll not in (1, 2):
            raise InvalidPositionError(f"on_roll must be 1 or 2, not {on_roll!r}")
        p1 = [max(n, 0) for n in points] + [bar[0]]
        # Player 2's point n is player 1's point 25 - n.
        p2 = [max(-n, 0) for n in reversed(points)] + [bar[1]]
        return cls(p1, p2) if on_roll == 1 else cls(p2, p1)

    # -- views ------------------------------------------------------------------------------

    @property
    def mover(self) -> Half:
        """The side on roll's 25 counts (index 24 is its bar)."""
        return self[0]

    @property
    def opponent(self) -> Half:
        """The opponent's 25 counts, in the opponent's own numbering."""
        return self[1]

    @property
    def board(self) -> tuple[list[int], list[int]]:
        """gnubg's layout ``([opponent], [side on roll])`` as fresh lists."""
        return list(self[1]), list(self[0])

    def to_absolute(self, on_roll: int = 1) -> tuple[list[int], tuple[int, int], tuple[int, int]]:
        """The physical board in player 1's numbering: ``(points, bar, off)``.

        :param on_roll: which player (1 or 2) this position is seen from.
        :returns: 24 signed counts (index 0 = player 1's 1-point, + player 1, - player 2),
            the bar ``(p1, p2)`` and borne-off counts ``(p1, p2)``.
        """
        if on_roll not in (1, 2):
            raise InvalidPositionError(f"on_roll must be 1 or 2, not {on_roll!r}")
        p1, p2 = (self[0], self[1]) if on_roll == 1 else (self[1], self[0])
        points = [p1[i] - p2[23 - i] for i in range(24)]
        return points, (p1[24], p2[24]), (CHECKERS - sum(p1), CHECKERS - sum(p2))

    def swap(self) -> Position:
        """The same layout seen from the other side (the turn passes)."""
        return tuple.__new__(Position, (self[1], self[0]))

    def off(self) -> tuple[int, int]:
        """Checkers borne off, ``(side on roll, opponent)``."""
        return CHECKERS - sum(self[0]), CHECKERS - sum(self[1])

    def bar(self) -> tuple[int, int]:
        """Checkers on the bar, ``(side on roll, opponent)``."""
        return self[0][24], self[1][24]

    def pips(self) -> tuple[int, int]:
        """Pip counts, ``(side on roll, opponent)``."""
        return _pips(self[0]), _pips(self[1])

    def can_bear_off(self) -> bool:
        """Whether the side on roll has all its remaining checkers in its home board."""
        return not any(self[0][6:])

    def is_contact(self) -> bool:
        """Whether the two sides can still hit each other (not yet a pure race)."""
        m, o = self[0], self[1]
        back_mover = max((i for i in range(25) if m[i]), default=-1)
        back_opp = max((i for i in range(25) if o[i]), default=-1)
        # Mover's index i is the opponent's index 23 - i: contact while they still overlap.
        return back_mover >= 0 and back_opp >= 0 and back_mover + back_opp >= 23

    def is_game_over(self) -> bool:
        """Whether either side has borne off all fifteen checkers."""
        return not any(self[0]) or not any(self[1])

    def position_id(self) -> str:
        """gnubg's Position ID: 14 characters of base64."""
        return encode_position_id(self[1], self[0])

    def __repr__(self) -> str:
        return f"Position.from_id({self.position_id()!r})"


def _pips(half: Iterable[int]) -> int:
    return sum(n * (i + 1) for i, n in enumerate(half))


def _half_from_map(points: Mapping[int, int], who: str) -> list[int]:
    half = [0] * 25
    for point, n in points.items():
        if not 1 <= point <= 25:
            raise InvalidPositionError(f"{who}: no point {point} (1-24, 25 = bar)")
        half[point - 1] = n
    return half


def encode_position_id(first: Sequence[int], second: Sequence[int]) -> str:
    """Encode two 25-count halves (``first`` = the side not on roll) as a Position ID.

    For each half, point by point and then the bar, one 1-bit per checker and a 0-bit; the 80
    bits are packed least significant bit first and written in base64 without padding.
    """
    key = 0
    bit = 0
    for half in (first, second):
        for n in half:
            key |= ((1 << n) - 1) << bit
            bit += n + 1
    if bit > 80:
        raise InvalidPositionError(f"{bit - 50} checkers do not fit in a Position ID")
    return base64.b64encode(key.to_bytes(10, "little")).decode("ascii")[:14]


#: The base64 alphabet, each character's value its index.
_B64: Final = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def decode_position_id(position_id: str) -> tuple[Half, Half]:
    """Decode a Position ID into its two raw halves ``(side not on roll, side on roll)``.

    The halves are not checked against the rules (so a reading of a broken board can still be
    decoded and reported); :meth:`Position.from_id` checks them.
    """
    text = position_id.strip()
    if len(text) != 14:
        raise InvalidIdError(f"Position ID {quoted(position_id)}: expected 14 characters, got {len(text)}")
    try:
        raw = base64.b64decode(text + "==", validate=True)
    except (binascii.Error, ValueError):
        raise InvalidIdError(f"Position ID {position_id!r}: not base64") from None
    # 14 characters carry 84 bits: the last one's low 4 are padding, which gnubg leaves clear.
    if _B64.index(text[-1]) & 0b1111:
        raise InvalidIdError(f"Position ID {position_id!r}: padding bits set in its last character")
    key = int.from_bytes(raw, "little")
    halves: list[list[int]] = [[], []]
    bit = 0
    for half in halves:
        while len(half) < 25:
            n = 0
            while bit < 80 and key >> bit & 1:
                n += 1
                bit += 1
            if bit >= 80:
                raise InvalidIdError(f"Position ID {position_id!r}: the checkers run past 80 bits")
            half.append(n)
            bit += 1
    if key >> bit:
        raise InvalidIdError(f"Position ID {position_id!r}: bits set after the last point")
    return tuple(halves[0]), tuple(halves[1])


Position.STARTING = Position.from_points({6: 5, 8: 3, 13: 5, 24: 2}, {6: 5, 8: 3, 13: 5, 24: 2})
