# SPDX-License-Identifier: MIT
"""The table's camera: frames from a source that may stop, reopened until the referee stops.

- :meth:`CameraFeed.open` opens the source and reads its first frame, so a camera that cannot
  be opened or sends nothing in time is a set-up error before anything is recorded. One photo
  (``file:start.png``) is a still camera (:class:`StillImage`): the same frame, over and over.
- :meth:`CameraFeed.run`, the camera thread, reads frames; when no frame comes for ``stall``
  seconds, or the source raises or ends, it closes the source, says so once, and opens it
  again with a backoff (0.5 s doubling to 5 s), saying when frames come back.
- Stopping joins the camera's threads and closes the source: a thread still inside OpenCV
  when Python exits aborts the process. A read that hangs in a driver cannot be joined;
  :func:`stuck_threads` lists such threads, and the command line then ends the process
  without Python's exit (``os._exit``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any, Final

import numpy as np

from bgboard.errors import StoppedError
from bgboard.table import camera_reason
from vision.frames import CameraError, Frame, FrameSource, open_source, opencv_errors_only, source_kind

log = logging.getLogger(__name__)

#: Seconds without a frame after which the camera is taken to have stopped.
STALL: Final = 3.0
#: Seconds a read in progress has to finish when the referee stops (a camera's frame period,
#: a file's decoding), and then again once the source is closed under it.
STOP_WAIT: Final = 2.0
#: The first and the longest wait before opening the camera again, in seconds.
BACKOFF: Final = (0.5, 5.0)


#: Said once when the camera stops, and once when its frames come back.
CAMERA_LOST: Final = "the camera stopped sending frames: reopening"
CAMERA_BACK: Final = "the camera is sending frames again"

SourceFactory = Callable[[str], FrameSource]


#: The kinds of frame source that end (:func:`vision.frames.source_kind`): recordings.
RECORDINGS: Final = ("video", "images")


def is_recording(url: str) -> bool:
    """Whether ``url`` names a recording, played once: a video file or a folder (or pattern) of
    photos. A single photo is a still camera (:class:`StillImage`), never ending.

    >>> is_recording("video:game.mp4"), is_recording("file:frames/*.png"), is_recording("usb:0")
    (True, True, False)
    """
    try:
        kind = source_kind(url)
    except CameraError:
        return False
    if kind != "images":
        return kind in RECORDINGS
    from vision.frames import ImageFiles

    try:
        source = open_source(url)
    except CameraError:
        return True
    try:
        return not (isinstance(source, ImageFiles) and len(source.paths) == 1)
    finally:
        source.close()


#: Threads left inside a camera driver that would not return (see :func:`stuck_threads`).
_STUCK: list[threading.Thread] = []
_STUCK_LOCK = threading.Lock()


def left_behind(thread: threading.Thread) -> None:
    """Note ``thread`` as stuck in a driver: :func:`stuck_threads` lists it while it lives."""
    with _STUCK_LOCK:
        _STUCK.append(thread)


def stuck_threads() -> list[threading.Thread]:
    """Camera threads still inside a driver's call that never returned.

    A thread inside OpenCV when the interpreter exits makes the process abort (``terminate
    called without an active exception``), so a process that has any should end with
    ``os._exit`` once everything else is closed.
    """
    with _STUCK_LOCK:
        _STUCK[:] = [thread for thread in _STUCK if thread.is_alive()]
        return list(_STUCK)


class StillImage:
    """One photo as a camera filming a board left alone: the same frame at ``fps`` a second.

    A ``file:`` source of a single image would otherwise end after one frame, be reopened,
    and end again, for ever. Frames are paced in real time, so the table is not kept busy.

    :param source: the image source (read once, then closed).
    :param fps: frames a second.
    """

    def __init__(self, source: FrameSource, fps: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.url = source.url
        self._source: FrameSource | None = source
        self._period = 1.0 / fps if fps > 0 else 0.1
        self._clock = clock
        self._image: Any = None
        self._seq = 0
        self._start = 0.0
        self._closed = threading.Event()

    def read(self) -> Frame | None:
        """The photo again, once its time has come; ``None`` once closed."""
        if self._image is None:
            source = self._source
            first = source.read() if source is not None else None
            if first is None:
                return None
            self._image = first.image
            self._start = self._clock()
            self._drop_source()
        else:
            wait = self._start + self._seq * self._period - self._clock()
            if wait > 0 and self._closed.wait(wait):
                return None
        if self._closed.is_set():
            return None
        self._seq += 1
        return Frame(self._image, (self._seq - 1) * self._period, self._seq)

    def _drop_source(self) -> None:
        source, self._source = self._source, None
        if source is not None:
            source.close()

    def close(self) -> None:
        """Stop handing out the photo."""
        self._closed.set()
        self._drop_source()


def still_if_one_image(source: FrameSource) -> FrameSource:
    """``source`` itself, or a :class:`StillImage` when it is a ``file:`` source of one image."""
    from vision.frames import ImageFiles

    if isinstance(source, ImageFiles) and len(source.paths) == 1:
        return StillImage(source, source.fps)
    return source


# -- the camera thread ----------------------------------------------------------------------


class _Reading:
    """What one reader thread is doing; written by that thread, read by the supervisor."""

    def __init__(self) -> None:
        self.since: float | None = None  # when the read() in progress began
        self.why: str | None = None  # why the source stopped
        self.ended = False  # the source returned None (the end of a file)
        self.abandoned = False  # the supervisor gave up on this source
        self.frames = 0
        self.done = threading.Event()
        self.thread: threading.Thread | None = None


class CameraFeed:
    """Frames from a source that may stop: reopened with a backoff, each outage said once.

    :meth:`open` opens the source and waits for its first frame (the referee does this before
    it touches the store); :meth:`run` is the camera thread's body.

    :param url: the frame source's address.
    :param factory: opens a source (:func:`vision.frames.open_source`, or a test's fake).
    :param deliver: called with each frame and the number of the source it came from (each
        opening gets a new number), from the camera's threads; it may block.
    :param say: called with an event kind, text and fields when the camera is lost or back.
    :param stall: seconds a ``read()`` may take before the camera counts as stopped.
    :param backoff: the first and the longest wait before opening again, in seconds.
    :param end_with_source: a source that ends (returns ``None``) ends the feed instead of
        being reopened: a finite recording played once.
    :param on_end: called when the feed ends that way.
    :param clock: monotonic seconds.
    """

    def __init__(
        self,
        url: str,
        factory: SourceFactory,
        deliver: Callable[[Frame, int], None],
        say: Callable[..., None],
        *,
        stall: float = STALL,
        backoff: tuple[float, float] = BACKOFF,
        end_with_source: bool = False,
        on_end: Callable[[], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.url = url
        self.factory = factory
        self.deliver = deliver
        self.say = say
        self.stall = stall
        self.backoff = backoff
        self.end_with_source = end_with_source
        self.on_end = on_end
        self.clock = clock
        self.generation = 0
        self.lost = False
        self.reopened = 0
        # The source open() opened and its first frame, until run() takes them.
        self._first: tuple[FrameSource, Frame] | None = None
        # Read threads given up on (a read that hung), joined at the end if they come back.
        self._abandoned: list[_Reading] = []

    def _open_source(self) -> FrameSource:
        return still_if_one_image(self.factory(self.url))

    def open(self, timeout: float, stop: threading.Event | None = None) -> None:
        """Open the source and read its first frame, waiting at most ``timeout`` seconds.

        Both happen in a helper thread, since a driver may hang in either; one that does is
        left behind (:func:`stuck_threads`).

        :raises CameraError: the source cannot be opened, fails or ends before its first frame,
            or sends none in time; the message says why (without the address).
        :raises StoppedError: ``stop`` was set meanwhile.
        """
        result: dict[str, Any] = {}

        def probe() -> None:
            try:
                source = self._open_source()
            except Exception as exc:  # a driver's own exception too: the camera cannot be used
                result["error"] = camera_reason(self.url, exc)
                return
            result["source"] = source
            try:
                frame = source.read()
            except Exception as exc:
                result["error"] = camera_reason(self.url, exc)
                return
            if frame is None:
                result["error"] = "it sent no frame"
            else:
                result["frame"] = frame

        opencv_errors_only()
        thread = threading.Thread(target=probe, name="camera-open", daemon=True)
        thread.start()
        deadline = self.clock() + timeout
        while thread.is_alive() and self.clock() < deadline and not (stop is not None and stop.is_set()):
            thread.join(0.05)
        source: FrameSource | None = result.get("source")
        if thread.is_alive():
            # Hung in the driver: close what was opened from a helper, which may hang too.
            if source is not None:
                self._close_in_helper(source)
            thread.join(STOP_WAIT / 4)
            if thread.is_alive():
                left_behind(thread)
            if stop is not None and stop.is_set():
                raise StoppedError("stopped before the camera sent its first frame: nothing was recorded")
            what = "no frame" if source is not None else "it did not open"
            raise CameraError(f"{what} within {timeout:g} s")
        if "frame" not in result:
            if source is not None:
                self._close_quietly(source)
            raise CameraError(result.get("error", "it sent no frame"))
        assert source is not None
        self._first = (source, result["frame"])

    def first_image(self) -> np.ndarray:
        """The first frame's image that :meth:`open` read."""
        assert self._first is not None, "open() first"
        return self._first[1].image

    def discard(self) -> None:
        """Close the source :meth:`open` opened, when :meth:`run` will not be called."""
        first, self._first = self._first, None
        if first is not None:
            self._close_quietly(first[0])

    def run(self, stop: threading.Event) -> None:
        """Read, and reopen, until ``stop`` is set (the camera thread's body).

        Returns only once the source is closed and its read thread has ended (or, hung in a
        driver, been left behind).
        """
        try:
            self._run(stop)
        finally:
            self.discard()
            for reading in self._abandoned:
                # A read given up on may come back once its source is closed.
                if reading.thread is not None:
                    reading.thread.join(STOP_WAIT / 4)
                    if reading.thread.is_alive():
                        left_behind(reading.thread)

    def _run(self, stop: threading.Event) -> None:
        delay = self.backoff[0]
        while not stop.is_set():
            first: Frame | None = None
            if self._first is not None:
                (source, first), self._first = self._first, None
            else:
                try:
                    source = self._open_source()
                except Exception as exc:  # a driver's own exception too: still a camera to reopen
                    self._lose(f"cannot open the camera {self.url}: {camera_reason(self.url, exc)}")
                    stop.wait(delay)
                    delay = min(delay * 2, self.backoff[1])
                    continue
            self.generation += 1
            reading = self._pump(source, self.generation, stop, first)
            self._close(source, reading)
            if stop.is_set():
                return
            if reading.ended and self.end_with_source:
                if self.on_end is not None:
                    self.on_end()
                return
            if reading.frames:
                # It worked for a while: the next outage starts with a short wait again.
                delay = self.backoff[0]
            self._lose(reading.why or "the camera stopped")
            self.reopened += 1
            stop.wait(delay)
            delay = min(delay * 2, self.backoff[1])

    def _lose(self, why: str) -> None:
        if not self.lost:
            self.lost = True
            self.say("camera-lost", CAMERA_LOST, reason=why)
        else:
            log.info("camera still not back: %s", why)

    def _pump(self, source: FrameSource, generation: int, stop: threading.Event, first: Frame | None) -> _Reading:
        """Read ``source`` in its own thread until it ends, fails or stalls, or ``stop``."""
        reading = _Reading()

        def read_loop() -> None:
            try:
                pending = first
                while not stop.is_set() and not reading.abandoned:
                    if pending is not None:
                        frame: Frame | None = pending
                        pending = None
                    else:
                        reading.since = self.clock()
                        frame = source.read()
                        reading.since = None
                    if reading.abandoned:
                        break
                    if frame is None:
                        reading.ended = True
                        reading.why = "the camera sent no frame"
                        break
                    if reading.frames == 0 and self.lost:
                        self.lost = False
                        self.say("camera-back", CAMERA_BACK)
                    reading.frames += 1
                    self.deliver(frame, generation)
            except (CameraError, OSError) as exc:
                reading.why = str(exc) or type(exc).__name__
            except Exception as exc:  # a driver's own exception: still a camera that stopped
                log.exception("the camera %s failed", self.url)
                reading.why = f"{type(exc).__name__}: {exc}"
            finally:
                reading.done.set()

        thread = threading.Thread(target=read_loop, name=f"camera-read-{generation}", daemon=True)
        reading.thread = thread
        thread.start()
        # A read() that hangs cannot be interrupted, so the stall is watched from here; the
        # hung thread is abandoned and its frame, if it ever comes, thrown away.
        while not reading.done.wait(min(0.05, self.stall / 4)):
            if stop.is_set():
                # Stopping: let the read in progress finish (a frame period, a file's decoding),
                # so that the source is never closed under it.
                reading.done.wait(STOP_WAIT)
                break
            since = reading.since
            if since is not None and self.clock() - since > self.stall:
                reading.why = f"no frame for {self.stall:g} s"
                reading.abandoned = True
                break
        return reading

    def _close(self, source: FrameSource, reading: _Reading) -> None:
        """Close ``source``; with a read still hanging, close from a helper that may hang too."""
        if reading.done.is_set():
            self._close_quietly(source)
            if reading.thread is not None:
                reading.thread.join()
            return
        self._close_in_helper(source)
        if reading.abandoned:
            self._abandoned.append(reading)
        else:
            # Stopped with a read still in progress: closing may have ended it.
            reading.done.wait(STOP_WAIT / 2)
            if reading.thread is not None and reading.thread.is_alive():
                left_behind(reading.thread)

    def _close_quietly(self, source: FrameSource) -> None:
        try:
            source.close()
        except Exception as exc:  # closing a failed device may fail too; it is let go either way
            log.info("closing the camera %s: %s", self.url, exc)

    def _close_in_helper(self, source: FrameSource) -> None:
        closer = threading.Thread(target=self._close_quietly, args=(source,), name="camera-close", daemon=True)
        closer.start()
        closer.join(STOP_WAIT / 2)
        if closer.is_alive():
            left_behind(closer)
