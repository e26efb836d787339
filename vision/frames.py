# SPDX-License-Identifier: MIT
"""Frame sources addressed by a string: cameras, video files, folders of images.

Every source is opened with :func:`open_source` and read with ``read()`` until it returns
``None`` (a file source at its end; a camera that stopped). Forms of the address:

- ``picamera2://0?width=1280&height=720`` (or ``picamera2:``): the Raspberry Pi camera, through
  picamera2 (installed with apt on Raspberry Pi OS; imported only here, only when asked for);
- ``v4l2:///dev/video0?width=1280&height=720&fps=15``, ``/dev/video0`` or ``usb:0``: a USB or
  V4L2 camera through OpenCV;
- ``video:match.mp4`` or a path ending in a video extension: a video file;
- ``file:frames/*.png``, a folder, a glob pattern or one image: images in name order, at
  ``?fps=`` frames per second of synthetic time (default 10), once or ``?loop=1`` for ever.

>>> src = open_source("file:/nonexistent/*.png")
Traceback (most recent call last):
...
vision.frames.CameraError: file:/nonexistent/*.png: no images match /nonexistent/*.png
"""

from __future__ import annotations

import glob
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import parse_qs, urlsplit

# FFmpeg prints its own lines ("moov atom not found") for a video it cannot open, beside the one
# error this module raises. Read when OpenCV first starts FFmpeg; a value set outside wins.
os.environ.setdefault("OPENCV_FFMPEG_LOGLEVEL", "-8")

import cv2
import numpy as np

from engine.files import read_limited, regular_file_problem

IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp")
VIDEO_EXTENSIONS = (".mp4", ".avi", ".mkv", ".mov", ".webm", ".m4v")


class CameraError(OSError):
    """A frame source that cannot be opened or read; the message says which and why."""


@dataclass(frozen=True, slots=True)
class Frame:
    """One camera frame: a BGR image, when it was taken (monotonic seconds) and its number."""

    image: np.ndarray
    time: float
    seq: int


class FrameSource(Protocol):
    """Anything that hands out frames; also a context manager and an iterator."""

    url: str

    def read(self) -> Frame | None:
        """The next frame, or ``None`` when there is none (end of file, camera gone)."""

    def close(self) -> None:
        """Release the device or file."""


class _Base:
    url: str

    def __init__(self, url: str, clock: Callable[[], float] = time.monotonic) -> None:
        self.url = url
        self._clock = clock
        self._seq = 0

    def _frame(self, image: np.ndarray, when: float | None = None) -> Frame:
        self._seq += 1
        return Frame(image, self._clock() if when is None else when, self._seq)

    def read(self) -> Frame | None:  # pragma: no cover - overridden
        raise NotImplementedError

    def close(self) -> None:
        """Nothing to release by default."""

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __iter__(self) -> Iterator[Frame]:
        while (frame := self.read()) is not None:
            yield frame


class ImageFiles(_Base):
    """Images from a folder or a glob, in name order, with synthetic timestamps."""

    def __init__(self, url: str, paths: list[str], fps: float = 10.0, loop: bool = False) -> None:
        super().__init__(url)
        self.paths = paths
        self.fps = fps
        self.loop = loop
        self._next = 0

    def read(self) -> Frame | None:
        """The next image; ``None`` after the last one unless looping."""
        if self._next >= len(self.paths):
            if not self.loop:
                return None
            self._next = 0
        path = self.paths[self._next]
        when = self._seq / self.fps
        self._next += 1
        return self._frame(read_image(path), when)


class OpenCVCapture(_Base):
    """A USB/V4L2 camera or a video file through OpenCV's ``VideoCapture``."""

    def __init__(self, url: str, target: str | int, options: dict[str, str], is_file: bool) -> None:
        super().__init__(url)
        api = cv2.CAP_V4L2 if isinstance(target, str) and target.startswith("/dev/") else cv2.CAP_ANY
        # Probing a camera that is not there, OpenCV 4 logs at its error level too (its Orbbec
        # backend: "Camera index out of range"): our error below says it in one line.
        with quiet_opencv():
            self._cap = cv2.VideoCapture(target, api)
        if not self._cap.isOpened():
            what = "video file" if is_file else "camera"
            raise CameraError(f"{url}: cannot open the {what} {target!r}")
        for key, prop in (
            ("width", cv2.CAP_PROP_FRAME_WIDTH),
            ("height", cv2.CAP_PROP_FRAME_HEIGHT),
            ("fps", cv2.CAP_PROP_FPS),
        ):
            if key in options:
                self._cap.set(prop, float(options[key]))
        self._is_file = is_file
        self._fps = self._cap.get(cv2.CAP_PROP_FPS) or 25.0

    def read(self) -> Frame | None:
        """The next frame; ``None`` at the end of a file or when the camera stops."""
        ok, image = self._cap.read()
        if not ok or image is None:
            return None
        # A file's frames carry their own time; a camera's the time they arrived.
        when = self._seq / self._fps if self._is_file else None
        return self._frame(image, when)

    def close(self) -> None:
        """Release the camera or file."""
        self._cap.release()


class PiCamera(_Base):
    """The Raspberry Pi camera through picamera2 (apt package ``python3-picamera2``)."""

    def __init__(self, url: str, index: int, options: dict[str, str]) -> None:
        super().__init__(url)
        try:
            from picamera2 import Picamera2
        except ImportError:
            raise CameraError(
                f"{url}: picamera2 is not installed; on Raspberry Pi OS run 'sudo apt install python3-picamera2'"
                " and create the virtual environment with --system-site-packages"
            ) from None
        width = int(options.get("width", 1280))
        height = int(options.get("height", 720))
        try:
            self._cam = Picamera2(index)
            config = self._cam.create_video_configuration(main={"size": (width, height), "format": "BGR888"})
            self._cam.configure(config)
            self._cam.start()
        except Exception as exc:  # picamera2 raises many kinds; all mean "no camera here"
            raise CameraError(f"{url}: cannot start the Pi camera {index}: {exc}") from exc

    def read(self) -> Frame | None:
        """The next frame from the camera."""
        try:
            image = self._cam.capture_array("main")
        except Exception:
            return None
        return self._frame(np.ascontiguousarray(image[:, :, :3]))

    def close(self) -> None:
        """Stop the camera."""
        self._cam.stop()
        self._cam.close()


def is_greyscale(image: np.ndarray) -> bool:
    """Whether a BGR ``image`` has no colour at all (a greyscale photo read as BGR): the reader
    tells the sides' checkers apart by their colour."""
    if image.ndim != 3 or image.shape[2] < 3:
        return True
    small = image[::8, ::8]
    return bool(np.array_equal(small[..., 0], small[..., 1]) and np.array_equal(small[..., 1], small[..., 2]))


#: The largest image file read (a 64-megapixel PNG is well under it).
MAX_IMAGE = 256 * 1024 * 1024


def _cut_short(data: np.ndarray) -> str | None:
    """Why a PNG or JPEG file ends before its end (``None`` when it is whole, or of another kind)."""
    head, tail = bytes(data[:8]), bytes(data[-4096:])
    if head.startswith(b"\x89PNG\r\n\x1a\n") and b"IEND" not in tail:
        return "a PNG without its end (IEND)"
    if head.startswith(b"\xff\xd8") and b"\xff\xd9" not in tail:
        return "a JPEG without its end marker"
    return None


def read_image(path: str | os.PathLike[str]) -> np.ndarray:
    """Read an image file as BGR.

    :raises CameraError: one line naming the file and what is wrong: missing, a folder, empty,
        unreadable, or not an image OpenCV can decode (OpenCV's own warnings are kept quiet).
    """
    text = str(path)
    if not text:
        raise CameraError("no image file given")
    if os.path.isdir(text):
        raise CameraError(f"{text} is a folder, not an image")
    if not os.path.exists(text):
        raise CameraError(f"{text}: no such file")
    try:
        data = np.frombuffer(read_limited(text, MAX_IMAGE, "an image"), dtype=np.uint8)
    except OSError as exc:
        raise CameraError(f"cannot read {text}: {exc.strerror or exc}") from None
    if data.size == 0:
        raise CameraError(f"{text} is empty")
    cut = _cut_short(data)
    if cut is not None:
        # Said before decoding: libpng and libjpeg print their own lines for a cut file.
        raise CameraError(f"{text} is cut short: {cut}")
    with quiet_opencv():
        image = cv2.imdecode(data, cv2.IMREAD_COLOR)
    if image is None:
        raise CameraError(f"{text} is not an image OpenCV can read (PNG, JPEG, BMP, TIFF, WebP), or it is cut short")
    return image


#: OpenCV's log levels, the same numbers in OpenCV 4 and 5.
LOG_SILENT, LOG_ERROR = 0, 2


def _log_level() -> int:
    # OpenCV 5 has the level in cv2.utils.logging; OpenCV 4 (a Raspberry Pi's 4.11, with
    # numpy below 2) has it at the top of cv2 alone.
    logging = getattr(cv2.utils, "logging", None)
    return int(logging.getLogLevel() if logging is not None else cv2.getLogLevel())


def _set_log_level(level: int) -> None:
    logging = getattr(cv2.utils, "logging", None)
    if logging is not None:
        logging.setLogLevel(level)
    else:
        cv2.setLogLevel(level)


@contextmanager
def quiet_opencv() -> Iterator[None]:
    """Keep OpenCV's own log lines (``[ WARN:0@...] ... PNG input buffer is incomplete``) off
    the terminal while decoding a file that may be bad: our error says it in one line."""
    level = _log_level()
    _set_log_level(LOG_SILENT)
    try:
        yield
    finally:
        _set_log_level(level)


def opencv_errors_only() -> None:
    """Keep OpenCV's own warnings (``[ WARN ...] cap_v4l.cpp``: a camera that is not there) off
    the console from now on: why a camera cannot be opened is said once, in words, by its user."""
    _set_log_level(LOG_ERROR)


def output_problem(path: str | os.PathLike[str]) -> str | None:
    """Why a new file cannot be written at ``path`` (``None`` when it looks writable).

    Checked before any work is done: no name at all, a folder, a missing folder, a "folder"
    that is a file, a folder one may not write into.
    """
    text = os.fspath(path)
    if not text.strip():
        return "no file name given"
    target = Path(text)
    if target.is_dir() or text.endswith(("/", os.sep)):
        return "it is a folder; give a file name"
    folder = target.parent
    # The nearest folder that exists: a file there means the path runs through a file.
    probe = folder
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if probe != folder:
        if not probe.is_dir():
            return f"{probe} is a file, not a folder"
        return f"no such folder {folder}"
    if not folder.is_dir():
        return f"{folder} is a file, not a folder"
    kind = regular_file_problem(target)
    if kind is not None:
        # Writing into a pipe waits for a reader for ever; into a device, writes nothing kept.
        return f"it is {kind}, not a file"
    if target.exists() and not os.access(target, os.W_OK):
        return "permission denied"
    if not target.exists() and not os.access(folder, os.W_OK | os.X_OK):
        return f"permission denied in {folder}"
    return None


def _options(query: str) -> dict[str, str]:
    return {key: values[-1] for key, values in parse_qs(query).items()}


#: The options a frame source address may carry, by kind.
_OPTIONS: dict[str, tuple[str, ...]] = {
    "picamera2": ("width", "height", "fps"),
    "capture": ("width", "height", "fps"),
    "file": ("fps", "loop"),
}


def _index(url: str, text: str) -> int:
    """A camera's number in an address: 0 to 63 (OpenCV crashes on a negative one)."""
    if not text.isdigit() or int(text) > 63:
        raise CameraError(f"{url}: the camera's number is 0 to 63, not {text!r}")
    return int(text)


def _check_options(url: str, options: dict[str, str], kind: str) -> None:
    known = _OPTIONS[kind]
    for key, value in options.items():
        if key not in known:
            raise CameraError(f"{url}: unknown option {key!r} (this source takes {', '.join(known)})")
        if key == "loop":
            if value not in ("0", "1", "true", "false", "yes", "no"):
                raise CameraError(f"{url}: loop is 1 or 0, not {value!r}")
            continue
        try:
            number = float(value)
        except ValueError:
            number = -1.0
        if not (0 < number < 100_000):
            raise CameraError(f"{url}: {key} is a positive number, not {value!r}")


#: The kinds of frame source an address can name (see :func:`source_kind`).
SOURCE_KINDS = ("picamera2", "v4l2", "usb", "video", "images")
#: The kinds whose frames keep coming (cameras), as against files played at will.
LIVE_KINDS = frozenset({"picamera2", "v4l2", "usb"})


@dataclass(frozen=True, slots=True)
class _Address:
    """What a frame source's address names: its kind, the target and the options."""

    kind: str
    target: str
    options: dict[str, str]


def _address(url: str) -> _Address:
    """Parse a frame source's address (the forms of the module docstring) without opening it."""
    if not url.strip():
        raise CameraError("no frame source named (an empty address)")
    parts = urlsplit(url)
    options = _options(parts.query)
    scheme = parts.scheme.lower()
    if scheme == "picamera2":
        return _Address("picamera2", parts.netloc or parts.path.strip("/") or "0", options)
    if scheme == "v4l2":
        return _Address("v4l2", parts.path or "/dev/video0", options)
    if scheme == "usb":
        return _Address("usb", parts.path or parts.netloc or "0", options)
    if scheme == "video":
        return _Address("video", parts.netloc + parts.path, options)
    if scheme == "file":
        pattern = parts.netloc + parts.path
    elif scheme == "" or len(scheme) == 1:  # a plain path (or a Windows drive letter)
        pattern = url.split("?", 1)[0]
        options = _options(url.split("?", 1)[1]) if "?" in url else {}
    else:
        raise CameraError(f"{url}: unknown kind of frame source {scheme!r} (picamera2, v4l2, usb, video, file)")
    if pattern.startswith("/dev/video"):
        return _Address("v4l2", pattern, options)
    if pattern.lower().endswith(VIDEO_EXTENSIONS):
        return _Address("video", pattern, options)
    return _Address("images", pattern, options)


def source_kind(url: str) -> str:
    """The kind of frame source ``url`` names, one of :data:`SOURCE_KINDS`, without opening it.

    >>> [source_kind(u) for u in ("usb:0", "/dev/video2", "picamera2:", "match.mp4", "frames/")]
    ['usb', 'v4l2', 'picamera2', 'video', 'images']

    :raises CameraError: the address is empty or of no known kind.
    """
    return _address(url).kind


def is_live(url: str) -> bool:
    """Whether ``url`` names a camera (frames keep coming) rather than files played at will; an
    address of no known kind names no camera."""
    try:
        return source_kind(url) in LIVE_KINDS
    except CameraError:
        return False


def open_source(url: str) -> FrameSource:
    """Open the frame source that ``url`` names (see the module docstring).

    :raises CameraError: the address is malformed or the source cannot be opened, in words.
    """
    address = _address(url)
    kind, target, options = address.kind, address.target, address.options
    if kind == "picamera2":
        _check_options(url, options, "picamera2")
        return PiCamera(url, _index(url, target), options)
    if kind in ("v4l2", "video"):
        _check_options(url, options, "capture")
        return OpenCVCapture(url, target, options, is_file=kind == "video")
    if kind == "usb":
        _check_options(url, options, "capture")
        return OpenCVCapture(url, _index(url, target), options, is_file=False)
    _check_options(url, options, "file")
    pattern = target
    if os.path.isdir(pattern):
        paths = sorted(str(p) for p in Path(pattern).iterdir() if p.suffix.lower() in IMAGE_EXTENSIONS)
    else:
        paths = sorted(p for p in glob.glob(pattern) if p.lower().endswith(IMAGE_EXTENSIONS))
    if not paths:
        if os.path.isfile(pattern):
            # One file named, but not an image by its name: say what it is taken for.
            hint = " (a .mat file is a match record: bgboard check-match reads it)" if pattern.endswith(".mat") else ""
            raise CameraError(f"{pattern} is not an image file by its name ({', '.join(IMAGE_EXTENSIONS)}){hint}")
        raise CameraError(f"{url}: no images match {pattern}")
    return ImageFiles(
        url, paths, fps=float(options.get("fps", 10)), loop=options.get("loop", "0") not in ("0", "false")
    )
