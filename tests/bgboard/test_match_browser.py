# SPDX-License-Identifier: MIT
"""The match browser (``bgboard serve``'s page, ``/matches``) in a real browser: the replay is
drawn from the seat the live page drew the table from, fits a phone, and opens gnubg's errors
on the decision (the position before it, the dice, the play made and gnubg's best as arrows).

Debian's Chromium, driven headless by Playwright, as in ``test_web_browser.py``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bgboard.config import Config, MatchConfig
from bgboard.controller import Controller
from bgboard.store import MatchStore
from bgboard.table import new_match
from bgboard.web.hub import WebHub, arrows
from bgboard.web.server import Bind, WebServer, bottom_player_of, history_app
from engine.dice import Dice
from engine.match import MatchState, Move, OpeningRoll, Roll
from engine.play import Play
from tests.bgboard.test_web_browser import chromium_path

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("browser")]

NAMES = ("Ann", "Bob")
#: Ann's error: 31 played 24/23 24/21 where gnubg would make her 5-point.
ERROR = {
    "game": 1,
    "move": 1,
    "dice": [3, 1],
    "play": "24/23 24/21",
    "best": "8/5 6/5",
    "equity_lost": 0.123,
    "label": "bad",
}


def _chances(win: float, gammon: float) -> dict[str, float]:
    return {
        "win": win,
        "win_gammon": gammon,
        "win_backgammon": 0.01,
        "lose": round(1 - win, 3),
        "lose_gammon": 0.12,
        "lose_backgammon": 0.005,
    }


def _alternative(
    rank: int, play: str, equity: float, difference: float, win: float, gammon: float, *, made: bool = False
) -> dict[str, Any]:
    return {
        "rank": rank,
        "play": play,
        "equity": equity,
        "difference": difference,
        "chances": _chances(win, gammon),
        "made": made,
    }


#: gnubg's top plays at Ann's 31 (the error: she played its 4th) and Bob's cube decision
#: before his 64, as ``bgboard analyse --json`` keeps them under ``decisions``.
DECISIONS = [
    {
        "game": 1,
        "move": 1,
        "player": 0,
        "kind": "move",
        "dice": [3, 1],
        "play": "24/23 24/21",
        "equity_lost": 0.123,
        "label": "bad",
        "alternatives": [
            _alternative(1, "8/5 6/5", 0.162, 0.0, 0.551, 0.174),
            _alternative(2, "24/21 6/5", 0.017, -0.145, 0.508, 0.139),
            _alternative(3, "13/10 6/5", 0.01, -0.152, 0.503, 0.141),
            _alternative(4, "24/23 24/21", 0.039, -0.123, 0.512, 0.13, made=True),
            _alternative(5, "24/23 13/10", -0.002, -0.164, 0.5, 0.131),
        ],
        "cube": None,
    },
    {
        "game": 1,
        "move": 1,
        "player": 1,
        "kind": "move",
        "dice": [6, 4],
        "play": "24/18 13/9",
        "equity_lost": 0.0,
        "label": "",
        "alternatives": [
            _alternative(1, "24/18 13/9", -0.01, 0.0, 0.49, 0.13, made=True),
        ],
        "cube": {
            "no_double": -0.078,
            "double_take": -0.355,
            "double_pass": 1.0,
            "cube": 1,
            "action": "No double, take",
            "played": "no double",
            "best": "no double",
            "equity_lost": 0.0,
            "label": "",
            "chances": _chances(0.47, 0.128),
        },
    },
    {
        "game": 1,
        "move": 2,
        "player": 0,
        "kind": "move",
        "dice": [5, 2],
        "play": "13/8 13/11",
        "equity_lost": 0.021,
        "label": "",
        "alternatives": [
            _alternative(1, "8/3 6/4", 0.05, 0.0, 0.52, 0.14),
            _alternative(2, "13/8 13/11", 0.029, -0.021, 0.51, 0.13, made=True),
        ],
        "cube": None,
    },
]


def _record(store: MatchStore, bottom: int) -> int:
    """A match started as the table starts one, with player ``bottom`` (1 or 2) at the bottom,
    a few moves into its first game, and an analysis with one error kept."""
    config = Config(match=MatchConfig(players=NAMES, length=3, player_at_bottom=bottom))
    match = new_match(store, config)
    store.record(match, OpeningRoll(3, 1), source="camera")
    store.record(match, Move("24/21 24/23", by=0), source="camera")
    store.record(match, Roll(Dice(6, 4), by=1), source="camera")
    store.record(match, Move("24/18 13/9", by=1), source="camera")
    store.record(match, Roll(Dice(5, 2), by=0), source="camera")
    store.record(match, Move("13/8 13/11", by=0), source="camera")
    analysis = {
        "ply": 0,
        "players": [
            {
                "name": "Ann",
                "error_rate": 123.4,
                "rating": "Awful!",
                "luck": 156.6,
                "luck_total": 0.313,
                "errors": [ERROR],
            },
            {"name": "Bob", "error_rate": 0.0, "rating": "Supernatural", "luck": -156.6, "errors": []},
        ],
        "decisions": DECISIONS,
    }
    store.save_analysis(match, analysis, ply=0)
    return match


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path, dict[int, int]]]:
    """A store with one match per bottom player, served as ``bgboard serve`` serves it."""
    path = tmp_path_factory.mktemp("browser") / "matches.sqlite3"
    with MatchStore(path) as store:
        ids = {bottom: _record(store, bottom) for bottom in (1, 2)}
    with WebServer(history_app(path), Bind("127.0.0.1", 0)) as server:
        yield server.url, path, ids


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    path = chromium_path()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=path, args=["--no-sandbox"])
        yield launched
        launched.close()


def _open(browser: Any, url: str, match: int, *, width: int = 1366, height: int = 768) -> Any:
    page = browser.new_page(viewport={"width": width, "height": height})
    page.goto(f"{url}matches?match={match}")
    page.wait_for_selector("#board svg")
    page.wait_for_selector("#analysis:not([hidden]) #errors li")
    return page


def _svg_checkers(page: Any) -> list[tuple[int, str]]:
    """Every checker the page draws: (seat, point), sorted."""
    found = page.evaluate(
        """() => [...document.querySelectorAll('#board svg .bg-checker, #board svg .bg-off-checker')]
             .map(c => [Number(c.dataset.seat), c.dataset.point])"""
    )
    return sorted((seat, str(point)) for seat, point in found)


def _hub_checkers(state: MatchState, bottom_player: int) -> tuple[list[tuple[int, str]], int]:
    """The checkers the live page's hub sends for ``state`` at a table with ``bottom_player``
    (0 or 1) at the bottom, as (seat, point), and the player at seat 1."""
    hub = WebHub(NAMES)
    hub.follow_controller(Controller(state, bottom_player=bottom_player, names=NAMES))
    board = hub.state()["board"]
    out: list[tuple[int, str]] = []
    for index, count in enumerate(board["points"]):
        out += [(1 if count > 0 else 2, str(index + 1))] * abs(count)
    for seat in (1, 2):
        out += [(seat, "bar")] * board["bar"][seat - 1]
        out += [(seat, "off")] * board["off"][seat - 1]
    return sorted(out), board["bottom"]


def test_the_table_keeps_who_sat_at_the_bottom(served: tuple[str, Path, dict[int, int]]) -> None:
    _, path, ids = served
    with MatchStore(path) as store:
        for bottom, match in ids.items():
            assert store.summary(match).tags["PlayerAtBottom"] == str(bottom)
            assert bottom_player_of(store.summary(match).tags) == bottom - 1
    # A match stored without the tag (older stores, the demo) is shown as the default config has it.
    assert bottom_player_of({}) == MatchConfig().bottom_player


@pytest.mark.parametrize("bottom", [1, 2])
def test_the_replay_shows_the_seat_and_colours_the_live_page_showed(
    served: tuple[str, Path, dict[int, int]], browser: Any, bottom: int
) -> None:
    url, path, ids = served
    with MatchStore(path) as store:
        rows = [row for row in store.actions(ids[bottom]) if row.action is not None]
    page = _open(browser, url, ids[bottom])
    assert page.locator("#steps li").count() == len(rows)
    seen_sides = set()
    for n, row in enumerate(rows):
        if n:
            page.locator("#next").click()
        page.wait_for_function(f"() => document.querySelector('#board svg').dataset.step === '{n}'")
        assert page.locator("#board svg").get_attribute("data-view") == "after"
        expected, at_seat_1 = _hub_checkers(
            MatchState.from_gnubg_id(row.gnubgid_after, game_number=row.game), bottom - 1
        )
        assert at_seat_1 == bottom
        assert _svg_checkers(page) == expected, f"step {n}: {row.kind}"
        # The colour follows the seat: the bottom player's checkers are seat 1's (the light ones).
        bottom_checker = page.locator("#board svg .bg-checker[data-point='6']").first
        seen_sides.add(bottom_checker.get_attribute("class"))
    # Seat 1's 6-point holds the bottom player's checkers throughout this opening.
    assert seen_sides == {"bg-checker bg-checker--p1"}
    assert page.locator(f"#facts .fact[data-player='{bottom}']").get_attribute("data-seat") == "1"
    page.close()


def test_the_replay_fits_a_phone_and_its_buttons_show_text(
    served: tuple[str, Path, dict[int, int]], browser: Any
) -> None:
    url, _, ids = served
    page = _open(browser, url, ids[1], width=390, height=844)
    assert page.evaluate("document.scrollingElement.scrollWidth") <= 390
    page.locator("#errors li").first.click()
    page.wait_for_function("() => document.querySelector('#board svg').dataset.view === 'before'")
    assert page.evaluate("document.scrollingElement.scrollWidth") <= 390
    # Nothing spills out of its panel either (a table wider than the panel would).
    spilled = page.evaluate(
        """() => [...document.querySelectorAll('.panel:not([hidden]) *')]
             .filter(e => e.getBoundingClientRect().right > e.closest('.panel').getBoundingClientRect().right + 0.5)
             .map(e => e.id || e.tagName)"""
    )
    assert spilled == []
    for button in ("#first", "#prev", "#next", "#last"):
        text = page.locator(button).inner_text().strip()
        assert any(c.isalpha() for c in text), f"{button} shows {text!r}"
        # Drawn as glyphs with a width, in the button's own font.
        width = page.locator(button).evaluate(
            """b => { const c = document.createElement('canvas').getContext('2d');
                      c.font = getComputedStyle(b).font; return c.measureText(b.innerText).width; }"""
        )
        assert width > 0
        assert page.locator(button).bounding_box()["width"] > 20
    page.close()


def test_an_error_opens_on_the_decision_with_the_dice_and_both_plays_as_arrows(
    served: tuple[str, Path, dict[int, int]], browser: Any
) -> None:
    url, path, ids = served
    with MatchStore(path) as store:
        move = next(row for row in store.actions(ids[2]) if row.kind == "move")
    page = _open(browser, url, ids[2])
    page.locator("#errors li").first.click()
    page.wait_for_function("() => document.querySelector('#board svg').dataset.view === 'before'")
    svg = page.locator("#board svg")
    assert svg.get_attribute("data-gnubgid") == move.gnubgid_before
    assert sorted(page.locator("#board svg .bg-die").evaluate_all("ds => ds.map(d => d.dataset.value)")) == ["1", "3"]
    before = MatchState.from_gnubg_id(move.gnubgid_before, game_number=1)
    expected, _ = _hub_checkers(before, 1)
    assert _svg_checkers(page) == expected
    # Ann sits at the top (seat 2): the arrows are in seat 1's numbering, as the live page draws them.
    made = arrows(Play.parse(ERROR["play"]), 2)
    best = arrows(Play.parse(ERROR["best"]), 2)

    def drawn(kind: str) -> list[tuple[str, str]]:
        found = page.locator(f"#board svg .bg-arrow--{kind}").evaluate_all(
            "as => as.map(a => [a.dataset.from, a.dataset.to])"
        )
        return sorted((str(a), str(b)) for a, b in found)

    assert drawn("last") == sorted((str(a["from"]), str(a["to"])) for a in made)
    assert drawn("hint") == sorted((str(a["from"]), str(a["to"])) for a in best)
    assert drawn("last") and drawn("hint") and drawn("last") != drawn("hint")
    decision = page.locator("#decision").inner_text()
    assert "played 24/23 24/21" in decision and "gnubg's best 8/5 6/5" in decision and "-0.123" in decision
    # The move list's marked move opens on the decision too; "after the move" shows the result.
    page.locator("#view").click()
    page.wait_for_function("() => document.querySelector('#board svg').dataset.view === 'after'")
    assert svg.get_attribute("data-gnubgid") == move.gnubgid_after
    page.locator("#steps li.error").click()
    page.wait_for_function("() => document.querySelector('#board svg').dataset.view === 'before'")
    page.close()


def test_luck_and_errors_per_game_are_shown_as_gnubg_gives_them(
    served: tuple[str, Path, dict[int, int]], browser: Any
) -> None:
    url, _, ids = served
    page = _open(browser, url, ids[1])
    luck = page.locator("#figures tbody td.luck").all_inner_texts()
    assert all(text[:1] in "+-" and text[1:2].isdigit() for text in luck), luck
    assert luck == ["+156.6", "-156.6"]
    assert "luck in mEMG per roll" in page.locator("#units").inner_text()
    assert page.locator("#per-game tbody tr").all_inner_texts() == ["1\t1 (-0.123)\tnone"]
    facts = page.locator("#facts").inner_text()
    assert "Ann" in facts and "pips 167" in facts and "score 0" in facts
    page.close()


def test_a_decision_shows_gnubgs_alternatives_with_the_play_made_highlighted(
    served: tuple[str, Path, dict[int, int]], browser: Any
) -> None:
    url, _, ids = served
    page = _open(browser, url, ids[1])
    page.locator("#steps li.error").click()
    page.wait_for_selector("#decision:not([hidden]) #alternatives tbody tr")
    rows = page.locator("#alternatives tbody tr")
    assert rows.count() == 5
    assert rows.first.locator("td").all_inner_texts() == ["1", "8/5 6/5", "+0.162", "", "55.1", "17.4"]
    heads = page.locator("#alternatives thead th").all_inner_texts()
    assert heads == ["#", "play", "equity", "diff", "win %", "gammon %"]
    made = page.locator("#alternatives tbody tr.made")
    assert made.count() == 1
    assert made.locator("td").all_inner_texts() == ["4", "24/23 24/21", "+0.039", "-0.123", "51.2", "13.0"]
    # Highlighted: the made row's cells are drawn unlike the others.
    colours = rows.evaluate_all("rs => rs.map(r => getComputedStyle(r.cells[0]).backgroundColor)")
    assert colours[3] != colours[0]
    # A cube decision: gnubg's three cubeful equities and its proper action.
    page.locator("#steps li").nth(3).click()  # Bob's 24/18 13/9, after his roll
    page.wait_for_selector("#cube-figures")
    assert "gnubg: No double, take" in page.locator("#cube-figures caption").inner_text()
    figures = page.locator("#cube-figures tbody tr[data-action]").evaluate_all(
        "rs => rs.map(r => [...r.cells].map(c => c.innerText))"
    )
    assert figures == [
        ["No double", "-0.078", ""],
        ["Double, take", "-0.355", "-0.277"],
        ["Double, pass", "+1.000", "+1.078"],
    ]
    assert page.locator("#alternatives tbody tr").count() == 1
    # Not an error, yet analysed: it opens on the decision with the play made as arrows; gnubg's
    # best is the same play here, so no second set is drawn over it.
    page.wait_for_function("() => document.querySelector('#board svg').dataset.view === 'before'")
    assert page.locator("#board svg .bg-arrow--last").count() > 0
    assert page.locator("#board svg .bg-arrow--hint").count() == 0
    # Unmarked but not gnubg's first choice (Ann's 52): both plays as arrows, as for an error.
    page.locator("#steps li").nth(5).click()
    page.wait_for_function("() => document.querySelector('#board svg').dataset.step === '5'")
    assert page.locator("#board svg").get_attribute("data-view") == "before"
    hint = page.locator("#board svg .bg-arrow--hint").evaluate_all("as => as.map(a => [a.dataset.from, a.dataset.to])")
    # Ann sits at the bottom in this match (seat 1).
    assert sorted((str(a), str(b)) for a, b in hint) == sorted(
        (str(a["from"]), str(a["to"])) for a in arrows(Play.parse("8/3 6/4"), 1)
    )
    assert page.locator("#board svg .bg-arrow--last").count() > 0
    # A step gnubg did not analyse (a roll) shows no figures.
    page.locator("#steps li").nth(2).click()
    page.wait_for_function("() => document.querySelector('#board svg').dataset.step === '2'")
    assert page.locator("#decision").is_hidden()
    page.close()


def test_the_alternatives_fit_a_phone(served: tuple[str, Path, dict[int, int]], browser: Any) -> None:
    url, _, ids = served
    page = _open(browser, url, ids[1], width=390, height=844)
    page.locator("#steps li.error").click()
    page.wait_for_selector("#decision:not([hidden]) #alternatives tbody tr.made")
    assert page.evaluate("document.scrollingElement.scrollWidth") <= 390
    spilled = page.evaluate(
        """() => [...document.querySelectorAll('#decision, #decision *')]
             .filter(e => e.getBoundingClientRect().right > 390
                          || (e.tagName === 'TABLE' && e.scrollWidth > e.clientWidth + 1))
             .map(e => e.id || e.tagName)"""
    )
    assert spilled == []
    page.locator("#steps li").nth(3).click()
    page.wait_for_selector("#cube-figures")
    assert page.evaluate("document.scrollingElement.scrollWidth") <= 390
    page.close()
