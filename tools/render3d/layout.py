# SPDX-License-Identifier: MIT
"""Where each piece lies in a frame, as 4x4 world matrices (numpy), following the reader's geometry.

Checkers on points sit in the slots of :meth:`vision.geometry.FieldGeometry.slot_center` (a pile
of five, then layers resting between the checkers below), a little off-centre and leaning as
players leave them; on the bar as :class:`vision.render` puts them; borne off standing on edge in
a walled tray, or in piles of five on a flat mat. Dice come to rest on one half clear of the
checkers; the cube lies where :meth:`~vision.geometry.FieldGeometry.cube_center` says.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from tools.render3d.plan import Board, CameraPose
from vision import render as render2d
from vision.geometry import FIELD_H, FIELD_W
from vision.render import CupSpec, Scene


def translation(x: float, y: float, z: float) -> np.ndarray:
    """A translation matrix."""
    m = np.eye(4)
    m[:3, 3] = (x, y, z)
    return m


def rotation(axis: tuple[float, float, float] | np.ndarray, degrees: float) -> np.ndarray:
    """A rotation matrix about ``axis`` through the origin."""
    a = np.asarray(axis, np.float64)
    a = a / np.linalg.norm(a)
    t = math.radians(degrees)
    k = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    m = np.eye(4)
    m[:3, :3] = np.eye(3) + math.sin(t) * k + (1 - math.cos(t)) * (k @ k)
    return m


def face_up(axis: tuple[float, float, float]) -> np.ndarray:
    """A rotation turning the local ``axis`` to +z (the face along it then lies on top)."""
    a = np.asarray(axis, np.float64)
    up = np.array([0.0, 0.0, 1.0])
    if np.allclose(a, up):
        return np.eye(4)
    if np.allclose(a, -up):
        return rotation((1, 0, 0), 180.0)
    return rotation(np.cross(a, up), math.degrees(math.acos(float(np.clip(a @ up, -1, 1)))))


def scaling(x: float, y: float, z: float) -> np.ndarray:
    """A scaling matrix."""
    return np.diag([x, y, z, 1.0])


def frame_axes(direction: np.ndarray) -> np.ndarray:
    """A rotation whose local +z is ``direction``."""
    z = direction / np.linalg.norm(direction)
    helper = np.array([0.0, 0.0, 1.0]) if abs(z[2]) < 0.9 else np.array([1.0, 0.0, 0.0])
    x = np.cross(helper, z)
    x /= np.linalg.norm(x)
    y = np.cross(z, x)
    m = np.eye(4)
    m[:3, :3] = np.stack([x, y, z], axis=1)
    return m


@dataclass
class Placed:
    """A frame's checkers: 15 matrices per player, and the field spots they cover (to keep dice off them)."""

    checkers: tuple[list[np.ndarray], list[np.ndarray]]
    occupied: list[tuple[float, float]]


def _lean(rng: np.random.Generator, radius: float, sigma: float = 1.2, most: float = 4.0) -> np.ndarray:
    """A small tilt about a random horizontal axis (no checker lies quite flat on another), lifted onto its rim."""
    a = rng.uniform(0, 2 * math.pi)
    tilt = float(np.clip(rng.normal(0.0, sigma), -most, most))
    # Tilted about its bottom centre, half the disc would sink: it rests on its lower rim instead.
    lift = radius * abs(math.sin(math.radians(tilt)))
    out: np.ndarray = translation(0.0, 0.0, lift) @ rotation((math.cos(a), math.sin(a), 0.0), tilt)
    return out


def place_checkers(board: Board, scene: Scene, rng: np.random.Generator) -> Placed:
    """Matrices for every checker of both players (15 each: on points, the bar and off)."""
    geom, s, t, d = board.geometry, board.scale, board.thickness_m, board.d
    out: tuple[list[np.ndarray], list[np.ndarray]] = ([], [])
    occupied: list[tuple[float, float]] = []

    def flat(player: int, x: float, y: float, z: float, jitter: float = 0.03) -> None:
        j = np.clip(rng.normal(0.0, jitter * d, 2), -0.08 * d, 0.08 * d)
        wx, wy, _ = board.world(x + j[0], y + j[1])
        m = translation(wx, wy, z) @ _lean(rng, d * s / 2) @ rotation((0, 0, 1), float(rng.uniform(0, 360)))
        out[player - 1].append(m)
        occupied.append((x, y))

    for i, n in enumerate(scene.points):
        player = 1 if n > 0 else 2
        line = scene.lines[i] if scene.lines else render2d.SLOTS
        for x, y, layer in render2d.stack_spots(geom, i + 1, abs(n), line, stretch=board.style.stretch):
            flat(player, x, y, layer * t + 0.0001 * layer)
    bar_z = board.bar_top_m() if board.style.bar_raised else (0.0004 if board.style.bar_fraction > 0 else 0.0)
    for k, (x, y) in enumerate(scene.bar_spots):
        flat(1 if k < scene.bar[0] else 2, x, y, bar_z, 0.02)
    for player, n in ((1, scene.bar[0]), (2, scene.bar[1])):
        if n <= 0 or scene.bar_spots:
            continue
        y0 = geom.bar_slot_center(player, 0)[1]
        room = FIELD_H / 2 - 1.2 * d - 0.5 * d
        step = min(d, room / max(n - 1, 1))
        for slot in range(n):
            y = y0 + (slot * step if player == 1 else -slot * step)
            flat(player, FIELD_W / 2, y, bar_z, 0.02)
    walled = board.style.rim_height_m > 0.003
    for player, n in ((1, scene.off[0]), (2, scene.off[1])):
        x0, y0, x1, y1 = board.tray(player)
        cx = (x0 + x1) / 2
        for k in range(n):
            if walled:
                # Standing on edge, packed from the tray's end: as tournament players rack them.
                gap = t / s * 1.04
                y = y1 - 0.1 * d - (k + 0.5) * gap if player == 1 else y0 + 0.1 * d + (k + 0.5) * gap
                wx, wy, _ = board.world(cx + float(rng.normal(0, 0.02 * d)), y)
                r = d * s / 2
                m = translation(wx, wy + t / 2, r) @ rotation((1, 0, 0), 90.0 + float(rng.normal(0, 2.5)))
                m = m @ rotation((0, 0, 1), float(rng.uniform(0, 360)))
                out[player - 1].append(m)
            else:
                pile, level = divmod(k, 5)
                y = y1 - (pile + 0.55) * 1.05 * d if player == 1 else y0 + (pile + 0.55) * 1.05 * d
                wx, wy, _ = board.world(cx + float(rng.normal(0, 0.02 * d)), y + float(rng.normal(0, 0.02 * d)))
                out[player - 1].append(translation(wx, wy, level * t) @ rotation((0, 0, 1), float(rng.uniform(0, 360))))
    for player in (1, 2):
        if len(out[player - 1]) != 15:
            raise ValueError(f"player {player} has {len(out[player - 1])} checkers, not 15")
    return Placed(checkers=out, occupied=occupied)


def free_spot(
    rng: np.random.Generator,
    board: Board,
    half: str,
    taken: list[tuple[float, float]],
    checkers: list[tuple[float, float]],
    size: float,
) -> tuple[float, float]:
    """A spot on ``half`` (field units) clear of other dice and, if there is room, of checkers:
    the 2D renderer's rule, with dice rolled a little wider over a real board."""
    return render2d.free_spot(rng, board.geometry, half, taken, checkers, size, tries=60, spread=0.12, apart=1.6)


def die_pose(
    board: Board,
    position: tuple[float, float],
    face: tuple[float, float, float],
    lean: tuple[float, float] | None,
    rng: np.random.Generator,
) -> np.ndarray:
    """A die's matrix (centred at the origin in its mesh; the caller rests it on the board).

    :param lean: for a cocked die, the field direction it leans towards (a checker, the rim); None: flat.
    """
    wx, wy, _ = board.world(*position)
    m = rotation((0, 0, 1), float(rng.uniform(0, 360))) @ face_up(face)
    if lean is not None:
        # Field y grows towards player 1, the world's y away from him.
        towards = np.array([lean[0], -lean[1], 0.0])
        m = rotation(np.cross([0.0, 0.0, 1.0], towards), float(rng.uniform(14, 30))) @ m
    out: np.ndarray = translation(wx, wy, 0.0) @ m
    return out


def cocked_spot(
    board: Board, spot: tuple[float, float], half: str, checkers: list[tuple[float, float]], size: float
) -> tuple[tuple[float, float], tuple[float, float]]:
    """Where a cocked die leans, and towards what: against the nearest checker on its half, else the rim.

    Returns the die's centre and the field direction it leans towards.
    """
    middle = FIELD_W / 2
    near = [c for c in checkers if (c[0] < middle) == (half == "left")]
    if near:
        cx, cy = min(near, key=lambda c: math.hypot(c[0] - spot[0], c[1] - spot[1]))
        dx, dy = spot[0] - cx, spot[1] - cy
        dist = math.hypot(dx, dy) or 1.0
        reach = 0.5 * board.d + 0.45 * size
        return (cx + dx / dist * reach, cy + dy / dist * reach), (-dx / dist, -dy / dist)
    # No checker there: against the nearer long rim.
    if spot[1] < FIELD_H / 2:
        return (spot[0], 0.55 * size), (0.0, -1.0)
    return (spot[0], FIELD_H - 0.55 * size), (0.0, 1.0)


def cup_pose(
    board: Board,
    spec: CupSpec,
    occupied: list[tuple[float, float]],
    camera: CameraPose,
    rng: np.random.Generator,
) -> np.ndarray | None:
    """A dice cup's matrix (the unit cup of :func:`tools.render3d.blender.cup_mesh`: radius 1,
    height 1, its foot at the origin) standing over the tips of ``spec.row``'s points, where the
    camera sees it (foot, side and rim) clear of every checker; None if 40 tries find no spot.
    The spots it covers are added to ``occupied`` (so that no die comes to rest under it)."""
    geom, s, d = board.geometry, board.scale, board.d
    stretch = board.style.stretch
    half_w, half_d = 0.5 * spec.width * d, 0.5 * spec.depth * d  # field units along x
    height = spec.height * d * s
    ring = np.linspace(0.0, 2 * math.pi, 24, endpoint=False)
    # Each checker's top as the camera sees it, and how far its rim reaches there.
    tops = np.array([board.world(x, y, board.thickness_m) for x, y in occupied], np.float64).reshape(-1, 3)
    centres = camera.project(tops) if len(tops) else np.zeros((0, 2))
    rims = camera.project(tops + np.array([d * s / 2, 0.0, 0.0])) if len(tops) else np.zeros((0, 2))
    reach = np.linalg.norm(rims - centres, axis=1) * 1.15 + 1.0
    for _ in range(40):
        x, y = render2d.cup_spot(rng, spec, geom, d, stretch)
        wx, wy, _ = board.world(x, y)
        outline = [
            (wx + half_w * s * math.cos(a), wy + half_d * s * math.sin(a), z) for a in ring for z in (0.0, height)
        ]
        hull = cv2.convexHull(camera.project(np.asarray(outline)).astype(np.float32))
        if all(
            cv2.pointPolygonTest(hull, (float(c[0]), float(c[1])), True) < -r
            for c, r in zip(centres, reach, strict=True)
        ):
            for a in ring[::3]:
                occupied.append((x + half_w * math.cos(a), y + half_d * math.sin(a) / stretch))
            yaw = float(rng.normal(0.0, 8.0))
            foot = translation(wx, wy, 0.0) @ rotation((0, 0, 1), yaw)
            shape = scaling(half_w * s, half_d * s, height)
            if spec.upright:
                return np.asarray(foot @ shape)
            # Upside down: the same cup turned over about its middle, its foot now on top.
            return np.asarray(foot @ translation(0.0, 0.0, height) @ rotation((1, 0, 0), 180.0) @ shape)
    return None


def cube_pose(
    board: Board, owner: int | None, face: tuple[float, float, float], size_m: float, rng: np.random.Generator
) -> np.ndarray:
    """The doubling cube's matrix: centred in the middle of the bar, or at the owner's end, read from his seat."""
    x, y = board.geometry.cube_center(owner)
    wx, wy, _ = board.world(x, y)
    z = (board.bar_top_m() if board.style.bar_raised else 0.0004) if board.style.bar_fraction > 0 else 0.0
    yaw = float(rng.normal(0.0, 6.0)) + (180.0 if owner == 2 else 0.0)
    out: np.ndarray = translation(wx, wy, z + size_m / 2) @ rotation((0, 0, 1), yaw) @ face_up(face)
    return out


def hand_parts(board: Board, rng: np.random.Generator) -> list[tuple[str, np.ndarray]]:
    """A hand (palm, four fingers, thumb) and forearm in a sleeve, reaching over the board from a player's side.

    Returns ``(kind, matrix)``: ``skin-ellipsoid`` and ``*-cylinder`` parts are unit spheres and
    unit cylinders (radius 1, height 1, centred) under their matrices.
    """
    s = board.scale
    target = np.array(board.world(float(rng.uniform(0.1, 0.9)) * FIELD_W, float(rng.uniform(0.15, 0.85)) * FIELD_H))
    side = 1.0 if rng.random() < 0.5 else -1.0  # from player 1's side (-y) or player 2's
    entry = target + np.array([float(rng.normal(0, 0.12)), -side * (FIELD_H * s * 0.5 + 0.35), 0.0])
    height = float(rng.uniform(0.03, 0.1))
    target[2] = height
    entry[2] = height + float(rng.uniform(0.12, 0.25))
    u = target - entry
    u /= np.linalg.norm(u)
    flat_u = np.array([u[0], u[1], 0.0]) / math.hypot(u[0], u[1])
    n = np.array([-flat_u[1], flat_u[0], 0.0])
    scale = float(rng.uniform(0.9, 1.1))
    parts: list[tuple[str, np.ndarray]] = []
    palm = target - flat_u * 0.03 * scale
    palm_m = translation(*palm) @ _axes(flat_u, n) @ scaling(0.05 * scale, 0.045 * scale, 0.016 * scale)
    parts.append(("skin-ellipsoid", palm_m))
    curl = float(rng.uniform(0.0, 0.5))
    for k, (off, length) in enumerate(((-0.028, 0.036), (-0.01, 0.042), (0.01, 0.04), (0.028, 0.032))):
        base = palm + flat_u * 0.045 * scale + n * off * scale
        direction = flat_u - np.array([0, 0, curl])
        direction /= np.linalg.norm(direction)
        centre = base + direction * length * scale
        radius = (0.0095 - 0.0008 * k) * scale
        parts.append(
            ("skin-ellipsoid", translation(*centre) @ _axes(direction, n) @ scaling(length * scale, radius, radius))
        )
    thumb_side = 1.0 if rng.random() < 0.5 else -1.0
    thumb_dir = flat_u * 0.6 + n * thumb_side * 0.8
    thumb_dir /= np.linalg.norm(thumb_dir)
    thumb = palm + n * thumb_side * 0.035 * scale + thumb_dir * 0.03 * scale
    parts.append(("skin-ellipsoid", translation(*thumb) @ _axes(thumb_dir, n) @ scaling(0.032 * scale, 0.011, 0.011)))
    wrist = palm - flat_u * 0.055 * scale
    cuff = wrist - u * float(rng.uniform(0.02, 0.12))
    for kind, a, b, r in (("skin-cylinder", wrist, cuff, 0.028), ("sleeve-cylinder", cuff, entry, 0.045)):
        axis = b - a
        length = float(np.linalg.norm(axis))
        parts.append((kind, translation(*((a + b) / 2)) @ frame_axes(axis) @ scaling(r * scale, r * scale, length)))
    return parts


def _axes(x_dir: np.ndarray, side: np.ndarray) -> np.ndarray:
    """A rotation whose local +x is ``x_dir`` and local +y is as near ``side`` as allowed."""
    x = x_dir / np.linalg.norm(x_dir)
    z = np.cross(x, side)
    z /= np.linalg.norm(z)
    if z[2] < 0:
        z = -z
    y = np.cross(z, x)
    m = np.eye(4)
    m[:3, :3] = np.stack([x, y, z], axis=1)
    return m
