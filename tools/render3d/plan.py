# SPDX-License-Identifier: MIT
"""A setup's random choices and the camera's geometry, without Blender.

Everything random about a setup (the board's looks, the camera, the lights, the sensor) is drawn
here from the setup's seed, so the seed alone determines it. The camera model is a plain pinhole
(the same one Blender's camera is set to) followed by a radial distortion applied to the image
afterwards, so labels are computed here exactly, in image pixels whose centres are integers
(the convention of :mod:`vision`).

World units are metres: the board lies in the plane ``z = 0`` with player 1 seated on the ``-y``
side, the field centred on the origin. Field coordinates (:mod:`vision.geometry`) map to the world
by :meth:`Board.world`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from vision.geometry import FIELD_H, FIELD_W, FieldGeometry

RGB = tuple[float, float, float]

# Colours are sRGB 0-255 here (easy to read and to compare with photos); Blender gets them linear.
_WOODS: tuple[RGB, ...] = ((112, 70, 40), (72, 42, 22), (152, 106, 62), (44, 28, 16), (168, 126, 84), (96, 56, 36))
_LEATHERS: tuple[RGB, ...] = ((32, 30, 30), (92, 24, 28), (26, 46, 82), (122, 82, 46), (22, 62, 42), (60, 38, 30))
_FIELDS: tuple[RGB, ...] = (
    (36, 92, 48),
    (172, 152, 112),
    (42, 42, 46),
    (122, 32, 36),
    (204, 192, 160),
    (32, 62, 112),
    (150, 110, 70),
)
_POINT_PAIRS: tuple[tuple[RGB, RGB], ...] = (
    ((232, 224, 200), (30, 28, 28)),
    ((178, 36, 36), (228, 214, 182)),
    ((20, 20, 22), (236, 236, 232)),
    ((110, 26, 34), (214, 190, 150)),
    ((24, 96, 54), (236, 232, 220)),
    ((222, 120, 40), (40, 80, 150)),
    ((196, 150, 96), (62, 38, 22)),
    ((150, 150, 150), (180, 30, 30)),
)
_CHECKER_PAIRS: tuple[tuple[RGB, RGB], ...] = (
    ((236, 232, 222), (28, 26, 26)),
    ((240, 234, 214), (150, 26, 30)),
    ((238, 238, 236), (184, 30, 30)),
    ((226, 208, 170), (70, 42, 26)),
    ((200, 200, 204), (24, 24, 26)),
    ((230, 196, 60), (26, 26, 28)),
    ((236, 236, 236), (30, 60, 130)),
    ((200, 36, 36), (28, 28, 28)),
)
_TABLES: tuple[tuple[RGB, str], ...] = (
    ((120, 84, 52), "wood"),
    ((84, 56, 36), "wood"),
    ((176, 140, 100), "wood"),
    ((118, 120, 122), "cloth"),
    ((40, 50, 72), "cloth"),
    ((190, 186, 180), "printed"),
    ((64, 64, 60), "printed"),
)
_DICE: tuple[tuple[RGB, RGB], ...] = (
    ((240, 240, 236), (20, 20, 20)),
    ((200, 30, 30), (240, 240, 240)),
    ((26, 26, 26), (236, 236, 236)),
    ((236, 228, 200), (30, 30, 30)),
    ((30, 110, 60), (236, 236, 236)),
)

#: Board kinds, as :attr:`Style.kind`.
KINDS = ("wood", "leather", "felt", "printed", "tournament")


def _pick(rng: np.random.Generator, options: tuple[RGB, ...], spread: float = 0.08) -> RGB:
    """One of ``options`` with its brightness and tint a little changed, as no two boards are alike."""
    base = np.asarray(options[int(rng.integers(len(options)))], np.float64)
    out = base * rng.uniform(1 - spread, 1 + spread) + rng.normal(0.0, 6.0, 3)
    return tuple(float(v) for v in np.clip(out, 4, 250))  # type: ignore[return-value]


def _pick_pair(rng: np.random.Generator, options: tuple[tuple[RGB, RGB], ...]) -> tuple[RGB, RGB]:
    a, b = options[int(rng.integers(len(options)))]
    if rng.random() < 0.5:
        a, b = b, a
    return _pick(rng, (a,), 0.05), _pick(rng, (b,), 0.05)


@dataclass(frozen=True)
class Style:
    """How a board looks and measures (colours sRGB 0-255; lengths in field units unless said).

    :param kind: one of :data:`KINDS`.
    :param field_width_m: the playing field's width in metres (sets the world scale).
    :param bar_fraction: the bar strip's width as a fraction of the field's width (0: none).
    :param bar_raised: the bar is a raised strip of the frame (else flush with the field).
    :param checker_fraction: checker diameter as a fraction of a point's width.
    :param checker_thickness: checker thickness as a fraction of its diameter.
    :param rim: width of the frame round the field.
    :param rim_height_m: height of the frame above the field, metres.
    :param side_trays: trays on both sides (tournament boards), not only player 1's right.
    :param thickness_m: the board's thickness from the table to the field, metres (a mat's is a few mm).
    :param aspect: the playing field's width over its height (the rectified field's is 1.2).
    :param hinges: metal hinges on the bar (or the fold of a board without one), 0 for none.
    :param cup_colour: the dice cups standing on the field in a frame of a varied setup.
    :param varied: drawn by :meth:`varied`: its frames' positions are laid out as real players
        leave them (:func:`vision.render.arranged`).
    """

    kind: str
    field_width_m: float
    bar_fraction: float
    bar_raised: bool
    checker_fraction: float
    checker_thickness: float
    rim: float
    rim_height_m: float
    side_trays: bool
    thickness_m: float
    frame_colour: RGB
    frame_material: str
    field_colour: RGB
    field_material: str
    point_colours: tuple[RGB, RGB]
    point_material: str
    checker_colours: tuple[RGB, RGB]
    checker_roughness: float
    checker_groove: bool
    dice_colour: RGB
    pip_colour: RGB
    dice_fraction: float
    cube_colour: RGB
    cube_ink: RGB
    cube_fraction: float
    table_colour: RGB
    table_material: str
    variant: int
    aspect: float = 1.2
    hinges: int = 0
    cup_colour: RGB = (30.0, 30.0, 32.0)
    varied: bool = False

    @property
    def stretch(self) -> float:
        """A field unit's length along y over its length along x (1 for the rectified field's 1.2)."""
        return (FIELD_W / FIELD_H) / self.aspect

    def vary(self, rng: np.random.Generator) -> Style:
        """This board as real tables vary beyond :meth:`random`'s: points (or the field) the
        colour of one side's checkers (white points and white checkers), squarer or longer
        fields, smaller checkers, narrower bars, hinges; ``rng`` draws it all, this style's own
        choices kept."""
        points = list(self.point_colours)
        field = self.field_colour
        pick = rng.random()
        if pick < 0.3:
            # The point differs from a checker of its colour by its shape alone.
            k, j = int(rng.integers(2)), int(rng.integers(2))
            points[k] = _pick(rng, (self.checker_colours[j],), 0.03)
        elif pick < 0.42:
            field = _pick(rng, (self.checker_colours[int(rng.integers(2))],), 0.03)
        bar_fraction = self.bar_fraction
        if bar_fraction > 0 and rng.random() < 0.5:
            bar_fraction = float(rng.uniform(0.04, 0.07))
        hinges = int(rng.choice([0, 2, 2, 3])) if self.kind != "printed" else 0
        return replace(
            self,
            point_colours=(points[0], points[1]),
            field_colour=field,
            bar_fraction=bar_fraction,
            bar_raised=self.bar_raised and bar_fraction >= 0.075,
            checker_fraction=float(rng.uniform(0.82, 0.95)),
            aspect=float(rng.uniform(1.0, 1.32)),
            hinges=hinges,
            cup_colour=_pick(rng, _LEATHERS),
            varied=True,
        )

    @property
    def geometry(self) -> FieldGeometry:
        """The field's layout (what the reader must agree with)."""
        return FieldGeometry(bar_fraction=self.bar_fraction, checker_fraction=self.checker_fraction)

    @classmethod
    def random(cls, rng: np.random.Generator) -> Style:
        """A plausible board of a random kind."""
        kind = str(rng.choice(KINDS))
        frame_material = {"wood": "wood", "leather": "leather", "felt": "wood", "printed": "printed"}.get(
            kind, str(rng.choice(["leather", "wood"]))
        )
        frame_colour = _pick(rng, _LEATHERS if frame_material == "leather" else _WOODS)
        if kind == "printed":
            frame_colour = _pick(rng, _LEATHERS + _FIELDS)
        field_material = {"wood": str(rng.choice(["wood", "felt"])), "printed": "printed"}.get(kind, "felt")
        if kind == "leather":
            field_material = str(rng.choice(["leather", "felt"]))
        field_colour = _pick(rng, _WOODS if field_material == "wood" else _FIELDS)
        point_material = {"wood": "wood", "printed": "printed", "leather": "leather"}.get(kind, "felt")
        # A board without a bar strip is mostly a printed mat or a cheap folding board.
        no_bar = rng.random() < (0.7 if kind == "printed" else 0.1)
        bar_fraction = 0.0 if no_bar else float(rng.uniform(0.05, 0.1))
        dice_colour, pip_colour = _DICE[int(rng.integers(len(_DICE)))]
        ink_dark = rng.random() < 0.75
        table_colour, table_material = _TABLES[int(rng.integers(len(_TABLES)))]
        return cls(
            kind=kind,
            field_width_m=float(rng.uniform(0.42, 0.56)),
            bar_fraction=bar_fraction,
            # A raised bar holds the checkers put on it only when it is at least a checker wide.
            bar_raised=bar_fraction >= 0.075 and kind != "printed" and rng.random() < 0.8,
            checker_fraction=float(rng.uniform(0.9, 0.94)),
            checker_thickness=float(rng.uniform(0.18, 0.23)),
            rim=float(rng.uniform(45, 85) if kind != "tournament" else rng.uniform(70, 110)),
            rim_height_m=float(rng.uniform(0.0005, 0.0015) if kind == "printed" else rng.uniform(0.005, 0.012)),
            side_trays=kind == "tournament",
            thickness_m=float(rng.uniform(0.002, 0.004) if kind == "printed" else rng.uniform(0.012, 0.035)),
            frame_colour=frame_colour,
            frame_material=frame_material,
            field_colour=field_colour,
            field_material=field_material,
            point_colours=_pick_pair(rng, _POINT_PAIRS),
            point_material=point_material,
            checker_colours=_pick_pair(rng, _CHECKER_PAIRS),
            checker_roughness=float(rng.uniform(0.08, 0.6)),
            checker_groove=bool(rng.random() < 0.75),
            dice_colour=_pick(rng, (dice_colour,), 0.04),
            pip_colour=pip_colour,
            dice_fraction=float(rng.uniform(0.4, 0.5)),
            cube_colour=(236.0, 236.0, 230.0) if ink_dark else (30.0, 30.0, 32.0),
            cube_ink=(24.0, 24.0, 24.0) if ink_dark else (236.0, 236.0, 236.0),
            cube_fraction=float(rng.uniform(0.55, 0.68)),
            table_colour=_pick(rng, (table_colour,), 0.1),
            table_material=table_material,
            variant=int(rng.integers(0, 10_000)),
        )


@dataclass(frozen=True)
class Board:
    """Where the board's parts lie, in field units, for a style."""

    style: Style

    @property
    def scale(self) -> float:
        """Metres per field unit."""
        return self.style.field_width_m / FIELD_W

    @property
    def geometry(self) -> FieldGeometry:
        """The field's layout."""
        return self.style.geometry

    @property
    def d(self) -> float:
        """Checker diameter, field units."""
        return self.geometry.checker_diameter

    @property
    def thickness_m(self) -> float:
        """Checker thickness, metres."""
        return self.d * self.style.checker_thickness * self.scale

    def world(self, x: float, y: float, z: float = 0.0) -> tuple[float, float, float]:
        """Field point (``z`` in metres) to world metres: field y grows towards player 1 (-y)."""
        s = self.scale
        return (x - FIELD_W / 2) * s, (FIELD_H / 2 - y) * s * self.style.stretch, z

    def tray_width(self) -> float:
        """Width of an off tray, field units."""
        return 1.3 * self.d

    def divider(self) -> float:
        """The frame strip between the field and a side tray, field units."""
        return 0.3 * self.d

    def extent(self) -> tuple[float, float, float, float]:
        """``(x0, y0, x1, y1)`` of the whole board, field units."""
        rim = self.style.rim
        right = FIELD_W + self.divider() + self.tray_width() + rim
        left = -(self.divider() + self.tray_width() + rim) if self.style.side_trays else -rim
        # The rim is as wide along y as along x: fewer or more field units there on a stretched field.
        along_y = rim / self.style.stretch
        return left, -along_y, right, FIELD_H + along_y

    def tray(self, player: int, side: str = "right") -> tuple[float, float, float, float]:
        """``(x0, y0, x1, y1)`` of a tray: player 1's at the bottom, player 2's at the top."""
        x0 = FIELD_W + self.divider() if side == "right" else -(self.divider() + self.tray_width())
        x1 = x0 + self.tray_width()
        gap = 0.15 * self.d / self.style.stretch
        return (x0, FIELD_H / 2 + gap, x1, FIELD_H) if player == 1 else (x0, 0.0, x1, FIELD_H / 2 - gap)

    def bar_top_m(self) -> float:
        """Height of the bar's top above the field, metres."""
        return self.style.rim_height_m if self.style.bar_raised else 0.0


@dataclass(frozen=True)
class CameraPose:
    """A fixed camera over the board.

    :param size: image width and height, pixels.
    :param focal_mm: focal length, 35 mm equivalent (36 mm sensor width).
    :param tilt: degrees the optical axis is off the board's normal.
    :param azimuth: direction the camera is moved off the vertical, degrees (0: towards +x).
    :param roll: in-plane rotation of the image, degrees.
    :param distortion: radial distortion coefficient (positive: barrel).
    :param fill: fraction of the image height the board covers.
    """

    size: tuple[int, int]
    focal_mm: float
    tilt: float
    azimuth: float
    roll: float
    distortion: float
    fill: float
    target: tuple[float, float, float] = (0.0, 0.0, 0.0)
    location: tuple[float, float, float] = (0.0, 0.0, 1.0)

    @property
    def f_px(self) -> float:
        """Focal length in pixels."""
        return self.focal_mm / 36.0 * self.size[0]

    def rotation(self) -> np.ndarray:
        """Camera-to-world rotation: columns are the camera's right, up and backward axes."""
        eye, target = np.asarray(self.location), np.asarray(self.target)
        forward = target - eye
        forward /= np.linalg.norm(forward)
        # Player 1 sits at the bottom of the image: the image's up is the world's +y, as near as the tilt allows.
        up_hint = np.array([0.0, 1.0, 0.0])
        right = np.cross(forward, up_hint)
        if np.linalg.norm(right) < 1e-6:
            right = np.array([1.0, 0.0, 0.0])
        right /= np.linalg.norm(right)
        up = np.cross(right, forward)
        r = math.radians(self.roll)
        right, up = right * math.cos(r) + up * math.sin(r), -right * math.sin(r) + up * math.cos(r)
        return np.stack([right, up, -forward], axis=1)

    def project(self, points: np.ndarray) -> np.ndarray:
        """World points (n x 3) to image pixels (n x 2, pixel centres at integers), lens distortion included."""
        return distort(self.project_pinhole(points), self.size, self.distortion)

    def project_pinhole(self, points: np.ndarray) -> np.ndarray:
        """World points to image pixels through the pinhole alone."""
        rot = self.rotation()
        cam = (np.asarray(points, np.float64) - np.asarray(self.location)) @ rot
        depth = np.maximum(-cam[:, 2], 1e-9)
        w, h = self.size
        x = w / 2 + self.f_px * cam[:, 0] / depth - 0.5
        y = h / 2 - self.f_px * cam[:, 1] / depth - 0.5
        return np.stack([x, y], axis=1)

    @classmethod
    def random(cls, rng: np.random.Generator, board: Board, size: tuple[int, int]) -> CameraPose:
        """A camera from straight overhead to 30 degrees off, placed so the board fills 60-90% of the height."""
        pose = cls(
            size=size,
            focal_mm=float(rng.uniform(22.0, 50.0)),
            tilt=float(30.0 * math.sqrt(rng.random())),
            azimuth=float(rng.uniform(0.0, 360.0)),
            roll=float(np.clip(rng.normal(0.0, 2.5), -7.0, 7.0)),
            distortion=float(rng.uniform(0.0, 0.02)),
            fill=float(rng.uniform(0.6, 0.9)),
        )
        s = board.scale
        target = (float(rng.normal(0.0, 0.015)) * FIELD_W * s, float(rng.normal(0.0, 0.015)) * FIELD_H * s, 0.0)
        return pose.placed(board, target)

    def placed(self, board: Board, target: tuple[float, float, float]) -> CameraPose:
        """This pose moved along its axis until the board fills :attr:`fill` of the height (and fits the width)."""
        x0, y0, x1, y1 = board.extent()
        rim = board.style.rim_height_m
        outline = np.array([board.world(x, y, z) for x in (x0, x1) for y in (y0, y1) for z in (0.0, rim)], np.float64)
        t, a = math.radians(self.tilt), math.radians(self.azimuth)
        direction = np.array([math.sin(t) * math.cos(a), math.sin(t) * math.sin(a), math.cos(t)])
        w, h = self.size
        distance = 1.0
        pose = self
        for _ in range(8):
            eye = np.asarray(target) + distance * direction
            pose = CameraPose(**{**self.__dict__, "target": target, "location": tuple(float(v) for v in eye)})
            pts = pose.project_pinhole(outline)
            span_y = float(np.ptp(pts[:, 1])) / h
            span_x = float(np.ptp(pts[:, 0])) / w
            ratio = max(span_y / self.fill, span_x / 0.95)
            distance *= ratio
        # Off-centre aim and tilt can still push the board's edge out of the picture: back off
        # until all of it shows, as whoever set the camera up would (the reader watches the frame).
        margin = 0.01 * h
        for _ in range(40):
            pts = pose.project(outline)
            if np.all(pts >= margin) and np.all(pts <= (w - 1 - margin, h - 1 - margin)):
                break
            distance *= 1.03
            eye = np.asarray(target) + distance * direction
            pose = CameraPose(**{**self.__dict__, "target": target, "location": tuple(float(v) for v in eye)})
        return pose


def distort(points: np.ndarray, size: tuple[int, int], k: float) -> np.ndarray:
    """Pinhole pixels to distorted pixels: the inverse of :func:`undistort` (by fixed-point steps)."""
    pts = np.asarray(points, np.float64)
    if k == 0.0:
        return pts.copy()
    centre, norm = _lens_frame(size)
    u = (pts - centre) / norm
    d = u.copy()
    for _ in range(20):
        d = u / (1.0 + k * np.sum(d * d, axis=1, keepdims=True))
    out: np.ndarray = d * norm + centre
    return out


def undistort(points: np.ndarray, size: tuple[int, int], k: float) -> np.ndarray:
    """Distorted pixels to pinhole pixels: ``u = d (1 + k |d|^2)``, radii in half-diagonals (k > 0: barrel)."""
    centre, norm = _lens_frame(size)
    d = (np.asarray(points, np.float64) - centre) / norm
    out: np.ndarray = (d * (1.0 + k * np.sum(d * d, axis=-1, keepdims=True))) * norm + centre
    return out


def _lens_frame(size: tuple[int, int]) -> tuple[np.ndarray, float]:
    w, h = size
    return np.array([(w - 1) / 2, (h - 1) / 2]), math.hypot(w, h) / 2


def kelvin_rgb(kelvin: float) -> RGB:
    """Linear RGB (max 1) of a black body at ``kelvin``: a fit good to a few percent from 1500 to 12000 K."""
    t = kelvin / 100.0
    r = 255.0 if t <= 66 else 329.698727446 * (t - 60) ** -0.1332047592
    g = 99.4708025861 * math.log(t) - 161.1195681661 if t <= 66 else 288.1221695283 * (t - 60) ** -0.0755148492
    b = 255.0 if t >= 66 else (0.0 if t <= 19 else 138.5177312231 * math.log(t - 10) - 305.0447927307)
    srgb = np.clip(np.array([r, g, b]) / 255.0, 0.0, 1.0)
    lin = np.where(srgb <= 0.04045, srgb / 12.92, ((srgb + 0.055) / 1.055) ** 2.4)
    return tuple(float(v) for v in lin / lin.max())  # type: ignore[return-value]


@dataclass(frozen=True)
class Light:
    """One light source.

    :param kind: ``area`` (a lamp or a window; ``size`` metres across), ``point``, or ``sun`` (``size``
        is its angular diameter in degrees).
    :param location: metres (for the sun: a point along its direction from the board).
    :param power: watts (lamps) or irradiance (the sun), before the frame's small changes.
    """

    kind: str
    location: tuple[float, float, float]
    power: float
    size: float
    kelvin: float


@dataclass(frozen=True)
class Lighting:
    """The lights of a setup, the ambient light and the sensor.

    :param world_strength: ambient light (the room), relative to the main light.
    :param exposure_mid: linear level the field's median is exposed to.
    :param white_balance: how far the camera's white balance corrects the light's colour (0-1).
    :param noise: sensor noise sigma in 8-bit levels.
    """

    name: str
    lights: tuple[Light, ...]
    world_kelvin: float
    world_strength: float
    exposure_mid: float
    white_balance: float
    noise: float
    vignette: float

    @classmethod
    def random(cls, rng: np.random.Generator, board: Board) -> Lighting:
        """A lamp, daylight from a window, a ceiling panel, or a mix of two colour temperatures."""
        name = str(rng.choice(["lamp", "daylight", "ceiling", "mixed"], p=[0.35, 0.25, 0.2, 0.2]))
        span = board.style.field_width_m
        lights: list[Light] = []

        def lamp(kelvin: float, strength: float) -> Light:
            height = float(rng.uniform(0.6, 1.6))
            off = rng.normal(0.0, 0.45, 2) * span * 1.5
            # Small lamps give hard shadows and sharp glare, shades and panels soft ones.
            size = float(np.exp(rng.uniform(math.log(0.03), math.log(0.6))))
            dist2 = height**2 + float(off @ off)
            return Light("area", (float(off[0]), float(off[1]), height), strength * math.pi * dist2, size, kelvin)

        if name == "lamp":
            lights.append(lamp(float(rng.uniform(2600, 4200)), 1.0))
        elif name == "ceiling":
            # A panel 1.2 m across overhead: soft shadows all round.
            y, height = float(rng.normal(0, 0.3)), float(rng.uniform(1.2, 2.0))
            lights.append(Light("area", (0.0, y, height), math.pi * height**2, 1.2, float(rng.uniform(3800, 6000))))
        elif name == "daylight":
            elevation = math.radians(rng.uniform(25, 70))
            azimuth = float(rng.uniform(0, 2 * math.pi))
            direction = (math.cos(elevation) * math.cos(azimuth), math.cos(elevation) * math.sin(azimuth))
            lights.append(
                Light(
                    "sun",
                    (direction[0], direction[1], math.sin(elevation)),
                    1.0,
                    float(rng.uniform(0.5, 12.0)),
                    float(rng.uniform(5200, 6800)),
                )
            )
        else:
            lights.append(lamp(float(rng.uniform(2500, 3300)), 1.0))
            lights.append(lamp(float(rng.uniform(5000, 6800)), float(rng.uniform(0.3, 0.9))))
        return cls(
            name=name,
            lights=tuple(lights),
            world_kelvin=float(rng.uniform(5500, 9000) if name == "daylight" else rng.uniform(3000, 6000)),
            world_strength=float(rng.uniform(0.05, 0.35) if name != "daylight" else rng.uniform(0.2, 0.6)),
            exposure_mid=float(rng.uniform(0.16, 0.3)),
            white_balance=float(rng.uniform(0.5, 0.95)),
            noise=float(rng.uniform(1.0, 5.0)),
            vignette=float(rng.uniform(0.0, 0.35)),
        )
