# SPDX-License-Identifier: MIT
"""Calibrate a board under a camera: find the field, measure the bar, learn the colours.

Calibration needs one frame of the board showing a known position (by default the starting
position) and the four corners of the playing field, given in pixels or found from four ArUco
markers (OpenCV's 4x4 dictionary, ids 0-3) stuck on the frame at the corners beside player 1's
13-, 24-, 1- and 12-points, each with its inner corner touching the field's corner.

From the known position it learns what this board looks like under this light: the colour of
each side's checkers, of the empty points (per point colour and distance from the edge), and
how each side's checkers show their edges (seams between two, the end of a stack, the rim all
round) compared with a checker's smooth top and the bare point.
"""

from __future__ import annotations

import itertools

import cv2
import numpy as np

from engine.position import Position
from vision.cube import read_track
from vision.features import (
    CHECKER,
    EDGE,
    EMPTY,
    FLAT,
    RING,
    STEPS,
    TOP,
    FieldSampler,
    border_band,
    expected,
    expected_bar,
    rectify,
)
from vision.profile import Gaussian, Profile, ProfileError, field_homography

#: ArUco dictionary of the corner markers.
MARKER_DICTIONARY = cv2.aruco.DICT_4X4_50

# Variance floors keep a model from collapsing on a handful of identical samples.
_COLOUR_FLOOR = 25.0
_SHAPE_FLOOR = 0.01


class CalibrationError(ValueError):
    """The image cannot be calibrated: corners outside it, markers not found, and so on."""


def find_markers(image: np.ndarray) -> np.ndarray:
    """The field's four corners from the four ArUco corner markers (contract order).

    Each marker's corner nearest the middle of the four markers is the field's corner.

    :raises CalibrationError: naming the markers that were not found.
    """
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) if image.ndim == 3 else image
    detector = cv2.aruco.ArucoDetector(
        cv2.aruco.getPredefinedDictionary(MARKER_DICTIONARY), cv2.aruco.DetectorParameters()
    )
    found_corners, ids, _ = detector.detectMarkers(grey)
    seen: dict[int, np.ndarray] = {}
    if ids is not None:
        for quad, marker_id in zip(found_corners, ids.ravel(), strict=True):
            if 0 <= int(marker_id) <= 3:
                seen[int(marker_id)] = quad.reshape(4, 2)
    missing = [i for i in range(4) if i not in seen]
    if missing:
        names = ", ".join(
            f"{i} (beside the {p}-point)" for i, p in zip(range(4), (13, 24, 1, 12), strict=True) if i in missing
        )
        raise CalibrationError(f"corner markers not found: {names}; check they are in view and lit evenly")
    middle = np.mean([seen[i].mean(axis=0) for i in range(4)], axis=0)
    corners = [seen[i][np.argmin(np.linalg.norm(seen[i] - middle, axis=1))] for i in range(4)]
    return np.asarray(corners, dtype=np.float64)


def parse_corners(text: str) -> np.ndarray:
    """Read ``"x,y x,y x,y x,y"`` into a 4x2 array.

    :raises CalibrationError: anything else.
    """
    try:
        pairs = [tuple(float(v) for v in part.split(",")) for part in text.replace(";", " ").split()]
    except ValueError:
        raise CalibrationError(f"corners must be four 'x,y' pairs, not {text!r}") from None
    if len(pairs) != 4 or any(len(p) != 2 for p in pairs):
        raise CalibrationError(f"corners must be four 'x,y' pairs, not {text!r}")
    return np.asarray(pairs, dtype=np.float64)


def check_corners(corners: np.ndarray, image: np.ndarray) -> None:
    """Refuse corners outside the image or in an order that folds the field.

    :raises CalibrationError: naming the corner and the image size.
    """
    height, width = image.shape[:2]
    names = ("13-point", "24-point", "1-point", "12-point")
    for (x, y), name in zip(corners, names, strict=True):
        if not (0 <= x < width and 0 <= y < height):
            raise CalibrationError(
                f"the corner beside the {name} ({x:.0f},{y:.0f}) is outside the {width}x{height} image"
            )
    area = cv2.contourArea(corners.astype(np.float32))
    signed = 0.5 * sum(
        corners[i][0] * corners[(i + 1) % 4][1] - corners[(i + 1) % 4][0] * corners[i][1] for i in range(4)
    )
    if area < 0.02 * width * height or signed <= 0 or not cv2.isContourConvex(corners.astype(np.float32)):
        raise CalibrationError(
            "the corners must go round the field clockwise on screen: beside the 13-, 24-, 1- then 12-point"
            " (top-left, top-right, bottom-right, bottom-left seen from player 1's seat)"
        )


def fit_bar_fraction(image: np.ndarray, corners: np.ndarray) -> float:
    """The bar width that splits the field's edges best into twelve points and a bar.

    Near the edges each point is one colour across its whole width (the base of its triangle,
    or a checker standing on it), so the colour along a line close to the edge changes at the
    points' boundaries and is even between them; the right bar width puts the boundaries where
    the changes are.
    """
    field = rectify(image, field_homography(corners))
    lab = cv2.cvtColor(field, cv2.COLOR_BGR2LAB).astype(np.float64)
    rows = lab.shape[0]
    edges = [lab[int(rows * 0.02) : int(rows * 0.1)], lab[int(rows * 0.9) : int(rows * 0.98)]]
    profiles = [band.mean(axis=0) for band in edges]  # each: width x 3
    width = lab.shape[1]
    best = (np.inf, 0.0)
    for fraction in np.round(np.arange(0.0, 0.2, 0.0025), 4):
        bar = width * fraction
        point = (width - bar) / 12
        cuts = [k * point for k in range(7)] + [6 * point + bar + k * point for k in range(7)]
        spread = 0.0
        for profile in profiles:
            for a, b in itertools.pairwise(cuts):
                # Stay clear of the boundary itself, where the two colours blend.
                lo, hi = round(a + 0.15 * point), round(b - 0.15 * point)
                if hi > lo:
                    segment = profile[lo:hi]
                    spread += float(((segment - segment.mean(axis=0)) ** 2).sum())
        if spread < best[0]:
            best = (spread, float(fraction))
    return best[1]


def calibrate(
    image: np.ndarray,
    corners: np.ndarray | None = None,
    *,
    position: Position | None = None,
    bar_fraction: float | None = None,
) -> Profile:
    """Make a profile from one frame showing ``position`` (player 1 on roll; default: the start).

    :param corners: the field's corners in the contract order; ``None`` to find the markers.
    :param bar_fraction: the bar strip's width as a fraction of the field's width; ``None`` to
        measure it.
    :raises CalibrationError: the corners or markers are wrong, or the image does not show the
        position (checker colours not told apart).
    """
    if image is None or image.ndim != 3:
        raise CalibrationError("calibration needs a colour image")
    source = "corners"
    if corners is None:
        corners = find_markers(image)
        source = "markers"
    check_corners(corners, image)
    shown = position if position is not None else Position.STARTING
    if bar_fraction is None:
        bar_fraction = fit_bar_fraction(image, corners)
    if not 0.0 <= bar_fraction < 0.5:
        raise CalibrationError(
            f"the bar width must be a fraction of the field's width from 0 to 0.5, not {bar_fraction}"
        )
    points, bar, _ = shown.to_absolute(1)
    profile = Profile(
        image_size=(image.shape[1], image.shape[0]),
        corners=[(float(x), float(y)) for x, y in corners],
        bar_fraction=float(bar_fraction),
        source=source,
        position=shown.position_id(),
    )
    try:
        homography = profile.homography
    except ProfileError as exc:
        raise CalibrationError(str(exc)) from None
    sampler = FieldSampler(profile.geometry)
    features = sampler.sample(rectify(image, homography))
    profile.models = _fit_models(features, points, bar)
    field_image = rectify(image, homography)
    track = read_track(field_image, profile.geometry)
    # A counter on the track's centre circle at calibration means the board has a track.
    profile.cube_kind = "track" if track is not None and track.value == 1 else "cube"
    profile.empty_means = _empty_means(features["points_colour"], points)
    profile.border = [int(v) for v in border_band(image, homography).reshape(-1)]
    _check_separable(profile)
    return profile


def _empty_means(colour: np.ndarray, points: list[int]) -> list[list[list[float]]]:
    """What every sample spot of every point looks like bare, under this board's light.

    Where the calibration frame shows the spot bare, that is what it looks like; where a
    checker covers it, the same spot on the nearest bare points of the same colour in the same
    row stands in (the light changes little from one point to the next).
    """
    bare = np.zeros((24, STEPS), dtype=bool)
    for index, count in enumerate(points):
        labels = expected(abs(count))[0]
        bare[index] = [label == EMPTY for label in labels]
    means = np.zeros((24, STEPS, 3))
    for index in range(24):
        row = index // 12
        for j in range(STEPS):
            if bare[index, j]:
                means[index, j] = colour[index, j]
                continue
            donors = [
                (abs(other - index), other)
                for other in range(row * 12, row * 12 + 12)
                if (other - index) % 2 == 0 and bare[other, j]
            ]
            if not donors:
                donors = [(0, other) for other in range(24) if (other - index) % 2 == 0 and bare[other, j]]
            if not donors:
                means[index, j] = np.nan
                continue
            nearest = min(d for d, _ in donors)
            chosen = [colour[other, j] for d, other in donors if d == nearest]
            means[index, j] = np.mean(chosen, axis=0)
    return [[[round(float(v), 2) for v in means[i, j]] for j in range(STEPS)] for i in range(24)]


def _fit_models(features: dict[str, np.ndarray], points: list[int], bar: tuple[int, int]) -> dict[str, Gaussian]:
    samples: dict[str, list[np.ndarray]] = {}

    def add(name: str, value: np.ndarray) -> None:
        samples.setdefault(name, []).append(value)

    for index, count in enumerate(points):
        labels, seams, rings = expected(abs(count))
        side = "p1" if count > 0 else "p2"
        parity = (index + 1) % 2
        for j in range(STEPS):
            if labels[j] == CHECKER:
                add(side, features["points_colour"][index, j])
            elif labels[j] == EMPTY:
                add(f"empty{parity}_{j}", features["points_colour"][index, j])
                add(f"empty{parity}", features["points_colour"][index, j])
            shape = {EDGE: f"edge_{side}", TOP: f"top_{side}", FLAT: "flat"}.get(seams[j])
            if shape:
                add(shape, features["points_seam"][index, j : j + 1])
            ring = {RING: f"ring_{side}", FLAT: "no_ring"}.get(rings[j])
            if ring:
                add(ring, features["points_ring"][index, j : j + 1])
    for player in (0, 1):
        labels, _, _ = expected_bar(bar[player])
        for j, label in enumerate(labels):
            if label == EMPTY:
                add("bar_empty", features["bar_colour"][player, j])
    models: dict[str, Gaussian] = {}
    for name in ("p1", "p2"):
        if len(samples.get(name, [])) < 3:
            raise CalibrationError(f"the position shows too few checkers of player {name[1]} to learn their colour")
    for name, group in samples.items():
        if len(group) < 3:
            continue
        floor = _COLOUR_FLOOR if group[0].shape[-1] == 3 else _SHAPE_FLOOR
        models[name] = Gaussian.fit(np.asarray(group), floor)
    return models


def _check_separable(profile: Profile) -> None:
    """Refuse a calibration whose two checker colours cannot be told apart."""
    p1, p2 = profile.models["p1"], profile.models["p2"]
    distance = float(np.linalg.norm(np.asarray(p1.mean) - np.asarray(p2.mean)))
    if distance < 8.0:
        raise CalibrationError(
            "the two sides' checkers look the same in this image; is the position right"
            " (player 1's home at the bottom right), and the board lit?"
        )
