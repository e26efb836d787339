# SPDX-License-Identifier: MIT
"""How well :func:`vision.dice.read_dice` reads the held-out dice photos, and how fast.

Run from the project root::

    python bench/vision_dice.py [--data ../shared/data/dice] [--threads 1] [--every N] [--json]
    python bench/vision_dice.py --sizes 0.5,1,2.5,5.125 [--every N]
    python bench/vision_dice.py --causes [--every N]

The photos are the held-out part of both labelled data sets (``tools/train_dice.py`` defines
the split; none of them was used to train or tune the reader). Per data set and together it
prints: the labelled dice; the share *found* (a reading's box overlaps the label's with IoU >=
0.5, one to one; and with IoU >= 0.3, as some labels are loose); the share of found dice *read
right*; the wrong readings with a confidence at or above :data:`vision.dice.CONFIDENT`, and
how right the confident readings are; readings of no labelled die; and the median time per
photo (decoded image in, readings out; OpenCV limited to ``--threads`` threads).

``--sizes`` reads every photo again resized by each factor (the labels with it) and prints the
figures per factor, with the readings of no labelled die per photo: the held-out photos are
640 pixels square, so 5.125 makes them 3280 pixels across, a Raspberry Pi camera's full frame,
where a die is some 100 to 1700 pixels and each pip a die's size at 640.

``--causes`` says where the labelled dice that are not found are lost, by their size (the
label's longer side, pixels): *found*; *size rule*, read as a die but dropped as off the
photo's die size or as clashing with a better reading (:func:`vision.dice.size_consistent`);
*no die*, boxed (IoU >= 0.5) but read as no die; *loose*, boxed at best with IoU 0.3 to 0.5;
*missed*, not even that; and *wrong*, found and read as another face.
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
from vision.dice import CONFIDENT, candidates, iou, read_dice, size_consistent

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
        "extra_per_photo": sum(r["extra"] for r in rows) / len(rows) if rows else 0.0,
        "median_ms": 1000 * statistics.median(times) if times else 0.0,
    }


def resized(image: np.ndarray, factor: float) -> np.ndarray:
    """``image`` resized by ``factor`` (area averaging down, bicubic up), as a camera would see it."""
    if factor == 1.0:
        return image
    size = (max(1, round(image.shape[1] * factor)), max(1, round(image.shape[0] * factor)))
    return cv2.resize(image, size, interpolation=cv2.INTER_AREA if factor < 1 else cv2.INTER_CUBIC)


def measure_photo(photo: Photo, image: np.ndarray | None = None, factor: float = 1.0) -> dict[str, Any]:
    """Read one labelled photo (resized by ``factor``) and score the readings against its labels."""
    if image is None:
        image = photo.image()
    image = resized(image, factor)
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


def measure_dice(data_dir: Path = DATA_DIR, threads: int = 1, every: int = 1, factor: float = 1.0) -> dict[str, Any]:
    """Score the reader on the held-out photos; per data set and in total.

    :param data_dir: the shared dice data (``../shared/data/dice``).
    :param threads: OpenCV's thread count while reading (restored afterwards).
    :param every: use every ``every``-th held-out photo of each data set (1: all).
    :param factor: read each photo resized by this much (see :func:`resized`).
    :returns: ``{"datasets": {name: summary}, "total": summary, "confident": threshold}``; a
        summary holds ``photos``, ``labelled``, ``found`` and ``read_right`` (shares),
        ``found_and_right``, ``confident_share``, ``confident_right``, ``confident_wrong`` (a
        count), ``wrong``, ``extra`` (readings of no labelled die), ``extra_per_photo`` and
        ``median_ms``.
    """
    photos = held_out(data_dir)
    by_set: dict[str, list[Photo]] = {}
    for photo in photos:
        by_set.setdefault(photo.dataset, []).append(photo)
    saved = cv2.getNumThreads()
    cv2.setNumThreads(threads)
    try:
        read_dice(np.zeros((64, 64, 3), np.uint8))  # load the networks outside the timing
        rows = {
            name: [measure_photo(p, factor=factor) for p in group[::every]] for name, group in sorted(by_set.items())
        }
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
    parser.add_argument(
        "--sizes", type=_factors, default=None, help="comma-separated resize factors, e.g. 0.5,1,2.5,5.125"
    )
    parser.add_argument("--causes", action="store_true", help="where the dice not found are lost, by size")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.sizes is not None:
        return _by_size(args)
    if args.causes:
        return _causes(args)
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


#: The size bands of ``--causes``: a label's longer side, pixels, up to each bound.
BANDS = (16, 24, 32, 48, 96, 10**6)
CAUSES = ("found", "size rule", "no die", "loose", "missed", "wrong")


def photo_causes(photo: Photo, image: np.ndarray | None = None) -> list[tuple[float, str, bool]]:
    """Each labelled die of ``photo``: its size (the label's longer side, pixels), what became
    of it (one of :data:`CAUSES` but ``wrong``) and, found, whether it was read right."""
    if image is None:
        image = photo.image()
    boxes, readings = candidates(image)
    final = size_consistent(readings)
    truth = photo.boxes(image.shape[1], image.shape[0])

    def as_array(items: list[Any]) -> np.ndarray:
        return np.array([r.box for r in items], np.float64).reshape(-1, 4)

    kept = dict(match(truth, as_array(final)))
    read = dict(match(truth, as_array(readings)))
    best = iou(truth, boxes[:, :4]).max(axis=1) if len(boxes) and len(truth) else np.zeros(len(truth))
    out = []
    for t, (box, value) in enumerate(zip(truth, photo.values, strict=True)):
        size = float(max(box[2], box[3]))
        if t in kept:
            out.append((size, "found", final[kept[t]].value == int(value)))
        elif t in read:
            out.append((size, "size rule", False))
        else:
            out.append((size, "no die" if best[t] >= 0.5 else "loose" if best[t] >= LOOSE_IOU else "missed", False))
    return out


def measure_causes(data_dir: Path = DATA_DIR, every: int = 1) -> dict[str, dict[int, dict[str, int]]]:
    """:func:`photo_causes` over the held-out photos: per data set and size band (its upper
    bound, see :data:`BANDS`), the labelled dice and how many met each of :data:`CAUSES`."""
    by_set: dict[str, list[Photo]] = {}
    for photo in held_out(data_dir):
        by_set.setdefault(photo.dataset, []).append(photo)
    out: dict[str, dict[int, dict[str, int]]] = {}
    for name, group in sorted(by_set.items()):
        bands = out[name] = {b: dict.fromkeys(("dice", *CAUSES), 0) for b in BANDS}
        for photo in group[::every]:
            for size, cause, right in photo_causes(photo):
                band = bands[next(b for b in BANDS if size < b)]
                band["dice"] += 1
                band[cause] += 1
                band["wrong"] += cause == "found" and not right
    return out


def _factors(text: str) -> list[float]:
    factors = [float(f) for f in text.split(",") if f.strip()]
    if not factors or any(f <= 0 for f in factors):
        raise argparse.ArgumentTypeError(f"expected positive factors separated by commas, got {text!r}")
    return factors


def _causes(args: argparse.Namespace) -> int:
    """The labelled dice by size band and what became of them."""
    saved = cv2.getNumThreads()
    cv2.setNumThreads(args.threads)
    try:
        result = measure_causes(args.data, args.every)
    finally:
        cv2.setNumThreads(saved)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print("held-out dice by size (the label's longer side, pixels) and what became of them")
    print(f"{'':14} {'size':>9} {'dice':>5}" + "".join(f" {c:>9}" for c in CAUSES))
    for name, bands in result.items():
        low = 0
        for bound, counts in [*bands.items(), (0, {k: sum(b[k] for b in bands.values()) for k in ("dice", *CAUSES)})]:
            label = "all" if bound == 0 else f"{low}-{bound}" if bound < BANDS[-1] else f"{low}+"
            low = bound
            print(f"{name:14} {label:>9} {counts['dice']:5d}" + "".join(f" {counts[c]:9d}" for c in CAUSES))
    print(
        "found: IoU >= 0.5 with a reading; size rule: read, then dropped by the one-size rule;"
        f" no die: boxed, read as no die; loose: boxed with IoU {LOOSE_IOU} to 0.5; missed: less;"
        " wrong: found and read as another face"
    )
    return 0


def _by_size(args: argparse.Namespace) -> int:
    """The figures for the photos together, once per resize factor."""
    results = {f: measure_dice(args.data, args.threads, args.every, f) for f in args.sizes}
    if args.json:
        print(json.dumps({str(f): r for f, r in results.items()}, indent=2))
        return 0
    machine = platform.processor() or platform.machine()
    print(f"dice reader on held-out photos resized ({machine}, {args.threads} thread(s))")
    print(
        f"{'factor':>6} {'side':>5} {'photos':>6} {'dice':>6} {'extra/ph':>8} {'found':>7} {'right':>7}"
        f" {'c.right':>8} {'c.wrong':>7} {'ms/photo':>8}"
    )
    for factor, result in results.items():
        s = result["total"]
        print(
            f"{factor:6.3g} {round(640 * factor):5d} {s['photos']:6d} {s['labelled']:6d} {s['extra_per_photo']:8.2f}"
            f" {s['found']:7.2%} {s['read_right']:7.2%} {s['confident_right']:8.2%} {s['confident_wrong']:7d}"
            f" {s['median_ms']:8.1f}"
        )
    print("side: of the 640-pixel photos once resized; columns as without --sizes (found: IoU >= 0.5)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
