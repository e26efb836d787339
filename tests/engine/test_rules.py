# SPDX-License-Identifier: MIT
"""The thirteen rule cases of notes/ENGINE.md §2.6, each with exactly its legal results.

gnubg, two independent generators and the rule texts agree on every one of them.
"""

from __future__ import annotations

import pytest

from engine.dice import Dice
from engine.movegen import legal_plays
from engine.position import Position

CASES = {
    "either_die_but_not_both_play_the_higher": ("ABgA+P8BAAABAA", "65", {"24/18"}),
    "lower_die_when_the_higher_is_blocked": ("wGAA4P8HAAAEAA", "65", {"24/19"}),
    "both_dice_must_be_played_even_if_that_forces_the_5_first": ("wAAA+P8BAAABAA", "65", {"24/13"}),
    "enter_with_the_1_then_any_6": ("YAAAAID/HwACAA", "61", {"bar/18", "bar/24 13/7"}),
    "two_on_the_bar_only_one_enters_the_6_is_lost": ("YAAA+P8AAAADAA", "65", {"bar/20"}),
    "closed_board_while_on_the_bar_no_move": ("27YBAOD/BwAACA", "65", set()),
    "the_6_bears_off_from_the_highest_point": ("AAAASAAAAAAAAA", "62", {"5/off 3/1", "5/off"}),
    "the_6_must_bear_off_from_the_5_not_move_down": ("AAAAyAAAAAAAAA", "61", {"5/off 3/2", "5/4 5/off"}),
    "no_bearing_off_while_a_checker_is_outside": ("AAAA+P8hAAAAAA", "63", {"7/1 3/off", "7/off"}),
    "last_checker_must_still_use_both_dice": ("oFBQUAgAAAAAAA", "51", {"3/2*/off"}),
    "two_on_the_bar_both_enter": ("AAAAwP8HAMAAAA", "65", {"bar/20 bar/19"}),
    "opening_65_has_seven_results": (
        "4HPwATDgc/ABMA",
        "65",
        {"24/13", "24/18 13/8", "24/18 8/3", "13/8 13/7", "13/2", "13/7 8/3", "8/3 8/2"},
    ),
    "doubles_only_two_of_four_playable": ("AMMA4P8DAAAGAA", "44", {"24/20(2)"}),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_rule_case(name: str) -> None:
    position_id, roll, expected = CASES[name]
    plays = legal_plays(Position.from_id(position_id), Dice.parse(roll))
    assert {str(p) for p in plays} == expected
    assert len(plays) == len(expected)


def test_a_dance_uses_no_dice() -> None:
    plays = legal_plays(Position.from_id("27YBAOD/BwAACA"), Dice(6, 5))
    assert not plays
    assert plays.dice_used == 0
    assert list(plays) == []


def test_the_last_checker_with_one_die_is_not_enough_when_both_can_play() -> None:
    # 3/off alone would leave the 1 unplayed while 3/2*/off uses both dice.
    plays = legal_plays(Position.from_id("oFBQUAgAAAAAAA"), Dice(5, 1))
    assert plays.dice_used == 2


def test_a_hit_checker_goes_to_the_bar() -> None:
    before = Position.from_points({6: 5, 8: 3, 13: 5, 24: 2}, {6: 5, 8: 3, 13: 4, 24: 2, 18: 1})
    plays = legal_plays(before, Dice(6, 1))
    after = next(a for a, p in plays.results.items() if str(p) == "13/7* 8/7")
    assert after.bar() == (0, 1)
    assert after[1][17] == 0
