# SPDX-License-Identifier: MIT
"""The synthetic frame renderer: determinism, ground truth, markers, dice, hand, random scenes."""

from __future__ import annotations

from dataclasses import replace

import cv2
import numpy as np
import pytest

from vision.geometry import FIELD_H, FIELD_W, FieldGeometry
from vision.render import (
    CHECKER_LOOKS,
    STYLES,
    Camera,
    CubeSpec,
    CupSpec,
    DieSpec,
    Lighting,
    Scene,
    TrackSpec,
    arranged,
    field_inside,
    longest_line,
    random_scene,
    random_setup,
    render,
    stack_spots,
)

OPENING = (-2, 0, 0, 0, 0, 5, 0, 3, 0, 0, 0, -5, 5, 0, 0, 0, -3, 0, -5, 0, 0, 0, 0, 2)
SCENE = Scene(
    points=OPENING,
    dice=(DieSpec(3), DieSpec(5, flat=False)),
    cube=CubeSpec(2, owner=1),
)


def _marker_corners(image: np.ndarray) -> dict[int, np.ndarray]:
    aruco = cv2.aruco
    detector = aruco.ArucoDetector(aruco.getPredefinedDictionary(aruco.DICT_4X4_50), aruco.DetectorParameters())
    found, ids, _ = detector.detectMarkers(image)
    if ids is None:
        return {}
    return {int(i): c.reshape(4, 2) for i, c in zip(ids.ravel(), found, strict=True)}


def test_same_seed_same_image() -> None:
    a = render(SCENE, seed=7)
    b = render(SCENE, seed=7)
    c = render(SCENE, seed=8)
    assert np.array_equal(a.image, b.image)
    assert a.dice_boxes == b.dice_boxes
    assert not np.array_equal(a.image, c.image)


def test_image_shape_and_corners_follow_homography() -> None:
    r = render(SCENE, camera=Camera(size=(1280, 720)))
    assert r.image.shape == (720, 1280, 3) and r.image.dtype == np.uint8
    field = np.array([[0, 0], [FIELD_W, 0], [FIELD_W, FIELD_H], [0, FIELD_H]], np.float64)
    projected = cv2.perspectiveTransform(field.reshape(-1, 1, 2), r.homography).reshape(4, 2)
    assert np.allclose(projected, r.corners, atol=1e-6)
    # Contract order: beside the 13, 24, 1 and 12 points, i.e. TL, TR, BR, BL as player 1 sees it.
    tl, tr, br, bl = r.corners
    assert tl[0] < tr[0] and bl[0] < br[0] and tl[1] < bl[1] and tr[1] < br[1]


@pytest.mark.parametrize("name", sorted(STYLES))
def test_markers_detected_and_touch_the_field_corners(name: str) -> None:
    r = render(SCENE, style=STYLES[name], seed=3)
    markers = _marker_corners(r.image)
    assert sorted(markers) == [0, 1, 2, 3]
    middle = np.mean([c.mean(0) for c in markers.values()], axis=0)
    for ident in range(4):
        corners = markers[ident]
        nearest = corners[np.argmin(np.linalg.norm(corners - middle, axis=1))]
        assert np.linalg.norm(nearest - r.corners[ident]) < 3.0, (ident, nearest, r.corners[ident])


def test_markers_in_random_setups() -> None:
    rng = np.random.default_rng(4)
    found = 0
    for i in range(6):
        style, camera, lighting = random_setup(rng)
        r = render(random_scene(rng), style=style, camera=camera, lighting=lighting, seed=i)
        found += len(_marker_corners(r.image)) == 4
    # Strong blur, glare and compression may hide a marker now and then, not usually.
    assert found >= 4


def test_no_markers() -> None:
    r = render(SCENE, markers=False)
    assert _marker_corners(r.image) == {}


def test_dice_boxes_inside_image() -> None:
    rng = np.random.default_rng(1)
    for i in range(8):
        style, camera, lighting = random_setup(rng)
        scene = random_scene(rng, dice=2)
        r = render(scene, style=style, camera=camera, lighting=lighting, seed=i)
        h, w = r.image.shape[:2]
        assert len(r.dice_boxes) == len(scene.dice)
        for x, y, bw, bh in r.dice_boxes:
            assert x >= 0 and y >= 0 and x + bw <= w and y + bh <= h
            assert bw > 5 and bh > 5


def test_die_box_covers_die() -> None:
    # Without cast shadows, everything the die changes is the die itself.
    scene = Scene(points=(0,) * 24, dice=(DieSpec(6, position=(900.0, 500.0)),))
    plain = render(Scene(points=(0,) * 24), lighting=Lighting(noise=0, jpeg_quality=100, shadow=0.0), seed=2)
    die = render(scene, lighting=Lighting(noise=0, jpeg_quality=100, shadow=0.0), seed=2)
    x, y, w, h = die.dice_boxes[0]
    changed = np.abs(die.image.astype(int) - plain.image.astype(int)).max(axis=2) > 40
    inside = changed[y : y + h, x : x + w].sum()
    assert inside > 0.5 * w * h * 0.5
    assert inside >= 0.8 * changed.sum()


def test_hand_changes_pixels_mostly_inside_its_box() -> None:
    lighting = Lighting(noise=0.0, jpeg_quality=100)
    plain = render(SCENE, lighting=lighting, seed=5)
    hand = render(SCENE, lighting=lighting, hand=True, seed=5)
    assert plain.hand_box is None and hand.hand_box is not None
    x, y, w, h = hand.hand_box
    changed = np.abs(hand.image.astype(int) - plain.image.astype(int)).max(axis=2) > 30
    assert changed.sum() > 2000
    assert changed[y : y + h, x : x + w].sum() >= 0.9 * changed.sum()


def test_cube_and_track_render() -> None:
    for scene in (
        Scene(points=OPENING, cube=CubeSpec()),
        Scene(points=OPENING, cube=CubeSpec(64, owner=2)),
        Scene(points=OPENING, track=TrackSpec(8, owner=2)),
    ):
        assert render(scene).image.shape == (720, 1280, 3)


def test_bar_and_off_render_and_differ() -> None:
    points = list(OPENING)
    points[5] = 2
    points[23] = 0
    a = render(Scene(points=tuple(points), bar=(1, 2), off=(2, 0)), seed=1)
    b = render(Scene(points=tuple(points), bar=(0, 0), off=(0, 0)), seed=1)
    assert not np.array_equal(a.image, b.image)


def test_random_scene_counts() -> None:
    rng = np.random.default_rng(0)
    for _ in range(300):
        scene = random_scene(rng)
        assert len(scene.points) == 24
        first = sum(n for n in scene.points if n > 0) + scene.bar[0] + scene.off[0]
        second = -sum(n for n in scene.points if n < 0) + scene.bar[1] + scene.off[1]
        assert first == 15 and second == 15
        # A point holds one player's checkers only: signed counts make that structural, so check
        # the stacks are varied instead.
        assert all(abs(n) <= 15 for n in scene.points)
    stacks = [abs(n) for _ in range(50) for n in random_scene(rng).points if n]
    assert min(stacks) == 1 and max(stacks) >= 6


def test_random_scene_dice_and_cube_options() -> None:
    rng = np.random.default_rng(3)
    scene = random_scene(rng, dice=0, cube=False)
    assert scene.dice == () and scene.cube is None and scene.track is None


def test_scene_needs_24_points() -> None:
    with pytest.raises(ValueError):
        Scene(points=(0,) * 23)


# -- boards and habits of real tables (opt-in: the defaults draw what they always drew) ---------


def test_a_line_of_six_or_seven_where_it_fits_then_a_pile() -> None:
    geom = FieldGeometry()
    piled = stack_spots(geom, 6, 7)
    assert [layer for *_, layer in piled] == [0, 0, 0, 0, 0, 1, 1]
    assert [spot[:2] for spot in piled] == [geom.slot_center(6, k) for k in range(7)]
    lined = stack_spots(geom, 6, 7, line=6)
    assert [layer for *_, layer in lined] == [0] * 6 + [1]
    # A point in the bottom row: its line runs up from the bottom edge, a checker a diameter apart.
    ys = [y for _, y, layer in lined if layer == 0]
    assert np.allclose(np.diff(ys), -geom.checker_diameter)
    # On the geometry's field a seventh does not fit in the line; on a squarer field it does,
    # checkers being round, and flatter in field units.
    assert longest_line(geom.checker_diameter) == 6
    square = (FIELD_W / FIELD_H) / 1.0
    assert longest_line(geom.checker_diameter, square) == 7
    seven = stack_spots(geom, 20, 7, line=7, stretch=square)
    assert [layer for *_, layer in seven] == [0] * 7
    assert max(y for _, y, _ in seven) < FIELD_H / 2
    assert [layer for *_, layer in stack_spots(geom, 20, 7, line=7)] == [0] * 6 + [1]


def test_the_bar_halves_are_what_lies_on_them() -> None:
    points = (0,) * 23 + (-2,)
    assert Scene(points=points, bar=(2, 1)).bar_halves() == (2, -1)
    # Player 1's checker in the upper half, player 2's two in the lower one.
    spots = ((600.0, 200.0), (600.0, 700.0), (610.0, 800.0))
    scene = Scene(points=(0,) * 22 + (-2, 0), bar=(1, 2), bar_spots=spots)
    assert scene.bar_halves() == (-2, 1)
    with pytest.raises(ValueError, match="spots on the bar"):
        Scene(points=points, bar=(1, 0), bar_spots=spots)


def test_arranged_scenes_keep_a_side_to_a_half_of_the_bar_and_off_the_cube() -> None:
    rng = np.random.default_rng(8)
    seen_upper_p1 = 0
    for _ in range(200):
        style, *_ = random_setup(rng, varied=True)
        scene = arranged(random_scene(rng), style, rng)
        lower, upper = scene.bar_halves()
        assert abs(lower) + abs(upper) == sum(scene.bar)
        if scene.bar_spots and scene.bar[0] and upper > 0:
            seen_upper_p1 += 1
        cube_y = FieldGeometry(bar_fraction=style.bar_fraction).cube_center(scene.cube.owner if scene.cube else None)[1]
        for x, y in scene.bar_spots:
            assert abs(x - FIELD_W / 2) <= 0.25 * FieldGeometry().point_width
            if scene.cube is not None:
                assert abs(y - cube_y) * style.stretch > 0.5 * FieldGeometry().checker_diameter
        assert len(scene.lines) == 24 and set(scene.lines) <= {5, 6, 7}
    assert seen_upper_p1 > 0


def _changed(a: np.ndarray, b: np.ndarray, level: int = 30) -> np.ndarray:
    return np.abs(a.astype(int) - b.astype(int)).max(axis=2) > level


def test_a_cup_stands_clear_of_the_checkers() -> None:
    lighting = Lighting(noise=0.0, jpeg_quality=100, glare=0.0)
    style = replace(STYLES["classic"], solid=True)
    camera = Camera(tilt=20.0, tilt_direction=80.0)
    plain = Scene(points=OPENING)
    drawn = 0
    for row in ("top", "bottom"):
        cups = Scene(points=OPENING, cups=(CupSpec(row=row),))
        a = render(plain, style=style, camera=camera, lighting=lighting, seed=4)
        b = render(cups, style=style, camera=camera, lighting=lighting, seed=4)
        changed = _changed(a.image, b.image)
        drawn += changed.sum() > 1500
        # Not one checker's middle is touched.
        for i, n in enumerate(OPENING):
            for x, y, _ in stack_spots(FieldGeometry(bar_fraction=style.bar_fraction), i + 1, abs(n)):
                u, v = cv2.perspectiveTransform(np.array([[[x, y]]], np.float64), a.homography)[0, 0]
                assert not changed[round(v) - 2 : round(v) + 3, round(u) - 2 : round(u) + 3].any(), (i + 1, row)
    assert drawn == 2


def test_varied_setups_show_their_whole_field_and_its_shape() -> None:
    rng = np.random.default_rng(12)
    aspects = []
    for _ in range(40):
        style, camera, _ = random_setup(rng, varied=True)
        assert field_inside(style, camera)
        assert style.solid and 1.0 <= style.aspect <= 1.32 and camera.tilt <= 30.0
        aspects.append(style.aspect)
    assert min(aspects) < 1.1 and max(aspects) > 1.2
    # Straight above, the field in the frame is as wide over high as the board's field.
    for aspect in (1.0, 1.3):
        style = replace(STYLES["classic"], aspect=aspect)
        r = render(Scene(points=OPENING), style=style, camera=Camera(tilt=0.0, rotation=0.0, distortion=0.0))
        tl, tr, _, bl = r.corners
        assert abs((tr[0] - tl[0]) / (bl[1] - tl[1]) - aspect) < 0.01


def test_looks_hinges_and_logos_draw_something() -> None:
    lighting = Lighting(noise=0.0, jpeg_quality=100)
    scene = Scene(points=OPENING)
    base = render(scene, lighting=lighting, seed=1)
    for change in ({"checker_look": look} for look in CHECKER_LOOKS if look != "plain"):
        other = render(scene, style=replace(STYLES["classic"], **change), lighting=lighting, seed=1)
        assert _changed(base.image, other.image, 12).sum() > 200, change
    hinged = render(scene, style=replace(STYLES["classic"], hinges=2), lighting=lighting, seed=1)
    changed = _changed(base.image, hinged.image)
    ys, xs = np.nonzero(changed)
    middle = cv2.perspectiveTransform(np.array([[[FIELD_W / 2, FIELD_H / 2]]], np.float64), base.homography)[0, 0]
    assert len(xs) > 50 and np.abs(xs - middle[0]).max() < 40
    logo = render(scene, style=replace(STYLES["classic"], logo="www.example.com"), lighting=lighting, seed=1)
    ys, _ = np.nonzero(_changed(base.image, logo.image))
    assert len(ys) > 300 and np.abs(ys - middle[1]).max() < 60


def test_a_cup_put_down_is_drawn_only_where_no_checker_lies_under_it() -> None:
    lighting = Lighting(noise=0.0, jpeg_quality=100, glare=0.0)
    geom = FieldGeometry()
    plain = render(Scene(points=OPENING), lighting=lighting, seed=4)
    over_checkers = Scene(points=OPENING, cups=(CupSpec(position=geom.slot_center(6, 2)),))
    assert np.array_equal(render(over_checkers, lighting=lighting, seed=4).image, plain.image)
    bare = (geom.point_center_x(10), 0.65 * FIELD_H)
    beside = render(Scene(points=OPENING, cups=(CupSpec(position=bare),)), lighting=lighting, seed=4)
    assert _changed(plain.image, beside.image).sum() > 1500
