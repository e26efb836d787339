# SPDX-License-Identifier: MIT
"""A cube on a bar narrower than itself covers a corner of the points beside it: a checker read
where it lies is doubted, never read with confidence."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from engine.position import Position
from vision.calibration import calibrate
from vision.reader import DOUBTED_AT, BoardReader
from vision.render import CubeSpec, Scene, random_setup, render

START_POINTS, _, _ = Position.STARTING.to_absolute(1)


def _reader(bar_fraction: float, seed: int = 700_031) -> tuple[BoardReader, object, object, object]:
    rng = np.random.default_rng(seed)
    style, camera, lighting = random_setup(rng)
    style = replace(style, bar_fraction=bar_fraction)
    shot = render(Scene(points=tuple(START_POINTS)), style=style, camera=camera, lighting=lighting, seed=seed)
    profile = calibrate(shot.image, shot.corners, die_fraction=style.die_fraction, bar_fraction=bar_fraction)
    return BoardReader(profile), style, camera, lighting


def _choice(counts: dict[int, int]) -> np.ndarray:
    """The reader's picks for a board with ``counts`` (point: signed count), bare elsewhere."""
    choice = np.zeros(24, int)
    for point, count in counts.items():
        choice[point - 1] = (0 if count > 0 else 16) + abs(count)
    return choice


def test_only_a_checker_where_the_cube_lies_is_doubted() -> None:
    narrow, *_ = _reader(0.0)
    wide, *_ = _reader(0.1)
    # A blot on each point beside the bar, at its rim: where an owned cube lies on a board
    # without a bar strip, not on one with a bar wider than the cube.
    blots = _choice({6: 1, 7: 1, 18: -1, 19: -1})
    assert [i + 1 for i in narrow._under_cube(2, blots)] == [18, 19]
    assert [i + 1 for i in narrow._under_cube(1, blots)] == [6, 7]
    assert narrow._under_cube(None, blots) == []
    assert wide._under_cube(1, blots) == [] and wide._under_cube(2, blots) == []
    # Five on the 6-point reach up towards the middle, short of a centred cube.
    assert narrow._under_cube(None, _choice({6: 5, 19: -5})) == []


@pytest.mark.parametrize("owner", [1, 2])
def test_an_owned_cube_on_a_board_without_a_bar_is_not_read_as_a_checker_with_confidence(owner: int) -> None:
    reader, style, camera, lighting = _reader(0.0)
    points = list(START_POINTS)
    # The points beside the bar's ends bare, their checkers moved on.
    moved = {6: 5, 19: -5}
    for point, count in moved.items():
        points[point - 1] = 0
        points[point - 2] += count
    scene = Scene(points=tuple(points), cube=CubeSpec(value=2, owner=owner))
    frame = render(scene, style=style, camera=camera, lighting=lighting, seed=41 + owner).image
    reading = reader.read(frame)
    beside = (6, 7) if owner == 1 else (18, 19)
    for point in beside:
        if reading.points[point - 1] != points[point - 1]:
            assert reading.point_confidence[point - 1] <= DOUBTED_AT + 1e-9
