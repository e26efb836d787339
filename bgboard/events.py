# SPDX-License-Identifier: MIT
"""The table's events, and the sinks they are delivered to.

Everything bgboard says at a table is an :class:`Event`: what the controller makes of the
board, the buttons and the keyboard (a roll, a move, an illegal move, please check...), the
referee's own news (started, camera lost, LEDs back, stopped) and, in the demo, what the
simulated players do. The :class:`~bgboard.table.Table` emits each one once, stamped with the
time on the table's clock, to its :class:`Sinks`; each sink does one thing with it:

- :class:`TextSink`: one line in players' words, with the time (``bgboard referee``,
  ``replay`` and ``demo`` without ``--json``);
- :class:`JsonLinesSink`: one JSON object per line (``--json``), :meth:`Event.to_json`;
- :class:`StoreSink`: the actions, corrections and take-backs written to the match store.

A sink is anything that takes one event (:class:`EventSink`): a live web page or a hall
publisher is one more sink added to the table's :class:`Sinks`, and a test's list's
``append`` is one too.

Every event has one JSON shape wherever it comes from: ``event`` (its kind), ``text`` (in
players' words), ``t`` (seconds on the table's clock, ``null`` for a line that belongs to no
moment of play), the kind's own fields, and for a recorded action its ``action``, ``source``
and ``confidence``.

>>> import io
>>> out = io.StringIO()
>>> sinks = Sinks(TextSink(out, stamp=frame_clock(6, 1)), JsonLinesSink(out))
>>> sinks(Event("roll", "Ann rolled 5-2", {"dice": [5, 2]}, t=3.25))
>>> print(out.getvalue(), end="")
   3.2s  Ann rolled 5-2
{"event": "roll", "text": "Ann rolled 5-2", "dice": [5, 2], "t": 3.25}
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Final, Literal, Protocol, TextIO, get_args

from engine.match import Action

if TYPE_CHECKING:
    # Only StoreSink's signature names the store: events (and the controller) work without SQLite.
    from bgboard.store import MatchStore
    from hardware.scene import Scene


def counted(n: int, what: str) -> str:
    """``n`` and ``what``, plural unless one: ``counted(2, "move")`` is ``"2 moves"``."""
    return f"{n} {what}{'' if n == 1 else 's'}"


def number(player: int | None) -> int | None:
    """The player as people number him, 1 or 2, from the engine's index, 0 or 1 (events, the
    page and the console speak of players 1 and 2); ``None`` stays ``None``."""
    return None if player is None else player + 1


#: Every kind of event, spelt one way (words joined by ``-``). An :class:`Event` of another
#: kind is refused when it is made, so a misspelt kind fails its first test, not a page.
EventKind = Literal[
    # The match, as recorded (an action each).
    "opening-roll",
    "roll",
    "move",
    "double",
    "take",
    "drop",
    "beaver",
    "resign",
    "accept-resign",
    "reject-resign",
    # What the referee makes of the board.
    "opening-tie",
    "re-roll",
    "illegal",
    "legal-now",
    "not-moved",
    "put-back",
    "please-check",
    "noted",
    "refused",
    "unknown",
    "undo",
    "correction",
    "crawford",
    "game-over",
    "match-over",
    "not-calibrated",
    # Teach mode and gnubg at the table.
    "hint",
    "cube-hint",
    "feedback",
    "hint-unavailable",
    "teach",
    "gnubg",
    "gnubg-roll",
    "gnubg-move",
    "gnubg-cube",
    "gnubg-resigns",
    "gnubg-unavailable",
    "not-gnubgs-move",
    "analysis",
    # The referee's own news: the camera, the LEDs, the page, the hall.
    "started",
    "resumed",
    "settings-kept",
    "in-progress",
    "set-up",
    "camera-lost",
    "camera-back",
    "calibrate",
    "calibrated",
    "leds",
    "leds-connected",
    "leds-lost",
    "leds-back",
    "firmware-leds",
    "web",
    "web-open",
    "publishing",
    "published",
    "hall-connected",
    "hall-lost",
    "tournament",
    "export",
    "stopped",
    # The demo: its players and its figures.
    "demo",
    "players",
    "summary",
    "exported",
    "mat-rewritten",
]
#: The kinds, as a set.
EVENT_KINDS: Final = frozenset(get_args(EventKind))


@dataclass(frozen=True, slots=True)
class Event:
    """Something to tell the players, and perhaps to store.

    :ivar kind: what happened (:data:`EventKind`), e.g. ``roll``, ``re-roll``, ``move``,
        ``illegal``, ``please-check``; in teach mode also ``hint``, ``cube-hint`` and
        ``feedback``; the table adds ``hint-unavailable``, the referee its news (``started``,
        ``camera-lost``, ``leds-back``, ``stopped``...). What the controller asks of whoever
        runs it is a :class:`Request`, not an event.
    :ivar text: in players' words, for the console.
    :ivar fields: JSON-ready details (dice, marks, reasons, score...).
    :ivar action: the engine action to store, if any.
    :ivar source: where the action came from (the store's sources: ``camera``, ``button``,
        ``keyboard``, ``correction``).
    :ivar confidence: how sure the camera was (0..1), for camera actions.
    :ivar note: a remark to store with the action.
    :ivar undo: how many stored actions this one replaces (a correction of a recorded move).
    :ivar verdict: what the LEDs show after it: ``legal``, ``partial``, ``illegal``, ``check``.
    :ivar t: when it happened, in seconds on the table's clock (the camera frames' time);
        ``None`` until the table stamps it, and for lines outside play.
    """

    kind: EventKind
    text: str
    fields: dict[str, Any] = field(default_factory=dict)
    action: Action | None = None
    source: str | None = None
    confidence: float | None = None
    note: str | None = None
    undo: int = 0
    verdict: str | None = None
    t: float | None = None

    def __post_init__(self) -> None:
        if self.kind not in EVENT_KINDS:
            raise ValueError(f"{self.kind!r} is not an event kind (bgboard.events.EventKind)")

    def at(self, t: float | None) -> Event:
        """This event stamped with the time ``t``; an event already stamped keeps its time."""
        if self.t is not None or t is None:
            return self
        return replace(self, t=t)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict: one ``--json`` line, one server-sent event."""
        out: dict[str, Any] = {"event": self.kind, "text": self.text, **self.fields}
        if self.action is not None:
            out["action"] = type(self.action).__name__
            out["source"] = self.source
            if self.confidence is not None:
                out["confidence"] = round(self.confidence, 4)
        if self.note:
            out["note"] = self.note
        if self.undo:
            out["undo"] = self.undo
        if self.verdict:
            out["verdict"] = self.verdict
        out["t"] = None if self.t is None else round(self.t, 2)
        return out


#: What a :class:`Request` asks for: gnubg's hint, or gnubg's own action when it plays a side.
RequestKind = Literal["hint", "gnubg"]


@dataclass(frozen=True, slots=True)
class Request:
    """Something the controller needs from whoever runs it, not news for the players: a hint
    (teach mode, the hint button), answered with
    :meth:`~bgboard.controller.Controller.on_hint` or
    :meth:`~bgboard.controller.Controller.on_cube_hint`; or gnubg's action when it plays a side
    (:meth:`~bgboard.controller.Controller.ask_gnubg`). Requests travel apart from the events
    (:attr:`~bgboard.controller.Controller.requests`); the table answers them.

    :ivar kind: ``hint`` or ``gnubg``.
    :ivar text: what is asked, in words (for a log).
    :ivar fields: what the answer needs: ``gnubgid`` (the state asked about), ``wanted``...
    """

    kind: RequestKind
    text: str
    fields: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Players(Event):
    """What the players do at the table, as the demo scripts them (kind ``players``).

    Not what bgboard reads: the console sets these lines apart with a ``*``.
    """


@dataclass(frozen=True, slots=True)
class Notice(Event):
    """A line about the run rather than the play: a heading, a summary, a file written.

    :ivar console: what the console prints for it, when that is more than :attr:`text` (the
        lines round it, a file's companions); ``None``: the text.
    """

    console: str | None = None


@dataclass(frozen=True, slots=True)
class LedsLit(Event):
    """The LEDs as they are lit now (kind ``leds``): ``fields["lit"]`` in words for JSON.

    :ivar scene: the scene, which the console draws as the board's lights.
    """

    scene: Scene | None = None


class EventSink(Protocol):
    """Anything that takes the table's events, one at a time, in order."""

    def __call__(self, event: Event) -> None:
        """Take one event."""


class Sinks:
    """Delivers each event to every sink, in the order they were added.

    A sink that raises stops the delivery, and the error reaches whoever emitted the event:
    the store refusing an action must not go unnoticed. A sink that may fail without harm to
    the match (a web page, a network publisher) catches its own errors.
    """

    def __init__(self, *sinks: EventSink) -> None:
        self._sinks: tuple[EventSink, ...] = sinks
        self._lock = threading.Lock()

    def add(self, sink: EventSink) -> None:
        """Deliver the next events to ``sink`` too (after the others)."""
        with self._lock:
            self._sinks = (*self._sinks, sink)

    def remove(self, sink: EventSink) -> None:
        """Deliver nothing more to ``sink``.

        :raises ValueError: it is not one of the sinks.
        """
        with self._lock:
            sinks = list(self._sinks)
            sinks.remove(sink)
            self._sinks = tuple(sinks)

    def __call__(self, event: Event) -> None:
        """Deliver ``event`` to every sink."""
        # A sink added or removed meanwhile (from another thread) counts from the next event.
        for sink in self._sinks:
            sink(event)

    def __iter__(self) -> Iterator[EventSink]:
        return iter(self._sinks)

    def __len__(self) -> int:
        return len(self._sinks)


# -- the console ------------------------------------------------------------------------------


def wall_clock(event: Event) -> str:
    """The local time of day, ``HH:MM:SS``: the referee's console stamp."""
    return time.strftime("%H:%M:%S")


def frame_clock(width: int, digits: int) -> Callable[[Event], str]:
    """A stamp of the event's time on the table's clock, ``"{t:{width}.{digits}f}s"``."""

    def stamp(event: Event) -> str:
        return f"{0.0 if event.t is None else event.t:{width}.{digits}f}s"

    return stamp


class _Writer:
    """One stream, written a whole line at a time from any thread, flushed after each."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        # Events come from the table's thread, but a command's error paths may write too.
        self._lock = threading.Lock()

    def write(self, text: str) -> None:
        with self._lock:
            self.out.write(text + "\n")
            self.out.flush()


class TextSink(_Writer):
    """The console in players' words: ``STAMP  text`` per event.

    The demo's players' lines are ``  * text``, a :class:`Notice` is printed as it says, and
    :class:`LedsLit` draws the board's lights (:func:`hardware.terminal.render`).

    :param out: the stream (flushed after every line, so a pipe sees each event).
    :param stamp: the time prefix of an event's line (default: the local wall clock).
    :param colour: draw the lights in ANSI colours; default: when ``out`` is a terminal and
        ``NO_COLOR`` is unset.
    """

    def __init__(self, out: TextIO, *, stamp: Callable[[Event], str] = wall_clock, colour: bool | None = None) -> None:
        super().__init__(out)
        self.stamp = stamp
        if colour is None:
            colour = out.isatty() and not os.environ.get("NO_COLOR")
        self.colour = colour

    def line(self, event: Event) -> str:
        """What the console prints for ``event`` (perhaps several lines)."""
        match event:
            case LedsLit(scene=scene) if scene is not None:
                from hardware.terminal import render

                # A blank line under the board sets it apart from the events that follow.
                return "\n".join(render(scene, colour=self.colour)) + "\n"
            case Notice(console=console):
                return event.text if console is None else console
            case Players():
                return f"  * {event.text}"
            case _:
                return f"{self.stamp(event)}  {event.text}"

    def __call__(self, event: Event) -> None:
        """Print one event."""
        self.write(self.line(event))


def encode(event: Event) -> str:
    """``event`` as one line of JSON: what ``--json`` prints, and each ``data:`` line of the
    live page's server-sent events."""
    return json.dumps(event.to_json(), ensure_ascii=False)


class JsonLinesSink(_Writer):
    """One JSON object per event and line (:func:`encode`)."""

    def __call__(self, event: Event) -> None:
        """Print one event."""
        self.write(encode(event))


def console_sink(
    out: TextIO, *, json_lines: bool = False, stamp: Callable[[Event], str] = wall_clock
) -> TextSink | JsonLinesSink:
    """The console a command prints its events on: JSON Lines, or text with ``stamp``."""
    return JsonLinesSink(out) if json_lines else TextSink(out, stamp=stamp)


# -- the store ---------------------------------------------------------------------------------


def store_event(store: MatchStore, match_id: int, event: Event) -> None:
    """Write what ``event`` asks for to the match store: an action, a correction, or an undo.

    Events with nothing to store are skipped, so a caller may pass every event through.

    :raises IllegalActionError: the store's match and the controller disagree about the rules.
    """
    if event.kind == "undo":
        store.undo(match_id, source=event.source or "button", note=event.note)
    elif event.action is None or event.source is None:
        return
    elif event.undo:
        store.correct(match_id, event.action, undo=event.undo, confidence=event.confidence, note=event.note)
    else:
        store.record(match_id, event.action, source=event.source, confidence=event.confidence, note=event.note)


class StoreSink:
    """The match store's side of the stream: each event's action, correction or take-back.

    :param store: the match store.
    :param match_id: the match the events belong to.
    """

    def __init__(self, store: MatchStore, match_id: int) -> None:
        self.store = store
        self.match_id = match_id

    def __call__(self, event: Event) -> None:
        """Store what ``event`` asks for (see :func:`store_event`)."""
        store_event(self.store, self.match_id, event)
