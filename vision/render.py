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
from typing import Protocol

import cv2
import numpy as np

from vision import _textures as tx
from vision.geometry import FIELD_H, FIELD_W, SLOTS, TRACK_VALUES, FieldGeometry

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
    :param aspect: the playing field's width over its height (real fields are 1.0 to 1.3; the
        rectified field of :mod:`vision.geometry` is 1.2): checkers stay round on the board, so
        in field coordinates they are taller or flatter than that geometry's.
    :param checker_fraction: a checker's diameter as a fraction of a point's width.
    :param checker_thickness: a checker's thickness as a fraction of the geometry's diameter.
    :param solid: checkers drawn with their side wall between their bottom and top faces (seen
        at a slant, a thick checker shows it), and checkers piled on others raised by as much.
        False draws the flat checkers of earlier renders.
    :param checker_look: the checkers' tops: ``plain`` (bevel and one groove), ``rings`` (two
        grooves), ``rim`` (a bright glossy rim), ``emblem`` (a mark in the middle), ``pearl``
        (marbled) or ``flat`` (no groove, a soft bevel).
    :param hinges: metal hinges on the bar strip (or the fold between the halves), 0 for none.
    :param logo: text printed across the middle of the field, with a square mark beside it ("":
        nothing printed).
    :param logo_colour: the printed logo's ink.
    :param cup_colour: the dice cups standing on the field (:class:`CupSpec`).
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
    aspect: float = 1.2
    checker_fraction: float = 0.92
    checker_thickness: float = 0.17
    solid: bool = False
    checker_look: str = "plain"
    hinges: int = 0
    logo: str = ""
    logo_colour: BGR = (40, 40, 200)
    cup_colour: BGR = (28, 28, 30)

    @property
    def stretch(self) -> float:
        """Board length per field unit along y over that along x: 1 for a field of the
        geometry's 1.2, more for a squarer one (its field units are longer along y)."""
        return (FIELD_W / FIELD_H) / self.aspect


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
        return _jitter(rng, c, hue)

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


def _jitter(
    rng: np.random.Generator,
    c: BGR,
    hue: float = 5.0,
    saturation: tuple[float, float] = (0.8, 1.15),
    value: tuple[float, float] = (0.8, 1.18),
) -> BGR:
    """``c`` a little changed, in HSV so that a brown stays a brown: small hue shifts, larger
    saturation and value changes (factors drawn from ``saturation`` and ``value``)."""
    hsv = cv2.cvtColor(np.array([[c]], np.uint8), cv2.COLOR_BGR2HSV)[0, 0].astype(np.float64)
    hsv[0] = (hsv[0] + rng.normal(0.0, hue)) % 180
    hsv[1] = np.clip(hsv[1] * rng.uniform(*saturation), 0, 255)
    hsv[2] = np.clip(hsv[2] * rng.uniform(*value), 8, 250)
    bgr = cv2.cvtColor(np.array([[hsv]], np.uint8), cv2.COLOR_HSV2BGR)[0, 0]
    return int(bgr[0]), int(bgr[1]), int(bgr[2])


# Boards as real tables have them (BGR), for :func:`varied_style`: frames and fields with their
# materials, pairs of point colours, pairs of checker colours.
_REAL_FRAMES: tuple[tuple[BGR, str], ...] = (
    ((26, 26, 28), "leather"),  # a black tournament case
    ((28, 40, 62), "leather"),  # dark brown
    ((80, 112, 140), "leather"),  # taupe
    ((30, 58, 98), "wood"),  # walnut
    ((22, 36, 58), "wood"),  # dark wood
    ((60, 40, 26), "leather"),  # navy
    ((34, 30, 96), "leather"),  # burgundy
    ((90, 92, 94), "printed"),  # grey
)
_REAL_FIELDS: tuple[tuple[BGR, str], ...] = (
    ((200, 224, 234), "printed"),  # cream
    ((196, 220, 232), "felt"),
    ((120, 170, 200), "felt"),  # tan felt
    ((82, 50, 30), "leather"),  # navy
    ((60, 46, 34), "felt"),
    ((48, 96, 40), "felt"),  # green
    ((40, 82, 132), "wood"),  # walnut
    ((70, 120, 170), "wood"),  # oak
    ((30, 30, 32), "leather"),  # black
    ((188, 192, 194), "printed"),  # light grey
    ((40, 36, 120), "felt"),  # burgundy
    ((232, 236, 238), "printed"),  # white
)
_REAL_POINTS: tuple[tuple[BGR, BGR], ...] = (
    ((36, 36, 190), (28, 28, 30)),  # red and black
    ((150, 90, 40), (40, 70, 110)),  # blue and brown
    ((236, 238, 240), (26, 26, 28)),  # white and black
    ((180, 214, 234), (40, 60, 96)),  # cream and brown
    ((60, 112, 110), (30, 34, 62)),  # olive and dark brown
    ((150, 180, 200), (110, 112, 116)),  # tan and grey
    ((170, 200, 215), (60, 95, 30)),  # ivory and green
    ((40, 120, 220), (130, 70, 30)),  # orange and blue
    ((200, 205, 210), (40, 40, 150)),  # light grey and red
    ((100, 130, 160), (160, 185, 200)),  # taupe and beige
)
_REAL_CHECKERS: tuple[tuple[BGR, BGR], ...] = (
    ((232, 236, 238), (30, 30, 32)),  # white and black
    ((232, 236, 238), (40, 40, 170)),  # white and red
    ((236, 238, 240), (36, 30, 120)),  # white and dark red
    ((184, 214, 236), (40, 62, 96)),  # cream and brown
    ((70, 70, 74), (50, 60, 210)),  # dark grey and red
    ((214, 220, 222), (160, 170, 172)),  # white and grey pearl
    ((30, 30, 32), (46, 46, 190)),  # black and red
    ((236, 236, 236), (140, 80, 30)),  # white and blue
)
_DICE_COLOURS: tuple[tuple[BGR, BGR], ...] = (
    ((235, 238, 240), (25, 25, 25)),
    ((30, 30, 30), (230, 230, 230)),
    ((40, 40, 190), (235, 235, 235)),
    ((200, 228, 238), (30, 30, 30)),
)
_INKS: tuple[BGR, ...] = ((30, 30, 200), (236, 236, 236), (60, 170, 210), (26, 26, 26), (150, 150, 150))
_CUPS: tuple[BGR, ...] = ((28, 28, 30), (30, 45, 70), (80, 110, 140), (34, 30, 96), (70, 46, 30))


def varied_style(rng: np.random.Generator) -> BoardStyle:
    """A board as real tables have them, beyond :func:`random_style`'s presets: tournament
    cases (black or leather frames, cream, tan or navy fields, red and black or blue and brown
    points), wooden and felt boards; points or a field the colour of one side's checkers (white
    points and white checkers); squarer or longer fields; smaller, thicker checkers with rims,
    rings, marks or pearl; narrow bars with hinges; logos printed on the field."""
    if rng.random() < 0.35:
        base = random_style(rng)
    else:
        frame, frame_surface = _REAL_FRAMES[int(rng.integers(len(_REAL_FRAMES)))]
        field, field_surface = _REAL_FIELDS[int(rng.integers(len(_REAL_FIELDS)))]
        points = _REAL_POINTS[int(rng.integers(len(_REAL_POINTS)))]
        checkers = _REAL_CHECKERS[int(rng.integers(len(_REAL_CHECKERS)))]
        if rng.random() < 0.5:
            points = (points[1], points[0])
        if rng.random() < 0.5:
            checkers = (checkers[1], checkers[0])
        dice, pips = _DICE_COLOURS[int(rng.integers(len(_DICE_COLOURS)))]
        point_surface = str(rng.choice(["printed", "felt", "leather"])) if field_surface == "leather" else field_surface
        base = BoardStyle(
            name="real",
            frame_colour=_jitter(rng, frame),
            frame_surface=frame_surface,
            field_colour=_jitter(rng, field),
            field_surface=field_surface,
            point_colours=(_jitter(rng, points[0]), _jitter(rng, points[1])),
            point_surface=point_surface,
            checker_colours=(_jitter(rng, checkers[0], 3.0), _jitter(rng, checkers[1], 3.0)),
            dice_colour=dice,
            pip_colour=pips,
            cube_colour=dice,
            cube_ink=pips,
            variant=int(rng.integers(0, 4)),
        )
    near = {"hue": 2.0, "saturation": (0.92, 1.08), "value": (0.94, 1.06)}
    pick = rng.random()
    if pick < 0.3:
        # White points and white checkers, black and black, wood and brown: the point differs
        # from a checker by its shape alone.
        k, j = int(rng.integers(2)), int(rng.integers(2))
        colours = list(base.point_colours)
        colours[k] = _jitter(rng, base.checker_colours[j], **near)  # type: ignore[arg-type]
        base = replace(base, point_colours=(colours[0], colours[1]))
    elif pick < 0.42:
        base = replace(base, field_colour=_jitter(rng, base.checker_colours[int(rng.integers(2))], **near))  # type: ignore[arg-type]
    logo = ""
    if rng.random() < 0.35:
        letters = "".join(str(c) for c in rng.choice(list("abcdefgimnoprstu"), int(rng.integers(4, 9))))
        logo = f"www.{letters}.com" if rng.random() < 0.5 else letters.upper()
    return replace(
        base,
        name=f"{base.name}-varied",
        checker_gloss=float(rng.uniform(0.2, 0.95)),
        bar_fraction=float(rng.choice([0.0, 0.04, 0.05, 0.06, 0.065, 0.08, 0.1])),
        die_fraction=float(rng.uniform(0.38, 0.55)),
        aspect=float(rng.uniform(1.0, 1.32)),
        checker_fraction=float(rng.uniform(0.8, 0.95)),
        checker_thickness=float(rng.uniform(0.15, 0.26)),
        solid=True,
        checker_look=str(rng.choice(CHECKER_LOOKS)),
        hinges=int(rng.choice([0, 0, 2, 2, 3])),
        logo=logo,
        logo_colour=_INKS[int(rng.integers(len(_INKS)))],
        cup_colour=_CUPS[int(rng.integers(len(_CUPS)))],
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
class CupSpec:
    """A dice cup standing on the field, over the tips of the points, as players leave them.

    :param position: its centre on the field (field units), or None for a spot over the points'
        tips of ``row`` clear of every checker (no cup is drawn where none is clear).
    :param row: ``top`` or ``bottom``: the row of points it stands over, when ``position`` is None.
    :param width: across the board, in checker diameters.
    :param depth: along the points, in checker diameters (an oval cup is wider than deep).
    :param height: in checker diameters.
    :param upright: the open end up (else upside down, its closed bottom up).
    """

    position: tuple[float, float] | None = None
    row: str = "top"
    width: float = 1.9
    depth: float = 1.5
    height: float = 2.2
    upright: bool = True


@dataclass(frozen=True)
class Scene:
    """What lies on the board.

    :param points: 24 signed counts in player 1's numbering (index 0 = his 1-point; + player 1).
    :param bar: checkers on the bar, player 1's and player 2's.
    :param off: checkers borne off, player 1's and player 2's.
    :param dice: dice on the board.
    :param cube: the doubling cube, if any.
    :param track: a doubling-track counter, if any.
    :param lines: per point, how many checkers are lined up from the edge before the rest are
        piled on them (empty: five everywhere, the geometry's slots). A line is cut short where
        the next checker would lie past the field's middle.
    :param bar_spots: where the checkers on the bar lie (field units): player 1's ``bar[0]``
        first, then player 2's (empty: each side's from the middle towards its own side, as
        :meth:`vision.geometry.FieldGeometry.bar_slot_center` has them).
    :param cups: dice cups standing on the field.
    """

    points: tuple[int, ...]
    bar: tuple[int, int] = (0, 0)
    off: tuple[int, int] = (0, 0)
    dice: tuple[DieSpec, ...] = ()
    cube: CubeSpec | None = None
    track: TrackSpec | None = None
    lines: tuple[int, ...] = ()
    bar_spots: tuple[tuple[float, float], ...] = ()
    cups: tuple[CupSpec, ...] = ()

    def __post_init__(self) -> None:
        if len(self.points) != 24:
            raise ValueError(f"a scene needs 24 points, got {len(self.points)}")
        if self.lines and (len(self.lines) != 24 or min(self.lines) < 1):
            raise ValueError("a scene's lines are 24 counts of at least one checker")
        if self.bar_spots and len(self.bar_spots) != self.bar[0] + self.bar[1]:
            raise ValueError(f"{len(self.bar_spots)} spots on the bar for {self.bar[0] + self.bar[1]} checkers")

    def bar_halves(self) -> tuple[int, int]:
        """The signed stack on each half of the bar strip, the lower half's then the upper's
        (player 1's positive), as the learned reader's two bar strips see them."""
        if not self.bar_spots:
            return self.bar[0], -self.bar[1]
        lower = upper = 0
        for k, (_, y) in enumerate(self.bar_spots):
            sign = 1 if k < self.bar[0] else -1
            if y >= FIELD_H / 2:
                lower += sign
            else:
                upper += sign
        return lower, upper


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

    @classmethod
    def varied(cls, rng: np.random.Generator, size: tuple[int, int] = (1280, 720)) -> Camera:
        """A camera as real tables have them: half the time up to 8 degrees off vertical, else 8
        to 30 (a camera on a stand beside the board, a photo taken from a seat), the board
        filling 60% of the frame's height to all of it (a tournament stream)."""
        table = _TABLES[int(rng.integers(len(_TABLES)))]
        tilt = float(rng.uniform(0.0, 8.0)) if rng.random() < 0.5 else float(rng.uniform(8.0, 30.0))
        return cls(
            size=size,
            fill=float(rng.uniform(0.62, 1.0)),
            tilt=tilt,
            tilt_direction=float(rng.uniform(0.0, 360.0)),
            rotation=float(rng.normal(0.0, 2.0)),
            offset=(float(rng.normal(0.0, 0.03)), float(rng.normal(0.0, 0.03))),
            fov=float(rng.uniform(45.0, 78.0)),
            distortion=float(rng.uniform(0.0, 0.015)),
            focus_blur=float(rng.uniform(0.3, 1.3)),
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
    stretch: float = 1.0

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
        return np.array([[s, 0, self.ml - 0.5], [0, s * self.stretch, self.mt - 0.5], [0, 0, 1]], np.float64)

    def c(self, x: float, y: float) -> tuple[float, float]:
        """Field point to canvas point."""
        return x * self.scale + self.ml - 0.5, y * self.scale * self.stretch + self.mt - 0.5

    def tray(self, player: int) -> tuple[float, float, float, float]:
        """``(x0, y0, x1, y1)`` of a player's off tray, in field coordinates."""
        d = self.geom.checker_diameter
        x0 = FIELD_W + 0.3 * d
        x1 = x0 + 1.2 * d
        # Lengths along y in field units: a stretched field's units are longer there.
        dy = d / self.stretch
        top = (self.marker + self.quiet) / (self.scale * self.stretch) + 0.15 * dy
        if player == 1:
            return x0, FIELD_H / 2 + 0.15 * dy, x1, FIELD_H - top
        return x0, top, x1, FIELD_H / 2 - 0.15 * dy


@lru_cache(maxsize=32)
def _layout(bar_fraction: float, scale: float, stretch: float = 1.0) -> _Layout:
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
        fh=round(FIELD_H * scale * stretch),
        marker=marker,
        quiet=quiet,
        stretch=stretch,
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
    bar_fraction: float,
    scale: float,
    markers: bool,
    surfaces: tuple[str, str, str],
    variant: int,
    stretch: float = 1.0,
) -> _Structure:
    lay = _layout(bar_fraction, scale, stretch)
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
        tri = np.array([[cx - half, base_y], [cx + half, base_y], [cx, tip_y]], np.float32)
        tri *= np.array([s, s * stretch], np.float32)
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
    lay = _layout(style.bar_fraction, scale, style.stretch)
    st = _structure(
        style.bar_fraction,
        scale,
        markers,
        (style.frame_surface, style.field_surface, style.point_surface),
        style.variant,
        style.stretch,
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
    if style.logo:
        _print_logo(out, lay, style)
    if style.hinges:
        _draw_hinges(out, lay, style)
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


def _print_logo(out: np.ndarray, lay: _Layout, style: BoardStyle) -> None:
    """Print ``style.logo`` across the middle of each half, between the rows' tips, with a square
    mark beside it; on the left half turned round, as a board printed for both players is."""
    geom = lay.geom
    s = lay.scale
    d = geom.checker_diameter * s
    ink = np.asarray(style.logo_colour, np.float32)
    font = cv2.FONT_HERSHEY_DUPLEX
    big = 4
    for half, turned in ((0, True), (1, False)):
        x0 = 0.0 if half == 0 else geom.half_width + geom.bar_width
        cx, cy = lay.c(x0 + geom.half_width / 2, FIELD_H / 2)
        w = int(0.85 * geom.half_width * s)
        h = int(0.75 * d)
        mask = np.zeros((h * big, w * big), np.uint8)
        mark = int(0.7 * h * big)
        cv2.rectangle(mask, (0, (h * big - mark) // 2), (mark, (h * big + mark) // 2), 255, -1)
        thick = max(1, int(0.06 * h * big))
        (tw, th), _ = cv2.getTextSize(style.logo, font, 1.0, thick)
        room = w * big - mark - int(0.3 * h * big)
        fs = min(0.4 * h * big / max(th, 1), room / max(tw, 1))
        (tw, th), _ = cv2.getTextSize(style.logo, font, fs, thick)
        org = (mark + int(0.3 * h * big), (h * big + th) // 2)
        cv2.putText(mask, style.logo, org, font, fs, 255, thick, cv2.LINE_AA)
        a = cv2.resize(mask, (w, h), interpolation=cv2.INTER_AREA).astype(np.float32) / 255.0
        if turned:
            a = a[::-1, ::-1]
        y0, x0i = round(cy - h / 2), round(cx - w / 2)
        patch = out[y0 : y0 + h, x0i : x0i + w].astype(np.float32)
        a = a[: patch.shape[0], : patch.shape[1], None]
        out[y0 : y0 + h, x0i : x0i + w] = np.clip(patch + (ink - patch) * 0.9 * a + 0.5, 0, 255).astype(np.uint8)


def _draw_hinges(out: np.ndarray, lay: _Layout, style: BoardStyle) -> None:
    """Metal hinges on the bar strip (or on the fold of a board without one): a knuckle along
    the bar, brighter in the middle as a cylinder is, with its leaves' edges darker."""
    geom = lay.geom
    s = lay.scale
    d = geom.checker_diameter
    across = (0.75 * geom.bar_width if geom.bar_width > 0 else 0.32 * d) * s
    along = (0.55 + 0.1 * (style.variant % 3)) * d * s
    brass = style.variant % 2 == 1
    metal = np.asarray((70, 150, 190) if brass else (186, 188, 192), np.float32)
    spots = (0.22, 0.78) if style.hinges == 2 else tuple(np.linspace(0.15, 0.85, style.hinges))
    w, h = max(3, round(across)), max(3, round(along))
    u = (np.arange(w, dtype=np.float32) + 0.5) / w
    profile = 0.55 + 0.6 * np.sin(np.pi * u) ** 0.7
    profile[[0, -1]] *= 0.6
    rgb = np.clip(profile[None, :, None] * metal[None, None, :], 0, 255)
    rgb = np.broadcast_to(rgb, (h, w, 3)).copy()
    rgb[[0, -1]] *= 0.6
    for f in spots:
        cx, cy = lay.c(FIELD_W / 2, float(f) * FIELD_H)
        x0, y0 = round(cx - w / 2), round(cy - h / 2)
        out[y0 : y0 + h, x0 : x0 + w] = np.clip(rgb + 0.5, 0, 255).astype(np.uint8)


# ---------------------------------------------------------------------------------------------
# Sprites
# ---------------------------------------------------------------------------------------------

Sprite = tuple[np.ndarray, np.ndarray]  # float32 BGR, float32 alpha


#: The looks a checker's top may have (:attr:`BoardStyle.checker_look`).
CHECKER_LOOKS = ("plain", "rings", "rim", "emblem", "pearl", "flat")


@lru_cache(maxsize=512)
def _checker_sprite(colour: BGR, dpx: int, gloss: float, light: int, look: str = "plain") -> Sprite:
    """A checker seen from above: bevelled rim, a groove, grain and a highlight towards
    ``light``/8 turns; ``look`` (:data:`CHECKER_LOOKS`) adds a second groove, a bright rim, a
    mark, a marbling, or takes the groove away."""
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
    if look != "flat":
        shade -= 0.14 * np.exp(-(((r - 0.74) / 0.035) ** 2))
    if look == "rings":
        shade -= 0.12 * np.exp(-(((r - 0.5) / 0.03) ** 2))
    shade += 0.03 * (1.0 - r**2)
    shade *= 1.0 + 0.025 * tx.noise_patch(n)
    rgb = shade[:, :, None] * np.asarray(colour, np.float32)[None, None, :]
    seed = tx.stable_seed("checker", colour, look)
    bright = float(np.mean(colour)) > 110
    if look == "pearl":
        # Mother of pearl: broad swirls of lighter and darker, a little iridescent.
        rng = np.random.default_rng(seed)
        swirl = tx.smooth_noise(rng, n, n, max(2.0, 0.3 * dpx), max(2.0, 0.18 * dpx))
        tint = 1.0 + 0.12 * swirl[:, :, None] * np.asarray([1.0, 0.8, 0.6], np.float32)[None, None, :]
        rgb *= tint
    elif look == "emblem":
        # A mark pressed into the top: a letter or a ring, a shade off the checker's colour.
        mark = np.zeros((4 * n, 4 * n), np.uint8)
        letter = "LQBMRSG8"[seed % 8]
        fs = 0.9 * dpx / 30.0
        thick = max(1, round(0.14 * dpx))
        (tw, th), _ = cv2.getTextSize(letter, cv2.FONT_HERSHEY_SIMPLEX, fs, thick)
        org = (round(2 * n - tw / 2), round(2 * n + th / 2))
        cv2.putText(mark, letter, org, cv2.FONT_HERSHEY_SIMPLEX, fs, 255, thick, cv2.LINE_AA)
        a = cv2.resize(mark, (n, n), interpolation=cv2.INTER_AREA).astype(np.float32) / 255.0
        rgb *= 1.0 - (0.22 if bright else -0.35) * a[:, :, None]
    elif look == "rim":
        # A metal or lacquered rim round the top, of a grey that stands off the checker.
        band = np.clip((r - 0.84) / 0.04, 0, 1) * np.clip((0.99 - r) / 0.03, 0, 1)
        grey = np.asarray((120, 120, 124) if bright else (200, 202, 206), np.float32)
        rgb += (grey[None, None, :] * (1.0 + 0.3 * bevel * facing)[:, :, None] - rgb) * band[:, :, None]
    hx, hy = c + 0.45 * rad * lx, c + 0.45 * rad * ly
    spec = 0.35 * np.exp(-((xx - hx) ** 2 + (yy - hy) ** 2) / (0.35 * rad) ** 2)
    spec += 0.45 * bevel * np.clip(facing, 0, 1) ** 3 * (r < 1)
    rgb += (gloss * 255 * spec)[:, :, None]
    alpha = np.clip(rad - dist + 0.5, 0, 1).astype(np.float32)
    return np.clip(rgb, 0, 255).astype(np.float32), alpha


@lru_cache(maxsize=256)
def _checker_side(colour: BGR, n: int) -> np.ndarray:
    """A checker's side wall in its colour, unshaded, as an ``n`` x ``n`` sprite's colours."""
    return np.broadcast_to(np.asarray(colour, np.float32), (n, n, 3))


def _slot_layer(slot: int, line: int) -> tuple[int, int]:
    """``(layer, position in the layer)`` of the ``slot``-th checker of a stack lined up ``line``
    long and then piled as :func:`vision.geometry.slot_layer` piles a line of five."""
    layer = 0
    while slot >= max(1, line - layer):
        slot -= max(1, line - layer)
        layer += 1
    return layer, slot


def longest_line(diameter: float, stretch: float = 1.0) -> int:
    """The most checkers of ``diameter`` (field units along x) that lie in a line from the edge,
    the last one's middle a quarter checker short of the field's middle (its rim a quarter past
    it, as real players' lines of six reach on a board of the geometry's proportions)."""
    return max(1, int(FIELD_H / 2 * stretch / diameter + 0.25))


def stack_spots(
    geometry: FieldGeometry,
    point: int,
    count: int,
    line: int = SLOTS,
    diameter: float | None = None,
    stretch: float = 1.0,
) -> list[tuple[float, float, int]]:
    """Where the checkers of a stack of ``count`` on ``point`` lie: ``(x, y, layer)``, field
    units, from the edge in.

    :param line: how many lie in a line from the edge before the rest are piled on them, the
        next layer's between the first's (five: :meth:`vision.geometry.FieldGeometry.slot_center`);
        cut short to :func:`longest_line` when longer than five.
    :param diameter: the checkers' diameter (field units along x; default the geometry's).
    :param stretch: the board's :attr:`BoardStyle.stretch` (round checkers on a field of another
        shape take more or fewer field units along y).
    """
    d = geometry.checker_diameter if diameter is None else diameter
    if line > SLOTS:
        line = max(SLOTS, min(line, longest_line(d, stretch)))
    row, _ = geometry.column(point)
    x = geometry.point_center_x(point)
    spots = []
    for slot in range(min(count, 15)):
        layer, k = _slot_layer(slot, line)
        offset = d * (k + 0.5 + 0.5 * layer) / stretch
        spots.append((x, offset if row == 0 else FIELD_H - offset, layer))
    return spots


@lru_cache(maxsize=64)
def _ellipse_alpha(w: int, h: int) -> np.ndarray:
    """Anti-aliased alpha of a ``w`` x ``h`` ellipse (a cup's outline from above)."""
    m = np.zeros((h + 4, w + 4), np.uint8)
    cv2.ellipse(m, ((w + 3) * 8, (h + 3) * 8), (w * 8, h * 8), 0, 0, 360, 255, -1, cv2.LINE_AA, 4)
    return m.astype(np.float32) / 255.0


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
    """Field->image homography, and the camera centre ``(x, y, height)`` in board units (field
    units along x; a stretched field's are longer along y, see :attr:`BoardStyle.stretch`)."""
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
    if lay.stretch != 1.0:
        # The pose is of the board, round checkers round; a field unit along y is longer than one along x.
        hom = hom @ np.diag([1.0, lay.stretch, 1.0])
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
        # The checkers' own diameter (the style's share of a point): the geometry's by default.
        self.dc = self.geom.point_width * style.checker_fraction
        self.stretch = lay.stretch
        self.light = light  # unit vector towards the lamp, canvas axes
        self.light_q = round(math.atan2(light[1], light[0]) / (math.pi / 4)) % 8
        self.cam = cam_centre
        self.shadow = shadow
        self.occupied: list[tuple[float, float]] = []

    def parallax(self, x: float, y: float, height: float) -> tuple[float, float]:
        """Canvas displacement of something ``height`` field units above field point (x, y)."""
        k = height / max(self.cam[2] - height, 1.0) * self.lay.scale
        return (x - self.cam[0]) * k, (y * self.stretch - self.cam[1]) * k

    def shadow_offset(self, height: float) -> tuple[float, float]:
        s = 0.9 * height * self.lay.scale
        return -self.light[0] * s, -self.light[1] * s

    def _placed(self, *where: float) -> np.random.Generator:
        """Where a checker lies off its spot: the frame's draw, or with a layout seed the same
        for that spot in every frame (a checker stays where it was put until it is moved)."""
        if self.layout_seed is None:
            return self.rng
        return np.random.default_rng([self.layout_seed & 0xFFFFFFFF, *(round(4 * v) & 0xFFFFFFFF for v in where)])

    def checker(self, colour: BGR, x: float, y: float, z: float = 0.0, diameter: float | None = None) -> None:
        """A checker lying at field point ``(x, y)``, its bottom ``z`` above the field (board units)."""
        s = self.lay.scale
        rng = self._placed(x, y)
        base = self.d if diameter is None else diameter
        d = base * float(rng.choice((0.98, 1.01)))
        jit = np.clip(rng.normal(0.0, 0.03 * base, 2), -0.08 * base, 0.08 * base)
        x, y = x + jit[0], y + jit[1] / self.stretch
        dpx = max(6, round(d * s))
        thick = self.style.checker_thickness * base
        cx, cy = self.lay.c(x, y)
        sh = _blob_shadow(dpx, dpx, max(0.6, 0.05 * dpx))
        so = self.shadow_offset(thick)
        pad = (sh.shape[0] - dpx) / 2
        rgb, alpha = _checker_sprite(colour, dpx, self.style.checker_gloss, self.light_q, self.style.checker_look)
        n = alpha.shape[0]
        if not self.style.solid:
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
            return
        # Solid: the side wall swept from the bottom face up to the top one, a disc a pixel, darker
        # towards the bottom (it faces away from a lamp overhead).
        bx, by = self.parallax(x, y, z)
        tx_, ty_ = self.parallax(x, y, z + thick)
        steps = max(2, math.ceil(math.hypot(tx_ - bx, ty_ - by)))
        side = _checker_side(colour, n)
        layers: list[tuple[np.ndarray | None, np.ndarray, int, int, float]] = [
            (None, sh, round(cx - dpx / 2 - pad + so[0] + bx), round(cy - dpx / 2 - pad + so[1] + by), self.shadow)
        ]
        for k in range(steps):
            f = k / steps
            ox, oy = bx + (tx_ - bx) * f, by + (ty_ - by) * f
            layers.append((side * (0.45 + 0.3 * f), alpha, round(cx - n / 2 + ox), round(cy - n / 2 + oy), 0.0))
        layers.append((rgb, alpha, round(cx - n / 2 + tx_), round(cy - n / 2 + ty_), 0.0))
        _composite(self.canvas, layers)

    def points(self, scene: Scene) -> None:
        cols = self.style.checker_colours
        thick = self.style.checker_thickness * self.dc
        layers: dict[int, list[tuple[BGR, float, float]]] = {}
        for i, n in enumerate(scene.points):
            colour = cols[0] if n > 0 else cols[1]
            line = scene.lines[i] if scene.lines else SLOTS
            for x, y, layer in stack_spots(self.geom, i + 1, abs(n), line, self.dc, self.stretch):
                layers.setdefault(layer, []).append((colour, x, y))
                self.occupied.append((x, y))
        # Lower layers first, so upper checkers cast their shadows on them.
        for layer in sorted(layers):
            items = layers[layer]
            if self.style.solid:
                # Farthest from under the camera first: a nearer checker's top hides its side.
                items = sorted(items, key=lambda t: -math.hypot(t[1] - self.cam[0], t[2] * self.stretch - self.cam[1]))
            for colour, x, y in items:
                self.checker(colour, x, y, layer * thick, self.dc)

    def bar(self, scene: Scene) -> None:
        geom = self.geom
        if scene.bar_spots:
            for k, (x, y) in enumerate(scene.bar_spots):
                player = 1 if k < scene.bar[0] else 2
                self.checker(self.style.checker_colours[player - 1], x, y, 0.0, self.dc)
                self.occupied.append((x, y))
            return
        for player, n in ((1, scene.bar[0]), (2, scene.bar[1])):
            if n <= 0:
                continue
            y0 = geom.bar_slot_center(player, 0)[1]
            room = FIELD_H / 2 - 1.2 * self.d - 0.5 * self.d
            step = min(self.d, room / max(n - 1, 1))
            for slot in range(n):
                y = y0 + (slot * step if player == 1 else -slot * step)
                if self.stretch != 1.0:
                    y = FIELD_H / 2 + (y - FIELD_H / 2) / self.stretch
                self.checker(self.style.checker_colours[player - 1], FIELD_W / 2, y)
                self.occupied.append((FIELD_W / 2, y))

    def cup(self, spec: CupSpec) -> None:
        """A dice cup standing on the field: its side swept up from its foot to its rim, then
        its opening (or, upside down, its closed bottom)."""
        if spec.position is None:
            pos = self._cup_spot(spec)
        else:
            pos = spec.position if self._cup_clear(spec, *spec.position) else None
        if pos is None:
            return
        x, y = pos
        s = self.lay.scale
        w, h = max(4, round(spec.width * self.dc * s)), max(4, round(spec.depth * self.dc * s))
        height = spec.height * self.dc
        cx, cy = self.lay.c(x, y)
        colour = np.asarray(self.style.cup_colour, np.float32)
        alpha = _ellipse_alpha(w, h)
        flat = np.broadcast_to(colour, (*alpha.shape, 3))
        # Its shadow starts at its foot: the part past the foot shows, the rest the cup hides.
        so = self.shadow_offset(0.3 * height)
        sh = _blob_shadow(w, h, max(1.0, 0.2 * h))
        pad_x, pad_y = (sh.shape[1] - w) / 2, (sh.shape[0] - h) / 2
        layers: list[tuple[np.ndarray | None, np.ndarray, int, int, float]] = [
            (None, sh, round(cx - w / 2 - pad_x + so[0]), round(cy - h / 2 - pad_y + so[1]), 0.9 * self.shadow)
        ]
        tx_, ty_ = self.parallax(x, y, height)
        steps = max(2, math.ceil(math.hypot(tx_, ty_)))
        ax, ay = alpha.shape[1] / 2, alpha.shape[0] / 2
        for k in range(steps):
            f = k / steps
            layers.append((flat * (0.5 + 0.35 * f), alpha, round(cx - ax + tx_ * f), round(cy - ay + ty_ * f), 0.0))
        top_x, top_y = round(cx - ax + tx_), round(cy - ay + ty_)
        layers.append((flat * 1.15, alpha, top_x, top_y, 0.0))
        inner = _ellipse_alpha(max(2, round(0.82 * w)), max(2, round(0.8 * h)))
        ix, iy = round(cx + tx_ - inner.shape[1] / 2), round(cy + ty_ - inner.shape[0] / 2)
        # Open: the inside in shadow; upside down: the bottom, a shade off the rim.
        depth = 0.3 if spec.upright else 0.92
        layers.append((np.broadcast_to(colour * depth, (*inner.shape, 3)), inner, ix, iy, 0.0))
        _composite(self.canvas, layers)
        for a in np.linspace(0.0, 2 * math.pi, 8, endpoint=False):
            for f in (0.0, 1.0):
                ex = x + (0.5 * spec.width * self.dc * math.cos(a) + tx_ / s * f)
                ey = y + (0.5 * spec.depth * self.dc * math.sin(a) + ty_ / s * f) / self.stretch
                self.occupied.append((ex, ey))

    def _cup_spot(self, spec: CupSpec) -> tuple[float, float] | None:
        """A spot over the tips of ``spec.row``'s points, the cup (foot, side and rim, as the
        camera sees them) clear of every checker; None if 40 tries find none."""
        for _ in range(40):
            x, y = cup_spot(self.rng, spec, self.geom, self.dc, self.stretch)
            if self._cup_clear(spec, x, y):
                return x, y
        return None

    def _cup_clear(self, spec: CupSpec, x: float, y: float) -> bool:
        """Whether a cup standing at ``(x, y)`` (field units) leaves every checker drawn so far
        in sight: its foot, its side and its rim, where the camera sees them."""
        half_w, half_d = 0.5 * spec.width * self.dc, 0.5 * spec.depth * self.dc
        reach = 0.55 * self.dc
        checkers = np.asarray(self.occupied, np.float64).reshape(-1, 2) * (1.0, self.stretch)
        if not len(checkers):
            return True
        tx_, ty_ = self.parallax(x, y, spec.height * self.dc)
        for f in (0.0, 0.25, 0.5, 0.75, 1.0):
            ex, ey = x + tx_ / self.lay.scale * f, y * self.stretch + ty_ / self.lay.scale * f
            qx = (checkers[:, 0] - ex) / (half_w + reach)
            qy = (checkers[:, 1] - ey) / (half_d + reach)
            if (qx**2 + qy**2).min() <= 1.0:
                return False
        return True

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
    lay = _layout(style.bar_fraction, scale, style.stretch)
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
    for cup in scene.cups:
        painter.cup(cup)
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


def random_setup(rng: np.random.Generator, *, varied: bool = False) -> tuple[BoardStyle, Camera, Lighting]:
    """A random board style, camera and lighting; ``varied``: a board and camera drawn from
    :func:`varied_style` and :meth:`Camera.varied` (the field kept inside the frame)."""
    if not varied:
        return random_style(rng), Camera.random(rng), Lighting.random(rng)
    style = varied_style(rng)
    camera = Camera.varied(rng)
    for _ in range(30):
        if field_inside(style, camera):
            break
        camera = replace(camera, fill=camera.fill * 0.95)
    return style, camera, Lighting.random(rng)


def field_inside(style: BoardStyle, camera: Camera, margin: float = 0.015) -> bool:
    """Whether the playing field of ``style`` lies inside ``camera``'s frame, ``margin`` (a share
    of the width) from its edges."""
    lay = _layout(style.bar_fraction, _canvas_scale(camera), style.stretch)
    hom, _ = _pose(camera, lay)
    corners = _project(hom, np.array([[0, 0], [FIELD_W, 0], [FIELD_W, FIELD_H], [0, FIELD_H]], float))
    w, h = camera.size
    pad = margin * w
    return bool(np.all(corners >= pad) and np.all(corners <= (w - 1 - pad, h - 1 - pad)))


def cup_spot(
    rng: np.random.Generator, spec: CupSpec, geometry: FieldGeometry, diameter: float, stretch: float = 1.0
) -> tuple[float, float]:
    """A spot (field units) for a cup over the tips of ``spec.row``'s points, where players put
    one down: a quarter to half the field's height from that row's edge, off the bar.

    :param diameter: the board's checkers' diameter (field units along x), the cup's unit.
    :param stretch: the board's :attr:`BoardStyle.stretch`.
    """
    half_w, half_d = 0.5 * spec.width * diameter, 0.5 * spec.depth * diameter
    long = FIELD_H * stretch
    bx0, _, bx1, _ = geometry.bar_box()
    # The side of the bar with the more room, chosen in proportion to it.
    left, right = bx0 - 2 * half_w, FIELD_W - bx1 - 2 * half_w
    if rng.random() * max(left + right, 1e-6) < left:
        x = float(rng.uniform(half_w, bx0 - half_w))
    else:
        x = float(rng.uniform(bx1 + half_w, FIELD_W - half_w))
    off = float(rng.uniform(0.25, 0.5)) * long
    off = min(max(off, half_d + 0.2 * diameter), long - half_d - 0.2 * diameter)
    y = off if spec.row == "top" else long - off
    return x, y / stretch


class Proportions(Protocol):
    """What :func:`arranged` needs of a board: its bar's width and its checkers' size (shares of
    the field's and of a point's width), and its :attr:`BoardStyle.stretch`."""

    @property
    def bar_fraction(self) -> float:
        """The bar strip's width over the field's."""

    @property
    def checker_fraction(self) -> float:
        """A checker's diameter over a point's width."""

    @property
    def stretch(self) -> float:
        """A field unit's length along y over its length along x."""


def arranged(scene: Scene, style: Proportions, rng: np.random.Generator, *, cups: float = 0.3) -> Scene:
    """``scene`` as real players leave a board of ``style``: stacks lined up five, six or seven
    from the edge before they are piled (a player's habit, now and then another), checkers on
    the bar anywhere along it, off its middle, a side's in either half, and, with chance
    ``cups``, one or two dice cups standing over the points' tips."""
    habit = int(rng.choice([5, 6, 7], p=[0.3, 0.5, 0.2]))
    lines = tuple(habit if rng.random() < 0.85 else int(rng.choice([5, 6, 7])) for _ in range(24))
    specs = []
    if rng.random() < cups:
        specs = [random_cup(rng) for _ in range(1 if rng.random() < 0.6 else 2)]
    return replace(scene, lines=lines, bar_spots=_bar_spots(scene, style, rng), cups=tuple(specs))


def random_cup(rng: np.random.Generator) -> CupSpec:
    """A dice cup of a random size (1.5 to 2.4 checkers across, oval or round, 1.6 to 2.6
    high), upright three times in four, over one row or the other; its spot left to the renderer."""
    width = float(rng.uniform(1.5, 2.4))
    return CupSpec(
        row="top" if rng.random() < 0.5 else "bottom",
        width=width,
        depth=width * float(rng.uniform(0.7, 1.0)),
        height=float(rng.uniform(1.6, 2.6)),
        upright=bool(rng.random() < 0.75),
    )


def _bar_spots(scene: Scene, style: Proportions, rng: np.random.Generator) -> tuple[tuple[float, float], ...]:
    """Where the scene's checkers on the bar lie: each side's in a run anywhere along one half
    (its own, mostly), clear of the cube or the track's counter, each a little off the bar's
    middle line; () (the geometry's places) where no run fits."""
    n1, n2 = scene.bar
    if n1 + n2 == 0:
        return ()
    geom = FieldGeometry(bar_fraction=style.bar_fraction)
    dc = geom.point_width * style.checker_fraction
    stretch = style.stretch
    long = FIELD_H * stretch
    middle = long / 2
    blocked = []
    for centre, size in (
        (geom.cube_center(scene.cube.owner) if scene.cube is not None else None, 0.8),
        (geom.track_center(scene.track.value, scene.track.owner) if scene.track is not None else None, 0.7),
    ):
        if centre is not None:
            reach = 0.5 * size * geom.checker_diameter + 0.5 * dc
            blocked.append((centre[1] * stretch - reach, centre[1] * stretch + reach))
    # A checker's middle is at least a third of a checker off the bar's middle: the half it
    # lies in is the one it counts on.
    lower = (middle + 0.35 * dc, long - 0.5 * dc)
    upper = (0.5 * dc, middle - 0.35 * dc)
    if n1 and n2:
        halves = (lower, upper) if rng.random() < 0.8 else (upper, lower)
    else:
        own = rng.random() < 0.75
        halves = ((lower if own else upper), (upper if own else lower))
    spots: list[tuple[float, float]] = []
    for n, (lo, hi) in zip((n1, n2), halves, strict=True):
        if n == 0:
            continue
        step = dc * float(rng.uniform(1.0, 1.3))
        span = (n - 1) * step
        for _ in range(30):
            if hi - lo < span:
                return ()
            start = float(rng.uniform(lo, hi - span))
            ys = [start + k * step for k in range(n)]
            if not any(a < y < b for y in ys for a, b in blocked):
                break
        else:
            return ()
        for y in ys:
            x = FIELD_W / 2 + float(np.clip(rng.normal(0.0, 0.1 * dc), -0.25 * dc, 0.25 * dc))
            spots.append((x, y / stretch))
    return tuple(spots)


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
