# SPDX-License-Identifier: MIT
"""The judge of a physical move: legal, partial, illegal (with reasons) or unreadable."""

from __future__ import annotations

import pytest

from engine.dice import Dice
from engine.judge import RawBoard, judge, partial_positions, remaining_dice
from engine.movegen import legal_plays
from engine.play import parse_steps
from engine.position import BAR, OFF, Position

START = Position.STARTING
BLOT7 = Position.from_points({6: 5, 8: 3, 13: 5, 24: 2}, {6: 5, 8: 3, 13: 4, 24: 2, 18: 1})


def board_after(position: Position, text: str, *, hit: bool = True) -> RawBoard:
    """The board a player leaves by moving checkers as ``text`` says (hits optional)."""
    mover, opponent = list(position[0]), list(position[1])
    for step in parse_steps(text):
        mover[step.source - 1] -= 1
        if step.dest != OFF:
            mover[step.dest - 1] += 1
            if hit and opponent[24 - step.dest] == 1:
                opponent[24 - step.dest] = 0
                opponent[24] += 1
    return RawBoard(tuple(mover), tuple(opponent))


def verdict(position_id: str | Position, roll: str, text: str, **kw: bool):  # type: ignore[no-untyped-def]
    position = position_id if isinstance(position_id, Position) else Position.from_id(position_id)
    return judge(position, Dice.parse(roll), board_after(position, text, **kw))


def test_a_legal_play_is_named_in_canonical_notation() -> None:
    j = verdict(START, "63", "8/5 13/7")
    assert j.verdict == "legal"
    assert str(j.play) == "13/7 8/5"
    assert j.reasons == ()


def test_half_a_play_is_partial_with_the_dice_left() -> None:
    j = verdict(START, "63", "13/7")
    assert j.verdict == "partial"
    assert str(j.play) == "13/7"
    assert j.reasons == ("the 3 still to play",)
    assert j.marks == (13, 7)


def test_nothing_moved_yet_is_partial() -> None:
    j = judge(START, Dice(6, 3), START)
    assert j.verdict == "partial"
    assert j.reasons == ("the 6 and the 3 to play",)


def test_doubles_part_way_count_the_dice_left() -> None:
    j = verdict(START, "66", "24/18(2)")
    assert j.verdict == "partial"
    assert j.reasons == ("2 more 6s still to play",)


def test_no_legal_play_and_nothing_moved_is_legal() -> None:
    j = judge(Position.from_id("27YBAOD/BwAACA"), Dice(6, 5), Position.from_id("27YBAOD/BwAACA"))
    assert j.verdict == "legal"
    assert not j.play
    assert "cannot enter" in j.reasons[0]


def test_you_must_enter_from_the_bar_first() -> None:
    j = verdict("YAAAAID/HwACAA", "61", "13/7 13/12")
    assert j.verdict == "illegal"
    assert j.reasons == ("you must enter from the bar first",)
    assert BAR in j.marks
    assert [str(p) for p in j.nearest][:1] == ["bar/24 13/7"]


def test_both_dice_can_be_played() -> None:
    # 24/18 is blocked but 24/19/13 plays both dice; 6/1 alone leaves the 6 unplayable.
    position = Position.from_points({24: 1, 6: 14}, {7: 2, 20: 13})
    assert [str(p) for p in legal_plays(position, Dice(6, 5))] == ["24/13"]
    j = judge(position, Dice(6, 5), board_after(position, "6/1"))
    assert j.verdict == "illegal"
    assert j.reasons == ("both dice can be played, e.g. 24/13",)


def test_you_must_play_the_higher_die() -> None:
    j = verdict("ABgA+P8BAAABAA", "65", "24/19")
    assert j.verdict == "illegal"
    assert j.reasons[0].startswith("you must play the 6")
    assert [str(p) for p in j.nearest] == ["24/18"]


def test_a_blocked_point_is_named() -> None:
    j = verdict(START, "66", "24/12", hit=False)
    assert j.verdict == "illegal"
    assert j.reasons == ("point 12 is blocked",)
    assert 12 in j.marks


def test_a_route_through_blocked_points_is_named() -> None:
    # 6-3 from the 13 to the 4: both the 10 and the 7 are held by the opponent.
    position = Position.from_points({13: 10, 8: 5}, {15: 2, 18: 2, 1: 11})
    j = judge(position, Dice(6, 3), board_after(position, "13/4"))
    assert j.verdict == "illegal"
    assert j.reasons == ("13/4 is not possible: point 10 and 7 are blocked",)
    assert {10, 7} <= set(j.marks)


def test_you_cant_bear_off_with_a_checker_outside() -> None:
    j = verdict("AAAA+P8hAAAAAA", "63", "3/off 3/off")
    assert j.verdict == "illegal"
    assert j.reasons == ("you can't bear off with a checker outside your home board",)
    assert 7 in j.marks


def test_pips_moved_against_the_roll() -> None:
    j = verdict(START, "63", "13/6")
    assert j.verdict == "illegal"
    assert j.reasons == ("7 pips were moved but the roll is 6-3",)
    assert j.marks == (13, 6)
    assert len(j.nearest) == 3


def test_a_hit_checker_left_off_the_board_is_missing() -> None:
    mover = list(BLOT7[0])
    opponent = list(BLOT7[1])
    mover[12] -= 1
    mover[7] -= 1
    mover[6] += 2
    opponent[17] = 0  # taken off the 7-point, not put on the bar
    j = judge(BLOT7, Dice(6, 1), RawBoard(tuple(mover), tuple(opponent)))
    assert j.verdict == "illegal"
    assert j.reasons[0].startswith("a checker is missing")
    assert 7 in j.marks


def test_a_blot_landed_on_but_not_hit_must_go_to_the_bar() -> None:
    j = verdict(BLOT7, "61", "13/7 8/7", hit=False)
    assert j.verdict == "illegal"
    assert j.reasons == ("the blot on 7 is hit: put it on the bar",)


def test_bearing_off_from_a_lower_point_while_a_higher_one_is_full() -> None:
    j = verdict("AAAASAAAAAAAAA", "62", "3/off 5/off")
    assert j.verdict == "illegal"
    assert "higher point" in j.reasons[0]


def test_wrong_counts_are_unreadable() -> None:
    mover = (*START[0][:24], 1)
    j = judge(START, Dice(3, 1), RawBoard(mover, START[1]))
    assert j.verdict == "unreadable"
    assert "16" in j.reasons[0]
    j = judge(START, Dice(3, 1), RawBoard(START[0], START[1], off=(0, 1)))
    assert j.verdict == "unreadable"


def test_opponents_checkers_moved_is_illegal() -> None:
    opponent = list(START[1])
    opponent[5] -= 1
    opponent[4] += 1
    j = judge(START, Dice(3, 1), RawBoard(START[0], tuple(opponent)))
    assert j.verdict == "illegal"
    assert j.reasons == ("your opponent's checkers were moved",)


def test_checkers_moving_backwards() -> None:
    j = judge(START, Dice(3, 1), _backwards())
    assert j.verdict == "illegal"
    assert j.reasons == ("checkers only move forward, towards your home board",)


def _backwards() -> RawBoard:
    mover = list(START[0])
    mover[5] -= 1
    mover[8] += 1  # a checker from the 6 to the 9
    return RawBoard(tuple(mover), START[1])


@pytest.mark.parametrize(
    ("position_id", "roll"), [("4HPwATDgc/ABMA", "66"), ("4HPwATDgc/ABMA", "53"), ("YAAAAID/HwACAA", "61")]
)
def test_every_prefix_is_partial_and_every_result_legal(position_id: str, roll: str) -> None:
    before = Position.from_id(position_id)
    dice = Dice.parse(roll)
    prefixes = partial_positions(before, dice)
    assert prefixes
    for board, left in prefixes.items():
        assert judge(before, dice, board).verdict == "partial"
        assert remaining_dice(before, dice, board) == left
    for after in legal_plays(before, dice).positions():
        assert judge(before, dice, after).verdict == "legal"


def test_json_has_the_contract_keys() -> None:
    data = verdict(START, "63", "13/6").to_json()
    assert {"verdict", "play", "reasons", "marks", "nearest"} <= set(data)
