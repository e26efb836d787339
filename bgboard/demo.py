# SPDX-License-Identifier: MIT
"""A whole refereed game on a simulated board, as the main demonstration.

Two simulated players, Ann and Bob, play one game of a 5-point match with seeded dice. Every
board they leave is judged by :func:`engine.judge` exactly as a camera reading would be: a
move half made is ``partial``, a wrong one is ``illegal`` (with the reasons and the points to
light), and only a legal one is recorded and passes the turn. The cube is turned and answered
on a pip-count rule of thumb.
"""

from __future__ import annotations

import json
import random
from typing import TextIO

from engine.dice import Dice
from engine.judge import Judgement, judge, partial_positions, single_steps
from engine.match import Double, Drop, MatchState, Move, OpeningRoll, Phase, Roll, Take
from engine.movegen import legal_plays
from engine.position import Position
from engine.text import board_lines, default_margin

NAMES = ("Bob", "Ann")
_POINT_WORDS = {25: "bar", 0: "off"}
_KINDS = {1: "a single game", 2: "a gammon", 3: "a backgammon"}


class _Printer:
    def __init__(self, out: TextIO, json_lines: bool) -> None:
        self.out = out
        self.json_lines = json_lines

    def event(self, kind: str, text: str, **fields: object) -> None:
        if self.json_lines:
            self.out.write(json.dumps({"event": kind, **fields}) + "\n")
        else:
            self.out.write(text + "\n")

    def lines(self, lines: list[str]) -> None:
        if not self.json_lines:
            for line in lines:
                self.out.write(line + "\n")


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


def _wrong_board(state: MatchState, rng: random.Random) -> Position | None:
    """A board a player might leave by misreading the roll: legal for some other roll."""
    dice = state.dice
    assert dice is not None
    good = legal_plays(state.position, dice).positions()
    for other in rng.sample([Dice(a, b) for a in range(1, 7) for b in range(a, 7)], 21):
        if other.sorted() == dice.sorted():
            continue
        wrong = sorted(legal_plays(state.position, other).positions() - good)
        if wrong:
            return rng.choice(wrong)
    return None


def _leads_to(halfway: Position, left: tuple[int, ...], after: Position) -> bool:
    """Whether playing the dice ``left`` from ``halfway`` can end at ``after``."""
    boards: set[tuple[tuple[int, ...], tuple[int, ...]]] = {halfway}
    for die in left:
        boards = {nxt for board in boards for nxt in single_steps(board, die)}
    return after in boards


def _verdict_fields(j: Judgement) -> dict[str, object]:
    data = j.to_json()
    data.pop("nearest_positions", None)
    return data


def run_demo(seed: int = 7, json_lines: bool = False, out: TextIO | None = None) -> int:
    """Play and referee one game; print the events (JSON Lines with ``json_lines``)."""
    import sys

    rng = random.Random(seed)
    p = _Printer(out or sys.stdout, json_lines)
    state = MatchState.new_match(5)
    p.event("match", f"{NAMES[1]} vs {NAMES[0]}, 5-point match, seed {seed}", players=list(NAMES), length=5)
    while state.phase is Phase.OPENING:
        d0, d1 = rng.randint(1, 6), rng.randint(1, 6)
        p.event(
            "opening_roll",
            f"opening roll: {NAMES[0]} {d0}, {NAMES[1]} {d1}" + (" - a tie, roll again" if d0 == d1 else ""),
            dice={NAMES[0]: d0, NAMES[1]: d1},
        )
        state = state.apply(OpeningRoll(d0, d1))
    shown_mistake = shown_partial = False
    turn = 0
    while not state.is_over():
        player = state.on_roll
        assert player is not None
        name = NAMES[player]
        if state.phase is Phase.ROLL:
            pips = state.position.pips()
            if state.can_double() and pips[1] - pips[0] > 0.12 * pips[0] and pips[0] > 40:
                state = state.apply(Double())
                taker = NAMES[1 - player]
                p.event("double", f"{name} doubles to {state.cube.value * 2}", player=name, cube=state.cube.value * 2)
                if pips[1] - pips[0] > 0.25 * pips[0]:
                    state = state.apply(Drop())
                    p.event("drop", f"{taker} drops", player=taker)
                    break
                state = state.apply(Take())
                p.event("take", f"{taker} takes", player=taker, cube=state.cube.value)
                continue
            dice = Dice(rng.randint(1, 6), rng.randint(1, 6))
            state = state.apply(Roll(dice))
        turn += 1
        dice = state.dice
        assert dice is not None
        before = state.position
        if not shown_mistake and turn >= 3:
            wrong = _wrong_board(state, rng)
            if wrong is not None:
                shown_mistake = True
                j = judge(before, dice, wrong)
                p.event(
                    "illegal",
                    f"G1 #{turn:<3} {name:<4} {dice}  ILLEGAL {'; '.join(j.reasons)}"
                    f"  (LEDs: {' '.join(_POINT_WORDS.get(m, str(m)) for m in j.marks)})",
                    player=name,
                    dice=[dice.first, dice.second],
                    **_verdict_fields(j),
                )
        after = _pick(rng, state)
        if not shown_partial and legal_plays(before, dice).dice_used >= 2:
            # Show the board half-way through the play the player is about to make.
            halfway = sorted(
                pos for pos, left in partial_positions(before, dice).items() if _leads_to(pos, left, after)
            )
            if halfway:
                shown_partial = True
                j = judge(before, dice, halfway[0])
                p.event(
                    "partial",
                    f"G1 #{turn:<3} {name:<4} {dice}  ...     {j.play} so far, {j.reasons[0]}",
                    player=name,
                    dice=[dice.first, dice.second],
                    **_verdict_fields(j),
                )
        j = judge(before, dice, after)
        assert j.verdict == "legal", j
        state = state.apply(Move(after))
        pips = after.pips()
        play = str(j.play) or "no move"
        p.event(
            "move",
            f"G1 #{turn:<3} {name:<4} {dice}  {play:<18} ok   pips {pips[0]}-{pips[1]}",
            player=name,
            dice=[dice.first, dice.second],
            play=str(j.play),
            verdict=j.verdict,
            gnubgid=state.gnubg_id(),
        )
    result = state.last_result
    assert result is not None
    winner = NAMES[result.winner]
    p.event(
        "game_end",
        f"{winner} wins {_KINDS[result.kind]}: {result.points} point{'s' if result.points != 1 else ''}",
        winner=winner,
        points=result.points,
        score={NAMES[0]: state.score[0], NAMES[1]: state.score[1]},
    )
    final = state.position
    on_roll = state.on_roll if state.on_roll is not None else 1
    names = (NAMES[on_roll], NAMES[1 - on_roll])
    p.lines(
        ["", *board_lines(final, default_margin(final, names, f"5 point match, {state.score[1]}-{state.score[0]}"))]
    )
    p.event("final", f"GNUbgID {state.gnubg_id()}  {state.xgid()}", gnubgid=state.gnubg_id(), xgid=state.xgid())
    return 0
