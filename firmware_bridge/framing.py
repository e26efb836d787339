# SPDX-License-Identifier: MIT
"""Frames on the LED link: COBS with a 0x00 delimiter around ``version | type | seq | payload | CRC``.

>>> frame = encode_frame(0x20, 7)
>>> frame[-1]
0
>>> decode_frame(frame[:-1])
Frame(type=32, seq=7, payload=b'')
>>> crc16(b"123456789") == 0x29B1
True
"""

from __future__ import annotations

import binascii
from dataclasses import dataclass

from firmware_bridge import protocol


class FrameError(ValueError):
    """A frame that cannot be accepted; ``reason`` is the NAK reason it would earn."""

    def __init__(self, message: str, reason: int) -> None:
        super().__init__(message)
        self.reason = reason


def crc16(data: bytes) -> int:
    """CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, no reflection, no final xor)."""
    return binascii.crc_hqx(data, 0xFFFF)


def cobs_encode(data: bytes) -> bytes:
    """Consistent Overhead Byte Stuffing: ``data`` with no zero byte left in it (delimiter not added)."""
    out = bytearray()
    block = bytearray()
    for byte in data:
        if byte == 0:
            out.append(len(block) + 1)
            out += block
            block.clear()
        else:
            block.append(byte)
            if len(block) == 254:
                out.append(255)
                out += block
                block.clear()
    out.append(len(block) + 1)
    out += block
    return bytes(out)


def cobs_decode(data: bytes) -> bytes:
    """Undo :func:`cobs_encode`; raises :class:`FrameError` on a zero byte or a code past the end."""
    out = bytearray()
    i = 0
    while i < len(data):
        code = data[i]
        if code == 0:
            raise FrameError(f"zero byte inside a COBS frame at offset {i}", protocol.NAK_BAD_LENGTH)
        end = i + code
        if end > len(data):
            raise FrameError(f"COBS code {code} at offset {i} runs past the frame's end", protocol.NAK_BAD_LENGTH)
        block = data[i + 1 : end]
        if 0 in block:
            raise FrameError(
                f"zero byte inside a COBS frame at offset {i + 1 + block.index(0)}", protocol.NAK_BAD_LENGTH
            )
        out += block
        i = end
        if code != 255 and i < len(data):
            out.append(0)
    return bytes(out)


@dataclass(frozen=True, slots=True)
class Frame:
    """One decoded frame: its message type, sequence number and payload."""

    type: int
    seq: int
    payload: bytes = b""


def encode_frame(type_: int, seq: int, payload: bytes = b"", version: int = protocol.PROTO_MAJOR) -> bytes:
    """The bytes on the wire for one message, delimiter included."""
    body = bytes((version, type_, seq)) + payload
    if len(body) + 2 > protocol.MAX_BODY:
        raise ValueError(f"frame body of {len(body) + 2} bytes is longer than {protocol.MAX_BODY}")
    body += crc16(body).to_bytes(2, "big")
    return cobs_encode(body) + b"\x00"


def decode_frame(data: bytes) -> Frame:
    """One frame from its COBS bytes (without the delimiter); raises :class:`FrameError`."""
    body = cobs_decode(data)
    if len(body) < 5:
        raise FrameError(f"frame of {len(body)} bytes is shorter than 5", protocol.NAK_BAD_LENGTH)
    if len(body) > protocol.MAX_BODY:
        raise FrameError(f"frame of {len(body)} bytes is longer than {protocol.MAX_BODY}", protocol.NAK_BAD_LENGTH)
    if crc16(body[:-2]) != int.from_bytes(body[-2:], "big"):
        raise FrameError("CRC mismatch", protocol.NAK_BAD_CRC)
    if body[0] != protocol.PROTO_MAJOR:
        raise FrameError(f"protocol version {body[0]}, expected {protocol.PROTO_MAJOR}", protocol.NAK_BAD_VERSION)
    return Frame(body[1], body[2], body[3:-2])


class FrameReader:
    """Splits a byte stream at 0x00 delimiters into frames; bad ones are counted and skipped."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        #: Frames dropped so far (bad COBS, length, CRC or version), and the last reason.
        self.rejected = 0
        self.last_error: FrameError | None = None

    def feed(self, data: bytes) -> list[Frame]:
        """Take the bytes read so far; return the complete good frames among them."""
        frames = []
        for byte in data:
            if byte != 0:
                if len(self._buffer) <= 2 * protocol.MAX_BODY:
                    self._buffer.append(byte)
                continue
            if self._buffer:
                try:
                    frames.append(decode_frame(bytes(self._buffer)))
                except FrameError as error:
                    self.rejected += 1
                    self.last_error = error
                self._buffer.clear()
        return frames
