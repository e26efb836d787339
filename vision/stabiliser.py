# SPDX-License-Identifier: MIT
"""Read only a still scene: a motion gate on the rectified board, and the fusion of readings.

A hand moving checkers, dice still rolling or a player leaning over the board all show up as
change between consecutive frames of the board. :class:`MotionGate` warps each frame to a small
grey image of the field (cheap: a few thousand pixels), compares it with the previous one and
says the scene is still once nothing has changed for ``settle`` seconds. :class:`Stabiliser`
then collects the readings of the still frames and passes on their fusion: the value each field
takes most often, with the agreement folded into its confidence.

Time is injected (each frame carries its own), so both are pure and tested without a clock.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Generic, TypeVar

import cv2
import numpy as np

from vision.geometry import FIELD_H, FIELD_W

#: The size of the small grey field the gate compares.
GATE_SIZE = (96, 80)


@dataclass(frozen=True, slots=True)
class GateState:
    """What the gate saw in one frame.

    :ivar moving: something changed since the previous frame.
    :ivar still: the scene has been still for the settle time (a reading may be taken).
    :ivar change: share of the field's pixels that changed (0..1).
    :ivar still_since: when the scene became still, or ``None`` while moving.
    """

    moving: bool
    still: bool
    change: float
    still_since: float | None


class MotionGate:
    """Tell when the board has been still long enough to read.

    :param homography: 3x3 field -> image homography of the calibration (the gate warps the
        image back to the field).
    :param settle: seconds the scene must stay still.
    :param threshold: grey-level change (0-255) that counts as a changed pixel; noise and
        flicker stay below it.
    :param min_share: share of changed pixels that makes the scene "moving".
    """

    def __init__(
        self, homography: np.ndarray, settle: float = 0.6, threshold: int = 15, min_share: float = 0.0015
    ) -> None:
        scale = np.diag([GATE_SIZE[0] / FIELD_W, GATE_SIZE[1] / FIELD_H, 1.0])
        # image -> small field: the inverse of field -> image, then scaled down.
        self._warp = scale @ np.linalg.inv(homography)
        self.settle = settle
        self.threshold = threshold
        self.min_share = min_share
        self._previous: np.ndarray | None = None
        self._still_since: float | None = None

    def small_field(self, image: np.ndarray) -> np.ndarray:
        """The field warped to :data:`GATE_SIZE`, grey and lightly blurred."""
        grey = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
        small = cv2.warpPerspective(grey, self._warp, GATE_SIZE, flags=cv2.INTER_AREA)
        return cv2.GaussianBlur(small, (3, 3), 0)

    def feed(self, image: np.ndarray, now: float) -> GateState:
        """Look at one frame taken at ``now`` (seconds)."""
        small = self.small_field(image)
        if self._previous is None:
            change = 1.0
        else:
            diff = cv2.absdiff(small, self._previous)
            change = float(np.count_nonzero(diff > self.threshold)) / diff.size
        self._previous = small
        moving = change > self.min_share
        if moving:
            self._still_since = None
        elif self._still_since is None:
            self._still_since = now
        still = self._still_since is not None and now - self._still_since >= self.settle
        return GateState(moving, still, change, self._still_since)

    def reset(self) -> None:
        """Forget the previous frame (after the camera was reopened, say)."""
        self._previous = None
        self._still_since = None


R = TypeVar("R")


class Stabiliser(Generic[R]):
    """Fuse the readings of still frames; pass one on only once enough of them agree.

    Readings are compared by a key (for board readings: the checker layout and the dice); the
    most frequent key among the readings taken since the scene became still wins, and is
    passed on when it has ``agree`` votes. Moving frames clear the votes.

    :param agree: how many still readings must agree.
    """

    def __init__(self, agree: int = 2) -> None:
        self.agree = agree
        self._votes: Counter[object] = Counter()
        self._best: dict[object, R] = {}
        self._passed: object | None = None

    def feed(self, reading: R | None, key: object, gate: GateState) -> R | None:
        """Add the reading of a frame; returns the fused reading when it is settled and new."""
        if not gate.still or reading is None:
            if gate.moving:
                self._votes.clear()
                self._best.clear()
                self._passed = None
            return None
        self._votes[key] += 1
        self._best.setdefault(key, reading)
        winner, votes = self._votes.most_common(1)[0]
        if votes < self.agree or winner == self._passed:
            return None
        self._passed = winner
        return self._best[winner]

    @property
    def agreement(self) -> float:
        """Share of the still readings that agree with the leading one."""
        total = sum(self._votes.values())
        return self._votes.most_common(1)[0][1] / total if total else 0.0
