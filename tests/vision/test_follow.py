# SPDX-License-Identifier: MIT
"""A board that moves under the camera (bumped, or the camera nudged) is followed."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from engine.position import Position
from vision.calibration import calibrate
from vision.follow import board_view, corners_of, follow, has_moved
from vision.profile import Profile, ProfileError
from vision.reader import BoardReader
from vision.render import STYLES, Camera, Lighting, Scene, render

START = tuple(Position.STARTING.to_absolute(1)[0])
#: A position from play, with checkers on the bar and borne off.
LATER = (-2, 0, 3, 3, 2, 3, 0, 0, 0, 0, 0, -4, 1, 0, 0, 0, -3, 0, -3, -2, 0, 0, 0, 2)
#: The board knocked some 15 pixels aside and turned a little.
BUMPED = dataclasses.replace(Camera(), offset=(0.012, -0.008), rotation=Camera().rotation + 0.4)


def _scene() -> Scene:
    return Scene(points=LATER, bar=(1, 0), off=(0, 1))


@pytest.mark.parametrize("style", sorted(STYLES))
def test_the_board_is_found_where_it_moved_to(style: str) -> None:
    board = STYLES[style]
    calibration = render(Scene(points=START), style=board, seed=1)
    homography = calibrate(calibration.image, calibration.corners).homography
    before = render(_scene(), style=board, seed=2, layout_seed=3)
    after = render(_scene(), style=board, camera=BUMPED, seed=4, layout_seed=3)
    assert np.abs(np.asarray(corners_of(homography)) - after.corners).max() > 10
    found = follow(board_view(before.image, homography), after.image, homography)
    assert found is not None and has_moved(found, homography)
    assert np.abs(np.asarray(corners_of(found.homography)) - after.corners).max() < 0.75


@pytest.mark.parametrize("style", sorted(STYLES))
def test_a_hand_or_a_move_is_no_move_of_the_board(style: str) -> None:
    board = STYLES[style]
    calibration = render(Scene(points=START), style=board, seed=1)
    homography = calibrate(calibration.image, calibration.corners).homography
    before = board_view(render(_scene(), style=board, seed=2, layout_seed=3).image, homography)
    hand = render(_scene(), style=board, hand=True, seed=5, layout_seed=3)
    assert not has_moved(follow(before, hand.image, homography), homography)
    # 13/9 13/10 by player 1 (the 13-point is index 12).
    points = list(LATER)
    points[12] -= 1
    points[8] += 1
    played = render(Scene(points=tuple(points), bar=(1, 0), off=(0, 1)), style=board, seed=6, layout_seed=3)
    assert not has_moved(follow(before, played.image, homography), homography)


def test_the_reader_follows_a_bumped_board_and_reads_it_as_before() -> None:
    lighting = Lighting()
    calibration = render(Scene(points=START), seed=1, lighting=lighting)
    profile = calibrate(calibration.image, calibration.corners)
    reader = BoardReader(profile)
    clear = reader.read(render(_scene(), seed=2, layout_seed=3, lighting=lighting).image)
    assert not clear.occluded and clear.points == LATER
    bumped = render(_scene(), camera=BUMPED, seed=4, layout_seed=3, lighting=lighting)
    reading = reader.read(bumped.image)
    assert reader.followed == 1
    assert np.abs(np.asarray(profile.corners) - bumped.corners).max() < 1.5
    assert not reading.occluded and reading.points == LATER and reading.bar == (1, 0)
    assert reading.confidence >= min(0.9, clear.confidence)
    # The next frame, the same board, is read where it lies now, without following it again.
    again = reader.read(render(_scene(), camera=BUMPED, seed=5, layout_seed=3, lighting=lighting).image)
    assert reader.followed == 1 and again.points == LATER and not again.occluded


def test_a_hand_over_the_board_moves_no_corner() -> None:
    calibration = render(Scene(points=START), seed=1)
    profile = calibrate(calibration.image, calibration.corners)
    corners = list(profile.corners)
    reader = BoardReader(profile)
    reader.read(render(_scene(), seed=2, layout_seed=3).image)
    for seed in range(10, 14):
        reader.read(render(_scene(), hand=True, seed=seed, layout_seed=3).image)
    assert reader.followed == 0 and profile.corners == corners


def test_the_profile_keeps_the_board_as_calibration_saw_it(tmp_path: Path) -> None:
    calibration = render(Scene(points=START), seed=1)
    profile = calibrate(calibration.image, calibration.corners)
    assert profile.view is not None
    path = tmp_path / "board.toml"
    profile.save(path)
    again = Profile.load(path)
    assert again.view is not None and np.array_equal(again.view, profile.view)
    text = path.read_text(encoding="utf-8")
    line = next(line for line in text.splitlines() if line.startswith("view = "))
    path.write_text(text.replace(line, 'view = "bm90IGEgcG5n"'), encoding="utf-8")
    with pytest.raises(ProfileError, match=r"board\.toml: view: it is not a PNG image"):
        Profile.load(path)


def test_a_board_bumped_before_the_first_read_is_followed_from_the_profile(tmp_path: Path) -> None:
    # The referee starts the next day, the board knocked aside overnight: no clear frame yet.
    calibration = render(Scene(points=START), seed=1)
    path = tmp_path / "board.toml"
    calibrate(calibration.image, calibration.corners).save(path)
    bumped = render(Scene(points=START), camera=BUMPED, seed=2)
    reader = BoardReader(Profile.load(path))
    reading = reader.read(bumped.image)
    assert reader.followed == 1
    assert np.abs(np.asarray(reader.profile.corners) - bumped.corners).max() < 1.5
    assert not reading.occluded and reading.points == START
    # A profile made before it kept the view cannot follow the board so: it waits.
    text = path.read_text(encoding="utf-8")
    path.write_text("\n".join(ln for ln in text.splitlines() if not ln.startswith("view = ")), encoding="utf-8")
    old = BoardReader(Profile.load(path))
    assert old.read(bumped.image).occluded and old.followed == 0
