# SPDX-License-Identifier: MIT
"""What a frame of the board shows: the plain types a board reading is made of.

Kept apart from :mod:`vision.reader` (and free of OpenCV and numpy), so that what only needs a
reading's shape (the controller, its explanations, tests of them) imports none of the camera
stack.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class DieOnBoard:
    """A die on the board: face, centre in image pixels, flat or cocked, which half."""

    value: int
    center: tuple[float, float]
    flat: bool
    half: str
    confidence: float


@dataclass(frozen=True, slots=True)
class CubeReading:
    """The doubling cube or track counter: value (1-64) and owner (1, 2 or ``None``)."""

    value: int
    owner: int | None
    confidence: float


@dataclass(frozen=True)
class BoardReading:
    """What one frame shows, in player 1's numbering (the ``bgboard vision read`` contract).

    :ivar points: 24 signed counts, index 0 = player 1's 1-point, + player 1, - player 2.
    :ivar bar: checkers on the bar, ``(player 1, player 2)``.
    :ivar off: borne off, ``(player 1, player 2)``: fifteen less what is on the board.
    :ivar dice: the dice seen on the board.
    :ivar cube: the cube (or track counter), if seen.
    :ivar occluded: something hides part of the board; the reading is not to be trusted.
    :ivar confidence: the whole reading's confidence (the product of its parts').
    :ivar point_confidence: each point's confidence (same order as ``points``).
    :ivar alternatives: per point, the runner-up stack and its probability.
    """

    points: tuple[int, ...]
    bar: tuple[int, int]
    off: tuple[int, int]
    dice: tuple[DieOnBoard, ...] = ()
    cube: CubeReading | None = None
    occluded: bool = False
    confidence: float = 0.0
    point_confidence: tuple[float, ...] = ()
    alternatives: tuple[tuple[int, float], ...] = field(default=(), repr=False)

    def to_json(self) -> dict[str, Any]:
        """The JSON object of ``bgboard vision read --json``."""
        return {
            "points": list(self.points),
            "bar": list(self.bar),
            "off": list(self.off),
            "dice": [
                {
                    "value": d.value,
                    "center": [round(d.center[0], 1), round(d.center[1], 1)],
                    "flat": d.flat,
                    "half": d.half,
                    "confidence": round(d.confidence, 4),
                }
                for d in self.dice
            ],
            "cube": None
            if self.cube is None
            else {"value": self.cube.value, "owner": self.cube.owner, "confidence": round(self.cube.confidence, 4)},
            "occluded": self.occluded,
            "confidence": round(self.confidence, 4),
            "point_confidence": [round(c, 4) for c in self.point_confidence],
        }
