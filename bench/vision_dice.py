# SPDX-License-Identifier: MIT
"""How well :func:`vision.dice.read_dice` reads the held-out dice photos, and how fast.

Run from the project root::

    python bench/vision_dice.py [--data ../shared/data/dice] [--threads 1] [--json]

The photos are the held-out part of both labelled data sets (``tools/train_dice.py`` defines
the split; none of them was used to train or tune the reader). Per data set and together it
prints: the labelled dice; the share *found* (a reading's box overlaps the label's with IoU >=
0.5, one to one; and with IoU >= 0.3, as some labels are loose); the share of found dice *read
right*; the wrong readings with a confidence at or above :data:`vision.dice.CONFIDENT`, and
how right the confident readings are; readings of no labelled die; and the median time per
photo (decoded image in, readings out; OpenCV limited to ``--threads`` threads).
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import cv2
import numpy as np

from tools.train_dice import DATA_DIR, Photo, held_out, match
from vision.dice import CONFIDENT, read_dice

#: Some boxes in the Roboflow set are drawn loosely (round a die and its neighbour's edge, or a
#: die cut by the photo's edge): a reading overlapping its label by this much is also counted,
#: as a second figure.
LOOSE_IOU = 0.3


def _summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    labelled = sum(r["labelled"] for r in rows)
    found = sum(r["found"] for r in rows)
    loose = sum(r["found_loose"] for r in rows)
    right = sum(r["right"] for r in rows)
    confident = sum(r["confident"] for r in rows)
    confident_wrong = sum(r["confident_wrong"] for r in rows)
    times = [r["seconds"] for r in rows]
    return {
        "photos": len(rows),
        "labelled": labelled,
        "found": found / labelled if labelled else 0.0,
        "found_loose": loose / labelled if labelled else 0.0,
        "read_right": right / found if found else 0.0,
        "found_and_right": right / labelled if labelled else 0.0,
        "confident_share": confident / found if found else 0.0,
        "confident_right": (confident - confident_wrong) / confident if confident else 0.0,
        "confident_wrong": confident_wrong,
        "wrong": found - right,
        "extra": sum(r["extra"] for r in rows),
        "median_ms": 1000 * statistics.median(times) if times else 0.0,
    }


def measure_photo(photo: Photo, image: np.ndarray | None = None) -> dict[str, Any]:
    """Read one labelled photo and score the readings against its labels."""
    if image is None:
        image = photo.image()
    start = time.perf_counter()
    readings = read_dice(image)
    seconds = time.perf_counter() - start
    truth = photo.boxes(image.shape[1], image.shape[0])
    boxes = np.array([r.box for r in readings], np.float64).reshape(-1, 4)
    pairs = match(truth, boxes)
    loose = match(truth, boxes, LOOSE_IOU)
    values = photo.values
    right = [int(values[t]) == readings[f].value for t, f in pairs]
    confident = [readings[f].confidence >= CONFIDENT for _, f in pairs]
    return {
        "name": photo.key,
        "labelled": len(truth),
        "found": len(pairs),
        "found_loose": len(loose),
        "right": sum(right),
        "confident": sum(confident),
        "confident_wrong": sum(c and not r for c, r in zip(confident, right, strict=True)),
        "extra": len(readings) - len(pairs),
        "seconds": seconds,
    }


def measure_dice(data_dir: Path = DATA_DIR, threads: int = 1, every: int = 1) -> dict[str, Any]:
    """Score the reader on the held-out photos; per data set and in total.

    :param data_dir: the shared dice data (``../shared/data/dice``).
    :param threads: OpenCV's thread count while reading (restored afterwards).
    :param every: use every ``every``-th held-out photo of each data set (1: all).
    :returns: ``{"datasets": {name: summary}, "total": summary, "confident": threshold}``; a
        summary holds ``photos``, ``labelled``, ``found`` and ``read_right`` (shares),
        ``found_and_right``, ``confident_share``, ``confident_right``, ``confident_wrong`` (a
        count), ``wrong``, ``extra`` (readings of no labelled die) and ``median_ms``.
    """
    photos = held_out(data_dir)
    by_set: dict[str, list[Photo]] = {}
    for photo in photos:
        by_set.setdefault(photo.dataset, []).append(photo)
    saved = cv2.getNumThreads()
    cv2.setNumThreads(threads)
    try:
        read_dice(np.zeros((64, 64, 3), np.uint8))  # load the networks outside the timing
        rows = {name: [measure_photo(p) for p in group[::every]] for name, group in sorted(by_set.items())}
    finally:
        cv2.setNumThreads(saved)
    return {
        "datasets": {name: _summary(r) for name, r in rows.items()},
        "total": _summary([r for group in rows.values() for r in group]),
        "confident": CONFIDENT,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA_DIR)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--every", type=int, default=1)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result = measure_dice(args.data, args.threads, args.every)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"dice reader on held-out photos ({platform.processor() or platform.machine()}, {args.threads} thread(s))")
    header = f"{'':14} {'photos':>6} {'dice':>6} {'found':>7} {'f.0.3':>7} {'right':>7} {'conf.':>6} {'c.right':>8}"
    print(header + f" {'c.wrong':>7} {'extra':>5} {'ms/photo':>8}")
    for name, s in [*result["datasets"].items(), ("together", result["total"])]:
        print(
            f"{name:14} {s['photos']:6d} {s['labelled']:6d} {s['found']:7.2%} {s['found_loose']:7.2%}"
            f" {s['read_right']:7.2%}"
            f" {s['confident_share']:6.1%} {s['confident_right']:8.2%} {s['confident_wrong']:7d}"
            f" {s['extra']:5d} {s['median_ms']:8.1f}"
        )
    print(
        f"found: IoU >= 0.5 with a reading (f.0.3: IoU >= {LOOSE_IOU}); right: of the found;"
        f" conf.: share of found at confidence >= {result['confident']}; c.right: how many of those are right;"
        " c.wrong: wrong ones among them;"
        " extra: readings of no labelled die"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
