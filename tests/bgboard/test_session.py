# SPDX-License-Identifier: MIT
"""One table session: what surrounds a table, its requests, tournament mode, one stack closing
everything; and the event kinds, spelt one way."""

from __future__ import annotations

import ast
import threading
from pathlib import Path

import pytest

from bgboard.controller import Controller
from bgboard.events import EVENT_KINDS, Event, Notice
from bgboard.session import Inbox, SessionOptions, TableSession
from bgboard.store import MatchStore
from bgboard.table import Table
from engine.match import MatchOptions, MatchState

ROOT = Path(__file__).resolve().parents[2]


class Hints:
    """Stands for gnubg's hint engine: tournament mode must put it aside and give it back."""


def table_with_hints() -> tuple[Table, list[Event]]:
    said: list[Event] = []
    controller = Controller(MatchState.new_match(5), teach=True)
    table = Table(None, None, controller, sinks=[said.append], hints=Hints())  # type: ignore[arg-type]
    return table, said


def test_tournament_mode_puts_the_hints_aside_and_gives_them_back() -> None:
    table, said = table_with_hints()
    hints = table.hints
    events = table.set_tournament(True, 1.0)
    assert [e.kind for e in events] == ["tournament"] and events[0].fields == {"tournament": True}
    assert table.tournament and table.hints is None and not table.controller.teach
    assert table.set_tournament(True, 1.5) == []  # already on: nothing said
    events = table.set_tournament(False, 2.0)
    assert events[0].fields == {"tournament": False}
    assert not table.tournament and table.hints is hints and table.controller.teach
    assert [(e.kind, e.t) for e in said] == [("tournament", 1.0), ("tournament", 2.0)]


class Attached:
    """An attachment that notes what the session gives it and when it is started and closed."""

    def __init__(self, name: str, log: list[str]) -> None:
        self.name, self.log = name, log

    def attach(self, session: TableSession) -> None:
        assert session.table is not None and session.match_id == 1
        self.log.append(f"attach {self.name}")
        session.on_start.append(lambda: self.log.append(f"start {self.name}"))
        session.on_finish.append(lambda: self.log.append(f"finish {self.name}"))
        session.stack.callback(self.log.append, f"close {self.name}")


def test_the_session_attaches_starts_and_closes_in_order() -> None:
    log: list[str] = []
    options = SessionOptions(publish=Attached("publisher", log), page=Attached("page", log))
    store = MatchStore(":memory:")
    match = store.start_match(("Ann", "Bob"), 5, MatchOptions())
    table, _ = table_with_hints()
    with TableSession(options, lambda event: None) as session:
        session.stack.callback(log.append, "close store")
        session.attach(table, store, match)
        session.start()
        session.finish()
    assert log == [
        "attach publisher",
        "attach page",
        "start publisher",
        "start page",
        "finish publisher",
        "finish page",
        "close page",
        "close publisher",
        "close store",
    ]
    store.close()


def test_requests_from_other_threads_wait_for_the_tables_owner() -> None:
    table, said = table_with_hints()
    session = TableSession(SessionOptions(), lambda event: None, now=lambda: 7.0)
    session._table = table
    thread = threading.Thread(target=lambda: (session.set_tournament(True), session.say_later(Event("hall-lost", "x"))))
    thread.start()
    thread.join()
    # Nothing reached the table from the other thread...
    assert not table.tournament and said == []
    # ...until its owner ran the requests, in order, at the table's time.
    events = session.run_requests(7.0)
    assert [e.kind for e in events] == ["tournament"] and table.tournament
    assert [(e.kind, e.t) for e in said] == [("tournament", 7.0), ("hall-lost", 7.0)]


def test_a_failing_request_is_told_to_who_asked_and_the_rest_still_run() -> None:
    inbox = Inbox()

    def broken() -> list[Event]:
        raise RuntimeError("no such board")

    failed = inbox.call(broken)
    fine = inbox.submit("done")
    events = inbox.run_pending(lambda command: [Event("noted", command)])
    assert [e.text for e in events] == ["done"]
    with pytest.raises(RuntimeError, match="no such board"):
        failed.result(0)
    assert [e.kind for e in fine.result(0)] == ["noted"]


def test_an_event_of_no_known_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="'accept_resign' is not an event kind"):
        Event("accept_resign", "Ann accepts")
    with pytest.raises(ValueError, match="not an event kind"):
        Notice("hint-wanted", "a request is not an event")


def test_every_kind_is_spelt_one_way() -> None:
    assert all(kind == kind.lower() and "_" not in kind and " " not in kind for kind in EVENT_KINDS)


def test_every_kind_the_code_names_is_a_known_one() -> None:
    """The kinds written in the code, including paths no test walks, are all in EventKind."""
    makers = {"Event", "Notice", "LedsLit", "Players", "_say", "_say_later"}
    named: set[str] = set()
    for path in (ROOT / "bgboard").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            first = node.args[0]
            if name in makers and isinstance(first, ast.Constant) and isinstance(first.value, str):
                named.add(first.value)
    assert len(named) > 40
    assert named <= EVENT_KINDS, f"not in EventKind: {sorted(named - EVENT_KINDS)}"
