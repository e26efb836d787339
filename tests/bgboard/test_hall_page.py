# SPDX-License-Identifier: MIT
"""The hall page in a real browser (Debian's Chromium, driven by Playwright): each table's box
draws the live page's SVG board from the table's GNUbgID, player 1 at the bottom, says how long
ago the hall heard from it, and each alert links to its table's box. The hall's database is fed
directly (no broker): the page reads only :class:`HallStore`."""

from __future__ import annotations

import socket
import threading
import time
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from test_web_browser import chromium_path

from bgboard.hall.server import HallStore, make_app, position_json
from bgboard.store import format_time
from engine.ids import MatchIdFields, encode_gnubg_id
from engine.position import Position

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("browser")]

DOCS = Path(__file__).resolve().parents[2] / "docs"

#: Player 1 on roll with 3-1 at the start.
OPENING = encode_gnubg_id(Position.STARTING, MatchIdFields(dice=(3, 1), length=5))
#: Player 2 to roll, a checker of player 1 on the bar, player 2 owning a 2-cube, 2-1 up.
HIT = encode_gnubg_id(
    Position.from_points({6: 5, 8: 3, 13: 5, 24: 1, 25: 1}, {6: 4, 8: 3, 13: 5, 24: 2, 5: 1}),
    MatchIdFields(dice_owner=0, turn=0, cube=2, cube_owner=1, length=7, score=(2, 1)),
)


def feed(store: HallStore) -> None:
    """Three tables: one playing quietly, one with an illegal move, one offline."""
    tables = [
        ("t1", ("Ann", "Bob"), OPENING, 5, {}),
        ("t2", ("Cleo", "Dan"), HIT, 7, {"illegal": "13/10 6/5 read, 8/5 6/5 legal"}),
        ("t3", ("Eve", "Finn"), OPENING, 5, {}),
    ]
    old = format_time(datetime.now(UTC) - timedelta(minutes=2, seconds=5))
    for n, (name, players, gnubgid, length, extra) in enumerate(tables):
        action = {"table": name, "seq": 1, "store": "s", "players": list(players), "length": length}
        state = {"table": name, "seq": 1, "store": "s", "players": list(players), "length": length}
        store.set_state(name, {**state, "gnubgid": gnubgid, "last_move": "8/5 6/5" if n else None, **extra})
        store.set_online(name, name != "t3")
        # The action last: the hall last heard from the table when it arrived, two minutes ago.
        store.add_action({**action, "gnubgid_after": gnubgid}, received=old)


@pytest.fixture
def hall(tmp_path: Path) -> Iterator[str]:
    """The hall's web app on a free port, serving a fed database: its base URL."""
    import uvicorn

    store = HallStore(tmp_path / "hall.sqlite3")
    feed(store)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(make_app(store), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(5)
    store.close()


def test_position_json_reads_the_board_dice_cube_and_turn_from_the_gnubgid() -> None:
    start = position_json(OPENING)
    assert start["board"] == {
        "points": [-2, 0, 0, 0, 0, 5, 0, 3, 0, 0, 0, -5, 5, 0, 0, 0, -3, 0, -5, 0, 0, 0, 0, 2],
        "bar": [0, 0],
        "off": [0, 0],
        "bottom": 1,
    }
    assert (start["dice"], start["cube"], start["turn"]) == ([3, 1], {"value": 1, "owner": None}, 1)
    hit = position_json(HIT)
    assert hit["board"]["bar"] == [1, 0] and hit["board"]["points"][19] == -1  # player 2's 5-point: player 1's 20
    assert (hit["dice"], hit["cube"], hit["turn"]) == ([], {"value": 2, "owner": 2}, 1)
    # Seen from player 2 (dice owner 1), the same board in player 1's numbering.
    swapped = encode_gnubg_id(Position.from_id(HIT.split(":")[0]).swap(), MatchIdFields(dice_owner=1, turn=1))
    assert position_json(swapped)["board"] == hit["board"]
    assert position_json(None)["board"] is None and position_json("nonsense")["board"] is None


def test_api_tables_keeps_its_keys_and_adds_the_board(hall: str) -> None:
    import json

    with urllib.request.urlopen(f"{hall}/api/tables", timeout=5) as answer:
        rows = json.loads(answer.read())
    assert [r["table"] for r in rows] == ["t1", "t2", "t3"]
    for key in ("players", "score", "gnubgid", "actions", "last_seen", "online", "illegal", "board", "dice", "cube"):
        assert key in rows[1]
    assert rows[1]["score"] == [2, 1] and rows[1]["board"]["bar"] == [1, 0] and rows[1]["cube"]["owner"] == 2
    with urllib.request.urlopen(f"{hall}/static/board.js", timeout=5) as answer:
        assert b"const BG" in answer.read()


def test_the_hall_page_draws_each_table_s_board_and_links_the_alerts(hall: str) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path(), args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1366, "height": 768})
            errors: list[Any] = []
            page.on("pageerror", lambda error: errors.append(error))
            page.goto(f"{hall}/")
            page.wait_for_function("document.getElementById('live').textContent === 'live'", timeout=10000)
            for name in ("t1", "t2", "t3"):
                box = page.locator(f"section#table-{name}")
                assert box.locator("svg.bg-board").count() == 1
                assert box.locator("circle.bg-checker").count() == 30
                # Player 1 below the board, player 2 above it, whatever the turn.
                names = box.locator(".player .name").all_text_contents()
                assert names == {"t1": ["Bob", "Ann"], "t2": ["Dan", "Cleo"], "t3": ["Finn", "Eve"]}[name]
                assert "2 min ago" in box.locator(".ago").text_content()
            t2 = page.locator("section#table-t2")
            assert t2.locator("circle.bg-checker[data-point='bar'][data-seat='1']").count() == 1
            assert t2.locator(".bg-cube").get_attribute("data-value") == "2"
            assert page.locator("section#table-t1 .bg-die").count() == 2
            # The alerts: t2's illegal move and t3 offline, each linking to its box.
            links = page.locator("#alerts li a.goto")
            assert [links.nth(i).get_attribute("href") for i in range(links.count())] == ["#table-t2", "#table-t3"]
            page.set_viewport_size({"width": 1366, "height": 400})
            links.nth(0).click()
            page.wait_for_function("location.hash === '#table-t2'")
            top = page.evaluate("document.getElementById('table-t2').getBoundingClientRect().top")
            assert 0 <= top < 50
            page.set_viewport_size({"width": 1366, "height": 768})
            page.evaluate("window.scrollTo(0, 0)")
            page.screenshot(path=str(DOCS / "hall.png"))
            # A phone: no horizontal scroll, the boards as wide as the screen.
            page.set_viewport_size({"width": 390, "height": 844})
            page.wait_for_timeout(200)
            assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
            width = page.evaluate("document.querySelector('#table-t1 svg').getBoundingClientRect().width")
            assert 300 <= width <= 390
            assert errors == []
        finally:
            browser.close()
