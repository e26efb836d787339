# SPDX-License-Identifier: MIT
"""How well the reader reads a labelled set of real photos of one's own board (``bgboard vision
check``): calibrate as a club would, read each photo, compare with its labels.

Each labelled frame (:mod:`vision.labels`) is read with a profile calibrated on another frame
of the same camera, as a table under a fixed camera is: the frame the label names
(``calibrate_on``), else the first other frame of the same camera (the same size, the field's
corners within :data:`SAME_CAMERA` of the field's width) with no hand over it, else the frame
itself (a single photo). The calibration is the one ``bgboard vision calibrate`` makes, checked
(it refuses what it would misread), with the field's corners taken from the labels or found by
the program; the program's are found either way and held against the labels. A frame with a
hand over the field must be flagged: read as occluded or with less than :data:`SURE`, or
refused when the calibration had to be made on it.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from engine.position import Position
from vision.calibration import CalibrationError, calibrate, find_corners
from vision.frames import read_image
from vision.labels import LabelledFrame
from vision.profile import Profile
from vision.reader import BoardReader
from vision.reading import BoardReading

#: Two frames of one size whose labelled field corners lie within this share of the field's
#: width of each other are of the same fixed camera.
SAME_CAMERA = 0.02
#: A reading is sure at this confidence or more (the referee takes such a reading as it is).
SURE = 0.9
#: Found corners within this share of the field's width of the labelled ones are right.
CORNERS_WITHIN = 0.02


@dataclass
class FrameResult:
    """One labelled frame read: how it was calibrated and what was read against the labels."""

    file: str
    hand: bool
    calibrated_on: str
    refused: str | None = None
    refusal_kind: str = ""
    corners_error: float | None = None
    points: tuple[int, ...] | None = None
    bar: tuple[int, int] | None = None
    wrong: list[tuple[str, int | None, int]] = field(default_factory=list)
    points_known: int = 0
    points_right: int = 0
    #: Each known point's confidence and whether it was read right.
    point_verdicts: list[tuple[float, bool]] = field(default_factory=list)
    dice: tuple[int, ...] = ()
    dice_labelled: tuple[int, ...] = ()
    dice_right: int = 0
    confidence: float = 0.0
    occluded: bool = False
    read_ms: float = 0.0

    @property
    def read(self) -> bool:
        """Whether the frame was read (its calibration was not refused)."""
        return self.points is not None

    @property
    def exact(self) -> bool:
        """Read with every point and the bar right (a frame with a hand: every visible one)."""
        return self.read and not self.wrong

    @property
    def sure(self) -> bool:
        """Read with confidence :data:`SURE` or more, and not flagged occluded."""
        return self.read and not self.occluded and self.confidence >= SURE

    @property
    def flagged(self) -> bool:
        """Flagged as hidden: read occluded or below :data:`SURE`, or its calibration refused
        as occluded (a photo with a hand over it, the only one of its camera)."""
        if not self.read:
            return self.refusal_kind == "occluded" and self.calibrated_on == self.file
        return self.occluded or self.confidence < SURE

    def to_json(self) -> dict[str, Any]:
        """This frame's part of ``bgboard vision check --json``."""
        return {
            "file": self.file,
            "hand": self.hand,
            "calibrated_on": self.calibrated_on,
            "refused": self.refused,
            "corners_error": None if self.corners_error is None else round(self.corners_error, 4),
            "points": None if self.points is None else list(self.points),
            "bar": None if self.bar is None else list(self.bar),
            "wrong": [{"where": w, "labelled": a, "read": b} for w, a, b in self.wrong],
            "exact": self.exact,
            "dice": list(self.dice),
            "dice_labelled": list(self.dice_labelled),
            "confidence": round(self.confidence, 4),
            "occluded": self.occluded,
            "flagged": self.flagged,
            "read_ms": round(self.read_ms, 1),
        }


#: Each frame is read whole once untimed (the first read of a reader also loads what it reads
#: with), then this many times, the median time taken: a machine shared with other work slows
#: some reads by half again.
TIMED_READS = 5


def calibration_frame(frame: LabelledFrame, frames: Sequence[LabelledFrame]) -> LabelledFrame:
    """The frame to calibrate on for reading ``frame`` (see the module's docstring)."""
    if frame.calibrate_on is not None:
        for other in frames:
            if other.file == frame.calibrate_on or Path(other.file).name == frame.calibrate_on:
                return other
        raise CalibrationError(f"{frame.file}: calibrate_on names {frame.calibrate_on!r}, which is not in the labels")
    width = float(np.linalg.norm(frame.corners[1] - frame.corners[0]))
    for other in frames:
        if other is frame or other.hand or not other.complete or other.size != frame.size:
            continue
        if float(np.abs(other.corners - frame.corners).max()) <= SAME_CAMERA * width:
            return other
    return frame


def _shown(frame: LabelledFrame) -> Position:
    """The position a calibration frame shows; hidden points taken as bare (a frame with a
    hand over it is for the calibration to refuse, saying so)."""
    if frame.complete:
        return frame.position()
    points = [0 if c is None else c for c in frame.points]
    bar = (frame.bar[0] or 0, frame.bar[1] or 0)
    return Position.from_absolute(points, bar)


def _corner_error(found: np.ndarray, labelled: np.ndarray) -> float:
    """The farthest found corner from its labelled one, over the field's width (the found
    corners taken in whichever turn lies nearest: a board in the starting position looks the
    same from either seat, and which is player 1's is not what is measured here)."""
    width = float(np.linalg.norm(labelled[1] - labelled[0]))
    return min(float(np.linalg.norm(np.roll(found, k, axis=0) - labelled, axis=1).max()) / width for k in range(4))


def check(
    frames: Sequence[LabelledFrame],
    root: Path,
    *,
    corners: str = "labelled",
    progress: Callable[[FrameResult], None] | None = None,
) -> list[FrameResult]:
    """Read every labelled frame as :mod:`vision.check` says, one result each.

    :param root: the folder the frames' files are relative to (the label file's).
    :param corners: the corners each calibration is made with: ``labelled`` (the labels') or
        ``found`` (the program's, as ``bgboard vision calibrate`` finds them with neither
        ``--corners`` nor ``--markers``). Either way the program's are found and held against
        the labels (:attr:`FrameResult.corners_error`).
    :param progress: called with each frame's result as it is made.
    :raises CameraError: a frame's image cannot be read.
    """
    if corners not in ("found", "labelled"):
        raise ValueError(f"corners are 'found' or 'labelled', not {corners!r}")
    images: dict[str, np.ndarray] = {}

    def image_of(frame: LabelledFrame) -> np.ndarray:
        if frame.file not in images:
            images[frame.file] = read_image(root / frame.file)
        return images[frame.file]

    profiles: dict[str, Profile | CalibrationError] = {}
    found_error: dict[str, float | None] = {}

    def profile_of(frame: LabelledFrame) -> Profile | CalibrationError:
        if frame.file in profiles:
            return profiles[frame.file]
        image = image_of(frame)
        shown = _shown(frame)
        found: np.ndarray | None = None
        try:
            found, _ = find_corners(image, shown)
            found_error[frame.file] = _corner_error(found, frame.corners)
        except CalibrationError as exc:
            found_error[frame.file] = None
            if corners == "found":
                profiles[frame.file] = exc
                return exc
        outcome: Profile | CalibrationError
        try:
            given = frame.corners if corners == "labelled" or found is None else found
            outcome = calibrate(image, given, position=shown, check=True)
        except CalibrationError as exc:
            outcome = exc
        profiles[frame.file] = outcome
        return outcome

    results = []
    for frame in frames:
        base = calibration_frame(frame, frames)
        result = FrameResult(file=frame.file, hand=frame.hand, calibrated_on=base.file, dice_labelled=frame.dice)
        profile = profile_of(base)
        result.corners_error = found_error.get(base.file)
        if isinstance(profile, CalibrationError):
            result.refused, result.refusal_kind = str(profile), profile.kind
        else:
            _read(result, frame, BoardReader(profile, remember=False), image_of(frame))
        if progress is not None:
            progress(result)
        results.append(result)
    return results


def _read(result: FrameResult, frame: LabelledFrame, reader: BoardReader, image: np.ndarray) -> None:
    times = []
    # Timed on one core, as the Pi's other cores have the camera, the table and the page to run.
    threads = cv2.getNumThreads()
    cv2.setNumThreads(1)
    try:
        reader.read(image)
        for _ in range(TIMED_READS):
            started = time.perf_counter()
            reading: BoardReading = reader.read(image)
            times.append(1000 * (time.perf_counter() - started))
    finally:
        cv2.setNumThreads(threads)
    result.read_ms = statistics.median(times)
    result.points, result.bar = reading.points, reading.bar
    result.confidence, result.occluded = reading.confidence, reading.occluded
    for index, (labelled, read) in enumerate(zip(frame.points, reading.points, strict=True)):
        if labelled is None:
            continue
        result.point_verdicts.append((reading.point_confidence[index], labelled == read))
        result.points_known += 1
        if labelled == read:
            result.points_right += 1
        else:
            result.wrong.append((f"point {index + 1}", labelled, read))
    for side, (labelled_bar, read_bar) in enumerate(zip(frame.bar, reading.bar, strict=True)):
        if labelled_bar is not None and labelled_bar != read_bar:
            result.wrong.append((f"bar {side + 1}", labelled_bar, read_bar))
    result.dice = tuple(die.value for die in reading.dice)
    left = list(frame.dice)
    for value in result.dice:
        if value in left:
            left.remove(value)
            result.dice_right += 1


def summary(results: Sequence[FrameResult]) -> dict[str, Any]:
    """The figures of ``bgboard vision check --json`` (its contract's keys, and more).

    Readings of frames without a hand over the field: ``exact`` (every point and the bar
    right), ``points_right`` (share of points), ``right_and_sure`` (exact and read with
    confidence :data:`SURE` or more, not occluded). Of every frame: ``confident_wrong`` (read
    sure but not exact, or sure with a hand over the field), ``hands_flagged``,
    ``calibrations_refused`` (of frames without a hand), ``dice_right`` (share of the labelled
    dice read), ``read_ms`` (median time of a whole read).
    """
    clear = [r for r in results if not r.hand]
    read = [r for r in clear if r.read]
    hands = [r for r in results if r.hand]
    known = sum(r.points_known for r in read)
    dice = sum(len(r.dice_labelled) for r in results if r.read)
    times = [r.read_ms for r in results if r.read]
    # Each calibration frame's corners once (a frame of a camera calibrated on another shares them).
    errors = {r.calibrated_on: r.corners_error for r in clear}
    found = [e for e in errors.values() if e is not None]
    return {
        "frames": len(results),
        "hand_free": len(clear),
        "exact": sum(r.exact for r in read),
        "points_right": round(sum(r.points_right for r in read) / known, 4) if known else None,
        "right_and_sure": sum(r.exact and r.sure for r in read),
        "confident_wrong": sum(r.sure and (r.hand or not r.exact) for r in results),
        "calibrations_refused": sum(not r.read for r in clear),
        "hands": len(hands),
        "hands_flagged": sum(r.flagged for r in hands),
        "dice_right": round(sum(r.dice_right for r in results if r.read) / dice, 4) if dice else None,
        "read_ms": round(statistics.median(times), 1) if times else None,
        "corners_within": sum(e <= CORNERS_WITHIN for e in found),
        "corners_tried": len({r.calibrated_on for r in clear}),
        "confidence_of_right": sorted(round(r.confidence, 3) for r in read if r.exact),
    }


__all__ = ["CORNERS_WITHIN", "SAME_CAMERA", "SURE", "FrameResult", "calibration_frame", "check", "summary"]
