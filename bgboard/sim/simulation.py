# SPDX-License-Identifier: MIT
"""Simulated play at a rendered table: the frames a camera would see, and players who answer.

The demo (:mod:`bgboard.sim.demo`) and the benchmark (``bench/table.py``) both referee games that
no one plays: every turn is drawn by :mod:`vision.render` (a hand over the board, the dice
rolled on the roller's right, the checkers moved, a lamp's glare, sensor noise on every still
frame) and fed to a :class:`~bgboard.table.Table` on a frame clock. What they share:

- :class:`Film`: renders one board's scenes and feeds them to the table;
- :func:`board_scene`, :func:`rolling_half`: a position as the physical board shows it, and
  where a player's dice land;
- :class:`Tally`, :func:`same_match`, :func:`settle_roll`: each turn counted against the truth
  (right, flagged, wrong accepted, missed), and the players setting the referee right as they
  would at the console;
- :class:`DemoGame`: the players of a recorded game (the demo's shipped one,
  :func:`demo_record`), with one move first played wrong, and the figures it gives
  (:class:`DemoReport`).

The record only scripts the players: the referee sees nothing but the frames, the buttons and
the lines the players type.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any, Final

import numpy as np

from bgboard.config import Config
from bgboard.controller import Controller
from bgboard.errors import SimulationError
from bgboard.events import Event, EventSink, Players
from bgboard.store import MatchStore
from bgboard.table import Latency, Table
from engine.dice import Dice
from engine.hints import HintEngine
from engine.judge import judge
from engine.match import AcceptResign, Action, Double, Drop, MatchState, Move, OpeningRoll, Phase, Roll, Take
from engine.matfile import read_mat
from engine.movegen import legal_plays
from engine.opponent import Opponent
from engine.play import Play
from engine.position import Position
from engine.record import GameRecord, MatchRecord
from hardware.panels import LedPanel
from vision.calibration import calibrate
from vision.reader import BoardReader
from vision.render import STYLES, BoardStyle, Camera, CubeSpec, DieSpec, Lighting, render
from vision.render import Scene as BoardScene

#: The shipped game, inside the package.
DEMO_MATCH: Final = "demo-match.mat"
#: Events that ask the players to look again: a turn that met one of them was flagged.
FLAGS: Final = frozenset(
    {"please-check", "illegal", "not-gnubgs-move", "re-roll", "not-moved", "in-progress", "refused"}
)
#: What the referee says of a board that is not the move to record: red lights.
WRONG_MOVE: Final = frozenset({"illegal", "not-gnubgs-move"})
#: Frames with a hand over the board while the dice are rolled, and while the checkers move.
HAND_FRAMES: Final = 3
#: Still frames of each settled scene: enough for the gate's and the controller's settle times.
STILL_FRAMES: Final = 9


@dataclass
class Tally:
    """What happened to one kind of turn (rolls, moves, cube actions)."""

    right: int = 0
    flagged: int = 0
    wrong: int = 0
    missed: int = 0
    kinds: Counter[str] = field(default_factory=Counter)

    @property
    def total(self) -> int:
        """Turns counted."""
        return self.right + self.flagged + self.wrong + self.missed

    def count(self, recorded: bool, correct: bool, flagged: bool) -> str:
        """Count one turn; returns its outcome: ``wrong``, ``right``, ``flagged`` or ``missed``.

        A recorded turn that differs from the truth is wrong even when it was also flagged.
        """
        if recorded and not correct:
            outcome = "wrong"
        elif recorded and not flagged:
            outcome = "right"
        else:
            outcome = "flagged" if flagged else "missed"
        setattr(self, outcome, getattr(self, outcome) + 1)
        return outcome

    def to_json(self) -> dict[str, int]:
        """The four counts."""
        return {"right": self.right, "flagged": self.flagged, "wrong": self.wrong, "missed": self.missed}


class Film:
    """Renders the frames of one board and feeds them to a table on a frame clock.

    :param step: seconds between frames (1 / frames per second).
    :param noise: sensor noise added to each still frame, in grey levels: a real camera's
        frames never repeat exactly.
    :param after: called after each frame has been processed.
    """

    def __init__(
        self,
        style: BoardStyle,
        camera: Camera,
        lighting: Lighting,
        table: Table,
        *,
        step: float,
        noise: float,
        seed: int,
        after: Callable[[], None] | None = None,
    ) -> None:
        self.style, self.camera, self.lighting = style, camera, lighting
        self.after = after
        self.table = table
        self.step = step
        self.noise = noise
        self.t = 0.0
        self.frame_seed = seed * 1_000_003
        self.layout_seed = seed
        self.noise_rng = np.random.default_rng(seed)

    def _render(self, scene: BoardScene, *, hand: bool) -> np.ndarray:
        self.frame_seed += 1
        # The checkers nobody moved lie where they lay, frame after frame, as on a real board.
        return render(
            scene,
            style=self.style,
            camera=self.camera,
            lighting=self.lighting,
            hand=hand,
            seed=self.frame_seed,
            layout_seed=self.layout_seed,
        ).image

    def _feed(self, image: np.ndarray) -> list[Event]:
        events = self.table.feed(image, self.t)
        if self.after is not None:
            self.after()
        self.t += self.step
        return events

    def hands(self, scene: BoardScene, frames: int = HAND_FRAMES) -> list[Event]:
        """A hand over the board, somewhere new every frame."""
        events: list[Event] = []
        for _ in range(frames):
            events += self._feed(self._render(scene, hand=True))
        return events

    def still(self, scene: BoardScene, frames: int = STILL_FRAMES) -> list[Event]:
        """One scene lying still; each frame with its own sensor noise."""
        image = self._render(scene, hand=False)
        events: list[Event] = []
        for _ in range(frames):
            if self.noise > 0:
                grain = self.noise_rng.normal(0.0, self.noise, image.shape)
                events += self._feed(np.clip(image + grain, 0, 255).astype(np.uint8))
            else:
                events += self._feed(image)
        return events


def rolling_half(seat: int) -> str:
    """The half of the board, as player 1 sees it, on the right of the player at ``seat``: where
    his dice must land."""
    return "right" if seat == 1 else "left"


def board_scene(
    position: Position, seat: int, dice: tuple[DieSpec, ...] = (), cube: CubeSpec | None = None
) -> BoardScene:
    """The physical board of ``position`` (seen from the player at ``seat``) with dice and cube."""
    points, bar, off = position.to_absolute(seat)
    return BoardScene(points=tuple(points), bar=bar, off=off, dice=dice, cube=cube)


def demo_record() -> MatchRecord:
    """The shipped real match the demo plays again."""
    text = resources.files("bgboard").joinpath("data", DEMO_MATCH).read_text(encoding="utf-8")
    mat = read_mat(text, DEMO_MATCH)
    if mat.problems:
        raise ValueError(f"the demo game does not read cleanly: {mat.problems[0]}")
    return mat.record


def demo_setup() -> tuple[BoardStyle, Camera, Lighting]:
    """The demo's board, camera and lamp: a classic board at 1280x720 under a lamp with glare."""
    lighting = Lighting(glare=0.22, glare_position=(0.58, 0.4), glare_size=0.14, noise=3.0)
    return STYLES["classic"], Camera(), lighting


def wrong_board(state: MatchState, rng: random.Random) -> Position | None:
    """A board a player might leave by misreading the roll: legal for some other roll, illegal now."""
    dice = state.dice
    assert dice is not None
    good = legal_plays(state.position, dice).positions()
    for other in rng.sample([Dice(a, b) for a in range(1, 7) for b in range(a, 7)], 21):
        if other.sorted() == dice.sorted():
            continue
        wrong = sorted(legal_plays(state.position, other).positions() - good)
        wrong = [w for w in wrong if judge(state.position, dice, w).verdict == "illegal"]
        if wrong:
            return rng.choice(wrong)
    return None


def played_as(state: MatchState, board: Position) -> str:
    """The move that leaves ``board``, in players' notation: a play of some roll, as a player reads it."""
    for first in range(6, 0, -1):
        for second in range(first, 0, -1):
            play = legal_plays(state.position, Dice(first, second)).play_for(board)
            if play is not None and play:
                return str(play)
    return "a move"


def _after(state: MatchState, play: Play | Position | str) -> Position:
    """The board after ``play``, seen from the mover (as :func:`legal_plays` gives results)."""
    if isinstance(play, Position):
        return play
    assert state.dice is not None
    legal = legal_plays(state.position, state.dice)
    if not legal.results and not str(play):
        return state.position  # no legal move: the checkers stay
    if isinstance(play, str):
        return legal.parse(play)[0]
    wanted = str(play)
    for position, canonical in legal.results.items():
        if str(canonical) == wanted:
            return position
    raise ValueError(f"{play} is not a legal play of {state.dice} in {state.position.position_id()}")


def same_match(state: MatchState, wanted: MatchState) -> bool:
    """The same match, but for the order of the dice (a roll of 5-3 is a roll of 3-5)."""
    return state == wanted or (state.dice is not None and replace(state, dice=wanted.dice) == wanted)


def settle_roll(
    tally: Tally,
    events: list[Event],
    controller: Controller,
    truth: MatchState,
    fix: str,
    answer: Callable[[str], list[Event]],
) -> str:
    """Count a roll against the truth, then set the referee right as players would.

    A wrong roll accepted is taken back (``undo``); a roll missed, flagged or taken back is
    then given at the console (``fix``, e.g. ``dice 53``).

    :param tally: counts the roll (and the kinds of its events).
    :param events: what the table said while the dice were rolled and lay still.
    :param controller: the referee's controller, whose state is compared with ``truth``.
    :param truth: the match as it is after the roll (the dice in either order).
    :param answer: gives the table a line typed at the console; returns what it said.
    :returns: the roll's outcome: ``right``, ``flagged``, ``wrong`` or ``missed``.
    :raises SimulationError: the referee did not take ``fix``.
    """
    kinds = [e.kind for e in events]
    tally.kinds.update(kinds)
    recorded = any(isinstance(e.action, (Roll, OpeningRoll)) for e in events)
    flagged = any(k in FLAGS for k in kinds)
    outcome = tally.count(recorded, same_match(controller.state, truth), flagged)
    if outcome == "wrong":
        answer("undo")
    if not same_match(controller.state, truth):
        said = answer(fix)
        if not same_match(controller.state, truth):
            words = "; ".join(f"{e.kind}: {e.text}" for e in said) or "nothing"
            raise SimulationError(f"the referee did not take {fix!r} (it said {words})")
    return outcome


@dataclass
class DemoReport:
    """What happened over the demo game: the figures ``bench/table.py`` reports.

    :ivar rolls: rolls (and the opening roll) read right, flagged, wrong or missed.
    :ivar moves: moves recognised right, flagged for checking, wrong ones accepted, missed.
    :ivar cube: cube actions (doubles and takes) read from the cube, or given with buttons.
    :ivar illegal_shown: wrong boards the players left on purpose.
    :ivar illegal_flagged: of those, how many were lit as illegal.
    :ivar move_latencies: from the first still frame after a move to the new LED scene.
    :ivar roll_latencies: the same after a roll.
    :ivar answers: what the players had to type or press, in order.
    """

    rolls: Tally = field(default_factory=Tally)
    moves: Tally = field(default_factory=Tally)
    cube: Tally = field(default_factory=Tally)
    illegal_shown: int = 0
    illegal_flagged: int = 0
    move_latencies: list[Latency] = field(default_factory=list)
    roll_latencies: list[Latency] = field(default_factory=list)
    answers: list[str] = field(default_factory=list)
    finished: bool = False
    match_id: int | None = None
    mat_file: Path | None = None
    store_file: Path | None = None
    seconds: float = 0.0
    table: dict[str, float | int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """JSON-ready figures."""

        def ms(values: list[float]) -> float | None:
            return round(1e3 * float(np.median(values)), 1) if values else None

        def p95(values: list[float]) -> float | None:
            return round(1e3 * float(np.percentile(values, 95)), 1) if values else None

        walls = [x.wall for x in self.move_latencies]
        return {
            "rolls": self.rolls.to_json(),
            "moves": self.moves.to_json(),
            "cube": self.cube.to_json(),
            "illegal_shown": self.illegal_shown,
            "illegal_flagged": self.illegal_flagged,
            "answers": len(self.answers),
            "move_latency_ms_median": ms(walls),
            "move_latency_ms_p95": p95(walls),
            "finished": self.finished,
            "seconds": round(self.seconds, 1),
        }


class DemoGame:
    """Plays game ``game`` of ``record`` at a rendered table and follows what the referee says.

    :param store: the match store; a match is started in it for the game.
    :param panel: the LED panel the table drives (``None``: none).
    :param sinks: where the table's events and the players' lines go, in order (the console);
        the store's sink is added after them.
    :param draw: called with the time after events worth showing on the LEDs (illegal, please
        check, cube), once the table has shown their scene.
    :param illegal: play one move wrong first, to show the illegal-move lights.
    :param hints: teach mode with this hint engine: hints lit after each roll, feedback after
        each move (``None``: no teach mode).
    :param tick: called with the frame time after each frame and each answer (the demo's
        pacing, and the changes a live page asks for, run in the table's thread).
    :param opponent: gnubg playing one side (:class:`GnubgDemoGame` plays such games).
    """

    def __init__(
        self,
        record: MatchRecord,
        game: int = 0,
        *,
        store: MatchStore,
        panel: LedPanel | None = None,
        sinks: Iterable[EventSink] = (),
        draw: Callable[[float], None] | None = None,
        setup: tuple[BoardStyle, Camera, Lighting] | None = None,
        fps: float = 5.0,
        noise: float = 2.0,
        seed: int = 7,
        illegal: bool = True,
        hints: HintEngine | None = None,
        tick: Callable[[float], None] | None = None,
        opponent: Opponent | None = None,
    ) -> None:
        self.record = record
        self.tick = tick
        self.game = game
        self.store = store
        self.draw = draw
        self.rng = random.Random(seed)
        self.illegal = illegal
        style, camera, lighting = setup or demo_setup()
        start = board_scene(Position.STARTING, 1, cube=CubeSpec(1, None))
        shot = render(start, style=style, camera=camera, lighting=lighting, seed=seed)
        # The demo's board is its own: its dice's size is known, as a user gives theirs.
        reader = BoardReader(calibrate(shot.image, shot.corners, die_fraction=style.die_fraction))
        initial = record.initial_state(game)
        self.names = (record.players[0], record.players[1])
        self.match_id = store.start_match(
            self.names, record.length, record.options, {"Event": "bgboard demo", "Round": f"game {game + 1}"}
        )
        self.table = Table.from_config(
            Config(),
            reader,
            store=store,
            match_id=self.match_id,
            state=initial,
            names=self.names,
            panel=panel,
            sinks=[*sinks, self._said],
            hints=hints,
            opponent=opponent,
        )
        self.controller = self.table.controller
        # gnubg's own actions (its doubles, takes, drops), recorded by the table as they come.
        self._gnubg_actions: list[Action] = []
        self._draw_pending = False
        self.film = Film(style, camera, lighting, self.table, step=1.0 / fps, noise=noise, seed=seed, after=self._drawn)
        self.truth = initial
        self.cube = CubeSpec(1, None)
        self.board = board_scene(Position.STARTING, 1, cube=self.cube)
        self.report = DemoReport(match_id=self.match_id)

    # -- talking ---------------------------------------------------------------------------

    def _said(self, event: Event) -> None:
        if event.source == "gnubg" and event.action is not None and not event.undo:
            self._gnubg_actions.append(event.action)
        if event.verdict in ("illegal", "check") or event.kind in ("take", "drop", "hint"):
            # Drawn once the table has shown the scene this event leads to.
            self._draw_pending = True

    def _drawn(self) -> None:
        if self._draw_pending and self.draw is not None:
            self.draw(self.film.t)
        self._draw_pending = False
        if self.tick is not None:
            self.tick(self.film.t)

    def _do(self, text: str, **fields: Any) -> None:
        """What the players do, told down the table's stream as the players' line."""
        self.table.say(Players("players", text, fields), self.film.t)

    def _answer(self, text: str, *, button: bool = False) -> list[Event]:
        """The players answer the referee: a button, or a line typed at the console."""
        self.report.answers.append(text)
        self._do(f"the players {'press' if button else 'type'}: {text}", answer=text)
        events = self.table.button(text, self.film.t) if button else self.table.command(text, self.film.t)
        self._drawn()
        return events

    # -- the game ----------------------------------------------------------------------------

    def play(self, moves: int | None = None) -> DemoReport:
        """Play the whole game (or its first ``moves`` moves); returns the figures."""
        started = time.perf_counter()
        actions = self.record.games[self.game].actions
        at = [i for i, a in enumerate(actions) if isinstance(a, Move)]
        # The wrong move comes a few moves in, when the board has some life in it.
        wrong_at = at[min(5, len(at) - 1)] if self.illegal and at else -1
        for index, action in enumerate(actions):
            if moves is not None and self.report.moves.total >= moves:
                break
            if isinstance(action, OpeningRoll):
                self._opening(action)
            elif isinstance(action, Roll):
                self._roll(action.dice)
            elif isinstance(action, Move):
                self._move(action, wrong_first=index >= wrong_at >= 0 and self.report.illegal_shown == 0)
            elif isinstance(action, Double):
                self._cube(take=index + 1 < len(actions) and isinstance(actions[index + 1], Take))
            elif isinstance(action, Take):
                continue  # with its double
            else:
                # Resignations and drops have no picture on the board: they are given at the console.
                self.truth = self.truth.apply(action)
                self.table.command(type(action).__name__.lower(), self.film.t)
        self.report.finished = self.controller.state.is_over()
        self.report.seconds = time.perf_counter() - started
        self.report.table = self.table.stats.summary()
        return self.report

    def _seat(self, player: int) -> int:
        return self.controller.seat(player)

    def _opening(self, action: OpeningRoll) -> None:
        die0, die1 = action.die0, action.die1
        dice = tuple(DieSpec(d, half=rolling_half(self._seat(p))) for p, d in ((0, die0), (1, die1)))
        self._do(f"{self.names[0]} rolls {die0}, {self.names[1]} rolls {die1}", dice=[die0, die1])
        events = self.film.hands(self.board)
        before = len(self.table.stats.latencies)
        events += self.film.still(replace(self.board, dice=dice))
        self.report.roll_latencies += self.table.stats.latencies[before:]
        self.truth = self.truth.apply(action)
        bottom, top = (die1, die0) if self._seat(1) == 1 else (die0, die1)
        self._settle_roll(events, f"dice {bottom}{top}")

    def _roll(self, dice: Dice) -> None:
        mover = self.truth.on_roll
        assert mover is not None
        half = rolling_half(self._seat(mover))
        self._do(f"{self.names[mover]} rolls {dice.first}-{dice.second}", dice=[dice.first, dice.second])
        specs = (DieSpec(dice.first, half=half), DieSpec(dice.second, half=half))
        events = self.film.hands(self.board)
        before = len(self.table.stats.latencies)
        events += self.film.still(replace(self.board, dice=specs))
        self.report.roll_latencies += self.table.stats.latencies[before:]
        self.truth = self.truth.apply(Roll(dice))
        self._settle_roll(events, f"dice {dice.first}{dice.second}")

    def _settle_roll(self, events: list[Event], fix: str) -> None:
        """Count a roll against the truth; the players set the referee right when it is not."""
        settle_roll(self.report.rolls, events, self.controller, self.truth, fix, self._answer)
        # The truth follows the referee's order of the dice, which is the record's up to order.
        self.truth = self.controller.state

    def _move_cube(self, cube: CubeSpec) -> list[Event]:
        """A hand turns or moves the cube to ``cube``; the board then lies still. What the table said."""
        self.cube = cube
        self.board = replace(self.board, cube=cube)
        return self.film.hands(self.board, 2) + self.film.still(self.board)

    def _cube(self, take: bool) -> None:
        """A double, taken (the cube goes to the taker's side) or not (the players say so)."""
        state = self.truth
        assert state.on_roll is not None
        doubler, taker = state.on_roll, 1 - state.on_roll
        value = state.cube.value * 2
        wanted = [state.apply(Double())]
        if take:
            wanted.append(wanted[0].apply(Take()))
            self._do(
                f"{self.names[doubler]} doubles to {value}; {self.names[taker]} takes and puts the cube on his side",
                cube=value,
            )
            events = self._move_cube(CubeSpec(value, self._seat(taker)))
            flagged = any(e.kind in FLAGS for e in events)
            now = self.controller.state
            self.report.cube.count(any(isinstance(e.action, Double) for e in events), now in wanted, flagged)
            self.report.cube.count(any(isinstance(e.action, Take) for e in events), now == wanted[1], flagged)
        else:
            self._do(f"{self.names[doubler]} doubles to {value}", cube=value)
        for button, truth in zip(("double", "take"), wanted, strict=False):
            if self.controller.state == state:
                self._answer(button, button=True)
            state = truth
        self.truth = wanted[-1]
        if self.controller.state != self.truth:
            raise SimulationError("the referee did not take the double: the demo cannot go on")

    def _with_gnubgs(self, truth: MatchState) -> MatchState:
        """``truth`` after the actions gnubg took meanwhile (its double after this move, say)."""
        for action in self._gnubg_actions:
            truth = truth.apply(action)
        self._gnubg_actions.clear()
        return truth

    def _move(self, action: Move, *, wrong_first: bool, wrong: Position | None = None) -> None:
        """One move; ``wrong_first``: the checkers are first moved to ``wrong`` (default: a
        board legal for another roll), then set right when the lights say so."""
        state = self.truth
        mover = state.on_roll
        assert mover is not None and state.dice is not None
        seat = self._seat(mover)
        after = _after(state, action.play)
        play = legal_plays(state.position, state.dice).play_for(after)
        text = (str(play) or "no move") if play is not None else after.position_id()
        events: list[Event] = []
        if wrong_first:
            told = wrong is not None
            wrong = wrong if wrong is not None else wrong_board(state, self.rng)
            if wrong is not None:
                if told:
                    other = legal_plays(state.position, state.dice).play_for(wrong)
                    words = f"{self.names[mover]}'s checkers are moved wrong: {other} instead of {text}"
                else:
                    words = (
                        f"{self.names[mover]} plays it wrong: {played_as(state, wrong)}"
                        f" that the {state.dice.first}-{state.dice.second} does not allow"
                    )
                self._do(words, before=state.position.position_id(), board=wrong.position_id())
                wrong_events = self.film.hands(board_scene(state.position, seat, cube=self.cube), 1)
                wrong_events += self.film.hands(board_scene(wrong, seat, cube=self.cube), HAND_FRAMES - 1)
                wrong_events += self.film.still(board_scene(wrong, seat, cube=self.cube))
                self.report.illegal_shown += 1
                if any(e.kind in WRONG_MOVE for e in wrong_events):
                    self.report.illegal_flagged += 1
                if self.controller.state != state:
                    # Accepted as a move: the worst outcome, counted and taken back.
                    self.report.moves.wrong += 1
                    self._answer("undo")
                if told:
                    self._do(
                        f"the red lights show where: {self.names[mover]}'s checkers are set as lit, {text}", play=text
                    )
                else:
                    self._do(f"{self.names[mover]} sees the red lights and plays {text} instead", play=text)
                events += wrong_events
        if events:
            # From the wrong board to the right one.
            events += self.film.hands(board_scene(after, seat, cube=self.cube), HAND_FRAMES)
        else:
            self._do(f"{self.names[mover]} plays {text}", play=text)
            events += self.film.hands(board_scene(state.position, seat, cube=self.cube), 1)
            events += self.film.hands(board_scene(after, seat, cube=self.cube), HAND_FRAMES - 1)
        self.board = board_scene(after, seat, cube=self.cube)
        before = len(self.table.stats.latencies)
        events += self.film.still(self.board)
        latencies = self.table.stats.latencies[before:]
        self.truth = self._with_gnubgs(state.apply(Move(after)))
        recorded = [e for e in events if isinstance(e.action, Move)]
        if not recorded and after == state.position:
            # No legal move: nothing moves on the board, so the player says so with the button.
            self._do(f"{self.names[mover]} cannot move")
            more = self._answer("done", button=True)
            events += more
            recorded += [e for e in more if isinstance(e.action, Move)]
        kinds = [e.kind for e in events if e.kind not in WRONG_MOVE or not wrong_first]
        self.report.moves.kinds.update(kinds)
        if recorded:
            self.report.move_latencies += latencies
        flagged = any(k in FLAGS for k in kinds)
        outcome = self.report.moves.count(bool(recorded), self.controller.state == self.truth, flagged)
        if outcome == "wrong":
            self._answer("undo")
        if self.controller.state != self.truth:
            asked = [e for e in events if e.kind == "please-check"]
            if asked and asked[-1].fields.get("best") == str(play) and self.controller.please_check:
                self._answer("done", button=True)
            elif play is not None:
                self._answer(f"correct {play}" if str(play) else "done", button=not str(play))
            else:
                self.controller.correct(after, self.film.t)
                self.table.show()
        if self.controller.state != self.truth:
            raise SimulationError(f"the referee did not take the move {text}: the demo cannot go on")


def gnubg_record(names: tuple[str, str], length: int) -> MatchRecord:
    """A match not played yet, between ``names``: what a game against gnubg starts from."""
    return MatchRecord(names, length, games=(GameRecord((0, 0), ()),))


class GnubgDemoGame(DemoGame):
    """One game against gnubg at a rendered table (``bgboard demo --against gnubg``).

    gnubg (``opponent``) plays its side through the table, as at a real board: the players roll
    real dice for it, its move is lit and a person moves its checkers, its cube actions are
    recorded and said. The person on the other side plays what ``brain`` (gnubg's 0-ply
    hints) thinks best, doubles and takes on its advice. The first time gnubg's checkers are
    moved, they are moved wrong (another legal play), so that the referee's red lights show;
    the person then sets them as lit.

    :param opponent: gnubg, playing engine player ``opponent.player``.
    :param brain: the person's judgement.
    :param names: the players' names (engine players 0 and 1).
    :param length: the match length (one game of it is played).
    :param kwargs: as :class:`DemoGame` (store, panel, sinks, draw, seed...).
    """

    def __init__(
        self,
        *,
        opponent: Opponent,
        brain: HintEngine,
        names: tuple[str, str],
        length: int = 3,
        wrong_gnubg: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(gnubg_record(names, length), 0, opponent=opponent, illegal=False, **kwargs)
        self.gnubg = opponent.player
        self.person = 1 - opponent.player
        self.brain = brain
        self.wrong_gnubg = wrong_gnubg

    def _dice(self) -> Dice:
        return Dice(self.rng.randint(1, 6), self.rng.randint(1, 6))

    def play(self, moves: int | None = None) -> DemoReport:
        """Play one game (or its first ``moves`` moves) against gnubg; returns the figures."""
        started = time.perf_counter()
        self.table.start(self.film.t)
        self.truth = self._with_gnubgs(self.truth)
        for _ in range(2000):
            state = self.controller.state
            if state.is_over() or (moves is not None and self.report.moves.total >= moves):
                break
            if state.phase is Phase.OPENING:
                die0, die1 = self.rng.sample(range(1, 7), 2)
                self._opening(OpeningRoll(die0, die1))
            elif state.phase is Phase.ROLL:
                if state.on_roll == self.person and state.can_double() and self._doubles(state):
                    self._person_doubles()
                else:
                    self._roll(self._dice())
            elif state.phase is Phase.DOUBLED:
                self._person_answers(self.brain.cube(state).take)
            elif state.phase is Phase.RESIGNED:
                # gnubg gives up a lost game: the person takes the points.
                self._answer("accept")
                self.truth = self.truth.apply(AcceptResign())
            elif state.phase is Phase.MOVE:
                if state.on_roll == self.gnubg:
                    self._gnubg_moves()
                else:
                    ranked = self.brain.plays(state, n=1)
                    self._move(Move(ranked[0].play if ranked else Play()), wrong_first=False)
            else:
                raise SimulationError(f"the game against gnubg stopped at the {state.phase.value}")
            self.truth = self._with_gnubgs(self.truth)
        self.report.finished = self.controller.state.is_over()
        self.report.seconds = time.perf_counter() - started
        self.report.table = self.table.stats.summary()
        return self.report

    def _doubles(self, state: MatchState) -> bool:
        advice = self.brain.cube(state)
        return advice.double and not advice.too_good

    def _gnubg_moves(self) -> None:
        """A person moves gnubg's checkers as lit: wrong the first time, then right."""
        state = self.truth
        assert state.dice is not None
        play = self.controller.gnubg_move
        if play is None:
            raise SimulationError("gnubg did not say its move: the demo cannot go on")
        wrong = None
        if self.wrong_gnubg and self.report.illegal_shown == 0 and play:
            target = _after(state, play)
            others = sorted(legal_plays(state.position, state.dice).positions() - {target})
            wrong = self.rng.choice(others) if others else None
        self._move(Move(play), wrong_first=wrong is not None, wrong=wrong)

    def _person_doubles(self) -> None:
        """The person turns the cube and offers it; gnubg answers; a taken cube goes to its side."""
        state = self.truth
        value = state.cube.value * 2
        self._do(f"{self.names[self.person]} doubles: the cube turned to {value} and offered", cube=value)
        events = self._move_cube(CubeSpec(value, None))
        doubled = any(isinstance(e.action, Double) for e in events)
        if not doubled and self.controller.state == state:
            self._answer("double", button=True)
        self.report.cube.count(doubled, self.controller.state != state, any(e.kind in FLAGS for e in events))
        self.truth = self._with_gnubgs(state.apply(Double()))
        if self.truth.cube.value == value and self.truth.cube.owner == self.gnubg:
            self._do(f"{self.names[self.gnubg]}'s cube goes to its side", cube=value)
            self._move_cube(CubeSpec(value, self._seat(self.gnubg)))
        if self.controller.state != self.truth:
            raise SimulationError("the referee did not follow the double: the demo cannot go on")

    def _person_answers(self, take: bool) -> None:
        """gnubg doubled: the person takes (the cube to his side) or drops (the button)."""
        state = self.truth
        value = state.cube.value * 2
        if take:
            self._do(f"{self.names[self.person]} takes and puts the cube at {value} on his side", cube=value)
            events = self._move_cube(CubeSpec(value, self._seat(self.person)))
            taken = any(isinstance(e.action, Take) for e in events)
            self.report.cube.count(taken, self.controller.state != state, any(e.kind in FLAGS for e in events))
            if self.controller.state == state:
                self._answer("take", button=True)
            self.truth = self._with_gnubgs(state.apply(Take()))
        else:
            self._do(f"{self.names[self.person]} drops", cube=value)
            self._answer("drop", button=True)
            self.truth = self._with_gnubgs(state.apply(Drop()))
        if self.controller.state != self.truth:
            raise SimulationError("the referee did not follow the answer to gnubg's double: the demo cannot go on")
