# SPDX-License-Identifier: MIT
"""Sample camera photos to try the camera commands on without a camera (``bgboard vision sample``).

The photos are drawn by the renderer from the demo's real game, as the demo's camera sees the
board (a classic board, 1280x720, a lamp with glare): ``start.png``, the starting position with
the four corner markers, to calibrate from; and ``photos/``, one photo per scene (the board
before the game, the opening roll, each move, each roll), for ``bgboard replay --hold``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import cv2

from bgboard.config import MatchConfig
from bgboard.sim.simulation import board_scene, demo_record, demo_setup, rolling_half
from engine.match import Move, OpeningRoll, Roll
from engine.position import Position
from hardware.presenter import seat_of
from vision.render import BoardStyle, Camera, CubeSpec, DieSpec, Lighting, Scene, render

#: The engine index of the player at the bottom of the camera's view, as in the default config.
BOTTOM_PLAYER = MatchConfig().bottom_player


@dataclass
class Samples:
    """What :func:`write_samples` wrote: the calibration photo and the scenes in order."""

    start: Path
    photos: list[Path] = field(default_factory=list)
    #: What each photo shows, in players' words.
    captions: list[str] = field(default_factory=list)
    #: How many moves the photos show (fewer than asked when the game's opening runs out of
    #: plain moves and rolls: the sample stops at its first double).
    moves: int = 0


def write_samples(folder: Path, *, moves: int = 4, seed: int = 11) -> Samples:
    """Write ``start.png`` and ``photos/NN.png`` (the first ``moves`` moves of the demo's game).

    :raises OSError: the folder cannot be made or a photo cannot be written.
    """
    if moves < 1:
        raise ValueError(f"moves must be 1 or more, not {moves}")
    style, camera, lighting = demo_setup()
    record = demo_record()
    names = record.players
    cube = CubeSpec(1, None)
    board = board_scene(Position.STARTING, 1, cube=cube)
    photos = folder / "photos"
    photos.mkdir(parents=True, exist_ok=True)
    # Photos of an earlier, longer run would be replayed after these: they go (only ours).
    for old in photos.glob("[0-9][0-9].png"):
        old.unlink()
    samples = Samples(start=folder / "start.png")
    _write(samples.start, board, style, camera, lighting, seed)

    def shoot(scene: Scene, caption: str) -> None:
        path = photos / f"{len(samples.photos) + 1:02d}.png"
        _write(path, scene, style, camera, lighting, seed + len(samples.photos) + 1)
        samples.photos.append(path)
        samples.captions.append(caption)

    shoot(board, "the starting position")
    state = record.initial_state(0)
    played = 0
    for action in record.games[0].actions:
        if isinstance(action, OpeningRoll):
            dice = tuple(
                DieSpec(d, half=rolling_half(seat_of(p, BOTTOM_PLAYER)))
                for p, d in ((0, action.die0), (1, action.die1))
            )
            shoot(replace(board, dice=dice), f"the opening roll: {names[0]} {action.die0}, {names[1]} {action.die1}")
        elif isinstance(action, Roll):
            mover = state.on_roll
            assert mover is not None
            half = rolling_half(seat_of(mover, BOTTOM_PLAYER))
            dice = (DieSpec(action.dice.first, half=half), DieSpec(action.dice.second, half=half))
            shoot(replace(board, dice=dice), f"{names[mover]} rolls {action.dice.first}-{action.dice.second}")
        elif isinstance(action, Move):
            mover = state.on_roll
            assert mover is not None
            after = state.apply(action)
            # The board from the mover's side after the move: the side now on roll is the other.
            board = board_scene(after.position.swap(), seat_of(mover, BOTTOM_PLAYER), cube=cube)
            shoot(board, f"{names[mover]} plays {action.play}")
            played += 1
            samples.moves = played
            state = after
            if played == moves:
                break
            continue
        else:
            break
        state = state.apply(action)
    return samples


def _write(path: Path, scene: Scene, style: BoardStyle, camera: Camera, lighting: Lighting, seed: int) -> None:
    shot = render(scene, style=style, camera=camera, lighting=lighting, seed=seed)
    if not cv2.imwrite(str(path), shot.image):
        raise OSError(f"cannot write {path}")
