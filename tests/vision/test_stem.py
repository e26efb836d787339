# SPDX-License-Identifier: MIT
"""The folded first layer (vision.stem, tools/stem.py) sums what the plain one does."""

from __future__ import annotations

import numpy as np
import pytest

from tools.stem import folded_weights, split_weights, unfolded_weights
from vision.stem import space_to_depth


def _conv(x: np.ndarray, w: np.ndarray, stride: int, pads: tuple[int, int, int, int]) -> np.ndarray:
    """A plain convolution (one image), padded ``top, left, bottom, right`` with zeros."""
    top, left, bottom, right = pads
    x = np.pad(x, ((0, 0), (top, bottom), (left, right)))
    k = w.shape[2]
    rows = (x.shape[1] - k) // stride + 1
    columns = (x.shape[2] - k) // stride + 1
    out = np.zeros((w.shape[0], rows, columns))
    for i in range(rows):
        for j in range(columns):
            patch = x[:, i * stride : i * stride + k, j * stride : j * stride + k]
            out[:, i, j] = np.tensordot(w, patch, axes=([1, 2, 3], [0, 1, 2]))
    return out


def test_space_to_depth_puts_each_cells_pixels_in_channels() -> None:
    x = np.arange(2 * 3 * 4 * 6, dtype=np.float32).reshape(2, 3, 4, 6)
    cells = space_to_depth(x)
    assert cells.shape == (2, 12, 2, 3)
    for k in range(3):
        for dy in range(2):
            for dx in range(2):
                assert np.array_equal(cells[:, 4 * k + 2 * dy + dx], x[:, k, dy::2, dx::2])


def test_space_to_depth_transposed_swaps_each_channels_rows_and_columns() -> None:
    x = np.arange(2 * 3 * 4 * 6, dtype=np.float32).reshape(2, 3, 4, 6)
    lying = space_to_depth(x, transposed=True)
    assert lying.shape == (2, 12, 3, 2)
    assert lying.flags.c_contiguous
    assert np.array_equal(lying, space_to_depth(x).swapaxes(2, 3))


def test_space_to_depth_wants_an_even_size() -> None:
    with pytest.raises(ValueError, match=r"even"):
        space_to_depth(np.zeros((1, 1, 5, 4), np.float32))


@pytest.mark.parametrize("channels", [1, 9])
def test_the_folded_layer_gives_what_the_stride_two_layer_gives(channels: int) -> None:
    rng = np.random.default_rng(channels)
    x = rng.normal(size=(1, channels, 10, 8))
    w = rng.normal(size=(5, channels, 3, 3))
    plain = _conv(x[0], w, 2, (1, 1, 1, 1))
    folded = _conv(space_to_depth(x)[0], folded_weights(w), 1, (1, 1, 0, 0))
    assert plain.shape == folded.shape == (5, 5, 4)
    np.testing.assert_allclose(folded, plain, atol=1e-9)


def test_unfolding_gives_back_the_stride_two_weights() -> None:
    w = np.random.default_rng(3).normal(size=(4, 9, 3, 3))
    assert np.array_equal(unfolded_weights(folded_weights(w)), w)
    with pytest.raises(ValueError, match=r"folded"):
        unfolded_weights(w)


def test_a_split_join_gives_what_the_joined_convolution_gives() -> None:
    rng = np.random.default_rng(5)
    coarse, fine = rng.normal(size=(6, 3, 4)), rng.normal(size=(4, 6, 8))
    w = rng.normal(size=(5, 10, 1, 1))
    doubled = coarse.repeat(2, axis=1).repeat(2, axis=2)
    joined = _conv(np.concatenate([doubled, fine]), w, 1, (0, 0, 0, 0))
    first, second = split_weights(w, 6)
    split = _conv(coarse, first, 1, (0, 0, 0, 0)).repeat(2, axis=1).repeat(2, axis=2) + _conv(
        fine, second, 1, (0, 0, 0, 0)
    )
    np.testing.assert_allclose(split, joined, atol=1e-9)


def test_split_weights_wants_a_pointwise_convolution_over_both_parts() -> None:
    with pytest.raises(ValueError, match=r"1 x 1"):
        split_weights(np.zeros((5, 10, 3, 3)), 6)
    with pytest.raises(ValueError, match=r"more than 10"):
        split_weights(np.zeros((5, 10, 1, 1)), 10)
