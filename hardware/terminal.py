# SPDX-License-Identifier: MIT
r"""A panel that draws the board's lights as text: for working without LEDs, and for demos.

The board is drawn from player 1's seat, like the real one: points 13-24 along the top,
12-1 along the bottom, the bar between the halves, the trays on the right, the doubling track
(player 2's side, the centre, player 1's side), the turn lights and the status light. On a
terminal each light is a coloured dot; otherwise (a log, a pipe, or ``NO_COLOR`` set) a letter
for the colour and a mark for the pattern.

>>> from hardware.scene import Scene, ILLEGAL, TURN
>>> print("\n".join(render(Scene({"point.24": ILLEGAL, "turn.1": TURN}), colour=False)))
         13  14  15  16  17  18 bar  19  20  21  22  23  24 off
player 2  .   .   .   .   .   .   .   .   .   .   .   .   R!  .   turn  .
player 1  .   .   .   .   .   .   .   .   .   .   .   .   .   .   turn  w
         12  11  10   9   8   7 bar   6   5   4   3   2   1 off
cube     64  32  16   8   4   2   1   2   4   8  16  32  64    status  .
          .   .   .   .   .   .   .   .   .   .   .   .   .
        player 2's side ... centre ... player 1's side
"""

from __future__ import annotations

import os
import sys
from typing import Final, TextIO

from hardware import scene as sc
from hardware.layout import LedLayout
from hardware.panels import BasePanel
from hardware.scene import CUBE_VALUES, Colour, Light, Pattern, Scene

_LETTERS: Final = {
    Colour.RED: "R",
    Colour.GREEN: "G",
    Colour.BLUE: "B",
    Colour.AMBER: "A",
    Colour.WHITE: "W",
    Colour.YELLOW: "Y",
    Colour.CYAN: "C",
    Colour.MAGENTA: "M",
    Colour.PURPLE: "P",
    Colour.WARM_WHITE: "w",
}
_MARKS: Final = {
    Pattern.STEADY: "",
    Pattern.BLINK: "*",
    Pattern.FAST_BLINK: "!",
    Pattern.PULSE: "~",
    Pattern.SLOW_PULSE: "_",
}
#: What the letters and marks mean, printed under the board in plain mode.
LEGEND: Final = (
    "R red  G green  B blue  A amber  W white  Y yellow  C cyan  M magenta  P purple  w warm white;"
    "  * blink  ! fast blink  ~ pulse  _ slow pulse"
)

_TOP: Final = (*range(13, 19), "bar", *range(19, 25), "off")
_BOTTOM: Final = (*range(12, 6, -1), "bar", *range(6, 0, -1), "off")
_TRACK: Final = (*((v, 2) for v in reversed(CUBE_VALUES)), (1, None), *((v, 1) for v in CUBE_VALUES))
#: Room for the row names (``player 1``) on the left.
_INDENT: Final = 8


def _led(column: int | str, seat: int) -> str:
    if column == "bar":
        return sc.bar_led(seat)
    if column == "off":
        return sc.off_led(seat)
    assert isinstance(column, int)
    return sc.point_led(column)


def _cell(light: Light | None, colour: bool) -> str:
    """One light, four characters wide, under the last character of its column's label."""
    if light is None:
        return "  " + ("\x1b[2m\u00b7\x1b[0m" if colour else ".") + " "
    mark = _MARKS[light.pattern] or " "
    if not colour:
        return "  " + _LETTERS[light.colour] + mark
    r, g, b = light.colour.rgb
    # Terminals that honour SGR 5/6 blink the dot too; the mark says it for those that do not.
    blink = {Pattern.BLINK: "5;", Pattern.FAST_BLINK: "6;"}.get(light.pattern, "")
    return f"  \x1b[{blink}38;2;{r};{g};{b}m\u25cf\x1b[0m" + mark


def _labels(columns: tuple[int | str, ...]) -> str:
    return (" " * _INDENT + "".join(f"{c!s:>3} " for c in columns)).rstrip()


def render(scene: Scene, *, colour: bool = False) -> list[str]:
    """The board's lights as lines of text (see the module's example).

    :param colour: ANSI colours (for a terminal) rather than letters.
    """

    def cell(name: str) -> str:
        return _cell(scene.get(name), colour)

    def row(seat: int, columns: tuple[int | str, ...]) -> str:
        cells = "".join(cell(_led(c, seat)) for c in columns)
        return f"player {seat}" + cells + "  turn" + cell(sc.turn_led(seat)).rstrip()

    lines = [
        _labels(_TOP),
        row(2, _TOP),
        row(1, _BOTTOM),
        _labels(_BOTTOM),
        "cube".ljust(_INDENT) + "".join(f"{v:>3} " for v, _ in _TRACK) + "   status" + cell(sc.STATUS).rstrip(),
        " " * _INDENT + "".join(cell(sc.cube_led(v, seat) if seat else sc.CUBE_CENTRE) for v, seat in _TRACK).rstrip(),
        " " * _INDENT + "player 2's side ... centre ... player 1's side",
    ]
    return lines


class TerminalLedPanel(BasePanel):
    """Draws each scene on a text stream (standard output by default).

    :param layout: the layout (every layout places every named LED, so it only matters for
        :attr:`layout`).
    :param stream: where to write.
    :param colour: ANSI colours; default: when ``stream`` is a terminal and ``NO_COLOR`` is unset.
    :param legend: print what the letters mean under each board (plain text only).
    """

    def __init__(
        self,
        layout: LedLayout | None = None,
        *,
        stream: TextIO | None = None,
        colour: bool | None = None,
        legend: bool = True,
    ) -> None:
        super().__init__(layout)
        self._stream = stream if stream is not None else sys.stdout
        if colour is None:
            colour = self._stream.isatty() and not os.environ.get("NO_COLOR")
        self._colour = colour
        self._legend = legend and not colour
        self._last: Scene | None = None

    def show(self, scene: Scene) -> None:
        """Draw ``scene`` (nothing is drawn when it is the scene already showing)."""
        self._check_open()
        if scene == self._last:
            return
        self._last = scene
        lines = render(scene, colour=self._colour)
        if self._legend:
            lines.append(LEGEND)
        self._stream.write("\n".join(lines) + "\n\n")
        self._stream.flush()
