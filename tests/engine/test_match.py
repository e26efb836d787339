# SPDX-License-Identifier: MIT
"""The match rules: opening roll, rolling and moving, the cube, game and match ends, and whole
random games played through :meth:`MatchState.apply`."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from engine.cube import Cube, cube_from_track, track_reading
from engine.dice import Dice
from engine.errors import IllegalActionError, InvalidPositionError
from engine.ids import GameState
from engine.match import (
    BACKGAMMON,
    GAMMON,
    SINGLE,
    AcceptResign,
    Action,
    Beaver,
    Double,
    Drop,
    GameEnd,
    MatchOptions,
    MatchState,
    Move,
    OpeningRoll,
    Phase,
    RejectResign,
    Resign,
    Roll,
    Take,
)
from engine.play import Play
from engine.position import CHECKERS, Position

# -- helpers ---------------------------------------------------------------------------------


def opened(length: int = 5, *, jacoby: bool = False, beaver: bool = False, max_cube: int | None = None) -> MatchState:
    """A match (or money session with ``length=0``) where player 0 is about to play an opening 3-1."""
    if length:
        state = MatchState.new_match(length, max_cube=max_cube)
    else:
        state = MatchState.new_money_session(jacoby=jacoby, beaver=beaver, max_cube=max_cube)
    return state.apply(OpeningRoll(3, 1))


def to_roll(length: int = 5, *, jacoby: bool = False, beaver: bool = False, max_cube: int | None = None) -> MatchState:
    """Player 1 on roll, before rolling, after player 0's opening 8/5 6/5."""
    return opened(length, jacoby=jacoby, beaver=beaver, max_cube=max_cube).apply(Move("8/5 6/5"))


def bearing_off(
    opponent: dict[int, int],
    *,
    length: int = 5,
    cube: Cube | None = None,
    options: MatchOptions | None = None,
    score: tuple[int, int] = (0, 0),
) -> MatchState:
    """Player 0 to play 2-1 with his last checker on his 1-point; ``opponent`` in its own numbering."""
    return MatchState(
        length,
        score,
        cube or Cube(),
        on_roll=0,
        dice=Dice(2, 1),
        phase=Phase.MOVE,
        position=Position.from_points({1: 1}, opponent),
        options=options or (MatchOptions() if length else MatchOptions(crawford=False)),
    )


def refusal_of(state: MatchState, action: Action) -> str:
    with pytest.raises(IllegalActionError) as caught:
        state.apply(action)
    return str(caught.value)


# -- the opening roll ------------------------------------------------------------------------


def test_a_new_match_waits_for_the_opening_roll_from_the_starting_position() -> None:
    state = MatchState.new_match(7)
    assert (state.phase, state.on_roll, state.turn, state.dice) == (Phase.OPENING, None, None, None)
    assert state.position == Position.STARTING
    assert state.legal_actions() == (OpeningRoll,)


def test_equal_opening_dice_roll_again() -> None:
    state = MatchState.new_match(7)
    assert state.apply(OpeningRoll(4, 4)) == state


def test_the_higher_opening_die_plays_both_dice_as_his_first_roll() -> None:
    state = MatchState.new_match(7).apply(OpeningRoll(2, 6))
    assert (state.phase, state.on_roll, state.dice) == (Phase.MOVE, 1, Dice(6, 2))


def test_the_opening_roll_cannot_be_doubled() -> None:
    assert "after rolling" in refusal_of(opened(), Double())


def test_an_opening_roll_die_shows_one_to_six() -> None:
    assert "1 to 6" in refusal_of(MatchState.new_match(3), OpeningRoll(0, 4))


def test_there_is_no_opening_roll_in_the_middle_of_a_game() -> None:
    assert "opening roll" in refusal_of(to_roll(), OpeningRoll(5, 2))


def test_the_opening_roll_after_a_game_over_starts_the_next_game_afresh() -> None:
    over = to_roll().apply(Double()).apply(Drop())
    assert over.phase is Phase.GAME_OVER
    tie = over.apply(OpeningRoll(3, 3))
    assert (tie.phase, tie.game_number, tie.position, tie.cube) == (Phase.OPENING, 2, Position.STARTING, Cube())
    game = tie.apply(OpeningRoll(1, 5))
    assert (game.phase, game.on_roll, game.game_number, game.score) == (Phase.MOVE, 1, 2, over.score)


# -- rolling and moving ----------------------------------------------------------------------


def test_roll_the_dice_before_moving() -> None:
    assert refusal_of(to_roll(), Move("13/7 8/7")) == "roll the dice before moving"


def test_a_player_rolls_once_per_turn() -> None:
    state = to_roll().apply(Roll(Dice(6, 1)))
    assert "rolled already" in refusal_of(state, Roll(Dice(2, 2)))


def test_a_play_passes_the_turn_and_the_board_is_seen_from_the_next_player() -> None:
    after = opened().apply(Move("8/5 6/5"))
    assert (after.phase, after.on_roll, after.dice) == (Phase.ROLL, 1, None)
    mover_after = Position.from_points({6: 4, 8: 2, 5: 2, 13: 5, 24: 2}, {6: 5, 8: 3, 13: 5, 24: 2})
    assert after.position == mover_after.swap()


@pytest.mark.parametrize(
    "move",
    [
        Move("8/5 6/5"),
        Move("6/5 8/5"),
        Move("8/5, 6/5"),
        Move(Play.parse("8/5 6/5")),
        Move(Position.from_points({6: 4, 8: 2, 5: 2, 13: 5, 24: 2}, {6: 5, 8: 3, 13: 5, 24: 2})),
    ],
)
def test_a_move_is_given_as_play_text_a_play_or_the_resulting_position(move: Move) -> None:
    assert opened().apply(move) == opened().apply(Move("8/5 6/5"))


def test_an_illegal_play_is_refused_naming_the_roll() -> None:
    assert refusal_of(opened(), Move("13/10")) == "that play is not legal for 3-1: 13/10: you must play both dice"
    assert refusal_of(opened(), Move("24/20 8/7")).startswith("that play is not legal for 3-1: ")


def test_a_resulting_position_no_legal_play_leads_to_is_refused() -> None:
    wrong = Position.from_points({6: 5, 8: 3, 13: 5, 24: 1, 18: 1}, {6: 5, 8: 3, 13: 5, 24: 2})
    assert "no legal play leaves the checkers like that" in refusal_of(opened(), Move(wrong))


def test_with_a_legal_play_the_player_must_move() -> None:
    assert refusal_of(opened(), Move(Play())) == "that play is not legal for 3-1: you must play your roll"
    assert refusal_of(opened(), Move(Position.STARTING)).endswith("you must play your roll")


def test_with_no_legal_play_the_empty_move_is_the_only_move() -> None:
    # Player 1 is on the bar against a closed board: 6-6 cannot enter.
    closed = Position.from_points({25: 1, 6: 14}, {1: 2, 2: 2, 3: 2, 4: 2, 5: 2, 6: 2})
    state = MatchState(5, on_roll=1, dice=Dice(6, 6), phase=Phase.MOVE, position=closed)
    assert not state.must_move()
    for empty in (Move(Play()), Move(""), Move(closed)):
        after = state.apply(empty)
        assert (after.on_roll, after.phase, after.position) == (0, Phase.ROLL, closed.swap())
    assert "there is no legal play" in refusal_of(state, Move("bar/19"))


def test_a_hit_needs_no_mark_in_play_text() -> None:
    blot = Position.from_points({6: 5, 8: 3, 13: 5, 24: 2}, {6: 5, 8: 3, 13: 5, 24: 1, 14: 1})
    state = MatchState(5, on_roll=0, dice=Dice(2, 1), phase=Phase.MOVE, position=blot)
    after = state.apply(Move("13/11 6/5"))
    assert after.position[0][24] == 1  # the hit checker is on the opponent's bar


def test_only_the_player_to_act_may_act() -> None:
    assert refusal_of(to_roll(), Double(by=0)) == "it's not your turn to double: player 1 is to act"
    assert to_roll().apply(Double(by=1)).phase is Phase.DOUBLED


# -- doubling --------------------------------------------------------------------------------


def test_either_player_may_double_a_centred_cube_before_rolling() -> None:
    assert to_roll().can_double()
    assert to_roll().apply(Double()).apply(Take()).apply(Roll(Dice(3, 2))).apply(Move("24/21 13/11")).can_double()


def test_you_cannot_double_after_rolling() -> None:
    state = to_roll().apply(Roll(Dice(6, 5)))
    assert refusal_of(state, Double()) == "you can't double after rolling: double before you roll"


def test_you_cannot_double_when_your_opponent_owns_the_cube() -> None:
    state = to_roll().apply(Double()).apply(Take())
    assert state.cube == Cube(2, 0)
    assert refusal_of(state, Double()) == "you can't double: your opponent owns the cube"


def test_the_cube_owner_may_redouble() -> None:
    state = to_roll().apply(Double()).apply(Take()).apply(Roll(Dice(6, 5))).apply(Move("24/13"))
    assert state.on_roll == 0 and state.can_double()
    assert state.apply(Double()).apply(Take()).cube == Cube(4, 1)


def test_a_take_doubles_the_cube_gives_it_to_the_taker_and_the_doubler_rolls() -> None:
    state = to_roll().apply(Double())
    assert (state.phase, state.on_roll, state.turn) == (Phase.DOUBLED, 1, 0)
    taken = state.apply(Take())
    assert (taken.cube, taken.phase, taken.on_roll) == (Cube(2, 0), Phase.ROLL, 1)


def test_a_drop_loses_the_value_of_the_cube_before_the_double() -> None:
    state = to_roll().apply(Double()).apply(Take()).apply(Roll(Dice(6, 5))).apply(Move("24/13"))
    over = state.apply(Double()).apply(Drop())
    assert over.last_result is not None
    assert (over.last_result.winner, over.last_result.points, over.last_result.end) == (0, 2, GameEnd.DROPPED)
    assert over.score == (2, 0)


def test_take_and_drop_need_a_double() -> None:
    assert "no double to take" in refusal_of(to_roll(), Take())
    assert "no double to drop" in refusal_of(to_roll(), Drop())


def test_nobody_rolls_or_redoubles_until_the_double_is_answered() -> None:
    state = to_roll().apply(Double())
    assert "answer the double first" in refusal_of(state, Roll(Dice(1, 2)))
    assert "answer the double first" in refusal_of(state, Double())
    assert state.legal_actions() == (Take, Drop)


def test_no_double_past_max_cube() -> None:
    state = to_roll(max_cube=2).apply(Double()).apply(Take()).apply(Roll(Dice(6, 5))).apply(Move("24/13"))
    assert refusal_of(state, Double()) == "you can't double: the cube is at 2, the limit"


def test_a_match_state_refuses_a_cube_above_its_limit() -> None:
    with pytest.raises(InvalidPositionError, match="above the limit"):
        replace(to_roll(max_cube=2), cube=Cube(4, 0))


# -- beavers ---------------------------------------------------------------------------------


def test_a_beaver_takes_at_twice_the_value_and_redoubles_keeping_the_cube() -> None:
    state = to_roll(0, beaver=True).apply(Double())
    assert state.can_beaver()
    beavered = state.apply(Beaver())
    assert (beavered.phase, beavered.cube, beavered.turn, beavered.on_roll) == (Phase.DOUBLED, Cube(2, 0), 1, 1)
    taken = beavered.apply(Take())
    assert (taken.cube, taken.phase, taken.on_roll) == (Cube(4, 0), Phase.ROLL, 1)
    assert not taken.can_double()


def test_a_dropped_beaver_loses_the_beavered_value() -> None:
    over = to_roll(0, beaver=True).apply(Double()).apply(Beaver()).apply(Drop())
    assert over.last_result is not None
    assert (over.last_result.winner, over.last_result.points) == (0, 2)
    assert over.score == (2, 0)


def test_no_beaver_in_match_play() -> None:
    assert refusal_of(to_roll(5).apply(Double()), Beaver()) == "no beavers in match play"


def test_no_beaver_unless_the_session_allows_it() -> None:
    assert refusal_of(to_roll(0).apply(Double()), Beaver()) == "beavers are not allowed in this session"


def test_a_double_is_beavered_once() -> None:
    beavered = to_roll(0, beaver=True).apply(Double()).apply(Beaver())
    assert "beavered already" in refusal_of(beavered, Beaver())


# -- game ends -------------------------------------------------------------------------------


def test_bearing_off_the_last_checker_wins_a_single_game() -> None:
    over = bearing_off({6: 10}).apply(Move("1/off"))
    assert over.last_result is not None
    assert (over.last_result.winner, over.last_result.kind, over.last_result.points) == (0, SINGLE, 1)
    assert over.last_result.end is GameEnd.PLAYED
    assert (over.phase, over.score, over.on_roll) == (Phase.GAME_OVER, (1, 0), 1)


def test_a_gammon_when_the_loser_has_borne_off_none() -> None:
    over = bearing_off({6: 15}).apply(Move("1/off"))
    assert over.last_result is not None and (over.last_result.kind, over.score) == (GAMMON, (2, 0))


def test_a_backgammon_when_the_loser_still_has_a_checker_on_the_bar() -> None:
    over = bearing_off({6: 14, 25: 1}).apply(Move("1/off"))
    assert over.last_result is not None and (over.last_result.kind, over.score) == (BACKGAMMON, (3, 0))


def test_a_backgammon_when_the_loser_still_has_a_checker_in_the_winners_home_board() -> None:
    # The loser's point 20 is the winner's point 5.
    over = bearing_off({6: 14, 20: 1}).apply(Move("1/off"))
    assert over.last_result is not None and over.last_result.kind == BACKGAMMON


def test_a_gammon_only_when_the_losers_stragglers_are_outside_the_winners_home_board() -> None:
    over = bearing_off({6: 14, 18: 1}).apply(Move("1/off"))
    assert over.last_result is not None and over.last_result.kind == GAMMON


def test_the_cube_multiplies_the_points_of_a_game() -> None:
    over = bearing_off({6: 14, 25: 1}, cube=Cube(4, 1), length=25).apply(Move("1/off"))
    assert over.score == (12, 0)


def test_jacoby_counts_gammons_single_while_the_cube_is_centred() -> None:
    money = MatchOptions(crawford=False, jacoby=True)
    over = bearing_off({6: 15}, length=0, options=money).apply(Move("1/off"))
    assert over.last_result is not None
    assert (over.last_result.kind, over.last_result.points) == (GAMMON, 1)


def test_jacoby_counts_gammons_in_full_once_the_cube_is_turned() -> None:
    money = MatchOptions(crawford=False, jacoby=True)
    over = bearing_off({6: 15}, length=0, options=money, cube=Cube(2, 1)).apply(Move("1/off"))
    assert over.score == (4, 0)


def test_without_jacoby_money_gammons_count_double() -> None:
    over = bearing_off({6: 15}, length=0).apply(Move("1/off"))
    assert over.score == (2, 0)


def test_jacoby_has_no_effect_in_match_play() -> None:
    over = bearing_off({6: 15}, options=MatchOptions(jacoby=True)).apply(Move("1/off"))
    assert over.score == (2, 0)


# -- resignations ----------------------------------------------------------------------------


@pytest.mark.parametrize("points", [SINGLE, GAMMON, BACKGAMMON])
def test_an_accepted_resignation_scores_its_points_times_the_cube(points: int) -> None:
    state = to_roll(25).apply(Double()).apply(Take()).apply(Resign(points))
    assert (state.phase, state.turn, state.resigned) == (Phase.RESIGNED, 0, points)
    over = state.apply(AcceptResign())
    assert over.last_result is not None
    assert (over.last_result.winner, over.last_result.end, over.score) == (0, GameEnd.RESIGNED, (2 * points, 0))


def test_a_refused_resignation_goes_back_to_the_roll_or_the_move() -> None:
    before = to_roll()
    assert before.apply(Resign(GAMMON)).apply(RejectResign()) == before
    rolled = before.apply(Roll(Dice(4, 2)))
    assert rolled.apply(Resign()).apply(RejectResign()) == rolled


def test_a_resignation_under_jacoby_with_a_centred_cube_counts_single() -> None:
    over = to_roll(0, jacoby=True).apply(Resign(BACKGAMMON)).apply(AcceptResign())
    assert over.score == (1, 0)


def test_a_resignation_is_single_gammon_or_backgammon() -> None:
    assert "1 (single), 2 (gammon) or 3 (backgammon)" in refusal_of(to_roll(), Resign(4))


def test_you_cannot_resign_while_answering_a_double() -> None:
    assert "answer the double first" in refusal_of(to_roll().apply(Double()), Resign())


def test_accepting_or_refusing_needs_a_resignation() -> None:
    assert "nobody has offered to resign" in refusal_of(to_roll(), AcceptResign())
    assert "nobody has offered to resign" in refusal_of(to_roll(), RejectResign())


def test_the_game_goes_on_only_after_the_resignation_is_answered() -> None:
    state = to_roll().apply(Roll(Dice(6, 5))).apply(Resign())
    assert "answer the resignation first" in refusal_of(state, Move("24/13"))
    assert state.legal_actions() == (AcceptResign, RejectResign)


# -- Crawford --------------------------------------------------------------------------------


def _win_a_game(state: MatchState, winner: int) -> MatchState:
    """A game ``winner`` wins by one point: he opens, and his opponent resigns a single game."""
    state = state.apply(OpeningRoll(6, 1) if winner == 0 else OpeningRoll(1, 6))
    return state.apply(Move("13/7 8/7")).apply(Resign()).apply(AcceptResign())


def test_the_crawford_game_follows_the_first_game_that_reaches_one_away() -> None:
    state = MatchState.new_match(3)
    state = _win_a_game(state, 1)
    assert (state.score, state.crawford) == ((0, 1), False)
    state = _win_a_game(state, 1)
    assert (state.score, state.crawford, state.post_crawford) == ((0, 2), True, False)
    game = state.apply(OpeningRoll(1, 6)).apply(Move("13/7 8/7"))
    assert game.crawford
    assert refusal_of(game, Double()) == "no doubling in the Crawford game"
    assert not game.can_double()


def test_after_the_crawford_game_doubling_is_allowed_again() -> None:
    state = MatchState.new_match(3)
    for _ in range(2):
        state = _win_a_game(state, 1)
    state = _win_a_game(state, 0)
    assert (state.score, state.crawford, state.post_crawford) == ((1, 2), False, True)
    game = state.apply(OpeningRoll(6, 1)).apply(Move("13/7 8/7"))
    assert game.post_crawford and game.can_double()


def test_no_crawford_game_when_the_rule_is_off() -> None:
    state = MatchState.new_match(3, crawford=False)
    for _ in range(2):
        state = _win_a_game(state, 1)
    assert not state.crawford
    game = state.apply(OpeningRoll(6, 1)).apply(Move("13/7 8/7"))
    assert game.can_double()


def test_reaching_one_away_after_the_crawford_game_starts_no_new_one() -> None:
    state = MatchState.new_match(3)
    for winner in (1, 1, 0):
        state = _win_a_game(state, winner)
    state = _win_a_game(state, 0)
    assert (state.score, state.crawford, state.post_crawford) == ((2, 2), False, True)


def test_a_one_point_match_has_no_crawford_game() -> None:
    state = MatchState.new_match(1).apply(OpeningRoll(3, 1)).apply(Move("8/5 6/5"))
    assert state.can_double() and not state.crawford


# -- match and session ends ------------------------------------------------------------------


def test_the_match_ends_when_a_player_reaches_the_length() -> None:
    state = MatchState.new_match(1)
    over = _win_a_game(state, 1)
    assert (over.phase, over.winner, over.score) == (Phase.MATCH_OVER, 1, (0, 1))
    assert over.legal_actions() == ()
    assert refusal_of(over, OpeningRoll(2, 1)) == "the opening roll starts a game: the match is over"


def test_a_match_keeps_the_real_score_past_the_length() -> None:
    over = bearing_off({6: 15}, cube=Cube(2, 0), score=(4, 0)).apply(Move("1/off"))
    assert (over.phase, over.score, over.winner) == (Phase.MATCH_OVER, (8, 0), 0)
    assert over.match_id_fields().score == (8, 0)


def test_a_money_session_goes_on_game_after_game() -> None:
    over = to_roll(0).apply(Double()).apply(Drop())
    assert over.phase is Phase.GAME_OVER
    assert over.apply(OpeningRoll(5, 3)).game_number == 2


# -- the doubling track ----------------------------------------------------------------------


def test_the_doubling_track_circle_is_the_cube_value_and_its_side_the_owner() -> None:
    assert cube_from_track(1, None) == Cube()
    assert cube_from_track(8, 1) == Cube(8, 1)
    assert track_reading(Cube(64, 0)) == (64, 0)


@pytest.mark.parametrize(("circle", "side"), [(2, None), (1, 0), (3, 1), (128, 0), (4, 2)])
def test_a_place_that_is_not_on_the_doubling_track_is_refused(circle: int, side: int | None) -> None:
    with pytest.raises(InvalidPositionError):
        cube_from_track(circle, side)


def test_every_track_place_round_trips() -> None:
    places = [(1, None)] + [(1 << k, side) for k in range(1, 7) for side in (0, 1)]
    for circle, side in places:
        assert track_reading(cube_from_track(circle, side)) == (circle, side)


def test_a_cube_with_no_place_on_the_track_is_refused() -> None:
    with pytest.raises(InvalidPositionError, match="no place on the doubling track"):
        track_reading(Cube(2, None))


# -- state checks ----------------------------------------------------------------------------


def test_a_match_state_with_contradictory_fields_is_refused() -> None:
    with pytest.raises(InvalidPositionError, match="moves only after rolling"):
        MatchState(5, on_roll=0, phase=Phase.MOVE)
    with pytest.raises(InvalidPositionError, match="no Crawford game in money play"):
        MatchState(0, on_roll=0, phase=Phase.ROLL, crawford=True)


def test_new_match_needs_a_length_of_one_or_more() -> None:
    with pytest.raises(InvalidPositionError, match="new_money_session"):
        MatchState.new_match(0)


# -- random games ----------------------------------------------------------------------------


def _checkers_off(state: MatchState) -> tuple[int, int]:
    """Checkers borne off, by player."""
    assert state.on_roll is not None
    off = state.position.off()
    return (off[0], off[1]) if state.on_roll == 0 else (off[1], off[0])


def _random_action(state: MatchState, rng: random.Random) -> Action:
    """A random legal action, weighted so that most games are played out."""
    kinds = state.legal_actions()
    assert kinds, state
    r = rng.random()
    if state.phase in (Phase.OPENING, Phase.GAME_OVER):
        return OpeningRoll(rng.randint(1, 6), rng.randint(1, 6))
    if state.phase is Phase.ROLL:
        if Double in kinds and r < 0.05:
            return Double()
        if r > 0.995:
            return Resign(rng.choice([SINGLE, GAMMON, BACKGAMMON]))
        return Roll(Dice(rng.randint(1, 6), rng.randint(1, 6)))
    if state.phase is Phase.MOVE:
        if r > 0.995:
            return Resign(rng.choice([SINGLE, GAMMON, BACKGAMMON]))
        results = sorted(state.legal_plays().positions(), key=Position.position_id)
        return Move(rng.choice(results) if results else Play())
    if state.phase is Phase.DOUBLED:
        if Beaver in kinds and r < 0.2:
            return Beaver()
        return Take() if r < 0.7 else Drop()
    return AcceptResign() if r < 0.5 else RejectResign()


def _check_ids_round_trip(state: MatchState) -> None:
    dice = None if state.dice is None else state.dice.sorted()
    again = MatchState.from_gnubg_id(
        state.gnubg_id(),
        crawford=state.options.crawford,
        beaver=state.options.beaver,
        max_cube=state.options.max_cube,
        game_number=state.game_number,
    )
    # The IDs hold the dice high first, and only a finished game's result.
    expected = replace(state, dice=dice, last_result=state.last_result if state.is_over() else None)
    assert again == expected
    if state.phase in (Phase.ROLL, Phase.MOVE, Phase.DOUBLED):
        assert MatchState.from_xgid(state.xgid(), crawford=state.options.crawford).xgid() == state.xgid()


def _play(state: MatchState, rng: random.Random, max_games: int) -> dict[str, int]:
    """Play random legal actions, checking the invariants after each; return what happened."""
    seen: dict[str, int] = {}
    off = (0, 0)
    crawford_games_doubled = 0
    while state.phase is not Phase.MATCH_OVER and state.game_number <= max_games:
        action = _random_action(state, rng)
        before = state
        state = state.apply(action)
        seen[type(action).__name__] = seen.get(type(action).__name__, 0) + 1
        # Illegal actions change nothing: the state is a value.
        for probe in (Double(), Take(), Beaver(), Roll(Dice(1, 1)), AcceptResign()):
            if not before.is_legal(probe):
                assert before.refusal(probe)
        if before.crawford and not before.is_over():
            assert not before.can_double()
            crawford_games_doubled += isinstance(action, Double)
        if state.is_over() and not before.is_over():
            result = state.last_result
            assert result is not None
            gained = (state.score[0] - before.score[0], state.score[1] - before.score[1])
            assert gained[result.winner] == result.points and gained[1 - result.winner] == 0
            allowed = (
                {before.cube.value}
                if result.end is GameEnd.DROPPED
                else {before.cube.value * k for k in (SINGLE, GAMMON, BACKGAMMON)}
            )
            assert result.points in allowed
            seen[f"end {result.end.value} {result.kind}"] = seen.get(f"end {result.end.value} {result.kind}", 0) + 1
            if state.crawford:
                seen["crawford game"] = seen.get("crawford game", 0) + 1
        else:
            assert state.score == before.score
        if state.on_roll is not None and state.phase is not Phase.OPENING:
            now = _checkers_off(state)
            if not before.is_over() and before.phase is not Phase.OPENING:
                assert now[0] >= off[0] and now[1] >= off[1], "borne-off checkers never come back"
            off = now
            on_board = (CHECKERS - now[0], CHECKERS - now[1])
            assert all(0 <= n <= CHECKERS for n in on_board)
        else:
            off = (0, 0)
        if state.length:
            assert (state.phase is Phase.MATCH_OVER) == (max(state.score) >= state.length)
        else:
            assert state.phase is not Phase.MATCH_OVER
        _check_ids_round_trip(state)
    assert crawford_games_doubled == 0
    if state.phase is Phase.MATCH_OVER:
        assert state.legal_actions() == ()
        assert state.winner is not None and state.score[state.winner] >= state.length
    return seen


@pytest.mark.parametrize("seed", range(12))
def test_random_matches_keep_the_rules(seed: int) -> None:
    rng = random.Random(seed)
    state = MatchState.new_match(rng.choice([1, 3, 5, 7]), crawford=seed % 4 != 3)
    seen = _play(state, rng, max_games=40)
    assert seen["Move"] > 0


@pytest.mark.parametrize("seed", range(8))
def test_random_money_sessions_keep_the_rules(seed: int) -> None:
    rng = random.Random(1000 + seed)
    state = MatchState.new_money_session(jacoby=seed % 2 == 0, beaver=seed % 3 != 0, max_cube=None if seed % 4 else 8)
    seen = _play(state, rng, max_games=4)
    assert seen["Move"] > 0


def test_random_games_reach_every_kind_of_ending() -> None:
    totals: dict[str, int] = {}
    for seed in range(20):
        rng = random.Random(5000 + seed)
        start = MatchState.new_money_session(beaver=True) if seed % 2 else MatchState.new_match(5)
        for key, n in _play(start, rng, max_games=3).items():
            totals[key] = totals.get(key, 0) + n
    for key in ("end played out 1", "end dropped 1", "end resigned 1", "Beaver", "Take", "RejectResign"):
        assert totals.get(key, 0) > 0, (key, totals)


def test_states_found_in_play_match_gnubgs_game_states() -> None:
    state = to_roll().apply(Double()).apply(Drop())
    assert state.match_id_fields().game_state is GameState.DROPPED
