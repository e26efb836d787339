# SPDX-License-Identifier: MIT
"""The hall against a real Mosquitto: what the referee says reaches it at once, a table's runs
(stores) are kept apart, and the hall's confirmations keep what a dying broker loses.

Like tests/bgboard/test_hall.py, every test starts Debian's ``mosquitto`` on a loopback port.
"""

from __future__ import annotations

import json
import sqlite3
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from mqtt_broker import Broker
from test_controller import SETTLE, _doubtful, reading_of
from test_hall import HallProcess, corpus, get_json, wait_for

from bgboard.controller import Controller
from bgboard.events import Sinks, StoreSink
from bgboard.hall.outbox import Outbox
from bgboard.hall.publish import Publisher
from bgboard.hall.server import HALL_APPLICATION_ID, Hall, HallStore
from bgboard.hall.topics import BrokerUrl
from bgboard.sim.scripted import ScriptedTable
from bgboard.store import MatchStore
from engine.match import MatchOptions
from engine.position import Position

pytestmark = pytest.mark.xdist_group("mqtt")


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Broker]:
    server = Broker(tmp_path / "broker")
    server.start()
    yield server
    server.stop()


def live_event(url: str) -> dict:
    """The first event of the hall's live stream."""
    with urllib.request.urlopen(url, timeout=5) as answer:
        assert answer.headers["Content-Type"].startswith("text/event-stream")
        for line in answer:
            if line.startswith(b"data: "):
                return json.loads(line[6:])
    raise AssertionError("no event")


def test_an_illegal_move_and_a_please_check_reach_the_hall_at_once_and_unknown_tables_are_404(
    tmp_path: Path, broker: Broker
) -> None:
    """The referee says an illegal move (no action stored): the hall's API shows it within a
    few seconds, then the "please check" that follows."""
    hall = HallProcess(broker.url, tmp_path / "hall.sqlite3", tmp_path / "hall.log")
    hall.start()
    store = MatchStore(tmp_path / "board.sqlite3")
    match = store.start_match(("Ann", "Bob"), 5, MatchOptions())
    publisher = Publisher(BrokerUrl.parse(broker.url), "t1", store, match)
    controller = Controller(store.state(match))
    sinks = Sinks(StoreSink(store, match), publisher)

    def say(events: list) -> list[str]:
        for event in events:
            sinks(event)
        return [e.kind for e in events]

    def row() -> dict:
        rows = get_json(hall.api)
        return rows[0] if rows else {}

    publisher.start()
    try:
        assert say(controller.on_command("dice 13", 0.0)) == ["opening-roll"]
        # The opening roll's state first: what follows must be published on its own.
        wait_for(lambda: row().get("seq") == 1 and row().get("actions") == 1, 20, "the opening roll in the hall")
        assert row()["illegal"] is None
        wrong = Position.from_points({6: 5, 7: 1, 8: 3, 13: 4, 24: 2}, {6: 5, 8: 3, 13: 5, 24: 2})
        controller.on_reading(reading_of(wrong, 1), 1.0)
        assert say(controller.on_tick(1.0 + SETTLE)) == ["illegal"]
        wait_for(lambda: bool(row().get("illegal")), 5, "the illegal move in the hall's API")
        assert row()["illegal"].startswith("illegal move: ")
        # The page is live (server-sent events, no reload) and lists the alert.
        first = live_event(f"http://127.0.0.1:{hall.port}/api/events")
        assert [(a["table"], a["kind"]) for a in first["alerts"]] == [("t1", "illegal")]
        assert first["tables"][0]["illegal"] == row()["illegal"] and "|" in first["tables"][0]["board"]
        with urllib.request.urlopen(f"http://127.0.0.1:{hall.port}/", timeout=5) as answer:
            page = answer.read().decode()
        assert "http-equiv" not in page and "/static/hall.js" in page
        assert "<li class='illegal'>t1: illegal move: " in page
        controller.on_reading(_doubtful(controller.state, "24/21 24/23", "24/20"), 3.0)
        assert say(controller.on_tick(3.0 + SETTLE)) == ["please-check"]
        wait_for(lambda: bool(row().get("check")), 5, "the please-check in the hall's API")
        assert row()["check"].startswith("please check")
        kinds = [a["kind"] for a in live_event(f"http://127.0.0.1:{hall.port}/api/events")["alerts"]]
        assert "check" in kinds
        assert row()["actions"] == 1  # nothing stored: only the state was published again
        # A table the hall does not know has no actions to list: 404, said in JSON.
        base = f"http://127.0.0.1:{hall.port}/api/tables"
        assert [a["seq"] for a in get_json(f"{base}/t1/actions")] == [1]
        with pytest.raises(urllib.error.HTTPError) as answer:
            get_json(f"{base}/nope/actions")
        assert answer.value.code == 404
        assert json.loads(answer.value.read()) == {"error": "no table 'nope' in the hall"}
    finally:
        publisher.stop()
        store.close()
        hall.stop()


def test_a_table_restarted_with_a_new_store_is_a_second_run_kept_beside_the_first(
    tmp_path: Path, broker: Broker
) -> None:
    """Two stores published in turn under one table name (each numbering from 1): the hall keeps
    every action of both, shows the newest, and confirms to each store its own."""
    url = BrokerUrl.parse(broker.url)
    hall_store = HallStore(tmp_path / "hall.sqlite3")
    first, second = corpus(2)
    stores = [MatchStore(tmp_path / "a.sqlite3"), MatchStore(tmp_path / "b.sqlite3")]

    def run(n: int, record, moves: int) -> ScriptedTable:
        table = ScriptedTable(record, stores[n], games=1)
        publisher = Publisher(url, "t1", stores[n], table.match_id)
        table.sinks.add(publisher)
        publisher.start()
        try:
            steps = table.steps()
            for _ in range(moves):
                next(steps)
            wait_for(lambda: publisher.connected, 10, "the broker")
        finally:
            # Lingers until the hall confirms it holds every action.
            publisher.stop(linger=10)
        return table

    try:
        with Hall(url, hall_store) as hall:
            run(0, first, 10)
            a = Outbox(stores[0], "t1")
            assert a.confirmed() == a.counts()[0] == 10
            table_b = run(1, second, 7)
            b = Outbox(stores[1], "t1")
            assert b.confirmed() == b.counts()[0] == 7
            assert a.store_id() != b.store_id()
            wait_for(lambda: hall_store.counts().get("t1", (0, 0))[0] == 17, 10, "both runs in the hall")
            assert hall_store.actions("t1") == a.messages() + b.messages()
            assert [m["seq"] for m in hall_store.actions("t1")] == [*range(1, 11), *range(1, 8)]
            [row] = hall_store.tables()
            assert row["actions"] == 17 and row["store"] == b.store_id()
            assert row["players"] == list(second.players)
            assert row["gnubgid"] == stores[1].summary(table_b.match_id).gnubgid
            # The first store back again: its new actions follow its own, confirmed to it.
            run(0, first, 0)
            assert a.confirmed() == 10
            assert hall.duplicates == 0 or hall.received == 17 + hall.duplicates
            assert hall_store.runs() == {("t1", a.store_id()): (10, 10), ("t1", b.store_id()): (7, 7)}
    finally:
        for store in stores:
            store.close()


def test_an_old_hall_database_is_upgraded_keeping_its_actions(tmp_path: Path) -> None:
    path = tmp_path / "hall.sqlite3"
    db = sqlite3.connect(path)
    db.execute(
        "CREATE TABLE actions (table_name TEXT NOT NULL, seq INTEGER NOT NULL CHECK (seq >= 1),"
        " received TEXT NOT NULL, message TEXT NOT NULL, PRIMARY KEY (table_name, seq)) WITHOUT ROWID"
    )
    db.execute("INSERT INTO actions VALUES ('t1', 1, '2026-01-01T00:00:00Z', ?)", (json.dumps({"seq": 1}),))
    db.execute(f"PRAGMA application_id={HALL_APPLICATION_ID}")
    db.commit()
    db.close()
    store = HallStore(path)
    assert store.runs() == {("t1", ""): (1, 1)}
    assert store.add_action({"table": "t1", "store": "b", "seq": 1})
    assert store.first_missing("t1", 3, "b") == 2 and store.held_upto("t1", "b") == 1
    store.close()


def test_the_hall_holds_every_action_after_the_broker_dies_with_what_it_acknowledged(
    tmp_path: Path, broker: Broker
) -> None:
    """Three tables; the hall away while they play; the broker SIGKILLed mid-game (with what it
    had acknowledged to the tables and queued for the hall) and again while the tables finish;
    then the hall back and the tables started again: the hall holds every action of every table,
    because a table keeps sending what the hall has not confirmed, not only what the broker has
    not acknowledged."""
    url = BrokerUrl.parse(broker.url)
    hall_store = HallStore(tmp_path / "hall.sqlite3")
    names = ["demo-1", "demo-2", "demo-3"]
    stores = {name: MatchStore(tmp_path / f"{name}.sqlite3") for name in names}
    tables = {name: ScriptedTable(record, stores[name], games=1) for name, record in zip(names, corpus(3), strict=True)}
    steps = {name: tables[name].steps() for name in names}
    publishers: dict[str, Publisher] = {}

    def start_all() -> None:
        for name in names:
            publisher = Publisher(url, name, stores[name], tables[name].match_id)
            tables[name].sinks.add(publisher)
            publishers[name] = publisher
            publisher.start()
        wait_for(lambda: all(p.connected for p in publishers.values()), 15, "the tables connected")

    def stop_all(linger: float) -> None:
        for name in names:
            tables[name].sinks.remove(publishers[name])
        for publisher in publishers.values():
            publisher.stop(linger=linger)

    def play(moves: int) -> None:
        for name in names:
            for _ in range(moves):
                next(steps[name])

    def acked_all() -> bool:
        return all(Outbox(s, n).counts()[0] == Outbox(s, n).counts()[1] for n, s in stores.items())

    try:
        hall = Hall(url, hall_store)
        hall.start()
        start_all()
        play(4)
        wait_for(lambda: all(Outbox(s, n).confirmed() == 4 for n, s in stores.items()), 15, "the hall's confirmations")
        hall.stop()  # away: the broker queues for its session, in memory
        play(8)
        wait_for(acked_all, 15, "the broker's acknowledgements")
        broker.kill()  # mid-game: what it queued for the hall is gone
        broker.start()
        wait_for(lambda: all(p.connected for p in publishers.values()), 15, "the tables back")
        play(4)
        wait_for(acked_all, 15, "the broker's acknowledgements again")
        stop_all(linger=0.5)  # the tables finish; no hall to confirm
        broker.kill()
        broker.start()
        assert all(Outbox(s, n).confirmed() == 4 for n, s in stores.items())
        with Hall(url, hall_store):
            start_all()
            stop_all(linger=15)  # lingers until the hall confirms everything
            for name, store in stores.items():
                outbox = Outbox(store, name)
                assert outbox.confirmed() == outbox.counts()[0] == 16, name
                assert hall_store.actions(name) == outbox.messages(), name
    finally:
        for store in stores.values():
            store.close()
