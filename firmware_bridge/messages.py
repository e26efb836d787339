# SPDX-License-Identifier: MIT
"""The payloads of the LED link's messages: encoders for the host's requests, parsers for the replies.

Each encoder validates its arguments and returns the payload only (the bytes between ``seq`` and
the CRC); :func:`firmware_bridge.framing.encode_frame` wraps it.

>>> led_byte(1, protocol.PATTERN_BLINK)
17
>>> scene([led_byte(1), led_byte(2)], brightness=10).hex()
'0a1020'
>>> Ack.parse(bytes((protocol.SET_SCENE, protocol.ACK_DUPLICATE))).duplicate
True
>>> expected_wire_bytes([led_byte(1)], brightness=255).hex()  # G, R, B at the cap of 96
'006000'
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import ClassVar, Self

from firmware_bridge import protocol
from firmware_bridge.framing import Frame

#: One palette entry: red, green, blue (0-255 each).
Colour = tuple[int, int, int]

#: The highest pattern number the device animates.
MAX_PATTERN = protocol.PATTERN_SLOW_PULSE

NAK_REASONS: dict[int, str] = {
    protocol.NAK_BAD_LENGTH: "bad length",
    protocol.NAK_BAD_CRC: "bad CRC",
    protocol.NAK_BAD_VERSION: "bad protocol version",
    protocol.NAK_UNKNOWN_TYPE: "unknown type",
    protocol.NAK_BAD_LED_COUNT: "bad LED count",
    protocol.NAK_BAD_VALUE: "bad value",
}
"""Human-readable names of the NAK reasons."""

RESET_CAUSES: dict[int, str] = {
    protocol.RESET_POWER_ON: "power-on",
    protocol.RESET_EXTERNAL: "external",
    protocol.RESET_BROWN_OUT: "brown-out",
    protocol.RESET_WATCHDOG: "watchdog",
}
"""Names of the ATmega328P's MCUSR reset flags, as reported in ``reset_cause``."""

CAPABILITIES: dict[int, str] = {
    protocol.CAP_RGB: "rgb",
    protocol.CAP_ANIMATION: "animation",
    protocol.CAP_BLANK: "blank",
    protocol.CAP_SELF_TEST: "self-test",
    protocol.CAP_PALETTE: "palette",
}
"""Names of the HELLO_ACK capability bits."""

MESSAGE_NAMES: dict[int, str] = {
    protocol.HELLO: "HELLO",
    protocol.SET_SCENE: "SET_SCENE",
    protocol.SET_PALETTE: "SET_PALETTE",
    protocol.PING: "PING",
    protocol.BLANK: "BLANK",
    protocol.SELF_TEST: "SELF_TEST",
    protocol.HELLO_ACK: "HELLO_ACK",
    protocol.BOOT: "BOOT",
    protocol.ACK: "ACK",
    protocol.PONG: "PONG",
    protocol.NAK: "NAK",
}
"""Names of the message types, for logs."""


#: The ``type`` of a NAK for a frame whose type could not be read.
UNKNOWN_TYPE = 0xFF


class MessageError(ValueError):
    """A reply payload that does not parse (wrong length for its type)."""


def message_name(type_: int) -> str:
    """A message type's name, or its number in hex when unknown."""
    return MESSAGE_NAMES.get(type_, f"0x{type_:02X}")


def _check_range(name: str, value: int, low: int, high: int) -> int:
    # bool is an int subclass, but True as an LED count is a caller's bug, not a value.
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    if not low <= value <= high:
        raise ValueError(f"{name} {value} is out of range {low}-{high}")
    return value


# -- host-to-device payloads --------------------------------------------------------------------


def led_byte(colour: int, pattern: int = protocol.PATTERN_STEADY) -> int:
    """One LED's byte in a scene: palette index ``colour`` (0-15) and animation ``pattern`` (0-4)."""
    _check_range("colour", colour, 0, protocol.PALETTE_SIZE - 1)
    _check_range("pattern", pattern, 0, MAX_PATTERN)
    return colour << 4 | pattern


def split_led_byte(value: int) -> tuple[int, int]:
    """``(colour, pattern)`` of an LED byte; raises ``ValueError`` for a pattern the device NAKs."""
    _check_range("LED byte", value, 0, 0xFF)
    colour, pattern = value >> 4, value & 0x0F
    if pattern > MAX_PATTERN:
        raise ValueError(f"LED byte 0x{value:02X} has pattern {pattern}, above {MAX_PATTERN}")
    return colour, pattern


def hello(
    led_count: int,
    status_led: int,
    proto_major: int = protocol.PROTO_MAJOR,
    proto_minor: int = protocol.PROTO_MINOR,
) -> bytes:
    """HELLO: the protocol version and the chain's layout (``led_count`` in use, the status LED)."""
    _check_range("led_count", led_count, 1, protocol.MAX_LEDS)
    _check_range("status_led", status_led, 0, led_count - 1)
    _check_range("proto_major", proto_major, 0, 0xFF)
    _check_range("proto_minor", proto_minor, 0, 0xFF)
    return bytes((proto_major, proto_minor, led_count, status_led))


def scene(leds: Sequence[int], brightness: int = 255) -> bytes:
    """SET_SCENE: ``brightness`` (0-255), then one :func:`led_byte` per LED (1 to ``MAX_LEDS`` of them)."""
    _check_range("brightness", brightness, 0, 0xFF)
    if not 1 <= len(leds) <= protocol.MAX_LEDS:
        raise ValueError(f"a scene has 1-{protocol.MAX_LEDS} LEDs, not {len(leds)}")
    for value in leds:
        split_led_byte(value)
    return bytes((brightness, *leds))


def _check_colour(colour: Sequence[int]) -> Colour:
    if len(colour) != 3:
        raise ValueError(f"a colour is (red, green, blue), not {colour!r}")
    for channel in colour:
        _check_range("colour channel", channel, 0, 0xFF)
    return (colour[0], colour[1], colour[2])


def palette(first: int, colours: Sequence[Colour]) -> bytes:
    """SET_PALETTE: ``colours`` (R, G, B each) replace palette entries ``first`` (>= 1) onwards."""
    _check_range("first", first, 1, protocol.PALETTE_SIZE - 1)
    if not 1 <= len(colours) <= protocol.PALETTE_SIZE - first:
        raise ValueError(f"{len(colours)} colours from {first} do not fit colours 1-{protocol.PALETTE_SIZE - 1}")
    payload = bytearray((first,))
    for colour in colours:
        payload += bytes(_check_colour(colour))
    return bytes(payload)


def blank(ms: int) -> bytes:
    """BLANK: every LED dark for ``ms`` milliseconds (0-65535), then the scene again."""
    return _check_range("ms", ms, 0, 0xFFFF).to_bytes(2, "big")


def self_test(step_ms: int) -> bytes:
    """SELF_TEST: each LED white in turn for ``step_ms`` milliseconds (1-65535), then the scene again."""
    return _check_range("step_ms", step_ms, 1, 0xFFFF).to_bytes(2, "big")


def ping() -> bytes:
    """PING: no payload."""
    return b""


# -- device-to-host payloads --------------------------------------------------------------------


def _check_size(name: str, payload: bytes, size: int) -> None:
    if len(payload) != size:
        raise MessageError(f"{name} payload of {len(payload)} bytes, expected {size}")


def _flag_names(value: int, names: dict[int, str]) -> tuple[str, ...]:
    known = tuple(name for bit, name in names.items() if value & bit)
    unknown = value & ~sum(names)
    return (*known, f"0x{unknown:02X}") if unknown else known


@dataclass(frozen=True, slots=True)
class DeviceInfo:
    """What a device says about itself in HELLO_ACK and BOOT."""

    proto_major: int
    proto_minor: int
    fw_major: int
    fw_minor: int
    fw_patch: int
    max_leds: int
    led_count: int
    capabilities: int
    max_body: int
    #: The MCUSR flags at the device's last start (see :data:`RESET_CAUSES`).
    reset_cause: int
    #: Counts the device's boots; a new value means it restarted behind the host's back.
    boot_id: int
    status_led: int
    brightness_cap: int

    @classmethod
    def parse(cls, payload: bytes) -> DeviceInfo:
        """From a HELLO_ACK or BOOT payload; raises :class:`MessageError` on a wrong length."""
        _check_size("HELLO_ACK", payload, protocol.HELLO_ACK_SIZE)
        p = payload
        return cls(
            p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9], int.from_bytes(p[10:12], "big"), p[12], p[13]
        )

    def encode(self) -> bytes:
        """The payload again (for fakes and tests)."""
        head = bytes(
            (
                self.proto_major,
                self.proto_minor,
                self.fw_major,
                self.fw_minor,
                self.fw_patch,
                self.max_leds,
                self.led_count,
                self.capabilities,
                self.max_body,
                self.reset_cause,
            )
        )
        return head + self.boot_id.to_bytes(2, "big") + bytes((self.status_led, self.brightness_cap))

    @property
    def firmware_version(self) -> str:
        """``major.minor.patch``."""
        return f"{self.fw_major}.{self.fw_minor}.{self.fw_patch}"

    @property
    def reset_causes(self) -> tuple[str, ...]:
        """The names of the reset flags set, e.g. ``("external",)`` after opening a Nano's port."""
        return _flag_names(self.reset_cause, RESET_CAUSES)

    @property
    def capability_names(self) -> tuple[str, ...]:
        """The names of the capability bits set."""
        return _flag_names(self.capabilities, CAPABILITIES)

    def has(self, capability: int) -> bool:
        """Whether every bit of ``capability`` (a ``protocol.CAP_*`` constant) is set."""
        return self.capabilities & capability == capability

    @property
    def watchdog_reset(self) -> bool:
        """Whether the device's last reset was its hardware watchdog's (it hung)."""
        return bool(self.reset_cause & protocol.RESET_WATCHDOG)


@dataclass(frozen=True, slots=True)
class Pong:
    """The answer to a PING: the device's clock and status."""

    uptime_ms: int
    flags: int
    #: The ``seq`` of the SET_SCENE showing.
    scene_seq: int
    #: Frames the device dropped (saturates at 255).
    bad_frames: int

    @classmethod
    def parse(cls, payload: bytes) -> Pong:
        """From a PONG payload; raises :class:`MessageError` on a wrong length."""
        _check_size("PONG", payload, protocol.PONG_SIZE)
        return cls(int.from_bytes(payload[:4], "big"), payload[4], payload[5], payload[6])

    def encode(self) -> bytes:
        """The payload again (for fakes and tests)."""
        return self.uptime_ms.to_bytes(4, "big") + bytes((self.flags, self.scene_seq, self.bad_frames))

    @property
    def safe(self) -> bool:
        """The device is in the safe state: it shows no scene."""
        return bool(self.flags & protocol.FLAG_SAFE)

    @property
    def link_was_lost(self) -> bool:
        """The device went safe at least once since the last HELLO."""
        return bool(self.flags & protocol.FLAG_LINK_WAS_LOST)

    @property
    def watchdog_reset(self) -> bool:
        """The device's last reset was its watchdog's."""
        return bool(self.flags & protocol.FLAG_WATCHDOG_RESET)


@dataclass(frozen=True, slots=True)
class _TwoBytes:
    """A reply whose payload is two bytes, each a field in order (ACK and NAK)."""

    #: The reply's name in errors, and its payload's size.
    NAME: ClassVar[str]
    SIZE: ClassVar[int]

    @classmethod
    def parse(cls, payload: bytes) -> Self:
        """From the reply's payload; raises :class:`MessageError` on a wrong length."""
        _check_size(cls.NAME, payload, cls.SIZE)
        return cls(payload[0], payload[1])  # type: ignore[call-arg]

    def encode(self) -> bytes:
        """The payload again (for fakes and tests)."""
        return bytes(getattr(self, f.name) for f in fields(self))


@dataclass(frozen=True, slots=True)
class Ack(_TwoBytes):
    """A request applied (or recognised as a resend of the one applied last)."""

    NAME: ClassVar[str] = "ACK"
    SIZE: ClassVar[int] = protocol.ACK_SIZE

    type: int
    status: int

    @property
    def duplicate(self) -> bool:
        """The request was a resend of the one applied last, and was not applied again."""
        return self.status == protocol.ACK_DUPLICATE


@dataclass(frozen=True, slots=True)
class Nak(_TwoBytes):
    """A request refused; ``type`` is 0xFF when the frame could not be read."""

    NAME: ClassVar[str] = "NAK"
    SIZE: ClassVar[int] = protocol.NAK_SIZE

    reason: int
    type: int

    @property
    def reason_name(self) -> str:
        """The reason in words, e.g. ``"bad CRC"``."""
        return NAK_REASONS.get(self.reason, f"reason {self.reason}")

    @property
    def permanent(self) -> bool:
        """Resending the same request cannot help.

        A damaged frame (bad CRC), or one the device could not even tell the type of, is worth
        resending; any other refusal would only be repeated.
        """
        return self.reason != protocol.NAK_BAD_CRC and self.type != UNKNOWN_TYPE

    def __str__(self) -> str:
        return f"NAK {self.reason_name} for {message_name(self.type)}"


Reply = DeviceInfo | Pong | Ack | Nak
"""Any parsed device-to-host payload."""


def parse_reply(frame: Frame) -> Reply:
    """The typed payload of a device-to-host frame; raises :class:`MessageError` for anything else."""
    if frame.type in (protocol.HELLO_ACK, protocol.BOOT):
        return DeviceInfo.parse(frame.payload)
    if frame.type == protocol.PONG:
        return Pong.parse(frame.payload)
    if frame.type == protocol.ACK:
        return Ack.parse(frame.payload)
    if frame.type == protocol.NAK:
        return Nak.parse(frame.payload)
    raise MessageError(f"{message_name(frame.type)} is not a device-to-host message")


# -- what the chain receives ---------------------------------------------------------------------


def full_palette(colours: Sequence[Colour] | None = None) -> tuple[Colour, ...]:
    """All 16 colours: ``colours[i]`` is colour ``i``; entries it lacks keep the default palette.

    Colour 0 is always dark, so ``colours[0]`` must be ``(0, 0, 0)``.
    """
    if colours is None:
        return protocol.DEFAULT_PALETTE
    if not 1 <= len(colours) <= protocol.PALETTE_SIZE:
        raise ValueError(f"a palette has 1-{protocol.PALETTE_SIZE} colours, not {len(colours)}")
    checked = [_check_colour(c) for c in colours]
    if checked[0] != (0, 0, 0):
        raise ValueError(f"colour 0 is always dark, not {checked[0]}")
    return (*checked, *protocol.DEFAULT_PALETTE[len(checked) :])


def channel_value(value: int, brightness: int) -> int:
    """What the device puts on the chain for a channel ``value`` at ``brightness`` (cap applied)."""
    b = min(brightness, protocol.BRIGHTNESS_CAP)
    return value * (b + 1) >> 8


def expected_wire_bytes(
    leds: Sequence[int], brightness: int, palette: Sequence[Colour] = protocol.DEFAULT_PALETTE
) -> bytes:
    """The bytes (G, R, B per LED) a scene puts on the chain while every LED is fully on.

    That is what a steady scene shows all the time; a blinking LED shows it in its on half.
    """
    colours = full_palette(palette)
    _check_range("brightness", brightness, 0, 0xFF)
    out = bytearray()
    for value in leds:
        colour, _pattern = split_led_byte(value)
        red, green, blue = colours[colour]
        out += bytes(channel_value(c, brightness) for c in (green, red, blue))
    return bytes(out)
