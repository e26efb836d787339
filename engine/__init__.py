# SPDX-License-Identifier: MIT
"""The bgboard rules engine: positions, dice, legal plays, notation, IDs, match state, the judge.

Pure standard-library Python with no clock and no I/O beyond text formats, so it runs
unchanged on a Raspberry Pi. The one exception, :mod:`engine.hints` (GNU Backgammon run as a
child process for hints), is imported by name and not from here.

>>> from engine import Position, Dice, legal_plays
>>> len(legal_plays(Position.STARTING, Dice(3, 1)))
16
"""

from engine.cube import Cube, cube_from_track, track_reading
from engine.dice import ALL_21, ALL_36, Dice
from engine.errors import (
    BackgammonError,
    IllegalActionError,
    IllegalPlayError,
    InvalidIdError,
    InvalidNotationError,
    InvalidPositionError,
    NoSuchPlayError,
)
from engine.ids import decode_gnubg_id, decode_match_id, decode_xgid, encode_gnubg_id, encode_match_id, encode_xgid
from engine.judge import Judgement, RawBoard, judge, partial_positions, remaining_dice
from engine.match import (
    AcceptResign,
    Action,
    Beaver,
    Double,
    Drop,
    GameEnd,
    GameResult,
    MatchOptions,
    MatchState,
    Move,
    OpeningRoll,
    Phase,
    RejectResign,
    Resign,
    Roll,
    Take,
)
from engine.movegen import LegalPlays, legal_plays
from engine.play import NO_PLAY, Play, Step
from engine.position import BAR, CHECKERS, OFF, Position
from engine.text import board_lines

__all__ = [
    "ALL_21",
    "ALL_36",
    "BAR",
    "CHECKERS",
    "NO_PLAY",
    "OFF",
    "AcceptResign",
    "Action",
    "BackgammonError",
    "Beaver",
    "Cube",
    "Dice",
    "Double",
    "Drop",
    "GameEnd",
    "GameResult",
    "IllegalActionError",
    "IllegalPlayError",
    "InvalidIdError",
    "InvalidNotationError",
    "InvalidPositionError",
    "Judgement",
    "LegalPlays",
    "MatchOptions",
    "MatchState",
    "Move",
    "NoSuchPlayError",
    "OpeningRoll",
    "Phase",
    "Play",
    "Position",
    "RawBoard",
    "RejectResign",
    "Resign",
    "Roll",
    "Step",
    "Take",
    "board_lines",
    "cube_from_track",
    "decode_gnubg_id",
    "decode_match_id",
    "decode_xgid",
    "encode_gnubg_id",
    "encode_match_id",
    "encode_xgid",
    "judge",
    "legal_plays",
    "partial_positions",
    "remaining_dice",
    "track_reading",
]
