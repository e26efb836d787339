# SPDX-License-Identifier: MIT
"""LED panels by address: the fake, the terminal and the serial controller (on a fake port)."""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any

import pytest
from hardware_fakes import Controller, mock_pins

from engine.judge import Judgement
from engine.match import MatchState, OpeningRoll
from firmware_bridge import protocol
from hardware.layout import LedLayout
from hardware.panels import (
    DimmedPanel,
    FakeLedPanel,
    LedPanel,
    ManagedPanel,
    PanelAddressError,
    PanelError,
    is_serial_address,
    open_panel,
)
from hardware.presenter import present
from hardware.scene import ILLEGAL, TURN, Pattern, Scene
from hardware.serial_panel import SerialLedPanel
from hardware.terminal import LEGEND, TerminalLedPanel, render


@pytest.fixture
def mock_factory() -> Iterator[Any]:
    """gpiozero on mock pins."""
    yield from mock_pins()


@pytest.fixture
def controller() -> Controller:
    """An LED controller on a fake port; ``controller.open`` is a Link's opener."""
    return Controller()


def test_the_fake_panel_records_every_scene_and_its_chain_bytes() -> None:
    layout = LedLayout.standard()
    panel = open_panel("fake", layout)
    assert isinstance(panel, FakeLedPanel) and isinstance(panel, LedPanel)
    assert panel.last == Scene.dark()
    first = present(MatchState.new_match(3))
    second = present(MatchState.new_match(3).apply(OpeningRoll(4, 2)), Judgement("illegal", marks=(8,)))
    panel.show(first)
    panel.show(second)
    assert panel.scenes == [first, second] and panel.last == second
    assert panel.chains[1] == second.to_chain(layout)
    assert panel.chains[1][layout.indices("point.17")[0]] == ILLEGAL.byte
    panel.close()
    with pytest.raises(PanelError, match="closed"):
        panel.show(first)


@pytest.mark.parametrize(
    ("address", "serial"),
    [
        ("/dev/ttyUSB0", True),
        ("/dev/serial/by-id/usb-1a86_USB_Serial-if00-port0", True),
        ("hwgrep://1a86:7523", True),
        ("loop://", True),
        ("COM3", True),
        ("fake", False),
        ("gpio:turn.1=17", False),
        ("ttyUSB0", False),
    ],
)
def test_serial_addresses_are_paths_and_pyserial_urls(address: str, serial: bool) -> None:
    assert is_serial_address(address) is serial


@pytest.mark.parametrize(
    ("address", "words"),
    [
        ("lights", "unknown LED panel address 'lights': use fake, terminal, serial:URL"),
        ("terminal:fancy", "unknown LED panel address 'terminal:fancy'"),
        ("gpio:turn.1", r"expected NAME=VALUE, not 'turn.1'"),
        ("gpio:turn.1=17,turn.1=18", "turn.1 is given twice"),
        ("gpio:turn.3=17", "no LED is named 'turn.3'"),
        ("gpio:turn.1=17,backend=wiringpi", "no GPIO backend 'wiringpi'"),
        ("gpio595:data=17,clock=27", "needs data, clock and latch pins"),
        ("gpio595:data=17,clock=27,latch=22,speed=9", "unknown option 'speed'"),
        ("gpio595:spi=zero", "spi is PORT.DEVICE"),
    ],
)
def test_a_bad_address_is_refused_saying_what_would_do(address: str, words: str, mock_factory: object) -> None:
    with pytest.raises(PanelAddressError, match=words):
        open_panel(address)


def test_the_terminal_panel_draws_plain_markers_off_a_terminal() -> None:
    stream = io.StringIO()
    panel = open_panel("terminal", stream=stream)
    assert isinstance(panel, TerminalLedPanel)
    scene = Scene({"point.24": ILLEGAL, "point.1": "blue", "turn.2": TURN, "cube.1.64": "white blink"})
    panel.show(scene)
    panel.show(scene)  # the same scene again is not drawn again
    text = stream.getvalue()
    assert text.count(LEGEND) == 1 and "\x1b[" not in text
    lines = text.splitlines()
    top, bottom = lines[1], lines[2]
    assert top.startswith("player 2") and top.split()[-1] == "w"  # turn.2, warm white
    # Point 24 is the last point column on the top row; point 1 the last on the bottom row.
    assert top.split()[2:][12] == "R!" and bottom.split()[2:][12] == "B"
    assert lines[5].split()[-1] == "W*"  # cube.1.64, the far end of player 1's side


def test_the_terminal_panel_uses_ansi_colours_on_a_terminal_unless_no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.delenv("NO_COLOR", raising=False)
    stream = Tty()
    TerminalLedPanel(stream=stream).show(Scene({"point.5": ILLEGAL}))
    assert "\x1b[6;38;2;255;0;0m" in stream.getvalue() and LEGEND not in stream.getvalue()
    monkeypatch.setenv("NO_COLOR", "1")
    stream = Tty()
    TerminalLedPanel(stream=stream).show(Scene({"point.5": ILLEGAL}))
    assert "\x1b[" not in stream.getvalue()


def test_render_places_every_led_exactly_once() -> None:
    everything = Scene.all("red")
    drawn = "\n".join(render(everything))
    assert drawn.count("R") == 44


def test_the_serial_panel_sends_scenes_through_the_link(controller: Any) -> None:
    layout = LedLayout.standard()
    panel = open_panel("serial:/dev/ttyUSB0", layout, opener=controller.open)
    assert isinstance(panel, SerialLedPanel)
    with panel:
        assert panel.wait_connected(3.0)
        assert controller.opened == ["/dev/ttyUSB0"]
        assert (controller.led_count, controller.status_led) == (44, 0)
        assert panel.device is not None and panel.device.firmware_version == "1.2.3"
        scene = Scene({"point.1": "red fast blink", "status": "green"}, brightness=50)
        panel.show(scene)
        assert panel.wait_shown(3.0)
        assert controller.scenes[-1] == bytes((50, *scene.to_chain(layout)))
    assert panel.closed and not panel.connected


def test_a_bare_device_url_opens_the_serial_panel(controller: Any) -> None:
    with open_panel("hwgrep://2341:0043", opener=controller.open) as panel:
        assert panel.wait_connected(3.0)  # type: ignore[attr-defined]
    assert controller.opened == ["hwgrep://2341:0043"]


def test_the_serial_panel_refuses_a_chain_longer_than_the_firmware_drives() -> None:
    text = LedLayout.standard().to_toml().replace("length = 44", f"length = {protocol.MAX_LEDS + 1}")
    with pytest.raises(PanelError, match=r"long\.toml has 97 LEDs; the LED controller drives at most 96"):
        SerialLedPanel("loop://", LedLayout.from_toml(text, "long.toml"))


class _BlinkingChain(FakeLedPanel):
    """A fake of a 74HC595 chain: it blinks only when refreshed."""

    refreshes = 0

    @property
    def animated(self) -> bool:
        return any(light.pattern is not Pattern.STEADY for light in self.last.values())

    def refresh(self) -> None:
        self.refreshes += 1


def test_every_panel_declares_its_abilities() -> None:
    for panel in (FakeLedPanel(), TerminalLedPanel(stream=io.StringIO())):
        assert isinstance(panel, ManagedPanel)
        assert (panel.animated, panel.connected, panel.wait_shown(0.0)) == (False, None, True)
        panel.refresh()  # nothing to do, and nothing fails


def test_the_dimmed_panel_dims_every_scene_and_passes_the_abilities_on() -> None:
    chain = _BlinkingChain()
    panel = DimmedPanel(chain, 0.5)
    assert isinstance(panel, ManagedPanel) and panel.layout is chain.layout
    panel.show(Scene({"turn.1": TURN}))
    assert chain.last.brightness == 128 and not panel.animated
    panel.refresh()
    assert chain.refreshes == 0  # a steady scene needs no refreshing
    panel.show(Scene({"point.24": ILLEGAL}))
    assert panel.animated
    panel.refresh()
    assert chain.refreshes == 1
    panel.blank()
    assert chain.last == Scene.dark()
    with panel:
        pass
    assert chain.closed


def test_the_dimmed_serial_panel_says_whether_its_link_is_up(controller: Any) -> None:
    with DimmedPanel(SerialLedPanel("/dev/ttyUSB0", opener=controller.open), 0.4) as panel:
        assert isinstance(panel.panel, SerialLedPanel) and panel.panel.wait_connected(3.0)
        assert panel.connected is True
        panel.show(Scene({"turn.2": TURN}))
        assert panel.wait_shown(3.0)
    assert panel.connected is False
