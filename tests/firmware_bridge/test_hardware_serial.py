# SPDX-License-Identifier: MIT
"""The hardware layer on the real firmware in simavr: the serial LED panel and ``bgboard leds check``."""

from __future__ import annotations

import io
from typing import Any

from bgboard.cli import main
from engine.judge import Judgement
from engine.match import MatchState, OpeningRoll
from firmware_bridge import messages
from hardware.layout import LedLayout
from hardware.panels import open_panel
from hardware.presenter import present
from hardware.serial_panel import SerialLedPanel

#: One LED's wire bytes (G, R, B).
LED = 3


def _led(data: bytes, index: int) -> bytes:
    return data[LED * index : LED * index + LED]


def test_the_serial_panel_puts_a_presented_scene_on_the_chain(emulator: Any) -> None:
    layout = LedLayout.standard()
    state = MatchState.new_match(5).apply(OpeningRoll(5, 2))  # player 0, seat 2, on roll
    steady = present(state, brightness=200)
    with open_panel(f"serial:{emulator.port}", layout) as panel:
        assert isinstance(panel, SerialLedPanel)
        assert panel.wait_connected(5.0)
        assert panel.device is not None and panel.device.led_count == layout.length
        panel.show(steady)
        assert panel.wait_shown(3.0)
        expected = messages.expected_wire_bytes(steady.to_chain(layout), steady.brightness)
        emulator.wait_leds(lambda data: data == expected)
        warm_white = _led(expected, layout.indices("turn.2")[0])
        assert warm_white != bytes(3) and _led(expected, layout.indices("turn.1")[0]) == bytes(3)

        # An illegal move: the marked points blink red, animated by the device itself.
        illegal = present(state, Judgement("illegal", marks=(13, 8)))
        point = layout.indices("point.12")[0]  # seat 2's 13-point
        start = emulator.mark()
        panel.show(illegal)
        assert panel.wait_shown(3.0)
        red = bytes((0, messages.channel_value(255, 255), 0))
        on = emulator.wait_leds(lambda data: _led(data, point) == red, start=start)
        after_on = emulator.leds.index(on) + 1
        off = emulator.wait_leds(lambda data: _led(data, point) == bytes(3), start=after_on)
        after_off = emulator.leds.index(off) + 1
        on_again = emulator.wait_leds(lambda data: _led(data, point) == red, start=after_off)
        # Fast blink: 4 Hz, half on (sim time, with room for the harness's reporting).
        assert 60 < off[0] - on[0] < 190 and 60 < on_again[0] - off[0] < 190


def test_leds_check_walks_every_led_on_the_real_firmware(emulator: Any) -> None:
    layout = LedLayout.standard()
    out = io.StringIO()
    assert main(["leds", "check", "--port", emulator.port, "--step-ms", "20"], out=out) == 0
    text = out.getvalue()
    assert "firmware " in text and "44 LEDs in use" in text
    white = bytes((messages.channel_value(255, 255),) * 3)
    lit_alone = []
    for _t, data in emulator.leds:
        lit = [i for i in range(layout.length) if _led(data, i) != bytes(3)]
        if len(lit) == 1 and _led(data, lit[0]) == white:
            lit_alone.append(lit[0])
    # Every LED shone white on its own, in chain order.
    assert sorted(set(lit_alone)) == list(range(layout.length))
    assert lit_alone == sorted(lit_alone)
    full = [
        i for i, (_t, data) in enumerate(emulator.leds) if all(_led(data, j) != bytes(3) for j in range(layout.length))
    ]
    assert len(full) >= 4  # red, green, blue, white
    # Then dark (the safe state's amber status LED comes a second after the command ends).
    emulator.wait_leds(lambda data: not any(data), start=full[-1] + 1)
