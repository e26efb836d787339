# SPDX-License-Identifier: MIT
"""The move generator, the notation and the Position ID against GNU Backgammon.

20,000 seeded positions (60% from random self-play, 20% bar-heavy, 20% bear-off; see
``bench/seeded.py``) with all 21 rolls each must give exactly gnubg's sets of resulting
positions (``gnubg_nn.moves``, gnubg's own C generator). On part of them every canonical play
must be written exactly as gnubg writes it, and read back to the same result. Position IDs
must equal gnubg's for every position.
"""

from __future__ import annotations

import gnubg
import gnubg_nn
import pytest

from bench.seeded import positions
from engine.dice import ALL_21, Dice
from engine.movegen import legal_plays
from engine.position import Position

pytestmark = pytest.mark.oracle

COUNT = 20_000
CHUNKS = 10
_POSITIONS = positions(COUNT, seed=2026)


def _board(position: Position) -> list[list[int]]:
    return [list(position[1]), list(position[0])]


def _theirs(board: list[list[int]], dice: Dice) -> set[tuple[tuple[int, ...], tuple[int, ...]]]:
    out = set()
    for key in gnubg_nn.moves(board, dice.first, dice.second):
        opponent, mover = gnubg_nn.board_from_position_key(key)
        out.add((tuple(mover), tuple(opponent)))
    return out


def test_the_seeded_set_holds_bar_and_bear_off_positions() -> None:
    assert len(_POSITIONS) == COUNT
    assert sum(1 for p in _POSITIONS if p.bar()[0]) > COUNT // 10
    assert sum(1 for p in _POSITIONS if p.can_bear_off()) > COUNT // 10


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_legal_results_equal_gnubgs_for_all_21_rolls(chunk: int) -> None:
    size = COUNT // CHUNKS
    mismatches = []
    cases = 0
    for position in _POSITIONS[chunk * size : (chunk + 1) * size]:
        board = _board(position)
        for dice, _ in ALL_21:
            ours = legal_plays(position, dice).positions()
            theirs = _theirs(board, dice)
            cases += 1
            if ours != theirs:
                mismatches.append(f"{position.position_id()} {dice}: {len(ours)} ours, {len(theirs)} gnubg's")
    assert cases == size * 21
    assert not mismatches, mismatches[:10]


def test_rolled_order_does_not_change_the_results() -> None:
    for position in _POSITIONS[:2000]:
        for dice, _ in ALL_21:
            if not dice.is_double:
                swapped = Dice(dice.second, dice.first)
                assert legal_plays(position, dice).positions() == legal_plays(position, swapped).positions()


def test_position_ids_equal_gnubgs() -> None:
    for position in _POSITIONS:
        pid = position.position_id()
        assert pid == gnubg_nn.position_id(_board(position))
        assert Position.from_id(pid) == position


@pytest.mark.parametrize("chunk", range(2))
def test_canonical_plays_are_written_as_gnubg_writes_them(chunk: int) -> None:
    """gnubg's move for each result, formatted by gnubg, equals our canonical play."""
    checked = 0
    for position in _POSITIONS[chunk * 600 : (chunk + 1) * 600]:
        board = _board(position)
        for dice, _ in ALL_21:
            ours = legal_plays(position, dice)
            by_key = {}
            for after, play in ours.results.items():
                by_key[after] = play
            for key, move in gnubg_nn.moves(board, dice.first, dice.second, 1):
                opponent, mover = gnubg_nn.board_from_position_key(key)
                after = Position(mover, opponent)
                flat = tuple(point for step in move for point in step)
                text = gnubg.movetupletostring(flat, board)
                assert str(by_key[after]) == text, (position.position_id(), dice, text)
                # Reading gnubg's text back finds the same result and play.
                assert ours.parse(text) == (after, by_key[after])
                checked += 1
    assert checked > 50_000
