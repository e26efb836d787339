# SPDX-License-Identifier: MIT
"""Whether something lies over the board: a hand or an arm over the field, an arm over its frame.

:class:`OcclusionCheck` keeps what :class:`vision.reader.BoardReader` weighs each frame against
to tell: the field's look at the last clear reading (at first, the calibration's), which a hand
changes where no checker, die or cube came or went (:meth:`OcclusionCheck.over_field`); this
board's colour models, which a sleeve's samples along a point fit none of
(:meth:`OcclusionCheck.hidden_points`); and the calibration's band of the frame round the field,
which an arm over it changes, as does the board moving under the camera
(:meth:`OcclusionCheck.arm_over_frame`, :meth:`OcclusionCheck.border_changes`).

Kept apart from the reader, which reads what lies on the board: these checks take a reading
(points, bar, dice) as given and say which of it cannot be trusted.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from engine.errors import BackgammonError
from engine.position import Position
from vision.features import LOOK_SCALE, SCALE, STEPS, border_band, border_mask
from vision.geometry import slot_layer
from vision.profile import Profile

#: A colour sample this far (squared, in standard deviations) from every model is foreign to
#: the board: a hand, a sleeve, a shadow of a player.
FOREIGN = 36.0
#: A point with this many foreign samples in a row is hidden; two hidden points make the board
#: occluded.
FOREIGN_SAMPLES = 3
#: Grey-level change of a pixel of the board's frame that counts, and the share of the frame's
#: pixels changed that means an arm is over it.
BORDER_CHANGE = 12
BORDER_SHARE = 0.004
#: A spot of the field's look (:func:`vision.features.look_of`) whose colour moved this far
#: (Lab) from the reference's, once the light's shift over the whole field is taken out, has
#: changed. A checker or a hand against the board it covers: 40 and more; a lamp's glare
#: wandering over glossy checkers, JPEG and noise: under 20.
LOOK_CHANGE = 25.0
#: A patch of the field this big (in checkers' areas) that changed where no checker, die or
#: cube came or went is something over the field: a hand, an arm, a cup. On real stream frames
#: hands made patches of 2.6 to 44 checkers; checkers put down a little off their place leave
#: crescents of up to 1.8.
HAND_AREA = 2.5
#: A checker that came is taken to explain the change where it lies when the middle of its spot
#: is this close (Lab) to its side's checkers' colour; one that left, when its spot is this close
#: to the bare look there.
DISC_COLOUR = 35.0


class OcclusionCheck:
    """Tell what hides part of one board's frames (see the module's docstring).

    :param profile: the board and camera's profile (its colour models, its frame round the
        field and its look at calibration).
    :param homography: from field coordinates to image pixels; the reader sets it anew when it
        follows a moved board.
    :param cube_spots: where the cube or the track counter may lie, on the half-size field: a
        change there is the cube's.
    :param bare: each point's spots (24 x STEPS) as they looked bare at calibration (Lab), and
        which of them it saw; ``None`` for a profile without them.
    """

    def __init__(
        self,
        profile: Profile,
        homography: np.ndarray,
        cube_spots: list[tuple[float, float]],
        bare: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> None:
        self.profile = profile
        self.models = profile.models
        self.homography = homography
        self._cube_spots = cube_spots
        self._empty_means: np.ndarray | None = None
        if bare is not None:
            self._empty_means, self._spot_known = bare
        geometry = profile.geometry
        # Each point's column on the field's look (x0, y0, x1, y1): what covers it hides it.
        self._look_boxes = [tuple(round(v * LOOK_SCALE) for v in geometry.point_box(index + 1)) for index in range(24)]
        # A patch of the look this big or more may be a hand (HAND_AREA checkers), in look pixels.
        self._hand_pixels = HAND_AREA * math.pi * (geometry.checker_diameter * LOOK_SCALE / 2) ** 2
        #: What the field looked like at the last clear reading (at first, at calibration), and
        #: what was read there: what changed since where no checker, die or cube came or went
        #: lies over the field.
        self.reference = _Reference.of_profile(profile)
        # The frame's look and what changed in it (see _look_changes), kept for the read.
        self._changes_of: tuple[np.ndarray, tuple[_Reference, np.ndarray, np.ndarray] | None] | None = None
        # The calibration's band round the field as an array, and moved half a pixel each way
        # (see _calibration_band).
        self._border: tuple[list[int], np.ndarray, dict[str | None, list[np.ndarray]]] | None = None

    def seen_clear(self, look: np.ndarray, points: tuple[int, ...], bar: tuple[int, int]) -> None:
        """A clear reading of ``points`` and ``bar`` was made of the field's ``look``: later
        looks are held against it."""
        self.reference = _Reference.of_look(look, points, bar)

    def forget(self) -> None:
        """Hold the next looks against the calibration's again."""
        self.reference = _Reference.of_profile(self.profile)

    def arm_over_frame(
        self, image: np.ndarray, cube_end: str | None = None, *, homography: np.ndarray | None = None
    ) -> bool:
        """Whether something (an arm, a sleeve) lies over the board's frame round the field:
        its left, top and bottom sides, in ``image`` (seen through ``homography``, by default
        the reader's) against the calibration's; ``False`` without the calibration's frame.

        ``cube_end``: the end of the bar (``top`` or ``bottom``) where an owned cube lies.
        """
        if not self.profile.border:
            return False
        band = self.band(image, homography)
        before, mask = self._calibration_band(band), border_mask(cube_end)
        return _changed_share(band, before, mask, self._calibration_moves(before, cube_end)) > BORDER_SHARE

    def over_field(
        self,
        look: np.ndarray,
        points: list[int],
        bar: tuple[int, int],
        dice: list[tuple[np.ndarray, int, float]] | None,
    ) -> tuple[bool, set[int]]:
        """Whether something lies over the field that is no checker, die or cube, and the points
        (indexes) it covers: the field's ``look`` held against the reference's (the last clear
        reading's, at first the calibration's), where it changed by more than the light did and
        no checker came or went (:attr:`BoardReading.points` against the reference's), no die
        lies and the cube may lie, in patches of :data:`HAND_AREA` checkers or more."""
        changes = self._look_changes(look)
        if changes is None:
            return False, set()
        reference, lab, patches = changes
        patches = patches.copy()
        patches[self._explained(reference, lab, points, bar, dice)] = 0
        count, labels, stats, _ = cv2.connectedComponentsWithStats(patches)
        big = [k for k in range(1, count) if stats[k, cv2.CC_STAT_AREA] > self._hand_pixels]
        if not big:
            return False, set()
        over = np.isin(labels, big)
        covered = {index for index, (x0, y0, x1, y1) in enumerate(self._look_boxes) if over[y0:y1, x0:x1].mean() > 0.1}
        return True, covered

    def _look_changes(self, look: np.ndarray) -> tuple[_Reference, np.ndarray, np.ndarray] | None:
        """What :meth:`over_field` weighs of the field's ``look``: the reference, the look in
        Lab, and the solid patches where it changed by more than the light did; ``None`` when
        there is no reference or those patches are too small together for a hand (the same
        look gives the same answer: it is kept for the frame's read)."""
        if self._changes_of is not None and self._changes_of[0] is look:
            return self._changes_of[1]
        reference = self.reference
        result: tuple[_Reference, np.ndarray, np.ndarray] | None = None
        if reference is not None and reference.known.any():
            lab = cv2.cvtColor(look, cv2.COLOR_BGR2LAB).astype(np.float32)
            difference = cv2.subtract(lab, reference.lab)
            # The light's shift over the field: the median of a sample of the spots.
            shift = np.median(difference.reshape(-1, 3)[reference.sample], axis=0)
            difference = cv2.subtract(difference, (*(float(v) for v in shift), 0.0))
            square = cv2.transform(cv2.multiply(difference, difference), np.ones((1, 3), np.float32))
            changed = ((square > LOOK_CHANGE**2) & reference.known).astype(np.uint8)
            # Noise and a checker's edge a pixel off are thin; a hand is a solid patch.
            patches = cv2.morphologyEx(changed, cv2.MORPH_OPEN, np.ones((5, 5), np.uint8))
            if np.count_nonzero(patches) > self._hand_pixels:
                result = (reference, lab, patches)
        self._changes_of = (look, result)
        return result

    def _explained(
        self,
        reference: _Reference,
        lab: np.ndarray,
        points: list[int],
        bar: tuple[int, int],
        dice: list[tuple[np.ndarray, int, float]] | None,
    ) -> np.ndarray:
        """Where the look (``lab``, now) may have changed for what was read: the checkers of
        every point (and each player's part of the bar) whose count changed since the reference,
        as they are (each looking like its side's checkers) and as they were (each spot left
        looking bare, where that is known); the dice; the cube's places. A hand over a point
        that the reading takes for a change of checkers there looks like neither."""
        geometry = self.profile.geometry
        mask = np.zeros(reference.known.shape, np.uint8)
        r = round(0.6 * geometry.checker_diameter * LOOK_SCALE)
        colours = {1: np.asarray(self.models["p1"].mean), -1: np.asarray(self.models["p2"].mean)}

        half = max(1, r // 2)

        def disc(x: float, y: float, like: np.ndarray | None = None) -> None:
            cx, cy = round(x * LOOK_SCALE), round(y * LOOK_SCALE)
            if like is not None:
                seen = lab[max(0, cy - half) : cy + half + 1, max(0, cx - half) : cx + half + 1].reshape(-1, 3)
                if len(seen) and float(np.linalg.norm(np.median(seen, axis=0) - like)) > DISC_COLOUR:
                    return
            cv2.circle(mask, (cx, cy), r, 1, -1)

        for index in range(24):
            now, then = points[index], reference.points[index]
            if now == then:
                continue
            same_side = now * then > 0
            for slot in range(min(abs(now), 15)):
                if same_side and slot < abs(then):
                    disc(*geometry.slot_center(index + 1, slot))
                else:
                    disc(*geometry.slot_center(index + 1, slot), colours[1 if now > 0 else -1])
            for slot in range(abs(now) if same_side else 0, min(abs(then), 15)):
                layer, k = slot_layer(slot)
                j = 2 * k + layer
                bare = None
                if self._empty_means is not None and j < STEPS and self._spot_known[index, j]:
                    bare = self._empty_means[index, j]
                disc(*geometry.slot_center(index + 1, slot), bare)
        for player in (1, 2):
            if bar[player - 1] != reference.bar[player - 1]:
                for slot in range(max(bar[player - 1], reference.bar[player - 1])):
                    disc(*geometry.bar_slot_center(player, slot))
        for x, y in self._cube_spots:
            disc(x / SCALE, y / SCALE)
        grow = 0.25 * geometry.checker_diameter * LOOK_SCALE
        for box, _, _ in dice or ():
            bx, by, bw, bh = (float(v) / SCALE * LOOK_SCALE for v in box[:4])
            top_left = (round(bx - grow), round(by - grow))
            cv2.rectangle(mask, top_left, (round(bx + bw + grow), round(by + bh + grow)), 1, -1)
        result: np.ndarray = mask.astype(bool)
        return result

    def hidden_points(self, feats: dict[str, np.ndarray], under: np.ndarray | None = None) -> set[int]:
        """Points with several samples unlike anything on this board (a hand over them).

        Samples under a die (``under``) are the die's, not foreign.
        """
        colour = feats["points_colour"]
        distances = [self.models["p1"].mahalanobis(colour), self.models["p2"].mahalanobis(colour)]
        for parity in (0, 1):
            model = self.models.get(f"empty{parity}")
            if model is not None:
                d = model.mahalanobis(colour)
                mask = np.asarray([(i + 1) % 2 == parity for i in range(24)])[:, None]
                distances.append(np.where(mask, d, np.inf))
        nearest = np.minimum.reduce(distances)
        outside = nearest > FOREIGN
        if under is not None:
            outside &= ~under
        # A hand is a solid patch: count the longest run of foreign samples along each point,
        # not all of them, since the seams between the checkers of a stack are scattered ones.
        run = np.zeros(outside.shape[0], dtype=np.int64)
        longest = np.zeros(outside.shape[0], dtype=np.int64)
        for column in outside.T:
            run = np.where(column, run + 1, 0)
            longest = np.maximum(longest, run)
        return {int(i) for i in np.flatnonzero(longest >= FOREIGN_SAMPLES)}

    def border_changes(self, image: np.ndarray, cube_end: str | None = None) -> np.ndarray:
        """Where the board's frame round the field (its left, top and bottom sides) has changed
        since calibration (a solid patch).

        A boolean mask over :func:`vision.features.border_band`'s small image; all ``False``
        without the calibration's frame.
        """
        mask = border_mask(cube_end)
        if not self.profile.border:
            return np.zeros_like(mask)
        now = self.band(image)
        before = self._calibration_band(now)
        return _solid_changes(now, before, mask, self._calibration_moves(before, cube_end))

    def band(self, image: np.ndarray, homography: np.ndarray | None = None) -> np.ndarray:
        """The frame's :func:`~vision.features.border_band`, made as the calibration's was
        (through ``homography``, by default the reader's)."""
        through = self.homography if homography is None else homography
        return border_band(image, through, mean=self.profile.border_mean).astype(np.float32)

    def _calibration_band(self, band: np.ndarray) -> np.ndarray:
        border = self.profile.border
        # Made once (the list of numbers is long): the profile's border is set at calibration.
        if self._border is None or self._border[0] is not border:
            self._border = (border, np.asarray(border, dtype=np.float32), {})
        return self._border[1].reshape(band.shape)

    def _calibration_moves(self, before: np.ndarray, cube_end: str | None) -> list[np.ndarray]:
        """:func:`_moved_band` of the calibration's band in :func:`border_mask`, made once."""
        assert self._border is not None
        moves = self._border[2]
        if cube_end not in moves:
            moves[cube_end] = _moved_band(before, border_mask(cube_end))
        return moves[cube_end]


def _moved_band(before: np.ndarray, mask: np.ndarray) -> list[np.ndarray]:
    """The pixels of ``before`` (a :func:`~vision.features.border_band` image) in ``mask`` as
    they are and moved by half a pixel every way: nine ``(n, 3)`` arrays."""
    # Moved half a pixel: the mean of a pixel and its neighbour (the edges repeated).
    ys, xs = np.nonzero(mask)
    padded = np.pad(before, ((1, 1), (1, 1), (0, 0)), mode="edge")
    around = [[padded[ys + 1 + dy, xs + 1 + dx] for dx in (-1, 0, 1)] for dy in (-1, 0, 1)]
    # Which of the three rows (then columns) round a pixel are averaged: up, none, down.
    halves = ((0, 1), (1,), (1, 2))
    moves = []
    for rows in halves:
        row = [sum(around[k][j] for k in rows) / len(rows) for j in range(3)]
        for columns in halves:
            moves.append(sum(row[j] for j in columns) / len(columns))
    return moves


def _solid_changes(
    now: np.ndarray, before: np.ndarray, mask: np.ndarray, moves: list[np.ndarray] | None = None
) -> np.ndarray:
    """Where ``now`` differs from ``before`` (two :func:`~vision.features.border_band` images)
    within ``mask``, as solid patches (``moves``: :func:`_moved_band` of ``before``, when
    already made).

    A pixel has changed when it differs from ``before`` as it is and as it would be moved by
    half a pixel every way: the camera nudged by a few pixels (or the profile's corners a
    little off) moves the frame's edges by part of a pixel of the band, and they would
    otherwise show as changed along their length (on 3D-rendered frames moved 4 image pixels,
    24 of 53 were taken for an arm over the frame)."""
    # A lamp turned up or down shifts every pixel alike; only what stands out counts.
    lit = now - np.median((now - before)[mask], axis=0)
    ys, xs = np.nonzero(mask)
    here = lit[ys, xs]
    nearest = np.full(len(ys), np.inf, np.float32)
    for moved in _moved_band(before, mask) if moves is None else moves:
        np.minimum(nearest, ((here - moved) ** 2).sum(axis=1), out=nearest)
    changed = np.zeros(mask.shape, bool)
    changed[ys, xs] = nearest > BORDER_CHANGE**2
    # Sensor noise and compression flip single pixels; an arm is a solid patch.
    solid = cv2.morphologyEx(changed.astype(np.uint8), cv2.MORPH_OPEN, np.ones((2, 2), np.uint8))
    result: np.ndarray = solid.astype(bool)
    return result


@dataclass(frozen=True)
class _Reference:
    """The field as it looked at a clear reading (:func:`vision.features.look_of`, in Lab),
    where its look is known, and what was read there (player 1's numbering; the bar)."""

    lab: np.ndarray
    known: np.ndarray
    points: tuple[int, ...]
    bar: tuple[int, int]

    @property
    def sample(self) -> np.ndarray:
        """Every seventh known spot (flat indexes): enough to tell how the light moved."""
        if "_sample" not in self.__dict__:
            object.__setattr__(self, "_sample", np.flatnonzero(self.known.reshape(-1))[::7])
        result: np.ndarray = self.__dict__["_sample"]
        return result

    @classmethod
    def of_look(cls, look: np.ndarray, points: tuple[int, ...], bar: tuple[int, int]) -> _Reference:
        """A clear reading's: its whole look is known."""
        lab = cv2.cvtColor(look, cv2.COLOR_BGR2LAB).astype(np.float32)
        return cls(lab, np.ones(lab.shape[:2], bool), points, bar)

    @classmethod
    def of_profile(cls, profile: Profile) -> _Reference | None:
        """The calibration's: its look (where known) and the position it showed; ``None`` for a
        profile made before it kept its look, or whose position cannot be read."""
        if profile.look is None:
            return None
        try:
            position = Position.from_id(profile.position) if profile.position else Position.STARTING
        except BackgammonError:
            return None
        points, bar, _ = position.to_absolute(1)
        colour = np.ascontiguousarray(profile.look[..., :3])
        lab = cv2.cvtColor(colour, cv2.COLOR_BGR2LAB).astype(np.float32)
        return cls(lab, profile.look[..., 3] > 0, tuple(points), bar)


def _changed_share(
    now: np.ndarray, before: np.ndarray, mask: np.ndarray, moves: list[np.ndarray] | None = None
) -> float:
    """The share of ``mask``'s pixels changed from ``before`` to ``now``, as solid patches."""
    return float(np.count_nonzero(_solid_changes(now, before, mask, moves))) / float(np.count_nonzero(mask))
