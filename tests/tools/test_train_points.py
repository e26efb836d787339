# SPDX-License-Identifier: MIT
"""Training the point reader: the labels of rendered frames, and which 2D setups are varied.

(``--init`` loading a shipped network back needs torch, which the tests do not install: the
script itself refuses to train from a file whose probabilities it does not give back.)"""

from __future__ import annotations

import numpy as np

from tools.train_points import collect_2d, frame_labels, is_varied, kind_of, part_of, scene_labels
from vision.render import Scene
from vision.strips import STRIP_H, STRIP_W, STRIPS, count_of, label_of

POINTS = (0,) * 22 + (-2, 0)


def test_a_scene_is_labelled_by_what_lies_on_each_half_of_the_bar() -> None:
    plain = scene_labels(Scene(points=POINTS, bar=(2, 1)))
    assert plain.shape == (26,) and list(plain[-2:]) == [label_of(2), label_of(-1)]
    assert plain[22] == label_of(-2)
    # Player 1's checker lies in the upper half, player 2's two in the lower one.
    spots = ((600.0, 200.0), (600.0, 700.0), (610.0, 800.0))
    moved = scene_labels(Scene(points=POINTS, bar=(1, 2), bar_spots=spots))
    assert list(moved[-2:]) == [label_of(-2), label_of(1)]


def test_a_3d_frame_is_labelled_by_its_bar_halves_when_it_has_them() -> None:
    label = {"points": list(POINTS), "bar": [1, 2]}
    assert list(frame_labels(label)[-2:]) == [label_of(1), label_of(-2)]
    label["bar_halves"] = [-2, 1]
    assert list(frame_labels(label)[-2:]) == [label_of(-2), label_of(1)]


def test_varied_setups_are_a_share_drawn_apart_from_the_split() -> None:
    seeds = range(2026, 4026)
    varied = np.array([is_varied(s, 0.6) for s in seeds])
    assert 0.55 < varied.mean() < 0.65
    assert not any(is_varied(s, 0.0) for s in seeds) and all(is_varied(s, 1.0) for s in seeds)
    # Held out or not is the seed's alone: as many varied setups held out as in training.
    held_out = np.array([part_of(f"2d/{s}") == "test" for s in seeds])
    assert abs(varied[held_out].mean() - varied[~held_out].mean()) < 0.08


def test_varied_2d_setups_are_collected_with_their_labels() -> None:
    examples = collect_2d(2031, 2, 3, lambda _: None, varied=1.0)
    assert examples.names == ["2d/2031", "2d/2032"] and len(examples) == 6
    for strips, labels in zip(examples.strips, examples.labels, strict=True):
        assert strips.shape == (STRIPS, STRIP_H, STRIP_W, 3) and labels.shape == (STRIPS,)
    # Each side's fifteen are on the points and the bar, or borne off: never more.
    for labels in examples.labels:
        counts = [count_of(int(k)) for k in labels]
        assert sum(c for c in counts if c > 0) <= 15 and -sum(c for c in counts if c < 0) <= 15
    assert kind_of("2d/2031", 1.0) == "2d-varied" and kind_of("2d/2031", 0.0) == "2d"
