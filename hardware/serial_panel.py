# SPDX-License-Identifier: MIT
"""The LED controller on a serial port: scenes go out over :class:`firmware_bridge.link.Link`.

The controller (an ATmega328P board, Arduino Nano or Uno class, on USB) drives a WS2812B/SK6812
chain, animates the patterns itself, caps the brightness and falls back to its safe state (all
dark but the status LED, pulsing amber) a second after the host goes quiet. The link runs in a
background thread and survives unplugged cables and device resets, so :meth:`SerialLedPanel.show`
never blocks; :meth:`SerialLedPanel.wait_shown` waits for the device's acknowledgement.

Wiring and flashing are in docs/leds.md.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from firmware_bridge import protocol
from hardware.layout import LedLayout
from hardware.panels import BasePanel, PanelError
from hardware.scene import Scene

if TYPE_CHECKING:
    from firmware_bridge.link import Link
    from firmware_bridge.messages import DeviceInfo


def open_link(
    url: str,
    layout: LedLayout,
    *,
    palette: Sequence[tuple[int, int, int]] | None = None,
    opener: Callable[[str], Any] | None = None,
    boot_timeout: float = 3.0,
) -> Link:
    """A started :class:`~firmware_bridge.link.Link` to the controller at ``url`` for ``layout``'s chain.

    The port is opened before this returns: one that cannot be opened at all (no such device, a
    URL pyserial does not know) is an error at once. Once open, the link reconnects by itself
    after an unplug.

    :raises PanelError: no port given, the port cannot be opened (naming it, why, and what to
        check), the chain is longer than the firmware drives, or pyserial is missing.
    """
    if url.startswith("serial:"):
        # The LED panel's address form (serial:/dev/ttyUSB0) names the same port.
        rest = url.removeprefix("serial:")
        url = rest[2:] if rest.startswith("///") else rest
    if not url.strip():
        raise PanelError(
            "no serial port given: name the LED controller's port, such as /dev/ttyUSB0 or hwgrep://VID:PID"
            " (bgboard devices lists the serial ports)"
        )
    if layout.length > protocol.MAX_LEDS:
        raise PanelError(
            f"the layout {layout.source} has {layout.length} LEDs;"
            f" the LED controller drives at most {protocol.MAX_LEDS}"
        )
    if opener is None:
        try:
            import serial  # type: ignore[import-untyped,unused-ignore]  # noqa: F401  # the link needs it
        except ImportError:
            raise PanelError("pyserial is not installed: pip install pyserial") from None
    from firmware_bridge.link import Link, PortError

    link = Link(url, layout.length, layout.status_index, palette=palette, opener=opener, boot_timeout=boot_timeout)
    try:
        link.start(open_port=True)
    except PortError as exc:
        raise PanelError(
            f"cannot open the LED controller's port {url}: {exc.reason}; check that it is"
            f" plugged in and that {url} is its port (bgboard devices lists the serial ports)"
        ) from None
    return link


class SerialLedPanel(BasePanel):
    """The LEDs of the board driven by the LED controller on a serial port.

    :param url: a device path (``/dev/ttyUSB0``, better ``/dev/serial/by-id/...``) or a pyserial
        URL (``hwgrep://1a86:7523`` finds a CH340 Nano by its USB ids).
    :param layout: the chain's layout (its length and status LED are sent in the HELLO).
    :param palette: colours 1-15 to use instead of the firmware's defaults.
    :param opener: opens the port instead of pyserial (tests).
    :param boot_timeout: how long a HELLO may go unanswered while the device boots.

    Example::

        with SerialLedPanel("/dev/ttyUSB0", LedLayout.standard()) as panel:
            panel.wait_connected(5)
            panel.show(present(state))
    """

    def __init__(
        self,
        url: str,
        layout: LedLayout | None = None,
        *,
        palette: Sequence[tuple[int, int, int]] | None = None,
        opener: Callable[[str], Any] | None = None,
        boot_timeout: float = 3.0,
    ) -> None:
        super().__init__(layout)
        self.url = url
        self._link = open_link(url, self.layout, palette=palette, opener=opener, boot_timeout=boot_timeout)

    @property
    def link(self) -> Link:
        """The link underneath (statistics, ``blank``, ``self_test``)."""
        return self._link

    @property
    def device(self) -> DeviceInfo | None:
        """What the controller said about itself (``None`` until it answered)."""
        return self._link.device

    @property
    def connected(self) -> bool:
        """Whether the controller answered and the link is up."""
        return self._link.connected

    def wait_connected(self, timeout: float) -> bool:
        """Whether the controller answered within ``timeout`` seconds."""
        return self._link.wait_connected(timeout)

    def show(self, scene: Scene) -> None:
        """Send ``scene`` (returns at once; a newer scene replaces one not sent yet)."""
        self._check_open()
        self._link.show(scene.to_chain(self.layout), scene.brightness)

    def wait_shown(self, timeout: float) -> bool:
        """Whether the controller acknowledged the latest scene, waiting up to ``timeout`` seconds."""
        return self._link.wait_shown(timeout)

    def blank(self, ms: int) -> None:
        """Every LED dark for ``ms`` milliseconds (for a camera frame without LED glow), then the scene."""
        self._check_open()
        self._link.blank(ms)

    def close(self) -> None:
        """Close the link; the controller shows its safe state a second later."""
        if not self.closed:
            super().close()
            self._link.close()
