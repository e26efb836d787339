# SPDX-License-Identifier: MIT
"""The table pipeline follows an opening played on rendered camera frames."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import pairwise

import numpy as np
import pytest

from bgboard.controller import Controller, Event
from bgboard.store import MatchStore
from bgboard.table import Table, TableStats
from engine.match import MatchState, Move, OpeningRoll, Phase
from engine.position import Position
from hardware import scene as sc
from hardware.panels import FakeLedPanel
from vision.calibration import calibrate
from vision.reader import BoardReader
from vision.render import STYLES, Camera, DieSpec, Lighting, Scene, render
from vision.stabiliser import MotionGate

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


def frame(points: tuple[int, ...], *, dice: tuple[DieSpec, ...] = (), hand: bool = False, seed: int = 0) -> np.ndarray:
    """One camera frame; the same arguments give the very same image (a still scene)."""
    scene = Scene(points=points, dice=dice)
    return render(scene, style=STYLE, camera=CAMERA, lighting=LIGHTING, hand=hand, seed=seed).image


@pytest.fixture(scope="module")
def reader() -> BoardReader:
    shot = render(Scene(points=START), style=STYLE, camera=CAMERA, lighting=LIGHTING, seed=1)
    return BoardReader(calibrate(shot.image, shot.corners))


class Run:
    """A table fed with frames on a clock that steps :data:`STEP` seconds a frame."""

    def __init__(self, reader: BoardReader) -> None:
        self.store = MatchStore(":memory:")
        self.match = self.store.start_match(["Ann", "Bob"], 5)
        self.panel = FakeLedPanel()
        self.said: list[Event] = []
        self.controller = Controller(MatchState.new_match(5))
        self.table = Table(
            reader,
            MotionGate(reader.homography),
            self.controller,
            panel=self.panel,
            store=self.store,
            match_id=self.match,
            out=self.said.append,
        )
        self.t = 0.0

    def feed(self, images: Iterator[np.ndarray] | list[np.ndarray]) -> list[Event]:
        events: list[Event] = []
        for image in images:
            events += self.table.feed(image, self.t)
            self.t += STEP
        return events

    def still(self, image: np.ndarray, frames: int = 9) -> list[Event]:
        """The same frame for ``frames`` steps: long enough for the gate and the controller."""
        return self.feed([image] * frames)

    def hand(self, points: tuple[int, ...], seeds: range) -> list[Event]:
        """A hand over the board, in a new place every frame."""
        return self.feed(frame(points, hand=True, seed=s) for s in seeds)

    def opening(self) -> list[Event]:
        events = self.hand(START, range(10, 13))
        return events + self.still(frame(START, dice=OPENING_DICE, seed=20))


@pytest.fixture
def run(reader: BoardReader) -> Iterator[Run]:
    r = Run(reader)
    yield r
    r.store.close()


def kinds(events: list[Event]) -> list[str]:
    return [e.kind for e in events]


def test_an_opening_roll_and_move_are_recorded_stored_and_shown(run: Run) -> None:
    events = run.opening()
    assert kinds(events) == ["opening-roll"]
    assert events[0].action == OpeningRoll(2, 5)
    assert events[0].source == "camera"
    state = run.controller.state
    assert state.phase is Phase.MOVE and state.on_roll == 1
    # The still scene was read once however many still frames came after the motion.
    assert run.table.stats.reads == 1

    # 13/8 13/11 moved by hand, then the dice picked up: judged without a button.
    played = moved(START, (13, 8), (13, 11))
    events = run.feed([frame(moved(START, (13, 8)), hand=True, seed=30), frame(played, hand=True, seed=31)])
    events += run.still(frame(played, seed=32))
    assert kinds(events) == ["move"]
    move = events[0]
    assert sorted(move.fields["play"].split()) == ["13/11", "13/8"]
    assert move.source == "camera"
    assert isinstance(move.action, Move)
    assert run.controller.state.phase is Phase.ROLL and run.controller.state.on_roll == 0

    # Everything said went to the console, and the store holds the same two actions.
    assert kinds(run.said) == ["opening-roll", "move"]
    stored = run.store.actions(run.match)
    assert [a.action for a in stored] == [OpeningRoll(2, 5), move.action]
    assert [a.source for a in stored] == ["camera", "camera"]
    assert run.store.state(run.match) == run.controller.state

    # The panel saw the match begin, player 1 to move, then player 2 to roll, and nothing twice in a row.
    scenes = run.panel.scenes
    assert len(scenes) >= 3
    assert all(a != b for a, b in pairwise(scenes))
    assert scenes[-1] == run.controller.scene()
    assert run.table.stats.shown == len(scenes)


def test_an_illegal_move_lights_its_points_red(run: Run) -> None:
    assert kinds(run.opening()) == ["opening-roll"]
    # 24/18 13/11 plays a 6 that was not rolled; the dice still lie there, so "done" asks for the verdict.
    wrong = moved(START, (24, 18), (13, 11))
    run.feed([frame(moved(START, (24, 18)), hand=True, seed=40), frame(wrong, hand=True, seed=41)])
    assert run.still(frame(wrong, dice=OPENING_DICE, seed=20)) == []
    events = run.table.button("done", run.t)
    assert kinds(events) == ["illegal"]
    marks = events[0].fields["marks"]
    assert marks
    last = run.panel.last
    assert last == run.controller.scene()
    # Player 1 sits at the bottom, so his point numbers are the LEDs' numbers.
    for mark in marks:
        assert last[f"point.{mark}"] == sc.ILLEGAL
    assert last["status"].colour is sc.Colour.RED
    # Nothing illegal was stored: only the opening roll.
    assert len(run.store.actions(run.match)) == 1
    assert run.controller.state.phase is Phase.MOVE

    # The checkers put back: the red goes out and the turn is still to play.
    run.hand(START, range(50, 52))
    events = run.still(frame(START, dice=OPENING_DICE, seed=20))
    assert kinds(events) == ["put-back"]
    assert all(light != sc.ILLEGAL for light in run.panel.last.values())


def test_stats_time_each_still_period_to_the_panel(run: Run) -> None:
    run.opening()
    stats: TableStats = run.table.stats
    assert stats.frames == 12 and stats.moving >= 3
    assert len(stats.feed_seconds) == stats.frames and len(stats.read_seconds) == stats.reads == 1
    # The opening roll reached the panel in the same still period that was read: the gate's
    # settle time plus the controller's, from the first still frame.
    latency = stats.latencies[-1]
    assert latency.waited == pytest.approx(1.2, abs=STEP + 1e-9)
    assert 0 < latency.wall <= sum(stats.feed_seconds)
    summary = stats.summary()
    assert summary["reads"] == 1 and summary["read_ms_mean"] > 0


def test_a_store_needs_a_match_id(reader: BoardReader) -> None:
    with pytest.raises(ValueError, match="match id"):
        Table(reader, MotionGate(reader.homography), Controller(MatchState.new_match(1)), store=MatchStore(":memory:"))
