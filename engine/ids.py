# SPDX-License-Identifier: MIT
"""GNU Backgammon's Match ID and GNUbgID, and eXtreme Gammon's XGID, read and written as gnubg does.

These are field codecs: they turn text into typed fields and back and check every field, but
they leave the meaning of a match to :class:`engine.match.MatchState`, which builds on them.

**Match ID.** A 66-bit key packed least significant bit first (like the Position ID), written as
12 characters of base64. In order: log2 of the cube (4 bits), cube owner (2: 0, 1, or 3 for a
centred cube), dice owner (1, gnubg's ``fMove``: the player whose roll it is), Crawford game (1),
game state (3), turn (1, gnubg's ``fTurn``: the player who must act now), double offered (1),
resignation offered (2: 0, or 1-3 points per cube), the two dice (3 bits each, 0 when not
rolled), match length (15, 0 for money) and the two scores (15 each). gnubg 1.07 and its 1.1
Python bindings add a 67th bit, set when the Jacoby rule is *off* (always so in match play), and
write the higher die first.

>>> fields = decode_match_id("QYkqASAAIAAA")
>>> fields.length, fields.score, fields.cube, fields.cube_owner, fields.turn, fields.dice
(9, (2, 4), 2, 0, 1, (5, 2))
>>> encode_match_id(fields)
'QYkqASAAIAAA'

**GNUbgID** is ``PositionID:MatchID``; the position is seen from the dice owner.

**XGID.** ``XGID=<position>:<cube>:<owner>:<turn>:<dice>:<score>:<score>:<rules>:<length>:<max>``.
The 26 position characters are the top player's bar, the points 1-24 numbered for the bottom
player, then the bottom player's bar; ``A``-``P`` count the bottom player's checkers, ``a``-``p``
the top player's. gnubg reads the bottom player as its player 1 and the top player as player 0
(``set.c``, ``SetXGID``).

>>> start = decode_xgid("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10")
>>> start.board[6], start.board[1], start.turn, start.dice
(5, -2, 1, '00')
>>> encode_xgid(start)
'XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10'
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass
from enum import IntEnum
from typing import Final

from engine.errors import InvalidIdError, InvalidPositionError, quoted
from engine.position import CHECKERS, Position

_BASE64: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")

#: Characters in a Match ID.
MATCH_ID_LENGTH: Final = 12
#: Characters in a Position ID.
POSITION_ID_LENGTH: Final = 14
#: The largest cube the Match ID can hold (four bits of log2).
MAX_CUBE_IN_ID: Final = 1 << 15
#: The largest match length or score the Match ID can hold (15 bits).
MAX_SCORE_IN_ID: Final = (1 << 15) - 1

# (field, first bit, width) in the order gnubg packs them (matchid.c, MatchID()).
_LAYOUT: Final = (
    ("cube_log", 0, 4),
    ("cube_owner", 4, 2),
    ("dice_owner", 6, 1),
    ("crawford", 7, 1),
    ("game_state", 8, 3),
    ("turn", 11, 1),
    ("doubled", 12, 1),
    ("resigned", 13, 2),
    ("die1", 15, 3),
    ("die2", 18, 3),
    ("length", 21, 15),
    ("score0", 36, 15),
    ("score1", 51, 15),
    ("no_jacoby", 66, 1),
)
_KEY_BITS: Final = 67
_CENTRED_BITS: Final = 3


class GameState(IntEnum):
    """gnubg's ``gamestate``: where the current game stands."""

    #: No game yet; the next thing is the opening roll.
    NONE = 0
    #: A game is being played.
    PLAYING = 1
    #: The game was played to the end (the last checker borne off).
    OVER = 2
    #: The game ended by an accepted resignation.
    RESIGNED = 3
    #: The game ended by a dropped double.
    DROPPED = 4


def _fail(what: str, text: str, why: str) -> InvalidIdError:
    return InvalidIdError(f"{what} {quoted(text)}: {why}")


def _check_base64(text: str, what: str, length: int) -> None:
    """Raise naming the first character that cannot be in an ID of ``length`` base64 characters."""
    for i, char in enumerate(text):
        if char not in _BASE64:
            raise _fail(what, text, f"character {i + 1} ({char!r}) is not a base64 letter, digit, '+' or '/'")
    if len(text) != length:
        raise _fail(what, text, f"expected {length} characters, got {len(text)}")


def _is_power_of_two(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


@dataclass(frozen=True, slots=True)
class MatchIdFields:
    """The fields of a gnubg Match ID, with gnubg's meanings and player numbers (0 and 1).

    :param cube: the cube value, a power of two up to :data:`MAX_CUBE_IN_ID`.
    :param cube_owner: the player who owns the cube, or ``None`` when it is centred.
    :param dice_owner: gnubg's ``fMove``: the player whose turn it is (the side the position is
        seen from); during a double it is the doubler.
    :param crawford: this game is the Crawford game.
    :param game_state: where the game stands (:class:`GameState`).
    :param turn: gnubg's ``fTurn``: the player who must act now (the one who answers a double or
        a resignation).
    :param doubled: a double (or a beaver) is waiting for an answer.
    :param resigned: the points per cube of a resignation on offer (or accepted), 0 for none.
    :param dice: the dice, ``(0, 0)`` when not rolled.
    :param length: the match length, 0 for money play.
    :param score: points won so far, ``(player 0, player 1)``.
    :param jacoby: the Jacoby rule is on (stored inverted in bit 66; IDs from older gnubg versions
        lack the bit and so read as Jacoby on).
    :raises InvalidIdError: a field is out of range or the fields contradict each other.
    """

    cube: int = 1
    cube_owner: int | None = None
    dice_owner: int = 0
    crawford: bool = False
    game_state: GameState = GameState.PLAYING
    turn: int = 0
    doubled: bool = False
    resigned: int = 0
    dice: tuple[int, int] = (0, 0)
    length: int = 0
    score: tuple[int, int] = (0, 0)
    jacoby: bool = False

    def __post_init__(self) -> None:
        problem = self._problem()
        if problem:
            raise InvalidIdError(f"Match ID fields: {problem}")

    def _problem(self) -> str | None:
        if not _is_power_of_two(self.cube) or self.cube > MAX_CUBE_IN_ID:
            return f"the cube must be a power of two from 1 to {MAX_CUBE_IN_ID}, not {self.cube!r}"
        if self.cube_owner not in (None, 0, 1):
            return f"the cube owner is player 0, player 1 or None (centred), not {self.cube_owner!r}"
        if self.dice_owner not in (0, 1):
            return f"the dice owner is player 0 or 1, not {self.dice_owner!r}"
        if self.turn not in (0, 1):
            return f"the turn is player 0 or 1, not {self.turn!r}"
        if self.resigned not in (0, 1, 2, 3):
            return f"a resignation is worth 1, 2 or 3 points per cube (0 for none), not {self.resigned!r}"
        if len(self.dice) != 2 or any(not 0 <= d <= 6 for d in self.dice):
            return f"each die shows 1 to 6 (0 when not rolled), not {self.dice!r}"
        if (self.dice[0] == 0) != (self.dice[1] == 0):
            return f"either both dice are rolled or neither, not {self.dice!r}"
        if not 0 <= self.length <= MAX_SCORE_IN_ID:
            return f"the match length is 0 (money) to {MAX_SCORE_IN_ID}, not {self.length!r}"
        if len(self.score) != 2 or any(not 0 <= s <= MAX_SCORE_IN_ID for s in self.score):
            return f"scores are 0 to {MAX_SCORE_IN_ID}, not {self.score!r}"
        if self.crawford and self.length == 0:
            return "there is no Crawford game in money play"
        finished = self.game_state in (GameState.OVER, GameState.RESIGNED, GameState.DROPPED)
        # gnubg writes the final score of a match even when it passes the length, so only a
        # game still to be played must have both scores below it.
        if self.length and not finished and max(self.score) >= self.length:
            return f"score {self.score[0]}-{self.score[1]} has already won a {self.length}-point match"
        return None


def encode_match_id(fields: MatchIdFields) -> str:
    """Write ``fields`` as a 12-character Match ID, exactly as gnubg's ``MatchID()`` does.

    Like gnubg 1.07, the higher die is written first, so the rolled order is not kept.

    >>> encode_match_id(MatchIdFields(dice_owner=1, turn=1, dice=(5, 2), length=7, score=(3, 4), cube=2,
    ...                               cube_owner=0))
    'QYnqADAAIAAE'
    """
    high, low = sorted(fields.dice, reverse=True)
    values = {
        "cube_log": fields.cube.bit_length() - 1,
        "cube_owner": _CENTRED_BITS if fields.cube_owner is None else fields.cube_owner,
        "dice_owner": fields.dice_owner,
        "crawford": int(fields.crawford),
        "game_state": int(fields.game_state),
        "turn": fields.turn,
        "doubled": int(fields.doubled),
        "resigned": fields.resigned,
        "die1": high,
        "die2": low,
        "length": fields.length,
        "score0": fields.score[0],
        "score1": fields.score[1],
        "no_jacoby": int(not fields.jacoby),
    }
    key = 0
    for name, first, _width in _LAYOUT:
        key |= values[name] << first
    return base64.b64encode(key.to_bytes(9, "little")).decode("ascii")


def decode_match_id(match_id: str) -> MatchIdFields:
    """Read a 12-character Match ID.

    Accepts what gnubg accepts, except bits it never writes: a cube owner of ``2``, dice of 7,
    one die rolled without the other, a game state above 4, and bits past the 67th.

    :raises InvalidIdError: naming the character or field that is wrong.
    """
    text = match_id.strip()
    _check_base64(text, "Match ID", MATCH_ID_LENGTH)
    key = int.from_bytes(base64.b64decode(text), "little")
    raw = {name: key >> first & ((1 << width) - 1) for name, first, width in _LAYOUT}
    if key >> _KEY_BITS:
        raise _fail("Match ID", text, "bits are set after the last field (the last character is wrong)")
    if raw["cube_owner"] == 2:
        raise _fail("Match ID", text, "cube owner bits are 2; expected 0, 1 or 3 (centred)")
    for name, label in (("die1", "die 1"), ("die2", "die 2")):
        if raw[name] > 6:
            raise _fail("Match ID", text, f"{label} is {raw[name]}")
    if raw["game_state"] > max(GameState):
        raise _fail("Match ID", text, f"game state {raw['game_state']} is not one gnubg knows (0-4)")
    try:
        return MatchIdFields(
            cube=1 << raw["cube_log"],
            cube_owner=None if raw["cube_owner"] == _CENTRED_BITS else raw["cube_owner"],
            dice_owner=raw["dice_owner"],
            crawford=bool(raw["crawford"]),
            game_state=GameState(raw["game_state"]),
            turn=raw["turn"],
            doubled=bool(raw["doubled"]),
            resigned=raw["resigned"],
            dice=(raw["die1"], raw["die2"]),
            length=raw["length"],
            score=(raw["score0"], raw["score1"]),
            jacoby=not raw["no_jacoby"],
        )
    except InvalidIdError as exc:
        raise _fail("Match ID", text, str(exc).removeprefix("Match ID fields: ")) from None


# -- GNUbgID -------------------------------------------------------------------------------

_GNUBG_PREFIX: Final = re.compile(r"^\s*gnu\s*bg\s*id\s*[:=]?\s*", re.IGNORECASE)


def encode_gnubg_id(position: Position, fields: MatchIdFields) -> str:
    """``PositionID:MatchID``, ``position`` seen from the dice owner.

    >>> encode_gnubg_id(Position.STARTING, MatchIdFields(dice=(3, 1)))
    '4HPwATDgc/ABMA:MIEFAAAAAAAE'
    """
    return f"{position.position_id()}:{encode_match_id(fields)}"


def decode_gnubg_id(text: str) -> tuple[Position, MatchIdFields]:
    """Read ``PositionID:MatchID`` (a leading ``GNUbgID:`` label is allowed).

    :returns: the position, seen from the dice owner, and the Match ID fields.
    :raises InvalidIdError: the text is not two IDs joined by a colon, or either ID is wrong.
    """
    body = _GNUBG_PREFIX.sub("", text.strip())
    parts = body.split(":")
    if len(parts) != 2:
        raise InvalidIdError(f"GNUbgID {quoted(text)}: expected 'PositionID:MatchID'")
    position_id, match_id = (part.strip() for part in parts)
    _check_base64(position_id, "Position ID", POSITION_ID_LENGTH)
    return Position.from_id(position_id), decode_match_id(match_id)


# -- XGID ----------------------------------------------------------------------------------

#: The dice field's words: not rolled, a double offered, a beaver offered, a raccoon offered.
XGID_NOT_ROLLED: Final = "00"
XGID_DOUBLED: Final = "D"
XGID_BEAVERED: Final = "B"
XGID_RACCOONED: Final = "R"
#: The max-cube exponent XG writes by default (a 1024 cube).
XGID_DEFAULT_MAX_CUBE: Final = 10

_XGID_PREFIX: Final = re.compile(r"^\s*xgid\s*=\s*", re.IGNORECASE)
_INT: Final = re.compile(r"^-?\d+$")
_XGID_NAMES: Final = (
    "cube",
    "cube owner",
    "turn",
    "dice",
    "bottom player's score",
    "top player's score",
    "rules",
    "match length",
    "max cube",
)


@dataclass(frozen=True, slots=True)
class XgidFields:
    """The fields of an XGID, in XG's own terms (bottom and top player).

    :param board: 26 signed checker counts: index 0 is the top player's bar, 1-24 the points
        numbered for the bottom player, 25 the bottom player's bar; positive for the bottom
        player, negative for the top player.
    :param cube: the cube value (with a double offered, the value before the double).
    :param cube_owner: ``1`` the bottom player, ``-1`` the top player, ``0`` centred.
    :param turn: ``1`` bottom, ``-1`` top: the player on roll, or with ``D`` the doubler.
    :param dice: ``00`` not rolled, ``D`` doubled, ``B`` beavered, ``R`` raccooned, or two digits
        1-6 in rolled order.
    :param score_bottom: the bottom player's points.
    :param score_top: the top player's points.
    :param rules: in a match 1 for the Crawford game, else 0; in money play Jacoby (1) plus
        beavers (2).
    :param length: match length, 0 for money.
    :param max_cube_exponent: the cube limit as a power of two (XG writes 10).
    :raises InvalidIdError: a field is out of range.
    """

    board: tuple[int, ...]
    cube: int = 1
    cube_owner: int = 0
    turn: int = 1
    dice: str = XGID_NOT_ROLLED
    score_bottom: int = 0
    score_top: int = 0
    rules: int = 0
    length: int = 0
    max_cube_exponent: int = XGID_DEFAULT_MAX_CUBE

    def __post_init__(self) -> None:
        problem = self._problem()
        if problem:
            raise InvalidIdError(f"XGID fields: {problem}")

    def _problem(self) -> str | None:
        if len(self.board) != 26:
            return f"the board has 26 places (two bars and 24 points), not {len(self.board)}"
        if self.board[0] > 0:
            return "the bottom player's checkers cannot be on the top player's bar"
        if self.board[25] < 0:
            return "the top player's checkers cannot be on the bottom player's bar"
        bottom = sum(n for n in self.board if n > 0)
        top = -sum(n for n in self.board if n < 0)
        for who, total in (("bottom", bottom), ("top", top)):
            if total > CHECKERS:
                return f"the {who} player has {total} checkers on the board, more than {CHECKERS}"
        if not _is_power_of_two(self.cube) or self.cube > MAX_CUBE_IN_ID:
            return f"the cube must be a power of two from 1 to {MAX_CUBE_IN_ID}, not {self.cube!r}"
        if self.cube_owner not in (-1, 0, 1):
            return f"the cube owner is 1 (bottom), -1 (top) or 0 (centred), not {self.cube_owner!r}"
        if self.turn not in (-1, 1):
            return f"the turn is 1 (bottom) or -1 (top), not {self.turn!r}"
        if self.dice not in (XGID_NOT_ROLLED, XGID_DOUBLED, XGID_BEAVERED, XGID_RACCOONED) and not (
            len(self.dice) == 2 and all(c in "123456" for c in self.dice)
        ):
            return f"the dice are 00, D, B, R or two dice 1-6, not {self.dice!r}"
        if self.length < 0 or self.score_bottom < 0 or self.score_top < 0:
            return "match length and scores cannot be negative"
        if self.length and self.rules not in (0, 1):
            return f"the rules field of a match is 1 (Crawford game) or 0, not {self.rules!r}"
        if not self.length and self.rules not in (0, 1, 2, 3):
            return f"the rules field in money play is 0-3 (1 Jacoby, 2 beavers), not {self.rules!r}"
        if not 0 <= self.max_cube_exponent <= MAX_CUBE_IN_ID.bit_length() - 1:
            return f"the max cube exponent is 0 to {MAX_CUBE_IN_ID.bit_length() - 1}, not {self.max_cube_exponent!r}"
        return None

    def bottom_and_top(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """Each player's 25 counts in his own numbering (index 24 = bar): ``(bottom, top)``."""
        b = self.board
        bottom = (*(max(b[i], 0) for i in range(1, 25)), b[25])
        # The top player's point p is the bottom player's point 25 - p.
        top = (*(max(-b[25 - p], 0) for p in range(1, 25)), -b[0])
        return bottom, top

    @staticmethod
    def board_from(bottom: tuple[int, ...], top: tuple[int, ...]) -> tuple[int, ...]:
        """The 26-place board from each player's 25 counts in his own numbering."""
        board = [0] * 26
        board[0] = -top[24]
        board[25] = bottom[24]
        for point in range(1, 25):
            mine, theirs = bottom[point - 1], top[24 - point]
            if mine and theirs:
                raise InvalidPositionError(f"both players have checkers on the bottom player's point {point}")
            board[point] = mine - theirs
        return tuple(board)


def _xgid_char(n: int) -> str:
    if n > 0:
        return chr(ord("A") + n - 1)
    if n < 0:
        return chr(ord("a") - n - 1)
    return "-"


def encode_xgid(fields: XgidFields) -> str:
    """Write ``fields`` as ``XGID=...`` text."""
    position = "".join(_xgid_char(n) for n in fields.board)
    numbers = (
        fields.cube.bit_length() - 1,
        fields.cube_owner,
        fields.turn,
        fields.dice,
        fields.score_bottom,
        fields.score_top,
        fields.rules,
        fields.length,
        fields.max_cube_exponent,
    )
    return "XGID=" + ":".join([position, *map(str, numbers)])


def _xgid_count(text: str, i: int, char: str) -> int:
    if char == "-":
        return 0
    if "A" <= char <= "P":
        if i == 0:
            raise _fail("XGID", text, f"position character 1 ({char!r}) puts the bottom player on the top bar")
        return ord(char) - ord("A") + 1
    if "a" <= char <= "p":
        if i == 25:
            raise _fail("XGID", text, f"position character 26 ({char!r}) puts the top player on the bottom bar")
        return -(ord(char) - ord("a") + 1)
    raise _fail("XGID", text, f"position character {i + 1} ({char!r}) is not '-', A-P or a-p")


def decode_xgid(xgid: str) -> XgidFields:
    """Read ``XGID=...`` (the ``XGID=`` label is optional; fields after the tenth are ignored).

    :raises InvalidIdError: naming the field or position character that is wrong.
    """
    text = xgid.strip()
    parts = _XGID_PREFIX.sub("", text).split(":")
    if len(parts) < 10:
        raise _fail("XGID", text, f"expected 10 fields separated by ':', got {len(parts)}")
    position, rest = parts[0], parts[1:10]
    if len(position) != 26:
        raise _fail("XGID", text, f"the position has {len(position)} characters, expected 26")
    board = tuple(_xgid_count(text, i, char) for i, char in enumerate(position))
    numbers: list[int] = []
    for k, (name, value) in enumerate(zip(_XGID_NAMES, rest, strict=True)):
        if k == 3:
            continue
        if not _INT.match(value):
            raise _fail("XGID", text, f"the {name} field ({value!r}) is not a whole number")
        numbers.append(int(value))
    cube_log, owner, turn, score_bottom, score_top, rules, length, max_cube = numbers
    if not 0 <= cube_log <= MAX_CUBE_IN_ID.bit_length() - 1:
        raise _fail("XGID", text, f"the cube field ({cube_log}) is not a power of two from 0 to 15")
    dice = rest[3].upper() if rest[3] in ("d", "b", "r") else rest[3]
    try:
        return XgidFields(
            board=board,
            cube=1 << cube_log,
            cube_owner=owner,
            turn=turn,
            dice=dice,
            score_bottom=score_bottom,
            score_top=score_top,
            rules=rules,
            length=length,
            max_cube_exponent=max_cube,
        )
    except InvalidIdError as exc:
        raise _fail("XGID", text, str(exc).removeprefix("XGID fields: ")) from None
