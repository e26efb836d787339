# SPDX-License-Identifier: MIT
"""The live page in a real browser while the demo's game is played at a rendered table.

Debian's Chromium (``apt install chromium``; ``scripts/setup.sh --test`` installs it) is driven
headless by Playwright's Python package, whose driver ships in its wheel: no browser is
downloaded. Without Chromium or Playwright these tests fail, naming the install, as every test
that needs an outside program does in CI.

The demo's game runs in a thread through the same :class:`~bgboard.sim.simulation.DemoGame` and
:class:`~bgboard.table.Table` as ``bgboard demo``; it pauses after each recorded move and at the
illegal move, while the page is compared with the engine.
"""

from __future__ import annotations

import os
import queue
import shutil
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from bgboard.controller import Controller
from bgboard.events import Event
from bgboard.sim.simulation import DemoGame, demo_record
from bgboard.store import MatchStore
from bgboard.web.server import Bind, LiveWeb, WebServer, history_app
from engine.dice import Dice
from engine.hints import RankedPlay
from engine.match import MatchState, Move, OpeningRoll, Phase
from hardware.presenter import seat_of
from vision.reading import BoardReading

INSTALL = "install it with scripts/setup.sh --test (Debian's chromium, and pip install -e '.[test]' for playwright)"
#: Moves of the demo's game played: the sixth is first played wrong.
MOVES = 7

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("browser")]


def chromium_path() -> str:
    """Debian's Chromium, or ``$BGBOARD_CHROMIUM``; fails the test, naming the install, when missing."""
    path = os.environ.get("BGBOARD_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(path).exists():
        pytest.fail(f"no Chromium at {path}: the live page is tested in it; {INSTALL}")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        pytest.fail(f"Playwright for Python is not installed: {INSTALL}")
    return path


@dataclass
class Director:
    """Runs the demo's game in a thread, pausing it where the test wants to look."""

    live: LiveWeb
    game: DemoGame | None = None
    pauses: queue.Queue[str] = field(default_factory=queue.Queue)
    go_on: threading.Event = field(default_factory=threading.Event)
    done: threading.Event = field(default_factory=threading.Event)
    error: BaseException | None = None
    moves_seen: int = 0
    illegal_seen: bool = False
    stop: threading.Event = field(default_factory=threading.Event)
    pausing: bool = True
    thread: threading.Thread | None = None

    def start(self, *, pausing: bool) -> None:
        """Start the game (once)."""
        if self.thread is None:
            self.pausing = pausing
            self.thread = threading.Thread(target=self.play, daemon=True)
            self.thread.start()

    def played(self) -> None:
        """The game played to its end (played now, without pauses, if no test played it)."""
        self.start(pausing=False)
        assert self.done.wait(300), "the demo's game did not end"
        assert self.error is None, self.error

    def _run(self, command: str) -> list[Event]:
        assert self.game is not None
        return self.game.table.command(command, self.game.film.t)

    def _pause(self, why: str) -> None:
        if not self.pausing:
            return
        self.go_on.clear()
        self.pauses.put(why)
        while not self.go_on.wait(0.05):
            # Changes from the page are run meanwhile, as the demo runs them between frames.
            self.live.inbox.run_pending(self._run)

    def tick(self, t: float) -> None:
        self.live.inbox.run_pending(self._run)
        game = self.game
        assert game is not None
        judgement = game.controller.judgement
        if judgement is not None and judgement.verdict == "illegal" and not self.illegal_seen:
            self.illegal_seen = True
            self._pause("illegal")
        moves = game.store.summary(game.match_id).actions
        if moves != self.moves_seen:
            self.moves_seen = moves
            self._pause("action")

    def play(self) -> None:
        try:
            assert self.game is not None
            self.game.play(MOVES)
        except BaseException as exc:
            self.error = exc
        finally:
            self.done.set()
            self.pauses.put("done")
        # After the game the page's changes are still run, as bgboard demo --web does.
        while not self.stop.is_set():
            self.live.inbox.run_pending(self._run, wait=0.05)


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Director, MatchStore]]:
    folder = tmp_path_factory.mktemp("web")
    store = MatchStore(folder / "demo.sqlite3")
    record = demo_record()
    live = LiveWeb.start(Bind("127.0.0.1", 0), (record.players[0], record.players[1]), store_path=store.path)
    director = Director(live)
    director.game = DemoGame(record, 0, store=store, tick=director.tick)
    live.follow(director.game.table)
    try:
        yield director, store
    finally:
        director.stop.set()
        director.go_on.set()
        live.close()
        store.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    path = chromium_path()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        # --no-sandbox: CI runs the tests as root, where Chromium's sandbox refuses to start.
        launched = p.chromium.launch(executable_path=path, args=["--no-sandbox"])
        yield launched
        launched.close()


def _page_board(page: Any) -> dict[str, Any]:
    """What the page's SVG shows: checkers per point (signed as the engine's), bar, off, gnubgid."""
    return page.evaluate(
        """() => {
          const svg = document.querySelector('#board svg');
          const points = Array(24).fill(0), bar = [0, 0], off = [0, 0];
          for (const c of svg.querySelectorAll('.bg-checker, .bg-off-checker')) {
            const seat = Number(c.dataset.seat), where = c.dataset.point;
            if (where === 'bar') bar[seat - 1]++;
            else if (where === 'off') off[seat - 1]++;
            else points[Number(where) - 1] += seat === 1 ? 1 : -1;
          }
          return {points, bar, off, gnubgid: svg.dataset.gnubgid};
        }"""
    )


def _engine_board(director: Director) -> dict[str, Any]:
    assert director.game is not None
    controller = director.game.controller
    state = controller.state
    seat = 1 if state.on_roll is None else seat_of(state.on_roll, controller.bottom_player)
    points, bar, off = state.position.to_absolute(seat)
    return {"points": points, "bar": list(bar), "off": list(off), "gnubgid": state.gnubg_id()}


def test_the_page_follows_the_game_marks_the_illegal_move_and_takes_corrections_only_with_the_token(
    table: tuple[Director, MatchStore], browser: Any
) -> None:
    director, store = table
    page = browser.new_page(viewport={"width": 412, "height": 915})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(director.live.server.url)
    page.wait_for_selector("#board svg")
    assert director.thread is None, "the game was played before the page could watch it (tests out of order)"
    director.start(pausing=True)

    # Given the game being played, when it pauses after each recorded action, then the page's
    # board is the engine's, checker for checker.
    compared = 0
    while True:
        why = director.pauses.get(timeout=120)
        if why == "done":
            break
        engine = _engine_board(director)
        page.wait_for_function(
            "id => document.querySelector('#board svg').dataset.gnubgid === id", arg=engine["gnubgid"], timeout=10_000
        )
        shown = _page_board(page)
        assert shown == engine, f"the page shows {shown}, the engine {engine}"
        assert sum(abs(n) for n in shown["points"]) + sum(shown["bar"]) + sum(shown["off"]) == 30
        compared += 1
        if why == "illegal":
            # The illegal move: its points red, its reason in words.
            assert director.game is not None
            judgement = director.game.controller.judgement
            assert judgement is not None
            marks = page.eval_on_selector_all(".bg-mark--illegal", "ms => ms.map(m => m.dataset.point)")
            seat = seat_of(director.game.controller.state.on_roll or 0, director.game.controller.bottom_player)
            wanted = {str(p if seat == 1 else 25 - p) if 0 < p < 25 else ("bar" if p == 25 else "off")
                      for p in judgement.marks}  # fmt: skip
            assert set(marks) == wanted and marks
            banner = page.locator("#banner")
            assert banner.is_visible()
            assert judgement.reasons[0] in banner.inner_text()
            colour = banner.evaluate("b => getComputedStyle(b).backgroundColor")
            assert colour == "rgb(209, 26, 26)"
            fill = page.eval_on_selector(".bg-mark--illegal", "m => getComputedStyle(m).fill")
            assert fill == "rgb(209, 26, 26)"
            log = page.locator(".log-line--illegal").first.inner_text()
            assert "illegal move" in log
        director.go_on.set()
    assert director.error is None, director.error
    assert director.illegal_seen and compared >= 2 * MOVES

    # A change without the token: 401, and nothing changes in the store or on the board.
    assert director.game is not None
    match = director.game.match_id
    before = store.actions(match, all_rows=True)
    answer = page.evaluate(
        """async () => {
          const r = await fetch('/api/correct', {method: 'POST', headers: {'Content-Type': 'application/json'},
                                                 body: JSON.stringify({play: '13/10 6/5'})});
          return [r.status, await r.text()];
        }"""
    )
    assert answer[0] == 401 and "token" in answer[1]
    page.locator("#correct-play").fill("13/10 6/5")
    page.locator("#correct-form button").click()
    page.wait_for_selector(".answer--refused")
    assert "token" in page.locator("#answer").inner_text()
    assert store.actions(match, all_rows=True) == before

    # With the token (kept from the page's own field): the last move, corrected to itself, is
    # recorded as a correction, and the page's log says so.
    last = [e for e in director.live.hub.events() if e.get("action") == "Move"][-1]
    page.locator("#token").fill(director.live.token)
    page.locator("#token-form button").click()
    page.locator("#correct-play").fill(last["play"])
    page.locator("#correct-form button").click()
    page.wait_for_selector(".answer--ok")
    after = store.actions(match, all_rows=True)
    assert len(after) == len(before) + 2  # the undo row and the move again
    assert after[-1].source == "correction" and str(after[-1].action.play) == last["play"]  # type: ignore[union-attr]
    page.wait_for_selector(".log-line--correction")
    assert errors == []
    page.close()


def test_a_page_opened_late_gets_the_whole_state_and_the_log(table: tuple[Director, MatchStore], browser: Any) -> None:
    director, _ = table
    director.played()
    page = browser.new_page()
    page.goto(director.live.server.url)
    page.wait_for_selector("#board svg")
    assert _page_board(page) == _engine_board(director)
    page.wait_for_function(
        "n => document.querySelectorAll('#log li').length === n", arg=len(director.live.hub.events())
    )
    assert page.locator("#connection").inner_text() == "live"
    # What the camera saw last: the field, warped straight, with the reading drawn.
    page.locator("#camera-panel summary").click()
    page.wait_for_function("() => document.querySelector('#camera').naturalWidth > 0")
    assert page.locator("#camera").evaluate("i => [i.naturalWidth, i.naturalHeight]") == [600, 500]
    page.close()


def test_the_match_browser_replays_the_game_move_by_move(table: tuple[Director, MatchStore], browser: Any) -> None:
    director, store = table
    director.played()
    assert director.game is not None
    page = browser.new_page()
    page.goto(director.live.server.url + "matches")
    page.locator("table.matches button").first.click()
    page.wait_for_selector("#board svg")
    steps = page.locator("#steps li").count()
    assert steps == store.summary(director.game.match_id).actions
    page.locator("#last").click()
    page.wait_for_function("n => document.querySelector('#board svg').dataset.step === String(n - 1)", arg=steps)
    assert page.locator("#board svg").get_attribute("data-gnubgid") == store.state(director.game.match_id).gnubg_id()
    # Every recorded move keeps the still frame it was judged on: the referee's evidence.
    page.locator("#steps li", has_text="move").first.click()
    page.wait_for_function("() => document.querySelector('#frame').naturalWidth > 0")
    assert page.locator("#evidence").is_visible()
    assert page.locator("#frame").evaluate("i => i.naturalWidth") == 960
    framed = store.framed_actions(director.game.match_id)
    moves = [a for a in store.actions(director.game.match_id) if a.kind == "move"]
    assert {a.id for a in moves} <= framed
    href = page.locator("a[href$='format=mat']").first.get_attribute("href")
    assert href is not None
    mat = page.evaluate("async h => (await fetch(h)).text()", href)
    assert "3 point match" in mat
    page.close()


# -- the players' controls, on a controller told what the board shows --------------------------


class Table:
    """A controller whose events go to a live page, with the page's changes run in a thread of
    its own (as the demo and the referee run them); ``tell`` feeds it from the test, in turn."""

    def __init__(self, state: MatchState, *, teach: bool = False) -> None:
        self.controller = Controller(state, names=("Ann", "Bob"), teach=teach)
        self.live = LiveWeb.start(Bind("127.0.0.1", 0), ("Ann", "Bob"))
        self.live.hub.follow_controller(self.controller)
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def tell(self, events: list[Event]) -> list[Event]:
        for event in events:
            self.live.hub(event)
        return events

    def _run(self, command: str) -> list[Event]:
        with self.lock:
            return self.tell(self.controller.on_command(command, 50.0))

    def _serve(self) -> None:
        while not self.stop.is_set():
            self.live.inbox.run_pending(self._run, wait=0.05)

    def close(self) -> None:
        self.stop.set()
        self.thread.join(2)
        self.live.close()


def _opened() -> MatchState:
    """Ann won the opening roll with 3-1 (Bob sits at the bottom, seat 1, as the default has it)."""
    return MatchState.new_match(5).apply(OpeningRoll(3, 1))


def _open(browser: Any, table: Table) -> Any:
    page = browser.new_page(viewport={"width": 412, "height": 915})
    # The QR code's link: the token after "#", kept by the page.
    page.goto(table.live.page_url)
    page.wait_for_selector("#board svg")
    return page


def _doubtful(state: MatchState, seat: int, shown: str, other: str) -> BoardReading:
    """A reading of the board after ``shown``, unsure on every point where ``other`` differs."""
    a, bar, off = state.apply(Move(shown)).position.swap().to_absolute(seat)
    b, _, _ = state.apply(Move(other)).position.swap().to_absolute(seat)
    confidence = [0.5 if a[i] != b[i] else 0.99 for i in range(24)]
    alternatives = [(b[i], 0.45) if a[i] != b[i] else (a[i] + 1, 0.005) for i in range(24)]
    return BoardReading(
        points=tuple(a),
        bar=bar,
        off=off,
        dice=(),
        cube=None,
        confidence=0.9,
        point_confidence=tuple(confidence),
        alternatives=tuple(alternatives),
    )


def test_please_check_offers_the_candidate_boards_and_a_tap_records_one(browser: Any) -> None:
    table = Table(_opened())
    try:
        page = _open(browser, table)
        state = table.controller.state
        seat = table.controller.seat(0)
        with table.lock:
            table.tell(table.controller.on_reading(_doubtful(state, seat, "24/21 24/23", "24/20"), 1.0))
            said = table.tell(table.controller.on_tick(2.0))
        assert [e.kind for e in said] == ["please-check"]
        page.wait_for_selector("#check:not([hidden]) .candidate")
        labels = page.locator(".candidate span").all_inner_texts()
        assert "24/20" in labels and "24/23 24/21" in labels
        assert page.locator(".candidate svg").count() == len(labels)
        assert page.locator("#board .bg-mark--check").count() == 4  # the four doubtful points
        assert "Please check" in page.locator("#check").inner_text()
        page.locator(".candidate", has_text="24/20").click()
        page.wait_for_selector(".answer--ok")
        assert table.controller.state.position == state.apply(Move("24/20")).position
        page.wait_for_function("() => document.querySelector('#check').hidden")
        assert page.locator(".log-line--move").first.inner_text().endswith("Ann played 24/20")
        page.close()
    finally:
        table.close()


def test_teach_mode_draws_the_hint_as_arrows_and_says_the_moves_label(browser: Any) -> None:
    table = Table(_opened(), teach=True)
    try:
        page = _open(browser, table)
        state = table.controller.state
        best, worse = "13/10 24/23", "24/20"
        ranked = []
        for text, equity in ((best, 0.01), (worse, -0.12)):
            after = state.apply(Move(text)).position.swap()
            play = state.legal_plays().play_for(after)
            assert play is not None
            ranked.append(RankedPlay(play, after, equity, round(0.01 - equity, 3), ply=0))
        with table.lock:
            table.tell(table.controller.on_hint(state.gnubg_id(), ranked, 1.0))
        page.wait_for_selector(".bg-arrow--hint")
        assert page.locator(".bg-arrow--hint").count() == 2  # 13/10 and 24/23: two checkers
        assert page.locator("#hint-text").inner_text() == f"Best play: {ranked[0].play}"
        assert page.locator("#hint-plays li").count() == 2
        assert "(-0.130)" in page.locator("#hint-plays li").nth(1).inner_text()
        # The worse play is made: its label and the equity lost are said.
        page.locator("#correct-play").fill(worse)
        page.locator("#correct-form button").click()
        page.wait_for_function("() => document.querySelector('#feedback-text').textContent.includes('-0.130')")
        assert "bad" in page.locator("#feedback-text").inner_text()
        # Teach mode off from the page (with the token): no more hints.
        assert page.locator("#teach-toggle").inner_text() == "Teach: on"
        page.locator("#teach-toggle").click()
        page.wait_for_function("() => document.querySelector('#teach-toggle').textContent === 'Teach: off'")
        assert table.controller.teach is False
        page.close()
    finally:
        table.close()


def test_dice_are_entered_by_tapping_two_faces_and_undo_takes_a_move_back(browser: Any) -> None:
    table = Table(_opened())
    try:
        page = _open(browser, table)
        with table.lock:
            table.tell(table.controller.on_command("correct 24/21 24/23", 1.0))
        assert table.controller.state.phase is Phase.ROLL
        page.locator(".face[data-value='5']").click()
        page.locator(".face[data-value='3']").click()
        page.wait_for_selector(".answer--ok")
        assert table.controller.state.dice == Dice(5, 3)
        page.wait_for_function("() => document.querySelectorAll('.bg-die').length === 2")
        assert page.locator(".bg-die").evaluate_all("ds => ds.map(d => d.dataset.value)") == ["5", "3"]
        # Undo asks once: the first tap only arms it, the second takes the roll back.
        page.locator("#undo").click()
        page.wait_for_function("() => document.querySelector('#undo').textContent === 'Undo: sure?'")
        page.wait_for_timeout(300)
        assert table.controller.state.dice == Dice(5, 3)
        page.locator("#undo").click()
        page.wait_for_function("() => document.querySelectorAll('.bg-die').length === 0")
        assert table.controller.state.phase is Phase.ROLL and table.controller.state.dice is None
        page.close()
    finally:
        table.close()


def test_the_match_browser_shows_gnubgs_analysis(tmp_path: Path, browser: Any) -> None:
    """A stored match with an analysis kept: the figures per player, and a click on an error
    opens the move it was made with."""
    store_path = tmp_path / "analysed.sqlite3"
    with MatchStore(store_path) as store:
        match = store.start_match(("Ann", "Bob"), 3)
        store.record(match, OpeningRoll(3, 1), source="camera")
        store.record(match, Move("24/21 24/23", by=0), source="camera")
        analysis = {
            "ply": 0,
            "players": [
                {
                    "name": "Ann",
                    "error_rate": 123.4,
                    "rating": "Awful!",
                    "luck": 0.05,
                    "errors": [
                        {
                            "game": 1,
                            "move": 1,
                            "dice": [3, 1],
                            "play": "24/23 24/21",
                            "best": "8/5 6/5",
                            "equity_lost": 0.123,
                            "label": "bad",
                        }
                    ],
                },
                {"name": "Bob", "error_rate": 0.0, "rating": "Supernatural", "luck": -0.05, "errors": []},
            ],
        }
        store.save_analysis(match, analysis, ply=0)
    with WebServer(history_app(store_path), Bind("127.0.0.1", 0)) as server:
        page = browser.new_page()
        page.goto(f"{server.url}matches?match={match}")
        page.wait_for_selector("#analysis:not([hidden]) #errors li")
        rows = page.locator("#figures tbody tr").all_inner_texts()
        assert rows[0].split("\t") == ["Ann", "123.4", "Awful!", "+0.1"]
        error = page.locator("#errors li").first
        assert "31 played 24/23 24/21, best 8/5 6/5 (-0.123, bad)" in error.inner_text()
        marked = page.locator("#steps li.error")
        assert marked.count() == 1 and "bad, -0.123" in marked.inner_text()
        error.click()
        page.wait_for_function("() => document.querySelector('#board svg').dataset.step === '1'")
        page.close()


# -- the page's layout and the board's geometry --------------------------------------------------


def _played(table: Table) -> None:
    """Ann's opening 3-1 played: a last move to show, Bob to roll."""
    with table.lock:
        table.tell(table.controller.on_command("correct 24/21 24/23", 1.0))


def _box(page: Any, selector: str) -> dict[str, float]:
    box = page.locator(selector).first.evaluate(
        "e => { const r = e.getBoundingClientRect(); "
        "return {left: r.left, right: r.right, top: r.top, bottom: r.bottom}; }"
    )
    return dict(box)


def test_on_a_desktop_the_panel_is_beside_the_board_and_the_question_and_controls_need_no_scrolling(
    browser: Any,
) -> None:
    table = Table(_opened())
    try:
        page = browser.new_page(viewport={"width": 1366, "height": 768})
        page.goto(table.live.page_url)
        page.wait_for_selector("#board svg")
        _played(table)
        page.wait_for_selector("#banner:not([hidden])")
        board, side, banner = _box(page, "#board svg"), _box(page, ".live-side"), _box(page, "#banner")
        buttons = _box(page, ".controls .buttons")
        # Beside: the panel starts right of the board, level with it.
        assert side["left"] >= board["right"] - 1 and side["top"] < board["bottom"]
        assert banner["left"] >= board["right"] - 1
        # Within the window as it opens: the whole board, the banner and the referee's buttons.
        for name, box in (("board", board), ("banner", banner), ("buttons", buttons)):
            assert box["top"] >= 0 and box["bottom"] <= 768, f"the {name} is at {box}: out of the window"
        assert page.evaluate("() => scrollY") == 0
        page.close()
    finally:
        table.close()


def test_on_a_phone_the_question_is_right_under_the_board_and_nothing_is_wider_than_the_screen(
    browser: Any,
) -> None:
    table = Table(_opened())
    try:
        page = browser.new_page(viewport={"width": 390, "height": 844})
        page.goto(table.live.page_url)
        page.wait_for_selector("#board svg")
        state = table.controller.state
        seat = table.controller.seat(0)
        with table.lock:
            table.tell(table.controller.on_reading(_doubtful(state, seat, "24/21 24/23", "24/20"), 1.0))
            table.tell(table.controller.on_tick(2.0))
        page.wait_for_selector("#check:not([hidden]) .candidate")
        assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
        board, check = _box(page, "#board svg"), _box(page, "#check")
        controls = _box(page, ".controls")
        # The question (the please-check panel: the question, the boards, Done) follows the
        # board, before anything else.
        assert 0 <= check["top"] - board["bottom"] <= 60, (board, check)
        assert check["bottom"] <= controls["top"]
        assert board["right"] <= 390 and board["left"] >= 0
        # The point numbers are readable: at least 10 CSS pixels.
        sizes = page.eval_on_selector_all(
            "#board .bg-number", "ts => ts.map(t => parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a)"
        )
        assert len(sizes) == 24 and min(sizes) >= 10, sizes
        page.close()
    finally:
        table.close()


#: Boards drawn straight with board.js: checkers on both bars, borne off on both sides, the cube
#: centred and at either owner's end, seen from either seat.
_GEOMETRY = """
([flip, owner]) => {
  const points = Array(24).fill(0);
  points[0] = -2; points[5] = 4; points[12] = 3; points[18] = -4; points[23] = 2; points[11] = -3;
  const state = {
    gnubgid: "x", status: "", board: {points, bar: [2, 1], off: [4, 5], bottom: 2},
    cube: {value: owner ? 4 : 1, owner}, dice: [5, 2], on_roll: 1, turn: 1, doubled: false,
    last_move: null, hint: null, illegal: null, check: null,
  };
  const svg = BG.draw(state, {flip});
  document.body.append(svg);
  svg.style.width = "900px";
  const r = (e) => e.getBoundingClientRect();
  const cube = r(svg.querySelector(".bg-cube rect"));
  const others = [...svg.querySelectorAll(".bg-checker, .bg-off-checker, .bg-bar")];
  const hit = others.filter((e) => {
    const b = r(e);
    return b.left < cube.right && cube.left < b.right && b.top < cube.bottom && cube.top < b.bottom;
  }).map((e) => e.getAttribute("class") + " " + (e.dataset.point || ""));
  const counts = Object.fromEntries(
    [...svg.querySelectorAll(".bg-off-count")].map((t) => [t.dataset.seat, t.textContent]));
  const box = r(svg);
  const result = {hit, counts, cubeLow: (cube.top + cube.bottom) / 2 > (box.top + box.bottom) / 2,
                  cubeMiddle: Math.abs((cube.top + cube.bottom) / 2 - (box.top + box.bottom) / 2) < 2};
  svg.remove();
  return result;
}
"""


@pytest.mark.parametrize("flip", [False, True])
def test_the_cube_has_its_own_place_and_the_borne_off_are_counted(browser: Any, flip: bool) -> None:
    table = Table(_opened())
    try:
        page = _open(browser, table)
        for owner in (None, 1, 2):
            drawn = page.evaluate(_GEOMETRY, [flip, owner])
            assert drawn["hit"] == [], f"the cube (owner {owner}) is drawn over {drawn['hit']}"
            assert drawn["counts"] == {"1": "4", "2": "5"}
            if owner is None:
                assert drawn["cubeMiddle"]
            else:
                # bottom is player 2 (seat 1): his cube at the bottom, unless the board is flipped.
                assert drawn["cubeLow"] == ((owner == 2) != flip)
        page.close()
    finally:
        table.close()


def test_the_board_flips_and_the_page_remembers_it(browser: Any) -> None:
    table = Table(_opened())
    try:
        page = _open(browser, table)

        def corner() -> str:
            # The number written bottom right: 1 from seat 1's side, 1 of seat 2's (24) flipped.
            return str(
                page.eval_on_selector_all(
                    "#board .bg-number",
                    """ts => ts.map(t => [t.getBoundingClientRect(), t]).sort((a, b) =>
                         (b[0].bottom - a[0].bottom) || (b[0].right - a[0].right))[0][1].dataset.point""",
                )
            )

        assert corner() == "1"
        assert page.locator("#player-bottom").inner_text().startswith("Bob")
        page.locator("#flip").click()
        page.wait_for_selector("#board svg[data-flipped='yes']")
        assert corner() == "24"
        assert page.locator("#player-bottom").inner_text().startswith("Ann")
        page.reload()
        page.wait_for_selector("#board svg[data-flipped='yes']")
        assert page.locator("#flip").get_attribute("aria-pressed") == "true"
        page.close()
    finally:
        table.close()


def test_the_cube_and_resignation_buttons_give_the_console_commands(browser: Any) -> None:
    table = Table(_opened())
    try:
        page = _open(browser, table)
        # Teach mode is off: no teach panel.
        assert page.locator("#teach").is_hidden()
        _played(table)
        page.wait_for_selector("button[data-command='double']:not([disabled])")
        assert page.locator("button[data-command='take']").is_disabled()
        page.locator("button[data-command='double']").click()
        page.wait_for_selector("button[data-command='take']:not([disabled])")
        assert table.controller.state.phase is Phase.DOUBLED
        page.locator("button[data-command='take']").click()
        page.wait_for_function("() => document.querySelector('.bg-cube').dataset.value === '2'")
        assert table.controller.state.cube.value == 2
        page.locator("button[data-command='resign gammon']").click()
        page.wait_for_selector("button[data-command='reject']:not([disabled])")
        assert table.controller.state.phase is Phase.RESIGNED
        page.locator("button[data-command='reject']").click()
        page.wait_for_selector("button[data-command='reject'][disabled]")
        assert table.controller.state.phase is Phase.ROLL
        # The numbered move list: Ann's opening move, as recorded (not as typed).
        assert page.locator("#moves li").first.inner_text().replace("\n", " ").startswith("1. Ann 24/23 24/21")
        page.close()
    finally:
        table.close()
