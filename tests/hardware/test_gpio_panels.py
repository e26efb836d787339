# SPDX-License-Identifier: MIT
"""LEDs on GPIO: single LEDs and a 74HC595 chain on gpiozero's mock pins, and the RPi.GPIO driver."""

from __future__ import annotations

import sys
import time
import types
from collections.abc import Iterator
from typing import Any

import pytest
from gpiozero.pins.mock import MockPin, MockSPIDevice
from hardware_fakes import mock_pins

from hardware.gpio import (
    GpioError,
    GpioLedPanel,
    RpiGpioDriver,
    ShiftRegisterPanel,
    chain_bytes,
    frame_bits,
    import_rpi_gpio,
)
from hardware.layout import LedLayout
from hardware.panels import open_panel
from hardware.scene import ILLEGAL, TURN, Scene


@pytest.fixture
def mock_factory() -> Iterator[Any]:
    """gpiozero on mock pins."""
    yield from mock_pins()


def test_single_leds_light_steady_and_blink_at_the_patterns_rate(mock_factory: Any) -> None:
    panel = open_panel("gpio:turn.1=17,turn.2=GPIO27,status=22", LedLayout.standard())
    assert isinstance(panel, GpioLedPanel) and panel.pins == ("turn.1", "turn.2", "status")
    turn1, turn2, status = (mock_factory.pin(n) for n in (17, 27, 22))
    panel.show(Scene({"turn.1": TURN, "point.5": ILLEGAL, "status": "amber fast blink"}))
    assert turn1.state and not turn2.state
    time.sleep(0.8)  # fast blink: 125 ms on, 125 ms off, run by gpiozero's own thread
    changes = len(status.states)
    assert changes >= 5, status.states  # a 1 Hz blink would have changed twice
    intervals = sorted(s.timestamp for s in status.states[2:])
    assert 0.1 < intervals[len(intervals) // 2] < 0.3, intervals
    panel.show(Scene({"turn.2": TURN}))
    assert not turn1.state and turn2.state
    time.sleep(0.3)
    assert not status.state and len(status.states) <= changes + 1  # stopped blinking, dark
    panel.close()
    assert not turn2.state


def test_an_unchanged_light_is_left_alone(mock_factory: Any) -> None:
    panel = GpioLedPanel({"status": 22})
    panel.show(Scene({"status": "green blink"}))
    time.sleep(0.05)
    before = list(mock_factory.pin(22).states)
    panel.show(Scene({"status": "green blink"}))  # restarting would cut the on half short
    assert mock_factory.pin(22).states[: len(before)] == before
    panel.close()


def test_active_low_leds_are_lit_by_a_low_pin(mock_factory: Any) -> None:
    with open_panel("gpio:status=22,active_high=0") as panel:
        pin = mock_factory.pin(22)
        assert pin.state  # off = high
        panel.show(Scene({"status": "green"}))
        assert not pin.state


def test_a_pin_taken_twice_is_a_gpio_error(mock_factory: Any) -> None:
    with pytest.raises(GpioError, match="GPIO pin 17"):
        GpioLedPanel({"turn.1": 17, "turn.2": 17})
    with pytest.raises(GpioError, match="GPIO pin 99"):
        GpioLedPanel({"turn.1": 99})


class _ChainPin(MockPin):
    """A mock pin that tells a 74HC595 chain model about each change of its level."""

    chain: _Chain | None = None

    def _change_state(self, value: bool) -> bool:
        changed = super()._change_state(value)
        if changed and self.chain is not None:
            self.chain.edge(self, value)
        return changed


class _Chain:
    """74HC595 chips in a row: SRCLK rising shifts SER in, RCLK rising copies the register out."""

    def __init__(self, factory: Any, data: int, clock: int, latch: int, chips: int) -> None:
        self.pins = {
            name: factory.pin(n, pin_class=_ChainPin) for name, n in (("ser", data), ("srclk", clock), ("rclk", latch))
        }
        for pin in self.pins.values():
            pin.chain = self
        self.register = [False] * (8 * chips)
        self.outputs = [False] * (8 * chips)
        self.latches = 0

    def edge(self, pin: Any, value: bool) -> None:
        if pin is self.pins["srclk"] and value:
            # Q0 of the first chip takes SER; every bit moves one on; the far Q7' falls off.
            self.register = [self.pins["ser"].state, *self.register[:-1]]
        elif pin is self.pins["rclk"] and value:
            self.outputs = list(self.register)
            self.latches += 1


def test_a_bit_banged_595_chain_latches_each_scene_onto_the_right_outputs(mock_factory: Any) -> None:
    layout = LedLayout.standard()
    chain = _Chain(mock_factory, 17, 27, 22, chips=6)
    panel = open_panel("gpio595:data=17,clock=27,latch=22", layout)
    assert isinstance(panel, ShiftRegisterPanel)
    assert chain.latches == 1 and not any(chain.outputs)  # dark at start
    panel.show(Scene({"point.1": "red", "status": "green", "cube.1.64": "white", "turn.2": TURN}))
    lit = {i for i, on in enumerate(chain.outputs) if on}
    assert lit == {layout.indices(n)[0] for n in ("point.1", "status", "cube.1.64", "turn.2")} == {3, 0, 43, 30}
    assert panel.lit == [i in lit for i in range(44)]
    latches = chain.latches
    panel.show(Scene({"point.1": "blue", "status": "amber", "cube.1.64": "white", "turn.2": "red"}))
    assert chain.latches == latches  # the same LEDs lit: nothing to send
    panel.close()
    assert not any(chain.outputs)


def test_blinking_on_a_595_chain_follows_the_clock_the_controller_refreshes(mock_factory: Any) -> None:
    layout = LedLayout.standard()
    chain = _Chain(mock_factory, 17, 27, 22, chips=6)
    now = [0.0]
    panel = ShiftRegisterPanel(layout, data=17, clock=27, latch=22, timer=lambda: now[0])
    panel.show(Scene({"point.6": "red blink", "status": "green"}))
    assert panel.animated
    point6 = layout.indices("point.6")[0]
    seen = []
    for t in (0.0, 0.25, 0.6, 0.9, 1.1):
        panel.refresh(t)
        seen.append(chain.outputs[point6])
        assert chain.outputs[0]  # the steady LED stays lit
    assert seen == [True, True, False, False, True]
    panel.show(Scene({"status": "green"}))
    assert not panel.animated


class _SpiChain(MockSPIDevice):
    """The chain on the SPI bus: CE0 rising (the end of a transfer) is the latch."""

    def __init__(self, bits: int) -> None:
        super().__init__(clock_pin=11, mosi_pin=10, select_pin=8)
        self.bits = bits
        self.outputs = [False] * bits

    def on_select(self) -> None:
        super().on_select()
        if self.select_pin.state and len(self.rx_buf) >= self.bits:
            shifted = self.rx_buf[-self.bits :]
            # The first bit shifted in ends up at the far end of the chain.
            self.outputs = list(reversed(shifted))
            self.rx_buf = []


def test_a_595_chain_on_the_spi_bus_latches_at_the_end_of_each_transfer(mock_factory: Any) -> None:
    layout = LedLayout.standard()
    device = _SpiChain(48)
    with open_panel("gpio595:spi=0.0", layout) as panel:
        panel.show(Scene({"point.24": "red", "off.1": "green"}))
        lit = {i for i, on in enumerate(device.outputs) if on}
        assert lit == {layout.indices("point.24")[0], layout.indices("off.1")[0]} == {28, 2}
    assert not any(device.outputs)


def test_chain_bytes_send_the_farthest_chip_first() -> None:
    bits = [False] * 16
    bits[0] = bits[9] = True
    assert chain_bytes(bits) == [0b10, 0b1]
    assert chain_bytes([True] * 10) == [0b11, 0xFF]


def test_frame_bits_follow_the_layout() -> None:
    layout = LedLayout.standard()
    bits = frame_bits(Scene({"bar.2": "red fast blink"}), layout, t_ms=0)
    assert [i for i, b in enumerate(bits) if b] == [22]
    assert not any(frame_bits(Scene({"bar.2": "red fast blink"}), layout, t_ms=200))


# -- RPi.GPIO ------------------------------------------------------------------------------------


class _FakeRpiGpio(types.ModuleType):
    """What RPi.GPIO offers, recording the calls."""

    BCM, OUT, HIGH, LOW = 11, 0, 1, 0

    def __init__(self) -> None:
        super().__init__("RPi.GPIO")
        self.calls: list[tuple[Any, ...]] = []
        self.levels: dict[int, int] = {}

    def setwarnings(self, flag: bool) -> None:
        self.calls.append(("setwarnings", flag))

    def setmode(self, mode: int) -> None:
        self.calls.append(("setmode", mode))

    def setup(self, pin: int, direction: int, initial: int = 0) -> None:
        self.calls.append(("setup", pin, direction, initial))
        self.levels[pin] = initial

    def output(self, pin: int, level: int) -> None:
        self.levels[pin] = level

    def cleanup(self, pin: int) -> None:
        self.calls.append(("cleanup", pin))

    def PWM(self, pin: int, frequency: float) -> Any:  # noqa: N802  # RPi.GPIO's name
        module = self

        class Pwm:
            def start(self, duty: float) -> None:
                module.calls.append(("pwm", pin, frequency, duty))

            def stop(self) -> None:
                module.calls.append(("pwm-stop", pin))

        return Pwm()


def test_the_rpigpio_driver_sets_up_bcm_pins_and_blinks_with_software_pwm() -> None:
    gpio = _FakeRpiGpio()
    panel = GpioLedPanel({"turn.1": 17, "status": "GPIO22"}, backend=RpiGpioDriver(gpio))
    assert ("setmode", gpio.BCM) in gpio.calls
    assert ("setup", 17, gpio.OUT, gpio.LOW) in gpio.calls and ("setup", 22, gpio.OUT, gpio.LOW) in gpio.calls
    panel.show(Scene({"turn.1": TURN, "status": "red blink"}))
    assert gpio.levels[17] == gpio.HIGH
    assert ("pwm", 22, 1.0, 50.0) in gpio.calls  # 1 Hz, half on
    panel.show(Scene({}))
    assert gpio.levels[17] == gpio.LOW and ("pwm-stop", 22) in gpio.calls
    panel.close()
    assert ("cleanup", 17) in gpio.calls and ("cleanup", 22) in gpio.calls


def test_the_rpigpio_backend_is_chosen_by_address(monkeypatch: pytest.MonkeyPatch) -> None:
    gpio = _FakeRpiGpio()
    package = types.ModuleType("RPi")
    package.GPIO = gpio  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "RPi", package)
    monkeypatch.setitem(sys.modules, "RPi.GPIO", gpio)
    with open_panel("gpio:status=5,backend=rpigpio") as panel:
        panel.show(Scene({"status": "green"}))
        assert gpio.levels[5] == gpio.HIGH
    assert gpio.levels[5] == gpio.LOW and ("cleanup", 5) in gpio.calls


def test_rpigpio_off_a_pi_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "RPi", None)  # not installed
    monkeypatch.delitem(sys.modules, "RPi.GPIO", raising=False)
    with pytest.raises(GpioError, match=r"RPi\.GPIO is not installed: .* on a Pi 5 pip install rpi-lgpio"):
        import_rpi_gpio()


def test_rpigpio_raising_at_import_is_explained(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    package = tmp_path / "RPi"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "GPIO.py").write_text("raise RuntimeError('This module can only be run on a Raspberry Pi!')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "RPi", raising=False)
    monkeypatch.delitem(sys.modules, "RPi.GPIO", raising=False)
    with pytest.raises(GpioError, match=r"only be run on a Raspberry Pi.*install rpi-lgpio"):
        import_rpi_gpio()


def test_rpigpio_failing_on_a_pi_5_points_to_rpi_lgpio() -> None:
    gpio = _FakeRpiGpio()

    def setmode(mode: int) -> None:
        raise RuntimeError("Cannot determine SOC peripheral base address")

    gpio.setmode = setmode  # type: ignore[method-assign]
    with pytest.raises(GpioError, match=r"SOC peripheral base address.*rpi-lgpio"):
        RpiGpioDriver(gpio)
