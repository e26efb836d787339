# SPDX-License-Identifier: MIT
"""Follow a match as it is played on the board: a pure state machine with injected time.

The :class:`Controller` takes what the board and the players say (still readings from the
stabiliser, button presses, keyboard commands, clock ticks), each with its time, and answers
with :class:`Event` values: what to say on the console, what to store (an engine action with
its source and confidence), and what the LEDs should show. It does no I/O and keeps no clock,
so it is tested by feeding it readings built from engine positions.

What it follows:

- the opening roll: each player rolls one die on his own right-hand side (player 1's right is
  the ``right`` half, player 2's the ``left``); equal dice roll again;
- each roll: two flat dice on the roller's right-hand side, read once they have lain for the
  settle time; a cocked die or a die on the wrong half is called for a re-roll;
- each move: judged once the board has been still for the settle time and the player presses
  "done" or picks up his dice; a move in progress is not an error; an illegal one (referee
  mode) lights its points and waits until the board is put back or made legal; in log mode it
  is noted and the nearest legal play recorded;
- the cube: a double, take or drop from the cube (or doubling-track counter) moving, or from
  the buttons;
- game and match end, from the engine's :class:`~engine.match.MatchState`;
- teach mode (``teach=True``): after each roll it asks for a hint with a ``hint``
  :class:`~bgboard.events.Request` on :attr:`Controller.requests`, a channel of its own beside
  the events; whoever runs it (the :class:`~bgboard.table.Table`) asks the hint engine and answers
  with :meth:`Controller.on_hint`. The best play then lights up (from-points blue, to-points
  blinking green) until the move is recorded, counts as a prior when the move is judged
  (:data:`~bgboard.explain.HINT_PRIOR`), and the move recorded gets gnubg's verdict
  (``feedback``), stored in its note. The hint button asks at any time, in any mode: plays
  during a move, cube advice (:meth:`Controller.on_cube_hint`) before a roll or when doubled.

A reading the rules cannot settle clearly (see :mod:`bgboard.explain`) asks the players to
check: "done" confirms the best legal result, :meth:`Controller.correct` gives the right one,
recorded with source ``correction``.

Against gnubg (``gnubg=`` the engine player it plays): whenever gnubg must act the controller
asks with a ``gnubg`` request (:meth:`Controller.ask_gnubg`), answered through :meth:`Controller.on_gnubg_move`,
:meth:`~Controller.on_gnubg_double`, :meth:`~Controller.on_gnubg_take` and
:meth:`~Controller.on_gnubg_resign`. Its doubles, takes, drops and answers to a resignation are
recorded at once (source ``gnubg``) and said; the players roll real dice for it; its move lights
up as a hint does (from-points blue, to-points blinking green), a person moves its checkers,
and only that move is recorded: any other board marks the points that differ (red, as an
illegal move) until the checkers are set as gnubg played.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from bgboard.events import Event, EventKind, Request, number
from bgboard.explain import CLEAR, HINT_PRIOR, Candidate, Explanation, explain, reading_position
from engine.dice import Dice
from engine.errors import BackgammonError, quoted
from engine.hints import CubeAdvice, HintError, RankedPlay, state_to_double
from engine.judge import Judgement, RawBoard, judge, partial_positions
from engine.match import (
    AcceptResign,
    Action,
    Beaver,
    Double,
    Drop,
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
from engine.play import Play
from engine.position import Position
from hardware.presenter import present, seat_of
from hardware.scene import Scene
from vision.reading import BoardReading, DieOnBoard

Mode = Literal["referee", "log"]

#: Seconds the dice, or a finished move with the dice picked up, must lie still before they count.
SETTLE: Final = 0.6
#: A cube reading below this confidence is not acted on.
CUBE_CONFIDENCE: Final = 0.6
#: Dice read below this confidence are not recorded: the players are asked to enter them.
DICE_CONFIDENCE: Final = 0.6
#: Pixels a die may seem to shift between two readings and still be the same die lying there.
SAME_DIE_PIXELS: Final = 12.0

#: Slack for times that are sums of floating-point seconds.
_EPSILON: Final = 1e-6

_RESIGN_WORDS: Final = {"single": 1, "gammon": 2, "backgammon": 3, "1": 1, "2": 2, "3": 3}


@dataclass(frozen=True, slots=True)
class _Hint:
    """The hint engine's ranked plays (best first) for one state waiting for its move."""

    state: MatchState
    plays: tuple[RankedPlay, ...]

    @property
    def best(self) -> RankedPlay | None:
        return self.plays[0] if self.plays else None


def _same_dice(a: tuple[DieOnBoard, ...], b: tuple[DieOnBoard, ...]) -> bool:
    """The same dice lying where they lay (a die read twice moves a pixel or two)."""
    if len(a) != len(b):
        return False
    left = sorted(a, key=lambda d: (d.value, d.center))
    right = sorted(b, key=lambda d: (d.value, d.center))
    return all(
        x.value == y.value and math.dist(x.center, y.center) <= SAME_DIE_PIXELS
        for x, y in zip(left, right, strict=True)
    )


#: The commands typed at the console, for the answer to a word that is none of them.
COMMANDS: Final = (
    "done, undo [reopen], double, take, drop, hint, resign [gammon|backgammon], accept, reject, dice 52,"
    " correct 13/8 13/11,"
    " teach on|off"
)


#: What gnubg decides itself when it plays a side: nobody else may do it for it.
_GNUBGS_OWN: Final = (Double, Take, Drop, Resign, AcceptResign, RejectResign)


class Controller:
    """Follow one match on the board.

    :param state: the match as it stands (a new match, or one resumed from the store).
    :param mode: ``referee`` (judge and record) or ``log`` (record only; illegal moves noted).
    :param settle: seconds dice, or a finished board with the dice picked up, must lie still.
    :param bottom_player: the engine's index (0 or 1) of the player at seat 1, the bottom of the
        camera's view, whose numbering the board uses; by default 1, gnubg's bottom player (the
        app passes the config's ``player_at_bottom``, by default the first named).
    :param names: the names of the players (engine indexes 0 and 1), for the console's words.

    In the events' fields players are numbered as people number them: ``"player": 1`` is the
    first of ``names`` (engine index 0), 2 the second; so are ``on_roll`` and ``winner``.
    :param teach: ask for a hint after every roll (a ``hint`` request), show it, use it as
        a prior, and give feedback on each move against it.
    :param gnubg: the engine player (0 or 1) gnubg plays, or ``None`` when people play both sides.
    """

    def __init__(
        self,
        state: MatchState,
        *,
        mode: Mode = "referee",
        settle: float = SETTLE,
        bottom_player: int = 1,
        names: tuple[str, str] = ("player 1", "player 2"),
        teach: bool = False,
        gnubg: int | None = None,
    ) -> None:
        if mode not in ("referee", "log"):
            raise ValueError(f"mode is 'referee' or 'log', not {mode!r}")
        if bottom_player not in (0, 1):
            raise ValueError(f"the bottom player is 0 or 1, not {bottom_player!r}")
        if gnubg not in (None, 0, 1):
            raise ValueError(f"gnubg plays engine player 0 or 1, not {gnubg!r}")
        self.state = state
        self.gnubg = gnubg
        # gnubg's move for the state it was asked in, with the board it leaves (mover's view).
        self._gnubg_move: tuple[MatchState, Play, Position] | None = None
        # The state gnubg was last asked about: asked once per state, whatever the answer.
        self._gnubg_asked: MatchState | None = None
        #: What the controller needs from whoever runs it (a hint, gnubg's action), in order,
        #: until taken (:meth:`take_requests`): not news for the players, so not events.
        self.requests: list[Request] = []
        # Where the players refused gnubg's resignation: it plays on from there.
        self._gnubg_refused: MatchState | None = None
        #: gnubg answers for its side; set ``False`` by whoever asks it while it cannot (the
        #: players then double, take, drop and resign for it), ``True`` again once it answers.
        self.gnubg_answering = True
        self.mode: Mode = mode
        self.settle = settle
        self.bottom_player = bottom_player
        self.names = names
        self.teach = teach
        # The last hint accepted, kept with the state it is for: it applies while the match
        # stands there, and again if an undo or a correction comes back to that state.
        self._hint: _Hint | None = None
        self._history: list[MatchState] = []
        self._last_reading: BoardReading | None = None
        self._reset_turn()
        self._cube_seen: tuple[int, int | None] | None = None
        self._cube_offered = False
        # The finished match an undo was asked about: the next undo there reopens it.
        self._reopen_asked: MatchState | None = None

    # -- state between inputs -----------------------------------------------------------------

    def _reset_turn(self) -> None:
        """Forget what was seen of the last roll or move (the match moved on)."""
        self._pending_dice: tuple[tuple[DieOnBoard, ...], float] | None = None
        self._reroll: tuple[DieOnBoard, ...] | None = None
        self._unclear: tuple[DieOnBoard, ...] | None = None
        # Dice still lying from the last roll are not a new roll.
        self._stale: tuple[DieOnBoard, ...] = self._last_reading.dice if self._last_reading else ()
        self._board: Explanation | None = None
        self._board_key: tuple[int, ...] | None = None
        self._board_since = 0.0
        self._dice_down = True
        self._decided: tuple[int, ...] | None = None
        self._judgement: Judgement | None = None
        self._check: Explanation | None = None
        self._set_up_said = False
        self._cache: tuple[LegalPlays, dict[Position, tuple[int, ...]]] | None = None

    @property
    def judgement(self) -> Judgement | None:
        """The verdict the LEDs show (an illegal move in referee mode), if any."""
        return self._judgement

    @property
    def please_check(self) -> bool:
        """A doubtful reading or a re-roll waits for the players."""
        return self._check is not None or self._reroll is not None or self._unclear is not None

    @property
    def doubt(self) -> Explanation | None:
        """The doubtful reading of a move the players are asked to check, with its candidates."""
        return self._check

    def check_points(self) -> tuple[int, ...]:
        """The points (player 1's numbering) to check, if the doubt is about particular points."""
        return () if self._check is None else self._check.doubtful_points()

    @property
    def hint(self) -> RankedPlay | None:
        """The hinted best play for the move being played now, if one is known."""
        hint = self._current_hint()
        return None if hint is None else hint.best

    @property
    def ranked_plays(self) -> tuple[RankedPlay, ...]:
        """The hint engine's ranked plays for the move being played now (empty if not known)."""
        hint = self._current_hint()
        return () if hint is None else hint.plays

    def _current_hint(self) -> _Hint | None:
        hint = self._hint
        # Identity first: the state object is kept while the match stands still (every frame).
        if hint is None or not (hint.state is self.state or hint.state == self.state):
            return None
        return hint

    @property
    def gnubg_move(self) -> Play | None:
        """gnubg's move for the roll it has to play now, once it has said it."""
        known = self._gnubg_known()
        return None if known is None else known[0]

    def _gnubg_known(self, state: MatchState | None = None) -> tuple[Play, Position] | None:
        """gnubg's play and the board it leaves, if it said its move for ``state`` (default: now)."""
        move, state = self._gnubg_move, self.state if state is None else state
        if move is None or not (move[0] is state or move[0] == state):
            return None
        return move[1], move[2]

    def scene(self) -> Scene:
        """What the LEDs show now (see :func:`hardware.presenter.present`)."""
        points = self.check_points()
        check: bool | tuple[int, ...] = points if points else self.please_check
        best = self.hint
        # The empty play (no legal move) lights nothing; a hint is shown until the move is recorded.
        shown = best.play if best is not None and best.play and self.state.phase is Phase.MOVE else None
        gnubgs = self.gnubg_move
        if gnubgs is not None:
            # gnubg's move is shown the way a hint is, until its checkers are moved so.
            shown = gnubgs or None
        return present(self.state, self._judgement, hint=shown, check=check, bottom_player=self.bottom_player)

    def seat(self, player: int) -> int:
        """The seat (1 bottom, 2 top) of engine player ``player``."""
        return seat_of(player, self.bottom_player)

    # -- inputs ---------------------------------------------------------------------------------

    def on_reading(self, reading: BoardReading, t: float) -> list[Event]:
        """A still reading of the board at time ``t`` (seconds, any monotonic origin)."""
        if reading.occluded:
            return self.on_motion(t)
        self._last_reading = reading
        events = self.ask_gnubg() + self._cube(reading)
        phase = self.state.phase
        if phase in (Phase.OPENING, Phase.GAME_OVER):
            events += self._opening(reading, t)
        elif phase is Phase.ROLL:
            events += self._roll(reading, t)
        elif phase is Phase.MOVE:
            events += self._move_reading(reading, t)
        return events

    def on_motion(self, t: float) -> list[Event]:
        """Something moves over the board (a hand, rolling dice): settle times start again."""
        self._pending_dice = None
        self._board_key = None
        return []

    def on_tick(self, t: float) -> list[Event]:
        """Time passed with no new reading: dice or a finished move may have settled."""
        phase = self.state.phase
        reading = self._last_reading
        if reading is None or reading.occluded:
            return self.ask_gnubg()
        if phase in (Phase.OPENING, Phase.GAME_OVER):
            return self._opening(reading, t)
        if phase is Phase.ROLL:
            return self._roll(reading, t)
        if phase is Phase.MOVE:
            return self._maybe_picked_up(t)
        return []

    def on_button(self, name: str, t: float, *, source: str = "button") -> list[Event]:
        """A named press: ``done``, ``undo``, ``double``, ``take``, ``drop`` or ``hint``.

        While a resignation is offered, ``take`` accepts it and ``drop`` refuses it.
        """
        phase = self.state.phase
        if name == "done":
            return self._done(t, source)
        if name == "undo":
            return self._undo(source)
        if name == "hint":
            return self._hint_button()
        if name in ("take", "drop") and phase is Phase.RESIGNED:
            action: Action = AcceptResign() if name == "take" else RejectResign()
            return self._record(action, source)
        if name == "double":
            return self._record(Double(by=self.state.on_roll), source)
        if name == "take":
            return self._record(Take(by=self.state.turn), source)
        if name == "drop":
            return self._record(Drop(by=self.state.turn), source)
        return [Event("unknown", f"no button named {quoted(name)}", {"button": name})]

    def on_command(self, text: str, t: float) -> list[Event]:
        """A line typed at the console.

        ``done``, ``undo``, ``double``, ``take``, ``drop``, ``hint``; ``resign [single|gammon|
        backgammon]``, ``accept``, ``reject``; ``correct <play or Position ID>`` (or just a
        play such as ``13/7 8/7``); ``dice 31`` to give a roll the camera cannot read (for the
        opening roll, the bottom player's die first); ``teach on`` / ``teach off`` (hints after
        each roll, and the verdict on each move).
        """
        words = text.strip().split(maxsplit=1)
        if not words:
            return []
        verb, rest = words[0].lower(), (words[1] if len(words) > 1 else "")
        if verb == "undo" and rest.strip().lower() == "reopen":
            return self._undo("keyboard", reopen=True)
        if verb in ("done", "undo", "double", "take", "drop", "hint"):
            return self.on_button(verb, t, source="keyboard")
        if verb == "resign":
            points = _RESIGN_WORDS.get(rest.strip().lower() or "single")
            if points is None:
                return [Event("unknown", f"resign single, gammon or backgammon, not {quoted(rest)}")]
            return self._record(Resign(points), "keyboard")
        if verb == "accept":
            return self._record(AcceptResign(), "keyboard")
        if verb == "reject":
            return self._record(RejectResign(), "keyboard")
        if verb == "dice":
            try:
                return self.correct(Dice.parse(rest), t)
            except BackgammonError as exc:
                return [Event("unknown", str(exc))]
        if verb == "correct":
            return self.correct(rest, t)
        if verb == "teach":
            return self._teach(rest.strip().lower())
        bare = text.strip()
        if "/" in bare or len(bare) == 14:
            # A play (13/8 13/11) or a Position ID given alone: a correction.
            return self.correct(bare, t)
        return [Event("unknown", f"unknown command {quoted(words[0])}: {COMMANDS}")]

    def correct(self, value: Dice | Play | Position | str, t: float) -> list[Event]:
        """The players say what the board shows: a roll, a play, or the position after the move.

        A position is seen from the player who moved (the engine's view before the turn passes);
        a string is a play (``13/7 8/7``) or a gnubg Position ID. During a move it is that move;
        just after a move was recorded it replaces it. Stored with source ``correction``.
        """
        undo = 0
        state = self.state
        if isinstance(value, Dice) and state.phase in (Phase.OPENING, Phase.GAME_OVER):
            # One die each: the first named is the bottom player's (seat 1).
            first, second = value.first, value.second
            die0, die1 = (first, second) if self.seat(0) == 1 else (second, first)
            if die0 == die1:
                return [Event("refused", "equal opening dice: roll again", verdict=None)]
            self._unclear = None
            return self._record(OpeningRoll(die0, die1), "correction", note="opening roll given by the players")
        if isinstance(value, Dice):
            self._unclear = None
            if state.phase is not Phase.ROLL:
                return [Event("refused", "a roll can only be given before the move", verdict=None)]
            return self._record(Roll(value, by=state.on_roll), "correction", note="roll given by the players")
        if state.phase is not Phase.MOVE and self._history and self._history[-1].phase is Phase.MOVE:
            # The move just recorded was wrong: take it back and record the right one.
            state, undo = self._history[-1], 1
        if state.phase is not Phase.MOVE:
            return [Event("refused", "there is no move to correct now")]
        play: Play | Position | str = value
        if isinstance(value, str):
            text = value.strip()
            # Position IDs are base64, so they may hold a "/" too: try the ID first.
            if len(text) == 14:
                with contextlib.suppress(BackgammonError):
                    play = Position.from_id(text)
        if isinstance(play, Position) and state.dice is not None:
            # Store the play, not the board: the record formats write plays.
            play = legal_plays(state.position, state.dice).play_for(play) or play
        action = Move(play, by=state.on_roll)
        try:
            refusal = state.refusal(action)
        except BackgammonError as exc:
            # A mistyped play at the console: say so, and keep the game going.
            return [Event("refused", f"not a play: {exc}", {"correction": str(value)})]
        if refusal is not None:
            return [Event("refused", refusal, {"correction": str(value)})]
        wrong = self._not_gnubgs_words(state, action)
        if wrong is not None:
            return [Event("refused", wrong, {"correction": str(value)})]
        if undo:
            self.state = self._history.pop()
        return self._record(action, "correction", note="corrected by the players", undo=undo)

    # -- the cube -------------------------------------------------------------------------------

    def _cube(self, reading: BoardReading) -> list[Event]:
        """Double, take or drop from the cube or counter moving to a new place."""
        cube = reading.cube
        if cube is None or cube.confidence < CUBE_CONFIDENCE:
            return []
        owner = None if cube.owner is None else (self.bottom_player if cube.owner == 1 else 1 - self.bottom_player)
        seen = (cube.value, owner)
        if seen == self._cube_seen:
            return []
        first = self._cube_seen is None
        self._cube_seen = seen
        if first:
            return []
        state = self.state
        now = (state.cube.value, state.cube.owner)
        events: list[Event] = []
        doubled = cube.value == state.cube.value * 2
        if state.phase is Phase.ROLL and doubled and state.on_roll is not None:
            taker = 1 - state.on_roll
            events += self._record(Double(by=state.on_roll), "camera", confidence=cube.confidence)
            if owner == taker and self.state.phase is Phase.DOUBLED:
                events += self._record(Take(by=taker), "camera", confidence=cube.confidence)
            else:
                self._cube_offered = self.state.phase is Phase.DOUBLED
        elif state.phase is Phase.DOUBLED and state.on_roll is not None:
            taker = 1 - state.on_roll
            if doubled and owner == taker:
                events += self._record(Take(by=taker), "camera", confidence=cube.confidence)
            elif doubled:
                self._cube_offered = True
            elif seen == now and self._cube_offered:
                # The offered cube went back where it was: the double is refused.
                events += self._record(Drop(by=taker), "camera", confidence=cube.confidence)
        return events

    # -- the opening roll and rolls -------------------------------------------------------------

    def _fresh_dice(self, reading: BoardReading) -> tuple[DieOnBoard, ...] | None:
        """The dice on the board unless they are the last roll's, still lying there."""
        if self._stale:
            if _same_dice(reading.dice, self._stale):
                return None
            self._stale = ()
        return reading.dice

    def _reroll_event(self, dice: tuple[DieOnBoard, ...], why: str) -> list[Event]:
        self._pending_dice = None
        if self._reroll is not None and _same_dice(dice, self._reroll):
            return []
        self._reroll = dice
        return [Event("re-roll", f"{why}: roll again", {"reason": why}, verdict="check")]

    def _unclear_event(self, dice: tuple[DieOnBoard, ...]) -> list[Event]:
        """Dice read too doubtfully to record: never a silent guess, the players say what they show."""
        self._pending_dice = None
        if self._unclear is not None and _same_dice(dice, self._unclear):
            return []
        self._unclear = dice
        values = [d.value for d in dice]
        fields: dict[str, Any] = {"dice": values, "confidence": min(d.confidence for d in dice)}
        if self.state.phase in (Phase.OPENING, Phase.GAME_OVER) and {d.half for d in dice} == {"left", "right"}:
            # Each die in its roller's half says whose it is: given as `dice` takes them at the
            # opening (the bottom player's first), the players may accept them as read.
            by_seat = {1 if d.half == "right" else 2: d.value for d in dice}
            fields["dice"], fields["bottom_first"] = [by_seat[1], by_seat[2]], True
        return [
            Event(
                "please-check",
                "the dice are hard to read: type what they show at the console, e.g. dice 64",
                fields,
                verdict="check",
            )
        ]

    def _settled(self, dice: tuple[DieOnBoard, ...], t: float) -> bool:
        """The dice have lain where they lie for the settle time."""
        self._reroll = None
        if self._pending_dice is None or not _same_dice(dice, self._pending_dice[0]):
            self._pending_dice = (dice, t)
        return t - self._pending_dice[1] >= self.settle - _EPSILON

    def _two_dice(self, reading: BoardReading) -> tuple[DieOnBoard, ...] | None:
        """The two fresh dice lying on the board, or None (and what was pending is forgotten)."""
        dice = self._fresh_dice(reading)
        if not dice or len(dice) != 2:
            self._pending_dice = None
            self._reroll = None
            return None
        return dice

    def _not_ready(self, dice: tuple[DieOnBoard, ...], halves_ok: bool, rule: str, t: float) -> list[Event] | None:
        """What to say while the dice cannot count yet (cocked, wrong half, unclear, still
        settling); None once they are flat, where ``rule`` wants them, clearly read and settled."""
        if not all(d.flat for d in dice):
            return self._reroll_event(dice, "a die is cocked")
        if not halves_ok:
            return self._reroll_event(dice, rule)
        if min(d.confidence for d in dice) < DICE_CONFIDENCE:
            return self._unclear_event(dice)
        self._unclear = None
        return None if self._settled(dice, t) else []

    def _opening(self, reading: BoardReading, t: float) -> list[Event]:
        dice = self._two_dice(reading)
        if dice is None:
            return []
        if self.state.phase is Phase.GAME_OVER and reading_position(reading, 1) != Position.STARTING:
            if self._set_up_said:
                return []
            self._set_up_said = True
            return [Event("set-up", "set up the board for the next game, then roll one die each")]
        halves_ok = {d.half for d in dice} == {"left", "right"}
        waiting = self._not_ready(dice, halves_ok, "each player rolls one die, on his own right-hand side", t)
        if waiting is not None:
            return waiting
        by_seat = {1 if d.half == "right" else 2: d for d in dice}
        die = {p: by_seat[self.seat(p)] for p in (0, 1)}
        confidence = min(d.confidence for d in dice)
        self._pending_dice = None
        if die[0].value == die[1].value:
            # Equal dice: the same two dice lying there are not a new roll.
            self._stale = dice
            value = die[0].value
            return [Event("opening-tie", f"both rolled {value}: roll again", {"dice": [value, value]})]
        return self._record(OpeningRoll(die[0].value, die[1].value), "camera", confidence=confidence)

    def _roll(self, reading: BoardReading, t: float) -> list[Event]:
        dice = self._two_dice(reading)
        if dice is None:
            return []
        state = self.state
        assert state.on_roll is not None
        right = "right" if self.seat(state.on_roll) == 1 else "left"
        halves_ok = all(d.half == right for d in dice)
        waiting = self._not_ready(dice, halves_ok, "the dice must land on the board to your right", t)
        if waiting is not None:
            return waiting
        self._pending_dice = None
        confidence = min(d.confidence for d in dice)
        # Two dice lying on the board have no order: the higher first, as records write them.
        high, low = sorted((dice[0].value, dice[1].value), reverse=True)
        return self._record(Roll(Dice(high, low), by=state.on_roll), "camera", confidence=confidence)

    # -- moves ------------------------------------------------------------------------------------

    def _plays(self) -> tuple[LegalPlays, dict[Position, tuple[int, ...]]]:
        if self._cache is None:
            state = self.state
            assert state.dice is not None
            legal = legal_plays(state.position, state.dice)
            self._cache = (legal, partial_positions(state.position, state.dice, legal))
        return self._cache

    def _move_reading(self, reading: BoardReading, t: float) -> list[Event]:
        state = self.state
        assert state.dice is not None and state.on_roll is not None
        legal, partials = self._plays()
        hinted = self.hint
        # Players often execute a shown play slightly wrong: a doubtful board near it is likely it.
        prior = {hinted.after: HINT_PRIOR} if hinted is not None else None
        gnubgs = self._gnubg_known()
        if gnubgs is not None:
            prior = {gnubgs[1]: HINT_PRIOR}
        board = explain(
            state.position, state.dice, reading, self.seat(state.on_roll), legal=legal, partials=partials, prior=prior
        )
        key = reading.points + reading.bar
        if key != self._board_key:
            if key != self._decided:
                self._decided = None
            self._board_key, self._board_since = key, t
        self._board = board
        self._dice_down = bool(reading.dice)
        events: list[Event] = []
        if self._check is not None and board.clear:
            self._check = None
        best = board.best
        if self._judgement is not None and board.clear and self._fine_now(best):
            self._judgement = None
            if best.kind == "before":
                events.append(Event("put-back", "the checkers are back: play your roll", verdict="legal"))
            elif self._gnubg_known() is not None:
                events.append(Event("legal-now", f"that is {self._name(self.gnubg)}'s move now", verdict="legal"))
            else:
                events.append(Event("legal-now", "that is a legal play now", verdict="legal"))
        return events + self._maybe_picked_up(t)

    def _maybe_picked_up(self, t: float) -> list[Event]:
        """Judge the board once the dice are picked up and it has lain still for the settle time."""
        # No key: something moved since the board was read, and what lies there now is unknown.
        if self._dice_down or self._board is None or self._board_key is None or self._board_key == self._decided:
            return []
        if t - self._board_since < self.settle - _EPSILON:
            return []
        return self._decide("camera", asked=False)

    def _decide(self, source: str, *, asked: bool = True) -> list[Event]:
        """Judge the board as it stands; ``asked``: the player pressed done (else he picked up his dice)."""
        board = self._board
        assert board is not None
        self._decided = self._board_key
        state = self.state
        assert state.dice is not None
        best = board.best
        if not board.clear:
            close = [c for c in board.candidates if board.best.score - c.score < CLEAR]
            if all(c.kind in ("before", "partial") for c in close):
                # Unsure only how far the move has got: nothing to decide yet, so nothing to ask.
                return self._unfinished(asked)
            return self._ask(board)
        if best.kind == "legal":
            assert best.play is not None and best.position is not None
            gnubgs = self._gnubg_known()
            if gnubgs is not None and best.position != gnubgs[1]:
                return self._not_gnubgs(best.play, best.position)
            return self._record(Move(best.play, by=state.on_roll), source, confidence=board.share)
        if best.kind in ("partial", "before"):
            return self._unfinished(asked)
        after = best.position if best.position is not None else board.raw
        j = judge(state.position, state.dice, after)
        if j.verdict == "unreadable":
            return self._ask(board, j.reasons)
        if j.verdict != "illegal":
            # The judge and the candidates agree by construction; this is a safety net.
            return self._ask(board)
        return self._illegal(j, after)

    def _unfinished(self, asked: bool) -> list[Event]:
        """The move is not finished (or not begun): tell a player who pressed done, else wait."""
        board, state = self._board, self.state
        if not asked or board is None or state.dice is None:
            # Dice picked up with the move unfinished: still in progress, not an error.
            return []
        best = board.best
        if best.kind == "before" or best.position is None:
            return [Event("not-moved", "nothing has moved yet: play your roll", verdict="partial")]
        left = "; ".join(judge(state.position, state.dice, best.position).reasons) or "the move is not finished"
        return [Event("in-progress", f"not finished yet: {left}", {"left": left}, verdict="partial")]

    def _ask(self, board: Explanation, reasons: tuple[str, ...] = ()) -> list[Event]:
        self._check = board
        known = board.best_known
        points = board.doubtful_points()
        guess = "" if known is None or known.play is None else f" (best guess: {known.play or 'no move'})"
        why = "; ".join(reasons) if reasons else "the board is not read clearly"
        where = f" on point{'s' if len(points) > 1 else ''} {', '.join(map(str, points))}" if points else ""
        fields: dict[str, Any] = {"points": list(points), "reasons": list(reasons)}
        if known is not None and known.play is not None:
            fields["best"] = str(known.play)
        text = f"please check{where}: {why}{guess}; press done to confirm or give the right move"
        return [Event("please-check", text, fields, verdict="check")]

    def _illegal(self, j: Judgement, after: Position | RawBoard | None = None) -> list[Event]:
        reasons = "; ".join(j.reasons)
        fields: dict[str, Any] = j.to_json()
        if after is not None:
            # The board as read (the mover's numbering, index 24 the bar): the live page draws
            # the illegal move as made from it.
            fields["read"] = {"mover": list(after.mover), "opponent": list(after.opponent)}
        if self.mode == "log":
            state = self.state
            play = j.nearest[0] if j.nearest else Play()
            note = f"illegal move noted ({reasons}); recorded as {play or 'no move'}"
            events = [Event("noted", f"illegal move noted: {reasons}", fields)]
            return events + self._record(Move(play, by=state.on_roll), "camera", confidence=0.0, note=note)
        self._judgement = j
        text = f"illegal move: {reasons}; put the checkers back or play legally"
        return [Event("illegal", text, fields, verdict="illegal")]

    def _done(self, t: float, source: str) -> list[Event]:
        state = self.state
        if state.phase is not Phase.MOVE:
            return [Event("refused", f"nothing to confirm: {state.phase.value}")]
        if self._check is not None:
            known = self._check.best_known
            if known is None or known.kind != "legal" or known.play is None:
                return [Event("refused", "no legal move matches the board: give the right move", verdict="check")]
            wrong = self._not_gnubgs_words(state, Move(known.play, by=state.on_roll))
            if wrong is not None:
                return [Event("refused", wrong, verdict="check")]
            return self._record(Move(known.play, by=state.on_roll), source, note="confirmed by the players")
        if self._board is None:
            return [Event("refused", "the board has not been read yet")]
        return self._decide("camera", asked=True)

    # -- recording --------------------------------------------------------------------------------

    def _record(
        self,
        action: Action,
        source: str,
        *,
        confidence: float | None = None,
        note: str | None = None,
        undo: int = 0,
    ) -> list[Event]:
        """Apply ``action`` to the match, or say why the rules refuse it."""
        before = self.state
        if (
            self.gnubg is not None
            and self.gnubg_answering
            and source != "gnubg"
            and isinstance(action, _GNUBGS_OWN)
            and (action.by if action.by is not None else before.turn) == self.gnubg
        ):
            # Its cube and its resignations are gnubg's to decide: it is asked, not told.
            name = self._name(self.gnubg)
            return [Event("refused", f"{name} decides its own cube actions and resignations", {"source": source})]
        try:
            after = before.apply(action)
        except BackgammonError as exc:
            return [Event("refused", str(exc), {"action": type(action).__name__})]
        # Judged against the hint before recording, so that the verdict is stored with the move.
        feedback = self._feedback(before, after) if isinstance(action, Move) else None
        if feedback is not None:
            remark = feedback.note
            note = f"{note}; {remark}" if note and remark else (note or remark)
        self._history.append(before)
        self.state = after
        if isinstance(action, RejectResign) and before.on_roll == self.gnubg:
            self._gnubg_refused, self._gnubg_asked = after, None
        if action.__class__ is not Double or after.phase is not Phase.DOUBLED:
            self._cube_offered = False
        self._reset_turn()
        kind, text, fields = _describe(before, action, after, self.names)
        if before.turn is not None:
            fields = {"player": number(before.turn), **fields}
        if undo:
            kind, text = "correction", f"corrected: {text}"
        events = [Event(kind, text, fields, action, source, confidence, note, undo, verdict=None)]
        if feedback is not None:
            events.append(feedback)
        if self._teaching(after):
            self._want(self._hint_request(asked=False))
        if after.is_over() and after.last_result is not None:
            result = after.last_result
            score = {"score": list(after.score), "winner": number(result.winner), "points": result.points}
            said = str(result).replace(f"player {result.winner}", self.names[result.winner], 1)
            words = f"{said}; score {after.score[0]}-{after.score[1]}"
            events.append(Event("game-over", words, score))
            if after.phase is Phase.MATCH_OVER:
                events.append(
                    Event(
                        "match-over",
                        f"{self.names[after.winner or 0]} wins the match {after.score[0]}-{after.score[1]}",
                        score,
                    )
                )
            elif after.crawford:
                events.append(Event("crawford", "the next game is the Crawford game: no doubling"))
        return events + self.ask_gnubg()

    def _undo(self, source: str, *, reopen: bool = False) -> list[Event]:
        if not self._history:
            return [Event("refused", "nothing to take back")]
        over = self.state.phase is Phase.MATCH_OVER
        if over and not reopen and self._reopen_asked is not self.state:
            # The match is won and its file written: a stray press must not reopen it.
            self._reopen_asked = self.state
            text = "the match is over: undo again (or type 'undo reopen') to take back its last action and reopen it"
            return [Event("refused", text, {"ask": "undo reopen"})]
        self._reopen_asked = None
        self.state = self._history.pop()
        self._reset_turn()
        phase = self.state.phase.value
        events = [Event("undo", f"taken back: now {phase}", {"phase": phase}, source=source, undo=1)]
        if self._teaching(self.state):
            self._want(self._hint_request(asked=False))
        # Taken back to where gnubg acts: it is asked again (its noise is the same for a position).
        self._gnubg_asked = None
        return events + self.ask_gnubg()

    # -- gnubg at the board -------------------------------------------------------------------

    def _teaching(self, state: MatchState) -> bool:
        """Teach mode hints this state's move: a person's move, not gnubg's."""
        return self.teach and state.phase is Phase.MOVE and state.on_roll != self.gnubg

    def _name(self, player: int | None) -> str:
        return "" if player is None else self.names[player]

    def ask_gnubg(self) -> list[Event]:
        """Ask for gnubg's action (a ``gnubg`` :class:`~bgboard.events.Request` on
        :attr:`requests`) if gnubg must act now and was not asked in this state.

        The request's fields say what is wanted: ``move`` (its play for the roll), ``double`` (whether
        it doubles before its roll), ``take`` (its answer to a double) or ``resign`` (its
        answer to a resignation). Before a roll on which gnubg cannot double, the players are
        told to roll for it instead.
        """
        state, player = self.state, self.gnubg
        if player is None or state.turn != player:
            return []
        if self._gnubg_asked is state or self._gnubg_asked == state:
            return []
        self._gnubg_asked = state
        refused = self._gnubg_refused is not None and self._gnubg_refused == state
        fields: dict[str, Any] = {"gnubgid": state.gnubg_id(), "player": number(player), "may_resign": not refused}
        name = self._name(player)
        if state.phase is Phase.MOVE:
            return self._want(Request("gnubg", f"asking {name} for its move", {**fields, "wanted": "move"}))
        if state.phase is Phase.ROLL:
            if not state.can_double():
                return [Event("gnubg-roll", f"roll the dice for {name}", {"player": number(player)})]
            return self._want(Request("gnubg", f"asking {name} whether it doubles", {**fields, "wanted": "double"}))
        if state.phase is Phase.DOUBLED and not state.beavered:
            return self._want(Request("gnubg", f"asking {name} to take or drop", {**fields, "wanted": "take"}))
        if state.phase is Phase.RESIGNED:
            return self._want(Request("gnubg", f"asking {name} about the resignation", {**fields, "wanted": "resign"}))
        return []

    def _gnubg_now(self, gnubgid: str, phase: Phase) -> bool:
        """An answer from gnubg still applies: the match stands where it was asked."""
        state = self.state
        return state.phase is phase and state.turn == self.gnubg and gnubgid == state.gnubg_id()

    def on_gnubg_move(self, gnubgid: str, play: Play, t: float) -> list[Event]:
        """gnubg's play for the roll in the state ``gnubgid`` names (ignored if stale).

        Lit as a hint is, and the only board recorded for this move.
        """
        if not self._gnubg_now(gnubgid, Phase.MOVE):
            return []
        state = self.state
        assert state.dice is not None
        legal = legal_plays(state.position, state.dice)
        after = next((position for position, canonical in legal.results.items() if canonical == play), None)
        if after is None and not play and not legal.results:
            after = state.position  # no legal move: the checkers stay
        if after is None:
            return [Event("gnubg-unavailable", f"gnubg's move {play} is not legal here: play its move for it")]
        self._gnubg_move = (state, play, after)
        name = self._name(self.gnubg)
        fields: dict[str, Any] = {"play": str(play), "player": number(self.gnubg)}
        if not play:
            text = f"{name} cannot move with {state.dice.spoken()}: pick up its dice"
        else:
            text = f"{name} plays {play}: move its checkers as the lights show"
        return [Event("gnubg-move", text, fields)]

    def on_gnubg_resigns(self, gnubgid: str, points: int, t: float) -> list[Event]:
        """gnubg offers to resign ``points`` per cube (ignored if stale): recorded at once, and
        the players accept or refuse it (``accept``/``reject``, or the take/drop buttons)."""
        state = self.state
        if state.phase not in (Phase.ROLL, Phase.MOVE) or not self._gnubg_now(gnubgid, state.phase):
            return []
        events = self._record(Resign(points), "gnubg")
        other = self._name(1 - (self.gnubg or 0))
        text = f"{self._name(self.gnubg)} offers to resign: {other} accepts or rejects"
        return [*events, Event("gnubg-resigns", text, {"points": points, "player": number(self.gnubg)})]

    def on_gnubg_double(self, gnubgid: str, doubles: bool, t: float) -> list[Event]:
        """gnubg's decision before its roll (ignored if stale): a double is recorded at once."""
        if not self._gnubg_now(gnubgid, Phase.ROLL):
            return []
        name, value = self._name(self.gnubg), self.state.cube.value * 2
        if not doubles:
            return [
                Event("gnubg-roll", f"{name} does not double: roll the dice for it", {"player": number(self.gnubg)})
            ]
        events = self._record(Double(by=self.gnubg), "gnubg")
        other = self._name(1 - (self.gnubg or 0))
        text = f"{name} doubles: turn the cube to {value} and offer it to {other}, who takes or drops"
        return [*events, Event("gnubg-cube", text, {"action": "double", "cube": value, "player": number(self.gnubg)})]

    def on_gnubg_take(self, gnubgid: str, answer: bool | str, t: float) -> list[Event]:
        """gnubg's answer to a double, ``take``, ``beaver`` or ``drop`` (``True`` is a take,
        ``False`` a drop), recorded at once; ignored if stale. A beaver the session does not
        allow is recorded as the take it includes."""
        if not self._gnubg_now(gnubgid, Phase.DOUBLED):
            return []
        kind = {True: "take", False: "drop"}.get(answer, answer) if isinstance(answer, bool) else answer
        if kind == "beaver" and Beaver not in self.state.legal_actions():
            kind = "take"
        name, value = self._name(self.gnubg), self.state.cube.value * 2
        if kind == "beaver":
            events = self._record(Beaver(by=self.gnubg), "gnubg")
            value *= 2
            text = f"{name} beavers: it takes and redoubles to {value} at once; take or drop"
        elif kind == "take":
            events = self._record(Take(by=self.gnubg), "gnubg")
            text = f"{name} takes: put the cube at {value} on its side"
        else:
            events = self._record(Drop(by=self.gnubg), "gnubg")
            text = f"{name} drops the cube at {value}"
        fields = {"action": kind, "cube": value, "player": number(self.gnubg)}
        return [*events, Event("gnubg-cube", text, fields)]

    def on_gnubg_resign(self, gnubgid: str, accept: bool, t: float) -> list[Event]:
        """gnubg's answer to a resignation offered to it (ignored if stale), recorded at once."""
        if not self._gnubg_now(gnubgid, Phase.RESIGNED):
            return []
        action: Action = AcceptResign(by=self.gnubg) if accept else RejectResign(by=self.gnubg)
        return self._record(action, "gnubg")

    def _fine_now(self, best: Candidate) -> bool:
        """The board no longer needs the red lights: put back, or a move that may be recorded."""
        if best.kind == "before":
            return True
        if best.kind != "legal":
            return False
        gnubgs = self._gnubg_known()
        return gnubgs is None or best.position == gnubgs[1]

    def _not_gnubgs_words(self, state: MatchState, action: Move) -> str | None:
        """Why ``action`` cannot be recorded as gnubg's move (``None``: it can)."""
        gnubgs = self._gnubg_known(state)
        if gnubgs is None or state.dice is None:
            return None
        play = action.play
        after = play if isinstance(play, Position) else None
        if after is None:
            text = str(play)
            try:
                after = legal_plays(state.position, state.dice).parse(text)[0] if text else state.position
            except BackgammonError:
                return None  # the rules will say what is wrong with it
        if after == gnubgs[1]:
            return None
        return f"{self._name(self.gnubg)} plays {gnubgs[0] or 'no move'}, not that: set its checkers as the lights show"

    def _not_gnubgs(self, play: Play, board: Position) -> list[Event]:
        """A legal board that is not gnubg's move: mark where it differs, and wait."""
        gnubgs = self._gnubg_known()
        assert gnubgs is not None
        wanted = gnubgs[1]
        marks = {i + 1 for i in range(25) if board.mover[i] != wanted.mover[i]}
        # The opponent's point i + 1 is the mover's 24 - i; its bar is the mover's bar LED.
        marks |= {24 - i if i < 24 else 25 for i in range(25) if board.opponent[i] != wanted.opponent[i]}
        name = self._name(self.gnubg)
        reason = f"{name} plays {gnubgs[0] or 'no move'}, not {play or 'no move'}"
        self._judgement = Judgement("illegal", reasons=(reason,), marks=tuple(sorted(marks, reverse=True)))
        text = f"that is not {name}'s move: it plays {gnubgs[0] or 'no move'}; set its checkers as the lights show"
        fields: dict[str, Any] = {"play": str(play), "gnubg": str(gnubgs[0]), "marks": sorted(marks, reverse=True)}
        return [Event("not-gnubgs-move", text, fields, verdict="illegal")]

    # -- hints ------------------------------------------------------------------------------------

    def _teach(self, word: str) -> list[Event]:
        """``teach on``, ``teach off`` (or ``teach`` alone, which turns it over)."""
        if word not in ("", "on", "off"):
            return [Event("unknown", f"teach on or teach off, not teach {quoted(word)}")]
        self.teach = (not self.teach) if not word else word == "on"
        events = [Event("teach", f"teach mode {'on' if self.teach else 'off'}", {"teach": self.teach})]
        if not self.teach:
            # The hint shown goes with it: nothing is lit or said of it any more.
            self._hint = None
        elif self._teaching(self.state):
            self._want(self._hint_request(asked=False))
        return events

    def _hint_button(self) -> list[Event]:
        """The hint button: plays during a move; cube advice before a roll or when doubled."""
        state = self.state
        if state.phase is Phase.MOVE:
            return self._want(self._hint_request(asked=True))
        if state.phase in (Phase.ROLL, Phase.DOUBLED):
            try:
                state_to_double(state)
            except HintError as exc:
                # Not the engine's failure: there is simply no cube decision (Crawford, cube owned...).
                return [Event("refused", f"{exc}: roll", {"phase": state.phase.value})]
            return self._want(self._hint_request(asked=True))
        if state.phase is Phase.MATCH_OVER:
            return [Event("refused", "no hint now: the match is over")]
        return [Event("refused", f"no hint now: the match waits for the {state.phase.value}")]

    def _want(self, request: Request) -> list[Event]:
        """Put ``request`` on :attr:`requests`, for whoever runs the controller; no event."""
        self.requests.append(request)
        return []

    def take_requests(self) -> list[Request]:
        """The requests made since the last call, in order, taken off :attr:`requests`."""
        taken, self.requests = self.requests, []
        return taken

    def _hint_request(self, *, asked: bool) -> Request:
        """A request for a hint on the state as it stands.

        ``asked``: the players pressed the hint button (else teach mode asks after a roll).
        """
        state = self.state
        dice = None if state.dice is None else [state.dice.first, state.dice.second]
        wanted = "plays" if state.phase is Phase.MOVE else "cube"
        fields: dict[str, Any] = {
            "gnubgid": state.gnubg_id(),
            "dice": dice,
            "phase": state.phase.value,
            "wanted": wanted,
            "asked": asked,
        }
        text = "asking gnubg for the best play" if wanted == "plays" else "asking gnubg for cube advice"
        return Request("hint", text, fields)

    def on_hint(self, gnubgid: str, plays: Sequence[RankedPlay], t: float) -> list[Event]:
        """The hint engine's ranked plays (best first) for the state ``gnubgid`` names.

        An answer for a state the match has left (``gnubgid`` no longer the state's) is
        ignored. Otherwise the best play is lit until the move is recorded and favoured when
        the board is judged, and the move recorded is compared with the list. Ask for every
        play: a play missing from a shortened list can only be said to be missing.
        """
        state = self.state
        if state.phase is not Phase.MOVE or gnubgid != state.gnubg_id():
            return []
        self._hint = _Hint(state, tuple(plays))
        if not plays:
            assert state.dice is not None
            text = f"hint: no legal move for {state.dice.spoken()}"
            fields: dict[str, Any] = {"play": "", "equity": None, "ply": None, "player": number(state.on_roll)}
            return [Event("hint", text, fields)]
        best = plays[0]
        play = str(best.play)
        text = f"hint: {play} (gnubg {best.ply}-ply, equity {best.equity:+.3f})"
        fields = {"play": play, "equity": best.equity, "ply": best.ply, "player": number(state.on_roll)}
        return [Event("hint", text, fields)]

    def on_cube_hint(self, gnubgid: str, advice: CubeAdvice, t: float) -> list[Event]:
        """The hint engine's cube advice for the state ``gnubgid`` names (ignored if stale)."""
        state = self.state
        if state.phase not in (Phase.ROLL, Phase.DOUBLED) or gnubgid != state.gnubg_id():
            return []
        words = advice.action[:1].lower() + advice.action[1:]
        fields: dict[str, Any] = {**advice.to_json(), "player": number(state.turn)}
        return [Event("cube-hint", f"gnubg: {words} ({advice.ply}-ply)", fields)]

    def _feedback(self, before: MatchState, after: MatchState) -> Event | None:
        """gnubg's verdict on the move from ``before`` to ``after``, if plays are known for ``before``.

        The played play is found in the ranked list by the position it leads to (the same
        play can be written several ways); the note is what the store keeps with the move.
        """
        hint = self._hint
        if hint is None or not (hint.state is before or hint.state == before) or not hint.plays:
            return None
        # The board after the move, still seen from the player who moved.
        result = after.position.swap()
        best = hint.plays[0]
        played = next((p for p in hint.plays if p.after == result), None)
        fields: dict[str, Any] = {"best": str(best.play), "ply": best.ply, "player": number(before.on_roll)}
        if played is None:
            assert before.dice is not None
            text_play = str(legal_plays(before.position, before.dice).play_for(result) or "no move")
            count = len(hint.plays)
            text = f"{text_play}: not among gnubg's {count} ranked plays (its best: {best.play})"
            note = f"gnubg {best.ply}-ply: not among its {count} ranked plays; best {best.play}"
            fields |= {"play": text_play, "error": None, "skill": None, "equity": None}
            return Event("feedback", text, fields, note=note)
        play = str(played.play) or "no move"
        fields |= {"play": play, "error": played.error, "skill": played.skill, "equity": played.equity}
        if played.after == best.after or played.error == 0:
            words = "the only play" if len(hint.plays) == 1 else "the best play"
            return Event("feedback", f"{play}: {words}", fields, note=f"gnubg {best.ply}-ply: {words}")
        # gnubg marks errors from 0.04 up; a smaller one is close to the best.
        label = played.skill or "close"
        against = f"-{played.error:.3f} against {best.play}"
        note = f"gnubg {best.ply}-ply: {label}, {against}"
        return Event("feedback", f"{play}: {label}, {against}", fields, note=note)


def _describe(
    before: MatchState, action: Action, after: MatchState, names: tuple[str, str]
) -> tuple[EventKind, str, dict[str, Any]]:
    """The event kind, the words and the fields for a recorded action."""
    player = before.turn
    who = "" if player is None else f"{names[player]} "
    match action:
        case OpeningRoll(die0, die1):
            return (
                "opening-roll",
                f"opening roll {die0}-{die1}: {names[after.on_roll or 0]} plays first",
                {"dice": [die0, die1], "on_roll": number(after.on_roll)},
            )
        case Roll(dice):
            return "roll", f"{who}rolled {dice.spoken()}", {"dice": [dice.first, dice.second]}
        case Move(play):
            text = (str(play) or "no move") if isinstance(play, Play) else str(play)
            if isinstance(play, Position):
                text = play.position_id()
            fields: dict[str, Any] = {"play": text}
            if isinstance(play, str | Play) and before.dice is not None:
                # The play as the store records it (hits marked, in order), when not as typed.
                with contextlib.suppress(BackgammonError):
                    recorded = str(before.legal_plays().play_for(after.position.swap()) or "")
                    if recorded and recorded != text:
                        fields["recorded"] = recorded
            return "move", f"{who}played {text}", fields
        case Double():
            return "double", f"{who}doubles to {before.cube.value * 2}", {"cube": before.cube.value * 2}
        case Take():
            return "take", f"{who}takes: the cube is at {after.cube.value}", {"cube": after.cube.value}
        case Drop():
            return "drop", f"{who}drops", {}
        case Resign(points):
            return "resign", f"{who}offers to resign ({points} per cube)", {"points": points}
        case AcceptResign():
            return "accept-resign", f"{who}accepts the resignation", {}
        case RejectResign():
            return "reject-resign", f"{who}refuses the resignation: play on", {}
        case Beaver():
            return "beaver", f"{who}beavers", {}
    raise AssertionError(f"an action of no known kind: {action!r}")
