# SPDX-License-Identifier: MIT
"""Synthetic camera frames of a physical board, with exact ground truth.

A frame is made in three stages:

1. The board is drawn in *rectified* coordinates (the field of :mod:`vision.geometry`, scaled
   to a canvas with the frame, the off trays on player 1's right and the four ArUco markers
   around it). Everything that does not change between positions (the wooden frame, felt,
   points, markers) is drawn once per style and cached; checkers, dice and the cube are pasted
   as cached sprites.
2. The canvas is projected into the camera image over a table with a homography from a
   pinhole camera pose, then a small barrel distortion is applied.
3. Lamp gradient, glare, colour temperature, exposure, focus blur, sensor noise and JPEG are
   applied in image space.

The field corners and the homography returned in :class:`Rendered` are those before the lens
distortion, which is kept tiny (well under a pixel at the field corners).
"""

from __future__ import annotations

import argparse
import hashlib
import math
import time
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np

from vision import _textures as tx
from vision.geometry import FIELD_H, FIELD_W, TRACK_VALUES, FieldGeometry, slot_layer

BGR = tuple[int, int, int]

# ---------------------------------------------------------------------------------------------
# Public data
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BoardStyle:
    """How a board looks. Colours are BGR.

    :param name: a label for reports.
    :param frame_colour: the frame (and the bar strip).
    :param frame_surface: material of the frame, one of :data:`vision._textures.SURFACES`.
    :param field_colour: the playing surface between the points.
    :param field_surface: material of the playing surface.
    :param point_colours: colours of the odd and of the even points.
    :param point_surface: material of the points.
    :param checker_colours: player 1's and player 2's checkers.
    :param checker_gloss: 0 (matte) to 1 (glossy plastic).
    :param bar_fraction: width of the bar strip as a fraction of the field width (0: no bar).
    :param dice_colour: dice body.
    :param pip_colour: dice pips.
    :param cube_colour: doubling cube body.
    :param cube_ink: digits on the cube.
    :param track_colour: circles of a doubling track.
    :param counter_colour: the doubling track's counter.
    :param variant: picks another instance of the material textures.
    :param die_fraction: a die's side as a fraction of a checker's diameter (real dice are 0.4
        to 0.5; 0.65, the default, is what every render before it drew).
    """

    name: str = "classic"
    frame_colour: BGR = (38, 74, 118)
    frame_surface: str = "wood"
    field_colour: BGR = (120, 165, 200)
    field_surface: str = "felt"
    point_colours: tuple[BGR, BGR] = ((48, 44, 150), (190, 218, 232))
    point_surface: str = "felt"
    checker_colours: tuple[BGR, BGR] = ((222, 230, 236), (38, 36, 36))
    checker_gloss: float = 0.6
    bar_fraction: float = 0.08
    dice_colour: BGR = (235, 238, 240)
    pip_colour: BGR = (25, 25, 25)
    cube_colour: BGR = (232, 236, 238)
    cube_ink: BGR = (30, 30, 30)
    track_colour: BGR = (150, 200, 225)
    counter_colour: BGR = (40, 40, 200)
    variant: int = 0
    die_fraction: float = 0.65


STYLES: dict[str, BoardStyle] = {
    "classic": BoardStyle(),
    "green-red": BoardStyle(
        name="green-red",
        frame_colour=(30, 55, 85),
        field_colour=(45, 95, 35),
        point_colours=((190, 215, 228), (40, 40, 40)),
        checker_colours=((45, 45, 185), (60, 135, 50)),
        checker_gloss=0.5,
        bar_fraction=0.07,
        dice_colour=(40, 40, 190),
        pip_colour=(235, 235, 235),
        variant=1,
    ),
    "dark-wood": BoardStyle(
        name="dark-wood",
        frame_colour=(22, 38, 60),
        field_colour=(40, 68, 102),
        field_surface="wood",
        point_colours=((120, 170, 210), (28, 28, 30)),
        point_surface="wood",
        checker_colours=((180, 212, 232), (26, 48, 88)),
        checker_gloss=0.45,
        bar_fraction=0.09,
        dice_colour=(30, 30, 30),
        pip_colour=(230, 230, 230),
        cube_colour=(30, 30, 30),
        cube_ink=(230, 230, 230),
        variant=2,
    ),
    "printed": BoardStyle(
        name="printed",
        frame_colour=(35, 35, 38),
        frame_surface="printed",
        field_colour=(222, 228, 230),
        field_surface="printed",
        point_colours=((150, 85, 35), (40, 125, 230)),
        point_surface="printed",
        checker_colours=((232, 236, 238), (30, 30, 32)),
        checker_gloss=0.8,
        bar_fraction=0.0,
        dice_colour=(245, 245, 245),
        variant=3,
    ),
}

_CHECKER_PAIRS: tuple[tuple[BGR, BGR], ...] = (
    ((222, 230, 236), (38, 36, 36)),
    ((45, 45, 185), (60, 135, 50)),
    ((180, 212, 232), (26, 48, 88)),
    ((235, 235, 235), (40, 40, 180)),
    ((40, 200, 230), (30, 30, 30)),
    ((200, 200, 200), (120, 60, 20)),
)


def random_style(rng: np.random.Generator) -> BoardStyle:
    """A preset with jittered colours, a random checker pair, bar width and dice size.

    The dice's size (0.38 to 0.65 of a checker) is drawn from a stream of its own, split off
    ``rng`` without drawing from it: every other choice is what the same ``rng`` gave before
    dice had a size.
    """
    base = STYLES[str(rng.choice(sorted(STYLES)))]
    die_fraction = float(_side_stream(rng).uniform(0.38, 0.65))

    def jit(c: BGR, hue: float = 5.0) -> BGR:
        # In HSV, so a brown stays a brown: small hue shifts, larger saturation and value changes.
        hsv = cv2.cvtColor(np.array([[c]], np.uint8), cv2.COLOR_BGR2HSV)[0, 0].astype(np.float64)
        hsv[0] = (hsv[0] + rng.normal(0.0, hue)) % 180
        hsv[1] = np.clip(hsv[1] * rng.uniform(0.8, 1.15), 0, 255)
        hsv[2] = np.clip(hsv[2] * rng.uniform(0.8, 1.18), 8, 250)
        bgr = cv2.cvtColor(np.array([[hsv]], np.uint8), cv2.COLOR_HSV2BGR)[0, 0]
        return int(bgr[0]), int(bgr[1]), int(bgr[2])

    pair = _CHECKER_PAIRS[int(rng.integers(len(_CHECKER_PAIRS)))]
    if rng.random() < 0.5:
        pair = (pair[1], pair[0])
    return replace(
        base,
        name=f"{base.name}-random",
        frame_colour=jit(base.frame_colour),
        field_colour=jit(base.field_colour),
        point_colours=(jit(base.point_colours[0]), jit(base.point_colours[1])),
        checker_colours=(jit(pair[0], 3.0), jit(pair[1], 3.0)),
        checker_gloss=float(rng.uniform(0.3, 0.9)),
        bar_fraction=float(rng.choice([0.0, 0.06, 0.08, 0.1])),
        variant=int(rng.integers(0, 2)),
        die_fraction=die_fraction,
    )


def _side_stream(rng: np.random.Generator) -> np.random.Generator:
    """A generator of its own, set by ``rng``'s state, leaving ``rng`` where it was."""
    bits = rng.bit_generator
    if hasattr(bits, "jumped"):
        # Far ahead in the same sequence: no overlap with anything ``rng`` will draw.
        return np.random.Generator(bits.jumped())
    state = repr(bits.state).encode()
    return np.random.default_rng(int.from_bytes(hashlib.sha256(state).digest()[:16], "little"))


@dataclass(frozen=True)
class DieSpec:
    """One die on the board.

    :param value: 1-6, the face up.
    :param half: ``left`` or ``right`` of the bar (player 1's view), used when ``position`` is None.
    :param position: centre in field coordinates, or None for a free-ish random spot on ``half``.
    :param flat: False for a cocked die leaning on something.
    :param angle: rotation in degrees, or None for random.
    """

    value: int
    half: str = "right"
    position: tuple[float, float] | None = None
    flat: bool = True
    angle: float | None = None


@dataclass(frozen=True)
class CubeSpec:
    """The doubling cube: ``value`` 1 is drawn as the 64 face, centred; ``owner`` 1 or 2 or None."""

    value: int = 1
    owner: int | None = None


@dataclass(frozen=True)
class TrackSpec:
    """A doubling-track counter (instead of a cube) on the circle for ``value`` and ``owner``."""

    value: int = 1
    owner: int | None = None


@dataclass(frozen=True)
class Scene:
    """What lies on the board.

    :param points: 24 signed counts in player 1's numbering (index 0 = his 1-point; + player 1).
    :param bar: checkers on the bar, player 1's and player 2's.
    :param off: checkers borne off, player 1's and player 2's.
    :param dice: dice on the board.
    :param cube: the doubling cube, if any.
    :param track: a doubling-track counter, if any.
    """

    points: tuple[int, ...]
    bar: tuple[int, int] = (0, 0)
    off: tuple[int, int] = (0, 0)
    dice: tuple[DieSpec, ...] = ()
    cube: CubeSpec | None = None
    track: TrackSpec | None = None

    def __post_init__(self) -> None:
        if len(self.points) != 24:
            raise ValueError(f"a scene needs 24 points, got {len(self.points)}")


@dataclass(frozen=True)
class Camera:
    """A camera above the board, and the table the board lies on.

    :param size: image width and height.
    :param fill: fraction of the image height covered by the whole board (frame included).
    :param tilt: degrees the optical axis is off the board's normal.
    :param tilt_direction: direction of the tilt in the board plane, degrees.
    :param rotation: in-plane rotation of the board in the image, degrees.
    :param offset: board centre offset from the image centre, fractions of width and height.
    :param fov: horizontal field of view, degrees.
    :param distortion: barrel distortion coefficient (0.01 moves the image corners by 1%).
    :param focus_blur: Gaussian sigma of the focus blur, image pixels.
    :param table_colour: colour of the table around the board.
    :param table_surface: material of the table.
    """

    size: tuple[int, int] = (1280, 720)
    fill: float = 0.82
    tilt: float = 3.0
    tilt_direction: float = 30.0
    rotation: float = 1.0
    offset: tuple[float, float] = (0.0, 0.0)
    fov: float = 64.0
    distortion: float = 0.006
    focus_blur: float = 0.6
    table_colour: BGR = (70, 95, 120)
    table_surface: str = "wood"

    @classmethod
    def random(cls, rng: np.random.Generator, size: tuple[int, int] = (1280, 720)) -> Camera:
        """A plausible random pose: board centred, 60-90% of the height, up to 8 degrees tilt."""
        table = _TABLES[int(rng.integers(len(_TABLES)))]
        return cls(
            size=size,
            fill=float(rng.uniform(0.6, 0.9)),
            tilt=float(rng.uniform(0.0, 8.0)),
            tilt_direction=float(rng.uniform(0.0, 360.0)),
            rotation=float(rng.normal(0.0, 2.0)),
            offset=(float(rng.normal(0.0, 0.02)), float(rng.normal(0.0, 0.02))),
            fov=float(rng.uniform(55.0, 75.0)),
            distortion=float(rng.uniform(0.0, 0.012)),
            focus_blur=float(rng.uniform(0.3, 1.1)),
            table_colour=table[0],
            table_surface=table[1],
        )


_TABLES: tuple[tuple[BGR, str], ...] = (
    ((70, 95, 120), "wood"),
    ((50, 70, 95), "wood"),
    ((110, 140, 165), "wood"),
    ((120, 120, 118), "cloth"),
    ((70, 50, 40), "cloth"),
    ((180, 185, 190), "printed"),
)


@dataclass(frozen=True)
class Lighting:
    """Light and sensor.

    :param lamp: lamp position in image fractions (may lie outside 0-1).
    :param lamp_strength: how much darker the far side of the image is (0-0.6).
    :param vignette: darkening of the image corners.
    :param glare: brightness of the lamp's reflection (0-0.5).
    :param glare_position: centre of the reflection in image fractions.
    :param glare_size: radius of the reflection as a fraction of the image height.
    :param shadow: darkness of the shadows cast by checkers, dice, cube and hand (0-1).
    :param exposure: overall gain.
    :param colour_temperature: Kelvin; 3000 is a warm bulb, 6500 daylight.
    :param noise: sensor noise sigma in 8-bit levels.
    :param jpeg_quality: JPEG quality (100: no compression artefacts to speak of).
    """

    lamp: tuple[float, float] = (0.25, -0.3)
    lamp_strength: float = 0.3
    vignette: float = 0.2
    glare: float = 0.12
    glare_position: tuple[float, float] = (0.62, 0.35)
    glare_size: float = 0.12
    shadow: float = 0.45
    exposure: float = 1.0
    colour_temperature: float = 4800.0
    noise: float = 3.0
    jpeg_quality: int = 88

    @classmethod
    def random(cls, rng: np.random.Generator) -> Lighting:
        """Plausible random indoor lighting."""
        return cls(
            lamp=(float(rng.uniform(-0.4, 1.4)), float(rng.uniform(-0.6, 1.2))),
            lamp_strength=float(rng.uniform(0.05, 0.5)),
            vignette=float(rng.uniform(0.05, 0.35)),
            glare=float(rng.uniform(0.0, 0.3)) if rng.random() < 0.7 else 0.0,
            glare_position=(float(rng.uniform(0.2, 0.8)), float(rng.uniform(0.2, 0.8))),
            glare_size=float(rng.uniform(0.05, 0.2)),
            shadow=float(rng.uniform(0.25, 0.65)),
            exposure=float(rng.uniform(0.8, 1.15)),
            colour_temperature=float(rng.uniform(2800.0, 6800.0)),
            noise=float(rng.uniform(1.0, 6.0)),
            jpeg_quality=int(rng.integers(60, 96)),
        )


@dataclass(frozen=True)
class Rendered:
    """A rendered frame and its ground truth.

    :param image: BGR uint8 camera frame.
    :param corners: 4x2 image pixels of the field corners beside player 1's 13, 24, 1 and 12 points.
    :param homography: 3x3 map from field coordinates to image pixels (before lens distortion).
    :param dice_boxes: ``(x, y, w, h)`` image boxes of the dice, in the scene's order.
    :param hand_box: ``(x, y, w, h)`` of the hand, if one was drawn.
    :param bar_fraction: the board's bar fraction (for :class:`vision.geometry.FieldGeometry`).
    """

    image: np.ndarray
    corners: np.ndarray
    homography: np.ndarray
    dice_boxes: tuple[tuple[int, int, int, int], ...]
    hand_box: tuple[int, int, int, int] | None
    bar_fraction: float


# ---------------------------------------------------------------------------------------------
# Canvas layout
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Layout:
    """Where the field, frame, markers and trays lie on the canvas (all canvas pixels)."""

    scale: float
    bar_fraction: float
    ml: int
    mt: int
    mr: int
    mb: int
    fw: int
    fh: int
    marker: int
    quiet: int

    @property
    def geom(self) -> FieldGeometry:
        return FieldGeometry(bar_fraction=self.bar_fraction)

    @property
    def shape(self) -> tuple[int, int]:
        return self.mt + self.fh + self.mb, self.ml + self.fw + self.mr

    @property
    def field_to_canvas(self) -> np.ndarray:
        # Field x=0 lies on the boundary between canvas pixels ml-1 and ml (pixel centres are integers).
        s = self.scale
        return np.array([[s, 0, self.ml - 0.5], [0, s, self.mt - 0.5], [0, 0, 1]], np.float64)

    def c(self, x: float, y: float) -> tuple[float, float]:
        """Field point to canvas point."""
        return x * self.scale + self.ml - 0.5, y * self.scale + self.mt - 0.5

    def tray(self, player: int) -> tuple[float, float, float, float]:
        """``(x0, y0, x1, y1)`` of a player's off tray, in field coordinates."""
        d = self.geom.checker_diameter
        x0 = FIELD_W + 0.3 * d
        x1 = x0 + 1.2 * d
        top = (self.marker + self.quiet) / self.scale + 0.15 * d
        if player == 1:
            return x0, FIELD_H / 2 + 0.15 * d, x1, FIELD_H - top
        return x0, top, x1, FIELD_H / 2 - 0.15 * d


@lru_cache(maxsize=32)
def _layout(bar_fraction: float, scale: float) -> _Layout:
    d = FieldGeometry(bar_fraction=bar_fraction).checker_diameter
    marker = max(12, round(0.9 * d * scale / 6.0) * 6)
    quiet = max(3, round(marker / 5))
    margin = marker + quiet + round(0.3 * d * scale)
    right = max(margin, round((0.3 + 1.2 + 0.35) * d * scale))
    return _Layout(
        scale=scale,
        bar_fraction=bar_fraction,
        ml=margin,
        mt=margin,
        mr=right,
        mb=margin,
        fw=round(FIELD_W * scale),
        fh=round(FIELD_H * scale),
        marker=marker,
        quiet=quiet,
    )


def _canvas_scale(camera: Camera) -> float:
    # About 1.2x the image resolution of a typical frame, quantised so textures can be cached.
    return round(max(0.3, min(1.5, camera.size[1] / 1150.0)), 2)


# ---------------------------------------------------------------------------------------------
# Static board (cached per style)
# ---------------------------------------------------------------------------------------------


@lru_cache(maxsize=64)
def _material(kind: str, h: int, w: int, scale: float, variant: int, vertical: bool = False) -> np.ndarray:
    return tx.surface_map(kind, h, w, scale, variant % 4, vertical)


def _aa_mask(shape: tuple[int, int], polys: list[np.ndarray]) -> np.ndarray:
    """Anti-aliased polygon mask, float32 0-1, drawn at 4x sub-pixel precision."""
    m = np.zeros(shape, np.uint8)
    cv2.fillPoly(m, [np.round(p * 16).astype(np.int32) for p in polys], 255, cv2.LINE_AA, shift=4)
    return m.astype(np.float32) / 255.0


# Labels of the static board's materials; a style gives each its colour.
_FRAME, _TRAY, _PAPER, _FIELD, _POINT_A, _POINT_B, _BAR = range(7)
_WEIGHT_SCALE = 160.0


@dataclass(frozen=True)
class _Structure:
    """A board's static picture without its colours: per pixel a material label and a brightness.

    Pixels on a boundary (the points' anti-aliased edges) also mix in a second label.
    """

    labels: np.ndarray
    weights: np.ndarray
    edge_index: np.ndarray
    edge_labels: np.ndarray
    edge_weights: np.ndarray


@lru_cache(maxsize=32)
def _structure(
    bar_fraction: float, scale: float, markers: bool, surfaces: tuple[str, str, str], variant: int
) -> _Structure:
    lay = _layout(bar_fraction, scale)
    geom = lay.geom
    h, w = lay.shape
    s = scale
    frame_s, field_s, point_s = surfaces
    labels = np.full((h, w), _FRAME, np.uint8)
    weights = _material(frame_s, h, w, s, variant).copy()
    labels2 = np.zeros((h, w), np.uint8)
    weights2 = np.zeros((h, w), np.float32)

    # Raised outer rim of the board: a bevel lit from the top-left, a dark outline.
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    edge = np.minimum(np.minimum(xx, w - 1 - xx), np.minimum(yy, h - 1 - yy))
    rim = np.clip(1.0 - edge / max(2.0, 4 * s), 0, 1)
    lit = np.where(xx * h + yy * w < h * w, 1.0, -1.0).astype(np.float32)
    weights *= 1.0 + 0.14 * rim * lit - 0.2 * np.clip(1.0 - edge / 1.5, 0, 1)

    # Off trays: recessed, lined with the field's material.
    for player in (1, 2):
        x0, y0, x1, y1 = lay.tray(player)
        (cx0, cy0), (cx1, cy1) = lay.c(x0, y0), lay.c(x1, y1)
        sl = np.s_[int(cy0) : int(cy1), int(cx0) : int(cx1)]
        labels[sl] = _TRAY
        weights[sl] = _material(field_s, h, w, s, variant + 1)[sl] * 0.8 * _inner_shade(weights[sl].shape, 6 * s)

    # White quiet squares around the markers; the field drawn next covers their inner quadrant.
    m, q = lay.marker, lay.quiet
    if markers:
        for x0, y0 in _marker_cells(lay):
            labels[y0 - q : y0 + m + q, x0 - q : x0 + m + q] = _PAPER
            weights[y0 - q : y0 + m + q, x0 - q : x0 + m + q] = 1.0

    fsl = np.s_[lay.mt : lay.mt + lay.fh, lay.ml : lay.ml + lay.fw]
    fl, fw_, fl2, fw2 = labels[fsl], weights[fsl], labels2[fsl], weights2[fsl]
    fl[:] = _FIELD
    fw_[:] = _material(field_s, h, w, s, variant + 2)[fsl]
    polys: tuple[list[np.ndarray], list[np.ndarray]] = ([], [])
    pl, pw = geom.point_length, geom.point_width
    for p in range(1, 25):
        row, _ = geom.column(p)
        cx = geom.point_center_x(p)
        half = pw * 0.47
        base_y, tip_y = (0.0, pl) if row == 0 else (float(FIELD_H), FIELD_H - pl)
        tri = np.array([[cx - half, base_y], [cx + half, base_y], [cx, tip_y]], np.float32) * s
        polys[(p + 1) % 2].append(tri - 0.5)
    for k, label in ((0, _POINT_A), (1, _POINT_B)):
        cover = _aa_mask(fl.shape, polys[k])
        mod = _material(point_s, h, w, s, variant + 3 + k)[fsl]
        inside = cover >= 0.5
        part = (cover > 0) & (cover < 1)
        # On an edge the label with the larger share is the primary one, the other the secondary.
        fl2[part] = np.where(inside[part], fl[part], label)
        fw2[part] = np.where(inside[part], (1 - cover[part]) * fw_[part], cover[part] * mod[part])
        fw_[:] = np.where(inside, cover * mod, np.where(part, (1 - cover) * fw_, fw_))
        fl[inside] = label
    if bar_fraction > 0:
        bx0, _, bx1, _ = geom.bar_box()
        c0, c1 = round(bx0 * s), round(bx1 * s)
        fl[:, c0:c1] = _BAR
        fw_[:, c0:c1] = _material(frame_s, h, w, s, variant + 5, True)[fsl][:, c0:c1] * 1.05
        fw2[:, c0:c1] = 0
        shade = np.ones(fl.shape, np.float32)
        shade[:, :c0] = _inner_shade((fl.shape[0], c0), 5 * s, "r")
        shade[:, c1:] = _inner_shade((fl.shape[0], fl.shape[1] - c1), 5 * s, "l")
        fw_ *= shade
        fw2 *= shade
    shade = _inner_shade(fl.shape, 7 * s)
    # The field's very corners stay unshaded: a dark corner would merge with the black corner of
    # the marker touching it, and the marker would no longer look square to a detector.
    dx = np.minimum(np.arange(fl.shape[1]), fl.shape[1] - 1 - np.arange(fl.shape[1]))[None, :]
    dy = np.minimum(np.arange(fl.shape[0]), fl.shape[0] - 1 - np.arange(fl.shape[0]))[:, None]
    fade = np.clip((np.hypot(dx, dy) - 0.15 * m) / (0.6 * m), 0, 1).astype(np.float32)
    shade = 1.0 - (1.0 - shade) * fade
    fw_ *= shade
    fw2 *= shade
    idx = np.flatnonzero(weights2 > 0).astype(np.int32)
    # Brightness kept as bytes: a few dozen cached boards then cost little memory.
    packed = np.clip(weights * _WEIGHT_SCALE + 0.5, 0, 255).astype(np.uint8)
    st = _Structure(labels, packed, idx, labels2.ravel()[idx].copy(), weights2.ravel()[idx].copy())
    for a in (st.labels, st.weights, st.edge_index, st.edge_labels, st.edge_weights):
        a.flags.writeable = False
    return st


@lru_cache(maxsize=8)
def _base_canvas(style: BoardStyle, scale: float, markers: bool) -> np.ndarray:
    lay = _layout(style.bar_fraction, scale)
    st = _structure(
        style.bar_fraction,
        scale,
        markers,
        (style.frame_surface, style.field_surface, style.point_surface),
        style.variant,
    )
    lut = np.array(
        [
            style.frame_colour,
            style.field_colour,
            (236, 238, 238),
            style.field_colour,
            style.point_colours[0],
            style.point_colours[1],
            style.frame_colour,
        ],
        np.float32,
    )
    # Byte arithmetic throughout: a new style's board costs a few milliseconds.
    lut256 = np.zeros((256, 1, 3), np.uint8)
    lut256[: len(lut), 0] = np.clip(lut, 0, 255).astype(np.uint8)
    colours = cv2.LUT(cv2.merge([st.labels] * 3), lut256)
    out = cv2.multiply(colours, cv2.merge([st.weights] * 3), scale=1.0 / _WEIGHT_SCALE)
    if len(st.edge_index):
        flat = out.reshape(-1, 3)
        idx = st.edge_index
        mixed = lut[st.labels.ravel()[idx]] * (st.weights.ravel()[idx, None] / _WEIGHT_SCALE)
        mixed += lut[st.edge_labels] * st.edge_weights[:, None]
        flat[idx] = np.clip(mixed + 0.5, 0, 255).astype(np.uint8)
    if markers:
        m = lay.marker
        aruco = cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50)
        for ident, (x0, y0) in enumerate(_marker_cells(lay)):
            mk = cv2.aruco.generateImageMarker(aruco, ident, m)
            # Printed ink is never pure black and paper never pure white.
            tile = np.where(mk[:, :, None] > 127, np.uint8(236), np.uint8(28))
            out[y0 : y0 + m, x0 : x0 + m] = np.broadcast_to(tile, (m, m, 3))
    out.flags.writeable = False
    return out


def _inner_shade(shape: tuple[int, int], width: float, sides: str = "lrtb") -> np.ndarray:
    """Brightness of a recessed surface darkened near its ``sides`` by the raised frame around it."""
    h, w = shape
    dist = np.full((h, w), 1e6, np.float32)
    xs = np.arange(w, dtype=np.float32)[None, :]
    ys = np.arange(h, dtype=np.float32)[:, None]
    if "l" in sides:
        dist = np.minimum(dist, xs)
    if "r" in sides:
        dist = np.minimum(dist, w - 1 - xs)
    if "t" in sides:
        dist = np.minimum(dist, ys)
    if "b" in sides:
        dist = np.minimum(dist, h - 1 - ys)
    shade: np.ndarray = (1.0 - 0.3 * np.exp(-dist / max(width, 1.0))).astype(np.float32)
    return shade


def _marker_cells(lay: _Layout) -> list[tuple[int, int]]:
    """Top-left canvas pixel of markers 0-3, beside the 13, 24, 1 and 12 points."""
    m = lay.marker
    left, top, right, bottom = lay.ml, lay.mt, lay.ml + lay.fw, lay.mt + lay.fh
    return [(left - m, top - m), (right, top - m), (right, bottom), (left - m, bottom)]


# ---------------------------------------------------------------------------------------------
# Sprites
# ---------------------------------------------------------------------------------------------

Sprite = tuple[np.ndarray, np.ndarray]  # float32 BGR, float32 alpha


@lru_cache(maxsize=512)
def _checker_sprite(colour: BGR, dpx: int, gloss: float, light: int) -> Sprite:
    """A checker seen from above: bevelled rim, a groove, grain and a highlight towards ``light``/8 turns."""
    pad = 2
    n = dpx + 2 * pad
    c = (n - 1) / 2
    rad = dpx / 2
    yy, xx = np.mgrid[0:n, 0:n].astype(np.float32)
    dx, dy = xx - c, yy - c
    dist = np.hypot(dx, dy)
    r = dist / rad
    ang = light * math.pi / 4
    lx, ly = math.cos(ang), math.sin(ang)
    facing = (dx * lx + dy * ly) / np.maximum(dist, 1e-3)
    bevel = np.clip((r - 0.8) / 0.2, 0, 1)
    shade = 1.0 + 0.25 * bevel * facing - 0.3 * np.clip((r - 0.94) / 0.06, 0, 1)
    shade -= 0.14 * np.exp(-(((r - 0.74) / 0.035) ** 2))
    shade += 0.03 * (1.0 - r**2)
    shade *= 1.0 + 0.025 * tx.noise_patch(n)
    rgb = shade[:, :, None] * np.asarray(colour, np.float32)[None, None, :]
    hx, hy = c + 0.45 * rad * lx, c + 0.45 * rad * ly
    spec = 0.35 * np.exp(-((xx - hx) ** 2 + (yy - hy) ** 2) / (0.35 * rad) ** 2)
    spec += 0.45 * bevel * np.clip(facing, 0, 1) ** 3 * (r < 1)
    rgb += (gloss * 255 * spec)[:, :, None]
    alpha = np.clip(rad - dist + 0.5, 0, 1).astype(np.float32)
    return np.clip(rgb, 0, 255).astype(np.float32), alpha


@lru_cache(maxsize=64)
def _blob_shadow(w: int, h: int, blur: float, round_: float = 1.0) -> np.ndarray:
    """A soft shadow of a ``w`` x ``h`` rounded rectangle (``round_`` 1: ellipse)."""
    pad = math.ceil(3 * blur) + 1
    m = np.zeros((h + 2 * pad, w + 2 * pad), np.uint8)
    if round_ >= 1.0:
        cv2.ellipse(m, (pad * 16 + w * 8, pad * 16 + h * 8), (w * 8, h * 8), 0, 0, 360, 255, -1, cv2.LINE_AA, 4)
    else:
        rr = int(round_ * min(w, h) / 2)
        cv2.rectangle(m, (pad + rr, pad), (pad + w - rr, pad + h), 255, -1)
        cv2.rectangle(m, (pad, pad + rr), (pad + w, pad + h - rr), 255, -1)
        for x in (pad + rr, pad + w - rr):
            for y in (pad + rr, pad + h - rr):
                cv2.circle(m, (x, y), rr, 255, -1, cv2.LINE_AA)
    a = m.astype(np.float32) / 255.0
    if blur > 0.3:
        a = np.asarray(cv2.GaussianBlur(a, (0, 0), blur), np.float32)
    return a


def _rounded_square(n: int, radius: float) -> np.ndarray:
    """Anti-aliased alpha of an ``n`` x ``n`` square with rounded corners."""
    c = (n - 1) / 2
    yy, xx = np.mgrid[0:n, 0:n].astype(np.float32)
    half = n / 2 - 0.5
    qx = np.maximum(np.abs(xx - c) - (half - radius), 0)
    qy = np.maximum(np.abs(yy - c) - (half - radius), 0)
    sd = np.hypot(qx, qy) - radius
    alpha: np.ndarray = np.clip(0.5 - sd, 0, 1).astype(np.float32)
    return alpha


def pip_layout() -> dict[int, list[tuple[int, int]]]:
    """Where the pips of each face sit, in thirds of the face from its centre (-1, 0, 1)."""
    return {face: list(spots) for face, spots in _PIPS.items()}


_PIPS = {
    1: [(0, 0)],
    2: [(-1, -1), (1, 1)],
    3: [(-1, -1), (0, 0), (1, 1)],
    4: [(-1, -1), (1, -1), (-1, 1), (1, 1)],
    5: [(-1, -1), (1, -1), (0, 0), (-1, 1), (1, 1)],
    6: [(-1, -1), (1, -1), (-1, 0), (1, 0), (-1, 1), (1, 1)],
}


@lru_cache(maxsize=128)
def _die_face(value: int, n: int, colour: BGR, pip: BGR) -> Sprite:
    """The top face of a die, upright, ``n`` pixels wide, with rounded edges shading darker."""
    alpha = _rounded_square(n, 0.2 * n)
    c = (n - 1) / 2
    yy, xx = np.mgrid[0:n, 0:n].astype(np.float32)
    edge = np.minimum(np.minimum(xx, n - 1 - xx), np.minimum(yy, n - 1 - yy)) / n
    shade = 0.78 + 0.22 * np.clip(edge / 0.12, 0, 1)
    rgb = shade[:, :, None] * np.asarray(colour, np.float32)[None, None, :]
    big = 4
    pm = np.zeros((n * big, n * big), np.uint8)
    for ix, iy in _PIPS[value]:
        px, py = c + ix * 0.27 * n, c + iy * 0.27 * n
        rad = 0.095 * n * (1.25 if value == 1 else 1.0)
        cv2.circle(pm, (int(px * big + big / 2), int(py * big + big / 2)), int(rad * big), 255, -1, cv2.LINE_AA)
    pa = cv2.resize(pm, (n, n), interpolation=cv2.INTER_AREA).astype(np.float32) / 255.0
    rgb += (np.asarray(pip, np.float32)[None, None, :] - rgb) * pa[:, :, None]
    return rgb, alpha


@lru_cache(maxsize=64)
def _cube_face(value: int, n: int, colour: BGR, ink: BGR) -> Sprite:
    """The top face of the doubling cube with its number, upright."""
    rgb, alpha = _die_face(1, n, colour, colour)
    rgb = rgb.copy()
    text = str(64 if value == 1 else value)
    font = cv2.FONT_HERSHEY_DUPLEX
    big = 4
    tm = np.zeros((n * big, n * big), np.uint8)
    thick = max(1, int(0.09 * n * big))
    (tw, th), _ = cv2.getTextSize(text, font, 1.0, thick)
    fs = 0.62 * n * big / max(tw, th * 1.2)
    (tw, th), _ = cv2.getTextSize(text, font, fs, thick)
    cv2.putText(tm, text, ((n * big - tw) // 2, (n * big + th) // 2), font, fs, 255, thick, cv2.LINE_AA)
    ta = cv2.resize(tm, (n, n), interpolation=cv2.INTER_AREA).astype(np.float32) / 255.0
    rgb += (np.asarray(ink, np.float32)[None, None, :] - rgb) * ta[:, :, None]
    return rgb, alpha


def _paste(canvas: np.ndarray, rgb: np.ndarray | None, alpha: np.ndarray, x: int, y: int, dark: float = 0.0) -> None:
    """Alpha-blend a sprite with its top-left at ``(x, y)``; with ``rgb`` None, darken by ``dark``."""
    h, w = alpha.shape
    ch, cw = canvas.shape[:2]
    x0, y0, x1, y1 = max(x, 0), max(y, 0), min(x + w, cw), min(y + h, ch)
    if x0 >= x1 or y0 >= y1:
        return
    a = alpha[y0 - y : y1 - y, x0 - x : x1 - x, None]
    patch = canvas[y0:y1, x0:x1].astype(np.float32)
    if rgb is None:
        patch *= 1.0 - dark * a
    else:
        patch += (rgb[y0 - y : y1 - y, x0 - x : x1 - x] - patch) * a
    canvas[y0:y1, x0:x1] = np.clip(patch + 0.5, 0, 255).astype(np.uint8)


def _composite(canvas: np.ndarray, layers: list[tuple[np.ndarray | None, np.ndarray, int, int, float]]) -> None:
    """Several :func:`_paste` calls on one patch, in order: ``(rgb or None, alpha, x, y, dark)``."""
    ch, cw = canvas.shape[:2]
    x0 = max(0, min(x for _, _, x, _, _ in layers))
    y0 = max(0, min(y for _, _, _, y, _ in layers))
    x1 = min(cw, max(x + a.shape[1] for _, a, x, _, _ in layers))
    y1 = min(ch, max(y + a.shape[0] for _, a, _, y, _ in layers))
    if x0 >= x1 or y0 >= y1:
        return
    patch = canvas[y0:y1, x0:x1].astype(np.float32)
    for rgb, alpha, x, y, dark in layers:
        _paste_float(patch, rgb, alpha, x - x0, y - y0, dark)
    canvas[y0:y1, x0:x1] = np.clip(patch + 0.5, 0, 255).astype(np.uint8)


def _paste_float(patch: np.ndarray, rgb: np.ndarray | None, alpha: np.ndarray, x: int, y: int, dark: float) -> None:
    h, w = alpha.shape
    ph, pw = patch.shape[:2]
    x0, y0, x1, y1 = max(x, 0), max(y, 0), min(x + w, pw), min(y + h, ph)
    if x0 >= x1 or y0 >= y1:
        return
    a = alpha[y0 - y : y1 - y, x0 - x : x1 - x, None]
    sub = patch[y0:y1, x0:x1]
    if rgb is None:
        sub *= 1.0 - dark * a
    else:
        sub += (rgb[y0 - y : y1 - y, x0 - x : x1 - x] - sub) * a


def _paste_affine(canvas: np.ndarray, sprite: Sprite, m: np.ndarray, dark: float | None = None) -> np.ndarray:
    """Paste a sprite mapped by the 2x3 affine ``m`` (sprite pixels to canvas); return its outline."""
    rgb, alpha = sprite
    h, w = alpha.shape
    box = np.array([[-0.5, -0.5], [w - 0.5, -0.5], [w - 0.5, h - 0.5], [-0.5, h - 0.5]], np.float64)
    pts = box @ m[:, :2].T + m[:, 2]
    x0, y0 = np.floor(pts.min(0)).astype(int) - 1
    x1, y1 = np.ceil(pts.max(0)).astype(int) + 1
    local = m.copy()
    local[:, 2] -= (x0, y0)
    size = (int(x1 - x0), int(y1 - y0))
    a = cv2.warpAffine(alpha, local, size, flags=cv2.INTER_LINEAR, borderValue=0)
    if dark is not None:
        _paste(canvas, None, a, int(x0), int(y0), dark)
    else:
        c = cv2.warpAffine(rgb, local, size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
        _paste(canvas, c, a, int(x0), int(y0))
    return np.asarray(pts, np.float64)


def _affine(
    n: int, cx: float, cy: float, angle: float, sx: float = 1.0, sy: float = 1.0, shear: float = 0.0
) -> np.ndarray:
    """Sprite of width ``n`` -> canvas: scale/shear about its centre, rotate by ``angle`` degrees, move to (cx, cy)."""
    c = (n - 1) / 2
    t = math.radians(angle)
    rot = np.array([[math.cos(t), -math.sin(t)], [math.sin(t), math.cos(t)]])
    lin = rot @ np.array([[sx, shear], [0.0, sy]])
    off = np.array([cx, cy]) - lin @ np.array([c, c])
    return np.hstack([lin, off[:, None]])


# ---------------------------------------------------------------------------------------------
# Camera
# ---------------------------------------------------------------------------------------------


def _pose(camera: Camera, lay: _Layout) -> tuple[np.ndarray, np.ndarray]:
    """Field->image homography, and the camera centre ``(x, y, height)`` in field units."""
    w, h = camera.size
    f = (w / 2) / math.tan(math.radians(camera.fov) / 2)
    k = np.array([[f, 0, w / 2], [0, f, h / 2], [0, 0, 1]], np.float64)
    s = lay.scale
    bw, bh = lay.shape[1] / s, lay.shape[0] / s
    bcx, bcy = bw / 2 - lay.ml / s, bh / 2 - lay.mt / s
    dist = f * bh / (camera.fill * h)
    a = math.radians(camera.tilt_direction)
    rvec = np.array([math.cos(a), math.sin(a), 0.0]) * math.radians(camera.tilt)
    rt, _ = cv2.Rodrigues(rvec)
    r = math.radians(camera.rotation)
    rz = np.array([[math.cos(r), -math.sin(r), 0], [math.sin(r), math.cos(r), 0], [0, 0, 1]])
    rot = rz @ rt
    t = np.array([camera.offset[0] * w * dist / f, camera.offset[1] * h * dist / f, dist])
    hom = k @ np.column_stack([rot[:, 0], rot[:, 1], t]) @ np.array([[1, 0, -bcx], [0, 1, -bcy], [0, 0, 1]])
    hom /= hom[2, 2]
    centre = -rot.T @ t
    return hom, np.array([centre[0] + bcx, centre[1] + bcy, abs(centre[2])])


def _project(hom: np.ndarray, pts: np.ndarray) -> np.ndarray:
    p = np.asarray(pts, np.float64).reshape(-1, 2)
    q = np.hstack([p, np.ones((len(p), 1))]) @ hom.T
    return np.asarray(q[:, :2] / q[:, 2:3], np.float64)


def _distort_points(pts: np.ndarray, size: tuple[int, int], k: float) -> np.ndarray:
    """Undistorted image points to where the barrel-distorted image shows them."""
    w, h = size
    c = np.array([(w - 1) / 2, (h - 1) / 2])
    norm = float(c @ c)
    u = pts - c
    d = u.copy()
    for _ in range(4):
        d = u / (1 + k * (d**2).sum(1, keepdims=True) / norm)
    return np.asarray(d + c, np.float64)


@lru_cache(maxsize=8)
def _undistort_maps(w: int, h: int, k: float) -> tuple[np.ndarray, np.ndarray]:
    """For every pixel of the distorted image, where it lies in the undistorted one."""
    cx, cy = (w - 1) / 2, (h - 1) / 2
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    f = 1 + k * ((xx - cx) ** 2 + (yy - cy) ** 2) / (cx * cx + cy * cy)
    ux, uy = (xx - cx) * f + cx, (yy - cy) * f + cy
    ux.flags.writeable = False
    uy.flags.writeable = False
    return ux, uy


def _project_board(img: np.ndarray, canvas: np.ndarray, hom: np.ndarray, quad: np.ndarray, k: float) -> None:
    """Draw the canvas into ``img`` through the homography ``hom`` and a barrel distortion ``k``."""
    h, w = img.shape[:2]
    if k == 0:
        cv2.warpPerspective(canvas, hom, (w, h), dst=img, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_TRANSPARENT)
        return
    # One remap over the board's box does both the projection and the distortion.
    dq = _distort_points(quad, (w, h), k)
    x0, y0 = np.clip(np.floor(dq.min(0)) - 2, 0, [w, h]).astype(int)
    x1, y1 = np.clip(np.ceil(dq.max(0)) + 2, 0, [w, h]).astype(int)
    if x1 <= x0 or y1 <= y0:
        return
    ux, uy = _undistort_maps(w, h, k)
    ux, uy = ux[y0:y1, x0:x1], uy[y0:y1, x0:x1]
    inv = np.linalg.inv(hom).astype(np.float32)
    zz = inv[2, 0] * ux + inv[2, 1] * uy + inv[2, 2]
    mx = (inv[0, 0] * ux + inv[0, 1] * uy + inv[0, 2]) / zz
    my = (inv[1, 0] * ux + inv[1, 1] * uy + inv[1, 2]) / zz
    roi = img[y0:y1, x0:x1]
    cv2.remap(canvas, mx, my, cv2.INTER_LINEAR, dst=roi, borderMode=cv2.BORDER_TRANSPARENT)


@lru_cache(maxsize=16)
def _table(colour: BGR, surface: str, w: int, h: int) -> np.ndarray:
    # Generated at half size: the table is out of the board's plane and a little soft anyway.
    m = tx.surface_map(surface, h // 2 + 1, w // 2 + 1, 0.6, 7)
    t = cv2.resize(tx.tint(colour, m), (w, h), interpolation=cv2.INTER_LINEAR)
    out = np.clip(t, 0, 255).astype(np.uint8)
    out.flags.writeable = False
    return out


_GAIN_SCALE = 160.0
_NOISE_SCALE = 16.0


@lru_cache(maxsize=4)
def _noise_field(w: int, h: int) -> tuple[np.ndarray, np.ndarray]:
    """Unit sensor noise times :data:`_NOISE_SCALE`, split into its positive and negative parts (bytes)."""
    rng = np.random.default_rng(tx.stable_seed("sensor", w, h))
    n = rng.standard_normal((h + 48, w, 3), dtype=np.float32)
    # Sensor noise is mostly luminance, with some chroma.
    mixed = (0.7 * n[:, :, :1] + 0.45 * n) * _NOISE_SCALE
    pos = np.clip(mixed + 0.5, 0, 255).astype(np.uint8)
    neg = np.clip(-mixed + 0.5, 0, 255).astype(np.uint8)
    pos.flags.writeable = False
    neg.flags.writeable = False
    return pos, neg


def _temperature_gains(kelvin: float) -> np.ndarray:
    """BGR white-balance error for a light of ``kelvin`` on a camera balanced for about 5000 K."""
    t = (kelvin - 5000.0) / 2500.0
    return np.array([1.0 + 0.12 * t, 1.0 + 0.01 * t, 1.0 - 0.1 * t], np.float32)


# ---------------------------------------------------------------------------------------------
# Rendering
# ---------------------------------------------------------------------------------------------


class _Painter:
    """Per-frame drawing on a copy of the static canvas."""

    def __init__(
        self,
        style: BoardStyle,
        lay: _Layout,
        canvas: np.ndarray,
        rng: np.random.Generator,
        light: tuple[float, float],
        cam_centre: np.ndarray,
        shadow: float,
        layout_seed: int | None = None,
    ) -> None:
        self.style, self.lay, self.canvas, self.rng = style, lay, canvas, rng
        self.layout_seed = layout_seed
        self.geom = lay.geom
        self.d = self.geom.checker_diameter
        self.light = light  # unit vector towards the lamp, canvas axes
        self.light_q = round(math.atan2(light[1], light[0]) / (math.pi / 4)) % 8
        self.cam = cam_centre
        self.shadow = shadow
        self.occupied: list[tuple[float, float]] = []

    def parallax(self, x: float, y: float, height: float) -> tuple[float, float]:
        """Canvas displacement of something ``height`` field units above field point (x, y)."""
        k = height / max(self.cam[2] - height, 1.0) * self.lay.scale
        return (x - self.cam[0]) * k, (y - self.cam[1]) * k

    def shadow_offset(self, height: float) -> tuple[float, float]:
        s = 0.9 * height * self.lay.scale
        return -self.light[0] * s, -self.light[1] * s

    def _placed(self, *where: float) -> np.random.Generator:
        """Where a checker lies off its spot: the frame's draw, or with a layout seed the same
        for that spot in every frame (a checker stays where it was put until it is moved)."""
        if self.layout_seed is None:
            return self.rng
        return np.random.default_rng([self.layout_seed & 0xFFFFFFFF, *(round(4 * v) & 0xFFFFFFFF for v in where)])

    def checker(self, colour: BGR, x: float, y: float) -> None:
        s = self.lay.scale
        rng = self._placed(x, y)
        d = self.d * float(rng.choice((0.98, 1.01)))
        jit = np.clip(rng.normal(0.0, 0.03 * self.d, 2), -0.08 * self.d, 0.08 * self.d)
        x, y = x + jit[0], y + jit[1]
        dpx = max(6, round(d * s))
        thick = 0.17 * self.d
        cx, cy = self.lay.c(x, y)
        sh = _blob_shadow(dpx, dpx, max(0.6, 0.05 * dpx))
        so = self.shadow_offset(thick)
        pad = (sh.shape[0] - dpx) / 2
        rgb, alpha = _checker_sprite(colour, dpx, self.style.checker_gloss, self.light_q)
        n = alpha.shape[0]
        # Side wall: a darker disc at the bottom, the top face shifted by parallax.
        px, py = self.parallax(x, y, thick)
        _composite(
            self.canvas,
            [
                (None, sh, round(cx - dpx / 2 - pad + so[0]), round(cy - dpx / 2 - pad + so[1]), self.shadow),
                (rgb * 0.55, alpha, round(cx - n / 2), round(cy - n / 2), 0.0),
                (rgb, alpha, round(cx - n / 2 + px), round(cy - n / 2 + py), 0.0),
            ],
        )

    def points(self, scene: Scene) -> None:
        geom = self.geom
        cols = self.style.checker_colours
        layers: dict[int, list[tuple[BGR, float, float]]] = {}
        for i, n in enumerate(scene.points):
            colour = cols[0] if n > 0 else cols[1]
            for slot in range(min(abs(n), 15)):
                layer, _ = slot_layer(slot)
                layers.setdefault(layer, []).append((colour, *geom.slot_center(i + 1, slot)))
                self.occupied.append(geom.slot_center(i + 1, slot))
        # Lower layers first, so upper checkers cast their shadows on them.
        for layer in sorted(layers):
            for colour, x, y in layers[layer]:
                self.checker(colour, x, y)

    def bar(self, scene: Scene) -> None:
        geom = self.geom
        for player, n in ((1, scene.bar[0]), (2, scene.bar[1])):
            if n <= 0:
                continue
            y0 = geom.bar_slot_center(player, 0)[1]
            room = FIELD_H / 2 - 1.2 * self.d - 0.5 * self.d
            step = min(self.d, room / max(n - 1, 1))
            for slot in range(n):
                y = y0 + (slot * step if player == 1 else -slot * step)
                self.checker(self.style.checker_colours[player - 1], FIELD_W / 2, y)
                self.occupied.append((FIELD_W / 2, y))

    def off(self, scene: Scene) -> None:
        for player, n in ((1, scene.off[0]), (2, scene.off[1])):
            x0, y0, x1, y1 = self.lay.tray(player)
            colour = np.asarray(self.style.checker_colours[player - 1], np.float32)
            t = min(0.2 * self.d, (y1 - y0 - 0.1 * self.d) / 15)
            for k in range(n):
                # Player 1's checkers pile from the bottom of his tray, player 2's from the top.
                yc = y1 - 0.05 * self.d - (k + 0.5) * t if player == 1 else y0 + 0.05 * self.d + (k + 0.5) * t
                rng = self._placed(player, k)
                xa = x0 + 0.1 * self.d + float(rng.normal(0, 0.02 * self.d))
                xb = x1 - 0.1 * self.d + float(rng.normal(0, 0.02 * self.d))
                (ca, cy0), (cb, cy1) = self.lay.c(xa, yc - 0.45 * t), self.lay.c(xb, yc + 0.45 * t)
                rows = max(1, round(cy1 - cy0))
                prof = 0.6 + 0.5 * np.sin(np.linspace(0.3, math.pi - 0.3, rows)) ** 0.5
                top = round(cy0)
                left, right = round(ca), round(cb)
                stripe = prof[:, None, None] * colour[None, None, :]
                stripe = np.broadcast_to(stripe, (rows, right - left, 3))
                self.canvas[top : top + rows, left:right] = np.clip(stripe, 0, 255).astype(np.uint8)

    def die(self, spec: DieSpec, pos: tuple[float, float], angle: float) -> np.ndarray:
        """Draw a die; return its outline in canvas pixels."""
        st, s = self.style, self.lay.scale
        size = st.die_fraction * self.d
        n = max(8, round(size * s))
        x, y = pos
        cx, cy = self.lay.c(x, y)
        face = _die_face(spec.value, n, st.dice_colour, st.pip_colour)
        body = (np.broadcast_to(np.asarray(st.dice_colour, np.float32) * 0.6, face[0].shape), face[1])
        if spec.flat:
            so = self.shadow_offset(size)
            sh = _blob_shadow(n, n, max(0.8, 0.12 * n), 0.4)
            m_sh = _affine(sh.shape[0], cx + so[0], cy + so[1], angle)
            _paste_affine(self.canvas, (np.zeros((*sh.shape, 3), np.float32), sh), m_sh, self.shadow)
            px, py = self.parallax(x, y, size)
            outline = [
                _paste_affine(self.canvas, body, _affine(n, cx + px * f, cy + py * f, angle)) for f in (0.0, 0.35, 0.7)
            ]
            outline.append(_paste_affine(self.canvas, face, _affine(n, cx + px, cy + py, angle)))
            return np.vstack(outline)
        # Cocked: the top face leans, foreshortened into a parallelogram, a side face showing.
        lean = float(self.rng.uniform(0.55, 0.8))
        shear = float(self.rng.uniform(-0.35, 0.35))
        so = self.shadow_offset(size * 1.2)
        sh = _blob_shadow(n, int(n * 1.3), max(0.8, 0.15 * n), 0.4)
        _paste_affine(
            self.canvas,
            (np.zeros((*sh.shape, 3), np.float32), sh),
            _affine(sh.shape[1], cx + so[0], cy + so[1], angle),
            self.shadow,
        )
        side_value = 7 - spec.value if spec.value not in (1, 6) else 3
        side = _die_face(side_value, n, st.dice_colour, st.pip_colour)
        side = (side[0] * 0.62, side[1])
        side_h = math.sqrt(max(0.0, 1 - lean**2)) * 1.0
        top_y = -0.5 * n * side_h
        t = math.radians(angle)
        rot = np.array([[math.cos(t), -math.sin(t)], [math.sin(t), math.cos(t)]])
        o1 = rot @ np.array([0.0, top_y + 0.5 * n * lean + 0.5 * n * side_h])
        o0 = rot @ np.array([0.0, top_y])
        pts = [
            _paste_affine(self.canvas, side, _affine(n, cx + o1[0], cy + o1[1], angle, 1.0, side_h, shear * 0.3)),
            _paste_affine(self.canvas, face, _affine(n, cx + o0[0], cy + o0[1], angle, 1.0, lean, shear)),
        ]
        return np.vstack(pts)

    def cube(self, spec: CubeSpec) -> None:
        st, s = self.style, self.lay.scale
        size = 0.8 * self.d
        n = max(8, round(size * s))
        x, y = self.geom.cube_center(spec.owner)
        cx, cy = self.lay.c(x, y)
        angle = float(self._placed(x, y, spec.value).normal(0.0, 6.0)) + (180.0 if spec.owner == 2 else 0.0)
        face = _cube_face(spec.value, n, st.cube_colour, st.cube_ink)
        body = (np.broadcast_to(np.asarray(st.cube_colour, np.float32) * 0.6, face[0].shape), face[1])
        so = self.shadow_offset(size)
        sh = _blob_shadow(n, n, max(0.8, 0.12 * n), 0.4)
        _paste_affine(
            self.canvas,
            (np.zeros((*sh.shape, 3), np.float32), sh),
            _affine(sh.shape[0], cx + so[0], cy + so[1], angle),
            self.shadow,
        )
        px, py = self.parallax(x, y, size)
        for f in (0.0, 0.35, 0.7):
            _paste_affine(self.canvas, body, _affine(n, cx + px * f, cy + py * f, angle))
        _paste_affine(self.canvas, face, _affine(n, cx + px, cy + py, angle))

    def track(self, spec: TrackSpec) -> None:
        st, s = self.style, self.lay.scale
        rad = 0.3 * self.d * s
        spots = [(1, None)] + [(v, o) for v in TRACK_VALUES[1:] for o in (1, 2)]
        for v, o in spots:
            cx, cy = self.lay.c(*self.geom.track_center(v, o))
            cv2.circle(
                self.canvas,
                (int(cx * 16), int(cy * 16)),
                int(rad * 16),
                st.track_colour,
                max(1, int(0.06 * self.d * s)),
                cv2.LINE_AA,
                4,
            )
        x, y = self.geom.track_center(spec.value, spec.owner)
        d = self.d
        self.d = 0.7 * d
        self.checker(st.counter_colour, x, y)
        self.d = d


def free_spot(
    rng: np.random.Generator,
    geom: FieldGeometry,
    half: str,
    taken: list[tuple[float, float]],
    checkers: list[tuple[float, float]],
    size: float,
    *,
    tries: int = 40,
    spread: float = 0.1,
    apart: float = 1.5,
) -> tuple[float, float]:
    """A spot on ``half`` (field units) clear of other dice and, if there is room, of checkers:
    where dice come to rest.

    :param size: the die's side; dice keep ``apart`` sides between their centres.
    :param tries: spots drawn before the least crowded one is taken.
    :param spread: how far from the field's middle row they are drawn (a share of its height).
    """
    bx0, _, bx1, _ = geom.bar_box()
    x0, x1 = (0.0, bx0) if half == "left" else (bx1, float(FIELD_W))
    d = geom.checker_diameter
    best, best_score = ((x0 + x1) / 2, FIELD_H / 2), -1e9
    reach = 0.5 * d + 0.75 * size
    for _ in range(tries):
        y = float(np.clip(rng.normal(FIELD_H / 2, spread * FIELD_H), size, FIELD_H - size))
        p = (float(rng.uniform(x0 + size, x1 - size)), y)
        gap_dice = min((math.hypot(p[0] - q[0], p[1] - q[1]) - apart * size for q in taken), default=1e9)
        gap_checkers = min((math.hypot(p[0] - q[0], p[1] - q[1]) - reach for q in checkers), default=1e9)
        score = min(gap_dice, gap_checkers)
        if score > 0:
            return p
        if score > best_score:
            best, best_score = p, score
    return best


def _skin(rng: np.random.Generator) -> BGR:
    tones = ((150, 180, 225), (120, 160, 210), (95, 135, 190), (70, 100, 150), (45, 65, 100))
    t = np.asarray(tones[int(rng.integers(len(tones)))], np.float64) + rng.normal(0, 8, 3)
    return tuple(int(v) for v in np.clip(t, 0, 255))  # type: ignore[return-value]


def _draw_hand(
    img: np.ndarray,
    rng: np.random.Generator,
    hom: np.ndarray,
    px_per_field: float,
    shadow: float,
    light: tuple[float, float],
) -> tuple[int, int, int, int]:
    """A hand reaching over the board from the top or bottom edge of the image; return its box."""
    h, w = img.shape[:2]
    d = FieldGeometry().checker_diameter * px_per_field
    target = _project(hom, np.array([[rng.uniform(0.1, 0.9) * FIELD_W, rng.uniform(0.15, 0.85) * FIELD_H]]))[0]
    from_bottom = rng.random() < 0.5
    entry = np.array([target[0] + rng.normal(0, 0.15 * w), h + 2 * d if from_bottom else -2 * d])
    axis = target - entry
    axis /= np.linalg.norm(axis)
    normal = np.array([-axis[1], axis[0]])
    mask = np.zeros((h, w), np.uint8)
    palm_c = target - axis * 1.0 * d

    def pt(v: np.ndarray) -> tuple[int, int]:
        return round(v[0] * 16), round(v[1] * 16)

    cv2.line(mask, pt(entry), pt(palm_c - axis * 1.4 * d), 255, int(2.1 * d), cv2.LINE_AA, 4)
    ang = math.degrees(math.atan2(axis[1], axis[0]))
    cv2.ellipse(mask, pt(palm_c), (int(1.35 * d * 16), int(1.15 * d * 16)), ang, 0, 360, 255, -1, cv2.LINE_AA, 4)
    curl = float(rng.uniform(0.6, 1.0))
    for k, (off, length) in enumerate(((-0.8, 1.7), (-0.27, 1.95), (0.27, 1.85), (0.78, 1.45))):
        base = palm_c + axis * 0.9 * d + normal * off * d
        spread = normal * (off * 0.25 * d)
        tip = base + (axis * length * d + spread) * curl
        cv2.line(mask, pt(base), pt(tip), 255, int((0.5 - 0.03 * k) * d), cv2.LINE_AA, 4)
    side = 1 if rng.random() < 0.5 else -1
    tb = palm_c + normal * side * 1.0 * d - axis * 0.2 * d
    cv2.line(mask, pt(tb), pt(tb + (normal * side * 0.9 + axis * 0.9) * d), 255, int(0.55 * d), cv2.LINE_AA, 4)
    ys, xs = np.nonzero(mask)
    if len(xs) == 0:
        return 0, 0, 0, 0
    x0, y0, x1, y1 = xs.min(), ys.min(), xs.max() + 1, ys.max() + 1
    pad = int(0.8 * d)
    rx0, ry0, rx1, ry1 = max(0, x0 - pad), max(0, y0 - pad), min(w, x1 + pad), min(h, y1 + pad)
    roi = img[ry0:ry1, rx0:rx1].astype(np.float32)
    m = mask[ry0:ry1, rx0:rx1].astype(np.float32) / 255.0
    # The hand is above the board: its shadow falls away from the lamp, soft.
    shift = np.array([[1, 0, -light[0] * 0.45 * d], [0, 1, -light[1] * 0.45 * d]], np.float32)
    sm = cv2.warpAffine(m, shift, (m.shape[1], m.shape[0]))
    sm = cv2.GaussianBlur(sm, (0, 0), 0.25 * d)
    roi *= (1.0 - shadow * 0.8 * sm)[:, :, None]
    # Rounded shading: darker towards the silhouette, lit side brighter.
    depth = cv2.GaussianBlur(m, (0, 0), 0.2 * d)
    gy, gx = np.gradient(depth)
    lit = np.clip(1.0 + 6.0 * d * 0.05 * (gx * light[0] + gy * light[1]), 0.7, 1.25)
    tone = np.asarray(_skin(rng), np.float32)
    skin = (0.7 + 0.35 * np.clip(depth, 0, 1))[:, :, None] * lit[:, :, None] * tone[None, None, :]
    roi += (skin - roi) * m[:, :, None]
    img[ry0:ry1, rx0:rx1] = np.clip(roi, 0, 255).astype(np.uint8)
    return int(x0), int(y0), int(x1 - x0), int(y1 - y0)


def render(
    scene: Scene,
    *,
    style: BoardStyle = STYLES["classic"],
    camera: Camera = Camera(),
    lighting: Lighting = Lighting(),
    hand: bool = False,
    markers: bool = True,
    seed: int = 0,
    layout_seed: int | None = None,
) -> Rendered:
    """Render a camera frame of ``scene`` on a board of ``style``.

    :param scene: checkers, dice and cube to draw.
    :param style: the board's looks.
    :param camera: pose, lens and table.
    :param lighting: lamp and sensor.
    :param hand: draw a hand reaching over the board.
    :param markers: draw the four ArUco calibration markers on the frame.
    :param seed: all random details (checker jitter, dice spots, noise) follow from it.
    :param layout_seed: when given, where each checker lies off its spot follows from this and
        the spot alone: frames of one game share it, so a checker nobody moved is drawn where
        it was, as a camera over a real board sees it.
    :returns: the frame with its ground truth.
    """
    seeds = np.random.SeedSequence(seed).spawn(3)
    rng, hand_rng, sensor_rng = (np.random.default_rng(s) for s in seeds)
    scale = _canvas_scale(camera)
    lay = _layout(style.bar_fraction, scale)
    geom = lay.geom
    w, h = camera.size

    field_hom, cam_centre = _pose(camera, lay)
    a = lay.field_to_canvas
    canvas_hom = field_hom @ np.linalg.inv(a)
    corners = _project(field_hom, np.array([[0, 0], [FIELD_W, 0], [FIELD_W, FIELD_H], [0, FIELD_H]], float))

    # Direction towards the lamp in canvas axes, from the board centre.
    lamp_img = np.array([[camera.size[0] * lighting.lamp[0], camera.size[1] * lighting.lamp[1]]])
    centre_img = _project(field_hom, np.array([[FIELD_W / 2, FIELD_H / 2]]))
    lamp_c = _project(np.linalg.inv(canvas_hom), lamp_img)[0] - _project(np.linalg.inv(canvas_hom), centre_img)[0]
    if not np.all(np.isfinite(lamp_c)) or np.hypot(*lamp_c) < 1e-6:
        lamp_c = np.array([-1.0, -1.0])
    norm = float(np.hypot(*lamp_c))
    light = (float(lamp_c[0]) / norm, float(lamp_c[1]) / norm)

    canvas = _base_canvas(style, scale, markers).copy()
    painter = _Painter(style, lay, canvas, rng, light, cam_centre, lighting.shadow, layout_seed)
    if scene.track is not None:
        painter.track(scene.track)
    painter.points(scene)
    painter.bar(scene)
    painter.off(scene)
    if scene.cube is not None:
        painter.cube(scene.cube)
    outlines = []
    taken: list[tuple[float, float]] = []
    for spec in scene.dice:
        size = style.die_fraction * geom.checker_diameter
        pos = spec.position or free_spot(rng, geom, spec.half, taken, painter.occupied, size)
        taken.append(pos)
        angle = spec.angle if spec.angle is not None else float(rng.uniform(0, 90))
        outlines.append(painter.die(spec, pos, angle))

    # Into the camera: the board over the table (the table itself needs no lens distortion).
    img = _table(camera.table_colour, camera.table_surface, w, h).copy()
    board_quad = _project(
        canvas_hom, np.array([[0, 0], [lay.shape[1], 0], [lay.shape[1], lay.shape[0]], [0, lay.shape[0]]], float) - 0.5
    )
    # Quantised so the per-pixel maps can be cached.
    k = round(camera.distortion * 500) / 500
    _project_board(img, canvas, canvas_hom, board_quad, k)

    px_per_field = math.sqrt(abs(np.linalg.det(_jacobian(field_hom, FIELD_W / 2, FIELD_H / 2))))
    hand_box = None
    if hand:
        hand_box = _draw_hand(img, hand_rng, field_hom, px_per_field, lighting.shadow, _image_light(lighting, camera))
    img = _light_and_sensor(img, camera, lighting, sensor_rng, _distort_points(board_quad, camera.size, k), light)

    dice_boxes = []
    for pts in outlines:
        ip = _distort_points(_project(canvas_hom, pts), camera.size, k)
        x0, y0 = np.clip(np.floor(ip.min(0)), 0, [w - 1, h - 1]).astype(int)
        x1, y1 = np.clip(np.ceil(ip.max(0)), 0, [w, h]).astype(int)
        dice_boxes.append((int(x0), int(y0), int(max(1, x1 - x0)), int(max(1, y1 - y0))))
    return Rendered(
        image=img,
        corners=corners,
        homography=field_hom,
        dice_boxes=tuple(dice_boxes),
        hand_box=hand_box,
        bar_fraction=style.bar_fraction,
    )


def _jacobian(hom: np.ndarray, x: float, y: float) -> np.ndarray:
    e = 1.0
    p = _project(hom, np.array([[x, y], [x + e, y], [x, y + e]]))
    return np.column_stack([p[1] - p[0], p[2] - p[0]]) / e


def _image_light(lighting: Lighting, camera: Camera) -> tuple[float, float]:
    v = np.array([lighting.lamp[0] - 0.5, lighting.lamp[1] - 0.5]) * camera.size
    n = float(np.hypot(*v))
    return (float(v[0] / n), float(v[1] / n)) if n > 1e-6 else (-0.7, -0.7)


def _light_and_sensor(
    img: np.ndarray,
    camera: Camera,
    lighting: Lighting,
    rng: np.random.Generator,
    board_quad: np.ndarray,
    light: tuple[float, float],
) -> np.ndarray:
    """Lamp falloff, vignette, the board's shadow on the table, glare, white balance, blur, noise, JPEG."""
    h, w = img.shape[:2]
    f = 8
    gh, gw = h // f + 2, w // f + 2
    yy, xx = np.mgrid[0:gh, 0:gw].astype(np.float32)
    xx, yy = xx * f / w, yy * f / h
    aspect = w / h
    lx, ly = lighting.lamp
    dl = np.hypot((xx - lx) * aspect, yy - ly) / math.hypot(aspect, 1.0)
    gain = lighting.exposure * (1.0 - lighting.lamp_strength * np.clip(dl, 0, 1.6) ** 1.5)
    gain *= 1.0 - lighting.vignette * (((xx - 0.5) * 2) ** 2 + ((yy - 0.5) * 2) ** 2) / 2
    # The board stands a little above the table and casts a soft shadow on it, away from the lamp.
    q = board_quad / f
    board = np.zeros((gh, gw), np.uint8)
    cv2.fillConvexPoly(board, np.round(q * 16).astype(np.int32), 255, cv2.LINE_AA, 4)
    cast = np.zeros((gh, gw), np.uint8)
    off = np.array([-light[0], -light[1]]) * 0.012 * h / f
    cv2.fillConvexPoly(cast, np.round((q + off) * 16).astype(np.int32), 255, cv2.LINE_AA, 4)
    cast_f = cv2.GaussianBlur(cast.astype(np.float32) / 255.0, (0, 0), 0.008 * h / f + 0.5)
    gain *= 1.0 - 0.7 * lighting.shadow * cast_f * (1.0 - board.astype(np.float32) / 255.0)
    gains = gain[:, :, None] * _temperature_gains(lighting.colour_temperature)[None, None, :]
    # Byte arithmetic (gains in 1/160 steps): dithered by the sensor noise, the steps do not show.
    gains8 = np.clip(gains * _GAIN_SCALE + 0.5, 0, 255).astype(np.uint8)
    # Optics first (blur), then light, then the sensor (noise), then the encoder.
    if camera.focus_blur > 0.25:
        img = cv2.GaussianBlur(img, (0, 0), camera.focus_blur)
    res = cv2.multiply(img, cv2.resize(gains8, (w, h), interpolation=cv2.INTER_LINEAR), scale=1.0 / _GAIN_SCALE)
    if lighting.glare > 0.003:
        gx, gy = lighting.glare_position
        gs = max(lighting.glare_size, 1e-3)
        glare = lighting.glare * 255 * np.exp(-(((xx - gx) * aspect) ** 2 / (1.6 * gs) ** 2 + (yy - gy) ** 2 / gs**2))
        glare8 = cv2.merge([np.clip(glare + 0.5, 0, 255).astype(np.uint8)] * 3)
        cv2.add(res, cv2.resize(glare8, (w, h), interpolation=cv2.INTER_LINEAR), dst=res)
    if lighting.noise > 0:
        pos, neg = _noise_field(w, h)
        oy = int(rng.integers(0, pos.shape[0] - h + 1))
        alpha = float(lighting.noise) / _NOISE_SCALE
        cv2.add(res, cv2.convertScaleAbs(pos[oy : oy + h], alpha=alpha), dst=res)
        cv2.subtract(res, cv2.convertScaleAbs(neg[oy : oy + h], alpha=alpha), dst=res)
    if lighting.jpeg_quality < 100:
        ok, buf = cv2.imencode(".jpg", res, [cv2.IMWRITE_JPEG_QUALITY, int(lighting.jpeg_quality)])
        if ok:
            decoded = cv2.imdecode(buf, cv2.IMREAD_COLOR)
            if decoded is not None:
                res = decoded
    return res


# ---------------------------------------------------------------------------------------------
# Random scenes and setups
# ---------------------------------------------------------------------------------------------


def random_scene(rng: np.random.Generator, *, dice: int = 2, cube: bool = True) -> Scene:
    """A random position: 15 checkers a side over points, bar and off, never two colours on a point.

    Stacks vary from blots to tall pyramids.
    """
    points = [0] * 24
    bar = [0, 0]
    off = [0, 0]
    for side in (0, 1):
        left = 15
        if rng.random() < 0.2:
            bar[side] = int(rng.integers(1, 4))
            left -= bar[side]
        if rng.random() < 0.25:
            off[side] = int(rng.integers(1, left + 1)) if rng.random() < 0.3 else int(rng.integers(1, min(left, 8) + 1))
            left -= off[side]
        free = [i for i in range(24) if points[i] == 0]
        if left == 0 or not free:
            continue
        k = int(rng.integers(1, min(left, len(free), 9) + 1))
        chosen = rng.choice(free, size=k, replace=False)
        weights = rng.exponential(1.0, k)
        counts = np.ones(k, int) + rng.multinomial(left - k, weights / weights.sum())
        sign = 1 if side == 0 else -1
        for i, c in zip(chosen, counts, strict=True):
            points[int(i)] = sign * int(c)
    specs: list[DieSpec] = []
    half = "right" if rng.random() < 0.5 else "left"
    for _ in range(dice):
        specs.append(DieSpec(value=int(rng.integers(1, 7)), half=half, flat=bool(rng.random() > 0.08)))
    cube_spec = None
    track_spec = None
    if cube:
        r = rng.random()
        value = int(rng.choice(TRACK_VALUES))
        owner = None if value == 1 else int(rng.integers(1, 3))
        if r < 0.7:
            cube_spec = CubeSpec(value, owner)
        elif r < 0.85:
            track_spec = TrackSpec(value, owner)
    return Scene(
        points=tuple(points),
        bar=(bar[0], bar[1]),
        off=(off[0], off[1]),
        dice=tuple(specs),
        cube=cube_spec,
        track=track_spec,
    )


def random_setup(rng: np.random.Generator) -> tuple[BoardStyle, Camera, Lighting]:
    """A random board style, camera and lighting."""
    return random_style(rng), Camera.random(rng), Lighting.random(rng)


def _main(argv: list[str] | None = None) -> None:
    """Render random frames and print the time per frame; ``--save DIR`` keeps the first few."""
    parser = argparse.ArgumentParser(description="Time the board renderer on random positions and setups.")
    parser.add_argument("--frames", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--save", type=Path, help="write the first 8 frames here as PNG")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    jobs = [(random_scene(rng), *random_setup(rng)) for _ in range(args.frames)]
    if args.save:
        args.save.mkdir(parents=True, exist_ok=True)
    times = []
    for i, (scene, style, camera, lighting) in enumerate(jobs):
        start = time.perf_counter()
        r = render(scene, style=style, camera=camera, lighting=lighting, hand=i % 7 == 3, seed=i)
        times.append(time.perf_counter() - start)
        if args.save and i < 8:
            cv2.imwrite(str(args.save / f"frame-{i:02d}-{style.name}.png"), r.image)
    ms = np.asarray(times) * 1000
    print(f"{len(ms)} frames: mean {ms.mean():.1f} ms, median {np.median(ms):.1f} ms, first {ms[0]:.0f} ms")


if __name__ == "__main__":
    _main()
