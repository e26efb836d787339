# SPDX-License-Identifier: MIT
"""The referee at the table: camera, buttons and keyboard in, one match out (``bgboard referee``).

:class:`Referee` runs a :class:`~bgboard.table.Table` for one match until the match ends or it
is told to stop. The table is not thread-safe, so the referee owns it from one thread: every
input arrives through one queue and is handled in order by :meth:`Referee.run`'s loop.

- The camera is opened, and its first frame read, before anything is written to the store: a
  camera that cannot be opened or sends nothing within ``first_frame`` seconds is a set-up
  error. One photo (``file:start.png``) is a still camera: the same frame, over and over.
- The camera thread (:class:`CameraFeed`) reads frames; when no frame comes for ``stall``
  seconds, or the source raises or ends, it closes the source, says so once, and opens it
  again with a backoff (0.5 s doubling to 5 s), saying when frames come back.
- Stopping joins the camera's threads and closes the source before :meth:`Referee.run`
  returns: a thread still inside OpenCV when Python exits aborts the process. A read that
  hangs in a driver cannot be joined; :func:`stuck_threads` lists such threads, and the
  command line then ends the process without Python's exit (``os._exit``).
- Button presses (gpiozero's thread) and keyboard lines (a thread reading stdin) are queued.
- A ticker queues a tick every 50 ms: a 74HC595 panel blinks only when refreshed, and the LED
  controller's link state is polled to say when it drops and comes back.

With the live page (``web``) and a profile file that does not exist yet, the referee starts
anyway with the board uncalibrated: camera, store and page as usual, but nothing is read or
recorded until the page's calibration view (``/calibrate``, :mod:`bgboard.calibration_view`)
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
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TextIO

import numpy as np

from bgboard.config import Config, gnubg_hints
from bgboard.errors import StoppedError
from bgboard.events import Event, console_sink
from bgboard.publish import BrokerUrl, Publisher
from bgboard.store import MatchStore, StoreError
from bgboard.table import (
    SetupError,
    Table,
    camera_reason,
    describe_state,
    load_reader,
    new_match,
    open_store,
)
from engine.hints import GnubgHints
from engine.match import Phase
from engine.opponent import GnubgOpponent
from hardware.layout import LedLayout
from hardware.panels import DimmedPanel, ManagedPanel
from vision.frames import CameraError, Frame, FrameSource, is_live, open_source, opencv_errors_only, source_kind
from vision.profile import ProfileError, check_output
from vision.reader import BoardReader

if TYPE_CHECKING:
    # The web stack is loaded only when the referee serves the page.
    from bgboard.calibration_view import Calibrated
    from bgboard.webserver import Bind, LiveWeb

log = logging.getLogger(__name__)

#: Seconds without a frame after which the camera is taken to have stopped.
STALL: Final = 3.0
#: Seconds a camera has, at the start, to open and send its first frame.
FIRST_FRAME: Final = 10.0
#: Seconds a read in progress has to finish when the referee stops (a camera's frame period,
#: a file's decoding), and then again once the source is closed under it.
STOP_WAIT: Final = 2.0
#: The first and the longest wait before opening the camera again, in seconds.
BACKOFF: Final = (0.5, 5.0)
#: Seconds between ticks (a 74HC595 panel's blinking wants about 50 ms).
TICK: Final = 0.05
#: Seconds at least between two writes of the profile with what the reader learnt in play.
SAVE_LEARNT_EVERY: Final = 30.0

#: Seconds gnubg may take over one hint at the table before it is given up (and restarted):
#: the camera waits meanwhile, and a 2-ply hint takes well under a second.
HINT_TIMEOUT: Final = 5.0


#: Said once when the camera stops, and once when its frames come back.
CAMERA_LOST: Final = "the camera stopped sending frames: reopening"
CAMERA_BACK: Final = "the camera is sending frames again"

SourceFactory = Callable[[str], FrameSource]


#: Threads left inside a camera driver that would not return (see :func:`stuck_threads`).
_STUCK: list[threading.Thread] = []
_STUCK_LOCK = threading.Lock()


def _left_behind(thread: threading.Thread) -> None:
    with _STUCK_LOCK:
        _STUCK.append(thread)


def stuck_threads() -> list[threading.Thread]:
    """Camera threads still inside a driver's call that never returned.

    A thread inside OpenCV when the interpreter exits makes the process abort (``terminate
    called without an active exception``), so a process that has any should end with
    ``os._exit`` once everything else is closed.
    """
    with _STUCK_LOCK:
        _STUCK[:] = [thread for thread in _STUCK if thread.is_alive()]
        return list(_STUCK)


class StillImage:
    """One photo as a camera filming a board left alone: the same frame at ``fps`` a second.

    A ``file:`` source of a single image would otherwise end after one frame, be reopened,
    and end again, for ever. Frames are paced in real time, so the table is not kept busy.

    :param source: the image source (read once, then closed).
    :param fps: frames a second.
    """

    def __init__(self, source: FrameSource, fps: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.url = source.url
        self._source: FrameSource | None = source
        self._period = 1.0 / fps if fps > 0 else 0.1
        self._clock = clock
        self._image: Any = None
        self._seq = 0
        self._start = 0.0
        self._closed = threading.Event()

    def read(self) -> Frame | None:
        """The photo again, once its time has come; ``None`` once closed."""
        if self._image is None:
            source = self._source
            first = source.read() if source is not None else None
            if first is None:
                return None
            self._image = first.image
            self._start = self._clock()
            self._drop_source()
        else:
            wait = self._start + self._seq * self._period - self._clock()
            if wait > 0 and self._closed.wait(wait):
                return None
        if self._closed.is_set():
            return None
        self._seq += 1
        return Frame(self._image, (self._seq - 1) * self._period, self._seq)

    def _drop_source(self) -> None:
        source, self._source = self._source, None
        if source is not None:
            source.close()

    def close(self) -> None:
        """Stop handing out the photo."""
        self._closed.set()
        self._drop_source()


def still_if_one_image(source: FrameSource) -> FrameSource:
    """``source`` itself, or a :class:`StillImage` when it is a ``file:`` source of one image."""
    from vision.frames import ImageFiles

    if isinstance(source, ImageFiles) and len(source.paths) == 1:
        return StillImage(source, source.fps)
    return source


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
        self.thread: threading.Thread | None = None


class CameraFeed:
    """Frames from a source that may stop: reopened with a backoff, each outage said once.

    :meth:`open` opens the source and waits for its first frame (the referee does this before
    it touches the store); :meth:`run` is the camera thread's body.

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
        # The source open() opened and its first frame, until run() takes them.
        self._first: tuple[FrameSource, Frame] | None = None
        # Read threads given up on (a read that hung), joined at the end if they come back.
        self._abandoned: list[_Reading] = []

    def _open_source(self) -> FrameSource:
        return still_if_one_image(self.factory(self.url))

    def open(self, timeout: float, stop: threading.Event | None = None) -> None:
        """Open the source and read its first frame, waiting at most ``timeout`` seconds.

        Both happen in a helper thread, since a driver may hang in either; one that does is
        left behind (:func:`stuck_threads`).

        :raises CameraError: the source cannot be opened, fails or ends before its first frame,
            or sends none in time; the message says why (without the address).
        :raises StoppedError: ``stop`` was set meanwhile.
        """
        result: dict[str, Any] = {}

        def probe() -> None:
            try:
                source = self._open_source()
            except Exception as exc:  # a driver's own exception too: the camera cannot be used
                result["error"] = camera_reason(self.url, exc)
                return
            result["source"] = source
            try:
                frame = source.read()
            except Exception as exc:
                result["error"] = camera_reason(self.url, exc)
                return
            if frame is None:
                result["error"] = "it sent no frame"
            else:
                result["frame"] = frame

        opencv_errors_only()
        thread = threading.Thread(target=probe, name="camera-open", daemon=True)
        thread.start()
        deadline = self.clock() + timeout
        while thread.is_alive() and self.clock() < deadline and not (stop is not None and stop.is_set()):
            thread.join(0.05)
        source: FrameSource | None = result.get("source")
        if thread.is_alive():
            # Hung in the driver: close what was opened from a helper, which may hang too.
            if source is not None:
                self._close_in_helper(source)
            thread.join(STOP_WAIT / 4)
            if thread.is_alive():
                _left_behind(thread)
            if stop is not None and stop.is_set():
                raise StoppedError("stopped before the camera sent its first frame: nothing was recorded")
            what = "no frame" if source is not None else "it did not open"
            raise CameraError(f"{what} within {timeout:g} s")
        if "frame" not in result:
            if source is not None:
                self._close_quietly(source)
            raise CameraError(result.get("error", "it sent no frame"))
        assert source is not None
        self._first = (source, result["frame"])

    def first_image(self) -> np.ndarray:
        """The first frame's image that :meth:`open` read."""
        assert self._first is not None, "open() first"
        return self._first[1].image

    def discard(self) -> None:
        """Close the source :meth:`open` opened, when :meth:`run` will not be called."""
        first, self._first = self._first, None
        if first is not None:
            self._close_quietly(first[0])

    def run(self, stop: threading.Event) -> None:
        """Read, and reopen, until ``stop`` is set (the camera thread's body).

        Returns only once the source is closed and its read thread has ended (or, hung in a
        driver, been left behind).
        """
        try:
            self._run(stop)
        finally:
            self.discard()
            for reading in self._abandoned:
                # A read given up on may come back once its source is closed.
                if reading.thread is not None:
                    reading.thread.join(STOP_WAIT / 4)
                    if reading.thread.is_alive():
                        _left_behind(reading.thread)

    def _run(self, stop: threading.Event) -> None:
        delay = self.backoff[0]
        while not stop.is_set():
            first: Frame | None = None
            if self._first is not None:
                (source, first), self._first = self._first, None
            else:
                try:
                    source = self._open_source()
                except Exception as exc:  # a driver's own exception too: still a camera to reopen
                    self._lose(f"cannot open the camera {self.url}: {camera_reason(self.url, exc)}")
                    stop.wait(delay)
                    delay = min(delay * 2, self.backoff[1])
                    continue
            self.generation += 1
            reading = self._pump(source, self.generation, stop, first)
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

    def _pump(self, source: FrameSource, generation: int, stop: threading.Event, first: Frame | None) -> _Reading:
        """Read ``source`` in its own thread until it ends, fails or stalls, or ``stop``."""
        reading = _Reading()

        def read_loop() -> None:
            try:
                pending = first
                while not stop.is_set() and not reading.abandoned:
                    if pending is not None:
                        frame: Frame | None = pending
                        pending = None
                    else:
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
        reading.thread = thread
        thread.start()
        # A read() that hangs cannot be interrupted, so the stall is watched from here; the
        # hung thread is abandoned and its frame, if it ever comes, thrown away.
        while not reading.done.wait(min(0.05, self.stall / 4)):
            if stop.is_set():
                # Stopping: let the read in progress finish (a frame period, a file's decoding),
                # so that the source is never closed under it.
                reading.done.wait(STOP_WAIT)
                break
            since = reading.since
            if since is not None and self.clock() - since > self.stall:
                reading.why = f"no frame for {self.stall:g} s"
                reading.abandoned = True
                break
        return reading

    def _close(self, source: FrameSource, reading: _Reading) -> None:
        """Close ``source``; with a read still hanging, close from a helper that may hang too."""
        if reading.done.is_set():
            self._close_quietly(source)
            if reading.thread is not None:
                reading.thread.join()
            return
        self._close_in_helper(source)
        if reading.abandoned:
            self._abandoned.append(reading)
        else:
            # Stopped with a read still in progress: closing may have ended it.
            reading.done.wait(STOP_WAIT / 2)
            if reading.thread is not None and reading.thread.is_alive():
                _left_behind(reading.thread)

    def _close_quietly(self, source: FrameSource) -> None:
        try:
            source.close()
        except Exception as exc:  # closing a failed device may fail too; it is let go either way
            log.info("closing the camera %s: %s", self.url, exc)

    def _close_in_helper(self, source: FrameSource) -> None:
        closer = threading.Thread(target=self._close_quietly, args=(source,), name="camera-close", daemon=True)
        closer.start()
        closer.join(STOP_WAIT / 2)
        if closer.is_alive():
            _left_behind(closer)


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


@dataclass(frozen=True, slots=True)
class _Control:
    """An order from the hall (``bgboard/v1/hall/control``), handled in the loop."""

    tournament: bool


_Message = _FrameReady | _Button | _Line | _Tick | _Say | _End | _Control


# -- the referee ----------------------------------------------------------------------------


class Referee:
    """Referee and record one match at the table (``bgboard referee``).

    Everything that can fail at the start (the camera's address, the profile, the store, the
    LEDs, the buttons) is checked by the constructor, which raises :class:`SetupError`; then
    :meth:`run` plays the match. The store is touched last, once the camera has sent its first
    frame: a referee that cannot start records nothing.

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
        from the source's address (:func:`vision.frames.is_live`).
    :param end_with_source: stop when the source ends instead of reopening it (a recording
        played once, tests).
    :param clock: monotonic seconds (the gap across a camera reopen).
    :param first_frame: seconds the camera has to open and send its first frame.
    :param given: the settings given as command-line flags, config key to flag
        (``{"leds.panel": "--leds"}``): errors name the flag, and a resumed match whose players
        or length differ from the flags' says that it keeps its own.
    :param stop: set while the camera's first frame is awaited, gives up (:class:`StoppedError`).
    :param publish: publish the stored actions and the table's state to this MQTT broker
        (:class:`~bgboard.publish.Publisher`, its own thread) as table ``table_name``; the
        hall's tournament mode turns hints off.
    :param web: serve the live page there (:mod:`bgboard.webserver`); the changes it asks for
        are run by the referee's loop like lines typed at the keyboard. Its calibration view
        writes ``config.camera.profile``; a profile file that does not exist yet is no error
        then: the referee waits, reading nothing, until the board is calibrated there.
    :param against: ``(level, side)``: GNU Backgammon plays side 1 or 2 at that level
        (:mod:`engine.opponent`), named ``gnubg`` in a new match; a resumed match keeps the
        side of its player named ``gnubg``.
    :raises SetupError: a missing or unusable setting, naming the config key (or the flag).
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
        panel: ManagedPanel | None = None,
        store: MatchStore | None = None,
        stdin: TextIO | None = None,
        buttons: Callable[[dict[str, Any], Callable[[str], None]], Any] | None = None,
        stall: float = STALL,
        backoff: tuple[float, float] = BACKOFF,
        live: bool | None = None,
        end_with_source: bool = False,
        clock: Callable[[], float] = time.monotonic,
        first_frame: float = FIRST_FRAME,
        given: Mapping[str, str] | None = None,
        stop: threading.Event | None = None,
        publish: BrokerUrl | None = None,
        table_name: str = "",
        web: Bind | None = None,
        against: tuple[str, int] | None = None,
    ) -> None:
        source = config.camera.source
        if not source:
            raise SetupError(
                'no camera: set camera.source in the config file ([camera] source = "picamera2:"),'
                " BGBOARD_CAMERA, or --camera URL (picamera2:, v4l2:///dev/video0, video:FILE, file:GLOB)"
            )
        self.config = config
        self.source_url = source
        self._given = dict(given or {})
        self._settings_kept: str | None = None
        #: Where the events are printed: text in players' words, or JSON Lines.
        self.console = console_sink(out, json_lines=json_lines)
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
        # A profile the referee loads itself is written back with what the reader learns of the
        # board in play (see BoardReader.learn), so the next match starts surer, and with the
        # corners of a board that moved (see BoardReader.read).
        self._profile_path = config.camera.profile if reader is None else None
        if reader is None:
            reader = self._load_reader(config, web is not None)
        self._saved_learnt = (0, 0)
        self._saved_at = clock()
        self._own_store = False
        self._own_panel = panel is None
        self._buttons: Any = None
        self.panel: DimmedPanel | None = None
        self.hints: GnubgHints | None = None
        #: The gnubg process: hints in teach mode, the opponent with ``against``, the analysis.
        self.gnubg: GnubgHints | None = None
        self.publisher: Publisher | None = None
        self.tournament = False
        self.live: LiveWeb | None = None
        try:
            # The devices first, the camera's first frame next: a match is started in the store
            # only once everything else works.
            self.panel = DimmedPanel(panel if panel is not None else self._open_panel(), config.leds.brightness)
            pins = config.buttons.as_dict()
            if pins:
                self._buttons = self._open_buttons(pins, buttons)
            try:
                self.camera.open(first_frame, stop)
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
                self.camera.discard()
                raise SetupError(str(exc)) from None
            if store is None:
                self.store = open_store(config, self._name("store.path"))
                self._own_store = True
            else:
                self.store = store
            # Nothing starts until the first hint, so a missing gnubg is said at the first roll.
            if config.match.teach or against is not None:
                self.gnubg = gnubg_hints(timeout=HINT_TIMEOUT)
            if config.match.teach:
                self.hints = self.gnubg
            if against is not None:
                self.config = config = self._with_gnubg_named(config, against[1])
            self.match_id, state_words = self._match()
            opponent = None
            if against is not None:
                assert self.gnubg is not None
                players = self.store.summary(self.match_id).players
                side = players.index("gnubg") if "gnubg" in players else against[1] - 1
                opponent = GnubgOpponent(self.gnubg, side, against[0])
            self.table = Table.from_config(
                config,
                reader,
                store=self.store,
                match_id=self.match_id,
                panel=self.panel,
                sinks=[self.console],
                hints=self.hints,
                opponent=opponent,
                calibrated=reader is not None,
            )
            if opponent is not None:
                level = opponent.level
                text = f"{players[opponent.player]} plays side {opponent.player + 1} at level {level}"
                self.table.say(Event("gnubg", text, {"level": level.name, "side": opponent.player + 1}))
            if publish is not None:
                self.publisher = Publisher(
                    publish,
                    table_name,
                    self.store,
                    self.match_id,
                    on_control=lambda data: self._queue.put(_Control(bool(data.get("tournament")))),
                    on_link=self._hall_link,
                )
                # After the store's sink: each action is committed when the publisher wakes.
                self.table.sinks.add(self.publisher)
            if web is not None:
                self.live = self._serve_page(web)
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

    def _serve_page(self, web: Bind) -> LiveWeb:
        """Start the live page on the table's stream; say where it is and its token."""
        from bgboard.webserver import BindError, LiveWeb

        path = self.store.path
        try:
            live = LiveWeb.start(
                web,
                self.table.controller.names,
                store_path=None if str(path) == ":memory:" else path,
            )
        except BindError as exc:
            raise SetupError(f"--web: {exc}") from None
        live.follow(self.table)
        profile = self.config.camera.profile
        if profile is not None:
            live.calibrate(self.table, Path(profile), self._calibrated)
        # The console only: the token must not reach the pages, which anyone may read.
        self.console(live.notice())
        return live

    def _calibrated(self, done: Calibrated) -> list[Event]:
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
        url = self.live.calibrate_url if self.live is not None else None
        text = (
            f"the board is not calibrated yet ({path} does not exist): nothing is read or recorded until it is;"
            f" calibrate it at {url} (the page asks for the table's token)"
        )
        self._say("calibrate", text, url=url, profile=str(path))

    def _web_changes(self) -> list[Event]:
        """Run the changes the live page asked for, as lines typed at the keyboard."""
        if self.live is None:
            return []
        said: list[Event] = []

        def run(command: str) -> list[Event]:
            events = self.table.command(command, self._now())
            said.extend(events)
            return events

        self.live.inbox.run_pending(run)
        return said

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

    def _say(self, kind: str, text: str, **fields: Any) -> None:
        """From the loop: send the referee's own news down the table's stream, at the table's time."""
        self.table.say(Event(kind, text, fields), self._last_t)

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
        self._say(kind, f"{kind} {self._state_words}", match=self.match_id)
        if self._settings_kept is not None:
            self._say("settings-kept", self._settings_kept, match=self.match_id)
        if not self.table.calibrated:
            self._say_calibrate()
        if self.publisher is not None:
            self._say("publishing", f"publishing as table {self.publisher.table} to {self.publisher.url}")
            self.publisher.start()
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
                        _left_behind(thread)
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
                events = self._web_changes()
            case _Say(event):
                self.table.say(event, self._last_t)
            case _End(why):
                self.ended = why
            case _Control(tournament):
                self._set_tournament(tournament)
        if any(event.kind == "match-over" for event in events):
            self.ended = "the match is over"
            self._say(
                "export",
                f"the match is recorded: {self._export_hint()} writes it for GNU Backgammon",
                match=self.match_id,
            )

    def _hall_link(self, up: bool) -> None:
        """From the MQTT client's thread: say when the hall's broker is reached, or lost."""
        if up:
            self._say_later("hall-connected", "publishing: connected to the hall's broker")
        else:
            self._say_later(
                "hall-lost",
                "publishing: the hall's broker cannot be reached; the actions wait in the store (the match goes on)",
            )

    def _set_tournament(self, on: bool) -> None:
        """The hall's tournament mode: no hints (tournament rules forbid electronic aids)."""
        if on == self.tournament:
            return
        self.tournament = on
        table = self.table
        if on:
            table.hints = None
            table.controller.teach = False
            self._say("tournament", "tournament mode (the hall's order): hints are off", tournament=True)
        else:
            table.hints = self.hints
            table.controller.teach = self.hints is not None
            self._say("tournament", "tournament mode is over (the hall's order)", tournament=False)
        table.tournament = on
        table.show()

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
        self._say("stopped", text, match=self.match_id, frames=self.table.stats.frames)
        self._keep_learning(now=True)
        self._close()

    def _say_analysis(self) -> None:
        """gnubg's 0-ply analysis of the match just ended, said and kept in the store."""
        from bgboard.analyse import analyse_finished_match

        said = analyse_finished_match(self.store, self.match_id, self.hints)
        if said is not None:
            self._say("analysis", said.text, match=self.match_id, **said.fields())

    def _close(self) -> None:
        if self.publisher is not None:
            # What the broker has not acknowledged yet stays in the outbox for the next run.
            self.publisher.stop(linger=Publisher.LINGER)
            self.publisher = None
        if self.live is not None:
            self.live.close()
            self.live = None
        if self.gnubg is not None:
            self.gnubg.close()
            self.gnubg = None
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
        self.camera.discard()
        if self._own_store:
            self._own_store = False
            self.store.close()
