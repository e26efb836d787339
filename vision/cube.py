# SPDX-License-Identifier: MIT
"""The doubling cube or the doubling-track counter, read from the rectified field.

The cube lies in the middle of the bar while centred and at its owner's end of the bar once
taken (:mod:`vision.geometry`). At each of those three places the reader looks for a face
showing 2, 4, 8, 16, 32 or 64 (a centred cube shows 64 and means 1), by matching the printed
number, turned any of four ways, against templates. A board with a doubling track instead has a
row of circles along the bar and one red counter: the circle it sits on is the value, its side
the owner.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

import cv2
import numpy as np

from vision.features import SCALE
from vision.geometry import TRACK_VALUES, FieldGeometry

FACES = (2, 4, 8, 16, 32, 64)
#: Normalised correlation a number must reach to count as seen.
MATCH = 0.55
#: The numbers are matched at most this many pixels across (the crops shrunk to suit): the
#: correlation's cost grows with the pixels matched, and a number this size is still read.
TEMPLATE_SIDE = 20
#: A cube's face is what lies within this many grey levels of a seed on it, or failing that
#: within this distance of its colour (Lab): see ``_face_here``.
FACE_LEVELS = 28
FACE_COLOUR = 16.0
#: The most confidence an owned cube read at 64 gets.
OWNED_64 = 0.5
#: How much redder than the track's other circles the counter must be (Lab a*).
COUNTER_RED = 18.0


@dataclass(frozen=True, slots=True)
class CubeFound:
    """The cube's value (1 when centred), owner (1, 2 or ``None``) and confidence."""

    value: int
    owner: int | None
    confidence: float


@lru_cache(maxsize=32)
def _templates(size: int) -> dict[int, np.ndarray]:
    """The six numbers as ink masks ``size`` pixels square, upright (the crops are turned)."""
    out: dict[int, np.ndarray] = {}
    for value in FACES:
        text = str(value)
        font = cv2.FONT_HERSHEY_DUPLEX
        big = 4
        n = size * big
        canvas = np.zeros((n, n), np.uint8)
        thick = max(1, int(0.09 * n))
        (tw, th), _ = cv2.getTextSize(text, font, 1.0, thick)
        scale = 0.62 * n / max(tw, th * 1.2)
        (tw, th), _ = cv2.getTextSize(text, font, scale, thick)
        cv2.putText(canvas, text, ((n - tw) // 2, (n + th) // 2), font, scale, 255, thick, cv2.LINE_AA)
        small = cv2.resize(canvas, (size, size), interpolation=cv2.INTER_AREA)
        out[value] = small
    return out


def _median(values: np.ndarray) -> float:
    """``np.median`` of a small array, without its overhead (the cube's patches are small and
    many: NumPy's median costs ten times the sort it makes)."""
    flat = np.sort(values, axis=None)
    n = flat.size
    return (float(flat[(n - 1) // 2]) + float(flat[n // 2])) / 2


def _median_rows(rows: np.ndarray) -> np.ndarray:
    """``np.median(rows, axis=0)`` of a small ``(n, channels)`` array (see :func:`_median`)."""
    ordered = np.sort(rows, axis=0)
    n = len(ordered)
    result: np.ndarray = (ordered[(n - 1) // 2] + ordered[n // 2]) / 2
    return result


def _ink(crop: np.ndarray) -> np.ndarray:
    """The print on the face as a bright mask, dark print on a light cube or light on dark.

    The face's own level is the most common grey in the middle of the crop; the print is what
    departs from it, on the side (darker or lighter) where most of the departure is.
    """
    grey = (cv2.cvtColor(crop, cv2.COLOR_BGR2GRAY) if crop.ndim == 3 else crop).astype(np.float32)
    h, w = grey.shape
    middle = grey[h // 4 : 3 * h // 4, w // 4 : 3 * w // 4]
    face = _median(middle)
    darker = np.clip(face - grey, 0, 255)
    lighter = np.clip(grey - face, 0, 255)
    ink = (
        darker
        if darker[h // 4 : 3 * h // 4, w // 4 : 3 * w // 4].sum()
        >= lighter[h // 4 : 3 * h // 4, w // 4 : 3 * w // 4].sum()
        else lighter
    )
    return ink.astype(np.uint8)


class _Place(NamedTuple):
    """One place the cube may lie: its owner, the crop its number is read from, whether a
    cube's face was found there, and whether at the spot itself."""

    owner: int | None
    crop: np.ndarray
    shaped: bool
    on_spot: bool


def _face_here(crop: np.ndarray, side: float) -> tuple[float, float, bool] | None:
    """Where, in the crop, a square face about ``side`` pixels across stands apart from what
    is round it (a cube on the bar, not the bar itself): its centre, and whether it was found
    at the crop's middle; ``None`` when there is none.

    The face is looked for at the crop's middle first, then round it a third of a side away
    each way: a cube is set down near its spot, not on it. At each seed, the face is what lies
    within :data:`FACE_LEVELS` grey levels of the seed's; failing that, within
    :data:`FACE_COLOUR` of its colour (a dark cube on dark wood is of the wood's grey).
    """
    grey = cv2.cvtColor(crop, cv2.COLOR_BGR2GRAY) if crop.ndim == 3 else crop
    lab: np.ndarray | None = None
    h, w = grey.shape
    step = side / 3
    turns = np.linspace(0, 2 * math.pi, 8, endpoint=False)
    seeds = [(0.0, 0.0)] + [(step * math.cos(a), step * math.sin(a)) for a in turns]
    patch = max(2, round(side / 6))
    tried: list[float] = []
    for dx, dy in seeds:
        sx, sy = round(w / 2 + dx), round(h / 2 + dy)
        around = (slice(max(0, sy - patch), sy + patch), slice(max(0, sx - patch), sx + patch))
        level = _median(grey[around])
        # A seed of about the level of one tried before is passed over: a face stands apart in
        # level from what is round it, so such a seed lies on the surroundings already tried.
        if any(abs(level - other) < 4 for other in tried):
            continue
        tried.append(level)
        face = cv2.inRange(grey, math.floor(level - FACE_LEVELS) + 1, math.ceil(level + FACE_LEVELS) - 1)
        found = _face_region(face, sx, sy, side)
        if found is None and crop.ndim == 3:
            if lab is None:
                lab = cv2.cvtColor(crop, cv2.COLOR_BGR2LAB).astype(np.float32)
            colour = _median_rows(lab[around].reshape(-1, 3))
            apart = lab - colour
            near = np.einsum("ijk,ijk->ij", apart, apart) < FACE_COLOUR**2
            found = _face_region(near.astype(np.uint8) * 255, sx, sy, side)
        if found is not None:
            return found[0], found[1], (dx, dy) == (0.0, 0.0)
    return None


def _face_region(face: np.ndarray, sx: int, sy: int, side: float) -> tuple[float, float] | None:
    """The centre of the region of ``face`` (a mask) at ``(sx, sy)`` when it is cube-shaped:
    about ``side`` across, filled, and stopping short of at least three sides of the crop."""
    h, w = face.shape
    # Close the gaps the printed number leaves in the face.
    face = cv2.morphologyEx(face, cv2.MORPH_CLOSE, np.ones((5, 5), np.uint8))
    seed = (min(w - 1, sx), min(h - 1, sy))
    if not face[seed[1], seed[0]]:
        return None
    # The region round the seed alone (8-connected, as connected components are taken): it
    # is all that is weighed, and filling it is a fraction of labelling the whole crop.
    area, _, _, (x, y, bw, bh) = cv2.floodFill(face, None, seed, 128, 0, 0, 8)
    # The bar itself runs right across the crop; a cube stops short of at least three sides
    # (at its owner's end of the bar the field's edge may cut the crop on the fourth).
    open_sides = (x > 0) + (y > 0) + (x + bw < w) + (y + bh < h)
    sized = 0.55 * side <= bw <= 1.35 * side and 0.55 * side <= bh <= 1.35 * side
    if open_sides >= 3 and sized and area >= 0.55 * bw * bh:
        return x + bw / 2, y + bh / 2
    return None


def _matches(inks: list[np.ndarray], size: int) -> list[tuple[float, int, int]]:
    """How well each number matches each ink mask: ``(score, value, mask's index)`` for every
    number, at two sizes round ``size``, turned each of four ways.

    The masks are turned rather than the numbers, and stacked one above the other, so that each
    number is matched once over all of them (its score on each is the best over the windows that
    lie wholly in it): a normalised correlation's window sees only its own pixels, so this scores
    as matching each mask alone does, at a tenth of the calls."""
    pieces = []
    for index, ink in enumerate(inks):
        for k in range(4):
            pieces.append((index, np.ascontiguousarray(np.rot90(ink, -k))))
    width = max(piece.shape[1] for _, piece in pieces)
    stack = np.zeros((sum(piece.shape[0] for _, piece in pieces), width), np.uint8)
    tops = []
    top = 0
    for _, piece in pieces:
        stack[top : top + piece.shape[0], : piece.shape[1]] = piece
        tops.append(top)
        top += piece.shape[0]
    out = []
    for scale in (0.9, 1.1):
        n = max(10, round(size * scale))
        for value, template in _templates(n).items():
            result = cv2.matchTemplate(stack, template, cv2.TM_CCOEFF_NORMED)
            for (index, piece), y in zip(pieces, tops, strict=True):
                h, w = piece.shape
                if n >= h or n >= w:
                    continue
                out.append((float(result[y : y + h - n + 1, : w - n + 1].max()), value, index))
    return out


def read_cube(field_image: np.ndarray, geometry: FieldGeometry) -> CubeFound | None:
    """The cube in a half-size rectified field, or ``None`` when no number is seen."""
    d = geometry.checker_diameter * SCALE
    size = max(12, round(0.62 * d))
    best: tuple[float, int, int | None, bool] | None = None
    scores: list[float] = []
    places: list[_Place] = []
    for owner in (None, 1, 2):
        cx, cy = (v * SCALE for v in geometry.cube_center(owner))
        half, wide = round(0.6 * d), round(0.8 * d)
        # A number seen where no cube-shaped face stands out is doubtful, not ruled out: the
        # face test misses cubes close in colour to the bar. It needs room round the cube.
        x0, y0 = max(0, round(cx) - wide), max(0, round(cy) - wide)
        face = _face_here(field_image[y0 : round(cy) + wide, x0 : round(cx) + wide], 0.9 * d)
        if face is not None:
            # The number is read where the face is.
            cx, cy = x0 + face[0], y0 + face[1]
        crop = field_image[max(0, round(cy) - half) : round(cy) + half, max(0, round(cx) - half) : round(cx) + half]
        if crop.shape[0] < size + 2 or crop.shape[1] < size + 2:
            continue
        places.append(_Place(owner, crop, face is not None, face is not None and face[2]))
    # There is one cube: when exactly one place shows a face at its spot, only its number is
    # read. A face found beside a spot may be a checker's beside the bar: it is read where it
    # is, but rules out no other place.
    faces = [place for place in places if place.on_spot]
    read = faces if len(faces) == 1 else places
    if read:
        shrink = min(1.0, TEMPLATE_SIDE / size)
        inks = [_ink(place.crop) for place in read]
        if shrink < 1.0:
            inks = [cv2.resize(ink, None, fx=shrink, fy=shrink, interpolation=cv2.INTER_AREA) for ink in inks]
        for score, value, index in _matches(inks, max(1, round(size * shrink))):
            scores.append(score)
            if best is None or score > best[0]:
                best = (score, value, read[index].owner, read[index].shaped)
    if best is None or best[0] < MATCH:
        return None
    score, value, owner, shaped = best
    runner = sorted(scores)[-2] if len(scores) > 1 else 0.0
    confidence = float(np.clip((score - MATCH) / 0.3, 0, 1) * np.clip((score - runner) / 0.1 + 0.5, 0, 1))
    if not shaped:
        confidence *= 0.3
    if owner is None:
        # A centred cube shows 64 and stands for 1.
        return CubeFound(1, None, confidence if value == 64 else confidence * 0.5)
    if value == 64:
        # Owned at 64 is all but unheard of in play, and a big single digit at a slant, beside
        # a side face's number, matches the two digits of 64 better than its own (a 2 read as
        # 64 at 0.6 or more, five times on the 3D-rendered frames): the players confirm it.
        confidence = min(confidence, OWNED_64)
    return CubeFound(value, owner, confidence)


def read_track(field_image: np.ndarray, geometry: FieldGeometry) -> CubeFound | None:
    """The doubling-track counter, or ``None`` when no circle stands out red."""
    lab = cv2.cvtColor(field_image, cv2.COLOR_BGR2LAB).astype(np.float32)
    r = max(2, round(0.18 * geometry.checker_diameter * SCALE))
    spots: list[tuple[float, int, int | None]] = []
    for value in TRACK_VALUES:
        for owner in (None,) if value == 1 else (1, 2):
            cx, cy = (round(v * SCALE) for v in geometry.track_center(value, owner))
            patch = lab[max(0, cy - r) : cy + r + 1, max(0, cx - r) : cx + r + 1, 1]
            spots.append((float(patch.mean()) if patch.size else 0.0, value, owner))
    reds = sorted(spots, reverse=True)
    median = float(np.median([s[0] for s in spots]))
    top, value, owner = reds[0]
    if top - median < COUNTER_RED:
        return None
    margin = top - reds[1][0]
    return CubeFound(value, owner, float(np.clip(margin / COUNTER_RED, 0, 1)))
