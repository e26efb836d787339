# SPDX-License-Identifier: MIT
"""Labelled photos of real boards, turned into bgboard's terms.

A label file (the format of ``shared/data/boards/labels.json``, documented in docs/camera.md,
"How well will it read my board?") describes each photo as a person sees it: the playing
field's corners in image pixels (top-left, top-right, bottom-right, bottom-left as the picture
shows them), the twelve points
of the top and bottom rows left to right, each ``"A<n>"`` or ``"B<n>"`` (n checkers of colour A
or B), ``""`` (bare) or ``null`` (a hand hides it), the bar, the borne-off checkers, the dice,
the cube, whether a hand lies over the field, and in which corner each colour's home board
lies.

bgboard numbers the points as player 1 does, with his home board on his right (points 1 to 6),
and takes the field's corners beside his 13-, 24-, 1- and 12-points. Of the two colours, player
1 is the one whose home board lies on his right as he sits: the one whose home is at the
bottom right or the top left of the picture (the player across the board sits at the other
edge, his home on his right too). The picture is then the board seen from player 1's seat, or
turned half round.

>>> frame = LabelledFrame.from_json({
...     "file": "x.jpg", "width": 100, "height": 80,
...     "field_corners": [[10, 10], [90, 10], [90, 70], [10, 70]],
...     "top": ["A1"] + [""] * 11, "bottom": [""] * 11 + ["B2"],
...     "bar": {"A": 0, "B": 0}, "off": {"A": 14, "B": 13},
...     "dice": [], "cube": None, "hand": False,
...     "home": "A home top-left, B home bottom-left"})
>>> frame.player1, frame.points[0], frame.points[12]
('A', 1, -2)
>>> [tuple(int(v) for v in c) for c in frame.corners]
[(90, 70), (10, 70), (10, 10), (90, 10)]
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from engine.errors import BackgammonError
from engine.position import Position

#: How a label names a corner of the picture.
_CORNERS = ("top-left", "top-right", "bottom-right", "bottom-left")
_HOME = re.compile(r"\b([AB])\b[^,;.]*?\b(?i:home)\s+(?i:(top|bottom)[- ](left|right))")
_STACK = re.compile(r"^([AB])(\d{1,2})$")


#: The largest label file read (bytes): a thousand labelled frames take under a megabyte.
LARGEST = 20_000_000


class LabelError(ValueError):
    """A label file or one of its frames cannot be read: which, and where."""


@dataclass(frozen=True)
class LabelledFrame:
    """One labelled photo in bgboard's terms (player 1's numbering and corner order).

    :ivar file: the photo, as the label file names it.
    :ivar size: ``(width, height)`` in pixels.
    :ivar corners: the field's corners in the contract's order (4 x 2 image pixels).
    :ivar player1: the colour (``"A"`` or ``"B"``) that is player 1.
    :ivar points: 24 signed counts, index 0 = player 1's 1-point (``None``: hidden).
    :ivar bar: checkers on the bar ``(player 1, player 2)`` (``None``: hidden).
    :ivar off: borne off ``(player 1, player 2)`` (``None``: not in the picture).
    :ivar dice: the dice's values lying on the field.
    :ivar cube: ``(value, owner)`` with owner 1, 2 or ``None`` (centred); ``None``: not read.
    :ivar hand: whether a hand or an arm lies over the field.
    :ivar bar_fraction: the bar strip's width over the field's, if labelled.
    :ivar calibrate_on: the file of the frame to calibrate on (the same camera), if named.
    """

    file: str
    size: tuple[int, int]
    corners: np.ndarray
    player1: str
    points: tuple[int | None, ...]
    bar: tuple[int | None, int | None]
    off: tuple[int | None, int | None]
    dice: tuple[int, ...]
    cube: tuple[int, int | None] | None
    hand: bool
    bar_fraction: float | None = None
    calibrate_on: str | None = None

    @classmethod
    def from_json(cls, data: Mapping[str, Any], where: str = "frame") -> LabelledFrame:
        """One frame of a label file.

        :param where: how to name the frame in an error (``labels.json, frame 3``).
        :raises LabelError: a key missing or of the wrong form, named with ``where``.
        """
        try:
            return _frame(data, where)
        except LabelError:
            raise
        except (KeyError, TypeError, ValueError) as exc:
            raise LabelError(f"{where}: {exc}") from None

    @property
    def complete(self) -> bool:
        """Whether every point and the bar are known (no hand hides any)."""
        return None not in self.points and None not in self.bar

    def position(self) -> Position:
        """The position shown, player 1 on roll.

        :raises LabelError: a point or the bar is hidden, or the counts are no position.
        """
        if not self.complete:
            raise LabelError(f"{self.file}: a hand hides part of the board; its position is not known")
        points = [int(c) for c in self.points if c is not None]
        bar = (int(self.bar[0] or 0), int(self.bar[1] or 0))
        try:
            return Position.from_absolute(points, bar)
        except BackgammonError as exc:
            raise LabelError(f"{self.file}: the labels are no position: {exc}") from None


def _frame(data: Mapping[str, Any], where: str) -> LabelledFrame:
    for key in ("file", "field_corners", "top", "bottom", "home"):
        if key not in data:
            raise LabelError(f"{where}: no {key!r}")
    file = str(data["file"])
    where = f"{where} ({file})"
    size = (int(data.get("width", 0)), int(data.get("height", 0)))
    corners = np.asarray(data["field_corners"], dtype=np.float64)
    if corners.shape != (4, 2) or not np.isfinite(corners).all():
        raise LabelError(f"{where}: field_corners must be four [x, y] pairs")
    homes = _both_homes(_homes(data["home"], where), where)
    player1 = "A" if homes["A"] in ("bottom-right", "top-left") else "B"
    rotated = homes[player1] == "top-left"
    # The picture's corners top-left, top-right, bottom-right, bottom-left.
    tl, tr, br, bl = corners
    ordered = np.stack([br, bl, tl, tr] if rotated else [tl, tr, br, bl])
    rows = {}
    for name in ("top", "bottom"):
        row = data[name]
        if not isinstance(row, Sequence) or isinstance(row, str) or len(row) != 12:
            raise LabelError(f"{where}: {name!r} must list 12 points")
        rows[name] = [_stack(entry, player1, f"{where}, {name} point {k + 1}") for k, entry in enumerate(row)]
    points: list[int | None] = [None] * 24
    for k in range(12):
        # Seen from player 1's seat: the top row left to right is 13..24, the bottom 12..1; turned
        # half round, the top row is 1..12 and the bottom 24..13.
        if rotated:
            points[k] = rows["top"][k]
            points[23 - k] = rows["bottom"][k]
        else:
            points[12 + k] = rows["top"][k]
            points[11 - k] = rows["bottom"][k]
    bar = _pair(data.get("bar"), player1, f"{where}, bar", default=0)
    off = _pair(data.get("off"), player1, f"{where}, off", default=None)
    dice = tuple(int(v) for v in (data.get("dice") or ()))
    if any(not 1 <= v <= 6 for v in dice):
        raise LabelError(f"{where}: dice must be 1 to 6, not {list(dice)}")
    cube = _cube(data.get("cube"), player1, where)
    fraction = data.get("bar_width_fraction")
    calibrate_on = data.get("calibrate_on")
    return LabelledFrame(
        file=file,
        size=size,
        corners=ordered,
        player1=player1,
        points=tuple(points),
        bar=bar,
        off=off,
        dice=dice,
        cube=cube,
        hand=bool(data.get("hand", False)),
        bar_fraction=None if fraction is None else float(fraction),
        calibrate_on=None if calibrate_on is None else str(calibrate_on),
    )


def _homes(value: object, where: str) -> dict[str, str]:
    """Each colour's home corner, from ``"A(black) home top-left, B(white) home bottom-left"``
    (any words round them) or ``{"A": "top-left", "B": "bottom-left"}``."""
    homes: dict[str, str] = {}
    if isinstance(value, Mapping):
        for colour, corner in value.items():
            homes[str(colour).upper()] = str(corner).lower().replace(" ", "-")
    elif isinstance(value, str):
        for colour, row, side in _HOME.findall(value):
            homes.setdefault(colour.upper(), f"{row.lower()}-{side.lower()}")
    else:
        raise LabelError(f"{where}: 'home' must say where each colour's home board lies")
    for colour, corner in homes.items():
        if colour not in ("A", "B") or corner not in _CORNERS:
            raise LabelError(f"{where}: 'home' names {colour!r} at {corner!r}; colours are A and B, corners {_CORNERS}")
    if not homes:
        raise LabelError(f"{where}: 'home' does not say where either colour's home board lies (as 'A home top-left')")
    return homes


def _both_homes(homes: Mapping[str, str], where: str) -> dict[str, str]:
    """Both colours' home corners, one told by the other's where only one is given."""
    # One colour's home tells the other's: the two home boards face each other on one side.
    facing = {
        "bottom-right": "top-right",
        "top-right": "bottom-right",
        "top-left": "bottom-left",
        "bottom-left": "top-left",
    }
    known = dict(homes)
    for colour, other in (("A", "B"), ("B", "A")):
        if colour in known and other not in known:
            known[other] = facing[known[colour]]
    if known["A"] != facing[known["B"]]:
        raise LabelError(
            f"{where}: 'home' puts A's home at {known['A']} and B's at {known['B']}: they must face each other"
        )
    return known


def _stack(entry: object, player1: str, where: str) -> int | None:
    if entry is None:
        return None
    if not isinstance(entry, str):
        raise LabelError(f"{where}: {entry!r} is not 'A<n>', 'B<n>', '' or null")
    text = entry.strip().upper()
    if not text:
        return 0
    match = _STACK.match(text)
    if not match or not 1 <= int(match.group(2)) <= 15:
        raise LabelError(f"{where}: {entry!r} is not 'A<n>', 'B<n>' (n from 1 to 15), '' or null")
    count = int(match.group(2))
    return count if match.group(1) == player1 else -count


def _pair(value: object, player1: str, where: str, default: int | None) -> tuple[int | None, int | None]:
    """A ``{"A": n, "B": n}`` pair as ``(player 1, player 2)``."""
    if value is None:
        return (default, default)
    if not isinstance(value, Mapping):
        raise LabelError(f"{where}: must be {{'A': n, 'B': n}}")
    other = "B" if player1 == "A" else "A"
    out: list[int | None] = []
    for colour in (player1, other):
        n = value.get(colour, default)
        if n is not None and (not isinstance(n, int) or not 0 <= n <= 15):
            raise LabelError(f"{where}: {colour} must be 0 to 15 or null, not {n!r}")
        out.append(n)
    return out[0], out[1]


def _cube(value: object, player1: str, where: str) -> tuple[int, int | None] | None:
    if value is None:
        return None
    if not isinstance(value, Mapping) or "value" not in value:
        raise LabelError(f"{where}: cube must be null or {{'value': n, 'where': 'centre'|'A'|'B'}}")
    cube_value = int(value["value"])
    side = str(value.get("where", "centre")).strip().upper()
    owner = None if side in ("CENTRE", "CENTER", "") else (1 if side == player1 else 2)
    return cube_value, owner


def load_labels(path: str | Path) -> list[LabelledFrame]:
    """The frames of a label file (``{"frames": [...]}``), files relative to its folder.

    :raises LabelError: the file cannot be read, or a frame is malformed (named with its
        index and file).
    """
    path = Path(path)
    try:
        if not path.exists():
            raise LabelError(f"{path}: no such file")
        if not path.is_file():
            raise LabelError(f"{path} is {'a folder' if path.is_dir() else 'not a regular file'}, not labels")
        if path.stat().st_size > LARGEST:
            raise LabelError(f"{path} is over {LARGEST // 1_000_000} MB: not labels")
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise LabelError(f"cannot read {path}: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise LabelError(f"{path} is not JSON: {exc}") from None
    frames = data.get("frames") if isinstance(data, Mapping) else None
    if not isinstance(frames, list):
        raise LabelError(f'{path}: no "frames" list')
    out = []
    for index, frame in enumerate(frames):
        if not isinstance(frame, Mapping):
            raise LabelError(f"{path}, frame {index + 1}: not an object")
        out.append(LabelledFrame.from_json(frame, f"{path}, frame {index + 1}"))
    return out
