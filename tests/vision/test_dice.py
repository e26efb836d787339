# SPDX-License-Identifier: MIT
"""The dice reader on held-out real photos, on drawn dice, beside the doubling cube, and on bad
input."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import cv2
import numpy as np
import pytest

from bench.vision_dice import CAUSES, _summary, measure_photo, photo_causes
from engine.position import Position
from tools.train_dice import DATA_DIR, Photo, load_photos
from vision.calibration import calibrate
from vision.dice import CONFIDENT, DieReading, classify_face, detect, read_dice
from vision.reader import BoardReader
from vision.render import STYLES, CubeSpec, DieSpec, Scene, render
from vision.render import pip_layout as render_pips

#: Every how many-th held-out photo the tests read (all of them: ``bench/vision_dice.py``).
EVERY = 3

#: What the reader reaches on that subset, a little under what it measured (see the bench).
FLOORS = {
    "nell-byler": {"found": 0.98, "read_right": 0.9, "confident_share": 0.78},
    "rune55-valid": {"found": 0.64, "read_right": 0.89, "confident_share": 0.75},
}
#: At most this many wrong readings at or above the CONFIDENT threshold in that subset.
CONFIDENT_WRONG = 4


@pytest.fixture(scope="module")
def photos() -> list[Photo]:
    return load_photos(DATA_DIR)


@pytest.fixture(scope="module")
def cv_one_thread() -> Iterator[None]:
    saved = cv2.getNumThreads()
    cv2.setNumThreads(1)
    yield
    cv2.setNumThreads(saved)


@pytest.fixture(scope="module")
def scores(photos: list[Photo], cv_one_thread: None) -> dict[str, dict[str, Any]]:
    rows: dict[str, list[dict[str, Any]]] = {}
    for dataset in FLOORS:
        subset = [p for p in photos if p.part == "test" and p.dataset == dataset][::EVERY]
        rows[dataset] = [measure_photo(p) for p in subset]
    return {name: _summary(r) for name, r in rows.items()}


# -- the split ------------------------------------------------------------------------------------


def test_about_a_fifth_of_each_data_set_is_held_out(photos: list[Photo]) -> None:
    for dataset in FLOORS:
        mine = [p for p in photos if p.dataset == dataset]
        share = sum(p.part == "test" for p in mine) / len(mine)
        assert 0.15 <= share <= 0.25, (dataset, share)
    assert {p.part for p in photos} == {"train", "val", "test"}


def test_copies_of_a_photo_share_its_part(photos: list[Photo]) -> None:
    # The Roboflow set holds the nell-byler photos again (grey, some turned): same name stem.
    nell = {p.name: p.part for p in photos if p.dataset == "nell-byler"}
    copies = [p for p in photos if p.dataset == "rune55-valid" and p.name.split("_jpg.rf.")[0] in nell]
    assert len(copies) > 100
    assert all(nell[p.name.split("_jpg.rf.")[0]] == p.part for p in copies)


# -- held-out real photos -------------------------------------------------------------------------


@pytest.mark.slow
def test_held_out_photos_are_found_and_read(scores: dict[str, dict[str, Any]]) -> None:
    # One test for all the figures: the photos are read once per test process.
    for dataset, floors in FLOORS.items():
        score = scores[dataset]
        assert score["labelled"] > 100, dataset
        assert score["found"] >= floors["found"], (dataset, score)
        assert score["read_right"] >= floors["read_right"], (dataset, score)
        # Confident readings are right: the confidence is calibrated, not a bare network score.
        assert score["confident_share"] >= floors["confident_share"], (dataset, score)
    assert sum(s["confident_wrong"] for s in scores.values()) <= CONFIDENT_WRONG, scores


def test_causes_account_for_every_labelled_die(photos: list[Photo]) -> None:
    # bench/vision_dice.py --causes: each labelled die met one fate, and its "found" and
    # right are the bench's.
    for photo in [p for p in photos if p.part == "test" and p.dataset == "rune55-valid"][:40:4]:
        causes = photo_causes(photo)
        assert len(causes) == len(photo.values)
        assert {c for _, c, _ in causes} <= set(CAUSES)
        scored = measure_photo(photo)
        assert sum(c == "found" for _, c, _ in causes) == scored["found"], photo.key
        assert sum(c == "found" and right for _, c, right in causes) == scored["right"], photo.key


def test_classify_face_reads_labelled_crops(photos: list[Photo]) -> None:
    subset = [p for p in photos if p.part == "test" and p.dataset == "nell-byler"][:6]
    right = total = 0
    for photo in subset:
        image = photo.image()
        for (x, y, w, h), value in zip(photo.boxes(image.shape[1], image.shape[0]), photo.values, strict=True):
            crop = image[max(0, round(y)) : round(y + h), max(0, round(x)) : round(x + w)]
            got, confidence = classify_face(crop)
            assert 1 <= got <= 6
            assert 0.0 <= confidence <= 1.0
            right += got == value
            total += 1
    assert total >= 20
    assert right / total >= 0.95


# -- drawn dice and edge cases --------------------------------------------------------------------

PIPS = render_pips()


def drawn_die(value: int, size: int = 60, angle: float = 0.0) -> np.ndarray:
    """A white die with black pips on green felt, ``size`` pixels across, turned by ``angle``."""
    image = np.full((240, 320, 3), (40, 110, 30), np.uint8)
    die = np.full((size, size, 3), 235, np.uint8)
    for dx, dy in PIPS[value]:
        centre = (round(size / 2 + dx * size * 0.27), round(size / 2 + dy * size * 0.27))
        cv2.circle(die, centre, max(2, size // 11), (20, 20, 20), -1, cv2.LINE_AA)
    mask = np.full((size, size), 255, np.uint8)
    x0, y0 = 130, 90
    m = cv2.getRotationMatrix2D((size / 2, size / 2), angle, 1.0)
    m[:, 2] += [x0, y0]
    turned = cv2.warpAffine(die, m, (320, 240), flags=cv2.INTER_LINEAR)
    alpha = cv2.warpAffine(mask, m, (320, 240), flags=cv2.INTER_LINEAR).astype(np.float32)[..., None] / 255
    return (image * (1 - alpha) + turned * alpha).astype(np.uint8)


@pytest.mark.parametrize("value", range(1, 7))
def test_a_drawn_die_is_read(value: int) -> None:
    readings = read_dice(drawn_die(value, angle=17.0 * value))
    assert [r.value for r in readings] == [value]
    (reading,) = readings
    assert isinstance(reading, DieReading)
    x, y, w, h = reading.box
    assert 120 <= x + w / 2 <= 200 and 80 <= y + h / 2 <= 160
    assert 50 <= max(w, h) <= 95
    assert reading.confidence >= CONFIDENT


@pytest.mark.parametrize("value", range(1, 7))
def test_classify_face_reads_a_drawn_die(value: int) -> None:
    got, confidence = classify_face(drawn_die(value)[80:170, 120:210])
    assert got == value
    # Drawn dice are cleaner than any photo the net learnt from: right, if not always sure.
    assert confidence >= 0.6


#: The starting position's checkers, player 1's numbering.
START = tuple(Position.STARTING.to_absolute(1)[0])


# -- the doubling cube ----------------------------------------------------------------------------


@pytest.mark.parametrize("style", sorted(STYLES))
def test_the_board_reader_takes_no_doubling_cube_for_a_die(style: str) -> None:
    # The face classifier alone reads a cube's number as a face now and then (docs/camera.md, "How
    # the board is read"); the board's reader finds the dice on the field and reads the cube for what it is.
    board = STYLES[style]
    start = render(Scene(points=START, cube=CubeSpec()), style=board)
    reader = BoardReader(calibrate(start.image, start.corners, die_fraction=board.die_fraction))
    for value, owner in ((2, 1), (4, 2), (8, 1), (16, 2), (32, 1), (64, None)):
        for half in ("left", "right"):
            dice = (DieSpec(5, half=half), DieSpec(2, half=half))
            shot = render(Scene(points=START, dice=dice, cube=CubeSpec(value, owner)), style=board, seed=value)
            reading = reader.read(shot.image)
            assert len(reading.dice) <= 2, (value, owner, half)
            assert all(d.value in (2, 5) for d in reading.dice), (value, owner, half)
            # A cube in the middle shows 64 and stands for 1.
            shown = value if owner is not None else 1
            assert reading.cube is not None and reading.cube.value == shown, (value, owner, half)


def test_the_detector_finds_in_a_part_what_it_finds_there_in_the_whole(photos: list[Photo]) -> None:
    checked = 0
    for photo in [p for p in photos if p.part == "test"][::40][:12]:
        image = photo.image()
        whole = detect(image)
        if not len(whole):
            continue
        x, y, w, h, _ = whole[0]
        region = (float(x - w), float(y - h), float(x + 2 * w), float(y + 2 * h))
        part = detect(image, regions=[region])
        centres = part[:, :2] + part[:, 2:4] / 2
        # Only boxes centred in the part, and the best of the whole image's among them, as it was.
        assert ((centres >= region[:2]) & (centres < region[2:])).all(), photo.key
        assert np.abs(part[:, :5] - whole[0]).max(axis=1).min() < 0.01, photo.key
        assert len(detect(image, regions=[])) == 0
        checked += 1
    assert checked >= 8


def test_no_dice_in_empty_images() -> None:
    assert read_dice(np.zeros((480, 640, 3), np.uint8)) == []
    assert read_dice(np.full((300, 200, 3), 180, np.uint8)) == []
    assert read_dice(np.full((40, 50, 3), 90, np.uint8)) == []


def test_grey_and_bgra_images_are_accepted() -> None:
    bgr = drawn_die(5)
    assert [r.value for r in read_dice(cv2.cvtColor(bgr, cv2.COLOR_BGR2GRAY))] == [5]
    assert [r.value for r in read_dice(cv2.cvtColor(bgr, cv2.COLOR_BGR2BGRA))] == [5]


def test_tiny_images_do_not_fail() -> None:
    assert read_dice(np.zeros((1, 1, 3), np.uint8)) == []
    value, confidence = classify_face(np.zeros((2, 3, 3), np.uint8))
    assert 1 <= value <= 6 and 0 <= confidence <= 1


@pytest.mark.parametrize(
    ("bad", "error"),
    [
        ("image.jpg", TypeError),
        (None, TypeError),
        (np.zeros((40, 40, 3), np.float32), TypeError),
        (np.zeros((40, 40, 5), np.uint8), ValueError),
        (np.zeros((2, 40, 40, 3), np.uint8), ValueError),
        (np.zeros((0, 40, 3), np.uint8), ValueError),
    ],
)
def test_bad_input_raises_a_clear_error(bad: Any, error: type[Exception]) -> None:
    with pytest.raises(error, match="image"):
        read_dice(bad)
    with pytest.raises(error, match="image"):
        classify_face(bad)
