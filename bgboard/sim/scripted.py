# SPDX-License-Identifier: MIT
"""A table without a camera: a recorded match typed into the controller at full speed.

The hall's tests and ``bench/hall.py`` run many tables at once; rendering and reading frames
for each would measure the camera, not the hall. :class:`ScriptedTable` feeds the
:class:`~bgboard.controller.Controller` the console lines players would type for each action
of a :class:`~engine.record.MatchRecord` (``dice 31``, ``correct 8/5 6/5``, ``double``,
``take``...), and sends its events to the sinks, the match store's last, exactly as
:class:`~bgboard.table.Table` does.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from bgboard.controller import Controller
from bgboard.errors import ScriptError
from bgboard.events import Event, EventSink, Sinks, StoreSink
from bgboard.store import MatchStore
from engine.match import (
    AcceptResign,
    Action,
    Double,
    Drop,
    Move,
    OpeningRoll,
    Phase,
    RejectResign,
    Resign,
    Roll,
    Take,
)
from engine.record import MatchRecord

_RESIGN = {1: "single", 2: "gammon", 3: "backgammon"}


def command_for(action: Action) -> str | None:
    """The console line that gives ``action`` to a controller whose player 0 sits at the
    bottom; ``None`` for what the controller does by itself (a move with no legal play)."""
    match action:
        case OpeningRoll(die0=die0, die1=die1):
            return f"dice {die0}{die1}"
        case Roll(dice=dice):
            return f"dice {dice.first}{dice.second}"
        case Move(play=play):
            text = str(play)
            # A roll with no legal play: the empty play, as the record has it.
            return f"correct {text}"
        case Double():
            return "double"
        case Take():
            return "take"
        case Drop():
            return "drop"
        case Resign(points=points):
            return f"resign {_RESIGN[points]}"
        case AcceptResign():
            return "accept"
        case RejectResign():
            return "reject"
    raise ScriptError(f"no console line for {action!r}")


class ScriptedTable:
    """One match of ``record`` played into a controller, its events to ``sinks`` then the store.

    :param record: the match to play (its first ``games`` games).
    :param store: the match store; a new match is started in it.
    :param sinks: the events go here first, then to the store's sink.
    """

    def __init__(
        self, record: MatchRecord, store: MatchStore, *, sinks: Iterable[EventSink] = (), games: int | None = None
    ) -> None:
        self.record = record
        self.store = store
        self.games = record.games if games is None else record.games[:games]
        self.match_id = store.start_match(record.players, record.length, record.options)
        self.controller = Controller(store.state(self.match_id), bottom_player=0, names=record.players)
        self.sinks = Sinks(*sinks, StoreSink(store, self.match_id))
        self.t = 0.0

    def steps(self) -> Iterator[list[Event]]:
        """Play the record one action at a time; yields each action's events (already delivered).

        Games follow one another while each ends on the board as recorded.
        """
        for game in self.games:
            for action in game.actions:
                line = command_for(action)
                if line is None:
                    continue
                self.t += 1.0
                before = self.controller.state
                events = [event.at(self.t) for event in self.controller.on_command(line, self.t)]
                for event in events:
                    self.sinks(event)
                if self.controller.state == before:
                    said = "; ".join(f"{e.kind}: {e.text}" for e in events) or "nothing"
                    raise ScriptError(f"{line!r} was not taken ({said})")
                yield events
            if self.controller.state.phase is not Phase.GAME_OVER:
                # The match is over, or the record's game ends without the action that ends it
                # (a resignation some programs do not write): the next game cannot follow.
                return

    def play(self) -> int:
        """Play every action; returns how many console lines were typed."""
        return sum(1 for _ in self.steps())
