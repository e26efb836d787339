# SPDX-License-Identifier: MIT
"""Jellyfish ``.mat`` match files: a tolerant reader for every dialect met in the wild, and a writer in gnubg's.

The reader (:func:`read_mat`, :func:`read_mat_file`) takes what GNU Backgammon, Backgammon
Galaxy and Backgammon Studio write: byte-order marks and CRLF line ends; ``25``/``bar`` and
``0``/``off``; hit marks or none (hits are then inferred); ``(2)`` repeats and moves joined by
one checker; ``Cannot Move`` or bare dice for a dance; ``????`` for a move the transcript lost;
money sessions that Galaxy heads ``16 point match``; ``Losses N point`` before a resignation;
and left-column cells so long they run into the right column. It replays each game through
the engine while it reads, since only the position tells which legal play a written one
stands for (:meth:`~engine.movegen.LegalPlays.resolve`, as for the referee and the hints), and
gives a :class:`MatFile`: the :class:`~engine.record.MatchRecord` as far as it goes, with what
went wrong in each game (line number and text included) kept apart, so one bad game never
hides the others.

The writer (:func:`write_mat`) lays a record out as gnubg's ``export match mat`` does:
33-column rows, one step per die with ``25`` and ``0``, ``*`` on every hit.

>>> text = '''; [Site "Example"]
...
... 3 point match
...
...  Game 1
...  Ann : 0                        Bob : 0
...   1) 31: 8/5 6/5                 64: 24/18 13/9
...   2)  Doubles => 2                Drops
...       Wins 1 point
... '''
>>> mat = read_mat(text)
>>> mat.record.players, mat.record.length, mat.record.final_score()
(('Ann', 'Bob'), 3, (1, 0))
>>> [type(a).__name__ for a in mat.record.games[0].actions]
['OpeningRoll', 'Move', 'Roll', 'Move', 'Double', 'Drop']
>>> write_mat(mat.record).splitlines()[6]
'  1) 31: 8/5 6/5                 64: 24/18 13/9 '
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from os import PathLike
from typing import Final, NamedTuple, NoReturn

from engine.dice import Dice
from engine.errors import (
    BackgammonError,
    IllegalActionError,
    IllegalPlayError,
    InvalidNotationError,
    NoSuchPlayError,
    quoted,
)
from engine.files import MAX_MATCH_FILE, read_limited
from engine.match import AcceptResign, Action, Beaver, Double, Drop, GameEnd, GameResult, MatchOptions

# isort: split
from engine.match import MatchState, Move, OpeningRoll, Phase, Resign, Roll, Take
from engine.movegen import LegalPlays, legal_plays
from engine.play import Play, Step, parse_steps
from engine.position import BAR, OFF, Position
from engine.record import GameRecord, MatchRecord

#: The length Backgammon Galaxy writes for a money session.
GALAXY_MONEY_LENGTH: Final = 16

#: Where gnubg starts the right-hand cell of a row (after ``%3d) `` and 27 + 1 columns).
_RIGHT_COLUMN: Final = 33
_LEFT_WIDTH: Final = 27

_TAG = re.compile(r'^;\s*\[\s*(?P<key>[^"\]]*?)\s*"(?P<value>.*)"\s*\]\s*$')
_LENGTH = re.compile(r"^\s*(?P<length>\d+)\s*-?\s*points?\s+match\b.*$", re.IGNORECASE)
_GAME = re.compile(r"^\s*Game\s+(?P<number>\d+)\s*$", re.IGNORECASE)
_SCORE = re.compile(r"^\s?(?P<n0>.*?)\s*:\s*(?P<s0>\d+)\s+(?P<n1>.*?)\s*:\s*(?P<s1>\d+)\s*$")
_ROW = re.compile(r"^\s*(?P<row>\d+)\)")
_TOKEN = re.compile(
    r"""(?<!\S)(?:
      (?P<dice>[1-6][1-6]):
    | Doubles\s*=>\s*(?P<double>\d+)
    | Beavers\s*=>\s*(?P<beaver>\d+)
    | (?P<take>Takes|Accepts)(?!\S)
    | (?P<drop>Drops|Rejects|Passes)(?!\S)
    | Wins\s+(?P<wins>\d+)\s+points?(?P<match>\s+and\s+the\s+match)?(?!\S)
    | Loses\s+(?P<loses>\d+)\s+points?(?!\S)
    | Losses\s+(?P<losses>\d+)\s+points?(?!\S)
    | (?P<row>\d+)\)
    )""",
    re.VERBOSE | re.IGNORECASE,
)
_LOST = "????"


# -- what the reader gives -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MatProblem:
    """Something in a file that could not be read, or does not add up.

    :param line: the 1-based line number (0 when the problem has no line, such as an empty file).
    :param text: the line as written.
    :param message: what is wrong, in words.
    :param game: the game number (1 for the first game), ``None`` outside any game.
    """

    line: int
    text: str
    message: str
    game: int | None = None

    def describe(self, source: str = "") -> str:
        """``source:line: message: 'text'``, or as much of it as is known."""
        where = f"{source}:{self.line}" if source else f"line {self.line}"
        if not self.line:
            where = source or "file"
        game = f"game {self.game}: " if self.game else ""
        text = f": {quoted(self.text.strip())}" if self.text.strip() else ""
        return f"{where}: {game}{self.message}{text}"

    def __str__(self) -> str:
        return self.describe()


@dataclass(frozen=True, slots=True)
class MatCell:
    """One action as written: a roll with its play, a cube action, a ``Wins`` or a ``Losses``.

    :param kind: ``"roll"``, ``"double"``, ``"beaver"``, ``"take"``, ``"drop"``, ``"wins"`` or
        ``"losses"``.
    :param column: 0 for the left-hand column (player 0), 1 for the right; read from where the
        cell starts, so a long left cell that runs on to the right can be misplaced (the reader
        follows the turn order instead, except for ``Wins`` and ``Losses``).
    :param line: the 1-based line number.
    :param move: the row number written at the start of the line (the last one seen for a line
        without one).
    :param text: the cell as written, for example ``"31: 8/5 6/5"``.
    :param dice: the dice of a roll.
    :param play: the play text of a roll (after the colon), for example ``"8/5 6/5"``.
    :param value: the cube value of a double or beaver, the points of a ``Wins`` or ``Losses``.
    :param match: a ``Wins`` line ending ``and the match``.
    """

    kind: str
    column: int
    line: int
    move: int
    text: str
    dice: Dice | None = None
    play: str = ""
    value: int = 0
    match: bool = False


@dataclass(frozen=True, slots=True)
class IllegalPlay:
    """A play (or a roll) the rules do not allow where it stands.

    :param move: the row number written in the file.
    :param player: 0 or 1.
    :param play: the cell as written (``"31: 8/5 6/4"``).
    :param reason: why it is illegal.
    :param line: the 1-based line number.
    """

    move: int
    player: int
    play: str
    reason: str
    line: int


@dataclass(frozen=True, slots=True)
class MatGame:
    """One game of a file as read and replayed.

    :param number: the game number as written after ``Game``.
    :param line: the line of the ``Game`` heading.
    :param score: the score line's points before the game, ``(player 0, player 1)``.
    :param names: the names on the score line.
    :param cells: the actions as written, in order.
    :param record: the game as far as it replays legally.
    :param state: the state after the last action replayed.
    :param wins: the game's ``Wins`` cell, if any.
    :param winner: who the file says won: the board's winner for a game played out or dropped,
        else the ``Losses`` or ``Wins`` column; ``None`` without a ``Wins``.
    :param illegal: the first illegal play, which stops the replay.
    :param lost: the ``????`` cell of a move the transcript lost, which stops the replay.
    :param problems: syntax errors, cube errors and anything else that stops or spoils the game.
    :param stopped: why the replay stopped before the end of the game, if it did.
    :param plays: rolls written (each with its play, a dance or ``????``).
    :param cube_actions: doubles, takes, drops and beavers written.
    :param roll_resign: the game ended with a roll and no play: the loser rolled, then resigned.
    :param forfeit: the game ended in a way the engine cannot replay (a player resigning or
        leaving out of turn, as Galaxy's ``Losses`` lines show); the record's result is the
        file's ``Wins``.
    """

    number: int
    line: int
    score: tuple[int, int]
    names: tuple[str, str]
    cells: tuple[MatCell, ...]
    record: GameRecord
    state: MatchState
    wins: MatCell | None = None
    winner: int | None = None
    illegal: IllegalPlay | None = None
    lost: MatCell | None = None
    problems: tuple[MatProblem, ...] = ()
    stopped: str | None = None
    plays: int = 0
    cube_actions: int = 0
    roll_resign: bool = False
    forfeit: bool = False


@dataclass(frozen=True, slots=True)
class MatFile:
    """A ``.mat`` file as read: the record, and each game with what was wrong in it.

    :param source: the file name (or ``"<string>"``), used in messages.
    :param record: the match as far as it replays legally; unfinished games have no result.
    :param games: each game as read.
    :param problems: what is wrong outside the games (header, stray lines, no games at all).
    :param dialect: ``"gnubg"``, ``"Backgammon Galaxy"``, ``"Backgammon Studio"`` or ``"unknown"``.
    :param written_length: the length on the ``N point match`` line (16 for a Galaxy money
        session), ``None`` without one.
    """

    source: str
    record: MatchRecord
    games: tuple[MatGame, ...] = ()
    problems: tuple[MatProblem, ...] = ()
    dialect: str = "unknown"
    written_length: int | None = None

    def all_problems(self) -> Iterator[MatProblem]:
        """The file's problems, then each game's."""
        yield from self.problems
        for game in self.games:
            yield from game.problems


# -- reading -------------------------------------------------------------------------------


def decode_text(data: bytes) -> str:
    """A match file's bytes as text: UTF-8 (with or without a byte-order mark), UTF-16 with its
    byte-order mark, else Latin-1.

    :raises InvalidNotationError: the bytes are not text (a NUL byte, or broken UTF-16), naming
        the byte offset.
    """
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError as exc:
            raise InvalidNotationError(
                f"not UTF-16 text after its byte-order mark (at byte offset {exc.start})"
            ) from None
    nul = data.find(b"\x00")
    if nul >= 0:
        raise InvalidNotationError(f"not a text file: binary data at byte offset {nul}")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def read_mat_file(path: str | PathLike[str]) -> MatFile:
    """Read a ``.mat`` file from disk (see :func:`decode_text` for the encodings read).

    A file that is not text is read as one problem, not a problem per line.

    :raises OSError: the file cannot be read, is no regular file, or is far too large.
    """
    data = read_limited(path, MAX_MATCH_FILE, "a match file")
    try:
        text = decode_text(data)
    except InvalidNotationError as exc:
        empty = MatchRecord(("", ""), 0, _options({}, False))
        return MatFile(str(path), empty, problems=(MatProblem(0, "", str(exc)),))
    return read_mat(text, str(path))


class _RawCell(NamedTuple):
    """A cell as found on its line, before the game's columns are known."""

    line: int
    row: int
    text: str
    column: int
    # Whether the cell follows another on its line, counted from the same row number.
    second: bool
    groups: dict[str, str | None]


@dataclass(slots=True)
class _RawGame:
    number: int
    line: int
    score: tuple[int, int] | None = None
    names: tuple[str, str] = ("", "")
    score_text: str = ""
    right_from_score: int | None = None
    cells: list[MatCell] = field(default_factory=list)
    problems: list[MatProblem] = field(default_factory=list)
    # Where the replay must stop: the first line that could not be read.
    broken_at: int | None = None
    raw: list[_RawCell] = field(default_factory=list)
    # The text of each line of moves, for messages.
    lines: dict[int, str] = field(default_factory=dict)


def read_mat(text: str, source: str = "<string>") -> MatFile:
    """Read a match or money session in any ``.mat`` dialect (see the module docstring).

    Never raises for bad content: what cannot be read is a :class:`MatProblem` naming the
    line and its text, and the other games are still read.
    """
    lines = text.lstrip("\ufeff").splitlines()
    tags: dict[str, str] = {}
    comments: list[str] = []
    problems: list[MatProblem] = []
    length: int | None = None
    games: list[_RawGame] = []
    game: _RawGame | None = None
    row = 0
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith(";"):
            tag = _TAG.match(stripped)
            if tag:
                tags.setdefault(tag["key"], tag["value"])
            elif game is None:
                comments.append(stripped[1:].strip())
            continue
        heading = _GAME.match(line)
        if heading:
            game = _RawGame(int(heading["number"]), number)
            games.append(game)
            row = 0
            continue
        if game is None:
            found = _LENGTH.match(line)
            if found and length is None:
                length = int(found["length"])
            else:
                problems.append(MatProblem(number, line, "not part of a match file header"))
            continue
        if game.score is None:
            score = _SCORE.match(line)
            if score:
                game.score = (int(score["s0"]), int(score["s1"]))
                game.names = (score["n0"].strip(), score["n1"].strip())
                game.score_text = line
                game.right_from_score = score.start("n1") if score["n1"] else score.start("s1") - 3
                continue
            game.problems.append(
                MatProblem(number, line, "expected the score line 'name : points  name : points'", game.number)
            )
            game.broken_at = number
            continue
        row = _read_row(game, number, line, row)
    if length is None and not games:
        # Not a match file at all: one problem, not one per line.
        problems = [MatProblem(0, "", "not a .mat match file: no 'N point match' line and no 'Game 1' line")]
    elif length is None:
        problems.append(MatProblem(0, "", "not a .mat match file: no 'N point match' line"))
    elif not games:
        problems.append(MatProblem(0, "", "no games in the file"))
    dialect = _dialect(tags, text)
    money = length == 0 or (length == GALAXY_MONEY_LENGTH and dialect == "Backgammon Galaxy")
    options = _options(tags, money)
    match_length = 0 if money or length is None else length
    if comments:
        tags.setdefault("Comment", "\n".join(comments))
    names = _players(tags, games)
    scores = [g.score or (0, 0) for g in games]
    skeleton = MatchRecord(names, match_length, options, tuple(GameRecord(s, ()) for s in scores))
    read_games: list[MatGame] = []
    for index, raw in enumerate(games):
        _place_columns(raw)
        read_games.append(_replay(raw, skeleton, index, length))
    record = MatchRecord(names, match_length, options, tuple(g.record for g in read_games), tags)
    return MatFile(source, record, tuple(read_games), tuple(problems), dialect, length)


def _dialect(tags: dict[str, str], text: str) -> str:
    site = tags.get("Site", "").lower()
    if "galaxy" in site:
        return "Backgammon Galaxy"
    if "studio" in site:
        return "Backgammon Studio"
    if re.search(r"(?<![\d/])(?:bar|off)\b", text[:20000], re.IGNORECASE) and "Cannot Move" in text:
        return "Backgammon Studio"
    if re.search(r"^ \d+ point match$", text, re.MULTILINE):
        return "gnubg"
    return "unknown"


def _options(tags: dict[str, str], money: bool) -> MatchOptions:
    limit = tags.get("CubeLimit", "")
    max_cube = int(limit) if limit.isdigit() and int(limit) in _CUBES else None
    if money:
        return MatchOptions(crawford=False, jacoby=True, max_cube=max_cube)
    crawford = tags.get("Crawford", "On").strip().lower() not in ("off", "no", "false", "0")
    return MatchOptions(crawford=crawford, max_cube=max_cube)


_CUBES: Final = frozenset(1 << k for k in range(16))


def _players(tags: dict[str, str], games: Sequence[_RawGame]) -> tuple[str, str]:
    for g in games:
        if g.score is not None:
            return g.names
    return (tags.get("Player 1", ""), tags.get("Player 2", ""))


def _read_row(game: _RawGame, number: int, line: str, row: int) -> int:
    """Split one line of a game into cells (kept raw until the columns are known)."""
    game.lines[number] = line
    start = _ROW.match(line)
    if start:
        row = int(start["row"])
    tokens = list(_TOKEN.finditer(line))
    if not tokens:
        game.problems.append(MatProblem(number, line, "not a row of moves", game.number))
        game.broken_at = game.broken_at or number
        return row
    # Columns are counted from the row number's place; a row number in the middle of a line
    # starts a new row there (Galaxy writes a resignation that way).
    origin = start.end() if start else 4
    if start is None and tokens[0]["row"] is None:
        origin = 4
    junk = line[: tokens[0].start()].strip()
    if junk:
        game.problems.append(MatProblem(number, line, f"unreadable text {quoted(junk)}", game.number))
        game.broken_at = game.broken_at or number
        return row
    cells_here = 0
    for k, token in enumerate(tokens):
        end = tokens[k + 1].start() if k + 1 < len(tokens) else len(line)
        rest = line[token.end() : end].strip()
        if token["row"] is not None:
            if rest:
                game.problems.append(MatProblem(number, line, f"unreadable text {quoted(rest)}", game.number))
                game.broken_at = game.broken_at or number
                return row
            if token.start() > 0 and line[: token.start()].strip():
                origin = token.end()
                cells_here = 0
            continue
        groups = token.groupdict()
        if groups["dice"] is None and rest:
            game.problems.append(
                MatProblem(number, line, f"unreadable text {quoted(rest)} after {quoted(token.group(0))}", game.number)
            )
            game.broken_at = game.broken_at or number
            return row
        cell = line[token.start() : end].strip()
        game.raw.append(_RawCell(number, row, cell, token.start() - origin, cells_here > 0, groups))
        cells_here += 1
    return row


def _place_columns(game: _RawGame) -> None:
    """Turn the raw cells into :class:`MatCell` with a column each.

    The right-hand column starts where the second cell of a two-cell row starts at the
    earliest: a left cell too long for its column pushes the right one further out, never
    nearer.
    """
    seconds = [raw.column for raw in game.raw if raw.second]
    if seconds:
        right = min(seconds) - 1
    elif game.right_from_score is not None:
        right = game.right_from_score - 5 - 1
    else:
        right = _RIGHT_COLUMN - 5 - 1
    for line, row, cell, col, _, g in game.raw:
        column = 1 if col >= right else 0
        if g["dice"] is not None:
            dice_text = g["dice"] or ""
            play = cell.split(":", 1)[1].strip()
            made = MatCell("roll", column, line, row, cell, Dice(int(dice_text[0]), int(dice_text[1])), play)
        elif g["double"] is not None:
            made = MatCell("double", column, line, row, cell, value=int(g["double"]))
        elif g["beaver"] is not None:
            made = MatCell("beaver", column, line, row, cell, value=int(g["beaver"]))
        elif g["take"] is not None:
            made = MatCell("take", column, line, row, cell)
        elif g["drop"] is not None:
            made = MatCell("drop", column, line, row, cell)
        elif g["wins"] is not None:
            made = MatCell("wins", column, line, row, cell, value=int(g["wins"]), match=g["match"] is not None)
        else:
            lost = g["losses"] if g["losses"] is not None else g["loses"]
            made = MatCell("losses", column, line, row, cell, value=int(lost or 0))
        game.cells.append(made)


# -- replaying -----------------------------------------------------------------------------


class _ReplayStopError(Exception):
    """The replay of a game cannot go on."""


@dataclass(slots=True)
class _Replay:
    raw: _RawGame
    state: MatchState
    length: int | None = None
    # A run of plays is replayed on (position, player on roll) alone; see _sync.
    pending: tuple[Position, int] | None = None
    actions: list[Action] = field(default_factory=list)
    problems: list[MatProblem] = field(default_factory=list)
    illegal: IllegalPlay | None = None
    lost: MatCell | None = None
    stopped: str | None = None
    plays: int = 0
    cube_actions: int = 0
    wins: MatCell | None = None
    winner: int | None = None
    roll_resign: bool = False
    forfeit: GameResult | None = None

    def problem(self, cell: MatCell, message: str, stop: bool = True) -> None:
        text = _line_text(self.raw, cell.line)
        self.problems.append(MatProblem(cell.line, text, message, self.raw.number))
        if stop:
            self.stopped = message
            raise _ReplayStopError


def _line_text(game: _RawGame, line: int) -> str:
    return game.lines.get(line, "")


def _replay(raw: _RawGame, skeleton: MatchRecord, index: int, length: int | None) -> MatGame:
    try:
        state = skeleton.initial_state(index)
    except BackgammonError as exc:
        # A score past the match length: nothing of the game can be replayed.
        state = MatchState(skeleton.length, options=skeleton.options, game_number=index + 1)
        rep = _Replay(raw, state, length)
        rep.problems.append(MatProblem(raw.line, raw.score_text, f"impossible score: {exc}", raw.number))
        rep.stopped = "impossible score"
        return _finish(rep)
    rep = _Replay(raw, state, length)
    if raw.score is None and raw.broken_at is None:
        rep.problems.append(MatProblem(raw.line, f" Game {raw.number}", "the game has no score line", raw.number))
        rep.stopped = "no score line"
    cells = raw.cells
    try:
        if rep.stopped is None:
            for k, cell in enumerate(cells):
                if raw.broken_at is not None and cell.line >= raw.broken_at:
                    rep.stopped = f"unreadable line {raw.broken_at}"
                    break
                _step(rep, cell, cells[k + 1 :])
            else:
                if raw.broken_at is not None:
                    rep.stopped = f"unreadable line {raw.broken_at}"
    except _ReplayStopError:
        pass
    _flush(rep)
    return _finish(rep)


def _finish(rep: _Replay) -> MatGame:
    """The game as read, once its replay is over (or could not start)."""
    raw = rep.raw
    cells = raw.cells
    if rep.stopped is not None:
        # Keep the file's claim about the result even when the replay could not reach it.
        for cell in cells:
            if cell.kind == "wins" and rep.wins is None:
                rep.wins = cell
                rep.winner = _claimed_winner(rep, cell)
        rep.plays = sum(1 for c in cells if c.kind == "roll")
        rep.cube_actions = sum(1 for c in cells if c.kind in ("double", "take", "drop", "beaver"))
    if rep.wins is None and rep.stopped is None and not rep.state.is_over():
        last = cells[-1] if cells else None
        line = last.line if last else raw.line
        text = _line_text(raw, line) if last else f" Game {raw.number}"
        rep.problems.append(
            MatProblem(line, text, "the game ends without a result (the file may be cut short)", raw.number)
        )
    result = rep.state.last_result if rep.state.is_over() else rep.forfeit
    record = GameRecord(raw.score or (0, 0), tuple(rep.actions), result)
    return MatGame(
        number=raw.number,
        line=raw.line,
        score=raw.score or (0, 0),
        names=raw.names,
        cells=tuple(cells),
        record=record,
        state=rep.state,
        wins=rep.wins,
        winner=rep.winner,
        illegal=rep.illegal,
        lost=rep.lost,
        problems=tuple(raw.problems) + tuple(rep.problems),
        stopped=rep.stopped,
        plays=rep.plays,
        cube_actions=rep.cube_actions,
        roll_resign=rep.roll_resign,
        forfeit=rep.forfeit is not None,
    )


def _apply(rep: _Replay, cell: MatCell, action: Action) -> None:
    try:
        rep.state = rep.state.apply(action)
    except IllegalActionError as exc:
        rep.problem(cell, f"move {cell.move}: {cell.text}: {exc}")
    rep.actions.append(action)


def _step(rep: _Replay, cell: MatCell, rest: Sequence[MatCell]) -> None:
    kind = cell.kind
    if kind != "roll":
        _flush(rep)
    state = rep.state
    if state.is_over() and kind not in ("wins", "losses"):
        rep.problem(cell, f"move {cell.move}: {quoted(cell.text)} after the end of the game")
    if kind == "roll":
        _roll(rep, cell, rest)
    elif kind in ("double", "beaver"):
        rep.cube_actions += 1
        before = state.cube.value
        _apply(rep, cell, Double() if kind == "double" else Beaver())
        expected = before * (2 if kind == "double" else 4)
        if cell.value != expected and not (kind == "beaver" and cell.value == before * 2):
            rep.problem(cell, f"move {cell.move}: {cell.text}: the cube was at {before}, so {expected}", stop=False)
    elif kind == "take":
        rep.cube_actions += 1
        _apply(rep, cell, Take())
    elif kind == "drop":
        rep.cube_actions += 1
        _apply(rep, cell, Drop())
    elif kind == "wins":
        _wins(rep, cell)


def _roll(rep: _Replay, cell: MatCell, rest: Sequence[MatCell]) -> None:
    assert cell.dice is not None
    dice = cell.dice
    rep.plays += 1
    if rep.pending is not None:
        position, mover = rep.pending
        rep.actions.append(Roll(dice))
    else:
        state = rep.state
        if state.phase is Phase.OPENING:
            if dice.is_double:
                rep.illegal = IllegalPlay(
                    cell.move, cell.column, cell.text, "an opening roll is never a double", cell.line
                )
                rep.stopped = "illegal opening roll"
                raise _ReplayStopError
            high, low = dice.high, dice.low
            _apply(rep, cell, OpeningRoll(high, low) if cell.column == 0 else OpeningRoll(low, high))
        elif state.phase is Phase.ROLL:
            rep.actions.append(Roll(dice))
        elif state.phase is Phase.DOUBLED:
            rep.problem(cell, f"move {cell.move}: a roll while a double waits for an answer: {cell.text}")
        else:
            rep.problem(cell, f"move {cell.move}: {cell.text}: {state.phase.value}, not a roll")
        position = rep.state.position
        assert rep.state.on_roll is not None
        mover = rep.state.on_roll
    written = cell.play
    if written == _LOST:
        rep.lost = cell
        rep.stopped = "lost move"
        _sync(rep, position, mover, dice)
        # Take the file's claim about the result, which the replay cannot check any more.
        for later in rest:
            if later.kind == "wins":
                rep.wins = later
                rep.winner = _claimed_winner(rep, later)
                break
        raise _ReplayStopError
    legal = _legal_plays(position, dice)
    try:
        steps = _parse_steps(written)
    except InvalidNotationError as exc:
        _sync(rep, position, mover, dice)
        rep.problem(cell, f"move {cell.move}: unreadable play {quoted(written)}: {exc}")
    if not steps and legal:
        _sync(rep, position, mover, dice)
        if rest and rest[0].kind in ("wins", "losses"):
            # The loser rolled and then resigned: gnubg writes the dice alone.
            rep.roll_resign = True
            return
        _illegal(rep, cell, mover, f"no play written, but {dice.spoken()} can be played")
    try:
        after, play = legal.resolve(steps)
    except IllegalPlayError as exc:
        _sync(rep, position, mover, dice)
        reason = str(exc)
        if isinstance(exc, NoSuchPlayError):
            # No legal result leaves the checkers as written: name the rule broken if one is.
            reason = _why_illegal(position, dice, legal, Play(steps))
        _illegal(rep, cell, mover, reason)
    rep.actions.append(Move(play))
    if any(after[0]):
        rep.pending = (after.swap(), 1 - mover)
    else:
        # The last checker is off: let the engine score the game.
        _sync(rep, position, mover, dice)
        rep.state = rep.state.apply(Move(after))


def _sync(rep: _Replay, position: Position, mover: int, dice: Dice | None) -> None:
    """Bring ``rep.state`` up to date: ``mover`` to play ``dice`` (or to roll) in ``position``.

    A run of rolls and plays is replayed on positions alone, since building a state for each
    one costs more than finding the legal plays; the state is built only when the run ends.
    """
    rep.pending = None
    phase = Phase.ROLL if dice is None else Phase.MOVE
    rep.state = replace(rep.state, position=position, on_roll=mover, dice=dice, phase=phase)


def _flush(rep: _Replay) -> None:
    """Build the state a run of plays left pending (see :func:`_sync`)."""
    if rep.pending is not None:
        _sync(rep, *rep.pending, None)


@lru_cache(maxsize=1 << 16)
def _parse_steps(text: str) -> tuple[Step, ...]:
    # The same few thousand plays ("8/5 6/5", "24/18 13/10") come back again and again.
    return tuple(parse_steps(text))


@lru_cache(maxsize=1 << 12)
def _legal_plays(position: Position, dice: Dice) -> LegalPlays:
    # Openings and bear-offs repeat from game to game.
    return legal_plays(position, dice)


def _illegal(rep: _Replay, cell: MatCell, player: int, reason: str) -> NoReturn:
    rep.illegal = IllegalPlay(cell.move, player, cell.text, reason, cell.line)
    rep.stopped = "illegal play"
    raise _ReplayStopError


def _why_illegal(position: Position, dice: Dice, legal: LegalPlays, written: Play) -> str:
    if not legal:
        return f"{written}: there is no legal play for {dice.spoken()}"
    played = sum(1 for _ in written)
    if position[0][24] and not any(s.source == BAR for s in written):
        return f"{written}: a checker on the bar must enter first"
    if played < legal.dice_used:
        many = "both dice" if legal.dice_used == 2 else f"{legal.dice_used} moves"
        return f"{written}: {dice.spoken()} must be played in full ({many})"
    return f"{written} is not a legal play for {dice.spoken()}"


def capped_points(
    length: int | None, score: tuple[int, int] | None, winner: int, actual: int | None = None
) -> set[int]:
    """What Galaxy may write for ``Wins N and the match`` instead of the points won.

    It writes the points the winner needed for a resignation, and the points won but at most the
    length (as written: 16 for its money sessions) for a game played out.
    """
    if not length or score is None:
        return set()
    capped = {length - score[winner]}
    if actual is not None:
        capped.add(min(actual, length))
    return capped


def _claimed_winner(rep: _Replay, cell: MatCell) -> int:
    """Who a ``Wins`` line says won a game the board did not finish.

    ``and the match`` names the one player it can be when only one reaches the length with
    those points; else the column says. (Galaxy's ``Losses`` lines are no help: it puts them
    in either column.)
    """
    score = rep.raw.score
    if cell.match and rep.length and score is not None:
        reaching = [p for p in (0, 1) if score[p] + cell.value >= rep.length]
        if len(reaching) == 1:
            return reaching[0]
    return cell.column


def _wins(rep: _Replay, cell: MatCell) -> None:
    if rep.wins is not None:
        rep.problem(cell, f"a second result: {cell.text}", stop=False)
        return
    rep.wins = cell
    state = rep.state
    if state.is_over():
        assert state.last_result is not None
        rep.winner = state.last_result.winner
        return
    winner = _claimed_winner(rep, cell)
    rep.winner = winner
    loser = 1 - winner
    cube = state.cube.value
    points = cell.value
    per_cube = points // cube if points % cube == 0 and points // cube in (1, 2, 3) else 0
    if not per_cube and cell.match and points < 3 * cube and points in capped_points(rep.length, rep.raw.score, winner):
        # Galaxy writes what the winner needed for the match, not the resignation's full worth.
        per_cube = -(-points // cube)
    if state.phase in (Phase.ROLL, Phase.MOVE) and state.on_roll == loser and per_cube:
        _apply(rep, cell, Resign(per_cube))
        _apply(rep, cell, AcceptResign())
        return
    # A player left or resigned out of turn (Galaxy writes "Losses" then), or the points are
    # no resignation's: the engine cannot replay that, so the file's word is the result.
    rep.forfeit = GameResult(winner, points, max(1, min(3, -(-points // cube))), GameEnd.RESIGNED, cube)


# -- writing -------------------------------------------------------------------------------

#: Tags gnubg writes, in its order; other tags follow in the record's order.
_TAG_ORDER: Final = ("Site", "Event", "Round", "EventDate", "Transcriber")


def write_mat(record: MatchRecord) -> str:
    """The record as a ``.mat`` file in gnubg's dialect (``export match mat``).

    Tags come first as ``; [Key "Value"]`` (a ``Comment`` tag as ``;`` lines), then
    `` N point match`` (`` 0 point match`` for money, as gnubg writes it), then each game: its
    heading, the score line, and rows ``%3d) `` with the left cell in 27 columns, each play
    one step per die with ``25`` for the bar, ``0`` for off and ``*`` on hits. A game ends
    with ``Wins N point(s)`` in the winner's column, followed by ``and the match`` when it
    wins the match.

    :raises BackgammonError: the record does not replay: a score past the match length, or an
        action the rules forbid.
    """
    out: list[str] = []
    tags = dict(record.tags)
    comment = tags.pop("Comment", "")
    for key in _TAG_ORDER:
        if key in tags:
            out.append(f'; [{key} "{tags.pop(key)}"]\n')
    for key, value in tags.items():
        out.append(f'; [{key} "{value}"]\n')
    if comment:
        out.append("\n; " + "\n; ".join(comment.splitlines()) + "\n")
    out.append("\n")
    out.append(f" {record.length} point match\n\n")
    for index in range(len(record.games)):
        out.append(_write_game(record, index))
    return "".join(out)


def _plain(position: Position, play: Play) -> str:
    """gnubg's plain notation: one step per die, ``25``/``0``, a ``*`` on the first landing on each blot."""
    opponent = position[1]
    blots = {24 - j for j in range(24) if opponent[j] == 1}
    parts = []
    for s in play:
        hit = s.dest in blots and s.dest != OFF
        if hit:
            blots.discard(s.dest)
        parts.append(f"{s.source}/{s.dest}{'*' if hit else ''}")
    # gnubg follows each step with a space except a fourth.
    return "".join(p + ("" if k == 3 else " ") for k, p in enumerate(parts))


def _write_game(record: MatchRecord, index: int) -> str:
    game = record.games[index]
    # gnubg 1.07 crashes (buffer overflow) importing a score line with an empty name.
    name0, name1 = (name or f"Player {k + 1}" for k, name in enumerate(record.players))
    # gnubg pads the left half to 31 columns; a longer name still gets a space before the other.
    left = f"{name0} : {game.score[0]}".ljust(30)
    out = [f" Game {index + 1}\n", f" {left} {name1} : {game.score[1]}\n"]
    cells: list[tuple[int, str]] = []
    state = record.initial_state(index)
    position_before = state.position
    for action in game.actions:
        before = state
        state = state.apply(action)
        if isinstance(action, OpeningRoll | Roll):
            continue
        if isinstance(action, Move):
            assert before.dice is not None and before.on_roll is not None
            position_before = before.position
            play = action.play if isinstance(action.play, Play) else Play()
            dice = before.dice
            text = f"{dice.first}{dice.second}: " + _plain(position_before, play)
            cells.append((before.on_roll, text))
        elif isinstance(action, Double):
            assert before.on_roll is not None
            cells.append((before.on_roll, f" Doubles => {before.cube.value * 2}"))
        elif isinstance(action, Beaver):
            assert before.on_roll is not None
            cells.append((1 - before.on_roll, f" Beavers => {before.cube.value * 4}"))
        elif isinstance(action, Take):
            assert before.turn is not None
            cells.append((before.turn, " Takes"))
        elif isinstance(action, Drop):
            assert before.turn is not None
            cells.append((before.turn, " Drops"))
        elif isinstance(action, Resign) and before.phase is Phase.MOVE and before.dice and before.on_roll is not None:
            # Rolled, then resigned: the dice alone, as gnubg writes them.
            cells.append((before.on_roll, f"{before.dice.first}{before.dice.second}: "))
    # A game the engine cannot finish (a player left out of turn) keeps the record's result.
    result = state.last_result if state.is_over() else game.result
    won = result is not None and bool(record.length) and game.score[result.winner] + result.points >= record.length
    out.extend(_layout(cells, result, won))
    return "".join(out)


def _layout(cells: list[tuple[int, str]], result: GameResult | None, match_won: bool) -> list[str]:
    """Rows of cells, left (player 0) and right (player 1), then the result line."""
    wins = ""
    if result is not None:
        plural = "" if result.points == 1 else "s"
        wins = f"Wins {result.points} point{plural}" + (" and the match" if match_won else "")
        if result.end is GameEnd.DROPPED and cells and cells[-1] == (0, " Drops"):
            # gnubg writes a left-hand drop and its result as one cell.
            cells = [*cells[:-1], (0, " Drops" + " " * 23 + wins)]
            result = None
    out: list[str] = []
    row = 0
    open_left = False
    for player, text in cells:
        if player == 0:
            if open_left:
                out.append("\n")
            row += 1
            out.append(f"{row:3d}) {text:<{_LEFT_WIDTH}} ")
            open_left = True
        else:
            if not open_left:
                row += 1
                out.append(f"{row:3d}) " + " " * (_LEFT_WIDTH + 1))
            out.append(text + "\n")
            open_left = False
    end = "\n" if open_left else ""
    if result is None:
        out.append(end + "\n")
    elif result.winner == 0:
        out.append(end + "      " + wins + "\n\n")
    else:
        out.append(end + " " * (_RIGHT_COLUMN + 1) + wins + "\n\n")
    return out


__all__ = [
    "GALAXY_MONEY_LENGTH",
    "IllegalPlay",
    "MatCell",
    "MatFile",
    "MatGame",
    "MatProblem",
    "read_mat",
    "read_mat_file",
    "write_mat",
]
