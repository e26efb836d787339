# SPDX-License-Identifier: MIT
"""The labels of real board photos turned into bgboard's terms (vision.labels), on the real set."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from engine.position import Position
from tests.conftest import SHARED_DATA
from vision.labels import LabelError, LabelledFrame, load_labels
from vision.profile import corner_problem

LABELS = SHARED_DATA / "boards" / "labels.json"


@pytest.fixture(scope="module")
def frames() -> dict[str, LabelledFrame]:
    return {f.file: f for f in load_labels(LABELS)}


def test_every_frame_converts_with_thirty_checkers_or_hidden_ones(frames: dict[str, LabelledFrame]) -> None:
    assert len(frames) == 12
    for frame in frames.values():
        shown = [abs(c) for c in frame.points if c is not None]
        on_bar = sum(b for b in frame.bar if b is not None)
        off = sum(o for o in frame.off if o is not None)
        total = sum(shown) + on_bar + off
        if frame.complete and None not in frame.off:
            assert total == 30, frame.file
        else:
            assert total <= 30, frame.file
        # Player 1 sits with his home on his right: the corners go round clockwise on screen.
        w, h = frame.size
        inside = frame.corners.clip([0, 0], [w - 1, h - 1])
        assert corner_problem(inside, w, h) is None, frame.file


def test_a_board_in_the_starting_position_reads_as_the_start(frames: dict[str, LabelledFrame]) -> None:
    test2 = frames["christiancorro/data/images/test/test2.jpg"]
    # Black's home is at the bottom right: black is player 1, seen from his seat.
    assert test2.player1 == "A"
    assert test2.position() == Position.STARTING
    assert test2.corners.tolist() == [[225, 47], [968, 47], [1058, 737], [137, 737]]
    assert test2.cube == (64, None)


def test_a_board_seen_from_across_is_turned_half_round(frames: dict[str, LabelledFrame]) -> None:
    frame0 = frames["christiancorro/data/images/test/frame0.jpg"]
    # Black's home at the top left: black (A) sits at the top, his 1-point at the picture's top left.
    assert frame0.player1 == "A"
    assert frame0.corners.tolist() == [[871, 648], [238, 660], [211, 31], [890, 25]]
    assert frame0.points[:5] == (4, 1, 2, 0, 2)
    # The bottom row's fourth point from the left is black's 21-point: six black checkers.
    assert frame0.points[20] == 6
    # White's checkers are player 2's, negative.
    assert frame0.points[14:20] == (-2, -2, -2, -2, -2, -3)


def test_hidden_points_and_the_bar_are_unknown(frames: dict[str, LabelledFrame]) -> None:
    frame3 = frames["christiancorro/data/images/test/frame3.jpg"]
    assert frame3.hand and not frame3.complete
    assert frame3.points[3:6] == (None, None, None)
    assert frame3.bar == (None, None)
    assert frame3.off == (0, 6)
    with pytest.raises(LabelError, match="hand hides"):
        frame3.position()
    test5 = frames["christiancorro/tests/hough_disk_detection/test5.png"]
    # Two black checkers on the bar, the cube on black's side: black is player 1 (home top left).
    assert test5.bar == (2, 0)
    assert test5.cube == (2, 1)


def test_the_home_may_be_given_as_a_map_and_for_one_colour_only() -> None:
    base = {
        "file": "x.jpg",
        "width": 100,
        "height": 80,
        "field_corners": [[10, 10], [90, 10], [90, 70], [10, 70]],
        "top": [""] * 11 + ["B1"],
        "bottom": ["A2"] + [""] * 11,
    }
    one = LabelledFrame.from_json({**base, "home": {"B": "top-right"}})
    # B's home at the top right faces A's at the bottom right: A is player 1, seen from his seat.
    assert one.player1 == "A"
    assert one.points[11] == 2 and one.points[23] == -1
    assert np.array_equal(one.corners, np.array([[10, 10], [90, 10], [90, 70], [10, 70]], float))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"home": "somewhere"}, "does not say where"),
        ({"home": "A home top-left, B home top-right"}, "must face each other"),
        ({"top": ["A1"] * 11}, "'top' must list 12 points"),
        ({"bottom": ["C2"] + [""] * 11}, "bottom point 1: 'C2'"),
        ({"field_corners": [[1, 2], [3, 4]]}, "four \\[x, y\\] pairs"),
        ({"dice": [7]}, "dice must be 1 to 6"),
    ],
)
def test_malformed_frames_are_named(change: dict[str, object], message: str, tmp_path: Path) -> None:
    good = {
        "file": "ok.jpg",
        "field_corners": [[10, 10], [90, 10], [90, 70], [10, 70]],
        "top": [""] * 12,
        "bottom": [""] * 12,
        "home": "A home bottom-right",
    }
    path = tmp_path / "labels.json"
    path.write_text(json.dumps({"frames": [good, {**good, "file": "x.jpg", **change}]}), encoding="utf-8")
    with pytest.raises(LabelError, match=f"frame 2 \\(x.jpg\\).*{message}"):
        load_labels(path)


def test_a_file_that_is_not_labels_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "labels.json"
    path.write_text("[1, 2", encoding="utf-8")
    with pytest.raises(LabelError, match="is not JSON"):
        load_labels(path)
    path.write_text("{}", encoding="utf-8")
    with pytest.raises(LabelError, match='no "frames" list'):
        load_labels(path)
    with pytest.raises(LabelError, match=r"missing\.json: no such file"):
        load_labels(tmp_path / "missing.json")
    with pytest.raises(LabelError, match="is a folder, not labels"):
        load_labels(tmp_path)
