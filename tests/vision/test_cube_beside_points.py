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


def _moved_on() -> list[int]:
    """The starting position with the points beside the bar's ends bare, their checkers moved
    one point on."""
    points = list(START_POINTS)
    for point, count in {6: 5, 19: -5}.items():
        points[point - 1] = 0
        points[point - 2] += count
    return points


@pytest.mark.parametrize("owner", [1, 2])
def test_an_owned_cube_on_a_board_without_a_bar_is_not_read_as_a_checker_with_confidence(owner: int) -> None:
    reader, style, camera, lighting = _reader(0.0)
    points = _moved_on()
    scene = Scene(points=tuple(points), cube=CubeSpec(value=2, owner=owner))
    frame = render(scene, style=style, camera=camera, lighting=lighting, seed=41 + owner).image
    reading = reader.read(frame)
    assert reading.cube is not None and (reading.cube.value, reading.cube.owner) == (2, owner)
    beside = (6, 7) if owner == 1 else (18, 19)
    for point in beside:
        right = reading.points[point - 1] == points[point - 1]
        assert right or reading.point_confidence[point - 1] <= DOUBTED_AT + 1e-9, (point, reading.points)


@pytest.mark.parametrize("owner", [1, 2])
def test_a_checker_where_the_owned_cube_lies_is_read_but_doubted(owner: int) -> None:
    """A blot on the point beside the bar at the owner's end, under the cube's corner: read, and
    never with confidence (the cube could be taken for it)."""
    reader, style, camera, lighting = _reader(0.0)
    points = _moved_on()
    side = 1 if owner == 1 else -1
    blot, donor = (7, 5) if owner == 1 else (19, 17)
    points[donor - 1] -= side
    points[blot - 1] += side
    scene = Scene(points=tuple(points), cube=CubeSpec(value=2, owner=owner))
    frame = render(scene, style=style, camera=camera, lighting=lighting, seed=41 + owner).image
    reading = reader.read(frame)
    assert reading.points == tuple(points)
    assert reading.point_confidence[blot - 1] <= DOUBTED_AT + 1e-9
    assert reading.confidence <= DOUBTED_AT + 1e-9
