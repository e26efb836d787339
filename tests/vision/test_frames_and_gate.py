# SPDX-License-Identifier: MIT
"""Frame sources by address, and the motion gate and stabiliser on synthetic frames."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.frames import CameraError, is_live, open_source, read_image, source_kind
from vision.geometry import FIELD_H, FIELD_W
from vision.profile import field_homography
from vision.stabiliser import MotionGate, Stabiliser

CORNERS = np.array([[100, 60], [540, 60], [540, 420], [100, 420]], dtype=np.float64)


def _frames(tmp_path: Path, count: int) -> list[Path]:
    paths = []
    for i in range(count):
        image = np.full((480, 640, 3), 40 + 20 * i, np.uint8)
        path = tmp_path / f"f{i:02d}.png"
        cv2.imwrite(str(path), image)
        paths.append(path)
    return paths


def test_a_folder_a_glob_and_file_urls_give_the_images_in_order(tmp_path: Path) -> None:
    _frames(tmp_path, 3)
    for url in (str(tmp_path), f"file:{tmp_path}/*.png", f"{tmp_path}/f*.png"):
        with open_source(url) as source:
            frames = list(source)
        assert [int(f.image[0, 0, 0]) for f in frames] == [40, 60, 80]
        assert [f.seq for f in frames] == [1, 2, 3]
        assert frames[1].time == pytest.approx(0.1)


def test_a_looping_source_starts_again(tmp_path: Path) -> None:
    _frames(tmp_path, 2)
    source = open_source(f"file:{tmp_path}/*.png?loop=1&fps=5")
    values = [int(source.read().image[0, 0, 0]) for _ in range(5)]  # type: ignore[union-attr]
    assert values == [40, 60, 40, 60, 40]


def test_bad_sources_say_what_is_wrong(tmp_path: Path) -> None:
    with pytest.raises(CameraError, match="no images match"):
        open_source(f"file:{tmp_path}/*.png")
    with pytest.raises(CameraError, match="unknown kind of frame source"):
        open_source("ftp://camera")
    bad = tmp_path / "broken.png"
    bad.write_bytes(b"not an image")
    with pytest.raises(CameraError, match="not an image"):
        read_image(bad)
    with pytest.raises(CameraError, match="no such file"):
        read_image(tmp_path / "missing.jpg")
    with pytest.raises(CameraError, match="cannot open the video file"):
        open_source(f"video:{tmp_path}/missing.mp4")


def test_the_pi_camera_without_picamera2_says_how_to_install_it() -> None:
    with pytest.raises(CameraError, match="apt install python3-picamera2"):
        open_source("picamera2://0")


def _board(seed: int, hand_at: tuple[int, int] | None = None) -> np.ndarray:
    rng = np.random.default_rng(seed)
    image = np.full((480, 640, 3), 120, np.uint8)
    image += rng.integers(0, 6, image.shape, dtype=np.uint8)  # sensor noise
    if hand_at is not None:
        cv2.circle(image, hand_at, 60, (90, 130, 200), -1)
    return image


@pytest.mark.parametrize(
    ("url", "kind"),
    [
        ("picamera2://0?width=1280", "picamera2"),
        ("picamera2:", "picamera2"),
        ("v4l2:///dev/video0?fps=15", "v4l2"),
        ("/dev/video2", "v4l2"),
        ("file:/dev/video1", "v4l2"),
        ("usb:0", "usb"),
        ("video:match.mp4", "video"),
        ("recordings/match.MKV", "video"),
        ("file:frames/*.png", "images"),
        ("frames/", "images"),
    ],
)
def test_the_kind_of_a_source_is_known_from_its_address_alone(url: str, kind: str) -> None:
    assert source_kind(url) == kind
    assert is_live(url) == (kind in ("picamera2", "v4l2", "usb"))


def test_an_address_of_no_known_kind_is_no_camera() -> None:
    assert not is_live("bogus://x") and not is_live("")
    with pytest.raises(CameraError, match="unknown kind of frame source 'bogus'"):
        source_kind("bogus://x")


def test_the_gate_waits_for_the_settle_time_after_the_last_motion() -> None:
    gate = MotionGate(field_homography(CORNERS), settle=0.5)
    states = []
    t = 0.0
    for i in range(30):
        hand = (150 + 25 * i, 240) if i < 10 else None  # a hand sweeps over the board, then leaves
        states.append(gate.feed(_board(i, hand), t))
        t += 0.1
    assert all(s.moving for s in states[1:11])
    first_still = next(i for i, s in enumerate(states) if s.still)
    # Still from frame 11 on; settled 0.5 s later.
    assert first_still == 16
    assert all(s.still for s in states[16:])


def test_noise_alone_is_not_motion() -> None:
    gate = MotionGate(field_homography(CORNERS), settle=0.2)
    states = [gate.feed(_board(i), i * 0.1) for i in range(10)]
    assert not any(s.moving for s in states[1:])
    assert states[-1].still


def test_the_stabiliser_passes_a_reading_once_it_agrees_and_only_once() -> None:
    gate = MotionGate(field_homography(CORNERS), settle=0.0)
    stab: Stabiliser[str] = Stabiliser(agree=2)
    still = gate.feed(_board(0), 0.0)
    still = gate.feed(_board(1), 0.1)
    assert still.still
    assert stab.feed("A", "A", still) is None
    assert stab.feed("B", "B", still) is None
    assert stab.feed("A", "A", still) == "A"
    assert stab.feed("A", "A", still) is None  # already passed on
    moving = gate.feed(_board(2, (300, 240)), 0.2)
    assert stab.feed("A", "A", moving) is None
    still = gate.feed(_board(3, (300, 240)), 0.3)
    assert stab.feed("A", "A", still) is None
    assert stab.feed("A", "A", still) == "A"  # after motion, the same reading counts again


def test_the_gate_warps_only_the_field() -> None:
    gate = MotionGate(field_homography(CORNERS))
    small = gate.small_field(_board(0))
    assert small.shape == (80, 96)
    assert FIELD_W > FIELD_H


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("usb:-1", "the camera's number is 0 to 63, not '-1'"),
        ("usb:abc", "the camera's number is 0 to 63, not 'abc'"),
        ("usb:99999999999", "the camera's number is 0 to 63"),
        ("picamera2://x", "the camera's number is 0 to 63, not 'x'"),
        ("file:/tmp/*.png?loop=abc", "loop is 1 or 0, not 'abc'"),
        ("file:/tmp/*.png?bogus=1", "unknown option 'bogus' (this source takes fps, loop)"),
        ("usb:0?width=wide", "width is a positive number, not 'wide'"),
        ("", "no frame source named"),
    ],
)
def test_a_malformed_address_is_named_before_anything_opens(url: str, said: str) -> None:
    with pytest.raises(CameraError) as caught:
        open_source(url)
    assert said in str(caught.value)


def test_a_broken_video_file_is_one_error_without_ffmpegs_own_lines(tmp_path: Path) -> None:
    bad = tmp_path / "broken.mp4"
    bad.write_bytes(b"not a video")
    code = (
        "from vision.frames import open_source\n"
        f"try:\n    open_source('video:{bad}')\nexcept Exception as e:\n    print(e)"
    )
    env = {k: v for k, v in os.environ.items() if k != "OPENCV_FFMPEG_LOGLEVEL"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert "cannot open the video file" in done.stdout
    assert done.stderr == ""
