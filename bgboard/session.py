# SPDX-License-Identifier: MIT
"""One table's session: what is attached around a table while it plays, and closed with it.

The referee, ``bgboard play`` and the demo each run one :class:`~bgboard.table.Table`; around
it they need the same things, set up and closed the same way:

- gnubg (:meth:`TableSession.start_gnubg`): the hints in teach mode and the opponent against
  gnubg, one process;
- the attachments named in :class:`SessionOptions`: the live page
  (:class:`bgboard.web.server.LivePage`) and the hall's publisher
  (:class:`bgboard.hall.publish.Publishing`). This module does not know them: each attaches
  itself to the session's table (:class:`Attachment`), so the table's own modules never import
  the web or the hall;
- the requests to the table from other threads (:class:`Inbox`): the page's commands, the
  hall's tournament mode, a board calibrated on the page, news of the hall's link. The table
  is not thread-safe, so they wait until its owner runs them between frames
  (:meth:`TableSession.run_requests`);
- tournament mode, applied the same way by every table (:meth:`Table.set_tournament
  <bgboard.table.Table.set_tournament>`);
- one :class:`~contextlib.ExitStack` that closes all of it, last opened first closed; the
  referee puts its camera, LEDs, buttons and store on it too.
"""

from __future__ import annotations

import concurrent.futures
import queue
from collections.abc import Callable, Iterable
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from bgboard.config import gnubg_hints
from bgboard.errors import SetupError
from bgboard.events import Event, EventSink
from engine.hints import HintError

if TYPE_CHECKING:
    from bgboard.store import MatchStore
    from bgboard.table import Table
    from engine.hints import GnubgHints
    from vision.profile import Profile


class Attachment(Protocol):
    """Something a session attaches to its table: the live page, the hall's publisher."""

    def check(self) -> None:
        """Refuse now what would keep it from attaching (an address it cannot listen on), before
        the table's owner starts a match that would then be left empty.

        :raises BgboardError: it cannot attach, in words.
        """

    def attach(self, session: TableSession) -> None:
        """Attach to ``session.table``; put what closes it on ``session.stack``, and what
        starts it once the table's owner begins on ``session.on_start``."""


class Calibration(Protocol):
    """A board calibrated on the live page (:class:`bgboard.web.calibration_view.Calibrated`)."""

    profile: Profile
    path: Path

    @property
    def text(self) -> str:
        """The calibration in a line."""

    def to_json(self) -> dict[str, Any]:
        """Its summary, for the event's fields."""


@dataclass(frozen=True, slots=True)
class SessionOptions:
    """What a table's session attaches.

    :param teach: teach mode: gnubg's hints after each roll and its verdict on each move.
    :param against: ``(level, side)``: gnubg plays side 1 or 2 at that level.
    :param publish: the hall's publisher (:class:`bgboard.hall.publish.Publishing`).
    :param page: the live page (:class:`bgboard.web.server.LivePage`).
    :param hint_timeout: seconds gnubg may take over one request before it is restarted.
    """

    teach: bool = False
    against: tuple[str, int] | None = None
    publish: Attachment | None = None
    page: Attachment | None = None
    hint_timeout: float = 30.0

    @property
    def attachments(self) -> tuple[Attachment, ...]:
        """The attachments, in the order they are attached (the publisher's sink first)."""
        return tuple(a for a in (self.publish, self.page) if a is not None)


#: A request for the table's owner: a console line, or a function to call in its thread.
_Change = str | Callable[[], Iterable[Event]]


class Inbox:
    """Requests to the table from other threads, waiting for its owner to run them in its own.

    :meth:`submit` (any thread) queues a console command and returns a future; :meth:`call`
    queues a function that must run beside the table (the calibration view's new reader, the
    hall's orders). The owner calls :meth:`run_pending` between frames, which runs each command
    with ``run``, or the function itself, and sets its future to the events it caused.
    """

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[tuple[_Change, concurrent.futures.Future[list[Event]]]] = queue.SimpleQueue()

    def submit(self, command: str) -> concurrent.futures.Future[list[Event]]:
        """Queue ``command`` (a console line such as ``correct 13/7 8/7``)."""
        future: concurrent.futures.Future[list[Event]] = concurrent.futures.Future()
        self._queue.put((command, future))
        return future

    def call(self, function: Callable[[], Iterable[Event]]) -> concurrent.futures.Future[list[Event]]:
        """Queue ``function``, to be called in the table's thread; its future gets the events it returns."""
        future: concurrent.futures.Future[list[Event]] = concurrent.futures.Future()
        self._queue.put((function, future))
        return future

    def run_pending(self, run: Callable[[str], Iterable[Event]], *, wait: float = 0.0) -> list[Event]:
        """Run the queued commands with ``run`` and the queued functions themselves (waiting up
        to ``wait`` seconds for the first); returns the events they caused, in order."""
        said: list[Event] = []
        done = 0
        while True:
            try:
                item, future = self._queue.get(timeout=wait) if wait > 0 and not done else self._queue.get_nowait()
            except queue.Empty:
                return said
            done += 1
            if not future.set_running_or_notify_cancel():
                continue
            try:
                events = list(run(item) if isinstance(item, str) else item())
            except Exception as exc:  # whoever asked hears of it; the table goes on
                future.set_exception(exc)
                continue
            said.extend(events)
            future.set_result(events)


class TableSession:
    """What surrounds one table while it plays; a context manager that closes it all.

    Made before the table (gnubg first, since the table is built with its hints), attached to
    it once it exists (:meth:`attach`), started when its owner begins (:meth:`start`).

    :param options: what to attach.
    :param console: where the session's own news go before the table exists (the live page's
        address and token).
    :param now: the table's time now (the latest frame's), for events from other threads.
    """

    def __init__(
        self, options: SessionOptions, console: EventSink, *, now: Callable[[], float | None] = lambda: None
    ) -> None:
        self.options = options
        self.console = console
        self.now = now
        #: Closes everything the session, its attachments and its owner opened.
        self.stack = ExitStack()
        #: The requests to the table from other threads.
        self.inbox = Inbox()
        #: Called by :meth:`start`: what the attachments start once the table's owner begins.
        self.on_start: list[Callable[[], None]] = []
        #: Called by :meth:`finish`: what the attachments end once the play is over (each also
        #: on the stack, and ending once).
        self.on_finish: list[Callable[[], None]] = []
        #: The gnubg process (teach mode and the opponent), once :meth:`start_gnubg` ran.
        self.gnubg: GnubgHints | None = None
        self._table: Table | None = None
        self.store: MatchStore | None = None
        self.match_id = 0
        #: Where the live page's calibration view writes the board's profile (``None``: no view).
        self.profile: Path | None = None
        #: Makes the table read with a board calibrated on the page (its owner's; in its thread).
        self.on_calibrated: Callable[[Calibration], list[Event]] | None = None
        #: The live page's calibration view, once the page is attached with one.
        self.calibrate_url: str | None = None
        #: The live page's address, once attached.
        self.page_url: str | None = None

    def __enter__(self) -> TableSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close everything on the stack, last opened first."""
        self.stack.close()

    def start_gnubg(self) -> GnubgHints | None:
        """gnubg for teach mode or for playing against it; ``None`` when neither.

        Against gnubg it is started now: without it nobody plays its side, so a missing gnubg
        keeps the table from starting, before anything is recorded. For hints alone nothing
        starts until the first request (a missing gnubg is said then, and refereeing goes on).

        :raises SetupError: ``against`` and gnubg cannot be started.
        """
        if self.gnubg is None and (self.options.teach or self.options.against is not None):
            self.gnubg = self.stack.enter_context(gnubg_hints(timeout=self.options.hint_timeout))
            if self.options.against is not None:
                try:
                    self.gnubg.start()
                except HintError as exc:
                    raise SetupError(f"--against gnubg: {exc}") from None
        return self.gnubg

    @property
    def hints(self) -> GnubgHints | None:
        """The hint engine in teach mode, else ``None``."""
        return self.gnubg if self.options.teach else None

    @property
    def table(self) -> Table:
        """The table, once attached."""
        assert self._table is not None, "attach() first"
        return self._table

    def check(self) -> None:
        """Check every attachment can attach (:meth:`Attachment.check`), before a match is begun.

        :raises BgboardError: one cannot.
        """
        for attachment in self.options.attachments:
            attachment.check()

    def attach(self, table: Table, store: MatchStore, match_id: int) -> None:
        """Attach the options' attachments to ``table``, which records match ``match_id`` in ``store``.

        :raises BindError: the live page's address cannot be listened on.
        """
        self._table, self.store, self.match_id = table, store, match_id
        for attachment in self.options.attachments:
            attachment.attach(self)

    def start(self) -> None:
        """The table's owner begins: start what the attachments run (the publisher's thread)."""
        for begin in self.on_start:
            begin()

    def finish(self) -> None:
        """The play is over: end what sends it away (the publisher says what the broker has),
        while the rest (the live page) stays until :meth:`close`."""
        for end in self.on_finish:
            end()

    def run_requests(self, now: float, *, wait: float = 0.0) -> list[Event]:
        """From the table's thread: run the requests waiting (console lines at the table's time
        ``now``); returns the events they caused."""
        return self.inbox.run_pending(lambda command: self.table.command(command, now), wait=wait)

    def say_later(self, event: Event) -> None:
        """From any thread: say ``event`` at the table, in its turn."""

        def say() -> list[Event]:
            self.table.say(event, self.now())
            return []

        self.inbox.call(say)

    def set_tournament(self, on: bool) -> None:
        """From any thread (the hall's order): tournament mode on or off, in the table's turn."""
        self.inbox.call(lambda: self.table.set_tournament(on, self.now()))
