# SPDX-License-Identifier: MIT
"""The board, its pieces, the hand and the lights as a Blender scene, rendered with Cycles on the CPU.

Only this module imports :mod:`bpy`. A setup's static scene (table, board, lights, camera) is
built once; each frame then moves the 30 checkers, the dice and the cube, adds a hand if asked,
and renders a linear (scene-referred) image that :mod:`tools.render3d.camera` turns into a
camera's JPEG. Every material is procedural (node textures), every mesh built from code.
"""

from __future__ import annotations

import contextlib
import importlib
import itertools
import math
import os
import sys
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import bpy  # type: ignore[import-untyped,unused-ignore]
import numpy as np

from tools.render3d.plan import RGB, Board, CameraPose, Lighting, kelvin_rgb
from vision.geometry import FIELD_H, FIELD_W
from vision.render import pip_layout

# Blender's other modules exist only once bpy has been imported.
bmesh = importlib.import_module("bmesh")
_mathutils = importlib.import_module("mathutils")
Matrix: Any = _mathutils.Matrix
Vector: Any = _mathutils.Vector

#: Face values of a die by the local axis their face looks along: opposite faces add to seven.
DIE_FACES: dict[int, tuple[float, float, float]] = {
    1: (0, 0, 1),
    6: (0, 0, -1),
    2: (0, 1, 0),
    5: (0, -1, 0),
    3: (1, 0, 0),
    4: (-1, 0, 0),
}
#: The doubling cube's numbers by face axis (64 up when the cube is centred).
CUBE_FACES: dict[int, tuple[float, float, float]] = {
    64: (0, 0, 1),
    2: (0, 0, -1),
    4: (0, 1, 0),
    8: (0, -1, 0),
    16: (1, 0, 0),
    32: (-1, 0, 0),
}


def linear(colour: RGB) -> tuple[float, float, float, float]:
    """sRGB 0-255 to Blender's linear RGBA."""
    c = np.clip(np.asarray(colour, np.float64) / 255.0, 0.0, 1.0)
    lin = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    return float(lin[0]), float(lin[1]), float(lin[2]), 1.0


def to_matrix(m: np.ndarray) -> Matrix:
    """A numpy 4x4 as Blender's matrix."""
    return Matrix([[float(v) for v in row] for row in m])


def turn_to(axis: Sequence[float]) -> Matrix:
    """A rotation that turns local +z to ``axis`` (a face's outward normal)."""
    return Vector((0.0, 0.0, 1.0)).rotation_difference(Vector(axis)).to_matrix().to_4x4()


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """Silence Cycles' progress lines, which it writes to the process's stdout from C."""
    sys.stdout.flush()
    saved = os.dup(1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 1)
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        os.close(devnull)


# -- materials ----------------------------------------------------------------------------------


class Materials:
    """Procedural materials, one node tree each, seeded by the style's variant."""

    def __init__(self, variant: int) -> None:
        self.variant = variant
        self.count = 0

    def _new(self, name: str) -> tuple[Any, Any, Any]:
        self.count += 1
        mat = bpy.data.materials.new(f"{name}.{self.count}")
        mat.use_nodes = True
        nodes = mat.node_tree.nodes
        bsdf = nodes["Principled BSDF"]
        return mat, nodes, bsdf

    def _coords(self, nodes: Any, links: Any, scale: float) -> Any:
        coord = nodes.new("ShaderNodeTexCoord")
        mapping = nodes.new("ShaderNodeMapping")
        # Each material is offset by the style's variant, so two boards never share a grain.
        rng = np.random.default_rng(self.variant * 7919 + self.count)
        mapping.inputs["Location"].default_value = tuple(float(v) for v in rng.uniform(-50, 50, 3))
        mapping.inputs["Rotation"].default_value = (0.0, 0.0, float(rng.normal(0, 0.05)))
        mapping.inputs["Scale"].default_value = (scale, scale, scale)
        links.new(coord.outputs["Object"], mapping.inputs["Vector"])
        return mapping.outputs["Vector"]

    def surface(self, kind: str, colour: RGB, *, roughness: float | None = None, along_x: bool = True) -> Any:
        """A board surface: ``wood``, ``leather``, ``felt``, ``printed``, ``cloth`` or ``plastic``."""
        mat, nodes, bsdf = self._new(kind)
        links = mat.node_tree.links
        base = linear(colour)
        dark = (*tuple(v * 0.6 for v in base[:3]), 1.0)
        light = (*tuple(min(1.0, v * 1.25) for v in base[:3]), 1.0)
        bsdf.inputs["Base Color"].default_value = base
        if kind == "wood":
            # Grain: bands along the piece's length, bent by noise, with finer streaks on top.
            vec = self._coords(nodes, links, 1.0)
            warp = nodes.new("ShaderNodeTexNoise")
            warp.inputs["Scale"].default_value = 6.0
            warp.inputs["Detail"].default_value = 2.0
            links.new(vec, warp.inputs["Vector"])
            bend = nodes.new("ShaderNodeVectorMath")
            bend.operation = "MULTIPLY_ADD"
            bend.inputs[1].default_value = (0.02, 0.02, 0.02)
            links.new(warp.outputs["Color"], bend.inputs[0])
            links.new(vec, bend.inputs[2])
            wave = nodes.new("ShaderNodeTexWave")
            wave.wave_type = "BANDS"
            wave.bands_direction = "Y" if along_x else "X"
            wave.inputs["Scale"].default_value = 60.0
            wave.inputs["Distortion"].default_value = 3.0
            wave.inputs["Detail"].default_value = 4.0
            wave.inputs["Detail Scale"].default_value = 1.5
            links.new(bend.outputs["Vector"], wave.inputs["Vector"])
            streak = nodes.new("ShaderNodeTexNoise")
            streak.inputs["Scale"].default_value = 300.0
            links.new(vec, streak.inputs["Vector"])
            mix = nodes.new("ShaderNodeMix")
            mix.data_type = "FLOAT"
            mix.inputs["Factor"].default_value = 0.3
            links.new(wave.outputs["Fac"], mix.inputs["A"])
            links.new(streak.outputs["Fac"], mix.inputs["B"])
            ramp = nodes.new("ShaderNodeValToRGB")
            ramp.color_ramp.elements[0].color = dark
            ramp.color_ramp.elements[1].color = light
            links.new(mix.outputs["Result"], ramp.inputs["Fac"])
            links.new(ramp.outputs["Color"], bsdf.inputs["Base Color"])
            bsdf.inputs["Roughness"].default_value = roughness if roughness is not None else 0.35
            bsdf.inputs["Coat Weight"].default_value = 0.3
        elif kind in ("leather", "felt", "cloth"):
            scale = {"leather": 900.0, "felt": 2500.0, "cloth": 1500.0}[kind]
            vec = self._coords(nodes, links, 1.0)
            fine = nodes.new("ShaderNodeTexNoise" if kind != "leather" else "ShaderNodeTexVoronoi")
            fine.inputs["Scale"].default_value = scale
            broad = nodes.new("ShaderNodeTexNoise")
            broad.inputs["Scale"].default_value = 8.0
            links.new(vec, fine.inputs["Vector"])
            links.new(vec, broad.inputs["Vector"])
            ramp = nodes.new("ShaderNodeValToRGB")
            ramp.color_ramp.elements[0].color = (*tuple(v * 0.85 for v in base[:3]), 1.0)
            ramp.color_ramp.elements[1].color = (*tuple(min(1.0, v * 1.12) for v in base[:3]), 1.0)
            links.new(broad.outputs["Fac"], ramp.inputs["Fac"])
            links.new(ramp.outputs["Color"], bsdf.inputs["Base Color"])
            bump = nodes.new("ShaderNodeBump")
            bump.inputs["Strength"].default_value = 0.25 if kind == "leather" else 0.15
            bump.inputs["Distance"].default_value = 0.0003
            links.new(fine.outputs["Distance" if kind == "leather" else "Fac"], bump.inputs["Height"])
            links.new(bump.outputs["Normal"], bsdf.inputs["Normal"])
            default = {"leather": 0.45, "felt": 0.95, "cloth": 0.85}[kind]
            bsdf.inputs["Roughness"].default_value = roughness if roughness is not None else default
            if kind == "felt":
                bsdf.inputs["Sheen Weight"].default_value = 0.5
        else:  # printed or plastic: a flat colour, laminate or moulded
            bsdf.inputs["Roughness"].default_value = roughness if roughness is not None else 0.3
        return mat

    def checker(self, colour: RGB, roughness: float) -> Any:
        """Moulded plastic or resin: glossy to matte, with a clear coat on the glossy ones."""
        mat, _nodes, bsdf = self._new("checker")
        bsdf.inputs["Base Color"].default_value = linear(colour)
        bsdf.inputs["Roughness"].default_value = roughness
        bsdf.inputs["Coat Weight"].default_value = max(0.0, 0.6 - roughness)
        return mat

    def skin(self, colour: RGB) -> Any:
        """Skin: blotchy colour, a little light scattered under the surface, a soft sheen."""
        mat, nodes, bsdf = self._new("skin")
        links = mat.node_tree.links
        base = linear(colour)
        vec = self._coords(nodes, links, 1.0)
        blotch = nodes.new("ShaderNodeTexNoise")
        blotch.inputs["Scale"].default_value = 60.0
        links.new(vec, blotch.inputs["Vector"])
        ramp = nodes.new("ShaderNodeValToRGB")
        ramp.color_ramp.elements[0].color = (base[0] * 0.85, base[1] * 0.78, base[2] * 0.78, 1.0)
        ramp.color_ramp.elements[1].color = (min(1.0, base[0] * 1.08), base[1] * 1.02, base[2] * 1.0, 1.0)
        links.new(blotch.outputs["Fac"], ramp.inputs["Fac"])
        links.new(ramp.outputs["Color"], bsdf.inputs["Base Color"])
        bsdf.inputs["Roughness"].default_value = 0.5
        bsdf.inputs["Subsurface Weight"].default_value = 0.2
        bsdf.inputs["Subsurface Radius"].default_value = (0.004, 0.002, 0.001)
        bsdf.inputs["Subsurface Scale"].default_value = 1.0
        return mat

    def metal(self, brass: bool) -> Any:
        """Polished steel or brass (hinges)."""
        mat, _nodes, bsdf = self._new("metal")
        bsdf.inputs["Base Color"].default_value = linear((190, 150, 70) if brass else (200, 200, 204))
        bsdf.inputs["Metallic"].default_value = 1.0
        bsdf.inputs["Roughness"].default_value = 0.25
        return mat

    def plain(self, colour: RGB, roughness: float = 0.4) -> Any:
        """A plain colour."""
        mat, _nodes, bsdf = self._new("plain")
        bsdf.inputs["Base Color"].default_value = linear(colour)
        bsdf.inputs["Roughness"].default_value = roughness
        return mat


# -- meshes -------------------------------------------------------------------------------------


def mesh_object(name: str, verts: Sequence[Sequence[float]], faces: Sequence[Sequence[int]], material: Any) -> Any:
    """An object from vertices and faces, in world coordinates."""
    mesh = bpy.data.meshes.new(name)
    mesh.from_pydata([tuple(v) for v in verts], [], [tuple(f) for f in faces])
    mesh.materials.append(material)
    mesh.update()
    obj = bpy.data.objects.new(name, mesh)
    bpy.context.scene.collection.objects.link(obj)
    return obj


def box(name: str, lo: Sequence[float], hi: Sequence[float], material: Any) -> Any:
    """An axis-aligned box."""
    x0, y0, z0 = lo
    x1, y1, z1 = hi
    verts = [
        (x0, y0, z0),
        (x1, y0, z0),
        (x1, y1, z0),
        (x0, y1, z0),
        (x0, y0, z1),
        (x1, y0, z1),
        (x1, y1, z1),
        (x0, y1, z1),
    ]
    faces = [(0, 3, 2, 1), (4, 5, 6, 7), (0, 1, 5, 4), (1, 2, 6, 5), (2, 3, 7, 6), (3, 0, 4, 7)]
    return mesh_object(name, verts, faces, material)


def checker_mesh(name: str, radius: float, thickness: float, groove: bool, material: Any) -> Any:
    """A checker as a lathed profile: bevelled rims and, on most sets, a ring groove on both faces."""
    bevel = 0.18 * thickness
    top = thickness
    half: list[tuple[float, float]] = [(0.0, top)]
    if groove:
        g, w = 0.04 * thickness, 0.03 * radius
        for r0 in (0.62, 0.72):
            half += [(r0 * radius - w, top), (r0 * radius, top - g), (r0 * radius + w, top)]
    for k in range(5):
        a = (math.pi / 2) * k / 4
        half.append((radius - bevel + bevel * math.sin(a), top - bevel + bevel * math.cos(a)))
    # The lower half mirrors the upper one: checkers are flipped in play.
    profile = half + [(r, thickness - z) for r, z in reversed(half)]
    return lathe(name, profile, material)


def cup_mesh(name: str, material: Any) -> Any:
    """A dice cup of radius 1 and height 1, its foot at the origin, open at the top: the wall a
    tenth of its radius thick, the floor a tenth of its height, the rim rounded."""
    # From the floor's middle out, up the inside, over the rim, down the outside: the checker's
    # sense of turn (the material on the same side of the profile), so the normals face out.
    profile = [(0.0, 0.1), (0.84, 0.1), (0.88, 0.12), (0.88, 0.97), (0.9, 1.0), (0.97, 1.0), (1.0, 0.97)]
    profile += [(1.0, 0.03), (0.97, 0.0), (0.0, 0.0)]
    return lathe(name, profile, material)


def lathe(name: str, profile: Sequence[tuple[float, float]], material: Any, segments: int = 48) -> Any:
    """A mesh turned about the z axis from a profile of ``(radius, z)`` points (radius 0: on the axis)."""
    verts: list[tuple[float, float, float]] = []
    rings: list[list[int]] = []
    for r, z in profile:
        if r == 0.0:
            rings.append([len(verts)])
            verts.append((0.0, 0.0, z))
            continue
        ring = []
        for s in range(segments):
            a = 2 * math.pi * s / segments
            ring.append(len(verts))
            verts.append((r * math.cos(a), r * math.sin(a), z))
        rings.append(ring)
    faces: list[tuple[int, ...]] = []
    for upper, lower in itertools.pairwise(rings):
        for s in range(segments):
            t = (s + 1) % segments
            if len(upper) == 1:
                faces.append((upper[0], lower[t], lower[s]))
            elif len(lower) == 1:
                faces.append((upper[s], upper[t], lower[0]))
            else:
                faces.append((upper[s], upper[t], lower[t], lower[s]))
    mesh = bpy.data.meshes.new(name)
    mesh.from_pydata(verts, [], faces)
    mesh.materials.append(material)
    mesh.polygons.foreach_set("use_smooth", [True] * len(mesh.polygons))
    mesh.update()
    return mesh


def die_mesh(name: str, size: float, body: Any, pip: Any, faces: dict[int, tuple[float, float, float]]) -> Any:
    """A die with rounded edges and sunk pips (flattened spheres in the pip's colour)."""
    bm = bmesh.new()
    bmesh.ops.create_cube(bm, size=size)
    bmesh.ops.bevel(bm, geom=list(bm.edges), offset=0.14 * size, segments=3, affect="EDGES", profile=0.5)
    for f in bm.faces:
        f.smooth = True
        f.material_index = 0
    layout = pip_layout()
    rad = 0.085 * size
    for value, axis in faces.items():
        rot = turn_to(axis)
        for ix, iy in layout[value]:
            r = rad * (1.3 if value == 1 else 1.0)
            # A very flat ellipsoid barely out of the face: a painted pip, round to the face's edge.
            centre = rot @ Vector((ix * 0.25 * size, iy * 0.25 * size, 0.5 * size - 0.02 * r))
            m = Matrix.Translation(centre) @ rot @ Matrix.Diagonal((r, r, 0.1 * r, 1.0))
            made = bmesh.ops.create_uvsphere(bm, u_segments=10, v_segments=6, radius=1.0, matrix=m)
            vs = set(made["verts"])
            for f in {f for v in vs for f in v.link_faces}:
                f.material_index = 1
                f.smooth = True
    mesh = bpy.data.meshes.new(name)
    bm.to_mesh(mesh)
    bm.free()
    mesh.materials.append(body)
    mesh.materials.append(pip)
    return mesh


def cube_object(name: str, size: float, body: Any, ink: Any) -> Any:
    """The doubling cube: a rounded block with its six numbers as flat text on the faces."""
    bm = bmesh.new()
    bmesh.ops.create_cube(bm, size=size)
    bmesh.ops.bevel(bm, geom=list(bm.edges), offset=0.1 * size, segments=3, affect="EDGES", profile=0.5)
    for f in bm.faces:
        f.smooth = True
    mesh = bpy.data.meshes.new(name)
    bm.to_mesh(mesh)
    bm.free()
    mesh.materials.append(body)
    cube = bpy.data.objects.new(name, mesh)
    bpy.context.scene.collection.objects.link(cube)
    for value, axis in CUBE_FACES.items():
        curve = bpy.data.curves.new(f"{name}-{value}", type="FONT")
        curve.body = str(value)
        curve.align_x = "CENTER"
        curve.align_y = "CENTER"
        curve.size = size * (0.6 if value < 10 else 0.5)
        curve.materials.append(ink)
        text = bpy.data.objects.new(f"{name}-{value}", curve)
        bpy.context.scene.collection.objects.link(text)
        rot = turn_to(axis)
        text.matrix_world = rot @ Matrix.Translation((0.0, 0.0, 0.5 * size + 0.0002))
        text.parent = cube
    return cube


# -- the scene ----------------------------------------------------------------------------------


class Stage:
    """One setup's Blender scene: the fixed table, board, lights and camera, and the moving pieces."""

    def __init__(self, board: Board, camera: CameraPose, lighting: Lighting, samples: int, threads: int) -> None:
        bpy.ops.wm.read_factory_settings(use_empty=True)
        self.board = board
        self.camera = camera
        self.lighting = lighting
        self.scene = bpy.context.scene
        self.mats = Materials(board.style.variant)
        self.tmp = Path(tempfile.mkdtemp(prefix="render3d-"))
        self._settings(samples, threads)
        self._table()
        self._board()
        self._pieces()
        self._camera()
        self._lights()
        self.frame_objects: list[Any] = []

    # Cycles: few bounces (a board under a lamp needs no more), denoised, one CPU thread by default.
    def _settings(self, samples: int, threads: int) -> None:
        scene = self.scene
        scene.render.engine = "CYCLES"
        cycles = scene.cycles
        cycles.device = "CPU"
        cycles.samples = samples
        cycles.use_adaptive_sampling = False
        cycles.use_denoising = True
        cycles.denoiser = "OPENIMAGEDENOISE"
        cycles.denoising_input_passes = "RGB_ALBEDO_NORMAL"
        # The accurate prefilter of the albedo and normal passes would double the time per frame.
        cycles.denoising_prefilter = "FAST"
        cycles.max_bounces = 4
        cycles.diffuse_bounces = 2
        cycles.glossy_bounces = 2
        cycles.transmission_bounces = 0
        cycles.volume_bounces = 0
        cycles.transparent_max_bounces = 2
        cycles.caustics_reflective = False
        cycles.caustics_refractive = False
        cycles.blur_glossy = 1.0
        scene.render.threads_mode = "FIXED"
        scene.render.threads = max(1, threads)
        scene.render.resolution_x, scene.render.resolution_y = self.camera.size
        scene.render.resolution_percentage = 100
        scene.render.use_persistent_data = True
        settings = scene.render.image_settings
        settings.file_format = "OPEN_EXR"
        settings.color_depth = "16"
        settings.exr_codec = "ZIP"

    def _table(self) -> None:
        st = self.board.style
        mat = self.mats.surface(st.table_material, st.table_colour)
        z = -st.thickness_m
        mesh_object("table", [(-3, -3, z), (3, -3, z), (3, 3, z), (-3, 3, z)], [(0, 1, 2, 3)], mat)

    def _board(self) -> None:
        b, st = self.board, self.board.style
        w = b.world
        frame = self.mats.surface(st.frame_material, st.frame_colour, along_x=True)
        frame_y = self.mats.surface(st.frame_material, st.frame_colour, along_x=False)
        field = self.mats.surface(st.field_material, st.field_colour)
        x0, y0, x1, y1 = b.extent()
        rim_h = st.rim_height_m
        box("base", w(x0, y1, -st.thickness_m), w(x1, y0, -0.0004), frame)
        mesh_object("field", [w(0, FIELD_H), w(FIELD_W, FIELD_H), w(FIELD_W, 0), w(0, 0)], [(0, 1, 2, 3)], field)
        # The frame: rims round the field and the tray column(s); the trays' floors are lined like the field.
        box("rim-top", w(x0, 0, 0), w(x1, y0, rim_h), frame)
        box("rim-bottom", w(x0, y1, 0), w(x1, FIELD_H, rim_h), frame)
        right_inner = FIELD_W + b.divider()
        box("divider-right", w(FIELD_W, FIELD_H, 0), w(right_inner, 0, rim_h), frame_y)
        box("rim-right", w(right_inner + b.tray_width(), FIELD_H, 0), w(x1, 0, rim_h), frame_y)
        sides = ["right"]
        if st.side_trays:
            left_inner = -b.divider()
            box("divider-left", w(left_inner, FIELD_H, 0), w(0, 0, rim_h), frame_y)
            box("rim-left", w(x0, FIELD_H, 0), w(left_inner - b.tray_width(), 0, rim_h), frame_y)
            sides.append("left")
        else:
            box("rim-left", w(x0, FIELD_H, 0), w(0, 0, rim_h), frame_y)
        for side in sides:
            t0, _, t1, _ = b.tray(1, side)
            gap = 0.15 * b.d
            box(f"tray-wall-{side}", w(t0, FIELD_H / 2 + gap, 0), w(t1, FIELD_H / 2 - gap, rim_h), frame)
            mesh_object(
                f"tray-floor-{side}",
                [w(t0, FIELD_H), w(t1, FIELD_H), w(t1, 0), w(t0, 0)],
                [(0, 1, 2, 3)],
                field,
            )
        geom = b.geometry
        if st.bar_fraction > 0:
            bx0, _, bx1, _ = geom.bar_box()
            top = b.bar_top_m() if st.bar_raised else 0.0004
            box("bar", w(bx0, FIELD_H, 0), w(bx1, 0, top), frame_y)
        if st.hinges:
            # Metal hinges on the bar (or the fold): a knuckle along it, a little proud of it.
            metal = self.mats.metal(st.variant % 2 == 1)
            top = (b.bar_top_m() if st.bar_raised else 0.0004) if st.bar_fraction > 0 else 0.0
            across = 0.75 * geom.bar_width if st.bar_fraction > 0 else 0.3 * b.d
            along = 0.6 * b.d
            spots = (0.22, 0.78) if st.hinges == 2 else tuple(np.linspace(0.15, 0.85, st.hinges))
            for k, f in enumerate(spots):
                y = float(f) * FIELD_H
                lo = w(FIELD_W / 2 - across / 2, y + along / 2, top)
                hi = w(FIELD_W / 2 + across / 2, y - along / 2, top + 0.0015)
                box(f"hinge-{k}", lo, hi, metal)
        points = [self.mats.surface(st.point_material, c) for c in st.point_colours]
        length = geom.point_length
        for p in range(1, 25):
            row, _ = geom.column(p)
            cx = geom.point_center_x(p)
            half = geom.point_width / 2 * 0.97
            edge, tip = (0.0, length) if row == 0 else (float(FIELD_H), FIELD_H - length)
            z = 0.0003
            verts = [w(cx - half, edge, z), w(cx + half, edge, z), w(cx, tip, z)]
            face = (0, 1, 2) if row == 1 else (0, 2, 1)
            mesh_object(f"point-{p}", verts, [face], points[p % 2])

    def _pieces(self) -> None:
        b, st = self.board, self.board.style
        s = b.scale
        radius = b.d * s / 2
        self.checker_meshes = [
            checker_mesh(
                f"checker-{k + 1}",
                radius,
                b.thickness_m,
                st.checker_groove,
                self.mats.checker(st.checker_colours[k], st.checker_roughness),
            )
            for k in (0, 1)
        ]
        self.checkers: list[list[Any]] = []
        for k in (0, 1):
            objs = []
            for i in range(15):
                obj = bpy.data.objects.new(f"p{k + 1}-{i}", self.checker_meshes[k])
                self.scene.collection.objects.link(obj)
                objs.append(obj)
            self.checkers.append(objs)
        die_size = st.dice_fraction * b.d * s
        body = self.mats.plain(st.dice_colour, 0.25)
        pip = self.mats.plain(st.pip_colour, 0.5)
        mesh = die_mesh("die", die_size, body, pip, DIE_FACES)
        self.die_size = die_size
        self.dice = []
        for i in range(2):
            obj = bpy.data.objects.new(f"die-{i}", mesh)
            self.scene.collection.objects.link(obj)
            self.dice.append(obj)
        self.cups = []
        if st.varied:
            cup = cup_mesh("cup", self.mats.surface("leather", st.cup_colour))
            for i in range(2):
                obj = bpy.data.objects.new(f"cup-{i}", cup)
                self.scene.collection.objects.link(obj)
                obj.hide_render = True
                self.cups.append(obj)
        self.cube_size = st.cube_fraction * b.d * s
        self.cube = cube_object(
            "cube", self.cube_size, self.mats.plain(st.cube_colour, 0.3), self.mats.plain(st.cube_ink, 0.5)
        )

    def _camera(self) -> None:
        cam = self.camera
        data = bpy.data.cameras.new("camera")
        data.sensor_fit = "HORIZONTAL"
        data.sensor_width = 36.0
        data.lens = cam.focal_mm
        data.clip_start = 0.01
        data.clip_end = 20.0
        obj = bpy.data.objects.new("camera", data)
        self.scene.collection.objects.link(obj)
        rot = cam.rotation()
        m = Matrix.Identity(4)
        for i in range(3):
            for j in range(3):
                m[i][j] = float(rot[i, j])
            m[i][3] = float(cam.location[i])
        obj.matrix_world = m
        self.scene.camera = obj

    def _lights(self) -> None:
        self.lamps: list[tuple[Any, float]] = []
        for i, light in enumerate(self.lighting.lights):
            if light.kind == "sun":
                data = bpy.data.lights.new(f"light-{i}", type="SUN")
                data.energy = light.power * 3.0
                data.angle = math.radians(light.size)
            else:
                data = bpy.data.lights.new(f"light-{i}", type="AREA")
                data.shape = "DISK"
                data.size = light.size
                data.energy = light.power * 3.0
            data.color = kelvin_rgb(light.kelvin)
            obj = bpy.data.objects.new(f"light-{i}", data)
            self.scene.collection.objects.link(obj)
            obj.location = light.location
            # A lamp in view would be a blown-out disc; its reflections (the glare) stay.
            obj.visible_camera = False
            # Every light faces the board's centre.
            direction = -Vector(light.location)
            obj.rotation_euler = direction.to_track_quat("-Z", "Y").to_euler()
            self.lamps.append((data, data.energy))
        world = bpy.data.worlds.new("room")
        world.use_nodes = True
        bg = world.node_tree.nodes["Background"]
        colour = kelvin_rgb(self.lighting.world_kelvin)
        bg.inputs["Color"].default_value = (*colour, 1.0)
        self.world_strength = self.lighting.world_strength * 3.0 / math.pi
        bg.inputs["Strength"].default_value = self.world_strength
        self.world_bg = bg
        self.scene.world = world

    # -- a frame ---------------------------------------------------------------------------------

    def clear_frame(self) -> None:
        """Remove the objects added for the last frame (a hand)."""
        for obj in self.frame_objects:
            bpy.data.objects.remove(obj, do_unlink=True)
        self.frame_objects = []

    def vary_light(self, rng: np.random.Generator) -> dict[str, float]:
        """Small changes of the light between frames (a cloud, a lamp's flicker, a door); returns the factors."""
        factors = {}
        for i, (data, energy) in enumerate(self.lamps):
            f = float(rng.uniform(0.92, 1.08))
            data.energy = energy * f
            factors[f"light-{i}"] = f
        f = float(rng.uniform(0.9, 1.1))
        self.world_bg.inputs["Strength"].default_value = self.world_strength * f
        factors["world"] = f
        return factors

    def place_checker(self, player: int, index: int, matrix: Matrix) -> None:
        """Put checker ``index`` of ``player`` (1 or 2) where ``matrix`` says."""
        self.checkers[player - 1][index].matrix_world = matrix

    def place_die(self, index: int, matrix: Matrix | None) -> None:
        """Put a die, or hide it (``None``)."""
        obj = self.dice[index]
        obj.hide_render = matrix is None
        if matrix is not None:
            obj.matrix_world = matrix

    def place_cup(self, index: int, matrix: Matrix | None) -> None:
        """Stand a dice cup, or hide it (``None``)."""
        obj = self.cups[index]
        obj.hide_render = matrix is None
        if matrix is not None:
            obj.matrix_world = matrix

    def place_cube(self, matrix: Matrix) -> None:
        """Put the doubling cube."""
        self.cube.matrix_world = matrix

    def die_corners(self, index: int) -> np.ndarray:
        """World corners (8 x 3) of a die's bounding box."""
        obj = self.dice[index]
        mw = obj.matrix_world
        return np.array([tuple(mw @ Vector(c)) for c in obj.bound_box], np.float64)

    def die_lowest(self, matrix: Matrix) -> float:
        """The lowest z of the die's mesh under ``matrix`` (to rest it on the board)."""
        mesh = self.dice[0].data
        return float(min((matrix @ v.co).z for v in mesh.vertices))

    def add_hand(self, parts: Iterable[tuple[str, Matrix]], skin: RGB, sleeve: RGB) -> None:
        """A hand and forearm from ellipsoids and cylinders: ``(kind, matrix)`` with kind ``skin`` or ``sleeve``."""
        mats = {
            "skin": self.mats.skin(skin),
            "sleeve": self.mats.surface("cloth", sleeve),
        }
        for i, (kind, matrix) in enumerate(parts):
            if kind.endswith("cylinder"):
                mesh = bpy.data.meshes.new(f"hand-{i}")
                bm = bmesh.new()
                bmesh.ops.create_cone(bm, cap_ends=True, segments=20, radius1=1.0, radius2=1.0, depth=1.0)
            else:
                mesh = bpy.data.meshes.new(f"hand-{i}")
                bm = bmesh.new()
                bmesh.ops.create_uvsphere(bm, u_segments=20, v_segments=12, radius=1.0)
            for f in bm.faces:
                f.smooth = True
            bm.to_mesh(mesh)
            bm.free()
            mesh.materials.append(mats["sleeve" if kind.startswith("sleeve") else "skin"])
            obj = bpy.data.objects.new(f"hand-{i}", mesh)
            self.scene.collection.objects.link(obj)
            obj.matrix_world = matrix
            self.frame_objects.append(obj)

    def render(self, seed: int) -> np.ndarray:
        """Render the scene as it stands: linear RGB, float32, rows from the top."""
        self.scene.cycles.seed = seed % (2**31)
        path = self.tmp / "frame.exr"
        self.scene.render.filepath = str(path)
        with _quiet():
            bpy.ops.render.render(write_still=True)
        image = bpy.data.images.load(str(path))
        try:
            w, h = image.size
            pixels = np.empty(w * h * 4, np.float32)
            image.pixels.foreach_get(pixels)
        finally:
            bpy.data.images.remove(image)
        return pixels.reshape(h, w, 4)[::-1, :, :3].copy()

    def close(self) -> None:
        """Remove the temporary folder."""
        for p in self.tmp.glob("*"):
            p.unlink()
        self.tmp.rmdir()
