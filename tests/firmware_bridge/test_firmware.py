# SPDX-License-Identifier: MIT
"""The real LED firmware in the emulator, driven with raw frames: the messages of PROTOCOL.md.

What the LEDs show is read from the data pin's WS2812 bit stream (the harness's LEDS lines), and
every time compared is simulated time.
"""

from __future__ import annotations

import itertools
import random
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import serial

from firmware_bridge import protocol
from firmware_bridge.framing import Frame, FrameReader, cobs_encode, crc16, encode_frame

if TYPE_CHECKING:
    from conftest import Emulator

ROOT = Path(__file__).resolve().parents[2]

Palette = Sequence[tuple[int, int, int]]

#: The safe state's amber on the status LED, before the pulse scales it (G, R at the cap).
AMBER_R = protocol.DEFAULT_PALETTE[protocol.SAFE_COLOUR][0] * (protocol.BRIGHTNESS_CAP + 1) >> 8
AMBER_G = protocol.DEFAULT_PALETTE[protocol.SAFE_COLOUR][1] * (protocol.BRIGHTNESS_CAP + 1) >> 8


# -- helpers ------------------------------------------------------------------------------------


class Wire:
    """Raw frames to and from the device over a pyserial port."""

    def __init__(self, port: serial.Serial) -> None:
        self.port = port
        self.reader = FrameReader()
        self.pending: list[Frame] = []
        self.boot: Frame | None = None

    def write(self, data: bytes) -> None:
        self.port.write(data)

    def send(self, type_: int, seq: int, payload: bytes = b"", version: int = protocol.PROTO_MAJOR) -> None:
        self.port.write(encode_frame(type_, seq, payload, version))

    def next_frame(self, timeout: float = 2.0) -> Frame:
        deadline = time.monotonic() + timeout
        while not self.pending:
            if time.monotonic() > deadline:
                raise AssertionError(f"no frame from the device within {timeout} s")
            self.pending += self.reader.feed(self.port.read(256))
        return self.pending.pop(0)

    def request(self, type_: int, seq: int, payload: bytes = b"", version: int = protocol.PROTO_MAJOR) -> Frame:
        """Send one request and return the device's next frame, which must answer it."""
        self.send(type_, seq, payload, version)
        reply = self.next_frame()
        assert reply.seq == seq, f"reply {reply} to request type 0x{type_:02X} seq {seq}"
        return reply

    def expect_ack(self, type_: int, seq: int, payload: bytes = b"", status: int = protocol.ACK_APPLIED) -> None:
        reply = self.request(type_, seq, payload)
        assert (reply.type, reply.payload) == (protocol.ACK, bytes((type_, status))), reply

    def expect_nak(
        self, type_: int, seq: int, payload: bytes, reason: int, version: int = protocol.PROTO_MAJOR
    ) -> None:
        reply = self.request(type_, seq, payload, version)
        assert (reply.type, reply.payload) == (protocol.NAK, bytes((reason, type_))), reply

    def ping(self, seq: int) -> tuple[int, int, int, int]:
        """PING: the PONG's uptime_ms, flags, scene_seq and bad_frames."""
        pong = self.request(protocol.PING, seq)
        assert pong.type == protocol.PONG and len(pong.payload) == protocol.PONG_SIZE, pong
        return int.from_bytes(pong.payload[:4], "big"), pong.payload[4], pong.payload[5], pong.payload[6]

    def hello(self, seq: int, led_count: int, status_led: int = 0) -> Frame:
        reply = self.request(
            protocol.HELLO, seq, bytes((protocol.PROTO_MAJOR, protocol.PROTO_MINOR, led_count, status_led))
        )
        assert reply.type == protocol.HELLO_ACK, reply
        return reply


def led(colour: int, pattern: int = protocol.PATTERN_STEADY) -> int:
    return colour << 4 | pattern


def scene(brightness: int, cells: Sequence[int]) -> bytes:
    return bytes((brightness, *cells))


def channel(value: int, brightness: int) -> int:
    """PROTOCOL.md's brightness formula."""
    return value * (min(brightness, protocol.BRIGHTNESS_CAP) + 1) >> 8


def on_wire(cells: Sequence[int], brightness: int, palette: Palette = protocol.DEFAULT_PALETTE) -> bytes:
    """What steady LEDs send down the chain: G, R, B per LED."""
    out = bytearray()
    for cell in cells:
        r, g, b = palette[cell >> 4]
        out += bytes(channel(c, brightness) for c in (g, r, b))
    return bytes(out)


def showing(expected: bytes) -> Callable[[bytes], bool]:
    """A LEDS predicate: exactly ``expected`` on the chain."""
    return lambda data: data == expected


def rgb_at(data: bytes, index: int) -> tuple[int, int, int]:
    """LED ``index`` of a LEDS line as (R, G, B)."""
    g, r, b = data[3 * index : 3 * index + 3]
    return r, g, b


def is_amber(data: bytes, index: int) -> bool:
    """Whether LED ``index`` shows the safe state's amber at some pulse level above dark."""
    r, g, b = rgb_at(data, index)
    return b == 0 and r > 0 and any((AMBER_R * k >> 8, AMBER_G * k >> 8) == (r, g) for k in range(1, 257))


def only_lit(data: bytes, index: int) -> bool:
    """Whether every LED but ``index`` is dark."""
    return all(v == 0 for i, v in enumerate(data) if i // 3 != index)


def triangle(phase: float, period: int) -> int:
    """The firmware's pulse level (0-255) at ``phase`` ms into ``period``."""
    half = period // 2
    rise = phase if phase < half else period - phase
    return int(rise) * 255 // half


def uptime_origin(wire: Wire, emulator: Emulator, seq: int) -> float:
    """The simulated time at which the device's uptime was 0, from a PING's RX time and PONG."""
    count = len(emulator.rx)
    uptime, _flags, _scene_seq, _bad = wire.ping(seq)
    return emulator.wait_rx(count + 1) - uptime


@pytest.fixture
def wire(emulator: Emulator) -> Iterator[Wire]:
    """The emulator's port, opened, with the BOOT the opening caused already read."""
    with emulator.open_serial() as port:
        w = Wire(port)
        w.boot = w.next_frame(timeout=5.0)
        yield w


# -- tests --------------------------------------------------------------------------------------


def test_the_committed_header_is_generated_from_protocol_py() -> None:
    committed = (ROOT / "firmware_bridge" / "avr" / "bgl_protocol.h").read_text()
    assert committed == protocol.c_header(), "run `make firmware` to regenerate firmware_bridge/avr/bgl_protocol.h"


def test_boot_is_sent_unasked_and_the_device_starts_in_the_safe_state(emulator: Emulator, wire: Wire) -> None:
    boot = wire.boot
    assert boot is not None and boot.type == protocol.BOOT and boot.seq == 0
    assert len(boot.payload) == protocol.HELLO_ACK_SIZE
    (
        major,
        minor,
        _fw_major,
        _fw_minor,
        _fw_patch,
        max_leds,
        led_count,
        caps,
        max_body,
        cause,
        id_hi,
        id_lo,
        status_led,
        cap,
    ) = boot.payload
    assert (major, minor) == (protocol.PROTO_MAJOR, protocol.PROTO_MINOR)
    assert max_leds == protocol.MAX_LEDS == 96
    # A blank EEPROM (the emulator's) gives the documented defaults: 64 LEDs, status LED 0.
    assert (led_count, status_led) == (64, 0)
    every_capability = (
        protocol.CAP_RGB | protocol.CAP_ANIMATION | protocol.CAP_BLANK | protocol.CAP_SELF_TEST | protocol.CAP_PALETTE
    )
    assert caps == every_capability
    assert max_body == protocol.MAX_BODY
    assert cause == protocol.RESET_POWER_ON
    assert (id_hi << 8 | id_lo) == 0  # the first boot of a blank EEPROM
    assert cap == protocol.BRIGHTNESS_CAP

    # The first refresh darkens the longest chain (a reset may leave an old scene lit) ...
    assert emulator.wait_leds(lambda d: True)[1] == bytes(3 * protocol.MAX_LEDS)
    # ... then LED 0 pulses amber, everything else dark.
    first = emulator.wait_leds(lambda d: len(d) == 3 * 64 and is_amber(d, 0) and only_lit(d, 0))
    later = emulator.wait_leds(lambda d: is_amber(d, 0) and d != first[1], start=emulator.leds.index(first))
    assert only_lit(later[1], 0)

    _uptime, flags, scene_seq, bad_frames = wire.ping(1)
    assert (flags, scene_seq, bad_frames) == (protocol.FLAG_SAFE, 0, 0)


def test_hello_ack_echoes_the_configuration_and_the_safe_state_moves_to_the_status_led(
    emulator: Emulator, wire: Wire
) -> None:
    ack = wire.hello(7, led_count=12, status_led=5)
    assert ack.seq == 7 and len(ack.payload) == protocol.HELLO_ACK_SIZE
    assert ack.payload[6] == 12 and ack.payload[12] == 5
    assert wire.boot is not None and ack.payload[:6] == wire.boot.payload[:6]
    assert ack.payload[9:12] == bytes((protocol.RESET_POWER_ON, 0, 0))  # same boot: cause and boot_id unchanged
    # No scene yet, so still safe, now on LED 5 of a 12-LED chain.
    emulator.wait_leds(lambda d: len(d) == 36 and is_amber(d, 5) and only_lit(d, 5))


def test_steady_scenes_follow_the_palette_and_the_brightness_cap(emulator: Emulator, wire: Wire) -> None:
    wire.hello(1, led_count=8)
    cells = [led(c) for c in (1, 2, 3, 4, 5, 0, 10, 14)]
    shown = []
    for seq, brightness in enumerate((40, 96, 97, 255, 0, 200, 1), start=2):
        start = emulator.mark()
        wire.expect_ack(protocol.SET_SCENE, seq, scene(brightness, cells))
        shown.append(emulator.wait_leds(showing(on_wire(cells, brightness)), start=start)[1])
        cells = cells[1:] + cells[:1]  # a different picture each time, so each one is a new LEDS line
    # Above the cap is the cap: full white at 97 or 255 is sent as 96 (255 * 97 >> 8).
    assert shown[1][9:12] == shown[2][6:9] == shown[3][3:6] == bytes((96, 96, 96))
    assert shown[4] == bytes(24)  # brightness 0 is dark


def test_set_palette_changes_colours_on_the_scene_already_showing(emulator: Emulator, wire: Wire) -> None:
    wire.hello(1, led_count=4)
    cells = [led(3), led(4), led(11), led(3)]
    wire.expect_ack(protocol.SET_SCENE, 2, scene(96, cells))
    emulator.wait_leds(showing(on_wire(cells, 96)))
    palette = list(protocol.DEFAULT_PALETTE)
    palette[3], palette[4] = (10, 20, 30), (200, 0, 100)
    start = emulator.mark()
    wire.expect_ack(protocol.SET_PALETTE, 3, bytes((3, 10, 20, 30, 200, 0, 100)))
    emulator.wait_leds(showing(on_wire(cells, 96, palette)), start=start)
    # The last colour may be changed too (first + n = 16).
    palette[15] = (1, 2, 250)
    wire.expect_ack(protocol.SET_PALETTE, 4, bytes((15, 1, 2, 250)))
    cells = [led(15), led(3), led(4), led(0)]
    wire.expect_ack(protocol.SET_SCENE, 5, scene(255, cells))
    emulator.wait_leds(showing(on_wire(cells, 255, palette)), start=start)


def test_blink_fast_blink_and_pulse_follow_the_device_clock(emulator: Emulator, wire: Wire) -> None:
    wire.hello(1, led_count=4)
    origin = uptime_origin(wire, emulator, 2)
    cells = [
        led(1, protocol.PATTERN_BLINK),
        led(2, protocol.PATTERN_FAST_BLINK),
        led(3, protocol.PATTERN_PULSE),
        led(5),
    ]
    start = emulator.mark()
    wire.expect_ack(protocol.SET_SCENE, 3, scene(255, cells))
    t0, _ = emulator.wait_leds(lambda d: rgb_at(d, 3) == (96, 96, 96), start=start)
    # Keep the link alive past the watchdog while a full pulse period goes by.
    for seq in range(4, 12):
        time.sleep(0.2)
        wire.ping(seq)
    emulator.wait_sim_ms(t0 + protocol.PULSE_MS + 50)
    entries = [(t, d) for t, d in emulator.leds[start:] if t >= t0]

    def edges(index: int) -> list[float]:
        times, was_on = [], None
        for t, data in entries:
            on = any(rgb_at(data, index))
            if was_on is not None and on != was_on:
                times.append(t)
            was_on = on
        return times

    for index, period in ((0, protocol.BLINK_MS), (1, protocol.FAST_BLINK_MS)):
        times = edges(index)
        assert len(times) >= 2 * (protocol.PULSE_MS // period) - 1, (index, times)
        gaps = [b - a for a, b in itertools.pairwise(times)]
        assert all(abs(gap - period / 2) <= 2 for gap in gaps), (index, gaps)
        # On for the first half of each period of the device's clock.
        for t, data in entries:
            phase = (t - origin) % period
            if min(abs(phase - period / 2), phase, period - phase) > 3:
                assert bool(any(rgb_at(data, index))) == (phase < period / 2), (index, t, phase)

    # The pulse: blue at the cap (96) times the triangle level, redrawn every 20 ms.
    pulse = [(t, rgb_at(d, 2)[2]) for t, d in entries]
    assert max(v for _, v in pulse) >= 90 and min(v for _, v in pulse) <= 3
    for t, value in pulse:
        phase = (t - origin) % protocol.PULSE_MS
        allowed = {96 * (triangle((phase + d) % protocol.PULSE_MS, protocol.PULSE_MS) + 1) >> 8 for d in (-2, -1, 0, 1)}
        assert min(allowed) - 1 <= value <= max(allowed) + 1, (t, phase, value)
    # Redrawn every 20 ms (a LEDS line only when something changed: not at the dark end).
    assert len(entries) >= 0.8 * protocol.PULSE_MS / 20
    assert all(rgb_at(d, 3) == (96, 96, 96) for _, d in entries)  # steady stays steady


def test_bad_frames_and_bad_requests_are_refused_with_the_right_nak(emulator: Emulator, wire: Wire) -> None:
    wire.hello(1, led_count=8)
    cells = [led(2)] * 8
    wire.expect_ack(protocol.SET_SCENE, 2, scene(50, cells))
    emulator.wait_leds(showing(on_wire(cells, 50)))

    # Bad CRC: nothing in the frame can be trusted, so seq and type are unknown.
    body = bytes((protocol.PROTO_MAJOR, protocol.SET_SCENE, 3, 50, *[led(1)] * 8))
    wire.write(cobs_encode(body + ((crc16(body) ^ 0x0100).to_bytes(2, "big"))) + b"\x00")
    nak = wire.next_frame()
    assert (nak.type, nak.seq, nak.payload) == (protocol.NAK, protocol.SEQ_UNKNOWN, bytes((protocol.NAK_BAD_CRC, 0xFF)))

    wire.expect_nak(protocol.PING, 4, b"", protocol.NAK_BAD_VERSION, version=2)
    wire.expect_nak(0x55, 5, b"", protocol.NAK_UNKNOWN_TYPE)
    wire.expect_nak(protocol.ACK, 6, bytes((protocol.SET_SCENE, 0)), protocol.NAK_UNKNOWN_TYPE)  # a device-to-host type
    wire.expect_nak(protocol.SET_SCENE, 7, scene(50, [led(1)] * 7), protocol.NAK_BAD_LED_COUNT)
    wire.expect_nak(protocol.SET_SCENE, 8, scene(50, [led(1)] * 9), protocol.NAK_BAD_LED_COUNT)
    wire.expect_nak(protocol.SET_SCENE, 9, b"", protocol.NAK_BAD_LENGTH)
    wire.expect_nak(protocol.SET_SCENE, 10, scene(50, [led(1)] * 7 + [led(1, 5)]), protocol.NAK_BAD_VALUE)
    wire.expect_nak(protocol.SET_SCENE, 11, scene(50, [led(1, 15)] + [led(1)] * 7), protocol.NAK_BAD_VALUE)
    wire.expect_nak(protocol.HELLO, 12, bytes((1, 0, 0, 0)), protocol.NAK_BAD_LED_COUNT)
    wire.expect_nak(protocol.HELLO, 13, bytes((1, 0, 97, 0)), protocol.NAK_BAD_LED_COUNT)
    wire.expect_nak(protocol.HELLO, 14, bytes((1, 0, 8, 8)), protocol.NAK_BAD_VALUE)
    wire.expect_nak(protocol.HELLO, 15, bytes((2, 0, 8, 0)), protocol.NAK_BAD_VERSION)
    wire.expect_nak(protocol.HELLO, 16, bytes((1, 0, 8)), protocol.NAK_BAD_LENGTH)
    wire.expect_nak(protocol.PING, 17, b"\x00", protocol.NAK_BAD_LENGTH)
    wire.expect_nak(protocol.BLANK, 18, b"\x01", protocol.NAK_BAD_LENGTH)
    wire.expect_nak(protocol.SELF_TEST, 19, b"\x00\x10\x00", protocol.NAK_BAD_LENGTH)
    wire.expect_nak(protocol.SET_PALETTE, 20, bytes((0, 1, 2, 3)), protocol.NAK_BAD_VALUE)
    wire.expect_nak(protocol.SET_PALETTE, 21, bytes((15, 1, 2, 3, 4, 5, 6)), protocol.NAK_BAD_VALUE)
    wire.expect_nak(protocol.SET_PALETTE, 22, bytes((1, 1, 2, 3, 4)), protocol.NAK_BAD_LENGTH)
    wire.expect_nak(protocol.SET_PALETTE, 23, b"\x01", protocol.NAK_BAD_LENGTH)

    # Shorter than 5 bytes: dropped without an answer (the next frame answered is the PING).
    wire.write(cobs_encode(bytes((protocol.PROTO_MAJOR, protocol.PING))) + b"\x00")
    _uptime, flags, scene_seq, bad_frames = wire.ping(24)
    # Dropped: the bad CRC, the bad version and the short frame. Refused requests are not drops.
    assert bad_frames == 3
    assert (flags, scene_seq) == (0, 2)
    # Nothing refused was applied: same scene, same chain length.
    assert emulator.leds[-1][1] == on_wire(cells, 50)
    wire.expect_ack(protocol.SET_SCENE, 25, scene(50, [led(3)] * 8))


def test_garbage_between_frames_does_not_stop_the_next_frame_being_answered(emulator: Emulator, wire: Wire) -> None:
    rng = random.Random(20240611)
    naks = 0
    for trial in range(24):
        length = rng.randrange(1, 300)
        if trial % 2:
            # Many short broken frames (a zero in ten bytes).
            garbage = bytes(0 if rng.random() < 0.1 else rng.randrange(1, 256) for _ in range(length))
        else:
            # One broken frame, perhaps longer than any frame may be.
            garbage = bytes(rng.randrange(1, 256) for _ in range(length))
        seq = trial % 250
        # The host ends whatever half frame the device holds with a lone delimiter first.
        wire.write(garbage + b"\x00" + encode_frame(protocol.PING, seq))
        deadline = time.monotonic() + 3
        while True:
            frame = wire.next_frame(timeout=max(deadline - time.monotonic(), 0.01))
            if frame.type == protocol.PONG and frame.seq == seq:
                break
            # All the garbage may earn is a NAK for a bad CRC (or, by chance, another NAK).
            assert frame.type == protocol.NAK, frame
            naks += 1
    _uptime, _flags, _scene_seq, bad_frames = wire.ping(251)
    assert naks > 0 and bad_frames > naks  # some were dropped silently (too short, broken COBS)


def test_a_duplicate_scene_is_acknowledged_but_not_applied(emulator: Emulator, wire: Wire) -> None:
    wire.hello(1, led_count=3)
    a, b, c = [led(1)] * 3, [led(2)] * 3, [led(3)] * 3
    wire.expect_ack(protocol.SET_SCENE, 10, scene(96, a))
    emulator.wait_leds(showing(on_wire(a, 96)))
    start = emulator.mark()
    # Same seq again, even with other content: a resend, so answered but not applied.
    wire.expect_ack(protocol.SET_SCENE, 10, scene(96, b), status=protocol.ACK_DUPLICATE)
    wire.expect_ack(protocol.SET_SCENE, 11, scene(96, c))
    emulator.wait_leds(showing(on_wire(c, 96)), start=start)
    assert all(d != on_wire(b, 96) for _, d in emulator.leds[start:])
    # Only the last request counts: seq 10 after 11 is new.
    wire.expect_ack(protocol.SET_SCENE, 10, scene(96, b))
    emulator.wait_leds(showing(on_wire(b, 96)), start=start)
    _uptime, _flags, scene_seq, _bad = wire.ping(12)
    assert scene_seq == 10


def test_a_resent_blank_does_not_restart_its_dark_time(emulator: Emulator, wire: Wire) -> None:
    wire.hello(1, led_count=2)
    cells = [led(5), led(4)]
    wire.expect_ack(protocol.SET_SCENE, 2, scene(96, cells))
    emulator.wait_leds(showing(on_wire(cells, 96)))
    start = emulator.mark()
    wire.expect_ack(protocol.BLANK, 3, (300).to_bytes(2, "big"))
    t_dark, _ = emulator.wait_leds(lambda d: d == bytes(6), start=start)
    time.sleep(0.15)
    count = len(emulator.rx)
    wire.expect_ack(protocol.BLANK, 3, (300).to_bytes(2, "big"), status=protocol.ACK_DUPLICATE)
    t_resent = emulator.wait_rx(count + 1)
    t_back, _ = emulator.wait_leds(showing(on_wire(cells, 96)), start=start)
    assert t_dark < t_resent < t_dark + 300, "the resend must arrive while the LEDs are dark"
    assert t_back - t_dark == pytest.approx(300, abs=3)


def test_blank_darkens_at_once_and_shows_the_scene_again_after_its_time(emulator: Emulator, wire: Wire) -> None:
    wire.hello(1, led_count=5)
    cells = [led(1), led(0), led(7), led(9), led(10)]
    wire.expect_ack(protocol.SET_SCENE, 2, scene(80, cells))
    emulator.wait_leds(showing(on_wire(cells, 80)))
    start, count = emulator.mark(), len(emulator.rx)
    wire.expect_ack(protocol.BLANK, 3, (120).to_bytes(2, "big"))
    t_rx = emulator.wait_rx(count + 1)
    t_dark, _ = emulator.wait_leds(lambda d: d == bytes(15), start=start)
    t_back, _ = emulator.wait_leds(showing(on_wire(cells, 80)), start=start)
    assert 0 < t_dark - t_rx < 3
    assert t_back - t_dark == pytest.approx(120, abs=3)


def test_self_test_walks_each_led_once_in_order_then_shows_the_scene(emulator: Emulator, wire: Wire) -> None:
    wire.hello(1, led_count=6)
    cells = [led(2)] * 6
    wire.expect_ack(protocol.SET_SCENE, 2, scene(30, cells))
    emulator.wait_leds(showing(on_wire(cells, 30)))
    start = emulator.mark()
    wire.expect_ack(protocol.SELF_TEST, 3, (40).to_bytes(2, "big"))
    t_end, _ = emulator.wait_leds(showing(on_wire(cells, 30)), start=start)
    white = bytes(3 * [channel(255, protocol.BRIGHTNESS_CAP)])
    steps = [(t, d) for t, d in emulator.leds[start:] if t < t_end]
    lit = [next(i for i in range(6) if d[3 * i : 3 * i + 3] == white) for _, d in steps]
    assert lit == list(range(6))
    assert all(only_lit(d, i) for (_, d), i in zip(steps, lit, strict=True))
    times = [t for t, _ in steps] + [t_end]
    assert all(abs((b - a) - 40) <= 2 for a, b in itertools.pairwise(times)), times


def test_hello_clears_the_scene_and_forgets_the_last_request(emulator: Emulator, wire: Wire) -> None:
    wire.hello(1, led_count=4)
    a, b = [led(1)] * 4, [led(6, protocol.PATTERN_STEADY)] * 4
    wire.expect_ack(protocol.SET_SCENE, 5, scene(96, a))
    emulator.wait_leds(showing(on_wire(a, 96)))
    start = emulator.mark()
    wire.hello(6, led_count=4)
    emulator.wait_leds(lambda d: d == bytes(12), start=start)  # cleared, and not the safe state
    # A new session may reuse seq 5 for a new scene: it must be applied.
    wire.expect_ack(protocol.SET_SCENE, 5, scene(96, b))
    emulator.wait_leds(showing(on_wire(b, 96)), start=start)


def test_the_link_watchdog_drops_the_scene_for_the_safe_state_and_pong_flags_tell(
    emulator: Emulator, wire: Wire
) -> None:
    wire.hello(1, led_count=6, status_led=4)
    cells = [led(1, protocol.PATTERN_STEADY)] * 6
    wire.expect_ack(protocol.SET_SCENE, 2, scene(96, cells))
    start = emulator.leds.index(emulator.wait_leds(showing(on_wire(cells, 96))))
    count = len(emulator.rx)
    _uptime, flags, _scene_seq, _bad = wire.ping(3)
    assert flags == 0
    last_rx = emulator.wait_rx(count + 1)
    # Silence from here on.
    t_safe, safe = emulator.wait_leds(lambda d: only_lit(d, 4) and d != on_wire(cells, 96), start=start)
    assert 1000 <= t_safe - last_rx <= 1200
    later = emulator.wait_leds(lambda d: is_amber(d, 4), start=emulator.leds.index((t_safe, safe)))
    pulsing = emulator.wait_leds(lambda d: is_amber(d, 4) and d != later[1], start=emulator.leds.index(later))
    assert only_lit(pulsing[1], 4)

    _uptime, flags, _scene_seq, _bad = wire.ping(4)
    assert flags == protocol.FLAG_SAFE | protocol.FLAG_LINK_WAS_LOST
    # Any valid frame ends the silence, but only a new scene ends the safe state.
    wire.expect_ack(protocol.SET_SCENE, 5, scene(96, cells))
    emulator.wait_leds(showing(on_wire(cells, 96)), start=emulator.leds.index(pulsing))
    _uptime, flags, _scene_seq, _bad = wire.ping(6)
    assert flags == protocol.FLAG_LINK_WAS_LOST
    wire.hello(7, led_count=6, status_led=4)
    _uptime, flags, _scene_seq, _bad = wire.ping(8)
    assert flags == 0


def test_pong_uptime_counts_simulated_milliseconds(emulator: Emulator, wire: Wire) -> None:
    # A short chain: a PING arriving during a refresh waits for it (3 ms for 64 LEDs).
    wire.hello(1, led_count=4)
    first = uptime_origin(wire, emulator, 2)
    time.sleep(0.3)
    second = uptime_origin(wire, emulator, 3)
    # The firmware's millisecond tick and simulated time agree (start-up takes a few ms).
    assert 0 <= first < 20
    assert second == pytest.approx(first, abs=1.5)


def test_a_full_chain_of_96_leds_is_decoded_byte_for_byte(emulator: Emulator, wire: Wire) -> None:
    ack = wire.hello(1, led_count=96, status_led=95)
    assert ack.payload[6] == 96
    cells = [led(i % 16) for i in range(96)]
    start = emulator.mark()
    wire.expect_ack(protocol.SET_SCENE, 2, scene(77, cells))
    emulator.wait_leds(showing(on_wire(cells, 77)), start=start)
    # A second whole scene right behind the first: both arrive intact.
    cells = cells[::-1]
    wire.expect_ack(protocol.SET_SCENE, 3, scene(255, cells))
    emulator.wait_leds(showing(on_wire(cells, 255)), start=start)


def test_unplug_and_replug_gives_a_new_boot_on_the_same_path(emulator: Emulator) -> None:
    with emulator.open_serial() as port:
        first = Wire(port).next_frame(timeout=5.0)
    emulator.kill()
    assert not emulator.running
    emulator.start()
    with emulator.open_serial() as port:
        again = Wire(port)
        boot = again.next_frame(timeout=5.0)
        assert first.type == boot.type == protocol.BOOT
        again.hello(1, led_count=2)
