# SPDX-License-Identifier: MIT
"""Invariants of positions, plays and IDs over random positions (Hypothesis)."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.dice import Dice
from engine.judge import judge
from engine.movegen import legal_plays
from engine.play import Play
from engine.position import CHECKERS, Position


@st.composite
def positions(draw: st.DrawFn) -> Position:
    """Any legal layout: up to 15 checkers a side, never both sides on one point."""
    mover = [0] * 25
    opponent = [0] * 25
    for half, other in ((mover, opponent), (opponent, mover)):
        for _ in range(draw(st.integers(0, CHECKERS))):
            spot = draw(st.integers(0, 24))
            if spot < 24 and other[23 - spot]:
                continue
            half[spot] += 1
    return Position(mover, opponent)


dice = st.builds(Dice, st.integers(1, 6), st.integers(1, 6))


@given(positions())
def test_swapping_twice_gives_the_same_position(p: Position) -> None:
    assert p.swap().swap() == p
    assert p.swap().pips() == p.pips()[::-1]


@given(positions())
def test_position_id_round_trips(p: Position) -> None:
    pid = p.position_id()
    assert len(pid) == 14
    assert Position.from_id(pid) == p
    assert eval(repr(p)) == p


@given(positions())
def test_absolute_numbering_round_trips_for_both_players(p: Position) -> None:
    for on_roll in (1, 2):
        points, bar, off = p.to_absolute(on_roll)
        assert Position.from_absolute(points, bar, on_roll) == p
        assert sum(abs(n) for n in points) + sum(bar) + sum(off) == 2 * CHECKERS


@settings(max_examples=300, deadline=None)
@given(positions(), dice)
def test_every_result_keeps_fifteen_checkers_and_moves_forward(p: Position, roll: Dice) -> None:
    plays = legal_plays(p, roll)
    for after, play in plays.results.items():
        assert sum(after[0]) + after.off()[0] == CHECKERS
        assert sum(after[1]) + after.off()[1] == CHECKERS
        assert len(play) == plays.dice_used
        drop = p.pips()[0] - after.pips()[0]
        if after.off()[0] == p.off()[0]:
            # Without bearing off, the pips moved are exactly the dice used.
            assert drop == sum(s.source - s.dest for s in play)
            played = Counter(s.source - s.dest for s in play)
            assert not played - Counter(roll.moves)


@settings(max_examples=200, deadline=None)
@given(positions(), dice)
def test_canonical_text_reads_back_to_the_same_play(p: Position, roll: Dice) -> None:
    plays = legal_plays(p, roll)
    for after, play in list(plays.results.items())[:40]:
        assert plays.parse(str(play)) == (after, play)
        assert Play.parse(str(play)) == Play(Play.parse(str(play)))
        assert judge(p, roll, after).verdict == "legal"


@settings(max_examples=200, deadline=None)
@given(positions(), dice)
def test_the_judge_never_calls_a_legal_result_illegal_and_never_a_foreign_one_legal(p: Position, roll: Dice) -> None:
    plays = legal_plays(p, roll)
    other = Dice(roll.first % 6 + 1, roll.second)
    for after in sorted(legal_plays(p, other).positions() - plays.positions())[:12]:
        verdict = judge(p, roll, after)
        assert verdict.verdict in ("partial", "illegal")
        if verdict.verdict == "illegal":
            assert verdict.reasons
            assert verdict.nearest
