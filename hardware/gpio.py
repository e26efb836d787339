# SPDX-License-Identifier: MIT
"""LEDs wired straight to the Raspberry Pi's GPIO: a few single LEDs, or a 74HC595 chain.

Two pin drivers: gpiozero (the default; on a Pi 5 it works through lgpio) and RPi.GPIO (the
``backend=rpigpio`` option; on a Pi 5, and on Raspberry Pi OS Bookworm, install ``rpi-lgpio``,
which provides the same ``RPi.GPIO`` module). Both are imported only when a panel is opened:
RPi.GPIO raises at import on anything but a Pi.

These LEDs have one colour each, so a lit LED shows any colour of the scene; the patterns
blink. Tests run on gpiozero's ``MockFactory``.

Single LEDs (:class:`GpioLedPanel`), each: GPIO pin -> 330 ohm -> LED anode, cathode -> GND::

    panel = GpioLedPanel({"turn.1": 17, "turn.2": 27, "status": 22})
    panel.show(scene)

A 74HC595 chain (:class:`ShiftRegisterPanel`), one output per chain position: the data pin to
SER (pin 14) of the first chip, the clock to SRCLK (11) of every chip, the latch to RCLK (12) of
every chip; each chip's Q7' (9) to the next one's SER; /OE (13) to GND, /SRCLR (10) to 3.3 V;
Q0 of the first chip is chain position 0, its Q7 position 7, the next chip's Q0 position 8. At
3.3 V a 74HC595 sinks or sources about 6 mA per output within its 70 mA total: use a TPIC6B595
for brighter LEDs. On the SPI bus instead (``spi=0.0``): MOSI (GPIO 10) to SER, SCLK (GPIO 11)
to SRCLK, CE0 (GPIO 8) to RCLK; CE0 rising at the end of a transfer is exactly the latch edge.
"""

from __future__ import annotations

import importlib
import logging
import time
import warnings
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any, Protocol

from hardware.layout import LedLayout
from hardware.panels import BasePanel, PanelAddressError, PanelError, parse_options
from hardware.scene import Light, Pattern, Scene, check_led_name

log = logging.getLogger(__name__)

Pin = int | str

BACKENDS = ("gpiozero", "rpigpio")

RPI_GPIO_HELP = (
    "RPi.GPIO works only on a Raspberry Pi, and not on a Pi 5: there (and on Raspberry Pi OS "
    "Bookworm) uninstall RPi.GPIO and install rpi-lgpio (pip install rpi-lgpio, or apt install "
    "python3-rpi-lgpio), which provides the same module; or leave the backend at gpiozero"
)


class GpioError(PanelError):
    """GPIO pins that cannot be used: no GPIO here, a missing library, a pin taken or unknown."""


def parse_pin(text: str | int) -> Pin:
    """A pin as gpiozero takes it: ``"17"`` is GPIO 17 (Broadcom numbering); ``"GPIO17"``,
    ``"BOARD11"`` and ``"J8:11"`` are passed on as names."""
    if isinstance(text, int):
        return text
    text = text.strip()
    if text.isdigit():
        return int(text)
    if not text:
        raise PanelAddressError("an empty pin")
    return text


def _bcm(pin: Pin) -> int:
    """RPi.GPIO wants Broadcom numbers: ``17`` or ``"GPIO17"``."""
    if isinstance(pin, int):
        return pin
    upper = pin.upper()
    if upper.startswith("GPIO") and upper[4:].isdigit():
        return int(upper[4:])
    raise GpioError(f"RPi.GPIO takes Broadcom pin numbers (17 or GPIO17), not {pin!r}")


def _flag(value: str, what: str) -> bool:
    lowered = value.lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off"):
        return False
    raise PanelAddressError(f"{what} is 1 or 0, not {value!r}")


# -- pin drivers -------------------------------------------------------------------------------


class OutputLine(Protocol):
    """One output pin."""

    def set(self, on: bool) -> None:
        """Drive the pin to its active level (``True``) or idle."""

    def blink(self, on_time: float, off_time: float) -> None:
        """Blink in the background until the next :meth:`set`."""

    def close(self) -> None:
        """Release the pin."""


class PinDriver(Protocol):
    """Makes output lines; ``gpiozero`` or ``rpigpio``."""

    name: str

    def output(self, pin: Pin, active_high: bool = True) -> OutputLine:
        """The output line on ``pin``, off."""

    def close(self) -> None:
        """Release whatever the driver holds."""


class _GpiozeroLine:
    def __init__(self, device: Any) -> None:
        self._device = device

    def set(self, on: bool) -> None:
        if on:
            self._device.on()
        else:
            self._device.off()

    def blink(self, on_time: float, off_time: float) -> None:
        self._device.blink(on_time=on_time, off_time=off_time, background=True)

    def close(self) -> None:
        # A closed gpiozero pin becomes an input and may float high: turn the LED off first.
        self._device.off()
        self._device.close()


class GpiozeroDriver:
    """Output lines as gpiozero ``DigitalOutputDevice`` objects.

    :param pin_factory: a gpiozero pin factory; default gpiozero's own choice
        (``GPIOZERO_PIN_FACTORY``, else lgpio, RPi.GPIO, pigpio, native).
    """

    name = "gpiozero"

    def __init__(self, pin_factory: Any = None) -> None:
        try:
            self._gpiozero = importlib.import_module("gpiozero")
        except ImportError:
            raise GpioError("gpiozero is not installed: pip install gpiozero (or bgboard[pi])") from None
        self._factory = pin_factory

    def output(self, pin: Pin, active_high: bool = True) -> OutputLine:
        """A ``DigitalOutputDevice`` on ``pin``, off."""
        gz = self._gpiozero
        try:
            # gpiozero warns about each driver it tries and lacks; what is missing is said once.
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", gz.PinFactoryFallback)
                device = gz.DigitalOutputDevice(
                    pin, active_high=active_high, initial_value=False, pin_factory=self._factory
                )
        except gz.BadPinFactory:
            raise GpioError(
                "gpiozero found no GPIO driver here (not a Raspberry Pi?): use the fake or terminal LED panel,"
                " or set GPIOZERO_PIN_FACTORY=mock to try the wiring on a mock"
            ) from None
        except (gz.GPIOZeroError, ValueError) as exc:
            raise GpioError(f"GPIO pin {pin}: {exc}") from None
        return _GpiozeroLine(device)

    def close(self) -> None:
        """Nothing to release beyond the lines."""


def import_rpi_gpio() -> ModuleType:
    """``RPi.GPIO``, with a clear error where it cannot work.

    :raises GpioError: not installed, or not a Raspberry Pi (it raises ``RuntimeError`` at import).
    """
    try:
        return importlib.import_module("RPi.GPIO")
    except RuntimeError as exc:
        raise GpioError(f"RPi.GPIO refused to start ({exc}): {RPI_GPIO_HELP}") from None
    except ImportError:
        raise GpioError(
            "RPi.GPIO is not installed: on a Pi 4 or older pip install RPi.GPIO; on a Pi 5 pip install"
            " rpi-lgpio (it provides the same module; the two cannot be installed together)"
        ) from None


class _RpiGpioLine:
    def __init__(self, gpio: ModuleType, pin: int, active_high: bool) -> None:
        self._gpio, self._pin, self._active_high = gpio, pin, active_high
        self._pwm: Any = None

    def _stop(self) -> None:
        if self._pwm is not None:
            self._pwm.stop()
            self._pwm = None

    def set(self, on: bool) -> None:
        self._stop()
        g = self._gpio
        self._gpio.output(self._pin, g.HIGH if on == self._active_high else g.LOW)

    def blink(self, on_time: float, off_time: float) -> None:
        # RPi.GPIO's software PWM at a frequency of one cycle per blink does the blinking.
        self._stop()
        duty = 100.0 * on_time / (on_time + off_time)
        self._pwm = self._gpio.PWM(self._pin, 1.0 / (on_time + off_time))
        self._pwm.start(duty if self._active_high else 100.0 - duty)

    def close(self) -> None:
        self.set(False)
        self._gpio.cleanup(self._pin)


class RpiGpioDriver:
    """Output lines through ``RPi.GPIO`` (or ``rpi-lgpio`` on a Pi 5), Broadcom numbering.

    :param module: the ``RPi.GPIO`` module (tests pass a stand-in); default: import it.
    """

    name = "rpigpio"

    def __init__(self, module: ModuleType | None = None) -> None:
        self._gpio = module if module is not None else import_rpi_gpio()
        try:
            self._gpio.setwarnings(False)
            self._gpio.setmode(self._gpio.BCM)
        except RuntimeError as exc:
            # RPi.GPIO imports on a Pi 5 but fails here ("Cannot determine SOC peripheral base address").
            raise GpioError(f"RPi.GPIO cannot drive the pins ({exc}): {RPI_GPIO_HELP}") from None

    def output(self, pin: Pin, active_high: bool = True) -> OutputLine:
        """``pin`` (Broadcom number) set up as an output, off."""
        number = _bcm(pin)
        g = self._gpio
        try:
            g.setup(number, g.OUT, initial=g.LOW if active_high else g.HIGH)
        except (RuntimeError, ValueError) as exc:
            raise GpioError(f"GPIO pin {number}: {exc}; {RPI_GPIO_HELP}") from None
        return _RpiGpioLine(g, number, active_high)

    def close(self) -> None:
        """Nothing to release beyond the lines."""


def pin_driver(backend: str | PinDriver = "gpiozero", pin_factory: Any = None) -> PinDriver:
    """The pin driver called ``backend`` (``gpiozero`` or ``rpigpio``), or ``backend`` itself."""
    if not isinstance(backend, str):
        return backend
    if backend == "gpiozero":
        return GpiozeroDriver(pin_factory)
    if backend == "rpigpio":
        if pin_factory is not None:
            raise PanelAddressError("pin_factory is a gpiozero option; the rpigpio backend has none")
        return RpiGpioDriver()
    raise PanelAddressError(f"no GPIO backend {backend!r}; the backends are {', '.join(BACKENDS)}")


def _half_periods(pattern: Pattern) -> tuple[float, float]:
    half = pattern.period_ms / 2000.0
    return half, half


# -- single LEDs -------------------------------------------------------------------------------


class GpioLedPanel(BasePanel):
    """A few single-colour LEDs, each on its own GPIO pin (see the module's wiring notes).

    LEDs of the scene that have no pin are not shown; a lit LED shows any colour; blink and
    pulse patterns blink at the pattern's rate (these LEDs cannot dim).

    :param pins: LED name -> pin (``17`` or ``"GPIO17"``, Broadcom numbering).
    :param layout: kept for :attr:`layout`; the pins say where each LED is.
    :param backend: ``gpiozero`` (default) or ``rpigpio``.
    :param active_high: the pin drives the LED's anode (``False``: it sinks the cathode).
    :param pin_factory: a gpiozero pin factory (tests pass a ``MockFactory``).
    """

    def __init__(
        self,
        pins: Mapping[str, Pin],
        layout: LedLayout | None = None,
        *,
        backend: str | PinDriver = "gpiozero",
        active_high: bool = True,
        pin_factory: Any = None,
    ) -> None:
        super().__init__(layout)
        if not pins:
            raise PanelAddressError("a GPIO LED panel needs at least one LED=PIN")
        for name in pins:
            try:
                check_led_name(name)
            except ValueError as exc:
                raise PanelAddressError(str(exc)) from None
        self._driver = pin_driver(backend, pin_factory)
        self._lines: dict[str, OutputLine] = {}
        self._shown: dict[str, Light | None] = {}
        try:
            for name, pin in pins.items():
                self._lines[name] = self._driver.output(pin, active_high)
                self._shown[name] = None
        except BaseException:
            self.close()
            raise

    @classmethod
    def from_address(cls, spec: str, layout: LedLayout | None = None, **options: Any) -> GpioLedPanel:
        """From the part after ``gpio:``: ``turn.1=17,turn.2=27,status=22[,backend=rpigpio][,active_high=0]``."""
        values = parse_options(spec, f"gpio:{spec}")
        backend = values.pop("backend", "gpiozero")
        active_high = _flag(values.pop("active_high", "1"), "active_high")
        pins = {name: parse_pin(pin) for name, pin in values.items()}
        return cls(pins, layout, backend=backend, active_high=active_high, **options)

    @property
    def pins(self) -> tuple[str, ...]:
        """The LED names that have a pin."""
        return tuple(self._lines)

    def show(self, scene: Scene) -> None:
        """Light the wired LEDs of ``scene``; an LED already showing the same light is left alone."""
        self._check_open()
        for name, line in self._lines.items():
            light = scene.get(name)
            if light == self._shown[name]:
                continue
            if light is None:
                line.set(False)
            elif light.pattern is Pattern.STEADY:
                line.set(True)
            else:
                line.blink(*_half_periods(light.pattern))
            self._shown[name] = light

    def close(self) -> None:
        """Turn the LEDs off and release the pins."""
        if self.closed:
            return
        super().close()
        for line in self._lines.values():
            line.close()
        self._lines.clear()
        self._driver.close()


# -- a 74HC595 chain ---------------------------------------------------------------------------


def frame_bits(scene: Scene, layout: LedLayout, t_ms: float) -> list[bool]:
    """Which chain positions are lit at time ``t_ms`` (blinking LEDs follow their pattern's clock)."""
    bits = [False] * layout.length
    for name, light in scene.items():
        if light.pattern.is_on(t_ms):
            for index in layout.indices(name):
                bits[index] = True
    return bits


def chain_bytes(bits: list[bool]) -> list[int]:
    """The bytes to shift into the chain, farthest chip first, its Q7 first (MSB first).

    Position ``i`` is bit ``i % 8`` of chip ``i // 8``; the first chip is the one the data pin
    feeds, and the first byte shifted ends up in the last chip.
    """
    chips = (len(bits) + 7) // 8
    out = []
    for chip in reversed(range(chips)):
        value = 0
        for bit in range(8):
            index = chip * 8 + bit
            if index < len(bits) and bits[index]:
                value |= 1 << bit
        out.append(value)
    return out


class ShiftRegisterPanel(BasePanel):
    """Single-colour LEDs on a chain of 74HC595 shift registers (see the module's wiring notes).

    Each chain position of the layout is one output. The chips hold their outputs by
    themselves, so blinking needs the host: call :meth:`refresh` every 50 ms or so while
    :attr:`animated` is true (the controller's loop does); without it blinking LEDs stay lit.

    :param layout: the LED layout: position ``i`` is output ``Q(i % 8)`` of chip ``i // 8``.
    :param data: the pin wired to SER (bit-banged); with ``clock`` and ``latch``.
    :param clock: the pin wired to every SRCLK.
    :param latch: the pin wired to every RCLK.
    :param spi: ``(port, device)`` to use the SPI bus instead of three pins (gpiozero only).
    :param backend: ``gpiozero`` (default) or ``rpigpio`` (bit-banged only).
    :param active_high: an output high lights its LED (``False``: the LEDs hang from 3.3 V and
        the outputs sink them).
    :param pin_factory: a gpiozero pin factory (tests pass a ``MockFactory``).
    :param timer: the clock for the blink patterns, in seconds.
    """

    def __init__(
        self,
        layout: LedLayout | None = None,
        *,
        data: Pin | None = None,
        clock: Pin | None = None,
        latch: Pin | None = None,
        spi: tuple[int, int] | None = None,
        backend: str | PinDriver = "gpiozero",
        active_high: bool = True,
        pin_factory: Any = None,
        timer: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(layout)
        self._active_high = active_high
        self._timer = timer
        self._scene = Scene.dark()
        self._written: list[int] | None = None
        self._lit = [False] * self.layout.length
        self._lines: list[OutputLine] = []
        self._spi: Any = None
        self._driver: PinDriver | None = None
        pins = (data, clock, latch)
        if spi is not None:
            if any(p is not None for p in pins):
                raise PanelAddressError("a 74HC595 chain is on SPI or on data/clock/latch pins, not both")
            if backend != "gpiozero":
                raise PanelAddressError("the 74HC595 chain on SPI goes through gpiozero (backend=gpiozero)")
            self._spi = _open_spi(spi, pin_factory)
        else:
            if any(p is None for p in pins):
                raise PanelAddressError("a bit-banged 74HC595 chain needs data, clock and latch pins")
            self._driver = pin_driver(backend, pin_factory)
            try:
                # The register's inputs are always active high, whatever the LEDs hang from.
                self._lines = [self._driver.output(p, True) for p in pins if p is not None]
            except BaseException:
                self.close()
                raise
        self._write([False] * self.layout.length)

    @classmethod
    def from_address(cls, spec: str, layout: LedLayout | None = None, **options: Any) -> ShiftRegisterPanel:
        """From the part after ``gpio595:``: ``data=17,clock=27,latch=22[,backend=rpigpio]``,
        or ``spi=0.0`` (port 0, CE0); ``active_high=0`` for LEDs the outputs sink."""
        values = parse_options(spec, f"gpio595:{spec}")
        kwargs: dict[str, Any] = {}
        if "spi" in values:
            port, _, device = values.pop("spi").partition(".")
            if not port.isdigit() or not (device or "0").isdigit():
                raise PanelAddressError(f"gpio595:{spec}: spi is PORT.DEVICE, e.g. 0.0")
            kwargs["spi"] = (int(port), int(device or "0"))
        for key in ("data", "clock", "latch"):
            if key in values:
                kwargs[key] = parse_pin(values.pop(key))
        if "backend" in values:
            kwargs["backend"] = values.pop("backend")
        if "active_high" in values:
            kwargs["active_high"] = _flag(values.pop("active_high"), "active_high")
        if values:
            raise PanelAddressError(
                f"gpio595:{spec}: unknown option {next(iter(values))!r}; the options are data, clock,"
                " latch, spi, backend and active_high"
            )
        return cls(layout, **kwargs, **options)

    @property
    def animated(self) -> bool:
        """Whether the scene showing has blinking LEDs (so :meth:`refresh` should be called)."""
        return any(light.pattern is not Pattern.STEADY for light in self._scene.values())

    @property
    def lit(self) -> list[bool]:
        """What the chain shows now, one flag per position."""
        return list(self._lit)

    def show(self, scene: Scene) -> None:
        """Show ``scene`` (blinking LEDs start in their lit half)."""
        self._check_open()
        self._scene = scene
        self.refresh()

    def refresh(self, now: float | None = None) -> None:
        """Bring blinking LEDs up to date with the clock (``now`` in seconds; default the timer's)."""
        self._check_open()
        t = self._timer() if now is None else now
        self._write(frame_bits(self._scene, self.layout, t * 1000.0))

    def _write(self, bits: list[bool]) -> None:
        levels = [b == self._active_high for b in bits]
        data = chain_bytes(levels)
        if data == self._written:
            return
        if self._spi is not None:
            self._spi.transfer(data)
        else:
            ser, srclk, rclk = self._lines
            for byte in data:
                for bit in range(7, -1, -1):
                    ser.set(bool(byte >> bit & 1))
                    srclk.set(True)
                    srclk.set(False)
            rclk.set(True)
            rclk.set(False)
        self._written = data
        self._lit = list(bits)

    def close(self) -> None:
        """Darken the chain and release the pins."""
        if self.closed:
            return
        try:
            if self._spi is not None or len(self._lines) == 3:
                self._write([False] * self.layout.length)
        finally:
            super().close()
            for line in self._lines:
                line.close()
            self._lines = []
            if self._spi is not None:
                self._spi.close()
            if self._driver is not None:
                self._driver.close()


def _open_spi(spi: tuple[int, int], pin_factory: Any) -> Any:
    try:
        gpiozero = importlib.import_module("gpiozero")
    except ImportError:
        raise GpioError("gpiozero is not installed: pip install gpiozero (or bgboard[pi])") from None
    port, device = spi
    try:
        factory = pin_factory
        if factory is None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", gpiozero.PinFactoryFallback)
                gpiozero.Device.ensure_pin_factory()
            factory = gpiozero.Device.pin_factory
        return factory.spi(port=port, device=device)
    except gpiozero.BadPinFactory:
        raise GpioError("gpiozero found no GPIO driver here (not a Raspberry Pi?)") from None
    except (gpiozero.GPIOZeroError, ValueError) as exc:
        raise GpioError(f"SPI {port}.{device}: {exc}") from None
