# SPDX-License-Identifier: MIT
"""Calibration checks itself, and the files around it say what is wrong in one line.

A new profile must read its own frame back as the position given, with confidence and nothing
over the board: a hand over the board, wrong corners or a wrong position are refused (nothing
written), good calibrations of rendered boards pass. Profiles and images that are not what they
should be, and output paths that cannot be written, give one-line errors naming the file.
"""

from __future__ import annotations

import re
from pathlib import Path

import cv2
import numpy as np
import pytest

from bgboard.cli import main
from engine.position import Position
from vision import calibration
from vision.calibration import CalibrationError, calibrate, check_corners, verify
from vision.frames import CameraError, read_image
from vision.profile import Profile, ProfileError
from vision.render import STYLES, DieSpec, Scene, random_setup, render

START = tuple(Position.STARTING.to_absolute(1)[0])
#: A position a move away from the start: not what a photo of the start shows.
MOVED = "sGfwATDgc/ABMA"
REGION = r"near \d+,\d+-\d+,\d+"


def _corners(corners: np.ndarray) -> str:
    return " ".join(f"{x:.1f},{y:.1f}" for x, y in corners)


def _calibrate_cli(image: np.ndarray, tmp_path: Path, *extra: str, name: str = "start.png") -> tuple[int, Path]:
    path = tmp_path / name
    cv2.imwrite(str(path), image)
    out = tmp_path / "board.toml"
    return main(["vision", "calibrate", str(path), *extra, "-o", str(out)]), out


# -- the calibration reads its frame back ----------------------------------------------------


def test_a_hand_over_the_board_is_refused_and_nothing_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The tester's hand.png: a hand from the top over points 17 and 18, across the frame.
    hand = render(Scene(points=START), seed=5, hand=True).image
    status, out = _calibrate_cli(hand, tmp_path, "--markers")
    err = capsys.readouterr().err
    assert status == 1 and not out.exists()
    assert re.search(rf"bgboard: error: the board reads as occluded \(a hand or an object over .* {REGION}\)", err)
    assert "nothing over the board" in err and "Traceback" not in err


@pytest.mark.parametrize("seed", [0, 2, 3, 7])
def test_hands_over_the_board_are_refused_on_other_boards(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    style, camera, lighting = random_setup(rng)
    shot = render(Scene(points=START), style=style, camera=camera, lighting=lighting, seed=seed, hand=True)
    with pytest.raises(CalibrationError, match="occluded") as info:
        calibrate(shot.image, shot.corners, check=True)
    assert info.value.kind == "occluded"


def test_a_hand_over_the_field_only_is_refused() -> None:
    # Classic board, seed 2004: a dark arm over points 13-15 the colour of the frame it crosses,
    # so only the field gives it away; unchecked, its profile misreads every clean frame.
    shot = render(Scene(points=START), style=STYLES["classic"], seed=2004, hand=True)
    with pytest.raises(CalibrationError, match=rf"occluded \(a hand or an object over the field {REGION}\)"):
        calibrate(shot.image, shot.corners, check=True)


def test_wrong_corners_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shot = render(Scene(points=START), seed=1)
    # Corners of another photo (an example the README once gave).
    status, out = _calibrate_cli(shot.image, tmp_path, "--corners", "212,88 1065,92 1071,640 205,633")
    err = capsys.readouterr().err
    assert status == 1 and not out.exists()
    # Corners of another photo sample the frame and the trays: refused, the corners named.
    assert "are the corners the playing field's" in err
    shifted = shot.corners + np.array([25.0, 0.0])
    with pytest.raises(CalibrationError):
        calibrate(shot.image, shifted, check=True)
    jitter = shot.corners + np.random.default_rng(3).normal(0, 30, (4, 2))
    with pytest.raises(CalibrationError):
        calibrate(shot.image, jitter, check=True)


def test_a_position_that_is_not_what_the_photo_shows_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shot = render(Scene(points=START), seed=1)
    status, out = _calibrate_cli(shot.image, tmp_path, "--markers", "--position", MOVED)
    err = capsys.readouterr().err
    assert status == 1 and not out.exists()
    said = r"(a checker where it has none|more than \d+|fewer than \d+) on \d+"
    assert re.search(rf"points? [\d, ]+ do(es)? not read as the given position: {said}", err), err
    assert re.search(REGION, err)
    # A position far from what the photo shows: its checkers' colour is learnt from bare spots,
    # and the board reads as something over it; either way the advice names the position.
    with pytest.raises(CalibrationError, match="is the position the one the photo shows") as info:
        calibrate(shot.image, shot.corners, position=Position.from_id("AL7vAwAAvu8DAA"), check=True)
    assert info.value.kind in ("position", "occluded")


@pytest.mark.parametrize("style", sorted(STYLES))
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_good_calibrations_of_every_style_pass(style: str, seed: int) -> None:
    shot = render(Scene(points=START), style=STYLES[style], seed=seed)
    profile = calibrate(shot.image, shot.corners, check=True)
    assert verify(profile, shot.image, Position.STARTING).points == START
    assert calibrate(shot.image, check=True).source == "markers"


def test_good_calibrations_on_random_boards_cameras_and_lights_pass() -> None:
    rng = np.random.default_rng(7)
    for i in range(12):
        style, camera, lighting = random_setup(rng)
        shot = render(Scene(points=START), style=style, camera=camera, lighting=lighting, seed=i)
        profile = calibrate(shot.image, shot.corners, check=True)
        assert verify(profile, shot.image, Position.STARTING).points == START, i


def test_the_command_calibrates_from_png_and_jpeg_and_with_dice_on_the_board(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shot = render(Scene(points=START), seed=1)
    for name in ("start.png", "start.jpg"):
        status, out = _calibrate_cli(shot.image, tmp_path, "--markers", name=name)
        assert status == 0 and Profile.load(out).source == "markers", capsys.readouterr().err
        out.unlink()
    status, _ = _calibrate_cli(shot.image, tmp_path, "--corners", _corners(shot.corners))
    assert status == 0
    # The tester's frame.jpg: the start with two dice lying on the right half.
    dice = render(Scene(points=START, dice=(DieSpec(3), DieSpec(5))), seed=3).image
    status, _ = _calibrate_cli(dice, tmp_path, "--markers", name="frame.jpg")
    assert status == 0, capsys.readouterr().err


@pytest.mark.parametrize(
    ("corners", "message"),
    [
        ("0,0 0,0 0,0 0,0", r"the corners beside the 13-point and the 24-point are the same point \(0,0\)"),
        ("100,100 300,300 500,500 700,700", r"enclose 0\.0% of the 1280x720 image \(they lie on a line"),
        ("346,115 912,602 926,122 345,589", "two sides of the quadrilateral the corners make cross"),
        ("346,115 926,122 600,200 345,589", "do not make a convex quadrilateral"),
        ("-5000,0 99999,0 99999,99999 0,99999", r"13-point \(-5000,0\) is outside the 1280x720 image"),
        ("nan,1 200,3 400,500 6,700", "the corner beside the 13-point is not a number"),
        ("345,589 912,602 926,122 346,115", "clockwise"),
    ],
)
def test_degenerate_corners_are_refused_clearly(
    corners: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shot = render(Scene(points=START), seed=1)
    status, out = _calibrate_cli(shot.image, tmp_path, "--corners", corners)
    err = capsys.readouterr().err
    assert status == 1 and not out.exists()
    assert re.search(message, err), err
    with pytest.raises(CalibrationError, match=message):
        check_corners(calibration.parse_corners(corners), shot.image)


# -- profiles --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def good_profile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    shot = render(Scene(points=START), seed=1)
    path = tmp_path_factory.mktemp("profile") / "board.toml"
    calibrate(shot.image, shot.corners).save(path)
    return path


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda text: text[:200], r"board\.toml: missing key 'models' \(the file may be cut short\)"),
        (
            lambda text: re.sub(r"(?m)^corners = .*$", "corners = [[1,2]]", text),
            r"board\.toml: corners must be four x,y pairs",
        ),
        (lambda text: text.replace("corners =", "cornerz ="), r"board\.toml: missing key 'corners'; is 'cornerz'"),
        (
            lambda text: re.sub(r"(?m)^bar_fraction = .*$", 'bar_fraction = "wide"', text),
            r"board\.toml: bar_fraction must be a number, not 'wide'",
        ),
        (lambda text: "", r"board\.toml is empty"),
        (lambda text: text.replace("version = 1", "version = 2"), r"board\.toml: profile version 2, expected 1"),
        (
            lambda text: re.sub(r"(?ms)^\[models\.p1\].*?(?=^\[)", "", text),
            r"board\.toml: missing the model \[models\.p1\]",
        ),
        (
            lambda text: re.sub(r"(?ms)^\[models\.empty1(_\d+)?\].*?(?=^\[|\Z)", "", text),
            r"board\.toml: missing the model \[models\.empty1\]",
        ),
        (
            lambda text: re.sub(r"(?m)^corners = .*$", "corners = [[1,2],[1,2],[3,4],[5,6]]", text),
            r"board\.toml: corners: the corners beside the 13-point and the 24-point are the same point",
        ),
        (lambda text: text.replace("border = [", "border = [1, "), r"board\.toml: border must be a list of 16800"),
        (lambda text: text.replace('cube_kind = "cube"', 'cube_kind = "ball"'), "cube_kind must be 'cube' or 'track'"),
    ],
)
def test_a_bad_profile_says_what_is_wrong_in_words(
    edit: object, message: str, good_profile: Path, tmp_path: Path
) -> None:
    bad = tmp_path / "board.toml"
    bad.write_text(edit(good_profile.read_text()))  # type: ignore[operator]
    with pytest.raises(ProfileError, match=message):
        Profile.load(bad)


def test_a_profile_that_is_a_folder_missing_or_not_text_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "afolder"
    folder.mkdir()
    with pytest.raises(ProfileError, match=r"afolder is a folder, not a profile"):
        Profile.load(folder)
    with pytest.raises(ProfileError, match="no such profile"):
        Profile.load(tmp_path / "missing.toml")
    binary = tmp_path / "start.png"
    cv2.imwrite(str(binary), np.zeros((8, 8, 3), np.uint8))
    with pytest.raises(ProfileError, match=r"start\.png is not a profile: not a text file"):
        Profile.load(binary)


def test_the_read_command_gives_one_line_for_a_cut_profile(
    good_profile: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "trunc.toml"
    bad.write_bytes(good_profile.read_bytes()[:200])
    frame = tmp_path / "frame.png"
    cv2.imwrite(str(frame), render(Scene(points=START), seed=2).image)
    assert main(["vision", "read", str(frame), "--profile", str(bad)]) == 1
    err = capsys.readouterr().err
    assert (
        err.startswith("bgboard: error: ") and "trunc.toml: missing key 'models'" in err and len(err.splitlines()) == 1
    )


def test_a_good_profile_still_loads_and_reads(good_profile: Path) -> None:
    profile = Profile.load(good_profile)
    assert verify(profile, render(Scene(points=START), seed=2).image, Position.STARTING).points == START


# -- images ----------------------------------------------------------------------------------


def test_bad_images_give_one_line_naming_the_file(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "afolder"
    folder.mkdir()
    with pytest.raises(CameraError, match=r"afolder is a folder, not an image"):
        read_image(folder)
    empty = tmp_path / "empty.jpg"
    empty.write_bytes(b"")
    with pytest.raises(CameraError, match=r"empty\.jpg is empty"):
        read_image(empty)
    text = tmp_path / "text.jpg"
    text.write_text("hello world\n")
    with pytest.raises(CameraError, match=r"text\.jpg is not an image OpenCV can read \(PNG, JPEG"):
        read_image(text)
    ok, png = cv2.imencode(".png", render(Scene(points=START), seed=1).image)
    assert ok
    cut = tmp_path / "trunc.png"
    cut.write_bytes(png.tobytes()[:5000])
    capfd.readouterr()
    with pytest.raises(CameraError, match=r"trunc\.png is cut short: a PNG without its end"):
        read_image(cut)
    # OpenCV's own "[ WARN:0@...] ... PNG input buffer is incomplete" stays off the terminal.
    captured = capfd.readouterr()
    assert "WARN" not in captured.err + captured.out


def test_the_commands_give_one_line_for_bad_images(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    cut = tmp_path / "trunc.png"
    _, png = cv2.imencode(".png", render(Scene(points=START), seed=1).image)
    cut.write_bytes(png.tobytes()[:5000])
    folder = tmp_path / "afolder"
    folder.mkdir()
    for path in (cut, folder):
        capfd.readouterr()
        assert main(["vision", "dice", str(path)]) == 1
        err = capfd.readouterr().err
        assert err.startswith("bgboard: error: ") and len(err.splitlines()) == 1, err


# -- output paths ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("output", "reason"),
    [
        ("{tmp}/nope/board.toml", "no such folder"),
        ("{tmp}", "it is a folder"),
        ("", "no file name given"),
        ("{tmp}/afile/board.toml", "is a file, not a folder"),
    ],
)
def test_calibrate_into_a_path_that_cannot_be_written_says_so(
    output: str, reason: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "afile").write_text("x")
    image = tmp_path / "start.png"
    cv2.imwrite(str(image), render(Scene(points=START), seed=1).image)
    target = output.format(tmp=tmp_path)
    assert main(["vision", "calibrate", str(image), "--markers", "-o", target]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"bgboard: error: cannot write {target or repr('')}: ") and reason in err
    assert len(err.splitlines()) == 1
    with pytest.raises(ProfileError, match=f"cannot write .*{reason}"):
        Profile(image_size=(10, 10), corners=[(0, 0)] * 4, bar_fraction=0.0).save(target)
