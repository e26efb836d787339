# SPDX-License-Identifier: MIT
"""The referee's pipeline from camera frames to events, store and LEDs, one frame at a time.

:class:`Table` joins the parts that already exist: the :class:`~vision.stabiliser.MotionGate`
decides whether the board is still, the :class:`~vision.reader.BoardReader` reads still frames,
the :class:`~bgboard.controller.Controller` turns readings, buttons and commands into events,
and each batch of events, stamped with its time, goes to the table's sinks
(:mod:`bgboard.events`: the console, the match store...) and then the LED panel.

With a hint engine (teach mode), the controller's ``hint`` requests are answered here, at
once and in the same thread: the engine is asked (every play for a move, the cube advice before
a roll) and its answer goes back to the controller, whose events are handled like any others.
gnubg answers a 0-ply request in about 10 ms, so the camera does not wait long. If the engine
cannot answer (gnubg missing, a time limit passed), that is said once as ``hint-unavailable``;
teach mode then stops asking by itself, refereeing goes on, and the hint button tries again.

It is synchronous and keeps no clock of its own: every input carries its time, so the referee
loop, the demo and the tests drive it the same way. Reading a frame is the expensive step
(tens of milliseconds), so a still scene is read once per still period, not once per frame.

:meth:`Table.from_config` assembles the pipeline (motion gate, controller, table, the store's
sink) the same way for ``bgboard referee``, ``bgboard replay``, the demo and the benchmark;
the set-up helpers beside it (:func:`load_reader`, :func:`open_store`, :func:`new_match`,
:func:`describe_state`) raise :class:`SetupError` naming the setting to fix.

A table may start uncalibrated (``bgboard referee --web`` before the board has a profile): it
keeps the latest frame for the calibration view and reads, judges and records nothing until
:meth:`Table.use_reader` gives it a reader; the same call swaps the reader of a table
calibrated again mid-match, which keeps its match.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Final

import numpy as np

from bgboard.config import Config
from bgboard.controller import Controller
from bgboard.errors import SetupError
from bgboard.events import Event, EventSink, Request, Sinks, StoreSink
from bgboard.store import MatchStore, StoreError
from engine.hints import HintEngine, HintError, check_ply
from engine.match import MatchState, Phase
from engine.opponent import Opponent
from hardware.panels import LedPanel
from hardware.presenter import in_tournament
from hardware.scene import Scene
from vision.reader import BoardReader
from vision.reading import BoardReading
from vision.stabiliser import GateState, MotionGate, Stabiliser


@dataclass(frozen=True, slots=True)
class Latency:
    """How long one still period took to reach the LEDs.

    :ivar still_at: time of the first still frame after motion (the frames' clock).
    :ivar shown_at: time of the frame whose processing showed the new scene (the frames' clock).
    :ivar wall: processing seconds spent on the frames from ``still_at`` to ``shown_at``
        inclusive (the table's own clock; the waiting between frames is not counted).
    """

    still_at: float
    shown_at: float
    wall: float

    @property
    def waited(self) -> float:
        """Seconds of frame time from the first still frame to the scene being shown."""
        return self.shown_at - self.still_at


@dataclass
class TableStats:
    """Counters and timings of a :class:`Table`, for benchmarks.

    :ivar frames: frames fed.
    :ivar moving: frames in which the gate saw motion.
    :ivar reads: frames read by the board reader.
    :ivar shown: scene changes (each sent to the panel, if there is one).
    :ivar feed_seconds: processing seconds of every :meth:`Table.feed`.
    :ivar read_seconds: seconds of every board reading.
    :ivar latencies: one entry per still period whose scene reached the panel.
    :ivar learnt: strips the reader first saw bare in a confirmed position (see
        :meth:`vision.reader.BoardReader.learn`).
    """

    frames: int = 0
    moving: int = 0
    reads: int = 0
    shown: int = 0
    feed_seconds: list[float] = field(default_factory=list)
    read_seconds: list[float] = field(default_factory=list)
    latencies: list[Latency] = field(default_factory=list)
    learnt: int = 0

    def summary(self) -> dict[str, float | int]:
        """A JSON-ready digest: counts, and mean and worst times in milliseconds."""

        def ms(values: list[float]) -> tuple[float, float]:
            return (1000 * sum(values) / len(values), 1000 * max(values)) if values else (0.0, 0.0)

        feed_mean, feed_max = ms(self.feed_seconds)
        read_mean, read_max = ms(self.read_seconds)
        wall_mean, wall_max = ms([x.wall for x in self.latencies])
        return {
            "frames": self.frames,
            "moving": self.moving,
            "reads": self.reads,
            "shown": self.shown,
            "learnt": self.learnt,
            "feed_ms_mean": round(feed_mean, 2),
            "feed_ms_max": round(feed_max, 2),
            "read_ms_mean": round(read_mean, 2),
            "read_ms_max": round(read_max, 2),
            "latency_ms_mean": round(wall_mean, 2),
            "latency_ms_max": round(wall_max, 2),
        }


#: Recorded actions whose still frame shows the match's position (see :meth:`Table._learn`).
LEARN_FROM = frozenset({"opening-roll", "roll", "move"})

#: What an uncalibrated table answers a button or a command with.
NOT_CALIBRATED: Final = (
    "the board is not calibrated yet: nothing is read or recorded until it is"
    " (calibrate it on the live page's calibration view, /calibrate)"
)


def reading_key(reading: BoardReading) -> tuple[object, ...]:
    """What two readings must share to count as the same board (for the stabiliser's votes)."""
    dice = tuple(sorted((d.value, d.half, d.flat) for d in reading.dice))
    cube = None if reading.cube is None else (reading.cube.value, reading.cube.owner)
    return (reading.points, reading.bar, dice, cube, reading.occluded)


class Table:
    """Frames, buttons and commands in; events out, stored and shown.

    :param reader: reads still frames; ``None``: the board is not calibrated yet, and the table
        only keeps the latest frame (:attr:`last_frame`) until :meth:`use_reader`.
    :param gate: tells moving frames from still ones (made with the reader's homography);
        ``None`` without a reader.
    :param controller: follows the match.
    :param panel: shows :meth:`Controller.scene` whenever it changes.
    :param sinks: where every event goes, in order (:mod:`bgboard.events`: the console, the
        match store's :class:`~bgboard.events.StoreSink`...); more can be added to
        :attr:`sinks` later.
    :param agree: still readings that must agree before one is passed on; 1 reads each still
        period once, more fuses several frames with a :class:`~vision.stabiliser.Stabiliser`.
    :param clock: the processing clock for :class:`TableStats` (seconds).
    :param hints: answers the controller's ``hint`` requests (teach mode, the hint
        button); ``None``: a hint asked for is said to be unavailable.
    :param hint_ply: the hint engine's search depth.
    :param opponent: plays the side the controller's ``gnubg`` names (:mod:`engine.opponent`),
        answering its ``gnubg`` requests; ``None``: people play both sides.
    :param settle: seconds of stillness for the gate :meth:`use_reader` makes when the table has
        none yet (default: the given gate's).
    :raises ValueError: ``agree`` below 1, or a bad ``hint_ply``.
    """

    def __init__(
        self,
        reader: BoardReader | None,
        gate: MotionGate | None,
        controller: Controller,
        *,
        panel: LedPanel | None = None,
        sinks: Iterable[EventSink] = (),
        agree: int = 1,
        clock: Callable[[], float] = time.perf_counter,
        hints: HintEngine | None = None,
        hint_ply: int = 0,
        opponent: Opponent | None = None,
        settle: float | None = None,
    ) -> None:
        if agree < 1:
            raise ValueError(f"agree is at least 1, not {agree!r}")
        if (reader is None) != (gate is None):
            raise ValueError("a table has a reader and a gate, or neither (not calibrated yet)")
        self.reader = reader
        self.gate = gate
        self._settle = settle if settle is not None else (gate.settle if gate is not None else 0.6)
        self._agree = agree
        self.controller = controller
        self.panel = panel
        self.sinks = Sinks(*sinks)
        self.hints = hints
        self.hint_ply = check_ply(hint_ply)
        self.opponent = opponent
        self._opponent_failed_said = False
        # After the engine failed once, teach mode's own requests are dropped (each could wait
        # out a time limit) until a hint the players ask for gets an answer again.
        self._hints_failed = False
        self._unavailable_said = False
        self.stats = TableStats()
        self._clock = clock
        self._stabiliser: Stabiliser[BoardReading] = Stabiliser(agree)
        self._shown: Scene | None = None
        # True once this still period's reading reached the controller: no more reads until
        # the gate sees motion again.
        self._passed = False
        # The still frame this period's reading came from, and the reading: what the match
        # confirms while the board stays still (a roll or move recorded at once, after the
        # hold time, or typed at the console) teaches the reader from it.
        self._evidence: tuple[np.ndarray, BoardReading] | None = None
        # The still period being timed: its first frame's time and the processing so far.
        self._period: tuple[float, float] | None = None
        self.last_gate: GateState | None = None
        self.last_reading: BoardReading | None = None
        #: The hall's tournament mode (:meth:`set_tournament`): no hints, the status light says it.
        self.tournament = False
        # The hint engine put aside while tournament mode lasts.
        self._hints_kept: HintEngine | None = None
        #: The latest still frame whose reading reached the controller, and that reading (kept
        #: through motion: what the live page's camera view shows).
        self.last_still: tuple[np.ndarray, BoardReading] | None = None
        #: The latest frame fed, still or not (what the calibration view calibrates on).
        self.last_frame: np.ndarray | None = None

    @property
    def calibrated(self) -> bool:
        """Whether the table reads the board (it has a reader)."""
        return self.reader is not None

    def use_reader(self, reader: BoardReader) -> None:
        """Read the board with ``reader`` from the next frame on: the first calibration of an
        uncalibrated table, or a new one mid-match (the match, the store and the sinks are kept).

        Everything that came from the old reader is dropped: the gate is made afresh with the new
        homography (so nothing is judged before the board has been still under it), and the
        still frame, its reading and the votes towards the next one are forgotten.
        """
        settle = self.gate.settle if self.gate is not None else self._settle
        # The still frame first: the live page reads it beside the reader, never the other way.
        self.last_still = None
        self.last_reading = None
        self._evidence = None
        self._passed = False
        self._period = None
        self._stabiliser = Stabiliser(self._agree)
        self.gate = MotionGate(reader.homography, settle=settle)
        self.reader = reader

    @classmethod
    def from_config(
        cls,
        config: Config,
        reader: BoardReader | None = None,
        *,
        store: MatchStore | None = None,
        match_id: int | None = None,
        state: MatchState | None = None,
        names: tuple[str, str] | None = None,
        panel: LedPanel | None = None,
        sinks: Iterable[EventSink] = (),
        hints: HintEngine | None = None,
        opponent: Opponent | None = None,
        profile_name: str = "camera.profile",
        calibrated: bool = True,
    ) -> Table:
        """The whole pipeline as ``config`` sets it: board reader, motion gate, controller, table.

        - The reader is ``reader``, else the one for ``config.camera.profile``
          (:func:`load_reader`).
        - The gate and the controller wait ``config.camera.settle`` seconds of stillness; the
          controller follows ``config.match`` (mode, the player at the bottom, hint depth).
        - Teach mode is on exactly when there is a hint engine to ask (``hints``): whoever
          runs the table starts one when ``config.match.teach`` asks for it.
        - ``opponent`` (gnubg, :class:`~engine.opponent.GnubgOpponent`) plays its side.
        - The match is ``state``, else the store's match ``match_id`` as it stands; the players'
          names are ``names``, else the store's, else ``config.match.players``.
        - The events go to ``sinks`` in order, then, with a store, to a
          :class:`~bgboard.events.StoreSink` recording them under ``match_id``.

        :param profile_name: how errors name the profile's setting (``--profile`` when given so).
        :param calibrated: ``False``: no reader, none loaded; the table waits for
            :meth:`use_reader` (the board is calibrated on the live page).
        :raises SetupError: no reader given, and the profile cannot be used.
        :raises ValueError: a store without a match id, or neither a store nor a state.
        """
        if store is not None:
            if match_id is None:
                raise ValueError("a store needs the match id to record under")
            state = store.state(match_id) if state is None else state
            names = store.summary(match_id).players if names is None else names
        if state is None:
            raise ValueError("the table needs the match: a state, or a store and its match id")
        if reader is None and calibrated:
            reader = load_reader(config, profile_name)
        match = config.match
        controller = Controller(
            state,
            mode=match.mode,
            settle=config.camera.settle,
            bottom_player=match.bottom_player,
            names=names if names is not None else match.players,
            teach=hints is not None,
            gnubg=None if opponent is None else opponent.player,
        )
        everywhere = list(sinks)
        if store is not None:
            assert match_id is not None
            everywhere.append(StoreSink(store, match_id))
        return cls(
            reader,
            None if reader is None else MotionGate(reader.homography, settle=config.camera.settle),
            controller,
            panel=panel,
            sinks=everywhere,
            hints=hints,
            hint_ply=match.hint_ply,
            opponent=opponent,
            settle=config.camera.settle,
        )

    def feed(self, image: np.ndarray, t: float) -> list[Event]:
        """Process one camera frame taken at ``t`` (seconds); returns the events it caused."""
        start = self._clock()
        self.stats.frames += 1
        self.last_frame = image
        if self.gate is None:
            return []  # not calibrated: the frame is only kept for the calibration view
        gate = self.gate.feed(image, t)
        self.last_gate = gate
        events: list[Event] = []
        if gate.moving:
            self.stats.moving += 1
            self._passed = False
            self._evidence = None
            self._period = None
            self._stabiliser.feed(None, None, gate)
            events += self.controller.on_motion(t)
        elif gate.still:
            if not self._passed:
                reading = self._read(image)
                fused = self._stabiliser.feed(reading, reading_key(reading), gate)
                if fused is not None:
                    self._passed = True
                    self._evidence = (image, fused)
                    self.last_still = (image, fused)
                    now = self.controller.on_reading(fused, t)
                    events += now
                    self._learn(now)
            # Ticks only once this period's reading is in: a tick before it would let the
            # controller judge the board it saw before the motion.
            if self._passed:
                ticked = self.controller.on_tick(t)
                events += ticked
                self._learn(ticked)
        if not gate.moving and self._period is None and gate.still_since is not None:
            self._period = (gate.still_since, 0.0)
        events = self._answer_hints(events, t)
        events, shown = self._handle(events, t)
        elapsed = self._clock() - start
        self.stats.feed_seconds.append(elapsed)
        if self._period is not None:
            still_at, wall = self._period
            self._period = (still_at, wall + elapsed)
            if shown:
                self.stats.latencies.append(Latency(still_at, t, wall + elapsed))
        return events

    def button(self, name: str, t: float) -> list[Event]:
        """A button press (``done``, ``undo``, ``double``...) at ``t``."""
        if self.reader is None:
            return self._not_calibrated(t)
        events = self._answer_hints(self.controller.on_button(name, t), t)
        return self._handle(events, t)[0]

    def command(self, text: str, t: float) -> list[Event]:
        """A line typed at the console at ``t``."""
        if self.reader is None:
            return self._not_calibrated(t)
        events = self._answer_hints(self.controller.on_command(text, t), t)
        self._learn(events)
        return self._handle(events, t)[0]

    def _not_calibrated(self, t: float) -> list[Event]:
        """Refuse a button or a command: nothing is recorded before the board is calibrated."""
        return self._handle([Event("not-calibrated", NOT_CALIBRATED)], t)[0]

    def say(self, event: Event, t: float | None = None) -> None:
        """Send ``event`` to the sinks with the table's own: news from whoever runs the table
        (the referee's camera and LEDs, the demo's players), stamped with ``t`` if given."""
        self.sinks(event.at(t))

    def set_tournament(self, on: bool, t: float | None = None) -> list[Event]:
        """The hall's tournament mode, on or off: no hints while it lasts (tournament rules
        forbid electronic aids), the status light says it, and the hints come back after.
        Returns what was said (nothing when the mode was already so)."""
        if on == self.tournament:
            return []
        self.tournament = on
        if on:
            self._hints_kept, self.hints = self.hints, None
            self.controller.teach = False
            event = Event("tournament", "tournament mode (the hall's order): hints are off", {"tournament": True})
        else:
            self.hints, self._hints_kept = self._hints_kept, None
            self.controller.teach = self.hints is not None
            event = Event("tournament", "tournament mode is over (the hall's order)", {"tournament": False})
        self.say(event, t)
        self.show()
        return [event]

    def show(self) -> bool:
        """Show the controller's scene if it differs from the one showing; whether it changed.

        Without a panel the change is still noted, so the latencies can be measured headless.
        """
        scene = self.controller.scene()
        if self.tournament:
            scene = in_tournament(scene)
        if scene == self._shown:
            return False
        if self.panel is not None:
            self.panel.show(scene)
        self._shown = scene
        self.stats.shown += 1
        return True

    def _read(self, image: np.ndarray) -> BoardReading:
        assert self.reader is not None, "fed only once calibrated"
        start = self._clock()
        reading = self.reader.read(image)
        self.stats.read_seconds.append(self._clock() - start)
        self.stats.reads += 1
        self.last_reading = reading
        return reading

    def _learn(self, events: list[Event]) -> None:
        """Teach the reader this board from the still frame in view, when ``events`` record
        what it shows: a roll or a move (not a game's end, after which the match is already at
        the next game's start while the board still shows the last)."""
        if self._evidence is None or self.reader is None:
            return
        kinds = {event.kind for event in events if event.action is not None}
        if not kinds & LEARN_FROM or any(event.kind == "game-over" for event in events):
            return
        image, reading = self._evidence
        state = self.controller.state
        if state.on_roll is None:
            return
        points, bar, _ = state.position.to_absolute(self.controller.seat(state.on_roll))
        self.stats.learnt += self.reader.learn(image, points, bar, reading.dice)

    def start(self, t: float) -> list[Event]:
        """Ask gnubg for what it must do as the match stands (a resumed match where it is to
        act), deliver the events and show the scene."""
        return self._handle(self._answer_hints(self.controller.ask_gnubg(), t), t)[0]

    def _answer_hints(self, events: list[Event], t: float) -> list[Event]:
        """``events``, then what answering the controller's requests caused (which may ask
        again: gnubg's drop ends a game, its double waits for the other side)."""
        for _ in range(8):
            requests = self.controller.take_requests()
            if not requests:
                return events
            for request in requests:
                if request.kind == "hint":
                    events = events + self._answer_hint(request, t)
                else:
                    events = events + self._answer_gnubg(request, t)
        self.controller.take_requests()
        return events

    def _answer_gnubg(self, wanted: Request, t: float) -> list[Event]:
        """Ask the opponent what ``wanted`` asks and give the answer to the controller."""
        gnubgid = str(wanted.fields.get("gnubgid"))
        state = self.controller.state
        if state.gnubg_id() != gnubgid:
            return []
        if self.opponent is None:
            return self._gnubg_failed("no gnubg to play this side")
        what = wanted.fields.get("wanted")
        controller = self.controller
        try:
            if what == "take":
                events = controller.on_gnubg_take(gnubgid, self.opponent.answers_double(state), t)
            elif what == "resign":
                events = controller.on_gnubg_resign(gnubgid, self.opponent.accepts(state), t)
            else:
                # Its move, or its decision before a roll: either may be an offer to resign.
                decide = self.opponent.move if what == "move" else self.opponent.before_roll
                decision = decide(state, may_resign=bool(wanted.fields.get("may_resign", True)))
                if decision.resign:
                    events = controller.on_gnubg_resigns(gnubgid, decision.resign, t)
                elif decision.play is not None:
                    events = controller.on_gnubg_move(gnubgid, decision.play, t)
                else:
                    events = controller.on_gnubg_double(gnubgid, decision.double, t)
        except HintError as exc:
            return self._gnubg_failed(str(exc))
        self._opponent_failed_said = False
        controller.gnubg_answering = True
        return events

    def _gnubg_failed(self, reason: str) -> list[Event]:
        """gnubg gave no answer: the players act for it (said once until it answers again)."""
        self.controller.gnubg_answering = False
        if self._opponent_failed_said:
            return []
        self._opponent_failed_said = True
        text = f"gnubg gave no answer ({reason}): play its side for it, or restart"
        return [Event("gnubg-unavailable", text, {"reason": reason})]

    def _answer_hint(self, wanted: Request, t: float) -> list[Event]:
        """Ask the hint engine what ``wanted`` asks and give the answer to the controller."""
        asked = bool(wanted.fields.get("asked"))
        gnubgid = str(wanted.fields.get("gnubgid"))
        state = self.controller.state
        if state.gnubg_id() != gnubgid:
            return []  # the match moved on in the same batch: the answer would be ignored
        if self.hints is None:
            return self._unavailable("no hint engine: hints are given in teach mode (--teach)", asked)
        if self._hints_failed and not asked:
            return []
        try:
            if state.phase is Phase.MOVE:
                # Every play, not the best few: the move played must be found in the list.
                plays = self.hints.plays(state, ply=self.hint_ply, n=max(len(state.legal_plays()), 1))
                events = self.controller.on_hint(gnubgid, plays, t)
            else:
                advice = self.hints.cube(state, ply=self.hint_ply)
                events = self.controller.on_cube_hint(gnubgid, advice, t)
        except HintError as exc:
            self._hints_failed = True
            return self._unavailable(str(exc), asked)
        self._hints_failed = False
        self._unavailable_said = False
        return events

    def _unavailable(self, reason: str, asked: bool) -> list[Event]:
        """Say that no hint can be given: once, or whenever the players ask for one."""
        if self._unavailable_said and not asked:
            return []
        self._unavailable_said = True
        return [Event("hint-unavailable", f"no hint: {reason}; refereeing goes on", {"reason": reason})]

    def _handle(self, events: list[Event], t: float) -> tuple[list[Event], bool]:
        """Stamp the events with ``t`` and deliver them, then show the scene: the sinks (the
        store among them) first, so a store failure never leaves the LEDs ahead of the record.

        Returns the stamped events and whether the scene changed.
        """
        stamped = [event.at(t) for event in events]
        for event in stamped:
            self.sinks(event)
        return stamped, self.show()


# -- setting up ------------------------------------------------------------------------------


def camera_reason(url: str, exc: BaseException) -> str:
    """Why a camera failed, without the address the frame sources put in front."""
    text = str(exc).strip() or type(exc).__name__
    return text[len(url) + 2 :] if text.startswith(f"{url}: ") else text


def load_reader(config: Config, name: str = "camera.profile") -> BoardReader:
    """The board reader for ``config``'s calibration profile.

    :param name: how errors name the setting (the key, or the flag that gave it).
    :raises SetupError: no profile is configured, or it cannot be read.
    """
    from vision.profile import Profile, ProfileError

    path = config.camera.profile
    if path is None:
        raise SetupError(
            "no calibration profile: set camera.profile in the config file ([camera] profile ="
            ' "board.toml"), BGBOARD_CAMERA_PROFILE, or --profile FILE'
            " (make one with bgboard vision calibrate)"
        )
    try:
        return BoardReader(Profile.load(path))
    except (ProfileError, OSError) as exc:
        raise SetupError(f"{name}: cannot use the calibration profile: {exc}") from None


def open_store(config: Config, name: str = "store.path") -> MatchStore:
    """The match store ``config`` names.

    :param name: how errors name the setting (the key, or the flag that gave it).
    :raises SetupError: it cannot be opened.
    """
    path = config.store.resolved_path()
    try:
        return MatchStore(path)
    except StoreError as exc:
        raise SetupError(f"{name}: {exc}") from None


def new_match(store: MatchStore, config: Config) -> int:
    """Start the match ``config.match`` describes in ``store``; its id. The player at the
    bottom is kept as the match's ``PlayerAtBottom`` tag (``"1"`` or ``"2"``).

    :raises SetupError: the players or the length are not usable.
    """
    match = config.match
    # Who sat at the bottom of the camera's view: the match browser replays from that seat.
    tags = {"PlayerAtBottom": str(match.player_at_bottom)}
    try:
        return store.start_match(match.players, match.length, match.options(), tags)
    except StoreError as exc:
        raise SetupError(f"match: {exc}") from None


_DOING: Final = {
    Phase.ROLL: "to roll or double",
    Phase.MOVE: "to move",
    Phase.DOUBLED: "has doubled",
    Phase.RESIGNED: "offers to resign",
}


def describe_state(store: MatchStore, match_id: int) -> str:
    """Where a match stands, in a few words: players, length, score, whose turn."""
    summary = store.summary(match_id)
    state = store.state(match_id)
    names = summary.players
    length = f"{summary.length}-point match" if summary.length else "money session"
    words = f"match {match_id}, {names[0]} vs {names[1]}, {length}"
    words += f", score {state.score[0]}-{state.score[1]}"
    if state.cube.value > 1:
        words += f", cube {state.cube.value}"
    doing = _DOING.get(state.phase)
    if doing is not None and state.on_roll is not None:
        words += f", {names[state.on_roll]} {doing}"
    elif state.phase is Phase.OPENING or state.phase is Phase.GAME_OVER:
        words += ", waiting for the opening roll"
    return words
