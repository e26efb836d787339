# SPDX-License-Identifier: MIT
"""The table pipeline follows an opening played on rendered camera frames."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest
from rendered_table import CAMERA, LIGHTING, OPENING_DICE, START, STEP, STYLE, frame, moved, save_profile

from bgboard.config import Config
from bgboard.controller import Controller
from bgboard.events import Event, StoreSink
from bgboard.store import MatchStore
from bgboard.table import SetupError, Table, TableStats
from engine.hints import INSTALL_HINT, GnubgHints, HintEngine, find_gnubg, skill
from engine.match import MatchState, Move, OpeningRoll, Phase
from engine.opponent import GnubgOpponent
from hardware import scene as sc
from hardware.panels import FakeLedPanel
from hardware.presenter import hint_points
from vision.calibration import calibrate
from vision.reader import BoardReader
from vision.render import DieSpec, Scene, render
from vision.stabiliser import MotionGate


@pytest.fixture(scope="module")
def reader() -> BoardReader:
    shot = render(Scene(points=START), style=STYLE, camera=CAMERA, lighting=LIGHTING, seed=1)
    return BoardReader(calibrate(shot.image, shot.corners, die_fraction=STYLE.die_fraction))


class Run:
    """A table fed with frames on a clock that steps :data:`STEP` seconds a frame."""

    def __init__(self, reader: BoardReader, hints: HintEngine | None = None) -> None:
        self.store = MatchStore(":memory:")
        self.match = self.store.start_match(["Ann", "Bob"], 5)
        self.panel = FakeLedPanel()
        self.said: list[Event] = []
        self.controller = Controller(MatchState.new_match(5), teach=hints is not None)
        self.table = Table(
            reader,
            MotionGate(reader.homography),
            self.controller,
            panel=self.panel,
            sinks=[self.said.append, StoreSink(self.store, self.match)],
            hints=hints,
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


def test_the_builder_assembles_the_pipeline_as_the_config_says(reader: BoardReader) -> None:
    config = Config().with_overrides(
        camera_settle="0.8", match_mode="log", match_player_at_bottom="2", match_hint_ply="1", match_players="Ann,Bob"
    )
    table = Table.from_config(config, reader, state=MatchState.new_match(5))
    assert table.reader is reader and table.gate.settle == 0.8
    controller = table.controller
    assert (controller.mode, controller.settle, controller.bottom_player) == ("log", 0.8, 1)
    assert controller.names == ("Ann", "Bob") and controller.state == MatchState.new_match(5)
    # Teach mode goes with a hint engine to ask: none here.
    assert not controller.teach and table.hints is None and table.hint_ply == 1
    assert len(table.sinks) == 0


def test_the_builder_follows_the_stores_match_and_records_into_it(reader: BoardReader) -> None:
    said: list[Event] = []
    with MatchStore(":memory:") as store:
        match = store.start_match(["Ann", "Bob"], 3)
        table = Table.from_config(Config(), reader, store=store, match_id=match, sinks=[said.append])
        assert table.controller.state == store.state(match) and table.controller.names == ("Ann", "Bob")
        # The console first, then the store: what is said is what was recorded.
        console, recorder = table.sinks
        assert console == said.append and isinstance(recorder, StoreSink)
        hands = [frame(START, hand=True, seed=s) for s in range(10, 13)]
        for n, image in enumerate(hands + [frame(START, dice=OPENING_DICE, seed=20)] * 9):
            table.feed(image, n * STEP)
        assert kinds(said) == ["opening-roll"] and said[0].t is not None
        assert [a.action for a in store.actions(match)] == [OpeningRoll(5, 2)]


def test_the_builder_loads_the_reader_from_the_profile(tmp_path: Path) -> None:
    with pytest.raises(SetupError, match="no calibration profile"):
        Table.from_config(Config(), state=MatchState.new_match(1))
    with pytest.raises(SetupError, match="--profile: cannot use the calibration profile"):
        Table.from_config(
            Config().with_overrides(camera_profile=str(tmp_path / "missing.toml")),
            state=MatchState.new_match(1),
            profile_name="--profile",
        )
    profile = save_profile(tmp_path / "board.toml")
    table = Table.from_config(Config().with_overrides(camera_profile=str(profile)), state=MatchState.new_match(1))
    assert isinstance(table.reader, BoardReader)


def test_the_builder_needs_the_match(reader: BoardReader) -> None:
    with pytest.raises(ValueError, match="needs the match"):
        Table.from_config(Config(), reader)


def test_a_store_needs_a_match_id(reader: BoardReader) -> None:
    with MatchStore(":memory:") as store, pytest.raises(ValueError, match="match id"):
        Table.from_config(Config(), reader, store=store)


# -- teach mode --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def gnubg() -> Iterator[GnubgHints]:
    if find_gnubg() is None:
        pytest.fail(INSTALL_HINT)
    with GnubgHints(timeout=60.0) as hints:
        yield hints


@pytest.mark.oracle
def test_teach_mode_lights_gnubgs_best_play_and_judges_the_move(reader: BoardReader, gnubg: GnubgHints) -> None:
    run = Run(reader, gnubg)
    try:
        events = run.opening()
        assert kinds(events) == ["opening-roll", "hint"]
        state = run.controller.state
        # gnubg's own answer, asked directly: the hint shown is its best play.
        plays = gnubg.plays(state, n=len(state.legal_plays()))
        best = plays[0]
        assert events[1].fields["play"] == str(best.play)
        assert events[1].text == f"hint: {best.play} (gnubg 0-ply, equity {best.equity:+.3f})"
        # Player 1 sits at seat 1: his point numbers are the LEDs'.
        leave, land = hint_points(best.play)
        lit = run.panel.last
        assert lit == run.controller.scene()
        assert all(lit[f"point.{p}"] == sc.HINT_FROM for p in leave)
        assert all(lit[f"point.{p}"] == sc.HINT_TO for p in land)

        # 13/8 13/11 played and the dice picked up: recorded, then judged against gnubg's list.
        played = moved(START, (13, 8), (13, 11))
        events = run.feed([frame(moved(START, (13, 8)), hand=True, seed=30), frame(played, hand=True, seed=31)])
        events += run.still(frame(played, seed=32))
        assert kinds(events) == ["move", "feedback"]
        mine = next(p for p in plays if sorted(str(p.play).split()) == ["13/11", "13/8"])
        feedback = events[1]
        assert feedback.fields["error"] == mine.error and feedback.fields["skill"] == skill(mine.error)
        label = skill(mine.error) or "close"
        assert feedback.text == f"{mine.play}: {label}, -{mine.error:.3f} against {best.play}"
        # Said at the console, stored with the move, and the hint's lights are gone.
        assert kinds(run.said) == ["opening-roll", "hint", "move", "feedback"]
        stored = run.store.actions(run.match)
        assert stored[-1].note == f"gnubg 0-ply: {label}, -{mine.error:.3f} against {best.play}"
        assert not any(light in (sc.HINT_FROM, sc.HINT_TO) for light in run.panel.last.values())
    finally:
        run.store.close()


@pytest.mark.oracle
def test_teach_mode_cube_advice_from_the_hint_button(reader: BoardReader, gnubg: GnubgHints) -> None:
    run = Run(reader, gnubg)
    try:
        run.table.command("dice 52", 0.0)
        run.table.command("13/8 13/11", 1.0)
        events = run.table.button("hint", 2.0)
        assert kinds(events) == ["cube-hint"]
        advice = gnubg.cube(run.controller.state)
        assert events[0].fields["action"] == advice.action
    finally:
        run.store.close()


def test_no_gnubg_is_said_once_and_refereeing_goes_on(reader: BoardReader) -> None:
    run = Run(reader, GnubgHints("/nonexistent/gnubg"))
    try:
        events = run.table.command("dice 52", 0.0)
        assert kinds(events) == ["opening-roll", "hint-unavailable"]
        assert "apt-get install gnubg" in events[1].fields["reason"]
        assert kinds(run.table.command("13/8 13/11", 1.0)) == ["move"]
        # Teach mode's own requests are not repeated, nor the news said again.
        assert kinds(run.table.command("dice 31", 2.0)) == ["roll"]
        assert kinds(run.table.command("8/5 6/5", 3.0)) == ["move"]
        # Asked for, a hint is tried again and the players told why there is none.
        assert kinds(run.table.button("hint", 4.0)) == ["hint-unavailable"]
        assert [a.action.__class__.__name__ for a in run.store.actions(run.match)] == [
            "OpeningRoll",
            "Move",
            "Roll",
            "Move",
        ]
    finally:
        run.store.close()


def test_without_gnubg_to_play_its_side_the_players_act_for_it(reader: BoardReader) -> None:
    run = Run(reader)
    run.controller.gnubg = 1
    run.table.opponent = GnubgOpponent(GnubgHints("/nonexistent/gnubg"), 1)
    try:
        # Ann (engine 0, seat 2) wins the opening roll; Bob is gnubg's side.
        assert kinds(run.table.command("dice 25", 0.0)) == ["opening-roll"]
        events = run.table.command("13/8 13/11", 1.0)
        assert kinds(events) == ["move", "gnubg-unavailable"]
        assert "apt-get install gnubg" in events[1].text
        # Bob's double is the players' to make while gnubg cannot answer.
        assert kinds(run.table.button("double", 2.0)) == ["double"]
        # Ann takes; Bob, the cube now hers, cannot double: his dice are rolled for him.
        assert kinds(run.table.button("take", 2.1)) == ["take", "gnubg-roll"]
        assert run.controller.state.cube.value == 2
    finally:
        run.store.close()


def test_without_a_hint_engine_the_hint_button_says_so(run: Run) -> None:
    events = run.table.button("hint", 0.0)
    assert kinds(events) == ["refused"]  # nothing to hint before the opening roll
    run.table.command("dice 52", 1.0)
    events = run.table.button("hint", 2.0)
    assert kinds(events) == ["hint-unavailable"]
    assert "teach" in events[0].fields["reason"]


def test_the_reader_learns_the_board_from_what_the_match_records() -> None:
    # A reader of its own: learning changes its profile's references.
    shot = render(Scene(points=START), style=STYLE, camera=CAMERA, lighting=LIGHTING, seed=1)
    reader = BoardReader(calibrate(shot.image, shot.corners, die_fraction=STYLE.die_fraction))
    assert reader.points_by == "net"
    refs = reader.profile.references
    assert refs is not None and refs.borrowed[23]  # two checkers on the 24-point at the start
    run = Run(reader)
    try:
        run.hand(START, range(10, 13))
        dice = (DieSpec(6, half="right", angle=10.0), DieSpec(4, half="left", angle=20.0))
        assert kinds(run.still(frame(START, dice=dice, seed=20))) == ["opening-roll"]
        assert run.table.stats.learnt == 0  # the start shows no point bare that was not already
        # 24/18 24/20 with the 6-4: the 24-point is bare, and recorded so after the hold time.
        played = moved(START, (24, 18), (24, 20))
        events = run.feed([frame(moved(START, (24, 18)), hand=True, seed=40), frame(played, hand=True, seed=41)])
        events += run.still(frame(played, seed=42))
        assert kinds(events) == ["move"]
        assert run.table.stats.learnt >= 1
        assert not refs.borrowed[23]
        assert reader.learnt == run.table.stats.learnt
    finally:
        run.store.close()
