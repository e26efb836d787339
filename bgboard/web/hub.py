# SPDX-License-Identifier: MIT
"""The live page's side of the table: what the page is told, and the changes it asks for.

The page is one more sink of the table's event stream (:mod:`bgboard.events`). A
:class:`WebHub` is added to a :class:`~bgboard.table.Table`'s sinks; for every event it

- keeps the event (the last :data:`BACKLOG` of them, numbered) for pages that connect later;
- takes a snapshot of the match as the table's controller has it now (:func:`board_json`,
  :meth:`WebHub.state`): the board in player 1's numbering, dice, cube, score, whose turn, the
  last move as arrows, an illegal move's marked points and reasons, a please-check, a hint;
- hands both, already encoded as server-sent events, to every page subscribed
  (:meth:`WebHub.subscribe`), each in its own event loop's thread.

Nothing here changes the match: a change a page asks for (a correction, "done", undo) goes
through an :class:`~bgboard.session.Inbox` to whoever owns the table (the demo's loop, the referee's queue),
which runs it as a line typed at the console, in its own thread, and answers with the events
it caused. :mod:`bgboard.web.server` serves all this over HTTP.

The snapshot reads the controller from the table's thread (the sinks are called there), so a
page never sees a state half-way through an update.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from bgboard.events import Event, encode, number
from engine.errors import BackgammonError
from engine.match import MatchState, Move, Phase
from engine.play import Play
from engine.position import Position
from hardware.presenter import seat_of

if TYPE_CHECKING:
    from bgboard.controller import Controller
    from bgboard.table import Table

log = logging.getLogger(__name__)

#: Events kept for a page that connects late (the log it shows first).
BACKLOG: Final = 500
#: Messages a page may fall behind by before it is dropped (it reconnects and starts afresh).
QUEUE_LIMIT: Final = 1000
#: The console commands a page may send (:meth:`bgboard.controller.Controller.on_command`).
PAGE_COMMANDS: Final = frozenset(
    {"done", "undo", "double", "take", "drop", "resign", "accept", "reject", "hint", "dice", "correct", "teach"}
)

_END: Final = object()


def absolute_point(point: int, seat: int) -> int | str:
    """A point in the mover's numbering (25 bar, 0 off) as the page draws it: 1-24 in player
    1's numbering (seat 1's), or ``"bar"`` / ``"off"`` (on the mover's side)."""
    if point == 25:
        return "bar"
    if point == 0:
        return "off"
    return point if seat == 1 else 25 - point


def arrows(play: Play, seat: int) -> list[dict[str, Any]]:
    """A play's checker steps as arrows on the page: ``from``, ``to`` (see
    :func:`absolute_point`), ``seat`` (the mover's) and ``hit``.

    >>> arrows(Play.parse("bar/22 6/off"), 2)
    [{'from': 'bar', 'to': 3, 'seat': 2, 'hit': False}, {'from': 19, 'to': 'off', 'seat': 2, 'hit': False}]
    """
    return [
        {"from": absolute_point(s.source, seat), "to": absolute_point(s.dest, seat), "seat": seat, "hit": s.hit}
        for s in play
    ]


def made_arrows(before: Position, mover: Sequence[int], opponent: Sequence[int], seat: int) -> list[dict[str, Any]]:
    """The checker steps a board as read shows against ``before`` (both the mover's side, index
    24 the bar), as arrows (see :func:`arrows`): each checker gone from a point paired with a
    checker come to one, the furthest first, the rest borne off. For a move no rule allows, so
    a guess at how it was made, drawn as made.

    >>> start = MatchState.new_match(1).position
    >>> read = list(start.mover); read[12] -= 1; read[5] += 1
    >>> made_arrows(start, read, start.opponent, 1)
    [{'from': 13, 'to': 6, 'seat': 1, 'hit': False}]
    """
    gone: list[int] = []
    come: list[int] = []
    for index in range(25):
        change = mover[index] - before.mover[index]
        gone += [index + 1] * max(-change, 0)
        come += [index + 1] * max(change, 0)
    gone.sort(reverse=True)
    come.sort(reverse=True)
    come += [0] * max(len(gone) - len(come), 0)  # the rest borne off
    # An opponent's checker gone from his point n (the mover's 25 - n) was hit there.
    hit = {24 - index for index in range(24) if opponent[index] < before.opponent[index]}
    return [
        {"from": absolute_point(a, seat), "to": absolute_point(b, seat), "seat": seat, "hit": b in hit}
        for a, b in zip(gone, come, strict=False)
    ]


def board_json(state: MatchState, bottom_player: int = 1) -> dict[str, Any]:
    """The checkers of ``state`` as the page draws them, from the seat-1 player's side.

    ``points``: 24 signed counts, index 0 = seat 1's 1-point, + seat 1's checkers, - seat 2's;
    ``bar`` and ``off``: ``[seat 1, seat 2]``; ``bottom``: the player (1 or 2) at seat 1.

    >>> board = board_json(MatchState.new_match(7))
    >>> board["points"][23], board["points"][5], board["bar"], board["off"], board["bottom"]
    (2, 5, [0, 0], [0, 0], 2)
    """
    seat = 1 if state.on_roll is None else seat_of(state.on_roll, bottom_player)
    points, bar, off = state.position.to_absolute(seat)
    return {"points": points, "bar": list(bar), "off": list(off), "bottom": bottom_player + 1}


def pips_by_player(state: MatchState) -> list[int]:
    """Pip counts, ``[player 1, player 2]``."""
    mine, theirs = state.position.pips()
    return [mine, theirs] if state.on_roll in (None, 0) else [theirs, mine]


def status_words(state: MatchState, names: Sequence[str]) -> str:
    """Where the match stands, in a few words (``"Ann to move 5-2"``)."""
    phase = state.phase
    on_roll = state.on_roll
    who = "" if on_roll is None else names[on_roll]
    if phase is Phase.OPENING:
        return "waiting for the opening roll"
    if phase is Phase.MATCH_OVER:
        winner = 0 if state.score[0] >= state.score[1] else 1
        return f"match over: {names[winner]} wins {state.score[0]}-{state.score[1]}"
    if phase is Phase.GAME_OVER:
        result = state.last_result
        won = f"{names[result.winner]} won game {state.game_number}; " if result is not None else ""
        return f"{won}waiting for the next opening roll"
    if phase is Phase.ROLL:
        return f"{who} to roll or double"
    if phase is Phase.MOVE and state.dice is not None:
        return f"{who} to move {state.dice.first}-{state.dice.second}"
    if phase is Phase.DOUBLED:
        turn = state.turn
        return f"{names[turn] if turn is not None else who} to take or drop the cube at {2 * state.cube.value}"
    if phase is Phase.RESIGNED:
        return f"{who} offers to resign"
    return str(phase.value)


def state_json(
    state: MatchState,
    names: Sequence[str],
    *,
    bottom_player: int = 1,
) -> dict[str, Any]:
    """What ``GET /api/state`` answers for a match: the contract's keys (``gnubgid``, ``dice``,
    ``turn``, ``cube``, ``score``, ``status``) and what the page draws besides.

    >>> out = state_json(MatchState.new_match(3), ("Ann", "Bob"))
    >>> out["gnubgid"], out["dice"], out["turn"], out["cube"], out["score"], out["status"]
    ('4HPwATDgc/ABMA:cAhgAAAAAAAE', [], None, {'value': 1, 'owner': None}, [0, 0], 'waiting for the opening roll')
    """
    dice = [] if state.dice is None else [state.dice.first, state.dice.second]
    return {
        "gnubgid": state.gnubg_id(),
        "dice": dice,
        "turn": number(state.turn),
        "cube": {"value": state.cube.value, "owner": number(state.cube.owner)},
        "score": list(state.score),
        "status": status_words(state, names),
        "xgid": state.xgid(),
        "players": list(names),
        "length": state.length,
        "crawford": state.crawford,
        "post_crawford": state.post_crawford,
        "game": state.game_number,
        "phase": state.phase.value,
        "on_roll": number(state.on_roll),
        "doubled": state.phase is Phase.DOUBLED,
        "pips": pips_by_player(state),
        "board": board_json(state, bottom_player),
    }


#: Candidate boards a please-check offers to tap, at most.
CANDIDATES: Final = 4


def candidates(controller: Controller, seat: int | None) -> list[dict[str, Any]]:
    """The legal results a doubtful move reading may show, likeliest first: ``play``, the
    ``board`` after it (see :func:`board_json`) and ``differs``: the points (player 1's
    numbering, as on the page's board) where it is not as the other candidates, for the page's
    small boards to tap."""
    doubt = controller.doubt
    if doubt is None or seat is None:
        return []
    out: list[dict[str, Any]] = []
    for candidate in doubt.candidates:
        if candidate.kind != "legal" or candidate.play is None or candidate.position is None:
            continue
        points, bar, off = candidate.position.to_absolute(seat)
        board = {"points": points, "bar": list(bar), "off": list(off), "bottom": controller.bottom_player + 1}
        out.append({"play": str(candidate.play) or "no move", "board": board})
        if len(out) == CANDIDATES:
            break
    for one in out:
        mine = one["board"]["points"]
        others = [other["board"]["points"] for other in out if other is not one]
        one["differs"] = [i + 1 for i in range(24) if any(theirs[i] != mine[i] for theirs in others)]
    return out


def check_words(check: dict[str, Any], state: MatchState, names: Sequence[str], bottom_player: int) -> dict[str, Any]:
    """What the page asks in a please-check: ``kind`` (``dice``, ``board`` or ``reroll``),
    ``question`` (the page's words: what to tap) and ``status`` (the status line's)."""
    kind = check.get("kind", "board")
    who = "" if state.on_roll is None else f"{names[state.on_roll]}: "
    if kind == "reroll":
        return {
            "question": f"{check.get('text', 'roll again')[:1].upper()}{check.get('text', 'roll again')[1:]}.",
            "status": f"{who}roll again",
        }
    if kind == "dice":
        read = [v for v in check.get("dice", []) if isinstance(v, int) and 1 <= v <= 6]
        opening = state.phase in (Phase.OPENING, Phase.GAME_OVER)
        seen = f" (read as {read[0]}-{read[1]})" if len(read) == 2 else ""
        if opening:
            bottom, top = names[bottom_player], names[1 - bottom_player]
            tap = f"tap {bottom}'s die, then {top}'s"
        else:
            tap = "tap the two faces they show"
        ordered = not opening or check.get("bottom_first") is True
        if opening and ordered and len(read) == 2:
            seen = f" (read as {names[bottom_player]} {read[0]}, {names[1 - bottom_player]} {read[1]})"
        done = ", or Done if that is right" if len(read) == 2 and ordered else ""
        return {
            "question": f"The dice are hard to read{seen}: {tap}{done}.",
            "status": "please check the dice" + ("" if opening else f" ({who[:-2]}'s roll)" if who else ""),
        }
    points = check.get("points") or []
    where = f" point{'s' if len(points) > 1 else ''} {', '.join(map(str, points))}" if points else " the board"
    best = check.get("best")
    guess = f", or Done for the best guess ({best})" if best else ""
    return {
        "question": f"Please check{where}: which board is it? Tap it{guess}.",
        "status": f"{who}please check the move",
    }


def sse(data: dict[str, Any] | str, *, kind: str | None = None, ident: int | None = None) -> str:
    """One server-sent event: optional ``event:`` and ``id:`` lines, one ``data:`` line."""
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    head = "" if kind is None else f"event: {kind}\n"
    if ident is not None:
        head += f"id: {ident}\n"
    # JSON never holds a raw newline, so one data line carries the whole object.
    return f"{head}data: {text}\n\n"


@dataclass(eq=False)
class _Subscriber:
    loop: asyncio.AbstractEventLoop
    queue: asyncio.Queue[object]


class WebHub:
    """The table's events and state for the pages, and the pages' subscriptions.

    Add it to the table's sinks after the store's (:meth:`follow` does), so a page never shows
    what the store refused.

    :param names: the players' names (player 1's first).
    :param bottom_player: the engine player (0 or 1) at seat 1, the bottom of the page.
    """

    def __init__(self, names: Sequence[str], *, bottom_player: int = 1) -> None:
        self.names = (names[0], names[1])
        self.bottom_player = bottom_player
        self._lock = threading.Lock()
        self._subscribers: list[_Subscriber] = []
        self._backlog: deque[tuple[int, str]] = deque(maxlen=BACKLOG)
        self._seq = 0
        self._controller: Controller | None = None
        self._table: Table | None = None
        #: The calibration view's address, when the table has one (set by the web server).
        self.calibrate_url: str | None = None
        self._state: dict[str, Any] = state_json(MatchState.new_match(1), self.names, bottom_player=bottom_player)
        self._state_text = ""
        self._last_move: dict[str, Any] | None = None
        self._check: dict[str, Any] | None = None
        #: The last illegal (or not gnubg's) move's event fields, while its judgement stands.
        self._wrong: dict[str, Any] | None = None
        self._feedback: dict[str, Any] | None = None
        #: Called in the table's thread after each event has been handed to the pages (benchmarks).
        self.on_published: Callable[[int], None] | None = None

    # -- the table's side --------------------------------------------------------------------

    def follow(self, table: Table) -> None:
        """Take ``table``'s events from now on and start from its controller's state."""
        self._table = table
        self.follow_controller(table.controller)
        table.sinks.add(self)

    def refresh(self) -> None:
        """Send the pages a fresh snapshot (from the thread that owns the table, or before it runs)."""
        self._publish_state(self._snapshot(None))

    def follow_controller(self, controller: Controller) -> None:
        """Snapshot ``controller`` after each event (the table adds the hub to its sinks)."""
        self._controller = controller
        self.bottom_player = controller.bottom_player
        self.names = (controller.names[0], controller.names[1])
        self._publish_state(self._snapshot(None))

    def __call__(self, event: Event) -> None:
        """Take one of the table's events: keep it, and send it and the new state to the pages."""
        try:
            self._take(event)
        except Exception:
            # The page is a spectator: whatever goes wrong here must not stop the match.
            log.exception("the live page could not take the event %r", event.kind)

    def _take(self, event: Event) -> None:
        self._note(event)
        with self._lock:
            self._seq += 1
            seq = self._seq
            message = sse(encode(event), ident=seq)
            self._backlog.append((seq, message))
        self._send(message)
        self._publish_state(self._snapshot(event))
        if self.on_published is not None:
            self.on_published(seq)

    def _note(self, event: Event) -> None:
        """What the snapshot keeps from events rather than from the controller."""
        player, text = event.fields.get("player"), event.fields.get("play")
        if isinstance(event.action, Move) and player in (1, 2) and isinstance(text, str):
            # The event's play is the canonical text of the recorded play (the action itself may
            # hold what was typed, or the board the camera read).
            try:
                play = Play.parse(text) if text.strip() not in ("", "no move") else Play()
            except BackgammonError:
                play = Play()
            recorded = event.fields.get("recorded")
            self._last_move = {
                "player": player,
                "play": text or "no move",
                # The play as recorded (hits marked), when the event's is as typed.
                "recorded": recorded if isinstance(recorded, str) else text or "no move",
                "arrows": arrows(play, seat_of(player - 1, self.bottom_player)),
            }
        elif event.kind == "undo":
            self._last_move = None
        if event.kind in ("please-check", "re-roll"):
            kind = "reroll" if event.kind == "re-roll" else "dice" if "dice" in event.fields else "board"
            self._check = {"text": event.text, **event.fields, "kind": kind}
        if event.kind in ("illegal", "not-gnubgs-move"):
            self._wrong = {"kind": event.kind, **event.fields}
        if event.kind == "feedback":
            self._feedback = {"text": event.text, **event.fields}
        elif event.kind in ("roll", "opening-roll"):
            self._feedback = None

    def _snapshot(self, event: Event | None) -> dict[str, Any]:
        controller = self._controller
        if controller is None:
            return dict(self._state)
        state = controller.state
        out = state_json(state, self.names, bottom_player=self.bottom_player)
        seat = None if state.on_roll is None else seat_of(state.on_roll, self.bottom_player)
        judgement = controller.judgement
        out["illegal"] = None
        if judgement is not None and judgement.verdict == "illegal" and seat is not None:
            out["illegal"] = self._illegal(state, judgement.marks, judgement.reasons, seat)
        else:
            self._wrong = None
        if controller.please_check:
            check = dict(self._check or {"text": "please check the board"})
            if controller.doubt is not None:
                check["kind"] = "board"
            check.setdefault("kind", "board")
            check = {
                **check,
                "points": list(controller.check_points()),
                "candidates": candidates(controller, seat),
            }
            out["check"] = {**check, **check_words(check, state, self.names, self.bottom_player)}
        else:
            self._check = None
            out["check"] = None
        hint = controller.hint
        out["hint"] = None
        if hint is not None and seat is not None and state.phase is Phase.MOVE:
            out["hint"] = {
                "play": str(hint.play) or "no move",
                "arrows": arrows(hint.play, seat),
                "plays": [
                    {"play": str(p.play) or "no move", "equity": round(p.equity, 3), "error": round(p.error, 3)}
                    for p in controller.ranked_plays[:5]
                ],
            }
        gnubgs = controller.gnubg_move
        if gnubgs is not None and seat is not None and state.phase is Phase.MOVE:
            # gnubg's move to make, drawn as a hint is: the person at the board moves its checkers.
            out["hint"] = {"play": str(gnubgs) or "no move", "arrows": arrows(gnubgs, seat), "plays": [], "gnubg": True}
        out["teach"] = controller.teach
        # Whether the board is read at all: false while it waits for its first calibration.
        out["calibrated"] = None if self._table is None else self._table.calibrated
        out["calibrate"] = self.calibrate_url
        out["feedback"] = self._feedback
        out["last_move"] = self._last_move
        out["seq"] = self._seq
        if event is not None:
            out["t"] = event.t
        return out

    def _illegal(self, state: MatchState, marks: Sequence[int], reasons: Sequence[str], seat: int) -> dict[str, Any]:
        """An illegal move (or, against gnubg, a legal one that is not gnubg's) as the page
        shows it: ``marks``, ``reasons``, ``seat``, ``kind`` (``illegal`` or ``not-gnubgs``),
        ``arrows`` (the move as made, when known), ``expected`` (the move wanted, when known)
        and ``who`` (gnubg's player's name, for a move not gnubg's)."""
        wrong = self._wrong or {}
        out: dict[str, Any] = {
            "marks": [absolute_point(p, seat) for p in marks],
            "reasons": list(reasons),
            "seat": seat,
            "kind": "illegal",
            "arrows": [],
            "expected": None,
        }
        controller = self._controller
        if wrong.get("kind") == "not-gnubgs-move":
            gnubg = None if controller is None else controller.gnubg
            out["kind"] = "not-gnubgs"
            out["who"] = "gnubg" if gnubg is None else self.names[gnubg]
            out["expected"] = wrong.get("gnubg") or "no move"
            with contextlib.suppress(BackgammonError):
                out["arrows"] = arrows(Play.parse(str(wrong.get("play", ""))), seat)
            return out
        nearest = wrong.get("nearest") or []
        if nearest:
            out["expected"] = nearest[0] or "no move"
        read = wrong.get("read")
        if isinstance(read, dict) and state.phase is Phase.MOVE:
            mover, opponent = read.get("mover"), read.get("opponent")
            if isinstance(mover, list) and isinstance(opponent, list) and len(mover) == len(opponent) == 25:
                out["arrows"] = made_arrows(state.position, mover, opponent, seat)
        return out

    def _publish_state(self, snapshot: dict[str, Any]) -> None:
        # Compared without the time and sequence: an event that changes nothing on the board
        # sends no new state.
        key = json.dumps({k: v for k, v in snapshot.items() if k not in ("t", "seq")}, sort_keys=True)
        with self._lock:
            self._state = snapshot
            if key == self._state_text:
                return
            self._state_text = key
        self._send(sse(snapshot, kind="state"))

    def _send(self, message: str) -> None:
        with self._lock:
            subscribers = list(self._subscribers)
        for subscriber in subscribers:
            try:
                subscriber.loop.call_soon_threadsafe(self._put, subscriber, message)
            except RuntimeError:  # its loop is closed: the server stopped
                self._drop(subscriber)

    def _put(self, subscriber: _Subscriber, message: object) -> None:
        try:
            subscriber.queue.put_nowait(message)
        except asyncio.QueueFull:
            # A page that cannot keep up is let go; its EventSource reconnects and starts afresh.
            log.info("a page fell %d messages behind and was disconnected", QUEUE_LIMIT)
            self._drop(subscriber)
            while not subscriber.queue.empty():
                subscriber.queue.get_nowait()
            subscriber.queue.put_nowait(_END)

    def _drop(self, subscriber: _Subscriber) -> None:
        with self._lock:
            if subscriber in self._subscribers:
                self._subscribers.remove(subscriber)

    # -- the pages' side ---------------------------------------------------------------------

    def state(self) -> dict[str, Any]:
        """The latest snapshot (``GET /api/state``)."""
        with self._lock:
            return dict(self._state)

    def events(self, after: int = 0) -> list[dict[str, Any]]:
        """The kept events numbered above ``after``, as JSON (for tests and tools)."""
        with self._lock:
            kept = list(self._backlog)
        return [json.loads(message.rsplit("data: ", 1)[1]) for seq, message in kept if seq > after]

    @property
    def pages(self) -> int:
        """Pages subscribed now."""
        with self._lock:
            return len(self._subscribers)

    async def subscribe(self, last_seen: int | None = None) -> tuple[_Subscriber, list[str]]:
        """Subscribe the running event loop; returns the subscription and what to send first:
        the state, then the kept events after ``last_seen`` (all of them for a new page)."""
        subscriber = _Subscriber(asyncio.get_running_loop(), asyncio.Queue(QUEUE_LIMIT))
        with self._lock:
            first = [sse(self._state, kind="state")]
            first += [message for seq, message in self._backlog if last_seen is None or seq > last_seen]
            self._subscribers.append(subscriber)
        return subscriber, first

    def unsubscribe(self, subscriber: _Subscriber) -> None:
        """Stop sending to ``subscriber``."""
        self._drop(subscriber)

    @staticmethod
    async def next_message(subscriber: _Subscriber, timeout: float) -> str | None:
        """The subscriber's next message; ``""`` after ``timeout`` seconds of silence; ``None``
        when the subscription has ended."""
        try:
            message = await asyncio.wait_for(subscriber.queue.get(), timeout)
        except TimeoutError:
            return ""
        return None if message is _END else str(message)

    def close(self) -> None:
        """End every subscription (the server is stopping)."""
        with self._lock:
            subscribers, self._subscribers = self._subscribers, []
        for subscriber in subscribers:
            with contextlib.suppress(RuntimeError):
                subscriber.loop.call_soon_threadsafe(subscriber.queue.put_nowait, _END)
