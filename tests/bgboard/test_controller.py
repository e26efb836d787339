# SPDX-License-Identifier: MIT
"""The controller follows a scripted match from readings built from engine positions."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import pytest

from bgboard.controller import Controller
from bgboard.events import Event, store_event
from bgboard.store import KINDS, MatchStore
from engine.cube import Cube
from engine.dice import Dice
from engine.hints import CubeAdvice, RankedPlay
from engine.match import GAMMON, Double, Drop, MatchState, Move, OpeningRoll, Phase, Roll, Take
from engine.position import Position
from hardware import scene as sc
from vision.reading import BoardReading, CubeReading, DieOnBoard

SETTLE = 0.6


def die(value: int, half: str, *, flat: bool = True, y: float = 300.0, confidence: float = 0.98) -> DieOnBoard:
    """A die lying in ``half`` of the board (image x: left half < 480 < right half)."""
    x = 700.0 if half == "right" else 200.0
    return DieOnBoard(value, (x + value, y), flat, half, confidence)


def reading_of(
    position: Position,
    seat: int,
    *,
    dice: Iterable[DieOnBoard] = (),
    cube: tuple[int, int | None] | None = None,
    doubt: Mapping[int, tuple[float, int, float]] | None = None,
) -> BoardReading:
    """A confident reading of ``position`` seen from ``seat``; ``doubt`` maps a point index to
    (confidence, runner-up count, runner-up probability)."""
    points, bar, off = position.to_absolute(seat)
    confidence = [0.99] * 24
    alternatives = [(n + 1 if n >= 0 else n - 1, 0.005) for n in points]
    for index, (c, runner, p) in (doubt or {}).items():
        confidence[index] = c
        alternatives[index] = (runner, p)
    return BoardReading(
        points=tuple(points),
        bar=bar,
        off=off,
        dice=tuple(dice),
        cube=None if cube is None else CubeReading(cube[0], cube[1], 0.95),
        confidence=0.9,
        point_confidence=tuple(confidence),
        alternatives=tuple(alternatives),
    )


def asked(c: Controller) -> list[str]:
    """The kinds of the requests the controller made since the last look."""
    return [request.kind for request in c.take_requests()]


def kinds(events: list[Event]) -> list[str]:
    return [e.kind for e in events]


def after(state: MatchState, play: str) -> Position:
    """The board after ``play``, still seen from the player who moved."""
    return state.apply(Move(play)).position.swap()


def canonical(state: MatchState, play: str) -> str:
    """The engine's way of writing ``play``."""
    return str(state.legal_plays().play_for(after(state, play)))


@pytest.fixture
def opened() -> MatchState:
    """Player 1 (seat 1, the bottom) won the opening roll with 3-1."""
    return MatchState.new_match(5).apply(OpeningRoll(1, 3))


ROLL_31 = (die(3, "right", y=250), die(1, "right", y=350))


# -- the opening roll ---------------------------------------------------------------------------


def test_opening_roll_tie_then_winner() -> None:
    c = Controller(MatchState.new_match(5))
    tie = reading_of(Position.STARTING, 1, dice=(die(3, "right"), die(3, "left")))
    assert c.on_reading(tie, 0.0) == []  # not settled yet
    events = c.on_tick(0.7)
    assert kinds(events) == ["opening-tie"]
    assert events[0].action is None
    assert c.state.phase is Phase.OPENING
    # The same two dice still lying there are not a second tie.
    assert c.on_reading(tie, 1.0) == [] and c.on_tick(2.0) == []
    roll = reading_of(Position.STARTING, 1, dice=(die(5, "right", y=100), die(2, "left", y=500)))
    assert c.on_reading(roll, 3.0) == []
    events = c.on_tick(3.0 + SETTLE)
    assert kinds(events) == ["opening-roll"]
    # Seat 1 (right half) is engine player 1: he rolled the 5 and plays 5-2.
    assert events[0].action == OpeningRoll(2, 5)
    assert events[0].source == "camera"
    assert c.state.on_roll == 1 and c.state.dice == Dice(5, 2)


def test_opening_dice_on_one_side_are_rerolled() -> None:
    c = Controller(MatchState.new_match(5))
    r = reading_of(Position.STARTING, 1, dice=(die(3, "right", y=100), die(5, "right", y=400)))
    events = c.on_reading(r, 0.0) + c.on_tick(1.0)
    assert kinds(events) == ["re-roll"]
    assert c.state.phase is Phase.OPENING and c.please_check


# -- moves ------------------------------------------------------------------------------------


def test_legal_move_accepted_on_done(opened: MatchState) -> None:
    c = Controller(opened)
    board = after(opened, "8/5 6/5")
    assert c.on_reading(reading_of(board, 1, dice=ROLL_31), 10.0) == []
    events = c.on_button("done", 10.1)
    assert kinds(events) == ["move"]
    move = events[0]
    assert isinstance(move.action, Move) and str(move.action.play) == "8/5 6/5"
    assert move.source == "camera" and move.confidence is not None and move.confidence > 0.99
    assert c.state.phase is Phase.ROLL and c.state.on_roll == 0
    assert c.state.position == board.swap()


def test_legal_move_accepted_when_dice_picked_up_after_settle(opened: MatchState) -> None:
    c = Controller(opened)
    board = after(opened, "13/10 6/5")
    assert c.on_reading(reading_of(board, 1, dice=ROLL_31), 10.0) == []
    assert c.on_reading(reading_of(board, 1), 10.2) == []  # dice picked up
    assert c.on_tick(10.5) == []  # the board has not lain still long enough
    events = c.on_tick(10.2 + SETTLE)
    assert kinds(events) == ["move"]
    assert isinstance(events[0].action, Move) and str(events[0].action.play) == "13/10 6/5"
    assert c.on_tick(20.0) == []  # recorded once


def test_partial_move_is_not_an_error(opened: MatchState) -> None:
    c = Controller(opened)
    half_done = Position.from_points({6: 5, 8: 2, 5: 1, 13: 5, 24: 2}, {6: 5, 8: 3, 13: 5, 24: 2})
    assert c.on_reading(reading_of(half_done, 1, dice=ROLL_31), 5.0) == []
    events = c.on_button("done", 5.1)
    assert kinds(events) == ["in-progress"]
    assert "the 1" in events[0].text
    assert events[0].verdict == "partial" and events[0].action is None
    assert c.judgement is None and c.state.phase is Phase.MOVE
    # Finishing it is accepted.
    finished = reading_of(after(opened, "8/5 6/5"), 1, dice=ROLL_31)
    c.on_reading(finished, 6.0)
    assert kinds(c.on_button("done", 6.1)) == ["move"]


def test_illegal_move_flagged_then_put_back_then_legal(opened: MatchState) -> None:
    c = Controller(opened)
    # 13/7: six pips with a 3-1.
    wrong = Position.from_points({6: 5, 7: 1, 8: 3, 13: 4, 24: 2}, {6: 5, 8: 3, 13: 5, 24: 2})
    c.on_reading(reading_of(wrong, 1), 1.0)
    events = c.on_tick(1.0 + SETTLE)
    assert kinds(events) == ["illegal"]
    illegal = events[0]
    assert illegal.verdict == "illegal" and illegal.action is None
    assert set(illegal.fields["marks"]) >= {13, 7}
    assert "3-1" in illegal.text
    assert c.judgement is not None and c.judgement.verdict == "illegal"
    scene = c.scene()
    assert scene["point.13"] == sc.ILLEGAL and scene["point.7"] == sc.ILLEGAL
    assert scene["status"] == sc.ILLEGAL
    assert c.on_tick(5.0) == []  # said once
    # Put back: the flag goes, nothing is recorded.
    events = c.on_reading(reading_of(opened.position, 1), 6.0)
    assert kinds(events) == ["put-back"]
    assert c.judgement is None and c.scene()["status"] == sc.READY
    assert c.on_tick(7.0) == [] and c.state.phase is Phase.MOVE
    # Then a legal result, dice away: recorded.
    c.on_reading(reading_of(after(opened, "24/21 6/5"), 1), 8.0)
    events = c.on_tick(8.0 + SETTLE)
    assert kinds(events) == ["move"]
    assert c.state.on_roll == 0


def test_a_tick_after_motion_does_not_judge_the_board_seen_before_it(opened: MatchState) -> None:
    c = Controller(opened)
    wrong = Position.from_points({6: 5, 7: 1, 8: 3, 13: 4, 24: 2}, {6: 5, 8: 3, 13: 5, 24: 2})
    c.on_reading(reading_of(wrong, 1), 0.0)
    assert kinds(c.on_tick(SETTLE + 0.1)) == ["illegal"]
    # A hand over the board: what lies there afterwards is unknown until it is read again.
    c.on_motion(1.0)
    assert c.on_tick(1.1) == [] and c.on_tick(3.0) == []
    # The same board read again is the verdict already shown, not a second one.
    assert c.on_reading(reading_of(wrong, 1), 3.5) + c.on_tick(3.5 + SETTLE) == []
    assert c.judgement is not None and c.judgement.verdict == "illegal"


def test_doubtful_dice_are_not_recorded_but_asked_for() -> None:
    c = Controller(MatchState.new_match(5))
    shaky = reading_of(Position.STARTING, 1, dice=(die(3, "right", y=100, confidence=0.43), die(2, "left", y=500)))
    events = c.on_reading(shaky, 0.0) + c.on_tick(1.0)
    assert kinds(events) == ["please-check"] and events[0].action is None
    assert c.state.phase is Phase.OPENING and c.please_check
    assert c.on_tick(2.0) == []  # said once
    # The players enter what the dice show: a correction, not the camera's guess.
    events = c.on_command("dice 52", 3.0)
    assert [e.source for e in events if e.action is not None] == ["correction"]
    assert c.state.phase is Phase.MOVE and c.state.dice == Dice(5, 2)


def test_a_mistyped_play_is_refused_and_a_position_id_with_a_slash_is_understood(opened: MatchState) -> None:
    c = Controller(opened)
    events = c.on_command("correct 13/x7 8/7", 1.0)
    assert kinds(events) == ["refused"] and c.state.phase is Phase.MOVE
    # Position IDs are base64: this legal result of the 3-1 holds a "/" and is still an ID.
    result = Position.from_id("4HPwATCwZ/ABMA")
    assert result in opened.legal_plays().positions()
    events = c.on_command("correct 4HPwATCwZ/ABMA", 2.0)
    assert [e.source for e in events if e.action is not None] == ["correction"]
    assert c.state.on_roll == 0


def test_a_word_that_is_no_command_says_which_are(opened: MatchState) -> None:
    c = Controller(opened)
    events = c.on_command("bogus", 1.0)
    assert kinds(events) == ["unknown"] and "unknown command 'bogus': done, undo" in events[0].text
    assert c.state == opened
    # A play typed alone is still a correction.
    events = c.on_command("8/5 6/5", 2.0)
    assert [e.source for e in events if e.action is not None] == ["correction"]


def test_illegal_then_made_legal_without_putting_back(opened: MatchState) -> None:
    c = Controller(opened)
    wrong = Position.from_points({6: 5, 7: 1, 8: 3, 13: 4, 24: 2}, {6: 5, 8: 3, 13: 5, 24: 2})
    c.on_reading(reading_of(wrong, 1, dice=ROLL_31), 1.0)
    assert kinds(c.on_button("done", 1.5)) == ["illegal"]
    events = c.on_reading(reading_of(after(opened, "13/9"), 1, dice=ROLL_31), 3.0)
    assert kinds(events) == ["legal-now"] and c.judgement is None
    assert kinds(c.on_button("done", 3.1)) == ["move"]


def test_log_mode_notes_an_illegal_move_and_goes_on(opened: MatchState) -> None:
    c = Controller(opened, mode="log")
    wrong = Position.from_points({6: 5, 7: 1, 8: 3, 13: 4, 24: 2}, {6: 5, 8: 3, 13: 5, 24: 2})
    c.on_reading(reading_of(wrong, 1, dice=ROLL_31), 1.0)
    events = c.on_button("done", 1.2)
    assert kinds(events) == ["noted", "move"]
    assert events[1].note is not None and "illegal move noted" in events[1].note
    assert c.judgement is None
    assert c.state.phase is Phase.ROLL and c.state.on_roll == 0


# -- rolls ----------------------------------------------------------------------------------------


def test_cocked_die_and_wrong_half_are_rerolled(opened: MatchState) -> None:
    state = opened.apply(Move("8/5 6/5"))  # player 0, seat 2 (top): his right is the "left" half
    c = Controller(state)
    board = state.position
    cocked = reading_of(board, 2, dice=(die(4, "left", flat=False, y=100), die(2, "left", y=400)))
    events = c.on_reading(cocked, 1.0)
    assert kinds(events) == ["re-roll"] and "cocked" in events[0].text
    assert c.on_tick(3.0) == [] and c.state.phase is Phase.ROLL
    assert c.please_check and c.scene()["status"] == sc.CHECK
    wrong_half = reading_of(board, 2, dice=(die(4, "right", y=100), die(2, "right", y=400)))
    events = c.on_reading(wrong_half, 4.0)
    assert kinds(events) == ["re-roll"] and "right" in events[0].text
    assert c.on_tick(6.0) == [] and c.state.phase is Phase.ROLL
    good = reading_of(board, 2, dice=(die(4, "left", y=100), die(2, "left", y=400)))
    assert c.on_reading(good, 7.0) == []
    events = c.on_tick(7.0 + SETTLE)
    assert kinds(events) == ["roll"]
    assert events[0].action == Roll(Dice(4, 2), by=0)
    assert not c.please_check and c.state.phase is Phase.MOVE


def test_last_rolls_dice_still_lying_are_not_a_new_roll(opened: MatchState) -> None:
    c = Controller(opened)
    c.on_reading(reading_of(after(opened, "8/5 6/5"), 1, dice=ROLL_31), 1.0)
    assert kinds(c.on_button("done", 1.1)) == ["move"]
    still = reading_of(c.state.position, 2, dice=ROLL_31)
    assert c.on_reading(still, 2.0) == [] and c.on_tick(5.0) == []
    assert c.state.phase is Phase.ROLL


# -- doubtful readings and corrections -------------------------------------------------------------


def _doubtful(state: MatchState, shown: str, other: str) -> BoardReading:
    """A reading of ``shown`` unsure, on every point that differs, whether it is ``other``."""
    a, _, _ = after(state, shown).to_absolute(1)
    b, _, _ = after(state, other).to_absolute(1)
    doubt = {i: (0.5, b[i], 0.45) for i in range(24) if a[i] != b[i]}
    return reading_of(after(state, shown), 1, doubt=doubt)


def test_doubtful_reading_asks_to_check_then_done_confirms(opened: MatchState) -> None:
    c = Controller(opened)
    c.on_reading(_doubtful(opened, "24/21 24/23", "24/20"), 1.0)
    events = c.on_tick(1.0 + SETTLE)
    assert kinds(events) == ["please-check"]
    check = events[0]
    assert check.verdict == "check" and check.action is None
    assert set(check.fields["points"]) == {24, 23, 21, 20}
    assert check.fields["best"] == canonical(opened, "24/21 24/23")
    assert c.please_check and c.scene()["status"] == sc.CHECK
    assert c.scene()["point.20"] == sc.CHECK
    assert c.state.phase is Phase.MOVE and c.on_tick(9.0) == []
    events = c.on_button("done", 10.0)
    assert kinds(events) == ["move"]
    assert events[0].source == "button" and events[0].note == "confirmed by the players"
    assert isinstance(events[0].action, Move) and str(events[0].action.play) == canonical(opened, "24/21 24/23")
    assert not c.please_check


def test_confident_reading_is_not_doubted(opened: MatchState) -> None:
    c = Controller(opened)
    c.on_reading(reading_of(after(opened, "24/21 24/23"), 1), 1.0)
    assert kinds(c.on_tick(1.0 + SETTLE)) == ["move"]


def test_correction_during_a_check_is_recorded_as_such(opened: MatchState) -> None:
    c = Controller(opened)
    c.on_reading(_doubtful(opened, "24/21 24/23", "24/20"), 1.0)
    assert kinds(c.on_button("done", 1.1)) == ["please-check"]
    events = c.on_command("correct 24/20", 2.0)
    assert kinds(events) == ["move"]
    assert events[0].source == "correction" and events[0].undo == 0
    assert c.state.position == after(opened, "24/20").swap()


def test_correction_after_a_recorded_move_replaces_it(opened: MatchState) -> None:
    c = Controller(opened)
    c.on_reading(reading_of(after(opened, "24/21 24/23"), 1, dice=ROLL_31), 1.0)
    assert kinds(c.on_button("done", 1.1)) == ["move"]
    right = after(opened, "24/20")
    events = c.correct(right, 2.0)
    assert kinds(events) == ["correction"]
    assert events[0].source == "correction" and events[0].undo == 1
    assert isinstance(events[0].action, Move) and str(events[0].action.play) == "24/20"
    assert c.state.position == right.swap() and c.state.on_roll == 0


def test_a_refused_correction_changes_nothing(opened: MatchState) -> None:
    c = Controller(opened)
    events = c.on_command("correct 13/7", 1.0)
    assert kinds(events) == ["refused"]
    assert c.state == opened


def test_dice_given_at_the_keyboard(opened: MatchState) -> None:
    state = opened.apply(Move("8/5 6/5"))
    c = Controller(state)
    events = c.on_command("dice 64", 1.0)
    assert kinds(events) == ["roll"] and events[0].source == "correction"
    assert c.state.dice == Dice(6, 4)


# -- the cube ---------------------------------------------------------------------------------------


@pytest.fixture
def to_roll(opened: MatchState) -> MatchState:
    """Player 0 (seat 2) to roll or double, the cube centred."""
    return opened.apply(Move("8/5 6/5"))


def test_double_and_take_from_buttons(to_roll: MatchState) -> None:
    c = Controller(to_roll)
    events = c.on_button("double", 1.0)
    assert kinds(events) == ["double"] and events[0].action == Double(by=0) and events[0].source == "button"
    assert c.scene()["status"] == sc.READY
    events = c.on_button("take", 2.0)
    assert kinds(events) == ["take"] and events[0].action == Take(by=1)
    assert c.state.cube == Cube(2, 1) and c.state.phase is Phase.ROLL


def test_double_and_drop_from_buttons_ends_the_game(to_roll: MatchState) -> None:
    c = Controller(to_roll)
    c.on_button("double", 1.0)
    events = c.on_button("drop", 2.0)
    assert kinds(events) == ["drop", "game-over"]
    assert events[0].action == Drop(by=1)
    # Players are numbered 1 and 2 in events, as people number them: the engine's 0 is player 1.
    assert events[1].fields == {"score": [1, 0], "winner": 1, "points": 1}
    assert c.state.phase is Phase.GAME_OVER


def test_double_and_take_from_the_cube_moving(to_roll: MatchState) -> None:
    c = Controller(to_roll)
    board = to_roll.position
    assert c.on_reading(reading_of(board, 2, cube=(1, None)), 1.0) == []
    events = c.on_reading(reading_of(board, 2, cube=(2, None)), 2.0)
    assert kinds(events) == ["double"] and events[0].source == "camera"
    assert c.state.phase is Phase.DOUBLED
    # The cube goes to the taker's side: engine player 1 sits at seat 1.
    events = c.on_reading(reading_of(board, 2, cube=(2, 1)), 3.0)
    assert kinds(events) == ["take"]
    assert c.state.cube == Cube(2, 1)


def test_counter_moved_straight_to_the_taker_is_double_and_take(to_roll: MatchState) -> None:
    c = Controller(to_roll)
    board = to_roll.position
    c.on_reading(reading_of(board, 2, cube=(1, None)), 1.0)
    events = c.on_reading(reading_of(board, 2, cube=(2, 1)), 2.0)
    assert kinds(events) == ["double", "take"]
    assert c.state.cube == Cube(2, 1)


def test_offered_cube_put_back_is_a_drop(to_roll: MatchState) -> None:
    c = Controller(to_roll)
    board = to_roll.position
    c.on_reading(reading_of(board, 2, cube=(1, None)), 1.0)
    c.on_reading(reading_of(board, 2, cube=(2, None)), 2.0)
    events = c.on_reading(reading_of(board, 2, cube=(1, None)), 3.0)
    assert kinds(events) == ["drop", "game-over"]


def test_crawford_game_refuses_a_double() -> None:
    state = MatchState(5, score=(4, 2), on_roll=0, phase=Phase.ROLL, crawford=True)
    c = Controller(state)
    events = c.on_button("double", 1.0)
    assert kinds(events) == ["refused"] and "Crawford" in events[0].text
    assert events[0].action is None and c.state == state
    board = state.position
    c.on_reading(reading_of(board, 2, cube=(1, None)), 2.0)
    events = c.on_reading(reading_of(board, 2, cube=(2, None)), 3.0)
    assert kinds(events) == ["refused"] and c.state == state


# -- game and match end ---------------------------------------------------------------------------


def _last_checker(score: tuple[int, int]) -> MatchState:
    """Player 1 to bear off his last checker; player 0 has borne off none (a gammon)."""
    position = Position.from_points({1: 1}, {13: 15})
    return MatchState(5, score=score, on_roll=1, dice=Dice(6, 5), phase=Phase.MOVE, position=position)


def test_gammon_ends_the_game_with_its_points() -> None:
    state = _last_checker((0, 0))
    c = Controller(state)
    c.on_reading(reading_of(after(state, "1/off"), 1, dice=(die(6, "right"), die(5, "right", y=400))), 1.0)
    events = c.on_button("done", 1.1)
    assert kinds(events) == ["move", "game-over"]
    result = c.state.last_result
    assert result is not None and result.kind == GAMMON and result.points == 2
    assert c.state.score == (0, 2) and "gammon" in events[1].text


def test_gammon_wins_the_match() -> None:
    state = _last_checker((1, 3))
    c = Controller(state)
    c.on_reading(reading_of(after(state, "1/off"), 1), 1.0)
    events = c.on_tick(1.0 + SETTLE)
    assert kinds(events) == ["move", "game-over", "match-over"]
    assert c.state.phase is Phase.MATCH_OVER and c.state.winner == 1


def test_undo_after_the_match_asks_before_it_reopens_it() -> None:
    state = _last_checker((1, 3))
    c = Controller(state)
    c.on_reading(reading_of(after(state, "1/off"), 1), 1.0)
    c.on_tick(1.0 + SETTLE)
    assert c.state.phase is Phase.MATCH_OVER
    asked = c.on_button("undo", 5.0)
    assert kinds(asked) == ["refused"] and "undo reopen" in asked[0].text
    assert c.state.phase is Phase.MATCH_OVER
    # The second press reopens it: the last move is taken back.
    again = c.on_button("undo", 6.0)
    assert kinds(again) == ["undo"] and c.state.phase is Phase.MOVE and c.state.score == (1, 3)


def test_undo_reopen_takes_a_finished_match_back_at_once() -> None:
    state = _last_checker((1, 3))
    c = Controller(state)
    c.on_reading(reading_of(after(state, "1/off"), 1), 1.0)
    c.on_tick(1.0 + SETTLE)
    events = c.on_command("undo reopen", 5.0)
    assert kinds(events) == ["undo"] and c.state.phase is Phase.MOVE


def test_next_game_waits_for_the_board_to_be_set_up() -> None:
    state = _last_checker((0, 0))
    c = Controller(state)
    c.on_reading(reading_of(after(state, "1/off"), 1), 1.0)
    c.on_tick(2.0)
    assert c.state.phase is Phase.GAME_OVER
    dice = (die(6, "right", y=100), die(2, "left", y=500))
    messy = BoardReading(points=(0,) * 12 + (-15,) + (0,) * 11, bar=(0, 0), off=(15, 0), dice=dice)
    events = c.on_reading(messy, 3.0) + c.on_tick(4.0)
    assert kinds(events) == ["set-up"] and c.state.phase is Phase.GAME_OVER
    c.on_reading(reading_of(Position.STARTING, 1, dice=dice), 5.0)
    events = c.on_tick(5.0 + SETTLE)
    assert kinds(events) == ["opening-roll"] and c.state.game_number == 2


def test_resignation_from_the_keyboard(to_roll: MatchState) -> None:
    c = Controller(to_roll)
    assert kinds(c.on_command("resign gammon", 1.0)) == ["resign"]
    events = c.on_button("take", 2.0)  # the opponent accepts
    assert kinds(events) == ["accept-resign", "game-over"]
    assert c.state.score == (0, 2)


def test_the_answers_to_a_resignation_are_named_as_the_store_names_them_with_hyphens(
    to_roll: MatchState,
) -> None:
    accepting = Controller(to_roll)
    accepting.on_command("resign", 1.0)
    refusing = Controller(to_roll)
    refusing.on_command("resign", 1.0)
    accepted = accepting.on_button("take", 2.0)[0]
    refused = refusing.on_button("drop", 2.0)[0]
    assert accepted.action is not None and refused.action is not None
    assert accepted.kind == KINDS[type(accepted.action)].replace("_", "-") == "accept-resign"
    assert refused.kind == KINDS[type(refused.action)].replace("_", "-") == "reject-resign"


# -- odds and ends ------------------------------------------------------------------------------------


def test_undo_takes_back_the_last_action(to_roll: MatchState) -> None:
    c = Controller(to_roll)
    c.on_button("double", 1.0)
    assert kinds(c.on_button("undo", 2.0)) == ["undo"]
    assert c.state == to_roll
    assert kinds(c.on_button("undo", 3.0)) == ["refused"]


def test_occluded_readings_are_ignored(opened: MatchState) -> None:
    c = Controller(opened)
    r = reading_of(after(opened, "8/5 6/5"), 1)
    hidden = BoardReading(r.points, r.bar, r.off, occluded=True)
    assert c.on_reading(hidden, 1.0) == [] and c.on_tick(5.0) == []
    assert c.state == opened


def test_event_json() -> None:
    event = Event("roll", "rolled 3-1", {"dice": [3, 1]}, Roll(Dice(3, 1)), "camera", 0.987654)
    assert event.to_json() == {
        "event": "roll",
        "text": "rolled 3-1",
        "dice": [3, 1],
        "action": "Roll",
        "source": "camera",
        "confidence": 0.9877,
        "t": None,
    }
    assert event.at(12.3456).to_json()["t"] == 12.35


def test_bad_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="mode"):
        Controller(MatchState.new_match(1), mode="coach")  # type: ignore[arg-type]


def test_motion_restarts_the_settle_time(opened: MatchState) -> None:
    c = Controller(opened)
    c.on_reading(reading_of(after(opened, "8/5 6/5"), 1), 1.0)
    c.on_motion(1.4)  # a hand over the board
    assert c.on_tick(1.0 + SETTLE) == []
    c.on_reading(reading_of(after(opened, "8/5 6/5"), 1), 2.0)
    assert c.on_tick(2.3) == []
    assert kinds(c.on_tick(2.0 + SETTLE)) == ["move"]


def test_same_illegal_board_again_is_flagged_again(opened: MatchState) -> None:
    c = Controller(opened)
    wrong = reading_of(Position.from_points({6: 5, 7: 1, 8: 3, 13: 4, 24: 2}, {6: 5, 8: 3, 13: 5, 24: 2}), 1)
    c.on_reading(wrong, 1.0)
    assert kinds(c.on_tick(2.0)) == ["illegal"]
    assert kinds(c.on_reading(reading_of(opened.position, 1), 3.0)) == ["put-back"]
    assert c.on_tick(4.0) == []  # nothing moved, dice away: no complaint
    c.on_reading(wrong, 5.0)
    assert kinds(c.on_tick(6.0)) == ["illegal"]


def test_unsure_only_how_far_the_move_has_got_is_not_asked(opened: MatchState) -> None:
    c = Controller(opened)
    # Unsure whether a checker has left the 8-point for the 5-point (8/5): before or part-way.
    board = opened.position
    points, _, _ = board.to_absolute(1)
    doubt = {7: (0.5, points[7] - 1, 0.45), 4: (0.5, 1, 0.45)}
    c.on_reading(reading_of(board, 1, doubt=doubt), 1.0)
    assert c.on_tick(2.0) == []
    assert not c.please_check
    events = c.on_button("done", 2.5)
    assert kinds(events) in (["not-moved"], ["in-progress"])
    assert not c.please_check


def test_events_stored_leave_the_store_where_the_controller_is(opened: MatchState) -> None:
    store = MatchStore(":memory:")
    match = store.start_match(["Alice", "Bob"], 5)
    c = Controller(MatchState.new_match(5))
    events: list[Event] = []

    def feed(new: list[Event]) -> None:
        events.extend(new)
        for event in new:
            store_event(store, match, event)

    feed(c.on_reading(reading_of(Position.STARTING, 1, dice=(die(3, "right"), die(1, "left"))), 0.0))
    feed(c.on_tick(1.0))
    assert c.state.dice == Dice(3, 1) and c.state.on_roll == 1
    feed(c.on_reading(reading_of(after(c.state, "24/21 24/23"), 1, dice=ROLL_31), 2.0))
    feed(c.on_button("done", 2.1))
    feed(c.correct("24/20", 3.0))
    feed(c.on_button("double", 4.0))
    feed(c.on_button("undo", 5.0))
    feed(c.on_button("double", 6.0))
    feed(c.on_button("take", 7.0))
    assert kinds(events) == ["opening-roll", "move", "correction", "double", "undo", "double", "take"]
    assert store.state(match) == c.state
    standing = store.actions(match)
    assert [a.source for a in standing] == ["camera", "correction", "button", "button"]
    assert standing[0].confidence is not None and standing[1].note == "corrected by the players"
    assert c.state.cube == Cube(2, 1)
    store.close()


def test_dice_jitter_between_readings_still_settles(to_roll: MatchState) -> None:
    c = Controller(to_roll)
    board = to_roll.position
    first = (die(4, "left", y=100), die(2, "left", y=400))
    jittered = tuple(DieOnBoard(d.value, (d.center[0] + 2, d.center[1] - 1), True, d.half, 0.97) for d in first)
    assert c.on_reading(reading_of(board, 2, dice=first), 1.0) == []
    assert c.on_reading(reading_of(board, 2, dice=jittered), 1.3) == []
    assert kinds(c.on_reading(reading_of(board, 2, dice=jittered), 1.0 + SETTLE)) == ["roll"]


# -- teach mode: hints from a hand-made ranked list (no gnubg) --------------------------------------


def ranked(state: MatchState, *plays: tuple[str, float], ply: int = 0) -> list[RankedPlay]:
    """A hint engine's answer, best first: each play with its equity."""
    top = plays[0][1]
    out = []
    for text, equity in plays:
        board = after(state, text)
        play = state.legal_plays().play_for(board)
        assert play is not None
        out.append(RankedPlay(play, board, equity, round(top - equity, 3), ply=ply))
    return out


#: 3-1 from the start: the point-making play first; 13/10 6/5 loses 0.052 (doubtful).
HINTS_31 = (("8/5 6/5", 0.150), ("13/10 6/5", 0.098), ("24/21 24/23", 0.010))


def test_teach_mode_asks_for_a_hint_after_the_roll_and_lights_it() -> None:
    c = Controller(MatchState.new_match(5), teach=True)
    events = c.correct(Dice(3, 1), 0.0)  # the bottom player (engine player 1) rolled the 3
    assert kinds(events) == ["opening-roll"]
    state = c.state
    [wanted] = c.take_requests()
    assert wanted.kind == "hint" and c.requests == []
    assert wanted.fields["gnubgid"] == state.gnubg_id() and wanted.fields["dice"] == [3, 1]
    assert wanted.fields["wanted"] == "plays" and wanted.fields["asked"] is False
    # Nothing is lit before the answer comes.
    assert not any(light in (sc.HINT_FROM, sc.HINT_TO) for light in c.scene().values())

    events = c.on_hint(state.gnubg_id(), ranked(state, *HINTS_31), 0.1)
    assert kinds(events) == ["hint"]
    assert events[0].text == "hint: 8/5 6/5 (gnubg 0-ply, equity +0.150)"
    assert events[0].fields == {"play": "8/5 6/5", "equity": 0.150, "ply": 0, "player": 2}
    assert c.hint is not None and str(c.hint.play) == "8/5 6/5"
    # Player 1 sits at seat 1, so his point numbers are the LEDs': from 8 and 6, to 5.
    scene = c.scene()
    assert scene["point.8"] == sc.HINT_FROM and scene["point.6"] == sc.HINT_FROM
    assert scene["point.5"] == sc.HINT_TO
    assert sum(light in (sc.HINT_FROM, sc.HINT_TO) for light in scene.values()) == 3


def test_a_hint_for_the_top_player_lights_his_points_turned(to_roll: MatchState) -> None:
    c = Controller(to_roll, teach=True)
    events = c.correct(Dice(3, 1), 0.0)
    assert kinds(events) == ["roll"] and asked(c) == ["hint"]
    state = c.state
    c.on_hint(state.gnubg_id(), ranked(state, ("8/5 6/5", 0.2)), 0.1)
    # Player 0 sits at seat 2: his 8-point is player 1's 17-point.
    scene = c.scene()
    assert scene["point.17"] == sc.HINT_FROM and scene["point.19"] == sc.HINT_FROM
    assert scene["point.20"] == sc.HINT_TO


def test_a_stale_hint_is_ignored(opened: MatchState) -> None:
    c = Controller(opened, teach=True)
    other = opened.apply(Move("8/5 6/5"))
    assert c.on_hint(other.gnubg_id(), ranked(opened, *HINTS_31), 0.0) == []
    assert c.hint is None
    assert not any(light in (sc.HINT_FROM, sc.HINT_TO) for light in c.scene().values())
    # An answer that comes after the move was recorded is for a state the match has left.
    gnubgid = opened.gnubg_id()
    c.on_reading(reading_of(after(opened, "24/21 24/23"), 1), 1.0)
    assert kinds(c.on_tick(1.0 + SETTLE)) == ["move"]
    assert c.on_hint(gnubgid, ranked(opened, *HINTS_31), 2.0) == []
    assert c.hint is None


def test_the_hint_goes_out_when_the_move_is_recorded(opened: MatchState) -> None:
    c = Controller(opened, teach=True)
    c.on_hint(opened.gnubg_id(), ranked(opened, *HINTS_31), 0.0)
    c.on_reading(reading_of(after(opened, "8/5 6/5"), 1), 1.0)
    assert kinds(c.on_tick(1.0 + SETTLE)) == ["move", "feedback"]
    assert not any(light in (sc.HINT_FROM, sc.HINT_TO) for light in c.scene().values())


def test_feedback_gives_gnubgs_label_and_goes_into_the_note(opened: MatchState) -> None:
    store = MatchStore(":memory:")
    match = store.start_match(["Alice", "Bob"], 5)
    store.record(match, OpeningRoll(1, 3), source="camera")
    c = Controller(opened, teach=True)
    c.on_hint(opened.gnubg_id(), ranked(opened, *HINTS_31), 0.0)
    c.on_reading(reading_of(after(opened, "13/10 6/5"), 1, dice=ROLL_31), 1.0)
    events = c.on_button("done", 1.1)
    assert kinds(events) == ["move", "feedback"]
    move, feedback = events
    assert feedback.text == "13/10 6/5: doubtful, -0.052 against 8/5 6/5"
    assert feedback.fields["skill"] == "doubtful" and feedback.fields["error"] == pytest.approx(0.052)
    assert feedback.fields["best"] == "8/5 6/5" and feedback.action is None
    # The verdict goes with the move into the store.
    assert move.note == "gnubg 0-ply: doubtful, -0.052 against 8/5 6/5"
    for event in events:
        store_event(store, match, event)
    assert store.actions(match)[-1].note == move.note
    store.close()


def test_feedback_on_the_best_play(opened: MatchState) -> None:
    c = Controller(opened, teach=True)
    c.on_hint(opened.gnubg_id(), ranked(opened, *HINTS_31), 0.0)
    events = c.on_command("6/5 8/5", 1.0)  # written another way: compared by the board it leaves
    assert kinds(events) == ["move", "feedback"]
    assert events[1].text == "8/5 6/5: the best play"
    assert events[1].fields["error"] == 0
    # The note the correction already had is kept.
    assert events[0].note == "corrected by the players; gnubg 0-ply: the best play"


def test_feedback_on_a_play_missing_from_a_short_list_says_so(opened: MatchState) -> None:
    c = Controller(opened, teach=True)
    c.on_hint(opened.gnubg_id(), ranked(opened, *HINTS_31[:2]), 0.0)
    events = c.on_command("24/20", 1.0)
    assert kinds(events) == ["move", "feedback"]
    assert events[1].text == "24/20: not among gnubg's 2 ranked plays (its best: 8/5 6/5)"
    assert events[1].fields["error"] is None and events[1].fields["skill"] is None
    assert events[0].note is not None and "not among its 2 ranked plays" in events[0].note


def test_a_correction_of_a_recorded_move_gets_feedback_too(opened: MatchState) -> None:
    c = Controller(opened, teach=True)
    c.on_hint(opened.gnubg_id(), ranked(opened, *HINTS_31), 0.0)
    c.on_reading(reading_of(after(opened, "24/21 24/23"), 1), 1.0)
    events = c.on_tick(1.0 + SETTLE)
    assert kinds(events) == ["move", "feedback"]
    assert events[1].text == "24/23 24/21: very bad, -0.140 against 8/5 6/5"
    events = c.correct("8/5 6/5", 2.0)
    assert kinds(events) == ["correction", "feedback"]
    assert events[0].undo == 1 and events[1].text == "8/5 6/5: the best play"


def test_no_feedback_without_a_hint_or_outside_teach_mode(opened: MatchState) -> None:
    c = Controller(opened)
    c.on_reading(reading_of(after(opened, "8/5 6/5"), 1), 1.0)
    assert kinds(c.on_tick(1.0 + SETTLE)) == ["move"]
    # Outside teach mode a roll asks for nothing.
    assert kinds(c.correct(Dice(6, 5), 2.0)) == ["roll"]


def test_the_hint_button_asks_for_plays_during_a_move(opened: MatchState) -> None:
    c = Controller(opened)  # not teach mode: the button asks anyway
    assert c.on_button("hint", 0.0) == []
    [wanted] = c.take_requests()
    assert wanted.kind == "hint" and wanted.fields["wanted"] == "plays" and wanted.fields["asked"] is True
    assert wanted.fields["gnubgid"] == opened.gnubg_id()
    assert kinds(c.on_command("hint", 0.1)) == [] and asked(c) == ["hint"]


def test_the_hint_button_asks_for_cube_advice_before_a_roll(to_roll: MatchState) -> None:
    c = Controller(to_roll, teach=True)
    assert c.on_button("hint", 0.0) == []
    [request] = c.take_requests()
    assert request.kind == "hint" and request.fields == {
        "gnubgid": to_roll.gnubg_id(),
        "dice": None,
        "phase": "roll or double",
        "wanted": "cube",
        "asked": True,
    }
    advice = CubeAdvice("No double, take", False, True, False, 0.067, -0.228, 1.0)
    events = c.on_cube_hint(to_roll.gnubg_id(), advice, 0.1)
    assert kinds(events) == ["cube-hint"]
    assert events[0].text == "gnubg: no double, take (0-ply)"
    assert events[0].fields["double"] is False and events[0].fields["player"] == 1
    # Stale cube advice is ignored too.
    c.on_button("double", 1.0)
    assert c.on_cube_hint(to_roll.gnubg_id(), advice, 1.1) == []
    # Doubled: the taker's decision, asked the same way.
    assert c.on_button("hint", 1.2) == []
    [wanted] = c.take_requests()
    assert wanted.kind == "hint" and wanted.fields["wanted"] == "cube"


def test_the_hint_button_when_there_is_nothing_to_hint() -> None:
    c = Controller(MatchState.new_match(5), teach=True)
    assert kinds(c.on_button("hint", 0.0)) == ["refused"]
    # The cube is the opponent's: no cube decision, so nothing to ask gnubg.
    state = MatchState.new_match(5).apply(OpeningRoll(1, 3)).apply(Move("8/5 6/5"))
    owned = Controller(state.apply(Double()).apply(Take()))  # player 0 doubled: player 1 owns the cube
    events = owned.on_button("hint", 0.0)
    assert kinds(events) == ["refused"] and "cannot double" in events[0].text


def test_an_undo_back_to_the_move_asks_again_in_teach_mode(opened: MatchState) -> None:
    c = Controller(opened, teach=True)
    c.on_reading(reading_of(after(opened, "8/5 6/5"), 1), 1.0)
    assert kinds(c.on_tick(1.0 + SETTLE)) == ["move"]
    events = c.on_button("undo", 2.0)
    assert kinds(events) == ["undo"]
    [wanted] = c.take_requests()
    assert wanted.kind == "hint" and wanted.fields["gnubgid"] == opened.gnubg_id()
    plain = Controller(opened)
    plain.on_command("8/5 6/5", 1.0)
    assert kinds(plain.on_button("undo", 2.0)) == ["undo"]


def _leaning(state: MatchState, shown: str, other: str, p: float, q: float) -> BoardReading:
    """A reading of ``shown`` with confidence ``p`` on every point that differs from ``other``,
    which gets ``q``."""
    a, _, _ = after(state, shown).to_absolute(1)
    b, _, _ = after(state, other).to_absolute(1)
    doubt = {i: (p, b[i], q) for i in range(24) if a[i] != b[i]}
    return reading_of(after(state, shown), 1, doubt=doubt)


def test_the_hint_is_the_best_guess_of_a_reading_torn_between_it_and_another(opened: MatchState) -> None:
    # The reading leans a little to 24/21 24/23; the hint was 24/20.
    reading = _doubtful(opened, "24/21 24/23", "24/20")
    plain = Controller(opened)
    plain.on_reading(reading, 1.0)
    assert plain.on_button("done", 1.1)[0].fields["best"] == canonical(opened, "24/21 24/23")
    c = Controller(opened, teach=True)
    c.on_hint(opened.gnubg_id(), ranked(opened, ("24/20", 0.1), ("24/21 24/23", 0.0)), 0.0)
    c.on_reading(reading, 1.0)
    events = c.on_button("done", 1.1)
    assert kinds(events) == ["please-check"]  # still asked: the reading alone is not clear either way
    assert events[0].fields["best"] == "24/20"
    events = c.on_button("done", 1.2)
    assert kinds(events) == ["move", "feedback"]
    assert isinstance(events[0].action, Move) and str(events[0].action.play) == "24/20"


def test_the_hint_settles_a_reading_that_leans_to_it(opened: MatchState) -> None:
    # 2.8:1 on each point that differs from 24/20; the runner-up is a half-played 24/21 24/23
    # (two of those points), about 8:1 behind: short of 20:1, and 32:1 with the hint's 4:1.
    reading = _leaning(opened, "24/21 24/23", "24/20", 0.7, 0.25)
    plain = Controller(opened)
    plain.on_reading(reading, 1.0)
    assert kinds(plain.on_button("done", 1.1)) == ["please-check"]
    hinted = Controller(opened, teach=True)
    hinted.on_hint(opened.gnubg_id(), ranked(opened, ("24/21 24/23", 0.1), ("24/20", 0.0)), 0.0)
    hinted.on_reading(reading, 1.0)
    assert kinds(hinted.on_button("done", 1.1)) == ["move", "feedback"]
    # Hinting the other play does not make it clear: the reading puts it behind.
    other = Controller(opened, teach=True)
    other.on_hint(opened.gnubg_id(), ranked(opened, ("24/20", 0.1), ("24/21 24/23", 0.0)), 0.0)
    other.on_reading(reading, 1.0)
    events = other.on_button("done", 1.1)
    assert kinds(events) == ["please-check"] and events[0].fields["best"] == canonical(opened, "24/21 24/23")


def test_a_reading_that_clearly_shows_another_play_records_that_play(opened: MatchState) -> None:
    c = Controller(opened, teach=True)
    c.on_hint(opened.gnubg_id(), ranked(opened, *HINTS_31), 0.0)
    c.on_reading(reading_of(after(opened, "24/21 24/23"), 1), 1.0)
    events = c.on_tick(1.0 + SETTLE)
    assert kinds(events) == ["move", "feedback"]
    assert isinstance(events[0].action, Move) and str(events[0].action.play) == canonical(opened, "24/21 24/23")


def test_teach_mode_is_turned_on_and_off_from_the_console(opened: MatchState) -> None:
    c = Controller(opened)
    events = c.on_command("teach on", 1.0)
    # On during a move: the hint for it is asked for at once.
    assert kinds(events) == ["teach"] and asked(c) == ["hint"] and c.teach
    assert kinds(c.on_command("teach off", 2.0)) == ["teach"] and not c.teach and c.hint is None
    assert asked(c) == []
    assert kinds(c.on_command("teach", 3.0)) == ["teach"] and asked(c) == ["hint"] and c.teach
    assert kinds(c.on_command("teach maybe", 4.0)) == ["unknown"] and c.teach
