# SPDX-License-Identifier: MIT
"""Table figures: games refereed from rendered camera frames, and the latency.

Run from the project root::

    .venv/bin/python bench/table.py [--game demo|random|both] [--seed 1] [--moves 60]
                                    [--fps 5] [--noise 2] [--json]

``--game demo`` (the default) plays the demo's real game as ``bgboard demo`` does
(:mod:`bgboard.sim.simulation`: a 3-point match decided in one game, two doubles taken, one move
first played wrong) on its board under a lamp with glare. ``--game random`` plays a seeded
game between two simple players on one random board style, camera and lamp (the cube left
alone). Either way every turn is filmed:

- the roll: a few frames with a hand over the board, then still frames of the two dice lying
  flat on the roller's right-hand half (the opening roll: one die on each side);
- the move: hand frames while the checkers are moved, then still frames of the result with
  the dice picked up.

The frames go through :class:`bgboard.table.Table` on an injected clock (``--fps``), with a
fake LED panel. Each still frame gets fresh sensor noise (``--noise``, grey levels), as a real
camera's frames never repeat exactly. Figures:

- moves (and rolls, and cube actions) recorded right from the camera alone; flagged for
  checking (please-check, illegal, re-roll, not-moved events); wrong ones accepted (goal:
  zero); missed ones (nothing said at all). A flagged or misread turn is resolved as the
  players would at the console, so the game goes on.
- latency after a move: from the first still frame to the new LED scene, the processing time
  (median and p95; goal 100 ms median on one core) and the frame time waited (which includes
  the gate's and the controller's settle times).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bgboard.config import Config
from bgboard.events import Event
from bgboard.sim.simulation import (
    FLAGS,
    HAND_FRAMES,
    DemoGame,
    Film,
    SimulationError,
    Tally,
    board_scene,
    demo_record,
    rolling_half,
    settle_roll,
)
from bgboard.store import MatchStore
from bgboard.table import Latency, Table
from engine.dice import Dice
from engine.match import MatchState, Move, OpeningRoll, Phase, Roll
from engine.movegen import legal_plays
from engine.position import Position
from hardware.panels import FakeLedPanel
from vision.calibration import calibrate
from vision.reader import BoardReader
from vision.render import DieSpec, random_setup, render


def _ms(values: list[float], q: float) -> float | None:
    """The ``q`` quantile of ``values`` in milliseconds (None without values)."""
    if not values:
        return None
    if len(values) == 1:
        return 1e3 * values[0]
    return 1e3 * statistics.quantiles(values, n=100, method="inclusive")[round(q * 100) - 1]


def _pick(rng: random.Random, state: MatchState) -> Position:
    """A simulated player's play: hit or make a point when he can, else anything legal."""
    results = sorted(legal_plays(state.position, state.dice or Dice(1, 1)).positions())
    if not results:
        return state.position
    opponent_bar = state.position.bar()[1]

    def score(after: Position) -> float:
        made = sum(1 for n in after[0][:24] if n >= 2)
        blots = sum(1 for n in after[0][:24] if n == 1)
        return 2.0 * (after.bar()[1] - opponent_bar) + made - 0.5 * blots + rng.random()

    return max(results, key=score)


def _kinds(events: list[Event]) -> list[str]:
    return [e.kind for e in events]


def play_game(seed: int, moves: int, fps: float, noise: float, log: list[str]) -> dict[str, object]:
    """Play and film one game (at most ``moves`` moves); returns the figures."""
    rng = random.Random(seed)
    style, camera, lighting = random_setup(np.random.default_rng(seed))
    start = board_scene(Position.STARTING, 1)
    shot = render(start, style=style, camera=camera, lighting=lighting, seed=seed)
    reader = BoardReader(calibrate(shot.image, shot.corners, die_fraction=style.die_fraction))
    panel = FakeLedPanel()
    table = Table.from_config(Config(), reader, state=MatchState.new_match(5), panel=panel)
    controller = table.controller
    film = Film(style, camera, lighting, table, step=1.0 / fps, noise=noise, seed=seed)
    truth = MatchState.new_match(5)
    rolls, plays = Tally(), Tally()
    move_latencies: list[Latency] = []
    roll_latencies: list[Latency] = []
    stopped: str | None = None
    board = start
    played = 0

    def note(text: str) -> None:
        # What the reader last saw explains most misses: an occluded board is taken for motion.
        seen = table.last_reading
        if seen is not None:
            dice = " ".join(f"{d.value}{d.half[0]}{'' if d.flat else 'c'}:{d.confidence:.2f}" for d in seen.dice)
            text += f"  [last read: occluded={seen.occluded} confidence={seen.confidence:.2f} dice={dice or '-'}]"
        log.append(f"t={film.t:7.1f}s  {text}")

    def typed(text: str) -> list[Event]:
        """A line the players type at the console."""
        return table.command(text, film.t)

    def count_roll(events: list[Event], wanted: MatchState, fix: str) -> bool:
        """Count a roll against the truth and set the controller right; False if it cannot be."""
        try:
            outcome = settle_roll(rolls, events, controller, wanted, fix, typed)
        except SimulationError as exc:
            note(str(exc))
            return False
        recorded = [e for e in events if isinstance(e.action, (Roll, OpeningRoll))]
        if outcome == "wrong":
            note(f"WRONG roll accepted: {recorded[-1].text}; truth {fix}")
        elif outcome != "right":
            note(f"roll {outcome}: {_kinds(events)}; truth {fix}")
        return True

    # The opening roll: one die each on his own right-hand side.
    while truth.phase is Phase.OPENING:
        d0, d1 = rng.randint(1, 6), rng.randint(1, 6)
        dice = tuple(DieSpec(d, half=rolling_half(controller.seat(p))) for p, d in ((0, d0), (1, d1)))
        events = film.hands(board)
        before = len(table.stats.latencies)
        events += film.still(board_scene(Position.STARTING, 1, dice))
        roll_latencies += table.stats.latencies[before:]
        if d0 == d1:
            if "opening-tie" not in _kinds(events):
                note(f"opening tie {d0}-{d1} not seen: {_kinds(events)}")
            continue
        truth = truth.apply(OpeningRoll(d0, d1))
        bottom, top = (d0, d1) if controller.seat(0) == 1 else (d1, d0)
        if not count_roll(events, truth, f"dice {bottom}{top}"):
            stopped = "the opening roll could not be given"
        else:
            truth = controller.state
        break

    while stopped is None and not truth.is_over() and played < moves:
        mover = truth.on_roll
        assert mover is not None
        seat = controller.seat(mover)
        right = rolling_half(seat)
        if truth.phase is Phase.ROLL:
            roll = Dice(rng.randint(1, 6), rng.randint(1, 6))
            dice = (DieSpec(roll.first, half=right), DieSpec(roll.second, half=right))
            events = film.hands(board)
            before = len(table.stats.latencies)
            events += film.still(board_scene(truth.position, seat, dice))
            roll_latencies += table.stats.latencies[before:]
            truth = truth.apply(Roll(roll))
            if not count_roll(events, truth, f"dice {roll.first}{roll.second}"):
                stopped = f"the roll {roll} could not be given"
                break
            truth = controller.state
        if truth.phase is not Phase.MOVE or controller.state.phase is not Phase.MOVE:
            stopped = f"unexpected phases: truth {truth.phase.value}, controller {controller.state.phase.value}"
            break
        assert truth.dice is not None
        legal = legal_plays(truth.position, truth.dice)
        after = _pick(rng, truth)
        play = legal.play_for(after)
        text = (str(play) or "no move") if play is not None else after.position_id()
        # The hand passes over the board as it was, then as it is left.
        events = film.hands(board_scene(truth.position, seat), 1)
        events += film.hands(board_scene(after, seat), HAND_FRAMES - 1)
        board = board_scene(after, seat)
        before = len(table.stats.latencies)
        events += film.still(board)
        latencies = table.stats.latencies[before:]
        truth = truth.apply(Move(after))
        played += 1
        kinds = _kinds(events)
        recorded = [e for e in events if isinstance(e.action, Move)]
        if after == legal.position and not recorded:
            # A dance or a blocked roll: nothing moves, so the player says so with the button.
            more = table.button("done", film.t)
            events += more
            kinds += _kinds(more)
            recorded += [e for e in more if isinstance(e.action, Move)]
        plays.kinds.update(kinds)
        flagged = any(k in FLAGS for k in kinds)
        if recorded:
            move_latencies += latencies
        outcome = plays.count(bool(recorded), controller.state == truth, flagged)
        if outcome == "wrong":
            note(f"WRONG move accepted: {recorded[-1].text}; truth {text}")
        elif outcome == "flagged":
            note(f"move {played} flagged: {kinds} {[e.text for e in events if e.kind in FLAGS][:1]}; truth {text}")
        elif outcome == "missed":
            note(f"move {played} missed: {kinds}; truth {text}")
        if controller.state != truth:
            # The players give the right move: the board after it, seen from the mover.
            if play:
                answer = table.command(f"correct {play}", film.t)
            else:
                # No play text to type (no legal move): the players give the board itself.
                answer = controller.correct(after, film.t)
                table.show()
            if controller.state != truth:
                stopped = f"the controller refused the correction {text}: {[e.text for e in answer]}"
                break

    lat_wall = [x.wall for x in move_latencies]
    lat_wait = [x.waited for x in move_latencies]
    roll_wall = [x.wall for x in roll_latencies]
    summary = table.stats.summary()
    return {
        "game": "random",
        "seed": seed,
        "fps": fps,
        "noise": noise,
        "style": style.name,
        "moves": plays.total,
        "moves_right": plays.right,
        "moves_flagged": plays.flagged,
        "moves_wrong_accepted": plays.wrong,
        "moves_missed": plays.missed,
        "rolls": rolls.total,
        "rolls_right": rolls.right,
        "rolls_flagged": rolls.flagged,
        "rolls_wrong_accepted": rolls.wrong,
        "rolls_missed": rolls.missed,
        "move_events": dict(plays.kinds),
        "roll_events": dict(rolls.kinds),
        "move_latency_ms_median": _ms(lat_wall, 0.5),
        "move_latency_ms_p95": _ms(lat_wall, 0.95),
        "move_wait_ms_median": _ms(lat_wait, 0.5),
        "move_wait_ms_p95": _ms(lat_wait, 0.95),
        "move_latencies": len(move_latencies),
        "roll_latency_ms_median": _ms(roll_wall, 0.5),
        "roll_latency_ms_p95": _ms(roll_wall, 0.95),
        "game_over": truth.is_over(),
        "stopped": stopped,
        "table": summary,
        "panel_scenes": len(panel.scenes),
    }


def play_demo(seed: int, fps: float, noise: float) -> dict[str, object]:
    """The demo's real game (``bgboard demo``) at its rendered table; returns the figures."""
    with MatchStore(":memory:") as store:
        game = DemoGame(demo_record(), 0, store=store, panel=FakeLedPanel(), seed=seed, fps=fps, noise=noise)
        report = game.play()
    walls = [x.wall for x in report.move_latencies]
    waits = [x.waited for x in report.move_latencies]
    rolls = [x.wall for x in report.roll_latencies]
    figures: dict[str, object] = {"game": "demo", "seed": seed, "fps": fps, "noise": noise, "style": "classic"}
    for kind, tally in (("moves", report.moves), ("rolls", report.rolls), ("cube", report.cube)):
        figures[kind] = tally.total
        figures[f"{kind}_right"] = tally.right
        figures[f"{kind}_flagged"] = tally.flagged
        figures[f"{kind}_wrong_accepted"] = tally.wrong
        figures[f"{kind}_missed"] = tally.missed
    figures.update(
        {
            "move_events": dict(report.moves.kinds),
            "roll_events": dict(report.rolls.kinds),
            "illegal_shown": report.illegal_shown,
            "illegal_flagged": report.illegal_flagged,
            "answers": report.answers,
            "move_latency_ms_median": _ms(walls, 0.5),
            "move_latency_ms_p95": _ms(walls, 0.95),
            "move_wait_ms_median": _ms(waits, 0.5),
            "move_wait_ms_p95": _ms(waits, 0.95),
            "move_latencies": len(walls),
            "roll_latency_ms_median": _ms(rolls, 0.5),
            "roll_latency_ms_p95": _ms(rolls, 0.95),
            "game_over": report.finished,
            "stopped": None if report.finished else "the demo game did not reach its end",
            "table": report.table,
        }
    )
    return figures


def _print(figures: dict[str, object], log: list[str]) -> None:
    def ms(key: str) -> str:
        value = figures.get(key)
        return "-" if not isinstance(value, float) else f"{value:.1f} ms"

    for line in log:
        print(line)
    if "moves" not in figures:
        return
    what = "the demo game" if figures.get("game") == "demo" else f"random game seed {figures['seed']}"
    print(
        f"{what} ({figures['style']}), {figures['fps']:g} frames/s, sensor noise {figures['noise']:g}, "
        f"hands over the board: {figures['moves']} moves"
    )
    print(f"  {'':22}{'right':>8}{'flagged':>9}{'wrong':>7}{'missed':>8}")
    for kind in ("moves", "rolls", "cube"):
        if kind in figures:
            print(
                f"  {kind:22}{figures[kind + '_right']:>8}{figures[kind + '_flagged']:>9}"
                f"{figures[kind + '_wrong_accepted']:>7}{figures[kind + '_missed']:>8}"
            )
    print("  (goal: no wrong ones accepted)")
    if "illegal_shown" in figures:
        print(f"  illegal moves played: {figures['illegal_shown']}, lit as illegal: {figures['illegal_flagged']}")
        print(f"  what the players had to answer: {figures['answers']}")
    print(f"  move events: {figures['move_events']}")
    print(f"  roll events: {figures['roll_events']}")
    print(f"latency, first still frame after a move to the LED scene ({figures['move_latencies']} moves):")
    print(f"  processing median {ms('move_latency_ms_median')}, p95 {ms('move_latency_ms_p95')}  (goal: 100 ms)")
    print(f"  frame time median {ms('move_wait_ms_median')}, p95 {ms('move_wait_ms_p95')}  (with the settle times)")
    print(f"  after a roll: processing median {ms('roll_latency_ms_median')}, p95 {ms('roll_latency_ms_p95')}")
    print(f"table: {json.dumps(figures['table'])}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--game",
        choices=("demo", "random", "both"),
        default="demo",
        help="the demo's real game (default), a random game on a random board, or both",
    )
    parser.add_argument("--moves", type=int, default=60, help="random game: stop after this many moves")
    parser.add_argument("--seed", type=int, default=1, help="random game: the seed (board, players, dice)")
    parser.add_argument("--fps", type=float, default=5.0, help="frames a second on the injected clock")
    parser.add_argument("--noise", type=float, default=2.0, help="sensor noise of still frames, grey levels")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    # One core, as on the referee's small computer.
    cv2.setNumThreads(1)
    runs: list[tuple[dict[str, object], list[str]]] = []
    for game in ("demo", "random"):
        if args.game not in (game, "both"):
            continue
        log: list[str] = []
        t0 = time.perf_counter()
        try:
            if game == "demo":
                figures = play_demo(7, args.fps, args.noise)
            else:
                figures = play_game(args.seed, args.moves, args.fps, args.noise, log)
        except Exception as exc:
            # A benchmark reports a failure in its figures rather than crashing on it.
            figures = {"game": game, "stopped": f"{type(exc).__name__}: {exc}"}
        figures["seconds"] = round(time.perf_counter() - t0, 1)
        figures["log"] = log
        runs.append((figures, log))
    failed = any(f.get("stopped") for f, _ in runs)
    if args.json:
        for figures, _ in runs:
            print(json.dumps(figures))
        return 1 if failed else 0
    for figures, log in runs:
        _print(figures, log)
        if figures.get("stopped"):
            print(f"stopped early: {figures['stopped']}")
        print(f"run time {figures['seconds']} s")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
