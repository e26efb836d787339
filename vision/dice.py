# SPDX-License-Identifier: MIT
"""Read six-sided dice from a top-down photo: where each die is, the face it shows, how sure.

Works on any photo without calibration. Two small networks, run by OpenCV's ``dnn`` module from
ONNX files shipped in ``vision/models`` (trained by ``tools/train_dice.py``):

- a fully convolutional *detector* on the grey image, run on an image pyramid (each level half
  the size of the one before): at every level it finds dice between :data:`DET_MIN` and
  :data:`DET_MAX` pixels across, as a centre heat map with the box's offset and size at one
  cell per :data:`DET_STRIDE` pixels. The levels' boxes are pooled and overlaps suppressed;
- a *face classifier* on a square colour crop around each box (:data:`CLS_SIZE` pixels, the box
  grown by :data:`CLS_MARGIN`), with seven classes: faces 1 to 6 and "not a die". Its logits
  are divided by a temperature fitted on photos kept out of training, and its probabilities
  averaged over the crop turned four ways, so the probability of the face it reads is a
  confidence to go by.

A box whose crop is more likely "not a die" than any face is dropped; of the rest, the dice of
the photo's one size are kept, one reading per die (:func:`size_consistent`): pips boxed as dice
in a big photo, a tray round its dice and boxes between two dice go. A photo of more than
:data:`PIXEL_BUDGET` pixels is shrunk for the detector, and its faces read at full size.

The networks are loaded once, on first use. OpenCV's ``dnn`` networks are not safe to run from
several threads at once, so each forward pass holds a lock.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Final

import cv2
import numpy as np

from vision.stem import space_to_depth

#: The ONNX files, shipped as package data.
MODEL_DIR: Final = Path(__file__).resolve().parent / "models"
DETECTOR_FILE: Final = MODEL_DIR / "dice_detector.onnx"
CLASSIFIER_FILE: Final = MODEL_DIR / "dice_face.onnx"

#: The detector's output has one cell per this many input pixels.
DET_STRIDE: Final = 4
#: The detector's input sides must be multiples of this (its coarsest feature map).
DET_MULTIPLE: Final = 16
#: Dice this many pixels across (the box's longer side) at a pyramid level are found there.
DET_MIN: Final = 8.0
DET_MAX: Final = 32.0
#: The grey the detector's input is padded with (also what it saw past the edges in training).
DET_PAD: Final = 127
#: The most pixels the pyramid starts from; bigger photos are shrunk first (a 12 MP photo to
#: about 1480 x 1110), so the time per photo has a bound whatever the camera, and a 4:3 frame
#: keeps as many pixels as a square one.
PIXEL_BUDGET: Final = 1280 * 1280
#: Pyramid levels smaller than this (shorter side, pixels) are not run.
MIN_LEVEL_SIDE: Final = 24
#: Looking in a part of an image, the detector is given this much of the image round it (level
#: pixels): its centre heat at a spot weighs a neighbourhood about this wide. With it, the boxes
#: found in a part of a rendered board were those of the whole board to 0.0002 pixel (with 48,
#: their heat differed by up to 0.1).
DET_CONTEXT: Final = 80
#: Centre heat above which a peak becomes a candidate box.
DET_THRESHOLD: Final = 0.3
#: The detector's boxes overlapping a stronger one by more than this IoU are dropped.
DET_NMS_IOU: Final = 0.45
#: Readings overlapping a better one by more than this are dropped (see
#: :func:`size_consistent`): dice lie side by side, and boxes on two touching dice overlap by
#: less; the detector's looser :data:`DET_NMS_IOU` leaves the classifier a choice first.
NMS_IOU: Final = 0.3
#: Dice in one photo are about one size: readings within this ratio of each other's size back
#: each other as the photo's die size (see :func:`size_consistent`).
SIZE_BAND: Final = 1.5
#: A box with this share of its area in another :data:`CONTAINER` times its size or more
#: lies in it. A pip is a third of its die or less, a die a third of its tray or less; two
#: real dice in one photo differ by less than half (a near one and a far one).
CONTAINED: Final = 0.6
CONTAINER: Final = 2.0
#: How much confidence a reading's size off the photo's die size costs it, per
#: :data:`SIZE_BAND` off, when two readings compete for one die.
SIZE_COST: Final = 0.2
#: What a reading lying in a bigger one counts for the photo's die size, against 1 for one
#: lying free: a pip boxed in its die, but also a die in its tray.
HELD_WEIGHT: Final = 0.35
#: A reading this many times bigger or smaller than the photo's die size is no die: a pip, a
#: tray, a print on the table.
SIZE_OUTLIER: Final = 2.5

#: A box with this share of its area inside a better box is part of that one's die.
NESTED: Final = 0.7
#: ... when the better box's area is at most this many times its own.
NESTED_GROWTH: Final = 3.5

#: The classifier's input: a CLS_SIZE x CLS_SIZE colour crop.
CLS_SIZE: Final = 32
#: The crop's side is the box's longer side times this.
CLS_MARGIN: Final = 1.3
#: Class index of "not a die" in the classifier's output (faces 1..6 are 0..5).
NOT_A_DIE: Final = 6
#: The classifier reads each crop as it is and turned by one, two and three quarter turns.
VIEWS: Final = 4
#: Readings at or above this confidence are right almost always (see ``bench/vision_dice.py``).
CONFIDENT: Final = 0.9


@dataclass(frozen=True, slots=True)
class DieReading:
    """One die seen in a photo.

    :ivar value: the face on top, 1 to 6.
    :ivar box: ``(x, y, w, h)`` of the die in image pixels.
    :ivar confidence: how likely the value is right, 0 to 1 (on held-out photos, readings at
        0.9 or more are right 99 times in 100).
    """

    value: int
    box: tuple[int, int, int, int]
    confidence: float


class DiceModelError(RuntimeError):
    """A network file of the dice reader is missing or unreadable (an incomplete install)."""


_lock = threading.Lock()


def _load(path: Path, classic: bool = False) -> cv2.dnn.Net:
    """The network at ``path``; ``classic``: on OpenCV's classic engine where there are two."""
    if not path.is_file():
        raise DiceModelError(
            f"the dice reader's network {path} is missing: reinstall bgboard (or run tools/train_dice.py to make it)"
        )
    engine = getattr(cv2.dnn, "ENGINE_CLASSIC", None) if classic else None
    try:
        return cv2.dnn.readNetFromONNX(str(path)) if engine is None else cv2.dnn.readNetFromONNX(str(path), engine)
    except cv2.error as exc:
        raise DiceModelError(f"the dice reader's network {path} cannot be read: {exc}") from exc


@cache
def _detector() -> cv2.dnn.Net:
    return _load(DETECTOR_FILE)


@cache
def _classifier() -> cv2.dnn.Net:
    # OpenCV 5's new engine runs the classifier's small full-size convolutions a sixth slower
    # than its classic one (6 crops: 4.0 ms against 3.0); the detector it runs faster.
    return _load(CLASSIFIER_FILE, classic=True)


def _as_bgr(image: object) -> np.ndarray:
    """``image`` as a 3-channel BGR uint8 array, or a clear error."""
    if not isinstance(image, np.ndarray):
        raise TypeError(f"expected a numpy array (a BGR image), got {type(image).__name__}")
    if image.dtype != np.uint8:
        raise TypeError(f"expected a uint8 image, got dtype {image.dtype}")
    if image.size == 0:
        raise ValueError(f"expected a non-empty image, got shape {image.shape}")
    if image.ndim == 2:
        return cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    if image.ndim == 3 and image.shape[2] == 3:
        return image
    if image.ndim == 3 and image.shape[2] == 4:
        return cv2.cvtColor(image, cv2.COLOR_BGRA2BGR)
    if image.ndim == 3 and image.shape[2] == 1:
        return cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    raise ValueError(f"expected an image of shape (h, w), (h, w, 3) or (h, w, 4), got {image.shape}")


def detector_input(grey: np.ndarray) -> np.ndarray:
    """The detector's input blob for one grey level: padded to :data:`DET_MULTIPLE`, scaled,
    on cells (the detector's first layer is folded, see :mod:`vision.stem`).

    :param grey: a uint8 grey image.
    :returns: a float32 array of shape ``(1, 4, H/2, W/2)``, ``H`` and ``W`` multiples of 16.
    """
    h, w = grey.shape
    ph, pw = -h % DET_MULTIPLE, -w % DET_MULTIPLE
    if ph or pw:
        grey = cv2.copyMakeBorder(grey, 0, ph, 0, pw, cv2.BORDER_CONSTANT, value=DET_PAD)
    return space_to_depth((grey.astype(np.float32) * (1.0 / 255.0) - 0.5)[None, None])


def pyramid_scales(height: int, width: int) -> list[float]:
    """The scales the detector runs at for an image of ``height`` x ``width``.

    The first is 1 (or less, for images of more than :data:`PIXEL_BUDGET` pixels); each next
    one halves it, until the level's shorter side would fall under :data:`MIN_LEVEL_SIDE` or
    dice filling the image are already in range.
    """
    scale = min(1.0, math.sqrt(PIXEL_BUDGET / max(1, height * width)))
    scales = []
    while min(height, width) * scale >= MIN_LEVEL_SIDE:
        scales.append(scale)
        # A die at most as big as the image is in range at this level: no need to go further.
        if max(height, width) * scale <= DET_MAX:
            break
        scale /= 2.0
    return scales


def decode_heat(output: np.ndarray, threshold: float) -> np.ndarray:
    """Candidate boxes from one detector output, in the level's pixels.

    :param output: the detector's ``(1, 5, h, w)`` output: centre heat, the centre's offset
        from the cell's corner (x, y, in cells), log of the box's width and height in cells.
    :returns: ``(n, 5)`` rows of ``x, y, w, h, score``.
    """
    heat = output[0, 0]
    peaks = (heat >= cv2.dilate(heat, np.ones((3, 3), np.uint8))) & (heat > threshold)
    ys, xs = np.nonzero(peaks)
    if len(xs) == 0:
        return np.zeros((0, 5), np.float32)
    cx = (xs + output[0, 1, ys, xs]) * DET_STRIDE
    cy = (ys + output[0, 2, ys, xs]) * DET_STRIDE
    w = np.exp(output[0, 3, ys, xs]) * DET_STRIDE
    h = np.exp(output[0, 4, ys, xs]) * DET_STRIDE
    return np.stack([cx - w / 2, cy - h / 2, w, h, heat[ys, xs]], axis=1).astype(np.float32)


def _run(net: cv2.dnn.Net, blob: np.ndarray) -> np.ndarray:
    with _lock:
        net.setInput(blob)
        return np.asarray(net.forward(), np.float32)


def _run_detector(blob: np.ndarray) -> np.ndarray:
    return _run(_detector(), blob)


def detect(
    bgr: np.ndarray,
    threshold: float = DET_THRESHOLD,
    forward: Callable[[np.ndarray], np.ndarray] = _run_detector,
    scales: Sequence[float] | None = None,
    regions: Sequence[tuple[float, float, float, float]] | None = None,
) -> np.ndarray:
    """Boxes of dice in a BGR image, before their faces are read.

    :param threshold: the least centre heat of a box.
    :param forward: runs the detector on one input blob (the shipped network by default).
    :param scales: the pyramid levels to run, when the dice's size is known beforehand (as on a
        calibrated board); by default :func:`pyramid_scales`.
    :param regions: where to look, as ``(x0, y0, x1, y1)`` in image pixels; by default the
        whole image. Only boxes centred in one of them are found; the detector sees
        :data:`DET_CONTEXT` pixels round each, on the grid it has on the whole image, so that
        it finds the dice there as it would in the whole image.
    :returns: ``(n, 5)`` rows of ``x, y, w, h, score`` in image pixels, best first.
    """
    grey = cv2.cvtColor(bgr, cv2.COLOR_BGR2GRAY)
    height, width = grey.shape
    found = []
    for scale in pyramid_scales(height, width) if scales is None else scales:
        lw, lh = max(1, round(width * scale)), max(1, round(height * scale))
        level = grey if (lw, lh) == (width, height) else cv2.resize(grey, (lw, lh), interpolation=cv2.INTER_AREA)
        sx, sy = lw / width, lh / height
        if regions is None:
            windows = [(0, 0, lw, lh)]
        else:
            windows = [_window((x0 * sx, y0 * sy, x1 * sx, y1 * sy), lw, lh) for x0, y0, x1, y1 in regions]
        for wx0, wy0, wx1, wy1 in windows:
            boxes = decode_heat(forward(detector_input(level[wy0:wy1, wx0:wx1])), threshold)
            if not len(boxes):
                continue
            boxes[:, 0] += wx0
            boxes[:, 1] += wy0
            boxes[:, [0, 2]] /= sx
            boxes[:, [1, 3]] /= sy
            if regions is not None:
                cx, cy = boxes[:, 0] + boxes[:, 2] / 2, boxes[:, 1] + boxes[:, 3] / 2
                inside = np.zeros(len(boxes), bool)
                for x0, y0, x1, y1 in regions:
                    inside |= (cx >= x0) & (cx < x1) & (cy >= y0) & (cy < y1)
                boxes = boxes[inside]
            if len(boxes):
                found.append(boxes)
    if not found:
        return np.zeros((0, 5), np.float32)
    boxes = np.concatenate(found)
    keep = cv2.dnn.NMSBoxes(boxes[:, :4].tolist(), boxes[:, 4].tolist(), threshold, DET_NMS_IOU)
    return _drop_nested(boxes[np.asarray(keep, dtype=np.int64).reshape(-1)])


def _window(region: tuple[float, float, float, float], width: int, height: int) -> tuple[int, int, int, int]:
    """The part of a pyramid level the detector sees for a region of it: the region with
    :data:`DET_CONTEXT` round it, its start on the detector's coarsest grid (as in the whole
    level, so that the cells fall where they fall there), its end at one or the level's end."""
    x0, y0, x1, y1 = region

    def span(a: float, b: float, size: int) -> tuple[int, int]:
        start = max(0, math.floor((a - DET_CONTEXT) / DET_MULTIPLE) * DET_MULTIPLE)
        end = min(size, math.ceil((b + DET_CONTEXT) / DET_MULTIPLE) * DET_MULTIPLE)
        return start, max(start + 1, end)

    (wx0, wx1), (wy0, wy1) = span(x0, x1, width), span(y0, y1, height)
    return wx0, wy0, wx1, wy1


def _drop_nested(boxes: np.ndarray) -> np.ndarray:
    """Boxes (best first) without those lying mostly inside a better one.

    Dice do not lie inside each other: a small box within a die's box is a part of that die
    (a group of its pips, one face's corner) seen at a finer level of the pyramid.
    """
    kept: list[int] = []
    for i, (x, y, w, h, _) in enumerate(boxes):
        inside = False
        for j in kept:
            kx, ky, kw, kh, _ = boxes[j]
            overlap = max(0.0, min(x + w, kx + kw) - max(x, kx)) * max(0.0, min(y + h, ky + kh) - max(y, ky))
            # A box round several dice would swallow whole dice: only one not much bigger
            # than the part is its die.
            if overlap >= NESTED * w * h and kw * kh <= NESTED_GROWTH * w * h:
                inside = True
                break
        if not inside:
            kept.append(i)
    return boxes[kept]


def iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pairwise IoU of ``(n, 4)`` and ``(m, 4)`` boxes ``x, y, w, h``."""
    ax0, ay0, ax1, ay1 = a[:, 0], a[:, 1], a[:, 0] + a[:, 2], a[:, 1] + a[:, 3]
    bx0, by0, bx1, by1 = b[:, 0], b[:, 1], b[:, 0] + b[:, 2], b[:, 1] + b[:, 3]
    iw = np.clip(np.minimum(ax1[:, None], bx1[None]) - np.maximum(ax0[:, None], bx0[None]), 0, None)
    ih = np.clip(np.minimum(ay1[:, None], by1[None]) - np.maximum(ay0[:, None], by0[None]), 0, None)
    inter = iw * ih
    union = (a[:, 2] * a[:, 3])[:, None] + (b[:, 2] * b[:, 3])[None] - inter
    return np.asarray(inter / np.maximum(union, 1e-9))


def face_crop(bgr: np.ndarray, box: tuple[float, float, float, float], margin: float = CLS_MARGIN) -> np.ndarray:
    """The classifier's square crop around ``box`` (x, y, w, h), resized to :data:`CLS_SIZE`.

    Parts of the square outside the image repeat its edge pixels.
    """
    x, y, w, h = box
    side = max(w, h, 1.0) * margin
    cx, cy = x + w / 2, y + h / 2
    x0, y0 = round(cx - side / 2), round(cy - side / 2)
    n = max(1, round(side))
    height, width = bgr.shape[:2]
    top, left = max(0, -y0), max(0, -x0)
    bottom, right = max(0, y0 + n - height), max(0, x0 + n - width)
    patch = bgr[max(0, y0) : min(height, y0 + n), max(0, x0) : min(width, x0 + n)]
    if patch.size == 0:
        patch = np.full((n, n, 3), DET_PAD, np.uint8)
    elif top or left or bottom or right:
        patch = cv2.copyMakeBorder(patch, top, bottom, left, right, cv2.BORDER_REPLICATE)
    shrink = n > CLS_SIZE
    return cv2.resize(patch, (CLS_SIZE, CLS_SIZE), interpolation=cv2.INTER_AREA if shrink else cv2.INTER_LINEAR)


def classifier_input(crops: np.ndarray) -> np.ndarray:
    """The classifier's input blob for ``(n, CLS_SIZE, CLS_SIZE, 3)`` uint8 crops.

    Each crop is normalised to zero mean and unit spread over its pixels, so the light on the
    dice matters little.
    """
    x = crops.astype(np.float32)
    mean = x.mean(axis=(1, 2, 3), keepdims=True)
    std = x.std(axis=(1, 2, 3), keepdims=True)
    x = (x - mean) / np.maximum(std, 8.0)
    return np.ascontiguousarray(x.transpose(0, 3, 1, 2))


def _run_classifier(blob: np.ndarray) -> np.ndarray:
    return _run(_classifier(), blob)


def face_probabilities(
    crops: np.ndarray,
    forward: Callable[[np.ndarray], np.ndarray] = _run_classifier,
    views: int = VIEWS,
    upright: np.ndarray | None = None,
) -> np.ndarray:
    """Calibrated class probabilities ``(n, 7)`` (faces 1..6, not a die) for crops.

    :param crops: ``(n, CLS_SIZE, CLS_SIZE, 3)`` uint8 crops (see :func:`face_crop`).
    :param forward: runs the classifier on one input blob (the shipped network by default).
    :param views: how many of the crop's quarter turns are read and averaged (1 to
        :data:`VIEWS`); fewer is quicker, but only the four together give a confidence to go by.
    :param upright: the crops' probabilities as they stand (``views=1``), when already read:
        only the other turns are read then.
    """
    if len(crops) == 0:
        return np.zeros((0, NOT_A_DIE + 1), np.float32)
    n = len(crops)
    first = 0 if upright is None else 1
    if views <= first:
        return np.asarray(upright, np.float32)
    # The crop seen four ways (turned by quarter turns) and the views' probabilities averaged:
    # a die's face is the same face turned, and the net's mistakes on one view are seldom
    # made on all four.
    turned = np.concatenate([np.rot90(crops, k, axes=(1, 2)) for k in range(first, views)])
    logits = forward(classifier_input(np.ascontiguousarray(turned))).reshape((views - first) * n, -1)
    logits = logits - logits.max(axis=1, keepdims=True)
    p = np.exp(logits)
    p /= p.sum(axis=1, keepdims=True)
    total = p.reshape(views - first, n, -1).sum(axis=0)
    if upright is not None:
        total += upright
    return np.asarray(total / views, np.float32)


def read_dice(image: np.ndarray) -> list[DieReading]:
    """Find the dice in a top-down photo and read their faces.

    :param image: a BGR (or grey, or BGRA) uint8 image of any size.
    :returns: one reading per die, in reading order (top to bottom, then left to right).
    :raises TypeError: if ``image`` is not a uint8 numpy array.
    :raises ValueError: if it does not have the shape of an image.
    """
    readings = size_consistent(candidates(image)[1])
    readings.sort(key=lambda r: (r.box[1] + r.box[3] / 2, r.box[0] + r.box[2] / 2))
    return readings


def candidates(image: np.ndarray) -> tuple[np.ndarray, list[DieReading]]:
    """What :func:`read_dice` weighs before it keeps the dice of the photo's one size: the
    detector's boxes, ``(n, 5)`` rows of ``x, y, w, h, score`` in image pixels, and the
    readings of those read as dice (more likely a face than "not a die"), in the boxes' order.

    :raises TypeError: if ``image`` is not a uint8 numpy array.
    :raises ValueError: if it does not have the shape of an image.
    """
    bgr = _as_bgr(image)
    height, width = bgr.shape[:2]
    scale = min(1.0, math.sqrt(PIXEL_BUDGET / (height * width)))
    # A big photo is shrunk once for the detector: the pyramid's levels and the colour
    # conversion then cost what they cost on the budget's pixels. The faces are read from the
    # full photo, where the pips are sharpest.
    small = bgr if scale == 1.0 else cv2.resize(bgr, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    boxes = detect(small)
    if len(boxes) == 0:
        return boxes, []
    if small is not bgr:
        boxes[:, [0, 2]] *= width / small.shape[1]
        boxes[:, [1, 3]] *= height / small.shape[0]
    crops = np.stack([face_crop(bgr, tuple(b[:4])) for b in boxes])
    probs = face_probabilities(crops)
    readings = []
    for box, p in zip(boxes, probs, strict=True):
        face = int(np.argmax(p[:NOT_A_DIE]))
        if p[NOT_A_DIE] >= p[face]:
            continue
        x, y, w, h = (round(float(v)) for v in box[:4])
        readings.append(DieReading(face + 1, (x, y, w, h), float(p[face])))
    return boxes, readings


def size_consistent(readings: Sequence[DieReading]) -> list[DieReading]:
    """The readings that are dice of the photo's one size, one per die.

    The photo's die size is the size most readings agree on (within :data:`SIZE_BAND`),
    each counted by its confidence, and less for one lying in a much bigger box (see
    :data:`CONTAINED`): a pip boxed as a die lies in its die's box, and reads as a 1 with
    confidence. Then a reading is kept unless its size is :data:`SIZE_OUTLIER` times off, or
    it clashes with one kept before it: overlaps it by more than :data:`NMS_IOU`, or one of
    the two lies in the other (a pip in its die, a tray round its dice). Readings of the die
    size come first, then those not lying between two dice (clashing with two that do not
    clash), then the more confident, less a little for a size off the die size.
    """
    if len(readings) < 2:
        return list(readings)
    boxes = np.array([r.box for r in readings], np.float64)
    conf = np.array([r.confidence for r in readings])
    size = np.maximum(boxes[:, 2], boxes[:, 3]).clip(1.0)
    # inside[i, j]: reading j's box lies mostly in reading i's, a good deal bigger. Two loosely
    # boxed dice side by side reach into each other, but neither is much bigger.
    x0, y0 = boxes[:, 0], boxes[:, 1]
    x1, y1 = x0 + boxes[:, 2], y0 + boxes[:, 3]
    iw = np.clip(np.minimum(x1[:, None], x1[None]) - np.maximum(x0[:, None], x0[None]), 0, None)
    ih = np.clip(np.minimum(y1[:, None], y1[None]) - np.maximum(y0[:, None], y0[None]), 0, None)
    area = (boxes[:, 2] * boxes[:, 3]).clip(1.0)
    inside = (iw * ih >= CONTAINED * area[None, :]) & (size[:, None] >= CONTAINER * size[None, :])
    ratio = np.abs(np.log(size[:, None] / size[None, :]))
    near = ratio < math.log(SIZE_BAND)
    # A reading in a much bigger box counts half: a pip in its die (or a die in its tray).
    held = inside.any(axis=0)
    weight = np.where(held, HELD_WEIGHT, 1.0) * conf
    support = (near * weight[None, :]).sum(axis=1)
    best = int(np.argmax(support))
    members = near[best]
    typical = float(np.exp(np.average(np.log(size[members]), weights=weight[members] + 1e-6)))
    off = np.abs(np.log(size / typical))
    clash = (iou(boxes, boxes) > NMS_IOU) | inside | inside.T
    np.fill_diagonal(clash, False)
    # A box clashing with two that do not clash with each other lies between two dice.
    apart = ~clash
    np.fill_diagonal(apart, False)
    bridging = np.einsum("ij,ik,jk->i", clash, clash, apart) > 0
    merit = conf - SIZE_COST * off / math.log(SIZE_BAND)
    order = sorted(range(len(readings)), key=lambda k: (off[k] >= math.log(SIZE_BAND), bridging[k], -merit[k]))
    kept: list[int] = []
    for i in order:
        if off[i] <= math.log(SIZE_OUTLIER) and not clash[i, kept].any():
            kept.append(i)
    return [readings[i] for i in sorted(kept)]


def classify_face(crop: np.ndarray) -> tuple[int, float]:
    """Read the face of one die from a crop of it.

    :param crop: a BGR (or grey) uint8 image of one die, roughly centred; a tight crop or one
        with a margin around the die both do.
    :returns: ``(value, confidence)``; the confidence is low when the crop shows no die.
    :raises TypeError: if ``crop`` is not a uint8 numpy array.
    :raises ValueError: if it does not have the shape of an image.
    """
    bgr = _as_bgr(crop)
    h, w = bgr.shape[:2]
    probs = face_probabilities(face_crop(bgr, (0.0, 0.0, float(w), float(h)))[None])[0]
    face = int(np.argmax(probs[:NOT_A_DIE]))
    return face + 1, float(probs[face])
