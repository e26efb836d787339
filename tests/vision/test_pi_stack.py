# SPDX-License-Identifier: MIT
"""The reader on a Raspberry Pi's Python packages: numpy below 2 (``packaging/pi-constraints.txt``),
hence OpenCV 4.11, whose API and ``dnn`` differ from OpenCV 5's. ``scripts/setup.sh --test``
makes ``.venv-pi`` with them; a board is read there and here, and must read the same."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np

from engine.position import Position
from vision.calibration import calibrate
from vision.frames import CameraError, open_source, read_image
from vision.reader import BoardReader
from vision.render import STYLES, CubeSpec, DieSpec, Scene, render

ROOT = Path(__file__).resolve().parents[2]
PI_PYTHON = ROOT / ".venv-pi" / "bin" / "python"
#: A position from the middle of a game: piles of one to five, a checker on the bar.
POSITION = Position.from_id("xGfhASKGT/AAWA")


def read_a_board(bad_file: str) -> dict[str, Any]:
    """Calibrate on a rendered start, read a mid-game frame with dice and an owned cube, and
    try a cut-short image and a camera that is not there: what the reader and the errors say."""
    import cv2

    style = STYLES["classic"]
    start = render(Scene(points=tuple(Position.STARTING.to_absolute(1)[0])), style=style, seed=1)
    reader = BoardReader(calibrate(start.image, start.corners, die_fraction=style.die_fraction))
    points, bar, off = POSITION.to_absolute(1)
    dice = (DieSpec(3, half="right"), DieSpec(5, half="right"))
    scene = Scene(points=tuple(points), bar=bar, off=off, dice=dice, cube=CubeSpec(2, 1))
    reading = reader.read(render(scene, style=style, seed=7).image)
    errors = []
    for attempt in (lambda: read_image(bad_file), lambda: open_source("usb:7")):
        try:
            attempt()
        except CameraError as exc:
            errors.append(str(exc))
    return {
        "opencv": cv2.__version__,
        "numpy": np.__version__,
        "points": list(reading.points),
        "bar": list(reading.bar),
        "dice": sorted(die.value for die in reading.dice),
        "cube": None if reading.cube is None else [reading.cube.value, reading.cube.owner],
        "confidence": reading.confidence,
        "errors": errors,
    }


def test_a_board_reads_the_same_on_a_raspberry_pis_opencv(tmp_path: Path) -> None:
    import cv2

    assert PI_PYTHON.is_file(), f"{PI_PYTHON} is missing: scripts/setup.sh --test makes it"
    bad = tmp_path / "cut.png"
    image = render(Scene(points=tuple(Position.STARTING.to_absolute(1)[0])), seed=3).image
    bad.write_bytes(cv2.imencode(".png", image)[1].tobytes()[:2000])
    script = (
        "import json, runpy; "
        f"found = runpy.run_path({str(Path(__file__))!r})['read_a_board']({str(bad)!r}); "
        "print(json.dumps(found))"
    )
    done = subprocess.run([str(PI_PYTHON), "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    there = json.loads(done.stdout.splitlines()[-1])
    here = read_a_board(str(bad))
    assert there["opencv"].startswith("4.") and int(there["numpy"].split(".")[0]) < 2, there
    assert here["opencv"] != there["opencv"], (here["opencv"], sys.executable)
    # OpenCV's own log lines stay off the terminal there too: the errors say it in words.
    assert done.stderr == "", done.stderr
    points, bar, _ = POSITION.to_absolute(1)
    assert there["points"] == here["points"] == list(points)
    assert there["bar"] == here["bar"] == list(bar)
    assert there["dice"] == here["dice"] == [3, 5]
    assert there["cube"] == here["cube"] == [2, 1]
    assert there["confidence"] > 0.5 and abs(there["confidence"] - here["confidence"]) < 0.05
    assert len(there["errors"]) == 2 and there["errors"] == here["errors"]
