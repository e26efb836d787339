# SPDX-License-Identifier: MIT
"""A match or money session as a record: players, rules, and each game's actions and result.

A :class:`MatchRecord` is what a ``.mat`` or ``.sgf`` file holds and what the match store
keeps. Each :class:`GameRecord` lists the :mod:`engine.match` actions of one game in order,
starting with its :class:`~engine.match.OpeningRoll`; replaying them through
:meth:`MatchState.apply <engine.match.MatchState.apply>` gives every state of the game.

:class:`MatchRecorder` builds a record as a game is played, one action at a time:

>>> from engine.match import Double, Drop
>>> recorder = MatchRecorder(("Ann", "Bob"), 3)
>>> for action in (OpeningRoll(3, 1), Move("8/5 6/5"), Double(), Drop()):
...     _ = recorder.apply(action)
>>> record = recorder.record()
>>> game = record.games[0]
>>> game.score, len(game.actions), str(game.result)
((0, 0), 4, 'player 1 wins a single game (double dropped): 1 point')
>>> record.final_score()
(0, 1)
>>> [str(step.state.phase.value) for step in record.states()][-2:]
['double offered', 'game over']
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import NamedTuple

from engine.errors import IllegalActionError
from engine.match import (
    Action,
    GameResult,
    MatchOptions,
    MatchState,
    Move,
    OpeningRoll,
)
from engine.play import Play


@dataclass(frozen=True, slots=True)
class GameRecord:
    """One game of a match.

    :param score: the points before the game, ``(player 0, player 1)``.
    :param actions: the actions in order, starting with the :class:`~engine.match.OpeningRoll`
        (``die0`` is player 0's die); a :class:`~engine.match.Move` holds a
        :class:`~engine.play.Play`.
    :param result: how the game ended, ``None`` while it is unfinished.
    """

    score: tuple[int, int]
    actions: tuple[Action, ...]
    result: GameResult | None = None


class ReplayStep(NamedTuple):
    """One state met while replaying a record (see :meth:`MatchRecord.states`)."""

    #: The game's index in :attr:`MatchRecord.games` (0 for the first game).
    game: int
    #: The index of the action just applied in the game's actions; -1 for the state before them.
    action_index: int
    #: The action just applied, ``None`` for the state before the game's first action.
    action: Action | None
    #: The state after ``action``.
    state: MatchState


@dataclass(frozen=True, slots=True)
class MatchRecord:
    """A match or money session as played.

    :param players: the names of player 0 and player 1 (player 0 is the ``.mat`` file's
        "Player 1", its left column).
    :param length: the match length, 0 for a money session.
    :param options: the rules in force.
    :param games: the games in order.
    :param tags: metadata as in ``.mat`` headers: ``"Event"``, ``"Site"``, ``"Round"``,
        ``"EventDate"`` (``YYYY.MM.DD``), ``"EventTime"`` (``HH.MM``), ``"Transcriber"``...
    """

    players: tuple[str, str]
    length: int
    options: MatchOptions = field(default_factory=MatchOptions)
    games: tuple[GameRecord, ...] = ()
    tags: Mapping[str, str] = field(default_factory=dict)

    @property
    def is_money(self) -> bool:
        """A money session (length 0)."""
        return self.length == 0

    def crawford_flags(self, game: int) -> tuple[bool, bool]:
        """``(crawford, post_crawford)`` for game number ``game`` (an index), from the scores.

        The Crawford game is the first game of the record in which a player stands one point
        short of the match length; later games at such a score are post-Crawford.
        """
        length = self.length
        if not (length > 1 and self.options.crawford):
            return False, False
        scores = [g.score for g in self.games[: game + 1]]
        one_away = [length - 1 in s and max(s) < length for s in scores]
        if not one_away[game]:
            return False, False
        first = one_away.index(True)
        return first == game, first != game

    def initial_state(self, game: int) -> MatchState:
        """The state before the opening roll of game ``game`` (an index into :attr:`games`).

        :raises InvalidPositionError: the game's score is impossible for the match length.
        """
        crawford, post_crawford = self.crawford_flags(game)
        return MatchState(
            self.length,
            score=self.games[game].score,
            options=self.options,
            game_number=game + 1,
            crawford=crawford,
            post_crawford=post_crawford,
        )

    def game_states(self, game: int) -> Iterator[ReplayStep]:
        """The states of one game: the state before its first action, then after each action.

        :raises IllegalActionError: an action is against the rules; the states before it have
            been yielded.
        """
        state = self.initial_state(game)
        yield ReplayStep(game, -1, None, state)
        for index, action in enumerate(self.games[game].actions):
            try:
                state = state.apply(action)
            except IllegalActionError as exc:
                raise IllegalActionError(f"game {game + 1}, action {index + 1} ({action!r}): {exc}") from None
            yield ReplayStep(game, index, action, state)

    def states(self) -> Iterator[ReplayStep]:
        """The states of every game in turn (see :meth:`game_states`).

        Each game starts from its own recorded score, so a game is replayed even when an
        earlier one is cut short.
        """
        for game in range(len(self.games)):
            yield from self.game_states(game)

    def final_score(self) -> tuple[int, int]:
        """The score after the last game (its starting score if it is unfinished)."""
        if not self.games:
            return (0, 0)
        last = self.games[-1]
        if last.result is None:
            return last.score
        score = list(last.score)
        score[last.result.winner] += last.result.points
        return (score[0], score[1])


class MatchRecorder:
    """Builds a :class:`MatchRecord` from actions as they happen.

    Each action is checked by :meth:`MatchState.apply <engine.match.MatchState.apply>`; a
    :class:`~engine.match.Move` is stored with its canonical :class:`~engine.play.Play`
    whatever form it came in (text, steps or the resulting position). An opening roll after a
    finished game starts the next game.

    :param players: the names of player 0 and player 1.
    :param length: the match length, 0 for money.
    :param options: the rules; by default gnubg's (Crawford in a match, nothing else).
    :param tags: metadata, as :attr:`MatchRecord.tags`.
    """

    def __init__(
        self,
        players: tuple[str, str],
        length: int,
        options: MatchOptions | None = None,
        tags: Mapping[str, str] | None = None,
    ) -> None:
        if options is None:
            options = MatchOptions(crawford=length > 0)
        self.players = players
        self.length = length
        self.options = options
        self.tags: dict[str, str] = dict(tags or {})
        self.state = MatchState(length, options=options)
        self._games: list[GameRecord] = []
        self._actions: list[Action] = []
        self._score = self.state.score

    def apply(self, action: Action) -> MatchState:
        """Apply ``action`` and record it; returns the new state.

        :raises IllegalActionError: the rules forbid the action; nothing is recorded.
        """
        before = self.state
        after = before.apply(action)
        if isinstance(action, Move) and not isinstance(action.play, Play):
            # Whether or not the move ended the game, the engine leaves the board seen from
            # the other side.
            play = before.legal_plays().results.get(after.position.swap(), Play())
            action = replace(action, play=play)
        if isinstance(action, OpeningRoll) and before.is_over():
            self._close_game(before)
            self._score = before.score
        self._actions.append(action)
        self.state = after
        return after

    def _close_game(self, state: MatchState) -> None:
        self._games.append(GameRecord(self._score, tuple(self._actions), state.last_result))
        self._actions = []

    def record(self) -> MatchRecord:
        """The record so far; the game in progress is included, unfinished (``result`` None)."""
        games = list(self._games)
        if self._actions:
            result = self.state.last_result if self.state.is_over() else None
            games.append(GameRecord(self._score, tuple(self._actions), result))
        return MatchRecord(self.players, self.length, self.options, tuple(games), dict(self.tags))
