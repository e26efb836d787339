# SPDX-License-Identifier: MIT
"""LED panels: anything that shows a :class:`~hardware.scene.Scene`, opened by an address string.

Every panel has ``show(scene)`` and ``close()`` and is a context manager. Addresses:

============================================  =================================================
``fake``                                      records the scenes (:class:`FakeLedPanel`)
``terminal``                                  draws the board's lights as text
``serial:URL``, a device path, ``hwgrep://``  the LED controller on a serial port (any pyserial
                                              URL: ``serial:/dev/ttyUSB0``,
                                              ``hwgrep://1a86:7523``, ``serial:loop://``)
``gpio:turn.1=17,turn.2=27,status=22``        a few LEDs on GPIO pins (``backend=rpigpio`` to
                                              use RPi.GPIO instead of gpiozero)
``gpio595:data=17,clock=27,latch=22``         a 74HC595 chain, bit-banged (``spi=0.0``: on the
                                              SPI bus, CE0 as the latch)
============================================  =================================================

Hardware libraries are imported when a panel that needs them is opened, never before.

Some panels can do more, and every panel says so rather than leaving callers to probe
(:class:`ManagedPanel`; :class:`BasePanel` gives each ability its default): a 74HC595 chain
blinks only while :meth:`~ManagedPanel.refresh` is called (:attr:`~ManagedPanel.animated`),
the serial controller has a link that can drop (:attr:`~ManagedPanel.connected`) and
acknowledges what it shows (:meth:`~ManagedPanel.wait_shown`). :class:`DimmedPanel` shows
every scene at a brightness and passes those abilities on.

>>> from hardware.layout import LedLayout
>>> from hardware.scene import Scene, TURN
>>> with open_panel("fake", LedLayout.standard()) as panel:
...     panel.show(Scene({"turn.1": TURN}))
>>> panel.last["turn.1"].colour.words, panel.chains[-1][1]
('warm white', 160)
"""

from __future__ import annotations

import re
from types import TracebackType
from typing import Any, Protocol, Self, runtime_checkable

from hardware.layout import LedLayout
from hardware.scene import Scene


class PanelError(OSError):
    """An LED panel that cannot be opened or driven (no device, wrong wiring, missing library)."""


class PanelAddressError(PanelError, ValueError):
    """An LED panel address that does not parse."""


@runtime_checkable
class LedPanel(Protocol):
    """What every LED panel offers."""

    @property
    def layout(self) -> LedLayout:
        """The LED layout the panel shows scenes on."""

    def show(self, scene: Scene) -> None:
        """Show ``scene`` (the whole state of every LED; LEDs not in it go dark)."""

    def close(self) -> None:
        """Let go of the device; the panel shows nothing more."""

    def __enter__(self) -> Self: ...

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None: ...


@runtime_checkable
class ManagedPanel(LedPanel, Protocol):
    """An LED panel with the abilities the referee's loop asks of it.

    Every panel of this package has them (from :class:`BasePanel`, which gives each a
    default for the panels that lack it).
    """

    @property
    def animated(self) -> bool:
        """Whether the scene showing blinks only if :meth:`refresh` is called (about every 50 ms)."""

    def refresh(self) -> None:
        """Bring blinking LEDs up to date with the clock (nothing, where the device blinks them)."""

    @property
    def connected(self) -> bool | None:
        """Whether the device's link is up; ``None`` for a panel without a link."""

    def wait_shown(self, timeout: float) -> bool:
        """Whether the device showed the latest scene within ``timeout`` seconds (at once without one)."""


class BasePanel:
    """Common parts of the panels: the layout, the closed flag, the context manager, and the
    defaults of :class:`ManagedPanel`'s abilities (no host blinking, no link)."""

    def __init__(self, layout: LedLayout | None = None) -> None:
        self._layout = layout if layout is not None else LedLayout.standard()
        self._closed = False

    @property
    def layout(self) -> LedLayout:
        """The LED layout the panel shows scenes on."""
        return self._layout

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` has been called."""
        return self._closed

    def _check_open(self) -> None:
        if self._closed:
            raise PanelError(f"the {type(self).__name__} is closed")

    def show(self, scene: Scene) -> None:
        """Show ``scene``."""
        raise NotImplementedError

    def close(self) -> None:
        """Let go of the device (calling it twice is fine)."""
        self._closed = True

    @property
    def animated(self) -> bool:
        """``False``: the LEDs blink by themselves, or not at all."""
        return False

    def refresh(self) -> None:
        """Nothing to do: the LEDs blink by themselves, or not at all."""

    @property
    def connected(self) -> bool | None:
        """``None``: no link to lose."""
        return None

    def wait_shown(self, timeout: float) -> bool:
        """``True`` at once: a scene is shown when :meth:`show` returns."""
        return True

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


class FakeLedPanel(BasePanel):
    """A panel that only records what it is asked to show: the fake of every real panel.

    :ivar scenes: every scene shown, oldest first.
    :ivar chains: the LED bytes each of them puts on the chain (what the serial panel would send).
    """

    def __init__(self, layout: LedLayout | None = None) -> None:
        super().__init__(layout)
        self.scenes: list[Scene] = []
        self.chains: list[list[int]] = []

    def show(self, scene: Scene) -> None:
        """Record ``scene``."""
        self._check_open()
        self.chains.append(scene.to_chain(self._layout))
        self.scenes.append(scene)

    @property
    def last(self) -> Scene:
        """The scene showing now (dark before the first)."""
        return self.scenes[-1] if self.scenes else Scene.dark()


class DimmedPanel:
    """A panel showing every scene at a brightness, with the abilities of the panel underneath.

    :param panel: the panel underneath.
    :param brightness: 0 (dark) to 1 (full), applied on top of each scene's own brightness.

    >>> from hardware.scene import TURN
    >>> fake = FakeLedPanel()
    >>> with DimmedPanel(fake, 0.5) as panel:
    ...     panel.show(Scene({"turn.1": TURN}).with_brightness(200))
    >>> fake.last.brightness, panel.connected, panel.animated
    (100, None, False)
    """

    def __init__(self, panel: ManagedPanel, brightness: float) -> None:
        self.panel = panel
        self.brightness = max(0, min(255, round(255 * brightness)))

    @property
    def layout(self) -> LedLayout:
        """The layout of the panel underneath."""
        return self.panel.layout

    def show(self, scene: Scene) -> None:
        """Show ``scene`` at the configured brightness."""
        self.panel.show(scene.with_brightness(self.brightness * scene.brightness // 255))

    def close(self) -> None:
        """Close the panel underneath."""
        self.panel.close()

    @property
    def animated(self) -> bool:
        """Whether the panel underneath blinks only when refreshed, with a blinking scene showing."""
        return self.panel.animated

    def refresh(self) -> None:
        """Bring blinking LEDs up to date, on a panel that blinks only when told to."""
        if self.panel.animated:
            self.panel.refresh()

    @property
    def connected(self) -> bool | None:
        """Whether the LED controller's link is up; ``None`` for panels without a link."""
        return self.panel.connected

    def wait_shown(self, timeout: float) -> bool:
        """Whether the panel underneath showed the latest scene within ``timeout`` seconds."""
        return self.panel.wait_shown(timeout)

    def blank(self, timeout: float = 0.5) -> None:
        """Every LED dark, waiting up to ``timeout`` seconds for the device to show it."""
        self.panel.show(Scene.dark())
        self.panel.wait_shown(timeout)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


# -- addresses ---------------------------------------------------------------------------------

_URL_SCHEME = re.compile(r"^[a-z][a-z0-9+]*://", re.IGNORECASE)
_WINDOWS_PORT = re.compile(r"^COM\d+$", re.IGNORECASE)

ADDRESS_HELP = (
    "use fake, terminal, serial:URL (or a device path such as /dev/ttyUSB0, or hwgrep://VID:PID), "
    "gpio:NAME=PIN,... or gpio595:data=PIN,clock=PIN,latch=PIN"
)


def parse_options(text: str, what: str) -> dict[str, str]:
    """``key=value,key=value`` into a dict; ``what`` names the address in errors."""
    options: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        key, sep, value = item.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or not key or not value:
            raise PanelAddressError(f"{what}: expected NAME=VALUE, not {item!r}")
        if key in options:
            raise PanelAddressError(f"{what}: {key} is given twice")
        options[key] = value
    return options


def is_serial_address(address: str) -> bool:
    """Whether ``address`` names a serial port directly (a path, ``COM3`` or a pyserial URL)."""
    return address.startswith("/") or bool(_WINDOWS_PORT.match(address) or _URL_SCHEME.match(address))


def open_panel(address: str, layout: LedLayout | None = None, **options: Any) -> BasePanel:
    """Open the LED panel at ``address`` (see the module's table) for ``layout`` (default: standard).

    :param options: passed to the panel's constructor (``stream=`` for the terminal, ``opener=``
        for the serial link, ``pin_factory=`` for gpiozero, ...).
    :raises PanelAddressError: the address does not parse.
    :raises PanelError: the device cannot be opened.
    """
    text = address.strip()
    kind, sep, rest = text.partition(":")
    if text == "fake":
        return FakeLedPanel(layout)
    if kind == "terminal" and (not sep or rest in ("plain", "colour", "color")):
        from hardware.terminal import TerminalLedPanel

        colour = {"plain": False, "colour": True, "color": True}.get(rest)
        return TerminalLedPanel(layout, colour=colour, **options)
    url = ""
    if kind == "serial" and sep:
        # serial:///dev/ttyUSB0 reads like other device URLs; it means the path.
        url = rest[2:] if rest.startswith("///") else rest
    elif is_serial_address(text):
        url = text
    if url:
        from hardware.serial_panel import SerialLedPanel

        return SerialLedPanel(url, layout, **options)
    if kind == "gpio" and sep:
        from hardware.gpio import GpioLedPanel

        return GpioLedPanel.from_address(rest, layout, **options)
    if kind == "gpio595" and sep:
        from hardware.gpio import ShiftRegisterPanel

        return ShiftRegisterPanel.from_address(rest, layout, **options)
    raise PanelAddressError(f"unknown LED panel address {address!r}: {ADDRESS_HELP}")
