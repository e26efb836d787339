# SPDX-License-Identifier: MIT
"""The LED link's constants, in one place: the firmware's C header is generated from this file.

``python -m firmware_bridge.protocol --header`` prints ``firmware_bridge/avr/bgl_protocol.h``;
``make firmware`` regenerates it before compiling, and a test checks that the committed copy
is current. ``firmware_bridge/PROTOCOL.md`` explains what each constant means.
"""

from __future__ import annotations

import sys
from typing import Final

#: Protocol version carried in every frame; a device with another major version NAKs.
PROTO_MAJOR: Final = 1
#: Minor versions only add message types (an unknown type is NAKed, so hosts can probe).
PROTO_MINOR: Final = 0

#: The firmware's own version (major, minor, patch), reported in HELLO_ACK and BOOT. Raise it
#: with every change to firmware_bridge/avr; ``bgboard doctor`` tells a controller flashed with
#: another version to be flashed again.
FW_MAJOR: Final = 1
FW_MINOR: Final = 0
FW_PATCH: Final = 0

#: Serial speed, 8N1. 115200 is what every Nano/Uno USB bridge handles (2.1 % fast at 16 MHz, U2X).
BAUDRATE: Final = 115200
#: The longest decoded frame body (version .. CRC), so a COBS frame never needs a second code block.
MAX_BODY: Final = 254
#: The longest LED chain the firmware drives (one frame's payload and 288 bytes of RAM).
MAX_LEDS: Final = 96
#: The brightest the firmware ever drives a channel, whatever a scene asks (0-255): a 2 A supply
#: is then enough for a full chain at full white.
BRIGHTNESS_CAP: Final = 96

#: Silence after which the device drops the scene and shows the safe state (milliseconds).
LINK_TIMEOUT_MS: Final = 1000
#: The host sends a PING when it has sent nothing else for this long (milliseconds).
HEARTBEAT_MS: Final = 250
#: The host resends a request that got no ACK after this long (milliseconds) ...
RETRY_MS: Final = 100
#: ... this many times before it declares the link down and reconnects.
RETRIES: Final = 3

# -- message types (device-to-host types have the high bit set) ------------------------------------
HELLO: Final = 0x01
SET_SCENE: Final = 0x10
SET_PALETTE: Final = 0x11
PING: Final = 0x20
BLANK: Final = 0x31
SELF_TEST: Final = 0x32
HELLO_ACK: Final = 0x81
BOOT: Final = 0x82
ACK: Final = 0x90
PONG: Final = 0xA0
NAK: Final = 0xEE

# -- NAK reasons ----------------------------------------------------------------------------------
NAK_BAD_LENGTH: Final = 1
NAK_BAD_CRC: Final = 2
NAK_BAD_VERSION: Final = 3
NAK_UNKNOWN_TYPE: Final = 4
NAK_BAD_LED_COUNT: Final = 5
NAK_BAD_VALUE: Final = 6
#: The sequence number of a NAK for a frame whose own could not be trusted (bad CRC).
SEQ_UNKNOWN: Final = 0xFF

# -- ACK status -----------------------------------------------------------------------------------
ACK_APPLIED: Final = 0
ACK_DUPLICATE: Final = 1

# -- LED patterns, animated by the device ---------------------------------------------------------
PATTERN_STEADY: Final = 0
#: 1 Hz, half on.
PATTERN_BLINK: Final = 1
#: 4 Hz, half on.
PATTERN_FAST_BLINK: Final = 2
#: Brightness rising and falling over PULSE_MS.
PATTERN_PULSE: Final = 3
#: The same over SLOW_PULSE_MS: the safe state's "controller lost".
PATTERN_SLOW_PULSE: Final = 4
BLINK_MS: Final = 1000
FAST_BLINK_MS: Final = 250
PULSE_MS: Final = 1500
SLOW_PULSE_MS: Final = 3000

# -- the palette: 16 colours, index 0 is dark; SET_PALETTE may change 1-15 --------------------------
PALETTE_SIZE: Final = 16
DEFAULT_PALETTE: Final[tuple[tuple[int, int, int], ...]] = (
    (0, 0, 0),  # 0 off
    (255, 0, 0),  # 1 red: illegal
    (0, 255, 0),  # 2 green: hint, to
    (0, 0, 255),  # 3 blue: hint, from
    (255, 96, 0),  # 4 amber: please check; the safe state
    (255, 255, 255),  # 5 white: the cube; the self-test
    (255, 200, 0),  # 6 yellow
    (0, 255, 255),  # 7 cyan
    (255, 0, 255),  # 8 magenta
    (128, 0, 255),  # 9 purple
    (255, 160, 64),  # 10 warm white: the turn
    (255, 32, 32),  # 11
    (32, 255, 32),  # 12
    (32, 32, 255),  # 13
    (64, 64, 64),  # 14 dim grey
    (255, 128, 128),  # 15 pink
)
COLOUR_OFF: Final = 0
#: The safe state's colour (amber) on the status LED.
SAFE_COLOUR: Final = 4
#: The self-test walk's colour (white).
TEST_COLOUR: Final = 5

# -- HELLO_ACK capability bits --------------------------------------------------------------------
CAP_RGB: Final = 0x01
CAP_ANIMATION: Final = 0x02
CAP_BLANK: Final = 0x04
CAP_SELF_TEST: Final = 0x08
CAP_PALETTE: Final = 0x10

# -- reset causes, as the ATmega328P's MCUSR bits -------------------------------------------------
RESET_POWER_ON: Final = 0x01
RESET_EXTERNAL: Final = 0x02
RESET_BROWN_OUT: Final = 0x04
RESET_WATCHDOG: Final = 0x08

# -- PONG status flags ----------------------------------------------------------------------------
#: The device is in the safe state (no valid frame for LINK_TIMEOUT_MS, or none since it booted).
FLAG_SAFE: Final = 0x01
#: The link was lost since the last HELLO (the device went safe at least once).
FLAG_LINK_WAS_LOST: Final = 0x02
#: The last reset was the hardware watchdog's.
FLAG_WATCHDOG_RESET: Final = 0x04

#: Fixed payload sizes (bytes) of the messages that have one.
HELLO_SIZE: Final = 4
HELLO_ACK_SIZE: Final = 14
PONG_SIZE: Final = 7
ACK_SIZE: Final = 2
NAK_SIZE: Final = 2


def _constants() -> list[tuple[str, int]]:
    module = sys.modules[__name__]
    return [
        (name, value)
        for name, value in vars(module).items()
        if name.isupper() and isinstance(value, int) and not isinstance(value, bool)
    ]


def c_header() -> str:
    """The firmware's ``bgl_protocol.h``: every integer constant here, and the default palette."""
    lines = [
        "/* SPDX-License-Identifier: MIT */",
        "/* Generated by `python -m firmware_bridge.protocol --header`; edit firmware_bridge/protocol.py. */",
        "#ifndef BGL_PROTOCOL_H",
        "#define BGL_PROTOCOL_H",
        "",
    ]
    for name, value in _constants():
        lines.append(f"#define BGL_{name} {value}" + ("UL" if value > 0x7FFF else ""))
    lines.append("")
    lines.append("#define BGL_DEFAULT_PALETTE_INIT { \\")
    for r, g, b in DEFAULT_PALETTE:
        lines.append(f"    {{{r}, {g}, {b}}}, \\")
    lines += ["}", "", "#endif", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """``--header``: print the C header."""
    args = sys.argv[1:] if argv is None else argv
    if args != ["--header"]:
        print("usage: python -m firmware_bridge.protocol --header", file=sys.stderr)
        return 2
    sys.stdout.write(c_header())
    return 0


if __name__ == "__main__":
    sys.exit(main())
