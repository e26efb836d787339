# SPDX-License-Identifier: MIT
"""The dice on a calibrated board: where they lie, their faces, and whether they lie flat.

:class:`DiceFinder` finds the dice for :class:`vision.reader.BoardReader`: it runs the dice
detector (:mod:`vision.dice`) on the rectified field at the one scale that suits this board's
dice, and again on other looks at the field for dice of rare colours; drops boxes of the wrong
size or where the cube lies; reads the faces on crops warped straight from the frame; tells a
checker's glint from a 1; and, reading with memory, looks again only where the field changed.
It also says which point samples (:meth:`DiceFinder.under_dice`) and strips
(:meth:`DiceFinder.strips_under`) a die covers, and gives each die in the frame's terms, flat or
cocked (:meth:`DiceFinder.board_die`).

Kept apart from :mod:`vision.dice`, which reads dice in any photo without a calibration (the
networks themselves), and from the reader, which reads the points: this is what knowing the
board (its geometry, its checkers' colours, its dice's size, the last read) adds to finding
dice on it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from vision.dice import CLS_MARGIN, CLS_SIZE, DET_CONTEXT, NOT_A_DIE, detect, face_probabilities
from vision.features import SCALE, FieldSampler
from vision.geometry import FIELD_W, SLOTS, slot_layer
from vision.profile import Profile
from vision.reading import DieOnBoard
from vision.strips import STRIPS, field_strip_quads
from vision.tiles import TILE, tile_span, touches

#: The dice's size (a side over a checker's diameter) the constants below were tuned for: the
#: 2D renderer's. Other sizes scale them (the profile's ``die_fraction``).
TUNED_DIE_FRACTION = 0.65
#: The detector sees the rectified field at the scale that makes half a checker this many
#: pixels, for dice of the renderer's size, 0.65 of a checker; smaller dice (the profile's
#: ``die_fraction``) are seen bigger by as much, so that a die has as many pixels. A die turned
#: 45 degrees covers 1.4 times its side, with its shadow more: from about 10 to 26 pixels here,
#: inside the 8 to 32 the detector finds at one level. At 16, the renderer's dice were at the
#: top of that range, where the detector missed one in six of them (black dice showing few
#: pips the most) and boxed others by a part.
DIE_PIXELS = 12.0
#: The sides a die's box may have, in checker diameters, for the renderer's dice (the lower
#: bound shrinks with the profile's ``die_fraction``, the upper grows with a bigger one): real
#: dice are 0.4 to 0.5 of a checker (the renderer draws 0.65), and the detector's box may take
#: in the die's sides and its shadow (a dark die's shadow looks like more die), up to about 1.3
#: on rendered boards. Checkers' boxes (1.0 to 1.2) pass too: the classifier tells them from
#: dice (see :data:`DIE_SPAN`).
DIE_SIZE = (0.3, 1.4)
#: The most a die lying flat covers from above, in checker diameters: its side (the renderer's
#: 0.65) turned 45 degrees, about 0.92. The classifier's crop is this (and its margin) round
#: the box's centre, whatever the box's size: the detector's box on a die is often only a part
#: of it (a few pips), and a crop that cuts the die misreads it (a 5 without its outer pips is
#: a 4, a 3 a 2); or the die with its shadow, or a checker, and a crop that takes in the
#: checker round a die-like spot reads a die in it. For smaller dice (the profile's
#: ``die_fraction``) it shrinks with them.
DIE_SPAN = 0.9
#: A candidate whose crop, read once upright, is "not a die" with this probability is dropped
#: before the crop is read the four ways that give a confidence: most candidates are checkers,
#: and the one reading sorts out most (86% of those on rendered boards) at a quarter of the
#: cost. Of 578 boxes on dice on rendered boards, none scored above 0.82 read upright.
NOT_A_DIE_AT_ONCE = 0.9
#: Of the boxes that pass it, at most this many (the likeliest dice first) are read in full.
MOST_READ = 4
#: The boxes the detector is surest of, this many, are read first; the rest only when these
#: hold fewer than two dice, each read with :data:`SECOND_LOOK` or more (most boxes are
#: checkers, and the dice are mostly among the first).
FIRST_READ = 6
#: Two dice among the first boxes read with this much are the roll: the rest are not read (on
#: rendered boards the rest then held no die in 10 of 11 frames, at half the dice's time).
SECOND_LOOK = 0.6
#: A box under this share of :data:`DIE_SPAN` may be a spot on a checker's rim or between two
#: checkers, which the crop of a whole die's span round it shows as a die with a checker's
#: curve through it, and the classifier now and then reads as one: it must also pass the
#: :data:`NOT_A_DIE_AT_ONCE` test cut to the box (where it is a bit of a rim). A die's part
#: passes it (its pips), as do small real dice.
SMALL_BOX = 2 / 3
#: A die's top face seen from above is square; one leaning on something shows it foreshortened.
#: Below this ratio of its sides the die is cocked; up to FLAT_SURE it is a close call, and the
#: die's confidence falls. Seen at a slant, a flat die's side faces may join its top face in
#: the picture: the threshold is low, so that a flat die is seldom called cocked (a re-roll for
#: nothing), and a cocked one not called is at least not read flat with confidence.
FLAT_RATIO = 0.65
FLAT_SURE = 0.9
#: The confidence left to a die whose top face cannot be made out (a white die on a white
#: board, a black one on dark wood): most thrown dice land flat, but a reading no better than
#: this is never sure (below :data:`vision.dice.CONFIDENT`, 0.9), only good enough to go by
#: (above the referee's floor, 0.6) when the face itself reads well. It was a coin's 0.5, which
#: sent every roll on such a board to the players.
UNSEEN_FLAT = 0.8
#: How far (Lab) the top face's colour strays across it; the side faces, turned from the lamp,
#: lie further from it.
FACE_SPREAD = 16.0
#: Reading with memory, the detector looks for new dice only where the field changed (and
#: round the dice it was unsure of): elsewhere they would have been seen before. When the parts
#: it would look at, with the room round them it needs, take in more than this share of the
#: field, it looks at the whole.
LOOK_WHOLE = 0.6
#: A die read with less confidence than this (what the table needs to record a roll) is read
#: again in every frame, though nothing changed round it: a fresh look may read it surely.
KEEP_DIE = 0.6
#: What a die's shadow leaves of the light on the ground under it (about what the renderer's
#: deepest shadows leave; real ones under a lamp are alike).
SHADOW_DEPTH = 0.5
#: A 1 read with its middle this close to the middle of a checker the reader counts (checker
#: diameters) is that checker's glint or centre mark, not a die: a glossy checker under a lamp
#: shows one bright dot in a dark disc, which reads as a 1 with confidence. A die leaning on a
#: checker lies farther off (0.38 at the least on 3D-rendered boards, against 0.21 at the most
#: for the glints read as dice there); any other face read there is a die resting on the
#: checker, and is called cocked.
ON_CHECKER = 0.3
#: A die is painted out of the strips it lies on over a circle this many times its box's
#: half-diagonal (its sides and its shadow reach a little past the box).
DIE_PAINT = 1.2
#: A die whose middle lies this close to a checker's (checker diameters) lies on the checker:
#: cocked. A 1 read there, farther off than :data:`ON_CHECKER`, with the checker's own colour
#: round its pip (see :data:`GLINT_COLOUR`) is a glint off the checker's rim or bevel: a lamp
#: lights a glossy checker's top off its middle when the camera looks at a slant (0.33 to 0.40
#: of a checker off on 3D-rendered boards).
CHECKER_TOP = 0.45
#: The squared Mahalanobis distance, from the calibration's model of a side's checkers, within
#: which the colour round a 1 read on one of that side's checkers is the checker's own.
GLINT_COLOUR = 25.0
#: The ring round a 1's pip whose colour is looked at (checker diameters): past a pip's edge
#: (a real die's pip is about 0.05 across), inside a die's face (half its side, 0.2 to 0.25).
GLINT_RING = (0.1, 0.2)


@dataclass(frozen=True)
class _Checkers:
    """The checkers a read counts, for telling their glints from dice: each one's middle on the
    half-size field ``(n, 2)``, its side ``(n,)`` (0: player 1's), and the field itself."""

    middles: np.ndarray
    sides: np.ndarray
    field: np.ndarray


class DiceFinder:
    """Find the dice on one board's frames (see the module's docstring).

    :param profile: the board and camera's profile (its dice's size: ``die_fraction``).
    :param sampler: the reader's sampler of the points (where each checker lies on the field).
    :param homography: from field coordinates to image pixels; the reader sets it anew when it
        follows a moved board.
    :param cube_spots: where the cube or the track counter may lie, on the half-size field: no
        die is read there.
    """

    def __init__(
        self,
        profile: Profile,
        sampler: FieldSampler,
        homography: np.ndarray,
        cube_spots: list[tuple[float, float]],
    ) -> None:
        self.profile = profile
        self.sampler = sampler
        self.models = profile.models
        self.homography = homography
        self._cube_spots = cube_spots
        self._die_scale = profile.die_fraction / TUNED_DIE_FRACTION
        self._die_span = DIE_SPAN * self._die_scale * self.sampler.d
        # Which looks (see :meth:`find_dice`) found the dice of the last read.
        self._dice_looks: set[str] = set()

    def checkers(self, points: list[int], field_image: np.ndarray) -> _Checkers:
        """The checkers of ``points`` (as :attr:`BoardReading.points`) on ``field_image``, for
        telling their glints from dice (see :meth:`find_dice`)."""
        sides = np.repeat([0 if c > 0 else 1 for c in points], [abs(c) for c in points])
        return _Checkers(self.checker_middles(points), sides, field_image)

    def _die_crop(self, image: np.ndarray, box: np.ndarray, *, tight: bool = False) -> np.ndarray:
        """The classifier's crop of a die found on the half-size field, taken from the frame.

        The frame has more pixels on a die than the half-size field: pips a pixel or two wide
        there are clear here. The crop is warped straight out of the frame, square on the field:
        a die's span (:data:`DIE_SPAN` for the profile's dice) across round the box's centre, or
        (``tight``) the box's longer side.
        """
        x, y, w, h = (float(v) / SCALE for v in box[:4])
        side = (max(w, h) if tight else self._die_span / SCALE) * CLS_MARGIN
        step = side / CLS_SIZE
        left, top = x + w / 2 - side / 2 + step / 2, y + h / 2 - side / 2 + step / 2
        crop_to_field = np.array([[step, 0.0, left], [0.0, step, top], [0.0, 0.0, 1.0]])
        return cv2.warpPerspective(
            image,
            self.homography @ crop_to_field,
            (CLS_SIZE, CLS_SIZE),
            flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
            borderMode=cv2.BORDER_REPLICATE,
        )

    def find_dice(
        self,
        field_image: np.ndarray,
        image: np.ndarray,
        changed: np.ndarray | None = None,
        checkers: _Checkers | None = None,
        *,
        last: list[tuple[np.ndarray, int, float]] | None = None,
        every_look: bool = True,
    ) -> list[tuple[np.ndarray, int, float]]:
        """Dice on the rectified field: ``(box x, y, w, h in its pixels, face, confidence)``.

        The detector runs at the one scale that suits dice on this board; boxes of the wrong
        size for a die, or where the cube or track counter lies, are not dice; the classifier
        drops what is more likely no die than any face. The detector sees grey: while fewer
        than two dice are found, it looks again on the red-green axis, where a red die on a
        green cloth (the cloth's grey) stands out, then on the grey turned negative, where a
        black die with white pips looks like the white dice it mostly learnt from. A roll is two
        dice: of more, the two read with the most confidence. A 1 read in the middle of one of
        the ``checkers`` counted is its glint or centre mark, not a die (see :data:`ON_CHECKER`
        and :data:`CHECKER_TOP`). Boxes whose centres lie closer than half a die's span are one die
        (a part of it boxed besides the whole, or the same die seen again on another view): the
        most confident reading of it stands for it.

        With ``changed`` (see :meth:`vision.reader.BoardReader._changes`) and the ``last`` read's
        dice: a roll is two dice, so two dice of the last read that nothing changed round still
        lie there, and the changes are elsewhere (the checkers being moved). Otherwise the field
        is looked over whole: the detector weighs a wide neighbourhood round each spot, and a
        part of the field read alone is not read as the whole field reads it. Without
        ``every_look`` (a hand over the field), the other looks are taken only where they found
        the last read's dice.
        """
        gone = False
        kept: list[tuple[np.ndarray, int, float]] = []
        look = None if changed is None or last is None else changed.copy()
        if changed is not None and last:
            margin = 0.5 * self._die_span
            kept = [die for die in last if die[2] >= KEEP_DIE and not touches(changed, _grown(die[0], margin))]
            if len(kept) >= 2:
                return kept
            assert look is not None
            for box, _, confidence in last:
                if confidence < KEEP_DIE:
                    look[tile_span(changed, _grown(box, self._die_span))] = True
            # Nothing changed but where the last dice lay: they were picked up (or turned over,
            # or a checker moved beside them). Dice found there again are found by the looks
            # that found them before; the other looks, for dice of rare colours, are spared.
            # A die's sides and shadow reach past its box, and the change is grown by a tile.
            reach = self._die_span + TILE
            elsewhere = changed.copy()
            for box, _, _ in last:
                elsewhere[tile_span(changed, _grown(box, reach))] = False
            # Each of them changed where it lay itself; one that did not is there still (the
            # change beside it a checker's), and is looked for every way.
            moved = all(touches(changed, _grown(box, 0.0)) for box, _, _ in last)
            gone = moved and not elsewhere.any()
        scale = DIE_PIXELS / (0.5 * self.sampler.d * self._die_scale)
        seen, scale = self._detector_field(field_image, image, scale)
        apart = 0.5 * self._die_span
        regions = None if look is None else self._look_regions(look, seen, scale)
        new = self._read_boxes(image, self._detect(seen, scale, regions), checkers)
        looks = {id(die): "grey" for die in new}
        found = self._distinct(kept + new, apart)
        for view in (_red_green, _negative):
            if len(found) >= 2:
                break
            if (gone or not every_look) and view.__name__ not in self._dice_looks:
                continue
            more = self._detect(view(seen), scale, regions)
            if found and len(more):
                # Only where an earlier look found no die.
                more = more[_centre_distance(more, np.stack([f[0] for f in found])).min(axis=1) >= apart]
            new = self._read_boxes(image, more, checkers)
            looks.update((id(die), view.__name__) for die in new)
            found = self._distinct(found + new, apart)
        # A die kept from the last read was found by one of the looks that found the dice then.
        self._dice_looks = set().union(
            *({looks[id(die)]} if id(die) in looks else self._dice_looks for die in found[:2])
        )
        return found[:2]

    def checker_middles(self, points: list[int], *, bottom_only: bool = False) -> np.ndarray:
        """Where the middles of the checkers of ``points`` (as :attr:`BoardReading.points`) lie
        on the half-size field, ``(n, 2)``: every checker of each pile, or with
        ``bottom_only`` those lying on the board (the first five)."""
        middles = [
            self.sampler.points[index, 2 * k + layer]
            for index, count in enumerate(points)
            for layer, k in (slot_layer(slot) for slot in range(min(abs(count), SLOTS) if bottom_only else abs(count)))
        ]
        return np.asarray(middles, dtype=np.float32).reshape(-1, 2)

    def _detector_field(self, field_image: np.ndarray, image: np.ndarray, scale: float) -> tuple[np.ndarray, float]:
        """The field the detector looks at, and the scale to run it at on that field.

        Up to the half-size field's own scale, the half-size field. Small dice far from the
        camera want more: the field is then warped again from the frame at the scale they want,
        not the half-size field blown up, which has lost some of their pips' sharpness (dice 0.3
        of a checker on rendered boards: 84% read right, against 81%).
        """
        if scale <= 1.0:
            return field_image, scale
        h, w = field_image.shape[:2]
        size = (round(w * scale), round(h * scale))
        to_field = np.diag([SCALE * scale, SCALE * scale, 1.0]) @ np.linalg.inv(self.homography)
        return cv2.warpPerspective(image, to_field, size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE), 1.0

    def _look_regions(
        self, look: np.ndarray, seen: np.ndarray, scale: float
    ) -> list[tuple[float, float, float, float]] | None:
        """The parts of ``seen`` to look for dice in: those of the tiles in ``look``, one per
        group of tiles whose views overlap (none when no tile is); ``None`` (look at the whole
        field) when the views would together take in most of it."""
        ratio = seen.shape[1] / round(FIELD_W * SCALE)
        step = TILE * ratio
        reach = DET_CONTEXT / scale
        count, _, stats, _ = cv2.connectedComponentsWithStats(look.astype(np.uint8), connectivity=8)
        boxes = [
            [x * step - reach, y * step - reach, (x + w) * step + reach, (y + h) * step + reach]
            for x, y, w, h, _ in stats[1:count]
        ]
        merged = True
        while merged:
            merged = False
            for i in range(len(boxes)):
                for j in range(i + 1, len(boxes)):
                    a, b = boxes[i], boxes[j]
                    if a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]:
                        boxes[i] = [min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3])]
                        del boxes[j]
                        merged = True
                        break
                if merged:
                    break
        height, width = seen.shape[:2]
        area = sum((min(x1, width) - max(x0, 0)) * (min(y1, height) - max(y0, 0)) for x0, y0, x1, y1 in boxes)
        if area > LOOK_WHOLE * width * height:
            return None
        return [(x0 + reach, y0 + reach, x1 - reach, y1 - reach) for x0, y0, x1, y1 in boxes]

    def _detect(
        self, seen: np.ndarray, scale: float, regions: list[tuple[float, float, float, float]] | None = None
    ) -> np.ndarray:
        """The detector's boxes on ``seen`` (see :meth:`_detector_field`) in half-size field
        pixels, centred in ``regions`` of ``seen`` (by default anywhere)."""
        boxes = detect(seen, scales=[scale], regions=regions)
        ratio = seen.shape[1] / round(FIELD_W * SCALE)
        if ratio != 1.0 and len(boxes):
            boxes[:, :4] /= ratio
        return boxes

    @staticmethod
    def _distinct(found: list[tuple[np.ndarray, int, float]], apart: float) -> list[tuple[np.ndarray, int, float]]:
        """Readings one per die, most confident first: of those closer than ``apart``, the best."""
        kept: list[tuple[np.ndarray, int, float]] = []
        for reading in sorted(found, key=lambda f: -f[2]):
            if not kept or _centre_distance(reading[0][None], np.stack([k[0] for k in kept])).min() >= apart:
                kept.append(reading)
        return kept

    def _read_boxes(
        self, image: np.ndarray, boxes: np.ndarray, checkers: _Checkers | None = None
    ) -> list[tuple[np.ndarray, int, float]]:
        """The detector's boxes that can be dice, with the faces the classifier reads on them,
        less the 1s that are glints on the ``checkers`` (see :meth:`_not_glints`).

        The boxes the detector is surest of are read first; the rest only when those do not
        give two dice read with confidence (a roll is two dice).
        """
        d = self.sampler.d
        kept = []
        for box in boxes[:, :4]:
            x, y, w, h = (float(v) for v in box)
            cx, cy = x + w / 2, y + h / 2
            if not DIE_SIZE[0] * self._die_scale * d <= max(w, h) <= DIE_SIZE[1] * max(1.0, self._die_scale) * d:
                continue
            if any(math.hypot(cx - sx, cy - sy) < 0.45 * d for sx, sy in self._cube_spots):
                continue
            kept.append(box)
        found = self._not_glints(self._read_candidates(image, kept[:FIRST_READ]), checkers)
        sure = [f for f in self._distinct(found, 0.5 * self._die_span) if f[2] >= SECOND_LOOK]
        if len(sure) < 2 and len(kept) > FIRST_READ:
            found += self._not_glints(self._read_candidates(image, kept[FIRST_READ:]), checkers)
        return found

    def _not_glints(
        self, found: list[tuple[np.ndarray, int, float]], checkers: _Checkers | None
    ) -> list[tuple[np.ndarray, int, float]]:
        """``found`` less the 1s that are glints on the ``checkers``: those whose middles lie
        within :data:`ON_CHECKER` of a checker's, and those within :data:`CHECKER_TOP` of one
        with that checker's colour round them."""
        if checkers is None or not len(checkers.middles):
            return found
        d = self.sampler.d
        kept = []
        for die in found:
            if die[1] == 1:
                x, y, w, h = (float(v) for v in die[0][:4])
                cx, cy = x + w / 2, y + h / 2
                apart = np.hypot(checkers.middles[:, 0] - cx, checkers.middles[:, 1] - cy)
                nearest = int(apart.argmin())
                if apart[nearest] < ON_CHECKER * d:
                    continue
                if apart[nearest] < CHECKER_TOP * d and self._checker_coloured(
                    checkers.field, (cx, cy), int(checkers.sides[nearest])
                ):
                    continue
            kept.append(die)
        return kept

    def _checker_coloured(self, field_image: np.ndarray, at: tuple[float, float], side: int) -> bool:
        """Whether what lies round a pip at ``at`` is of the colour of ``side``'s checkers: the
        median colour of a ring round it (:data:`GLINT_RING`), inside a die's face were it a
        die's, inside the checker's top were it a glint."""
        inner, outer = (share * self.sampler.d for share in GLINT_RING)
        x, y = at
        r = math.ceil(outer)
        x0, y0 = max(0, round(x) - r), max(0, round(y) - r)
        patch = field_image[y0 : round(y) + r + 1, x0 : round(x) + r + 1]
        if not patch.size:
            return False
        ys, xs = np.mgrid[y0 : y0 + patch.shape[0], x0 : x0 + patch.shape[1]]
        apart = np.hypot(xs - x, ys - y)
        ring = patch[(apart >= inner) & (apart <= outer)]
        if not len(ring):
            return False
        colour = np.median(cv2.cvtColor(ring[None], cv2.COLOR_BGR2LAB)[0].astype(np.float32), axis=0)
        return bool(self.models[f"p{side + 1}"].mahalanobis(colour) <= GLINT_COLOUR)

    def _read_candidates(self, image: np.ndarray, kept: list[np.ndarray]) -> list[tuple[np.ndarray, int, float]]:
        """Read the faces on boxes that can be dice (see :meth:`_read_boxes`)."""
        if not kept:
            return []
        crops = np.stack([self._die_crop(image, b) for b in kept])
        upright = face_probabilities(crops, views=1)
        not_die = upright[:, NOT_A_DIE]
        likely = not_die < NOT_A_DIE_AT_ONCE
        small = [i for i, b in enumerate(kept) if likely[i] and max(b[2], b[3]) < SMALL_BOX * self._die_span]
        if small:
            tight = np.stack([self._die_crop(image, kept[i], tight=True) for i in small])
            likely[small] &= face_probabilities(tight, views=1)[:, NOT_A_DIE] < NOT_A_DIE_AT_ONCE
        if not likely.any():
            return []
        if likely.sum() > MOST_READ:
            # Each box read four ways costs as much as four boxes: only the likeliest go on.
            order = np.argsort(np.where(likely, not_die, np.inf), kind="stable")
            likely[:] = False
            likely[order[:MOST_READ]] = True
        probs = face_probabilities(crops[likely], upright=upright[likely])
        found = []
        for box, p in zip([b for b, keep in zip(kept, likely, strict=True) if keep], probs, strict=True):
            face = int(np.argmax(p[:NOT_A_DIE]))
            if p[NOT_A_DIE] < p[face]:
                found.append((box, face + 1, float(p[face])))
        return found

    def under_dice(self, dice: list[tuple[np.ndarray, int, float]]) -> np.ndarray:
        """Which point samples (24 x STEPS) a die covers."""
        under = np.zeros(self.sampler.points.shape[:2], dtype=bool)
        reach = self.sampler.radius
        px, py = self.sampler.points[..., 0], self.sampler.points[..., 1]
        for (x, y, w, h), _, _ in dice:
            under |= (px > x - reach) & (px < x + w + reach) & (py > y - reach) & (py < y + h + reach)
        return under

    def board_die(
        self, field_image: np.ndarray, box: np.ndarray, value: int, confidence: float, points: list[int]
    ) -> DieOnBoard:
        """A found die in the frame's terms: centre in image pixels, half, flat, confidence.

        A die is cocked when its top face is not square from above (it leans on something) or
        when it lies where a checker stands (it rests on the checker).
        """
        x, y, w, h = (float(v) for v in box)
        cx, cy = x + w / 2, y + h / 2
        ratio = _top_face_ratio(field_image, (x, y, w, h), self._die_span)
        flat = ratio is None or ratio >= FLAT_RATIO
        if ratio is None:
            # Whether it lies flat cannot be seen: the reading is as sure as dice land flat.
            confidence *= UNSEEN_FLAT
        elif flat and ratio < FLAT_SURE:
            confidence *= 0.5 + 0.5 * (ratio - FLAT_RATIO) / (FLAT_SURE - FLAT_RATIO)
        if _near_middle(self.checker_middles(points, bottom_only=True), box, CHECKER_TOP * self.sampler.d):
            flat = False
        fx, fy = cx / SCALE, cy / SCALE
        ix, iy, iw = self.homography @ np.array([fx, fy, 1.0])
        half = "left" if fx < FIELD_W / 2 else "right"
        return DieOnBoard(
            value=value, center=(float(ix / iw), float(iy / iw)), flat=flat, half=half, confidence=confidence
        )

    def die_in_image(self, box: np.ndarray) -> tuple[float, float, float]:
        """A die's box on the half-size field as a circle in the image: centre and radius, the
        radius taking in its sides and shadow."""
        x, y, w, h = (float(v) / SCALE for v in box[:4])
        corners = np.array([[[x, y], [x + w, y], [x + w, y + h], [x, y + h]]], np.float64)
        at = cv2.perspectiveTransform(corners, self.homography)[0]
        centre = at.mean(axis=0)
        radius = float(np.linalg.norm(at - centre, axis=1).max()) * DIE_PAINT
        return float(centre[0]), float(centre[1]), radius

    def strips_under(self, dice: tuple[DieOnBoard, ...]) -> list[bool]:
        """Which strips a die lies on (or near: half a checker round its centre)."""
        out = [False] * STRIPS
        if not dice:
            return out
        inverse = np.linalg.inv(self.homography)
        margin = 0.5 * self.profile.geometry.checker_diameter
        quads = field_strip_quads(self.profile.geometry)
        for die in dice:
            x, y, w = inverse @ np.array([die.center[0], die.center[1], 1.0])
            fx, fy = x / w, y / w
            for index, quad in enumerate(quads):
                x0, y0 = quad.min(axis=0) - margin
                x1, y1 = quad.max(axis=0) + margin
                if x0 <= fx <= x1 and y0 <= fy <= y1:
                    out[index] = True
        return out


def _grown(box: np.ndarray, margin: float) -> tuple[float, float, float, float]:
    """A die's box ``x, y, w, h`` as ``(x0, y0, x1, y1)``, ``margin`` wider on every side."""
    x, y, w, h = (float(v) for v in box[:4])
    return x - margin, y - margin, x + w + margin, y + h + margin


def _near_middle(middles: np.ndarray, box: np.ndarray, reach: float) -> bool:
    """Whether the centre of a box ``x, y, w, h`` lies within ``reach`` of one of ``middles``."""
    if not len(middles):
        return False
    x, y, w, h = (float(v) for v in box[:4])
    return bool(np.hypot(middles[:, 0] - (x + w / 2), middles[:, 1] - (y + h / 2)).min() < reach)


def _centre_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pairwise distances between the centres of ``(n, 4+)`` and ``(m, 4+)`` boxes x, y, w, h."""
    ca = a[:, :2] + a[:, 2:4] / 2
    cb = b[:, :2] + b[:, 2:4] / 2
    return np.asarray(np.hypot(*(ca[:, None, :] - cb[None, :, :]).transpose(2, 0, 1)))


def _red_green(field_image: np.ndarray) -> np.ndarray:
    """The field on Lab's red-green axis, stretched to full range, as a BGR picture."""
    redgreen = cv2.cvtColor(field_image, cv2.COLOR_BGR2LAB)[:, :, 1]
    redgreen = cv2.normalize(redgreen, None, 0, 255, cv2.NORM_MINMAX)
    return cv2.cvtColor(redgreen, cv2.COLOR_GRAY2BGR)


def _negative(field_image: np.ndarray) -> np.ndarray:
    """The field's negative: dark dice with light pips look like light dice with dark pips."""
    return 255 - field_image


def _top_face_ratio(
    field_image: np.ndarray, box: tuple[float, float, float, float], span: float | None = None
) -> float | None:
    """The ratio of the shorter to the longer side of a die's top face, seen from above.

    The top face is what has the die's colour (taken in the middle of its box, where the pips
    are few against the body) connected to the middle, cut from the board round it at half the
    colour distance between the two, its pips filled in and anything thin cut off. A die leaning
    on something shows its top face foreshortened, and a side face in its shadow. ``None`` when
    the die cannot be told from what lies round it (a white die on a white board or touching a
    white checker) or from its shadow on it (a dark die on dark wood). ``span``: the most a die
    covers on the field (pixels), if known.
    """
    x, y, w, h = box
    grow = 0.3 * max(w, h)
    x0, y0 = max(0, int(x - grow)), max(0, int(y - grow))
    x1 = min(field_image.shape[1], math.ceil(x + w + grow))
    y1 = min(field_image.shape[0], math.ceil(y + h + grow))
    bgr = field_image[y0:y1, x0:x1]
    crop = cv2.cvtColor(bgr, cv2.COLOR_BGR2LAB).astype(np.float32)
    if min(crop.shape[:2]) < 6:
        return None
    cx, cy = x + w / 2 - x0, y + h / 2 - y0
    r = max(1, round(0.25 * min(w, h)))
    core = crop[max(0, round(cy) - r) : round(cy) + r + 1, max(0, round(cx) - r) : round(cx) + r + 1]
    if core.size == 0:
        return None
    body = np.median(core.reshape(-1, 3), axis=0)
    rim = np.concatenate(
        [crop[:2].reshape(-1, 3), crop[-2:].reshape(-1, 3), crop[:, :2].reshape(-1, 3), crop[:, -2:].reshape(-1, 3)]
    )
    around = np.median(rim, axis=0)
    gap = float(np.linalg.norm(body - around))
    if gap < 25.0:
        return None
    spread = min(0.5 * gap, FACE_SPREAD)
    # The ground round the die in the die's own shadow: when that has the die's colour (a dark
    # die on dark wood), the shadow joins the top face and draws it out into an oblong as a
    # leaning die's side face would.
    rim_bgr = np.concatenate(
        [bgr[:2].reshape(-1, 3), bgr[-2:].reshape(-1, 3), bgr[:, :2].reshape(-1, 3), bgr[:, -2:].reshape(-1, 3)]
    )
    shade = np.clip(np.median(rim_bgr, axis=0) * SHADOW_DEPTH, 0, 255).astype(np.uint8)[None, None]
    if float(np.linalg.norm(cv2.cvtColor(shade, cv2.COLOR_BGR2LAB)[0, 0].astype(np.float32) - body)) < spread:
        return None
    near = (np.sqrt(((crop - body) ** 2).sum(axis=2)) < spread).astype(np.uint8)
    side = max(w, h)

    def disc(share: float) -> np.ndarray:
        k = max(3, round(share * side) | 1)
        return cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k))

    # Pips filled in; then whatever of the die's colour is narrower than a good part of a die
    # (the tip of a light point it lies on, a checker's rim) cut away.
    near = cv2.morphologyEx(near, cv2.MORPH_CLOSE, disc(0.3))
    near = cv2.morphologyEx(near, cv2.MORPH_OPEN, disc(0.3))
    count, labels = cv2.connectedComponents(near)
    # The middle may be a pip (faces 1, 3, 5): the face is the commonest part round it.
    middle = labels[max(0, round(cy) - r) : round(cy) + r + 1, max(0, round(cx) - r) : round(cx) + r + 1]
    votes = np.bincount(middle.ravel(), minlength=count)
    votes[0] = 0
    if count < 2 or votes.max() == 0:
        return None
    mine = labels == int(votes.argmax())
    # Only what lies in the die's box, and within a die's span of its middle, counts: a light
    # point or checker it touches runs on beyond it (and the box may take in its shadow).
    bx0, by0 = max(0, round(x - x0 - 0.05 * w)), max(0, round(y - y0 - 0.05 * h))
    bx1, by1 = round(x - x0 + 1.05 * w), round(y - y0 + 1.05 * h)
    if span is not None:
        bx0, by0 = max(bx0, round(cx - span / 2)), max(by0, round(cy - span / 2))
        bx1, by1 = min(bx1, round(cx + span / 2)), min(by1, round(cy + span / 2))
    inside = np.zeros_like(mine)
    inside[by0:by1, bx0:bx1] = True
    ys, xs = np.nonzero(mine & inside)
    if len(xs) < 12:
        return None
    (_, _), (a, b), _ = cv2.minAreaRect(np.stack([xs, ys], axis=1).astype(np.float32))
    return float(min(a, b) / max(a, b, 1e-6))
