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
  cube or a doubling track, the lamp drifting a little between frames). A share of them
  (``--varied``) are boards as real tables have them (:func:`vision.render.varied_style`:
  points the colour of a side's checkers, tournament cases, squarer and longer fields, thick
  checkers seen at up to 30 degrees, narrow bars with hinges, printed logos) with positions
  laid out as players leave them (:func:`vision.render.arranged`: stacks lined up six or seven
  from the edge, checkers anywhere along the bar, dice cups standing over the points' tips, in
  the calibration frame too);
- folders of 3D-rendered setups (``tools/render3d``), ``--frames3d``: each setup's folder holds
  its calibration frame ``00`` and the frames after it, each with its labels.

The corners a setup is cut with are the true ones moved by a few pixels, as a user's clicks or
the markers' detection would be, and each frame moves them a little more (a camera is never
quite still). The split is by setup: setups whose seed is 0 modulo 5 are held out (test), 1
modulo 5 choose the temperature (validation), the rest train. The network's logits are divided
by the fitted temperature before export, so its probabilities are the confidences the reader
reports. Collected strips are cached in ``--cache`` (by source), so a second run trains at once.

``--init FILE.onnx`` trains a network this script exported further, in place of one drawn at
random (:func:`load_onnx` undoes the export's folding and turning; the loaded network must give
the file's probabilities), best at a lower peak learning rate (``--lr``): the way to teach the
shipped network new cases without the 3D setups it learnt from, which take long to render again::

    python tools/train_points.py --init vision/models/points.onnx --epochs 4 --lr 1e-3

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
from tools.stem import fold_stem, transpose_spatial, unfolded_weights  # noqa: E402
from tools.train_dice import fit_temperature  # noqa: E402
from vision import points_net  # noqa: E402
from vision.calibration import CalibrationError, calibrate  # noqa: E402
from vision.geometry import FieldGeometry  # noqa: E402
from vision.profile import ProfileError, field_homography  # noqa: E402
from vision.render import (  # noqa: E402
    CubeSpec,
    CupSpec,
    Lighting,
    Scene,
    arranged,
    cup_spot,
    random_cup,
    random_scene,
    random_setup,
    render,
)
from vision.strips import (  # noqa: E402
    CHANNELS,
    CLASSES,
    STRIP_H,
    STRIP_W,
    STRIPS,
    References,
    StripCutter,
    encode,
    label_of,
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
#: The chance that a varied setup's calibration frame has dice cups standing on the field.
CUPS_AT_CALIBRATION = 0.3
#: The chance that a varied setup has cups left standing where they are, from its calibration
#: frame on (each still there in a frame with chance :data:`CUPS_STAY`, where no checker is under it).
RESTING_CUPS = 0.35
CUPS_STAY = 0.7
#: The share of a varied setup's bare strips trained on in each epoch: its bare strips hold
#: the hard cases (a point the colour of a side's checkers, a cup standing over it).
VARIED_BARE_SHARE = 0.8
#: Bumped when the renderer draws the 2D setups differently: cached strips of older ones are not reused.
RENDER_VERSION = 3


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


def scene_labels(scene: Scene) -> np.ndarray:
    """The 26 classes of a rendered scene: its points, then what lies on each half of the bar
    (a side's checkers may lie in either half: :meth:`vision.render.Scene.bar_halves`)."""
    return np.asarray([label_of(c) for c in (*scene.points, *scene.bar_halves())], np.int64)


def kind_of(name: str, varied: float) -> str:
    """A setup's kind for the figures: ``2d`` or ``2d-varied`` (see :func:`is_varied`), ``3d`` or
    ``3d-varied`` (rendered with ``--varied``)."""
    kind, _, rest = name.partition("/")
    if kind == "2d" and rest.isdigit() and is_varied(int(rest), varied):
        return "2d-varied"
    return kind


def is_varied(seed: int, share: float) -> bool:
    """Whether 2D setup ``seed`` is a varied one (drawn apart from the setup's own stream, so
    the others are what they were before varied setups existed)."""
    return bool(np.random.default_rng([seed, 7]).random() < share)


def _resting_cups(style: Any, rng: np.random.Generator) -> tuple[CupSpec, ...]:
    """One or two cups put down on a varied setup's field, to stay there (drawn only in frames
    where no checker lies under them)."""
    geometry = FieldGeometry(bar_fraction=style.bar_fraction)
    diameter = geometry.point_width * style.checker_fraction
    cups = []
    for _ in range(1 if rng.random() < 0.6 else 2):
        cup = random_cup(rng)
        cups.append(replace(cup, position=cup_spot(rng, cup, geometry, diameter, style.stretch)))
    return tuple(cups)


def collect_2d(first: int, setups: int, frames: int, log: Any, varied: float = 0.0) -> Examples:
    """Examples from the 2D renderer: setups ``first`` to ``first + setups - 1`` (their seeds),
    a share ``varied`` of them varied (see :func:`is_varied`)."""
    out = Examples()
    started = time.monotonic()
    for seed in range(first, first + setups):
        rng = np.random.default_rng(seed)
        real = is_varied(seed, varied)
        style, camera, lighting = random_setup(rng, varied=real)
        start = _start_scene()
        resting: tuple[CupSpec, ...] = ()
        if real:
            start = arranged(start, style, rng, cups=CUPS_AT_CALIBRATION)
            if rng.random() < RESTING_CUPS:
                resting = _resting_cups(style, rng)
                start = replace(start, cups=start.cups + resting)
        shot = render(start, style=style, camera=camera, lighting=lighting, seed=seed)
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
            if real:
                scene = arranged(scene, style, rng)
                kept = tuple(cup for cup in resting if rng.random() < CUPS_STAY)
                scene = replace(scene, cups=scene.cups + kept)
            light = _drifted(lighting, rng) if rng.random() < 0.6 else lighting
            frame = render(scene, style=style, camera=camera, lighting=light, seed=seed * 1000 + f + 1)
            moved = corners + rng.normal(0.0, FRAME_DRIFT * width, (4, 2))
            strips = _cutter(moved, style.bar_fraction).colour(frame.image)
            out.add_frame(index, strips, scene_labels(scene))
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


def frame_labels(label: dict[str, Any]) -> np.ndarray:
    """The 26 classes of a 3D-rendered frame from its labels: its points, then what lies on each
    half of the bar (``bar_halves``, where a side's checkers may lie in either; else each side's
    on its own half)."""
    if "bar_halves" in label:
        return np.asarray([label_of(int(c)) for c in (*label["points"], *label["bar_halves"])], np.int64)
    return strip_labels(label["points"], label["bar"])


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
        varied = bool(label.get("scene", {}).get("style", {}).get("varied"))
        index = out.add_setup(refs, checker_colours(profile.models), f"{'3d-varied' if varied else '3d'}/{setup.name}")
        for path in labels[1:]:
            got = _read_frame(path)
            if got is None:
                continue
            image, label = got
            if label.get("hand"):
                continue  # a hand hides points: the reader says "occluded" instead of reading them
            moved = corners + rng.normal(0.0, FRAME_DRIFT * width, (4, 2))
            strips = _cutter(moved, bar_fraction, checker_fraction).colour(image)
            out.add_frame(index, strips, frame_labels(label))
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


def load_onnx(net: Any, path: Path) -> float:
    """Put the weights of a network :func:`export` wrote into ``net`` (from :func:`build_network`),
    to train it further; returns the temperature its logits were divided by.

    The export turned the network to take its strips lying down and folded its first layer
    (:func:`tools.stem.transpose_spatial`, :func:`tools.stem.fold_stem`): both are undone. It
    also folded each batch normalisation into the convolution before it, leaving a bias: each
    normalisation is set to add that bias alone, so that ``net`` in eval mode gives what the
    file gives. Before training, :func:`renormalise` gives them statistics again.

    :raises ValueError: if the file's layers do not match ``net``'s.
    """
    import onnx
    import torch
    from onnx import helper, numpy_helper
    from torch import nn

    graph = onnx.load(str(path)).graph
    initial = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    convs = [n for n in graph.node if n.op_type == "Conv"]
    gemms = [n for n in graph.node if n.op_type == "Gemm"]
    divs = [n for n in graph.node if n.op_type == "Div"]
    constants = {n.output[0]: n for n in graph.node if n.op_type == "Constant"}
    modules = list(net)
    my_convs = [(m, modules[i + 1]) for i, m in enumerate(modules) if isinstance(m, nn.Conv2d)]
    my_linears = [m for m in modules if isinstance(m, nn.Linear)]
    if len(convs) != len(my_convs) or len(gemms) != len(my_linears) or len(divs) != 1:
        raise ValueError(f"{path}: its layers are not those of build_network()")
    flatten = next(n for n in graph.node if n.op_type == "Flatten")

    def tensor(array: np.ndarray) -> torch.Tensor:
        return torch.from_numpy(np.array(array, np.float32))  # a copy: the file's arrays are read-only

    with torch.no_grad():
        for k, (node, (conv, norm)) in enumerate(zip(convs, my_convs, strict=True)):
            weights = initial[node.input[1]].transpose(0, 1, 3, 2)  # back to standing strips
            if k == 0:
                weights = unfolded_weights(weights)
            if tuple(weights.shape) != tuple(conv.weight.shape):
                raise ValueError(f"{path}: layer {k} is {weights.shape}, not {tuple(conv.weight.shape)}")
            conv.weight.copy_(tensor(weights))
            norm.running_mean.zero_()
            norm.running_var.fill_(1.0 - norm.eps)
            norm.weight.fill_(1.0)
            norm.bias.copy_(tensor(initial[node.input[2]]))
        for node, linear in zip(gemms, my_linears, strict=True):
            weights = initial[node.input[1]]
            if node.input[0] == flatten.output[0]:
                # Flattened lying down, the feature at (c, y, x) came at c*w*h + x*h + y.
                c, h, w = 96, STRIP_H // 8, STRIP_W // 4
                weights = weights.reshape(len(weights), c, w, h).transpose(0, 1, 3, 2).reshape(len(weights), -1)
            if tuple(weights.shape) != tuple(linear.weight.shape):
                raise ValueError(f"{path}: a linear layer is {weights.shape}, not {tuple(linear.weight.shape)}")
            linear.weight.copy_(tensor(weights))
            linear.bias.copy_(tensor(initial[node.input[2]]))
    value = constants[divs[0].input[1]].attribute[0]
    return float(numpy_helper.to_array(helper.get_attribute_value(value)))


def renormalise(net: Any, x: np.ndarray) -> None:
    """Give the batch normalisations of a network :func:`load_onnx` loaded the statistics of
    their inputs over encoded strips ``x``, and weights and biases that undo them: ``net`` in
    eval mode gives the same outputs, and in training mode (each batch normalised by its own
    statistics, as the network was trained) about the same."""
    import torch
    from torch import nn

    norms = [m for m in net if isinstance(m, nn.BatchNorm2d)]
    seen: dict[int, torch.Tensor] = {}
    hooks = [
        norm.register_forward_pre_hook(lambda module, args, k=k: seen.__setitem__(k, args[0].detach()))
        for k, norm in enumerate(norms)
    ]
    net.eval()
    with torch.no_grad():
        net(torch.from_numpy(x))
        for hook in hooks:
            hook.remove()
        for k, norm in enumerate(norms):
            # What reaches it is the convolution's output plus what the norm adds (its bias,
            # with a unit variance and no mean); its statistics are the convolution's.
            inputs = seen[k]
            mean = inputs.mean(dim=(0, 2, 3))
            var = inputs.var(dim=(0, 2, 3))
            bias = norm.bias.clone()
            norm.running_mean.copy_(mean)
            norm.running_var.copy_(var)
            norm.weight.copy_(torch.sqrt(var + norm.eps))
            norm.bias.copy_(bias + mean)


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


def train(
    net: Any,
    sampler: Sampler,
    epochs: int,
    seed: int,
    log: Any,
    repeat: np.ndarray | None = None,
    bare_share: np.ndarray | None = None,
    max_lr: float = 4e-3,
    keep_norms: bool = False,
    teacher: Any | None = None,
    held: np.ndarray | None = None,
) -> None:
    """Train ``net`` with augmentation; weights classes by their rarity a little.

    :param repeat: how many times each frame of ``sampler`` is seen per epoch (default once):
        the few 3D frames look more like a real table than the many 2D ones.
    :param bare_share: per frame of ``sampler``, about what share of its bare strips is
        trained on in an epoch (default :data:`BARE_SHARE`).
    :param max_lr: the learning rate at its peak (one cycle: up over the first 30% of the
        steps, then down); lower to train a trained network further (``--init``).
    :param keep_norms: keep the batch normalisations' statistics as they are (each batch
        normalised by them, not by its own): a network trained further then changes less
        on what it was not shown again.
    :param teacher: a network (the one ``net`` started from) whose probabilities ``net`` is
        held to, with the weight ``held`` gives each frame of ``sampler`` (the divergence of
        ``net``'s from the teacher's added to the loss): what it read right stays read so.
    """
    import torch
    from torch import nn

    rng = np.random.default_rng(seed)
    labels = sampler.labels.reshape(-1)
    counts = np.bincount(labels, minlength=CLASSES).astype(np.float64)
    weights = (counts.sum() / np.maximum(counts, 1.0)) ** 0.3
    weights /= weights[labels].mean()
    loss_fn = nn.CrossEntropyLoss(weight=torch.tensor(weights, dtype=torch.float32), label_smoothing=0.02)
    opt = torch.optim.AdamW(net.parameters(), lr=max_lr / 2, weight_decay=1e-4)
    size = 256
    times = np.ones(len(labels), np.int64) if repeat is None else np.repeat(repeat, STRIPS)
    bare = np.flatnonzero(labels == 0)
    bare = np.repeat(bare, times[bare])
    stacked = np.flatnonzero(labels != 0)
    stacked = np.repeat(stacked, times[stacked])
    share = np.full(len(labels), BARE_SHARE) if bare_share is None else np.repeat(bare_share, STRIPS)
    weight = share[bare]
    per_epoch = int(weight.sum())
    steps = epochs * math.ceil((len(stacked) + per_epoch) / size)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=max_lr, total_steps=steps)
    for epoch in range(epochs):
        net.train()
        if keep_norms:
            for module in net:
                if isinstance(module, nn.BatchNorm2d):
                    module.eval()
        running, seen, started = 0.0, 0, time.monotonic()
        # Bare strips are half of all and most are the easiest: a share of them each epoch is
        # enough. Drawn without replacement in proportion to their share (the larger of
        # random ** (1 / share) are taken: Efraimidis and Spirakis' weighted sampling).
        keys = rng.random(len(bare)) ** (1.0 / weight)
        picked = bare[np.argpartition(-keys, per_epoch - 1)[:per_epoch]] if per_epoch else bare[:0]
        chosen = np.concatenate([stacked, picked])
        for index in (chosen[i] for i in _batches(len(chosen), size, rng)):
            x, y = sampler.batch(index, rng)
            opt.zero_grad()
            logits = net(torch.from_numpy(x))
            loss = loss_fn(logits, torch.from_numpy(y))
            if teacher is not None and held is not None:
                holding = torch.from_numpy(held[index // STRIPS].astype(np.float32))
                if bool(holding.any()):
                    with torch.no_grad():
                        target = torch.softmax(teacher(torch.from_numpy(x)), dim=1)
                    divergence = (target * (torch.log(target + 1e-8) - torch.log_softmax(logits, dim=1))).sum(1)
                    loss = loss + (holding * divergence).mean()
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
    parser.add_argument("--varied", type=float, default=0.6, help="share of 2D setups drawn as real tables vary")
    parser.add_argument("--seed", type=int, default=2026, help="the first 2D setup's seed, and training's")
    parser.add_argument("--frames3d", type=Path, action="append", default=[], help="a folder of 3D setups")
    parser.add_argument("--epochs", type=int, default=14)
    parser.add_argument(
        "--init", type=Path, help="an exported network (ONNX) to train further, in place of one drawn at random"
    )
    parser.add_argument("--lr", type=float, default=4e-3, help="the peak learning rate (lower with --init)")
    parser.add_argument(
        "--keep-norms", action="store_true", help="keep the batch normalisations' statistics (with --init)"
    )
    parser.add_argument(
        "--hold",
        type=float,
        default=0.0,
        help="with --init: how much the network is held to the --init network's probabilities on plain setups",
    )
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
        cached = args.cache / (
            f"2d-{first}-{count}x{args.frames}-{STRIP_H}x{STRIP_W}-v{RENDER_VERSION}-varied{args.varied:g}.npz"
        )
        if cached.exists():
            part = Examples.load(cached)
        else:
            part = collect_2d(first, count, args.frames, log, args.varied)
            part.save(cached)
        log(f"2D setups {first}-{first + count - 1}: {len(part)} frames")
        examples.extend(part)
    for folder in args.frames3d:
        examples.extend(collect_3d(folder, log))
    if args.collect_only:
        return 0

    parts = np.asarray([part_of(examples.names[s]) for s in examples.setup_of])
    kinds = np.asarray([kind_of(examples.names[s], args.varied) for s in examples.setup_of])
    log(f"frames: {', '.join(f'{name} {int((parts == name).sum())}' for name in ('train', 'val', 'test'))}")
    samplers = {name: Sampler(examples, np.flatnonzero(parts == name)) for name in ("train", "val")}

    net = build_network()
    if args.init:
        start_from(net, args.init, samplers, args.seed, log)
    chosen = samplers["train"].frames
    repeat = np.where(np.char.startswith(kinds[chosen], "3d"), max(1, args.repeat3d), 1)
    varied = np.char.endswith(kinds[chosen], "-varied")
    share = np.where(varied, VARIED_BARE_SHARE, BARE_SHARE)
    teacher = None
    if args.init and args.hold > 0:
        import copy

        teacher = copy.deepcopy(net).eval()
    held = np.where(varied, 0.0, args.hold)
    train(net, samplers["train"], args.epochs, args.seed, log, repeat, share, args.lr, args.keep_norms, teacher, held)
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
        if args.init:
            report(points_net.probabilities(x, args.init), y, f"held out ({kind}), --init's network", log)
        report(points_net.probabilities(x, args.out), y, f"held out ({kind}, OpenCV)", log)
    return 0


#: How far the network :func:`load_onnx` loaded may give other probabilities than its file.
LOADED_TOLERANCE = 1e-3


def start_from(net: Any, path: Path, samplers: dict[str, Sampler], seed: int, log: Any) -> None:
    """Load ``net`` from the exported network at ``path`` (:func:`load_onnx`), check that it
    gives what the file gives on validation strips, and give its normalisations the statistics
    of training strips (:func:`renormalise`).

    :raises ValueError: if the loaded network gives other probabilities than the file.
    """
    import torch

    temperature = load_onnx(net, path)
    rng = np.random.default_rng(seed)
    val = samplers["val"]
    x, _ = val.batch(rng.choice(len(val), size=min(len(val), 2048), replace=False), None)
    net.eval()
    with torch.no_grad():
        mine = torch.softmax(net(torch.from_numpy(x)) / temperature, dim=1).numpy()
    gap = float(np.abs(mine - points_net.probabilities(x, path)).max())
    log(f"started from {path} (temperature {temperature:.3f}): probabilities within {gap:.1e} of its own")
    if gap > LOADED_TOLERANCE:
        raise ValueError(f"{path}: loaded, the network gives probabilities {gap:.3g} away from the file's")
    train = samplers["train"]
    x, _ = train.batch(rng.choice(len(train), size=min(len(train), 4096), replace=False), None)
    renormalise(net, x)


if __name__ == "__main__":
    sys.exit(main())
