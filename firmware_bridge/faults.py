# SPDX-License-Identifier: MIT
"""A noisy line for tests and benchmarks: a port wrapper that drops whole frames and corrupts bytes.

Both directions are damaged independently, each from its own seeded random generator, so a
run is repeatable for the same byte streams. Hand :func:`faulty_opener` to a
:class:`~firmware_bridge.link.Link` as its ``opener``:

>>> opener = faulty_opener(drop=0.1, corrupt=0.01, seed=7)
>>> port = opener("loop://")
>>> port.write(bytes([1, 2, 3, 0]) * 100)
400
>>> received = port.read(400)
>>> 0 < len(received) < 400 and port.tx.frames_dropped > 0
True
>>> port.close()
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from firmware_bridge import protocol
from firmware_bridge.link import READ_TIMEOUT, SerialPort, open_serial


@dataclass
class Damage:
    """What one direction of a :class:`FaultyPort` did to the bytes through it."""

    frames: int = 0
    frames_dropped: int = 0
    bytes_passed: int = 0
    bytes_corrupted: int = 0


@dataclass
class _Mangler:
    """Damages one direction's byte stream, a frame (up to and with its 0x00) at a time."""

    drop: float
    corrupt: float
    rng: random.Random
    damage: Damage = field(default_factory=Damage)
    at_frame_start: bool = True
    dropping: bool = False

    def __call__(self, data: bytes) -> bytes:
        out = bytearray()
        for byte in data:
            if self.at_frame_start:
                # The whole frame's fate is drawn at its first byte, so bytes can pass on at once.
                self.at_frame_start = False
                self.dropping = self.rng.random() < self.drop
                self.damage.frames += 1
                self.damage.frames_dropped += self.dropping
            if byte == 0:
                self.at_frame_start = True
            if self.dropping:
                continue
            if self.rng.random() < self.corrupt:
                byte = (byte + self.rng.randrange(1, 256)) & 0xFF
                self.damage.bytes_corrupted += 1
            self.damage.bytes_passed += 1
            out.append(byte)
        return bytes(out)


class FaultyPort:
    """A pyserial-like port around ``inner`` that loses and damages frames in both directions.

    ``drop`` is the share of frames (delimited by 0x00) dropped whole and ``corrupt`` the share
    of the remaining bytes replaced by another value; :attr:`tx` and :attr:`rx` count what was
    done to the written and read streams. Anything else is passed to ``inner``.
    """

    def __init__(self, inner: SerialPort, *, drop: float = 0.0, corrupt: float = 0.0, seed: int = 0) -> None:
        if not (0.0 <= drop <= 1.0 and 0.0 <= corrupt <= 1.0):
            raise ValueError("drop and corrupt are shares between 0 and 1")
        self.inner = inner
        self._tx = _Mangler(drop, corrupt, random.Random(f"{seed}/tx"))
        self._rx = _Mangler(drop, corrupt, random.Random(f"{seed}/rx"))

    @property
    def tx(self) -> Damage:
        """What was done to the bytes written (host to device)."""
        return self._tx.damage

    @property
    def rx(self) -> Damage:
        """What was done to the bytes read (device to host)."""
        return self._rx.damage

    @property
    def timeout(self) -> float | None:
        """The inner port's read timeout."""
        return self.inner.timeout

    @timeout.setter
    def timeout(self, value: float | None) -> None:
        self.inner.timeout = value

    @property
    def in_waiting(self) -> int:
        """The inner port's count (some of those bytes may still be dropped)."""
        return self.inner.in_waiting

    def read(self, size: int = 1) -> bytes:
        """Up to ``size`` bytes read from ``inner``, damaged; may be shorter or empty before the timeout."""
        return self._rx(self.inner.read(size))

    def write(self, data: bytes, /) -> int:
        """Write ``data`` damaged; returns ``len(data)`` as if all of it went out."""
        damaged = self._tx(bytes(data))
        if damaged:
            self.inner.write(damaged)
        return len(data)

    def reset_input_buffer(self) -> None:
        """Drop what ``inner`` received and not read yet."""
        self.inner.reset_input_buffer()

    def close(self) -> None:
        """Close ``inner``."""
        self.inner.close()

    def __getattr__(self, name: str) -> Any:
        # Only reached for names not defined here (cancel_read, is_open, ...).
        return getattr(self.inner, name)


def faulty_opener(
    drop: float = 0.0,
    corrupt: float = 0.0,
    seed: int = 0,
    *,
    baudrate: int = protocol.BAUDRATE,
    opener: Callable[[str], Any] | None = None,
    ports: list[FaultyPort] | None = None,
) -> Callable[[str], FaultyPort]:
    """An ``opener`` for :class:`~firmware_bridge.link.Link` whose ports are :class:`FaultyPort` s.

    Each port opened gets the next seed (``seed``, ``seed + 1``, ...); the ports are appended to
    ``ports`` when given, to read their :class:`Damage` counts.
    """
    count = 0

    def open_faulty(url: str) -> FaultyPort:
        nonlocal count
        inner: SerialPort = opener(url) if opener is not None else open_serial(url, baudrate, READ_TIMEOUT)
        port = FaultyPort(inner, drop=drop, corrupt=corrupt, seed=seed + count)
        count += 1
        if ports is not None:
            ports.append(port)
        return port

    return open_faulty
