# SPDX-License-Identifier: MIT
"""``bgboard hint``: GNU Backgammon's ranked plays or cube advice for a GNUbgID or an XGID.

The plays are printed in gnubg's hint layout, the worse ones with their equity lost::

     1. 8/5 6/5        Eq.: +0.218
        0.551 0.174 0.013 - 0.449 0.124 0.005
     2. 24/23 13/10    Eq.: -0.012 (-0.230)
        0.497 0.137 0.008 - 0.503 0.140 0.007

With ``--json``: ``{"plays": [{"play", "equity", "error", ...}, ...]}`` best first, or
``{"cube": {...}}`` when no dice are given (on the command line or in the GNUbgID).
"""

from __future__ import annotations

import argparse
import json
from typing import TextIO

from bgboard.config import gnubg_hints
from bgboard.errors import HintRequestError
from engine.dice import Dice
from engine.errors import BackgammonError
from engine.hints import CubeAdvice, RankedPlay
from engine.match import MatchState, Phase
from engine.position import Position


def state_from_args(gnubgid: str | None, xgid: str | None) -> MatchState:
    """The match state a ``--gnubgid`` (or a bare Position ID: a money game) or ``--xgid`` names.

    :raises HintRequestError: neither or both given, or the ID does not decode.
    """
    if (gnubgid is None) == (xgid is None):
        raise HintRequestError("give the position: bgboard hint ID (a GNUbgID, an XGID or a Position ID)")
    try:
        if gnubgid is not None:
            text = gnubgid.strip()
            if ":" not in text:
                # A bare Position ID: a money game, cube in the middle, its side on roll.
                return MatchState(0, on_roll=0, phase=Phase.ROLL, position=Position.from_id(text))
            return MatchState.from_gnubg_id(text)
        assert xgid is not None
        text = xgid.strip()
        return MatchState.from_xgid(text if text.upper().startswith("XGID=") else f"XGID={text}")
    except BackgammonError as exc:
        raise HintRequestError(f"{gnubgid or xgid!r} is not a GNUbgID, XGID or Position ID: {exc}") from None


def play_lines(plays: list[RankedPlay]) -> list[str]:
    """The plays in gnubg's hint layout: rank, play, equity, (error), then the chances."""
    width = max((len(str(p.play)) for p in plays), default=0)
    lines = []
    for rank, ranked in enumerate(plays, start=1):
        line = f"{rank:>2}. {ranked.play!s:<{width}}  Eq.: {ranked.equity:+.3f}"
        if rank > 1:
            line += f" ({-ranked.error:+.3f})"
        lines.append(line)
        if ranked.chances is not None:
            lines.append(f"    {ranked.chances}")
    return lines


def cube_lines(advice: CubeAdvice) -> list[str]:
    """The cube advice in gnubg's layout: cubeless equity, the three choices, the proper action."""
    lines = [f"Cube analysis ({advice.ply}-ply)"]
    if advice.cubeless is not None:
        lines.append(f"Cubeless equity {advice.cubeless:+.3f}")
    if advice.chances is not None:
        lines.append(f"  {advice.chances}")
    lines.append("Cubeful equities:")
    for rank, (words, equity, diff) in enumerate(advice.ranked(), start=1):
        line = f"{rank}. {words:<18} {equity:+.3f}"
        if rank > 1:
            line += f"  ({diff:+.3f})"
        lines.append(line)
    lines.append(f"Proper cube action: {advice.action}")
    return lines


def run_hint(args: argparse.Namespace, out: TextIO) -> int:
    """Run ``bgboard hint`` with parsed arguments; see the module docstring."""
    state = state_from_args(args.gnubgid, args.xgid)
    off = [
        side
        for side, checkers in (("on roll", state.position.mover), ("not on roll", state.position.opponent))
        if sum(checkers) == 0
    ]
    if off:
        # A finished game has no play to hint: "dance" would say the checkers are stuck.
        raise HintRequestError(
            f"the game in {state.gnubg_id()!r} is over: the player {off[0]} has borne off every checker"
        )
    dice = Dice.parse(args.dice) if args.dice else state.dice
    with gnubg_hints(timeout=args.timeout) as hints:
        if dice is not None:
            plays = hints.plays(state, dice, ply=args.ply, n=args.n)
            if args.json:
                record = {
                    "plays": [p.to_json() for p in plays],
                    "dice": [dice.first, dice.second],
                    "ply": args.ply,
                    "gnubgid": state.gnubg_id(),
                }
                out.write(json.dumps(record) + "\n")
            elif not plays:
                out.write(f"no legal play for {dice.spoken()} (dance)\n")
            else:
                out.write("\n".join(play_lines(plays)) + "\n")
            return 0
        advice = hints.cube(state, ply=args.ply)
    if args.json:
        out.write(json.dumps({"cube": advice.to_json(), "ply": args.ply, "gnubgid": state.gnubg_id()}) + "\n")
    else:
        out.write("\n".join(cube_lines(advice)) + "\n")
    return 0
