# SPDX-License-Identifier: MIT
"""The referee at the table: camera, buttons and keyboard in, one match out (``bgboard referee``).

:class:`Referee` runs a :class:`~bgboard.table.Table` for one match until the match ends or it
is told to stop. The table is not thread-safe, so the referee owns it from one thread: every
input arrives through one queue and is handled in order by :meth:`Referee.run`'s loop.

- The camera thread (:class:`CameraFeed`) reads frames; when no frame comes for ``stall``
  seconds, or the source raises or ends, it closes the source, says so once, and opens it
  again with a backoff (0.5 s doubling to 5 s), saying when frames come back.
- Button presses (gpiozero's thread) and keyboard lines (a thread reading stdin) are queued.
- A ticker queues a tick every 50 ms: a 74HC595 panel blinks only when refreshed, and the LED
  controller's link state is polled to say when it drops and comes back.

In teach mode (``match.teach``) the referee starts one :class:`~engine.hints.GnubgHints` (the
program named by ``$BGBOARD_GNUBG``, else gnubg on the path) for the table to ask, and stops
it at the end. The table asks it from the referee's own thread: a 0-ply hint takes about
10 ms, less than a camera frame.

Everything the players are told goes through :class:`Console`: one line per event in players'
words with the time, or one JSON object per line. The referee's own news (started, camera
lost, LEDs back, stopped) are :class:`~bgboard.controller.Event` values too, so both outputs
have one shape.
"""

from __future__ import annotations

import json
import logging
import os
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, TextIO

from bgboard.config import Config
from bgboard.controller import Controller, Event
from bgboard.store import MatchStore, StoreError
from bgboard.table import Table
from engine.hints import GnubgHints
from engine.match import Phase
from hardware.layout import LedLayout
from hardware.panels import LedPanel
from hardware.scene import Scene
from vision.frames import CameraError, Frame, FrameSource, open_source
from vision.reader import BoardReader
from vision.stabiliser import MotionGate

log = logging.getLogger(__name__)

#: Seconds without a frame after which the camera is taken to have stopped.
STALL: Final = 3.0
#: The first and the longest wait before opening the camera again, in seconds.
BACKOFF: Final = (0.5, 5.0)
#: Seconds between ticks (a 74HC595 panel's blinking wants about 50 ms).
TICK: Final = 0.05

#: Seconds gnubg may take over one hint at the table before it is given up (and restarted):
#: the camera waits meanwhile, and a 2-ply hint takes well under a second.
HINT_TIMEOUT: Final = 5.0

#: Said once when the camera stops, and once when its frames come back.
CAMERA_LOST: Final = "the camera stopped sending frames: reopening"
CAMERA_BACK: Final = "the camera is sending frames again"

SourceFactory = Callable[[str], FrameSource]


class SetupError(Exception):
    """The referee cannot start as configured; the message says which setting and how to set it."""


# -- the console ----------------------------------------------------------------------------


class Console:
    """Print events: ``HH:MM:SS  text`` lines, or one JSON object per line.

    :param out: the stream to write to (flushed after every line, so a pipe sees each event).
    :param json_lines: write ``json.dumps(event.to_json())`` instead of text.
    :param stamp: the time prefix of a text line (default: the local wall clock).
    """

    def __init__(self, out: TextIO, *, json_lines: bool = False, stamp: Callable[[], str] | None = None) -> None:
        self.out = out
        self.json_lines = json_lines
        self.stamp = stamp or (lambda: time.strftime("%H:%M:%S"))
        # Writes come from the referee's loop, but the CLI's error paths may write too.
        self._lock = threading.Lock()

    def __call__(self, event: Event) -> None:
        """Print one event."""
        line = json.dumps(event.to_json(), ensure_ascii=False) if self.json_lines else f"{self.stamp()}  {event.text}"
        with self._lock:
            self.out.write(line + "\n")
            self.out.flush()

    def say(self, kind: str, text: str, **fields: Any) -> None:
        """Print a referee-level event (not the controller's) in the same shape."""
        self(Event(kind, text, fields))


# -- the camera thread ----------------------------------------------------------------------


class _Reading:
    """What one reader thread is doing; written by that thread, read by the supervisor."""

    def __init__(self) -> None:
        self.since: float | None = None  # when the read() in progress began
        self.why: str | None = None  # why the source stopped
        self.ended = False  # the source returned None (the end of a file)
        self.abandoned = False  # the supervisor gave up on this source
        self.frames = 0
        self.done = threading.Event()


class CameraFeed:
    """Frames from a source that may stop: reopened with a backoff, each outage said once.

    :param url: the frame source's address.
    :param factory: opens a source (:func:`vision.frames.open_source`, or a test's fake).
    :param deliver: called with each frame and the number of the source it came from (each
        opening gets a new number), from the camera's threads; it may block.
    :param say: called with an event kind, text and fields when the camera is lost or back.
    :param stall: seconds a ``read()`` may take before the camera counts as stopped.
    :param backoff: the first and the longest wait before opening again, in seconds.
    :param end_with_source: a source that ends (returns ``None``) ends the feed instead of
        being reopened: a finite recording played once.
    :param on_end: called when the feed ends that way.
    :param clock: monotonic seconds.
    """

    def __init__(
        self,
        url: str,
        factory: SourceFactory,
        deliver: Callable[[Frame, int], None],
        say: Callable[..., None],
        *,
        stall: float = STALL,
        backoff: tuple[float, float] = BACKOFF,
        end_with_source: bool = False,
        on_end: Callable[[], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.url = url
        self.factory = factory
        self.deliver = deliver
        self.say = say
        self.stall = stall
        self.backoff = backoff
        self.end_with_source = end_with_source
        self.on_end = on_end
        self.clock = clock
        self.generation = 0
        self.lost = False
        self.reopened = 0

    def run(self, stop: threading.Event) -> None:
        """Open, read, and reopen until ``stop`` is set (the camera thread's body)."""
        delay = self.backoff[0]
        while not stop.is_set():
            try:
                source = self.factory(self.url)
            except (CameraError, OSError) as exc:
                self._lose(f"cannot open the camera {self.url}: {exc}")
                stop.wait(delay)
                delay = min(delay * 2, self.backoff[1])
                continue
            self.generation += 1
            reading = self._pump(source, self.generation, stop)
            self._close(source, reading)
            if stop.is_set():
                return
            if reading.ended and self.end_with_source:
                if self.on_end is not None:
                    self.on_end()
                return
            if reading.frames:
                # It worked for a while: the next outage starts with a short wait again.
                delay = self.backoff[0]
            self._lose(reading.why or "the camera stopped")
            self.reopened += 1
            stop.wait(delay)
            delay = min(delay * 2, self.backoff[1])

    def _lose(self, why: str) -> None:
        if not self.lost:
            self.lost = True
            self.say("camera-lost", CAMERA_LOST, reason=why)
        else:
            log.info("camera still not back: %s", why)

    def _pump(self, source: FrameSource, generation: int, stop: threading.Event) -> _Reading:
        """Read ``source`` in its own thread until it ends, fails or stalls, or ``stop``."""
        reading = _Reading()

        def read_loop() -> None:
            try:
                while not stop.is_set() and not reading.abandoned:
                    reading.since = self.clock()
                    frame = source.read()
                    reading.since = None
                    if reading.abandoned:
                        break
                    if frame is None:
                        reading.ended = True
                        reading.why = "the camera sent no frame"
                        break
                    if reading.frames == 0 and self.lost:
                        self.lost = False
                        self.say("camera-back", CAMERA_BACK)
                    reading.frames += 1
                    self.deliver(frame, generation)
            except (CameraError, OSError) as exc:
                reading.why = str(exc) or type(exc).__name__
            except Exception as exc:  # a driver's own exception: still a camera that stopped
                log.exception("the camera %s failed", self.url)
                reading.why = f"{type(exc).__name__}: {exc}"
            finally:
                reading.done.set()

        thread = threading.Thread(target=read_loop, name=f"camera-read-{generation}", daemon=True)
        thread.start()
        # A read() that hangs cannot be interrupted, so the stall is watched from here; the
        # hung thread is abandoned and its frame, if it ever comes, thrown away.
        while not reading.done.wait(min(0.05, self.stall / 4)):
            if stop.is_set():
                break
            since = reading.since
            if since is not None and self.clock() - since > self.stall:
                reading.why = f"no frame for {self.stall:g} s"
                reading.abandoned = True
                break
        return reading

    def _close(self, source: FrameSource, reading: _Reading) -> None:
        """Close ``source``; with a read still hanging, close from a helper that may hang too."""

        def close() -> None:
            try:
                source.close()
            except Exception as exc:  # closing a failed device may fail too; it is let go either way
                log.info("closing the camera %s: %s", self.url, exc)

        if reading.done.is_set():
            close()
            return
        closer = threading.Thread(target=close, name="camera-close", daemon=True)
        closer.start()
        closer.join(1.0)


def is_live(url: str) -> bool:
    """Whether ``url`` names a camera (frames keep coming) rather than a file played at will."""
    text = url.strip().lower()
    return text.startswith(("picamera2:", "v4l2:", "usb:", "/dev/video", "file:/dev/video"))


# -- the LED panel -------------------------------------------------------------------------


class DimmedPanel:
    """An LED panel showing every scene at the configured brightness.

    Also passes on what the referee asks of particular panels: ``refresh``/``animated`` (a
    74HC595 chain blinks only when refreshed) and ``connected`` (the serial link's state).

    :param panel: the panel underneath.
    :param brightness: 0 (dark) to 1 (full).
    """

    def __init__(self, panel: LedPanel, brightness: float) -> None:
        self.panel = panel
        self.brightness = max(0, min(255, round(255 * brightness)))

    @property
    def layout(self) -> LedLayout:
        """The layout of the panel underneath."""
        return self.panel.layout

    def show(self, scene: Scene) -> None:
        """Show ``scene`` at the configured brightness."""
        self.panel.show(scene.with_brightness(self.brightness * scene.brightness // 255))

    def close(self) -> None:
        """Close the panel underneath."""
        self.panel.close()

    @property
    def connected(self) -> bool | None:
        """Whether the LED controller's link is up; ``None`` for panels without a link."""
        value = getattr(self.panel, "connected", None)
        return value if isinstance(value, bool) else None

    def refresh(self) -> None:
        """Bring blinking LEDs up to date, on panels that blink only when told to."""
        refresh = getattr(self.panel, "refresh", None)
        if refresh is not None and getattr(self.panel, "animated", False):
            refresh()

    def blank(self) -> None:
        """Every LED dark; for the serial panel, wait briefly for the device to show it."""
        self.panel.show(Scene.dark())
        wait = getattr(self.panel, "wait_shown", None)
        if wait is not None:
            wait(0.5)

    def __enter__(self) -> DimmedPanel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


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


# -- setting up -----------------------------------------------------------------------------


def load_reader(config: Config) -> BoardReader:
    """The board reader for ``config``'s calibration profile.

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
        raise SetupError(f"camera.profile: cannot use the calibration profile: {exc}") from None


def open_store(config: Config) -> MatchStore:
    """The match store ``config`` names.

    :raises SetupError: it cannot be opened.
    """
    path = config.store.resolved_path()
    try:
        return MatchStore(path)
    except StoreError as exc:
        raise SetupError(f"store.path: {exc}") from None


def new_match(store: MatchStore, config: Config) -> int:
    """Start the match ``config.match`` describes in ``store``; its id.

    :raises SetupError: the players or the length are not usable.
    """
    match = config.match
    try:
        return store.start_match(match.players, match.length, match.options())
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


# -- the referee ----------------------------------------------------------------------------


class Referee:
    """Referee and record one match at the table (``bgboard referee``).

    Everything that can fail at the start (the camera's address, the profile, the store, the
    LEDs, the buttons) is checked by the constructor, which raises :class:`SetupError`; then
    :meth:`run` plays the match.

    :param config: the settings (camera source and profile, LEDs, buttons, match, store).
    :param out: the console stream.
    :param json_lines: print events as JSON Lines.
    :param resume: carry on with the last unfinished match in the store, at its exact state.
    :param source_factory: opens the camera (tests give a fake addressed the same way).
    :param reader: the board reader (default: from ``config.camera.profile``).
    :param panel: the LED panel (default: opened from ``config.leds``); not closed by the
        referee when given.
    :param store: the match store (default: opened from ``config.store``); not closed by the
        referee when given.
    :param stdin: a stream of keyboard commands, one per line (``None``: no keyboard).
    :param buttons: opens the button panel from the pins and a callback (default
        :class:`hardware.buttons.ButtonPanel`); used only when pins are configured.
    :param stall: seconds without a frame before the camera is reopened.
    :param backoff: the first and longest wait before reopening the camera.
    :param live: drop a frame the table has not taken yet when a newer one comes (a camera:
        never judge an old frame); ``False`` hands every frame over (files, tests). Default:
        from the source's address (:func:`is_live`).
    :param end_with_source: stop when the source ends instead of reopening it (a recording
        played once, tests).
    :param clock: monotonic seconds (the gap across a camera reopen).
    :raises SetupError: a missing or unusable setting, naming the config key.
    """

    def __init__(
        self,
        config: Config,
        *,
        out: TextIO,
        json_lines: bool = False,
        resume: bool = False,
        source_factory: SourceFactory = open_source,
        reader: BoardReader | None = None,
        panel: LedPanel | None = None,
        store: MatchStore | None = None,
        stdin: TextIO | None = None,
        buttons: Callable[[dict[str, Any], Callable[[str], None]], Any] | None = None,
        stall: float = STALL,
        backoff: tuple[float, float] = BACKOFF,
        live: bool | None = None,
        end_with_source: bool = False,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        source = config.camera.source
        if not source:
            raise SetupError(
                'no camera: set camera.source in the config file ([camera] source = "picamera2:"),'
                " BGBOARD_CAMERA, or --camera URL (picamera2:, v4l2:///dev/video0, video:FILE, file:GLOB)"
            )
        self.config = config
        self.source_url = source
        self.console = Console(out, json_lines=json_lines)
        self.resume = resume
        self.stdin = stdin
        self.clock = clock
        self._queue: queue.SimpleQueue[_Message] = queue.SimpleQueue()
        self._inner_stop = threading.Event()
        self._live = is_live(source) if live is None else live
        self.camera = CameraFeed(
            source,
            source_factory,
            self._deliver,
            self._say_later,
            stall=stall,
            backoff=backoff,
            end_with_source=end_with_source,
            on_end=lambda: self._queue.put(_End("the camera's recording ended")),
            clock=clock,
        )
        reader = reader if reader is not None else load_reader(config)
        self._own_store = store is None
        self.store = store if store is not None else open_store(config)
        self._own_panel = panel is None
        self._buttons: Any = None
        self.panel: DimmedPanel | None = None
        # Nothing starts until the first hint, so a missing gnubg is said at the first roll.
        self.hints: GnubgHints | None = None
        if config.match.teach:
            self.hints = GnubgHints(os.environ.get("BGBOARD_GNUBG") or None, timeout=HINT_TIMEOUT)
        try:
            # The devices first: a match is started in the store only once everything else works.
            self.panel = DimmedPanel(panel if panel is not None else self._open_panel(), config.leds.brightness)
            pins = config.buttons.as_dict()
            if pins:
                self._buttons = self._open_buttons(pins, buttons)
            self.match_id, state_words = self._match()
            controller = Controller(
                self.store.state(self.match_id),
                mode=config.match.mode,
                settle=config.camera.settle,
                bottom_player=config.match.bottom_player,
                names=self.store.summary(self.match_id).players,
                teach=config.match.teach,
            )
            self.table = Table(
                reader,
                MotionGate(reader.homography, settle=config.camera.settle),
                controller,
                panel=self.panel,
                store=self.store,
                match_id=self.match_id,
                out=self.console,
                hints=self.hints,
                hint_ply=config.match.hint_ply,
            )
        except BaseException:
            self._close()
            raise
        self._state_words = state_words
        # The slot holding the newest frame the table has not taken yet, and its source's number.
        self._slot: tuple[Frame, int] | None = None
        self._slot_lock = threading.Condition()
        self.dropped = 0
        # The table's clock: the frames' times, kept increasing across camera reopens.
        self._generation = 0
        self._offset = 0.0
        self._last_t: float | None = None
        self._last_wall = 0.0
        self._link_up: bool | None = None
        self._tick_pending = threading.Event()
        self.ended: str | None = None

    # -- setting up -------------------------------------------------------------------------

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
        return summary.id, describe_state(self.store, summary.id)

    def _open_panel(self) -> LedPanel:
        from hardware.layout import LayoutError
        from hardware.panels import PanelError, open_panel

        leds = self.config.leds
        try:
            return open_panel(leds.panel, LedLayout.from_file_or_name(leds.layout))
        except (LayoutError, PanelError) as exc:
            raise SetupError(f"leds.panel: cannot open the LEDs {leds.panel!r}: {exc}") from None

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

    def _say_later(self, kind: str, text: str, **fields: Any) -> None:
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
        self.console.say(kind, f"{kind} {self._state_words}", match=self.match_id)
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
            threads[0].join(2.0)
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
            case _Say(event):
                self.console(event)
            case _End(why):
                self.ended = why
        if any(event.kind == "match-over" for event in events):
            self.ended = "the match is over"
            self.console.say(
                "export",
                f"the match is recorded: {self._export_hint()} writes it for GNU Backgammon",
                match=self.match_id,
            )

    def _export_hint(self) -> str:
        command = "bgboard export last --format mat"
        if self.config.store.path is not None:
            command += f" --db {self.config.store.path}"
        return command

    def _housekeeping(self) -> None:
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
            self.console.say("leds-connected", "the LED controller is connected")
        elif up:
            self.console.say("leds-back", "the LED controller is back: the board is shown again")
        elif before:
            self.console.say("leds-lost", "the LED controller stopped answering: reconnecting (the match goes on)")

    def _finish(self) -> None:
        """Say why the referee stops, then blank the LEDs and close what it opened."""
        state = self.table.controller.state
        if state.phase is Phase.MATCH_OVER:
            text = "stopped: the match is over"
        else:
            text = f"stopped: match {self.match_id} is recorded so far; bgboard referee --resume carries on"
        self.console.say("stopped", text, match=self.match_id, frames=self.table.stats.frames)
        self._close()

    def _close(self) -> None:
        if self.hints is not None:
            self.hints.close()
            self.hints = None
        if self._buttons is not None:
            try:
                self._buttons.close()
            except Exception as exc:
                log.warning("closing the buttons: %s", exc)
            self._buttons = None
        if self.panel is not None:
            try:
                self.panel.blank()
                if self._own_panel:
                    self.panel.close()
            except Exception as exc:  # the LEDs may be unplugged: the record is what matters
                log.warning("blanking the LEDs: %s", exc)
            self.panel = None
        if self._own_store:
            self.store.close()
