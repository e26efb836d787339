# SPDX-License-Identifier: MIT
"""Render setups: a calibration frame of the starting position, then random positions on the same board.

Each setup writes ``<out>/<setup>/<nn>.jpg`` and ``<nn>.json`` (see :mod:`tools.render3d`). The
setup's seed alone decides the board, camera, lights and every frame (its name, ``s`` and six
digits, is the seed, which the training and benchmark tools split on).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from engine.position import Position
from tools.render3d import layout
from tools.render3d.camera import Sensor, develop, jpeg
from tools.render3d.plan import Board, CameraPose, Lighting, Style
from vision.geometry import FIELD_H, FIELD_W
from vision.render import CubeSpec, DieSpec, Scene, arranged, random_scene

#: Share of frames (after the calibration frame) with a hand over the board.
HAND_SHARE = 0.15
#: Share of frames smeared by a shake of the camera or the table.
BLUR_SHARE = 0.1
#: Share of a varied setup's frames with dice cups standing on the field (its calibration frame's too).
CUP_SHARE = 0.3


def setup_name(seed: int) -> str:
    """The folder name of the setup with ``seed``."""
    return f"s{seed:06d}"


@dataclass(frozen=True)
class Setup:
    """A setup's fixed choices: the board, the camera, the lights."""

    seed: int
    board: Board
    camera: CameraPose
    lighting: Lighting

    @classmethod
    def from_seed(cls, seed: int, size: tuple[int, int], varied: bool = False) -> Setup:
        """The setup ``seed`` decides, rendered at ``size``; ``varied``: its board varied as real
        tables vary (:meth:`~tools.render3d.plan.Style.vary`, drawn apart from the seed's own
        choices), the camera from straight above to 30 degrees off filling up to the whole
        height, and its positions laid out as real players leave them."""
        rng = np.random.default_rng([seed, 0])
        style = Style.random(rng)
        extra = np.random.default_rng([seed, 3])
        if varied:
            style = style.vary(extra)
        board = Board(style)
        camera = CameraPose.random(rng, board, size)
        if varied:
            # A tournament stream's camera shows little but the board.
            camera = replace(camera, fill=float(extra.uniform(0.62, 1.0))).placed(board, camera.target)
        lighting = Lighting.random(rng, board)
        return cls(seed=seed, board=board, camera=camera, lighting=lighting)

    def describe(self) -> dict[str, Any]:
        """The random choices, for the labels' ``scene`` key."""
        return {
            "seed": self.seed,
            "style": asdict(self.board.style),
            "camera": asdict(self.camera),
            "lighting": asdict(self.lighting),
        }


def starting_scene() -> Scene:
    """The calibration frame's content: the starting position, no dice, the cube centred."""
    points, bar, off = Position.STARTING.to_absolute(1)
    return Scene(points=tuple(points), bar=bar, off=off, cube=CubeSpec())


def frame_scene(seed: int, index: int, style: Style | None = None) -> tuple[Scene, bool, np.random.Generator]:
    """Frame ``index``'s position and dice (``vision.render.random_scene``), whether a hand shows, its rng.

    :param style: a varied setup's board: the position is laid out as real players leave it
        (:func:`vision.render.arranged`), dice cups in a share of frames.
    """
    rng = np.random.default_rng([seed, 1, index])
    if index == 0:
        scene = starting_scene()
        if style is not None and style.varied:
            scene = arranged(scene, style, rng, cups=CUP_SHARE)
        return scene, False, rng
    scene = random_scene(rng)
    # A board always has its cube: a doubling track's reading becomes the cube's, none a centred cube.
    if scene.cube is None:
        cube = CubeSpec(scene.track.value, scene.track.owner) if scene.track is not None else CubeSpec()
        scene = Scene(points=scene.points, bar=scene.bar, off=scene.off, dice=scene.dice, cube=cube)
    if style is not None and style.varied:
        scene = arranged(scene, style, rng, cups=CUP_SHARE)
    return scene, bool(rng.random() < HAND_SHARE), rng


def field_corners(setup: Setup) -> np.ndarray:
    """The field's corners in image pixels (contract order: beside player 1's 13, 24, 1 and 12 points)."""
    b = setup.board
    pts = np.array([b.world(0, 0), b.world(FIELD_W, 0), b.world(FIELD_W, FIELD_H), b.world(0, FIELD_H)])
    return setup.camera.project(pts)


def render_setup(
    setup: Setup,
    out: Path,
    frames: int,
    *,
    samples: int = 8,
    threads: int = 1,
    log: Callable[[str], None] = print,
) -> list[float]:
    """Render ``frames`` frames of ``setup`` into ``out/<setup>``; return the seconds each took."""
    # Blender is imported only to render: the labels and the layout need none of it.
    from tools.render3d.blender import CUBE_FACES, Stage, to_matrix

    folder = out / setup_name(setup.seed)
    folder.mkdir(parents=True, exist_ok=True)
    stage = Stage(setup.board, setup.camera, setup.lighting, samples, threads)
    corners = field_corners(setup)
    size = setup.camera.size
    sensor: Sensor | None = None
    times: list[float] = []
    try:
        for index in range(frames):
            started, cpu = time.monotonic(), time.process_time()
            scene, hand, rng = frame_scene(setup.seed, index, setup.board.style)
            stage.clear_frame()
            placed = layout.place_checkers(setup.board, scene, rng)
            for player in (1, 2):
                for k, m in enumerate(placed.checkers[player - 1]):
                    stage.place_checker(player, k, to_matrix(m))
            for k in range(len(stage.cups)):
                cup = None
                if k < len(scene.cups):
                    cup = layout.cup_pose(setup.board, scene.cups[k], placed.occupied, setup.camera, rng)
                stage.place_cup(k, None if cup is None else to_matrix(cup))
            dice = _place_dice(stage, setup.board, scene.dice, placed.occupied, rng)
            cube = scene.cube or CubeSpec()
            face = 64 if cube.value == 1 else cube.value
            stage.place_cube(
                to_matrix(layout.cube_pose(setup.board, cube.owner, CUBE_FACES[face], stage.cube_size, rng))
            )
            if hand:
                stage.add_hand(
                    ((kind, to_matrix(m)) for kind, m in layout.hand_parts(setup.board, rng)),
                    _skin(rng),
                    tuple(float(v) for v in rng.uniform(20, 200, 3)),  # type: ignore[arg-type]
                )
            light = stage.vary_light(rng) if index > 0 else {}
            linear = stage.render(setup.seed * 1000 + index)
            if sensor is None:
                sensor = Sensor.settle(linear, corners, setup.lighting.exposure_mid, setup.lighting.white_balance)
            exposure = float(rng.uniform(0.96, 1.04)) if index > 0 else 1.0
            blur = None
            if index > 0 and rng.random() < BLUR_SHARE:
                blur = (float(rng.uniform(2.0, 7.0)), float(rng.uniform(0, 180)))
            quality = int(rng.integers(70, 96))
            image = develop(
                linear,
                sensor,
                rng,
                exposure=exposure,
                distortion=setup.camera.distortion,
                vignette=setup.lighting.vignette,
                noise=setup.lighting.noise * float(rng.uniform(0.85, 1.15)),
                blur=blur,
            )
            (folder / f"{index:02d}.jpg").write_bytes(jpeg(image, quality))
            seconds = time.monotonic() - started
            # CPU time as well: on a shared machine the wall clock says more about the neighbours.
            cpu_seconds = time.process_time() - cpu
            label = {
                "corners": [[round(float(x), 2), round(float(y), 2)] for x, y in corners],
                "bar_fraction": setup.board.style.bar_fraction,
                "checker_fraction": setup.board.style.checker_fraction,
                "points": [int(v) for v in scene.points],
                "bar": [int(scene.bar[0]), int(scene.bar[1])],
                # What lies on each half of the bar (lower, upper; player 1's positive): a side's
                # checkers lie in either half on a varied setup.
                "bar_halves": [int(v) for v in scene.bar_halves()],
                "off": [int(scene.off[0]), int(scene.off[1])],
                "dice": [
                    {"value": spec.value, "half": spec.half, "flat": spec.flat, "box": box}
                    for spec, box in zip(scene.dice, dice, strict=True)
                ],
                "cube": {"value": cube.value, "owner": cube.owner},
                "hand": hand,
                "image_size": [size[0], size[1]],
                "scene": {
                    **setup.describe(),
                    "frame": {
                        "index": index,
                        "light": light,
                        "exposure": exposure,
                        "blur": blur,
                        "jpeg_quality": quality,
                        "sensor": asdict(sensor),
                        "render_seconds": round(seconds, 2),
                        "cpu_seconds": round(cpu_seconds, 2),
                    },
                },
            }
            (folder / f"{index:02d}.json").write_text(json.dumps(label, indent=1) + "\n", encoding="utf-8")
            times.append(seconds)
            log(f"{folder.name}/{index:02d}: {setup.board.style.kind}, {seconds:.1f} s ({cpu_seconds:.1f} s CPU)")
    finally:
        stage.close()
    return times


def _place_dice(
    stage: Any,
    board: Board,
    specs: tuple[DieSpec, ...],
    occupied: list[tuple[float, float]],
    rng: np.random.Generator,
) -> list[list[int]]:
    """Put the scene's dice on the board (hiding unused ones); return their image boxes ``[x, y, w, h]``."""
    from tools.render3d.blender import DIE_FACES, to_matrix

    size_field = board.style.dice_fraction * board.d
    taken: list[tuple[float, float]] = []
    boxes: list[list[int]] = []
    w, h = stage.camera.size
    for i in range(len(stage.dice)):
        if i >= len(specs):
            stage.place_die(i, None)
            continue
        spec = specs[i]
        spot = layout.free_spot(rng, board, spec.half, taken, occupied, size_field)
        lean = None
        if not spec.flat:
            spot, lean = layout.cocked_spot(board, spot, spec.half, occupied, size_field)
        taken.append(spot)
        m = to_matrix(layout.die_pose(board, spot, DIE_FACES[spec.value], lean, rng))
        lift = -stage.die_lowest(m)
        m = to_matrix(layout.translation(0.0, 0.0, lift)) @ m
        stage.place_die(i, m)
        pts = stage.camera.project(stage.die_corners(i))
        x0, y0 = np.clip(np.floor(pts.min(axis=0)), 0, [w - 1, h - 1]).astype(int)
        x1, y1 = np.clip(np.ceil(pts.max(axis=0)), 0, [w, h]).astype(int)
        boxes.append([int(x0), int(y0), int(max(1, x1 - x0)), int(max(1, y1 - y0))])
    return boxes


def _skin(rng: np.random.Generator) -> tuple[float, float, float]:
    """A skin tone, sRGB 0-255."""
    tones = ((228, 184, 152), (212, 162, 122), (190, 136, 96), (150, 100, 70), (100, 66, 46))
    t = np.asarray(tones[int(rng.integers(len(tones)))], np.float64) + rng.normal(0, 8, 3)
    c = np.clip(t, 0, 255)
    return float(c[0]), float(c[1]), float(c[2])
