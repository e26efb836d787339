# SPDX-License-Identifier: MIT
"""The hall's downloads: each table's matches as GNU Backgammon's ``.mat`` and ``.sgf``, built
from the actions the hall holds, equal to what the table's own store exports; the archive of
every match (``GET /api/export.zip``, ``bgboard hall --export``); a dispute (an undo, a
correction) said until the next action; the table's live page named in its state.

The tables publish through a real Mosquitto (tests/bgboard/mqtt_broker.py) to a real
:class:`Hall`; gnubg itself reads the files the hall writes.
"""

from __future__ import annotations

import io
import json
import socket
import threading
import time
import urllib.error
import urllib.request
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from mqtt_broker import Broker
from test_hall import corpus, wait_for

from bgboard.cli import main
from bgboard.events import Event
from bgboard.hall.outbox import Outbox
from bgboard.hall.publish import Publisher, Publishing
from bgboard.hall.server import Hall, HallStore, make_app, write_archive
from bgboard.hall.topics import BrokerUrl
from bgboard.session import SessionOptions
from bgboard.sim.scripted import ScriptedTable
from bgboard.store import FORMATS, MatchStore, default_file_name
from engine.match import MatchState, Move, Phase
from engine.movegen import legal_plays

pytestmark = pytest.mark.xdist_group("mqtt")


# -- helpers -----------------------------------------------------------------------------------


@contextmanager
def served(store: HallStore) -> Iterator[str]:
    """The hall's web app (:func:`make_app`) on a free loopback port: its base URL."""
    import uvicorn

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(make_app(store), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started, "the hall's web app did not start within 10 s"
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(5)


@dataclass
class Answer:
    """An HTTP answer: its status, headers and body."""

    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


def fetch(url: str) -> Answer:
    """GET ``url``, an error status as an answer too."""
    try:
        with urllib.request.urlopen(url, timeout=30) as answer:
            return Answer(answer.status, dict(answer.headers), answer.read())
    except urllib.error.HTTPError as exc:
        with exc:
            return Answer(exc.code, dict(exc.headers), exc.read())


def say(table: ScriptedTable, line: str) -> list[Event]:
    """Type ``line`` at the scripted table's console, its events to its sinks (the store's last)."""
    table.t += 1.0
    events = [event.at(table.t) for event in table.controller.on_command(line, table.t)]
    for event in events:
        table.sinks(event)
    return events


def other_play(state: MatchState, made: str) -> str | None:
    """A legal play in ``state`` (a move to make) other than ``made``, if there is one."""
    assert state.dice is not None
    plays = [str(play) for play in legal_plays(state.position, state.dice)]
    return next((play for play in plays if play != made), None)


def dispute_of(hall: HallStore, table: str) -> str | None:
    """The dispute the hall says of ``table`` (``None`` too while it does not know the table)."""
    return next((t["dispute"] for t in hall.tables() if t["table"] == table), None)


# -- the matches, as the store exports them ---------------------------------------------------


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Broker]:
    server = Broker(tmp_path / "broker")
    server.start()
    yield server
    server.stop()


@dataclass
class Played:
    """Two matches a table played and published, and the hall that holds them."""

    store: MatchStore
    hall: HallStore
    store_id: str
    matches: list[int]
    disputes: list[str | None]


@pytest.fixture
def played(tmp_path: Path, broker: Broker) -> Iterator[Played]:
    """Table t1 plays two corpus matches (two games of the first, one of the second) into one
    store, published to a real broker and a real hall; in the first it takes a move back and
    plays it again, and replaces a move by another, then by the right one again. The disputes
    the hall said on the way are kept."""
    url = BrokerUrl.parse(broker.url)
    store = MatchStore(tmp_path / "board.sqlite3")
    hall = HallStore(tmp_path / "hall.sqlite3")
    first, second = corpus(2)
    table = ScriptedTable(first, store, games=2)
    publisher = Publisher(url, "t1", store, table.match_id)
    publisher.page_url = "http://127.0.0.1:8123/"
    table.sinks.add(publisher)
    disputes: list[str | None] = []
    with Hall(url, hall):
        publisher.start()
        try:
            before = table.controller.state
            undone = corrected = False
            for events in table.steps():
                move = next((e for e in events if isinstance(e.action, Move)), None)
                if move is not None and before.phase is Phase.MOVE:
                    made = str(move.fields["play"])
                    if not undone:
                        # Taken back with the undo button, then played again as it was.
                        say(table, "undo")
                        wait_for(lambda: dispute_of(hall, "t1") is not None, 20, "the undo in the hall")
                        disputes.append(dispute_of(hall, "t1"))
                        say(table, f"correct {made}")
                        wait_for(lambda: dispute_of(hall, "t1") is None, 20, "the move played again in the hall")
                        undone = True
                    elif not corrected and (wrong := other_play(before, made)) is not None:
                        # The players put the camera right: another play, then the right one.
                        say(table, f"correct {wrong}")
                        say(table, f"correct {made}")
                        wait_for(lambda: dispute_of(hall, "t1") is not None, 20, "the correction in the hall")
                        disputes.append(dispute_of(hall, "t1"))
                        corrected = True
                before = table.controller.state
            assert undone and corrected, "the match had no move to take back and correct"
            # The next match, in the same store.
            table = ScriptedTable(second, store, games=1)
            publisher.set_match(table.match_id)
            table.sinks.add(publisher)
            table.play()
            # Every row of both matches, undo rows too, is published.
            total = sum(len(store.actions(m.id, all_rows=True)) for m in store.matches())
            wait_for(lambda: hall.counts().get("t1", (0, 0))[0] == total, 30, "every action in the hall")
            # The state names the last sequence number once the last action is in it.
            wait_for(lambda: hall.tables()[0]["seq"] == total, 30, "the table's last state in the hall")
            disputes.append(dispute_of(hall, "t1"))
        finally:
            publisher.stop()
    try:
        yield Played(store, hall, publisher.store_id, [m.id for m in store.matches()], disputes)
    finally:
        hall.close()
        store.close()


def test_the_hall_writes_each_match_as_the_table_s_store_exports_it(played: Played) -> None:
    store, hall = played.store, played.hall
    assert played.matches == [1, 2]
    # The undo and the corrections are in the store (and so in what the hall holds).
    assert len(store.actions(1, all_rows=True)) == len(store.actions(1)) + 2 * 3
    held = hall.matches("t1")
    assert [(m.store, m.match) for m in held] == [(played.store_id, 1), (played.store_id, 2)]
    for match in held:
        summary = store.summary(match.match)
        for fmt in FORMATS:
            assert match.export(fmt) == store.export(match.match, fmt), f"match {match.match}, .{fmt}"
            assert match.file_name(fmt) == default_file_name(summary, fmt)
        assert match.score == summary.score and match.finished == summary.is_finished
        assert (match.players, match.length, match.options) == (summary.players, summary.length, summary.options)
        assert match.missing is None


def test_a_dispute_is_said_until_the_next_action(played: Played) -> None:
    undo, correction, after = played.disputes
    assert undo is not None and undo.endswith("taken back (undo)") and "'s move " in undo
    assert correction is not None and correction.startswith("corrected to ") and "'s move " in correction
    assert after is None


def test_the_hall_serves_the_matches_their_files_and_the_archive(played: Played) -> None:
    store, hall, ident = played.store, played.hall, played.store_id
    with served(hall) as base:
        listed = fetch(f"{base}/api/tables/t1/matches").json()
        assert [m["match"] for m in listed] == [1, 2]
        for row in listed:
            summary = store.summary(row["match"])
            assert row["store"] == ident
            assert row["players"] == list(summary.players) and row["length"] == summary.length
            assert row["score"] == list(summary.score) and row["finished"] == summary.is_finished
            assert row["actions"] == len(store.actions(row["match"], all_rows=True))
            for fmt in FORMATS:
                assert row[fmt] == f"/api/tables/t1/matches/{ident}/{row['match']}.{fmt}"
                answer = fetch(base + row[fmt])
                assert answer.status == 200
                assert answer.body.decode() == store.export(row["match"], fmt)
                name = default_file_name(summary, fmt)
                assert row["files"][fmt] == name
                assert f'filename="{name}"' in answer.headers["content-disposition"]
        # The table's box links to its match's files, its live page and its replay.
        [table] = fetch(f"{base}/api/tables").json()
        assert table["downloads"] == {fmt: f"/api/tables/t1/matches/{ident}/2.{fmt}" for fmt in FORMATS}
        assert (table["page"], table["replay"]) == ("http://127.0.0.1:8123/", "http://127.0.0.1:8123/matches")
        # The last move standing, for its arrows: the second match's last move.
        last = next(a for a in reversed(store.actions(2)) if isinstance(a.action, Move))
        assert isinstance(last.action, Move)
        assert table["last_play"] == {
            "player": last.player,
            "play": str(last.action.play),
            "match": 2,
            "game": last.game,
        }
        # Every match of the event in one archive, a folder per table; the table's own too.
        for address in ("/api/export.zip", "/api/tables/t1/export.zip"):
            answer = fetch(base + address)
            assert answer.status == 200 and answer.headers["content-type"] == "application/zip"
            assert ".zip" in answer.headers["content-disposition"]
            files = zipfile.ZipFile(io.BytesIO(answer.body))
            expected = {
                f"t1/{default_file_name(store.summary(m), fmt)}": store.export(m, fmt)
                for m in played.matches
                for fmt in FORMATS
            }
            assert sorted(files.namelist()) == sorted(expected)
            for name, text in expected.items():
                assert files.read(name).decode() == text
        # What is not there is a 404 that says what was asked.
        for address, said in [
            ("/api/tables/nope/matches", "no table 'nope'"),
            ("/api/tables/nope/matches/-/1.mat", "no table 'nope'"),
            ("/api/tables/nope/export.zip", "no table 'nope'"),
            (f"/api/tables/t1/matches/{ident}/9.mat", "no match 9"),
            ("/api/tables/t1/matches/0123456789abcdef/1.sgf", "no match 1 of store '0123456789abcdef'"),
            (f"/api/tables/t1/matches/{ident}/1.txt", "MATCH.mat and MATCH.sgf"),
        ]:
            answer = fetch(base + address)
            assert answer.status == 404, address
            assert said in answer.json()["error"], (address, answer.body)


@pytest.mark.oracle
def test_gnubg_reads_the_hall_s_files_as_the_match_played(played: Played, tmp_path: Path) -> None:
    from tests.engine.test_gnubg_roundtrip import GNUBG, compare, gnubg_reads, warnings_in

    assert Path(GNUBG).exists(), "the gnubg program is not installed: scripts/setup.sh --test installs it"
    written: dict[str, int] = {}
    for match in played.hall.matches("t1"):
        for fmt in FORMATS:
            path = tmp_path / match.file_name(fmt)
            path.write_text(match.export(fmt), encoding="utf-8")
            written[str(path)] = match.match
    read = gnubg_reads([Path(p) for p in written], tmp_path)
    assert sorted(read) == sorted(written)
    for name, match_id in written.items():
        said, dumped = read[name]
        assert warnings_in(said) == [], f"gnubg on {name}: {warnings_in(said)}"
        assert compare(played.store.record_of(match_id), dumped) == [], name


# -- the archive on the command line ---------------------------------------------------------


def test_bgboard_hall_export_writes_every_match_without_a_broker(
    played: Played, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "event.zip"
    target.write_bytes(b"an older archive")  # a file is replaced
    assert main(["hall", "--export", str(target), "--db", played.hall.path]) == 0
    out = capsys.readouterr().out
    assert out == f"wrote {target}: 2 matches of 1 table as .mat and .sgf\n"
    names = sorted(zipfile.ZipFile(target).namelist())
    assert names == sorted(f"t1/{default_file_name(played.store.summary(m), fmt)}" for m in (1, 2) for fmt in FORMATS)
    assert not list(tmp_path.glob(".event.zip*")), "the part written first is left behind"


@pytest.mark.parametrize(
    ("args", "status", "said"),
    [
        (["--export", "{tmp}"], 2, "--export {tmp} is not a file: name the .zip to write"),
        (["--export", "{tmp}/out.zip", "--db", "{tmp}/missing.sqlite3"], 1, "no hall database at {tmp}/missing"),
        (["--export", "{tmp}/out.zip", "--broker", "mqtt://localhost"], 2, "--export works on --db alone"),
        (["--export", "{tmp}/out.zip", "--tournament", "on"], 2, "leave out --tournament"),
    ],
)
def test_bgboard_hall_export_refuses_in_one_line(
    args: list[str], status: int, said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["hall", *(a.format(tmp=tmp_path) for a in args)]
    if "--db" not in argv:
        argv += ["--db", str(tmp_path / "hall.sqlite3")]
        HallStore(tmp_path / "hall.sqlite3").close()
    assert main(argv) == status
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and said.format(tmp=tmp_path) in err[0], err
    assert not (tmp_path / "out.zip").exists()


def test_the_archive_leaves_out_a_match_that_does_not_replay_and_says_why(tmp_path: Path) -> None:
    hall = HallStore(":memory:")
    store = MatchStore(":memory:")
    table = ScriptedTable(corpus(1)[0], store, games=1)
    steps = table.steps()
    for _ in range(4):
        next(steps)
    outbox = Outbox(store, "t9")
    outbox.add_match(table.match_id)
    outbox.fill()
    messages = outbox.messages()
    # A damaged move: its play is not the dice's.
    broken = {**messages[1], "play": "24/1"}
    for message in [messages[0], broken, *messages[2:]]:
        hall.add_action(message)
    buffer = io.BytesIO()
    done = write_archive(hall, buffer)
    assert (done.matches, done.tables) == (0, 1)
    [problem] = done.problems
    assert problem.startswith(f"table t9, match {table.match_id} (store {outbox.store_id()}): action 2 (move)")
    files = zipfile.ZipFile(buffer)
    assert files.namelist() == ["problems.txt"]
    assert files.read("problems.txt").decode() == problem + "\n"
    hall.close()
    store.close()


# -- the live page in the state ---------------------------------------------------------------


@pytest.mark.slow
def test_a_table_with_a_live_page_names_it_to_the_hall(tmp_path: Path, broker: Broker) -> None:
    from mqtt_broker import free_port

    from bgboard.sim.demo import run_demo
    from bgboard.web.server import Bind, LivePage

    url = BrokerUrl.parse(broker.url)
    hall = HallStore(tmp_path / "hall.sqlite3")
    port = free_port()
    options = SessionOptions(publish=Publishing(url, "demo-1"), page=LivePage(Bind("127.0.0.1", port)))
    with Hall(url, hall):
        status = run_demo(out=io.StringIO(), leds="none", out_dir=tmp_path / "out", moves=1, session=options, speed=0)
        assert status == 0
        page = f"http://127.0.0.1:{port}/"
        wait_for(lambda: any(t["page"] == page for t in hall.tables()), 20, "the demo's state naming its page")
    [row] = hall.tables()
    assert (row["page"], row["replay"]) == (page, page + "matches")
    hall.close()
