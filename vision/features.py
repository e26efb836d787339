# SPDX-License-Identifier: MIT
"""Features sampled along each point of the rectified field, and what each count predicts.

The field is warped to a half-size canvas and converted to Lab. Along the axis of every point
(and of each player's half of the bar), at every half checker from the edge inwards, two things
are measured:

- the colour (mean L, a, b over a small disc): a checker of one side, or the empty point;
- the *seam* strength: how much darker a thin line across the axis is than the surface on both
  sides of it. Two checkers side by side leave a dark seam between them; the middle of a
  checker's top is smooth.

For a stack of ``n`` checkers (piled as :mod:`vision.geometry` describes), the positions are
known, so each count predicts which samples show a checker, which show the empty point, and
where seams and smooth tops are. The reader scores every count against the samples.
"""

from __future__ import annotations

from functools import lru_cache

import cv2
import numpy as np

from vision.geometry import FIELD_H, FIELD_W, FieldGeometry, slot_layer

#: The field is read at this fraction of FIELD_W x FIELD_H.
SCALE = 0.5
#: Samples along an axis, every half checker from the edge: 0.5 d, 1.0 d, ... 5.5 d.
STEPS = 11
#: The most checkers the reader considers on one point.
MAX_STACK = 15
#: Bar stacks are read in a single line of up to this many.
MAX_BAR = 6

CHECKER, EMPTY, SKIP = 1, 0, -1
#: Shape labels: the edge of a checker (a seam between two, or where a stack ends), the
#: smooth top of a checker, the bare point; a checker's rim all round a sample (a ring).
EDGE, TOP, FLAT, RING = 1, 0, 2, 3


def rectify(image: np.ndarray, homography: np.ndarray) -> np.ndarray:
    """The field (half size) warped out of ``image`` with the field -> image ``homography``."""
    scale = np.diag([SCALE, SCALE, 1.0])
    to_field = scale @ np.linalg.inv(homography)
    size = (round(FIELD_W * SCALE), round(FIELD_H * SCALE))
    return cv2.warpPerspective(image, to_field, size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)


@lru_cache(maxsize=64)
def expected(n: int) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """What a stack of ``n`` predicts at each sample: colour, boundary and ring labels.

    Colour: CHECKER where the top checker covers the sample well inside, EMPTY where no
    checker is near, SKIP at the edges. Boundary: EDGE on the visible edge of a top checker
    (between two touching checkers, or where the stack ends), TOP at a top checker's centre,
    FLAT on the empty point well away from any checker, SKIP elsewhere. Ring: RING (a
    checker's rim above and below) at a top checker's centre, FLAT a whole checker away from
    any, SKIP elsewhere. Edges and rims tell a checker from the point under it even when the
    two are the same colour.
    """
    discs = []  # (centre in checker diameters, layer)
    for slot in range(n):
        layer, k = slot_layer(slot)
        discs.append((k + 0.5 + 0.5 * layer, layer))
    colour: list[int] = []
    seam: list[int] = []
    circle: list[int] = []
    for j in range(1, STEPS + 1):
        x = 0.5 * j
        covering = [(layer, c) for c, layer in discs if abs(x - c) < 0.45]
        nearest = min((abs(x - c) for c, _ in discs), default=99.0)
        if covering:
            top_layer = max(layer for layer, _ in covering)
            top = min(abs(x - c) for layer, c in covering if layer == top_layer)
            # The rim of a checker lying higher up may cross here: no edge reading then.
            rim_above = any(layer > top_layer and 0.35 <= abs(x - c) <= 0.65 for c, layer in discs)
            colour.append(CHECKER)
            centred = top < 0.1 and not rim_above
            seam.append(TOP if centred else SKIP)
            circle.append(RING if centred else SKIP)
            continue
        edge = [layer for c, layer in discs if abs(abs(x - c) - 0.5) < 0.06]
        inside_higher = any(abs(x - c) < 0.44 for c, _ in discs)
        if edge and not inside_higher:
            colour.append(SKIP)
            seam.append(EDGE)
        elif nearest <= 0.65:
            colour.append(SKIP)
            seam.append(SKIP)
        else:
            colour.append(EMPTY)
            # Near the tip of the point the triangle ends: an edge of the board, not a checker.
            seam.append(FLAT if x < 4.4 else SKIP)
        # No checker's rim lies on a ring around an empty spot a whole checker away.
        circle.append(FLAT if nearest >= 0.99 and x < 4.4 else SKIP)
    return tuple(colour), tuple(seam), tuple(circle)


@lru_cache(maxsize=16)
def expected_bar(n: int) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """Colour, seam and ring labels of ``n`` checkers in a line on the bar (every half checker)."""
    colour: list[int] = []
    seam: list[int] = []
    circle: list[int] = []
    for j in range(1, 2 * MAX_BAR + 2):
        x = 0.5 * j
        if x < n - 0.3:
            on_centre = abs((x % 1.0) - 0.5) < 0.1
            on_seam = abs(x % 1.0) < 0.05 and x < n
            colour.append(CHECKER if on_centre else SKIP)
            seam.append(TOP if on_centre else EDGE if on_seam else SKIP)
            circle.append(RING if on_centre else SKIP)
        elif x > n + 0.3:
            colour.append(EMPTY)
            seam.append(SKIP)
            circle.append(FLAT if x > n + 0.99 else SKIP)
        else:
            colour.append(SKIP)
            seam.append(SKIP)
            circle.append(SKIP)
    return tuple(colour), tuple(seam), tuple(circle)


class FieldSampler:
    """Sample colour and seam features along every point axis and the bar.

    :param geometry: the board's field layout.
    """

    def __init__(self, geometry: FieldGeometry) -> None:
        self.geometry = geometry
        d = geometry.checker_diameter * SCALE
        self.d = d
        self.radius = max(2, round(0.22 * d))
        # Sample centres (x, y) in the half-size canvas: points 1..24, then bar for players 1, 2.
        centres = []
        directions = []
        for point in range(1, 25):
            row, _ = geometry.column(point)
            x = geometry.point_center_x(point) * SCALE
            sign = 1.0 if row == 0 else -1.0
            y0 = 0.0 if row == 0 else FIELD_H * SCALE
            centres.append([(x, y0 + sign * 0.5 * j * d) for j in range(1, STEPS + 1)])
            directions.append(sign)
        self.points = np.asarray(centres, dtype=np.float32)  # 24 x STEPS x 2
        bar = []
        for player in (1, 2):
            sign = 1.0 if player == 1 else -1.0
            cx, cy = FIELD_W * SCALE / 2, FIELD_H * SCALE / 2
            start = 0.7 * d
            bar.append([(cx, cy + sign * (start + 0.5 * j * d)) for j in range(1, 2 * MAX_BAR + 2)])
        self.bar = np.asarray(bar, dtype=np.float32)  # 2 x (2*MAX_BAR+1) x 2
        # The rim is looked for above and below the centre (along the point's axis) only: to the
        # sides, a point's own triangle edges run near where a rim would be.
        angles = np.concatenate(
            [np.linspace(0.25 * np.pi, 0.75 * np.pi, 8), np.linspace(1.25 * np.pi, 1.75 * np.pi, 8)]
        )
        self._cos = np.cos(angles).astype(np.float32)
        self._sin = np.sin(angles).astype(np.float32)

    def _ring(self, gx: np.ndarray, gy: np.ndarray, centres: np.ndarray) -> np.ndarray:
        """How strongly a checker's rim shows on a ring round each centre.

        The radial part of the brightness gradient, averaged round a circle the size of a
        checker's rim, over the gradient's whole strength there: near 1 when an edge runs all
        round (a checker), lower for a triangle's straight sides or an even cloth.
        """
        radius = 0.44 * self.d
        xs = np.clip(np.rint(centres[..., 0, None] + radius * self._cos), 0, gx.shape[1] - 1).astype(int)
        ys = np.clip(np.rint(centres[..., 1, None] + radius * self._sin), 0, gx.shape[0] - 1).astype(int)
        sx, sy = gx[ys, xs], gy[ys, xs]
        radial = np.abs(sx * self._cos + sy * self._sin).mean(axis=-1)
        strength = np.hypot(sx, sy).mean(axis=-1)
        result: np.ndarray = radial / (strength + 20.0) * np.minimum(strength / 40.0, 1.0)
        return result

    @staticmethod
    def _at(image: np.ndarray, centres: np.ndarray) -> np.ndarray:
        """``image``'s pixels at ``centres`` (rounded, and kept inside it), float32."""
        xs = np.clip(np.rint(centres[..., 0]).astype(int), 0, image.shape[1] - 1)
        ys = np.clip(np.rint(centres[..., 1]).astype(int), 0, image.shape[0] - 1)
        picked: np.ndarray = image[ys, xs].astype(np.float32)
        return picked

    def sample(self, field_bgr: np.ndarray, *, colour_only: bool = False) -> dict[str, np.ndarray]:
        """Features of one rectified field: ``points_colour`` (24 x STEPS x 3), ``points_seam``
        (24 x STEPS), ``points_ring`` (24 x STEPS), ``bar_colour`` (2 x m x 3), ``bar_seam`` and
        ``bar_ring`` (2 x m); with ``colour_only``, the two colours alone (all that the point
        network's reader weighs the samples for)."""
        lab = cv2.cvtColor(field_bgr, cv2.COLOR_BGR2LAB)
        k = 2 * self.radius + 1
        # Blurred in whole levels: the mean is off by at most half a level, far inside what
        # tells one colour from another, and the blur of bytes is a third of that of floats.
        smooth = cv2.blur(lab, (k, k))
        if colour_only:
            return {f"{name}_colour": self._at(smooth, at) for name, at in (("points", self.points), ("bar", self.bar))}
        luma = lab[:, :, 0].astype(np.float32)
        # Across the axis, average over most of a checker's width; along it, keep it thin.
        across = max(3, round(0.5 * self.d)) | 1
        thin = max(1, round(0.06 * self.d)) | 1
        band_v = cv2.blur(luma, (across, thin))  # for vertical axes (the points and the bar)
        soft = cv2.GaussianBlur(luma, (5, 5), 0)
        gx = cv2.Sobel(soft, cv2.CV_32F, 1, 0, ksize=3)
        gy = cv2.Sobel(soft, cv2.CV_32F, 0, 1, ksize=3)
        out: dict[str, np.ndarray] = {}
        for name, centres in (("points", self.points), ("bar", self.bar)):
            xs = np.clip(np.rint(centres[..., 0]).astype(int), 0, lab.shape[1] - 1)
            ys = np.clip(np.rint(centres[..., 1]).astype(int), 0, lab.shape[0] - 1)
            out[f"{name}_colour"] = smooth[ys, xs].astype(np.float32)
            off = max(2, round(0.22 * self.d))
            above = band_v[np.clip(ys - off, 0, lab.shape[0] - 1), xs]
            below = band_v[np.clip(ys + off, 0, lab.shape[0] - 1), xs]
            here = band_v[ys, xs]
            # A dark seam, a bright rim or a step from a checker to the point all count.
            contrast = np.maximum(np.abs(here - above), np.abs(here - below))
            # Logarithms make these contrasts roughly Gaussian, as the models assume.
            out[f"{name}_seam"] = np.log(contrast / ((above + below) / 2 + 10.0) + 0.02)
            ring = self._ring(gx, gy, centres)
            out[f"{name}_ring"] = np.log((ring + 0.02) / (1.02 - ring))
        return out


#: The field's look (see :func:`look_of`) is this fraction of the full field's size: a checker
#: is 20 pixels or more across, a hand far more.
LOOK_SCALE = 0.25
LOOK_SIZE = (round(FIELD_W * LOOK_SCALE), round(FIELD_H * LOOK_SCALE))


def look_of(field_bgr: np.ndarray) -> np.ndarray:
    """The field's look: the half-size rectified field (:func:`rectify`) shrunk by area to
    :data:`LOOK_SIZE`, BGR."""
    result: np.ndarray = cv2.resize(field_bgr, LOOK_SIZE, interpolation=cv2.INTER_AREA)
    return result


#: The band round the field that is compared with the calibration frame, as a fraction of the
#: field's size, and the size of the small image it is warped to.
BORDER = 0.07
BORDER_SIZE = (80, 70)


#: The band is warped this many times larger, then shrunk by area: each of its pixels is then
#: the mean of what lies under it, and a shift of part of a pixel changes it by part of the
#: colours round it. Sampled once per pixel, a pixel on a printed marker or a sharp edge jumps
#: from dark to light when the camera moves by a pixel or two.
BORDER_OVERSAMPLE = 4


def border_band(image: np.ndarray, homography: np.ndarray, *, mean: bool = True) -> np.ndarray:
    """The field and the frame round it, warped small, in Lab (see :func:`border_mask`).

    Nothing belongs there during play but the board's own frame: an arm reaching for the
    checkers crosses it. The right side, beside player 1's trays where borne-off checkers go,
    is left out.

    :param mean: each pixel the mean of what lies under it (see :data:`BORDER_OVERSAMPLE`);
        ``False``: sampled once at its centre, as profiles made before kept their calibration's.
    """
    w, h = BORDER_SIZE
    k = BORDER_OVERSAMPLE if mean else 1
    mx, my = BORDER * FIELD_W, BORDER * FIELD_H
    # Small canvas -> extended field -> image.
    to_field = np.array(
        [[(FIELD_W + 2 * mx) / (k * w), 0, -mx], [0, (FIELD_H + 2 * my) / (k * h), -my], [0, 0, 1]], dtype=np.float64
    )
    warp = homography @ to_field
    small = cv2.warpPerspective(
        image, warp, (k * w, k * h), flags=cv2.WARP_INVERSE_MAP | cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
    )
    if k > 1:
        small = cv2.resize(small, (w, h), interpolation=cv2.INTER_AREA)
    result: np.ndarray = cv2.cvtColor(small, cv2.COLOR_BGR2LAB)
    return result


#: Width of the frame left out at the end of the bar where an owned cube lies, as a fraction
#: of the band's width.
CUBE_REST_GAP = 0.14


@lru_cache(maxsize=3)
def border_mask(cube_end: str | None = None) -> np.ndarray:
    """Which pixels of :func:`border_band`'s image are the frame: left, top and bottom sides.

    :param cube_end: ``top`` or ``bottom``: an owned cube lies at that end of the bar, so the
        frame there is left out (a cube reaching onto the frame is not an arm; an arm crossing
        the frame covers far more than this gap).
    """
    w, h = BORDER_SIZE
    f = BORDER / (1 + 2 * BORDER)
    # Stay a little clear of the field's own edge, where the checkers' shadows fall.
    side_w, side_h = int(w * f * 0.8), int(h * f * 0.8)
    mask = np.zeros((h, w), dtype=bool)
    mask[:, :side_w] = True  # left
    mask[:side_h, :] = True  # top
    mask[h - side_h :, :] = True  # bottom
    _clear_of_the_edge(mask)
    centre, gap = w // 2, max(2, round(w * CUBE_REST_GAP / 2))
    if cube_end == "top":
        mask[:side_h, centre - gap : centre + gap] = False
    elif cube_end == "bottom":
        mask[h - side_h :, centre - gap : centre + gap] = False
    return mask


def _clear_of_the_edge(mask: np.ndarray) -> None:
    """Leave out the band's outermost pixels: a board's own outer edge may lie just there, and
    the camera nudged by a few pixels moves it in (what lay beyond is not in the band to
    compare with)."""
    mask[0, :] = mask[-1, :] = False
    mask[:, 0] = mask[:, -1] = False
