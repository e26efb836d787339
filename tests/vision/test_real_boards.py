# SPDX-License-Identifier: MIT
"""Real boards: tournament stream frames and board photos (../shared/data/boards), as a club
would calibrate and read them.

Calibration accepts every frame without a hand over the field, with the labels' corners and
with the corners it finds itself (within 2% of the field's width of the labelled ones, turned
the right way round), and refuses a photo whose only frame has a hand over the field, saying
so. Read with a profile made on another frame of its camera, a frame with a hand over the field
is flagged. Nothing is read wrong with confidence.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from bgboard.cli import main
from tests.conftest import SHARED_DATA
from vision.calibration import CalibrationError, calibrate, find_corners
from vision.check import CORNERS_WITHIN, SURE, FrameResult, _shown, check, summary
from vision.frames import read_image
from vision.labels import LabelledFrame, load_labels

BOARDS = SHARED_DATA / "boards"
LABELS = BOARDS / "labels.json"


@pytest.fixture(scope="module")
def frames() -> list[LabelledFrame]:
    return load_labels(LABELS)


@pytest.fixture(scope="module")
def results(frames: list[LabelledFrame]) -> list[FrameResult]:
    return check(frames, BOARDS, corners="labelled")


def _name(frame: LabelledFrame) -> str:
    return frame.file.rsplit("/", 2)[-2] + "/" + frame.file.rsplit("/", 1)[-1]


def test_every_frame_without_a_hand_calibrates_with_its_labelled_corners(frames: list[LabelledFrame]) -> None:
    clear = [f for f in frames if not f.hand]
    assert len(clear) == 6
    for frame in clear:
        image = read_image(BOARDS / frame.file)
        profile = calibrate(image, frame.corners, position=frame.position(), check=True)
        assert profile.look is not None, _name(frame)


def test_the_field_is_found_within_two_percent_and_turned_as_the_position_says(frames: list[LabelledFrame]) -> None:
    # Every frame whose points are not mostly under an arm: the six without a hand, and four of
    # the six with one.
    found = 0
    for frame in frames:
        image = read_image(BOARDS / frame.file)
        try:
            corners, how = find_corners(image, _shown(frame))
        except CalibrationError:
            assert frame.hand, f"{_name(frame)}: the field was not found"
            continue
        assert how == "found"
        width = float(np.linalg.norm(frame.corners[1] - frame.corners[0]))
        error = float(np.linalg.norm(corners - frame.corners, axis=1).max()) / width
        if frame.hand:
            continue
        assert error <= CORNERS_WITHIN, f"{_name(frame)}: corners {100 * error:.1f}% of the field's width off"
        found += 1
    assert found == 6


def test_a_photo_with_a_hand_over_the_field_is_refused_as_occluded(frames: list[LabelledFrame]) -> None:
    for frame in frames:
        if not frame.hand:
            continue
        image = read_image(BOARDS / frame.file)
        with pytest.raises(CalibrationError, match="occluded") as info:
            calibrate(image, frame.corners, position=_shown(frame), check=True)
        assert info.value.kind == "occluded", _name(frame)


def test_frames_with_a_hand_are_flagged_and_nothing_is_read_wrong_surely(results: list[FrameResult]) -> None:
    figures = summary(results)
    assert figures["calibrations_refused"] == 0
    assert figures["hands"] == 6 and figures["hands_flagged"] == 6
    assert figures["confident_wrong"] == 0
    # What the reader reaches on them today, not to be lost: every frame without a hand read
    # exactly, four of them (the stream's frame and three photos) at 0.9 or more.
    assert figures["hand_free"] == 6 and figures["exact"] == 6 and figures["right_and_sure"] >= 4, figures
    assert figures["points_right"] >= 0.99, figures
    for result in results:
        if result.hand and result.read:
            # Read with the stream's profile, calibrated on its frame without a hand.
            assert result.calibrated_on.endswith("frame0.jpg")
            assert result.occluded and result.confidence < SURE, result.file


def test_the_command_prints_the_figures_as_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Two photos, one read on the other's calibration (the label says so).
    data = json.loads(LABELS.read_text(encoding="utf-8"))
    wanted = [f for f in data["frames"] if f["file"].endswith(("frame0.jpg", "frame5.jpg"))]
    for frame in wanted:
        frame["file"] = str(BOARDS / frame["file"])
    wanted[1]["calibrate_on"] = wanted[0]["file"]
    labels = tmp_path / "labels.json"
    labels.write_text(json.dumps({"frames": wanted}), encoding="utf-8")
    assert main(["vision", "check", str(labels), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    for key in ("frames", "exact", "points_right", "confident_wrong", "right_and_sure", "calibrations_refused"):
        assert key in out
    assert {"dice_right", "read_ms", "results"} <= set(out)
    assert out["frames"] == 2 and out["calibrations_refused"] == 0 and out["confident_wrong"] == 0
    second = out["results"][1]
    assert second["calibrated_on"] == wanted[0]["file"] and second["occluded"] and second["flagged"]
    assert main(["vision", "check", str(labels)]) == 0
    text = capsys.readouterr().out
    assert "frame5.jpg (hand over the field)" in text and "read wrong with confidence 0.9 or more: 0" in text


def test_labels_that_cannot_be_read_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "labels.json"
    bad.write_text('{"frames": [{"file": "x.jpg"}]}', encoding="utf-8")
    assert main(["vision", "check", str(bad)]) == 1
    err = capsys.readouterr().err
    assert "frame 1: no 'field_corners'" in err
    assert err.count("\n") == 1 and "Traceback" not in err
    missing = tmp_path / "photos.json"
    missing.write_text(
        json.dumps(
            {
                "frames": [
                    {
                        "file": "nowhere.jpg",
                        "field_corners": [[1, 1], [9, 1], [9, 9], [1, 9]],
                        "top": [""] * 12,
                        "bottom": [""] * 12,
                        "home": "A home bottom-right",
                    }
                ]
            }
        ),
        encoding="utf-8",
    )
    assert main(["vision", "check", str(missing)]) == 1
    err = capsys.readouterr().err
    assert "nowhere.jpg: no such file" in err and err.count("\n") == 1
