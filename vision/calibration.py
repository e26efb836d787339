# SPDX-License-Identifier: MIT
"""Calibrate a board under a camera: find the field, measure the bar, learn the colours.

Calibration needs one frame of the board showing a known position (by default the starting
position) and the four corners of the playing field, given in pixels or found from four ArUco
markers (OpenCV's 4x4 dictionary, ids 0-3) stuck on the frame at the corners beside player 1's
13-, 24-, 1- and 12-points, each with its inner corner touching the field's corner.

From the known position it learns what this board looks like under this light: the colour of
each side's checkers, of the empty points (per point colour and distance from the edge), and
how each side's checkers show their edges (seams between two, the end of a stack, the rim all
round) compared with a checker's smooth top and the bare point; and, for the learned point
reader, what each point's strip looks like bare (:class:`vision.strips.References`).

A profile learns whatever the frame shows, a hand over the board or a wrong position too, and
then misreads every frame after. So the command checks each new profile (``check=True``): no
patch over the board's frame or the field that stands out from the board round it, and the
frame read back with the profile (:func:`verify`) as the position given, with confidence.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import cv2
import numpy as np

from engine.position import Position
from vision import points_net
from vision.cube import read_track
from vision.features import (
    BORDER,
    CHECKER,
    EDGE,
    EMPTY,
    FLAT,
    RING,
    SCALE,
    STEPS,
    TOP,
    FieldSampler,
    border_band,
    expected,
    expected_bar,
    rectify,
)
from vision.follow import board_view
from vision.geometry import FIELD_H, FIELD_W
from vision.profile import (
    DIE_FRACTION,
    DIE_FRACTION_RANGE,
    Gaussian,
    Profile,
    ProfileError,
    corner_problem,
    field_homography,
)
from vision.reader import SPOT_SPREAD, BoardReader
from vision.reading import BoardReading
from vision.strips import References, StripCutter, encode, strip_counts

#: ArUco dictionary of the corner markers.
MARKER_DICTIONARY = cv2.aruco.DICT_4X4_50

# Variance floors keep a model from collapsing on a handful of identical samples.
_COLOUR_FLOOR = 25.0
_SHAPE_FLOOR = 0.01

#: The least confidence with which a new profile must read its own frame as the position shown.
#: Good calibrations of rendered boards (the four styles, and 150 random boards, cameras and
#: lights) read themselves at 0.06 or more, most of them above 0.2; corners 15 pixels or more
#: off read under 0.05 or wrong, and a wrong position or corners further off read wrong.
SELF_READ_CONFIDENCE = 0.02
#: A stretch of the board's frame (above or below the field) whose colour stands this far (Lab)
#: from the line between the frame's colour on either side of it is something lying over the
#: frame: a hand, an arm. On clean rendered boards no stretch stands out more than 8; hands 18
#: and more.
FRAME_PATCH = 14.0
#: The same along the left side of the field, across the grain of a wooden frame, whose light
#: and dark streaks stand out up to 20 on clean rendered boards.
FRAME_PATCH_SIDE = 30.0
#: The narrowest stretch (band pixels, about a third of a checker each) that counts as a patch.
FRAME_PATCH_MIN = 3
#: Two samples in a row along a point standing out this far (squared, in spreads of a bare spot's
#: colour) from their like are something over the field. Clean rendered boards: up to 14; hands
#: over the field but off the frame's sides, 30 and more.
FIELD_PATCH = 30.0


class CalibrationError(ValueError):
    """The image cannot be calibrated: corners outside it, markers not found, and so on.

    :ivar kind: for a profile that does not read its frame back (:func:`verify`): ``occluded``,
        ``position`` (the reading is not the position given) or ``confidence``; else empty.
    """

    def __init__(self, message: str, kind: str = "") -> None:
        super().__init__(message)
        self.kind = kind


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


def find_corners(image: np.ndarray, position: Position | None = None) -> tuple[np.ndarray, str]:
    """The playing field's corners (contract order) in a frame, and how they were found:
    ``markers`` (the four ArUco corner markers) or ``found`` (the field itself, with no markers,
    turned so that ``position``, by default the start, reads as player 1 sees it).

    :raises CalibrationError: neither the markers nor the field can be found, saying why.
    """
    try:
        return find_markers(image), "markers"
    except CalibrationError:
        pass
    raise CalibrationError("the playing field was not found in the image: give its corners with --corners")


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
    """Refuse corners that are no field: outside the image, repeated, on a line or too close
    together, not a convex quadrilateral, or in an order that folds the field.

    :raises CalibrationError: naming the corner and the image size where it can.
    """
    height, width = image.shape[:2]
    problem = corner_problem(np.asarray(corners, dtype=np.float64), width, height)
    if problem:
        raise CalibrationError(problem)


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
    check: bool = False,
    die_fraction: float = DIE_FRACTION,
) -> Profile:
    """Make a profile from one frame showing ``position`` (player 1 on roll; default: the start).

    With ``check``, the new profile then reads its own frame back: a frame with a hand over the
    board, corners that are not the field's, or a position that is not the one shown make a
    profile that misreads every frame after, and are refused (``bgboard vision calibrate``
    always checks).

    :param corners: the field's corners in the contract order; ``None`` to find them
        (:func:`find_corners`: the markers, else the field itself).
    :param bar_fraction: the bar strip's width as a fraction of the field's width; ``None`` to
        measure it.
    :param check: read the frame back with the new profile and refuse it as said above. Off by
        default for the benchmarks and tests, which calibrate on many random rendered boards
        and count what a profile gets wrong, a poor one too.
    :param die_fraction: the side of this board's dice as a fraction of a checker's diameter
        (real dice are 0.4 to 0.5, as the default is; the 2D renderer draws 0.65): the reader
        looks for dice of that size.
    :raises CalibrationError: the die fraction is out of range, the corners or markers are
        wrong, or the image does not show the position (checker colours not told apart, or not
        read back as it with confidence), or something lies over the board.
    """
    if image is None or image.ndim != 3:
        raise CalibrationError("calibration needs a colour image")
    low, high = DIE_FRACTION_RANGE
    if not low <= die_fraction <= high:
        raise CalibrationError(
            f"die_fraction (a die's side over a checker's diameter) must be from {low:g} to {high:g},"
            f" not {die_fraction:g}"
        )
    source = "corners"
    if corners is None:
        corners, source = find_corners(image, position)
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
        die_fraction=float(die_fraction),
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
    profile.border_mean = True
    profile.view = board_view(image, homography)
    cutter = StripCutter(profile.geometry, homography)
    strips, counts = cutter.colour(image), strip_counts(points, bar)
    profile.references = References.from_frame(strips, counts, profile.geometry)
    if points_net.available():
        # The learned reader tried on this very frame, every strip beside another's bare look
        # (as a point never seen bare is read): how far its confidence holds on this board.
        refs = profile.references
        trial = refs.borrowing_all(profile.geometry)
        colours = np.asarray([profile.models["p1"].mean, profile.models["p2"].mean], np.float32)
        own = points_net.probabilities(encode(strips, refs.strips, refs.borrowed, colours))
        borrowed = points_net.probabilities(encode(strips, trial.strips, trial.borrowed, colours))
        refs.try_on(own, borrowed, counts)
    _check_separable(profile)
    if check:
        _check_read_back(profile, image, shown, features)
    return profile


_ADVICE = {
    "occluded": "calibrate from a photo with nothing over the board",
    "position": (
        "is the position the one the photo shows (the start unless --position says otherwise, player 1's"
        " home board at the bottom right), with nothing over the board, and are the corners the playing field's"
        " (and --bar-width, if given, the bar's)?"
    ),
    "confidence": "are the corners the playing field's own (not the frame's), and is the board evenly lit?",
}


def _check_read_back(profile: Profile, image: np.ndarray, shown: Position, features: dict[str, np.ndarray]) -> None:
    """Refuse a new profile that does not read its own frame as ``shown``, with the advice."""
    try:
        patch = frame_patch(image, profile.homography)
        if patch is not None:
            raise CalibrationError(
                f"the board reads as occluded (a hand or an object over the board's frame near {patch})", "occluded"
            )
        # The models' reader: the learned one compares each strip with its reference, cut from
        # this very frame, so a strip would read as bare wherever the position says bare,
        # whatever it shows (corners a point off, a wrong position); the models are learnt from
        # the frame as a whole and do not agree with a frame that is not what it is said to be.
        reader = BoardReader(profile, points="model")
        reading = reader.read(image)
        _judge(reader, reading, image, shown, confidence=False)
        hidden = _foreign_on_field(reader, features, shown, reading, image)
        if hidden is not None:
            raise CalibrationError(
                f"the board reads as occluded (a hand or an object over the field near {hidden})", "occluded"
            )
        _judge(reader, reading, image, None)
    except CalibrationError as exc:
        advice = _ADVICE.get(exc.kind)
        if exc.kind == "occluded" and profile.source == "corners":
            advice = f"{advice}; with nothing there, the corners given are not the playing field's"
        raise CalibrationError(f"{exc}: {advice}" if advice else str(exc), exc.kind) from None


def verify(
    profile: Profile, image: np.ndarray, position: Position | None = None, *, points: str = "auto"
) -> BoardReading:
    """Read ``image`` with ``profile``; refuse a reading not to be trusted, saying where.

    Refused: an occluded reading (a hand over the field or the board's frame), with the region;
    with ``position`` (player 1 on roll), a reading of other points or bar than it has, naming
    them; a reading under :data:`SELF_READ_CONFIDENCE`, naming the doubtful points.

    :param points: how the points are read (see :data:`vision.reader.POINT_READERS`).
    :returns: the reading.
    :raises CalibrationError: with :attr:`CalibrationError.kind` ``occluded``, ``position`` or
        ``confidence``.
    """
    reader = BoardReader(profile, points=points)
    reading = reader.read(image)
    _judge(reader, reading, image, position)
    return reading


def _judge(
    reader: BoardReader, reading: BoardReading, image: np.ndarray, position: Position | None, *, confidence: bool = True
) -> None:
    """Refuse ``reading`` as :func:`verify` says (``confidence``: its confidence too)."""
    profile = reader.profile
    if reading.occluded:
        hidden = [i for i, c in enumerate(reading.point_confidence) if c == 0.0]
        if hidden:
            where = f"the field near {_points_box(reader, hidden, image)}"
        else:
            cube = reading.cube
            end = None
            if cube is not None and cube.owner is not None and profile.cube_kind != "track":
                end = "bottom" if cube.owner == 1 else "top"
            box = _band_box(reader.border_changes(image, end), reader.homography, image)
            where = "the board's frame" + (f" near {box}" if box else "")
        raise CalibrationError(f"the board reads as occluded (a hand or an object over {where})", "occluded")
    if position is not None:
        points, bar, _ = position.to_absolute(1)
        wrong = [i for i in range(24) if reading.points[i] != points[i]]
        if wrong:
            numbers = ", ".join(str(i + 1) for i in wrong)
            said = ", ".join(f"read {reading.points[i]} where {points[i]}" for i in wrong[:4])
            more = ", ..." if len(wrong) > 4 else ""
            raise CalibrationError(
                f"point{'s' if len(wrong) > 1 else ''} {numbers} do{'' if len(wrong) > 1 else 'es'} not read as the"
                f" given position: {said}{more} (player 1's numbering, his checkers positive; near"
                f" {_points_box(reader, wrong, image)})",
                "position",
            )
        if tuple(reading.bar) != tuple(bar):
            raise CalibrationError(
                f"the bar does not read as the given position: read {reading.bar[0]}-{reading.bar[1]}"
                f" where {bar[0]}-{bar[1]} (player 1's checkers first)",
                "position",
            )
    if confidence and reading.confidence < SELF_READ_CONFIDENCE:
        doubtful = sorted(range(24), key=lambda i: reading.point_confidence[i])[:3]
        doubtful = [i for i in doubtful if reading.point_confidence[i] < 0.5] or doubtful[:1]
        numbers = ", ".join(str(i + 1) for i in sorted(doubtful))
        raise CalibrationError(
            f"the board reads with confidence {reading.confidence:.3f}, under {SELF_READ_CONFIDENCE}"
            f" (doubtful: point{'s' if len(doubtful) > 1 else ''} {numbers}, near"
            f" {_points_box(reader, doubtful, image)})",
            "confidence",
        )


def _foreign_on_field(
    reader: BoardReader,
    features: dict[str, np.ndarray],
    position: Position,
    reading: BoardReading,
    image: np.ndarray,
) -> str | None:
    """Something over the field in a calibration frame: the image region, or ``None``.

    The models just learnt took in whatever the frame shows, a hand too; so here each sample
    is held against its like instead: a bare spot against the same spot of the nearest bare
    points of its colour in its row (they look alike under one light), a checker against the
    median of its side's checkers. Two samples in a row along a point that stand out by
    :data:`FIELD_PATCH` are a solid patch, a hand; the seams of a stack stand out one at a time.
    Samples a die covers are left out.
    """
    colour = features["points_colour"]
    points, _, _ = position.to_absolute(1)
    bare = np.zeros((24, STEPS), dtype=bool)
    side = np.zeros((24, STEPS), dtype=np.int64)
    for index, count in enumerate(points):
        labels = expected(abs(count))[0]
        bare[index] = [label == EMPTY for label in labels]
        side[index] = [(1 if count > 0 else 2) if label == CHECKER else 0 for label in labels]
    spread = np.asarray(SPOT_SPREAD)
    # How far each sample is from a bare spot there (where bare neighbours tell), and from each
    # side's checkers; a sample is foreign when it is far from all it could be, so a checker
    # where the position has none (a wrong position) is not taken for a hand.
    like_bare = np.full((24, STEPS), np.inf)
    for index in range(24):
        row = range(0, 12) if index < 12 else range(12, 24)
        for j in range(STEPS):
            donors = [
                colour[k, j] for k in row if k != index and (k - index) % 2 == 0 and abs(k - index) <= 4 and bare[k, j]
            ]
            if len(donors) >= 2:
                like_bare[index, j] = float((((colour[index, j] - np.median(donors, axis=0)) / spread) ** 2).sum())
    like_checker = []
    for player in (1, 2):
        mine = side == player
        if np.count_nonzero(mine) >= 3:
            median = np.median(colour[mine], axis=0)
            mad = np.maximum(1.4826 * np.median(np.abs(colour[mine] - median), axis=0), math.sqrt(_COLOUR_FLOOR))
            like_checker.append((((colour - median) / mad) ** 2).sum(axis=2))
    far = np.minimum.reduce([like_bare, *like_checker])
    # Only samples the position says are bare (with bare neighbours to go by) or a checker: the
    # rest lie on a checker's edge.
    far[(~bare & (side == 0)) | (bare & np.isinf(like_bare))] = 0.0
    # What a die on the board covers is the die's.
    d = reader.sampler.d
    inverse = np.linalg.inv(reader.homography)
    for die in reading.dice:
        fx, fy, fw = inverse @ np.array([die.center[0], die.center[1], 1.0])
        near = np.hypot(*(reader.sampler.points - np.array([fx / fw * SCALE, fy / fw * SCALE])).transpose(2, 0, 1))
        far[near < 0.75 * d] = 0.0
    pair = np.minimum(far[:, :-1], far[:, 1:])
    hit = sorted({int(i) for i in np.flatnonzero((pair > FIELD_PATCH).any(axis=1))})
    return _points_box(reader, hit, image) if hit else None


def _image_box(field_points: np.ndarray, homography: np.ndarray, image: np.ndarray) -> str:
    """``x0,y0-x1,y1``: the image pixels round points of the field (n x 2, field pixels)."""
    mapped = cv2.perspectiveTransform(field_points.reshape(-1, 1, 2).astype(np.float64), homography).reshape(-1, 2)
    height, width = image.shape[:2]
    x0, y0 = np.clip(mapped.min(axis=0), 0, [width - 1, height - 1])
    x1, y1 = np.clip(mapped.max(axis=0), 0, [width - 1, height - 1])
    return f"{x0:.0f},{y0:.0f}-{x1:.0f},{y1:.0f}"


def _points_box(reader: BoardReader, indexes: Sequence[int], image: np.ndarray) -> str:
    """The image region of points (indexes 0-23): their samples, a checker's radius round."""
    centres = reader.sampler.points[list(indexes)].reshape(-1, 2) / SCALE
    r = reader.sampler.d / SCALE / 2
    ring = np.concatenate([centres + np.array([dx, dy]) for dx in (-r, r) for dy in (-r, r)])
    return _image_box(ring, reader.homography, image)


def _band_corners(x0: float, y0: float, x1: float, y1: float, size: tuple[int, int]) -> np.ndarray:
    """Field pixels of a rectangle of :func:`vision.features.border_band`'s small image."""
    w, h = size
    mx, my = BORDER * FIELD_W, BORDER * FIELD_H
    sx, sy = (FIELD_W + 2 * mx) / w, (FIELD_H + 2 * my) / h
    return np.array([[x * sx - mx, y * sy - my] for x in (x0, x1) for y in (y0, y1)], dtype=np.float64)


def _band_box(mask: np.ndarray, homography: np.ndarray, image: np.ndarray) -> str | None:
    """The image region of the ``True`` pixels of a mask over the border band, or ``None``."""
    ys, xs = np.nonzero(mask)
    if len(xs) == 0:
        return None
    size = (mask.shape[1], mask.shape[0])
    corners = _band_corners(float(xs.min()), float(ys.min()), float(xs.max() + 1), float(ys.max() + 1), size)
    return _image_box(corners, homography, image)


def frame_patch(image: np.ndarray, homography: np.ndarray) -> str | None:
    """Something lying over the board's frame round the field in a calibration frame: its
    image region (``x0,y0-x1,y1``), or ``None``.

    The frame above, below and left of the field (the right holds the trays) is one material
    along each side: an arm across it is a stretch whose colour stands out from the frame on
    both sides of it (or on one, at a side's end), sharp-edged, where a lamp's light or glare
    changes slowly along it. The corner markers, with their white margins, are left out.
    """
    band = border_band(image, homography).astype(np.float32)
    h, w = band.shape[:2]
    share = BORDER / (1 + 2 * BORDER)
    # As vision.features.border_mask: clear of the field's edge, where checkers' shadows fall.
    thick_w, thick_h = int(w * share * 0.8), int(h * share * 0.8)
    markers = _marker_band_mask(image, homography, (w, h))
    sides = (
        (band[:thick_h], markers[:thick_h], FRAME_PATCH, (0, 0, True)),
        (band[h - thick_h :], markers[h - thick_h :], FRAME_PATCH, (0, h - thick_h, True)),
        (band[:, :thick_w].transpose(1, 0, 2), markers[:, :thick_w].T, FRAME_PATCH_SIDE, (0, 0, False)),
    )
    best: tuple[float, np.ndarray] | None = None
    for strip, covered, threshold, (ox, oy, along_x) in sides:
        # Across the strip, the median of what no marker covers; a column mostly marker is left out.
        line = np.full((strip.shape[1], 3), np.nan, dtype=np.float32)
        for k in range(strip.shape[1]):
            free = ~covered[:, k]
            if 2 * np.count_nonzero(free) > len(free):
                line[k] = np.median(strip[free, k], axis=0)
        found = _patch(line, threshold)
        if found is None or (best is not None and found[0] <= best[0]):
            continue
        score, a, b = found
        if along_x:
            rect = _band_corners(ox + a, oy, ox + b, oy + thick_h, (w, h))
        else:
            rect = _band_corners(ox, oy + a, ox + thick_w, oy + b, (w, h))
        best = (score, rect)
    return None if best is None else _image_box(best[1], homography, image)


def _marker_band_mask(image: np.ndarray, homography: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """Where the corner markers (and their white margins) lie on the border band's small image.

    Each marker found is left out where it lies; at a corner where none is found, the whole
    corner is (a marker the detector missed would stand out from the frame as a patch).
    """
    w, h = size
    mask = np.zeros((h, w), dtype=np.uint8)
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) if image.ndim == 3 else image
    detector = cv2.aruco.ArucoDetector(
        cv2.aruco.getPredefinedDictionary(MARKER_DICTIONARY), cv2.aruco.DetectorParameters()
    )
    found, _, _ = detector.detectMarkers(grey)
    mx, my = BORDER * FIELD_W, BORDER * FIELD_H
    sx, sy = w / (FIELD_W + 2 * mx), h / (FIELD_H + 2 * my)
    to_band = np.array([[sx, 0, mx * sx], [0, sy, my * sy], [0, 0, 1]]) @ np.linalg.inv(homography)
    share = BORDER / (1 + 2 * BORDER)
    cx, cy = math.ceil(w * share) + 3, math.ceil(h * share) + 3
    boxes = {(0, 0), (w - cx, 0), (0, h - cy), (w - cx, h - cy)}
    for quad in found:
        quad = quad.reshape(4, 2).astype(np.float64)
        centre = quad.mean(axis=0)
        grown = centre + (quad - centre) * 1.8  # the white margin round the marker too
        onto = cv2.perspectiveTransform(grown.reshape(-1, 1, 2), to_band).reshape(-1, 2)
        cv2.fillPoly(mask, [np.round(onto * 16).astype(np.int32)], 1, cv2.LINE_8, 4)
        u, v = onto.mean(axis=0)
        boxes = {(x, y) for x, y in boxes if not (x - cx <= u <= x + 2 * cx and y - cy <= v <= y + 2 * cy)}
    for x, y in boxes:
        mask[y : y + cy, x : x + cx] = 1
    return cv2.dilate(mask, np.ones((3, 3), np.uint8)).astype(bool)


def _patch(line: np.ndarray, threshold: float, flank: int = 2) -> tuple[float, int, int] | None:
    """The stretch ``[a, b)`` of a side's colours (n x 3; ``nan`` where left out) standing out
    most from the line between the colours just before and after it (at the end of a run of
    colours, from the colour on its one side), if by more than ``threshold``: ``(by how much, a,
    b)``. Four in five of its pixels must stand out that far.
    """
    best: tuple[float, int, int] | None = None
    known = ~np.isnan(line[:, 0])
    k = 0
    while k < len(line):
        if not known[k]:
            k += 1
            continue
        stop = k
        while stop < len(line) and known[stop]:
            stop += 1
        run = line[k:stop]
        found = _patch_in_run(run, threshold, flank)
        if found is not None and (best is None or found[0] > best[0]):
            best = (found[0], found[1] + k, found[2] + k)
        k = stop
    return best


def _patch_in_run(run: np.ndarray, threshold: float, flank: int) -> tuple[float, int, int] | None:
    n = len(run)
    widest = max(FRAME_PATCH_MIN, int(0.4 * n))
    best: tuple[float, int, int] | None = None
    offsets = np.arange(widest)
    for a in range(0, n - FRAME_PATCH_MIN + 1):
        ends = np.arange(a + FRAME_PATCH_MIN, min(a + widest, n) + 1)
        if len(ends) == 0:
            continue
        before = run[a - flank : a].mean(axis=0) if a >= flank else None
        afters = np.array([run[b : b + flank].mean(axis=0) if b + flank <= n else np.full(3, np.nan) for b in ends])
        has_after = ~np.isnan(afters[:, 0])
        widths = ends - a
        if before is None:
            # One side alone tells a patch from a slow change only over a short way.
            usable = has_after & (widths <= widest // 2)
            start = afters
            slope = np.zeros_like(afters)
        else:
            usable = has_after | (widths <= widest // 2)
            start = np.broadcast_to(before, afters.shape)
            slope = np.where(has_after[:, None], afters - before, 0.0)
        if not usable.any():
            continue
        ends, widths, start, slope = ends[usable], widths[usable], start[usable], slope[usable]
        # Each candidate [a, b) against the line from the colour before it to the colour after.
        t = (offsets[None, :] + 0.5) / (widths[:, None] + 1.0)
        expected_colour = start[:, None, :] + t[:, :, None] * slope[:, None, :]
        window = run[np.minimum(a + offsets, n - 1)]
        distance = np.sqrt(((window[None, :, :] - expected_colour) ** 2).sum(axis=2))
        distance[offsets[None, :] >= widths[:, None]] = np.inf
        # The fifth of the way up each candidate's own distances (np.quantile's, row by row).
        ordered = np.sort(distance, axis=1)
        position = 0.2 * (widths - 1)
        low = np.floor(position).astype(np.int64)
        rows = np.arange(len(widths))
        scores = ordered[rows, low] + (position - low) * (ordered[rows, low + 1] - ordered[rows, low])
        k = int(np.argmax(scores))
        if scores[k] > threshold and (best is None or scores[k] > best[0]):
            best = (float(scores[k]), a, int(ends[k]))
    return best


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
