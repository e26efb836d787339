# SPDX-License-Identifier: MIT
"""The board as text, drawn the way GNU Backgammon's ``show board`` draws it.

The side on roll is ``X`` at the bottom and the points are numbered from its side; the
opponent is ``O``. Stacks taller than five show their height on the fifth row (``A`` to ``F``
for 10 to 15, as gnubg does). The right margin carries names, pip counts, borne-off checkers,
the score, the cube and the dice.
"""

from __future__ import annotations

from collections.abc import Sequence

from engine.position import Position

_HEIGHT = 5


def _cell(count: int, row: int, symbol: str) -> str:
    """What one point (or the bar) shows on one row (row 0 is the edge of the board)."""
    if count > _HEIGHT and row == _HEIGHT - 1:
        return "0123456789ABCDEF"[count] if count < 16 else "+"
    return symbol if count > row else " "


def board_lines(position: Position, margin: Sequence[str] = ()) -> list[str]:
    """Draw ``position`` (seen from the side on roll, ``X``) as gnubg-style text lines.

    :param margin: up to 11 lines of text for the right margin, one per board row: five
        beside ``O``'s half, one beside the bar, five beside ``X``'s half. By default,
        :func:`default_margin`.
    """
    mover, opponent = position
    text = list(margin) if margin else default_margin(position)
    text += [""] * (2 * _HEIGHT + 1 - len(text))

    def count(point: int) -> tuple[int, str]:
        """Checkers on one of the mover's points, with the symbol of their owner."""
        if mover[point - 1]:
            return mover[point - 1], "X"
        return opponent[24 - point], "O" if opponent[24 - point] else " "

    lines = [" +13-14-15-16-17-18------19-20-21-22-23-24-+"]
    for row in range(_HEIGHT):
        cells = [_point_cell(count(p), row) for p in range(13, 25)]
        lines.append(_row(cells, _cell(opponent[24], row, "O")) + _margin(text[row]))
    lines.append("v|                  |BAR|                  |" + _margin(text[_HEIGHT]))
    for k, row in enumerate(range(_HEIGHT - 1, -1, -1)):
        cells = [_point_cell(count(p), row) for p in range(12, 0, -1)]
        lines.append(_row(cells, _cell(mover[24], row, "X")) + _margin(text[_HEIGHT + 1 + k]))
    lines.append(" +12-11-10--9--8--7-------6--5--4--3--2--1-+")
    return [line.rstrip() for line in lines]


def default_margin(
    position: Position,
    names: tuple[str, str] = ("X", "O"),
    middle: str = "",
    top: Sequence[str] = (),
    bottom: Sequence[str] = (),
) -> list[str]:
    """Margin lines with names, pip counts and borne-off checkers, plus extra lines.

    :param names: the side on roll's name and its opponent's.
    :param middle: the line beside the bar (match length, cube).
    :param top: extra lines beside the opponent's half (after name, pips, off).
    :param bottom: extra lines beside the side on roll's half (before off, pips, name).
    """
    pips = position.pips()
    off = position.off()
    upper = [f"O: {names[1]}", f"pips {pips[1]}", *([f"off {off[1]}"] if off[1] else []), *top]
    lower = [*bottom, *([f"off {off[0]}"] if off[0] else []), f"pips {pips[0]}", f"X: {names[0]}"]
    upper = (upper + [""] * _HEIGHT)[:_HEIGHT]
    lower = ([""] * _HEIGHT + lower)[-_HEIGHT:]
    return [*upper, middle, *lower]


def _point_cell(owner_count: tuple[int, str], row: int) -> str:
    count, symbol = owner_count
    return _cell(count, row, symbol)


def _row(cells: list[str], bar: str) -> str:
    left = "".join(f" {c} " for c in cells[:6])
    right = "".join(f" {c} " for c in cells[6:])
    return f" |{left}| {bar} |{right}|"


def _margin(text: str) -> str:
    return f"     {text}" if text else ""
