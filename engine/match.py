# SPDX-License-Identifier: MIT
"""The state of a match or money session, and the actions that move it on.

A :class:`MatchState` is an immutable snapshot with the fields of gnubg's ``matchstate``:
match length (0 for money), score, cube, the player on roll, dice, phase, Crawford flags, the
position seen from the player on roll, and the options in force. :meth:`MatchState.apply`
returns the state after one action and raises :class:`~engine.errors.IllegalActionError`, in
words a player understands, when the rules forbid it.

Players are numbered 0 and 1 as in gnubg (and in the Match ID); in an XGID player 1 is the
bottom player.

>>> state = MatchState.new_match(5)
>>> state = state.apply(OpeningRoll(3, 1))          # player 0 rolled the 3: he plays 3-1
>>> state.phase, state.on_roll, str(state.dice)
(<Phase.MOVE: 'move'>, 0, '31')
>>> state = state.apply(Move("8/5 6/5"))
>>> state.phase, state.on_roll
(<Phase.ROLL: 'roll or double'>, 1)
>>> state = state.apply(Double()).apply(Take())
>>> state.cube
Cube(value=2, owner=0)
>>> state.apply(Double())
Traceback (most recent call last):
...
engine.errors.IllegalActionError: you can't double: your opponent owns the cube
>>> state.gnubg_id()
'sGfwATDgc/ABMA:QQmgAAAAAAAE'
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace
from typing import Final, TypeAlias

from engine.cube import CUBE_LIMIT, Cube, is_cube_value
from engine.dice import Dice
from engine.errors import (
    IllegalActionError,
    IllegalPlayError,
    InvalidIdError,
    InvalidPositionError,
    NoSuchPlayError,
    quoted,
)
from engine.ids import (
    XGID_BEAVERED,
    XGID_DEFAULT_MAX_CUBE,
    XGID_DOUBLED,
    XGID_NOT_ROLLED,
    XGID_RACCOONED,
    GameState,
    MatchIdFields,
    XgidFields,
    decode_gnubg_id,
    decode_xgid,
    encode_gnubg_id,
    encode_match_id,
    encode_xgid,
)
from engine.movegen import LegalPlays, legal_plays
from engine.play import Play
from engine.position import CHECKERS, Position

#: Points per cube for a single game, a gammon and a backgammon.
SINGLE: Final = 1
GAMMON: Final = 2
BACKGAMMON: Final = 3

_KIND_WORDS: Final = {SINGLE: "a single game", GAMMON: "a gammon", BACKGAMMON: "a backgammon"}


class Phase(enum.Enum):
    """What the match is waiting for."""

    #: Each player rolls one die to start a game (gnubg's ``GAME_NONE``).
    OPENING = "opening roll"
    #: The player on roll may double or roll.
    ROLL = "roll or double"
    #: A double (or a beaver) waits for take or drop.
    DOUBLED = "double offered"
    #: The dice are rolled; the player on roll must move.
    MOVE = "move"
    #: The player on roll offered to resign; his opponent accepts or plays on.
    RESIGNED = "resignation offered"
    #: The game is over and the match goes on; the next action is the next opening roll.
    GAME_OVER = "game over"
    #: A player has reached the match length.
    MATCH_OVER = "match over"


class GameEnd(enum.Enum):
    """How a game ended."""

    #: The winner bore off his last checker.
    PLAYED = "played out"
    #: The loser resigned and the winner accepted.
    RESIGNED = "resigned"
    #: The loser dropped a double (or a beaver).
    DROPPED = "dropped"


_GAME_STATE_OF_END: Final = {
    GameEnd.PLAYED: GameState.OVER,
    GameEnd.RESIGNED: GameState.RESIGNED,
    GameEnd.DROPPED: GameState.DROPPED,
}


@dataclass(frozen=True, slots=True)
class GameResult:
    """The result of a finished game.

    :param winner: player 0 or 1.
    :param points: the points scored (the cube value times the kind, unless the Jacoby rule or
        a drop says otherwise).
    :param kind: :data:`SINGLE`, :data:`GAMMON` or :data:`BACKGAMMON`, as the board or the
        resignation showed it (a drop is a single game).
    :param end: how the game ended.
    :param cube: the cube value when it ended (before the refused double, for a drop).
    """

    winner: int
    points: int
    kind: int
    end: GameEnd
    cube: int

    def __str__(self) -> str:
        words = {GameEnd.PLAYED: "", GameEnd.RESIGNED: " by resignation", GameEnd.DROPPED: " (double dropped)"}
        plural = "" if self.points == 1 else "s"
        return f"player {self.winner} wins {_KIND_WORDS[self.kind]}{words[self.end]}: {self.points} point{plural}"


@dataclass(frozen=True, slots=True)
class MatchOptions:
    """The rules in force.

    :param crawford: the Crawford rule (match play): nobody doubles in the first game after a
        player reaches one point short of the match length.
    :param jacoby: the Jacoby rule (money play): gammons and backgammons count single while the
        cube is centred.
    :param beaver: beavers (money play): a doubled player may take and redouble at once.
    :param max_cube: the highest value the cube may reach, a power of two, or ``None`` for no
        limit short of the Match ID's :data:`~engine.cube.CUBE_LIMIT`.
    :raises InvalidPositionError: ``max_cube`` is not a power of two.
    """

    crawford: bool = True
    jacoby: bool = False
    beaver: bool = False
    max_cube: int | None = None

    def __post_init__(self) -> None:
        if self.max_cube is not None and not is_cube_value(self.max_cube):
            raise InvalidPositionError(f"max_cube is a power of two up to {CUBE_LIMIT} or None, not {self.max_cube!r}")

    @property
    def cube_limit(self) -> int:
        """The highest cube value allowed."""
        return CUBE_LIMIT if self.max_cube is None else self.max_cube


# -- actions -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class OpeningRoll:
    """Each player rolls one die to start a game: ``die0`` is player 0's, ``die1`` player 1's.

    Equal dice roll again; otherwise the higher die's player plays both dice as his first roll.
    It also starts the next game after a game over.
    """

    die0: int
    die1: int


@dataclass(frozen=True, slots=True)
class Roll:
    """The player on roll rolls ``dice`` instead of doubling.

    :param by: who rolled, if known; checked against the player on roll.
    """

    dice: Dice
    by: int | None = None


@dataclass(frozen=True, slots=True)
class Move:
    """The player on roll plays his dice.

    :param play: a :class:`~engine.play.Play`, play text (``"13/7 8/7"``), or the resulting
        :class:`~engine.position.Position` still seen from the mover, as a camera reads it. With
        no legal play the only move is the empty one (``Play()``, ``""`` or the same position).
    :param by: who moved, if known.
    """

    play: Play | Position | str
    by: int | None = None


@dataclass(frozen=True, slots=True)
class Double:
    """The player on roll doubles before rolling."""

    by: int | None = None


@dataclass(frozen=True, slots=True)
class Take:
    """The doubled player takes (after a beaver: the original doubler takes the redouble)."""

    by: int | None = None


@dataclass(frozen=True, slots=True)
class Drop:
    """The doubled player drops and loses the game at the cube value before the double."""

    by: int | None = None


@dataclass(frozen=True, slots=True)
class Beaver:
    """Money play with beavers: the doubled player takes and redoubles at once, keeping the cube."""

    by: int | None = None


@dataclass(frozen=True, slots=True)
class Resign:
    """The player on roll offers to resign ``points`` per cube: 1 single, 2 gammon, 3 backgammon."""

    points: int = SINGLE
    by: int | None = None


@dataclass(frozen=True, slots=True)
class AcceptResign:
    """The opponent accepts the resignation on offer and wins."""

    by: int | None = None


@dataclass(frozen=True, slots=True)
class RejectResign:
    """The opponent refuses the resignation and play goes on."""

    by: int | None = None


Action: TypeAlias = OpeningRoll | Roll | Move | Double | Take | Drop | Beaver | Resign | AcceptResign | RejectResign

#: Every action class, in the order :meth:`MatchState.legal_actions` lists them.
ACTION_TYPES: Final[tuple[type[Action], ...]] = (
    OpeningRoll,
    Roll,
    Move,
    Double,
    Take,
    Drop,
    Beaver,
    Resign,
    AcceptResign,
    RejectResign,
)

_PHASE_HINT: Final = {
    Phase.OPENING: "roll one die each for the opening roll",
    Phase.ROLL: "roll the dice (or double)",
    Phase.DOUBLED: "answer the double first: take or drop",
    Phase.MOVE: "play your roll",
    Phase.RESIGNED: "answer the resignation first: accept it or play on",
    Phase.GAME_OVER: "the game is over: roll one die each to start the next game",
    Phase.MATCH_OVER: "the match is over",
}


def _points_of_win(loser: tuple[int, ...]) -> int:
    """Single, gammon or backgammon, from the loser's 25 counts in his own numbering."""
    if sum(loser) < CHECKERS:
        return SINGLE
    # The winner's home board is the loser's points 19-24; index 24 is the loser's bar.
    return BACKGAMMON if any(loser[18:]) else GAMMON


# -- the state -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MatchState:
    """A snapshot of a match or money session, following gnubg's ``matchstate``.

    Build one with :meth:`new_match`, :meth:`new_money_session`, :meth:`from_gnubg_id` or
    :meth:`from_xgid`, and move on with :meth:`apply`.

    :param length: the match length; 0 for a money session.
    :param score: points won, ``(player 0, player 1)``; the real score, even past the length.
    :param cube: the cube value and owner.
    :param on_roll: the player whose turn it is (gnubg's ``fMove``): he rolls, doubles and moves;
        during a double he is the doubler; after a game played out, the loser (as in gnubg).
        ``None`` only before the opening roll.
    :param dice: the dice rolled, ``None`` before rolling.
    :param phase: what the match waits for.
    :param position: the checkers, seen from ``on_roll`` (the starting position before the
        opening roll).
    :param crawford: this game is the Crawford game (after a game over: the next game is).
    :param post_crawford: the Crawford game has been played.
    :param options: the rules in force.
    :param game_number: 1 for the first game of the match or session.
    :param last_result: how the last finished game ended, if any has.
    :param resigned: the points per cube of a resignation on offer (or accepted), else 0.
    :param beavered: during a double: the doubled player beavered, so the doubler answers.
    :raises InvalidPositionError: the fields contradict each other.
    """

    length: int
    score: tuple[int, int] = (0, 0)
    cube: Cube = field(default_factory=Cube)
    on_roll: int | None = None
    dice: Dice | None = None
    phase: Phase = Phase.OPENING
    position: Position = Position.STARTING
    crawford: bool = False
    post_crawford: bool = False
    options: MatchOptions = field(default_factory=MatchOptions)
    game_number: int = 1
    last_result: GameResult | None = None
    resigned: int = 0
    beavered: bool = False

    def __post_init__(self) -> None:
        problem = self._problem()
        if problem:
            raise InvalidPositionError(f"not a match state: {problem}")

    def _problem(self) -> str | None:
        phase = self.phase
        if self.length < 0 or len(self.score) != 2 or min(self.score) < 0:
            return f"length {self.length!r} and score {self.score!r} must not be negative"
        if (self.on_roll is None) != (phase is Phase.OPENING):
            return "there is a player on roll exactly when the opening roll is over"
        if self.on_roll not in (None, 0, 1):
            return f"the player on roll is 0 or 1, not {self.on_roll!r}"
        if phase is Phase.MOVE and self.dice is None:
            return "a player moves only after rolling"
        if phase in (Phase.OPENING, Phase.ROLL, Phase.DOUBLED) and self.dice is not None:
            return f"no dice are rolled in the {phase.value} phase"
        if (self.resigned != 0) != (
            phase is Phase.RESIGNED
            or (self.last_result is not None and self.is_over() and self.last_result.end is GameEnd.RESIGNED)
        ):
            return "a resignation is on record exactly while one is offered or when it ended the game"
        if self.resigned not in (0, SINGLE, GAMMON, BACKGAMMON):
            return f"a resignation is worth 1, 2 or 3 points per cube, not {self.resigned!r}"
        if self.beavered and (phase is not Phase.DOUBLED or self.length):
            return "a beaver happens only while a double is answered in money play"
        if self.is_over() and self.last_result is None:
            return "a finished game needs its result"
        finished = bool(self.length) and max(self.score) >= self.length
        if finished != (phase is Phase.MATCH_OVER):
            return f"score {self.score[0]}-{self.score[1]} and phase {phase.value!r} disagree about the match end"
        if self.length == 0 and (self.crawford or self.post_crawford):
            return "there is no Crawford game in money play"
        if self.cube.value > self.options.cube_limit:
            return f"the cube is at {self.cube.value}, above the limit of {self.options.cube_limit}"
        return None

    # -- constructors ------------------------------------------------------------------------

    @classmethod
    def new_match(cls, length: int, *, crawford: bool = True, max_cube: int | None = None) -> MatchState:
        """A match to ``length`` points, waiting for the opening roll of the first game.

        :raises InvalidPositionError: the length is not 1 or more.
        """
        if not isinstance(length, int) or length < 1:
            raise InvalidPositionError(f"a match is played to 1 point or more, not {length!r}; use new_money_session")
        return cls(length, options=MatchOptions(crawford=crawford, max_cube=max_cube))

    @classmethod
    def new_money_session(
        cls, *, jacoby: bool = False, beaver: bool = False, max_cube: int | None = None
    ) -> MatchState:
        """A money session, waiting for the opening roll of the first game."""
        return cls(0, options=MatchOptions(crawford=False, jacoby=jacoby, beaver=beaver, max_cube=max_cube))

    # -- views -------------------------------------------------------------------------------

    @property
    def is_money(self) -> bool:
        """Money play (match length 0)."""
        return self.length == 0

    @property
    def turn(self) -> int | None:
        """The player who must act now (gnubg's ``fTurn``); ``None`` for the opening roll or after a game.

        It is the player on roll, except that the doubled player answers a double, the doubler
        answers a beaver, and the opponent answers a resignation.
        """
        if self.on_roll is None or self.is_over():
            return None
        if self.phase is Phase.DOUBLED:
            return self.on_roll if self.beavered else 1 - self.on_roll
        if self.phase is Phase.RESIGNED:
            return 1 - self.on_roll
        return self.on_roll

    def is_over(self) -> bool:
        """Whether the game is over (or the match)."""
        return self.phase in (Phase.GAME_OVER, Phase.MATCH_OVER)

    def away(self, player: int) -> int:
        """Points ``player`` still needs to win the match (0 in money play)."""
        return max(self.length - self.score[player], 0) if self.length else 0

    @property
    def winner(self) -> int | None:
        """The match winner once the match is over, else ``None``."""
        if self.phase is not Phase.MATCH_OVER:
            return None
        return 0 if self.score[0] >= self.length else 1

    def legal_plays(self) -> LegalPlays:
        """The legal plays for the roll to move.

        :raises IllegalActionError: no roll is waiting to be played.
        """
        if self.phase is not Phase.MOVE or self.dice is None:
            raise IllegalActionError(f"there is no roll to play: {_PHASE_HINT[self.phase]}")
        return legal_plays(self.position, self.dice)

    def must_move(self) -> bool:
        """Whether the player on roll has rolled and has at least one legal play to make."""
        return self.phase is Phase.MOVE and bool(self.legal_plays())

    def can_double(self) -> bool:
        """Whether the player on roll may double now."""
        return self.refusal(Double()) is None

    def can_beaver(self) -> bool:
        """Whether the doubled player may beaver now."""
        return self.refusal(Beaver()) is None

    def legal_actions(self) -> tuple[type[Action], ...]:
        """The kinds of action the rules allow now (a :class:`Move` needs a legal play too).

        >>> [a.__name__ for a in MatchState.new_match(3).apply(OpeningRoll(6, 5)).legal_actions()]
        ['Move', 'Resign']
        """
        probes: dict[type[Action], Action] = {
            OpeningRoll: OpeningRoll(2, 1),
            Roll: Roll(Dice(1, 2)),
            Move: Move(self._any_play()),
            Double: Double(),
            Take: Take(),
            Drop: Drop(),
            Beaver: Beaver(),
            Resign: Resign(),
            AcceptResign: AcceptResign(),
            RejectResign: RejectResign(),
        }
        return tuple(kind for kind in ACTION_TYPES if self.refusal(probes[kind]) is None)

    def _any_play(self) -> Position:
        if self.phase is Phase.MOVE and self.dice is not None:
            return next(iter(legal_plays(self.position, self.dice).positions()), self.position)
        return self.position

    # -- rules -------------------------------------------------------------------------------

    def refusal(self, action: Action) -> str | None:
        """Why the rules forbid ``action`` now, in a player's words, or ``None`` if they allow it."""
        try:
            self.apply(action)
        except IllegalActionError as exc:
            return str(exc)
        return None

    def is_legal(self, action: Action) -> bool:
        """Whether the rules allow ``action`` now."""
        return self.refusal(action) is None

    def apply(self, action: Action) -> MatchState:
        """The state after ``action``.

        :raises IllegalActionError: the rules forbid the action now; the message says why.
        """
        match action:
            case OpeningRoll(die0, die1):
                return self._opening_roll(die0, die1)
            case Roll(dice, by):
                return self._roll(dice, by)
            case Move(play, by):
                return self._move(play, by)
            case Double(by):
                return self._double(by)
            case Take(by):
                return self._take(by)
            case Drop(by):
                return self._drop(by)
            case Beaver(by):
                return self._beaver(by)
            case Resign(points, by):
                return self._resign(points, by)
            case AcceptResign(by):
                return self._accept_resign(by)
            case RejectResign(by):
                return self._reject_resign(by)
        raise IllegalActionError(f"not a match action: {action!r}")

    def _require(self, phase: Phase, by: int | None, doing: str) -> int:
        """Check the phase and the actor; return the player who acts."""
        if self.phase is not phase:
            raise IllegalActionError(f"you can't {doing} now: {_PHASE_HINT[self.phase]}")
        actor = self.turn
        assert actor is not None  # every phase with an actor has a player to act
        if by is not None and by != actor:
            raise IllegalActionError(f"it's not your turn to {doing}: player {actor} is to act")
        return actor

    def _opening_roll(self, die0: int, die1: int) -> MatchState:
        for die in (die0, die1):
            if not isinstance(die, int) or not 1 <= die <= 6:
                raise IllegalActionError(f"a die shows 1 to 6, not {die!r}")
        if self.phase is Phase.GAME_OVER:
            game = replace(
                self,
                cube=Cube(),
                on_roll=None,
                dice=None,
                phase=Phase.OPENING,
                position=Position.STARTING,
                game_number=self.game_number + 1,
                resigned=0,
                beavered=False,
            )
        elif self.phase is Phase.OPENING:
            game = self
        else:
            raise IllegalActionError(f"the opening roll starts a game: {_PHASE_HINT[self.phase]}")
        if die0 == die1:
            # Equal dice: both roll again (no automatic doubles in the rules we implement).
            return game
        winner = 0 if die0 > die1 else 1
        return replace(game, on_roll=winner, dice=Dice(max(die0, die1), min(die0, die1)), phase=Phase.MOVE)

    def _roll(self, dice: Dice, by: int | None) -> MatchState:
        if self.phase is Phase.MOVE:
            raise IllegalActionError("you have rolled already: play your roll")
        self._require(Phase.ROLL, by, "roll")
        if not isinstance(dice, Dice):
            raise IllegalActionError(f"a roll is two dice, not {dice!r}")
        return replace(self, dice=dice, phase=Phase.MOVE)

    def _move(self, play: Play | Position | str, by: int | None) -> MatchState:
        if self.phase is Phase.ROLL:
            raise IllegalActionError("roll the dice before moving")
        mover = self._require(Phase.MOVE, by, "move")
        assert self.dice is not None
        after = self._resulting_position(play, self.dice)
        if not any(after[0]):
            kind = _points_of_win(after[1])
            return self._end_game(mover, kind, GameEnd.PLAYED, on_roll=1 - mover, position=after.swap(), dice=None)
        return replace(self, on_roll=1 - mover, dice=None, phase=Phase.ROLL, position=after.swap())

    def _resulting_position(self, play: Play | Position | str, dice: Dice) -> Position:
        legal = legal_plays(self.position, dice)
        illegal = f"that play is not legal for {dice.spoken()}"
        no_play = f"{illegal}: there is no legal play, so no checker may move"
        must_play = f"{illegal}: you must play your roll"
        if isinstance(play, Position):
            if play in legal or (not legal and play == self.position):
                return play
            if not legal:
                raise IllegalActionError(no_play)
            if play == self.position:
                raise IllegalActionError(must_play)
            raise IllegalActionError(f"{illegal}: no legal play leaves the checkers like that")
        if isinstance(play, Play):
            for after, legal_play in legal.results.items():
                if legal_play == play:
                    return after
        steps = Play.parse(play) if isinstance(play, str) else play
        if not steps:
            if not legal:
                return self.position
            raise IllegalActionError(must_play)
        if not legal:
            raise IllegalActionError(no_play)
        try:
            after, _ = legal.resolve(steps)
        except IllegalPlayError as exc:
            written = str(Play(steps))
            if len(steps) < legal.dice_used:
                many = "both dice" if legal.dice_used == 2 else f"{legal.dice_used} moves"
                raise IllegalActionError(f"{illegal}: {written}: you must play {many}") from None
            if isinstance(exc, NoSuchPlayError):
                raise IllegalActionError(f"{illegal}: {written}") from None
            raise IllegalActionError(f"{illegal}: {exc}") from None
        return after

    def _double(self, by: int | None) -> MatchState:
        if self.phase is Phase.MOVE:
            raise IllegalActionError("you can't double after rolling: double before you roll")
        if self.phase is Phase.DOUBLED:
            raise IllegalActionError("you can't double now: answer the double first (take, drop or beaver)")
        doubler = self._require(Phase.ROLL, by, "double")
        if self.crawford:
            raise IllegalActionError("no doubling in the Crawford game")
        if not self.cube.can_double(doubler):
            raise IllegalActionError("you can't double: your opponent owns the cube")
        if self.cube.value * 2 > self.options.cube_limit:
            raise IllegalActionError(f"you can't double: the cube is at {self.cube.value}, the limit")
        return replace(self, phase=Phase.DOUBLED, beavered=False)

    def _take(self, by: int | None) -> MatchState:
        if self.phase is not Phase.DOUBLED:
            raise IllegalActionError(f"there is no double to take: {_PHASE_HINT[self.phase]}")
        self._require(Phase.DOUBLED, by, "take")
        assert self.on_roll is not None
        # After a beaver the cube stays with the beaverer (gnubg: the owner is the doubler's
        # opponent either way).
        return replace(self, cube=self.cube.doubled(1 - self.on_roll), phase=Phase.ROLL, beavered=False)

    def _drop(self, by: int | None) -> MatchState:
        if self.phase is not Phase.DOUBLED:
            raise IllegalActionError(f"there is no double to drop: {_PHASE_HINT[self.phase]}")
        dropper = self._require(Phase.DOUBLED, by, "drop")
        assert self.on_roll is not None
        return self._end_game(
            1 - dropper, SINGLE, GameEnd.DROPPED, on_roll=self.on_roll, position=self.position, dice=None
        )

    def _beaver(self, by: int | None) -> MatchState:
        if self.phase is not Phase.DOUBLED:
            raise IllegalActionError(f"there is no double to beaver: {_PHASE_HINT[self.phase]}")
        if self.is_money is False:
            raise IllegalActionError("no beavers in match play")
        if not self.options.beaver:
            raise IllegalActionError("beavers are not allowed in this session")
        if self.beavered:
            raise IllegalActionError("the double has been beavered already: take or drop")
        beaverer = self._require(Phase.DOUBLED, by, "beaver")
        if self.cube.value * 4 > self.options.cube_limit:
            raise IllegalActionError(f"you can't beaver: the cube would pass the limit of {self.options.cube_limit}")
        # The beaverer takes (the cube is his at twice the value) and redoubles at once.
        return replace(self, cube=Cube(self.cube.value * 2, beaverer), beavered=True)

    def _resign(self, points: int, by: int | None) -> MatchState:
        if points not in (SINGLE, GAMMON, BACKGAMMON):
            raise IllegalActionError(f"a resignation is 1 (single), 2 (gammon) or 3 (backgammon), not {points!r}")
        if self.phase not in (Phase.ROLL, Phase.MOVE):
            raise IllegalActionError(f"you can't resign now: {_PHASE_HINT[self.phase]}")
        self._require(self.phase, by, "resign")
        return replace(self, phase=Phase.RESIGNED, resigned=points)

    def _accept_resign(self, by: int | None) -> MatchState:
        if self.phase is not Phase.RESIGNED:
            raise IllegalActionError(f"nobody has offered to resign: {_PHASE_HINT[self.phase]}")
        winner = self._require(Phase.RESIGNED, by, "accept the resignation")
        assert self.on_roll is not None
        return self._end_game(
            winner, self.resigned, GameEnd.RESIGNED, on_roll=self.on_roll, position=self.position, dice=self.dice
        )

    def _reject_resign(self, by: int | None) -> MatchState:
        if self.phase is not Phase.RESIGNED:
            raise IllegalActionError(f"nobody has offered to resign: {_PHASE_HINT[self.phase]}")
        self._require(Phase.RESIGNED, by, "refuse the resignation")
        return replace(self, phase=Phase.ROLL if self.dice is None else Phase.MOVE, resigned=0)

    def _end_game(
        self, winner: int, kind: int, end: GameEnd, *, on_roll: int, position: Position, dice: Dice | None
    ) -> MatchState:
        """Score the game, and set the Crawford flags for the next one as gnubg does."""
        jacoby = self.is_money and self.options.jacoby and self.cube.is_centred
        points = self.cube.value * (SINGLE if end is GameEnd.DROPPED or jacoby else kind)
        score = list(self.score)
        score[winner] += points
        crawford, post_crawford = self.crawford, self.post_crawford
        if self.length and self.options.crawford:
            post_crawford = post_crawford or (crawford and score[winner] < self.length)
            crawford = (
                not post_crawford
                and not crawford
                and score[winner] == self.length - 1
                and score[1 - winner] != self.length - 1
            )
        match_over = bool(self.length) and score[winner] >= self.length
        if match_over:
            # Nothing follows, so take the flags gnubg reads back from the final score; that
            # way a finished match survives a trip through its Match ID unchanged.
            crawford, post_crawford = _crawford_flags(self.length, (score[0], score[1]), False, self.options)
        return replace(
            self,
            score=(score[0], score[1]),
            on_roll=on_roll,
            dice=dice,
            phase=Phase.MATCH_OVER if match_over else Phase.GAME_OVER,
            position=position,
            crawford=crawford,
            post_crawford=post_crawford,
            last_result=GameResult(winner, points, kind, end, self.cube.value),
            resigned=self.resigned if end is GameEnd.RESIGNED else 0,
            beavered=False,
        )

    # -- IDs ---------------------------------------------------------------------------------

    def match_id_fields(self) -> MatchIdFields:
        """The state as gnubg's Match ID fields (see :mod:`engine.ids`)."""
        phase = self.phase
        on_roll = 1 if self.on_roll is None else self.on_roll
        turn = self.turn
        state = GameState.PLAYING
        if phase is Phase.OPENING:
            # gnubg has no player on roll before the opening roll (-1), and writes its low bit.
            state, turn = GameState.NONE, 1
        elif self.is_over():
            assert self.last_result is not None
            state = _GAME_STATE_OF_END[self.last_result.end]
            winner = self.last_result.winner
            # gnubg leaves the turn with the loser after a game played out or dropped, and with
            # the winner who accepted a resignation.
            turn = winner if self.last_result.end is GameEnd.RESIGNED else 1 - winner
        assert turn is not None
        return MatchIdFields(
            cube=self.cube.value,
            cube_owner=self.cube.owner,
            dice_owner=on_roll,
            crawford=self.crawford,
            game_state=state,
            turn=turn,
            doubled=phase is Phase.DOUBLED,
            resigned=self.resigned,
            dice=(0, 0) if self.dice is None else (self.dice.first, self.dice.second),
            length=self.length,
            score=self.score,
            jacoby=self.options.jacoby,
        )

    def match_id(self) -> str:
        """gnubg's Match ID (12 characters).

        :raises InvalidIdError: a score is past the 32767 points the ID can hold.
        """
        return encode_match_id(self.match_id_fields())

    def gnubg_id(self) -> str:
        """gnubg's ``PositionID:MatchID``, the position seen from the player on roll.

        :raises InvalidIdError: a score is past the 32767 points the Match ID can hold.
        """
        return encode_gnubg_id(self.position, self.match_id_fields())

    def xgid(self) -> str:
        """eXtreme Gammon's XGID, player 1 at the bottom.

        An XGID has no words for the opening roll, a resignation or a finished game: before the
        opening roll it shows player 1 to roll; during a resignation the position with its
        dice; after a game the final position. A beaver is written ``B`` with the cube as it
        stands after the beaver and the beaverer as the turn (gnubg does not read ``B``).
        """
        on_roll = 1 if self.on_roll is None else self.on_roll
        mover, other = self.position
        bottom, top = (mover, other) if on_roll == 1 else (other, mover)
        turn = on_roll
        if self.phase is Phase.DOUBLED:
            dice = XGID_BEAVERED if self.beavered else XGID_DOUBLED
            turn = 1 - on_roll if self.beavered else on_roll
        elif self.dice is not None:
            dice = f"{self.dice.first}{self.dice.second}"
        else:
            dice = XGID_NOT_ROLLED
        # A match writes the Crawford flag; money writes Jacoby (1) plus beavers (2).
        rules = int(self.crawford) if self.length else int(self.options.jacoby) + 2 * int(self.options.beaver)
        owner = self.cube.owner
        max_cube = self.options.max_cube
        return encode_xgid(
            XgidFields(
                board=XgidFields.board_from(bottom, top),
                cube=self.cube.value,
                cube_owner=0 if owner is None else (1 if owner == 1 else -1),
                turn=1 if turn == 1 else -1,
                dice=dice,
                score_bottom=self.score[1],
                score_top=self.score[0],
                rules=rules,
                length=self.length,
                max_cube_exponent=XGID_DEFAULT_MAX_CUBE if max_cube is None else max_cube.bit_length() - 1,
            )
        )

    @classmethod
    def from_gnubg_id(
        cls,
        text: str,
        *,
        crawford: bool = True,
        beaver: bool = False,
        max_cube: int | None = None,
        game_number: int = 1,
    ) -> MatchState:
        """The state a gnubg ``PositionID:MatchID`` describes.

        The Match ID does not hold the Crawford rule, beavers, the cube limit or the game
        number, so they are parameters; the Jacoby rule is read from the ID. Like gnubg, the
        Crawford flag counts only when a player is one point short of the length, and
        post-Crawford play is read from the score.

        :raises InvalidIdError: the text does not decode, or describes a state the rules cannot
            reach (for example a finished board in a game still being played).
        """
        position, f = decode_gnubg_id(text)
        try:
            options = MatchOptions(
                crawford=crawford and f.length > 0, jacoby=f.jacoby, beaver=beaver, max_cube=max_cube
            )
            return cls._from_match_fields(position, f, options, game_number)
        except InvalidPositionError as exc:
            raise InvalidIdError(f"GNUbgID {quoted(text.strip())}: {exc}") from None

    @classmethod
    def _from_match_fields(
        cls, position: Position, f: MatchIdFields, options: MatchOptions, game_number: int
    ) -> MatchState:
        crawford, post_crawford = _crawford_flags(f.length, f.score, f.crawford, options)
        cube = Cube(f.cube, f.cube_owner)
        dice = Dice(f.dice[0], f.dice[1]) if f.dice[0] else None

        def build(
            phase: Phase,
            *,
            dice: Dice | None = None,
            last_result: GameResult | None = None,
            resigned: int = 0,
            beavered: bool = False,
        ) -> MatchState:
            return cls(
                length=f.length,
                score=f.score,
                cube=cube,
                on_roll=None if phase is Phase.OPENING else f.dice_owner,
                dice=dice,
                phase=phase,
                position=position,
                crawford=crawford,
                post_crawford=post_crawford,
                options=options,
                game_number=game_number,
                last_result=last_result,
                resigned=resigned,
                beavered=beavered,
            )

        if f.game_state is GameState.NONE:
            if position != Position.STARTING or dice or f.doubled or f.resigned:
                raise InvalidPositionError(
                    "before the opening roll the board is the starting position, with no dice, double or resignation"
                )
            return build(Phase.OPENING)
        on_roll = f.dice_owner
        if f.game_state is GameState.PLAYING:
            if position.is_game_over():
                raise InvalidPositionError("a side has borne off all its checkers, but the game is still on")
            if f.doubled:
                if f.resigned or dice:
                    raise InvalidPositionError("a double is answered before any roll or resignation")
                # The doubler answers only a beaver.
                return build(Phase.DOUBLED, beavered=f.turn == on_roll)
            if f.resigned:
                if f.turn == on_roll:
                    raise InvalidPositionError("only the player on roll can have offered to resign")
                return build(Phase.RESIGNED, dice=dice, resigned=f.resigned)
            if f.turn != on_roll:
                raise InvalidPositionError("the turn is the dice owner's unless a double or resignation is offered")
            return build(Phase.ROLL if dice is None else Phase.MOVE, dice=dice)
        if f.game_state is GameState.OVER:
            if any(position[1]):
                raise InvalidPositionError("the game is over, but the winner still has checkers on the board")
            winner, kind, end = 1 - on_roll, _points_of_win(position[0]), GameEnd.PLAYED
        elif f.game_state is GameState.RESIGNED:
            if not f.resigned:
                raise InvalidPositionError("the game was resigned, but the resignation is not on record")
            winner, kind, end = f.turn, f.resigned, GameEnd.RESIGNED
        else:
            winner, kind, end = 1 - f.turn, SINGLE, GameEnd.DROPPED
        jacoby = not f.length and options.jacoby and cube.is_centred
        points = f.cube * (SINGLE if end is GameEnd.DROPPED or jacoby else kind)
        over = bool(f.length) and max(f.score) >= f.length
        return build(
            Phase.MATCH_OVER if over else Phase.GAME_OVER,
            dice=dice,
            last_result=GameResult(winner, points, kind, end, f.cube),
            resigned=f.resigned if end is GameEnd.RESIGNED else 0,
        )

    @classmethod
    def from_xgid(cls, text: str, *, crawford: bool = True) -> MatchState:
        """The state an XGID describes (player 1 is the bottom player).

        The XGID holds the Jacoby and beaver rules (money) and the Crawford flag (match); the
        Crawford rule itself is a parameter. A max cube exponent of 10 (XG's default) reads as
        no limit. The result is always a game in play: rolling, moving or answering a double.

        :raises InvalidIdError: the text does not decode, or the game or match it shows is
            already over, or it offers a raccoon.
        """
        x = decode_xgid(text)
        where = f"XGID {quoted(text.strip())}"
        if x.dice == XGID_RACCOONED:
            raise InvalidIdError(f"{where}: raccoons (R) are not part of the rules we play")
        doubled = x.dice in (XGID_DOUBLED, XGID_BEAVERED)
        beavered = x.dice == XGID_BEAVERED
        turn_player = 1 if x.turn == 1 else 0
        # With B the turn names the beaverer; the doubler is still the player on roll.
        on_roll = 1 - turn_player if beavered else turn_player
        score = (x.score_top, x.score_bottom)
        if x.length and max(score) >= x.length:
            raise InvalidIdError(f"{where}: score {score[1]}-{score[0]} has already won the {x.length}-point match")
        money = x.length == 0
        if beavered and not (money and x.rules & 2):
            raise InvalidIdError(f"{where}: a beaver (B) needs money play with beavers allowed")
        owner = {1: 1, -1: 0, 0: None}[x.cube_owner]
        max_cube = None if x.max_cube_exponent == XGID_DEFAULT_MAX_CUBE else 1 << x.max_cube_exponent
        bottom, top = x.bottom_and_top()
        try:
            position = Position(bottom, top) if on_roll == 1 else Position(top, bottom)
            options = MatchOptions(
                crawford=crawford and not money,
                jacoby=money and bool(x.rules & 1),
                beaver=money and bool(x.rules & 2),
                max_cube=max_cube,
            )
            crawford_game, post_crawford = _crawford_flags(x.length, score, bool(x.rules) and not money, options)
            if position.is_game_over():
                raise InvalidPositionError("a side has borne off all its checkers: the game is over")
            if doubled:
                phase, dice = Phase.DOUBLED, None
            elif x.dice == XGID_NOT_ROLLED:
                phase, dice = Phase.ROLL, None
            else:
                phase, dice = Phase.MOVE, Dice(int(x.dice[0]), int(x.dice[1]))
            return cls(
                length=x.length,
                score=score,
                cube=Cube(x.cube, owner),
                on_roll=on_roll,
                dice=dice,
                phase=phase,
                position=position,
                crawford=crawford_game,
                post_crawford=post_crawford,
                options=options,
                beavered=beavered,
            )
        except InvalidPositionError as exc:
            raise InvalidIdError(f"{where}: {exc}") from None


def _crawford_flags(length: int, score: tuple[int, int], flag: bool, options: MatchOptions) -> tuple[bool, bool]:
    """``(crawford, post_crawford)`` as gnubg reads them from a score and a Crawford flag."""
    one_away = length > 1 and length - 1 in score
    if flag and not options.crawford:
        raise InvalidPositionError("the Crawford game is marked but the Crawford rule is off")
    if not options.crawford:
        return False, False
    return flag and one_away, not flag and one_away
