# SPDX-License-Identifier: MIT
"""The host's link: against an in-process fake device for the rare paths, and the real firmware in simavr.

The fake (``FakeDevice``) can lose one particular ACK, NAK on cue or reset at a given moment,
which the real firmware cannot be made to do; everything the firmware can show is tested
against it, through the ``emulator`` fixture.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pytest

from firmware_bridge import faults, link, messages, protocol
from firmware_bridge.framing import Frame, FrameReader, encode_frame
from firmware_bridge.link import Link

if TYPE_CHECKING:
    from tests.firmware_bridge.conftest import Emulator

# -- a fake device ---------------------------------------------------------------------------------

#: What :attr:`FakeDevice.script` may answer for a request: act normally (None), "ignore" it
#: (as if lost on the way), apply it but "lose_reply", "garble" it (as if its CRC failed), or
#: send these frames instead of the normal reply.
Action = str | list[bytes] | None


@dataclass
class Received:
    """A frame the device got, and when (monotonic seconds)."""

    frame: Frame
    at: float


@dataclass
class FakeDevice:
    """The device; :meth:`open` is the ``opener`` (it fails while the device is unplugged)."""

    max_leds: int = protocol.MAX_LEDS
    boot_id: int = 1
    led_count: int = 0
    #: Called for each request; its answer decides what the device does (see :data:`Action`).
    script: Callable[[Frame], Action] | None = None
    #: While set the device ignores everything, like a Nano's bootloader after a reset.
    deaf: bool = False
    plugged: bool = True
    opened: int = 0
    received: list[Received] = field(default_factory=list)
    #: Payloads of the SET_SCENEs applied (duplicates are not applied again).
    scenes: list[bytes] = field(default_factory=list)
    applied: list[Frame] = field(default_factory=list)
    safe: bool = True
    pre_open_bytes: bytes = b""
    _last_applied: tuple[int, int] | None = None
    _cond: threading.Condition = field(default_factory=threading.Condition)
    _port: FakePort | None = None

    def open(self, url: str) -> FakePort:
        """Open a port to the device (the ``opener``)."""
        with self._cond:
            if not self.plugged:
                raise FileNotFoundError(2, "No such file or directory", url)
            self.opened += 1
            self._port = FakePort(self)
            # Bytes the device sent before the port was open, for reset_input_buffer to drop.
            self._port.rx += self.pre_open_bytes
            return self._port

    # -- the test's controls -------------------------------------------------------------------

    def unplug(self) -> None:
        """Pull the cable: open ports fail, and so does opening until :meth:`plug`."""
        with self._cond:
            self.plugged = False
            if self._port is not None:
                self._port.dead = True
            self._cond.notify_all()

    def plug(self) -> None:
        """Put the cable back: the device powers up again (a new boot)."""
        with self._cond:
            self._reset()
            self.plugged = True

    def reset(self) -> None:
        """Reset the device behind the host's back: it says BOOT on the open port."""
        with self._cond:
            self._reset()
            self._send(encode_frame(protocol.BOOT, 0, self.info().encode()))

    def go_safe(self) -> None:
        """Drop the scene, as after a second of silence."""
        with self._cond:
            self.safe = True

    def info(self) -> messages.DeviceInfo:
        """What HELLO_ACK and BOOT say."""
        return messages.DeviceInfo(
            protocol.PROTO_MAJOR, protocol.PROTO_MINOR, 9, 8, 7, self.max_leds, self.led_count, 0x1F,
            protocol.MAX_BODY, protocol.RESET_EXTERNAL, self.boot_id, 0, protocol.BRIGHTNESS_CAP,
        )  # fmt: skip

    def requests(self, type_: int) -> list[Received]:
        """The frames of one type received so far."""
        with self._cond:
            return [r for r in self.received if r.frame.type == type_]

    def wait_for(self, predicate: Callable[[], bool], timeout: float = 3.0) -> bool:
        """Wait until ``predicate()`` holds (checked whenever a frame arrives)."""
        with self._cond:
            return self._cond.wait_for(predicate, timeout)

    # -- the device ----------------------------------------------------------------------------

    def _reset(self) -> None:
        self.boot_id += 1
        self.safe = True
        self._last_applied = None

    def _send(self, frame: bytes) -> None:
        if self._port is not None and not self._port.dead:
            self._port.rx += frame
            self._cond.notify_all()

    def _receive(self, data: bytes, reader: FrameReader) -> None:
        rejected = reader.rejected
        frames = reader.feed(data)
        if reader.rejected != rejected and not self.deaf:
            assert reader.last_error is not None
            self._send(
                encode_frame(
                    protocol.NAK, protocol.SEQ_UNKNOWN, bytes((reader.last_error.reason, protocol.SEQ_UNKNOWN))
                )
            )
        for frame in frames:
            self.received.append(Received(frame, time.monotonic()))
            self._cond.notify_all()
            if self.deaf:
                continue
            action = self.script(frame) if self.script is not None else None
            if action == "ignore":
                continue
            if action == "garble":
                self._send(encode_frame(protocol.NAK, protocol.SEQ_UNKNOWN, bytes((protocol.NAK_BAD_CRC, 0xFF))))
                continue
            if isinstance(action, list):
                for reply in action:
                    self._send(reply)
                continue
            reply = self._answer(frame)
            if action != "lose_reply":
                self._send(reply)

    def _nak(self, frame: Frame, reason: int) -> bytes:
        return encode_frame(protocol.NAK, frame.seq, bytes((reason, frame.type)))

    def _answer(self, frame: Frame) -> bytes:
        if frame.type == protocol.HELLO:
            major, _minor, led_count, status_led = frame.payload
            if major != protocol.PROTO_MAJOR:
                return self._nak(frame, protocol.NAK_BAD_VERSION)
            if not 1 <= led_count <= self.max_leds:
                return self._nak(frame, protocol.NAK_BAD_LED_COUNT)
            if status_led >= led_count:
                return self._nak(frame, protocol.NAK_BAD_VALUE)
            self.led_count = led_count
            self._last_applied = None
            self.safe = True
            return encode_frame(protocol.HELLO_ACK, frame.seq, self.info().encode())
        if frame.type == protocol.PING:
            flags = protocol.FLAG_SAFE if self.safe else 0
            return encode_frame(protocol.PONG, frame.seq, messages.Pong(1234, flags, 0, 0).encode())
        if frame.type not in (protocol.SET_SCENE, protocol.SET_PALETTE, protocol.BLANK, protocol.SELF_TEST):
            return self._nak(frame, protocol.NAK_UNKNOWN_TYPE)
        if self._last_applied == (frame.type, frame.seq):
            return encode_frame(protocol.ACK, frame.seq, bytes((frame.type, protocol.ACK_DUPLICATE)))
        if frame.type == protocol.SET_SCENE:
            if len(frame.payload) != self.led_count + 1:
                return self._nak(frame, protocol.NAK_BAD_LED_COUNT)
            self.scenes.append(frame.payload)
            self.safe = False
        self.applied.append(frame)
        self._last_applied = (frame.type, frame.seq)
        return encode_frame(protocol.ACK, frame.seq, bytes((frame.type, protocol.ACK_APPLIED)))


@dataclass
class FakePort:
    """One open port to a :class:`FakeDevice`, pyserial-like."""

    device: FakeDevice
    timeout: float | None = 0.02
    rx: bytearray = field(default_factory=bytearray)
    dead: bool = False
    closed: bool = False
    written: bytearray = field(default_factory=bytearray)
    _cancelled: bool = False
    _reader: FrameReader = field(default_factory=FrameReader)

    def _check(self) -> None:
        if self.dead:
            raise OSError(5, "Input/output error")
        if self.closed:
            raise ValueError("port closed")

    @property
    def in_waiting(self) -> int:
        with self.device._cond:
            self._check()
            return len(self.rx)

    def read(self, size: int = 1) -> bytes:
        with self.device._cond:
            self.device._cond.wait_for(lambda: self.rx or self._cancelled or self.dead or self.closed, self.timeout)
            self._check()
            self._cancelled = False
            data = bytes(self.rx[:size])
            del self.rx[:size]
            return data

    def write(self, data: bytes, /) -> int:
        with self.device._cond:
            self._check()
            self.written += data
            self.device._receive(bytes(data), self._reader)
            return len(data)

    def reset_input_buffer(self) -> None:
        with self.device._cond:
            self._check()
            self.rx.clear()

    def cancel_read(self) -> None:
        with self.device._cond:
            self._cancelled = True
            self.device._cond.notify_all()

    def close(self) -> None:
        with self.device._cond:
            self.closed = True
            self.device._cond.notify_all()


# -- the link against the fake ------------------------------------------------------------------------

LEDS = 8


def scene_leds(i: int) -> list[int]:
    """A scene that differs from its neighbours (steady patterns, all colours used)."""
    return [messages.led_byte((i + k) % 15 + 1) for k in range(LEDS)]


def scene_payload(i: int, brightness: int = 255) -> bytes:
    return messages.scene(scene_leds(i), brightness)


@pytest.fixture
def device() -> FakeDevice:
    return FakeDevice()


@pytest.fixture
def make_link(device: FakeDevice) -> Iterator[Callable[..., Link]]:
    links: list[Link] = []

    def make(**kwargs: object) -> Link:
        kwargs.setdefault("opener", device.open)
        made = Link("fake://", LEDS, **kwargs)  # type: ignore[arg-type]
        links.append(made)
        made.start()
        return made

    yield make
    for made in links:
        made.close()


def sends(device: FakeDevice, type_: int) -> list[Received]:
    return device.requests(type_)


@dataclass
class Once:
    """A script: ``action`` for the first ``count`` frames of ``type_``, normal behaviour after."""

    type: int
    action: Action
    count: int = 1
    seen: list[Frame] = field(default_factory=list)

    def __call__(self, frame: Frame) -> Action:
        if frame.type != self.type or len(self.seen) >= self.count:
            return None
        self.seen.append(frame)
        return self.action


def test_the_handshake_flushes_then_sends_a_lone_zero_then_hello(
    device: FakeDevice, make_link: Callable[..., Link]
) -> None:
    # A BOOT and garbage sent before the port opened must be flushed, not answered with a second HELLO.
    device.pre_open_bytes = b"\x13\x37" + encode_frame(protocol.BOOT, 0, device.info().encode())
    link_ = make_link(status_led=3)
    assert link_.wait_connected(2.0)
    assert link_.connected
    port = device._port
    assert port is not None
    assert port.written[:1] == b"\x00"
    first = FrameReader().feed(bytes(port.written[1:]))[0]
    assert (first.type, first.payload) == (protocol.HELLO, messages.hello(LEDS, 3))
    assert link_.device == device.info()
    assert link_.device is not None and link_.device.led_count == LEDS
    assert len(sends(device, protocol.HELLO)) == 1
    assert link_.stats.bad_frames == 0


def test_hello_repeats_every_250_ms_while_the_bootloader_runs_and_boot_cuts_the_wait(
    device: FakeDevice, make_link: Callable[..., Link]
) -> None:
    device.deaf = True
    link_ = make_link()
    assert device.wait_for(lambda: len(device.requests(protocol.HELLO)) >= 3, 2.0)
    hellos = sends(device, protocol.HELLO)
    gaps = [b.at - a.at for a, b in itertools.pairwise(hellos)]
    assert all(0.2 <= gap <= 0.4 for gap in gaps), gaps
    # Every HELLO is a new request.
    assert len({h.frame.seq for h in hellos}) == len(hellos)
    with device._cond:
        device.deaf = False
        count = len(device.received)
        device.reset()
        booted = time.monotonic()
    assert link_.wait_connected(2.0)
    after_boot = [r for r in device.received[count:] if r.frame.type == protocol.HELLO]
    assert after_boot[0].at - booted < 0.1


def test_without_hello_ack_in_boot_timeout_the_port_is_opened_again(
    device: FakeDevice, make_link: Callable[..., Link]
) -> None:
    device.deaf = True
    link_ = make_link(boot_timeout=0.3)
    assert device.wait_for(lambda: device.opened >= 2, 3.0)
    assert not link_.connected
    assert "HELLO_ACK" in link_.stats.last_error
    device.deaf = False
    assert link_.wait_connected(3.0)
    assert link_.stats.reconnects == 0


def test_a_custom_palette_goes_before_the_scene(device: FakeDevice, make_link: Callable[..., Link]) -> None:
    colours = [(0, 0, 0), (1, 2, 3), (4, 5, 6)]
    link_ = make_link(palette=colours)
    link_.show(scene_leds(0), 77)
    assert link_.wait_shown(2.0)
    assert [f.type for f in device.applied] == [protocol.SET_PALETTE, protocol.SET_SCENE]
    assert device.applied[0].payload == messages.palette(1, messages.full_palette(colours)[1:])
    assert device.scenes == [scene_payload(0, 77)]


def test_the_latest_scene_replaces_those_not_sent_yet(device: FakeDevice, make_link: Callable[..., Link]) -> None:
    device.script = Once(protocol.SET_SCENE, "ignore")
    link_ = make_link()
    link_.show(scene_leds(1))
    assert device.wait_for(lambda: len(sends(device, protocol.SET_SCENE)) == 1)
    for i in range(2, 21):
        link_.show(scene_leds(i))
    assert link_.wait_shown(3.0)
    assert device.scenes == [scene_payload(1), scene_payload(20)]
    assert link_.stats.scene_tries == (2, 1)
    assert link_.stats.scenes_applied == 2


def test_a_lost_ack_means_a_resend_with_the_same_seq_applied_once(
    device: FakeDevice, make_link: Callable[..., Link]
) -> None:
    device.script = Once(protocol.SET_SCENE, "lose_reply")
    link_ = make_link()
    link_.show(scene_leds(1))
    assert link_.wait_shown(2.0)
    sent = sends(device, protocol.SET_SCENE)
    assert len(sent) == 2
    assert sent[0].frame == sent[1].frame
    assert sent[1].at - sent[0].at >= protocol.RETRY_MS / 1000 * 0.9
    assert device.scenes == [scene_payload(1)]
    stats = link_.stats
    assert (stats.resends, stats.scene_tries, stats.tries_histogram) == (1, (2,), {2: 1})


def test_a_nak_for_a_damaged_frame_is_answered_by_resending_at_once(
    device: FakeDevice, make_link: Callable[..., Link]
) -> None:
    device.script = Once(protocol.SET_SCENE, "garble")
    link_ = make_link()
    link_.show(scene_leds(1))
    assert link_.wait_shown(2.0)
    sent = sends(device, protocol.SET_SCENE)
    assert len(sent) == 2
    assert sent[1].at - sent[0].at < protocol.RETRY_MS / 1000 / 2
    assert (link_.stats.naks, link_.stats.resends) == (1, 1)


def test_replies_are_matched_by_type_and_seq_not_by_order(device: FakeDevice, make_link: Callable[..., Link]) -> None:
    def stale(frame: Frame) -> Action:
        if frame.type != protocol.SET_SCENE or len(sends(device, protocol.SET_SCENE)) > 1:
            return None
        wrong_seq = encode_frame(protocol.ACK, (frame.seq - 1) & 0xFF, bytes((protocol.SET_SCENE, 0)))
        wrong_type = encode_frame(protocol.ACK, frame.seq, bytes((protocol.BLANK, 0)))
        return [wrong_seq, wrong_type]

    device.script = stale
    link_ = make_link()
    link_.show(scene_leds(1))
    assert link_.wait_shown(2.0)
    sent = sends(device, protocol.SET_SCENE)
    assert len(sent) == 2
    assert sent[1].at - sent[0].at >= protocol.RETRY_MS / 1000 * 0.9


def test_a_refused_request_is_an_error_and_not_resent(
    device: FakeDevice, make_link: Callable[..., Link], caplog: pytest.LogCaptureFixture
) -> None:
    def refuse_blank(frame: Frame) -> Action:
        if frame.type == protocol.BLANK:
            return [encode_frame(protocol.NAK, frame.seq, bytes((protocol.NAK_UNKNOWN_TYPE, protocol.BLANK)))]
        return None

    device.script = refuse_blank
    link_ = make_link()
    link_.blank(100)
    link_.show(scene_leds(1))
    # Stop-and-wait: the scene goes out only once the BLANK is done with.
    assert link_.wait_shown(2.0)
    assert len(sends(device, protocol.BLANK)) == 1
    assert "unknown type" in link_.stats.last_error
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1 and "BLANK" in errors[0].getMessage()
    caplog.clear()


def test_a_refused_scene_ends_wait_shown_at_once(
    device: FakeDevice, make_link: Callable[..., Link], caplog: pytest.LogCaptureFixture
) -> None:
    def refuse(frame: Frame) -> Action:
        if frame.type == protocol.SET_SCENE:
            return [encode_frame(protocol.NAK, frame.seq, bytes((protocol.NAK_BAD_VALUE, protocol.SET_SCENE)))]
        return None

    device.script = refuse
    link_ = make_link()
    link_.show(scene_leds(1))
    started = time.monotonic()
    assert not link_.wait_shown(5.0)
    assert time.monotonic() - started < 1.0
    assert len(sends(device, protocol.SET_SCENE)) == 1
    assert "bad value" in link_.stats.last_error
    assert any(r.levelno == logging.ERROR for r in caplog.records)
    caplog.clear()


def test_a_refused_hello_is_logged_once_and_retried_slowly(
    device: FakeDevice,
    make_link: Callable[..., Link],
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(link, "REFUSED_INTERVAL", 0.2)
    device.max_leds = LEDS - 1
    link_ = make_link()
    assert device.wait_for(lambda: device.opened >= 3, 3.0)
    assert not link_.connected
    assert "bad LED count" in link_.stats.last_error
    # One HELLO per attempt: a refusal is not hammered.
    assert len(sends(device, protocol.HELLO)) <= device.opened
    assert len([r for r in caplog.records if r.levelno == logging.ERROR]) == 1
    caplog.clear()


def test_when_resends_run_out_the_link_reconnects_and_restores_the_scene(
    device: FakeDevice, make_link: Callable[..., Link], caplog: pytest.LogCaptureFixture
) -> None:
    link_ = make_link()
    link_.show(scene_leds(1))
    assert link_.wait_shown(2.0)
    device.script = Once(protocol.SET_SCENE, "ignore", count=1 + protocol.RETRIES)
    link_.show(scene_leds(2))
    assert device.wait_for(lambda: device.opened == 2, 3.0)
    assert link_.wait_shown(3.0)
    assert device.scenes == [scene_payload(1), scene_payload(2)]
    sent = [r.frame.payload for r in sends(device, protocol.SET_SCENE)]
    assert sent.count(scene_payload(2)) == 1 + protocol.RETRIES + 1
    stats = link_.stats
    assert stats.reconnects == 1
    assert stats.resends == protocol.RETRIES
    # Tries count across the reconnect.
    assert stats.scene_tries == (1, protocol.RETRIES + 2)
    assert any("down" in r.getMessage() for r in caplog.records if r.levelno == logging.WARNING)


def test_an_unplugged_device_is_found_again_and_shown_the_scene(
    device: FakeDevice, make_link: Callable[..., Link]
) -> None:
    link_ = make_link()
    link_.show(scene_leds(1))
    assert link_.wait_shown(2.0)
    device.unplug()
    assert device.wait_for(lambda: not link_.connected, 2.0)
    assert not link_.wait_shown(0.0)
    assert link_.stats.last_error.startswith("link down")
    device.plug()
    assert link_.wait_shown(3.0)
    assert device.scenes == [scene_payload(1), scene_payload(1)]
    assert link_.device is not None and link_.device.boot_id == 2
    assert link_.stats.reconnects == 1
    assert link_.stats.scenes_applied == 1


def test_a_device_reset_behind_the_hosts_back_gets_palette_and_scene_again(
    device: FakeDevice, make_link: Callable[..., Link]
) -> None:
    link_ = make_link(palette=[(0, 0, 0), (9, 9, 9)])
    link_.show(scene_leds(1))
    assert link_.wait_shown(2.0)
    applied = len(device.applied)
    device.reset()
    assert device.wait_for(lambda: len(device.applied) == applied + 2, 2.0)
    assert [f.type for f in device.applied[applied:]] == [protocol.SET_PALETTE, protocol.SET_SCENE]
    assert link_.wait_shown(1.0)
    assert device.opened == 1
    assert link_.device is not None and link_.device.boot_id == 2


def test_a_pong_in_the_safe_state_brings_the_scene_back(device: FakeDevice, make_link: Callable[..., Link]) -> None:
    link_ = make_link()
    link_.show(scene_leds(1))
    assert link_.wait_shown(2.0)
    device.go_safe()
    assert device.wait_for(lambda: len(device.scenes) == 2, 2.0)
    assert device.scenes[1] == scene_payload(1)
    assert link_.wait_shown(1.0)
    assert link_.stats.scenes_applied == 1


def test_an_idle_link_pings_every_250_ms(device: FakeDevice, make_link: Callable[..., Link]) -> None:
    make_link()
    assert device.wait_for(lambda: len(sends(device, protocol.PING)) >= 4, 3.0)
    pings = sends(device, protocol.PING)
    gaps = [b.at - a.at for a, b in itertools.pairwise(pings)]
    assert all(0.2 <= gap <= 0.35 for gap in gaps), gaps


def test_a_silent_device_is_taken_for_gone(
    device: FakeDevice, make_link: Callable[..., Link], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(link, "SILENCE_LIMIT", 0.6)
    device.script = lambda frame: "ignore" if frame.type == protocol.PING else None
    link_ = make_link()
    assert link_.wait_connected(2.0)
    assert device.wait_for(lambda: device.opened == 2, 3.0)
    assert "silent" in link_.stats.last_error


def test_blank_and_self_test_reach_the_device(device: FakeDevice, make_link: Callable[..., Link]) -> None:
    link_ = make_link()
    link_.blank(300)
    link_.self_test(40)
    assert device.wait_for(lambda: len(device.applied) == 2, 2.0)
    assert [(f.type, f.payload) for f in device.applied] == [
        (protocol.BLANK, b"\x01\x2c"),
        (protocol.SELF_TEST, b"\x00\x28"),
    ]


def test_the_same_scene_again_is_not_sent_again(device: FakeDevice, make_link: Callable[..., Link]) -> None:
    link_ = make_link()
    link_.show(scene_leds(1))
    assert link_.wait_shown(2.0)
    link_.show(scene_leds(1))
    assert link_.wait_shown(1.0)
    link_.show(scene_leds(2))
    assert link_.wait_shown(1.0)
    assert len(sends(device, protocol.SET_SCENE)) == 2


def test_show_validates_and_never_waits() -> None:
    link_ = Link("loop://", LEDS)
    with pytest.raises(ValueError, match="8 LEDs"):
        link_.show([0] * (LEDS - 1))
    with pytest.raises(ValueError, match="pattern"):
        link_.show([0x15] * LEDS)
    with pytest.raises(ValueError, match="brightness"):
        link_.show([0] * LEDS, 256)
    with pytest.raises(ValueError):
        Link("loop://", 97)
    with pytest.raises(ValueError):
        Link("loop://", 8, status_led=8)
    with pytest.raises(ValueError, match="always dark"):
        Link("loop://", 8, palette=[(1, 1, 1)])
    assert link_.wait_shown(0.0)
    link_.show(scene_leds(1))
    assert not link_.wait_shown(0.01)
    assert not link_.wait_connected(0.01)
    assert link_.device is None
    link_.close()


def test_close_is_idempotent_and_closes_the_port(device: FakeDevice) -> None:
    with Link("fake://", LEDS, opener=device.open) as link_:
        assert link_.wait_connected(2.0)
        port = device._port
    assert port is not None and port.closed
    assert not link_.connected
    link_.close()
    with pytest.raises(RuntimeError):
        link_.start()
    assert not [t for t in threading.enumerate() if t.name.startswith("led-link fake")]


def test_a_port_that_cannot_be_opened_at_the_start_is_an_error_at_once(
    device: FakeDevice, caplog: pytest.LogCaptureFixture
) -> None:
    device.unplug()
    link_ = Link("fake://", LEDS, opener=device.open)
    started = time.monotonic()
    with pytest.raises(link.PortError, match=r"^cannot open fake://: no such device$") as caught:
        link_.start(open_port=True)
    assert time.monotonic() - started < 0.5
    assert (caught.value.url, caught.value.reason) == ("fake://", "no such device")
    assert link_.stats.last_error == "cannot open fake://: no such device"
    # Said once, by the caller: no thread retrying, no warning in the log.
    assert not [t for t in threading.enumerate() if t.name.startswith("led-link fake")]
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    link_.close()


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("bogus://x", "cannot open bogus://x: invalid URL, protocol 'bogus' not known"),
        ("", "cannot open the port (none given): no such device"),
        ("/nonexistent/ttyUSB9", "cannot open /nonexistent/ttyUSB9: no such device"),
    ],
)
def test_a_bad_url_or_no_port_at_all_is_refused_at_once(url: str, message: str) -> None:
    link_ = Link(url, LEDS)
    with pytest.raises(link.PortError) as caught:
        link_.start(open_port=True)
    assert str(caught.value) == message
    link_.close()


def test_a_port_opened_at_the_start_is_still_reconnected_after_an_unplug(device: FakeDevice) -> None:
    link_ = Link("fake://", LEDS, opener=device.open)
    link_.start(open_port=True)
    try:
        assert device.opened == 1
        link_.show(scene_leds(1))
        assert link_.wait_shown(2.0)
        device.unplug()
        assert device.wait_for(lambda: not link_.connected, 2.0)
        device.plug()
        assert link_.wait_shown(3.0)
        assert device.opened == 2 and link_.stats.reconnects == 1
    finally:
        link_.close()


def test_why_a_port_would_not_open_is_said_in_a_few_words() -> None:
    assert link.port_problem(PermissionError(13, "Permission denied")).startswith("permission denied")
    assert "dialout" in link.port_problem(PermissionError(13, "Permission denied"))
    assert link.port_problem(OSError(16, "Device or resource busy")).startswith("the port is busy")
    assert link.port_problem(IsADirectoryError(21, "Is a directory")) == "a folder, not a serial port"
    assert link.port_problem(OSError("no ports found matching regexp 'dead:beef'")) == (
        "no ports found matching regexp 'dead:beef'"
    )


def test_every_scene_arrives_in_order_through_a_noisy_line(device: FakeDevice, make_link: Callable[..., Link]) -> None:
    ports: list[faults.FaultyPort] = []
    link_ = make_link(opener=faults.faulty_opener(0.1, 0.01, seed=3, opener=device.open, ports=ports))
    for i in range(30):
        link_.show(scene_leds(i), brightness=i)
        assert link_.wait_shown(5.0), i
    distinct = [p for k, p in enumerate(device.scenes) if k == 0 or device.scenes[k - 1] != p]
    assert distinct == [scene_payload(i, i) for i in range(30)]
    stats = link_.stats
    assert sum(stats.tries_histogram.values()) == 30
    assert stats.resends > 0
    assert sum(p.tx.frames_dropped + p.rx.frames_dropped for p in ports) > 0


# -- the link against the real firmware, in simavr -------------------------------------------------
#
# The ``emulator`` fixture comes from this directory's conftest.py. LED data there is what the
# chain latched, G, R, B per LED; a refresh may cover more LEDs than the scene (the first after a
# reset covers the longest chain), so scenes are compared on their own LEDs.

EMU_LEDS = 16
STATUS_LED = 2


def emu_scene(i: int) -> list[int]:
    """Every LED lit, steady, and each scene different from its neighbours."""
    return [messages.led_byte((i + k) % 15 + 1) for k in range(EMU_LEDS)]


def emu_expected(i: int, brightness: int) -> bytes:
    return messages.expected_wire_bytes(emu_scene(i), brightness)


def showing(expected: bytes) -> Callable[[bytes], bool]:
    return lambda data: data[: len(expected)] == expected


def safe_state(data: bytes) -> bool:
    """Every LED dark but the status LED, which pulses amber (red, some green, no blue)."""
    status = data[3 * STATUS_LED : 3 * STATUS_LED + 3]
    others = data[: 3 * STATUS_LED] + data[3 * STATUS_LED + 3 : 3 * EMU_LEDS]
    if len(status) < 3:
        return False
    green, red, blue = status
    return not any(others) and red > 0 and blue == 0 and green < red


@pytest.fixture
def emu_link(emulator: Emulator) -> Iterator[Link]:
    with Link(emulator.port, EMU_LEDS, STATUS_LED) as link_:
        assert link_.wait_connected(5.0)
        yield link_


def test_the_handshake_with_the_firmware(emulator: Emulator, emu_link: Link) -> None:
    info = emu_link.device
    assert info is not None
    assert (info.proto_major, info.proto_minor) == (protocol.PROTO_MAJOR, protocol.PROTO_MINOR)
    assert (info.max_leds, info.max_body, info.brightness_cap) == (
        protocol.MAX_LEDS,
        protocol.MAX_BODY,
        protocol.BRIGHTNESS_CAP,
    )
    assert (info.led_count, info.status_led) == (EMU_LEDS, STATUS_LED)
    assert info.capability_names == ("rgb", "animation", "blank", "self-test", "palette")
    assert info.reset_causes  # the firmware reports why it started
    # Without a scene the device stays in its safe state on the status LED the HELLO named.
    emulator.wait_leds(safe_state, 3.0)


def test_a_scene_puts_the_expected_colours_on_the_chain(emulator: Emulator, emu_link: Link) -> None:
    for i, brightness in ((0, 255), (1, 40), (2, 96), (3, 0)):
        emu_link.show(emu_scene(i), brightness)
        assert emu_link.wait_shown(3.0)
        emulator.wait_leds(showing(emu_expected(i, brightness)), 3.0)
    emu_link.close()
    colours = [(0, 0, 0), (10, 20, 30), (200, 100, 50)]
    leds = [messages.led_byte(1 + k % 2) for k in range(EMU_LEDS)]
    with Link(emulator.port, EMU_LEDS, STATUS_LED, palette=colours) as custom:
        custom.show(leds, 255)
        assert custom.wait_shown(5.0)
        emulator.wait_leds(showing(messages.expected_wire_bytes(leds, 255, colours)), 3.0)


def test_show_from_many_threads_ends_with_the_latest_scene(emulator: Emulator, emu_link: Link) -> None:
    order = threading.Lock()
    latest: list[int] = []
    barrier = threading.Barrier(4)

    def hammer(offset: int) -> None:
        barrier.wait()
        for k in range(25):
            i = offset + 4 * k
            with order:  # so that "the latest show()" is well defined
                emu_link.show(emu_scene(i), 10 + i)
                latest[:] = [i]

    threads = [threading.Thread(target=hammer, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert emu_link.wait_shown(3.0)
    expected = emu_expected(latest[0], 10 + latest[0])
    emulator.wait_leds(showing(expected), 3.0)
    assert showing(expected)(emulator.leds[-1][1])
    assert emu_link.stats.last_error == ""


def test_every_scene_is_applied_in_order_through_a_noisy_line(emulator: Emulator) -> None:
    ports: list[faults.FaultyPort] = []
    opener = faults.faulty_opener(drop=0.1, corrupt=0.01, seed=11, ports=ports)
    count = 30
    with Link(emulator.port, EMU_LEDS, STATUS_LED, opener=opener) as noisy:
        for i in range(count):
            noisy.show(emu_scene(i), 20 + i)
            assert noisy.wait_shown(6.0), f"scene {i}: {noisy.stats}"
        emulator.wait_leds(showing(emu_expected(count - 1, 20 + count - 1)), 3.0)
        stats = noisy.stats
    expected = {emu_expected(i, 20 + i): i for i in range(count)}
    seen = [expected[d[: 3 * EMU_LEDS]] for _, d in emulator.leds if d[: 3 * EMU_LEDS] in expected]
    shown = [i for k, i in enumerate(seen) if k == 0 or seen[k - 1] != i]
    assert shown == list(range(count))
    assert sum(stats.tries_histogram.values()) == count
    assert stats.resends > 0
    assert sum(p.tx.frames_dropped + p.tx.bytes_corrupted for p in ports) > 0


def test_an_unplugged_device_shows_the_scene_again_once_back(emulator: Emulator, emu_link: Link) -> None:
    emu_link.show(emu_scene(5), 60)
    expected = emu_expected(5, 60)
    assert emu_link.wait_shown(3.0)
    emulator.wait_leds(showing(expected), 3.0)
    emulator.kill()
    # Replugged at once: the killed harness cannot remove its link, and a dangling link could
    # meanwhile name another test's new pseudo-terminal (they run in parallel).
    emulator.start()
    # No new show(): the link finds the device again and restores the scene by itself.
    emulator.wait_leds(showing(expected), 5.0)
    assert emu_link.connected
    stats = emu_link.stats
    assert stats.reconnects == 1
    assert stats.last_error.startswith("link down")


def test_the_heartbeat_keeps_the_device_from_going_safe(emulator: Emulator, emu_link: Link) -> None:
    emu_link.show(emu_scene(7), 80)
    expected = emu_expected(7, 80)
    assert emu_link.wait_shown(3.0)
    emulator.wait_leds(showing(expected), 3.0)
    mark = emulator.mark()
    first = len(emulator.rx)
    # Ten more frames arrive only from the heartbeat: about 2.5 s of simulated time.
    end = emulator.wait_rx(first + 10, 5.0)
    assert end - emulator.rx[first - 1] > 2 * protocol.LINK_TIMEOUT_MS
    gaps = [b - a for a, b in itertools.pairwise(emulator.rx[first - 1 : first + 10])]
    assert max(gaps) < protocol.LINK_TIMEOUT_MS / 2
    assert all(showing(expected)(data) for _, data in emulator.leds[mark:])
    assert emu_link.stats.reconnects == 0


def test_after_close_the_device_goes_safe_within_its_timeout(emulator: Emulator, emu_link: Link) -> None:
    emu_link.show(emu_scene(9), 90)
    assert emu_link.wait_shown(3.0)
    emulator.wait_leds(showing(emu_expected(9, 90)), 3.0)
    emu_link.close()
    last_frame_ms = emulator.rx[-1]
    mark = emulator.mark()
    went_safe_ms, _ = emulator.wait_leds(safe_state, 3.0, start=mark)
    assert went_safe_ms - last_frame_ms <= protocol.LINK_TIMEOUT_MS + 200


def test_blank_darkens_the_chain_then_shows_the_scene_again(emulator: Emulator, emu_link: Link) -> None:
    emu_link.show(emu_scene(3), 50)
    expected = emu_expected(3, 50)
    assert emu_link.wait_shown(3.0)
    emulator.wait_leds(showing(expected), 3.0)
    mark = emulator.mark()
    emu_link.blank(200)
    dark_ms, _ = emulator.wait_leds(lambda data: not any(data[: 3 * EMU_LEDS]), 3.0, start=mark)
    back_ms, _ = emulator.wait_leds(showing(expected), 3.0, start=mark + 1)
    assert 190 <= back_ms - dark_ms <= 260
