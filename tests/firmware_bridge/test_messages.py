# SPDX-License-Identifier: MIT
"""Payload encoders and reply parsers of the LED link, and the colours a scene puts on the chain."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from firmware_bridge import messages, protocol
from firmware_bridge.framing import Frame
from firmware_bridge.messages import Ack, DeviceInfo, MessageError, Nak, Pong

led_bytes = st.builds(messages.led_byte, st.integers(0, 15), st.integers(0, messages.MAX_PATTERN))


def test_an_led_byte_is_colour_then_pattern() -> None:
    assert messages.led_byte(0) == 0
    assert messages.led_byte(1, protocol.PATTERN_BLINK) == 0x11
    assert messages.led_byte(15, protocol.PATTERN_SLOW_PULSE) == 0xF4
    assert messages.split_led_byte(0xF4) == (15, protocol.PATTERN_SLOW_PULSE)


@pytest.mark.parametrize(("colour", "pattern"), [(16, 0), (-1, 0), (0, 5), (3, -1)])
def test_led_byte_refuses_values_out_of_range(colour: int, pattern: int) -> None:
    with pytest.raises(ValueError, match="out of range"):
        messages.led_byte(colour, pattern)


@pytest.mark.parametrize("value", [True, 1.0, "1", None])
def test_led_byte_refuses_what_is_not_an_int(value: Any) -> None:
    with pytest.raises(TypeError):
        messages.led_byte(value)


def test_hello_carries_the_version_and_the_layout() -> None:
    assert messages.hello(64, 63) == bytes((protocol.PROTO_MAJOR, protocol.PROTO_MINOR, 64, 63))
    assert len(messages.hello(1, 0)) == protocol.HELLO_SIZE


@pytest.mark.parametrize(("led_count", "status_led"), [(0, 0), (97, 0), (10, 10), (10, -1)])
def test_hello_refuses_a_bad_layout(led_count: int, status_led: int) -> None:
    with pytest.raises(ValueError):
        messages.hello(led_count, status_led)


@given(st.lists(led_bytes, min_size=1, max_size=protocol.MAX_LEDS), st.integers(0, 255))
def test_a_scene_is_brightness_then_one_byte_per_led(leds: list[int], brightness: int) -> None:
    payload = messages.scene(leds, brightness)
    assert payload[0] == brightness
    assert list(payload[1:]) == leds


def test_scene_refuses_bad_leds_and_brightness() -> None:
    with pytest.raises(ValueError, match="pattern 5"):
        messages.scene([0x15])
    with pytest.raises(ValueError, match="1-96 LEDs"):
        messages.scene([])
    with pytest.raises(ValueError, match="1-96 LEDs"):
        messages.scene([0] * 97)
    with pytest.raises(ValueError, match="brightness 256"):
        messages.scene([0], 256)
    with pytest.raises(ValueError, match="LED byte 256"):
        messages.scene([256])


def test_palette_is_first_then_rgb_triples() -> None:
    assert messages.palette(3, [(1, 2, 3), (4, 5, 6)]) == bytes((3, 1, 2, 3, 4, 5, 6))
    assert len(messages.palette(1, [(9, 9, 9)] * 15)) == 46


@pytest.mark.parametrize(
    ("first", "colours"),
    [(0, [(1, 2, 3)]), (1, []), (1, [(0, 0, 0)] * 16), (15, [(1, 1, 1)] * 2), (1, [(256, 0, 0)]), (1, [(1, 2)])],
)
def test_palette_refuses_what_does_not_fit(first: int, colours: list[tuple[int, int, int]]) -> None:
    with pytest.raises(ValueError):
        messages.palette(first, colours)


def test_blank_and_self_test_are_big_endian_milliseconds() -> None:
    assert messages.blank(0x1234) == b"\x12\x34"
    assert messages.blank(0) == b"\x00\x00"
    assert messages.self_test(250) == b"\x00\xfa"
    for bad in (-1, 65536):
        with pytest.raises(ValueError):
            messages.blank(bad)
    with pytest.raises(ValueError):
        messages.self_test(0)


device_infos = st.builds(
    DeviceInfo,
    *[st.integers(0, 255)] * 10,
    boot_id=st.integers(0, 0xFFFF),
    status_led=st.integers(0, 255),
    brightness_cap=st.integers(0, 255),
)


@given(device_infos)
def test_device_info_round_trips(info: DeviceInfo) -> None:
    payload = info.encode()
    assert len(payload) == protocol.HELLO_ACK_SIZE
    assert DeviceInfo.parse(payload) == info


def test_device_info_fields_in_wire_order() -> None:
    info = DeviceInfo.parse(bytes((1, 0, 2, 3, 4, 96, 64, 0x1F, 254, 0x0A, 0x01, 0x02, 5, 96)))
    assert (info.proto_major, info.proto_minor) == (1, 0)
    assert info.firmware_version == "2.3.4"
    assert (info.max_leds, info.led_count, info.max_body) == (96, 64, 254)
    assert info.boot_id == 0x0102
    assert (info.status_led, info.brightness_cap) == (5, 96)
    assert info.reset_causes == ("external", "watchdog")
    assert info.watchdog_reset
    assert info.capability_names == ("rgb", "animation", "blank", "self-test", "palette")
    assert info.has(protocol.CAP_BLANK | protocol.CAP_PALETTE)


def test_unknown_flag_bits_are_named_by_value() -> None:
    info = DeviceInfo.parse(bytes((1, 0, 1, 0, 0, 96, 8, 0x41, 254, 0x30, 0, 1, 0, 96)))
    assert info.capability_names == ("rgb", "0x40")
    assert info.reset_causes == ("0x30",)
    assert not info.has(protocol.CAP_BLANK)
    assert not info.watchdog_reset


@given(st.integers(0, 2**32 - 1), st.integers(0, 255), st.integers(0, 255), st.integers(0, 255))
def test_pong_round_trips(uptime: int, flags: int, scene_seq: int, bad: int) -> None:
    pong = Pong(uptime, flags, scene_seq, bad)
    assert Pong.parse(pong.encode()) == pong
    assert pong.safe == bool(flags & protocol.FLAG_SAFE)
    assert pong.link_was_lost == bool(flags & protocol.FLAG_LINK_WAS_LOST)
    assert pong.watchdog_reset == bool(flags & protocol.FLAG_WATCHDOG_RESET)


def test_pong_uptime_is_big_endian() -> None:
    assert Pong.parse(bytes((0, 1, 0, 2, 1, 9, 3))) == Pong(65538, 1, 9, 3)


def test_ack_and_nak() -> None:
    assert Ack.parse(bytes((protocol.SET_SCENE, 0))) == Ack(protocol.SET_SCENE, 0)
    assert not Ack(protocol.SET_SCENE, protocol.ACK_APPLIED).duplicate
    nak = Nak.parse(bytes((protocol.NAK_BAD_LED_COUNT, protocol.SET_SCENE)))
    assert nak.reason_name == "bad LED count"
    assert nak.permanent
    assert str(nak) == "NAK bad LED count for SET_SCENE"
    crc = Nak(protocol.NAK_BAD_CRC, 0xFF)
    assert not crc.permanent
    assert str(crc) == "NAK bad CRC for 0xFF"
    assert Nak(42, 1).reason_name == "reason 42"
    # A refusal that names no type cannot be pinned on a request: worth resending.
    assert not Nak(protocol.NAK_BAD_LENGTH, messages.UNKNOWN_TYPE).permanent


@pytest.mark.parametrize(
    ("parser", "size"),
    [(DeviceInfo.parse, protocol.HELLO_ACK_SIZE), (Pong.parse, protocol.PONG_SIZE), (Ack.parse, 2), (Nak.parse, 2)],
)
def test_parsers_refuse_a_wrong_length(parser: Any, size: int) -> None:
    for length in (size - 1, size + 1):
        with pytest.raises(MessageError, match=f"expected {size}"):
            parser(bytes(length))


def test_parse_reply_dispatches_on_the_type() -> None:
    info = DeviceInfo(1, 0, 1, 0, 0, 96, 8, 0x1F, 254, 1, 7, 0, 96)
    assert messages.parse_reply(Frame(protocol.HELLO_ACK, 1, info.encode())) == info
    assert messages.parse_reply(Frame(protocol.BOOT, 0, info.encode())) == info
    assert messages.parse_reply(Frame(protocol.PONG, 2, bytes(7))) == Pong(0, 0, 0, 0)
    assert messages.parse_reply(Frame(protocol.ACK, 3, b"\x10\x01")) == Ack(0x10, 1)
    assert messages.parse_reply(Frame(protocol.NAK, 4, b"\x06\x10")) == Nak(6, 0x10)
    with pytest.raises(MessageError, match="SET_SCENE"):
        messages.parse_reply(Frame(protocol.SET_SCENE, 5, b"\x00"))


def test_expected_wire_bytes_follow_the_formula_in_grb_order() -> None:
    red, green, amber = messages.led_byte(1), messages.led_byte(2), messages.led_byte(4)
    # Full brightness is held at the cap: 255 * (96 + 1) >> 8 == 96.
    assert messages.expected_wire_bytes([red, green], 255) == bytes((0, 96, 0, 96, 0, 0))
    # Below the cap: 255 * (10 + 1) >> 8 == 10, and amber's 96 * 11 >> 8 == 4.
    assert messages.expected_wire_bytes([amber], 10) == bytes((4, 10, 0))
    assert messages.expected_wire_bytes([red], 0) == bytes((0, 0, 0))
    assert messages.expected_wire_bytes([0x00, 0x01], 200) == bytes(6)


@given(st.lists(led_bytes, min_size=1, max_size=8), st.integers(0, 255))
def test_expected_wire_bytes_never_exceed_the_cap(leds: list[int], brightness: int) -> None:
    wire = messages.expected_wire_bytes(leds, brightness)
    assert len(wire) == 3 * len(leds)
    assert max(wire) <= protocol.BRIGHTNESS_CAP


def test_a_custom_palette_keeps_the_defaults_it_does_not_name() -> None:
    colours = messages.full_palette([(0, 0, 0), (10, 20, 30)])
    assert colours[1] == (10, 20, 30)
    assert colours[2:] == protocol.DEFAULT_PALETTE[2:]
    assert messages.expected_wire_bytes([0x10, 0x20], 255, [(0, 0, 0), (10, 20, 30)])[:3] == bytes((7, 3, 11))
    with pytest.raises(ValueError, match="always dark"):
        messages.full_palette([(1, 0, 0)])
    with pytest.raises(ValueError):
        messages.full_palette([(0, 0, 0)] * 17)
