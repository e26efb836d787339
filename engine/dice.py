# SPDX-License-Identifier: MIT
"""A roll of two dice, kept in the order rolled.

>>> Dice.parse("31")
Dice(3, 1)
>>> Dice(4, 4).moves
(4, 4, 4, 4)
>>> sum(weight for _, weight in ALL_21)
36
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from engine.errors import InvalidNotationError, quoted

#: A written roll: two ASCII digits, apart or with one separator, in brackets or not.
_ROLL: Final = re.compile(r"[\[(]?\s*([0-9])\s*[-,]?\s*([0-9])\s*[\])]?", re.ASCII)


@dataclass(frozen=True, slots=True)
class Dice:
    """Two dice in rolled order (``.mat`` files keep ``15:`` as it fell)."""

    first: int
    second: int

    def __post_init__(self) -> None:
        for die in (self.first, self.second):
            if not isinstance(die, int) or not 1 <= die <= 6:
                raise InvalidNotationError(f"a die shows 1 to 6, not {die!r}")

    @classmethod
    def parse(cls, text: str) -> Dice:
        """Read ``31``, ``3-1``, ``3 1``, ``3,1`` or ``[3, 1]`` (ASCII digits, one between each die)."""
        found = _ROLL.fullmatch(text.strip())
        if found is None:
            raise InvalidNotationError(f"not a roll of two dice: {quoted(text)}")
        return cls(int(found[1]), int(found[2]))

    @property
    def is_double(self) -> bool:
        """Both dice show the same number."""
        return self.first == self.second

    @property
    def moves(self) -> tuple[int, ...]:
        """The numbers to play: the two dice, or four times the number for a double."""
        if self.first == self.second:
            return (self.first,) * 4
        return (self.first, self.second)

    @property
    def high(self) -> int:
        """The higher die."""
        return max(self.first, self.second)

    @property
    def low(self) -> int:
        """The lower die."""
        return min(self.first, self.second)

    @property
    def pips(self) -> int:
        """The pips the roll moves when every die is played in full."""
        return sum(self.moves)

    def sorted(self) -> Dice:
        """The same roll with the higher die first."""
        return Dice(self.high, self.low)

    def __str__(self) -> str:
        return f"{self.first}{self.second}"

    def __repr__(self) -> str:
        return f"Dice({self.first}, {self.second})"

    def spoken(self) -> str:
        """The roll as players say it: ``6-3``."""
        return f"{self.first}-{self.second}"


#: The 21 distinct rolls (higher die first), each with its weight out of 36.
ALL_21: Final[tuple[tuple[Dice, int], ...]] = tuple(
    (Dice(a, b), 1 if a == b else 2) for a in range(6, 0, -1) for b in range(a, 0, -1)
)

#: All 36 ordered rolls.
ALL_36: Final[tuple[Dice, ...]] = tuple(Dice(a, b) for a in range(1, 7) for b in range(1, 7))
