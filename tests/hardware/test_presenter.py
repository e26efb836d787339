# SPDX-License-Identifier: MIT
"""The presenter: what the board's LEDs show for each state of a match, a verdict and a hint."""

from __future__ import annotations

import pytest

from engine.cube import Cube
from engine.dice import Dice
from engine.judge import Judgement, judge
from engine.match import Double, Drop, MatchState, Move, OpeningRoll, Phase, Roll, Take
from engine.play import Play
from engine.position import Position
from hardware.presenter import Theme, hint_points, mover_led, present, scene_for, seat_of
from hardware.scene import CHECK, CUBE, CUBE_OFFERED, HINT_FROM, HINT_TO, ILLEGAL, READY, TURN, Colour, Light, Pattern


def _opened(die0: int = 3, die1: int = 1) -> MatchState:
    return MatchState.new_match(7).apply(OpeningRoll(die0, die1))


def test_before_the_opening_roll_both_turn_lights_and_the_centred_cube_are_lit() -> None:
    scene = present(MatchState.new_match(5))
    assert dict(scene) == {"turn.1": TURN, "turn.2": TURN, "cube.centre": CUBE, "status": READY}


def test_engine_player_1_sits_at_seat_1_unless_told_otherwise() -> None:
    state = _opened(1, 3)  # player 1 won the opening roll
    assert state.on_roll == 1
    assert present(state).light("turn.1") == TURN and present(state).light("turn.2") is None
    flipped = present(state, bottom_player=0)
    assert flipped.light("turn.2") == TURN and flipped.light("turn.1") is None
    assert seat_of(0) == 2 and seat_of(0, bottom_player=0) == 1


def test_an_illegal_move_lights_the_judges_marks_fast_blinking_red_in_player_1s_numbering() -> None:
    state = _opened(3, 1)  # player 0 (seat 2) plays 3-1
    assert state.dice == Dice(3, 1)
    # He plays only the 3 (13/10): half a play, nothing red yet.
    after = Position.from_points({6: 5, 8: 3, 13: 4, 10: 1, 24: 2}, {6: 5, 8: 3, 13: 5, 24: 2})
    verdict = judge(state.position, Dice(3, 1), after)
    assert verdict.verdict == "partial"
    assert not [n for n, light in present(state, verdict).items() if light == ILLEGAL]
    # He moves 13/7, a 6 he did not roll.
    wrong = Position.from_points({6: 5, 8: 3, 13: 4, 7: 1, 24: 2}, {6: 5, 8: 3, 13: 5, 24: 2})
    verdict = judge(state.position, Dice(3, 1), wrong)
    assert verdict.verdict == "illegal" and verdict.marks == (13, 7)
    scene = present(state, verdict)
    red = sorted(n for n, light in scene.items() if light == ILLEGAL)
    # Seat 2's 13-point and 7-point are player 1's 12 and 18; the status light says it too.
    assert red == ["point.12", "point.18", "status"]
    assert scene["status"] == Light(Colour.RED, Pattern.FAST_BLINK)


def test_marks_on_the_bar_and_off_light_the_movers_own_bar_and_tray() -> None:
    verdict = Judgement("illegal", marks=(25, 20, 0))
    scene = scene_for(mover=1, judgement=verdict)
    assert {"bar.1", "point.20", "off.1"} <= {n for n, light in scene.items() if light == ILLEGAL}
    scene = scene_for(mover=0, judgement=verdict)
    assert {"bar.2", "point.5", "off.2"} <= {n for n, light in scene.items() if light == ILLEGAL}


def test_a_hint_lights_the_points_left_in_blue_and_the_points_landed_on_in_green() -> None:
    state = _opened(1, 3)  # player 1 at seat 1 plays 3-1: the hint is 8/5 6/5
    scene = present(state, hint=Play.parse("8/5 6/5"))
    assert scene["point.8"] == scene["point.6"] == HINT_FROM
    assert scene["point.5"] == HINT_TO
    assert scene["point.5"] != scene["point.8"]


def test_a_point_a_checker_only_passes_through_is_not_lit() -> None:
    assert hint_points(Play.parse("24/18/13")) == ((24,), (13,))
    assert hint_points(Play.parse("bar/22 6/off")) == ((25, 6), (22, 0))
    scene = scene_for(mover=0, hint=Play.parse("bar/22 6/off"))
    assert scene["bar.2"] == scene["point.19"] == HINT_FROM
    assert scene["point.3"] == scene["off.2"] == HINT_TO


def test_an_illegal_mark_outranks_a_hint_on_the_same_point() -> None:
    scene = scene_for(mover=1, hint=Play.parse("8/5 6/5"), judgement=Judgement("illegal", marks=(5,)))
    assert scene["point.5"] == ILLEGAL and scene["point.8"] == HINT_FROM


def test_the_cube_shows_on_its_owners_side_at_its_value() -> None:
    scene = scene_for(mover=0, cube=Cube(8, 1))
    assert scene["cube.1.8"] == CUBE
    assert not [n for n in scene if n.startswith("cube.") and n != "cube.1.8"]
    assert scene_for(mover=0, cube=Cube(64, 0)).light("cube.2.64") == CUBE
    assert scene_for(mover=0, cube=Cube(256, 0)).light("cube.2.64") == CUBE  # off the track: the last circle


def test_a_double_on_offer_blinks_where_the_cube_goes_if_taken() -> None:
    state = MatchState(length=0, on_roll=1, phase=Phase.ROLL)
    offered = state.apply(Double())
    scene = present(offered)
    assert scene["cube.2.2"] == CUBE_OFFERED and scene["cube.2.2"].pattern is Pattern.BLINK
    assert scene.light("cube.centre") is None
    # The doubled player (seat 2) must answer: his turn light.
    assert scene.light("turn.2") == TURN and scene.light("turn.1") is None
    taken = present(offered.apply(Take()))
    assert taken["cube.2.2"] == CUBE and taken.light("turn.1") == TURN


def test_a_redouble_on_offer_blinks_the_next_value_on_the_other_side() -> None:
    state = MatchState(length=0, on_roll=0, phase=Phase.ROLL, cube=Cube(2, 0)).apply(Double())
    assert present(state)["cube.1.4"] == CUBE_OFFERED


def test_a_doubtful_reading_asks_to_check_in_amber() -> None:
    state = _opened()
    scene = present(state, check=True)
    assert scene["status"] == CHECK and CHECK.colour is Colour.AMBER
    scene = present(state, check=[7, "bar.2"])
    assert scene["point.7"] == scene["bar.2"] == scene["status"] == CHECK
    assert present(state, Judgement("unreadable", reasons=("bad",)))["status"] == CHECK
    with pytest.raises(ValueError, match=r"no LED is named 'bar\.3'"):
        present(state, check=["bar.3"])


def test_when_a_game_is_over_the_winners_turn_light_pulses() -> None:
    state = MatchState(length=0, on_roll=1, phase=Phase.ROLL).apply(Double())
    over = state.apply(Drop())
    assert over.is_over() and over.last_result is not None and over.last_result.winner == 1
    scene = present(over)
    assert scene["turn.1"] == Light(Colour.WARM_WHITE, Pattern.PULSE)
    assert scene.light("turn.2") is None


def test_a_whole_game_step_by_step_keeps_one_turn_light_on() -> None:
    state = _opened(3, 1)
    for _ in range(6):
        scene = present(state)
        turns = [n for n in scene if n.startswith("turn.")]
        assert turns == [f"turn.{seat_of(state.on_roll or 0)}"]
        plays = state.legal_plays()
        state = state.apply(Move(next(iter(plays.positions()), None) or Play()))
        state = state.apply(Roll(Dice(6, 5)))


def test_a_theme_changes_the_colours_and_refuses_unknown_roles() -> None:
    theme = Theme.from_mapping({"illegal": "magenta fast blink", "hint_to": ("cyan", "blink")})
    scene = scene_for(mover=1, judgement=Judgement("illegal", marks=(3,)), hint=Play.parse("6/4"), theme=theme)
    assert scene["point.3"] == Light(Colour.MAGENTA, Pattern.FAST_BLINK)
    assert scene["point.4"] == Light(Colour.CYAN, Pattern.BLINK)
    with pytest.raises(ValueError, match="no LED role 'ilegal'"):
        Theme.from_mapping({"ilegal": "red"})
    with pytest.raises(ValueError, match="cannot be dark"):
        Theme.from_mapping({"turn": "off"})


def test_marks_and_hints_need_to_know_who_moved() -> None:
    with pytest.raises(ValueError, match="needs the mover"):
        scene_for(mover=None, judgement=Judgement("illegal", marks=(3,)))
    with pytest.raises(ValueError, match="needs the mover"):
        scene_for(mover=None, hint=Play.parse("6/4"))
    with pytest.raises(ValueError, match="a point is 0"):
        mover_led(26, 1)


def test_the_scene_carries_the_brightness() -> None:
    assert present(_opened(), brightness=40).brightness == 40
