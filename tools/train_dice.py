# SPDX-License-Identifier: MIT
"""Train the dice reader's networks (:mod:`vision.dice`) and export them to ONNX.

Run from the project root, with the ``train`` extra installed (``pip install -e '.[train]'``)::

    python tools/train_dice.py [--out vision/models] [--seed 2026] [--threads 2]

Reads the labelled photos in ``../shared/data/dice`` (see :func:`load_photos`), trains the
detector, mines its mistakes on the training photos, makes synthetic negatives (see below),
trains the face classifier, fits the classifier's temperature on the validation photos, writes
``dice_detector.onnx`` and ``dice_face.onnx`` and checks that OpenCV's ``dnn`` gives the same
outputs as torch. ``--stages`` runs only some of these (``detector``, ``mine``, ``negatives``,
``classifier``, ``export``), from what earlier runs left in ``--work``. Without a trained
detector there (and without the ``detector`` stage), the shipped ``dice_detector.onnx`` is run
with OpenCV to mine, and shipped as it is (``--det-onnx`` names another file)::

    python tools/train_dice.py --stages mine,negatives,classifier,export

The synthetic negatives teach the classifier's "not a die" things that are no dice but that
the detector boxes as dice: printed pages (lines of text and numbers in OpenCV's Hershey
fonts, rulers, ArUco and AprilTag markers, blocks of cells), most of them photographed at a
slant on a table under a lamp; boards drawn by :mod:`vision.render` in random styles, mostly
with the doubling cube on them in random colours (checkers, points, frame, markers, the cube;
nothing touching a die); and doubling cubes drawn alone (numbers 2 to 64 in several fonts, any
colours, turn and lean). From the pages and boards they are the boxes the detector really draws
there (see :func:`synthetic_negatives`); their seeds are their own (the tests and benchmarks use
other ones, and the marker sheet of :mod:`vision.markers` is never among them). As many drawn
dice go with them (the rendered boards' own, and dice drawn as the cubes are): with negatives
alone, the classifier learnt that whatever looks drawn is no die. Together they are
:data:`SYNTHETIC_SHARE` of the classifier's crops; the temperature is fitted on the real
validation photos alone.

The split (:func:`assign_parts`) is by *group of photos*, so copies of one photo never end up on
both sides: the Roboflow export holds the same photo several times (rotated, flipped, re-encoded,
and the nell-byler photos turned grey), which a split by file name would leak. Photos are
grouped when their labels match (same faces, boxes within 2% of the image) under one of the
eight rotations and flips; a group's key is the smallest ``dataset/name`` in it, and
``crc32(key) % 5`` picks the part: 0 test (held out, never used for training or tuning),
1 validation (model choice, thresholds, temperature), 2 to 4 training.

Only this script needs torch; the shipped reader runs the ONNX files with OpenCV alone.
"""

from __future__ import annotations

import argparse
import json
import math
import pickle
import shutil
import sys
import time
import zlib
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tools.stem import fold_stem, split_upsampled  # noqa: E402
from vision import dice as reader  # noqa: E402

#: The shared, read-only dice photos (never copied into the repository).
DATA_DIR = ROOT.parent / "shared" / "data" / "dice"
#: Data sets: name -> (images folder, labels folder), relative to DATA_DIR.
DATASETS = {
    "nell-byler": ("nell-byler/data/JPEGImages", "nell-byler/data/Annotations"),
    "rune55-valid": ("rune55-valid/images", "rune55-valid/labels"),
}
PARTS = ("test", "val", "train", "train", "train")


@dataclass
class Photo:
    """One labelled photo.

    :ivar dataset: the data set's name (a key of :data:`DATASETS`).
    :ivar name: the file name without extension.
    :ivar path: the image file.
    :ivar labels: ``(n, 5)`` rows of face value (1..6), then the box's centre x, centre y,
        width and height as fractions of the image's size (YOLO's convention).
    :ivar part: ``"train"``, ``"val"`` or ``"test"`` once :func:`assign_parts` has run.
    """

    dataset: str
    name: str
    path: Path
    labels: np.ndarray
    part: str = ""
    _boxes: np.ndarray | None = field(default=None, repr=False)

    @property
    def key(self) -> str:
        """``dataset/name``: unique over all photos."""
        return f"{self.dataset}/{self.name}"

    def image(self) -> np.ndarray:
        """The photo, BGR."""
        image = cv2.imread(str(self.path), cv2.IMREAD_COLOR)
        if image is None:
            raise OSError(f"cannot read {self.path}")
        return image

    def boxes(self, width: int, height: int) -> np.ndarray:
        """``(n, 4)`` boxes ``x, y, w, h`` in pixels for an image of ``width`` x ``height``."""
        cx, cy, w, h = (self.labels[:, i] for i in range(1, 5))
        return np.stack([(cx - w / 2) * width, (cy - h / 2) * height, w * width, h * height], axis=1)

    @property
    def values(self) -> np.ndarray:
        """The labelled face values, 1..6."""
        return self.labels[:, 0].astype(np.int64)


def _read_labels(path: Path) -> np.ndarray:
    rows = []
    for line in path.read_text().splitlines():
        parts = line.split()
        if len(parts) == 5:
            cls, *box = (float(p) for p in parts)
            rows.append([cls + 1, *box])
    return np.asarray(rows, np.float64).reshape(-1, 5)


def load_photos(data_dir: Path = DATA_DIR) -> list[Photo]:
    """Every labelled photo of both data sets, each with its part (see :func:`assign_parts`).

    :raises FileNotFoundError: if a data set's folder is missing.
    """
    photos = []
    for dataset, (images, labels) in DATASETS.items():
        label_dir = data_dir / labels
        if not label_dir.is_dir():
            raise FileNotFoundError(f"no labels at {label_dir}")
        for label_file in sorted(label_dir.glob("*.txt")):
            image = data_dir / images / (label_file.stem + ".jpg")
            if label_file.name == "classes.txt" or not image.exists():
                continue
            photos.append(Photo(dataset, label_file.stem, image, _read_labels(label_file)))
    assign_parts(photos)
    return photos


def _dihedral(labels: np.ndarray, k: int) -> np.ndarray:
    """Labels after rotating the image by ``k % 4`` quarter turns, then (``k >= 4``) a mirror."""
    value, x, y, w, h = labels.T
    for _ in range(k % 4):
        x, y, w, h = y, 1 - x, h, w
    if k >= 4:
        x = 1 - x
    return np.stack([value, x, y, w, h], axis=1)


def _same_layout(a: np.ndarray, b: np.ndarray, tolerance: float = 0.02) -> bool:
    distance = np.abs(a[:, None, 1:] - b[None, :, 1:]).max(axis=2)
    distance = np.where(a[:, None, 0] == b[None, :, 0], distance, np.inf)
    return bool((distance.min(axis=1) < tolerance).all() and (distance.min(axis=0) < tolerance).all())


def assign_parts(photos: Sequence[Photo]) -> None:
    """Set each photo's ``part``: copies of a photo (matching labels) always share one.

    See the module's docstring for the rule. Deterministic: depends only on the labels and the
    file names.
    """
    parent = list(range(len(photos)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    by_faces: dict[tuple[int, ...], list[int]] = defaultdict(list)
    for i, photo in enumerate(photos):
        by_faces[tuple(sorted(photo.values.tolist()))].append(i)
    for members in by_faces.values():
        for n, i in enumerate(members):
            for j in members[n + 1 :]:
                if root(i) != root(j) and any(
                    _same_layout(photos[i].labels, _dihedral(photos[j].labels, k)) for k in range(8)
                ):
                    parent[root(j)] = root(i)
    groups: dict[int, list[int]] = defaultdict(list)
    for i in range(len(photos)):
        groups[root(i)].append(i)
    for members in groups.values():
        key = min(photos[i].key for i in members)
        part = PARTS[zlib.crc32(key.encode()) % len(PARTS)]
        for i in members:
            photos[i].part = part


def held_out(data_dir: Path = DATA_DIR) -> list[Photo]:
    """The held-out (test) photos of both data sets."""
    return [p for p in load_photos(data_dir) if p.part == "test"]


# -- matching readings to labels -------------------------------------------------------------------


def match(truth: np.ndarray, found: np.ndarray, threshold: float = 0.5) -> list[tuple[int, int]]:
    """Pairs ``(truth index, found index)`` with IoU >= ``threshold``, greedily by IoU, one to one."""
    if len(truth) == 0 or len(found) == 0:
        return []
    overlap = reader.iou(truth, found)
    pairs = []
    order = np.dstack(np.unravel_index(np.argsort(-overlap, axis=None), overlap.shape))[0]
    used_t: set[int] = set()
    used_f: set[int] = set()
    for t, f in order:
        if overlap[t, f] < threshold:
            break
        if t in used_t or f in used_f:
            continue
        used_t.add(int(t))
        used_f.add(int(f))
        pairs.append((int(t), int(f)))
    return pairs


# -- augmentation ----------------------------------------------------------------------------------


def random_grey(bgr: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A grey version of ``bgr`` with jittered channel weights (cameras and dyes differ)."""
    if rng.random() < 0.15:
        weights = rng.dirichlet([1.0, 1.0, 1.0])
    else:
        weights = np.clip(np.array([0.114, 0.587, 0.299]) + rng.normal(0, 0.06, 3), 0.02, None)
        weights /= weights.sum()
    return np.clip(bgr.astype(np.float32) @ weights.astype(np.float32), 0, 255).astype(np.uint8)


def photometric(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Light, contrast, gamma, blur, noise and JPEG changes, each at random."""
    x = image.astype(np.float32) / 255.0
    if rng.random() < 0.8:
        x = np.clip(x, 0, 1) ** math.exp(rng.normal(0, 0.2))
    if rng.random() < 0.8:
        x = (x - 0.5) * math.exp(rng.normal(0, 0.2)) + 0.5 + rng.normal(0, 0.08)
    if image.ndim == 3 and rng.random() < 0.5:
        x = x * np.exp(rng.normal(0, 0.1, 3)).astype(np.float32)
    x = np.clip(x * 255.0, 0, 255)
    if rng.random() < 0.3:
        x = cv2.GaussianBlur(x, (0, 0), rng.uniform(0.4, 1.3))
    if rng.random() < 0.4:
        x = x + rng.normal(0, rng.uniform(1, 8), x.shape).astype(np.float32)
    out = np.clip(x, 0, 255).astype(np.uint8)
    if rng.random() < 0.3:
        ok, data = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(30, 95))])
        if ok:
            out = cv2.imdecode(data, cv2.IMREAD_UNCHANGED).reshape(out.shape)
    return out


def _dihedral_image(image: np.ndarray, boxes: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Rotate an image (and its ``x, y, w, h`` boxes) by ``k % 4`` quarter turns, then mirror if ``k >= 4``."""
    boxes = boxes.copy()
    for _ in range(k % 4):
        w = image.shape[1]
        image = np.rot90(image)  # counter-clockwise: (x, y) -> (y, w - x)
        x, y, bw, bh = boxes.T.copy()
        boxes = np.stack([y, w - x - bw, bh, bw], axis=1)
    if k >= 4:
        w = image.shape[1]
        image = image[:, ::-1]
        boxes[:, 0] = w - boxes[:, 0] - boxes[:, 2]
    return np.ascontiguousarray(image), boxes


# -- detector --------------------------------------------------------------------------------------

#: Dice bigger than this (pixels) are shrunk to it before the classifier's crop is augmented.
REGION_DIE = 72.0
#: Detector boxes above this heat are mined for the classifier (below the reader's threshold).
MINE_THRESHOLD = 0.15
#: Training patches are this many pixels square (at the pyramid level's scale).
PATCH = 160
#: Dice this much outside [DET_MIN, DET_MAX] neither count as dice nor as background.
IGNORE_MARGIN = 1.3


def detector_sample(
    image: np.ndarray, boxes: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One detector training patch, made the way the reader makes a pyramid level.

    :returns: the grey patch ``(PATCH, PATCH)`` uint8, the centre heat target, a mask of where
        the heat counts, the regression target ``(4, g, g)`` (offsets, log sizes) and the mask of
        the cells holding a centre.
    """
    height, width = image.shape[:2]
    sizes = np.maximum(boxes[:, 2], boxes[:, 3]) if len(boxes) else np.zeros(0)
    if len(boxes) and rng.random() < 0.7:
        ref = int(rng.integers(len(boxes)))
        target = math.exp(rng.uniform(math.log(reader.DET_MIN * 0.8), math.log(reader.DET_MAX * 1.2)))
        scale = target / max(sizes[ref], 1.0)
        centre = boxes[ref, :2] + boxes[ref, 2:] / 2
    else:
        scale = math.exp(rng.uniform(math.log(0.03), math.log(1.6)))
        centre = np.array([rng.uniform(0, width), rng.uniform(0, height)])
    scale = min(scale, 2.0)
    lw, lh = max(1, round(width * scale)), max(1, round(height * scale))
    grey = random_grey(image, rng)
    interpolation = cv2.INTER_AREA if scale < 1 else cv2.INTER_LINEAR
    level = cv2.resize(grey, (lw, lh), interpolation=interpolation)
    lboxes = boxes * np.array([lw / width, lh / height, lw / width, lh / height])
    # The patch's corner: the reference point lands anywhere but the outer tenth.
    cx, cy = centre[0] * lw / width, centre[1] * lh / height
    x0 = round(cx - rng.uniform(0.1, 0.9) * PATCH)
    y0 = round(cy - rng.uniform(0.1, 0.9) * PATCH)
    patch = np.full((PATCH, PATCH), reader.DET_PAD, np.uint8)
    sx0, sy0 = max(0, x0), max(0, y0)
    sx1, sy1 = min(lw, x0 + PATCH), min(lh, y0 + PATCH)
    if sx1 > sx0 and sy1 > sy0:
        patch[sy0 - y0 : sy1 - y0, sx0 - x0 : sx1 - x0] = level[sy0:sy1, sx0:sx1]
    lboxes = lboxes - np.array([x0, y0, 0, 0])
    patch, lboxes = _dihedral_image(patch, lboxes, int(rng.integers(8)))
    patch = photometric(patch, rng)
    return (patch, *detector_targets(lboxes))


def detector_targets(boxes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Heat target, heat mask, regression target and regression mask for boxes in a patch.

    A die in range gets a Gaussian of heat at its centre, 1 in the cell holding it. Its box is
    learnt in the 3 x 3 cells around that one (the heat's peak may land next to it), as the
    offset of the centre from each cell's corner and the log of its size. Dice a little out of
    range (up to :data:`IGNORE_MARGIN`) neither count for nor against the heat, but their boxes
    are learnt too, so a peak there still gets the right box.
    """
    g = PATCH // reader.DET_STRIDE
    heat = np.zeros((g, g), np.float32)
    heat_mask = np.ones((g, g), np.float32)
    reg = np.zeros((4, g, g), np.float32)
    reg_mask = np.zeros((g, g), np.float32)
    centres = (np.arange(g) + 0.5)[None, :]
    stride = reader.DET_STRIDE
    # Small dice first, so where a big die's cells and a small one's meet, the big one's win.
    for x, y, w, h in sorted(boxes.tolist(), key=lambda b: max(b[2], b[3])):
        size = max(w, h)
        cx, cy = (x + w / 2) / stride, (y + h / 2) / stride
        inside = 0 <= cx < g and 0 <= cy < g
        visible = max(0.0, min(x + w, PATCH) - max(x, 0)) * max(0.0, min(y + h, PATCH) - max(y, 0)) / max(w * h, 1e-6)
        in_range = reader.DET_MIN <= size <= reader.DET_MAX
        near_range = reader.DET_MIN / IGNORE_MARGIN <= size <= reader.DET_MAX * IGNORE_MARGIN
        if (near_range or in_range) and inside and visible > 0.6:
            ix, iy = int(cx), int(cy)
            for jy in range(max(0, iy - 1), min(g, iy + 2)):
                for jx in range(max(0, ix - 1), min(g, ix + 2)):
                    reg[:, jy, jx] = [cx - jx, cy - jy, math.log(w / stride), math.log(h / stride)]
                    reg_mask[jy, jx] = 1.0 if (jx, jy) == (ix, iy) else 0.5
        if in_range and inside and visible > 0.6:
            sigma = max(0.5, 0.15 * size / stride)
            gx = np.exp(-((centres - cx) ** 2) / (2 * sigma**2))
            gy = np.exp(-((centres - cy) ** 2) / (2 * sigma**2))
            heat = np.maximum(heat, gy.T * gx)
            heat[int(cy), int(cx)] = 1.0
        elif (near_range or (in_range and visible > 0.2)) and visible > 0:
            gx0, gy0 = max(0, math.floor(x / stride)), max(0, math.floor(y / stride))
            gx1, gy1 = min(g, math.ceil((x + w) / stride)), min(g, math.ceil((y + h) / stride))
            heat_mask[gy0:gy1, gx0:gx1] = 0.0
    heat_mask = np.maximum(heat_mask, (heat >= 1.0).astype(np.float32))
    return heat, heat_mask, reg, reg_mask


def build_detector() -> Any:
    """The detector network (torch): grey image in, ``(1, 5, H/4, W/4)`` out."""
    import torch
    from torch import nn

    def cbr(i: int, o: int, stride: int = 1, k: int = 3) -> list[nn.Module]:
        return [nn.Conv2d(i, o, k, stride, k // 2, bias=False), nn.BatchNorm2d(o), nn.ReLU(inplace=True)]

    def sep(i: int, o: int, stride: int = 1, dilation: int = 1) -> list[nn.Module]:
        return [
            nn.Conv2d(i, i, 3, stride, dilation, dilation=dilation, groups=i, bias=False),
            nn.BatchNorm2d(i),
            nn.ReLU(inplace=True),
            nn.Conv2d(i, o, 1, bias=False),
            nn.BatchNorm2d(o),
            nn.ReLU(inplace=True),
        ]

    class Detector(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.s2 = nn.Sequential(*cbr(1, 12, 2))
            self.s4 = nn.Sequential(*sep(12, 24, 2), *sep(24, 24))
            self.s8 = nn.Sequential(*sep(24, 48, 2), *sep(48, 48))
            self.s16 = nn.Sequential(*sep(48, 96, 2), *sep(96, 96), *sep(96, 96, dilation=2))
            self.up8 = nn.Sequential(*cbr(96 + 48, 48, k=1), *sep(48, 48))
            self.up4 = nn.Sequential(*cbr(48 + 24, 32, k=1), *sep(32, 32))
            self.head = nn.Conv2d(32, 5, 1)
            self.export = False

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            f4 = self.s4(self.s2(x))
            f8 = self.s8(f4)
            f16 = self.s16(f8)
            u = nn.functional.interpolate(f16, scale_factor=2.0, mode="nearest")
            u = self.up8(torch.cat([u, f8], 1))
            u = nn.functional.interpolate(u, scale_factor=2.0, mode="nearest")
            u = self.up4(torch.cat([u, f4], 1))
            out = self.head(u)
            if self.export:
                return torch.cat([torch.sigmoid(out[:, :1]), out[:, 1:]], 1)
            return out

    net = Detector()
    with torch.no_grad():
        net.head.bias[0] = -4.0  # start with little heat: few centres in a patch
    return net


def detector_loss(out: Any, heat: Any, heat_mask: Any, reg: Any, reg_mask: Any) -> Any:
    """CenterNet's focal loss on the heat plus L1 on offsets and log sizes at the centres."""
    import torch

    logit = out[:, 0]
    p = torch.sigmoid(logit).clamp(1e-4, 1 - 1e-4)
    pos = (heat >= 1.0).float()
    neg = (1 - pos) * heat_mask
    pos_loss = -(torch.log(p) * (1 - p) ** 2 * pos).sum()
    neg_loss = -(torch.log(1 - p) * p**2 * (1 - heat) ** 4 * neg).sum()
    n = pos.sum().clamp(min=1.0)
    reg_l1 = 2.0 * (torch.abs(out[:, 1:5] - reg) * reg_mask[:, None]).sum() / reg_mask.sum().clamp(min=1.0)
    return (pos_loss + neg_loss) / n + reg_l1


class PhotoCache:
    """Photos decoded once and kept in memory, with their boxes in pixels."""

    def __init__(self, photos: Sequence[Photo]) -> None:
        self.photos = list(photos)
        self.images: list[np.ndarray] = []
        self.boxes: list[np.ndarray] = []
        for photo in self.photos:
            image = photo.image()
            self.images.append(image)
            self.boxes.append(photo.boxes(image.shape[1], image.shape[0]))

    def __len__(self) -> int:
        return len(self.photos)


def _background_batches(make: Any, seed: int) -> Iterator[Any]:
    """Batches from ``make(rng)``, built in one worker process while the main one trains.

    One worker with its own seeded generator: the sequence of batches is reproducible.
    """
    import torch

    class Stream(torch.utils.data.IterableDataset):  # type: ignore[type-arg]
        def __iter__(self) -> Iterator[Any]:
            rng = np.random.default_rng(seed)
            cv2.setNumThreads(1)
            while True:
                yield make(rng)

    loader = torch.utils.data.DataLoader(Stream(), batch_size=None, num_workers=1, prefetch_factor=4)
    yield from loader


def _descend(opt: Any, sched: Any, loss: Any, running: float, step: int) -> float:
    """One optimiser step on ``loss``; returns the running mean of the loss."""
    opt.zero_grad()
    loss.backward()
    opt.step()
    sched.step()
    value = float(loss.item())
    return 0.98 * running + 0.02 * value if step > 1 else value


def torch_detector_forward(net: Any) -> Any:
    """A ``forward`` for :func:`vision.dice.detect` running the torch detector."""
    import torch

    def forward(blob: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            # The blob is on cells, for the folded network (vision.stem); torch's net is not folded.
            out = net(torch.nn.functional.pixel_shuffle(torch.from_numpy(blob), 2))
            out = torch.cat([torch.sigmoid(out[:, :1]), out[:, 1:]], 1)
        return np.asarray(out.numpy(), np.float32)

    return forward


def evaluate_detector(forward: Any, cache: PhotoCache, threshold: float) -> dict[str, float]:
    """Share of labelled dice found (IoU >= 0.5) and false boxes per photo."""
    labelled = found = false = 0
    for image, boxes in zip(cache.images, cache.boxes, strict=True):
        got = reader.detect(image, threshold, forward)
        pairs = match(boxes, got[:, :4])
        labelled += len(boxes)
        found += len(pairs)
        false += len(got) - len(pairs)
    return {"found": found / max(labelled, 1), "false_per_photo": false / max(len(cache), 1)}


def train_detector(
    train: PhotoCache,
    val: PhotoCache,
    steps: int,
    seed: int,
    log: Any = print,
    checkpoint: Path | None = None,
    start_from: Path | None = None,
) -> Any:
    """Train the detector for ``steps`` batches; returns the net with the best validation score.

    The score is the share of validation dice found less a little for each false box; the best
    net so far is also saved to ``checkpoint``. ``start_from``: weights to go on from (a lower
    learning rate then, as the net only needs to adjust).
    """
    import copy

    import torch

    torch.manual_seed(seed)
    net = build_detector()
    top = 3e-3
    if start_from is not None:
        net.load_state_dict(torch.load(start_from))
        top = 1e-3
    opt = torch.optim.AdamW(net.parameters(), lr=top, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=top, total_steps=steps, pct_start=0.05)
    # Each photo equally often; the nell-byler photos (many small dice) twice as often.
    weights = np.array([2.0 if p.dataset == "nell-byler" else 1.0 for p in train.photos])
    weights /= weights.sum()

    def sample(r: np.random.Generator) -> Any:
        i = int(r.choice(len(train), p=weights))
        return detector_sample(train.images[i], train.boxes[i], r)

    def batch(r: np.random.Generator) -> list[np.ndarray]:
        items = [sample(r) for _ in range(32)]
        x = np.stack([it[0] for it in items]).astype(np.float32)[:, None] / 255.0 - 0.5
        return [x, *(np.stack([it[k] for it in items]) for k in range(1, 5))]

    best: tuple[float, Any] = (-1.0, None)
    start = time.time()
    running = 0.0
    for step, arrays in enumerate(_background_batches(batch, seed), 1):
        x, *targets = (torch.as_tensor(a) for a in arrays)
        net.train()
        running = _descend(opt, sched, detector_loss(net(x), *targets), running, step)
        if step % 200 == 0:
            log(f"detector step {step}/{steps} loss {running:.3f} ({time.time() - start:.0f} s)")
        if step % 1000 == 0 or step == steps:
            net.eval()
            score = evaluate_detector(torch_detector_forward(net), val, reader.DET_THRESHOLD)
            log(f"  validation: {score}")
            if score["found"] - 0.002 * score["false_per_photo"] > best[0]:
                best = (score["found"] - 0.002 * score["false_per_photo"], copy.deepcopy(net))
                if checkpoint is not None:
                    torch.save(net.state_dict(), checkpoint)
        if step == steps:
            break
    return best[1].eval()


# -- face classifier -------------------------------------------------------------------------------


def _rotated_region(image: np.ndarray, box: np.ndarray, angle: float) -> tuple[np.ndarray, np.ndarray]:
    """A square region around ``box`` turned by ``angle`` degrees about the box's centre.

    Big dice are shrunk first (area averaging, as the reader's crop does), to about
    :data:`REGION_DIE` pixels, which keeps every detail the classifier's crop can hold.

    :returns: the region and the box in the region's pixels (centred).
    """
    x, y, w, h = box
    size = max(w, h, 1.0)
    cx, cy = x + w / 2, y + h / 2
    # Cut a square big enough for any turn first, so only that is shrunk and turned.
    half = math.ceil(size * 1.6) + 2
    x0, y0 = math.floor(cx) - half, math.floor(cy) - half
    height, width = image.shape[:2]
    pad = max(0, -x0, -y0, x0 + 2 * half - width, y0 + 2 * half - height)
    if pad:
        image = cv2.copyMakeBorder(image, pad, pad, pad, pad, cv2.BORDER_REFLECT101)
    cut = image[y0 + pad : y0 + pad + 2 * half, x0 + pad : x0 + pad + 2 * half]
    cx, cy = cx - x0, cy - y0
    f = 1.0
    if size > REGION_DIE:
        f = REGION_DIE / size
        n = max(1, round(2 * half * f))
        f = n / (2 * half)
        cut = cv2.resize(cut, (n, n), interpolation=cv2.INTER_AREA)
        cx, cy, w, h = cx * f, cy * f, w * f, h * f
    side = math.ceil(max(w, h) * 2.2) + 4
    m = cv2.getRotationMatrix2D((cx - 0.5, cy - 0.5), angle, 1.0)
    m[:, 2] += np.array([side / 2 - cx, side / 2 - cy])
    region = cv2.warpAffine(cut, m, (side, side), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT101)
    return region, np.array([side / 2 - w / 2, side / 2 - h / 2, w, h])


def _jitter(box: np.ndarray, rng: np.random.Generator, shift: float, scale: float) -> np.ndarray:
    x, y, w, h = box
    size = max(w, h)
    cx = x + w / 2 + rng.normal(0, shift) * size
    cy = y + h / 2 + rng.normal(0, shift) * size
    k = math.exp(rng.normal(0, scale))
    w2 = w * k * math.exp(rng.normal(0, scale / 2))
    h2 = h * k * math.exp(rng.normal(0, scale / 2))
    return np.array([cx - w2 / 2, cy - h2 / 2, w2, h2])


def classifier_sample(image: np.ndarray, box: np.ndarray, label: int, rng: np.random.Generator) -> np.ndarray:
    """One augmented classifier crop ``(CLS_SIZE, CLS_SIZE, 3)`` of ``box`` in ``image``.

    The box is shifted and resized a little (as the detector's boxes are), the die turned,
    the picture blurred to a smaller die now and then, the colours swapped, greyed or inverted,
    and the light changed; sometimes the crop is cut tight first, as callers of
    :func:`vision.dice.classify_face` may do.
    """
    angle = 90.0 * int(rng.integers(4)) if rng.random() < 0.5 else rng.uniform(0, 360)
    region, rbox = _rotated_region(image, box, angle)
    if rng.random() < 0.5:
        region = np.ascontiguousarray(region[:, ::-1])
    size = max(rbox[2], rbox[3])
    if rng.random() < 0.25 and size > 12:
        # No smaller than pips stay readable at: a blur past that only teaches the net to guess.
        small = rng.uniform(max(12.0, 0.5 * size), size)
        side = region.shape[0]
        tiny = max(4, round(side * small / size))
        region = cv2.resize(cv2.resize(region, (tiny, tiny), interpolation=cv2.INTER_AREA), (side, side))
    # Not-a-die boxes were drawn away from dice: jittering them much could land on one.
    rbox = _jitter(rbox, rng, 0.02 if label == reader.NOT_A_DIE else 0.06, 0.1)
    if rng.random() < 0.1:
        margin = rng.uniform(0.95, 1.2)
        tight = reader.face_crop(region, tuple(rbox), margin)  # type: ignore[arg-type]
        n = max(4, round(max(rbox[2], rbox[3]) * margin))
        tight = cv2.resize(tight, (n, n))
        crop = reader.face_crop(tight, (0.0, 0.0, float(n), float(n)))
    else:
        crop = reader.face_crop(region, tuple(rbox), reader.CLS_MARGIN * math.exp(rng.normal(0, 0.08)))  # type: ignore[arg-type]
    r = rng.random()
    if r < 0.25:
        crop = cv2.cvtColor(cv2.cvtColor(crop, cv2.COLOR_BGR2GRAY), cv2.COLOR_GRAY2BGR)
    elif r < 0.6:
        crop = np.ascontiguousarray(crop[:, :, rng.permutation(3)])
    if rng.random() < 0.1:
        crop = 255 - crop
    return photometric(crop, rng)


def random_negative(image: np.ndarray, boxes: np.ndarray, rng: np.random.Generator) -> np.ndarray | None:
    """A box the size of a die that overlaps no labelled die much (IoU < 0.2), or None."""
    height, width = image.shape[:2]
    sizes = np.maximum(boxes[:, 2], boxes[:, 3]) if len(boxes) else np.array([40.0])
    for _ in range(10):
        size = float(rng.choice(sizes)) * math.exp(rng.normal(0, 0.35))
        if len(boxes) and rng.random() < 0.5:
            # Near a die: part of it, or the gap between two, look most like one.
            ref = boxes[int(rng.integers(len(boxes)))]
            angle = rng.uniform(0, 2 * math.pi)
            dist = rng.uniform(0.6, 1.3) * max(ref[2], ref[3])
            cx = ref[0] + ref[2] / 2 + dist * math.cos(angle)
            cy = ref[1] + ref[3] / 2 + dist * math.sin(angle)
        else:
            cx, cy = rng.uniform(0, width), rng.uniform(0, height)
        box = np.array([cx - size / 2, cy - size / 2, size, size])
        if not len(boxes) or reader.iou(box[None], boxes).max() < 0.2:
            return box
    return None


def mine_detections(forward: Any, cache: PhotoCache, threshold: float) -> list[tuple[int, np.ndarray, int]]:
    """Boxes the detector finds in the photos, labelled by the dice they match.

    :returns: ``(photo index, box, label)``: the matched die's face index (0..5) for IoU >= 0.5,
        :data:`vision.dice.NOT_A_DIE` for boxes overlapping no die (IoU < 0.25); others are left out.
    """
    out = []
    for n, (image, boxes) in enumerate(zip(cache.images, cache.boxes, strict=True)):
        got = reader.detect(image, threshold, forward)[:, :4]
        values = cache.photos[n].values
        overlap = reader.iou(got, boxes) if len(boxes) and len(got) else np.zeros((len(got), len(boxes)))
        pairs = dict((f, t) for t, f in match(boxes, got))
        for f, box in enumerate(got):
            if f in pairs:
                out.append((n, box, int(values[pairs[f]]) - 1))
            elif overlap.shape[1] == 0 or overlap[f].max() < 0.25:
                out.append((n, box, reader.NOT_A_DIE))
    return out


# -- synthetic negatives ---------------------------------------------------------------------------

#: OpenCV's Hershey fonts: the print on the synthetic sheets and cubes.
FONTS = (
    cv2.FONT_HERSHEY_SIMPLEX,
    cv2.FONT_HERSHEY_PLAIN,
    cv2.FONT_HERSHEY_DUPLEX,
    cv2.FONT_HERSHEY_COMPLEX,
    cv2.FONT_HERSHEY_TRIPLEX,
    cv2.FONT_HERSHEY_COMPLEX_SMALL,
    cv2.FONT_HERSHEY_SCRIPT_SIMPLEX,
    cv2.FONT_HERSHEY_SCRIPT_COMPLEX,
)
#: The numbers on a doubling cube's faces.
CUBE_NUMBERS = (2, 4, 8, 16, 32, 64)
#: The square fiducial markers drawn on the sheets: ArUco's and AprilTag's.
MARKER_DICTIONARIES = (
    cv2.aruco.DICT_4X4_50,
    cv2.aruco.DICT_5X5_50,
    cv2.aruco.DICT_6X6_50,
    cv2.aruco.DICT_7X7_50,
    cv2.aruco.DICT_APRILTAG_36h11,
)
_CHARACTERS = "abcdefghijklmnopqrstuvwxyz" * 3 + "ABCDEFGHIJKLMNOPQRSTUVWXYZ" + "0123456789" * 2 + ".,:;()'-%/!?"
#: Synthetic images made for each kind (``--negatives`` scales them all): the negatives, and
#: drawn dice (positives, so that being drawn is no sign of "not a die").
NEGATIVE_IMAGES = {"sheets": 160, "boards": 240, "cubes": 3000, "dice": 3000}
#: The most detector boxes kept from one synthetic image, and random boxes added to a sheet.
BOXES_PER_IMAGE = 90
RANDOM_PER_SHEET = 30
#: Render seeds of the synthetic boards start here (other uses of the renderer start low).
RENDER_SEED = 10**8
#: The share of the classifier's crops that are synthetic, and how it is split: the negatives,
#: and as many dice (the rendered boards' own, ``board_dice``, and drawn ones).
SYNTHETIC_SHARE = 0.15
SYNTHETIC_KINDS = {"sheets": 0.25, "boards": 0.25, "cubes": 0.15, "board_dice": 0.15, "dice": 0.2, "rendered3d": 0.5}
#: Synthetic negatives bigger than this (pixels) are kept shrunk to it: still over the
#: classifier's crop, and a tenth of the memory of :data:`REGION_DIE`.
REGION_NEGATIVE = 40.0


def random_text(rng: np.random.Generator, words: int) -> str:
    """Words of random letters, digits and punctuation."""
    out = []
    for _ in range(words):
        n = int(rng.integers(1, 11))
        word = "".join(rng.choice(list(_CHARACTERS), n))
        if rng.random() < 0.15:
            word = str(int(rng.integers(0, 1000)))
        out.append(word)
    return " ".join(out)


def _put_text(
    image: np.ndarray, text: str, x: int, y: int, height: float, font: int, thick: int, colour: tuple[int, ...]
) -> int:
    """Write ``text`` with its baseline at ``y``, capitals ``height`` pixels tall; returns its width."""
    (_, base), _ = cv2.getTextSize("H", font & 15, 1.0, thick)
    scale = height / max(base, 1)
    (width, _), _ = cv2.getTextSize(text, font & 15, scale, thick)
    cv2.putText(image, text, (x, y), font, scale, colour, thick, cv2.LINE_AA)
    return int(width)


def _ink_colour(rng: np.random.Generator, paper: np.ndarray) -> tuple[int, ...]:
    """Mostly black-ish print; now and then a colour, always well off the paper's brightness."""
    if rng.random() < 0.7:
        return tuple(int(v) for v in rng.integers(0, 70, 3))
    for _ in range(20):
        ink = rng.integers(0, 256, 3)
        if abs(float(ink.mean()) - float(paper.mean())) > 90:
            return tuple(int(v) for v in ink)
    return (0, 0, 0)


def _fiducial(rng: np.random.Generator, side: int) -> np.ndarray:
    """A random ArUco or AprilTag marker, ``side`` pixels square, grey."""
    dictionary = cv2.aruco.getPredefinedDictionary(int(rng.choice(MARKER_DICTIONARIES)))
    count = dictionary.bytesList.shape[0]
    cells = dictionary.markerSize + 2
    small = cv2.aruco.generateImageMarker(dictionary, int(rng.integers(count)), cells)
    return cv2.resize(small, (side, side), interpolation=cv2.INTER_NEAREST)


def synthetic_sheet(rng: np.random.Generator) -> np.ndarray:
    """A printed page, BGR: lines of text and numbers in varied fonts, rulers, square markers.

    Nothing on it is a die: every box the detector draws on it is a "not a die".
    """
    width = int(rng.integers(500, 1800))
    height = round(width * rng.uniform(1.1, 1.5))
    paper = np.clip(rng.normal(238, 12, 3) + rng.normal(0, 6), 150, 255)
    sheet = np.empty((height, width, 3), np.uint8)
    sheet[:] = paper.astype(np.uint8)
    margin = int(rng.integers(10, max(11, width // 8)))
    y = margin
    while y < height - margin:
        ink = _ink_colour(rng, paper)
        kind = rng.choice(["text", "text", "text", "numbers", "ruler", "markers", "cells"])
        if kind in ("text", "numbers"):
            size = math.exp(rng.uniform(math.log(5), math.log(110)))
            font = int(rng.choice(FONTS)) | (cv2.FONT_ITALIC if rng.random() < 0.15 else 0)
            thick = max(1, round(size * rng.uniform(0.04, 0.16)))
            for _ in range(int(rng.integers(1, 5))):
                y += round(size * rng.uniform(1.4, 2.0))
                if y > height - margin:
                    break
                if kind == "numbers":
                    step = int(rng.choice([1, 2, 5, 10, 20, 25, 50, 100]))
                    first = int(rng.integers(0, 100)) * step
                    text = "  ".join(str(first + k * step) for k in range(int(rng.integers(2, 14))))
                else:
                    text = random_text(rng, int(rng.integers(2, 14)))
                _put_text(sheet, text, margin + int(rng.integers(0, margin + 1)), y, size, font, thick, ink)
        elif kind == "ruler":
            y += int(rng.integers(10, 60))
            length = int(rng.integers(width // 4, width - 2 * margin + 1))
            bar = int(rng.integers(3, 30))
            step = float(rng.uniform(4, 80))
            thick = int(rng.integers(1, 4))
            x0 = margin
            cv2.rectangle(sheet, (x0, y), (x0 + length, y + bar), ink, thick)
            fill = rng.random() < 0.6
            tick = int(rng.integers(3, 30))
            font = int(rng.choice(FONTS))
            label = max(5.0, float(rng.uniform(0.3, 0.9) * step))
            for k in range(int(length / step) + 1):
                x = round(x0 + k * step)
                if fill and k % 2 == 0 and x + step <= x0 + length:
                    sheet[y : y + bar, x : round(x + step)] = ink
                long = tick * (2 if k % 5 == 0 else 1)
                cv2.line(sheet, (x, y + bar), (x, y + bar + long), ink, thick)
                if rng.random() < 0.7:
                    _put_text(
                        sheet,
                        str(k * 10),
                        x - round(label / 2),
                        y + bar + long + round(label * 1.4),
                        label,
                        font,
                        1,
                        ink,
                    )
            y += bar + 2 * tick + round(label * 2)
        elif kind == "markers":
            side = int(rng.integers(20, max(21, min(320, width // 2))))
            quiet = round(side * rng.uniform(0.1, 0.4))
            x = margin
            y += quiet
            while x + side + 2 * quiet < width - margin and y + side + quiet < height:
                grey = _fiducial(rng, side)
                sheet[y : y + side, x + quiet : x + quiet + side] = np.where(
                    grey[..., None] > 127, sheet[y : y + side, x + quiet : x + quiet + side], np.array(ink, np.uint8)
                )
                if rng.random() < 0.5:
                    cv2.rectangle(sheet, (x, y - quiet), (x + side + 2 * quiet, y + side + quiet), (200, 200, 200), 1)
                x += side + 2 * quiet + int(rng.integers(0, side + 1))
            y += side + quiet
        else:
            cell = int(rng.integers(3, 30))
            rows, cols = int(rng.integers(2, 12)), int(rng.integers(2, max(3, (width - 2 * margin) // cell)))
            y += cell
            pattern = rng.random((rows, cols)) < rng.uniform(0.2, 0.8)
            if rng.random() < 0.4:
                pattern = (np.add.outer(np.arange(rows), np.arange(cols)) % 2).astype(bool)
            for r, c in zip(*np.nonzero(pattern), strict=True):
                x0, y0 = margin + c * cell, y + r * cell
                if y0 + cell < height and x0 + cell < width:
                    sheet[y0 : y0 + cell, x0 : x0 + cell] = ink
            y += rows * cell
        y += int(rng.integers(4, 40))
    return sheet


def photographed(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``image`` (a flat sheet) as a camera sees it: on a table, at a slant, under a lamp."""
    height, width = image.shape[:2]
    out_w = int(rng.integers(400, 1900))
    out_h = round(out_w * rng.uniform(0.55, 1.5))
    table = np.empty((out_h, out_w, 3), np.uint8)
    table[:] = rng.integers(20, 230, 3).astype(np.uint8)
    ph = out_h * rng.uniform(0.5, 1.3)
    pw = ph * width / height
    if pw > out_w * rng.uniform(0.8, 1.3):
        pw = out_w * rng.uniform(0.6, 1.0)
        ph = pw * height / width
    cx, cy = out_w * rng.uniform(0.35, 0.65), out_h * rng.uniform(0.35, 0.65)
    corners = np.array([[-pw / 2, -ph / 2], [pw / 2, -ph / 2], [pw / 2, ph / 2], [-pw / 2, ph / 2]])
    corners += rng.normal(0, 0.05 * min(pw, ph), corners.shape)
    angle = math.radians(rng.normal(0, 10) + (180 if rng.random() < 0.2 else 0))
    turn = np.array([[math.cos(angle), -math.sin(angle)], [math.sin(angle), math.cos(angle)]])
    corners = corners @ turn.T + [cx, cy]
    # Shrink first where the page is much bigger than it shows, so the warp does not alias.
    shrink = min(1.0, 1.5 * max(pw / width, ph / height))
    if shrink < 1.0:
        image = cv2.resize(
            image, (max(1, round(width * shrink)), max(1, round(height * shrink))), interpolation=cv2.INTER_AREA
        )
    h, w = image.shape[:2]
    source = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)
    warp = cv2.getPerspectiveTransform(source, corners.astype(np.float32))
    shot = cv2.warpPerspective(image, warp, (out_w, out_h), dst=table, borderMode=cv2.BORDER_TRANSPARENT)
    x = shot.astype(np.float32)
    yy, xx = np.mgrid[0:out_h, 0:out_w].astype(np.float32)
    gx, gy = rng.uniform(-1, 1, 2)
    light = 1.0 - rng.uniform(0.0, 0.45) * np.clip(0.5 + gx * (xx / out_w - 0.5) + gy * (yy / out_h - 0.5), 0, 1)
    x = x * light[..., None] * np.exp(rng.normal(0, 0.08, 3)).astype(np.float32) * rng.uniform(0.75, 1.15)
    if rng.random() < 0.8:
        x = cv2.GaussianBlur(x, (0, 0), rng.uniform(0.3, 2.0))
    x = x + rng.normal(0, rng.uniform(0.5, 7), x.shape).astype(np.float32)
    out = np.clip(x, 0, 255).astype(np.uint8)
    ok, data = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(40, 96))])
    return cv2.imdecode(data, cv2.IMREAD_COLOR) if ok else out


def synthetic_board(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, list[int], np.ndarray | None]:
    """A rendered frame (:mod:`vision.render`) of a random board, mostly with the cube on it.

    :returns: the frame, its dice's boxes ``(n, 4)`` and faces, and the cube's top face's box
        (or None).
    """
    from vision.geometry import FieldGeometry
    from vision.render import Camera, CubeSpec, Lighting, random_scene, random_style, render

    style = random_style(rng)
    if rng.random() < 0.6:
        body = rng.integers(0, 256, 3)
        ink = rng.integers(0, 256, 3)
        if abs(float(body.mean()) - float(ink.mean())) > 70:
            style = replace(style, cube_colour=tuple(int(v) for v in body), cube_ink=tuple(int(v) for v in ink))
    size = [(1280, 720), (1280, 720), (960, 720), (1920, 1080), (640, 480), (800, 600)][int(rng.integers(6))]
    camera, lighting = Camera.random(rng, size), Lighting.random(rng)
    scene = random_scene(rng, dice=int(rng.integers(0, 3)))
    if scene.cube is None and rng.random() < 0.85:
        value = int(rng.choice((1, *CUBE_NUMBERS)))
        scene = replace(scene, cube=CubeSpec(value, None if value == 1 else int(rng.integers(1, 3))), track=None)
    shot = render(
        scene,
        style=style,
        camera=camera,
        lighting=lighting,
        hand=bool(rng.random() < 0.1),
        markers=bool(rng.random() < 0.7),
        seed=RENDER_SEED + int(rng.integers(10**8)),
    )
    cube = None
    if scene.cube is not None:
        geom = FieldGeometry(style.bar_fraction)
        x, y = geom.cube_center(scene.cube.owner)
        half = 0.45 * geom.checker_diameter
        square = np.array(
            [[x - half, y - half, 1], [x + half, y - half, 1], [x + half, y + half, 1], [x - half, y + half, 1]]
        )
        corners = square @ shot.homography.T
        corners = corners[:, :2] / corners[:, 2:]
        (x0, y0), (x1, y1) = corners.min(axis=0), corners.max(axis=0)
        cube = np.array([x0, y0, x1 - x0, y1 - y0])
    faces = [spec.value for spec in scene.dice]
    return shot.image, np.asarray(shot.dice_boxes, np.float64).reshape(-1, 4), faces, cube


def synthetic_cube(rng: np.random.Generator, pips: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A doubling cube seen from above on a plain or textured ground: its number in a random
    font, body and ink colours, turn, slant and shadow; or (``pips`` 1 to 6) a die showing that
    face, drawn alike.

    :returns: the picture and the block's box.
    """
    side = int(rng.integers(24, 130))
    size = 3 * side
    ground = rng.integers(0, 256, 3).astype(np.float32)
    from vision._textures import smooth_noise

    texture = 1 + rng.uniform(0, 0.25) * smooth_noise(rng, size, size, rng.uniform(2, 40), rng.uniform(2, 40))
    image = ground[None, None] * texture[..., None]
    body = rng.integers(0, 256, 3).astype(np.float32)
    if rng.random() < 0.5:
        body = np.full(3, rng.uniform(200, 250)) + rng.normal(0, 6, 3)
    ink = rng.integers(0, 256, 3).astype(np.float32)
    while abs(float(ink.mean() - body.mean())) < 70:
        ink = rng.integers(0, 256, 3).astype(np.float32)
    big = 4
    n = side * big
    c = (n - 1) / 2
    yy, xx = np.mgrid[0:n, 0:n].astype(np.float32)
    radius = rng.uniform(0.05, 0.25) * n
    qx = np.maximum(np.abs(xx - c) - (n / 2 - radius), 0)
    qy = np.maximum(np.abs(yy - c) - (n / 2 - radius), 0)
    alpha = np.clip(0.5 - (np.hypot(qx, qy) - radius), 0, 1)
    edge = np.minimum(np.minimum(xx, n - 1 - xx), np.minimum(yy, n - 1 - yy)) / n
    shade = 1 - rng.uniform(0, 0.3) * (1 - np.clip(edge / 0.12, 0, 1))
    mask = np.zeros((n, n), np.uint8)
    if pips:
        from vision.render import pip_layout

        spacing = rng.uniform(0.22, 0.3) * n
        radius = max(2, round(rng.uniform(0.06, 0.11) * n))
        for dx, dy in pip_layout()[pips]:
            cv2.circle(mask, (round(c + dx * spacing), round(c + dy * spacing)), radius, 255, -1, cv2.LINE_AA)
    else:
        text = str(int(rng.choice(CUBE_NUMBERS)))
        font = int(rng.choice(FONTS[:6])) | (cv2.FONT_ITALIC if rng.random() < 0.1 else 0)
        thick = max(1, round(n * rng.uniform(0.04, 0.12)))
        (tw, th), _ = cv2.getTextSize(text, font & 15, 1.0, thick)
        scale = rng.uniform(0.4, 0.75) * n / max(tw, th * 1.2)
        (tw, th), _ = cv2.getTextSize(text, font & 15, scale, thick)
        cv2.putText(mask, text, ((n - tw) // 2, (n + th) // 2), font, scale, 255, thick, cv2.LINE_AA)
    print_alpha = mask.astype(np.float32)[..., None] / 255.0
    face = shade[..., None] * body[None, None]
    face = face + (ink[None, None] - face) * print_alpha
    face = cv2.resize(face, (side, side), interpolation=cv2.INTER_AREA)
    alpha = cv2.resize(alpha, (side, side), interpolation=cv2.INTER_AREA)
    angle = rng.uniform(0, 360)
    centre = np.array([size / 2, size / 2]) + rng.normal(0, side * 0.1, 2)
    lean = rng.normal(0, 0.08 * side, 2)

    def paste(rgb: np.ndarray, a: np.ndarray, offset: np.ndarray, dark: float) -> None:
        nonlocal image
        m = cv2.getRotationMatrix2D((side / 2, side / 2), angle, 1.0)
        m[:, 2] += centre + offset - side / 2
        warped = cv2.warpAffine(rgb, m, (size, size), flags=cv2.INTER_LINEAR)
        wa = cv2.warpAffine(a, m, (size, size), flags=cv2.INTER_LINEAR)[..., None]
        image = image * (1 - wa * dark) if dark else image * (1 - wa) + warped * wa

    shadow = cv2.GaussianBlur(alpha, (0, 0), max(0.8, side * 0.1))
    paste(face, shadow, rng.normal(0, 0.25 * side, 2), float(rng.uniform(0.2, 0.6)))
    for f in (0.0, 0.5):
        paste(np.broadcast_to(body * rng.uniform(0.45, 0.8), face.shape).copy(), alpha, lean * f, 0.0)
    paste(face, alpha, lean, 0.0)
    spread = side * (abs(math.cos(math.radians(angle))) + abs(math.sin(math.radians(angle))))
    top = centre + lean - spread / 2
    out = np.clip(image, 0, 255).astype(np.uint8)
    return out, np.array([top[0], top[1], spread, spread])


def _cut(image: np.ndarray, box: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """What :func:`classifier_sample` needs of ``box`` in ``image``: the square round it (the
    edges mirrored), shrunk when the box is bigger than :data:`REGION_NEGATIVE`; and the box in it."""
    x, y, w, h = box
    size = max(w, h, 1.0)
    half = math.ceil(size * 1.8) + 4
    cx, cy = x + w / 2, y + h / 2
    x0, y0 = math.floor(cx) - half, math.floor(cy) - half
    height, width = image.shape[:2]
    pad = max(0, -x0, -y0, x0 + 2 * half - width, y0 + 2 * half - height)
    if pad:
        image = cv2.copyMakeBorder(image, pad, pad, pad, pad, cv2.BORDER_REFLECT101)
    patch = image[y0 + pad : y0 + pad + 2 * half, x0 + pad : x0 + pad + 2 * half]
    inner = np.array([x - x0, y - y0, w, h], np.float64)
    if size > REGION_NEGATIVE:
        n = max(1, round(2 * half * REGION_NEGATIVE / size))
        patch = cv2.resize(patch, (n, n), interpolation=cv2.INTER_AREA)
        inner *= n / (2 * half)
    return np.ascontiguousarray(patch), inner


def _clear_of(boxes: np.ndarray, keep_out: np.ndarray, grow: float = 0.2) -> np.ndarray:
    """Which of ``boxes`` touch none of ``keep_out`` (each grown by ``grow`` of its size)."""
    if not len(keep_out) or not len(boxes):
        return np.ones(len(boxes), bool)
    k = keep_out.copy()
    k[:, :2] -= grow * k[:, 2:]
    k[:, 2:] *= 1 + 2 * grow
    return reader.iou(boxes, k).max(axis=1) <= 0.0


def _random_boxes(image: np.ndarray, count: int, rng: np.random.Generator) -> np.ndarray:
    """Boxes of die-like sizes, most on the image's edges (print, lines), some anywhere."""
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    ys, xs = np.nonzero(cv2.Canny(grey, 60, 150))
    height, width = grey.shape
    boxes = []
    for _ in range(count):
        size = math.exp(rng.uniform(math.log(8), math.log(max(9, min(width, height) / 4))))
        if len(xs) and rng.random() < 0.8:
            i = int(rng.integers(len(xs)))
            cx, cy = xs[i] + rng.normal(0, size / 4), ys[i] + rng.normal(0, size / 4)
        else:
            cx, cy = rng.uniform(0, width), rng.uniform(0, height)
        aspect = math.exp(rng.normal(0, 0.15))
        boxes.append([cx - size * aspect / 2, cy - size / aspect / 2, size * aspect, size / aspect])
    return np.asarray(boxes, np.float64).reshape(-1, 4)


def _detected(image: np.ndarray, forward: Any, rng: np.random.Generator, limit: int) -> np.ndarray:
    """The detector's boxes on ``image`` (from :data:`MINE_THRESHOLD`): at most ``limit``, those
    the reader would see (heat from its threshold) first."""
    found = reader.detect(image, MINE_THRESHOLD, forward)
    strong = found[found[:, 4] >= reader.DET_THRESHOLD]
    weak = found[found[:, 4] < reader.DET_THRESHOLD]
    strong = strong[rng.permutation(len(strong))[:limit]]
    weak = weak[rng.permutation(len(weak))[: max(0, limit - len(strong)) // 2]]
    return np.concatenate([strong, weak])[:, :4]


Synthetic = dict[str, list[tuple[np.ndarray, np.ndarray, int]]]


def synthetic_negatives(forward: Any, seed: int, scale: float = 1.0, log: Any = print) -> Synthetic:
    """Crops from synthetic pictures, as ``(patch, box in it, class)`` per kind.

    Things that are no dice:

    - ``sheets``: printed pages (:func:`synthetic_sheet`), most of them photographed: the boxes
      the detector draws on their print, rulers and markers, and random boxes on the print;
    - ``boards``: rendered frames (:func:`synthetic_board`): the detector's boxes that touch no
      die (on the grey frame and on its negative), and the cube's top face;
    - ``cubes``: single cubes (:func:`synthetic_cube`).

    And dice, drawn the same ways, so that the classifier cannot take "drawn" for "no die":

    - ``board_dice``: the rendered boards' own dice;
    - ``dice``: single dice drawn as the cubes are.

    :param forward: runs the detector (see :func:`vision.dice.detect`).
    :param scale: multiplies the number of pictures of each kind (:data:`NEGATIVE_IMAGES`).
    """
    rng = np.random.default_rng([seed, 7])
    out: Synthetic = {kind: [] for kind in SYNTHETIC_KINDS}
    count = {kind: max(1, round(n * scale)) for kind, n in NEGATIVE_IMAGES.items()}
    no = reader.NOT_A_DIE
    for _ in range(count["sheets"]):
        sheet = synthetic_sheet(rng)
        image = photographed(sheet, rng) if rng.random() < 0.75 else sheet
        boxes = np.concatenate(
            [_detected(image, forward, rng, BOXES_PER_IMAGE), _random_boxes(image, RANDOM_PER_SHEET, rng)]
        )
        out["sheets"].extend((*_cut(image, b), no) for b in boxes)
    log(f"  {len(out['sheets'])} boxes on {count['sheets']} sheets")
    for _ in range(count["boards"]):
        image, dice, faces, cube = synthetic_board(rng)
        views = [image] if rng.random() < 0.5 else [image, 255 - image]
        boxes = np.concatenate([_detected(view, forward, rng, BOXES_PER_IMAGE // len(views)) for view in views])
        boxes = boxes[_clear_of(boxes, dice)]
        out["boards"].extend((*_cut(image, b), no) for b in boxes)
        if cube is not None and _clear_of(cube[None], dice)[0]:
            out["boards"].extend((*_cut(image, _jitter(cube, rng, 0.05, 0.1)), no) for _ in range(3))
        out["board_dice"].extend((*_cut(image, box), face - 1) for box, face in zip(dice, faces, strict=True))
    log(f"  {len(out['boards'])} boxes and {len(out['board_dice'])} dice on {count['boards']} rendered boards")
    for _ in range(count["cubes"]):
        image, box = synthetic_cube(rng)
        out["cubes"].append((*_cut(image, box), no))
    for _ in range(count["dice"]):
        face = int(rng.integers(1, 7))
        image, box = synthetic_cube(rng, pips=face)
        out["dice"].append((*_cut(image, box), face - 1))
    log(f"  {len(out['cubes'])} drawn cubes, {len(out['dice'])} drawn dice")
    return out


def onnx_detector_forward(path: Path) -> Any:
    """A ``forward`` for :func:`vision.dice.detect` running a detector ONNX file through OpenCV."""
    net = cv2.dnn.readNetFromONNX(str(path))

    def forward(blob: np.ndarray) -> np.ndarray:
        net.setInput(blob)
        return np.asarray(net.forward(), np.float32)

    return forward


def build_classifier() -> Any:
    """The face classifier (torch): ``(n, 3, CLS_SIZE, CLS_SIZE)`` in, 7 logits out."""
    from torch import nn

    def cbr(i: int, o: int) -> list[nn.Module]:
        return [nn.Conv2d(i, o, 3, 1, 1, bias=False), nn.BatchNorm2d(o), nn.ReLU(inplace=True)]

    return nn.Sequential(
        *cbr(3, 16),
        *cbr(16, 16),
        nn.MaxPool2d(2),
        *cbr(16, 32),
        *cbr(32, 32),
        nn.MaxPool2d(2),
        *cbr(32, 64),
        *cbr(64, 64),
        nn.MaxPool2d(2),
        *cbr(64, 96),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Dropout(0.1),
        nn.Linear(96, reader.NOT_A_DIE + 1),
    )


def classifier_items(cache: PhotoCache, mined: list[tuple[int, np.ndarray, int]]) -> list[tuple[int, np.ndarray, int]]:
    """The labelled boxes the classifier learns from: every labelled die, then the mined boxes."""
    items = []
    for n, (boxes, photo) in enumerate(zip(cache.boxes, cache.photos, strict=True)):
        items.extend((n, box, int(v) - 1) for box, v in zip(boxes, photo.values, strict=True))
    return items + mined


def rendered_dice(folder: Path, held_out: bool) -> list[tuple[np.ndarray, np.ndarray, int]]:
    """The flat dice of 3D-rendered frames (``python -m tools.render3d``) as synthetic crops:
    ``(patch round the die, its box in the patch, face - 1)``.

    Real-sized dice seen at a slant under a lamp, side faces, shadows and blur showing, beside
    checkers: what the photos hold little of. The setups are split as the vision bench splits
    them (``bench/vision.py``: seed 0 modulo 5 held out), ``held_out`` picks which part.
    """
    out = []
    for setup in sorted(p for p in folder.iterdir() if p.is_dir()):
        digits = "".join(ch for ch in setup.name if ch.isdigit())
        seed = int(digits) if digits else zlib.crc32(setup.name.encode())
        if (seed % 5 == 0) != held_out:
            continue
        for label_file in sorted(p for p in setup.glob("*.json") if p.stem.isdigit()):
            image_file = label_file.with_suffix(".jpg")
            label = json.loads(label_file.read_text(encoding="utf-8"))
            if not image_file.exists() or label.get("hand") or not label.get("dice"):
                continue
            image = cv2.imread(str(image_file))
            for die in label["dice"]:
                if not die.get("flat", True):
                    continue
                x, y, w, h = (float(v) for v in die["box"])
                grow = 2.0 * max(w, h)
                x0, y0 = max(0, int(x - grow)), max(0, int(y - grow))
                patch = image[y0 : int(y + h + grow), x0 : int(x + w + grow)].copy()
                out.append((patch, np.array([x - x0, y - y0, w, h], np.float32), int(die["value"]) - 1))
    return out


def train_classifier(
    train: PhotoCache,
    mined: list[tuple[int, np.ndarray, int]],
    val_items: list[tuple[int, np.ndarray, int]],
    val: PhotoCache,
    epochs: int,
    seed: int,
    log: Any = print,
    synthetic: Synthetic | None = None,
    synthetic_check: Synthetic | None = None,
) -> Any:
    """Train the face classifier; returns the net with the lowest validation loss.

    :param synthetic: synthetic crops by kind (:func:`synthetic_negatives`), a
        :data:`SYNTHETIC_SHARE` of the crops learnt, split over the kinds by
        :data:`SYNTHETIC_KINDS`.
    :param synthetic_check: more of them, made apart: how many of each kind the net reads
        wrong is logged with each validation (they do not choose the net).
    """
    import copy

    import torch

    torch.manual_seed(seed)
    net = build_classifier()
    labelled = classifier_items(train, [])
    mined_dice = [m for m in mined if m[2] != reader.NOT_A_DIE]
    mined_not = [m for m in mined if m[2] == reader.NOT_A_DIE]
    kinds = [kind for kind in SYNTHETIC_KINDS if synthetic and synthetic.get(kind)]
    weights = np.array([SYNTHETIC_KINDS[kind] for kind in kinds])
    batch_size, per_epoch = 128, 40000
    steps = epochs * per_epoch // batch_size
    opt = torch.optim.AdamW(net.parameters(), lr=2e-3, weight_decay=5e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=2e-3, total_steps=steps, pct_start=0.05)

    def one(r: np.random.Generator) -> tuple[np.ndarray, int]:
        u = r.random()
        if kinds and u < SYNTHETIC_SHARE:
            assert synthetic is not None
            pool = synthetic[kinds[int(r.choice(len(kinds), p=weights / weights.sum()))]]
            patch, box, label = pool[int(r.integers(len(pool)))]
            return classifier_sample(patch, box, label, r), label
        if kinds:
            # The real photos' crops keep their shares among themselves.
            u = (u - SYNTHETIC_SHARE) / (1.0 - SYNTHETIC_SHARE)
        if u < 0.55 or not mined_dice:
            n, box, label = labelled[int(r.integers(len(labelled)))]
        elif u < 0.75:
            n, box, label = mined_dice[int(r.integers(len(mined_dice)))]
        elif u < 0.87 and mined_not:
            n, box, label = mined_not[int(r.integers(len(mined_not)))]
        else:
            n = int(r.integers(len(train)))
            negative = random_negative(train.images[n], train.boxes[n], r)
            if negative is None:
                return one(r)
            box, label = negative, reader.NOT_A_DIE
        return classifier_sample(train.images[n], box, label, r), label

    def batch(r: np.random.Generator) -> list[np.ndarray]:
        items = [one(r) for _ in range(batch_size)]
        crops = np.stack([c for c, _ in items])
        return [reader.classifier_input(crops), np.array([label for _, label in items], np.int64)]

    val_x = torch.from_numpy(
        reader.classifier_input(np.stack([reader.face_crop(val.images[n], tuple(b)) for n, b, _ in val_items]))  # type: ignore[arg-type]
    )
    val_y = torch.tensor([label for _, _, label in val_items])
    check = {
        kind: (
            torch.from_numpy(reader.classifier_input(np.stack([reader.face_crop(p, tuple(b)) for p, b, _ in items]))),  # type: ignore[arg-type]
            torch.tensor([label for _, _, label in items]),
        )
        for kind, items in (synthetic_check or {}).items()
        if items
    }
    best: tuple[float, Any] = (math.inf, None)
    start = time.time()
    running = 0.0
    for step, (x, y) in enumerate(_background_batches(batch, seed + 1), 1):
        net.train()
        loss = torch.nn.functional.cross_entropy(net(torch.as_tensor(x)), torch.as_tensor(y), label_smoothing=0.02)
        running = _descend(opt, sched, loss, running, step)
        if step % 300 == 0:
            log(f"classifier step {step}/{steps} loss {running:.3f} ({time.time() - start:.0f} s)")
        if step % (per_epoch // batch_size * 2) == 0 or step == steps:
            net.eval()
            with torch.no_grad():
                logits = net(val_x)
            val_loss = float(torch.nn.functional.cross_entropy(logits, val_y))
            wrong = int((logits.argmax(1) != val_y).sum())
            log(f"  validation: loss {val_loss:.4f}, {wrong} of {len(val_y)} wrong")
            with torch.no_grad():
                missed = {kind: int((net(x).argmax(1) != y).sum()) for kind, (x, y) in check.items()}
            if missed:
                log(
                    "  synthetic crops read wrong: "
                    + ", ".join(f"{kind} {n} of {len(check[kind][1])}" for kind, n in missed.items())
                )
            if val_loss < best[0]:
                best = (val_loss, copy.deepcopy(net))
        if step == steps:
            break
    return best[1].eval()


def fit_temperature(logits: np.ndarray, labels: np.ndarray) -> float:
    """The temperature minimising the negative log-likelihood of ``labels`` (a grid search)."""
    best = (math.inf, 1.0)
    for t in np.exp(np.linspace(math.log(0.3), math.log(5.0), 200)):
        z = logits / t
        z = z - z.max(axis=1, keepdims=True)
        nll = float(-(z[np.arange(len(z)), labels] - np.log(np.exp(z).sum(axis=1))).mean())
        best = min(best, (nll, float(t)))
    return best[1]


# -- command line ----------------------------------------------------------------------------------


def export_detector(net: Any, path: Path) -> None:
    """Write the detector to ONNX (the heat's sigmoid inside, any input size that is a multiple of 16),
    its first layer folded (:mod:`vision.stem`) and its decoder's joins split (:mod:`tools.stem`)."""
    import torch

    net.export = True
    try:
        torch.onnx.export(
            net,
            (torch.zeros(1, 1, 64, 64),),
            str(path),
            dynamo=False,
            opset_version=13,
            input_names=["grey"],
            output_names=["boxes"],
            dynamic_axes={"grey": {2: "height", 3: "width"}, "boxes": {2: "rows", 3: "columns"}},
        )
    finally:
        net.export = False
    fold_stem(path)
    split_upsampled(path)


def export_classifier(net: Any, temperature: float, path: Path) -> None:
    """Write the classifier to ONNX with its logits divided by ``temperature``, any batch size."""
    import copy

    import torch

    net = copy.deepcopy(net).eval()
    last = net[-1]
    with torch.no_grad():
        last.weight /= temperature
        last.bias /= temperature
    torch.onnx.export(
        net,
        (torch.zeros(1, 3, reader.CLS_SIZE, reader.CLS_SIZE),),
        str(path),
        dynamo=False,
        opset_version=13,
        input_names=["crops"],
        output_names=["logits"],
        dynamic_axes={"crops": {0: "n"}, "logits": {0: "n"}},
    )


def check_export(det: Any, cls: Any, temperature: float, out: Path, cache: PhotoCache) -> float:
    """The largest difference between OpenCV's and torch's outputs on a few real inputs.

    ``det`` None: the detector was not trained here (its ONNX file is shipped as it was), only
    the classifier is compared.
    """
    import torch

    det_net = cv2.dnn.readNetFromONNX(str(out / reader.DETECTOR_FILE.name))
    cls_net = cv2.dnn.readNetFromONNX(str(out / reader.CLASSIFIER_FILE.name))
    worst = 0.0
    for n in range(0, len(cache), max(1, len(cache) // 5)):
        grey = cv2.cvtColor(cache.images[n], cv2.COLOR_BGR2GRAY)
        for scale in reader.pyramid_scales(*grey.shape) if det is not None else []:
            size = (max(1, round(grey.shape[1] * scale)), max(1, round(grey.shape[0] * scale)))
            blob = reader.detector_input(cv2.resize(grey, size, interpolation=cv2.INTER_AREA))
            det_net.setInput(blob)
            ours = det_net.forward()
            theirs = torch_detector_forward(det)(blob)
            worst = max(worst, float(np.abs(ours - theirs).max()))
        crops = np.stack([reader.face_crop(cache.images[n], tuple(b)) for b in cache.boxes[n]])  # type: ignore[arg-type]
        blob = reader.classifier_input(crops)
        cls_net.setInput(blob)
        ours = cls_net.forward()
        with torch.no_grad():
            theirs = cls(torch.from_numpy(blob)).numpy() / temperature
        worst = max(worst, float(np.abs(ours - theirs).max()))
    return worst


def main(argv: list[str] | None = None) -> int:
    """Train, calibrate, export and check both networks."""
    import torch

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA_DIR)
    parser.add_argument("--out", type=Path, default=reader.MODEL_DIR)
    parser.add_argument("--work", type=Path, default=Path("/tmp/bgboard-dice-train"), help="checkpoints")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--det-steps", type=int, default=6000)
    parser.add_argument("--det-from", type=Path, help="detector weights (.pt) to go on training from")
    parser.add_argument(
        "--det-onnx",
        type=Path,
        help="run this detector ONNX file with OpenCV instead of a trained one (to mine; exported as it is);"
        " the default when the detector stage is not run and --work holds no detector.pt: the shipped file",
    )
    parser.add_argument("--cls-epochs", type=int, default=10, help="of 40,000 crops each")
    parser.add_argument(
        "--negatives", type=float, default=1.0, help="how many synthetic negative pictures, times the usual (0: none)"
    )
    parser.add_argument(
        "--frames3d", type=Path, help="3D-rendered setups (python -m tools.render3d) whose dice it learns too"
    )
    parser.add_argument("--stages", default="detector,mine,negatives,classifier,export")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    cv2.setNumThreads(1)
    args.work.mkdir(parents=True, exist_ok=True)
    stages = set(args.stages.split(","))
    start = time.time()

    def log(message: str) -> None:
        print(f"[{time.time() - start:7.0f} s] {message}", flush=True)

    photos = load_photos(args.data)
    train = PhotoCache([p for p in photos if p.part == "train"])
    val = PhotoCache([p for p in photos if p.part == "val"])
    log(f"{len(train)} training photos ({sum(map(len, train.boxes))} dice), {len(val)} validation photos")

    det_file, cls_file = args.work / "detector.pt", args.work / "classifier.pt"
    mined_file, negatives_file = args.work / "mined.npz", args.work / "negatives.pkl"
    if "detector" in stages:
        # Every third validation photo is enough to pick the best net, and three times faster.
        det = train_detector(
            train, PhotoCache(val.photos[::3]), args.det_steps, args.seed, log, det_file, args.det_from
        )
        torch.save(det.state_dict(), det_file)
    det_onnx = args.det_onnx
    if det_onnx is None and "detector" not in stages and not det_file.exists():
        det_onnx = reader.DETECTOR_FILE
    if det_onnx is not None:
        log(f"detector: {det_onnx}, run with OpenCV")
        det = None
        forward = onnx_detector_forward(det_onnx)
    else:
        det = build_detector()
        det.load_state_dict(torch.load(det_file))
        det.eval()
        forward = torch_detector_forward(det)

    if "mine" in stages:
        mined = {"train": mine_detections(forward, train, MINE_THRESHOLD)}
        mined["val"] = mine_detections(forward, val, MINE_THRESHOLD)
        np.savez(
            mined_file,
            **{f"{name}_{k}": np.array([m[k] for m in items]) for name, items in mined.items() for k in range(3)},
        )
        log(f"mined {len(mined['train'])} training boxes, {len(mined['val'])} validation boxes")
    if "negatives" in stages:
        log("synthetic negatives (to learn from, then to check on):")
        negatives: dict[str, Any] = {"learn": {}, "check": {}}
        if args.negatives > 0:
            negatives["learn"] = synthetic_negatives(forward, args.seed, args.negatives, log)
            negatives["check"] = synthetic_negatives(forward, args.seed + 1, 0.1 * args.negatives, log)
        with negatives_file.open("wb") as f:
            pickle.dump(negatives, f, protocol=pickle.HIGHEST_PROTOCOL)
    if not stages & {"classifier", "export"}:
        return 0
    data = np.load(mined_file)
    mined = {name: list(zip(*(data[f"{name}_{k}"] for k in range(3)), strict=True)) for name in ("train", "val")}
    val_items = [(int(n), b, int(label)) for n, b, label in mined["val"]]

    if "classifier" in stages:
        train_items = [(int(n), b, int(label)) for n, b, label in mined["train"]]
        negatives = {"learn": {}, "check": {}}
        if negatives_file.exists() and args.negatives > 0:
            with negatives_file.open("rb") as f:
                negatives = pickle.load(f)
        if args.frames3d is not None:
            negatives["learn"]["rendered3d"] = rendered_dice(args.frames3d, held_out=False)
            negatives["check"]["rendered3d"] = rendered_dice(args.frames3d, held_out=True)
            log(
                f"3D-rendered dice: {len(negatives['learn']['rendered3d'])} to learn from,"
                f" {len(negatives['check']['rendered3d'])} held out"
            )
        cls = train_classifier(
            train, train_items, val_items, val, args.cls_epochs, args.seed, log, negatives["learn"], negatives["check"]
        )
        torch.save(cls.state_dict(), cls_file)
    cls = build_classifier()
    cls.load_state_dict(torch.load(cls_file))
    cls.eval()

    if "export" in stages:
        crops = np.stack([reader.face_crop(val.images[n], tuple(b)) for n, b, _ in val_items])  # type: ignore[arg-type]
        with torch.no_grad():
            logits = cls(torch.from_numpy(reader.classifier_input(crops))).numpy()
        labels = np.array([label for _, _, label in val_items])
        temperature = fit_temperature(logits, labels)
        log(f"temperature {temperature:.3f} (fitted on {len(labels)} validation detections)")
        args.out.mkdir(parents=True, exist_ok=True)
        if det is not None:
            export_detector(det, args.out / reader.DETECTOR_FILE.name)
        elif det_onnx is not None and det_onnx.resolve() != (args.out / reader.DETECTOR_FILE.name).resolve():
            shutil.copyfile(det_onnx, args.out / reader.DETECTOR_FILE.name)
        export_classifier(cls, temperature, args.out / reader.CLASSIFIER_FILE.name)
        log(f"OpenCV against torch: largest difference {check_export(det, cls, temperature, args.out, val):.2e}")
        for path in (reader.DETECTOR_FILE, reader.CLASSIFIER_FILE):
            log(f"{path.name}: {(args.out / path.name).stat().st_size / 1024:.0f} KiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
