# SPDX-License-Identifier: MIT
"""gnubg as a player (:mod:`engine.opponent`), against the real gnubg.

At the expert level (0-ply, no noise) its move must be gnubg's own best 0-ply play from
``hint``; its cube decisions must be those of gnubg's cube hint; the weaker levels must play
legal moves that, with their noise, sometimes differ from the expert's. The process it shares
with the hints must give noiseless hints afterwards.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from engine.dice import Dice
from engine.hints import INSTALL_HINT, GnubgHints, find_gnubg
from engine.match import Double, MatchState, Move, OpeningRoll, Phase, Resign, Roll
from engine.opponent import LEVELS, Decision, GnubgOpponent, level_named
from engine.play import Play
from engine.position import Position

#: From corpus matches (bglab), each before a roll: gnubg's own cube hint says so.
NO_DOUBLE = "4PPgASjgc/ABMA:cAngAAAAAAAE"
DOUBLE_TAKE = "bPcJwACxPc8AAA:cAngAAAAAAAE"
DOUBLE_PASS = "4NvgAFhmHvARIA:cAngAEAAAAAE"


@pytest.fixture(scope="module")
def gnubg() -> Iterator[GnubgHints]:
    if find_gnubg() is None:
        pytest.fail(INSTALL_HINT)
    engine = GnubgHints(timeout=120.0)
    yield engine
    engine.close()


def random_states(count: int, seed: int) -> list[MatchState]:
    """States waiting for a move, from random games of a 7-point match (random dice and plays)."""
    rng = random.Random(seed)
    out: list[MatchState] = []
    while len(out) < count:
        first, second = rng.sample(range(1, 7), 2)
        state = MatchState.new_match(7).apply(OpeningRoll(first, second))
        for _ in range(rng.randint(0, 30)):
            if state.phase is Phase.ROLL:
                state = state.apply(Roll(Dice(rng.randint(1, 6), rng.randint(1, 6))))
            if state.phase is not Phase.MOVE:
                break
            plays = list(state.legal_plays())
            state = state.apply(Move(rng.choice(plays) if plays else Play()))
        if state.phase is Phase.ROLL:
            state = state.apply(Roll(Dice(rng.randint(1, 6), rng.randint(1, 6))))
        if state.phase is Phase.MOVE and len(state.legal_plays()) > 1:
            out.append(state)
    return out


def test_the_levels_are_gnubgs_own() -> None:
    assert [(level.name, level.plies, level.noise) for level in LEVELS.values()] == [
        ("beginner", 0, 0.060),
        ("intermediate", 0, 0.040),
        ("advanced", 0, 0.015),
        ("expert", 0, 0.0),
        ("world-class", 2, 0.0),
    ]
    assert level_named("World Class") is LEVELS["world-class"]
    with pytest.raises(ValueError, match="the levels are beginner, intermediate"):
        level_named("grandmaster")


def test_expert_plays_gnubgs_best_0_ply_play(gnubg: GnubgHints) -> None:
    states = random_states(12, seed=3)
    for state in states:
        assert state.on_roll is not None
        decision = GnubgOpponent(gnubg, state.on_roll, "expert").move(state)
        best = gnubg.plays(state, ply=0, n=1)[0]
        assert decision.play is not None and decision.resign == 0
        assert state.apply(Move(decision.play)).position == state.apply(Move(best.play)).position, state.gnubg_id()


def test_the_beginner_plays_legal_moves_and_its_noise_shows(gnubg: GnubgHints) -> None:
    states = random_states(20, seed=5)
    differ = 0
    for state in states:
        assert state.on_roll is not None
        beginner = GnubgOpponent(gnubg, state.on_roll, "beginner").move(state)
        expert = GnubgOpponent(gnubg, state.on_roll, "expert").move(state)
        assert beginner.play is not None and beginner.play in state.legal_plays()
        # Deterministic noise: the same position is played the same way again.
        assert GnubgOpponent(gnubg, state.on_roll, "beginner").move(state) == beginner
        differ += beginner.play != expert.play
    assert differ >= 2
    # The noise stays with the player: hints from the same process are noiseless.
    state = states[0]
    assert state.on_roll is not None
    assert gnubg.plays(state, ply=0, n=1)[0].play == GnubgOpponent(gnubg, state.on_roll).move(state).play


def test_world_class_plays_a_legal_move(gnubg: GnubgHints) -> None:
    state = random_states(1, seed=11)[0]
    assert state.on_roll is not None
    decision = GnubgOpponent(gnubg, state.on_roll, "world-class").move(state)
    assert decision.play is not None and decision.play in state.legal_plays()


@pytest.mark.parametrize(
    ("gnubgid", "doubles", "takes"), [(NO_DOUBLE, False, None), (DOUBLE_TAKE, True, True), (DOUBLE_PASS, True, False)]
)
def test_cube_decisions_are_gnubgs_cube_hint(
    gnubg: GnubgHints, gnubgid: str, doubles: bool, takes: bool | None
) -> None:
    state = MatchState.from_gnubg_id(gnubgid)
    assert state.phase is Phase.ROLL and state.on_roll is not None
    advice = gnubg.cube(state)
    assert advice.double == doubles
    assert GnubgOpponent(gnubg, state.on_roll).before_roll(state) == Decision(double=doubles)
    if takes is not None:
        doubled = state.apply(Double())
        taker = GnubgOpponent(gnubg, 1 - state.on_roll)
        assert taker.takes(doubled) is takes is advice.take


def test_gnubg_answers_a_resignation(gnubg: GnubgHints) -> None:
    # Player 0 (on roll) has all 15 checkers on gnubg's 2-point behind its closed board: gnubg
    # wins a backgammon most of the time.
    mover = [0] * 25
    mover[22] = 15
    opponent = [3, 0, 3, 3, 3, 3] + [0] * 19
    state = MatchState(0, on_roll=0, phase=Phase.ROLL, position=Position(mover, opponent))
    gnubg_player = GnubgOpponent(gnubg, 1)
    assert gnubg_player.accepts(state.apply(Resign(3))) is True
    assert gnubg_player.accepts(state.apply(Resign(1))) is False
    # The other way round, a resignation is a gift.
    leading = MatchState.from_gnubg_id(DOUBLE_PASS)
    assert leading.on_roll is not None
    assert GnubgOpponent(gnubg, 1 - leading.on_roll).accepts(leading.apply(Resign(1))) is True


def test_not_its_turn_is_refused(gnubg: GnubgHints) -> None:
    state = random_states(1, seed=2)[0]
    assert state.on_roll is not None
    with pytest.raises(ValueError, match="not gnubg's move"):
        GnubgOpponent(gnubg, 1 - state.on_roll).move(state)
    with pytest.raises(ValueError, match="0 or 1"):
        GnubgOpponent(gnubg, 2)
