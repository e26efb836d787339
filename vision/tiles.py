# SPDX-License-Identifier: MIT
"""The tiles the board reader remembers the field by: which of them a box covers, and whether
anything changed there.

The reader (:class:`vision.reader.BoardReader`) keeps what it last read and reads again only
where the field changed since, tile by tile (see its ``remember``); the dice finder
(:mod:`vision.board_dice`) looks for new dice only there. Kept apart so that both use the one
grid without importing each other.
"""

from __future__ import annotations

import math

import numpy as np

#: The reader remembers what it last read, region by region, and reads again only what has
#: changed since: at a table most of the board lies still from one read to the next. The
#: half-size field's colour is compared in tiles this many pixels square (about a fifth of a
#: checker on a board filling a 1280x720 frame).
TILE = 8


def tile_span(changed: np.ndarray, box: tuple[float, ...]) -> tuple[slice, slice]:
    """The tiles a box ``(x0, y0, x1, y1)`` on the half-size field covers."""
    rows, cols = changed.shape
    x0, y0, x1, y1 = box
    i0, i1 = max(0, math.floor(y0 / TILE)), min(rows, math.ceil(y1 / TILE))
    j0, j1 = max(0, math.floor(x0 / TILE)), min(cols, math.ceil(x1 / TILE))
    return slice(i0, max(i0, i1)), slice(j0, max(j0, j1))


def touches(changed: np.ndarray | None, box: tuple[float, ...]) -> bool:
    """Whether anything changed in a box ``(x0, y0, x1, y1)`` on the half-size field (``changed``:
    a boolean mask of the tiles; ``None``: everything did)."""
    if changed is None:
        return True
    return bool(changed[tile_span(changed, box)].any())
