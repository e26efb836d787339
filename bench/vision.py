# SPDX-License-Identifier: MIT
"""Vision figures: boards rendered in 3D and in 2D, dice on real photos, confident mistakes, speed.

Run from the project root::

    python bench/vision.py [--frames3d DIR [--knocked]] [--boards 1000] [--hands 100] [--turns 100]
                           [--seed 11] [--json] [--skip-dice] [--skip-2d]

Each part is reported on its own, for both ways of reading the points (``net``, the learned
point reader; ``model``, the calibration's models: see :mod:`vision.reader`):

- 3D boards (``--frames3d``, folders made by ``python -m tools.render3d``): only the setups held out
  of training (seed 0 modulo 5; see ``tools/train_points.py``). Each is calibrated on its frame
  ``00`` (the starting position) with the labelled corners, and its other frames are read in
  order. Read twice with the learned reader: as calibration left it, and learning from every
  frame before (as if the players had confirmed each position), to show what learning the
  board at hand is worth. The cube is counted too: a real cube seen at a slant, its sides'
  numbers showing.
- 2D boards: positions met in random self-play, each rendered with a random board style,
  camera pose and lamp (``vision.render``); each setup is calibrated on its own rendered
  starting position, as a user would; two dice lie on one half of each (one in twelve cocked),
  and the cube as in play (centred half the time, else owned at 2 to 16).
  With ``--hands``, that many boards are read again with a hand over them.
- A turn frame after frame (``--turns``, 0 leaves it out): boards whose checkers lie still
  between frames, as under a real camera (the renderer's layout seed), each read as the roll
  lies, after the move, with the dice picked up and at the next roll; by the learned reader
  remembering the last frame (it reads again only what changed) and by one that reads every
  frame whole, with the read time per kind of frame.
- Dice: on the held-out part of the shared real photos (see ``bench/vision_dice.py``).
- With ``--knocked``: the held-out 3D frames read clear, then again with the board knocked 5,
  10 and 20 pixels aside (and turned a little): how often the reader follows it, and reads it.

Per board set: boards read exactly (points and bar), points right, boards read wrong with
confidence (0.9 or more, not flagged occluded), point readings at 0.9 or more and how many of
those are right, dice read right (value, half, flat), frames with a hand flagged occluded and
read wrong with confidence. Speed, one core: median time to read a frame, and of the gate.
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import statistics
import sys
import time
import zlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.seeded import self_play
from engine.dice import Dice
from engine.movegen import legal_plays
from engine.position import Position
from vision import points_net
from vision.calibration import CalibrationError, calibrate
from vision.profile import Profile, ProfileError
from vision.reader import BoardReader
from vision.reading import BoardReading
from vision.render import CubeSpec, DieSpec, Scene, free_spot, random_setup, render
from vision.stabiliser import MotionGate

#: A reading this confident must be right.
CONFIDENT = 0.9
#: Share of thrown dice that come to rest cocked (leaning on a checker or the rim).
COCKED = 0.08
#: The readers compared.
READERS = ("net", "model")


def _scene(position: Position, dice: tuple[DieSpec, ...] = (), cube: CubeSpec | None = None) -> Scene:
    points, bar, off = position.to_absolute(1)
    return Scene(points=tuple(points), bar=bar, off=off, dice=dice, cube=cube)


def _cube(rng: np.random.Generator) -> CubeSpec:
    """The cube as it lies in play: centred half the time, else turned to 2 to 16 and owned."""
    if rng.random() < 0.5:
        return CubeSpec()
    return CubeSpec(value=int(rng.choice([2, 4, 8, 16])), owner=int(rng.integers(1, 3)))


def _roll(rng: np.random.Generator) -> tuple[DieSpec, ...]:
    """Two dice thrown on one half, now and then one of them cocked."""
    half = "left" if rng.random() < 0.5 else "right"
    return tuple(DieSpec(value=int(rng.integers(1, 7)), half=half, flat=bool(rng.random() > COCKED)) for _ in range(2))


@dataclass
class Tally:
    """What one reader got right on one set of boards."""

    boards: int = 0
    exact: int = 0
    points_right: int = 0
    confident_wrong: int = 0
    confident_points: int = 0
    confident_points_right: int = 0
    confident_boards: int = 0
    dice: int = 0
    dice_right: int = 0
    dice_extra: int = 0
    cocked: int = 0
    cocked_called: int = 0
    cocked_sure_flat: int = 0
    hands: int = 0
    hands_flagged: int = 0
    hands_confident_wrong: int = 0
    cubes: int = 0
    cubes_right: int = 0
    cubes_acted_on_wrong: int = 0
    cubes_acted_on_right: int = 0
    read_seconds: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    def board(
        self,
        reading: BoardReading,
        points: tuple[int, ...] | list[int],
        bar: tuple[int, int],
        dice: list[tuple[int, str, bool]] | None,
        name: str,
        cube: CubeSpec | None = None,
    ) -> bool:
        """Count one reading of a board without a hand; whether it was exact."""
        self.boards += 1
        if cube is not None:
            self.cubes += 1
            got = None if reading.cube is None else (reading.cube.value, reading.cube.owner)
            right = got == (cube.value, cube.owner)
            self.cubes_right += right
            # The table acts on a cube read with 0.6 or more.
            self.cubes_acted_on_wrong += not right and reading.cube is not None and reading.cube.confidence >= 0.6
            self.cubes_acted_on_right += right and reading.cube is not None and reading.cube.confidence >= 0.6
        right = sum(1 for a, b in zip(reading.points, points, strict=True) if a == b)
        self.points_right += right
        ok = right == 24 and tuple(reading.bar) == tuple(bar)
        self.exact += ok
        sure = reading.confidence >= CONFIDENT and not reading.occluded
        self.confident_boards += sure
        if not ok:
            self.confident_wrong += sure
            if len(self.failures) < 10:
                self.failures.append(name)
        for got, want, conf in zip(reading.points, points, reading.point_confidence, strict=True):
            if conf >= CONFIDENT:
                self.confident_points += 1
                self.confident_points_right += got == want
        if dice is not None:
            # Dice have no identity: what counts is how many of each reading the two sides share.
            seen = Counter((d.value, d.half, d.flat) for d in reading.dice)
            wanted = Counter(dice)
            both = seen & wanted
            self.dice += len(dice)
            self.dice_right += sum(both.values())
            self.dice_extra += max(0, len(reading.dice) - len(dice))
            self.cocked += sum(1 for d in dice if not d[2])
            self.cocked_called += sum(n for (_, _, flat), n in both.items() if not flat)
            sure_flat = Counter((d.value, d.half) for d in reading.dice if d.flat and d.confidence >= CONFIDENT)
            self.cocked_sure_flat += sum((sure_flat & Counter((v, h) for v, h, f in dice if not f)).values())
        return ok

    def hand(self, reading: BoardReading, points: tuple[int, ...] | list[int], bar: tuple[int, int]) -> None:
        """Count one reading of a board with a hand over it."""
        self.hands += 1
        self.hands_flagged += reading.occluded
        wrong = tuple(reading.points) != tuple(points) or tuple(reading.bar) != tuple(bar)
        self.hands_confident_wrong += wrong and not reading.occluded and reading.confidence >= CONFIDENT

    def figures(self) -> dict[str, Any]:
        """The shares, JSON-ready."""

        def share(a: int, b: int) -> float | None:
            return round(a / b, 5) if b else None

        return {
            "boards": self.boards,
            "boards_exact": share(self.exact, self.boards),
            "points_right": share(self.points_right, 24 * self.boards),
            "confident_boards": share(self.confident_boards, self.boards),
            "confident_wrong_boards": self.confident_wrong,
            "confident_points": share(self.confident_points, 24 * self.boards),
            "confident_points_right": share(self.confident_points_right, self.confident_points),
            "confident_points_wrong": self.confident_points - self.confident_points_right,
            "dice": self.dice,
            "dice_read_right": share(self.dice_right, self.dice),
            "dice_extra": self.dice_extra,
            "cocked_dice": self.cocked,
            "cocked_called": share(self.cocked_called, self.cocked),
            "cocked_read_flat_confidently": self.cocked_sure_flat,
            "hand_frames": self.hands,
            "hand_flagged_occluded": share(self.hands_flagged, self.hands),
            "hand_confident_wrong": self.hands_confident_wrong,
            "cubes": self.cubes,
            "cube_read_right": share(self.cubes_right, self.cubes),
            "cube_acted_on_wrong": self.cubes_acted_on_wrong,
            "cube_acted_on_right": share(self.cubes_acted_on_right, self.cubes),
            "read_ms_median": round(1e3 * statistics.median(self.read_seconds), 1) if self.read_seconds else None,
            "first_failures": self.failures,
        }


def _readers(profile: Profile) -> dict[str, BoardReader]:
    """The readers compared on ``profile`` (the learned one only when it can run)."""
    out = {"model": BoardReader(profile, points="model")}
    if points_net.available() and profile.references is not None:
        out["net"] = BoardReader(profile, points="net")
    return out


def _timed(reader: BoardReader, image: np.ndarray, tally: Tally) -> BoardReading:
    t0 = time.perf_counter()
    reading = reader.read(image)
    tally.read_seconds.append(time.perf_counter() - t0)
    return reading


def measure_2d(boards: int, hands: int, seed: int) -> dict[str, Any]:
    """Read rendered boards with each reader; returns the tallies and the gate's speed."""
    rng = np.random.default_rng(seed)
    positions = self_play(random.Random(seed), boards)
    start = _scene(Position.STARTING)
    tallies = {name: Tally() for name in READERS}
    gate_times: list[float] = []
    for i, position in enumerate(positions):
        style, camera, lighting = random_setup(rng)
        shot = render(start, style=style, camera=camera, lighting=lighting, seed=seed + i)
        # Calibrated with the dice's size, as a user would (`vision calibrate --die-size`).
        profile = calibrate(shot.image, shot.corners, die_fraction=style.die_fraction)
        dice = _roll(rng)
        scene = _scene(position, dice, _cube(rng))
        frame = render(scene, style=style, camera=camera, lighting=lighting, seed=seed + 7919 * (i + 1)).image
        truth = [(d.value, d.half, d.flat) for d in dice]
        hidden = None
        if i < hands:
            hidden = render(
                scene, style=style, camera=camera, lighting=lighting, hand=True, seed=seed + 104729 * (i + 1)
            ).image
        for name, reader in _readers(profile).items():
            tally = tallies[name]
            reading = _timed(reader, frame, tally)
            tally.board(reading, scene.points, scene.bar, truth, position.position_id(), scene.cube)
            if hidden is not None:
                tally.hand(reader.read(hidden), scene.points, scene.bar)
        gate = MotionGate(profile.homography)
        gate.feed(frame, 0.0)
        t0 = time.perf_counter()
        gate.feed(frame, 0.1)
        gate_times.append(time.perf_counter() - t0)
    out: dict[str, Any] = {name: tally.figures() for name, tally in tallies.items() if tally.boards}
    out["gate_ms_median"] = round(1e3 * statistics.median(gate_times), 2)
    out["frame_size"] = "1280x720"
    return out


def _spots(
    rng: np.random.Generator, profile: Profile, style_die: float, half: str, positions: list[Position]
) -> list[tuple[float, float]]:
    """Two spots on ``half`` where dice lie clear of the checkers of every one of ``positions``."""
    geom = profile.geometry
    checkers = []
    for position in positions:
        points, _, _ = position.to_absolute(1)
        for index, count in enumerate(points):
            checkers += [geom.slot_center(index + 1, slot) for slot in range(min(abs(count), 5))]
    size = style_die * geom.checker_diameter
    taken: list[tuple[float, float]] = []
    for _ in range(2):
        taken.append(free_spot(rng, geom, half, taken, checkers, size))
    return taken


def measure_turns(boards: int, seed: int) -> dict[str, Any]:
    """A turn on a board that lies still between frames, as a camera over a real board sees it:
    the roll lying, the move made beside it, the dice picked up, the next roll. Read by the
    learned reader that remembers the last frame (reading again only what changed) and by one
    that reads every frame whole; the first frame of each board, read whole by both, is not
    counted."""
    rng = np.random.default_rng(seed + 1)
    positions = self_play(random.Random(seed + 1), boards)
    start = _scene(Position.STARTING)
    tallies = {"remembering": Tally(), "whole": Tally()}
    by_kind: dict[str, dict[str, list[float]]] = {name: {} for name in tallies}
    if not points_net.available():
        return {}
    for i, position in enumerate(positions):
        style, camera, lighting = random_setup(rng)
        layout = seed * 100_003 + i
        shot = render(start, style=style, camera=camera, lighting=lighting, seed=seed + i, layout_seed=layout)
        profile = calibrate(shot.image, shot.corners, die_fraction=style.die_fraction)
        if profile.references is None:
            continue
        first = (int(rng.integers(1, 7)), int(rng.integers(1, 7)))
        results = legal_plays(position, Dice(*first)).position_list()
        after = results[int(rng.integers(len(results)))] if results else position
        second = (int(rng.integers(1, 7)), int(rng.integers(1, 7)))
        halves = ("right", "left") if rng.random() < 0.5 else ("left", "right")
        rolls = []
        for values, half in zip((first, second), halves, strict=True):
            spots = _spots(rng, profile, style.die_fraction, half, [position, after])
            rolls.append(
                tuple(
                    DieSpec(v, half, position=spot, angle=float(rng.uniform(0, 90)))
                    for v, spot in zip(values, spots, strict=True)
                )
            )
        cube = _cube(rng)
        frames = [(position, rolls[0]), (after, rolls[0]), (after, ()), (after, rolls[1])]
        kinds = [None, "move made", "dice picked up", "next roll"]
        readers = {
            "remembering": BoardReader(profile, points="net"),
            "whole": BoardReader(profile, points="net", remember=False),
        }
        for k, (shown, dice) in enumerate(frames):
            scene = _scene(shown, dice, cube)
            image = render(
                scene, style=style, camera=camera, lighting=lighting, seed=seed + 7919 * (i + 1) + k, layout_seed=layout
            ).image
            truth = [(d.value, d.half, d.flat) for d in dice]
            for name, reader in readers.items():
                if k == 0:
                    reader.read(image)
                    continue
                reading = _timed(reader, image, tallies[name])
                by_kind[name].setdefault(str(kinds[k]), []).append(tallies[name].read_seconds[-1])
                tallies[name].board(reading, scene.points, scene.bar, truth, shown.position_id(), scene.cube)
    out: dict[str, Any] = {name: tally.figures() for name, tally in tallies.items() if tally.boards}
    for name, kinds_seen in by_kind.items():
        if name in out:
            out[name]["read_ms_median_by_frame"] = {
                kind: round(1e3 * statistics.median(seconds), 1) for kind, seconds in kinds_seen.items()
            }
    return out


def held_out_setups(folder: Path) -> list[Path]:
    """The 3D setups of ``folder`` kept out of training: seed 0 modulo 5."""
    out = []
    for setup in sorted(p for p in folder.iterdir() if p.is_dir()):
        digits = "".join(ch for ch in setup.name if ch.isdigit())
        seed = int(digits) if digits else zlib.crc32(setup.name.encode())
        if seed % 5 == 0:
            out.append(setup)
    return out


def _frames(setup: Path) -> list[tuple[Path, dict[str, Any]]]:
    out = []
    for label in sorted(p for p in setup.glob("*.json") if p.stem.isdigit()):
        image = label.with_suffix(".jpg")
        if not image.exists():
            image = label.with_suffix(".png")
        if image.exists():
            out.append((image, json.loads(label.read_text(encoding="utf-8"))))
    return out


def _truth(
    label: dict[str, Any],
) -> tuple[tuple[int, ...], tuple[int, int], list[tuple[int, str, bool]], CubeSpec | None]:
    """A 3D frame's labels: its points, bar, dice (value, half, flat) and cube."""
    points, bar = tuple(label["points"]), (int(label["bar"][0]), int(label["bar"][1]))
    dice = [(int(d["value"]), str(d["half"]), bool(d["flat"])) for d in label.get("dice", [])]
    cube = CubeSpec(int(label["cube"]["value"]), label["cube"]["owner"]) if label.get("cube") else None
    return points, bar, dice, cube


def measure_3d(folder: Path) -> dict[str, Any]:
    """Read the held-out 3D setups in ``folder``: each reader as calibration left it, and the
    learned reader learning from each frame before (``net+learning``)."""
    tallies = {name: Tally() for name in (*READERS, "net+learning")}
    setups = refused = 0
    for setup in held_out_setups(folder):
        frames = _frames(setup)
        if len(frames) < 2:
            continue
        (path, label), rest = frames[0], frames[1:]
        image = cv2.imread(str(path))
        try:
            # Not told the dice's size, as `vision calibrate` usually is not: real dice's is assumed.
            profile = calibrate(image, np.asarray(label["corners"]), bar_fraction=float(label["bar_fraction"]))
        except (CalibrationError, ProfileError):
            refused += 1
            continue
        setups += 1
        readers = _readers(profile)
        learning = None
        if "net" in readers:
            # A profile of its own: learning changes its references.
            learning = BoardReader(copy.deepcopy(profile), points="net")
        for path, label in rest:
            frame = cv2.imread(str(path))
            points, bar, dice, cube = _truth(label)
            name = f"{setup.name}/{path.name}"
            both = dict(readers)
            if learning is not None:
                both["net+learning"] = learning
            for reader_name, reader in both.items():
                tally = tallies[reader_name]
                # Each frame is a position of its own, not the last one played on: read it whole.
                reader.forget()
                reading = _timed(reader, frame, tally)
                if label.get("hand"):
                    tally.hand(reading, points, bar)
                else:
                    tally.board(reading, points, bar, dice, name, cube)
            if learning is not None and not label.get("hand"):
                seen = learning.read(frame)
                learning.learn(frame, list(points), bar, seen.dice)
    out: dict[str, Any] = {name: tally.figures() for name, tally in tallies.items() if tally.boards}
    out["setups"] = setups
    out["calibration_refused"] = refused
    return out


#: How far the board is knocked aside in ``measure_knocked``: frame pixels.
KNOCKS = (5, 10, 20)


def measure_knocked(folder: Path, seed: int) -> dict[str, Any]:
    """The held-out 3D setups' frames, each read clear, then read again with the board knocked
    aside: the frame moved by 5, 10 or 20 pixels in a random direction and turned by up to half
    a degree about its middle. Per distance, the learned reader's tally and how often it
    followed the board."""
    rng = np.random.default_rng(seed)
    tallies = {knock: Tally() for knock in KNOCKS}
    followed = dict.fromkeys(KNOCKS, 0)
    occluded = dict.fromkeys(KNOCKS, 0)
    for setup in held_out_setups(folder):
        frames = _frames(setup)
        if len(frames) < 2:
            continue
        (path, label), rest = frames[0], frames[1:]
        try:
            image = cv2.imread(str(path))
            profile = calibrate(image, np.asarray(label["corners"]), bar_fraction=float(label["bar_fraction"]))
        except (CalibrationError, ProfileError):
            continue
        if profile.references is None or not points_net.available():
            continue
        for path, label in rest:
            if label.get("hand"):
                continue
            frame = cv2.imread(str(path))
            points, bar, dice, cube = _truth(label)
            height, width = frame.shape[:2]
            for knock in KNOCKS:
                # A reader of its own: following the board moves its profile's corners.
                reader = BoardReader(copy.deepcopy(profile), points="net")
                if reader.read(frame).occluded:
                    continue
                angle = rng.uniform(0.0, 2 * np.pi)
                turn = cv2.getRotationMatrix2D((width / 2, height / 2), float(rng.uniform(-0.5, 0.5)), 1.0)
                turn[:, 2] += (knock * np.cos(angle), knock * np.sin(angle))
                knocked = cv2.warpAffine(frame, turn, (width, height), borderMode=cv2.BORDER_REPLICATE)
                reading = _timed(reader, knocked, tallies[knock])
                tallies[knock].board(reading, points, bar, dice, f"{setup.name}/{path.name}", cube)
                followed[knock] += reader.followed
                occluded[knock] += reading.occluded
    out: dict[str, Any] = {}
    for knock, tally in tallies.items():
        if tally.boards:
            share = {"followed": followed[knock] / tally.boards, "occluded": occluded[knock] / tally.boards}
            out[str(knock)] = tally.figures() | share
    return out


def _print_tally(name: str, f: dict[str, Any]) -> None:
    def pct(value: float | None, digits: int = 2) -> str:
        return "-" if value is None else f"{100 * value:.{digits}f}%"

    print(
        f"  {name:13s} exact {pct(f['boards_exact'])}, points {pct(f['points_right'], 3)}; confident boards"
        f" {pct(f['confident_boards'], 1)}, of them wrong {f['confident_wrong_boards']}; points at >= 0.9"
        f" {pct(f['confident_points'], 1)}, right {pct(f['confident_points_right'], 3)}"
        f" ({f['confident_points_wrong']} wrong); read {f['read_ms_median']} ms"
    )
    if f["dice"]:
        print(
            f"  {'':13s} dice right {pct(f['dice_read_right'])} of {f['dice']}, extra {f['dice_extra']};"
            f" cocked {f['cocked_dice']}, called {pct(f['cocked_called'], 1)},"
            f" read flat with confidence {f['cocked_read_flat_confidently']}"
        )
    if f["cubes"]:
        print(
            f"  {'':13s} cube read right {pct(f['cube_read_right'], 1)} of {f['cubes']}, right with 0.6 or more"
            f" {pct(f['cube_acted_on_right'], 1)}, read wrong with 0.6 or more {f['cube_acted_on_wrong']}"
        )
    if f["hand_frames"]:
        print(
            f"  {'':13s} hands {f['hand_frames']}: flagged {pct(f['hand_flagged_occluded'], 1)},"
            f" confident wrong {f['hand_confident_wrong']}"
        )


#: Confidence bins of the real frames' reliability table: readings (and points) read with a
#: confidence in [low, high).
RELIABILITY_BINS = ((0.0, 0.5), (0.5, 0.9), (0.9, 0.99), (0.99, 1.0001))


def measure_real(folder: Path) -> dict[str, Any]:
    """The real labelled frames of ``folder`` (its ``labels.json``), read as ``bgboard vision
    check`` reads them, with the labels' corners and with those the program finds: its figures,
    and how far each confidence is to be trusted (a reliability table of readings and points)."""
    from vision.check import check, summary
    from vision.labels import load_labels

    frames = load_labels(folder / "labels.json")
    out: dict[str, Any] = {"frames": len(frames)}
    for corners in ("labelled", "found"):
        results = check(frames, folder, corners=corners)
        figures = summary(results)
        clear = [r for r in results if r.read and not r.hand]
        boards = []
        for low, high in RELIABILITY_BINS:
            inside = [r for r in clear if low <= r.confidence < high]
            boards.append(
                {"from": low, "to": min(high, 1.0), "readings": len(inside), "exact": sum(r.exact for r in inside)}
            )
        points = []
        pairs = [(c, ok) for r in clear for c, ok in r.point_verdicts]
        for low, high in RELIABILITY_BINS:
            inside = [ok for c, ok in pairs if low <= c < high]
            points.append({"from": low, "to": min(high, 1.0), "points": len(inside), "right": sum(inside)})
        figures["reliability_boards"] = boards
        figures["reliability_points"] = points
        figures["results"] = [r.to_json() for r in results]
        out[corners] = figures
    return out


def _pct(value: float | None, digits: int) -> str:
    return "-" if value is None else f"{100 * value:.{digits}f}%"


def _print_real(real: dict[str, Any]) -> None:
    print(f"Real frames ({real['frames']}; read as bgboard vision check reads them):")
    for corners in ("labelled", "found"):
        f = real[corners]
        print(
            f"  corners {corners:9s}: {f['hand_free']} without a hand: exact {f['exact']}, exact and sure"
            f" {f['right_and_sure']}, calibrations refused {f['calibrations_refused']}, points right"
            f" {_pct(f['points_right'], 2)}; confident and wrong"
            f" {f['confident_wrong']}; hands flagged {f['hands_flagged']} of {f['hands']}; dice right"
            f" {_pct(f['dice_right'], 1)}; corners found within 2%"
            f" {f['corners_within']} of {f['corners_tried']}; whole read {f['read_ms']} ms (median)"
        )
        print(f"  {'':21s}reliability (hand-free readings): confidence -> readings, exact")
        for row, point in zip(f["reliability_boards"], f["reliability_points"], strict=True):
            print(
                f"  {'':23s}[{row['from']:.2f}, {row['to']:.2f}): boards {row['exact']} of {row['readings']} exact;"
                f" points {point['right']} of {point['points']} right"
            )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames3d", type=Path, help="a folder of 3D-rendered setups (python -m tools.render3d)")
    parser.add_argument(
        "--real", type=Path, help="a folder of real labelled frames (its labels.json), as ../shared/data/boards"
    )
    parser.add_argument("--boards", type=int, default=1000)
    parser.add_argument("--hands", type=int, default=100)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--skip-dice", action="store_true", help="leave out the real dice photos")
    parser.add_argument("--skip-2d", action="store_true", help="leave out the 2D-rendered boards")
    parser.add_argument("--turns", type=int, default=100, help="boards played a turn on, frame after frame")
    parser.add_argument(
        "--knocked", action="store_true", help="also read the 3D frames again with the board knocked aside"
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    cv2.setNumThreads(1)
    figures: dict[str, Any] = {}
    if args.real is not None:
        figures["real"] = measure_real(args.real)
    if args.frames3d is not None:
        figures["boards_3d"] = measure_3d(args.frames3d)
        if args.knocked:
            figures["knocked_3d"] = measure_knocked(args.frames3d, args.seed)
    if not args.skip_2d:
        figures["boards_2d"] = measure_2d(args.boards, args.hands, args.seed)
    if args.turns:
        figures["turns"] = measure_turns(args.turns, args.seed)
    if not args.skip_dice:
        from bench.vision_dice import measure_dice

        figures["dice"] = measure_dice()
    if args.json:
        print(json.dumps(figures))
        return 0
    if "real" in figures:
        _print_real(figures["real"])
    if "boards_3d" in figures:
        b3 = figures["boards_3d"]
        print(f"3D-rendered boards, held out: {b3['setups']} setups ({b3['calibration_refused']} calibrations refused)")
        for name in (*READERS, "net+learning"):
            if name in b3:
                _print_tally(name, b3[name])
    else:
        print("3D-rendered boards: none given (make them with python -m tools.render3d, then --frames3d DIR)")
    if figures.get("knocked_3d"):
        print("The same boards read clear, then knocked aside (learned reader):")
        for knock, f in figures["knocked_3d"].items():
            _print_tally(f"{knock} px", f)
            print(f"  {'':13s} followed {100 * f['followed']:.1f}%, flagged occluded {100 * f['occluded']:.1f}%")
    if "boards_2d" in figures:
        b2 = figures["boards_2d"]
        print(f"2D-rendered boards ({b2['frame_size']}):")
        for name in READERS:
            if name in b2:
                _print_tally(name, b2[name])
        print(f"  motion gate {b2['gate_ms_median']} ms per frame")
    if figures.get("turns"):
        print(f"A turn, frame after frame, on {args.turns} boards lying still (learned reader):")
        for name in ("remembering", "whole"):
            if name in figures["turns"]:
                _print_tally(name, figures["turns"][name])
                kinds = figures["turns"][name]["read_ms_median_by_frame"]
                print(f"  {'':13s} read " + ", ".join(f"{kind} {ms} ms" for kind, ms in kinds.items()))
    if "dice" in figures:
        print("dice (held-out real photos):", json.dumps(figures["dice"], indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
