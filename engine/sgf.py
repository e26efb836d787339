# SPDX-License-Identifier: MIT
"""GNU Backgammon's SGF (``GM[6]``): a match as gnubg's ``save match`` writes it.

Each game is its own game tree: a root node with the match information (``MI[length:..]
[game:..][ws:..][bs:..]``), the players (``PW`` is player 0, White; ``PB`` player 1, Black),
the rules (``RU[Crawford]``, ``RU[Crawford:CrawfordGame]``, ``RU[Jacoby]``) and the result
(``RE[W+2]``, ``R`` appended for a resignation), then one node per action: ``;W[52lqjm]`` is
White rolling 5-2 and moving, each step two letters (``a``-``x`` the points from White's
side, ``a`` = White's 1-point and Black's 24-point; ``y`` the bar, ``z`` off), ``;B[double]``,
``;W[take]``, ``;W[drop]``. A roll followed by a resignation is ``;PL[W]DI[32]``; the
resignation itself is only in ``RE``, as gnubg writes it.

>>> from engine.matfile import read_mat
>>> from engine.matcheck import EXAMPLE
>>> text = write_sgf(read_mat(EXAMPLE).record)
>>> print(text.splitlines()[1:])
[';W[31hefe]', ';B[64aglp]', ';W[double]', ';B[drop])']
"""

from __future__ import annotations

from typing import Final

from engine.match import (
    Action,
    Beaver,
    Double,
    Drop,
    GameEnd,
    MatchState,
    Move,
    Phase,
    Resign,
    Take,
)
from engine.play import Play
from engine.position import BAR, OFF
from engine.record import MatchRecord

#: The application written in ``AP``.
APPLICATION: Final = "bgboard:0.1"

_PLAYER: Final = "WB"

#: Root properties written from the record's tags on the first game, in gnubg's order.
_TAG_PROPERTIES: Final = (
    ("Player 1 Elo", "WR"),
    ("Player 2 Elo", "BR"),
    ("EventDate", "DT"),
    ("Event", "EV"),
    ("Round", "RO"),
    ("Site", "PC"),
    ("Transcriber", "AN"),
    ("Comment", "GC"),
)


def escape(text: str) -> str:
    """SGF text: ``]`` and ``\\`` are escaped with a backslash.

    >>> escape("a]b")
    'a\\\\]b'
    """
    return text.replace("\\", "\\\\").replace("]", "\\]")


def _point(player: int, point: int) -> str:
    if point == BAR:
        return "y"
    if point == OFF:
        return "z"
    return chr(ord("a") + point - 1) if player == 0 else chr(ord("x") - point + 1)


def _move(player: int, play: Play) -> str:
    return "".join(_point(player, s.source) + _point(player, s.dest) for s in play)


def _date(value: str) -> str:
    """``YYYY.MM.DD`` (``.mat``) as ``YYYY-MM-DD``; anything else as it is."""
    parts = value.split(".")
    if len(parts) == 3 and all(p.isdigit() for p in parts):
        return f"{int(parts[0]):04d}-{int(parts[1]):02d}-{int(parts[2]):02d}"
    return value


def write_sgf(record: MatchRecord) -> str:
    """The record in GNU Backgammon's SGF, one game tree per game (see the module docstring).

    :raises BackgammonError: the record does not replay: a score past the match length, or an
        action the rules forbid.
    """
    return "".join(_game(record, index) for index in range(len(record.games)))


def _game(record: MatchRecord, index: int) -> str:
    game = record.games[index]
    name0, name1 = record.players
    root = [
        f"(;FF[4]GM[6]CA[UTF-8]AP[{APPLICATION}]",
        f"MI[length:{record.length}][game:{index}][ws:{game.score[0]}][bs:{game.score[1]}]",
        f"PW[{escape(name0)}]PB[{escape(name1)}]",
    ]
    if index == 0:
        for tag, prop in _TAG_PROPERTIES:
            value = record.tags.get(tag, "")
            if value:
                root.append(f"{prop}[{escape(_date(value) if prop == 'DT' else value)}]")
    crawford, _ = record.crawford_flags(index)
    if record.length > 1 and record.options.crawford:
        root.append("RU[Crawford:CrawfordGame]" if crawford else "RU[Crawford]")
    elif record.is_money and record.options.jacoby:
        root.append("RU[Jacoby]")
    nodes: list[str] = []
    state = record.initial_state(index)
    for action in game.actions:
        before = state
        state = state.apply(action)
        node = _node(before, action, state)
        if node:
            nodes.append(node)
    result = state.last_result if state.is_over() else game.result
    if result is not None:
        resigned = "R" if result.end is GameEnd.RESIGNED else ""
        root.append(f"RE[{_PLAYER[result.winner]}+{result.points}{resigned}]")
    return "".join(root) + "".join("\n;" + node for node in nodes) + ")\n"


def _node(before: MatchState, action: Action, after: MatchState) -> str:
    """The node for one action, or ``""`` for actions SGF leaves out (rolls, resignations)."""
    if isinstance(action, Move):
        assert before.dice is not None and before.on_roll is not None
        play = action.play if isinstance(action.play, Play) else Play()
        dice = before.dice
        return f"{_PLAYER[before.on_roll]}[{dice.first}{dice.second}{_move(before.on_roll, play)}]"
    if isinstance(action, Double):
        assert before.on_roll is not None
        return f"{_PLAYER[before.on_roll]}[double]"
    if isinstance(action, Beaver):
        assert before.turn is not None
        return f"{_PLAYER[before.turn]}[beaver]"
    if isinstance(action, Take | Drop):
        assert before.turn is not None
        return f"{_PLAYER[before.turn]}[{'take' if isinstance(action, Take) else 'drop'}]"
    if isinstance(action, Resign) and before.phase is Phase.MOVE and before.dice is not None:
        # Rolled, then resigned: gnubg keeps the dice as a setup node.
        assert before.on_roll is not None
        return f"PL[{_PLAYER[before.on_roll]}]DI[{before.dice.first}{before.dice.second}]"
    return ""


__all__ = ["APPLICATION", "escape", "write_sgf"]
