# SPDX-License-Identifier: MIT
"""The host's end of the LED link: handshake, stop-and-wait requests with retries, heartbeat, reconnects.

A :class:`Link` runs one background thread that owns the serial port. Callers hand it the
desired scene (:meth:`Link.show`) and one-shot commands (:meth:`Link.blank`,
:meth:`Link.self_test`); the thread gets them to the device, one request at a time, and keeps
the device showing the latest scene through resends, device resets and unplugged cables.
``firmware_bridge/PROTOCOL.md`` describes the protocol and its timing.

>>> link = Link("loop://", led_count=4)
>>> link.show([0x10, 0x21, 0x00, 0x00], brightness=64)  # validated and queued; nothing is sent before start()
>>> link.close()
"""

from __future__ import annotations

import contextlib
import errno
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Protocol, cast

from firmware_bridge import messages, protocol
from firmware_bridge.framing import Frame, FrameReader, encode_frame
from firmware_bridge.messages import Colour, DeviceInfo

_log = logging.getLogger(__name__)

#: How long one read of the port may block: the resolution of the thread's timers when no
#: caller wakes it (a caller's request wakes it at once through ``cancel_read``).
READ_TIMEOUT = 0.02
#: Pause between attempts to open a port that is not there (unplugged).
REOPEN_INTERVAL = 0.5
#: Pause before trying again after the device refused the session (wrong firmware, LED count).
REFUSED_INTERVAL = 5.0
#: HELLO is repeated this often until HELLO_ACK, while a freshly reset device's bootloader runs.
HELLO_INTERVAL = protocol.HEARTBEAT_MS / 1000
#: A device that answers nothing, not even the heartbeat's PINGs, for this long is taken to be
#: gone; twice the device's own timeout, so that a few lost PONGs on a noisy line do not count.
SILENCE_LIMIT = 2 * protocol.LINK_TIMEOUT_MS / 1000
#: Resends caused by NAKs for damaged frames, per request, before the line counts as down: each
#: such NAK proves the device alive, so they are not limited by ``RETRIES``, only bounded.
MAX_NAK_RESENDS = 4 * (protocol.RETRIES + 1)
#: How many scenes' try counts :attr:`LinkStats.scene_tries` keeps.
TRIES_KEPT = 1000


class SerialPort(Protocol):
    """The part of a pyserial ``Serial`` (or ``serial_for_url`` object) the link uses."""

    timeout: float | None

    @property
    def in_waiting(self) -> int:
        """Bytes ready to read."""

    def read(self, size: int = 1) -> bytes:
        """Up to ``size`` bytes, waiting at most ``timeout`` seconds."""

    def write(self, data: bytes, /) -> int | None:
        """Send ``data``."""

    def reset_input_buffer(self) -> None:
        """Drop what was received and not read yet."""

    def close(self) -> None:
        """Close the port."""


class PortError(OSError):
    """The port cannot be opened at all (no such device, a bad URL, no permission).

    :ivar url: the port.
    :ivar reason: why, in a few words (:func:`port_problem`).
    """

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(f"cannot open {url or 'the port (none given)'}: {reason}")
        self.url = url
        self.reason = reason


def port_problem(error: BaseException) -> str:
    """Why a port would not open, in a few words (pyserial's messages repeat the path twice)."""
    code = getattr(error, "errno", None)
    if code in (errno.ENOENT, errno.ENODEV, errno.ENXIO):
        return "no such device"
    if code in (errno.EACCES, errno.EPERM):
        return "permission denied (the user needs to be in the dialout group)"
    if code == errno.EBUSY:
        return "the port is busy (another program has it open)"
    if code == errno.EISDIR:
        return "a folder, not a serial port"
    text = str(error).strip()
    return text or type(error).__name__


def open_serial(url: str, baudrate: int = protocol.BAUDRATE, timeout: float = READ_TIMEOUT) -> SerialPort:
    """Open a device path or a pyserial URL (``hwgrep://2341:0043``, ``loop://``, ``spy://...``)."""
    import serial  # type: ignore[import-untyped,unused-ignore]  # stubs are optional

    return cast(SerialPort, serial.serial_for_url(url, baudrate=baudrate, timeout=timeout))


@dataclass
class LinkStats:
    """Counters of a :class:`Link`; :attr:`Link.stats` returns a copy."""

    #: Frames written, heartbeats, HELLOs and resends included.
    frames_sent: int = 0
    #: Requests sent again with the same ``seq`` (no answer in time, or a NAK for a damaged frame).
    resends: int = 0
    #: NAKs received, of any reason.
    naks: int = 0
    #: Sessions started after the first one (the link went down and came back, or the device reset).
    reconnects: int = 0
    #: Scenes the device acknowledged (each :meth:`Link.show` counted once).
    scenes_applied: int = 0
    #: Tries each of the latest acknowledged scenes took (1 = no resend), oldest first.
    scene_tries: tuple[int, ...] = ()
    #: Frames from the device the host dropped (damaged on the way).
    bad_frames: int = 0
    #: The last problem, in words ("" while there was none).
    last_error: str = ""

    @property
    def tries_histogram(self) -> dict[int, int]:
        """How many of :attr:`scene_tries` took each number of tries."""
        histogram: dict[int, int] = {}
        for tries in sorted(self.scene_tries):
            histogram[tries] = histogram.get(tries, 0) + 1
        return histogram


@dataclass
class _Request:
    """One request: what to send, and the thread's record of sending it."""

    type: int
    payload: bytes
    #: The scene's generation (the count of ``show`` calls) for a SET_SCENE, else 0.
    generation: int = 0
    seq: int = 0
    tries: int = 0
    #: Resends because the retry timer ran out (at most ``RETRIES``), and because of NAKs.
    timeouts: int = 0
    nak_resends: int = 0
    sent_at: float = 0.0
    frame: bytes = b""


@dataclass
class _Session:
    """The thread's state for one session (one HELLO_ACK) on one open port."""

    reader: FrameReader
    outstanding: _Request | None = None
    last_sent: float = 0.0
    last_heard: float = 0.0
    ping_seqs: deque[int] = field(default_factory=lambda: deque(maxlen=8))


class _LinkDownError(Exception):
    """The port failed or the device stopped answering: close the port and reconnect."""


class _DeviceResetError(Exception):
    """The device announced a reset: say HELLO again on the same port."""


class _RefusedError(Exception):
    """The device refused the session permanently (wrong firmware or LED count)."""


_SCENE = "scene"


class Link:
    """The LED controller, kept showing the latest scene by a background thread.

    ``url`` is a device path or a pyserial URL; ``led_count`` LEDs of the chain are in use and
    ``status_led`` is the one that shows the device's safe state. ``palette[i]`` is colour ``i``
    (``palette[0]`` must be dark); colours it lacks keep the default palette. ``opener`` opens a
    port from ``url`` instead of :func:`open_serial` (tests inject faults through it).

    All methods are safe from any thread; none blocks for long but the ``wait_*`` ones.
    """

    def __init__(
        self,
        url: str,
        led_count: int,
        status_led: int = 0,
        *,
        palette: Sequence[tuple[int, int, int]] | None = None,
        baudrate: int = protocol.BAUDRATE,
        opener: Callable[[str], Any] | None = None,
        boot_timeout: float = 3.0,
    ) -> None:
        self._hello = messages.hello(led_count, status_led)
        self._palette_payload: bytes | None = None
        if palette is not None:
            colours: tuple[Colour, ...] = messages.full_palette(palette)
            self._palette_payload = messages.palette(1, colours[1:])
        self.url = url
        self.led_count = led_count
        self.status_led = status_led
        self._baudrate = baudrate
        self._opener = opener
        self._boot_timeout = boot_timeout

        self._cond = threading.Condition()
        # Everything below is shared with the thread and guarded by self._cond.
        self._port: SerialPort | None = None
        self._thread: threading.Thread | None = None
        self._closing = False
        self._connected = False
        self._device: DeviceInfo | None = None
        self._stats = LinkStats()
        self._tries: deque[int] = deque(maxlen=TRIES_KEPT)
        # Scenes are counted by generation: the nth show() is generation n.
        self._scene: bytes | None = None
        self._scene_generation = 0
        # The generation the device acknowledged in the current session (0: none yet).
        self._shown_generation = 0
        self._shown_payload: bytes | None = None
        self._rejected_generation = 0
        self._counted_generation = 0
        self._queue: deque[_Request | str] = deque()
        self._palette_due = False
        # Thread-only state.
        self._seq = 0
        self._session: _Session | None = None
        # A scene still unacknowledged when its session ended keeps counting its tries.
        self._carried_tries: tuple[int, int] = (0, 0)

    # -- the public API --------------------------------------------------------------------------

    def start(self, *, open_port: bool = False) -> None:
        """Start the background thread, which opens the port and says HELLO; returns at once.

        With ``open_port`` the port is opened here first, so that one that cannot be opened at
        all (no such device, a bad URL) is an error at once rather than retried for ever: then
        :class:`PortError` is raised and no thread is started. Once started, a port that goes
        away (an unplug) is reopened by the thread in either case.
        """
        with self._cond:
            if self._closing:
                raise RuntimeError("a closed Link cannot be started again")
            if self._thread is not None:
                raise RuntimeError("the Link is already started")
        if open_port:
            try:
                self._open()
            except (OSError, ValueError) as error:
                failure = PortError(self.url, port_problem(error))
                self._note_error(str(failure))
                raise failure from None
        with self._cond:
            if self._thread is not None:
                raise RuntimeError("the Link is already started")
            self._thread = threading.Thread(target=self._run, name=f"led-link {self.url}", daemon=True)
            self._thread.start()

    def close(self) -> None:
        """Stop the thread and close the port; the device goes to its safe state a second later."""
        with self._cond:
            if self._closing:
                thread = None
            else:
                self._closing = True
                self._wake()
                self._cond.notify_all()
                thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=5.0)
            if thread.is_alive():
                _log.warning("LED link thread for %s did not stop in time", self.url)

    def __enter__(self) -> Link:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def show(self, leds: Sequence[int], brightness: int = 255) -> None:
        """Make ``leds`` (one :func:`~firmware_bridge.messages.led_byte` per LED) the scene to show.

        Returns at once; a newer scene replaces one not sent yet. Raises ``ValueError`` for a
        scene of the wrong length or a bad LED byte or brightness.
        """
        if len(leds) != self.led_count:
            raise ValueError(f"a scene for this link has {self.led_count} LEDs, not {len(leds)}")
        payload = messages.scene(leds, brightness)
        with self._cond:
            self._scene = payload
            self._scene_generation += 1
            if _SCENE not in self._queue:
                self._queue.append(_SCENE)
                self._wake()

    def blank(self, ms: int) -> None:
        """Turn every LED dark for ``ms`` milliseconds, then show the scene again.

        Queued behind earlier requests and sent once the link is up. One in flight when the
        link goes down is not sent again (it may have been applied already).
        """
        self._enqueue(_Request(protocol.BLANK, messages.blank(ms)))

    def self_test(self, step_ms: int) -> None:
        """Light each LED white in turn for ``step_ms`` milliseconds, then the scene again (queued as :meth:`blank`)."""
        self._enqueue(_Request(protocol.SELF_TEST, messages.self_test(step_ms)))

    def wait_shown(self, timeout: float) -> bool:
        """Whether the device acknowledged the latest :meth:`show` in its current session.

        Waits up to ``timeout`` seconds for that. After a reconnect or a device reset the scene
        counts as shown again only once the device acknowledged it again. True when no scene
        was ever shown; False at once when the device refused the latest scene.
        """
        with self._cond:
            self._cond.wait_for(
                lambda: self._scene_shown() or self._rejected_generation == self._scene_generation or self._closing,
                timeout,
            )
            return self._scene_shown()

    def wait_connected(self, timeout: float) -> bool:
        """Whether the device answered HELLO (and the link is up), waiting up to ``timeout`` seconds."""
        with self._cond:
            self._cond.wait_for(lambda: self._connected or self._closing, timeout)
            return self._connected

    @property
    def device(self) -> DeviceInfo | None:
        """What the device said in its last HELLO_ACK (None before the first)."""
        with self._cond:
            return self._device

    @property
    def connected(self) -> bool:
        """Whether the link is up: port open and HELLO answered."""
        with self._cond:
            return self._connected

    @property
    def stats(self) -> LinkStats:
        """A copy of the link's counters."""
        with self._cond:
            return LinkStats(
                frames_sent=self._stats.frames_sent,
                resends=self._stats.resends,
                naks=self._stats.naks,
                reconnects=self._stats.reconnects,
                scenes_applied=self._stats.scenes_applied,
                scene_tries=tuple(self._tries),
                bad_frames=self._stats.bad_frames,
                last_error=self._stats.last_error,
            )

    # -- caller side helpers (lock held) ---------------------------------------------------------

    def _enqueue(self, request: _Request) -> None:
        with self._cond:
            self._queue.append(request)
            self._wake()

    def _scene_shown(self) -> bool:
        return self._shown_generation == self._scene_generation

    def _wake(self) -> None:
        # Called with the lock held; the thread closes the port only under the lock, so the port
        # is open here. Interrupting its read lets a new request go out without waiting for the
        # read timeout.
        port = self._port
        cancel = getattr(port, "cancel_read", None)
        if cancel is not None:
            # A failing port is the thread's to notice.
            with contextlib.suppress(OSError, ValueError):
                cancel()

    # -- the thread ------------------------------------------------------------------------------

    def _run(self) -> None:
        try:
            self._loop()
        except Exception as error:  # a bug: say so, rather than let the LEDs go stale silently
            _log.exception("LED link thread for %s stopped", self.url)
            with self._cond:
                self._stats.last_error = f"internal error: {error!r}"
        finally:
            self._close_port()
            with self._cond:
                self._connected = False
                self._cond.notify_all()

    def _stopping(self) -> bool:
        with self._cond:
            return self._closing

    def _pause(self, seconds: float) -> None:
        with self._cond:
            self._cond.wait_for(lambda: self._closing, seconds)

    def _loop(self) -> None:
        sessions = 0
        # Only the first failure of an outage is worth a warning: the port is retried every
        # half second, forever.
        quiet = False
        # The port start(open_port=True) opened already, if any.
        with self._cond:
            first = self._port
        while not self._stopping():
            if first is not None:
                port: SerialPort | None = first
                first = None
            else:
                try:
                    port = self._open()
                except (OSError, ValueError) as error:
                    if not quiet:
                        _log.warning("cannot open LED link port %s (%s); retrying", self.url, error)
                        self._note_error(f"cannot open {self.url}: {port_problem(error)}")
                    quiet = True
                    self._pause(REOPEN_INTERVAL)
                    continue
            if port is None:
                return
            quiet = False
            opened_at = time.monotonic()
            reader = FrameReader()
            fresh_port = True
            try:
                while True:
                    info = self._handshake(port, reader, fresh_port)
                    fresh_port = False
                    if info is None:
                        return
                    self._begin_session(info, sessions)
                    sessions += 1
                    try:
                        self._serve(port, reader)
                        return
                    except _DeviceResetError:
                        _log.warning("LED controller on %s reset itself; saying HELLO again", self.url)
                        self._end_session()
            except _RefusedError:
                self._end_session()
                self._close_port()
                self._pause(REFUSED_INTERVAL)
            except (OSError, _LinkDownError) as error:
                # The error is on record before anyone waiting sees the link down.
                _log.warning("LED link on %s down (%s); reconnecting", self.url, error)
                self._note_error(f"link down: {error}")
                self._end_session()
                self._close_port()
                quiet = True
                # A port that worked for a while is tried again at once (the cable may be back
                # already); one that fails as soon as it opens must not make this loop spin.
                worked = time.monotonic() - opened_at > REOPEN_INTERVAL and isinstance(error, OSError)
                self._pause(0.0 if worked else REOPEN_INTERVAL)

    def _open(self) -> SerialPort | None:
        if self._opener is not None:
            port = cast(SerialPort, self._opener(self.url))
            if getattr(port, "timeout", READ_TIMEOUT) != READ_TIMEOUT:
                # Reads must come back often, for the timers and for close().
                port.timeout = READ_TIMEOUT
        else:
            port = open_serial(self.url, self._baudrate, READ_TIMEOUT)
        with self._cond:
            if self._closing:
                port.close()
                return None
            self._port = port
        return port

    def _close_port(self) -> None:
        with self._cond:
            port, self._port = self._port, None
        if port is not None:
            try:
                port.close()
            except OSError as error:
                _log.debug("closing %s: %s", self.url, error)

    def _note_error(self, message: str) -> None:
        with self._cond:
            self._stats.last_error = message

    def _next_seq(self) -> int:
        self._seq = (self._seq + 1) & 0xFF
        return self._seq

    def _send(self, port: SerialPort, session: _Session | None, type_: int, seq: int, payload: bytes) -> bytes:
        frame = encode_frame(type_, seq, payload)
        self._write(port, session, frame)
        return frame

    def _write(self, port: SerialPort, session: _Session | None, frame: bytes) -> None:
        port.write(frame)
        if session is not None:
            session.last_sent = time.monotonic()
        with self._cond:
            self._stats.frames_sent += 1

    def _read(self, port: SerialPort, reader: FrameReader) -> list[Frame]:
        data = port.read(max(1, port.in_waiting))
        rejected = reader.rejected
        frames = reader.feed(data)
        if reader.rejected != rejected:
            with self._cond:
                self._stats.bad_frames += reader.rejected - rejected
        return frames

    def _handshake(self, port: SerialPort, reader: FrameReader, fresh_port: bool) -> DeviceInfo | None:
        """HELLO until HELLO_ACK; None when closing. Raises ``_LinkDownError`` after ``boot_timeout``."""
        if fresh_port:
            port.reset_input_buffer()
            # Ends whatever half frame the device may hold from before.
            port.write(b"\x00")
        hello_seqs: set[int] = set()
        start = time.monotonic()
        next_hello = start
        while not self._stopping():
            now = time.monotonic()
            if now - start > self._boot_timeout:
                raise _LinkDownError(f"no HELLO_ACK within {self._boot_timeout:g} s")
            if now >= next_hello:
                seq = self._next_seq()
                hello_seqs.add(seq)
                self._send(port, None, protocol.HELLO, seq, self._hello)
                next_hello = now + HELLO_INTERVAL
            for frame in self._read(port, reader):
                if frame.type == protocol.HELLO_ACK and frame.seq in hello_seqs:
                    try:
                        return DeviceInfo.parse(frame.payload)
                    except messages.MessageError as error:
                        raise _RefusedError(self._refuse(f"bad HELLO_ACK: {error}")) from error
                if frame.type == protocol.BOOT:
                    # The device just reset (opening a Nano's port does that): it listens now.
                    _log.info("LED controller on %s booted", self.url)
                    next_hello = 0.0
                elif frame.type == protocol.NAK:
                    nak = self._parse_nak(frame)
                    if nak is None:
                        continue
                    if not nak.permanent:
                        next_hello = 0.0
                    elif frame.seq in hello_seqs:
                        raise _RefusedError(self._refuse(f"device refused HELLO: {nak}"))
        return None

    def _refuse(self, message: str) -> str:
        with self._cond:
            repeated = self._stats.last_error == message
            self._stats.last_error = message
        if not repeated:
            _log.error("LED link on %s: %s", self.url, message)
        return message

    def _parse_nak(self, frame: Frame) -> messages.Nak | None:
        with self._cond:
            self._stats.naks += 1
        try:
            return messages.Nak.parse(frame.payload)
        except messages.MessageError as error:
            _log.debug("ignoring %s", error)
            return None

    def _begin_session(self, info: DeviceInfo, sessions: int) -> None:
        with self._cond:
            previous = self._device
            self._device = info
            self._connected = True
            self._shown_generation = 0 if self._scene is None else -1
            self._shown_payload = None
            if sessions:
                self._stats.reconnects += 1
            # Everything the device should have, again: it may have reset, and HELLO cleared the scene.
            self._palette_due = self._palette_payload is not None
            if self._scene is not None and _SCENE not in self._queue:
                self._queue.appendleft(_SCENE)
            self._cond.notify_all()
        if previous is not None and previous.boot_id != info.boot_id:
            _log.warning(
                "LED controller on %s restarted (boot %d, reset cause %s)",
                self.url,
                info.boot_id,
                ", ".join(info.reset_causes) or "none",
            )
        if info.led_count != self.led_count:
            _log.warning("LED controller on %s uses %d LEDs, not %d", self.url, info.led_count, self.led_count)
        _log.info(
            "LED controller on %s: firmware %s, protocol %d.%d, boot %d, %d LEDs",
            self.url,
            info.firmware_version,
            info.proto_major,
            info.proto_minor,
            info.boot_id,
            info.led_count,
        )

    def _end_session(self) -> None:
        session, self._session = self._session, None
        if session is not None and session.outstanding is not None:
            request = session.outstanding
            if request.type == protocol.SET_SCENE:
                self._carried_tries = (request.generation, request.tries)
        with self._cond:
            self._connected = False
            self._shown_generation = 0 if self._scene is None else -1
            self._shown_payload = None
            self._cond.notify_all()

    def _take_request(self) -> _Request | None:
        """The next request to send, or None; with the lock held."""
        if self._palette_due:
            self._palette_due = False
            assert self._palette_payload is not None
            return _Request(protocol.SET_PALETTE, self._palette_payload)
        while self._queue:
            item = self._queue.popleft()
            if isinstance(item, _Request):
                return item
            assert self._scene is not None
            if self._scene == self._shown_payload:
                # The device shows exactly this already: nothing to send.
                self._shown_generation = self._scene_generation
                self._cond.notify_all()
                continue
            request = _Request(protocol.SET_SCENE, self._scene, self._scene_generation)
            if self._carried_tries[0] == request.generation:
                request.tries = self._carried_tries[1]
            return request
        return None

    def _serve(self, port: SerialPort, reader: FrameReader) -> None:
        """Run the session until closing; raises ``_LinkDownError``, ``_DeviceResetError`` or ``OSError``."""
        session = self._session = _Session(reader)
        session.last_heard = session.last_sent = time.monotonic()
        while True:
            with self._cond:
                if self._closing:
                    return
                request = self._take_request() if session.outstanding is None else None
            now = time.monotonic()
            if request is not None:
                request.seq = self._next_seq()
                session.outstanding = request
                self._transmit(port, session, request)
            elif session.outstanding is not None and now - session.outstanding.sent_at >= protocol.RETRY_MS / 1000:
                outstanding = session.outstanding
                if outstanding.timeouts >= protocol.RETRIES:
                    raise _LinkDownError(
                        f"no answer to {messages.message_name(outstanding.type)} after {outstanding.tries} tries"
                    )
                outstanding.timeouts += 1
                self._resend(port, session, outstanding, "no answer")
            elif session.outstanding is None and now - session.last_sent >= protocol.HEARTBEAT_MS / 1000:
                seq = self._next_seq()
                session.ping_seqs.append(seq)
                self._send(port, session, protocol.PING, seq, messages.ping())
            if now - session.last_heard > SILENCE_LIMIT:
                raise _LinkDownError(f"device silent for {now - session.last_heard:.1f} s")
            for frame in self._read(port, session.reader):
                session.last_heard = time.monotonic()
                self._handle(port, session, frame)

    def _transmit(self, port: SerialPort, session: _Session, request: _Request) -> None:
        request.frame = encode_frame(request.type, request.seq, request.payload)
        request.tries += 1
        request.sent_at = time.monotonic()
        self._write(port, session, request.frame)

    def _resend(self, port: SerialPort, session: _Session, request: _Request, why: str) -> None:
        _log.debug(
            "resending %s seq %d (%s, try %d)", messages.message_name(request.type), request.seq, why, request.tries + 1
        )
        with self._cond:
            self._stats.resends += 1
        request.tries += 1
        request.sent_at = time.monotonic()
        self._write(port, session, request.frame)

    def _handle(self, port: SerialPort, session: _Session, frame: Frame) -> None:
        outstanding = session.outstanding
        if frame.type == protocol.ACK:
            try:
                ack = messages.Ack.parse(frame.payload)
            except messages.MessageError as error:
                _log.debug("ignoring %s", error)
                return
            if outstanding is not None and frame.seq == outstanding.seq and ack.type == outstanding.type:
                session.outstanding = None
                self._completed(outstanding)
        elif frame.type == protocol.NAK:
            nak = self._parse_nak(frame)
            if nak is None:
                return
            if not nak.permanent:
                # A damaged frame, perhaps the outstanding request: resending it costs one frame
                # and saves waiting for the retry timer.
                if outstanding is not None:
                    outstanding.nak_resends += 1
                    if outstanding.nak_resends > MAX_NAK_RESENDS:
                        raise _LinkDownError(f"{outstanding.nak_resends} damaged frames in a row")
                    self._resend(port, session, outstanding, nak.reason_name)
            elif outstanding is not None and frame.seq == outstanding.seq and nak.type == outstanding.type:
                session.outstanding = None
                self._rejected(outstanding, nak)
        elif frame.type == protocol.PONG:
            if frame.seq not in session.ping_seqs:
                return
            try:
                pong = messages.Pong.parse(frame.payload)
            except messages.MessageError as error:
                _log.debug("ignoring %s", error)
                return
            if pong.safe:
                self._device_went_safe(session)
        elif frame.type == protocol.BOOT:
            raise _DeviceResetError()
        # A late HELLO_ACK (a repeated HELLO's) or anything unknown needs nothing.

    def _completed(self, request: _Request) -> None:
        with self._cond:
            if request.type != protocol.SET_SCENE:
                return
            self._shown_payload = request.payload
            if request.generation == self._scene_generation or request.payload == self._scene:
                self._shown_generation = self._scene_generation
            if request.generation > self._counted_generation:
                self._counted_generation = request.generation
                self._stats.scenes_applied += 1
                self._tries.append(request.tries)
            self._cond.notify_all()

    def _rejected(self, request: _Request, nak: messages.Nak) -> None:
        message = f"device refused {messages.message_name(request.type)}: {nak}"
        _log.error("LED link on %s: %s", self.url, message)
        with self._cond:
            self._stats.last_error = message
            if request.type == protocol.SET_SCENE:
                self._rejected_generation = request.generation
                self._cond.notify_all()

    def _device_went_safe(self, session: _Session) -> None:
        outstanding = session.outstanding
        with self._cond:
            if self._scene is None or _SCENE in self._queue:
                return
            if outstanding is not None and outstanding.type == protocol.SET_SCENE:
                return
            _log.warning("LED controller on %s is in its safe state; resending the scene", self.url)
            self._shown_generation = -1
            self._shown_payload = None
            self._queue.appendleft(_SCENE)
            self._cond.notify_all()
