# SPDX-License-Identifier: MIT
"""Dice on a calibrated board: value, centre, half, flat or cocked, and the points under them."""

from __future__ import annotations

import random

import cv2
import numpy as np
import pytest

from bench.seeded import self_play
from engine.position import Position
from vision.board_dice import DiceFinder, _Checkers
from vision.calibration import calibrate
from vision.features import SCALE, rectify
from vision.profile import Profile
from vision.reader import BoardReader
from vision.render import STYLES, DieSpec, Scene, random_setup, render

START = tuple(Position.STARTING.to_absolute(1)[0])


def _scene(position: Position, dice: tuple[DieSpec, ...]) -> Scene:
    points, bar, off = position.to_absolute(1)
    return Scene(points=tuple(points), bar=bar, off=off, dice=dice)


@pytest.fixture(scope="module")
def classic() -> tuple[BoardReader, Profile]:
    shot = render(Scene(points=START), style=STYLES["classic"], seed=1)
    profile = calibrate(shot.image, shot.corners, die_fraction=STYLES["classic"].die_fraction)
    return BoardReader(profile), profile


def _centre(box: tuple[int, int, int, int]) -> tuple[float, float]:
    x, y, w, h = box
    return x + w / 2, y + h / 2


def test_two_flat_dice_are_read_with_their_half_and_centre(classic: tuple[BoardReader, Profile]) -> None:
    reader, _ = classic
    rng = random.Random(4)
    right = total = flat = 0
    for i, position in enumerate(self_play(random.Random(31), 12)):
        half = rng.choice(["left", "right"])
        dice = (DieSpec(rng.randint(1, 6), half=half), DieSpec(rng.randint(1, 6), half=half))
        shot = render(_scene(position, dice), style=STYLES["classic"], seed=300 + i)
        reading = reader.read(shot.image)
        assert len(reading.dice) == 2, position.position_id()
        # Each die read is one of those drawn: same half, centre within a third of a die.
        for die in reading.dice:
            assert die.half == half
            flat += die.flat
            distances = [np.hypot(die.center[0] - cx, die.center[1] - cy) for cx, cy in map(_centre, shot.dice_boxes)]
            nearest = int(np.argmin(distances))
            assert distances[nearest] < 0.35 * max(shot.dice_boxes[nearest][2:])
            right += die.value == dice[nearest].value
            total += 1
        # The dice hide parts of points: what they cover counts for nothing, not against.
        assert reading.points == tuple(position.to_absolute(1)[0]), position.position_id()
        assert not reading.occluded
    assert right >= total - 1
    # A die lying on the tip of a light point can look longer than it is: seldom.
    assert flat >= total - 3


def test_a_cocked_die_is_never_read_flat_with_confidence(classic: tuple[BoardReader, Profile]) -> None:
    reader, _ = classic
    called = 0
    for i in range(8):
        dice = (DieSpec(1 + i % 6, half="right", flat=False), DieSpec(1 + (i + 3) % 6, half="right"))
        shot = render(Scene(points=START, dice=dice), style=STYLES["classic"], seed=700 + i)
        reading = reader.read(shot.image)
        cx, cy = _centre(shot.dice_boxes[0])
        cocked = min(reading.dice, key=lambda d: np.hypot(d.center[0] - cx, d.center[1] - cy))
        # Called cocked, or at least not sure it lies flat: the referee asks rather than passes it.
        assert not cocked.flat or cocked.confidence < 0.9, i
        called += not cocked.flat
        flat = max(reading.dice, key=lambda d: np.hypot(d.center[0] - cx, d.center[1] - cy))
        assert flat.flat
    assert called >= 1


def test_a_die_resting_on_a_checker_is_cocked(classic: tuple[BoardReader, Profile]) -> None:
    reader, profile = classic
    geometry = profile.geometry
    # Player 1's 6-point holds five checkers; a die lying on the second of them.
    x = geometry.point_center_x(6)
    y = geometry.checker_diameter * 1.5
    row, _ = geometry.column(6)
    if row != 0:
        y = 1000 - y
    shot = render(Scene(points=START, dice=(DieSpec(4, position=(x, y)),)), style=STYLES["classic"], seed=11)
    reading = reader.read(shot.image)
    assert [d.flat for d in reading.dice] == [False]


def _glints(image: np.ndarray, profile: Profile, points: tuple[int, ...], off: float = 0.0) -> np.ndarray:
    """``image`` with a lamp's glint, a bright dot, on each point's first checker: in its middle,
    or ``off`` checker diameters from it across the point."""
    geometry = profile.geometry
    d = geometry.checker_diameter
    out = image.copy()
    for point in points:
        row, _ = geometry.column(point)
        x, y = geometry.point_center_x(point) + off * d, 0.5 * d if row == 0 else 1000 - 0.5 * d
        cx, cy = cv2.perspectiveTransform(np.array([[[x, y]]], np.float64), profile.homography)[0, 0]
        radius = max(2, round(0.06 * d * float(np.hypot(*profile.homography[:2, 0]))))
        cv2.circle(out, (round(cx), round(cy)), radius, (250, 250, 250), -1, cv2.LINE_AA)
    return out


def test_a_glint_in_the_middle_of_a_checker_is_no_die(classic: tuple[BoardReader, Profile]) -> None:
    reader, profile = classic
    dice = (DieSpec(3, half="right"), DieSpec(5, half="right"))
    shot = render(Scene(points=START, dice=dice), style=STYLES["classic"], seed=21)
    image = _glints(shot.image, profile, (1, 6, 8, 12, 13, 17, 19, 24))
    # The dice's finder alone reads the dots on the dark checkers as 1s, surely...
    reader.forget()
    found = reader.dice_finder.find_dice(rectify(image, profile.homography), image)
    assert any(value == 1 and confidence >= 0.9 for _, value, confidence in found)
    # ...but they lie in the middle of checkers the reader counts: the roll is the two dice.
    reading = reader.read(image)
    assert sorted(d.value for d in reading.dice) == [3, 5]
    assert reading.points == START


def test_a_1_read_off_the_middle_of_a_checker_in_its_colour_is_a_glint(classic: tuple[BoardReader, Profile]) -> None:
    reader, profile = classic
    # A lamp seen at a slant lights a glossy checker's top off its middle: the glint lies
    # farther off than ON_CHECKER, and the checker's colour lies round it. A bright dot on the
    # dark checkers, read as a 1 there (as a black die's):
    d = profile.geometry.checker_diameter
    points = (12, 17, 19)
    shot = render(Scene(points=START), style=STYLES["classic"], seed=21)
    image = _glints(shot.image, profile, points, off=0.38)
    field = rectify(image, profile.homography)
    middles = reader.dice_finder.checker_middles(list(START))
    sides = np.repeat([0 if c > 0 else 1 for c in START], [abs(c) for c in START])
    checkers = _Checkers(middles, sides, field)
    side = 0.45 * d * SCALE
    found = []
    for point in points:
        row, _ = profile.geometry.column(point)
        x = (profile.geometry.point_center_x(point) + 0.38 * d) * SCALE
        y = (0.5 * d if row == 0 else 1000 - 0.5 * d) * SCALE
        found.append((np.array([x - side / 2, y - side / 2, side, side]), 1, 0.95))
    assert reader.dice_finder._not_glints(found, checkers) == []
    # Read as any other face, it is a die resting on the checker (and called cocked), and a 1
    # there on a field without checkers is a die.
    other = [(box, 4, confidence) for box, _, confidence in found]
    assert len(reader.dice_finder._not_glints(other, checkers)) == len(points)
    bare = _Checkers(middles[:0], sides[:0], field)
    assert len(reader.dice_finder._not_glints(found, bare)) == len(points)


def test_a_die_showing_1_resting_off_the_middle_of_a_checker_is_a_cocked_die(
    classic: tuple[BoardReader, Profile],
) -> None:
    reader, profile = classic
    geometry = profile.geometry
    d = geometry.checker_diameter
    # On the first of player 2's five checkers on the 13-point (dark checkers, a light die),
    # 0.38 of a checker from its middle, as far off as a glint may lie.
    x, y = geometry.point_center_x(19) + 0.38 * d, 0.5 * d
    if geometry.column(19)[0] != 0:
        y = 1000 - y
    shot = render(Scene(points=START, dice=(DieSpec(1, position=(x, y)), DieSpec(4, half="left"))), seed=23)
    reader.forget()
    reading = reader.read(shot.image)
    assert sorted((die.value, die.flat) for die in reading.dice) == [(1, False), (4, True)]


def test_a_die_showing_1_beside_a_checker_is_a_die(classic: tuple[BoardReader, Profile]) -> None:
    reader, profile = classic
    geometry = profile.geometry
    # On the bare 5-point, a checker's width from the 6-point's stack.
    x, y = geometry.point_center_x(5), geometry.checker_diameter * 0.6
    if geometry.column(5)[0] != 0:
        y = 1000 - y
    dice = (DieSpec(1, position=(x, y)), DieSpec(1, half="left"))
    shot = render(Scene(points=START, dice=dice), style=STYLES["classic"], seed=22)
    reading = reader.read(shot.image)
    assert [d.value for d in reading.dice] == [1, 1]


def test_dice_are_read_on_other_boards_and_lights() -> None:
    rng = np.random.default_rng(17)
    right = total = 0
    for i in range(8):
        style, camera, lighting = random_setup(rng)
        shot = render(Scene(points=START), style=style, camera=camera, lighting=lighting, seed=40 + i)
        reader = BoardReader(calibrate(shot.image, shot.corners, die_fraction=style.die_fraction))
        dice = (DieSpec(1 + i % 6, half="left"), DieSpec(6 - i % 6, half="left"))
        frame = render(Scene(points=START, dice=dice), style=style, camera=camera, lighting=lighting, seed=60 + i)
        values = sorted(d.value for d in reader.read(frame.image).dice)
        right += values == sorted(d.value for d in dice)
        total += 1
    assert right >= total - 3


def test_reading_without_dice_skips_them(classic: tuple[BoardReader, Profile]) -> None:
    reader, _ = classic
    shot = render(Scene(points=START, dice=(DieSpec(3), DieSpec(5))), style=STYLES["classic"], seed=5)
    assert reader.read(shot.image, dice=False).dice == ()
    assert len(reader.read(shot.image).dice) == 2


def test_flat_dice_on_dark_wood_are_read_flat_and_sure_enough() -> None:
    # Black dice on dark wood: their shadow has their colour, and used to draw the top face out
    # into a leaning die's oblong (flat dice called cocked); the detector, seeing them at the top
    # of its size range, missed those showing few pips.
    style = STYLES["dark-wood"]
    shot = render(Scene(points=START), style=style, seed=2)
    reader = BoardReader(calibrate(shot.image, shot.corners, die_fraction=style.die_fraction))
    rng = random.Random(8)
    right = total = 0
    for i in range(6):
        half = rng.choice(["left", "right"])
        dice = (DieSpec(rng.randint(1, 6), half=half), DieSpec(rng.randint(1, 6), half=half))
        frame = render(Scene(points=START, dice=dice), style=style, seed=900 + i)
        reading = reader.read(frame.image)
        values = sorted(d.value for d in reading.dice)
        assert values == sorted(d.value for d in dice) or any(d.confidence < 0.6 for d in reading.dice), i
        right += values == sorted(d.value for d in dice) and all(d.flat and d.confidence >= 0.6 for d in reading.dice)
        total += 1
    assert right >= total - 1


def test_a_die_boxed_by_a_part_is_read_whole(classic: tuple[BoardReader, Profile]) -> None:
    # The detector's box may hold only a few of a die's pips: the crop still takes in the die
    # (cut to the box, a 5 loses its outer pips and reads as a 1 or a 4).
    reader, _ = classic
    for angle in (0.0, 30.0):
        shot = render(
            Scene(points=START, dice=(DieSpec(5, half="right", angle=angle),)), style=STYLES["classic"], seed=3
        )
        field_image = rectify(shot.image, reader.homography)
        (box, value, _), *_ = reader.dice_finder.find_dice(field_image, shot.image)
        assert value == 5
        x, y, w, h = (float(v) for v in box)
        part = np.array([x + 0.1 * w, y + 0.1 * h, 0.6 * w, 0.6 * h], np.float32)
        assert [v for _, v, _ in reader.dice_finder._read_boxes(shot.image, part[None])] == [5], angle


def test_one_die_boxed_twice_is_one_die(classic: tuple[BoardReader, Profile]) -> None:
    reader, _ = classic
    d = reader.sampler.d
    box = np.array([100.0, 100.0, 0.8 * d, 0.8 * d], np.float32)
    part = np.array([110.0, 105.0, 0.4 * d, 0.4 * d], np.float32)
    other = box + np.array([0.8 * d, 0.0, 0.0, 0.0], np.float32)
    found = [(part, 5, 0.7), (box, 5, 0.99), (other, 2, 0.95)]
    kept = DiceFinder._distinct(found, 0.45 * d)
    assert [(v, c) for _, v, c in kept] == [(5, 0.99), (2, 0.95)]
