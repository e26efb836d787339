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
from dataclasses import dataclass

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
    LOOK_SCALE,
    RING,
    SCALE,
    STEPS,
    TOP,
    FieldSampler,
    border_band,
    expected,
    expected_bar,
    look_of,
    rectify,
)
from vision.field import LEAST_FIT, FieldError, find_field, fit_at_scale
from vision.follow import board_view
from vision.frames import is_greyscale
from vision.geometry import FIELD_H, FIELD_W, SLOTS, FieldGeometry
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
from vision.strips import References, StripCutter, encode, misreads, strip_counts

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
#: A sample of the field this far from the same spot of the bare points of its colour in its row
#: (the root of the squared distance in spreads of a bare spot, :data:`vision.reader.SPOT_SPREAD`)
#: does not look bare. On the real frames without a hand, bare samples stand up to 4.9 from
#: their like (glare, a logo, the shadow of the frame), hands and sleeves 4.6 to 18.
LOOKS_BARE = 4.0
#: A sample this far from a side's checkers (the root of the squared distance in the robust
#: spreads of that side's samples) is not one of them; within :data:`LOOKS_CHECKER`, it is.
NOT_CHECKER = 6.0
LOOKS_CHECKER = 4.0
#: ... or this many times the median distance of this board's bare spots from their like.
BARE_SPREADS = 3.0
#: A sample the position has a checker on, this far from every side's checkers (and unlike bare),
#: is something over it: glare on a glossy checker stands up to 7.7 from its side's on rendered
#: boards, a hand over checkers 7.7 and more on real ones (hands are told by the bare spots they
#: cover beside, too).
FOREIGN_ON_CHECKER = 9.0
#: Robust spreads of a side's checker colour are at least this (Lab units).
_SPREAD_FLOOR = 5.0
#: How many samples along a point must disagree with the position given before the point is
#: taken for covered or misplaced: one alone may be a glint, a seam, a die's corner.
SURVEY_VOTES = 2


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
    try:
        found = find_field(image)
    except FieldError as exc:
        raise CalibrationError(
            f"the playing field was not found in the image (no corner markers; {exc}): give its corners with --corners"
        ) from None
    fit = fit_at_scale(image, found.corners, found.bar_fraction)
    if fit < LEAST_FIT:
        raise CalibrationError(
            f"the playing field was not found in the image: the points found lie on its edges only {fit:.2f}"
            f" (under {LEAST_FIT}; a hand or an arm over them?): give its corners with --corners"
        )
    # The field looks the same turned half round; the position shown tells which way it lies:
    # its checkers where the position has them, from player 1's seat.
    shown = position if position is not None else Position.STARTING
    ways = [found.corners, np.roll(found.corners, 2, axis=0)]
    problems = [_problems(image, corners, shown) for corners in ways]
    return np.asarray(ways[int(np.argmin(problems))], dtype=np.float64), "found"


def _problems(image: np.ndarray, corners: np.ndarray, shown: Position) -> float:
    """How badly a frame seen through ``corners`` disagrees with ``shown`` (:func:`survey`)."""
    try:
        homography = field_homography(corners)
    except ProfileError:
        return math.inf
    geometry = FieldGeometry(bar_fraction=fit_bar_fraction(image, corners))
    sampler = FieldSampler(geometry)
    features = sampler.sample(rectify(image, homography))
    found = survey(features["points_colour"], shown, [], sampler.d, sampler.points)
    return len(found.covered) + len(found.wrong) + 0.5 * len(found.tips)


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
    if image is None or image.ndim != 3 or is_greyscale(image):
        raise CalibrationError("calibration needs a colour image (this one is greyscale): the sides are told by colour")
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
    field_image = rectify(image, homography)
    features = sampler.sample(field_image)
    profile.models = _fit_models(features, points, bar)
    track = read_track(field_image, profile.geometry)
    # A counter on the track's centre circle at calibration means the board has a track.
    profile.cube_kind = "track" if track is not None and track.value == 1 else "cube"
    # The dice on the calibration frame cover a little of the field: what lies under them is
    # not held against the position.
    first = BoardReader(profile, points="model", remember=False).read(image, cube=False)
    inverse = np.linalg.inv(homography)
    dice = []
    for die in first.dice:
        fx, fy, fw = inverse @ np.array([die.center[0], die.center[1], 1.0])
        dice.append((fx / fw * SCALE, fy / fw * SCALE))
    found = survey(features["points_colour"], shown, dice, sampler.d, sampler.points)
    # Points something stands over are not learnt bare from this frame: they borrow a bare
    # point's look, as a point with checkers on it does.
    learnt = [15 if i in found.tips or i in found.covered else c for i, c in enumerate(points)]
    profile.empty_means = _empty_means(features["points_colour"], learnt)
    profile.border = [int(v) for v in border_band(image, homography).reshape(-1)]
    profile.border_mean = True
    profile.view = board_view(image, homography)
    # Only what stands over the points' tips is left out of the look: a calibration made (unchecked)
    # with a hand over the field keeps it, and every clean frame after shows it gone.
    profile.look = _look(field_image, profile.geometry, found.tips, dice, sampler.d)
    cutter = StripCutter(profile.geometry, homography)
    strips, counts = cutter.colour(image), strip_counts(points, bar)
    profile.references = References.from_frame(strips, strip_counts(learnt, bar), profile.geometry)
    if any(points_net.available(path) for path in points_net.NETWORKS.values()):
        # The learned reader tried on this very frame, every strip beside another's bare look
        # (as a point never seen bare is read): how far its confidence holds on this board.
        # Each network is tried; the board is read with the one that misreads the frame least
        # (the first of those that misread it as little).
        refs = profile.references
        trial = refs.borrowing_all(profile.geometry)
        colours = np.asarray([profile.models["p1"].mean, profile.models["p2"].mean], np.float32)
        own_x = encode(strips, refs.strips, refs.borrowed, colours)
        borrowed_x = encode(strips, trial.strips, trial.borrowed, colours)
        best: tuple[tuple[int, int], str, np.ndarray, np.ndarray] | None = None
        for name, path in points_net.NETWORKS.items():
            if not points_net.available(path):
                continue
            own = points_net.probabilities(own_x, path)
            borrowed = points_net.probabilities(borrowed_x, path)
            misread = (misreads(own, counts), misreads(borrowed, counts))
            if best is None or misread < best[0]:
                best = (misread, name, own, borrowed)
        assert best is not None
        _, refs.network, own, borrowed = best
        refs.try_on(own, borrowed, counts)
        # Each reader reads the frame whole, as in play, to tell which of the two reads a board
        # unlike any the network learnt the better (see References.reads_better).
        wrong = []
        for by in ("net", "model"):
            back = BoardReader(profile, points=by, remember=False).read(image, cube=False)
            wrong.append(
                sum(a != b for a, b in zip(back.points, points, strict=True))
                + sum(a != b for a, b in zip(back.bar, bar, strict=True))
            )
        refs.read_back = (wrong[0], wrong[1])
    try:
        _check_separable(profile)
    except CalibrationError as exc:
        if source != "corners":
            raise
        # Corners given by hand: the likeliest fault is theirs, so say which corners are asked for.
        raise CalibrationError(f"{exc} {_corners_hint(corners, image)}") from None
    if check:
        # Something over the field first: an arm over most of the points hides their edges too.
        _check_read_back(profile, image, shown, found)
        fit = fit_at_scale(image, np.asarray(corners, dtype=np.float64), profile.bar_fraction)
        if fit < LEAST_FIT:
            raise CalibrationError(
                f"the points do not lie where the corners put them (their sides fit the photo's edges {fit:.2f},"
                f" under {LEAST_FIT}): are the corners the playing field's, beside player 1's 13-, 24-, 1- and"
                " 12-point (leave them out to have the field found)?",
                "corners",
            )
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


def _check_read_back(profile: Profile, image: np.ndarray, shown: Position, survey: Survey) -> None:
    """Refuse a new profile whose frame does not show ``shown`` as :class:`Survey` found it."""
    reader = BoardReader(profile)
    box = None
    try:
        if survey.covered and len(survey.covered) >= len(survey.wrong):
            box = _points_box(reader, survey.covered, image)
            raise CalibrationError(
                f"the board reads as occluded (a hand or an object over the field near {box})", "occluded"
            )
        if survey.wrong:
            wrong = sorted(survey.wrong)
            numbers = ", ".join(str(i + 1) for i in wrong)
            said = ", ".join(f"{survey.wrong[i]} on {i + 1}" for i in wrong[:4])
            more = ", ..." if len(wrong) > 4 else ""
            box = _points_box(reader, wrong, image)
            raise CalibrationError(
                f"point{'s' if len(wrong) > 1 else ''} {numbers} do{'' if len(wrong) > 1 else 'es'} not read as the"
                f" given position: {said}{more} (player 1's numbering; near {box})",
                "position",
            )
    except CalibrationError as exc:
        advice = _ADVICE.get(exc.kind)
        if exc.kind == "occluded":
            where = " and are the corners the playing field's" if profile.source != "markers" else ""
            advice = f"{advice}; with nothing there, is the position the one the photo shows{where}?"
        raise CalibrationError(f"{exc}: {advice}" if advice else str(exc), exc.kind) from None


@dataclass(frozen=True)
class Survey:
    """What a calibration frame shows against the position it is said to show, point by point
    (indexes 0-23, player 1's numbering less one), from the colours sampled along each point:
    each bare spot against the same spot of the bare points of its colour in its row, each
    checker against its side's.

    :ivar covered: points where something that is neither the board nor a checker lies where
        the position's checkers (or the first bare spot after them) would show: a hand, a cup.
    :ivar wrong: points that show checkers where the position has none, or none where it has
        some, with what was seen.
    :ivar tips: points whose bare part beyond their checkers (towards the middle of the field)
        something stands over, a dice cup say: harmless for the position, but their bare look
        is not learnt from this frame.
    """

    covered: list[int]
    wrong: dict[int, str]
    tips: list[int]


def survey(
    colour: np.ndarray, position: Position, dice: Sequence[tuple[float, float]], d: float, centres: np.ndarray
) -> Survey:
    """:class:`Survey` of a calibration frame.

    :param colour: the field's colour samples along each point (``points_colour`` of
        :meth:`vision.features.FieldSampler.sample`, 24 x STEPS x Lab).
    :param dice: the dice's centres on the half-size field: samples within three quarters of a
        checker of one are the die's, and tell nothing.
    :param d: a checker's diameter on the half-size field.
    :param centres: the samples' places on the half-size field (24 x STEPS x 2).
    """
    points, _, _ = position.to_absolute(1)
    bare = np.zeros((24, STEPS), dtype=bool)
    side = np.zeros((24, STEPS), dtype=np.int64)
    unknown = np.zeros((24, STEPS), dtype=bool)
    for index, count in enumerate(points):
        labels = expected(abs(count))[0]
        bare[index] = [label == EMPTY for label in labels]
        side[index] = [(1 if count > 0 else 2) if label == CHECKER else 0 for label in labels]
        if abs(count) > SLOTS:
            # Six or more: piled, or lined up past the fifth slot; either is as likely.
            unknown[index, 2 * SLOTS - 1 :] = True
    for x, y in dice:
        unknown |= np.hypot(centres[..., 0] - x, centres[..., 1] - y) < 0.75 * d
    spread = np.asarray(SPOT_SPREAD)
    like_bare = np.full((24, STEPS), np.inf)
    for index in range(24):
        row = range(0, 12) if index < 12 else range(12, 24)
        for j in range(STEPS):
            donors = [
                colour[k, j] for k in row if k != index and (k - index) % 2 == 0 and bare[k, j] and not unknown[k, j]
            ]
            if len(donors) >= 2:
                like_bare[index, j] = float(
                    np.sqrt((((colour[index, j] - np.median(donors, axis=0)) / spread) ** 2).sum())
                )
    like_side = []
    for player in (1, 2):
        mine = (side == player) & ~unknown
        if not mine.any():
            like_side.append(np.full((24, STEPS), np.inf))
            continue
        median = np.median(colour[mine], axis=0)
        mad = np.maximum(1.4826 * np.median(np.abs(colour[mine] - median), axis=0), _SPREAD_FLOOR)
        like_side.append(np.sqrt((((colour - median) / mad) ** 2).sum(axis=2)))
    nearest = np.minimum(like_side[0], like_side[1])
    # A board lit unevenly (a lamp to one side) varies more from point to point: what does not
    # look bare is judged against how alike this board's bare spots are.
    known = bare & np.isfinite(like_bare) & ~unknown
    looks_bare = max(LOOKS_BARE, BARE_SPREADS * float(np.median(like_bare[known]))) if known.any() else LOOKS_BARE
    covered, tips = [], []
    wrong: dict[int, str] = {}
    for index, count in enumerate(points):
        n = min(abs(count), SLOTS)
        # The stack's spots and the seam after it (a bare point: its first spot and seam).
        base = 2 * n + 1 if n else 2
        votes = {"foreign": 0, "checker": 0, "bare": 0, "tip": 0}
        for j in range(STEPS):
            if unknown[index, j]:
                continue
            if side[index, j]:
                mine = like_side[side[index, j] - 1][index, j]
                if mine > NOT_CHECKER:
                    if like_bare[index, j] < looks_bare:
                        votes["bare"] += 1
                    elif like_bare[index, j] > looks_bare and nearest[index, j] > FOREIGN_ON_CHECKER:
                        votes["foreign"] += 1
            elif bare[index, j] and np.isfinite(like_bare[index, j]) and like_bare[index, j] > looks_bare:
                if j >= base:
                    votes["tip"] += 1
                elif nearest[index, j] < LOOKS_CHECKER:
                    votes["checker"] += 1
                elif nearest[index, j] > NOT_CHECKER or like_bare[index, j] > 1.5 * looks_bare:
                    votes["foreign"] += 1
        # A bare point whose first spot does not look bare, with something over the rest: what
        # covers it may hide checkers at its base. Past a stack, an object (a dice cup standing
        # on the point's tip) leaves the stack in sight.
        open_end = n > 0 or unknown[index, 0] or like_bare[index, 0] <= looks_bare
        if votes["foreign"] >= SURVEY_VOTES or (votes["tip"] >= SURVEY_VOTES and not open_end):
            covered.append(index)
        elif votes["checker"] >= SURVEY_VOTES:
            wrong[index] = "a checker where it has none" if count == 0 else f"more than {abs(count)}"
        elif votes["bare"] >= SURVEY_VOTES:
            wrong[index] = f"fewer than {abs(count)}"
        elif votes["tip"] >= SURVEY_VOTES:
            tips.append(index)
    # Something over the points' tips in both rows, face to face across the middle of the field,
    # is an arm reaching across it (a dice cup stands on one row's tips): it may hide anything.
    column = {i: i - 12 if i >= 12 else 11 - i for i in range(24)}
    top = {column[i] for i in tips if i >= 12}
    bottom = {column[i] for i in tips if i < 12}
    across = {c for c in top if {c - 1, c, c + 1} & bottom}
    if across:
        covered += [i for i in tips if column[i] in across or {column[i] - 1, column[i] + 1} & across]
        tips = [i for i in tips if i not in covered]
    return Survey(sorted(covered), wrong, tips)


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


def _look(
    field_image: np.ndarray, geometry: FieldGeometry, over: Sequence[int], dice: Sequence[tuple[float, float]], d: float
) -> np.ndarray:
    """The field's look (:func:`vision.features.look_of`) with an alpha channel: 0 where it is
    not known, under what stood over points (``over``, indexes; their column and half a point
    either side) and under the dice (``dice``: centres on the half-size field; ``d``: a
    checker's diameter there)."""
    look = look_of(field_image)
    alpha = np.full(look.shape[:2], 255, np.uint8)
    scale = LOOK_SCALE
    for index in over:
        x0, y0, x1, y1 = geometry.point_box(index + 1)
        grow = geometry.point_width / 2
        alpha[
            round(y0 * scale) : round(y1 * scale), max(0, round((x0 - grow) * scale)) : round((x1 + grow) * scale)
        ] = 0
    for x, y in dice:
        cv2.circle(alpha, (round(x / SCALE * scale), round(y / SCALE * scale)), round(0.6 * d / SCALE * scale), 0, -1)
    return np.dstack([look, alpha])


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


def _corners_hint(corners: np.ndarray, image: np.ndarray) -> str:
    """What to check of corners given by hand when the calibration cannot tell the sides apart."""
    height, width = image.shape[:2]
    box = np.asarray(corners, dtype=np.float64)
    margin = 0.01 * max(width, height)
    at_edges = (
        box[:, 0].min() <= margin
        and box[:, 1].min() <= margin
        and box[:, 0].max() >= width - 1 - margin
        and box[:, 1].max() >= height - 1 - margin
    )
    if at_edges:
        return (
            "These corners are the whole image's: give the playing field's, the inside of its frame,"
            " beside player 1's 13-, 24-, 1- then 12-point."
        )
    return (
        "Or the corners are in another order: they go beside player 1's 13-point (top left as he"
        " sits), 24-point, 1-point, then 12-point, clockwise on the picture."
    )


def _check_separable(profile: Profile) -> None:
    """Refuse a calibration whose two checker colours cannot be told apart."""
    p1, p2 = profile.models["p1"], profile.models["p2"]
    distance = float(np.linalg.norm(np.asarray(p1.mean) - np.asarray(p2.mean)))
    if distance < 8.0:
        raise CalibrationError(
            "the two sides' checkers look the same in this image; is the position right"
            " (player 1's home at the bottom right), and the board lit?"
        )
