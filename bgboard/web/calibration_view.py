# SPDX-License-Identifier: MIT
"""The calibration view's side of the table: a camera frame, the field's corners on it, the
position it must show, and the calibration a page confirms.

A club sets a table up without typing pixels: the live page's calibration view
(``/calibrate``, served by :mod:`bgboard.web.server`) shows the latest camera frame with the
four field corners drawn over it as handles, and a person drags them onto the board and
confirms. This module does everything but the HTTP:

- :meth:`Calibrator.snapshot` keeps the table's latest frame (numbered, the last few kept, so
  the corners a page confirms are placed on the frame it showed), looks for the corners
  (:func:`vision.calibration.find_corners`: the markers, or the field itself) and, when none
  are found, starts the handles on a rectangle inset in the frame, with the reason;
- :func:`assumed_position` says which position the frame must show: the start when no game is
  under way, else the match's position now, seen from player 1's seat (the player at the bottom
  of the camera's view), as :func:`vision.calibration.calibrate` wants it;
- :func:`parse_request` checks a confirmation's body (four ``[x, y]`` pairs of numbers inside
  the frame, the frame's number, a die size) and names what is wrong and where;
- :meth:`Calibrator.calibrate` calibrates on that frame with those corners, with the check on
  (a refusal is the calibration's own words), and :meth:`Calibrator.install` writes the profile
  and hands it to whoever owns the table, in the table's thread, through the live page's
  :class:`~bgboard.session.Inbox`.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from bgboard.errors import CalibrationRequestError, FrameGoneError
from bgboard.events import Event
from engine.match import MatchState, Phase
from engine.position import Position
from hardware.presenter import seat_of

if TYPE_CHECKING:
    from bgboard.session import Inbox
    from bgboard.table import Table
    from vision.profile import Profile

#: What each corner handle stands for, in the contract's order (clockwise on screen).
CORNERS: Final = (
    "beside player 1's 13-point",
    "beside player 1's 24-point",
    "beside player 1's 1-point",
    "beside player 1's 12-point",
)
#: The handles' short labels: the point each corner lies beside.
LABELS: Final = ("13", "24", "1", "12")
#: Frames kept for pages that are still placing corners on them.
KEEP: Final = 4
#: Where the handles start when no corners are found: this share of the frame in from each side.
INSET: Final = 0.15
#: How the corners came: ``markers`` and ``found`` by :func:`~vision.calibration.find_corners`;
#: ``None`` when they were not found and start as an inset rectangle.
HOW_WORDS: Final = {"markers": "from the corner markers", "found": "found on the board", "corners": "placed by hand"}
#: The names a match gives players nobody named (``match.players``' default).
UNNAMED: Final = ("Player 1", "Player 2")
#: The keys a confirmation may carry.
REQUEST_KEYS: Final = ("corners", "frame", "die_size")


@dataclass(frozen=True, slots=True)
class Assumed:
    """The position a calibration frame must show.

    :ivar position: seen from player 1's seat (player 1 on roll), as calibration takes it.
    :ivar start: no game is under way: the starting position.
    :ivar words: which position, in players' words.
    :ivar player1: the name of the player at the bottom of the camera's view (player 1).
    :ivar named: the players were given names: ``player1`` is not one of the names a match
        gives players nobody named (``Player 1``, ``Player 2``), which say nothing at the table.
    """

    position: Position
    start: bool
    words: str
    player1: str
    named: bool = True

    def to_json(self) -> dict[str, Any]:
        """``id``, ``start``, ``words``, ``player1``, ``named`` and ``board`` (player 1's
        numbering, as the live page draws a board: 24 signed counts, ``bar`` and ``off`` as
        ``[p1, p2]``)."""
        points, bar, off = self.position.to_absolute(1)
        return {
            "id": self.position.position_id(),
            "start": self.start,
            "words": self.words,
            "player1": self.player1,
            "named": self.named,
            "board": {"points": points, "bar": list(bar), "off": list(off)},
        }


def assumed_position(state: MatchState, bottom_player: int, names: Sequence[str]) -> Assumed:
    """Which position a frame taken now shows, as far as the match knows.

    No game under way (before the opening roll, between games, after the match): the start.
    Otherwise the position the match holds, turned to player 1's seat: the board before the
    move in progress, if any.

    >>> assumed_position(MatchState.new_match(5), 1, ("Ann", "Bob")).words
    'the starting position (no game is under way)'
    >>> assumed_position(MatchState.new_match(5), 0, UNNAMED).named
    False
    """
    player1 = names[bottom_player]
    named = player1 not in UNNAMED
    if state.phase in (Phase.OPENING, Phase.GAME_OVER, Phase.MATCH_OVER) or state.on_roll is None:
        return Assumed(Position.STARTING, True, "the starting position (no game is under way)", player1, named)
    seat = seat_of(state.on_roll, bottom_player)
    position = state.position if seat == 1 else state.position.swap()
    words = f"game {state.game_number} as the match stands now"
    if state.phase is Phase.MOVE and state.dice is not None:
        words += f": the board before {names[state.on_roll]}'s {state.dice.first}-{state.dice.second} is played"
    else:
        words += f": {names[state.on_roll]} on roll"
    return Assumed(position, False, words, player1, named)


def inset_corners(width: int, height: int) -> list[list[float]]:
    """A rectangle :data:`INSET` in from the frame's sides, in the contract's order: where the
    handles start when no corners are found.

    >>> inset_corners(1000, 600)
    [[150.0, 90.0], [850.0, 90.0], [850.0, 510.0], [150.0, 510.0]]
    """
    left, top = round(INSET * width, 1), round(INSET * height, 1)
    right, bottom = round(width - left, 1), round(height - top, 1)
    return [[left, top], [right, top], [right, bottom], [left, bottom]]


def _number(value: object, where: str) -> float:
    # bool is an int to Python, never a coordinate to a person.
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise CalibrationRequestError(f"{where} is a number of pixels, not {json_words(value)}")
    number = float(value)
    if not math.isfinite(number):
        raise CalibrationRequestError(f"{where} is a number of pixels, not {value!r}")
    return number


def json_words(value: object) -> str:
    """A JSON value as a person reads it in an error (``"abc"``, ``null``, ``true``, ``a list``)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        text = value if len(value) <= 20 else value[:20] + "..."
        return f'"{text}"'
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return repr(value)


@dataclass(frozen=True, slots=True)
class Request:
    """A confirmation's body, checked for shape (:func:`parse_request`)."""

    corners: np.ndarray
    frame: int | None
    die_size: float | None


def parse_request(data: dict[str, Any]) -> Request:
    """The corners, the frame's number and the die size of a confirmation, checked for shape.

    >>> parse_request({"corners": [[1, 2], [3, 4], [5, 6], [7, 8]]}).corners.tolist()
    [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]]
    >>> try:
    ...     parse_request({"corners": [[1, 2], [3, 4], [5, "x"], [7, 8]]})
    ... except CalibrationRequestError as exc:
    ...     print(exc)
    corners[2][1] (the y of the corner beside player 1's 1-point) is a number of pixels, not "x"

    :raises CalibrationRequestError: naming the key, the corner and the coordinate.
    """
    unknown = sorted(set(data) - set(REQUEST_KEYS))
    if unknown:
        raise CalibrationRequestError(
            f"unknown key {unknown[0]!r}: a calibration takes {', '.join(REQUEST_KEYS)} (corners required)"
        )
    corners = data.get("corners")
    if corners is None:
        raise CalibrationRequestError(
            'give "corners": four [x, y] pairs in pixels, beside player 1\'s 13-, 24-, 1- then 12-point'
        )
    if not isinstance(corners, list) or len(corners) != 4:
        count = f"{len(corners)} items" if isinstance(corners, list) else json_words(corners)
        raise CalibrationRequestError(
            f"corners are four [x, y] pairs (beside player 1's 13-, 24-, 1- then 12-point), not {count}"
        )
    pairs: list[list[float]] = []
    for index, pair in enumerate(corners):
        name = CORNERS[index]
        if not isinstance(pair, list) or len(pair) != 2:
            shape = f"{len(pair)} numbers" if isinstance(pair, list) else json_words(pair)
            raise CalibrationRequestError(f"corners[{index}] (the corner {name}) is one [x, y] pair, not {shape}")
        pairs.append(
            [
                _number(value, f"corners[{index}][{axis}] (the {'xy'[axis]} of the corner {name})")
                for axis, value in enumerate(pair)
            ]
        )
    frame = data.get("frame")
    if frame is not None and (isinstance(frame, bool) or not isinstance(frame, int) or frame < 1):
        raise CalibrationRequestError(f"frame is the number GET /api/calibration gave, not {json_words(frame)}")
    die_size = data.get("die_size")
    if die_size is not None:
        from vision.profile import DIE_FRACTION_RANGE

        die_size = _number(die_size, "die_size (a die's side over a checker's diameter)")
        low, high = DIE_FRACTION_RANGE
        if not low <= die_size <= high:
            raise CalibrationRequestError(
                f"die_size (a die's side over a checker's diameter) is from {low:g} to {high:g}, not {die_size:g}"
            )
    return Request(np.asarray(pairs, dtype=np.float64), frame, die_size)


def outside(corners: np.ndarray, width: int, height: int) -> str | None:
    """Which corner lies outside a ``width`` x ``height`` frame, in words; ``None``: none.

    >>> outside(np.array([[1.0, 1.0], [1300.0, 5.0], [9.0, 9.0], [0.0, 9.0]]), 1280, 720)
    "corners[1] (the corner beside player 1's 24-point) at 1300,5 is outside the 1280 x 720 frame"
    """
    for index, (x, y) in enumerate(corners):
        if not (0 <= x < width and 0 <= y < height):
            return (
                f"corners[{index}] (the corner {CORNERS[index]}) at {x:g},{y:g} is outside the {width} x {height} frame"
            )
    return None


@dataclass(eq=False)
class Snapshot:
    """One camera frame kept for the calibration view, and what was found on it.

    :ivar number: counted from 1 by the calibrator.
    :ivar image: the frame (BGR).
    :ivar corners: the corners found, else an inset rectangle (:func:`inset_corners`).
    :ivar how: ``markers`` or ``found``; ``None`` when no corners were found.
    :ivar why: why no corners were found (the finder's words).
    :ivar assumed: the position the frame must show.
    """

    number: int
    image: np.ndarray
    corners: list[list[float]]
    how: str | None
    why: str | None
    assumed: Assumed
    _jpeg: bytes | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def size(self) -> tuple[int, int]:
        """The frame's width and height in pixels."""
        return int(self.image.shape[1]), int(self.image.shape[0])

    def jpeg(self) -> bytes:
        """The frame, full size, as JPEG (encoded once)."""
        with self._lock:
            if self._jpeg is None:
                import cv2

                ok, data = cv2.imencode(".jpg", self.image, [cv2.IMWRITE_JPEG_QUALITY, 90])
                if not ok:
                    raise ValueError("the camera frame could not be encoded as JPEG")
                self._jpeg = bytes(data)
            return self._jpeg

    def to_json(self) -> dict[str, Any]:
        """What ``GET /api/calibration`` says of this frame (the calibrator adds the rest)."""
        width, height = self.size
        return {
            "frame": self.number,
            "image": {"width": width, "height": height, "url": f"/api/calibration.jpg?frame={self.number}"},
            "corners": self.corners,
            "how": self.how,
            "why": self.why,
            "position": self.assumed.to_json(),
        }


@dataclass(frozen=True, slots=True)
class Calibrated:
    """A profile made and written by :meth:`Calibrator.calibrate`."""

    profile: Profile
    path: Path
    how: str

    @property
    def text(self) -> str:
        """The calibration in a line, as ``bgboard vision calibrate`` says it."""
        profile = self.profile
        return (
            f"field corners {HOW_WORDS.get(self.how, self.how)}, bar {profile.bar_fraction:.3f} of the field's width,"
            f" dice {profile.die_fraction:.2f} of a checker; profile written to {self.path}"
        )

    def to_json(self) -> dict[str, Any]:
        """The profile's summary for the page."""
        profile = self.profile
        return {
            "path": str(self.path),
            "corners": [[round(x, 2), round(y, 2)] for x, y in profile.corners],
            "how": self.how,
            "image_size": list(profile.image_size),
            "bar_fraction": round(profile.bar_fraction, 5),
            "die_fraction": round(profile.die_fraction, 4),
            "position": profile.position,
        }


class Calibrator:
    """Calibrates one table's board from the live page.

    :param table: the table (its latest frame, its match, its reader's profile).
    :param inbox: runs the new reader's installation in the table's thread.
    :param path: where the profile is written (``camera.profile``).
    :param install: called in the table's thread with what was calibrated; makes the table read
        with it and returns the events it said.
    """

    def __init__(
        self, table: Table, inbox: Inbox, path: Path, install: Callable[[Calibrated], Iterable[Event]]
    ) -> None:
        self.table = table
        self.inbox = inbox
        self.path = path
        self._install = install
        self._snapshots: OrderedDict[int, Snapshot] = OrderedDict()
        self._count = 0
        self._lock = threading.Lock()
        # One calibration at a time: two pages confirming at once share the two cores' time.
        self._calibrating = threading.Lock()

    @property
    def calibrated(self) -> bool:
        """Whether the table reads the board now."""
        return self.table.calibrated

    def die_size(self) -> float:
        """The die size a calibration keeps: the profile's in use, else the size of real dice."""
        from vision.profile import DIE_FRACTION

        reader = self.table.reader
        return reader.profile.die_fraction if reader is not None else DIE_FRACTION

    def snapshot(self) -> Snapshot:
        """Keep the table's latest frame, find the corners on it, say the position it must show.

        Called from the web server's threads: the table's thread replaces its frame and its
        match state with new objects and never changes them, so one read of each is a whole one.

        :raises FrameGoneError: no frame has come from the camera yet.
        """
        from vision.calibration import CalibrationError, find_corners

        image = self.table.last_frame
        if image is None:
            raise FrameGoneError("no frame from the camera yet: the view shows one as soon as the camera sends it")
        controller = self.table.controller
        assumed = assumed_position(controller.state, controller.bottom_player, controller.names)
        how: str | None
        why: str | None = None
        try:
            found, how = find_corners(image, assumed.position)
            corners = [[round(float(x), 2), round(float(y), 2)] for x, y in found]
        except CalibrationError as exc:
            # Not found is not an error here: a person places the corners by hand.
            how, why = None, str(exc)
            corners = inset_corners(image.shape[1], image.shape[0])
        with self._lock:
            self._count += 1
            shot = Snapshot(self._count, image, corners, how, why, assumed)
            self._snapshots[shot.number] = shot
            while len(self._snapshots) > KEEP:
                self._snapshots.popitem(last=False)
        return shot

    def get(self, number: int | None) -> Snapshot:
        """Frame ``number`` (``None``: the latest kept).

        :raises FrameGoneError: it is no longer kept, or none is.
        """
        with self._lock:
            if number is None:
                if not self._snapshots:
                    raise FrameGoneError("no frame kept: GET /api/calibration takes one")
                return next(reversed(self._snapshots.values()))
            shot = self._snapshots.get(number)
        if shot is None:
            raise FrameGoneError(f"frame {number} is no longer kept: load the calibration view again for a new one")
        return shot

    def to_json(self, shot: Snapshot) -> dict[str, Any]:
        """``GET /api/calibration``'s answer for ``shot``."""
        return {
            **shot.to_json(),
            "labels": list(CORNERS),
            "calibrated": self.calibrated,
            "profile": str(self.path),
            "die_size": round(self.die_size(), 4),
        }

    def calibrate(self, data: dict[str, Any]) -> Calibrated:
        """Calibrate on the frame a confirmation names with its corners, the check on. Slow (a
        fraction of a second): run it in a worker thread; :meth:`install` writes the profile.

        :raises CalibrationRequestError: the body is not four corners in the frame.
        :raises FrameGoneError: its frame is no longer kept.
        :raises vision.calibration.CalibrationError: the calibration refused (its own words).
        """
        from vision.calibration import calibrate

        request = parse_request(data)
        shot = self.get(request.frame)
        width, height = shot.size
        problem = outside(request.corners, width, height)
        if problem is not None:
            raise CalibrationRequestError(problem)
        die_size = request.die_size if request.die_size is not None else self.die_size()
        with self._calibrating:
            profile = calibrate(
                shot.image, request.corners, position=shot.assumed.position, check=True, die_fraction=die_size
            )
        how = "corners"
        if shot.how is not None and np.abs(request.corners - np.asarray(shot.corners)).max() < 0.5:
            # The corners the finder gave, left where they were: say so in the profile.
            how = profile.source = shot.how
        return Calibrated(profile, self.path, how)

    def install(self, done: Calibrated) -> Future[list[Event]]:
        """Write ``done``'s profile and have the table read with it, both in the table's thread;
        the future gets the events it said, or the :class:`~vision.profile.ProfileError` of a
        profile that could not be written (then nothing changed).

        In the table's thread because the table's owner writes the profile in use too (what
        its reader learns in play): one thread, so the new file is never overwritten by the old.
        """

        def save_and_use() -> Iterable[Event]:
            done.profile.save(done.path)
            return self._install(done)

        return self.inbox.call(save_and_use)
