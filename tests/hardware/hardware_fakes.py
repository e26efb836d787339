# SPDX-License-Identifier: MIT
"""Fakes for the hardware tests: gpiozero's mock pins, a small LED controller on a fake port.

A helper module rather than a conftest: the test modules define their fixtures from these, so
this directory and ``tests/firmware_bridge`` (whose conftest runs the emulator) can be
collected together.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from firmware_bridge import messages, protocol
from firmware_bridge.framing import Frame, FrameReader, encode_frame


def mock_pins() -> Iterator[Any]:
    """gpiozero on mock pins, reset afterwards (pins are not released otherwise): a fixture's body."""
    from gpiozero import Device
    from gpiozero.pins.mock import MockFactory

    previous = Device.pin_factory
    factory = MockFactory()
    Device.pin_factory = factory
    try:
        yield factory
    finally:
        factory.reset()
        Device.pin_factory = previous


@dataclass
class Controller:
    """An LED controller that answers like the firmware: HELLO_ACK, ACK for scenes, PONG.

    Opened through :meth:`open` (a :class:`~firmware_bridge.link.Link` ``opener``); ``deaf``
    makes it answer nothing, like a port with no controller behind it.
    """

    deaf: bool = False
    max_leds: int = protocol.MAX_LEDS
    led_count: int = 0
    status_led: int = 0
    scenes: list[bytes] = field(default_factory=list)
    opened: list[str] = field(default_factory=list)
    cond: threading.Condition = field(default_factory=threading.Condition)

    def open(self, url: str) -> ControllerPort:
        self.opened.append(url)
        return ControllerPort(self)

    def info(self) -> messages.DeviceInfo:
        return messages.DeviceInfo(
            protocol.PROTO_MAJOR, protocol.PROTO_MINOR, 1, 2, 3, self.max_leds, self.led_count, 0x1F,
            protocol.MAX_BODY, protocol.RESET_EXTERNAL, 42, self.status_led, protocol.BRIGHTNESS_CAP,
        )  # fmt: skip

    def answer(self, frame: Frame) -> bytes:
        if frame.type == protocol.HELLO:
            _major, _minor, self.led_count, self.status_led = frame.payload
            return encode_frame(protocol.HELLO_ACK, frame.seq, self.info().encode())
        if frame.type == protocol.PING:
            return encode_frame(protocol.PONG, frame.seq, messages.Pong(1, 0, 0, 0).encode())
        if frame.type == protocol.SET_SCENE:
            with self.cond:
                self.scenes.append(frame.payload)
                self.cond.notify_all()
        return encode_frame(protocol.ACK, frame.seq, bytes((frame.type, protocol.ACK_APPLIED)))

    def wait_scenes(self, count: int, timeout: float = 3.0) -> bool:
        with self.cond:
            return self.cond.wait_for(lambda: len(self.scenes) >= count, timeout)


@dataclass
class ControllerPort:
    """A pyserial-like port to a :class:`Controller`."""

    controller: Controller
    timeout: float | None = 0.02
    rx: bytearray = field(default_factory=bytearray)
    reader: FrameReader = field(default_factory=FrameReader)
    cancelled: bool = False
    cond: threading.Condition = field(default_factory=threading.Condition)

    @property
    def in_waiting(self) -> int:
        return len(self.rx)

    def read(self, size: int = 1) -> bytes:
        with self.cond:
            self.cond.wait_for(lambda: bool(self.rx) or self.cancelled, self.timeout)
            self.cancelled = False
            data, self.rx[:] = bytes(self.rx[:size]), self.rx[size:]
            return data

    def write(self, data: bytes) -> int:
        if not self.controller.deaf:
            replies = [self.controller.answer(frame) for frame in self.reader.feed(data)]
            with self.cond:
                for reply in replies:
                    self.rx += reply
                self.cond.notify_all()
        return len(data)

    def cancel_read(self) -> None:
        with self.cond:
            self.cancelled = True
            self.cond.notify_all()

    def reset_input_buffer(self) -> None:
        with self.cond:
            self.rx.clear()

    def close(self) -> None:
        pass
