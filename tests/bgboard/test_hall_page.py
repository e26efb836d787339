# SPDX-License-Identifier: MIT
"""The hall page in a real browser (Debian's Chromium, driven by Playwright): each table's box
draws the live page's SVG board from the table's GNUbgID, player 1 at the bottom, with the last
move's arrows, says how long ago the hall heard from it, links its files, live page and replay,
and is made again only when its table changed; each alert links to its table's box and the
rest; the page follows the system's dark mode. The hall's database is fed directly (no broker):
the page reads only :class:`HallStore`, and ``GET /api/events`` is woken by its changes."""

from __future__ import annotations

import io
import json
import re
import urllib.request
import zipfile
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from test_hall_export import served
from test_web_browser import chromium_path

from bgboard.hall.outbox import Outbox
from bgboard.hall.server import STATIC, WEB_STATIC, HallStore, position_json
from bgboard.store import MatchStore, format_time
from engine.dice import Dice
from engine.ids import MatchIdFields, encode_gnubg_id
from engine.match import Action, Move, OpeningRoll, Roll
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
#: The live pages of t1 and t4.
PAGES = {"t1": "http://127.0.0.1:8123/", "t4": "http://127.0.0.1:8124/"}


def played(table: str, players: tuple[str, str], length: int, actions: list[Action | str]) -> tuple[MatchStore, int]:
    """A match played into a store of its own (``"undo"``: the undo button), its actions in
    the outbox of ``table``: the store (to compare the hall's files with) and the match."""
    store = MatchStore(":memory:")
    match = store.start_match(players, length)
    for action in actions:
        if action == "undo":
            store.undo(match, source="button")
        else:
            assert not isinstance(action, str)
            store.record(match, action, source="camera")
    outbox = Outbox(store, table)
    outbox.add_match(match)
    outbox.fill()
    return store, match


@dataclass
class Fed:
    """What the hall was fed: the stores of t1 and t4 (their matches' own exports), and their
    next actions, held back to be fed while the page is open."""

    stores: dict[str, tuple[MatchStore, int]]
    later: dict[str, dict[str, Any]]


def feed(store: HallStore) -> Fed:
    """Four tables: t1 playing quietly (its last move 8/5 6/5, a live page), t2 with an illegal
    move, t3 offline, t4 in a dispute (a move taken back; a live page)."""
    t1 = played("t1", ("Ann", "Bob"), 5, [OpeningRoll(3, 1), Move("8/5 6/5"), Roll(Dice(5, 2), by=1)])
    t4 = played("t4", ("Gil", "Hal"), 3, [OpeningRoll(6, 4), Move("24/14"), "undo", Move("24/18 13/9")])
    messages = {name: Outbox(s, name).messages() for name, (s, _) in (("t1", t1), ("t4", t4))}
    tables = [
        ("t1", ("Ann", "Bob"), messages["t1"][1]["gnubgid_after"], 5, {"page": PAGES["t1"]}),
        ("t2", ("Cleo", "Dan"), HIT, 7, {"illegal": "13/10 6/5 read, 8/5 6/5 legal"}),
        ("t3", ("Eve", "Finn"), OPENING, 5, {}),
        ("t4", ("Gil", "Hal"), messages["t4"][2]["gnubgid_after"], 3, {"page": PAGES["t4"]}),
    ]
    old = format_time(datetime.now(UTC) - timedelta(minutes=2, seconds=5))
    for name, players, gnubgid, length, extra in tables:
        action = {"table": name, "seq": 1, "store": "s", "players": list(players), "length": length}
        state = {"table": name, "seq": 1, "store": "s", "players": list(players), "length": length}
        if name in messages:
            state["store"] = messages[name][0]["store"]
        said = "8/5 6/5" if name in ("t1", "t2") else None
        store.set_state(name, {**state, "gnubgid": gnubgid, "last_move": said, **extra})
        store.set_online(name, name != "t3")
        # The actions last: the hall last heard from the table when they arrived, two minutes ago.
        held = messages[name][:-1] if name in messages else [{**action, "gnubgid_after": gnubgid}]
        for message in held:
            store.add_action(message, received=old)
    return Fed({"t1": t1, "t4": t4}, {name: held[-1] for name, held in messages.items()})


@pytest.fixture
def fed(tmp_path: Path) -> Iterator[tuple[str, HallStore, Fed]]:
    """The hall's web app on a free port, serving a fed database: its base URL, the database
    and what it was fed."""
    store = HallStore(tmp_path / "hall.sqlite3")
    given = feed(store)
    with served(store) as base:
        yield base, store, given
    store.close()
    for match_store, _ in given.stores.values():
        match_store.close()


@pytest.fixture
def hall(fed: tuple[str, HallStore, Fed]) -> str:
    """The fed hall's base URL."""
    return fed[0]


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
    with urllib.request.urlopen(f"{hall}/api/tables", timeout=5) as answer:
        rows = json.loads(answer.read())
    assert [r["table"] for r in rows] == ["t1", "t2", "t3", "t4"]
    for key in ("players", "score", "gnubgid", "actions", "last_seen", "online", "illegal", "board", "dice", "cube"):
        assert key in rows[1]
    assert rows[1]["score"] == [2, 1] and rows[1]["board"]["bar"] == [1, 0] and rows[1]["cube"]["owner"] == 2
    # What the hall works out of the actions held: the last move standing, a dispute.
    assert rows[0]["last_play"] == {"player": 0, "play": "8/5 6/5", "match": 1, "game": 1}
    assert rows[3]["last_play"] is None and rows[3]["dispute"] == "Gil's move 24/14 taken back (undo)"
    assert rows[0]["dispute"] is None and rows[1]["dispute"] is None
    with urllib.request.urlopen(f"{hall}/static/board.js", timeout=5) as answer:
        assert b"const BG" in answer.read()


def events(url: str) -> Generator[dict[str, Any], None, None]:
    """The messages of a server-sent event stream, as they come."""
    with urllib.request.urlopen(url, timeout=30) as stream:
        for line in stream:
            if line.startswith(b"data: "):
                yield json.loads(line[6:])


def test_the_events_are_pushed_when_the_hall_keeps_an_action_and_made_once_for_every_page(
    fed: tuple[str, HallStore, Fed], monkeypatch: pytest.MonkeyPatch
) -> None:
    base, store, given = fed
    made: list[int] = []
    snapshot = store.snapshot

    def counted() -> list[tuple[int, dict[str, Any]]]:
        made.append(1)
        return snapshot()

    monkeypatch.setattr(store, "snapshot", counted)
    pages = [events(f"{base}/api/events") for _ in range(3)]
    for stream in pages:
        first = next(stream)
        assert [t["actions"] for t in first["tables"]] == [2, 1, 1, 3]
        assert [a["kind"] for a in first["alerts"]] == ["illegal", "offline", "dispute"]
    store.add_action(given.later["t1"])
    for stream in pages:
        after = next(stream)
        assert after["tables"][0]["actions"] == 3
        # Bob rolled: the last move (Ann's) keeps its arrows, seat 1's.
        arrows = after["tables"][0]["draw"]["last_move"]["arrows"]
        assert [(a["from"], a["to"], a["seat"]) for a in arrows] == [(8, 5, 1), (6, 5, 1)]
        assert after["tables"][0]["draw"]["dice"] == [5, 2]
    # One message made for each change, however many pages follow (the first, then the action).
    assert 1 <= len(made) <= 2
    for stream in pages:
        stream.close()


def test_the_hall_s_dark_colours_are_the_live_page_s() -> None:
    def dark(css: str) -> dict[str, str]:
        block = re.search(r"@media \(prefers-color-scheme: dark\) \{\s*:root \{(.*?)\}", css, re.DOTALL)
        assert block is not None
        return dict(re.findall(r"(--[\w-]+):\s*([^;]+);", block.group(1)))

    live = dark((WEB_STATIC / "style.css").read_text(encoding="utf-8"))
    hall = dark((STATIC / "hall.css").read_text(encoding="utf-8"))
    assert len(live) > 15
    assert {k: hall.get(k) for k in live} == live


def test_the_hall_page_draws_each_table_s_board_and_links_the_alerts(fed: tuple[str, HallStore, Fed]) -> None:
    from playwright.sync_api import sync_playwright

    hall, store, given = fed
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path(), args=["--no-sandbox"])
        try:
            context = browser.new_context(viewport={"width": 1366, "height": 768}, accept_downloads=True)
            page = context.new_page()
            errors: list[Any] = []
            page.on("pageerror", lambda error: errors.append(error))
            page.goto(f"{hall}/")
            page.wait_for_function("document.getElementById('live').textContent === 'live'", timeout=10000)
            for name in ("t1", "t2", "t3", "t4"):
                box = page.locator(f"section#table-{name}")
                assert box.locator("svg.bg-board").count() == 1
                assert box.locator("circle.bg-checker").count() == 30
                # Player 1 below the board, player 2 above it, whatever the turn.
                names = box.locator(".player .name").all_text_contents()
                sides = {"t1": ["Bob", "Ann"], "t2": ["Dan", "Cleo"], "t3": ["Finn", "Eve"], "t4": ["Hal", "Gil"]}
                assert names == sides[name]
                assert "2 min ago" in (box.locator(".ago").text_content() or "")
            t2 = page.locator("section#table-t2")
            assert t2.locator("circle.bg-checker[data-point='bar'][data-seat='1']").count() == 1
            assert t2.locator(".bg-cube").get_attribute("data-value") == "2"
            assert page.locator("section#table-t3 .bg-die").count() == 2
            # t1's last move as arrows: Ann's 8/5 6/5, from player 1's side (at the bottom).
            arrows = page.locator("section#table-t1 path.bg-arrow--last")
            moved = arrows.evaluate_all("paths => paths.map(a => [a.dataset.from, a.dataset.to])")
            assert moved == [["8", "5"], ["6", "5"]]
            assert page.locator("section#table-t4 path.bg-arrow--last").count() == 0  # taken back
            # The alerts: t2's illegal move, t3 offline, t4's dispute, each linking to its box.
            links = page.locator("#alerts li a.goto")
            hrefs = [links.nth(i).get_attribute("href") for i in range(links.count())]
            assert hrefs == ["#table-t2", "#table-t3", "#table-t4"]
            dispute = page.locator("#alerts li.dispute")
            assert (dispute.text_content() or "").startswith("t4: dispute: Gil's move 24/14 taken back (undo)")
            assert dispute.locator("a.live").get_attribute("href") == PAGES["t4"]
            assert dispute.locator("a.replay").get_attribute("href") == PAGES["t4"] + "matches"
            t4_store, t4_match = given.stores["t4"]
            ident = Outbox(t4_store, "t4").store_id()
            assert dispute.locator("a.mat").get_attribute("href") == f"/api/tables/t4/matches/{ident}/{t4_match}.mat"
            assert page.locator("section#table-t4 .dispute").text_content() == (
                "dispute: Gil's move 24/14 taken back (undo)"
            )
            # t1's box: its match's files, its live page and replay, all its matches.
            t1 = page.locator("section#table-t1 .links a")
            assert t1.evaluate_all("links => links.map(a => a.className)") == ["live", "replay", "mat", "sgf", "zip"]
            t1_store, t1_match = given.stores["t1"]
            with page.expect_download() as saving:
                page.locator("section#table-t1 .links a.mat").click()
            saved = saving.value
            assert saved.suggested_filename.endswith("_Ann-vs-Bob_5p.mat")
            # The match as the hall holds it: the opening roll and the move (Bob's roll comes later).
            expected = t1_store.export(t1_match, "mat")
            assert Path(saved.path()).read_text(encoding="utf-8").splitlines()[:-1] == expected.splitlines()[:-1]
            with page.expect_download() as saving:
                page.locator("#export").click()
            assert page.locator("#export").text_content() == "Download every match (.zip)"
            archive = zipfile.ZipFile(io.BytesIO(Path(saving.value.path()).read_bytes()))
            assert sorted({name.split("/")[0] for name in archive.namelist()}) == ["t1", "t4"]
            # An action kept: t1's box is made again, at once, the others stay as they were.
            page.evaluate("window.kept = [...document.querySelectorAll('#tables > section')]")
            store.add_action(given.later["t1"])
            page.wait_for_function(
                "document.querySelector('#table-t1 .facts').textContent.includes('3 actions held')", timeout=10000
            )
            same = page.evaluate("[...document.querySelectorAll('#tables > section')].map((b, i) => b === kept[i])")
            assert same == [False, True, True, True]
            assert page.locator("section#table-t1 .bg-die").count() == 2
            page.set_viewport_size({"width": 1366, "height": 400})
            links.nth(0).click()
            page.wait_for_function("location.hash === '#table-t2'")
            top = page.evaluate("document.getElementById('table-t2').getBoundingClientRect().top")
            assert 0 <= top < 50
            page.set_viewport_size({"width": 1366, "height": 768})
            page.evaluate("history.replaceState(null, '', '/'); window.scrollTo(0, 0)")
            page.screenshot(path=str(DOCS / "hall.png"))
            page.screenshot(path="/tmp/hall-desktop.png", full_page=True)
            # A phone: no horizontal scroll, the boards as wide as the screen.
            page.set_viewport_size({"width": 390, "height": 844})
            page.wait_for_timeout(200)
            assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
            width = page.evaluate("document.querySelector('#table-t1 svg').getBoundingClientRect().width")
            assert 300 <= width <= 390
            page.screenshot(path="/tmp/hall-phone.png")
            # A box off the screen: what it says is kept up to date, its board is drawn when seen.
            # (The browser counts a margin of about a screen as on it: a short one puts t4 off.)
            page.set_viewport_size({"width": 390, "height": 400})
            page.evaluate("window.scrollTo(0, 0)")
            page.wait_for_selector("#table-t4[data-offscreen]", state="attached", timeout=10000)
            store.add_action(given.later["t4"])
            page.wait_for_function(
                "document.querySelector('#table-t4 .facts').textContent.includes('4 actions held')", timeout=10000
            )
            assert page.locator("#table-t4 svg").count() == 0 and page.locator("#alerts li.dispute").count() == 0
            page.evaluate("document.getElementById('table-t4').scrollIntoView()")
            board = page.wait_for_selector("#table-t4 svg.bg-board", timeout=10000)
            assert board is not None and board.get_attribute("data-gnubgid") == given.later["t4"]["gnubgid_after"]
            moved = page.locator("#table-t4 path.bg-arrow--last").evaluate_all("paths => paths.map(a => a.dataset.to)")
            assert moved == ["18", "9"]
            assert errors == []
        finally:
            browser.close()


def test_the_hall_page_is_dark_when_the_system_is(hall: str) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path(), args=["--no-sandbox"])
        try:
            looks = {}
            for scheme in ("light", "dark"):
                page = browser.new_page(viewport={"width": 1366, "height": 768}, color_scheme=scheme)
                page.goto(f"{hall}/")
                page.wait_for_function("document.getElementById('live').textContent === 'live'", timeout=10000)
                looks[scheme] = page.evaluate(
                    """() => ({
                        page: getComputedStyle(document.body).backgroundColor,
                        box: getComputedStyle(document.querySelector('section.table')).backgroundColor,
                        field: getComputedStyle(document.querySelector('#table-t1 .bg-field')).fill,
                        checker: getComputedStyle(document.querySelector('#table-t1 .bg-checker--p1')).fill,
                        swatch: getComputedStyle(document.querySelector('#table-t1 .swatch--p2')).backgroundImage,
                    })"""
                )
                if scheme == "dark":
                    page.screenshot(path="/tmp/hall-dark.png")
                page.close()
        finally:
            browser.close()
    # The live page's colours (style.css), light and dark.
    assert looks["light"]["field"] == "rgb(232, 220, 195)" and looks["dark"]["field"] == "rgb(43, 38, 32)"
    assert looks["dark"]["page"] == "rgb(18, 18, 18)" and looks["dark"]["box"] == "rgb(30, 30, 30)"
    assert looks["dark"]["checker"] == "rgb(233, 228, 218)"
    # Player 2's near-black swatch lit like a checker on the near-black page, as on the live page.
    assert looks["dark"]["swatch"].startswith("radial-gradient") and looks["light"]["swatch"] == "none"
    assert looks["light"]["page"] == "rgb(244, 241, 234)"
