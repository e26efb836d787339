# SPDX-License-Identifier: MIT
"""Play recorded frames through the referee's pipeline (``bgboard replay``).

A folder of photos (in name order), a video file, or any frame-source address goes through
the same :class:`~bgboard.table.Table` as at the table (motion gate, board reader, controller,
store), synchronously, one frame after another, as fast as they can be read. Each frame's time
is its own timestamp (a video's frame rate, 10 a second for images), or its index over
``fps`` when that is given. A folder with one photo per scene needs ``hold``: each photo is
then shown for that many seconds, as a camera would film the board left alone. The events
are printed as ``bgboard referee`` prints them (the same sinks, :mod:`bgboard.events`), then a
one-line summary.

Without a store path the match is kept in memory: a replay never writes to the players' store.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, TextIO

from bgboard.config import Config
from bgboard.events import Event, Notice, console_sink, frame_clock
from bgboard.store import MatchStore, StoreError
from bgboard.table import SetupError, Table, camera_reason, load_reader, new_match
from vision.frames import CameraError, Frame, FrameSource, open_source, opencv_errors_only
from vision.profile import ProfileError

#: Frames a second of a held photo when no rate is given.
HOLD_FPS = 5.0
#: Events that record a roll (the opening roll included).
_ROLLS = ("opening-roll", "roll")
#: Events that ask the players to look: a doubtful reading, a re-roll, an illegal move.
_FLAGGED = ("please-check", "re-roll", "illegal", "noted")


@dataclass
class ReplaySummary:
    """What a replay saw and recorded.

    :ivar frames: frames read from the source.
    :ivar reads: frames the board reader read (one per still period).
    :ivar rolls: rolls recorded (the opening roll included).
    :ivar moves: moves recorded (corrections included).
    :ivar flagged: events that asked the players to check, re-roll or put a move right.
    :ivar actions: every action recorded (rolls, moves, cube actions...).
    :ivar match_id: the match in the store.
    """

    frames: int = 0
    reads: int = 0
    rolls: int = 0
    moves: int = 0
    flagged: int = 0
    actions: int = 0
    match_id: int = 0

    def count(self, event: Event) -> None:
        """Count one event."""
        if event.action is not None and event.source is not None:
            self.actions += 1
        if event.kind in _ROLLS:
            self.rolls += 1
        elif event.kind == "move" or (event.kind == "correction" and "play" in event.fields):
            self.moves += 1
        elif event.kind in _FLAGGED:
            self.flagged += 1

    def text(self) -> str:
        """The summary in one line."""
        return (
            f"replay: {self.frames} frames, {self.reads} reads, {self.rolls} rolls and {self.moves} moves"
            f" recorded, {self.flagged} flagged"
        )

    def notice(self) -> Notice:
        """The summary as the last event of the replay (its JSON: :meth:`to_json`)."""
        fields = self.to_json()
        del fields["event"], fields["text"]
        return Notice("summary", self.text(), fields)

    def to_json(self) -> dict[str, Any]:
        """The summary as one JSON object (the last line with ``--json``)."""
        return {
            "event": "summary",
            "text": self.text(),
            "frames": self.frames,
            "reads": self.reads,
            "rolls": self.rolls,
            "moves": self.moves,
            "flagged": self.flagged,
            "actions": self.actions,
            "match": self.match_id,
        }


def open_replay_source(source: str) -> FrameSource:
    """Open ``source``: a folder of images, an image glob, a video file or a frame-source URL.

    :raises SetupError: nothing there to read, naming the source and why.
    """
    # Why a source cannot be read is said once, in words: not in OpenCV's own log lines too.
    opencv_errors_only()
    try:
        return open_source(source)
    except (CameraError, ValueError) as exc:  # ValueError: an address such as usb:front
        raise SetupError(f"cannot replay {source}: {camera_reason(source, exc)}") from None


#: The longest a photo is held (seconds): a board needs under a second to settle.
MAX_HOLD: Final = 60.0


def replay(
    source: str,
    config: Config,
    *,
    out: TextIO,
    json_lines: bool = False,
    fps: float | None = None,
    store_path: str | Path | None = None,
    hold: float | None = None,
    profile_name: str = "camera.profile",
) -> ReplaySummary:
    """Run every frame of ``source`` through the table; print the events and the summary.

    :param source: what :func:`open_replay_source` opens.
    :param config: the calibration profile (``camera.profile``), the settle time, and the match
        to follow (players, length, options, mode, bottom player).
    :param out: where the events go.
    :param json_lines: print JSON Lines instead of text.
    :param fps: the frames' rate: frame ``n`` is taken at ``n / fps`` seconds; ``None``: each
        frame's own timestamp.
    :param store_path: record into this match store; ``None``: a store in memory.
    :param hold: show each frame for this many seconds (repeated at ``fps``, 5 a second by
        default): for a folder with one photo per scene, which would otherwise never look still.
    :param profile_name: how errors name the profile's setting (``--profile`` when given so).
    :raises SetupError: no profile, a source that cannot be read, a store that cannot be opened.
    """
    if fps is not None and not fps > 0:
        raise SetupError(f"--fps is a number of frames a second above 0, not {fps:g}")
    if hold is not None and not 0 < hold <= MAX_HOLD:
        raise SetupError(f"--hold is a number of seconds above 0 and at most {MAX_HOLD:g}, not {hold:g}")
    # Holding a photo repeats it, as a camera would film a board left alone.
    repeats = 1 if hold is None else max(1, math.ceil(hold * (fps or HOLD_FPS) - 1e-9))
    step = 1.0 / (fps or HOLD_FPS)
    reader = load_reader(config, profile_name)
    frames = open_replay_source(source)
    t = 0.0
    index = 0

    def read_frame() -> Frame | None:
        try:
            return frames.read()
        except CameraError as exc:
            raise SetupError(f"cannot replay {source}: frame {index + 1}: {exc}") from None

    console = console_sink(out, json_lines=json_lines, stamp=frame_clock(8, 2))
    summary = ReplaySummary()

    try:
        # The first frame before the store: a source that gives none records no match.
        first = read_frame()
        if first is None:
            raise SetupError(f"cannot replay {source}: it gave no frames")
        try:
            reader.profile.check_frame(first.image, f"{source}'s first frame")
        except ProfileError as exc:
            raise SetupError(str(exc)) from None
        try:
            store = MatchStore(":memory:" if store_path is None else Path(store_path).expanduser())
        except StoreError as exc:
            raise SetupError(f"--store: {exc}") from None
        with store:
            match_id = new_match(store, config)
            summary.match_id = match_id
            # No hint engine: a replay is not taught (teach mode needs a running gnubg).
            table = Table.from_config(config, reader, store=store, match_id=match_id, sinks=[summary.count, console])
            try:
                frame: Frame | None = first
                while frame is not None:
                    if hold is not None:
                        for _ in range(repeats):
                            t = index * step
                            table.feed(frame.image, t)
                            index += 1
                    else:
                        t = index / fps if fps is not None else frame.time
                        table.feed(frame.image, t)
                        index += 1
                    frame = read_frame()
            except KeyboardInterrupt:
                # Interrupted: the summary of what was replayed is still worth printing.
                pass
            summary.frames = table.stats.frames
            summary.reads = table.stats.reads
    finally:
        frames.close()
    console(summary.notice())
    return summary
