# SPDX-License-Identifier: MIT
"""Push buttons on GPIO pins: done, undo, double, take, drop, hint.

Each button connects its GPIO pin to GND when pressed; the Pi's internal pull-up holds the pin
high otherwise, so no resistor is needed. gpiozero debounces each button (``bounce_time``)
and calls back from its own thread; presses are queued, so the controller can take them when it
is ready (:meth:`ButtonPanel.get`) or be called at once (``when_pressed``).

Example::

    with ButtonPanel({"done": 5, "undo": 6, "double": 13, "take": 19, "drop": 26, "hint": 21}) as buttons:
        press = buttons.get(timeout=1.0)   # Press(name='done', time=...) or None

Tests set ``gpiozero.Device.pin_factory = MockFactory()`` and press a button with
``Device.pin_factory.pin(5).drive_low()``.
"""

from __future__ import annotations

import importlib
import logging
import queue
import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Final, Self

from hardware.gpio import GpioError, Pin, parse_pin
from hardware.panels import PanelAddressError, parse_options

log = logging.getLogger(__name__)

#: The buttons a board may have.
BUTTON_NAMES: Final = ("done", "undo", "double", "take", "drop", "hint")
#: Debounce time, seconds: a press within this long of the last is the same press.
BOUNCE_TIME: Final = 0.05


@dataclass(frozen=True, slots=True)
class Press:
    """A button pressed: its name and when (``time.monotonic()``)."""

    name: str
    time: float


def parse_button_pins(spec: str | Mapping[str, Pin]) -> dict[str, Pin]:
    """Button name -> pin, from a mapping (config) or ``"done=5,undo=6"``.

    :raises PanelAddressError: an unknown button, or a pin used twice.
    """
    raw: Mapping[str, Pin | str] = parse_options(spec, f"buttons {spec!r}") if isinstance(spec, str) else spec
    pins: dict[str, Pin] = {}
    for name, pin in raw.items():
        if name not in BUTTON_NAMES:
            raise PanelAddressError(f"no button named {name!r}; the buttons are {', '.join(BUTTON_NAMES)}")
        pins[name] = parse_pin(pin)
    taken: dict[Pin, str] = {}
    for name, pin in pins.items():
        if pin in taken:
            raise PanelAddressError(f"buttons {taken[pin]} and {name} are both on pin {pin}")
        taken[pin] = name
    return pins


class ButtonPanel:
    """Named push buttons on GPIO pins, through gpiozero.

    :param pins: button name -> pin (``5`` or ``"GPIO5"``), or ``"done=5,undo=6,..."``.
    :param bounce_time: debounce, seconds.
    :param pull_up: the button connects the pin to GND (internal pull-up on); ``False``: to 3.3 V
        (internal pull-down).
    :param when_pressed: called with the button's name on each press (from gpiozero's thread).
    :param pin_factory: a gpiozero pin factory (default gpiozero's own choice).
    :raises GpioError: no GPIO here, gpiozero missing, or a pin taken or unknown.
    """

    def __init__(
        self,
        pins: Mapping[str, Pin] | str,
        *,
        bounce_time: float | None = BOUNCE_TIME,
        pull_up: bool = True,
        when_pressed: Callable[[str], None] | None = None,
        pin_factory: Any = None,
    ) -> None:
        self._pins = parse_button_pins(pins)
        if not self._pins:
            raise PanelAddressError("no buttons given")
        self.when_pressed = when_pressed
        self._presses: queue.SimpleQueue[Press] = queue.SimpleQueue()
        self._buttons: dict[str, Any] = {}
        try:
            gz = importlib.import_module("gpiozero")
        except ImportError:
            raise GpioError("gpiozero is not installed: pip install gpiozero (or bgboard[pi])") from None
        try:
            for name, pin in self._pins.items():
                # gpiozero warns about each driver it tries and lacks; what is missing is said once.
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", gz.PinFactoryFallback)
                    button = gz.Button(pin, pull_up=pull_up, bounce_time=bounce_time, pin_factory=pin_factory)
                button.when_pressed = self._callback(name)
                self._buttons[name] = button
        except gz.BadPinFactory:
            self.close()
            raise GpioError(
                "gpiozero found no GPIO driver here (not a Raspberry Pi?); set GPIOZERO_PIN_FACTORY=mock to try"
            ) from None
        except (gz.GPIOZeroError, ValueError) as exc:
            self.close()
            raise GpioError(f"buttons: {exc}") from None

    def _callback(self, name: str) -> Callable[[], None]:
        def pressed() -> None:
            self._presses.put(Press(name, time.monotonic()))
            callback = self.when_pressed
            if callback is not None:
                try:
                    callback(name)
                except Exception:
                    # gpiozero's thread would swallow it silently; say what went wrong.
                    log.exception("the when_pressed callback failed for button %s", name)

        return pressed

    @property
    def names(self) -> tuple[str, ...]:
        """The buttons wired, in the order given."""
        return tuple(self._pins)

    @property
    def pins(self) -> dict[str, Pin]:
        """Button name -> pin."""
        return dict(self._pins)

    def is_pressed(self, name: str) -> bool:
        """Whether button ``name`` is held down now."""
        try:
            return bool(self._buttons[name].is_pressed)
        except KeyError:
            raise KeyError(f"no button {name!r} is wired; the buttons are {', '.join(self._buttons)}") from None

    def get(self, timeout: float | None = None) -> Press | None:
        """The oldest press not taken yet, waiting up to ``timeout`` seconds (``None``: forever)."""
        try:
            return self._presses.get(timeout=timeout)
        except queue.Empty:
            return None

    def pending(self) -> list[Press]:
        """Every press not taken yet, oldest first, without waiting."""
        out = []
        while True:
            try:
                out.append(self._presses.get_nowait())
            except queue.Empty:
                return out

    def close(self) -> None:
        """Release the pins."""
        for button in self._buttons.values():
            button.close()
        self._buttons.clear()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
