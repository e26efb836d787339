# SPDX-License-Identifier: MIT
"""Frames: COBS, the CRC, encoding and decoding, and a reader that resynchronises after garbage."""

from __future__ import annotations

import binascii

import pytest
from hypothesis import given
from hypothesis import strategies as st

from firmware_bridge import protocol
from firmware_bridge.framing import (
    Frame,
    FrameError,
    FrameReader,
    cobs_decode,
    cobs_encode,
    crc16,
    decode_frame,
    encode_frame,
)

MAX_PAYLOAD = protocol.MAX_BODY - 5
frames = st.builds(
    Frame,
    type=st.integers(0, 255),
    seq=st.integers(0, 255),
    payload=st.binary(max_size=MAX_PAYLOAD),
)


def test_crc_is_ccitt_false_with_its_check_value() -> None:
    assert crc16(b"123456789") == 0x29B1
    assert crc16(b"") == 0xFFFF


@given(st.binary(max_size=600))
def test_crc_agrees_with_the_standard_library(data: bytes) -> None:
    assert crc16(data) == binascii.crc_hqx(data, 0xFFFF)


@given(st.binary(max_size=1000))
def test_cobs_round_trips_and_leaves_no_zero(data: bytes) -> None:
    encoded = cobs_encode(data)
    assert 0 not in encoded
    assert cobs_decode(encoded) == data
    # The overhead is one byte, plus one per 254 bytes.
    assert len(encoded) <= len(data) + 1 + len(data) // 254


@pytest.mark.parametrize(
    ("data", "encoded"),
    [
        (b"", b"\x01"),
        (b"\x00", b"\x01\x01"),
        (b"\x00\x00", b"\x01\x01\x01"),
        (b"\x11\x22\x00\x33", b"\x03\x11\x22\x02\x33"),
        (b"\x11\x00\x00\x00", b"\x02\x11\x01\x01\x01"),
        (bytes(range(1, 255)), b"\xff" + bytes(range(1, 255)) + b"\x01"),
    ],
)
def test_cobs_known_vectors(data: bytes, encoded: bytes) -> None:
    assert cobs_encode(data) == encoded
    assert cobs_decode(encoded) == data


@pytest.mark.parametrize("bad", [b"\x05\x11", b"\x01\x00\x01", b"\x03\x11\x22\x00"])
def test_cobs_rejects_codes_past_the_end_and_zero_bytes(bad: bytes) -> None:
    with pytest.raises(FrameError) as caught:
        cobs_decode(bad)
    assert caught.value.reason == protocol.NAK_BAD_LENGTH


@given(frames)
def test_frames_round_trip(frame: Frame) -> None:
    wire = encode_frame(frame.type, frame.seq, frame.payload)
    assert wire[-1] == 0 and 0 not in wire[:-1]
    assert decode_frame(wire[:-1]) == frame


def test_a_frame_has_version_type_seq_payload_and_a_big_endian_crc() -> None:
    wire = encode_frame(protocol.PING, 7)
    body = cobs_decode(wire[:-1])
    assert body[:3] == bytes((protocol.PROTO_MAJOR, protocol.PING, 7))
    assert body[3:] == crc16(body[:3]).to_bytes(2, "big")


def test_the_longest_body_fits_and_one_more_byte_does_not() -> None:
    wire = encode_frame(protocol.SET_SCENE, 1, bytes(MAX_PAYLOAD))
    assert len(cobs_decode(wire[:-1])) == protocol.MAX_BODY
    with pytest.raises(ValueError, match="longer than"):
        encode_frame(protocol.SET_SCENE, 1, bytes(MAX_PAYLOAD + 1))


@given(frames, st.data())
def test_any_flipped_bit_is_caught(frame: Frame, data: st.DataObject) -> None:
    body = bytearray(cobs_decode(encode_frame(frame.type, frame.seq, frame.payload)[:-1]))
    bit = data.draw(st.integers(0, len(body) * 8 - 1))
    body[bit // 8] ^= 1 << (bit % 8)
    with pytest.raises(FrameError):
        decode_frame(cobs_encode(bytes(body)))


def test_decode_rejects_short_frames_bad_crc_and_other_versions() -> None:
    with pytest.raises(FrameError) as short:
        decode_frame(cobs_encode(b"\x01\x20\x07\xff"))
    assert short.value.reason == protocol.NAK_BAD_LENGTH
    body = bytearray(cobs_decode(encode_frame(protocol.PING, 1)[:-1]))
    body[-1] ^= 0xFF
    with pytest.raises(FrameError) as crc:
        decode_frame(cobs_encode(bytes(body)))
    assert crc.value.reason == protocol.NAK_BAD_CRC
    with pytest.raises(FrameError) as version:
        decode_frame(encode_frame(protocol.PING, 1, version=2)[:-1])
    assert version.value.reason == protocol.NAK_BAD_VERSION


def test_decode_rejects_a_body_longer_than_the_maximum() -> None:
    body = bytes((protocol.PROTO_MAJOR, protocol.SET_SCENE, 1)) + bytes(protocol.MAX_BODY - 4)
    body += crc16(body).to_bytes(2, "big")
    with pytest.raises(FrameError, match="longer than"):
        decode_frame(cobs_encode(body))


@given(st.lists(frames, min_size=1, max_size=6), st.integers(1, 40))
def test_the_reader_finds_every_frame_however_the_stream_is_cut(chunks_of: list[Frame], step: int) -> None:
    stream = b"".join(encode_frame(f.type, f.seq, f.payload) for f in chunks_of)
    reader = FrameReader()
    found: list[Frame] = []
    for start in range(0, len(stream), step):
        found += reader.feed(stream[start : start + step])
    assert found == chunks_of
    assert reader.rejected == 0


@given(st.binary(min_size=1, max_size=300), frames)
def test_the_reader_resynchronises_after_garbage(garbage: bytes, frame: Frame) -> None:
    reader = FrameReader()
    # Garbage then a delimiter: whatever the garbage was, the next frame is read intact.
    found = reader.feed(garbage + b"\x00" + encode_frame(frame.type, frame.seq, frame.payload))
    assert found[-1] == frame
    # A random stretch may happen to hold a valid frame, but never more frames than delimiters.
    assert len(found) <= garbage.count(0) + 2


def test_the_reader_counts_what_it_drops_and_why() -> None:
    reader = FrameReader()
    good = encode_frame(protocol.ACK, 3, b"\x10\x00")
    damaged = bytearray(good)
    damaged[2] ^= 0x40
    assert reader.feed(bytes(damaged) + b"\x00\x00" + good) == [Frame(protocol.ACK, 3, b"\x10\x00")]
    assert reader.rejected == 1
    assert reader.last_error is not None and reader.last_error.reason in (protocol.NAK_BAD_CRC, protocol.NAK_BAD_LENGTH)


def test_the_reader_drops_an_endless_frame_without_growing_forever() -> None:
    reader = FrameReader()
    assert reader.feed(b"\x55" * 10_000) == []
    assert reader.feed(b"\x00" + encode_frame(protocol.PONG, 9, bytes(7))) == [Frame(protocol.PONG, 9, bytes(7))]
    assert reader.rejected == 1
