# SPDX-License-Identifier: MIT
"""The LED walk for the person wiring the board (``bgboard leds check``).

It lights each LED of the layout in turn, white, in chain order, printing its name and chain
position so the person at the board sees whether the right one is lit; then every LED in red,
green, blue and white (a dead colour channel or a weak supply shows here: the far end of the
chain goes pink or dim); then it leaves the LEDs dark.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Protocol, TextIO

from firmware_bridge.messages import DeviceInfo
from hardware.layout import LedLayout
from hardware.panels import PanelError
from hardware.scene import TEST, Colour, Light, Scene

#: The colours of the full-chain test, in order.
COLOUR_TEST: tuple[Colour, ...] = (Colour.RED, Colour.GREEN, Colour.BLUE, Colour.WHITE)


class CheckLink(Protocol):
    """The part of :class:`firmware_bridge.link.Link` the walk uses."""

    @property
    def device(self) -> DeviceInfo | None:
        """What the controller said in its HELLO_ACK."""

    def wait_connected(self, timeout: float) -> bool:
        """Whether the controller answered within ``timeout`` seconds."""

    def show(self, leds: Sequence[int], brightness: int = 255) -> None:
        """Queue a scene."""

    def wait_shown(self, timeout: float) -> bool:
        """Whether the latest scene was acknowledged within ``timeout`` seconds."""


def describe_device(info: DeviceInfo) -> str:
    """One line about the controller: firmware, protocol, chain, brightness cap, last reset."""
    causes = ", ".join(info.reset_causes) or "none reported"
    return (
        f"firmware {info.firmware_version}, protocol {info.proto_major}.{info.proto_minor},"
        f" {info.led_count} LEDs in use (at most {info.max_leds}), status LED {info.status_led},"
        f" brightness cap {info.brightness_cap}, boot {info.boot_id}, last reset: {causes}"
    )


def no_answer_message(url: str, timeout: float, last_error: str = "") -> str:
    """What to say when no controller answered on ``url``, and what to check."""
    why = f" ({last_error})" if last_error else ""
    # avrdude wants a device path; a pyserial URL such as hwgrep:// is no use there.
    flash_port = url if url.startswith("/") else "/dev/ttyUSB0"
    return (
        f"no LED controller answered on {url} within {timeout:g} s{why}. Check that the board is plugged in"
        f" and flashed with bgboard's firmware (make firmware, then make flash PORT={flash_port}), that {url}"
        " is its port (bgboard devices lists the serial ports), and that no other program has the port open"
    )


def led_check(
    link: CheckLink,
    layout: LedLayout,
    out: TextIO,
    *,
    url: str = "",
    step_ms: int = 300,
    connect_timeout: float = 5.0,
    ack_timeout: float = 2.0,
    brightness: int = 255,
    sleep: Callable[[float], None] = time.sleep,
    last_error: Callable[[], str] = lambda: "",
) -> None:
    """Walk every LED of ``layout`` on the controller behind ``link`` (already started).

    :param step_ms: how long each LED stays lit (the colour test holds each colour three times as long).
    :param last_error: the link's last problem, for the error messages.
    :raises PanelError: the controller did not answer, or did not acknowledge a scene.
    """
    if not link.wait_connected(connect_timeout):
        raise PanelError(no_answer_message(url or "the port", connect_timeout, last_error()))
    info = link.device
    if info is not None:
        out.write(f"LED controller on {url or 'the port'}: {describe_device(info)}\n")
        if info.led_count != layout.length:
            out.write(f"warning: the controller uses {info.led_count} LEDs, the layout has {layout.length}\n")
    placed = layout.chain_order()
    out.write(
        f"layout {layout.source}: {layout.length} LEDs in the chain, {len(placed)} named;"
        f" each lights white in turn for {step_ms} ms\n"
    )
    out.flush()

    def show(scene: Scene, what: str) -> None:
        link.show(scene.to_chain(layout), scene.brightness)
        if not link.wait_shown(ack_timeout):
            problem = last_error()
            raise PanelError(
                f"the LED controller on {url or 'the port'} did not acknowledge {what} within {ack_timeout:g} s"
                + (f" ({problem})" if problem else "")
            )

    for index, name in placed:
        out.write(f"  {index:3d}  {name}\n")
        out.flush()
        show(Scene({name: TEST}, brightness), name)
        sleep(step_ms / 1000)
    spare = sorted(set(range(layout.length)) - {index for index, _ in placed})
    if spare:
        out.write(f"  spare positions (dark): {', '.join(map(str, spare))}\n")
    for colour in COLOUR_TEST:
        out.write(f"  every LED {colour.words}\n")
        out.flush()
        show(Scene.all(Light(colour), brightness), f"every LED {colour.words}")
        sleep(3 * step_ms / 1000)
    show(Scene.dark(brightness), "the dark scene")
    out.write(
        "done: the LEDs are dark. A second after this command ends, the status LED pulses amber:"
        " that is the controller's safe state while no program drives it.\n"
    )
    out.flush()
