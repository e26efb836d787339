# SPDX-License-Identifier: MIT
"""GNU Backgammon as a player: its moves, doubles, takes and answers to a resignation.

gnubg decides as its own computer player does, at one of its own predefined levels
(:data:`LEVELS`): the state is set with ``set gnubgid``, gnubg is made the player who acts
(``set player N gnubg``, with the level's plies and noise), and it acts: ``play`` for a move or
a double, ``double`` or ``resign`` from the other side for a take or an acceptance. Its own
words (``gnubg moves 24/22 13/8.``, ``... doubles.``, ``... accepts the cube at 2.``) are the
answer. Both players are made human again before the request ends, so the same process keeps
giving hints and analyses (:class:`~engine.hints.GnubgHints`): one gnubg in memory on the Pi.

gnubg's weaker levels add noise to its evaluations (deterministic noise: the same position
always gets the same distortion), which ``hint`` does not apply; that is why the player's
settings and ``play`` are used rather than the hint list.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Final, Literal, Protocol

from engine.errors import BackgammonError
from engine.hints import GnubgHints, HintError, _beavers
from engine.match import MatchState, Phase
from engine.movegen import legal_plays
from engine.play import Play


@dataclass(frozen=True, slots=True)
class Level:
    """One of gnubg's predefined playing levels (gnubg's ``eval.c``, ``aecSettings``).

    :param name: the level's name as the command line spells it.
    :param plies: the depth of its chequer play and cube decisions.
    :param noise: the standard deviation of the noise added to its evaluations.
    """

    name: str
    plies: int
    noise: float

    def __str__(self) -> str:
        noise = f", noise {self.noise:.3f}" if self.noise else ", no noise"
        return f"{self.name} ({self.plies}-ply{noise})"


#: gnubg's levels, weakest first: the same plies and noise as gnubg's own (1.07).
LEVELS: Final = {
    level.name: level
    for level in (
        Level("beginner", 0, 0.060),
        Level("intermediate", 0, 0.040),
        Level("advanced", 0, 0.015),
        Level("expert", 0, 0.0),
        Level("world-class", 2, 0.0),
    )
}

_MOVES = re.compile(r"^\S.*? moves (.+?)\.\s*$", re.MULTILINE)
_CANNOT = re.compile(r"^\S.*? cannot move\.?\s*$", re.MULTILINE)
_DOUBLES = re.compile(r"^\S.*? doubles\.\s*$", re.MULTILINE)
_ACCEPTS_CUBE = re.compile(r"^\S.*? accepts the cube", re.MULTILINE)
#: gnubg's words for a beaver: it takes and redoubles at once.
_BEAVERS = re.compile(r"^\S.*? accepts and immediately redoubles", re.MULTILINE)
_REFUSES_CUBE = re.compile(r"^\S.*? (?:refuses|rejects|declines) the cube", re.MULTILINE)
_OFFERS_RESIGN = re.compile(r"^\S.*? offers to resign(?: an? (single game|gammon|backgammon))?", re.MULTILINE)
_RESIGN_POINTS: Final = {None: 1, "single game": 1, "gammon": 2, "backgammon": 3}
_ACCEPTS_RESIGN = re.compile(r"^\S.*? accepts and wins", re.MULTILINE)
_REJECTS_RESIGN = re.compile(r"^\S.*? (?:rejects|refuses|declines)", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class Decision:
    """What gnubg does when it is its turn: a play, a double, or an offer to resign.

    :param play: its play (the empty play when no move is legal), when it moves.
    :param double: it doubles (before its roll).
    :param resign: it offers to resign this many points per cube (1, 2 or 3), or 0.
    """

    play: Play | None = None
    double: bool = False
    resign: int = 0


#: An answer to a double.
CubeAnswer = Literal["take", "beaver", "drop"]


class Opponent(Protocol):
    """A player the table asks when it is that side's turn (gnubg: :class:`GnubgOpponent`)."""

    #: The engine player (0 or 1) it plays.
    player: int

    def move(self, state: MatchState, *, may_resign: bool = True) -> Decision:
        """Its play for the roll in ``state`` (or an offer to resign)."""
        ...

    def before_roll(self, state: MatchState, *, may_resign: bool = True) -> Decision:
        """Whether it doubles (or offers to resign) before its roll in ``state``."""
        ...

    def answers_double(self, state: MatchState) -> CubeAnswer:
        """Its answer to the double offered in ``state``: ``take``, ``beaver`` or ``drop``."""
        ...

    def accepts(self, state: MatchState) -> bool:
        """Whether it accepts the resignation offered in ``state``."""
        ...


def level_named(name: str) -> Level:
    """The level called ``name`` (``world class`` and ``world_class`` are ``world-class``).

    :raises ValueError: no such level; the message lists them.
    """
    key = name.strip().lower().replace("_", "-").replace(" ", "-")
    if key not in LEVELS:
        raise ValueError(f"no gnubg level {name!r}; the levels are {', '.join(LEVELS)}")
    return LEVELS[key]


class GnubgOpponent:
    """gnubg playing engine player ``player`` (0 or 1) at ``level``, through ``gnubg``'s process.

    :raises ValueError: ``player`` is not 0 or 1.
    """

    def __init__(self, gnubg: GnubgHints, player: int, level: Level | str = "expert") -> None:
        """See the class docstring."""
        if player not in (0, 1):
            raise ValueError(f"gnubg plays engine player 0 or 1, not {player!r}")
        self.gnubg = gnubg
        self.player = player
        self.level = level_named(level) if isinstance(level, str) else level

    def _settings(self) -> list[str]:
        # Set on every request: hints and analyses share the process and the settings are cheap.
        n, level = self.player, self.level
        out = ["set automatic game off", "set automatic roll off"]
        for kind in ("chequerplay", "cubedecision"):
            out += [
                f"set player {n} {kind} evaluation plies {level.plies}",
                f"set player {n} {kind} evaluation cubeful on",
                f"set player {n} {kind} evaluation prune on",
                f"set player {n} {kind} evaluation noise {level.noise:.3f}",
                f"set player {n} {kind} evaluation deterministic on",
            ]
        return out

    def _ask(self, state: MatchState, acts: list[str]) -> str:
        """Make gnubg this side's player, set ``state``, run ``acts``; both sides human after."""
        n = self.player
        commands = [
            *self._settings(),
            f"set beavers {_beavers(state)}",
            f"set player {1 - n} human",
            f"set gnubgid {state.gnubg_id()}",
            f"set player {n} gnubg",
            *acts,
            f"set player {n} human",
        ]
        return self.gnubg.run(commands)

    def _play(self, state: MatchState, acts: list[str], may_resign: bool) -> tuple[str, Decision | None]:
        """Run ``acts`` ending in ``play``: what gnubg said, and its offer to resign if it made
        one it may make (``may_resign`` false: the players' refusal is given to it at once)."""
        text = self._ask(state, acts if may_resign else [*acts, "reject"])
        offered = _OFFERS_RESIGN.search(text)
        if offered is not None and may_resign:
            return text, Decision(resign=_RESIGN_POINTS[offered.group(1)])
        return text, None

    def move(self, state: MatchState, *, may_resign: bool = True) -> Decision:
        """gnubg's play for the roll in ``state`` (the empty play: none is legal), or its offer
        to resign when the game is lost for it.

        :param may_resign: ``False`` after the players refused its resignation at this roll:
            the refusal is given to gnubg, which then plays on.
        :raises ValueError: ``state`` is not gnubg's move.
        :raises HintError: gnubg failed, or answered with something that is not a legal play.
        """
        if state.phase is not Phase.MOVE or state.on_roll != self.player or state.dice is None:
            raise ValueError(f"not gnubg's move: the match waits for the {state.phase.value}")
        dice = state.dice
        legal = legal_plays(state.position, dice)
        text, resigns = self._play(state, [f"set dice {dice.first} {dice.second}", "play"], may_resign)
        if resigns is not None:
            return resigns
        if legal.dice_used == 0:
            return Decision(play=Play())
        found = _MOVES.search(text)
        if found is None:
            if _CANNOT.search(text):
                return Decision(play=Play())
            raise HintError(f"gnubg did not say its move: {text.strip()[-300:]!r}")
        try:
            return Decision(play=legal.parse(found.group(1))[1])
        except BackgammonError as exc:
            raise HintError(f"gnubg's move {found.group(1)!r} is not a legal play here: {exc}") from None

    def before_roll(self, state: MatchState, *, may_resign: bool = True) -> Decision:
        """Whether gnubg, on roll in ``state`` before rolling, doubles (never when it cannot),
        or offers to resign.

        :param may_resign: ``False`` after the players refused its resignation before this roll.
        :raises HintError: gnubg failed.
        """
        if state.phase is not Phase.ROLL or state.on_roll != self.player:
            return Decision()
        # Without dice gnubg first decides on the cube (and on resigning); if it does neither
        # it rolls and plays in its own copy of the match, which is thrown away.
        text, resigns = self._play(state, ["play"], may_resign)
        if resigns is not None:
            return resigns
        return Decision(double=state.can_double() and _DOUBLES.search(text) is not None)

    def answers_double(self, state: MatchState) -> CubeAnswer:
        """gnubg's answer to the double offered to it in ``state``: ``take``, ``beaver`` (it takes
        and redoubles at once, where the session allows beavers) or ``drop``.

        :raises ValueError: ``state`` is not a double offered to gnubg.
        :raises HintError: gnubg failed or did not answer.
        """
        if state.phase is not Phase.DOUBLED or state.turn != self.player:
            raise ValueError(f"no double offered to gnubg: the match waits for the {state.phase.value}")
        before = replace(state, phase=Phase.ROLL)
        text = self._ask(before, ["double"])
        if _BEAVERS.search(text):
            return "beaver"
        if _ACCEPTS_CUBE.search(text):
            return "take"
        if _REFUSES_CUBE.search(text) or " wins " in text:
            return "drop"
        raise HintError(f"gnubg did not answer the double: {text.strip()[-300:]!r}")

    def takes(self, state: MatchState) -> bool:
        """Whether gnubg, doubled in ``state``, takes (a beaver is a take, and more).

        :raises ValueError: ``state`` is not a double offered to gnubg.
        :raises HintError: gnubg failed or did not answer.
        """
        return self.answers_double(state) != "drop"

    def accepts(self, state: MatchState) -> bool:
        """Whether gnubg accepts the resignation offered to it in ``state``.

        :raises ValueError: no resignation is offered to gnubg.
        :raises HintError: gnubg failed or did not answer.
        """
        if state.phase is not Phase.RESIGNED or state.turn != self.player or not state.resigned:
            raise ValueError(f"no resignation offered to gnubg: the match waits for the {state.phase.value}")
        before = replace(state, phase=Phase.ROLL if state.dice is None else Phase.MOVE, resigned=0)
        words = {1: "single", 2: "gammon", 3: "backgammon"}[state.resigned]
        text = self._ask(before, [f"resign {words}"])
        if _ACCEPTS_RESIGN.search(text):
            return True
        if _REJECTS_RESIGN.search(text):
            return False
        raise HintError(f"gnubg did not answer the resignation: {text.strip()[-300:]!r}")
