# SPDX-License-Identifier: MIT
"""Match ID, GNUbgID and XGID codecs: known IDs, refusals that name the fault, round trips."""

from __future__ import annotations

import base64
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.cube import Cube
from engine.dice import Dice
from engine.errors import InvalidIdError
from engine.ids import (
    GameState,
    MatchIdFields,
    XgidFields,
    decode_gnubg_id,
    decode_match_id,
    decode_xgid,
    encode_gnubg_id,
    encode_match_id,
    encode_xgid,
)
from engine.match import AcceptResign, Drop, MatchOptions, MatchState, Move, OpeningRoll, Phase, Resign, Take
from engine.position import Position

START_XGID = "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10"


def _with_bits(text: str, first: int, width: int, value: int) -> str:
    """``text`` with one field of the Match ID key overwritten (to build IDs gnubg would refuse)."""
    key = int.from_bytes(base64.b64decode(text), "little")
    key = key & ~(((1 << width) - 1) << first) | value << first
    return base64.b64encode(key.to_bytes(9, "little")).decode("ascii")


# -- strategies ------------------------------------------------------------------------------


@st.composite
def halves(draw: st.DrawFn) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Two sides' 25 counts (own numbering, index 24 = bar) that can share a board."""
    mover = [0] * 25
    for _ in range(draw(st.integers(0, 15))):
        mover[draw(st.integers(0, 24))] += 1
    # The opponent's index j is the mover's point index 23 - j; it may only use free points.
    free = [j for j in range(24) if not mover[23 - j]] + [24]
    opponent = [0] * 25
    for _ in range(draw(st.integers(0, 15))):
        opponent[draw(st.sampled_from(free))] += 1
    return tuple(mover), tuple(opponent)


@st.composite
def match_id_fields(draw: st.DrawFn) -> MatchIdFields:
    """Any fields gnubg can write (dice high first, as gnubg writes them)."""
    length = draw(st.sampled_from([0, 1, 3, 5, 7, 25, 64, 32767]) | st.integers(0, 32767))
    state = draw(st.sampled_from(GameState))
    finished = state in (GameState.OVER, GameState.RESIGNED, GameState.DROPPED)
    top = 32767 if not length or finished else length - 1
    dice = draw(st.just((0, 0)) | st.tuples(st.integers(1, 6), st.integers(1, 6)))
    return MatchIdFields(
        cube=1 << draw(st.integers(0, 15)),
        cube_owner=draw(st.sampled_from([None, 0, 1])),
        dice_owner=draw(st.sampled_from([0, 1])),
        crawford=bool(length) and draw(st.booleans()),
        game_state=state,
        turn=draw(st.sampled_from([0, 1])),
        doubled=draw(st.booleans()),
        resigned=draw(st.integers(0, 3)),
        dice=(max(dice), min(dice)),
        length=length,
        score=(draw(st.integers(0, top)), draw(st.integers(0, top))),
        jacoby=draw(st.booleans()),
    )


@st.composite
def xgid_fields(draw: st.DrawFn) -> XgidFields:
    bottom, top = draw(halves())
    length = draw(st.sampled_from([0, 0, 1, 5, 11, 25]))
    dice = draw(
        st.sampled_from(["00", "D", "B", "R"])
        | st.tuples(st.integers(1, 6), st.integers(1, 6)).map(lambda d: f"{d[0]}{d[1]}")
    )
    return XgidFields(
        board=XgidFields.board_from(bottom, top),
        cube=1 << draw(st.integers(0, 15)),
        cube_owner=draw(st.sampled_from([-1, 0, 1])),
        turn=draw(st.sampled_from([-1, 1])),
        dice=dice,
        score_bottom=draw(st.integers(0, 30)),
        score_top=draw(st.integers(0, 30)),
        rules=draw(st.integers(0, 1 if length else 3)),
        length=length,
        max_cube_exponent=draw(st.integers(0, 15)),
    )


@st.composite
def playing_states(draw: st.DrawFn) -> MatchState:
    """States of a game in play that both an XGID and a GNUbgID can hold."""
    length = draw(st.sampled_from([0, 0, 1, 2, 3, 5, 7, 11, 25]))
    score = (draw(st.integers(0, max(length - 1, 0))), draw(st.integers(0, max(length - 1, 0))))
    if not length:
        score = (0, 0)
    one_away = length > 1 and length - 1 in score
    crawford = one_away and draw(st.booleans())
    if length:
        options = MatchOptions(crawford=True, max_cube=draw(st.sampled_from([None, 64])))
    else:
        options = MatchOptions(
            crawford=False,
            jacoby=draw(st.booleans()),
            beaver=draw(st.booleans()),
            max_cube=draw(st.sampled_from([None, 1, 8, 4096])),
        )
    # gnubg stops match cubes at 64 and money cubes at 4096; bigger ones only make scores
    # overflow the Match ID's fifteen bits (a 32768 cube won once is already too many points).
    value = 1 << draw(st.integers(0, min(options.cube_limit, 64 if length else 1 << 12).bit_length() - 1))
    cube = Cube() if crawford or value == 1 else Cube(value, draw(st.sampled_from([0, 1])))
    on_roll = draw(st.sampled_from([0, 1]))
    phase = draw(st.sampled_from([Phase.ROLL, Phase.MOVE, Phase.DOUBLED]))
    dice = Dice(*sorted(draw(st.tuples(st.integers(1, 6), st.integers(1, 6))), reverse=True))
    beavered = False
    if phase is Phase.DOUBLED and (crawford or not cube.can_double(on_roll) or cube.value * 2 > options.cube_limit):
        phase = Phase.ROLL
    if phase is Phase.DOUBLED and options.beaver and cube.value * 4 <= options.cube_limit and draw(st.booleans()):
        beavered, cube = True, Cube(cube.value * 2, 1 - on_roll)
    mover, opponent = draw(halves().filter(lambda h: any(h[0]) and any(h[1])))
    return MatchState(
        length,
        score,
        cube,
        on_roll,
        dice if phase is Phase.MOVE else None,
        phase,
        Position(mover, opponent),
        crawford,
        one_away and not crawford,
        options,
        beavered=beavered,
    )


# -- Match ID --------------------------------------------------------------------------------


def test_match_id_of_a_nine_point_match_at_two_four_with_player_0_owning_a_two_cube() -> None:
    fields = decode_match_id("QYkqASAAIAAA")
    assert fields == MatchIdFields(
        cube=2, cube_owner=0, dice_owner=1, turn=1, dice=(5, 2), length=9, score=(2, 4), jacoby=True
    )
    assert encode_match_id(fields) == "QYkqASAAIAAA"


def test_match_id_of_gnubgs_opening_screen_is_money_with_player_0_to_play_31() -> None:
    fields = decode_match_id("MIEFAAAAAAAA")
    assert (fields.length, fields.cube, fields.cube_owner, fields.dice_owner, fields.dice) == (0, 1, None, 0, (3, 1))
    assert fields.game_state is GameState.PLAYING
    assert encode_match_id(fields) == "MIEFAAAAAAAA"


def test_match_id_matches_the_gnubg_documentation_example() -> None:
    # gnubg.matchid(gnubg.cubeinfo(2, 0, 1, 7, (3, 4), 0, 0), gnubg.posinfo(1, 0, 0, 1, (5, 2)))
    fields = MatchIdFields(cube=2, cube_owner=0, dice_owner=1, turn=1, dice=(5, 2), length=7, score=(3, 4))
    assert encode_match_id(fields) == "QYnqADAAIAAE"


def test_match_id_writes_the_higher_die_first_as_gnubg_does() -> None:
    assert decode_match_id(encode_match_id(MatchIdFields(dice=(2, 5)))).dice == (5, 2)


def test_match_id_bit_66_is_set_when_the_jacoby_rule_is_off() -> None:
    assert encode_match_id(MatchIdFields(jacoby=False))[-1] == "E"
    assert encode_match_id(MatchIdFields(jacoby=True))[-1] == "A"


@settings(max_examples=500)
@given(match_id_fields())
def test_match_id_round_trips(fields: MatchIdFields) -> None:
    text = encode_match_id(fields)
    assert len(text) == 12
    assert decode_match_id(text) == fields
    assert encode_match_id(decode_match_id(text)) == text


@pytest.mark.parametrize(
    ("text", "complaint"),
    [
        ("QYkq!SAAIAAA", "character 5 ('!')"),
        ("QYkqASAAIAA", "expected 12 characters, got 11"),
        ("QYkqASAAIAAAA", "expected 12 characters, got 13"),
        ("QYkqASAAIAAI", "bits are set after the last field"),
        (_with_bits("MIEFAAAAAAAA", 4, 2, 2), "cube owner bits are 2"),
        (_with_bits("MIEFAAAAAAAA", 15, 3, 7), "die 1 is 7"),
        (_with_bits("MIEFAAAAAAAA", 18, 3, 7), "die 2 is 7"),
    ],
)
def test_a_broken_match_id_is_refused_naming_the_fault(text: str, complaint: str) -> None:
    with pytest.raises(InvalidIdError, match=complaint.replace("(", r"\(").replace(")", r"\)")):
        decode_match_id(text)


def test_a_match_id_with_a_score_that_already_won_a_game_in_play_is_refused() -> None:
    finished = encode_match_id(MatchIdFields(game_state=GameState.OVER, length=5, score=(5, 2)))
    playing = _with_bits(finished, 8, 3, GameState.PLAYING)
    with pytest.raises(InvalidIdError, match="already won a 5-point match"):
        decode_match_id(playing)


def test_a_money_match_id_with_a_crawford_flag_is_refused() -> None:
    money = _with_bits(encode_match_id(MatchIdFields(length=1, crawford=True)), 21, 15, 0)
    with pytest.raises(InvalidIdError, match="no Crawford game in money play"):
        decode_match_id(money)


def test_a_match_id_with_an_unknown_game_state_is_refused() -> None:
    with pytest.raises(InvalidIdError, match="game state 5"):
        decode_match_id(_with_bits(encode_match_id(MatchIdFields()), 8, 3, 5))


def test_match_id_fields_refuse_a_cube_that_is_not_a_power_of_two() -> None:
    with pytest.raises(InvalidIdError, match="power of two"):
        MatchIdFields(cube=3)


def test_match_id_fields_refuse_one_die_without_the_other() -> None:
    with pytest.raises(InvalidIdError, match="both dice"):
        MatchIdFields(dice=(3, 0))


def test_a_finished_match_keeps_its_real_score_in_the_match_id() -> None:
    fields = MatchIdFields(game_state=GameState.OVER, length=5, score=(7, 3))
    assert decode_match_id(encode_match_id(fields)).score == (7, 3)


# -- GNUbgID ---------------------------------------------------------------------------------


def test_gnubg_id_is_position_id_colon_match_id() -> None:
    assert encode_gnubg_id(Position.STARTING, decode_match_id("cAmgAAAAAAAE")) == "4HPwATDgc/ABMA:cAmgAAAAAAAE"


@pytest.mark.parametrize("text", ["4HPwATDgc/ABMA:cAmgAAAAAAAE", " GNUbgID: 4HPwATDgc/ABMA:cAmgAAAAAAAE "])
def test_gnubg_id_reads_with_or_without_its_label(text: str) -> None:
    position, fields = decode_gnubg_id(text)
    assert position == Position.STARTING
    assert fields.length == 5


@pytest.mark.parametrize(
    ("text", "complaint"),
    [
        ("4HPwATDgc/ABMA", "expected 'PositionID:MatchID'"),
        ("4HPwATDgc.ABMA:cAmgAAAAAAAE", r"Position ID '4HPwATDgc.ABMA': character 10 \('.'\)"),
        ("4HPwATDgc/ABM:cAmgAAAAAAAE", "expected 14 characters, got 13"),
        ("4HPwATDgc/ABMA:cAmgAAAAAA-E", r"character 11 \('-'\)"),
    ],
)
def test_a_broken_gnubg_id_is_refused_naming_the_fault(text: str, complaint: str) -> None:
    with pytest.raises(InvalidIdError, match=complaint):
        decode_gnubg_id(text)


# -- XGID ------------------------------------------------------------------------------------


def test_the_starting_xgid_is_the_starting_position_with_the_bottom_player_to_roll() -> None:
    fields = decode_xgid(START_XGID)
    bottom, top = fields.bottom_and_top()
    assert Position(bottom, top) == Position.STARTING
    assert (fields.turn, fields.dice, fields.cube, fields.cube_owner, fields.length) == (1, "00", 1, 0, 0)
    assert encode_xgid(fields) == START_XGID


def test_xgid_reads_without_its_label_and_ignores_annotation_fields() -> None:
    assert decode_xgid(START_XGID.removeprefix("XGID=") + ":extra:fields") == decode_xgid(START_XGID)


@settings(max_examples=500)
@given(xgid_fields())
def test_xgid_fields_round_trip(fields: XgidFields) -> None:
    assert decode_xgid(encode_xgid(fields)) == fields


@pytest.mark.parametrize(
    ("text", "complaint"),
    [
        ("XGID=-b----E-C---eE---c-e----B:0:0:1:00:0:0:0:0:10", "25 characters, expected 26"),
        ("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0", "expected 10 fields"),
        ("XGID=-b----E-C---eE-x-c-e----B-:0:0:1:00:0:0:0:0:10", r"position character 16 \('x'\)"),
        ("XGID=Bb----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10", "bottom player on the top bar"),
        ("XGID=-b----E-C---eE---c-e----Bb:0:0:1:00:0:0:0:0:10", "top player on the bottom bar"),
        ("XGID=-b----E-C---eE---c-e----B-:0:2:1:00:0:0:0:0:10", "cube owner is 1"),
        ("XGID=-b----E-C---eE---c-e----B-:0:0:0:00:0:0:0:0:10", "turn is 1"),
        ("XGID=-b----E-C---eE---c-e----B-:0:0:1:70:0:0:0:0:10", "the dice are 00, D, B, R"),
        ("XGID=-b----E-C---eE---c-e----B-:x:0:1:00:0:0:0:0:10", r"cube field \('x'\)"),
        ("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:2:7:10", "rules field of a match"),
        ("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:4:0:10", "rules field in money play"),
        ("XGID=-b----E-C---eP---c-e----B-:0:0:1:00:0:0:0:0:10", "26 checkers on the board"),
    ],
)
def test_a_broken_xgid_is_refused_naming_the_fault(text: str, complaint: str) -> None:
    with pytest.raises(InvalidIdError, match=complaint):
        decode_xgid(text)


# -- MatchState through IDs ------------------------------------------------------------------


def test_the_bottom_player_of_an_xgid_is_gnubgs_player_1() -> None:
    state = MatchState.from_xgid(START_XGID)
    assert (state.on_roll, state.phase, state.is_money) == (1, Phase.ROLL, True)
    assert state.match_id() == "cAkAAAAAAAAE"


def test_xgid_scores_are_bottom_then_top_and_gnubg_scores_are_player_0_then_1() -> None:
    state = MatchState.from_xgid("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:3:1:0:7:10")
    assert state.score == (1, 3)
    assert state.xgid() == "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:3:1:0:7:10"


def test_an_xgid_double_names_the_doubler_and_the_cube_before_the_double() -> None:
    state = MatchState.from_xgid("XGID=-b----E-C---eE---c-e----B-:1:-1:-1:D:0:0:0:5:10")
    assert (state.phase, state.on_roll, state.turn, state.cube) == (Phase.DOUBLED, 0, 1, Cube(2, 0))


def test_an_xgid_keeps_the_dice_in_rolled_order() -> None:
    state = MatchState.from_xgid("XGID=-b----E-C---eE---c-e----B-:0:0:1:25:0:0:0:0:10")
    assert state.dice == Dice(2, 5)
    assert state.xgid().endswith(":25:0:0:0:0:10")


def test_xg_default_max_cube_reads_as_no_limit_and_other_exponents_as_limits() -> None:
    assert MatchState.from_xgid(START_XGID).options.max_cube is None
    assert MatchState.from_xgid(START_XGID.replace(":10", ":6")).options.max_cube == 64


def test_an_xgid_of_a_finished_game_is_refused() -> None:
    with pytest.raises(InvalidIdError, match="borne off all its checkers"):
        MatchState.from_xgid("XGID=" + "-" * 20 + "a" + "-" * 5 + ":0:0:1:00:0:0:0:0:10")


def test_an_xgid_of_a_won_match_is_refused() -> None:
    with pytest.raises(InvalidIdError, match="already won the 5-point match"):
        MatchState.from_xgid("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:5:1:0:5:10")


def test_an_xgid_raccoon_is_refused() -> None:
    with pytest.raises(InvalidIdError, match="raccoons"):
        MatchState.from_xgid("XGID=-b----E-C---eE---c-e----B-:1:1:1:R:0:0:3:0:10")


def test_a_gnubg_id_with_a_finished_board_in_a_game_still_played_is_refused() -> None:
    finished = Position([0] * 25, [1] + [0] * 24)
    text = encode_gnubg_id(finished, MatchIdFields(length=5))
    with pytest.raises(InvalidIdError, match="borne off all its checkers"):
        MatchState.from_gnubg_id(text)


def test_a_gnubg_id_reads_the_crawford_flag_only_at_one_away_as_gnubg_does() -> None:
    text = encode_gnubg_id(Position.STARTING, MatchIdFields(length=5, score=(2, 1), crawford=True))
    assert not MatchState.from_gnubg_id(text).crawford
    text = encode_gnubg_id(Position.STARTING, MatchIdFields(length=5, score=(4, 1), crawford=False))
    state = MatchState.from_gnubg_id(text)
    assert (state.crawford, state.post_crawford) == (False, True)


@settings(max_examples=400)
@given(playing_states())
def test_a_game_in_play_round_trips_through_its_xgid(state: MatchState) -> None:
    state = replace(state, dice=None if state.dice is None else Dice(state.dice.second, state.dice.first))
    assert MatchState.from_xgid(state.xgid()) == state


@settings(max_examples=400)
@given(playing_states())
def test_a_game_in_play_round_trips_through_its_gnubg_id(state: MatchState) -> None:
    again = MatchState.from_gnubg_id(state.gnubg_id(), beaver=state.options.beaver, max_cube=state.options.max_cube)
    assert again == state


@settings(max_examples=300)
@given(playing_states(), st.sampled_from(["drop", "resign", "take"]), st.integers(1, 3))
def test_finished_games_and_matches_round_trip_through_their_gnubg_id(state: MatchState, how: str, points: int) -> None:
    if how == "resign" and state.phase in (Phase.ROLL, Phase.MOVE):
        state = state.apply(Resign(points))
        assert (
            MatchState.from_gnubg_id(state.gnubg_id(), beaver=state.options.beaver, max_cube=state.options.max_cube)
            == state
        )
        state = state.apply(AcceptResign())
    elif how == "drop" and state.phase is Phase.DOUBLED:
        state = state.apply(Drop())
    elif how == "take" and state.phase is Phase.DOUBLED:
        state = state.apply(Take())
    again = MatchState.from_gnubg_id(state.gnubg_id(), beaver=state.options.beaver, max_cube=state.options.max_cube)
    assert again == state


def test_the_opening_phase_round_trips_through_its_gnubg_id() -> None:
    state = MatchState.new_match(7).apply(OpeningRoll(6, 1)).apply(Move("13/7 8/7"))
    opening = MatchState.from_gnubg_id(MatchState.new_match(7).gnubg_id())
    assert opening == MatchState.new_match(7)
    assert opening.match_id_fields().game_state is GameState.NONE
    assert MatchState.from_gnubg_id(state.gnubg_id()) == state


def test_a_game_played_out_round_trips_through_its_gnubg_id_with_its_result() -> None:
    almost = MatchState.from_xgid("XGID=-A-----------------a------:0:0:1:21:0:0:0:5:10")
    over = almost.apply(Move("1/off"))
    assert over.phase is Phase.GAME_OVER
    assert over.last_result is not None and over.last_result.winner == 1
    assert MatchState.from_gnubg_id(over.gnubg_id()) == over


@pytest.mark.parametrize("last", ["B", "C", "P"])
def test_a_position_id_with_its_padding_bits_set_is_refused_as_a_match_id_is(last: str) -> None:
    # 14 characters carry 84 bits for 80: the last character's low 4 bits are padding.
    assert Position.from_id("4HPwATDgc/ABMA") == Position.STARTING
    with pytest.raises(InvalidIdError, match="padding bits set in its last character"):
        Position.from_id("4HPwATDgc/ABM" + last)
