# SPDX-License-Identifier: MIT
"""Training the point reader: the labels of rendered frames, which 2D setups are varied, and
a shipped network loaded back to train further."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tools.train_points import (
    build_network,
    collect_2d,
    export,
    frame_labels,
    is_varied,
    kind_of,
    load_onnx,
    part_of,
    renormalise,
    scene_labels,
)
from vision import points_net
from vision.render import Scene
from vision.strips import CHANNELS, STRIP_H, STRIP_W, STRIPS, count_of, label_of

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


# torch's ONNX export as tools/train_points.py calls it (TorchScript's) warns it is the old one.
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_an_exported_network_loads_back_to_train_further(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    pytest.importorskip("onnx")
    torch.manual_seed(1)
    net = build_network()
    with torch.no_grad():
        for module in net:
            if isinstance(module, torch.nn.BatchNorm2d):
                module.running_mean.normal_(0.0, 0.3)
                module.running_var.uniform_(0.5, 2.0)
                module.weight.uniform_(0.5, 1.5)
                module.bias.normal_(0.0, 0.2)
    net.eval()
    path = tmp_path / "points.onnx"
    export(net, 1.7, path)
    x = np.random.default_rng(2).normal(0.0, 1.0, (64, CHANNELS, STRIP_H, STRIP_W)).astype(np.float32)
    with torch.no_grad():
        want = net(torch.from_numpy(x)).numpy()

    loaded = build_network()
    assert load_onnx(loaded, path) == pytest.approx(1.7)
    loaded.eval()
    with torch.no_grad():
        np.testing.assert_allclose(loaded(torch.from_numpy(x)).numpy(), want, atol=1e-4)
        # Given statistics again, it gives the same.
        renormalise(loaded, x)
        loaded.eval()
        np.testing.assert_allclose(loaded(torch.from_numpy(x)).numpy(), want, atol=1e-4)
    probabilities = points_net.probabilities(x, path)
    np.testing.assert_allclose(probabilities, torch.softmax(torch.from_numpy(want) / 1.7, 1).numpy(), atol=1e-4)
