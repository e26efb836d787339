# SPDX-License-Identifier: MIT
"""Rendered camera frames of an opening roll and a move, and a fake camera that plays them.

Shared by the referee and replay tests; the frames are the ones ``test_table.py`` feeds the
table (the same scenes, hands and dice), so a recorded opening roll 5-2 and the move 13/8 13/11
are what every test expects.
"""

from __future__ import annotations

import threading
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import numpy as np

from bgboard.config import Config
from engine.position import Position
from vision.calibration import calibrate
from vision.frames import Frame
from vision.render import STYLES, Camera, DieSpec, Lighting, Scene, render

if TYPE_CHECKING:
    from bgboard.hall.topics import BrokerUrl
    from bgboard.referee import Referee
    from bgboard.web.server import Bind

START = tuple(Position.STARTING.to_absolute(1)[0])
STYLE = STYLES["classic"]
CAMERA = Camera()
LIGHTING = Lighting()
#: Five frames a second; the gate and the controller each want 0.6 s of stillness.
STEP = 0.2
#: The opening roll: seat 1 (the bottom player, engine player 1) rolls the 5 on the right.
OPENING_DICE = (DieSpec(5, half="right", angle=10.0), DieSpec(2, half="left", angle=20.0))


def moved(points: tuple[int, ...], *steps: tuple[int, int]) -> tuple[int, ...]:
    """Player 1's checkers moved ``from`` -> ``to`` (point numbers, player 1's numbering)."""
    board = list(points)
    for start, end in steps:
        assert board[start - 1] > 0 and board[end - 1] >= 0
        board[start - 1] -= 1
        board[end - 1] += 1
    return tuple(board)


PLAYED = moved(START, (13, 8), (13, 11))


@cache
def frame(
    points: tuple[int, ...], dice: tuple[DieSpec, ...] = (), hand: bool = False, seed: int = 0, camera: Camera = CAMERA
) -> np.ndarray:
    """One camera frame; the same arguments give the very same image (a still scene)."""
    scene = Scene(points=points, dice=dice)
    image = render(scene, style=STYLE, camera=camera, lighting=LIGHTING, hand=hand, seed=seed).image
    return image


def opening_frames() -> list[np.ndarray]:
    """Hands over the board, then the two opening dice lying still (12 frames)."""
    hands = [frame(START, hand=True, seed=s) for s in range(10, 13)]
    return hands + [frame(START, OPENING_DICE, seed=20)] * 9


def move_frames() -> list[np.ndarray]:
    """13/8 13/11 played by hand, then the board still with the dice picked up (11 frames)."""
    hands = [frame(moved(START, (13, 8)), hand=True, seed=30), frame(PLAYED, hand=True, seed=31)]
    return hands + [frame(PLAYED, seed=32)] * 9


def referee_config(profile: Path, store: Path) -> Config:
    """The referee tests' settings: a fake camera, the rendered board's profile, Ann and Bob to 5."""
    return Config().with_overrides(
        camera_source="fake:camera",
        camera_profile=str(profile),
        store_path=str(store),
        match_players="Ann,Bob",
        match_length="5",
    )


def save_profile(path: Path) -> Path:
    """Calibrate on a rendered starting position and write the profile to ``path``."""
    shot = render(Scene(points=START), style=STYLE, camera=CAMERA, lighting=LIGHTING, seed=1)
    calibrate(shot.image, shot.corners, die_fraction=STYLE.die_fraction).save(path)
    return path


class FakeCamera:
    """A frame source addressed like a camera that plays ``images``, then ends or stalls.

    :param then: ``end`` returns ``None`` after the last image (a file's end); ``stall``
        blocks in ``read()`` until the source is closed, as a camera that stopped does.
    """

    def __init__(self, url: str, images: list[np.ndarray], then: str = "end", step: float = STEP) -> None:
        self.url = url
        self.images = list(images)
        self.then = then
        self.step = step
        self.seq = 0
        self.closed = threading.Event()

    def read(self) -> Frame | None:
        if self.seq < len(self.images):
            image = self.images[self.seq]
            self.seq += 1
            # Times from 0 at every opening, as a file's synthetic times are.
            return Frame(image, (self.seq - 1) * self.step, self.seq)
        if self.then == "stall":
            self.closed.wait()
        return None

    def close(self) -> None:
        self.closed.set()


class Cameras:
    """A source factory handing out the given fake cameras in turn, one per opening."""

    def __init__(self, *cameras: FakeCamera) -> None:
        self.cameras = list(cameras)
        self.opened: list[str] = []

    def __call__(self, url: str) -> FakeCamera:
        self.opened.append(url)
        if not self.cameras:
            # Every planned opening is used up: a camera that never sends anything.
            return FakeCamera(url, [], then="stall")
        return self.cameras.pop(0)


def make_referee(
    config: Config,
    *,
    out: TextIO,
    web: Bind | None = None,
    publish: BrokerUrl | None = None,
    table_name: str = "",
    against: tuple[str, int] | None = None,
    **options: Any,
) -> Referee:
    """A :class:`~bgboard.referee.Referee` as ``bgboard referee`` builds one: the session's
    attachments from ``web``, ``publish`` and ``against``, the rest its
    :class:`~bgboard.referee.RefereeOptions`."""
    from bgboard.hall.publish import Publishing
    from bgboard.referee import Referee, RefereeOptions
    from bgboard.session import SessionOptions
    from bgboard.web.server import LivePage

    session = SessionOptions(
        against=against,
        publish=None if publish is None else Publishing(publish, table_name),
        page=None if web is None else LivePage(web),
    )
    return Referee(config, out=out, options=RefereeOptions(**options), session=session)
