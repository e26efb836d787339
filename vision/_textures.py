# SPDX-License-Identifier: MIT
"""Procedural textures for the board renderer: wood grain, felt, printed vinyl, table cloth, leather.

Every texture is a float32 *modulation map* around 1.0 (multiply a flat colour by it), so one
cached map serves any colour. Maps are deterministic: their random numbers come from a seed
derived from the request itself, never from Python's salted ``hash``.
"""

from __future__ import annotations

import zlib
from functools import lru_cache

import cv2
import numpy as np

#: The materials a surface can be made of.
SURFACES = ("felt", "wood", "printed", "cloth", "leather")


def stable_seed(*parts: object) -> int:
    """A seed that is the same in every process for the same ``parts``."""
    return zlib.crc32(repr(parts).encode())


def smooth_noise(rng: np.random.Generator, h: int, w: int, cell_y: float, cell_x: float) -> np.ndarray:
    """Zero-mean noise of unit-ish amplitude whose features are about ``cell`` pixels big.

    Cubic interpolation of a coarse random grid: cheap, and anisotropic cells give streaks.
    """
    gh = max(2, int(np.ceil(h / max(cell_y, 1e-3))) + 2)
    gw = max(2, int(np.ceil(w / max(cell_x, 1e-3))) + 2)
    grid = rng.standard_normal((gh, gw)).astype(np.float32)
    big = cv2.resize(grid, (round(gw * cell_x), round(gh * cell_y)), interpolation=cv2.INTER_CUBIC)
    oy = int(rng.integers(0, max(1, big.shape[0] - h + 1)))
    ox = int(rng.integers(0, max(1, big.shape[1] - w + 1)))
    out = big[oy : oy + h, ox : ox + w]
    if out.shape != (h, w):
        out = cv2.resize(out, (w, h), interpolation=cv2.INTER_LINEAR)
    return np.ascontiguousarray(out)


def _fbm(rng: np.random.Generator, h: int, w: int, cells: tuple[float, ...], amps: tuple[float, ...]) -> np.ndarray:
    out = np.zeros((h, w), np.float32)
    for cell, amp in zip(cells, amps, strict=True):
        out += amp * smooth_noise(rng, h, w, cell, cell)
    return out


def _wood(rng: np.random.Generator, h: int, w: int, px: float, vertical: bool) -> np.ndarray:
    """Grain along x (or y when ``vertical``); ``px`` is the size of one field pixel in map pixels."""
    if vertical:
        return np.ascontiguousarray(_wood(rng, w, h, px, False).T)
    ys = np.arange(h, dtype=np.float32)[:, None] / px
    warp = smooth_noise(rng, h, w, 90 * px, 260 * px) * 14.0 + smooth_noise(rng, h, w, 25 * px, 120 * px) * 3.0
    period = float(rng.uniform(9.0, 16.0))
    phase = (ys + warp / px) / period
    rings = 0.5 + 0.5 * np.sin(2 * np.pi * phase)
    # Late wood is a narrow dark line, early wood a broad light band: sharpen one side of the sine.
    rings = rings**3
    fibres = smooth_noise(rng, h, w, max(0.7, 0.9 * px), 30 * px)
    pores = smooth_noise(rng, h, w, max(0.6, 0.6 * px), 6 * px)
    blotch = smooth_noise(rng, h, w, 140 * px, 300 * px)
    m = 1.0 - 0.16 * rings + 0.045 * fibres + 0.02 * pores + 0.05 * blotch
    return m.astype(np.float32)


def _felt(rng: np.random.Generator, h: int, w: int, px: float) -> np.ndarray:
    blurred = cv2.GaussianBlur(rng.standard_normal((h, w)).astype(np.float32), (0, 0), max(0.5, 0.6 * px))
    fine = np.asarray(blurred, np.float32) / max(float(blurred.std()), 1e-6)
    mottle = _fbm(rng, h, w, (60 * px, 18 * px), (0.6, 0.4))
    return (1.0 + 0.045 * fine + 0.035 * mottle).astype(np.float32)


def _printed(rng: np.random.Generator, h: int, w: int, px: float) -> np.ndarray:
    fine = np.asarray(cv2.GaussianBlur(rng.standard_normal((h, w)).astype(np.float32), (0, 0), 0.6))
    low = _fbm(rng, h, w, (150 * px, 40 * px), (0.7, 0.3))
    return (1.0 + 0.015 * fine + 0.02 * low).astype(np.float32)


def _cloth(rng: np.random.Generator, h: int, w: int, px: float) -> np.ndarray:
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
    pitch = max(2.2, 5.0 * px)
    weave = np.sin(2 * np.pi * xs / pitch) * np.sin(2 * np.pi * ys / pitch)
    folds = smooth_noise(rng, h, w, 200 * px, 260 * px)
    fine = cv2.GaussianBlur(rng.standard_normal((h, w)).astype(np.float32), (0, 0), 0.7)
    m: np.ndarray = (1.0 + 0.05 * weave + 0.06 * folds + 0.03 * fine).astype(np.float32)
    return m


def _leather(rng: np.random.Generator, h: int, w: int, px: float) -> np.ndarray:
    """Pebbled grain: small rounded cells with darker creases between them, and a broad mottle."""
    cells = smooth_noise(rng, h, w, max(1.0, 3.0 * px), max(1.0, 3.0 * px))
    creases = np.clip(0.35 - np.abs(cells), 0.0, None)
    mottle = _fbm(rng, h, w, (80 * px, 25 * px), (0.6, 0.4))
    m: np.ndarray = (1.0 + 0.03 * cells - 0.18 * creases + 0.03 * mottle).astype(np.float32)
    return m


@lru_cache(maxsize=48)
def surface_map(kind: str, h: int, w: int, px: float, variant: int = 0, vertical: bool = False) -> np.ndarray:
    """A read-only modulation map of material ``kind`` (one of :data:`SURFACES`).

    :param h: map height in pixels.
    :param w: map width in pixels.
    :param px: map pixels per field pixel, so features keep their physical size at any scale.
    :param variant: picks another random instance of the same material.
    :param vertical: wood grain running along y instead of x.
    """
    rng = np.random.default_rng(stable_seed("surface", kind, h, w, round(px, 4), variant, vertical))
    if kind == "wood":
        m = _wood(rng, h, w, px, vertical)
    elif kind == "felt":
        m = _felt(rng, h, w, px)
    elif kind == "printed":
        m = _printed(rng, h, w, px)
    elif kind == "cloth":
        m = _cloth(rng, h, w, px)
    elif kind == "leather":
        m = _leather(rng, h, w, px)
    else:
        raise ValueError(f"unknown surface {kind!r}; expected one of {SURFACES}")
    m.flags.writeable = False
    return m


def tint(colour: tuple[int, int, int], modulation: np.ndarray) -> np.ndarray:
    """``colour`` (BGR) modulated by a map: an HxWx3 float32 image."""
    return modulation[:, :, None] * np.asarray(colour, np.float32)[None, None, :]


@lru_cache(maxsize=8)
def noise_patch(size: int) -> np.ndarray:
    """A read-only square of smooth noise (about unit amplitude) to give small objects a grain."""
    rng = np.random.default_rng(stable_seed("patch", size))
    m = 0.7 * smooth_noise(rng, size, size, 2.0, 2.0) + 0.3 * rng.standard_normal((size, size)).astype(np.float32)
    m.flags.writeable = False
    return m
