# SPDX-License-Identifier: MIT
"""The tournament hall against a real Mosquitto: publishing, catching up, the hall, security.

Every test here starts Debian's ``mosquitto`` on a loopback port (tests/bgboard/mqtt_broker.py);
without it they fail, saying how to install it (CI installs it with scripts/setup.sh --test).
"""

from __future__ import annotations

import io
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from mqtt_broker import Broker, Cable, free_port, mosquitto_path

from bgboard.cli import main
from bgboard.events import Event
from bgboard.hall.acl import acl_text, make_acl
from bgboard.hall.outbox import Outbox
from bgboard.hall.publish import Publisher, _published
from bgboard.hall.server import Hall, HallError, HallStore, send_tournament
from bgboard.hall.topics import CONTROL_TOPIC, BrokerUrl, PublishError, check_table_name, new_client, table_topic
from bgboard.sim.scripted import ScriptedTable
from bgboard.store import MatchStore
from engine.matfile import read_mat
from engine.record import MatchRecord

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT.parent / "shared" / "data" / "matches" / "bglab"

pytestmark = pytest.mark.xdist_group("mqtt")


def corpus(n: int) -> list[MatchRecord]:
    """The first ``n`` matches of the corpus (sorted by path) that have a game."""
    files = sorted(CORPUS.rglob("*.txt"))
    assert files, f"no corpus matches under {CORPUS}"
    records = []
    for path in files:
        record = read_mat(path.read_text(encoding="utf-8", errors="replace"), str(path)).record
        if record.games and record.games[0].actions:
            records.append(record)
        if len(records) == n:
            break
    return records


def wait_for(condition: Callable[[], bool], timeout: float, what: str) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"waited {timeout} s for {what}")


def get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=5) as answer:
        return json.loads(answer.read())


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Broker]:
    server = Broker(tmp_path / "broker")
    server.start()
    yield server
    server.stop()


class HallProcess:
    """``bgboard hall`` run as a program (so that it can be killed), with its page and API."""

    def __init__(self, broker_url: str, db: Path, log: Path) -> None:
        self.args = [sys.executable, "-m", "bgboard", "-v", "hall", "--broker", broker_url, "--db", str(db)]
        self.port = free_port()
        self.args += ["--bind", f"127.0.0.1:{self.port}"]
        self.log = log
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(self.args, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
        wait_for(self._up, 30, f"the hall's API (log: {self.log})")

    def _up(self) -> bool:
        assert self.process is not None
        if self.process.poll() is not None:
            raise AssertionError(f"the hall exited: {self.log.read_text()}")
        try:
            get_json(self.api)
        except OSError:
            return False
        return True

    @property
    def api(self) -> str:
        return f"http://127.0.0.1:{self.port}/api/tables"

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)


def hall_rows(db: Path, table: str) -> list[dict[str, Any]]:
    connection = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = connection.execute("SELECT seq, message FROM actions WHERE table_name = ? ORDER BY seq", (table,))
        out = []
        for seq, message in rows:
            data = json.loads(message)
            assert data["seq"] == seq
            out.append(data)
        return out
    finally:
        connection.close()


# -- addresses and names -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("http://hall:1883", "starts with mqtt://"),
        ("mqtt://", "no host"),
        ("mqtt://hall:99999", "Port out of range"),
        ("mqtt://hall:1883/topic", "only mqtt://"),
        ("hall:1883", "starts with mqtt://"),
    ],
)
def test_a_bad_broker_url_is_refused_saying_why(text: str, why: str) -> None:
    with pytest.raises(PublishError, match=why):
        BrokerUrl.parse(text)


def test_a_broker_url_gives_host_port_and_user() -> None:
    assert BrokerUrl.parse("mqtt://t1:s%40cret@10.0.0.2") == BrokerUrl("10.0.0.2", 1883, "t1", "s@cret")
    assert str(BrokerUrl.parse("mqtt://t1:pw@hall:1884")) == "mqtt://t1@hall:1884"


@pytest.mark.parametrize("name", ["", "a/b", "a+b", "#", "a b", "-x", "x" * 65, "é"])
def test_a_bad_table_name_is_refused(name: str) -> None:
    with pytest.raises(PublishError, match="bad table name"):
        check_table_name(name)


def test_the_command_line_refuses_bad_urls_and_names_as_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["demo", "--publish", "http://hall", "--table", "t1"])
    assert exited.value.code == 2
    assert "argument --publish: bad broker URL 'http://hall': it starts with mqtt://" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exited:
        main(["referee", "--publish", "mqtt://hall", "--table", "t/1"])
    assert exited.value.code == 2
    assert "argument --table: bad table name 't/1'" in capsys.readouterr().err
    assert main(["demo", "--publish", "mqtt://127.0.0.1:1"]) == 2
    assert "--publish needs --table NAME" in capsys.readouterr().err


def test_the_hall_says_when_the_broker_cannot_be_reached(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    port = free_port()
    status = main(["hall", "--broker", f"mqtt://127.0.0.1:{port}", "--db", str(tmp_path / "hall.sqlite3")])
    assert status == 1
    assert f"bgboard: error: cannot reach the broker at mqtt://127.0.0.1:{port}: Connection refused" in (
        capsys.readouterr().err
    )


# -- publishing and catching up ------------------------------------------------------------------


def test_a_table_offline_referees_without_waiting_and_catches_up_in_order(tmp_path: Path) -> None:
    """The broker is down while a match is played: the table never waits, every action waits in
    the store, and once the broker is up the hall gets them all, in order, once each."""
    broker = Broker(tmp_path / "broker")
    url = BrokerUrl.parse(broker.url)
    store = MatchStore(tmp_path / "board.sqlite3")
    table = ScriptedTable(corpus(1)[0], store, games=1)
    publisher = Publisher(url, "t1", store, table.match_id)
    table.sinks.add(publisher)
    publisher.start()
    try:
        played = table.play()
        assert played > 20
        time.sleep(0.6)  # the publisher looks at the outbox while the broker is down
        total, acked = Outbox(store, "t1").counts()
        assert (total, acked) == (len(store.actions(table.match_id, all_rows=True)), 0)
        broker.start()
        hall_store = HallStore(tmp_path / "hall.sqlite3")
        with Hall(url, hall_store) as hall:
            wait_for(lambda: hall_store.counts().get("t1", (0, 0))[0] == total, 20, "the hall to catch up")
            wait_for(lambda: Outbox(store, "t1").counts()[1] == total, 10, "the acknowledgements in the store")
            held = hall_store.actions("t1")
            assert held == Outbox(store, "t1").messages()
            assert [m["seq"] for m in held] == list(range(1, total + 1))
            # Every action message the hall took was kept once or known for a resend.
            assert hall.received == total + hall.duplicates
            [row] = hall_store.tables()
            assert row["actions"] == total and row["players"] == list(table.record.players)
            assert row["gnubgid"] == store.summary(table.match_id).gnubgid
            assert row["score"] == list(store.summary(table.match_id).score)
    finally:
        publisher.stop()
        store.close()
        broker.stop()


def test_a_table_stopping_with_no_hall_does_not_wait_out_its_linger(tmp_path: Path, broker: Broker) -> None:
    """The broker is up, no hall listens: once the broker holds everything and nobody confirms
    it, the table stops (the linger is for a hall that is there) and says so; its actions stay
    unconfirmed in the outbox for its next run."""
    store = MatchStore(tmp_path / "board.sqlite3")
    table = ScriptedTable(corpus(1)[0], store, games=1)
    publisher = Publisher(BrokerUrl.parse(broker.url), "t1", store, table.match_id)
    table.sinks.add(publisher)
    publisher.start()
    try:
        table.play()
        wait_for(lambda: publisher.connected, 10, "the broker")
        publisher.stop(linger=3 * Publisher.LINGER)  # ended by the hall's silence, not the linger
        total, acked = Outbox(store, "t1").counts()
        assert total > 20 and acked == total and Outbox(store, "t1").confirmed() == 0
        assert publisher.hall_silent
        assert "no hall confirmed them" in _published(publisher, store).text
    finally:
        publisher.stop()
        store.close()


def test_the_hall_program_serves_the_tables_and_the_page(tmp_path: Path, broker: Broker) -> None:
    hall = HallProcess(broker.url, tmp_path / "hall.sqlite3", tmp_path / "hall.log")
    hall.start()
    stores = []
    publishers = []
    try:
        for n, record in enumerate(corpus(2)):
            store = MatchStore(tmp_path / f"board{n}.sqlite3")
            table = ScriptedTable(record, store, games=1)
            publisher = Publisher(BrokerUrl.parse(broker.url), f"table-{n}", store, table.match_id)
            table.sinks.add(publisher)
            publisher.start()
            steps = table.steps()
            for _ in range(12):
                next(steps)
            # An illegal move waiting to be put right is shown in the hall.
            table.sinks(Event("illegal", "8 pips were moved but the roll is 4-3", verdict="illegal"))
            stores.append((store, table))
            publishers.append(publisher)

        def arrived() -> bool:
            rows = get_json(hall.api)
            return len(rows) == 2 and all(r["actions"] == 12 and r["illegal"] for r in rows)

        wait_for(arrived, 20, "both tables in the hall's API")
        rows = get_json(hall.api)
        for n, row in enumerate(rows):
            store, table = stores[n]
            summary = store.summary(table.match_id)
            assert {"table", "players", "score", "gnubgid", "actions", "last_seen"} <= set(row)
            assert row["table"] == f"table-{n}"
            assert row["players"] == list(summary.players)
            assert row["score"] == list(summary.score)
            assert row["gnubgid"] == summary.gnubgid
            assert row["last_seen"].endswith("Z")
            assert row["illegal"] == "8 pips were moved but the roll is 4-3"
        actions = get_json(f"http://127.0.0.1:{hall.port}/api/tables/table-0/actions")
        assert [a["seq"] for a in actions] == list(range(1, 13))
        with urllib.request.urlopen(f"http://127.0.0.1:{hall.port}/", timeout=5) as answer:
            page = answer.read().decode()
        assert "table-1" in page and " vs ".join(stores[1][1].record.players) in page
        assert "illegal move: 8 pips were moved" in page
        assert "http://" not in page.replace(f"http://127.0.0.1:{hall.port}", "")  # nothing from the internet
    finally:
        for publisher in publishers:
            publisher.stop()
        for store, _ in stores:
            store.close()
        hall.stop()


@pytest.mark.slow
def test_the_demo_publishes_every_stored_action(tmp_path: Path, broker: Broker) -> None:
    hall_store = HallStore(tmp_path / "hall.sqlite3")
    with Hall(BrokerUrl.parse(broker.url), hall_store):
        out = tmp_path / "out"
        status = main(
            ["demo", "--publish", broker.url, "--table", "demo-1", "--moves", "2", "--leds", "none", "--out", str(out)]
        )
        assert status == 0
        with MatchStore(out / "demo.sqlite3") as store:
            total, acked = Outbox(store, "demo-1").counts()
            assert total >= 4 and acked == total
            sent = Outbox(store, "demo-1").messages()
        wait_for(lambda: hall_store.counts().get("demo-1", (0, 0))[0] == total, 10, "the demo's actions")
        assert hall_store.actions("demo-1") == sent
        assert [m["kind"] for m in sent[:2]] == ["opening_roll", "move"]


# -- security ----------------------------------------------------------------------------------


def test_the_acl_file_gives_each_table_its_own_topics() -> None:
    text = acl_text(["t1", "t2"])
    assert "user t1\ntopic write bgboard/v1/tables/t1/#\n" in text
    assert "user hall\ntopic read bgboard/v1/tables/#\ntopic write bgboard/v1/hall/#\n" in text
    with pytest.raises(PublishError):
        acl_text(["t1", "a/b"])


def test_a_board_may_publish_only_under_its_own_table_and_the_hall_only_reads(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    secret = make_acl(["t1", "t2"], tmp_path / "acl")
    assert set(secret) == {"hall", "t1", "t2"}
    assert (tmp_path / "acl" / "passwords.txt").stat().st_mode & 0o777 == 0o600
    assert "t1:$" in (tmp_path / "acl" / "passwd").read_text()  # hashed by mosquitto_passwd
    conf = (tmp_path / "acl" / "bgboard.conf").read_text()
    extra = "".join(line + "\n" for line in conf.splitlines() if line.startswith(("password_file", "acl_file")))
    broker = Broker(tmp_path / "broker", extra=extra)
    broker.start()
    try:
        hall_url = BrokerUrl("127.0.0.1", broker.port, "hall", secret["hall"])
        with pytest.raises(HallError, match="did not accept the hall: Not authorized"):
            Hall(BrokerUrl("127.0.0.1", broker.port, "hall", "wrong"), HallStore(":memory:"), client_id="x").start(2)
        # The error says why; no log line says it first.
        assert [r.getMessage() for r in caplog.records if r.levelname == "WARNING"] == []
        # A board refused is told once, with the reason, and goes on (its actions wait).
        store = MatchStore(tmp_path / "board.sqlite3")
        links: list[bool] = []
        match_id = store.start_match(["Ann", "Bob"], 3)
        wrong = BrokerUrl("127.0.0.1", broker.port, "t1", "wrong")
        refused = Publisher(wrong, "t1", store, match_id, on_link=links.append)
        refused.start()
        try:
            wait_for(lambda: bool(links), 5, "the refusal")
        finally:
            refused.stop()
            store.close()
        assert links == [False] and refused.refused == "Not authorized"
        assert [r.getMessage() for r in caplog.records if r.levelname == "WARNING"] == []
        hall_store = HallStore(tmp_path / "hall.sqlite3")
        with Hall(hall_url, hall_store) as hall:
            t1 = BrokerUrl("127.0.0.1", broker.port, "t1", secret["t1"])

            def action(table: str, seq: int) -> bytes:
                return json.dumps({"v": 1, "table": table, "seq": seq, "kind": "roll"}).encode()

            # t1 writes under t2's table, writes t2's state, orders tournament mode: mosquitto
            # refuses each (it drops the message and the connection), delivering nothing.
            publish_once(t1, table_topic("t2", "actions"), action("t2", 1))
            publish_once(t1, table_topic("t2", "state"), json.dumps({"v": 1, "seq": 9}).encode())
            publish_once(t1, CONTROL_TOPIC, json.dumps({"v": 1, "tournament": True}).encode())
            # The hall only reads the tables: its own write under t1 is refused too.
            publish_once(hall_url, table_topic("t1", "actions"), action("t1", 7), client_id="hall-writes")
            # Its own table is allowed: once it is delivered, the refused ones would have been.
            assert publish_once(t1, table_topic("t1", "actions"), action("t1", 1))
            wait_for(lambda: "t1" in hall_store.counts(), 5, "t1's own action")
            time.sleep(0.5)
            assert hall_store.counts() == {"t1": (1, 1)}
            assert [t["table"] for t in hall_store.tables()] == ["t1"]
            assert hall.received == 1
            # Tournament mode from the hall's user reaches the boards; the board's order never did.
            seen: list[bytes] = []
            board = connected(t1, "bgboard-table-t1")
            try:
                board.on_message = lambda client, userdata, message: seen.append(message.payload)
                board.subscribe(CONTROL_TOPIC, qos=1)
                time.sleep(0.5)
                assert seen == []
                send_tournament(hall_url, True)
                wait_for(lambda: bool(seen), 5, "the hall's tournament order at the board")
                assert json.loads(seen[-1]) == {"v": 1, "tournament": True}
            finally:
                board.disconnect()
                board.loop_stop()
    finally:
        broker.stop()


def connected(url: BrokerUrl, client_id: str) -> Any:
    client = new_client(client_id, url)
    up = threading.Event()
    client.on_connect = lambda *args: up.set()
    client.connect(url.host, url.port)
    client.loop_start()
    assert up.wait(5), f"{url} did not accept {client_id}"
    return client


def publish_once(url: BrokerUrl, topic: str, payload: bytes, client_id: str = "bgboard-table-t1") -> bool:
    """Publish one QoS 1 message on a fresh connection; whether the broker acknowledged it."""
    client = connected(url, client_id)
    try:
        info = client.publish(topic, payload, qos=1)
        end = time.monotonic() + 2
        while not info.is_published() and client.is_connected() and time.monotonic() < end:
            time.sleep(0.02)
        return info.is_published()
    finally:
        client.disconnect()
        client.loop_stop()


def test_tournament_mode_reaches_the_board_and_its_state(tmp_path: Path, broker: Broker) -> None:
    url = BrokerUrl.parse(broker.url)
    orders: list[dict[str, Any]] = []
    with MatchStore(tmp_path / "board.sqlite3") as store:
        table = ScriptedTable(corpus(1)[0], store, games=1)
        publisher = Publisher(url, "t1", store, table.match_id, on_control=orders.append)
        publisher.start()
        hall_store = HallStore(":memory:")
        try:
            with Hall(url, hall_store) as hall:
                hall.set_tournament(True)
                wait_for(lambda: bool(orders), 10, "the order at the board")
                assert orders[-1]["tournament"] is True and publisher.tournament
                wait_for(lambda: bool(hall_store.tables()) and hall_store.tables()[0]["tournament"], 10, "the state")
                hall.set_tournament(False)
                wait_for(lambda: orders[-1]["tournament"] is False, 10, "tournament mode off")
        finally:
            publisher.stop()


# -- many tables, a broker that dies, a table cut off, a hall killed ------------------------------

#: Tables at once, the actions each plays (at most), and seconds between two of a table's actions.
TABLES = 100
ACTIONS = 60
PACE = 0.2
#: Seconds the first table's network is cut: longer than its whole match, which it plays offline.
CUT = 60.0


@pytest.mark.slow
def test_a_hundred_tables_survive_broker_deaths_a_cut_table_and_a_hall_killed(tmp_path: Path) -> None:
    mosquitto_path()
    broker = Broker(tmp_path / "broker")
    broker.start()
    db = tmp_path / "hall.sqlite3"
    hall = HallProcess(broker.url, db, tmp_path / "hall.log")
    hall.start()
    cable = Cable(broker.port)
    records = corpus(TABLES)
    assert len(records) == TABLES
    names = [f"t{n:03d}" for n in range(TABLES)]
    stores: dict[str, MatchStore] = {}
    publishers: dict[str, Publisher] = {}
    sink_times: list[float] = []
    errors: list[BaseException] = []
    done = threading.Event()
    finished: set[str] = set()
    lock = threading.Lock()

    def play(name: str, record: MatchRecord) -> None:
        try:
            store = MatchStore(tmp_path / "boards" / f"{name}.sqlite3")
            table = ScriptedTable(record, store)
            url = cable.url if name == names[0] else broker.url
            publisher = Publisher(BrokerUrl.parse(url), name, store, table.match_id)
            stores[name], publishers[name] = store, publisher

            def timed(event: Event) -> None:
                start = time.perf_counter()
                publisher(event)
                sink_times.append(time.perf_counter() - start)

            table.sinks.add(timed)
            publisher.start()
            for n, _ in enumerate(table.steps(), 1):
                if n == ACTIONS or done.is_set():
                    break
                time.sleep(PACE)
            with lock:
                finished.add(name)
        except BaseException as exc:
            errors.append(exc)

    start = time.monotonic()
    cable.cut()
    threads = [threading.Thread(target=play, args=(name, record)) for name, record in zip(names, records, strict=True)]
    for thread in threads:
        thread.start()
    try:

        def at(second: float) -> None:
            time.sleep(max(0.0, start + second - time.monotonic()))

        at(3)
        assert not finished, "the broker must die while the tables play"
        broker.kill()
        at(4)
        broker.start()
        at(6)
        hall.kill()
        at(8)
        hall.start()
        at(10)
        broker.kill()
        at(11)
        broker.start()
        for thread in threads:
            thread.join(120)
        assert not errors, errors
        assert len(finished) == TABLES
        cut_total, cut_acked = Outbox(stores[names[0]], names[0]).counts()
        assert cut_total >= 30 and cut_acked == 0, "the cut table played its match offline"

        def all_in(tables: list[str]) -> bool:
            rows = {row["table"]: row for row in get_json(hall.api)}
            return all(n in rows and rows[n]["actions"] == Outbox(stores[n], n).counts()[0] for n in tables)

        wait_for(lambda: all_in(names[1:]), 90, "the hall to hold every table's actions but the cut one's")
        print(f"\nall but the cut table in the hall {time.monotonic() - start:.1f} s after the start")
        assert not any(row["table"] == names[0] and row["actions"] for row in get_json(hall.api))
        at(CUT)
        cable.mend()
        wait_for(lambda: all_in(names), 90, "the hall to hold every table's actions")
        took = time.monotonic() - start
        rows = {row["table"]: row for row in get_json(hall.api)}
        for name in names:
            sent = Outbox(stores[name], name).messages()
            held = hall_rows(db, name)
            # Nothing lost, nothing doubled, every table in order: the hall holds exactly the board's outbox.
            assert held == sent, name
            assert [m["seq"] for m in held] == list(range(1, len(sent) + 1))
            summary = stores[name].summary(sent[-1]["match"])
            assert rows[name]["gnubgid"] == summary.gnubgid
            assert rows[name]["players"] == list(summary.players)
        wait_for(
            lambda: all(Outbox(s, n).counts()[1] == Outbox(s, n).counts()[0] for n, s in stores.items()),
            30,
            "every board to have the broker's acknowledgements",
        )
        total = sum(Outbox(s, n).counts()[0] for n, s in stores.items())
        print(f"\n{TABLES} tables, {total} actions, all in the hall {took:.1f} s after the start")
        # What the publisher's sink costs the table is bench/hall.py's figure, not a timed assertion.
        assert len(sink_times) >= total
    finally:
        done.set()
        for thread in threads:
            thread.join(30)
        for publisher in publishers.values():
            publisher.stop()
        for store in stores.values():
            store.close()
        cable.close()
        hall.stop()
        broker.stop()
        if os.environ.get("BGBOARD_KEEP_HALL_LOG"):
            print((tmp_path / "hall.log").read_text())


def test_the_hall_finds_the_first_action_it_misses() -> None:
    store = HallStore(":memory:")
    assert store.first_missing("t1", 3) == 1
    for seq in (1, 2, 5, 6, 9):
        assert store.add_action({"table": "t1", "seq": seq})
    assert not store.add_action({"table": "t1", "seq": 5})  # a redelivery is kept once
    assert store.counts() == {"t1": (5, 9)}
    assert store.first_missing("t1", 9) == 3
    for seq in (3, 4):
        store.add_action({"table": "t1", "seq": seq})
    assert store.first_missing("t1", 9) == 7
    for seq in (7, 8):
        store.add_action({"table": "t1", "seq": seq})
    assert store.first_missing("t1", 9) is None
    assert store.first_missing("t1", 11) == 10
    store.add_action({"table": "t2", "seq": 2})
    assert store.first_missing("t2", 2) == 1


@pytest.mark.usefixtures("referee_threads_end")
def test_the_referee_publishes_its_match_and_follows_tournament_mode(tmp_path: Path, broker: Broker) -> None:
    from rendered_table import (
        Cameras,
        FakeCamera,
        make_referee,
        move_frames,
        opening_frames,
        referee_config,
        save_profile,
    )

    from hardware.panels import FakeLedPanel
    from hardware.scene import STATUS, TOURNAMENT

    config = referee_config(save_profile(tmp_path / "board.toml"), tmp_path / "matches.sqlite3")
    url = BrokerUrl.parse(broker.url)
    hall_store = HallStore(":memory:")
    with Hall(url, hall_store) as hall:
        hall.set_tournament(True)
        panel = FakeLedPanel()
        out = io.StringIO()
        cameras = Cameras(FakeCamera("fake:camera", opening_frames() + move_frames(), then="stall"))
        referee = make_referee(
            config,
            out=out,
            json_lines=True,
            source_factory=cameras,
            live=False,
            panel=panel,
            publish=url,
            table_name="t1",
        )
        stop = threading.Event()
        thread = threading.Thread(target=referee.run, args=(stop,))
        thread.start()
        try:
            wait_for(lambda: hall_store.counts().get("t1", (0, 0))[0] == 2, 60, "the opening roll and the move")
            events = [json.loads(line) for line in out.getvalue().splitlines()]
            assert "hall-connected" in [e["event"] for e in events]
            said = [e for e in events if e["event"] == "tournament"]
            assert said and said[0]["tournament"] is True and "hints are off" in said[0]["text"]
            assert any(scene.get(STATUS) == TOURNAMENT for scene in panel.scenes)
            assert referee.table.controller.teach is False and referee.table.hints is None
        finally:
            stop.set()
            thread.join(30)
        with MatchStore(tmp_path / "matches.sqlite3") as store:
            assert hall_store.actions("t1") == Outbox(store, "t1").messages()
            assert [m["kind"] for m in hall_store.actions("t1")] == ["opening_roll", "move"]
        [row] = hall_store.tables()
        assert row["players"] == ["Ann", "Bob"] and row["tournament"] is True


def test_make_acl_on_the_command_line_writes_the_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "acl"
    assert main(["hall", "--make-acl", "t1", "t2", "--acl-dir", str(folder)]) == 0
    assert "for the hall and 2 tables" in capsys.readouterr().out
    assert sorted(p.name for p in folder.iterdir()) == ["acl", "bgboard.conf", "passwd", "passwords.txt"]
    users = [line.split()[0] for line in (folder / "passwords.txt").read_text().splitlines()]
    assert users == ["hall", "t1", "t2"]
    assert "allow_anonymous false" in (folder / "bgboard.conf").read_text()
    with pytest.raises(SystemExit) as exited:
        main(["hall", "--make-acl", "t1", "t 2"])
    assert exited.value.code == 2
    assert main(["hall", "--make-acl", "hall", "--acl-dir", str(folder)]) == 1
    assert "one is the hall's user 'hall'" in capsys.readouterr().err
    assert main(["hall"]) == 2
    assert "--broker mqtt://HOST:PORT is needed" in capsys.readouterr().err


@pytest.mark.slow
def test_the_demo_plays_on_when_the_broker_is_down_and_says_what_waits(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    url = f"mqtt://127.0.0.1:{free_port()}"
    assert (
        main(["demo", "--publish", url, "--table", "demo-1", "--moves", "1", "--leds", "none", "--out", str(out)]) == 0
    )
    printed = capsys.readouterr().out
    with MatchStore(out / "demo.sqlite3") as store:
        total, acked = Outbox(store, "demo-1").counts()
    assert total == 2 and acked == 0
    assert f"published to {url} as table demo-1: the broker has 0 of 2 actions; the rest wait in the store" in printed


def test_the_hall_can_be_named_in_the_config_as_the_pis_service_reads_it(
    tmp_path: Path, referee_calls: list[tuple[Any, dict[str, object]]]
) -> None:
    from bgboard.hall.publish import Publishing

    config = tmp_path / "config.toml"
    config.write_text('[hall]\nbroker = "mqtt://hall.local:1884"\ntable = "club-7"\n', encoding="utf-8")
    assert main(["referee", "--config", str(config), "--camera", "fake:x"]) == 0
    publish = referee_calls[0][1]["session"].publish  # type: ignore[attr-defined]
    assert isinstance(publish, Publishing)
    assert (str(publish.url), publish.table) == ("mqtt://hall.local:1884", "club-7")
    # The flags win over the config, as everywhere.
    assert main(["referee", "--config", str(config), "--camera", "fake:x", "--table", "club-8"]) == 0
    assert referee_calls[1][1]["session"].publish.table == "club-8"  # type: ignore[attr-defined]
