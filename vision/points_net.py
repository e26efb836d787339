# SPDX-License-Identifier: MIT
"""The learned point reader: a small network that reads the stack on one strip.

It takes the strips of :mod:`vision.strips` (each point, and each half of the bar) and gives,
for each, the probability of every stack it could hold: nothing, or 1 to 15 checkers of either
side (:data:`vision.strips.CLASSES` classes). The network is trained by
``tools/train_points.py`` on rendered frames and shipped as ``vision/models/points.onnx``; it
runs with OpenCV's ``dnn`` module, as the dice networks do. Its logits are already divided by
the temperature fitted on frames kept out of training, so its probabilities are confidences to
go by. The shipped network takes each strip lying down, its rows and columns swapped (see
``tools/stem.py``): OpenCV's ``dnn`` runs its convolutions along the rows, and a strip's rows are
short (a Raspberry Pi's OpenCV 4.11 took twice as long over them).

OpenCV's ``dnn`` networks are not safe to run from several threads at once, so each forward
pass holds a lock.
"""

from __future__ import annotations

import threading
from functools import cache
from pathlib import Path
from typing import Final

import cv2
import numpy as np

from vision.stem import space_to_depth
from vision.strips import CHANNELS, CLASSES, STRIP_H, STRIP_W

#: The network, shipped as package data.
MODEL_FILE: Final = Path(__file__).resolve().parent / "models" / "points.onnx"
#: The networks a board may be read with, by name, the first the one read with unless another
#: reads the board's calibration frame better (see :func:`vision.calibration.calibrate`):
#: ``points``, trained on 2D- and 3D-rendered boards, and ``points-varied``, the same taken
#: further on boards as real tables vary (points the colour of a side's checkers, stacks lined
#: up six or seven, narrow hinged bars, printed logos, cups over the points' tips). The second
#: reads such boards better and its confidence is lower on the others.
NETWORKS: Final = {"points": MODEL_FILE, "points-varied": MODEL_FILE.with_name("points_varied.onnx")}

_lock = threading.Lock()


class PointsModelError(RuntimeError):
    """The point reader's network is missing or unreadable."""


@cache
def _network(path: Path) -> cv2.dnn.Net:
    if not path.is_file():
        raise PointsModelError(f"the point reader's network {path} is missing: run tools/train_points.py to make it")
    try:
        return cv2.dnn.readNetFromONNX(str(path))
    except cv2.error as exc:
        raise PointsModelError(f"the point reader's network {path} cannot be read: {exc}") from exc


def network_file(name: str) -> Path:
    """The file of the network called ``name`` (one of :data:`NETWORKS`).

    :raises PointsModelError: no network has that name.
    """
    try:
        return NETWORKS[name]
    except KeyError:
        raise PointsModelError(f"no point network is called {name!r} (there are {', '.join(NETWORKS)})") from None


def available(path: Path | None = None) -> bool:
    """Whether the network (:data:`MODEL_FILE` unless ``path``) is there to be used."""
    return (path or MODEL_FILE).is_file()


def probabilities(strips: np.ndarray, path: Path | None = None) -> np.ndarray:
    """Class probabilities ``(n, CLASSES)`` for encoded strips ``(n, CHANNELS, STRIP_H, STRIP_W)``."""
    if strips.ndim != 4 or strips.shape[1:] != (CHANNELS, STRIP_H, STRIP_W):
        raise ValueError(f"strips must be (n, {CHANNELS}, {STRIP_H}, {STRIP_W}), not {strips.shape}")
    if len(strips) == 0:
        return np.zeros((0, CLASSES), np.float32)
    net = _network(path or MODEL_FILE)
    with _lock:
        net.setInput(space_to_depth(np.asarray(strips, np.float32), transposed=True))
        logits = np.asarray(net.forward(), np.float32).reshape(len(strips), CLASSES)
    logits -= logits.max(axis=1, keepdims=True)
    p = np.exp(logits)
    p /= p.sum(axis=1, keepdims=True)
    return p
