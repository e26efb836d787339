# SPDX-License-Identifier: MIT
"""The referee at the table: camera, buttons and keyboard in, one match out (``bgboard referee``).

:class:`Referee` runs a :class:`~bgboard.table.Table` for one match until the match ends or it
is told to stop. The table is not thread-safe, so the referee owns it from one thread: every
input arrives through one queue and is handled in order by :meth:`Referee.run`'s loop.

- The camera (:class:`~bgboard.camera.CameraFeed`, its own thread, reopened when it stops) is
  opened, and its first frame read, before anything is written to the store: a camera that
  cannot be opened or sends nothing within ``first_frame`` seconds is a set-up error.
  Stopping joins the camera's threads and closes the source before :meth:`Referee.run`
  returns (see :mod:`bgboard.camera`).
- Button presses (gpiozero's thread) and keyboard lines (a thread reading stdin) are queued.
- A ticker queues a tick every 50 ms: a 74HC595 panel blinks only when refreshed, and the LED
  controller's link state is polled to say when it drops and comes back.

With the live page (``web``) and a profile file that does not exist yet, the referee starts
anyway with the board uncalibrated: camera, store and page as usual, but nothing is read or
recorded until the page's calibration view (``/calibrate``, :mod:`bgboard.web.calibration_view`)
has calibrated the board and written the profile; the console and the page say so. The same
view calibrates a board again mid-match: the loop swaps the table's reader, the match goes on.

In teach mode (``match.teach``) the referee starts one :class:`~engine.hints.GnubgHints` (the
program named by ``$BGBOARD_GNUBG``, else gnubg on the path) for the table to ask, and stops
it at the end. The table asks it from the referee's own thread: a 0-ply hint takes about
10 ms, less than a camera frame.

Everything the players are told is an :class:`~bgboard.events.Event` sent to the table's
sinks (:mod:`bgboard.events`): the console, one line per event in players' words with the
time or one JSON object per line, and the match store. The referee's own news (started,
camera lost, LEDs back, stopped) go the same way, so every output has one shape. The table
itself is built by :meth:`~bgboard.table.Table.from_config`, with the set-up helpers of
:mod:`bgboard.table`.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final, TextIO

from bgboard.camera import BACKOFF, STALL, STOP_WAIT, CameraFeed, SourceFactory, is_recording, left_behind
from bgboard.config import Config
from bgboard.errors import BindError
from bgboard.events import Event, EventKind, console_sink
from bgboard.session import Calibration, SessionOptions, TableSession
from bgboard.store import MatchStore, StoreError, held_by_one_table
from bgboard.table import (
    SetupError,
    Table,
    describe_state,
    load_reader,
    new_match,
    open_store,
)
from engine.match import Phase
from engine.opponent import GnubgOpponent
from hardware.layout import LedLayout
from hardware.panels import DimmedPanel, ManagedPanel
from vision.frames import CameraError, Frame, is_live, open_source, source_kind
from vision.profile import ProfileError, check_output
from vision.reader import BoardReader

log = logging.getLogger(__name__)

#: Seconds a camera has, at the start, to open and send its first frame.
FIRST_FRAME: Final = 10.0
#: Seconds between ticks (a 74HC595 panel's blinking wants about 50 ms).
TICK: Final = 0.05
#: Seconds at least between two writes of the profile with what the reader learnt in play.
SAVE_LEARNT_EVERY: Final = 30.0
#: Seconds gnubg may take over one hint at the table before it is given up (and restarted):
#: the camera waits meanwhile, and a 2-ply hint takes well under a second.
HINT_TIMEOUT: Final = 5.0


# -- the queue's messages -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _FrameReady:
    """A frame waits in the referee's slot."""


@dataclass(frozen=True, slots=True)
class _Button:
    name: str


@dataclass(frozen=True, slots=True)
class _Line:
    text: str


@dataclass(frozen=True, slots=True)
class _Tick:
    pass


@dataclass(frozen=True, slots=True)
class _Say:
    event: Event


@dataclass(frozen=True, slots=True)
class _End:
    why: str


_Message = _FrameReady | _Button | _Line | _Tick | _Say | _End


# -- the referee ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RefereeOptions:
    """How a referee runs, and the devices it is given instead of opening them (tests give
    fakes addressed the same way).

    :param json_lines: print events as JSON Lines.
    :param resume: carry on with the last unfinished match in the store, at its exact state.
    :param stdin: a stream of keyboard commands, one per line (``None``: no keyboard).
    :param given: the settings given as command-line flags, config key to flag
        (``{"leds.panel": "--leds"}``): errors name the flag, and a resumed match whose players
        or length differ from the flags' says that it keeps its own.
    :param stop: set while the camera's first frame is awaited, gives up (:class:`StoppedError`).
    :param source_factory: opens the camera.
    :param reader: the board reader (default: from ``config.camera.profile``).
    :param panel: the LED panel (default: opened from ``config.leds``); not closed by the
        referee when given.
    :param store: the match store (default: opened from ``config.store``); not closed by the
        referee when given.
    :param buttons: opens the button panel from the pins and a callback (default
        :class:`hardware.buttons.ButtonPanel`); used only when pins are configured.
    :param stall: seconds without a frame before the camera is reopened.
    :param backoff: the first and longest wait before reopening the camera.
    :param live: drop a frame the table has not taken yet when a newer one comes (a camera:
        never judge an old frame); ``False`` hands every frame over (files, tests). Default:
        from the source's address (:func:`vision.frames.is_live`).
    :param end_with_source: stop when the source ends instead of reopening it. Default: for a
        recording (a video file, a folder of photos), which is played once: played again from
        its start, its old frames would be judged as the board now (``bgboard replay`` is the
        command for recorded frames). A camera, a single photo (a still camera) and a test's
        fake source are reopened.
    :param clock: monotonic seconds (the gap across a camera reopen).
    :param first_frame: seconds the camera has to open and send its first frame.
    """

    json_lines: bool = False
    resume: bool = False
    stdin: TextIO | None = None
    given: Mapping[str, str] = field(default_factory=dict)
    stop: threading.Event | None = None
    source_factory: SourceFactory = open_source
    reader: BoardReader | None = None
    panel: ManagedPanel | None = None
    store: MatchStore | None = None
    buttons: Callable[[dict[str, Any], Callable[[str], None]], Any] | None = None
    stall: float = STALL
    backoff: tuple[float, float] = BACKOFF
    live: bool | None = None
    end_with_source: bool | None = None
    clock: Callable[[], float] = time.monotonic
    first_frame: float = FIRST_FRAME


class Referee:
    """Referee and record one match at the table (``bgboard referee``, ``bgboard play``).

    Everything that can fail at the start (the camera's address, the profile, the store, the
    LEDs, the buttons, the live page's address) is checked by the constructor, which raises
    :class:`SetupError`; then :meth:`run` plays the match. The store is touched last, once the
    camera has sent its first frame: a referee that cannot start records nothing.

    :param config: the settings (camera source and profile, LEDs, buttons, match, store).
    :param out: the console stream.
    :param options: how it runs, and devices given rather than opened (:class:`RefereeOptions`).
    :param session: what the table's session attaches (:class:`~bgboard.session.SessionOptions`):
        teach mode comes from ``config.match.teach``; with ``against`` GNU Backgammon plays side
        1 or 2 at that level, named ``gnubg`` in a new match (a resumed match keeps the side of
        its player named ``gnubg``); the live page's calibration view writes
        ``config.camera.profile``, and a profile file that does not exist yet is then no error:
        the referee waits, reading nothing, until the board is calibrated there.
    :raises SetupError: a missing or unusable setting, naming the config key (or the flag).
    """

    def __init__(
        self,
        config: Config,
        *,
        out: TextIO,
        options: RefereeOptions = RefereeOptions(),
        session: SessionOptions | None = None,
    ) -> None:
        source = config.camera.source
        if not source:
            raise SetupError(
                'no camera: set camera.source in the config file ([camera] source = "picamera2:"),'
                " BGBOARD_CAMERA, or --camera URL (picamera2:, v4l2:///dev/video0, video:FILE, file:GLOB)"
            )
        session = replace(session or SessionOptions(), teach=config.match.teach, hint_timeout=HINT_TIMEOUT)
        web = session.page is not None
        self.config = config
        self.source_url = source
        self._given = dict(options.given)
        self._settings_kept: str | None = None
        #: Where the events are printed: text in players' words, or JSON Lines.
        self.console = console_sink(out, json_lines=options.json_lines)
        self.resume = options.resume
        self.stdin = options.stdin
        self.clock = clock = options.clock
        self._queue: queue.SimpleQueue[_Message] = queue.SimpleQueue()
        self._inner_stop = threading.Event()
        self._live = is_live(source) if options.live is None else options.live
        self._last_t: float | None = None
        #: The table's session: gnubg, the live page, the publisher, and one stack that closes
        #: them with the camera, the LEDs, the buttons and the store.
        self.session = TableSession(session, self.console, now=lambda: self._last_t)
        self.camera = CameraFeed(
            source,
            options.source_factory,
            self._deliver,
            self._say_later,
            stall=options.stall,
            backoff=options.backoff,
            end_with_source=is_recording(source) if options.end_with_source is None else options.end_with_source,
            on_end=lambda: self._queue.put(_End(f"the recording {source} ended")),
            clock=clock,
        )
        # A profile the referee loads itself is written back with what the reader learns of the
        # board in play (see BoardReader.learn), so the next match starts surer, and with the
        # corners of a board that moved (see BoardReader.read).
        reader = options.reader
        self._profile_path = config.camera.profile if reader is None else None
        if reader is None:
            reader = self._load_reader(config, web)
        self._saved_learnt = (0, 0)
        self._saved_at = clock()
        try:
            # The devices first, the camera's first frame next: a match is started in the store
            # only once everything else works.
            self._open_devices(options, reader)
            state_words = self._start_match(options, reader)
        except BaseException:
            self.session.close()
            raise
        self._state_words = state_words
        # The slot holding the newest frame the table has not taken yet, and its source's number.
        self._slot: tuple[Frame, int] | None = None
        self._slot_lock = threading.Condition()
        self.dropped = 0
        # The table's clock: the frames' times, kept increasing across camera reopens.
        self._generation = 0
        self._offset = 0.0
        self._last_wall = 0.0
        self._link_up: bool | None = None
        self._tick_pending = threading.Event()
        self.ended: str | None = None

    # -- setting up -------------------------------------------------------------------------

    def _open_devices(self, options: RefereeOptions, reader: BoardReader | None) -> None:
        """The LEDs, the buttons and the camera, each closed by the session's stack; the
        camera's first frame read and checked against the profile.

        :raises SetupError: one of them cannot be used.
        """
        stack, source = self.session.stack, self.source_url
        panel = options.panel if options.panel is not None else self._open_panel()
        self.panel = DimmedPanel(panel, self.config.leds.brightness)
        stack.callback(self._blank_panel, close=options.panel is None)
        pins = self.config.buttons.as_dict()
        if pins:
            buttons = self._open_buttons(pins, options.buttons)
            stack.callback(_close_quietly, buttons, "the buttons")
        stack.callback(self.camera.discard)
        try:
            self.camera.open(options.first_frame, options.stop)
        except CameraError as exc:
            usb = is_live(source) and source_kind(source) != "picamera2"
            hint = " (bgboard devices lists the cameras)" if usb else ""
            raise SetupError(f"cannot open the camera {source}: {exc}{hint}") from None
        try:
            # A frame of another size is another camera, or another resolution: refused
            # now, before a match is started, rather than at the first reading.
            if reader is not None:
                reader.profile.check_frame(self.camera.first_image(), f"the camera {source}'s frame")
        except ProfileError as exc:
            raise SetupError(str(exc)) from None

    def _start_match(self, options: RefereeOptions, reader: BoardReader | None) -> str:
        """The store, gnubg, the match (new or resumed) and the table, with the session's
        attachments; returns the match's state in words.

        :raises SetupError: the store, the match or the live page's address cannot be used.
        """
        session, against = self.session, self.session.options.against
        if options.store is None:
            self.store = session.stack.enter_context(open_store(self.config, self._name("store.path")))
        else:
            self.store = options.store
        if str(self.store.path) != ":memory:":
            try:
                session.stack.enter_context(held_by_one_table(Path(self.store.path)))
            except StoreError as exc:
                raise SetupError(f"{self._name('store.path')}: {exc}") from None
        session.start_gnubg()
        try:
            # Before the match is begun: a page that cannot listen leaves no empty match behind.
            session.check()
        except BindError as exc:
            raise SetupError(f"--web: {exc}") from None
        if against is not None:
            self.config = self._with_gnubg_named(self.config, against[1])
        self.match_id, state_words = self._match()
        opponent = None
        if against is not None:
            assert session.gnubg is not None
            players = self.store.summary(self.match_id).players
            side = players.index("gnubg") if "gnubg" in players else against[1] - 1
            opponent = GnubgOpponent(session.gnubg, side, against[0])
        self.table = Table.from_config(
            self.config,
            reader,
            store=self.store,
            match_id=self.match_id,
            panel=self.panel,
            sinks=[self.console],
            hints=session.hints,
            opponent=opponent,
            calibrated=reader is not None,
        )
        if opponent is not None:
            level = opponent.level
            text = f"{players[opponent.player]} plays side {opponent.player + 1} at level {level}"
            self.table.say(Event("gnubg", text, {"level": level.name, "side": opponent.player + 1}))
        profile = self.config.camera.profile
        session.profile = None if profile is None else Path(profile)
        session.on_calibrated = self._calibrated
        try:
            session.attach(self.table, self.store, self.match_id)
        except BindError as exc:
            raise SetupError(f"--web: {exc}") from None
        return state_words

    def _name(self, key: str) -> str:
        """How to name the setting ``key`` in an error: the flag that gave it, else the key."""
        return self._given.get(key, key)

    def _load_reader(self, config: Config, web: bool) -> BoardReader | None:
        """The reader for the configured profile; ``None`` when the file does not exist yet and
        the live page can calibrate the board (``web``).

        :raises SetupError: no profile configured, a missing one without the page, or one that
            cannot be used (a broken file stays an error, page or not).
        """
        name = self._name("camera.profile")
        path = config.camera.profile
        if path is None:
            try:
                return load_reader(config, name)
            except SetupError as exc:
                if not web:
                    raise
                raise SetupError(
                    f"{exc}; with --web, name the file to write (--profile board.toml): the live page's"
                    " calibration view calibrates the board and writes it"
                ) from None
        if not Path(path).exists():
            if web:
                try:
                    # Said now, not once the board has been calibrated for nothing.
                    check_output(path)
                except ProfileError as exc:
                    raise SetupError(f"{name}: the calibration view could not write the profile: {exc}") from None
                return None
            raise SetupError(
                f"{name}: {path}: no such profile: make one with bgboard vision calibrate PHOTO --markers -o {path},"
                " or start with --web HOST:PORT and calibrate the board on the live page"
            )
        return load_reader(config, name)

    @staticmethod
    def _with_gnubg_named(config: Config, side: int) -> Config:
        """``config`` with gnubg's side's player named ``gnubg`` (for a new match)."""
        players = list(config.match.players)
        players[side - 1] = "gnubg"
        if players[2 - side] == "gnubg":
            players[2 - side] = "player"
        return replace(config, match=replace(config.match, players=(players[0], players[1])))

    def _match(self) -> tuple[int, str]:
        if not self.resume:
            match_id = new_match(self.store, self.config)
            return match_id, describe_state(self.store, match_id)
        summary = self.store.last_match(unfinished=True)
        if summary is None:
            # Nothing unfinished: begin the next match, as the boot service must after the last
            # one ended or on a fresh install (a refusal would only make it restart forever).
            self.resume = False
            match_id = new_match(self.store, self.config)
            return match_id, describe_state(self.store, match_id) + " (nothing unfinished to resume)"
        try:
            self.store.state(summary.id)
        except StoreError as exc:
            raise SetupError(f"cannot resume match {summary.id}: {exc}") from None
        self._settings_kept = self._kept_words(summary.id, tuple(summary.players), summary.length)
        return summary.id, describe_state(self.store, summary.id)

    def _kept_words(self, match_id: int, players: tuple[str, ...], length: int) -> str | None:
        """What to say when flags asked for other players or another length than the resumed match's."""
        match = self.config.match
        asked = []
        if "match.players" in self._given and tuple(match.players) != players:
            asked.append(f"{self._given['match.players']} {','.join(match.players)}")
        if "match.length" in self._given and match.length != length:
            asked.append(f"{self._given['match.length']} {match.length}")
        if not asked:
            return None
        kind = f"{length}-point match" if length else "money session"
        return (
            f"{' and '.join(asked)} ignored: resumed match {match_id} keeps its own settings"
            f" ({players[0]} vs {players[1]}, {kind}); leave out --resume for a new match"
        )

    def _calibrated(self, done: Calibration) -> list[Event]:
        """From the loop (the page's inbox): read the board with the profile the calibration
        view wrote, from the next frame on; the match goes on."""
        first = not self.table.calibrated
        reader = BoardReader(done.profile)
        self.table.use_reader(reader)
        # What the new reader learns in play is written back to the file it came from.
        self._profile_path = done.path
        self._saved_learnt = (reader.learnt, reader.followed)
        self._saved_at = self.clock()
        if first:
            text = f"calibrated: {done.text}; the board is read from now on"
        else:
            text = f"calibrated again: {done.text}; match {self.match_id} goes on"
        event = Event("calibrated", text, {**done.to_json(), "again": not first}).at(self._last_t)
        self.table.say(event)
        return [event]

    def _say_calibrate(self) -> None:
        """Say that the board waits for its calibration, and where the page calibrates it."""
        path = self.config.camera.profile
        url = self.session.calibrate_url
        text = (
            f"the board is not calibrated yet ({path} does not exist): nothing is read or recorded until it is;"
            f" calibrate it at {url} (the page asks for the table's token)"
        )
        self._say("calibrate", text, url=url, profile=str(path))

    def _open_panel(self) -> ManagedPanel:
        from hardware.layout import LayoutError
        from hardware.panels import PanelError, open_panel

        leds = self.config.leds
        try:
            layout = LedLayout.from_file_or_name(leds.layout)
        except LayoutError as exc:
            raise SetupError(f"leds.layout: {exc}") from None
        try:
            return open_panel(leds.panel, layout)
        except PanelError as exc:
            raise SetupError(f"{self._name('leds.panel')}: cannot open the LEDs {leds.panel!r}: {exc}") from None

    def _open_buttons(
        self, pins: dict[str, Any], factory: Callable[[dict[str, Any], Callable[[str], None]], Any] | None
    ) -> Any:
        def pressed(name: str) -> None:
            self._queue.put(_Button(name))

        if factory is not None:
            return factory(pins, pressed)
        from hardware.buttons import ButtonPanel
        from hardware.panels import PanelError

        try:
            return ButtonPanel(pins, when_pressed=pressed)
        except PanelError as exc:
            raise SetupError(f"buttons.pins: cannot use the buttons: {exc}") from None

    # -- the threads' ends of the queue ----------------------------------------------------

    def _deliver(self, frame: Frame, generation: int) -> None:
        """From the camera thread: put ``frame`` in the slot and wake the loop."""
        with self._slot_lock:
            if not self._live:
                # A file or a test: every frame is judged, so wait for the table to take the last.
                while self._slot is not None and not self._inner_stop.is_set():
                    self._slot_lock.wait(0.1)
            elif self._slot is not None:
                # A camera: a frame the table had no time for is replaced by the newer one.
                self.dropped += 1
            wake = self._slot is None
            self._slot = (frame, generation)
        if wake:
            self._queue.put(_FrameReady())

    def _take_frame(self) -> tuple[Frame, int] | None:
        with self._slot_lock:
            taken, self._slot = self._slot, None
            self._slot_lock.notify_all()
        return taken

    def _say(self, kind: EventKind, text: str, **fields: Any) -> None:
        """From the loop: send the referee's own news down the table's stream, at the table's time."""
        self.table.say(Event(kind, text, fields), self._last_t)

    def _say_later(self, kind: EventKind, text: str, **fields: Any) -> None:
        """From another thread: print an event in its turn, from the loop."""
        self._queue.put(_Say(Event(kind, text, fields)))

    def _read_keyboard(self, stream: TextIO) -> None:
        try:
            for line in stream:
                if self._inner_stop.is_set():
                    return
                if line.strip():
                    self._queue.put(_Line(line.rstrip("\n")))
        except (OSError, ValueError) as exc:  # a closed stream
            log.info("the keyboard stopped: %s", exc)

    def _tick(self) -> None:
        while not self._inner_stop.wait(TICK):
            # One tick waits at a time: a busy loop catches up once, not once per missed tick.
            if not self._tick_pending.is_set():
                self._tick_pending.set()
                self._queue.put(_Tick())

    # -- the loop ---------------------------------------------------------------------------

    def run(self, stop: threading.Event | None = None) -> int:
        """Referee until the match ends, the recording ends (``end_with_source``) or ``stop`` is set.

        The store is closed (when the referee opened it) and the LEDs blanked on the way out.
        Returns the exit status (0).
        """
        stop = stop or threading.Event()
        threads = [
            threading.Thread(target=self.camera.run, args=(self._inner_stop,), name="camera", daemon=True),
            threading.Thread(target=self._tick, name="ticker", daemon=True),
        ]
        if self.stdin is not None:
            threads.append(
                threading.Thread(target=self._read_keyboard, args=(self.stdin,), name="keyboard", daemon=True)
            )
        kind = "resumed" if self.resume else "started"
        self._say(kind, f"{kind} {self._state_words}", match=self.match_id)
        if self._settings_kept is not None:
            self._say("settings-kept", self._settings_kept, match=self.match_id)
        if not self.table.calibrated:
            self._say_calibrate()
        self.session.start()
        try:
            self.table.show()
            for thread in threads:
                thread.start()
            while not stop.is_set() and self.ended is None:
                try:
                    message = self._queue.get(timeout=0.1)
                except queue.Empty:
                    continue
                self._handle(message)
        finally:
            self._inner_stop.set()
            with self._slot_lock:
                self._slot_lock.notify_all()
            # The camera's threads are joined and its source closed before the referee returns:
            # a thread still inside OpenCV when Python exits aborts the process. The camera
            # thread's own waits are bounded; only a driver that hangs (in a read, or opening
            # the camera again) keeps it, and it is then left behind (stuck_threads).
            for thread in threads[:2]:
                if thread.ident is not None:
                    thread.join(4 * STOP_WAIT)
                    if thread.is_alive():
                        left_behind(thread)
            self._finish()
        return 0

    def _now(self) -> float:
        """The table's time for a button or a line: the latest frame's."""
        return 0.0 if self._last_t is None else self._last_t

    def _frame_time(self, frame: Frame, generation: int) -> float:
        """``frame``'s time on the table's clock, which never goes back across reopens."""
        if generation != self._generation:
            self._generation = generation
            # A new source: what the board looked like before is no guide to this frame.
            if self.table.gate is not None:
                self.table.gate.reset()
            t = frame.time + self._offset
            if self._last_t is not None and t <= self._last_t:
                # A file replayed from its start counts from 0 again: carry on from the last
                # frame's time, plus the real time the camera was away.
                gap = max(self.clock() - self._last_wall, 1e-3)
                self._offset = self._last_t + gap - frame.time
        t = frame.time + self._offset
        if self._last_t is not None and t <= self._last_t:
            t = self._last_t + 1e-3
        self._last_t, self._last_wall = t, self.clock()
        return t

    def _handle(self, message: _Message) -> None:
        events: list[Event] = []
        match message:
            case _FrameReady():
                taken = self._take_frame()
                if taken is not None:
                    frame, generation = taken
                    events = self.table.feed(frame.image, self._frame_time(frame, generation))
            case _Button(name):
                events = self.table.button(name, self._now())
            case _Line(text):
                events = self.table.command(text, self._now())
            case _Tick():
                self._tick_pending.clear()
                self._housekeeping()
                events = self.session.run_requests(self._now())
            case _Say(event):
                self.table.say(event, self._last_t)
            case _End(why):
                self.ended = why
        if any(event.kind == "match-over" for event in events):
            self.ended = "the match is over"
            self._say(
                "export",
                f"the match is recorded: {self._export_hint()} writes it for GNU Backgammon",
                match=self.match_id,
            )

    def _export_hint(self) -> str:
        command = "bgboard export last --format mat"
        if self.config.store.path is not None:
            command += f" --store {self.config.store.path}"
        return command

    def _keep_learning(self, now: bool = False) -> None:
        """Write the profile back with the references learnt in play and the corners of a
        board followed where it moved: at most every :data:`SAVE_LEARNT_EVERY` seconds, and at
        the end (``now``)."""
        reader = self.table.reader
        if reader is None or self._profile_path is None or (reader.learnt, reader.followed) == self._saved_learnt:
            return
        if not now and self.clock() - self._saved_at < SAVE_LEARNT_EVERY:
            return
        self._saved_at = self.clock()
        try:
            reader.profile.save(self._profile_path)
        except ProfileError as exc:
            log.warning("the board's profile could not be updated: %s", exc)
            return
        self._saved_learnt = (reader.learnt, reader.followed)

    def _housekeeping(self) -> None:
        self._keep_learning()
        panel = self.panel
        if panel is None:
            return
        try:
            panel.refresh()
        except Exception as exc:  # a GPIO write that fails must not stop the match being recorded
            log.warning("the LEDs could not be refreshed: %s", exc)
        up = panel.connected
        if up is None or up == self._link_up:
            return
        before, self._link_up = self._link_up, up
        if up and before is None:
            self._say("leds-connected", "the LED controller is connected")
        elif up:
            self._say("leds-back", "the LED controller is back: the board is shown again")
        elif before:
            self._say("leds-lost", "the LED controller stopped answering: reconnecting (the match goes on)")

    def _finish(self) -> None:
        """Say why the referee stops, then blank the LEDs and close what it opened."""
        state = self.table.controller.state
        if state.phase is Phase.MATCH_OVER:
            text = "stopped: the match is over"
            if self.config.match.teach or self.config.match.mode == "log":
                self._say_analysis()
        else:
            text = f"stopped: match {self.match_id} is recorded so far; bgboard referee --resume carries on"
            if self.ended is not None and self.ended.startswith("the recording"):
                # Said why: a recording is played once, never again from its start.
                text = f"stopped: {self.ended} (a recording is played once); match {self.match_id} is recorded so far"
        self._say("stopped", text, match=self.match_id, frames=self.table.stats.frames)
        self._keep_learning(now=True)
        self.session.close()

    def _say_analysis(self) -> None:
        """gnubg's 0-ply analysis of the match just ended, said and kept in the store."""
        from bgboard.analyse import analyse_finished_match

        said = analyse_finished_match(self.store, self.match_id, self.session.hints)
        if said is not None:
            self._say("analysis", said.text, match=self.match_id, **said.fields())

    def _blank_panel(self, *, close: bool) -> None:
        try:
            self.panel.blank()
            if close:
                self.panel.close()
        except Exception as exc:  # the LEDs may be unplugged: the record is what matters
            log.warning("blanking the LEDs: %s", exc)


def _close_quietly(thing: Any, what: str) -> None:
    try:
        thing.close()
    except Exception as exc:
        log.warning("closing %s: %s", what, exc)
