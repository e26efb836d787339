# SPDX-License-Identifier: MIT
"""Finding a board's playing field in a photo, without markers and without typed corners.

A backgammon field is 24 long triangles, the points, in two rows of twelve with the bar strip
between the halves: whatever the board's colours, the sides of the triangles are long straight
edges that meet in pairs at the tips, the tips of a row lie on one line, evenly spaced but for
the bar's gap, and each triangle's base lies on the field's edge. The finder works from that:

1. straight edges in the photo (OpenCV's line segment detector, on the lightness and on both
   colour axes, so that a red point on a black one shows too);
2. pairs of them that meet at a narrow angle: a point's tip, which way it points, its sides;
3. the tips in two rows pointing at each other, each row on a line;
4. along each row, which of the twelve points each tip is and how wide the bar is: the spacing
   that puts most tips on a point's axis (tips hidden under a tall pile, or not found, are
   gaps);
5. the points' bases, as far from each tip as its sides reach (the longest sides: a pile on a
   point hides the start of its sides, nothing lengthens them), and from the bases of both rows
   the field's homography; of the ways to number the tips, the one whose triangles' sides lie
   best on the photo's edges (:func:`edge_fit`);
6. each edge of the field moved out, past the bases, to the strongest straight edge just
   outside them (a board may leave a margin round its points).

Which corner is beside player 1's 13-point is not in the triangles (the field looks the same
turned half round): :mod:`vision.calibration` settles it from the position shown.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import cv2
import numpy as np

from vision.geometry import FIELD_H, FIELD_W

#: The photo is searched at this size (its longer side, pixels).
SEARCH_SIZE: Final = 640
#: The bar widths tried, as fractions of the field's width.
BAR_FRACTIONS: Final = tuple(round(0.005 * k, 3) for k in range(25))
#: A point's sides meet at its tip at this angle (degrees) at most and at least: 24 points a
#: board, each about 5 times longer than wide, seen from up to 30 degrees off.
TIP_ANGLE: Final = (4.0, 30.0)
#: A straight edge shorter than this share of the photo's shorter side is not a point's side.
SHORTEST_SIDE: Final = 0.04
#: Tips closer than this share of the photo's longer side are one tip.
SAME_TIP: Final = 0.015
#: A tip this far (share of the photo's longer side) off its row's line is not in the row.
ROW_TOLERANCE: Final = 0.012
#: The quantile of a row's tip-to-end lengths taken as its points' length: the longest sides.
SIDE_QUANTILE: Final = 0.8
#: How far past the bases, and how far inside them, the field's edge is looked for (shares of
#: the field's height, or width at the ends).
EDGE_OUT: Final = 0.06
EDGE_IN: Final = 0.015
#: A row with fewer tips than this borrows the rest from the other row (see :func:`_across`).
MANY_TIPS: Final = 8
#: How many of the best numberings are refined before the best is taken.
REFINED: Final = 3
#: How much a point that fits past the field's ends counts against the field (a point's worth
#: of the whole field's fit is a twelfth).
BEYOND_WEIGHT: Final = 0.25
#: Where an edge's two halves are found further apart than this share of the field, the lesser
#: move is taken for both.
AGREE: Final = 0.015
#: A line round the field at least this share as strong as the strongest there is its edge.
NEAR_STRONG: Final = 0.5
#: How much the field's ends being straight edges in the photo counts for it.
ENDS_WEIGHT: Final = 0.25
#: How well the points must lie on the photo's edges (:func:`fit_at_scale`, 0 to 1) for a field
#: to be taken: real boards 0.62 to 0.83 at their labelled corners (0.49 with an arm over most of
#: the field), rendered ones 0.70 to 0.75; a field taken a quarter of a point aside 0.42, a field
#: found in a photo whose arm hides most of its points 0.52, corners of another photo 0.40.
LEAST_FIT: Final = 0.55


class FieldError(ValueError):
    """No playing field in the photo: why, in words for the user."""


@dataclass(frozen=True)
class FoundField:
    """A playing field found in a photo.

    :ivar corners: the field's corners in image pixels, top-left, top-right, bottom-right,
        bottom-left as the photo shows them with the points' bases along the top and bottom (a
        board lying across the photo is turned a quarter), not yet in the contract's order.
    :ivar bar_fraction: the bar strip's width over the field's.
    :ivar length: the points' length over the field's height.
    :ivar fit: :func:`edge_fit` at the corners.
    """

    corners: np.ndarray
    bar_fraction: float
    length: float
    fit: float


@dataclass(frozen=True)
class _Tip:
    """Where two straight edges meet at a narrow angle: a point's tip (image pixels), the unit
    vector from its base towards the tip, and its sides' far ends."""

    at: np.ndarray
    axis: np.ndarray
    ends: tuple[np.ndarray, np.ndarray]
    length: float


# -- the model's fit to a photo --------------------------------------------------------------


def tip_xs(bar_fraction: float, ks: Sequence[int] | np.ndarray = range(12)) -> np.ndarray:
    """The field x of the axes of the points numbered ``ks`` (0-11) from the left edge."""
    bar = FIELD_W * bar_fraction
    width = (FIELD_W - bar) / 12
    k = np.asarray(ks, dtype=np.float64)
    return np.asarray((k + 0.5) * width + np.where(k >= 6, bar, 0.0), dtype=np.float64)


def _side_samples(bar_fraction: float, length: float, ks: Sequence[int] = range(12)) -> tuple[np.ndarray, np.ndarray]:
    """Samples along the sides of the points numbered ``ks`` (field coordinates, n x 2) and
    their unit normals: the part from three tenths of the way from the base to the tip (piles
    hide the rest). ``-1`` and ``12`` are the points there would be past the field's ends."""
    bar = FIELD_W * bar_fraction
    width = (FIELD_W - bar) / 12
    t = np.linspace(0.3, 0.95, 10)[:, None]
    points, normals = [], []
    for k in ks:
        x0 = k * width + (bar if k >= 6 else 0.0)
        for top in (True, False):
            tip = np.array([x0 + width / 2, length * FIELD_H if top else FIELD_H - length * FIELD_H])
            for bx in (x0, x0 + width):
                base = np.array([bx, 0.0 if top else float(FIELD_H)])
                points.append(base + t * (tip - base))
                d = (tip - base) / np.linalg.norm(tip - base)
                normals.append(np.repeat([[-d[1], d[0]]], len(t), axis=0))
    return np.concatenate(points), np.concatenate(normals)


def gradients(image: np.ndarray, blur: float) -> tuple[np.ndarray, np.ndarray]:
    """The photo's Lab gradients (x, y), each ``h x w x 3``, after a Gaussian blur of ``blur``."""
    lab = cv2.cvtColor(image, cv2.COLOR_BGR2LAB).astype(np.float32)
    if blur > 0:
        lab = cv2.GaussianBlur(lab, (0, 0), blur)
    gx = np.stack([cv2.Sobel(lab[..., c], cv2.CV_32F, 1, 0, ksize=3) for c in range(3)], axis=-1)
    gy = np.stack([cv2.Sobel(lab[..., c], cv2.CV_32F, 0, 1, ksize=3) for c in range(3)], axis=-1)
    return gx, gy


def _homography(corners: np.ndarray) -> np.ndarray:
    field = np.float32([[0, 0], [FIELD_W, 0], [FIELD_W, FIELD_H], [0, FIELD_H]])
    return np.asarray(cv2.getPerspectiveTransform(field, np.float32(corners)), dtype=np.float64)


def edge_fit(
    grads: tuple[np.ndarray, np.ndarray],
    corners: np.ndarray,
    bar_fraction: float,
    length: float,
    ks: Sequence[int] = range(12),
) -> float:
    """How well the points' sides of a field with these corners lie on the photo's edges: the
    share of the gradient across each side, where it is, that runs across it (0 to 1)."""
    gx, gy = grads
    points, normals = _side_samples(bar_fraction, length, ks)
    homography = _homography(corners)
    at = cv2.perspectiveTransform(points[None], homography)[0]
    ahead = cv2.perspectiveTransform((points + 2 * normals)[None], homography)[0]
    normal = ahead - at
    normal /= np.linalg.norm(normal, axis=1, keepdims=True) + 1e-9
    h, w = gx.shape[:2]
    inside = (at[:, 0] >= 0) & (at[:, 0] < w - 1) & (at[:, 1] >= 0) & (at[:, 1] < h - 1)
    xi = np.clip(at[:, 0], 0, w - 1).astype(np.int64)
    yi = np.clip(at[:, 1], 0, h - 1).astype(np.int64)
    sx, sy = gx[yi, xi], gy[yi, xi]
    across = np.abs(sx * normal[:, 0:1] + sy * normal[:, 1:2]).sum(axis=1)
    strength = np.sqrt(sx**2 + sy**2).sum(axis=1)
    # A weak edge (felt, noise) weighs less than a sharp one, whichever way it runs.
    score = across / (strength + 30.0)
    score[~inside] = 0.0
    return float(score.mean())


def fit_at_scale(image: np.ndarray, corners: np.ndarray, bar_fraction: float) -> float:
    """:func:`edge_fit` of a field with these corners, the photo seen at a field 400 pixels
    wide (so that a corner a pixel or two off counts alike on every photo), the points' length
    that fits best."""
    corners = np.asarray(corners, dtype=np.float64)
    width = float(np.linalg.norm(corners[1] - corners[0]))
    scale = 400.0 / max(width, 1.0)
    small = cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    grads = gradients(small, 1.5)
    return max(edge_fit(grads, corners * scale, bar_fraction, length) for length in np.arange(0.3, 0.49, 0.01))


# -- finding the field -----------------------------------------------------------------------


def _segments(image: np.ndarray) -> np.ndarray:
    """Straight edges (n x 4: x0, y0, x1, y1) on the lightness and both colour axes."""
    lab = cv2.cvtColor(image, cv2.COLOR_BGR2LAB)
    detector = cv2.createLineSegmentDetector()
    found = []
    for channel in range(3):
        plane = lab[..., channel]
        if channel:
            plane = cv2.normalize(plane, None, 0, 255, cv2.NORM_MINMAX)
        lines = detector.detect(plane)[0]
        if lines is not None:
            found.append(lines.reshape(-1, 4))
    if not found:
        return np.zeros((0, 4), np.float32)
    segments = np.concatenate(found)
    length = np.hypot(segments[:, 2] - segments[:, 0], segments[:, 3] - segments[:, 1])
    return np.asarray(segments[length > SHORTEST_SIDE * min(image.shape[:2])])


def _tips(segments: np.ndarray, size: float) -> list[_Tip]:
    """Pairs of straight edges meeting at a narrow angle just past one end of each."""
    start, end = segments[:, :2].astype(np.float64), segments[:, 2:].astype(np.float64)
    direction = end - start
    length = np.linalg.norm(direction, axis=1)
    unit = direction / length[:, None]
    low, high = (math.cos(math.radians(a)) for a in TIP_ANGLE)
    found: list[_Tip] = []
    for i, j in itertools.combinations(range(len(segments)), 2):
        cosine = abs(float(unit[i] @ unit[j]))
        if not high <= cosine <= low:
            continue
        if min(length[i], length[j]) < 0.4 * max(length[i], length[j]):
            continue
        system = np.array([unit[i], -unit[j]]).T
        if abs(np.linalg.det(system)) < 1e-9:
            continue
        t = np.linalg.solve(system, start[j] - start[i])
        meet = start[i] + t[0] * unit[i]
        ends = []
        for k in (i, j):
            near = np.array([np.linalg.norm(meet - start[k]), np.linalg.norm(meet - end[k])])
            n = int(np.argmin(near))
            # Past one end (not inside the segment), by a little.
            if near[n] > 0.15 * length[k] + 3 or near[1 - n] < 0.9 * length[k]:
                break
            ends.append(end[k] if n == 0 else start[k])
        else:
            axis = meet - (ends[0] + ends[1]) / 2
            axis /= np.linalg.norm(axis) + 1e-12
            found.append(_Tip(meet, axis, (ends[0], ends[1]), float((length[i] + length[j]) / 2)))
    kept: list[_Tip] = []
    for tip in sorted(found, key=lambda t: -t.length):
        if all(np.linalg.norm(tip.at - k.at) > SAME_TIP * size for k in kept):
            kept.append(tip)
    return kept


@dataclass
class _Row:
    """A row of tips on a line: the tips, the line's point and unit direction."""

    tips: list[_Tip]
    centre: np.ndarray
    direction: np.ndarray

    def positions(self) -> np.ndarray:
        return np.array([(t.at - self.centre) @ self.direction for t in self.tips])


def _rows(tips: list[_Tip], size: float) -> tuple[_Row, _Row] | None:
    """The tips in two rows pointing at each other, each on its line (RANSAC)."""
    if len(tips) < 6:
        return None
    axes = np.array([t.axis for t in tips])
    _, _, vt = np.linalg.svd(axes)
    main = vt[0]
    sign = axes @ main
    rng = np.random.default_rng(0)
    rows: list[_Row] = []
    for members in (np.flatnonzero(sign > 0.7), np.flatnonzero(sign < -0.7)):
        if len(members) < 3:
            return None
        at = np.array([tips[i].at for i in members])
        best: np.ndarray | None = None
        for _ in range(300):
            i, j = rng.choice(len(at), 2, replace=False)
            d = at[j] - at[i]
            if np.linalg.norm(d) < 1e-6:
                continue
            d /= np.linalg.norm(d)
            if abs(float(d @ main)) > 0.35:
                continue
            normal = np.array([-d[1], d[0]])
            inliers = np.abs((at - at[i]) @ normal) < ROW_TOLERANCE * size
            if best is None or inliers.sum() > best.sum():
                best = inliers
        if best is None or best.sum() < 3:
            return None
        chosen = [tips[i] for i in members[best]]
        centre = np.mean([t.at for t in chosen], axis=0)
        _, _, vt2 = np.linalg.svd(np.array([t.at for t in chosen]) - centre)
        rows.append(_Row(chosen, centre, vt2[0]))
    if float(rows[0].direction @ rows[1].direction) < 0:
        rows[1].direction = -rows[1].direction
    return rows[0], rows[1]


def _row_spacing(positions: np.ndarray, bar_fraction: float) -> tuple[float, float, float]:
    """The map ``position = scale * x + offset`` from points' field x to the row line that puts
    the most tips on a point's axis: ``(score, scale, offset)``, the score counting tips on an
    axis (each a thousand) less how far off they lie."""
    m = len(positions)
    span = float(positions.max() - positions.min())
    tolerance = max(0.015 * span, 1.0)
    xs = tip_xs(bar_fraction)
    pairs = np.array(list(itertools.combinations(range(m), 2)))
    ks = np.array(list(itertools.combinations(range(12), 2)))
    xa, xb = xs[ks[:, 0]], xs[ks[:, 1]]
    pa, pb = positions[pairs[:, 0]], positions[pairs[:, 1]]
    scale = (pb[None, :] - pa[None, :]) / (xb[:, None] - xa[:, None])
    offset = pa[None, :] - scale * xa[:, None]
    predicted = scale[..., None] * xs[None, None, :] + offset[..., None]
    apart = np.abs(predicted[..., :, None] - positions[None, None, None, :])
    on_axis = (apart.min(axis=2) < tolerance).sum(axis=2)
    score = on_axis * 1000.0 - np.minimum(apart.min(axis=3), tolerance).sum(axis=2)
    # A row squeezed into a few points' width puts every tip on an axis: not a row.
    score[(scale <= 0) | (scale * FIELD_W / 13 < 0.03 * span)] = -np.inf
    k = np.unravel_index(int(np.argmax(score)), score.shape)
    return float(score[k]), float(scale[k]), float(offset[k])


def _length(row: _Row) -> float:
    """How far the row's points reach from tip to base (image pixels, along their axes)."""
    reach = [max(float((end - t.at) @ -t.axis) for end in t.ends) for t in row.tips]
    return float(np.quantile(reach, SIDE_QUANTILE))


def _candidates(rows: tuple[_Row, _Row], grads: tuple[np.ndarray, np.ndarray], size: float) -> list[FoundField]:
    """Fields from every way of numbering the tips that fits, best first."""
    positions = [row.positions() for row in rows]
    reach = [_length(row) for row in rows]
    by_bar = []
    for bar in BAR_FRACTIONS:
        fits = [_row_spacing(p, bar) for p in positions]
        by_bar.append((sum(f[0] for f in fits), bar, fits))
    by_bar.sort(key=lambda t: -t[0])
    found: list[FoundField] = []
    for _, bar, fits in by_bar[:4]:
        xs_far = tip_xs(bar, np.arange(-2, 14))
        for shifts in itertools.product(range(-2, 3), repeat=2):
            numbered: list[dict[int, _Tip]] = []
            for row, p, (_, scale, offset), shift in zip(rows, positions, fits, shifts, strict=True):
                predicted = scale * xs_far[np.arange(12) + 2 + shift] + offset
                tolerance = max(0.015 * float(p.max() - p.min()), 1.0)
                got: dict[int, tuple[_Tip, float]] = {}
                for tip, q in zip(row.tips, p, strict=True):
                    k = int(np.argmin(np.abs(predicted - q)))
                    off = abs(float(predicted[k] - q))
                    if off < tolerance and (k not in got or off < got[k][1]):
                        got[k] = (tip, off)
                numbered.append({k: tip for k, (tip, _) in got.items()})
            if min(len(n) for n in numbered) < 2:
                continue
            numbered = _across(numbered, rows)
            for top in (0, 1):
                field_points, image_points, tips_at = [], [], []
                for r, tips in enumerate(numbered):
                    y = 0.0 if r == top else float(FIELD_H)
                    for k, tip in tips.items():
                        field_points.append((tip_xs(bar, [k])[0], y))
                        image_points.append(tip.at - reach[r] * tip.axis)
                        tips_at.append((r == top, tip.at))
                # A tip too many (the rim of a cup, a checker's shadow) is left out.
                homography, _ = cv2.findHomography(
                    np.float64(field_points), np.float64(image_points), cv2.RANSAC, ROW_TOLERANCE * size
                )
                if homography is None:
                    continue
                corners = cv2.perspectiveTransform(
                    np.float64([[[0, 0], [FIELD_W, 0], [FIELD_W, FIELD_H], [0, FIELD_H]]]), homography
                )[0]
                if _area(corners) <= 0:
                    # Numbered against the photo's turn: the same field, corners taken mirrored.
                    corners = corners[[1, 0, 3, 2]]
                    homography = _homography(corners)
                inverse = np.linalg.inv(homography)
                depths = []
                for is_top, at in tips_at:
                    fy = float(cv2.perspectiveTransform(np.float64([[at]]), inverse)[0, 0, 1])
                    depths.append(fy / FIELD_H if is_top else 1.0 - fy / FIELD_H)
                length = float(np.clip(np.median(depths), 0.25, 0.49))
                found.append(FoundField(corners, bar, length, _score(grads, corners, bar, length)))
    found.sort(key=lambda f: -f.fit)
    return found


def _score(grads: tuple[np.ndarray, np.ndarray], corners: np.ndarray, bar: float, length: float) -> float:
    """A field's fit to the photo: its points' sides on the photo's edges, less points that fit
    past its ends, and its ends straight edges."""
    fit = edge_fit(grads, corners, bar, length)
    beyond = edge_fit(grads, corners, bar, length, (-1, 12))
    return fit - BEYOND_WEIGHT * beyond + ENDS_WEIGHT * _ends(grads, corners)


def _refine(grads: tuple[np.ndarray, np.ndarray], found: FoundField, step: float) -> FoundField:
    """The field moved corner by corner (and its bar and points' length changed) while its
    :func:`_score` grows, in steps from ``step`` pixels down to a quarter of a pixel."""
    corners, bar, length = found.corners.astype(np.float64), found.bar_fraction, found.length
    best = _score(grads, corners, bar, length)
    while step >= 0.25:
        improved = True
        while improved:
            improved = False
            moves: list[tuple[np.ndarray, float, float]] = []
            for i in range(4):
                for j in range(2):
                    for sign in (1.0, -1.0):
                        delta = np.zeros((4, 2))
                        delta[i, j] = sign * step
                        moves.append((corners + delta, bar, length))
            for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1)):
                moves.append((corners + np.array([dx * step, dy * step]), bar, length))
            middle = corners.mean(axis=0)
            for grow in (step / 100, -step / 100):
                moves.append((corners + (corners - middle) * grow, bar, length))
            for db in (0.005, -0.005):
                moves.append((corners, min(max(bar + db, 0.0), 0.15), length))
            for dl in (0.01, -0.01):
                moves.append((corners, bar, min(max(length + dl, 0.25), 0.49)))
            for c, b, ln in moves:
                score = _score(grads, c, b, ln)
                if score > best + 1e-6:
                    best, corners, bar, length, improved = score, c, b, ln, True
                    break
        step /= 2
    return FoundField(corners, bar, length, best)


def _across(numbered: list[dict[int, _Tip]], rows: tuple[_Row, _Row]) -> list[dict[int, _Tip]]:
    """Each row's tips with those it lacks added where the axes of the other row's points of
    the same number cross its line (a point's axis runs across the field to the point facing
    it): dice cups and piles hide many tips of a row, rarely both of a pair."""
    out = [dict(n) for n in numbered]
    for r in (0, 1):
        mine, other, row = out[r], numbered[1 - r], rows[r]
        if len(mine) >= MANY_TIPS:
            continue
        for k, tip in other.items():
            if k in mine:
                continue
            at = _meet((tip.at, tip.at + tip.axis), (row.centre, row.centre + row.direction))
            if not np.all(np.isfinite(at)):
                continue
            mine[k] = _Tip(at, -tip.axis, (at, at), 0.0)
    return out


def _area(corners: np.ndarray) -> float:
    """Signed area, positive when the corners go round clockwise on screen."""
    return 0.5 * sum(
        float(corners[i][0] * corners[(i + 1) % 4][1] - corners[(i + 1) % 4][0] * corners[i][1]) for i in range(4)
    )


def _ends(grads: tuple[np.ndarray, np.ndarray], corners: np.ndarray) -> float:
    """How clearly the field's two ends are straight edges in the photo (0 to 1): the weaker
    end's median gradient across it, against a gradient of 20 Lab units a pixel."""
    homography = _homography(corners)
    strengths = [
        _line_strength(grads, homography, np.array([x, 0.05 * FIELD_H]), np.array([x, 0.95 * FIELD_H]))
        for x in (0.0, float(FIELD_W))
    ]
    weaker = min(strengths)
    return weaker / (weaker + 20.0)


def _line_strength(grads: tuple[np.ndarray, np.ndarray], homography: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    """The median gradient across the field line a-b (field coordinates) in the photo."""
    gx, gy = grads
    points = a[None] + np.linspace(0, 1, 60)[:, None] * (b - a)[None]
    at = cv2.perspectiveTransform(points[None], homography)[0]
    direction = at[-1] - at[0]
    direction /= np.linalg.norm(direction) + 1e-12
    normal = np.array([-direction[1], direction[0]])
    h, w = gx.shape[:2]
    inside = (at[:, 0] >= 0) & (at[:, 0] < w - 1) & (at[:, 1] >= 0) & (at[:, 1] < h - 1)
    if inside.sum() < 20:
        return 0.0
    xi, yi = at[inside, 0].astype(np.int64), at[inside, 1].astype(np.int64)
    across = np.abs(gx[yi, xi] * normal[0] + gy[yi, xi] * normal[1]).sum(axis=1)
    return float(np.median(across))


def _nearest_strong(strengths: Sequence[float], steps: np.ndarray) -> float:
    """Of lines at ``steps`` (inward to outward), the first as strong as half the strongest: the
    field's own edge, before the frame's, the trays' or the table's further out."""
    strongest = max(strengths)
    for step, strength in zip(steps, strengths, strict=True):
        if strength >= NEAR_STRONG * strongest:
            # Up the ridge to its top, the line itself.
            k = int(np.searchsorted(steps, step))
            while k + 1 < len(strengths) and strengths[k + 1] > strengths[k]:
                k += 1
            return float(steps[k])
    return 0.0


def _edges_out(grads: tuple[np.ndarray, np.ndarray], found: FoundField) -> np.ndarray:
    """The field's corners with its top and bottom edges moved to the nearest strong straight
    edge round them, from a little inside the points' bases to :data:`EDGE_OUT` outside them: a
    board may leave a margin between its points and its frame."""
    homography = _homography(found.corners)
    bar = FIELD_W * found.bar_fraction
    width = (FIELD_W - bar) / 12
    halves = ((0.1 * width, 6 * width - 0.1 * width), (6 * width + bar + 0.1 * width, FIELD_W - 0.1 * width))
    steps_y = np.arange(-EDGE_IN, EDGE_OUT + 1e-9, 0.0025) * FIELD_H
    lines: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for name, y, outward in (("top", 0.0, -1.0), ("bottom", float(FIELD_H), 1.0)):
        at = []
        for x0, x1 in halves:
            strength = [
                _line_strength(grads, homography, np.array([x0, y + outward * s]), np.array([x1, y + outward * s]))
                for s in steps_y
            ]
            at.append(np.array([(x0 + x1) / 2, _nearest_strong(strength, steps_y)]))
        # An edge is straight: where the two halves disagree, the lesser move (a pile of checkers
        # at one end hides the field's edge there, and the frame's shows instead).
        move = min(at[0][1], at[1][1]) if abs(at[0][1] - at[1][1]) > AGREE * FIELD_H else None
        lines[name] = tuple(  # type: ignore[assignment]
            np.array([p[0], y + outward * (p[1] if move is None else move)]) for p in at
        )
    # The ends stay where the outermost points' sides put them: a pile of checkers often stands
    # at an end, and past it lie the trays, whose edges would be taken for the field's.
    lines["left"] = (np.array([0.0, 0.0]), np.array([0.0, float(FIELD_H)]))
    lines["right"] = (np.array([float(FIELD_W), 0.0]), np.array([float(FIELD_W), float(FIELD_H)]))
    corners = [
        _meet(lines["top"], lines["left"]),
        _meet(lines["top"], lines["right"]),
        _meet(lines["bottom"], lines["right"]),
        _meet(lines["bottom"], lines["left"]),
    ]
    return np.asarray(cv2.perspectiveTransform(np.float64([corners]), homography)[0])


def _meet(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """Where the lines through a's two points and b's two points cross."""
    p, q = a
    r, s = b
    system = np.array([q - p, r - s]).T
    if abs(np.linalg.det(system)) < 1e-12:
        return (p + r) / 2
    t = np.linalg.solve(system, r - p)
    return np.asarray(p + t[0] * (q - p))


def find_field(image: np.ndarray) -> FoundField:
    """The playing field in a photo of a board (see the module's docstring).

    :raises FieldError: no two rows of points are found, or no numbering of them fits.
    """
    scale = SEARCH_SIZE / max(image.shape[:2])
    small = cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    size = float(max(small.shape[:2]))
    tips = _tips(_segments(small), size)
    rows = _rows(tips, size)
    if rows is None:
        raise FieldError(
            f"no two rows of points were found ({len(tips)} point tips seen): is the whole field in the photo,"
            " lit, and in focus?"
        )
    grads = gradients(small, 1.0)
    found = _candidates(rows, grads, size)
    if not found:
        raise FieldError("the points' tips were found, but no numbering of them fits a backgammon field")
    coarse = gradients(small, 2.5)
    refined = [_refine(grads, _refine(coarse, f, 8.0), 2.0) for f in found[:REFINED]]
    best = max(refined, key=lambda f: f.fit)
    corners = _edges_out(grads, best) if EDGES_OUT else best.corners
    return FoundField(corners / scale, best.bar_fraction, best.length, best.fit)


EDGES_OUT = True
