# SPDX-License-Identifier: MIT
"""Following a board that moved under the camera (or a camera that was nudged).

At a real table the board is bumped, the camera's arm sags, a player slides the board to make
room: the calibration's corners then no longer lie on the board's corners, and every point is
read from the wrong place. The board as the camera saw it at the last clear read (grey, the
field and its frame round it, small) is the reference: the frame now, seen through the same
corners, is aligned with it (a translation found by phase correlation, then an affine
correction by the enhanced correlation coefficient, OpenCV's ``findTransformECC``), and the
correction carried into new corners. Most of what the reference shows lies still between two
reads (the frame, the points, all but the checkers just moved), so the two align on it; the
right side of the frame, beside player 1's trays, is left out (borne-off checkers come and go
there). Before the reader's first clear read, the reference is the profile's own view, made at
calibration and renewed each time the board is followed.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Final, NamedTuple

import cv2
import numpy as np

from vision.features import BORDER
from vision.geometry import FIELD_H, FIELD_W
from vision.strips import png_from_text, png_text

#: The view is drawn at this many pixels per field unit (a quarter: 1.5 to 3.5 frame pixels per
#: view pixel on a 1280 x 720 frame of a whole board).
VIEW_SCALE: Final = 0.25
#: The alignment's levels, coarse to fine (a fraction of the view's size each) and the motion
#: sought at each: a shift first, then any affine correction.
LEVELS: Final = ((0.25, cv2.MOTION_TRANSLATION), (0.5, cv2.MOTION_AFFINE), (1.0, cv2.MOTION_AFFINE))
#: A board is taken to have moved when the views, aligned, agree at least this well (a board
#: moved on rendered frames: 0.987 or more), this much better than unaligned (0.03 or more; a
#: hand over a board that did not move, or checkers moved: 0.012 at most), and the alignment
#: moves a corner by at least :data:`LEAST_SHIFT` frame pixels.
LEAST_CORRELATION: Final = 0.95
#: A start whose coarsest alignment agrees less than this is given up: the finer levels moved
#: the agreement by 0.015 at most on rendered and real frames, and a hand over the board (real
#: stream frames: 0.63 to 0.91) is then told from a move without aligning at full size.
COARSE_FLOOR: Final = LEAST_CORRELATION - 0.03
LEAST_GAIN: Final = 0.02
LEAST_SHIFT: Final = 1.0
#: The outermost part of the view left out of the alignment, as a fraction of its width: what
#: lay beyond the view comes in at its edge as the board moves.
EDGE: Final = 0.02


def _view_geometry() -> tuple[tuple[int, int], np.ndarray]:
    """The view's size and the map from field coordinates to its pixels."""
    mx, my = BORDER * FIELD_W, BORDER * FIELD_H
    size = (round((FIELD_W + 2 * mx) * VIEW_SCALE), round((FIELD_H + 2 * my) * VIEW_SCALE))
    to_view = np.array([[VIEW_SCALE, 0.0, mx * VIEW_SCALE], [0.0, VIEW_SCALE, my * VIEW_SCALE], [0.0, 0.0, 1.0]])
    return size, to_view


def view_size() -> tuple[int, int]:
    """The :func:`board_view`'s width and height in pixels."""
    return _view_geometry()[0]


def view_to_text(view: np.ndarray) -> str:
    """A :func:`board_view` as one line of text (a PNG, in base64), as profiles keep it."""
    return png_text(view)


def view_from_text(text: str) -> np.ndarray:
    """The view :func:`view_to_text` wrote.

    :raises ValueError: the text is not such a view (damaged, or of another size).
    """
    try:
        view = png_from_text(text, cv2.IMREAD_GRAYSCALE)
    except ValueError as exc:
        raise ValueError(f"it is {exc}") from None
    width, height = view_size()
    if view.shape != (height, width):
        raise ValueError(f"it is {view.shape[1]} x {view.shape[0]} pixels, not {width} x {height}")
    return view


def board_view(image: np.ndarray, homography: np.ndarray) -> np.ndarray:
    """The board (the field and its frame round it) in grey, as ``homography`` (field to image)
    places it in ``image``: each view pixel the mean of what lies under it."""
    (width, height), to_view = _view_geometry()
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) if image.ndim == 3 else image
    # Warped at twice the size, then shrunk by area: a view pixel covers several frame pixels.
    twice = np.diag([2.0, 2.0, 1.0]) @ to_view
    big = cv2.warpPerspective(
        grey,
        homography @ np.linalg.inv(twice),
        (2 * width, 2 * height),
        flags=cv2.WARP_INVERSE_MAP | cv2.INTER_LINEAR,
        borderMode=cv2.BORDER_REPLICATE,
    )
    return np.asarray(cv2.resize(big, (width, height), interpolation=cv2.INTER_AREA))


@lru_cache(maxsize=1)
def _mask() -> np.ndarray:
    """Which view pixels the alignment weighs: all but the trays' side and the outer edge."""
    (width, height), to_view = _view_geometry()
    mask = np.full((height, width), 255, np.uint8)
    right = int(to_view[0, 0] * FIELD_W + to_view[0, 2])
    mask[:, right:] = 0
    edge = max(1, round(EDGE * width))
    mask[:edge], mask[-edge:], mask[:, :edge] = 0, 0, 0
    return mask


class Followed(NamedTuple):
    """Where the board lies now: the new homography (field to image), and how well the
    reference and the frame agree through it (``after``) and through the old one (``before``),
    as correlations up to 1."""

    homography: np.ndarray
    after: float
    before: float


def _correlation(a: np.ndarray, b: np.ndarray, mask: np.ndarray) -> float:
    """The correlation of two views over the mask, their means taken away (as ECC's)."""
    weigh = mask > 0
    x, y = a[weigh] - a[weigh].mean(), b[weigh] - b[weigh].mean()
    norm = float(np.sqrt((x * x).sum() * (y * y).sum()))
    return float((x * y).sum()) / norm if norm > 0 else 0.0


def follow(reference: np.ndarray, image: np.ndarray, homography: np.ndarray) -> Followed | None:
    """Where the board of ``reference`` (a :func:`board_view` of an earlier frame through
    ``homography``) lies in ``image``; ``None`` when the two cannot be aligned."""
    current = board_view(image, homography).astype(np.float32)
    ref = reference.astype(np.float32)
    mask = _mask()
    before = _correlation(ref, current, mask)
    criteria = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 50, 1e-4)
    # The correction in the full view's pixels, found coarse to fine: a shift of 20 frame
    # pixels is a few pixels of the coarsest view, where the alignment finds it from none.
    # A shift of more than a few pixels there is first found by phase correlation; both it and
    # no shift are tried.
    half = (ref.shape[1] // 2, ref.shape[0] // 2)
    window = cv2.createHanningWindow(half, cv2.CV_32F)
    (dx, dy), _ = cv2.phaseCorrelate(
        cv2.resize(ref, half, interpolation=cv2.INTER_AREA),
        cv2.resize(current, half, interpolation=cv2.INTER_AREA),
        window,
    )
    starts = [np.eye(2, 3, dtype=np.float32)]
    if max(abs(dx), abs(dy)) >= 0.25:
        # Within half a pixel of the full view of no shift, the shift starts where no shift does.
        starts.append(np.array([[1, 0, 2 * dx], [0, 1, 2 * dy]], np.float32))
    best: tuple[float, np.ndarray] | None = None
    for warp in starts:
        correlation = 0.0
        for level, motion in LEVELS:
            if level > LEVELS[0][0] and correlation < COARSE_FLOOR:
                break
            size = (round(ref.shape[1] * level), round(ref.shape[0] * level))
            a = cv2.resize(ref, size, interpolation=cv2.INTER_AREA)
            b = cv2.resize(current, size, interpolation=cv2.INTER_AREA)
            m = cv2.resize(mask, size, interpolation=cv2.INTER_NEAREST)
            start = warp.copy()
            start[:, 2] *= level
            try:
                correlation, found = cv2.findTransformECC(a, b, start, motion, criteria, m, 3)
            except cv2.error:
                # No convergence: the views do not show the same board.
                correlation = -1.0
                break
            warp = found.copy()
            warp[:, 2] /= level
        if correlation > (best[0] if best else -1.0):
            best = (correlation, warp)
        if correlation >= LEAST_CORRELATION:
            break
    if best is None:
        return None
    correlation, warp = best
    _, to_view = _view_geometry()
    # A field point lies at to_view @ p in the reference's view, at warp of that in the current
    # view, and the current view is the image through the old homography.
    moved = homography @ np.linalg.inv(to_view) @ np.vstack([warp, [0.0, 0.0, 1.0]]) @ to_view
    return Followed(moved / moved[2, 2], float(correlation), before)


def has_moved(followed: Followed | None, homography: np.ndarray) -> bool:
    """Whether ``followed`` shows the board moved from where ``homography`` places it (see
    :data:`LEAST_CORRELATION`)."""
    if followed is None or followed.after < LEAST_CORRELATION or followed.after - followed.before < LEAST_GAIN:
        return False
    shift = np.abs(np.asarray(corners_of(followed.homography)) - np.asarray(corners_of(homography))).max()
    return bool(shift >= LEAST_SHIFT)


def corners_of(homography: np.ndarray) -> list[tuple[float, float]]:
    """The field's four corners in image pixels under ``homography``, in the profile's order."""
    field = np.array([[[0.0, 0.0], [FIELD_W, 0.0], [FIELD_W, FIELD_H], [0.0, FIELD_H]]])
    return [(float(x), float(y)) for x, y in cv2.perspectiveTransform(field, homography)[0]]
