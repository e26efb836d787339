# SPDX-License-Identifier: MIT
"""Check match records: every play legal, every cube action allowed, every result and score right.

:func:`check_file` reads a ``.mat`` file (:mod:`engine.matfile` replays each game through the
engine as it reads) and then judges what the file claims:

* each play gives a position among the legal results for its roll (hits inferred where the
  file does not mark them; where it does, the realisation that matches the marks is taken);
* each cube action is allowed (the owner or either player with a centred cube doubles, the new
  value is twice the old, no double in the Crawford game: the first game in which a player is
  one point short of the match length);
* each ``Wins N`` matches the cube times a single game, gammon or backgammon as the board
  shows it (the Jacoby rule in money play); the cube value before the double for a drop; 1, 2
  or 3 times the cube for a resignation. In a match's last game Galaxy caps N (the points the
  winner needed after a resignation, at most the length for a game played out): accepted. A
  game Galaxy ends with the loser not on roll (a ``Losses`` line: a player left) is a forfeit,
  held to the same values;
* each game's score line is the previous one plus the previous result.

A move written ``????`` (the transcript lost it) is a *lost move*, not an illegal play: the
rest of its game cannot be replayed, so its ``Wins`` cannot be checked (two such games in the
corpus say ``Wins 4016 point``) and the next game's score line is trusted as it stands.

>>> from engine.matfile import read_mat
>>> report = check_mat(read_mat(EXAMPLE))
>>> report.games, report.plays, report.cube_actions, report.ok
(1, 2, 2, True)
>>> report.to_json()["illegal"]
[]
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from engine.errors import BackgammonError
from engine.match import Beaver, Double, Drop, GameEnd, GameResult, MatchState, Move, Take
from engine.matfile import MatFile, MatGame, capped_points, read_mat_file
from engine.record import MatchRecord

#: File name endings :func:`match_files` takes from a folder.
MATCH_SUFFIXES: Final = (".mat", ".txt")

#: A small match file, used in the examples.
EXAMPLE: Final = """; [Site "Example"]

 3 point match

 Game 1
 Ann : 0                        Bob : 0
  1) 31: 8/5 6/5                 64: 24/18 13/9
  2)  Doubles => 2                Drops
      Wins 1 point
"""

_KIND_WORDS: Final = {1: "a single game", 2: "a gammon", 3: "a backgammon"}


@dataclass(frozen=True, slots=True)
class IllegalEntry:
    """An illegal play: the game (1 for the first), the move number written, the player's name,
    the play as written, why it is illegal, and its line."""

    game: int
    move: int
    player: str
    play: str
    reason: str
    line: int = 0

    def to_json(self) -> dict[str, Any]:
        """The contract's keys, plus ``line``."""
        return {
            "game": self.game,
            "move": self.move,
            "player": self.player,
            "play": self.play,
            "reason": self.reason,
            "line": self.line,
        }


@dataclass(frozen=True, slots=True)
class LostMove:
    """A move the transcript lost (``????``): the game, the move number, the player, the line."""

    game: int
    move: int
    player: str
    line: int
    text: str

    def to_json(self) -> dict[str, Any]:
        """All fields as a JSON object."""
        return {"game": self.game, "move": self.move, "player": self.player, "line": self.line, "text": self.text}


@dataclass(slots=True)
class FileReport:
    """What checking one file (or record) found.

    :param file: the file name.
    :param games: games in the file.
    :param plays: rolls written, each with its play (a dance and ``????`` count too).
    :param cube_actions: doubles, takes, drops and beavers.
    :param illegal: the illegal plays, at most one a game (its replay stops there).
    :param problems: everything else that is wrong, each naming the file and line: unreadable
        lines, forbidden cube actions, results and scores that do not add up.
    :param lost_moves: moves written ``????``.
    :param dialect: the dialect the file was written in.
    """

    file: str
    games: int = 0
    plays: int = 0
    cube_actions: int = 0
    illegal: list[IllegalEntry] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    lost_moves: list[LostMove] = field(default_factory=list)
    dialect: str = "unknown"

    @property
    def ok(self) -> bool:
        """Nothing illegal and nothing inconsistent (lost moves are neither)."""
        return not self.illegal and not self.problems

    def to_json(self) -> dict[str, Any]:
        """``file``, ``games``, ``plays``, ``illegal``, ``problems`` (the ``check-match --json``
        contract), then ``cube_actions``, ``lost_moves`` and ``dialect``."""
        return {
            "file": self.file,
            "games": self.games,
            "plays": self.plays,
            "illegal": [entry.to_json() for entry in self.illegal],
            "problems": list(self.problems),
            "cube_actions": self.cube_actions,
            "lost_moves": [lost.to_json() for lost in self.lost_moves],
            "dialect": self.dialect,
        }


def match_files(paths: Iterable[str | os.PathLike[str]]) -> Iterator[Path]:
    """The files named, and the match files (``.mat``, ``.txt``) under each folder named, sorted."""
    for path in map(Path, paths):
        if path.is_dir():
            yield from sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in MATCH_SUFFIXES)
        else:
            yield path


def check_file(path: str | os.PathLike[str]) -> FileReport:
    """Read and check one ``.mat`` file; a file that cannot be read is one problem."""
    try:
        mat = read_mat_file(path)
    except OSError as exc:
        return FileReport(str(path), problems=[f"{path}: cannot read the file: {exc.strerror or exc}"])
    return check_mat(mat)


def check_mat(mat: MatFile) -> FileReport:
    """Check a file as read by :func:`~engine.matfile.read_mat` (see the module docstring)."""
    record = mat.record
    report = FileReport(mat.source, dialect=mat.dialect)
    report.problems.extend(p.describe(mat.source) for p in mat.problems)
    previous_end: tuple[int, int] | None = (0, 0)
    match_won = False
    for index, game in enumerate(mat.games):
        report.games += 1
        report.plays += game.plays
        report.cube_actions += game.cube_actions
        problems = [p.describe(mat.source) for p in game.problems]
        if match_won:
            problems.append(f"{mat.source}:{game.line}: game {game.number}: the match was already over")
        elif previous_end is not None and game.score != previous_end:
            before = "a match starts at" if index == 0 else "the games before end at"
            problems.append(
                f"{mat.source}:{game.line}: game {game.number}: the score line says "
                f"{game.score[0]}-{game.score[1]}, but {before} {previous_end[0]}-{previous_end[1]}"
            )
        if game.illegal is not None:
            bad = game.illegal
            report.illegal.append(
                IllegalEntry(game.number, bad.move, _name(record, bad.player), bad.play, bad.reason, bad.line)
            )
        if game.lost is not None:
            lost = game.lost
            player = game.state.on_roll if game.state.on_roll is not None else lost.column
            report.lost_moves.append(LostMove(game.number, lost.move, _name(record, player), lost.line, lost.text))
        result, result_problems = _judge_result(mat, index, game)
        problems.extend(result_problems)
        report.problems.extend(problems)
        if result is None or game.lost is not None:
            # The next score line is the only word on how this game ended.
            previous_end = None
        else:
            score = list(game.score)
            score[result.winner] += result.points
            previous_end = (score[0], score[1])
            match_won = bool(record.length) and max(previous_end) >= record.length
    return report


def _name(record: MatchRecord, player: int) -> str:
    name = record.players[player] if 0 <= player < 2 else ""
    return name or f"Player {player + 1}"


def _judge_result(mat: MatFile, index: int, game: MatGame) -> tuple[GameResult | None, list[str]]:
    """The game's result as far as it is known, and what is wrong with its ``Wins`` line."""
    where = f"{mat.source}:{game.wins.line if game.wins else game.line}: game {game.number}"
    wins = game.wins
    state = game.state
    record_result = game.record.result
    if game.stopped is not None:
        # The replay stopped short (illegal play, lost move, unreadable line): trust the file.
        if wins is None or game.winner is None:
            return None, []
        return GameResult(game.winner, wins.value, 1, GameEnd.RESIGNED, state.cube.value), []
    if record_result is None:
        return None, []
    if wins is None:
        return record_result, [f"{where}: the game is over ({record_result}) but the file has no 'Wins' line"]
    problems: list[str] = []
    if game.forfeit:
        points = wins.value
        cube = record_result.cube
        jacoby = state.is_money and state.options.jacoby and state.cube.is_centred
        allowed = {cube} if jacoby else {cube, 2 * cube, 3 * cube}
        if points not in allowed and not _capped(mat, game, record_result.winner, points, wins.match):
            problems.append(
                f"{where}: {wins.text}: a resignation with the cube at {cube} is worth "
                f"{' or '.join(map(str, sorted(allowed)))}"
            )
        return record_result, problems
    actual = record_result.points
    if wins.value != actual and not _capped(mat, game, record_result.winner, wins.value, wins.match, actual):
        problems.append(f"{where}: {wins.text}, but {_explain(record_result, state)}")
    if wins.column != record_result.winner and record_result.end is not GameEnd.RESIGNED:
        problems.append(f"{where}: {wins.text} is written in the loser's column")
    if wins.match and mat.record.length and game.score[record_result.winner] + actual < mat.record.length:
        problems.append(f"{where}: {wins.text}, but the winner does not reach {mat.record.length} points")
    return record_result, problems


def _capped(mat: MatFile, game: MatGame, winner: int, points: int, match: bool, actual: int | None = None) -> bool:
    """Galaxy's way with a match's last game (see :func:`~engine.matfile.capped_points`)."""
    if not match:
        return False
    if actual is None:
        cube = game.state.cube.value
        return any(points in capped_points(mat.written_length, game.score, winner, k * cube) for k in (1, 2, 3))
    return points in capped_points(mat.written_length, game.score, winner, actual)


def _explain(result: GameResult, state: MatchState) -> str:
    if result.end is GameEnd.DROPPED:
        return f"a dropped double scores the cube before it, {result.cube}"
    plural = "" if result.points == 1 else "s"
    kind = _KIND_WORDS.get(result.kind, "a game")
    how = "the board shows" if result.end is GameEnd.PLAYED else "the resignation gives"
    jacoby = " (Jacoby rule: the cube was never turned)" if state.is_money and state.options.jacoby else ""
    return f"{how} {kind} with the cube at {result.cube}: {result.points} point{plural}{jacoby}"


def check_record(record: MatchRecord, name: str = "<record>") -> FileReport:
    """Check a :class:`~engine.record.MatchRecord` built in memory (a match store's, say).

    Every action is replayed from each game's recorded score; a game's result must be the one
    its actions lead to, and each game's score the previous score plus the previous result.
    """
    report = FileReport(name, dialect="record")
    previous_end: tuple[int, int] | None = (0, 0)
    for index, game in enumerate(record.games):
        number = index + 1
        report.games += 1
        report.plays += sum(1 for a in game.actions if isinstance(a, Move))
        report.cube_actions += sum(1 for a in game.actions if isinstance(a, Double | Take | Drop | Beaver))
        if previous_end is not None and game.score != previous_end:
            report.problems.append(
                f"{name}: game {number}: starts at {game.score}, but the games before end at {previous_end}"
            )
        state: MatchState | None = None
        try:
            for step in record.game_states(index):
                state = step.state
        except BackgammonError as exc:
            report.problems.append(f"{name}: {exc}")
            state = None
        if state is not None and state.is_over() and state.last_result != game.result:
            report.problems.append(
                f"{name}: game {number}: the result is {game.result}, but the play gives {state.last_result}"
            )
        result = game.result
        if result is None:
            previous_end = None
        else:
            score = list(game.score)
            score[result.winner] += result.points
            previous_end = (score[0], score[1])
    return report


__all__ = [
    "EXAMPLE",
    "MATCH_SUFFIXES",
    "FileReport",
    "IllegalEntry",
    "LostMove",
    "check_file",
    "check_mat",
    "check_record",
    "match_files",
]
