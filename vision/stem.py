# SPDX-License-Identifier: MIT
"""The input of the networks whose first layer is folded: each 2 x 2 cell's pixels as channels.

The point network and the dice detector begin with a 3 x 3 convolution of stride 2 over few
channels (nine, and one grey), which OpenCV's ``dnn`` runs slowly: it was half the point
network's time and a third of the detector's. The same sums, taken as a 2 x 2 convolution of
stride 1 over the input's 2 x 2 cells (each cell's four pixels as four channels, one zero cell
before the first row and column), give the same outputs in under half the time. The shipped
networks are folded so (``tools/stem.py`` folds a trained network's ONNX file) and take their
input arranged by :func:`space_to_depth`.
"""

from __future__ import annotations

import numpy as np


def space_to_depth(x: np.ndarray, *, transposed: bool = False) -> np.ndarray:
    """``(n, c, h, w)`` as ``(n, 4c, h/2, w/2)``: channel ``4k + 2dy + dx`` holds channel ``k``'s
    pixels at ``(2i + dy, 2j + dx)`` (the order of torch's ``pixel_unshuffle``).

    :param transposed: each channel's cells with their rows and columns swapped,
        ``(n, 4c, w/2, h/2)`` (the channels as they are), for a network turned to take tall
        inputs lying down (see ``tools/stem.py``).
    :raises ValueError: if ``x`` is not four-dimensional with an even height and width.
    """
    if x.ndim != 4 or x.shape[2] % 2 or x.shape[3] % 2:
        raise ValueError(f"expected (n, c, h, w) with h and w even, got shape {x.shape}")
    n, c, h, w = x.shape
    cells = x.reshape(n, c, h // 2, 2, w // 2, 2)
    if transposed:
        return np.ascontiguousarray(cells.transpose(0, 1, 3, 5, 4, 2).reshape(n, 4 * c, w // 2, h // 2))
    return np.ascontiguousarray(cells.transpose(0, 1, 3, 5, 2, 4).reshape(n, 4 * c, h // 2, w // 2))
