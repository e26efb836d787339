# SPDX-License-Identifier: MIT
"""The reader remembers the last frame and reads again only what changed, reading as a reader
that reads every frame whole does."""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from engine.dice import Dice
from engine.movegen import legal_plays
from engine.position import Position
from vision import board_dice, points_net
from vision import reader as reader_module
from vision.calibration import calibrate
from vision.profile import Profile
from vision.reader import BoardReader
from vision.render import Camera, CubeSpec, DieSpec, Lighting, Scene, random_setup, render
from vision.strips import STRIPS

START_POINTS, _, _ = Position.STARTING.to_absolute(1)
#: A setup the point network never trained on (see tests/vision/test_points_net.py).
SEED = 700_021
LAYOUT = 5


def _scene(position: Position, dice: tuple[DieSpec, ...] = ()) -> Scene:
    points, bar, off = position.to_absolute(1)
    return Scene(points=tuple(points), bar=bar, off=off, dice=dice)


class Board:
    """One board under one camera, rendered frame after frame with its checkers left where
    they lie (the layout seed), each frame with its own sensor noise."""

    def __init__(self, seed: int = SEED) -> None:
        rng = np.random.default_rng(seed)
        self.style, self.camera, self.lighting = random_setup(rng)
        self.frames = 0
        shot = self.shot(Scene(points=tuple(START_POINTS)))
        self.profile: Profile = calibrate(shot.image, shot.corners, die_fraction=self.style.die_fraction)

    def shot(self, scene: Scene, lighting: Lighting | None = None) -> Any:
        self.frames += 1
        return render(
            scene,
            style=self.style,
            camera=self.camera,
            lighting=lighting or self.lighting,
            seed=SEED * 31 + self.frames,
            layout_seed=LAYOUT,
        )

    def frame(self, scene: Scene, lighting: Lighting | None = None) -> np.ndarray:
        image: np.ndarray = self.shot(scene, lighting).image
        return image


@pytest.fixture(scope="module")
def board() -> Board:
    return Board()


class Counted:
    """Counts the strips the point network reads and the detector's runs."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.strips = 0
        self.detections = 0
        self.regions: list[Any] = []
        real_net = points_net.probabilities
        real_detect = board_dice.detect

        def net(x: np.ndarray, path: Any = None) -> np.ndarray:
            self.strips += len(x)
            return real_net(x, path)

        def detect(*args: Any, **kwargs: Any) -> np.ndarray:
            self.detections += 1
            self.regions.append(kwargs.get("regions"))
            return real_detect(*args, **kwargs)

        monkeypatch.setattr(points_net, "probabilities", net)
        monkeypatch.setattr(board_dice, "detect", detect)

    def reset(self) -> None:
        self.strips = self.detections = 0
        self.regions = []


DICE = (
    DieSpec(3, "right", position=(860.0, 430.0), angle=20.0),
    DieSpec(5, "right", position=(1000.0, 560.0), angle=65.0),
)


def _same(a: Any, b: Any) -> None:
    assert a.points == b.points
    assert a.bar == b.bar
    assert sorted(d.value for d in a.dice) == sorted(d.value for d in b.dice)
    assert a.cube == b.cube


def test_a_layout_seed_leaves_every_checker_where_it_lay() -> None:
    clean = Lighting(noise=0.0, jpeg_quality=100, glare=0.0)
    scene = _scene(Position.STARTING)
    a, b = (render(scene, lighting=clean, seed=s, layout_seed=3).image for s in (1, 2))
    assert np.array_equal(a, b)
    c, d = (render(scene, lighting=clean, seed=s).image for s in (1, 2))
    assert not np.array_equal(c, d)
    # The same spots, the same jitter, whatever else is on the board.
    moved = _scene(legal_plays(Position.STARTING, Dice(6, 5)).position_list()[0])
    e = render(moved, lighting=clean, seed=9, layout_seed=3).image
    assert 0 < np.count_nonzero(np.any(a != e, axis=2)) < 0.05 * a.shape[0] * a.shape[1]
    assert Camera().size == (a.shape[1], a.shape[0])


def test_a_still_board_is_not_read_again(board: Board, monkeypatch: pytest.MonkeyPatch) -> None:
    counted = Counted(monkeypatch)
    scene = _scene(Position.STARTING, DICE)
    reader = BoardReader(board.profile, points="net")
    first = reader.read(board.frame(scene))
    # Every strip once, and those the dice lie on again with the dice painted out.
    assert STRIPS < counted.strips <= STRIPS + 4 and counted.detections >= 1
    counted.reset()
    again = reader.read(board.frame(scene))
    _same(first, again)
    assert again.confidence == pytest.approx(first.confidence)
    assert counted.strips == 0 and counted.detections == 0
    assert sorted(d.value for d in again.dice) == [3, 5]


def test_a_move_is_read_where_it_was_made(board: Board, monkeypatch: pytest.MonkeyPatch) -> None:
    before = Position.STARTING
    after = legal_plays(before, Dice(3, 5)).position_list()[0]
    frames = [board.frame(_scene(before, DICE)), board.frame(_scene(after, DICE))]
    whole = BoardReader(board.profile, points="net", remember=False)
    counted = Counted(monkeypatch)
    reader = BoardReader(board.profile, points="net")
    reader.read(frames[0])
    counted.reset()
    reading = reader.read(frames[1])
    # The points the move changed, and their neighbours, are read again (one a die lies on,
    # twice: with the die painted out); the dice lay still.
    assert 2 <= counted.strips <= 12
    assert counted.detections == 0
    assert reading.points == tuple(after.to_absolute(1)[0])
    _same(reading, whole.read(frames[1]))
    # The dice picked up: the field is looked over again, and no die is found.
    counted.reset()
    empty = reader.read(board.frame(_scene(after)))
    assert empty.dice == ()
    # Only where the dice lay changed: one look (the grey one) tells they are gone.
    assert counted.detections == 1
    assert empty.points == reading.points


def test_a_roll_is_looked_for_only_where_the_frame_changed(board: Board, monkeypatch: pytest.MonkeyPatch) -> None:
    before = board.frame(_scene(Position.STARTING))
    thrown = board.frame(_scene(Position.STARTING, DICE))
    counted = Counted(monkeypatch)
    reader = BoardReader(board.profile, points="net")
    assert reader.read(before).dice == ()
    assert counted.regions == [None, None, None]  # read whole: every look over the whole field
    counted.reset()
    reading = reader.read(thrown)
    assert sorted(d.value for d in reading.dice) == [3, 5]
    # One look, at the parts where the dice landed (in half-size field pixels; the field is
    # 600 x 500 there): together far less than the field.
    assert counted.detections == 1
    regions = counted.regions[0]
    assert regions is not None and 1 <= len(regions) <= 2
    assert sum((x1 - x0) * (y1 - y0) for x0, y0, x1, y1 in regions) < 0.2 * 600 * 500
    # The dice are read as looking over the whole field reads them.
    whole = BoardReader(board.profile, points="net", remember=False).read(thrown)
    assert [d.value for d in reading.dice] == [d.value for d in whole.dice]
    assert [d.confidence for d in reading.dice] == pytest.approx([d.confidence for d in whole.dice], abs=0.01)


def test_the_light_changing_reads_the_frame_whole(board: Board, monkeypatch: pytest.MonkeyPatch) -> None:
    scene = _scene(Position.STARTING)
    reader = BoardReader(board.profile, points="net")
    reader.read(board.frame(scene))
    counted = Counted(monkeypatch)
    brighter = board.frame(scene)
    brighter = np.clip(brighter.astype(np.int16) + 12, 0, 255).astype(np.uint8)
    reading = reader.read(brighter)
    assert counted.strips == STRIPS
    assert reading.points == tuple(START_POINTS)


def test_a_reference_learnt_reads_its_strip_again(board: Board, monkeypatch: pytest.MonkeyPatch) -> None:
    profile = copy.deepcopy(board.profile)
    position = legal_plays(Position.STARTING, Dice(6, 5)).position_list()[0]
    frame = board.frame(_scene(position))
    reader = BoardReader(profile, points="net")
    reading = reader.read(frame)
    assert profile.references is not None
    was = profile.references.strips.copy()
    reader.learn(frame, reading.points, reading.bar)
    changed = int(np.any(profile.references.strips != was, axis=(1, 2, 3)).sum())
    assert changed > 0
    counted = Counted(monkeypatch)
    reader.read(board.frame(_scene(position)))
    # The strips whose references changed, and no other.
    assert counted.strips == changed


def test_forgetting_and_not_remembering_read_whole(board: Board, monkeypatch: pytest.MonkeyPatch) -> None:
    scene = _scene(Position.STARTING)
    counted = Counted(monkeypatch)
    whole = BoardReader(board.profile, points="net", remember=False)
    whole.read(board.frame(scene))
    whole.read(board.frame(scene))
    assert counted.strips == 2 * STRIPS
    reader = BoardReader(board.profile, points="net")
    reader.read(board.frame(scene))
    reader.forget()
    counted.reset()
    reader.read(board.frame(scene))
    assert counted.strips == STRIPS


def test_the_cube_is_read_again_only_where_it_lay(board: Board, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real = reader_module.read_cube

    def read_cube(*args: Any) -> Any:
        calls.append(1)
        return real(*args)

    monkeypatch.setattr(reader_module, "read_cube", read_cube)
    centred = Scene(points=tuple(START_POINTS), cube=CubeSpec())
    reader = BoardReader(board.profile, points="net")
    first = reader.read(board.frame(centred))
    assert first.cube is not None and (first.cube.value, first.cube.owner) == (1, None)
    assert len(calls) == 1
    # A move next to the bar, where the cube would lie once owned: the cube lies in the middle still.
    after = legal_plays(Position.STARTING, Dice(2, 1)).parse("13/11 8/7")[0]
    points = tuple(after.to_absolute(1)[0])
    moved = reader.read(board.frame(Scene(points=points, cube=CubeSpec())))
    assert len(calls) == 1 and moved.cube == first.cube
    # Doubled and taken: the cube lies at the taker's end, and is read there.
    taken = reader.read(board.frame(Scene(points=points, cube=CubeSpec(value=2, owner=2))))
    assert len(calls) == 2
    assert taken.cube is not None and (taken.cube.value, taken.cube.owner) == (2, 2)


def test_a_checker_of_the_other_side_as_light_as_it_is_seen(monkeypatch: pytest.MonkeyPatch) -> None:
    # Red and green checkers of one grey: a hit changes no grey level, only the colour.
    board = Board(SEED + 1)
    board.style = replace(board.style, checker_colours=((40, 40, 200), (40, 120, 40)))
    shot = board.shot(Scene(points=tuple(START_POINTS)))
    board.profile = calibrate(shot.image, shot.corners, die_fraction=board.style.die_fraction)
    points = list(START_POINTS)
    points[11] += 1  # one of player 2's checkers from player 1's 12-point ...
    points[9] = -1  # ... to his 10-point, between two bare points: a blot
    blot = Scene(points=tuple(points))
    hit = list(points)
    hit[12] -= 1  # player 1 hits it from his 13-point, across the board
    hit[9] = 1
    reader = BoardReader(board.profile, points="net")
    assert reader.read(board.frame(blot)).points == tuple(points)
    reading = reader.read(board.frame(Scene(points=tuple(hit), bar=(0, 1))))
    assert reading.points == tuple(hit)
    assert reading.bar == (0, 1)
