# SPDX-License-Identifier: MIT
"""The broadcast overlay (``GET /overlay``) and gnubg's chances (``GET /api/chances``).

The table is a :class:`~bgboard.controller.Controller` whose events are handed to the live
page's hub by the test's thread, as the table's thread hands them; the page is opened in Debian's
Chromium (Playwright), as in ``test_web_browser.py``. gnubg is installed for these tests: the
chances are compared with gnubg's own ``eval`` of the same position, run here directly.

``BGBOARD_OVERLAY_SCREENSHOT=docs/overlay.png`` also saves the overlay, mid-game over a dark
background, where the documentation shows it.
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from test_web import TestClient
from test_web_browser import chromium_path

from bgboard.controller import Controller
from bgboard.events import Event
from bgboard.session import Inbox
from bgboard.web.hub import WebHub
from bgboard.web.overlay import Evaluator, parse_eval, position_to_evaluate
from bgboard.web.server import Bind, LiveWeb, live_app
from engine.dice import Dice
from engine.hints import find_gnubg
from engine.match import MatchState

#: How soon after a move the overlay must show it, bar included (seconds).
DEADLINE = 1.0
_ROW = re.compile(r"^ 2 ply:\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)", re.MULTILINE)


def gnubg_eval(gnubgid: str) -> dict[str, float]:
    """gnubg's own 2-ply ``eval`` of ``gnubgid``, from a gnubg of its own (not the overlay's code)."""
    program = find_gnubg()
    assert program is not None, "gnubg is needed here: sudo apt-get install gnubg"
    commands = f"set sound enable off\nset output digits 3\nset output winpc off\nset gnubgid {gnubgid}\neval\n"
    out = subprocess.run(
        [program, "-t", "-q", "-r"], input=commands, capture_output=True, text=True, timeout=60, check=True
    ).stdout
    found = _ROW.search(out)
    assert found is not None, out
    keys = ("win", "gammon", "backgammon", "lose_gammon", "lose_backgammon")
    return dict(zip(keys, (float(x) for x in found.groups()), strict=True))


def _player(state: MatchState) -> int:
    """The player on roll, 1 or 2."""
    assert state.on_roll is not None
    return state.on_roll + 1


class Table:
    """A controller for Ann and Bob whose events go to a live page, handed over by this thread."""

    def __init__(self) -> None:
        self.controller = Controller(MatchState.new_match(5), names=("Ann", "Bob"))
        self.live = LiveWeb.start(Bind("127.0.0.1", 0), ("Ann", "Bob"))
        self.live.hub.follow_controller(self.controller)
        self.url = f"http://127.0.0.1:{self.live.server.port}"
        self.t = 1.0
        #: Seconds the hub took to take each action's events (the table's thread's share).
        self.handed: list[float] = []

    def tell(self, events: list[Event]) -> None:
        started = time.monotonic()
        for event in events:
            self.live.hub(event.at(self.t))
        self.handed.append(time.monotonic() - started)

    def roll(self, first: int, second: int) -> None:
        self.t += 1
        self.tell(self.controller.correct(Dice(first, second), self.t))

    def opening(self) -> None:
        """An opening 3-1 with Ann to play it."""
        self.t += 1
        ann_first = self.controller.seat(0) == 1
        self.tell(self.controller.correct(Dice(3, 1) if ann_first else Dice(1, 3), self.t))

    def move(self, play: str) -> None:
        self.t += 1
        self.tell(self.controller.on_command(f"correct {play}", self.t))

    def evaluator(self) -> Evaluator:
        """The overlay's evaluator in the server's application."""
        app: Any = self.live.server._server.config.app
        route = next(r for r in app.routes if getattr(r, "path", "") == "/api/chances")
        evaluator = route.endpoint.__self__
        assert isinstance(evaluator, Evaluator)
        return evaluator

    def close(self) -> None:
        self.live.close()


@pytest.fixture
def table() -> Iterator[Table]:
    made = Table()
    try:
        yield made
    finally:
        made.close()


def _ready(table: Table) -> None:
    """Start the overlay's evaluator and wait for its gnubg to start (a broadcast opens the
    overlay before play)."""
    deadline = time.monotonic() + 30
    while not httpx.get(f"{table.url}/api/chances").json()["ready"]:
        assert time.monotonic() < deadline, "the overlay's gnubg did not start"
        time.sleep(0.05)


def _chances_for(table: Table, gnubgid: str, within: float = 5.0) -> dict[str, Any]:
    deadline = time.monotonic() + within
    while True:
        answer: dict[str, Any] = httpx.get(f"{table.url}/api/chances").json()
        if answer["gnubgid"] == gnubgid or time.monotonic() > deadline:
            return answer
        time.sleep(0.02)


# -- without a browser ---------------------------------------------------------------------


def test_get_overlay_returns_the_page_and_its_files_without_a_token() -> None:
    hub = WebHub(("Ann", "Bob"))
    with TestClient(live_app(hub, Inbox(), "secret")) as client:
        page = client.get("/overlay")
        assert page.status_code == 200
        assert page.headers["content-type"].startswith("text/html")
        assert "/static/overlay.js" in page.text and "/static/overlay.css" in page.text
        for name in ("overlay.js", "overlay.css"):
            assert client.get(f"/static/{name}").status_code == 200
        chances = client.get("/api/chances").json()
    hub.close()
    # Before any game: every contract key, and nothing evaluated.
    assert {"gnubgid", "win", "gammon", "backgammon", "lose_gammon", "lose_backgammon", "for"} <= set(chances)
    assert chances["gnubgid"] is None and chances["win"] is None


def test_gnubgs_eval_is_read_from_the_row_asked_for() -> None:
    text = (
        "        Win     W(g)    W(bg)   L(g)    L(bg)   Equity    Cubeful\n"
        "static: 0.522   0.154   0.008   0.130   0.008   +0.043    +0.043\n"
        " 1 ply: 0.527   0.147   0.008   0.129   0.005   +0.053    +0.053\n"
        " 2 ply: 0.525   0.149   0.007   0.124   0.005   +0.050    +0.050\n"
    )
    assert parse_eval(text, 2) == {
        "win": 0.525,
        "gammon": 0.149,
        "backgammon": 0.007,
        "lose_gammon": 0.124,
        "lose_backgammon": 0.005,
        "equity": 0.05,
        "cubeful": 0.05,
    }
    assert parse_eval(text, 0)["win"] == 0.522
    assert parse_eval(text, 4)["win"] == 0.525  # the deepest row there is


def test_the_position_evaluated_is_the_side_on_roll_before_its_roll() -> None:
    start = MatchState.new_match(5)
    assert position_to_evaluate({"gnubgid": start.gnubg_id(), "on_roll": None}) is None  # opening roll
    controller = Controller(start, names=("Ann", "Bob"))
    controller.correct(Dice(3, 1) if controller.seat(0) == 1 else Dice(1, 3), 1.0)
    controller.on_command("correct 8/5 6/5", 2.0)
    before_roll = controller.state
    controller.correct(Dice(6, 4), 3.0)
    rolled = controller.state
    assert rolled.dice is not None
    expected = (before_roll.gnubg_id(), _player(before_roll))
    assert position_to_evaluate({"gnubgid": before_roll.gnubg_id(), "on_roll": 2}) == expected
    assert position_to_evaluate({"gnubgid": rolled.gnubg_id(), "on_roll": 2}) == expected


def test_the_chances_after_each_move_are_gnubgs_and_the_table_never_waits(table: Table) -> None:
    _ready(table)
    table.opening()
    table.move("8/5 6/5")
    for play, roll in (("24/18 13/9", (6, 4)), ("13/8 13/10", (5, 3))):
        after = table.controller.state
        served = _chances_for(table, after.gnubg_id(), DEADLINE)
        assert served["gnubgid"] == after.gnubg_id(), served
        assert served["for"] == _player(after)
        direct = gnubg_eval(after.gnubg_id())
        assert {key: served[key] for key in direct} == direct
        table.roll(*roll)
        table.move(play)
    # Handing the events over never waited for gnubg (an evaluation takes tens of milliseconds).
    assert max(table.handed) < 0.05, table.handed
    assert len(table.evaluator().latencies) >= 2


def test_the_evaluator_and_its_gnubg_stop_with_the_server() -> None:
    made = Table()
    try:
        httpx.get(f"{made.url}/api/chances")
        made.opening()
        made.move("8/5 6/5")
        assert _chances_for(made, made.controller.state.gnubg_id())["win"] is not None
        evaluator = made.evaluator()
        assert evaluator.hints.pid is not None
    finally:
        made.close()
    deadline = time.monotonic() + 5
    while evaluator.hints.pid is not None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert evaluator.hints.pid is None


def test_without_gnubg_the_chances_say_why_and_carry_none(monkeypatch: pytest.MonkeyPatch, table: Table) -> None:
    monkeypatch.setattr("engine.hints.find_gnubg", lambda: None)
    httpx.get(f"{table.url}/api/chances")
    table.opening()
    table.move("8/5 6/5")
    deadline = time.monotonic() + 5
    answer = httpx.get(f"{table.url}/api/chances").json()
    while answer["error"] is None and time.monotonic() < deadline:
        time.sleep(0.05)
        answer = httpx.get(f"{table.url}/api/chances").json()
    assert answer["win"] is None and answer["gnubgid"] is None
    assert "gnubg" in answer["error"]


# -- in Chromium ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    path = chromium_path()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        # --no-sandbox: CI runs the tests as root, where Chromium's sandbox refuses to start.
        launched = p.chromium.launch(executable_path=path, args=["--no-sandbox"])
        yield launched
        launched.close()


def _shown(page: Any) -> dict[str, Any]:
    shown: dict[str, Any] = page.evaluate(
        """() => {
          const row = (n) => {
            const r = document.querySelector(`.row[data-player="${n}"]`);
            return {name: r.querySelector('.name').textContent, score: r.querySelector('.score').textContent,
                    pips: r.querySelector('.pips').textContent, cube: r.querySelector('.cube').textContent};
          };
          const bar = document.getElementById('chances');
          return {p1: row(1), p2: row(2), length: document.getElementById('length').textContent,
                  cube: document.getElementById('centre-cube').textContent,
                  last: document.getElementById('last-move').textContent,
                  visible: !document.getElementById('overlay').hidden,
                  bar: bar.hidden ? null : {...bar.dataset}};
        }"""
    )
    return shown


def _expected(table: Table) -> dict[str, Any]:
    state = table.live.hub.state()
    return {
        "p1": {"name": "Ann", "score": str(state["score"][0]), "pips": str(state["pips"][0])},
        "p2": {"name": "Bob", "score": str(state["score"][1]), "pips": str(state["pips"][1])},
    }


def _wait_for(page: Any, table: Table, gnubgid: str, deadline: float) -> dict[str, Any]:
    expected = _expected(table)
    while True:
        shown = _shown(page)
        rows = {n: {k: shown[n][k] for k in ("name", "score", "pips")} for n in ("p1", "p2")}
        if rows == expected and shown["bar"] is not None and shown["bar"]["gnubgid"] == gnubgid:
            return shown
        if time.monotonic() > deadline:
            pytest.fail(f"the overlay did not show {expected} and the chances of {gnubgid} in time: {shown}")
        time.sleep(0.02)


@pytest.mark.slow
@pytest.mark.xdist_group("browser")
def test_the_overlay_is_transparent_and_follows_each_move_with_gnubgs_chances(table: Table, browser: Any) -> None:
    page = browser.new_page(viewport={"width": 1920, "height": 1080})
    try:
        page.goto(f"{table.url}/overlay")
        page.wait_for_function("() => !document.getElementById('overlay').hidden")
        backgrounds = page.evaluate(
            "() => [getComputedStyle(document.documentElement).backgroundColor,"
            " getComputedStyle(document.body).backgroundColor]"
        )
        assert backgrounds == ["rgba(0, 0, 0, 0)", "rgba(0, 0, 0, 0)"]
        shown = _shown(page)
        assert shown["p1"]["name"] == "Ann" and shown["p2"]["name"] == "Bob"
        assert shown["length"] == "5-point match" and shown["bar"] is None  # no game yet: no bar
        _ready(table)  # the page's first request started it

        table.opening()
        for play, roll in (("8/5 6/5", None), ("24/18 13/9", (6, 4)), ("13/8 13/10", (5, 3))):
            if roll is not None:
                table.roll(*roll)
            table.move(play)
            moved = time.monotonic()
            after = table.controller.state
            shown = _wait_for(page, table, after.gnubg_id(), moved + DEADLINE)
            assert shown["last"].endswith(play)
            direct = gnubg_eval(after.gnubg_id())
            assert shown["bar"]["for"] == str(_player(after))
            for key, name in (("win", "win"), ("gammon", "gammon"), ("lose_gammon", "loseGammon")):
                assert float(shown["bar"][name]) == direct[key]
            # The bar's labels are player 1's and player 2's chances.
            p1_win = direct["win"] if after.on_roll == 0 else 1 - direct["win"]
            label = page.text_content("#chances .side.p1 .win")
            assert label == f"{100 * p1_win:.1f}%"
        assert shown["cube"] == "64" and shown["p1"]["cube"] == shown["p2"]["cube"] == ""

        target = os.environ.get("BGBOARD_OVERLAY_SCREENSHOT")
        if target:
            # Over a dark picture, as over the table's video in the streaming program.
            page.evaluate(
                "() => { document.documentElement.style.background ="
                " 'radial-gradient(circle at 60% 40%, #3a4a3c, #0d120e 70%)'; }"
            )
            page.screenshot(path=str(Path(target)))
    finally:
        page.close()


@pytest.mark.slow
@pytest.mark.xdist_group("browser")
def test_without_gnubg_the_overlay_shows_everything_but_the_bar(
    monkeypatch: pytest.MonkeyPatch, table: Table, browser: Any
) -> None:
    monkeypatch.setattr("engine.hints.find_gnubg", lambda: None)
    page = browser.new_page(viewport={"width": 1920, "height": 1080})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        page.goto(f"{table.url}/overlay")
        table.opening()
        table.move("8/5 6/5")
        expected = _expected(table)
        deadline = time.monotonic() + 5
        while True:
            shown = _shown(page)
            rows = {n: {k: shown[n][k] for k in ("name", "score", "pips")} for n in ("p1", "p2")}
            if rows == expected and shown["last"].endswith("8/5 6/5"):
                break
            assert time.monotonic() < deadline, shown
            time.sleep(0.02)
        answer = httpx.get(f"{table.url}/api/chances").json()
        while answer["error"] is None and time.monotonic() < deadline:
            time.sleep(0.05)
            answer = httpx.get(f"{table.url}/api/chances").json()
        time.sleep(0.5)  # two more polls of the page
        assert _shown(page)["bar"] is None
        assert errors == []
    finally:
        page.close()
