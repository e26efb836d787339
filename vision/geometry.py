# SPDX-License-Identifier: MIT
"""Where things are on a board, in the rectified view of the playing field.

The playing field (the 24 points and the bar strip, if the board has one) is mapped by a
homography onto a rectangle of :data:`FIELD_W` x :data:`FIELD_H` pixels, seen from player 1's
seat: his home board is at the bottom right. So the top row holds points 13-18 (left half),
then the bar, then 19-24; the bottom row holds 12-7 (left half), the bar, then 6-1.

The four corners of the field, in image pixels, are given in this order (the calibration's
contract): beside player 1's 13-point, beside his 24-point, beside his 1-point, beside his
12-point, i.e. top-left, top-right, bottom-right, bottom-left for a board seen from his seat.

Points are columns of equal width in each half, growing from the edge towards the middle.
Checkers on a point sit in slots of one checker diameter along the point's axis, from the edge
in; slot ``k`` is the ``k``-th checker of the stack. Stacks of more than :data:`SLOTS` checkers
are piled as players pile them: the 6th to 9th checkers form a second layer resting between the
first layer's checkers (half a checker further in), the 10th to 12th a third layer, and so on:
a pyramid of 5 + 4 + 3 + 2 + 1 = 15 holds a whole side.

Checkers on the bar lie on the bar strip (or, on a board without one, on the line between the
halves): player 1's in the half nearer his side (the bottom), player 2's nearer the top. The
doubling cube, centred, lies in the middle of the bar; owned, at the owner's end of the bar. A
doubling track is a row of circles along the bar: the centre circle (1) in the middle, then 2,
4, ..., 64 towards each player's side.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

#: Size of the rectified playing field, in pixels.
FIELD_W: Final = 1200
FIELD_H: Final = 1000
#: Checker slots along a point before a second layer starts.
SLOTS: Final = 5
#: Cube values on a doubling track, from the centre outwards.
TRACK_VALUES: Final = (1, 2, 4, 8, 16, 32, 64)


@dataclass(frozen=True, slots=True)
class FieldGeometry:
    """The layout of the rectified field for one board.

    :param bar_fraction: the bar strip's width as a fraction of the field's width (0: none).
    :param checker_fraction: a checker's diameter as a fraction of a point's width.
    """

    bar_fraction: float = 0.08
    checker_fraction: float = 0.92

    @property
    def bar_width(self) -> float:
        """The bar strip's width in field pixels."""
        return FIELD_W * self.bar_fraction

    @property
    def half_width(self) -> float:
        """Each half's width (six points) in field pixels."""
        return (FIELD_W - self.bar_width) / 2

    @property
    def point_width(self) -> float:
        """One point's width in field pixels."""
        return self.half_width / 6

    @property
    def checker_diameter(self) -> float:
        """A checker's diameter in field pixels."""
        return self.point_width * self.checker_fraction

    @property
    def point_length(self) -> float:
        """How far a point's triangle reaches from the edge towards the middle."""
        return min(FIELD_H * 0.42, self.checker_diameter * SLOTS * 1.02)

    def column(self, point: int) -> tuple[int, int]:
        """``(row, column)`` of player 1's ``point``: row 0 is the top, columns 0-11 left to right."""
        if not 1 <= point <= 24:
            raise ValueError(f"no point {point}")
        if point >= 13:
            return 0, point - 13
        return 1, 12 - point

    def point_center_x(self, point: int) -> float:
        """The x of the axis of player 1's ``point``."""
        _, col = self.column(point)
        left = col * self.point_width if col < 6 else self.half_width + self.bar_width + (col - 6) * self.point_width
        return left + self.point_width / 2

    def point_box(self, point: int) -> tuple[float, float, float, float]:
        """``(x0, y0, x1, y1)`` of the area a point's checkers may cover (its column, half the field)."""
        row, _ = self.column(point)
        cx = self.point_center_x(point)
        x0, x1 = cx - self.point_width / 2, cx + self.point_width / 2
        return (x0, 0.0, x1, FIELD_H / 2) if row == 0 else (x0, FIELD_H / 2, x1, float(FIELD_H))

    def slot_center(self, point: int, slot: int) -> tuple[float, float]:
        """Where the checker number ``slot`` (0 = at the edge) of a stack on ``point`` lies."""
        row, _ = self.column(point)
        layer, k = slot_layer(slot)
        offset = self.checker_diameter * (k + 0.5 + 0.5 * layer)
        y = offset if row == 0 else FIELD_H - offset
        return self.point_center_x(point), y

    def bar_box(self) -> tuple[float, float, float, float]:
        """The bar strip (at least one checker wide, for boards without one)."""
        width = max(self.bar_width, self.checker_diameter * 1.1)
        cx = FIELD_W / 2
        return cx - width / 2, 0.0, cx + width / 2, float(FIELD_H)

    def bar_slot_center(self, player: int, slot: int) -> tuple[float, float]:
        """Where the ``slot``-th checker of ``player`` (1 or 2) on the bar lies.

        Player 1's stack starts just below the middle (beside the centre cube) and grows
        towards his side; player 2's grows from just above the middle towards the top.
        """
        d = self.checker_diameter
        offset = d * (1.2 + slot)
        y = FIELD_H / 2 + offset if player == 1 else FIELD_H / 2 - offset
        return FIELD_W / 2, y

    def cube_center(self, owner: int | None) -> tuple[float, float]:
        """Where the cube lies: centred in the middle of the bar, or at the owner's end."""
        if owner is None:
            return FIELD_W / 2, FIELD_H / 2
        d = self.checker_diameter
        return FIELD_W / 2, (FIELD_H - 0.6 * d) if owner == 1 else 0.6 * d

    def track_center(self, value: int, owner: int | None) -> tuple[float, float]:
        """The circle of a doubling track for a cube ``value`` on ``owner``'s side."""
        if value not in TRACK_VALUES or (value == 1) != (owner is None):
            raise ValueError(f"no track circle for value {value} owned by {owner}")
        step = (FIELD_H / 2 - 0.6 * self.checker_diameter) / (len(TRACK_VALUES) - 1)
        k = TRACK_VALUES.index(value)
        y = FIELD_H / 2 + k * step if owner == 1 else FIELD_H / 2 - k * step
        return FIELD_W / 2, y

    def half_of(self, x: float) -> str:
        """``left`` or ``right`` of the bar, as player 1 sees the board."""
        return "left" if x < FIELD_W / 2 else "right"


def slot_layer(slot: int) -> tuple[int, int]:
    """``(layer, position in the layer)`` of the ``slot``-th checker of a stack (0-based).

    >>> [slot_layer(s) for s in (0, 4, 5, 8, 9, 14)]
    [(0, 0), (0, 4), (1, 0), (1, 3), (2, 0), (4, 0)]
    """
    if not 0 <= slot < 15:
        raise ValueError(f"no slot {slot} in a stack of at most 15")
    layer = 0
    while slot >= SLOTS - layer:
        slot -= SLOTS - layer
        layer += 1
    return layer, slot
