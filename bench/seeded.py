# SPDX-License-Identifier: MIT
"""Seeded position sets shared by the oracle cross-checks and the engine benchmark.

Three kinds, all reproducible from a seed:

- positions met in random self-play from the starting position (real game flow),
- bar-heavy positions (checkers of both sides on the bar, entry against made points),
- bear-off positions (most checkers home, some borne off, the odd straggler).
"""

from __future__ import annotations

import random

from engine.dice import ALL_21, Dice
from engine.movegen import legal_plays
from engine.position import Position


def self_play(rng: random.Random, count: int) -> list[Position]:
    """``count`` positions from games of random legal plays, each seen from the side on roll."""
    out: list[Position] = []
    while len(out) < count:
        position = Position.STARTING
        while len(out) < count:
            out.append(position)
            dice = Dice(rng.randint(1, 6), rng.randint(1, 6))
            # Sorted, so the set does not depend on the order the generator finds results in.
            results = sorted(legal_plays(position, dice).position_list())
            if results:
                position = rng.choice(results)
            if position.is_game_over():
                break
            position = position.swap()
    return out


def _random_half(rng: random.Random, slots: list[int]) -> list[int]:
    half = [0] * 25
    for _ in range(rng.randint(1, 15)):
        half[rng.choice(slots)] += 1
    return half


def synthetic(rng: random.Random, count: int, kind: str) -> list[Position]:
    """``count`` random positions of ``kind`` ``"bar"`` or ``"bearoff"`` (both sides legal)."""
    if kind == "bar":
        slots = [24] * 4 + list(range(24)) + list(range(18, 24)) * 2
        other = list(range(24)) + list(range(6)) * 3 + [24] * 2
    elif kind == "bearoff":
        slots = list(range(6)) * 12 + list(range(6, 25))
        other = list(range(25)) + list(range(6)) * 4
    else:
        raise ValueError(f"unknown kind {kind!r}")
    out: list[Position] = []
    while len(out) < count:
        mover = _random_half(rng, slots)
        opponent = _random_half(rng, other)
        if any(mover[i] and opponent[23 - i] for i in range(24)):
            continue
        out.append(Position(mover, opponent))
    return out


def spread(rng: random.Random, count: int) -> list[Position]:
    """Worst cases for doubles: one side spread over 8-15 points, the other a few blots.

    These give the largest numbers of distinct results (over a thousand for some doubles).
    """
    out: list[Position] = []
    while len(out) < count:
        mover = [0] * 25
        points = rng.sample(range(24), rng.randint(8, 15))
        for i in points:
            mover[i] += 1
        while sum(mover) < 15:
            mover[rng.choice(points)] += 1
        opponent = [0] * 25
        free = [j for j in range(24) if not mover[23 - j]]
        for j in rng.sample(free, min(len(free), rng.randint(0, 6))):
            opponent[j] = 1
        opponent[24] = 15 - sum(opponent) if rng.random() < 0.3 else 0
        out.append(Position(mover, opponent))
    return out


def positions(count: int = 20_000, seed: int = 2026) -> list[Position]:
    """The mix used by the cross-checks: 60% self-play, 20% bar-heavy, 20% bear-off."""
    rng = random.Random(seed)
    n_bar = n_off = count // 5
    mix = self_play(rng, count - n_bar - n_off) + synthetic(rng, n_bar, "bar") + synthetic(rng, n_off, "bearoff")
    rng.shuffle(mix)
    return mix


def pairs(count: int = 20_000, seed: int = 2026) -> list[tuple[Position, Dice]]:
    """``count`` (position, roll) pairs: the positions above, each with a roll drawn by weight."""
    rng = random.Random(seed + 1)
    rolls = [dice for dice, weight in ALL_21 for _ in range(weight)]
    out = []
    for position in positions(count, seed):
        dice = rng.choice(rolls)
        # Rolled order matters to nothing but the notation; draw it too.
        out.append((position, dice if rng.random() < 0.5 else Dice(dice.second, dice.first)))
    return out
