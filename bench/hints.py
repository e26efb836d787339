# SPDX-License-Identifier: MIT
"""Hint latency from the gnubg subprocess (``engine.hints.GnubgHints``), the process already running.

Run from the project root::

    python bench/hints.py [--count 200] [--count-2ply 40] [--count-opponent 40] [--seed 2026] [--json]

Starts gnubg once (and prints how long that took), then times ``plays`` at 0-ply and at 2-ply
and ``cube`` at 0-ply and 2-ply, and gnubg's decisions as a player (:mod:`engine.opponent`: its
move at each level, and whether it doubles) on varied positions (random self-play, bar-heavy and bear-off
positions from :mod:`bench.seeded`), one request at a time, end to end: the request written,
gnubg's answer read, parsed and every play checked against the legal plays. Prints the median
and the 95th percentile in milliseconds. The goal for a 0-ply hint is under 50 ms.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.seeded import pairs
from engine.hints import GnubgHints
from engine.match import MatchState, Phase
from engine.opponent import LEVELS, GnubgOpponent
from engine.position import Position


def _percentile(sorted_values: list[float], fraction: float) -> float:
    return sorted_values[min(len(sorted_values) - 1, int(len(sorted_values) * fraction))]


def _time(calls: list[Callable[[], object]]) -> dict[str, float]:
    times = []
    for call in calls:
        started = time.perf_counter()
        call()
        times.append((time.perf_counter() - started) * 1000)
    times.sort()
    return {"n": len(times), "median_ms": _percentile(times, 0.5), "p95_ms": _percentile(times, 0.95)}


def _before_roll(position: Position) -> MatchState | None:
    """The position as a money game about to roll, if a cube decision makes sense there."""
    if position.is_game_over() or min(position.off()) == 15:
        return None
    return MatchState(0, on_roll=0, phase=Phase.ROLL, position=position)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=200, help="0-ply requests of each kind")
    parser.add_argument("--count-2ply", type=int, default=40, help="2-ply requests of each kind")
    parser.add_argument("--count-opponent", type=int, default=40, help="gnubg's decisions as a player, per level")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)

    cases = pairs(args.count, args.seed)
    deep = cases[:: max(1, len(cases) // args.count_2ply)][: args.count_2ply]
    before = [s for s in (_before_roll(p) for p, _ in cases) if s is not None]
    hints = GnubgHints(timeout=120.0)
    try:
        hints.start()
        # One request of each kind first, so the lines that set the depth are not timed alone.
        hints.plays(*cases[0])
        results = {
            "plays_0ply": _time([lambda p=p, d=d: hints.plays(p, d, ply=0) for p, d in cases]),
            "plays_2ply": _time([lambda p=p, d=d: hints.plays(p, d, ply=2) for p, d in deep]),
            "cube_0ply": _time([lambda s=s: hints.cube(s, ply=0) for s in before]),
            "cube_2ply": _time([lambda s=s: hints.cube(s, ply=2) for s in before[: args.count_2ply]]),
        }
        moving = [
            MatchState(0, on_roll=0, phase=Phase.MOVE, dice=d, position=p)
            for p, d in cases[: args.count_opponent]
            if not p.is_game_over()
        ]
        for level in LEVELS:
            gnubg = GnubgOpponent(hints, 0, level)
            results[f"move_{level}"] = _time([lambda s=s, g=gnubg: g.move(s) for s in moving])
        expert = GnubgOpponent(hints, 0)
        results["before_roll"] = _time([lambda s=s: expert.before_roll(s) for s in before[: args.count_opponent]])
        start_ms = (hints.start_seconds or 0.0) * 1000
    finally:
        hints.close()
    machine = f"{platform.machine()}, {platform.python_implementation()} {platform.python_version()}"
    if args.json:
        print(json.dumps({"start_ms": start_ms, "machine": machine, **results}))
        return 0
    print(f"gnubg subprocess start: {start_ms:.0f} ms ({machine})")
    for name, r in results.items():
        print(f"{name:<18} n={r['n']:<4} median {r['median_ms']:7.1f} ms   p95 {r['p95_ms']:7.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
