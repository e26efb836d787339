# SPDX-License-Identifier: MIT
"""The doubling cube, and the doubling track that some boards use instead.

Players are numbered 0 and 1 as in gnubg. A :class:`Cube` is a value and an owner (``None``
while it is centred). The doubling track of seed 000 is a counter on a row of circles: it
starts on the centre circle ``1``, and whoever takes a double moves it to the next power of two
on his own side, so the circle is the cube value and the side is the owner.

>>> cube = Cube()
>>> cube.can_double(0), cube.can_double(1)
(True, True)
>>> cube = cube.doubled(taker=1)
>>> cube
Cube(value=2, owner=1)
>>> cube.can_double(0)
False
>>> track_reading(cube)
(2, 1)
>>> cube_from_track(4, 0)
Cube(value=4, owner=0)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from engine.errors import IllegalActionError, InvalidPositionError

#: The highest value a physical cube shows (seed 004 calls it the limit; we only read it).
PHYSICAL_CUBE_MAX: Final = 64
#: The highest cube the Match ID can record; doubling stops here even without a ``max_cube``.
CUBE_LIMIT: Final = 1 << 15


def is_cube_value(value: object) -> bool:
    """Whether ``value`` is a cube value: a power of two from 1 to :data:`CUBE_LIMIT`."""
    if not isinstance(value, int) or isinstance(value, bool):
        return False
    return 0 < value <= CUBE_LIMIT and not value & (value - 1)


@dataclass(frozen=True, slots=True)
class Cube:
    """The doubling cube: its value and the player who owns it (``None``: centred).

    A centred cube at more than 1 or an owned cube at 1 cannot arise from play, but both can be
    set up (gnubg allows them), so they are accepted.

    :param value: a power of two.
    :param owner: player 0 or 1, or ``None`` for a centred cube.
    :raises InvalidPositionError: the value is not a power of two or the owner is not a player.
    """

    value: int = 1
    owner: int | None = None

    def __post_init__(self) -> None:
        if not is_cube_value(self.value):
            raise InvalidPositionError(f"a cube shows a power of two from 1 to {CUBE_LIMIT}, not {self.value!r}")
        if self.owner not in (None, 0, 1):
            raise InvalidPositionError(f"the cube belongs to player 0 or 1 or is centred (None), not {self.owner!r}")

    @property
    def is_centred(self) -> bool:
        """Nobody owns the cube yet."""
        return self.owner is None

    def can_double(self, player: int) -> bool:
        """Whether the cube is ``player``'s to turn: centred or his own. Other rules are the match's."""
        return self.owner is None or self.owner == player

    def doubled(self, taker: int) -> Cube:
        """The cube after ``taker`` takes a double: twice the value, on the taker's side.

        :raises IllegalActionError: the cube is at :data:`CUBE_LIMIT` already.
        """
        if self.value >= CUBE_LIMIT:
            raise IllegalActionError(f"the cube can't go past {CUBE_LIMIT}")
        return Cube(self.value * 2, taker)


def cube_from_track(circle: int, side: int | None) -> Cube:
    """The cube that a doubling-track reading stands for.

    :param circle: the value printed on the circle the counter stands on (1, 2, 4, ... 64).
    :param side: the player on whose side of the track it stands, or ``None`` for the centre.
    :raises InvalidPositionError: the reading is not a place on the track: the centre circle is
        ``1`` and only ``1``; the side circles run from 2 to 64.
    """
    if side is None:
        if circle != 1:
            raise InvalidPositionError(f"the centre circle of the doubling track is 1, not {circle!r}")
        return Cube()
    if side not in (0, 1):
        raise InvalidPositionError(f"the track has a side for player 0 and for player 1, not {side!r}")
    if not is_cube_value(circle) or not 2 <= circle <= PHYSICAL_CUBE_MAX:
        raise InvalidPositionError(
            f"the circles on a side of the doubling track are 2 to {PHYSICAL_CUBE_MAX}, not {circle!r}"
        )
    return Cube(circle, side)


def track_reading(cube: Cube) -> tuple[int, int | None]:
    """Where the doubling-track counter stands for ``cube``: ``(circle, side)``.

    :raises InvalidPositionError: the cube has no place on the track (a centred cube above 1, an
        owned cube at 1, or a value above 64).
    """
    if cube.owner is None:
        if cube.value != 1:
            raise InvalidPositionError(f"a centred cube at {cube.value} has no place on the doubling track")
        return 1, None
    if not 2 <= cube.value <= PHYSICAL_CUBE_MAX:
        raise InvalidPositionError(
            f"a cube at {cube.value} owned by player {cube.owner} has no place on the "
            f"doubling track (2 to {PHYSICAL_CUBE_MAX})"
        )
    return cube.value, cube.owner
