# SPDX-License-Identifier: MIT
"""The live page's questions and alarms: a please-check for the dice or for a board, an illegal
move drawn as made, a move that is not gnubg's, a correction echoed as recorded, and the sound
or vibration on an illegal move. On the hub, and in Debian's Chromium with Playwright (the
fixtures and the table of :mod:`tests.bgboard.test_web_browser`)."""

from __future__ import annotations

from typing import Any

import pytest
from test_controller import ROLL_31, after, die, reading_of

from bgboard.controller import Controller
from bgboard.events import Event
from bgboard.web.hub import WebHub
from engine.dice import Dice
from engine.match import MatchState, Move, OpeningRoll, Phase, Roll
from engine.play import Play
from engine.position import Position
from tests.bgboard.test_web_browser import Table, _doubtful, _open, _opened, browser

__all__ = ["browser"]  # the Chromium fixture, shared with test_web_browser


def _bobs_roll() -> MatchState:
    """Ann opened 3-1 with 24/21 24/23; Bob (seat 1, the bottom) to roll."""
    return _opened().apply(Move("24/21 24/23"))


def _unclear_dice(table: Table) -> None:
    """Bob's dice read too doubtfully to record (a 6 and a 4, both unsure)."""
    c = table.controller
    dice = (die(6, "right", y=250, confidence=0.4), die(4, "right", y=350, confidence=0.4))
    with table.lock:
        said = table.tell(c.on_reading(reading_of(c.state.position, c.seat(c.state.on_roll or 0), dice=dice), 1.0))
    assert [e.kind for e in said] == ["please-check"] and c.please_check


def _illegal_board(state: MatchState) -> Position:
    """Bob's 5-2 played as 13/8 13/9: nine pips for a seven."""
    mover = list(state.position.mover)
    mover[12] -= 2
    mover[7] += 1
    mover[8] += 1
    return Position(mover, state.position.opponent)


# -- on the hub ---------------------------------------------------------------------------------


def test_a_dice_check_says_what_is_asked_in_the_pages_words() -> None:
    controller = Controller(_bobs_roll(), names=("Ann", "Bob"))
    hub = WebHub(("Ann", "Bob"))
    hub.follow_controller(controller)
    dice = (die(6, "right", confidence=0.4), die(4, "right", y=350, confidence=0.4))
    for event in controller.on_reading(reading_of(controller.state.position, 1, dice=dice), 1.0):
        hub(event)
    check = hub.state()["check"]
    assert check["kind"] == "dice" and check["dice"] == [6, 4]
    assert "console" not in check["question"] and "tap the two faces" in check["question"]
    assert "6-4" in check["question"] and "Done" in check["question"]
    assert check["status"] == "please check the dice (Bob's roll)"


def test_the_illegal_move_is_given_as_made_with_the_nearest_legal_move() -> None:
    state = _bobs_roll().apply(Roll(Dice(5, 2)))
    controller = Controller(state, names=("Ann", "Bob"))
    hub = WebHub(("Ann", "Bob"))
    hub.follow_controller(controller)
    reading = reading_of(_illegal_board(state), 1)
    said = controller.on_reading(reading, 1.0) + controller.on_tick(3.0)
    assert [e.kind for e in said] == ["illegal"]
    assert said[0].fields["read"]["mover"] == list(_illegal_board(state).mover)
    for event in said:
        hub(event)
    illegal = hub.state()["illegal"]
    assert illegal["kind"] == "illegal"
    assert sorted((a["from"], a["to"]) for a in illegal["arrows"]) == [(13, 8), (13, 9)]
    assert illegal["expected"] == said[0].fields["nearest"][0]


def test_a_move_that_is_not_gnubgs_is_not_called_illegal() -> None:
    state = MatchState.new_match(5).apply(OpeningRoll(1, 3))
    controller = Controller(state, gnubg=1, names=("Ann", "gnubg"))
    hub = WebHub(("Ann", "gnubg"))
    hub.follow_controller(controller)
    controller.on_reading(reading_of(state.position, 1, dice=ROLL_31), 0.0)
    for event in controller.on_gnubg_move(state.gnubg_id(), Play.parse("8/5 6/5"), 0.1):
        hub(event)
    wrong = reading_of(after(state, "13/10 6/5"), 1)
    for event in controller.on_reading(wrong, 1.0) + controller.on_tick(2.0):
        hub(event)
    illegal = hub.state()["illegal"]
    assert illegal["kind"] == "not-gnubgs" and illegal["who"] == "gnubg" and illegal["expected"] == "8/5 6/5"
    assert sorted((a["from"], a["to"]) for a in illegal["arrows"]) == [(6, 5), (13, 10)]


def test_a_typed_correction_is_echoed_as_recorded_with_its_hit() -> None:
    state = _opened().apply(Move("13/10 24/23")).apply(Roll(Dice(6, 4)))
    controller = Controller(state, names=("Ann", "Bob"))
    hub = WebHub(("Ann", "Bob"))
    hub.follow_controller(controller)
    said = controller.on_command("correct 6/2 8/2", 1.0)
    for event in said:
        hub(event)
    # The event keeps what was typed (the console's words) and says what was recorded.
    assert said[0].kind == "move" and said[0].fields == {"player": 2, "play": "6/2 8/2", "recorded": "8/2* 6/2"}
    assert hub.state()["last_move"]["recorded"] == "8/2* 6/2"


@pytest.mark.slow
@pytest.mark.xdist_group("browser")
def test_the_page_echoes_a_typed_correction_as_recorded(browser: Any) -> None:
    table = Table(_opened().apply(Move("13/10 24/23")).apply(Roll(Dice(6, 4))))
    try:
        page = _open(browser, table)
        page.locator("#correct-play").fill("6/2 8/2")
        page.locator("#correct-form button").click()
        page.wait_for_selector(".answer--ok")
        assert page.locator("#answer").inner_text() == "Bob played 8/2* 6/2"
        page.wait_for_selector("#banner:not([hidden])")
        assert page.locator("#banner").inner_text() == "Last move: Bob 8/2* 6/2"
        assert page.locator("#moves li").last.inner_text().replace("\n", " ").endswith("Bob 8/2* 6/2")
        assert page.locator(".log-line--move").first.inner_text().endswith("Bob played 8/2* 6/2")
        page.close()
    finally:
        table.close()


def _unclear_opening(controller: Controller) -> list[Event]:
    """At the opening roll, Bob's 5 (in his right-hand half, seat 1) and Ann's 2 (in hers) read
    too doubtfully to record."""
    dice = (die(5, "right", y=250, confidence=0.4), die(2, "left", y=350, confidence=0.4))
    return controller.on_reading(reading_of(Position.STARTING, 1, dice=dice), 1.0)


def test_an_opening_dice_check_gives_the_dice_as_read_bottom_player_first() -> None:
    controller = Controller(MatchState.new_match(5), names=("Ann", "Bob"))
    hub = WebHub(("Ann", "Bob"))
    hub.follow_controller(controller)
    for event in _unclear_opening(controller):
        hub(event)
    check = hub.state()["check"]
    assert check["kind"] == "dice" and check["dice"] == [5, 2] and check["bottom_first"] is True
    assert "read as Bob 5, Ann 2" in check["question"] and "Done" in check["question"]
    # Accepted as read: the command the page's Done sends.
    said = controller.on_command("dice 52", 2.0)
    assert [e.kind for e in said] == ["opening-roll"]
    assert controller.state.on_roll == 1 and controller.state.dice == Dice(5, 2)


# -- in Chromium ----------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.xdist_group("browser")
def test_the_opening_dice_check_accepts_the_dice_as_read(browser: Any) -> None:
    table = Table(MatchState.new_match(5))
    try:
        page = _open(browser, table)
        with table.lock:
            table.tell(_unclear_opening(table.controller))
        page.wait_for_selector("#check[data-kind='dice']:not([hidden])")
        done = page.locator("#check #check-done")
        assert done.is_enabled() and page.locator("#check-note").inner_text() == "read as 5-2"
        done.click()
        page.wait_for_selector(".answer--ok")
        state = table.controller.state
        assert state.phase is Phase.MOVE and state.on_roll == 1 and state.dice == Dice(5, 2)
        page.close()
    finally:
        table.close()


@pytest.mark.slow
@pytest.mark.xdist_group("browser")
@pytest.mark.parametrize("how", ["done", "taps"])
def test_the_dice_check_is_one_panel_the_question_the_faces_and_done(browser: Any, how: str) -> None:
    table = Table(_bobs_roll())
    try:
        page = browser.new_page(viewport={"width": 390, "height": 844})
        page.goto(table.live.page_url)
        page.wait_for_selector("#board svg")
        _unclear_dice(table)
        page.wait_for_selector("#check[data-kind='dice']:not([hidden])")
        # One panel: the question, the six faces and Done; no console, no boards, no other banner.
        assert page.locator("#check .face").count() == 6
        assert page.locator(".face").count() == 6
        assert page.locator("#check .candidate").count() == 0
        question = page.locator("#check-text").inner_text()
        assert "tap the two faces" in question and "console" not in page.locator("#question").inner_text()
        assert page.locator("#banner").is_hidden()
        status = page.locator("#status").inner_text()
        assert status.startswith("please check the dice") and "to roll" not in status
        done = page.locator("#check #check-done")
        assert done.is_visible() and done.is_enabled()
        if how == "done":
            done.click()  # what was read: 6-4
            want = Dice(6, 4)
        else:
            page.locator("#check .face[data-value='5']").click()
            page.locator("#check .face[data-value='3']").click()
            want = Dice(5, 3)
        page.wait_for_selector(".answer--ok")
        assert table.controller.state.phase is Phase.MOVE and table.controller.state.dice == want
        page.wait_for_function("() => document.querySelector('#check').hidden")
        # The faces are back with the referee's controls.
        assert page.locator(".controls .face").count() == 6
        page.close()
    finally:
        table.close()


@pytest.mark.slow
@pytest.mark.xdist_group("browser")
@pytest.mark.parametrize("flip", [False, True])
def test_the_board_check_draws_numbered_candidates_marks_what_differs_and_holds_done(browser: Any, flip: bool) -> None:
    table = Table(_opened())
    try:
        page = _open(browser, table)
        if flip:
            page.locator("#flip").click()
            page.wait_for_selector("#board svg[data-flipped='yes']")
        state = table.controller.state
        seat = table.controller.seat(0)
        with table.lock:
            table.tell(table.controller.on_reading(_doubtful(state, seat, "24/21 24/23", "24/20"), 1.0))
            table.tell(table.controller.on_tick(2.0))
        page.wait_for_selector("#check[data-kind='board']:not([hidden]) .candidate")
        numbers = "svg => [...svg.querySelectorAll('.bg-number')].map(t => t.textContent)"
        main = page.eval_on_selector("#board svg", numbers)
        marked = sorted(
            page.eval_on_selector_all("#board .bg-mark--check", "ms => ms.map(m => Number(m.dataset.point))")
        )
        assert len(marked) == 4
        candidates = page.locator("#check .candidate")
        assert candidates.count() >= 2
        for i in range(candidates.count()):
            svg = candidates.nth(i).locator("svg")
            # Numbered as the big board: the same seat, the same flip.
            assert svg.evaluate(numbers) == main
            assert svg.get_attribute("data-flipped") == ("yes" if flip else "no")
            differs = svg.evaluate("s => [...s.querySelectorAll('.bg-mark--check')].map(m => Number(m.dataset.point))")
            assert differs, "a candidate with nothing marked that differs"
            # The two likeliest differ on the doubtful points: each has them marked.
            if candidates.nth(i).get_attribute("data-play") in ("24/20", "24/23 24/21"):
                assert set(marked) <= set(differs)
        # The banner's words are the panel's: points numbered as on the boards, Done inside.
        assert page.locator("#banner").is_hidden()
        assert all(str(p) in page.locator("#check-text").inner_text() for p in marked)
        assert page.locator("#check #check-done").is_enabled()
        page.locator("#check #check-done").click()
        page.wait_for_selector(".answer--ok")
        assert table.controller.state.position == state.apply(Move("24/21 24/23")).position
        page.close()
    finally:
        table.close()


@pytest.mark.slow
@pytest.mark.xdist_group("browser")
def test_the_illegal_move_is_drawn_red_as_made_and_alarms_only_if_asked(browser: Any) -> None:
    table = Table(_opened())
    try:
        calm = _open(browser, table)
        alarmed = _open(browser, table)
        alarmed.evaluate(
            "() => { window.buzzes = []; navigator.vibrate = (p) => { window.buzzes.push(p); return true; }; }"
        )
        assert not alarmed.locator("#alert-toggle").is_checked()  # off by default
        alarmed.locator("#alert-toggle").check()
        with table.lock:
            table.tell(table.controller.on_command("correct 24/21 24/23", 0.5))
            table.tell(table.controller.on_command("dice 52", 1.0))
        calm.wait_for_selector(".bg-arrow--last")
        state = table.controller.state
        reading = reading_of(_illegal_board(state), table.controller.seat(state.on_roll or 0))
        with table.lock:
            said = table.tell(table.controller.on_reading(reading, 2.0) + table.controller.on_tick(4.0))
        assert [e.kind for e in said] == ["illegal"]
        for page in (calm, alarmed):
            page.wait_for_selector(".bg-arrow--illegal")
            drawn = page.eval_on_selector_all(".bg-arrow--illegal", "as => as.map(a => [a.dataset.from, a.dataset.to])")
            assert sorted(drawn) == [["13", "8"], ["13", "9"]]
            assert page.locator("#board .bg-arrow--last").count() == 0  # the last move's arrows hidden
            banner = page.locator("#banner").inner_text()
            assert (
                banner.startswith("Illegal move:") and f"Nearest legal move: {said[0].fields['nearest'][0]}" in banner
            )
        assert calm.evaluate("() => window.bgAlerts") == 0
        assert alarmed.evaluate("() => window.bgAlerts") == 1
        assert alarmed.evaluate("() => window.buzzes.length") == 1
        alarmed.reload()
        alarmed.wait_for_selector("#board svg")
        assert alarmed.locator("#alert-toggle").is_checked()  # kept on that device
        calm.close()
        alarmed.close()
    finally:
        table.close()


@pytest.mark.slow
@pytest.mark.xdist_group("browser")
def test_against_gnubg_another_legal_move_is_bannered_as_not_gnubgs(browser: Any) -> None:
    state = MatchState.new_match(5).apply(OpeningRoll(1, 3))
    table = Table(state)
    try:
        table.controller = Controller(state, gnubg=1, names=("Ann", "gnubg"))
        table.live.hub.follow_controller(table.controller)
        page = _open(browser, table)
        c = table.controller
        with table.lock:
            c.on_reading(reading_of(state.position, 1, dice=ROLL_31), 0.0)
            table.tell(c.on_gnubg_move(state.gnubg_id(), Play.parse("8/5 6/5"), 0.1))
            table.tell(c.on_reading(reading_of(after(state, "13/10 6/5"), 1), 1.0) + c.on_tick(2.0))
        page.wait_for_selector(".banner--not-gnubgs")
        text = page.locator("#banner").inner_text()
        assert text.startswith("Not gnubg's move: it plays 8/5 6/5") and "Illegal" not in text
        assert page.locator(".bg-arrow--illegal").count() == 2
        page.close()
    finally:
        table.close()
