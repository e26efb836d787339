# SPDX-License-Identifier: MIT
"""Choosing among the boards the rules allow, from a reading's per-point confidences."""

from __future__ import annotations

import math

import pytest

from bgboard.explain import CLEAR, HINT_PRIOR, explain, raw_board, reading_position
from engine.dice import Dice
from engine.match import MatchState, Move, OpeningRoll
from engine.position import Position
from vision.reading import BoardReading

SOME = Position.from_points({1: 2, 5: 3, 20: 1, 25: 1}, {6: 4, 12: 2, 23: 1, 25: 1})


def reading(position: Position, seat: int, doubt: dict[int, tuple[float, int, float]] | None = None) -> BoardReading:
    points, bar, off = position.to_absolute(seat)
    confidence = [0.99] * 24
    alternatives = [(n + 1, 0.005) for n in points]
    for index, (c, runner, p) in (doubt or {}).items():
        confidence[index] = c
        alternatives[index] = (runner, p)
    return BoardReading(tuple(points), bar, off, point_confidence=tuple(confidence), alternatives=tuple(alternatives))


@pytest.mark.parametrize("seat", [1, 2])
def test_reading_converts_back_to_the_movers_view(seat: int) -> None:
    r = reading(SOME, seat)
    assert reading_position(r, seat) == SOME
    raw = raw_board(r, seat)
    assert (raw.mover, raw.opponent) == (SOME[0], SOME[1])
    assert raw.off == SOME.off()


def test_seat_two_sees_the_board_turned() -> None:
    points, bar, _ = SOME.to_absolute(2)
    # The mover's 1-point is player 1's 24-point, his checkers negative.
    assert points[23] == -2 and points[0] == 0 and bar == (1, 1)


def test_a_reading_with_too_many_checkers_is_not_a_position() -> None:
    r = BoardReading((16,) + (0,) * 23, (0, 0), (0, 15))
    assert reading_position(r, 1) is None
    assert raw_board(r, 1).count_problems()


@pytest.fixture
def opened() -> MatchState:
    return MatchState.new_match(5).apply(OpeningRoll(1, 3))


def _after(state: MatchState, play: str) -> Position:
    return state.apply(Move(play)).position.swap()


def test_a_clear_legal_result(opened: MatchState) -> None:
    board = _after(opened, "8/5 6/5")
    e = explain(opened.position, Dice(3, 1), reading(board, 1), 1)
    assert e.clear and e.best.kind == "legal" and str(e.best.play) == "8/5 6/5"
    assert e.best.position == board and e.share > 0.99


def test_before_and_partial_are_candidates(opened: MatchState) -> None:
    e = explain(opened.position, Dice(3, 1), reading(opened.position, 1), 1)
    assert e.clear and e.best.kind == "before"
    half = Position.from_points({6: 5, 8: 2, 5: 1, 13: 5, 24: 2}, {6: 5, 8: 3, 13: 5, 24: 2})
    e = explain(opened.position, Dice(3, 1), reading(half, 1), 1)
    assert e.clear and e.best.kind == "partial"


def test_an_illegal_board_read_confidently_stays_as_read(opened: MatchState) -> None:
    wrong = Position.from_points({6: 5, 7: 1, 8: 3, 13: 4, 24: 2}, {6: 5, 8: 3, 13: 5, 24: 2})
    e = explain(opened.position, Dice(3, 1), reading(wrong, 1), 1)
    assert e.clear and e.best.kind == "read" and e.best.position == wrong


def test_a_misread_point_is_explained_by_the_legal_result(opened: MatchState) -> None:
    board = _after(opened, "8/5 6/5")
    points, _, _ = board.to_absolute(1)
    # The reader saw 3 on the 5-point, barely preferring it to the 2 that is there.
    doubt = {4: (0.4, points[4], 0.38)}
    r = reading(board, 1, doubt)
    r = BoardReading(
        tuple(3 if i == 4 else n for i, n in enumerate(r.points)),
        r.bar,
        r.off,
        point_confidence=r.point_confidence,
        alternatives=r.alternatives,
    )
    e = explain(opened.position, Dice(3, 1), r, 1)
    assert e.clear and e.best.kind == "legal" and str(e.best.play) == "8/5 6/5"


def test_two_legal_results_close_together_are_doubtful(opened: MatchState) -> None:
    a, _, _ = _after(opened, "24/21 24/23").to_absolute(1)
    b, _, _ = _after(opened, "24/20").to_absolute(1)
    doubt = {i: (0.5, b[i], 0.45) for i in range(24) if a[i] != b[i]}
    e = explain(opened.position, Dice(3, 1), reading(_after(opened, "24/21 24/23"), 1, doubt), 1)
    assert not e.clear
    assert e.best.position == _after(opened, "24/21 24/23")
    rival = next(c for c in e.candidates if c.position == _after(opened, "24/20"))
    assert rival.kind == "legal" and e.best.score - rival.score < CLEAR
    assert set(e.doubtful_points()) == {24, 23, 21, 20}


def test_no_legal_play_makes_the_position_before_the_result() -> None:
    # Player on the bar against a closed board: nothing to play.
    before = Position.from_points({25: 1, 6: 14}, {1: 2, 2: 2, 3: 2, 4: 2, 5: 2, 6: 2, 20: 3})
    e = explain(before, Dice(6, 5), reading(before, 1), 1)
    assert e.best.kind == "legal" and e.best.play is not None and not e.best.play


# -- a prior for the hinted play ---------------------------------------------------------------


def _torn(opened: MatchState, p: float, q: float) -> BoardReading:
    """A reading of 24/21 24/23, ``p`` against ``q`` on every point where 24/20 differs."""
    a, _, _ = _after(opened, "24/21 24/23").to_absolute(1)
    b, _, _ = _after(opened, "24/20").to_absolute(1)
    doubt = {i: (p, b[i], q) for i in range(24) if a[i] != b[i]}
    return reading(_after(opened, "24/21 24/23"), 1, doubt)


def test_a_prior_makes_the_hinted_result_the_best_guess_of_a_close_reading(opened: MatchState) -> None:
    hinted = _after(opened, "24/20")
    e = explain(opened.position, Dice(3, 1), _torn(opened, 0.5, 0.45), 1, prior={hinted: HINT_PRIOR})
    assert e.best.position == hinted and not e.clear
    # The score carries the bonus: the reading alone puts it a little behind.
    plain = explain(opened.position, Dice(3, 1), _torn(opened, 0.5, 0.45), 1)
    alone = next(c for c in plain.candidates if c.position == hinted)
    assert e.best.score == pytest.approx(alone.score + HINT_PRIOR)
    assert plain.best.score - alone.score < HINT_PRIOR


def test_a_prior_never_makes_clear_a_result_the_reading_puts_behind(opened: MatchState) -> None:
    # The reading puts 24/20 behind by more than the bonus: it stays behind.
    hinted = _after(opened, "24/20")
    e = explain(opened.position, Dice(3, 1), _torn(opened, 0.7, 0.25), 1, prior={hinted: HINT_PRIOR})
    assert e.best.position == _after(opened, "24/21 24/23") and not e.clear


def test_a_prior_changes_nothing_when_the_reading_alone_is_clear(opened: MatchState) -> None:
    shown = _after(opened, "24/21 24/23")
    hinted = _after(opened, "8/5 6/5")
    plain = explain(opened.position, Dice(3, 1), reading(shown, 1), 1)
    e = explain(opened.position, Dice(3, 1), reading(shown, 1), 1, prior={hinted: HINT_PRIOR})
    assert plain.clear and e == plain


def test_a_prior_settles_a_reading_that_leans_to_the_hinted_result(opened: MatchState) -> None:
    shown = _after(opened, "24/21 24/23")
    plain = explain(opened.position, Dice(3, 1), _torn(opened, 0.7, 0.25), 1)
    assert not plain.clear and plain.best.position == shown
    e = explain(opened.position, Dice(3, 1), _torn(opened, 0.7, 0.25), 1, prior={shown: HINT_PRIOR})
    assert e.clear and e.best.position == shown


@pytest.mark.parametrize("bonus", [-0.1, CLEAR, math.inf, math.nan])
def test_a_prior_is_from_zero_to_below_clear(opened: MatchState, bonus: float) -> None:
    with pytest.raises(ValueError, match="prior"):
        explain(opened.position, Dice(3, 1), reading(opened.position, 1), 1, prior={opened.position: bonus})
