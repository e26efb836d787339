# SPDX-License-Identifier: MIT
"""``bgboard moves``, ``judge``, ``show`` and ``hint``: a position given on the command line."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, TextIO

from bgboard.cli.options import counting, position_from_any, positive
from bgboard.errors import CliError
from engine.dice import Dice
from engine.errors import BackgammonError, quoted
from engine.judge import RawBoard, judge
from engine.match import MatchState, Phase
from engine.movegen import legal_plays
from engine.position import Position, decode_position_id
from engine.text import board_lines, default_margin

if TYPE_CHECKING:
    import argparse

    from bgboard.cli.options import Subparsers


def register(sub: Subparsers) -> None:
    """Add ``moves``, ``judge``, ``show`` and ``hint`` to ``sub``."""
    for add in (_add_moves, _add_judge, _add_show, _add_hint):
        add(sub)


# -- moves -----------------------------------------------------------------------------------


def _moves_line(line: str) -> dict[str, object]:
    fields = line.split()
    if len(fields) != 2:
        raise CliError("expected '<PositionID> <d1><d2>'")
    position = Position.from_id(fields[0])
    dice = Dice.parse(fields[1])
    results = legal_plays(position, dice).results
    ordered = sorted((after.position_id(), str(play)) for after, play in results.items())
    return {
        "position": fields[0],
        "dice": [dice.first, dice.second],
        "results": [pid for pid, _ in ordered],
        "plays": [play for _, play in ordered],
    }


def _add_moves(sub: Subparsers) -> None:
    p = sub.add_parser("moves", help="legal plays for a position and roll", description=cmd_moves.__doc__)
    p.add_argument("position", nargs="?", help="Position ID (side on roll), GNUbgID or XGID")
    p.add_argument("dice", nargs="?", help="the roll, e.g. 31")
    p.add_argument(
        "--batch", action="store_true", help="read '<PositionID> <d1><d2>' lines from stdin, write JSON lines"
    )
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_moves)


def cmd_moves(args: argparse.Namespace, out: TextIO) -> int:
    """List the legal plays of one position and roll, or of many read from stdin (--batch)."""
    if args.batch:
        if args.position is not None:
            raise CliError("--batch reads '<PositionID> <d1><d2>' lines from stdin: leave out the position and roll")
        for n, line in enumerate(sys.stdin, start=1):
            try:
                record = _moves_line(line)
            except (BackgammonError, CliError) as exc:
                record = {"line": n, "error": str(exc)}
            out.write(json.dumps(record) + "\n")
            out.flush()
        return 0
    if args.position is None:
        raise CliError("give a position (Position ID, GNUbgID or XGID) and a roll, or --batch to read them from stdin")
    position, state = position_from_any(args.position)
    if args.dice is not None:
        dice = Dice.parse(args.dice)
    elif state is not None and state.dice is not None:
        dice = state.dice
    else:
        raise CliError(f"which roll? {args.position} has no dice: give them after it, e.g. 31")
    plays = legal_plays(position, dice)
    if args.json:
        out.write(json.dumps(_moves_line(f"{position.position_id()} {dice}")) + "\n")
        return 0
    if not plays:
        out.write(f"no legal play with {dice.spoken()}\n")
        return 0
    ordered = sorted(plays.results.items(), key=lambda kv: str(kv[1]))
    width = max(len(str(play)) for _, play in ordered)
    for after, play in ordered:
        out.write(f"{play!s:<{width}}  {after.position_id()}\n")
    out.write(f"{len(plays)} distinct results, {plays.dice_used} dice each\n")
    return 0


# -- judge -----------------------------------------------------------------------------------


def _add_judge(sub: Subparsers) -> None:
    p = sub.add_parser("judge", help="judge a move from the positions before and after", description=cmd_judge.__doc__)
    p.add_argument("before", help="the position before the move (Position ID, GNUbgID or XGID; side on roll)")
    p.add_argument("dice", help="the roll, e.g. 63")
    p.add_argument("after", help="the position after the move, still from the side that moved")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_judge)


def cmd_judge(args: argparse.Namespace, out: TextIO) -> int:
    """Judge a move: the position before, the roll, the position after (same side on roll).

    Exit status 0 for a legal move or one on its way (partial), 1 for an illegal or unreadable one."""
    before = position_from_any(args.before)[0]
    dice = Dice.parse(args.dice)
    after_text = args.after.strip()
    try:
        if after_text.upper().startswith("XGID=") or ":" in after_text:
            after = position_from_any(after_text)[0]
            opponent, mover = after.opponent, after.mover
        else:
            # A bare Position ID is decoded raw: a board with checkers missing is judged, not refused.
            opponent, mover = decode_position_id(after_text)
    except BackgammonError as exc:
        raise CliError(f"{quoted(args.after)} is not a Position ID, GNUbgID or XGID: {exc}") from None
    verdict = judge(before, dice, RawBoard(mover, opponent))
    status = 1 if verdict.verdict in ("illegal", "unreadable") else 0
    if args.json:
        out.write(json.dumps(verdict.to_json()) + "\n")
        return status
    line: str = verdict.verdict
    if verdict.play is not None and verdict.play:
        line += f": {verdict.play}"
    out.write(line + "\n")
    for reason in verdict.reasons:
        out.write(f"  {reason}\n")
    if verdict.marks:
        out.write(f"  points: {' '.join(_point_word(p) for p in verdict.marks)}\n")
    if verdict.nearest:
        out.write(f"  nearest legal: {', '.join(str(p) or 'no move' for p in verdict.nearest)}\n")
    return status


def _point_word(point: int) -> str:
    return {25: "bar", 0: "off"}.get(point, str(point))


# -- show ------------------------------------------------------------------------------------


def show_lines(position: Position, state: MatchState | None, names: tuple[str, str] | None = None) -> list[str]:
    """``bgboard show``'s text: IDs, the board, pip counts, and the match when known."""
    if state is None:
        # A bare Position ID says nothing of the match: show it as a money game, cube in the
        # middle, with the side on roll (player 1 in gnubg's numbering) about to roll.
        state = MatchState(length=0, on_roll=1, phase=Phase.ROLL, position=position)
    on_roll = state.on_roll if state.on_roll is not None else 1
    who = names or (f"player {on_roll}", f"player {1 - on_roll}")
    cube = state.cube
    cube_text = f"Cube: {cube.value}"
    if state.length:
        middle = f"{state.length} point match ({cube_text})"
        scores = (f"{state.score[on_roll]} points", f"{state.score[1 - on_roll]} points")
    else:
        middle = f"Money session ({cube_text})"
        scores = ("", "")
    if state.crawford and state.length:
        middle += ", Crawford game"
    top = [scores[1]]
    bottom: list[str] = []
    if cube.owner is not None:
        (bottom if cube.owner == on_roll else top).append(f"Cube: {cube.value}, owned")
    if state.dice is not None and state.phase is Phase.MOVE:
        bottom.append(f"Rolled {state.dice}")
    elif state.phase is Phase.DOUBLED:
        bottom.append("Double offered")
    else:
        bottom.append("On roll")
    bottom.append(scores[0])
    lines = [
        f" GNU Backgammon  Position ID: {position.position_id()}",
        f"                 Match ID   : {state.match_id()}",
    ]
    margin = default_margin(position, who, middle, [t for t in top if t], [b for b in bottom if b])
    lines += board_lines(position, margin)
    pips = position.pips()
    lines += [
        "",
        f" Pip counts: X {pips[0]}, O {pips[1]}",
        f" GNUbgID: {state.gnubg_id()}",
        f" XGID: {state.xgid()}",
    ]
    return lines


def _add_show(sub: Subparsers) -> None:
    p = sub.add_parser("show", help="draw a position", description=cmd_show.__doc__)
    p.add_argument("id", help="GNUbgID, XGID or Position ID")
    p.set_defaults(func=cmd_show)


def cmd_show(args: argparse.Namespace, out: TextIO) -> int:
    """Draw a position given as a GNUbgID, an XGID or a Position ID."""
    position, state = position_from_any(args.id)
    for line in show_lines(position, state):
        out.write(line + "\n")
    return 0


# -- hint ------------------------------------------------------------------------------------


def _add_hint(sub: Subparsers) -> None:
    p = sub.add_parser("hint", help="GNU Backgammon's ranked plays or cube advice", description=cmd_hint.__doc__)
    p.add_argument("id", nargs="?", help="the position: a GNUbgID, an XGID or a Position ID (a money game)")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--gnubgid", help="the position and match as a GNUbgID (PositionID:MatchID)")
    which.add_argument("--xgid", help="the position and match as an XGID")
    p.add_argument("--dice", help="the roll, e.g. 31 (default: the dice in the ID; none: cube advice)")
    p.add_argument("--ply", type=int, choices=(0, 1, 2), default=0, help="gnubg's search depth (default 0)")
    p.add_argument("-n", type=counting, default=5, help="how many plays to list (default 5)")
    p.add_argument("--timeout", type=positive, default=30.0, help="seconds gnubg may take (default 30)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_hint)


def cmd_hint(args: argparse.Namespace, out: TextIO) -> int:
    """GNU Backgammon's best plays for a roll, in its hint layout, or its cube advice when no
    dice are given (on the command line or in the GNUbgID). Needs gnubg (apt-get install gnubg)."""
    from bgboard.hint import HintRequestError, run_hint

    if args.id is not None:
        if args.gnubgid is not None or args.xgid is not None:
            raise CliError("give the position once: as ID, --gnubgid or --xgid")
        if args.id.strip().upper().startswith("XGID="):
            args.xgid = args.id
        else:
            args.gnubgid = args.id
    try:
        return run_hint(args, out)
    except HintRequestError as exc:
        raise CliError(str(exc)) from None
