# SPDX-License-Identifier: MIT
"""The live page's server without a browser: the hub, the API contract, the token, the match browser."""

from __future__ import annotations

import contextlib
import json
import logging
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from starlette.applications import Starlette

from bgboard.cli import main
from bgboard.controller import Controller
from bgboard.events import Event, encode
from bgboard.session import Inbox
from bgboard.store import MatchStore
from bgboard.web.hub import WebHub, board_json
from bgboard.web.server import Bind, BindError, LiveWeb, WebServer, history_app, live_app
from engine.dice import Dice
from engine.match import AcceptResign, MatchState, Move, OpeningRoll, Resign

TOKEN = "secret-token"


@contextlib.contextmanager
def TestClient(app: Starlette) -> Iterator[httpx.Client]:  # noqa: N802 (read as Starlette's test client)
    """``app`` served for real by uvicorn on a free port, and a client for it."""
    with WebServer(app, Bind("127.0.0.1", 0)) as server, httpx.Client(base_url=f"http://127.0.0.1:{server.port}") as c:
        yield c


def _controller() -> Controller:
    return Controller(MatchState.new_match(3), names=("Ann", "Bob"))


def _hub(controller: Controller) -> WebHub:
    hub = WebHub(("Ann", "Bob"))
    hub.follow_controller(controller)
    return hub


def _play(controller: Controller, hub: WebHub) -> list[Event]:
    """An opening roll of 3-1 (Ann first) and her 8/5 6/5, told to the hub as the table would."""
    said = controller.correct(Dice(3, 1), 1.0) if controller.seat(0) == 1 else controller.correct(Dice(1, 3), 1.0)
    said += controller.on_command("correct 8/5 6/5", 2.0)
    for event in said:
        hub(event.at(2.0))
    return said


@pytest.fixture
def running_inbox() -> Iterator[tuple[Inbox, Controller, WebHub]]:
    """An inbox run by a thread, as the demo's and the referee's loops run it."""
    controller = _controller()
    hub, inbox = _hub(controller), Inbox()
    stop = threading.Event()

    def run(command: str) -> list[Event]:
        events = controller.on_command(command, 5.0)
        for event in events:
            hub(event)
        return events

    def loop() -> None:
        while not stop.is_set():
            inbox.run_pending(run, wait=0.05)

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    yield inbox, controller, hub
    stop.set()
    thread.join(2)


def test_the_state_has_the_contracts_keys_with_players_numbered_1_and_2() -> None:
    controller = _controller()
    hub = _hub(controller)
    _play(controller, hub)
    state = hub.state()
    assert state["gnubgid"] == controller.state.gnubg_id()
    assert state["dice"] == []
    assert state["turn"] == 2  # Bob (engine player 1) is to roll after Ann's move
    assert state["cube"] == {"value": 1, "owner": None}
    assert state["score"] == [0, 0]
    assert state["status"] == "Bob to roll or double"
    assert state["last_move"]["play"] == "8/5 6/5"
    # Ann sits at seat 2: her 8- and 6-points are seat 1's 17 and 19, her 5-point his 20.
    assert state["last_move"]["arrows"] == [
        {"from": 17, "to": 20, "seat": 2, "hit": False},
        {"from": 19, "to": 20, "seat": 2, "hit": False},
    ]


def test_the_board_counts_every_checker_in_player_1s_numbering() -> None:
    state = MatchState.new_match(3).apply(OpeningRoll(3, 1))
    board = board_json(state.apply(Move("8/5 6/5")), bottom_player=1)
    # Ann (engine 0) sits at seat 2: her 5-point is seat 1's 20-point, her 8-point his 17.
    assert board["points"][19] == -2 and board["points"][16] == -2 and board["points"][17] == 0
    assert sum(abs(n) for n in board["points"]) + sum(board["bar"]) + sum(board["off"]) == 30


def test_each_event_goes_out_as_its_json_line_and_a_late_page_gets_state_and_backlog() -> None:
    controller = _controller()
    hub = _hub(controller)
    said = _play(controller, hub)

    async def first_messages() -> list[str]:
        _, first = await hub.subscribe()
        return first

    import asyncio

    first = asyncio.run(first_messages())
    assert first[0].startswith("event: state\ndata: ")
    assert json.loads(first[0].split("data: ", 1)[1])["gnubgid"] == controller.state.gnubg_id()
    # Every event after it, numbered, its data line exactly what --json prints.
    assert [m.split("data: ", 1)[1].rstrip("\n") for m in first[1:]] == [encode(e.at(2.0)) for e in said]
    assert first[1].startswith("id: 1\n")


def test_a_page_that_reconnects_gets_only_what_it_missed() -> None:
    controller = _controller()
    hub = _hub(controller)
    _play(controller, hub)

    async def after(seen: int) -> list[str]:
        _, first = await hub.subscribe(seen)
        return first

    import asyncio

    total = len(hub.events())
    assert len(asyncio.run(after(total - 1))) == 2  # the state, and the one event missed
    assert len(asyncio.run(after(total))) == 1


def test_get_state_and_the_page_need_no_token() -> None:
    controller = _controller()
    hub = _hub(controller)
    with TestClient(live_app(hub, Inbox(), TOKEN)) as client:
        state = client.get("/api/state").json()
        page = client.get("/")
        script = client.get("/static/board.js")
    assert state["gnubgid"] == controller.state.gnubg_id()
    assert page.status_code == 200 and "<svg" not in page.text and "board.js" in page.text
    assert script.status_code == 200 and "bg-checker" in script.text


@pytest.mark.parametrize(
    "headers",
    [{}, {"Authorization": "Bearer wrong"}, {"Authorization": f"Basic {TOKEN}"}, {"Authorization": "Bearer"}],
    ids=["none", "wrong", "not bearer", "empty"],
)
def test_a_change_without_the_token_is_refused_logged_and_changes_nothing(
    headers: dict[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    controller = _controller()
    hub, inbox = _hub(controller), Inbox()
    _play(controller, hub)
    before = controller.state
    ran: list[str] = []
    with TestClient(live_app(hub, inbox, TOKEN)) as client, caplog.at_level(logging.WARNING):
        for path, body in (("/api/correct", {"play": "8/4 6/5"}), ("/api/command", {"command": "undo"})):
            response = client.post(path, json=body, headers=headers)
            assert response.status_code == 401
            assert "token" in response.json()["error"]
            assert response.headers["www-authenticate"].startswith("Bearer")
    assert inbox.run_pending(lambda c: ran.append(c) or []) == [] and ran == []
    assert controller.state == before
    refused = [r.getMessage() for r in caplog.records if r.name == "bgboard.web.server"]
    assert len(refused) == 2 and all(m.startswith("refused POST /api/") for m in refused)


def test_a_correction_with_the_token_is_run_by_the_tables_owner_and_recorded(
    running_inbox: tuple[Inbox, Controller, WebHub],
) -> None:
    inbox, controller, hub = running_inbox
    _play(controller, hub)
    with TestClient(live_app(hub, inbox, TOKEN)) as client:
        answer = client.post("/api/correct", json={"play": "13/10 6/5"}, headers={"Authorization": f"Bearer {TOKEN}"})
    assert answer.status_code == 200
    body = answer.json()
    assert body["accepted"] is True and body["command"] == "correct 13/10 6/5"
    assert body["events"][0]["event"] == "correction" and body["events"][0]["source"] == "correction"
    assert body["state"]["last_move"]["play"] == "13/10 6/5"
    assert hub.state()["gnubgid"] == controller.state.gnubg_id()


def test_a_refused_correction_says_why(running_inbox: tuple[Inbox, Controller, WebHub]) -> None:
    inbox, controller, hub = running_inbox
    _play(controller, hub)
    before = controller.state
    with TestClient(live_app(hub, inbox, TOKEN)) as client:
        auth = {"Authorization": f"Bearer {TOKEN}"}
        bad = client.post("/api/correct", json={"play": "24/1"}, headers=auth).json()
        empty = client.post("/api/correct", json={}, headers=auth)
        not_json = client.post("/api/correct", content=b"{", headers=auth)
        unknown = client.post("/api/command", json={"command": "quit"}, headers=auth)
    assert bad["accepted"] is False and bad["events"][0]["event"] == "refused"
    assert controller.state == before
    assert empty.status_code == 400 and '"play"' in empty.json()["error"]
    assert not_json.status_code == 400 and "not JSON" in not_json.json()["error"]
    assert unknown.status_code == 400 and "'quit' is not a command" in unknown.json()["error"]


@pytest.fixture
def store_with_a_match(tmp_path: Path) -> tuple[Path, int]:
    path = tmp_path / "matches.sqlite3"
    with MatchStore(path) as store:
        match = store.start_match(("Ann", "Bob"), 3)
        store.record(match, OpeningRoll(3, 1), source="camera")
        store.record(match, Move("8/5 6/5", by=0), source="camera")
    return path, match


def test_the_match_browser_lists_replays_and_exports(store_with_a_match: tuple[Path, int]) -> None:
    path, match = store_with_a_match
    with TestClient(history_app(path)) as client:
        matches = client.get("/api/matches").json()
        replay = client.get(f"/api/matches/{match}").json()
        mat = client.get(f"/api/matches/{match}/export", params={"format": "mat"})
        sgf = client.get(f"/api/matches/{match}/export?format=sgf")
        bad = client.get(f"/api/matches/{match}/export?format=xg")
        missing = client.get("/api/matches/99")
        home = client.get("/")
    assert matches == [
        {
            "id": match,
            "players": ["Ann", "Bob"],
            "length": 3,
            "score": [0, 0],
            "finished": False,
            "started": matches[0]["started"],
            "games": 1,
            "actions": 2,
        }
    ]
    assert [s["text"] for s in replay["steps"]] == ["opening roll 3-1", "Ann: move 8/5 6/5"]
    # No PlayerAtBottom tag: shown as the default config has the table, Ann (player 1) at the
    # bottom, seat 1, whose 5-point she has just made.
    assert replay["bottom"] == 1 and replay["steps"][-1]["state"]["board"]["points"][4] == 2
    assert mat.status_code == 200 and "3 point match" in mat.text and "31: 8/5 6/5" in mat.text
    assert 'filename="' in mat.headers["content-disposition"]
    assert sgf.status_code == 200 and "GM[6]" in sgf.text
    assert bad.status_code == 400 and "mat or sgf" in bad.json()["error"]
    assert missing.status_code == 404
    assert home.status_code == 200 and "matches.js" in home.text


@pytest.mark.parametrize(
    ("text", "host", "port"),
    [(":8080", "127.0.0.1", 8080), ("8000", "127.0.0.1", 8000), ("0.0.0.0:80", "0.0.0.0", 80), ("[::1]:9", "::1", 9)],
)
def test_web_addresses_default_to_localhost(text: str, host: str, port: int) -> None:
    assert Bind.parse(text) == Bind(host, port)


@pytest.mark.parametrize("text", ["", "host:port", "1.2.3.4:70000", "a:b:c"])
def test_a_bad_web_address_is_named(text: str) -> None:
    with pytest.raises(BindError, match=r"HOST:PORT|port|brackets"):
        Bind.parse(text)


def test_a_port_in_use_is_a_clear_error() -> None:
    with WebServer(history_app(Path("unused")), Bind("127.0.0.1", 0)) as first:
        taken = Bind("127.0.0.1", first.port)
        with pytest.raises(BindError, match=f"cannot listen on 127.0.0.1:{first.port}"):
            WebServer(history_app(Path("unused")), taken)


def test_the_event_stream_over_a_real_server_sends_state_then_events_and_keeps_up() -> None:
    controller = _controller()
    live = LiveWeb.start(Bind("127.0.0.1", 0), ("Ann", "Bob"), token=TOKEN)
    live.hub.follow_controller(controller)
    try:
        with httpx.stream("GET", f"http://127.0.0.1:{live.server.port}/api/events", timeout=5) as response:
            assert response.headers["content-type"].startswith("text/event-stream")
            lines = response.iter_lines()
            assert next(lines) == "retry: 1000"
            assert next(lines) == "" and next(lines) == "event: state"
            assert json.loads(next(lines).removeprefix("data: "))["status"] == "waiting for the opening roll"
            said = _play(controller, live.hub)
            data = []
            for line in lines:
                if (
                    line.startswith("data: ")
                    and '"event": "state"' not in line
                    and not line.startswith('data: {"gnubgid')
                ):
                    data.append(line.removeprefix("data: "))
                if len(data) == len(said):
                    break
        assert data == [encode(e.at(2.0)) for e in said]
    finally:
        live.close()


def test_the_live_notice_gives_the_address_and_token_and_draws_a_qr_code() -> None:
    live = LiveWeb.start(Bind("127.0.0.1", 0), ("Ann", "Bob"), token=TOKEN)
    try:
        notice = live.notice()
    finally:
        live.close()
    assert notice.fields == {"url": f"http://127.0.0.1:{live.server.port}/", "token": TOKEN}
    assert notice.console is not None and "█" in notice.console and TOKEN in notice.console
    assert live.page_url.endswith(f"/#token={TOKEN}")


def test_serve_names_a_missing_store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["serve", "--store", str(tmp_path / "none.sqlite3"), "--bind", "127.0.0.1:0"])
    assert status == 1
    assert "no match store there" in capsys.readouterr().err


def test_demo_refuses_a_bad_web_address(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["demo", "--web", "localhost:http"])
    assert exit_.value.code == 2
    assert "--web" in capsys.readouterr().err


def test_an_idle_stream_gets_keep_alives_and_a_page_that_falls_behind_is_let_go(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import asyncio

    import bgboard.web.hub

    controller = _controller()
    hub = _hub(controller)
    monkeypatch.setattr(bgboard.web.hub, "QUEUE_LIMIT", 3)

    async def scenario() -> tuple[str | None, int, str | None, int]:
        subscriber, _ = await hub.subscribe()
        idle = await hub.next_message(subscriber, 0.05)
        pages = hub.pages
        # Five events (and their states) while the page reads nothing: more than it may hold.
        await asyncio.to_thread(_play, controller, hub)
        await asyncio.sleep(0.05)
        messages = []
        while (message := await hub.next_message(subscriber, 0.05)) not in (None, ""):
            messages.append(message)
        return idle, pages, message, hub.pages

    idle, pages, last, after = asyncio.run(scenario())
    assert idle == "" and pages == 1  # "": time for a keep-alive comment
    assert last is None and after == 0  # the stream ends; EventSource reconnects afresh


@pytest.mark.slow
def test_demo_web_serves_the_page_from_the_command_line_until_stopped(tmp_path: Path) -> None:
    import os
    import signal
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    command = [sys.executable, "-m", "bgboard", "demo", "--web", "127.0.0.1:0", "--out", str(tmp_path)]
    command += ["--moves", "2", "--speed", "0", "--leds", "none"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("BGBOARD_")}
    with subprocess.Popen(command, cwd=root, env=env, stdout=subprocess.PIPE, text=True) as demo:
        assert demo.stdout is not None
        lines: list[str] = []
        for line in demo.stdout:
            lines.append(line)
            if line.startswith("match written to "):
                break
        url = next(x.split()[-1] for x in lines if x.startswith("live page: "))
        token = next(x.split()[1] for x in lines if x.startswith("token: "))
        state = httpx.get(url + "api/state", timeout=10).json()
        assert {"gnubgid", "dice", "turn", "cube", "score", "status"} <= set(state)
        assert httpx.post(url + "api/correct", json={"play": "13/10"}, timeout=10).status_code == 401
        answer = httpx.post(url + "api/command", json={"command": "undo"}, headers={"Authorization": f"Bearer {token}"})
        assert answer.json()["accepted"] is True  # run by the demo's loop after the game
        # The undo changed the match: the .mat file is written again to say what the store says.
        mat = next(tmp_path.glob("*.mat"))
        said = demo.stdout.readline()
        assert "taken back" in said
        rewritten = demo.stdout.readline()
        assert f"{mat} written again: the match is in progress" in rewritten, rewritten
        assert mat.read_text(encoding="utf-8") == _stored_mat(tmp_path)
        demo.send_signal(signal.SIGTERM)
        assert demo.wait(20) == 0
    # The page stays up, and the last line still names the .mat file written.
    stays = [number for number, line in enumerate(lines) if "the live page stays at" in line]
    assert stays and stays[0] < len(lines) - 1 and lines[-1].startswith("match written to ")
    assert list(tmp_path.glob("*.mat"))


def _stored_mat(folder: Path) -> str:
    """The .mat text of the one match stored in ``folder``'s store."""
    with MatchStore(next(folder.glob("*.sqlite3"))) as store:
        return store.export(store.matches()[-1].id, "mat")


def test_the_pages_files_and_answers_are_gzipped_for_whoever_accepts_it(tmp_path: Path) -> None:
    controller = _controller()
    hub = _hub(controller)
    gzip = {"Accept-Encoding": "gzip"}
    with TestClient(live_app(hub, Inbox(), TOKEN)) as client:
        script = client.get("/static/app.js", headers=gzip)
        page = client.get("/", headers=gzip)
        plain = client.get("/static/app.js", headers={"Accept-Encoding": "identity"})
    assert script.status_code == 200 and script.headers["content-encoding"] == "gzip"
    assert page.headers["content-encoding"] == "gzip"
    assert "content-encoding" not in plain.headers
    assert script.text == plain.text  # httpx unzips it: the same script
    with MatchStore(tmp_path / "m.sqlite3"):
        pass
    with TestClient(history_app(tmp_path / "m.sqlite3")) as client:
        style = client.get("/static/style.css", headers=gzip)
    assert style.status_code == 200 and style.headers["content-encoding"] == "gzip"


def test_a_huge_change_is_refused_unread_and_reaches_no_table(caplog: pytest.LogCaptureFixture) -> None:
    """A 50 MB body is 413 at once, a command of thousands of characters 400: nothing is queued
    for the table, nothing echoed back."""
    controller = _controller()
    hub, inbox = _hub(controller), Inbox()
    ran: list[str] = []
    auth = {"Authorization": f"Bearer {TOKEN}"}
    with TestClient(live_app(hub, inbox, TOKEN)) as client:
        huge = b'{"play": "' + b"13/10 " * 9_000_000 + b'"}'
        answer = client.post("/api/correct", content=huge, headers={**auth, "Content-Type": "application/json"})
        assert answer.status_code == 413 and len(answer.content) < 300
        assert "at most 4096" in answer.json()["error"]
        answer = client.post("/api/command", json={"command": "dice " + "5" * 3000}, headers=auth)
        assert answer.status_code == 400 and "at most 200 characters, not 3005" in answer.json()["error"]
        answer = client.post("/api/correct", json={"play": "13/10 " * 500}, headers=auth)
        assert answer.status_code == 400 and len(answer.content) < 300
    assert inbox.run_pending(lambda command: ran.append(command) or []) == [] and ran == []


def test_the_apis_words_say_what_happened(running_inbox: tuple[Inbox, Controller, WebHub]) -> None:
    inbox, controller, hub = running_inbox
    _play(controller, hub)
    auth = {"Authorization": f"Bearer {TOKEN}"}
    with TestClient(live_app(hub, inbox, TOKEN)) as client:
        garbage = client.post("/api/correct", json={"position": "garbage"}, headers=auth)
        assert garbage.status_code == 400
        assert garbage.json()["error"].startswith("position is a Position ID: Position ID 'garbage'")
        teach = client.post("/api/command", json={"command": "teach on"}, headers=auth).json()
        assert teach["accepted"] is True and controller.teach
        refused = client.post("/api/command", json={"command": "done"}, headers=auth).json()
        assert refused["accepted"] is False


def test_a_hint_after_the_match_says_the_match_is_over() -> None:
    over = MatchState.new_match(1).apply(OpeningRoll(3, 1)).apply(Resign(3)).apply(AcceptResign())
    events = Controller(over).on_command("hint", 0.0)
    assert [e.text for e in events] == ["no hint now: the match is over"]
