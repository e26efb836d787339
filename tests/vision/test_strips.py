# SPDX-License-Identifier: MIT
"""The strips the learned point reader reads, their references, and how a profile keeps them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from engine.position import Position
from vision.calibration import calibrate
from vision.geometry import FieldGeometry
from vision.profile import Profile, ProfileError
from vision.render import CubeSpec, Scene, render
from vision.strips import (
    BAR_LOWER,
    BAR_UPPER,
    CHANNELS,
    CLASSES,
    STRIP_H,
    STRIP_W,
    STRIPS,
    References,
    StripCutter,
    count_of,
    encode,
    label_of,
    soften,
    strip_counts,
)

START_POINTS, START_BAR, _ = Position.STARTING.to_absolute(1)


def _start_frame() -> tuple[np.ndarray, np.ndarray]:
    shot = render(Scene(points=tuple(START_POINTS), cube=CubeSpec()), seed=3)
    return shot.image, shot.corners


def test_labels_and_counts_are_inverse() -> None:
    assert [count_of(label_of(c)) for c in range(-15, 16)] == list(range(-15, 16))
    with pytest.raises(ValueError, match="no stack of 16"):
        label_of(16)
    # The bar's halves: player 1's checkers below the middle, player 2's above.
    assert strip_counts([0] * 24, (2, 3))[BAR_LOWER:] == [2, -3]


def test_strips_are_upright_from_the_edge() -> None:
    image, corners = _start_frame()
    cutter = StripCutter(FieldGeometry(), _homography(corners))
    strips = cutter.colour(image)
    assert strips.shape == (STRIPS, STRIP_H, STRIP_W, 3)
    grey = strips.mean(axis=3)
    # Player 1's 6-point holds five white checkers from the edge to the middle of the strip; the
    # 5-point is bare: the strip of the 6-point is much lighter near the edge (the top).
    assert grey[5, : STRIP_H // 3].mean() > grey[4, : STRIP_H // 3].mean() + 40
    # Player 2's 19-point (five dark checkers, top row) is darker near the edge than the bare 20-point.
    assert grey[18, : STRIP_H // 3].mean() < grey[19, : STRIP_H // 3].mean() - 40


def _homography(corners: np.ndarray) -> np.ndarray:
    from vision.profile import field_homography

    return field_homography(corners)


def test_references_borrow_a_bare_point_of_the_same_colour_and_row() -> None:
    strips = np.stack([np.full((STRIP_H, STRIP_W, 3), k, np.uint8) for k in range(STRIPS)])
    refs = References.from_frame(strips, strip_counts(START_POINTS, START_BAR), FieldGeometry())
    occupied = {i for i, c in enumerate(START_POINTS) if c}
    assert {i for i in range(24) if refs.borrowed[i]} == occupied
    assert not refs.borrowed[BAR_LOWER] and not refs.borrowed[BAR_UPPER]
    for index in range(24):
        source = int(refs.strips[index, 0, 0, 0])
        if index in occupied:
            # Another point, bare, of the same colour (parity) in the same row of the board.
            assert source != index and START_POINTS[source] == 0
            assert (source - index) % 2 == 0
            assert (source < 12) == (index < 12)
        else:
            assert source == index


def test_play_teaches_what_a_point_looks_like_bare() -> None:
    strips = np.zeros((STRIPS, STRIP_H, STRIP_W, 3), np.uint8)
    refs = References.from_frame(strips, strip_counts(START_POINTS, START_BAR), FieldGeometry())
    later = np.full_like(strips, 200)
    points = list(START_POINTS)
    points[5], points[4] = 0, 5  # the 6-point's checkers moved: the 6-point is seen bare now
    keep_out = [False] * STRIPS
    keep_out[7] = True  # a die lies on the 8-point: nothing is learnt of it
    points[7] = 0
    assert refs.learn(later, strip_counts(points, START_BAR), keep_out) == 1
    assert not refs.borrowed[5] and (refs.strips[5] == 200).all()
    assert refs.borrowed[7] and (refs.strips[7] != 200).all()
    # A strip already seen bare moves towards the new look, without jumping to it.
    assert 0 < refs.strips[1, 0, 0, 0] < 200


def test_the_input_carries_frame_reference_colours_and_borrowing() -> None:
    strips = np.zeros((3, STRIP_H, STRIP_W, 3), np.uint8)
    strips[0] = 255
    refs = np.full_like(strips, 128)
    x = encode(strips, refs, np.array([True, False, False]), np.array([[255.0, 128, 128], [0.0, 128, 128]]))
    assert x.shape == (3, CHANNELS, STRIP_H, STRIP_W)
    assert x[0, 0].mean() > 0.9 and x[1, 0].mean() < -0.9  # L of white, of black
    assert x[0, 6].max() < 0.05 and x[0, 7].min() > 2  # white is player 1's colour, far from player 2's
    assert x[0, 8].min() == 1 and x[1, 8].max() == 0


def test_a_profile_keeps_its_references(tmp_path: Path) -> None:
    image, corners = _start_frame()
    profile = calibrate(image, corners)
    assert profile.references is not None
    assert profile.references.borrowed.sum() == sum(1 for c in START_POINTS if c)
    path = tmp_path / "board.toml"
    profile.save(path)
    loaded = Profile.load(path)
    assert loaded.references is not None
    assert np.array_equal(loaded.references.strips, profile.references.strips)
    assert np.array_equal(loaded.references.borrowed, profile.references.borrowed)
    assert np.allclose(loaded.references.evidence, profile.references.evidence, atol=1e-3)
    assert loaded.references.temperature == profile.references.temperature
    # No temporary file is left beside it.
    assert [p.name for p in tmp_path.iterdir()] == ["board.toml"]


def test_a_profile_with_damaged_references_is_refused(tmp_path: Path) -> None:
    image, corners = _start_frame()
    path = tmp_path / "board.toml"
    calibrate(image, corners).save(path)
    text = path.read_text(encoding="utf-8")
    start = text.index('references = "') + len('references = "')
    damaged = tmp_path / "damaged.toml"
    damaged.write_text(text[:start] + "AAAA" + text[start + 4 :], encoding="utf-8")
    with pytest.raises(ProfileError, match=r"damaged.toml: references: the references are not a PNG image"):
        Profile.load(damaged)
    cut = tmp_path / "cut.toml"
    cut.write_text("\n".join(line for line in text.splitlines() if not line.startswith("references_borrowed")))
    with pytest.raises(ProfileError, match=r"missing key 'references_borrowed'"):
        Profile.load(cut)
    # A profile made before the references is still read (by the calibration's models).
    old = tmp_path / "old.toml"
    old.write_text("\n".join(line for line in text.splitlines() if not line.startswith("references")))
    assert Profile.load(old).references is None


def test_confident_mistakes_on_a_board_soften_what_it_reads_after() -> None:
    strips = np.zeros((STRIPS, STRIP_H, STRIP_W, 3), np.uint8)
    refs = References.from_frame(strips, strip_counts(START_POINTS, START_BAR), FieldGeometry())
    counts = strip_counts(START_POINTS, START_BAR)
    labels = [label_of(c) for c in counts]
    right = np.full((STRIPS, CLASSES), 0.001 / (CLASSES - 1))
    right[np.arange(STRIPS), labels] = 0.999
    refs.weigh(right, counts)
    assert refs.temperature == 1.0
    # Sure and wrong on three strips: the board's readings are to be trusted less.
    wrong = right.copy()
    for k in (0, 5, 12):
        wrong[k] = 0.001 / (CLASSES - 1)
        wrong[k, (labels[k] + 1) % CLASSES] = 0.999
    refs.weigh(wrong, counts)
    assert refs.temperature > 1.0
    softened = soften(right, refs.temperature)
    assert softened[0, labels[0]] < 0.999 and np.allclose(softened.sum(axis=1), 1.0)
    # Strips left out (a die on them) are no evidence either way.
    before = refs.evidence.copy()
    refs.weigh(wrong, counts, keep_out=[True] * STRIPS)
    assert np.array_equal(refs.evidence, before)
