# SPDX-License-Identifier: MIT
"""Train the learned point reader (:mod:`vision.points_net`) and export it to ONNX.

Run from the project root, with the ``train`` extra installed (``pip install -e '.[train]'``)::

    python tools/train_points.py [--setups2d 600] [--frames 8] [--frames3d DIR ...] [--epochs 14]

Every training example is one strip (:mod:`vision.strips`), a point or a half of the bar, with
its reference (the same strip bare, from the calibration frame or learnt in play), cut from a
frame with the homography of a calibration made as a user makes one, and labelled with the
stack it holds. The frames come in *setups*, one board under one camera and light each:

- the 2D renderer (:mod:`vision.render`): ``--setups2d`` random boards, cameras and lamps, each
  calibrated on its own starting position, then ``--frames`` random positions on it (dice, the
  cube or a doubling track, the lamp drifting a little between frames);
- folders of 3D-rendered setups (``tools/render3d``), ``--frames3d``: each setup's folder holds
  its calibration frame ``00`` and the frames after it, each with its labels.

The corners a setup is cut with are the true ones moved by a few pixels, as a user's clicks or
the markers' detection would be, and each frame moves them a little more (a camera is never
quite still). The split is by setup: setups whose seed is 0 modulo 5 are held out (test), 1
modulo 5 choose the temperature (validation), the rest train. The network's logits are divided
by the fitted temperature before export, so its probabilities are the confidences the reader
reports. Collected strips are cached in ``--cache`` (by source), so a second run trains at once.

Only this script needs torch; the shipped reader runs the ONNX file with OpenCV alone.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from engine.position import Position  # noqa: E402
from tools.stem import fold_stem, transpose_spatial  # noqa: E402
from tools.train_dice import fit_temperature  # noqa: E402
from vision import points_net  # noqa: E402
from vision.calibration import CalibrationError, calibrate  # noqa: E402
from vision.geometry import FieldGeometry  # noqa: E402
from vision.profile import ProfileError, field_homography  # noqa: E402
from vision.render import CubeSpec, Lighting, Scene, random_scene, random_setup, render  # noqa: E402
from vision.strips import (  # noqa: E402
    CHANNELS,
    CLASSES,
    STRIP_H,
    STRIP_W,
    STRIPS,
    References,
    StripCutter,
    encode,
    strip_counts,
    strip_labels,
)

#: How far (standard deviation, as a share of the image's width) a setup's corners stray from
#: the true ones: about 2 pixels on a 1280-pixel frame, a careful click.
CORNER_JITTER = 2.0 / 1280
#: ... and how far each frame's stray further from the setup's.
FRAME_DRIFT = 0.5 / 1280
PARTS = ("test", "val", "train", "train", "train")
#: The share of the bare strips trained on in each epoch (all the others are).
BARE_SHARE = 0.35
#: The chance that a training strip's borrowed reference is swapped for one learnt in play (the
#: same strip bare in another frame of its setup), as happens once players confirm positions.
LEARNT = 0.5


@dataclass
class Examples:
    """Frames of strips, grouped in setups (one board, camera and light each).

    Per setup: the references, which are borrowed, the two checker colours (Lab, as calibration
    learnt them), its name. Per frame: its setup's index, its strips (BGR) and their classes.
    """

    refs: list[np.ndarray] = field(default_factory=list)  # each (26, H, W, 3)
    borrowed: list[np.ndarray] = field(default_factory=list)  # each (26,)
    colours: list[np.ndarray] = field(default_factory=list)  # each (2, 3)
    names: list[str] = field(default_factory=list)
    setup_of: list[int] = field(default_factory=list)
    strips: list[np.ndarray] = field(default_factory=list)  # each (26, H, W, 3)
    labels: list[np.ndarray] = field(default_factory=list)  # each (26,)

    def add_setup(self, refs: References, colours: np.ndarray, name: str) -> int:
        """A new setup; returns its index."""
        self.refs.append(refs.strips)
        self.borrowed.append(refs.borrowed.astype(bool))
        self.colours.append(np.asarray(colours, np.float32))
        self.names.append(name)
        return len(self.names) - 1

    def add_frame(self, setup: int, strips: np.ndarray, labels: np.ndarray) -> None:
        """One frame's strips and classes."""
        self.setup_of.append(setup)
        self.strips.append(strips)
        self.labels.append(labels)

    def extend(self, other: Examples) -> None:
        """Append another set's setups and frames."""
        offset = len(self.names)
        self.refs += other.refs
        self.borrowed += other.borrowed
        self.colours += other.colours
        self.names += other.names
        self.setup_of += [s + offset for s in other.setup_of]
        self.strips += other.strips
        self.labels += other.labels

    def save(self, path: Path) -> None:
        """Write to an ``.npz`` file."""
        np.savez(
            path,
            refs=np.stack(self.refs),
            borrowed=np.stack(self.borrowed),
            colours=np.stack(self.colours),
            names=np.asarray(self.names),
            setup_of=np.asarray(self.setup_of, np.int64),
            strips=np.stack(self.strips),
            labels=np.stack(self.labels),
        )

    @classmethod
    def load(cls, path: Path) -> Examples:
        """Read what :meth:`save` wrote."""
        data = np.load(path)
        return cls(
            list(data["refs"]),
            list(data["borrowed"]),
            list(data["colours"]),
            [str(n) for n in data["names"]],
            [int(s) for s in data["setup_of"]],
            list(data["strips"]),
            list(data["labels"]),
        )

    def __len__(self) -> int:
        return len(self.strips)


def part_of(name: str) -> str:
    """``test``, ``val`` or ``train`` for a setup, by its seed (the digits of its name)."""
    digits = "".join(ch for ch in name.rsplit("/", 1)[-1] if ch.isdigit())
    seed = int(digits) if digits else zlib.crc32(name.encode())
    return PARTS[seed % 5]


def checker_colours(models: dict[str, Any]) -> np.ndarray:
    """Player 1's and player 2's checker colour (Lab) as a calibration learnt them."""
    return np.asarray([models["p1"].mean, models["p2"].mean], np.float32)


def _cutter(corners: np.ndarray, bar_fraction: float, checker_fraction: float = 0.92) -> StripCutter:
    geometry = FieldGeometry(bar_fraction=bar_fraction, checker_fraction=checker_fraction)
    return StripCutter(geometry, field_homography(corners))


def _start_scene() -> Scene:
    points, bar, off = Position.STARTING.to_absolute(1)
    return Scene(points=tuple(points), bar=bar, off=off, cube=CubeSpec())


def _drifted(lighting: Lighting, rng: np.random.Generator) -> Lighting:
    """The lamp and sensor a little changed: a frame taken a while after calibration."""
    return replace(
        lighting,
        exposure=float(lighting.exposure * rng.uniform(0.92, 1.08)),
        colour_temperature=float(lighting.colour_temperature + rng.normal(0, 150)),
        lamp_strength=float(np.clip(lighting.lamp_strength + rng.normal(0, 0.04), 0.0, 0.6)),
        noise=float(np.clip(lighting.noise * rng.uniform(0.8, 1.25), 0.5, 8.0)),
    )


def collect_2d(first: int, setups: int, frames: int, log: Any) -> Examples:
    """Examples from the 2D renderer: setups ``first`` to ``first + setups - 1`` (their seeds)."""
    out = Examples()
    started = time.monotonic()
    for seed in range(first, first + setups):
        rng = np.random.default_rng(seed)
        style, camera, lighting = random_setup(rng)
        shot = render(_start_scene(), style=style, camera=camera, lighting=lighting, seed=seed)
        width = camera.size[0]
        corners = shot.corners + rng.normal(0.0, CORNER_JITTER * width, (4, 2))
        try:
            profile = calibrate(shot.image, corners, bar_fraction=style.bar_fraction)
        except (CalibrationError, ProfileError):
            continue
        cutter = _cutter(corners, style.bar_fraction)
        points, bar, _ = Position.STARTING.to_absolute(1)
        refs = References.from_frame(cutter.colour(shot.image), strip_counts(points, bar), cutter.geometry)
        index = out.add_setup(refs, checker_colours(profile.models), f"2d/{seed}")
        for f in range(frames):
            scene = random_scene(rng)
            light = _drifted(lighting, rng) if rng.random() < 0.6 else lighting
            frame = render(scene, style=style, camera=camera, lighting=light, seed=seed * 1000 + f + 1)
            moved = corners + rng.normal(0.0, FRAME_DRIFT * width, (4, 2))
            strips = _cutter(moved, style.bar_fraction).colour(frame.image)
            out.add_frame(index, strips, strip_labels(scene.points, scene.bar))
        if (seed - first + 1) % 50 == 0:
            log(f"2D: {seed - first + 1} setups, {len(out)} frames, {time.monotonic() - started:.0f} s")
    return out


def _read_frame(path: Path) -> tuple[np.ndarray, dict[str, Any]] | None:
    image = cv2.imread(str(path.with_suffix(".jpg")))
    if image is None:
        image = cv2.imread(str(path.with_suffix(".png")))
    if image is None:
        return None
    return image, json.loads(path.read_text(encoding="utf-8"))


def collect_3d(folder: Path, log: Any) -> Examples:
    """Examples from a folder of 3D-rendered setups (``<setup>/<nn>.jpg`` with ``<nn>.json``).

    The first frame of each setup (in name order) is its calibration frame.
    """
    out = Examples()
    for setup in sorted(p for p in folder.iterdir() if p.is_dir()):
        labels = sorted(p for p in setup.glob("*.json") if p.stem.isdigit())
        if len(labels) < 2:
            continue
        first = _read_frame(labels[0])
        if first is None:
            continue
        image, label = first
        rng = np.random.default_rng(zlib.crc32(setup.name.encode()))
        width = image.shape[1]
        corners = np.asarray(label["corners"], np.float64) + rng.normal(0.0, CORNER_JITTER * width, (4, 2))
        bar_fraction = float(label.get("bar_fraction", 0.0))
        checker_fraction = float(label.get("checker_fraction", 0.92))
        try:
            profile = calibrate(image, corners, bar_fraction=bar_fraction)
        except (CalibrationError, ProfileError) as exc:
            log(f"3D: {setup.name}: calibration refused: {exc}")
            continue
        cutter = _cutter(corners, bar_fraction, checker_fraction)
        refs = References.from_frame(cutter.colour(image), strip_counts(label["points"], label["bar"]), cutter.geometry)
        index = out.add_setup(refs, checker_colours(profile.models), f"3d/{setup.name}")
        for path in labels[1:]:
            got = _read_frame(path)
            if got is None:
                continue
            image, label = got
            if label.get("hand"):
                continue  # a hand hides points: the reader says "occluded" instead of reading them
            moved = corners + rng.normal(0.0, FRAME_DRIFT * width, (4, 2))
            strips = _cutter(moved, bar_fraction, checker_fraction).colour(image)
            out.add_frame(index, strips, strip_labels(label["points"], label["bar"]))
    log(f"3D: {folder}: {len(out.names)} setups, {len(out)} frames")
    return out


# -- the network ---------------------------------------------------------------------------------


def build_network() -> Any:
    """A small convolutional network, depthwise-separable after its first layer (so that a
    frame's 26 strips take a few milliseconds on one core): strip in, one logit per class out."""
    from torch import nn

    def cbr(i: int, o: int, stride: int = 1) -> list[nn.Module]:
        return [nn.Conv2d(i, o, 3, stride=stride, padding=1, bias=False), nn.BatchNorm2d(o), nn.ReLU(inplace=True)]

    def sep(i: int, o: int) -> list[nn.Module]:
        return [
            nn.Conv2d(i, i, 3, padding=1, groups=i, bias=False),
            nn.BatchNorm2d(i),
            nn.ReLU(inplace=True),
            nn.Conv2d(i, o, 1, bias=False),
            nn.BatchNorm2d(o),
            nn.ReLU(inplace=True),
        ]

    return nn.Sequential(
        *cbr(CHANNELS, 24, 2),  # 48 x 10
        *sep(24, 32),
        nn.MaxPool2d(2),  # 24 x 5
        *sep(32, 64),
        *sep(64, 64),
        nn.MaxPool2d((2, 1)),  # 12 x 5
        *sep(64, 96),
        nn.Flatten(),
        nn.Dropout(0.2),
        nn.Linear(96 * (STRIP_H // 8) * (STRIP_W // 4), 96),
        nn.ReLU(inplace=True),
        nn.Linear(96, CLASSES),
    )


class Sampler:
    """Training strips with their references, encoded, augmented."""

    def __init__(self, data: Examples, frames: np.ndarray) -> None:
        self.data = data
        self.frames = frames
        self.strips = np.stack([data.strips[f] for f in frames])
        self.labels = np.stack([data.labels[f] for f in frames])
        self.setup = np.asarray([data.setup_of[f] for f in frames])
        # Where each strip of each setup is seen bare: the references play can teach.
        self.bare: dict[tuple[int, int], np.ndarray] = {}
        for setup in np.unique(self.setup):
            rows = np.flatnonzero(self.setup == setup)
            for s in range(STRIPS):
                seen = rows[self.labels[rows, s] == 0]
                if len(seen):
                    self.bare[int(setup), s] = seen

    def __len__(self) -> int:
        return self.labels.size

    def batch(self, index: np.ndarray, rng: np.random.Generator | None) -> tuple[np.ndarray, np.ndarray]:
        """Encoded strips and classes for flat indexes (frame row * 26 + strip)."""
        rows, strip = np.divmod(index, STRIPS)
        x = self.strips[rows, strip]
        setups = self.setup[rows]
        refs = np.stack([self.data.refs[s][k] for s, k in zip(setups, strip, strict=True)])
        borrowed = np.asarray([self.data.borrowed[s][k] for s, k in zip(setups, strip, strict=True)])
        colours = np.stack([self.data.colours[s] for s in setups])
        if rng is not None:
            for i in np.flatnonzero(borrowed):
                seen = self.bare.get((int(setups[i]), int(strip[i])))
                if seen is not None and rng.random() < LEARNT:
                    other = int(seen[rng.integers(len(seen))])
                    if other != rows[i]:
                        refs[i] = self.strips[other, strip[i]]
                        borrowed[i] = False
            x, refs, colours = _augment(x, refs, colours, rng)
        return encode(x, refs, borrowed, colours), self.labels[rows, strip]


def _augment(
    strips: np.ndarray, refs: np.ndarray, colours: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Light and colour on strip, reference and checker colours alike; then the strip's own
    drift (the lamp since calibration), blur and noise; mirror images."""
    n = len(strips)
    gain = rng.uniform(0.8, 1.2, (n, 1, 1, 1)).astype(np.float32)
    cast = rng.normal(0.0, 5.0, (n, 1, 1, 3)).astype(np.float32)

    def light(images: np.ndarray) -> np.ndarray:
        return np.clip(images.astype(np.float32) * gain + cast, 0, 255)

    x, r = light(strips), light(refs)
    # The checker colours are Lab: take them to BGR, light them alike, and back.
    lab = colours.reshape(n * 2, 1, 3).clip(0, 255).astype(np.uint8)
    bgr = cv2.cvtColor(lab, cv2.COLOR_LAB2BGR).astype(np.float32).reshape(n, 2, 3)
    bgr = np.clip(bgr * gain[:, :, 0, 0, None] + cast[:, :, 0], 0, 255).astype(np.uint8)
    colours = cv2.cvtColor(bgr.reshape(n * 2, 1, 3), cv2.COLOR_BGR2LAB).astype(np.float32).reshape(n, 2, 3)
    drift = rng.uniform(0.93, 1.07, (n, 1, 1, 1)).astype(np.float32)
    ramp = np.linspace(-1.0, 1.0, STRIP_H, dtype=np.float32)[None, :, None, None]
    x = x * drift + rng.normal(0.0, 2.5, (n, 1, 1, 3)).astype(np.float32)
    x += ramp * rng.normal(0.0, 5.0, (n, 1, 1, 1)).astype(np.float32)
    x += rng.uniform(0.0, 4.0, (n, 1, 1, 1)).astype(np.float32) * rng.normal(0.0, 1.0, x.shape).astype(np.float32)
    x = np.clip(x, 0, 255).astype(np.uint8)
    r = np.clip(r, 0, 255).astype(np.uint8)
    mirror = rng.random(n) < 0.5
    x[mirror] = x[mirror, :, ::-1]
    r[mirror] = r[mirror, :, ::-1]
    for i in np.flatnonzero(rng.random(n) < 0.25):
        x[i] = cv2.GaussianBlur(x[i], (3, 3), float(rng.uniform(0.5, 1.2)))
    return x, r, colours


def _batches(n: int, size: int, rng: np.random.Generator) -> Iterator[np.ndarray]:
    order = rng.permutation(n)
    for start in range(0, n, size):
        yield order[start : start + size]


def train(net: Any, sampler: Sampler, epochs: int, seed: int, log: Any, repeat: np.ndarray | None = None) -> None:
    """Train ``net`` with augmentation; weights classes by their rarity a little.

    :param repeat: how many times each frame of ``sampler`` is seen per epoch (default once):
        the few 3D frames look more like a real table than the many 2D ones.
    """
    import torch
    from torch import nn

    rng = np.random.default_rng(seed)
    labels = sampler.labels.reshape(-1)
    counts = np.bincount(labels, minlength=CLASSES).astype(np.float64)
    weights = (counts.sum() / np.maximum(counts, 1.0)) ** 0.3
    weights /= weights[labels].mean()
    loss_fn = nn.CrossEntropyLoss(weight=torch.tensor(weights, dtype=torch.float32), label_smoothing=0.02)
    opt = torch.optim.AdamW(net.parameters(), lr=2e-3, weight_decay=1e-4)
    size = 256
    times = np.ones(len(labels), np.int64) if repeat is None else np.repeat(repeat, STRIPS)
    bare = np.flatnonzero(labels == 0)
    bare = np.repeat(bare, times[bare])
    stacked = np.flatnonzero(labels != 0)
    stacked = np.repeat(stacked, times[stacked])
    steps = epochs * math.ceil((len(stacked) + int(BARE_SHARE * len(bare))) / size)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=4e-3, total_steps=steps)
    for epoch in range(epochs):
        net.train()
        running, seen, started = 0.0, 0, time.monotonic()
        # Bare strips are half of all and the easiest: a share of them each epoch is enough.
        chosen = np.concatenate([stacked, rng.choice(bare, size=int(BARE_SHARE * len(bare)), replace=False)])
        for index in (chosen[i] for i in _batches(len(chosen), size, rng)):
            x, y = sampler.batch(index, rng)
            opt.zero_grad()
            loss = loss_fn(net(torch.from_numpy(x)), torch.from_numpy(y))
            loss.backward()
            opt.step()
            sched.step()
            running += float(loss.detach()) * len(index)
            seen += len(index)
        log(f"epoch {epoch + 1}/{epochs}: loss {running / seen:.4f}, {time.monotonic() - started:.0f} s")


def logits_of(net: Any, sampler: Sampler) -> np.ndarray:
    """The network's logits on every strip of ``sampler``, without augmentation."""
    import torch

    net.eval()
    out = []
    with torch.no_grad():
        for start in range(0, len(sampler), 1024):
            x, _ = sampler.batch(np.arange(start, min(start + 1024, len(sampler))), None)
            out.append(net(torch.from_numpy(x)).numpy())
    return np.concatenate(out) if out else np.zeros((0, CLASSES), np.float32)


def report(probabilities: np.ndarray, labels: np.ndarray, name: str, log: Any) -> dict[str, float]:
    """Strips right, boards right (all 26 strips), and how right the confident readings are."""
    picks = probabilities.argmax(axis=1)
    top = probabilities.max(axis=1)
    right = picks == labels
    boards = right.reshape(-1, STRIPS).all(axis=1)
    board_conf = top.reshape(-1, STRIPS).prod(axis=1)
    sure = top >= 0.9
    figures = {
        "strips": float(len(labels)),
        "strips_right": float(right.mean()),
        "boards_right": float(boards.mean()),
        "confident_strips": float(sure.mean()),
        "confident_strips_right": float(right[sure].mean()) if sure.any() else 0.0,
        "confident_strips_wrong": float((~right & sure).sum()),
        "confident_boards": float((board_conf >= 0.9).mean()),
        "confident_boards_right": float(boards[board_conf >= 0.9].mean()) if (board_conf >= 0.9).any() else 0.0,
    }
    log(
        f"{name}: {int(figures['strips'])} strips, {figures['strips_right']:.2%} right; boards "
        f"{figures['boards_right']:.2%} exact; strips at >= 0.9: {figures['confident_strips']:.1%} of them, "
        f"{figures['confident_strips_right']:.3%} right ({int(figures['confident_strips_wrong'])} wrong); "
        f"boards at >= 0.9: {figures['confident_boards']:.1%}, {figures['confident_boards_right']:.3%} right"
    )
    return figures


def export(net: Any, temperature: float, path: Path) -> None:
    """Write the network with its logits divided by ``temperature`` as ONNX, its first layer
    folded (:mod:`vision.stem`) and turned to take the strips lying down (:mod:`tools.stem`)."""
    import torch

    class Scaled(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.net = net

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.net(x) / temperature

    model = Scaled().eval()
    dummy = torch.zeros(1, CHANNELS, STRIP_H, STRIP_W)
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.onnx.export(
        model,
        (dummy,),
        str(path),
        input_names=["strips"],
        output_names=["logits"],
        dynamic_axes={"strips": {0: "n"}, "logits": {0: "n"}},
        opset_version=17,
        dynamo=False,
    )
    fold_stem(path)
    transpose_spatial(path)


def main(argv: list[str] | None = None) -> int:
    """Collect examples, train, fit the temperature, export, and report on the held-out setups."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--setups2d", type=int, default=600, help="2D-rendered setups")
    parser.add_argument("--frames", type=int, default=8, help="positions per 2D setup")
    parser.add_argument("--seed", type=int, default=2026, help="the first 2D setup's seed, and training's")
    parser.add_argument("--frames3d", type=Path, action="append", default=[], help="a folder of 3D setups")
    parser.add_argument("--epochs", type=int, default=14)
    parser.add_argument("--repeat3d", type=int, default=1, help="times a 3D training frame is seen per epoch")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/bgboard-points-train"), help="collected examples")
    parser.add_argument("--out", type=Path, default=points_net.MODEL_FILE)
    parser.add_argument("--collect-only", action="store_true", help="fill the cache, do not train")
    args = parser.parse_args(argv)

    import torch

    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    cv2.setNumThreads(1)

    def log(message: str) -> None:
        print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)

    args.cache.mkdir(parents=True, exist_ok=True)
    examples = Examples()
    chunk = 100
    for first in range(args.seed, args.seed + args.setups2d, chunk):
        count = min(chunk, args.seed + args.setups2d - first)
        cached = args.cache / f"2d-{first}-{count}x{args.frames}-{STRIP_H}x{STRIP_W}.npz"
        if cached.exists():
            part = Examples.load(cached)
        else:
            part = collect_2d(first, count, args.frames, log)
            part.save(cached)
        log(f"2D setups {first}-{first + count - 1}: {len(part)} frames")
        examples.extend(part)
    for folder in args.frames3d:
        examples.extend(collect_3d(folder, log))
    if args.collect_only:
        return 0

    parts = np.asarray([part_of(examples.names[s]) for s in examples.setup_of])
    kinds = np.asarray([examples.names[s].split("/", 1)[0] for s in examples.setup_of])
    log(f"frames: {', '.join(f'{name} {int((parts == name).sum())}' for name in ('train', 'val', 'test'))}")
    samplers = {name: Sampler(examples, np.flatnonzero(parts == name)) for name in ("train", "val")}

    net = build_network()
    chosen = samplers["train"].frames
    repeat = np.where(kinds[chosen] == "3d", max(1, args.repeat3d), 1)
    train(net, samplers["train"], args.epochs, args.seed, log, repeat)
    temperature = fit_temperature(logits_of(net, samplers["val"]), samplers["val"].labels.reshape(-1))
    log(f"temperature {temperature:.3f}")
    export(net, temperature, args.out)
    log(f"wrote {args.out} ({args.out.stat().st_size / 1024:.0f} KiB)")
    for kind in sorted(set(kinds)):
        chosen = np.flatnonzero((parts == "test") & (kinds == kind))
        if not len(chosen):
            continue
        test = Sampler(examples, chosen)
        x, y = test.batch(np.arange(len(test)), None)
        probabilities = points_net.probabilities(x, args.out)
        report(probabilities, y, f"held out ({kind}, OpenCV)", log)
    return 0


if __name__ == "__main__":
    sys.exit(main())
