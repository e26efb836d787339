# SPDX-License-Identifier: MIT
"""Play notation: gnubg's canonical form out, every common dialect in."""

from __future__ import annotations

import pytest

from engine.dice import Dice
from engine.errors import IllegalPlayError, InvalidNotationError, NoSuchPlayError
from engine.movegen import legal_plays
from engine.play import Play, Step, parse_steps
from engine.position import Position

START = Position.STARTING
# The opponent has a blot on our 7-point (his 18-point).
BLOT7 = Position.from_points({6: 5, 8: 3, 13: 5, 24: 2}, {6: 5, 8: 3, 13: 4, 24: 2, 18: 1})


@pytest.mark.parametrize(
    ("written", "roll", "canonical"),
    [
        ("8/5 6/5", "31", "8/5 6/5"),
        ("6/5 8/5", "31", "8/5 6/5"),
        ("8/5, 6/5", "31", "8/5 6/5"),
        ("24/13", "65", "24/13"),
        ("24/18 18/13", "65", "24/13"),
        ("24/18/13", "65", "24/13"),
        ("13/7 7/5", "62", "13/5"),
        ("8/5(2) 6/3(2)", "33", "8/5(2) 6/3(2)"),
        ("8/5 8/5 6/3 6/3", "33", "8/5(2) 6/3(2)"),
        ("8/6(2)", "11", "8/6(2)"),
        ("8/7 8/7 7/6 7/6", "11", "8/6(2)"),
    ],
)
def test_plays_read_in_any_dialect_come_out_canonical(written: str, roll: str, canonical: str) -> None:
    assert str(legal_plays(START, Dice.parse(roll)).parse(written)[1]) == canonical


@pytest.mark.parametrize(
    ("written", "roll", "canonical"),
    [
        ("13/7 8/7", "61", "13/7* 8/7"),
        ("13/7* 8/7", "61", "13/7* 8/7"),
        ("13/5", "62", "13/5"),
        ("13/7*/5", "62", "13/7*/5"),
        ("13/7 7/5", "62", "13/7*/5"),
    ],
)
def test_hits_are_marked_even_when_the_file_left_them_out(written: str, roll: str, canonical: str) -> None:
    assert str(legal_plays(BLOT7, Dice.parse(roll)).parse(written)[1]) == canonical


def test_a_joined_move_past_a_blot_takes_the_route_without_a_hit() -> None:
    # 6-2 from the 13: via the 7 hits the blot, via the 11 does not; "13/5" does not say.
    plays = legal_plays(BLOT7, Dice(6, 2))
    assert str(plays.parse("13/5")[1]) == "13/5"
    assert str(plays.parse("13/7*/5")[1]) == "13/7*/5"
    assert str(plays.parse("13/11 11/5")[1]) == "13/5"


def test_a_hit_mark_on_a_joined_move_says_the_checker_hit_on_its_way() -> None:
    # Nothing to hit on the 5: the mark can only mean the blot on the 7, passed on the way.
    plays = legal_plays(BLOT7, Dice(6, 2))
    after, play = plays.parse("13/5*")
    assert str(play) == "13/7*/5"
    assert after == plays.parse("13/7*/5")[0]
    assert after[1][24] == 1


def test_written_steps_that_cannot_be_played_name_what_is_wrong() -> None:
    plays = legal_plays(START, Dice(6, 3))
    with pytest.raises(IllegalPlayError, match="a checker cannot move from off or to the bar"):
        plays.resolve([Step(0, 3)])
    with pytest.raises(IllegalPlayError, match="no checker to move from the bar"):
        plays.parse("bar/22 13/10")
    with pytest.raises(NoSuchPlayError, match=r"^no play is not a legal play for 6-3$"):
        plays.parse("")


def test_a_step_that_cannot_be_made_is_told_apart_from_a_result_no_play_gives_by_its_class() -> None:
    """Callers say why a play is illegal from its class, never from its wording."""
    plays = legal_plays(START, Dice(6, 3))
    with pytest.raises(IllegalPlayError) as cannot:
        plays.parse("bar/22 13/10")
    assert not isinstance(cannot.value, NoSuchPlayError)
    with pytest.raises(NoSuchPlayError) as nowhere:
        plays.parse("24/20 13/7")
    assert isinstance(nowhere.value, IllegalPlayError)


def test_no_play_is_the_play_when_nothing_can_be_played() -> None:
    closed = Position.from_id("27YBAOD/BwAACA")
    assert legal_plays(closed, Dice(6, 5)).parse("Cannot Move") == (closed, Play())


@pytest.mark.parametrize("bar", ["bar", "25", "b", "BAR"])
@pytest.mark.parametrize("off", ["off", "0"])
def test_bar_and_off_in_every_spelling(bar: str, off: str) -> None:
    steps = parse_steps(f"{bar}/22 6/{off}")
    assert steps == [Step(25, 22), Step(6, 0)]
    assert str(Play(steps)) == "bar/22 6/off"


def test_repeat_counts_expand() -> None:
    assert parse_steps("6/off(2)") == [Step(6, 0), Step(6, 0)]
    assert parse_steps("6/1*(2)") == [Step(6, 1, True), Step(6, 1, True)]
    assert str(Play(parse_steps("6/1*(2)"))) == "6/1*(2)"


@pytest.mark.parametrize("text", ["", "Cannot Move", "cannot move"])
def test_no_move_words(text: str) -> None:
    assert parse_steps(text) == []
    assert not Play.parse(text)


@pytest.mark.parametrize(
    "text",
    ["8-5", "8/9", "8/5 6/x", "off/3", "3/bar", "26/20", "8/5(7)", "8/5 8/5 8/5 8/5 8/5", "????"],
)
def test_malformed_plays_are_refused(text: str) -> None:
    with pytest.raises(InvalidNotationError):
        parse_steps(text)


def test_a_well_formed_but_illegal_play_is_refused_with_the_roll() -> None:
    with pytest.raises(IllegalPlayError, match="6-3"):
        legal_plays(START, Dice(6, 3)).parse("13/7 8/4")
    with pytest.raises(IllegalPlayError, match="no checker to move from 12"):
        legal_plays(START, Dice(6, 3)).parse("12/6 8/5")


def test_repr_round_trips() -> None:
    play = Play.parse("bar/22 13/11*")
    assert repr(play) == "Play.parse('bar/22 13/11*')"
    assert eval(repr(play)) == play


def test_chains_are_joined_and_repeats_counted_like_gnubg() -> None:
    # Three checkers leave the 13 with 6-6-6-6, one goes on to the 1, hitting on the 7.
    steps = [Step(13, 7, True), Step(13, 7), Step(13, 7), Step(7, 1, True)]
    assert str(Play(steps)) == "13/7*/1* 13/7(2)"


@pytest.mark.parametrize("written", ["31", "3-1", "3 1", "3,1", "[3, 1]", "(3,1)", " 3-1 "])
def test_a_roll_is_read_in_its_usual_forms(written: str) -> None:
    assert Dice.parse(written) == Dice(3, 1)


@pytest.mark.parametrize("written", ["-31", "\uff15\uff15", "3--1", "1", "123", "ab", "", "3/1"])
def test_anything_else_is_not_a_roll(written: str) -> None:
    with pytest.raises(InvalidNotationError, match="not a roll of two dice"):
        Dice.parse(written)
