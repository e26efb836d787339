# SPDX-License-Identifier: MIT
"""bgboard doctor: each check on its own, with fakes where the hardware cannot be here.

The camera is a ``file:`` source of rendered frames; the LED controller is the real firmware in
simavr; the buttons are gpiozero's mock pins.
"""

from __future__ import annotations

import io
import json
import os
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import cv2
import numpy as np
import pytest

from bgboard import doctor
from bgboard.cli import main
from bgboard.doctor import (
    check_buttons,
    check_calibration,
    check_camera,
    check_config,
    check_gnubg,
    check_gpio,
    check_leds,
    check_service,
    check_space,
    check_user,
    exit_status,
)
from engine.position import Position
from firmware_bridge import protocol
from firmware_bridge.emulator import Build, Emulator, EmulatorError, build_emulator
from tests.bgboard.rendered_table import CAMERA, LIGHTING, START, STYLE, save_profile
from vision.calibration import calibrate
from vision.render import Camera, Scene, render

# The emulator build and the rendered frames are made once per worker: keep these tests together.
pytestmark = pytest.mark.xdist_group("doctor")


@pytest.fixture(scope="module")
def profile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return save_profile(tmp_path_factory.mktemp("profile") / "board.toml")


@pytest.fixture(scope="module")
def bare_profile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A profile of the same board without corner markers on its frame."""
    shot = render(Scene(points=START), style=STYLE, camera=CAMERA, lighting=LIGHTING, markers=False, seed=1)
    path = tmp_path_factory.mktemp("bare") / "board.toml"
    calibrate(shot.image, shot.corners, check=True, die_fraction=STYLE.die_fraction).save(path)
    return path


def _frame(tmp_path: Path, camera: Camera = CAMERA, markers: bool = True, name: str = "frame.png") -> Path:
    image = render(Scene(points=START), style=STYLE, camera=camera, lighting=LIGHTING, markers=markers, seed=3).image
    path = tmp_path / name
    cv2.imwrite(str(path), image)
    return path


# -- config ----------------------------------------------------------------------------------


def test_a_valid_config_file_is_ok(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('[leds]\npanel = "/dev/bgboard-leds"\n')
    result, config = check_config(path, env={})
    assert result.status == "ok" and config is not None and config.leds.panel == "/dev/bgboard-leds"


def test_an_old_key_is_a_warning_saying_what_to_write(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("[match]\nbottom_player = 0\n")
    result, config = check_config(path, env={})
    assert result.status == "warning" and config is not None and config.match.player_at_bottom == 1
    assert f"{path}:2: match.bottom_player = 0 is read as player_at_bottom = 1" in result.message


def test_a_misspelt_key_is_a_problem_naming_the_line(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("[match]\nlenght = 5\n")
    result, config = check_config(path, env={})
    assert result.status == "problem" and config is None
    assert "config.toml:2" in result.message and "did you mean 'length'" in result.message


def test_a_missing_config_file_is_a_problem_and_none_at_all_a_warning(tmp_path: Path) -> None:
    result, _ = check_config(tmp_path / "nowhere.toml", env={})
    assert result.status == "problem" and "install-pi.sh" in result.fix
    if not Path("/etc/bgboard/config.toml").exists():
        result, config = check_config(None, env={"HOME": str(tmp_path)})
        assert result.status == "warning" and config is not None


# -- camera and calibration ------------------------------------------------------------------


def test_the_camera_gives_a_frame_and_its_size(tmp_path: Path) -> None:
    result, frame = check_camera(f"file:{_frame(tmp_path)}", timeout=10)
    assert result.status == "ok" and "1280x720" in result.message
    assert frame is not None and frame.shape == (720, 1280, 3)


def test_no_camera_a_missing_one_and_one_that_hangs_are_problems(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert check_camera(None)[0].status == "problem"
    result, frame = check_camera(f"file:{tmp_path}/none*.png")
    assert result.status == "problem" and "no images match" in result.message and frame is None

    def hang(url: str) -> None:
        time.sleep(5)

    monkeypatch.setattr("vision.frames.open_source", hang)
    start = time.monotonic()
    result, _ = check_camera("/dev/video0", timeout=0.3)
    assert result.status == "problem" and "within 0.3 s" in result.message
    assert time.monotonic() - start < 2


def test_the_profile_matches_a_frame_from_the_same_camera(tmp_path: Path, profile: Path) -> None:
    frame = cv2.imread(str(_frame(tmp_path)))
    result = check_calibration(profile, frame)
    assert result.status == "ok", result.line()
    assert result.details["method"] == "markers" and float(str(result.details["moved_px"])) < 3


def test_a_moved_camera_no_longer_matches_the_profile(tmp_path: Path, profile: Path) -> None:
    moved = Camera(offset=(0.03, 0.02), rotation=2.0)
    frame = cv2.imread(str(_frame(tmp_path, moved)))
    result = check_calibration(profile, frame)
    assert result.status == "problem" and "moved" in result.message
    assert "bgboard vision calibrate" in result.fix


def test_without_markers_the_board_frame_is_compared(tmp_path: Path, bare_profile: Path, profile: Path) -> None:
    still = cv2.imread(str(_frame(tmp_path, markers=False)))
    assert check_calibration(bare_profile, still).status == "ok"
    moved = cv2.imread(str(_frame(tmp_path, Camera(offset=(0.05, 0.04), rotation=3.0), markers=False)))
    result = check_calibration(bare_profile, moved)
    # Found by the profile's view of the board, and followed: the referee would read on.
    assert result.status == "warning" and result.details["method"] == "frame", result.line()
    assert float(str(result.details["followed_px"])) > 30 and "has moved up to" in result.message
    assert "calibrate again" in result.fix
    # Markers taken off after calibration: what lies on the frame (or is taken off it) hides
    # no checker, and the board reads on.
    result = check_calibration(profile, still)
    assert result.status == "ok" and "reads at confidence" in result.message, result.line()


# -- the calibration reads the frame ---------------------------------------------------------


def test_the_frame_reads_with_confidence_with_a_good_profile(tmp_path: Path, profile: Path) -> None:
    result = check_calibration(profile, cv2.imread(str(_frame(tmp_path))))
    assert result.status == "ok" and "reads at confidence" in result.message
    assert float(str(result.details["confidence"])) >= float(str(result.details["confidence_floor"]))


def test_a_profile_made_with_a_hand_over_the_board_is_a_problem(tmp_path: Path) -> None:
    # What bgboard vision calibrate refuses now, made without the check: every clean frame
    # then read as occluded, and doctor said "ok calibration ... within 0.0 px".
    hand = render(Scene(points=START), style=STYLE, camera=CAMERA, lighting=LIGHTING, hand=True, seed=5)
    path = tmp_path / "handcal.toml"
    calibrate(hand.image, hand.corners).save(path)
    result = check_calibration(path, cv2.imread(str(_frame(tmp_path))), source="file:frame.png")
    assert result.status == "problem", result.line()
    assert re.search(r"reads as occluded \(a hand or an object over .* near \d+,\d+-\d+,\d+\)", result.message)
    assert "bgboard vision calibrate" in result.fix and result.details["reads"] == "occluded"


def test_a_hand_over_the_board_now_is_a_problem(tmp_path: Path, profile: Path) -> None:
    hand = render(Scene(points=START), style=STYLE, camera=CAMERA, lighting=LIGHTING, hand=True, seed=5).image
    result = check_calibration(profile, hand)
    assert result.status == "problem" and "occluded" in result.message
    assert "clear the board" in result.fix and "bgboard vision calibrate" in result.fix


def test_a_frame_that_does_not_read_with_confidence_is_a_problem(tmp_path: Path) -> None:
    # A profile learnt from the start photo said to show another position: it reads the start
    # as nothing sure.
    shot = render(Scene(points=START), style=STYLE, camera=CAMERA, lighting=LIGHTING, seed=1)
    path = tmp_path / "wrongpos.toml"
    calibrate(shot.image, shot.corners, position=Position.from_id("AL7vAwAAvu8DAA")).save(path)
    result = check_calibration(path, cv2.imread(str(_frame(tmp_path))))
    assert result.status == "problem", result.line()
    assert "reads with confidence" in result.message and "bgboard vision calibrate" in result.fix


def test_a_malformed_profile_is_a_problem(tmp_path: Path, profile: Path) -> None:
    frame = cv2.imread(str(_frame(tmp_path)))
    cut = tmp_path / "trunc.toml"
    cut.write_bytes(profile.read_bytes()[:200])
    result = check_calibration(cut, frame)
    assert result.status == "problem" and "missing key 'models'" in result.message
    assert "bgboard vision calibrate" in result.fix
    bad = tmp_path / "badcorners.toml"
    bad.write_text(re.sub(r"(?m)^corners = .*$", "corners = [[1,2]]", profile.read_text()))
    result = check_calibration(bad, frame)
    assert result.status == "problem" and "corners must be four x,y pairs" in result.message


def test_another_resolution_a_missing_profile_and_none_set_are_problems(tmp_path: Path, profile: Path) -> None:
    small = np.zeros((480, 640, 3), np.uint8)
    result = check_calibration(profile, small)
    assert result.status == "problem" and "640x480" in result.message
    assert check_calibration(tmp_path / "none.toml", small).status == "problem"
    result = check_calibration(None, small)
    assert result.status == "problem" and "camera.profile" in result.message


# -- the LED controller ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def firmware(tmp_path_factory: pytest.TempPathFactory) -> Build:
    try:
        return build_emulator(tmp_path_factory.mktemp("emulator-build"))
    except EmulatorError as exc:
        # Never a skip: the real firmware runs wherever the suite runs.
        pytest.fail(str(exc), pytrace=False)


@pytest.fixture
def emulator(firmware: Build, tmp_path: Path) -> Iterator[Emulator]:
    emu = Emulator(firmware, tmp_path)
    emu.start()
    try:
        yield emu
    finally:
        emu.stop()


def test_the_real_firmware_answers_with_the_expected_version(emulator: Emulator) -> None:
    result = check_leds(emulator.port, timeout=10)
    assert result.status == "ok", result.line()
    assert result.details["firmware"] == f"{protocol.FW_MAJOR}.{protocol.FW_MINOR}.{protocol.FW_PATCH}"
    assert result.details["led_count"] == 44


def test_firmware_of_another_version_must_be_flashed_again(emulator: Emulator, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(protocol, "FW_MINOR", protocol.FW_MINOR + 1)
    result = check_leds(f"serial:{emulator.port}", timeout=10)
    assert result.status == "problem" and "make flash" in result.fix


def test_a_missing_port_and_a_silent_one_are_problems(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    result = check_leds("/dev/bgboard-leds-not-here")
    assert result.status == "problem" and "no device" in result.message
    result = check_leds("/dev/bgboard-leds") if not os.path.exists("/dev/bgboard-leds") else result
    assert "udev" in result.fix or "no device" in result.message
    # A port that opens but where nothing answers (pyserial's loop:// echoes our own frames).
    result = check_leds("loop://", timeout=0.5)
    assert result.status == "problem" and "no LED controller answered" in result.message
    caplog.clear()  # the link logs its failed handshakes


def test_panels_without_a_controller_are_reported_for_what_they_are() -> None:
    assert check_leds("fake").status == "warning"
    assert check_leds("gpio:status=22").status == "skipped"
    assert check_leds("nonsense").status == "problem"


# -- buttons ---------------------------------------------------------------------------------


class _Presser(io.StringIO):
    """Presses the button each prompt asks for (or ``swap[name]`` instead), as a person would."""

    def __init__(self, factory: object, pins: dict[str, int], swap: dict[str, str] | None = None) -> None:
        super().__init__()
        self.factory = factory
        self.pins = pins
        self.swap = swap or {}

    def write(self, text: str) -> int:
        if text.startswith("press "):
            name = self.swap.get(text.split()[1], text.split()[1])
            if name in self.pins:
                pin = self.factory.pin(self.pins[name])  # type: ignore[attr-defined]

                def press() -> None:
                    pin.drive_low()
                    time.sleep(0.1)
                    pin.drive_high()

                threading.Timer(0.05, press).start()
        return super().write(text)


@pytest.fixture
def mock_factory() -> Iterator[object]:
    from gpiozero.pins.mock import MockFactory  # type: ignore[import-untyped,unused-ignore]

    factory = MockFactory()
    try:
        yield factory
    finally:
        factory.reset()


def test_each_button_pressed_when_asked_is_ok(mock_factory: object) -> None:
    pins = {"done": 5, "undo": 6}
    out = _Presser(mock_factory, pins)
    results = check_buttons(pins, out, timeout=3, pin_factory=mock_factory)
    assert [r.status for r in results] == ["ok", "ok"], [r.line() for r in results]
    assert "press done (GPIO5)" in out.getvalue()


def test_an_unwired_and_a_swapped_button_are_problems(mock_factory: object) -> None:
    pins = {"done": 5, "undo": 6, "hint": 21}
    # done is pressed as undo; undo brings nothing (its press went to done); hint is not wired.
    out = _Presser(mock_factory, {"done": 5, "undo": 6}, swap={"done": "undo", "undo": "nothing"})
    results = check_buttons(pins, out, timeout=0.5, pin_factory=mock_factory)
    assert [r.status for r in results] == ["problem", "problem", "problem"]
    assert "got undo" in results[0].message and "swapped" in results[0].fix
    assert "GPIO21" in results[2].fix


# -- gnubg, GPIO, space, user, service -------------------------------------------------------


def test_gnubg_answers_and_a_missing_one_is_a_problem() -> None:
    result = check_gnubg(timeout=60)
    assert result.status == "ok" and "8/5 6/5" in result.message
    result = check_gnubg("/nonexistent/gnubg", timeout=5)
    assert result.status == "problem"


def test_the_gnubg_checked_is_the_one_bgboard_gnubg_names(monkeypatch: pytest.MonkeyPatch) -> None:
    # The table runs the program $BGBOARD_GNUBG names: a gnubg elsewhere on the path is no answer.
    monkeypatch.setenv("BGBOARD_GNUBG", "/nonexistent/gnubg")
    result = check_gnubg(timeout=5)
    assert result.status == "problem"
    assert "$BGBOARD_GNUBG names /nonexistent/gnubg" in result.message and "unset BGBOARD_GNUBG" in result.fix


def test_the_gpio_backend_off_and_on_a_pi() -> None:
    assert check_gpio(None, "none (not a Raspberry Pi)", buttons=False).status == "ok"
    assert check_gpio(None, "none (not a Raspberry Pi)", buttons=True).status == "warning"
    on_pi = check_gpio("Raspberry Pi 5 Model B Rev 1.0", "none (no lgpio)", buttons=True)
    assert on_pi.status == "problem" and "lgpio" in on_pi.fix
    assert check_gpio("Raspberry Pi 5 Model B Rev 1.0", "lgpio (gpiozero LGPIOFactory)", True).status == "ok"


def test_free_space_where_the_store_will_be(tmp_path: Path) -> None:
    store = tmp_path / "not" / "yet" / "matches.sqlite3"
    assert check_space(store).status == "ok"
    assert check_space(store, low=1 << 62).status == "warning"
    assert check_space(store, low=1 << 62, none=1 << 61).status == "problem"


def test_a_missing_led_layout_is_a_problem_whatever_the_panel() -> None:
    for panel in ("fake", "terminal", "gpio:turn.1=17"):
        result = check_leds(panel, "no-such-layout")
        assert result.status == "problem" and "no-such-layout" in result.message, panel


def test_a_store_path_the_referee_would_refuse_is_a_problem(tmp_path: Path) -> None:
    assert check_space(tmp_path).status == "problem"
    plain = tmp_path / "plain"
    plain.write_text("not a store\n", encoding="utf-8")
    under = check_space(plain / "matches.sqlite3")
    assert under.status == "problem" and f"{plain} is a file, not a folder" in under.message
    foreign = check_space(plain)
    assert foreign.status == "problem" and "not a bgboard match store" in foreign.message
    assert plain.read_text(encoding="utf-8") == "not a store\n"


def test_the_service_user_and_its_groups() -> None:
    assert check_user("root", ("root",)).status == "ok"
    result = check_user("root", ("root", "no-such-group-here"))
    assert result.status == "problem" and "usermod -aG no-such-group-here root" in result.fix
    assert check_user("no-such-user-here").status == "problem"


def test_the_service_state() -> None:
    assert check_service(None).status == "skipped"
    assert check_service("active").status == "ok"
    assert check_service("failed").status == "problem"
    assert check_service("inactive").status == "warning"


# -- the command -----------------------------------------------------------------------------


def test_the_command_checks_everything_and_exits_by_the_worst(
    tmp_path: Path, profile: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    frame = _frame(tmp_path)
    config = tmp_path / "config.toml"
    config.write_text(
        f'[camera]\nsource = "file:{frame}"\nprofile = "{profile}"\n'
        f'[leds]\npanel = "fake"\n[buttons]\npins = ""\n[store]\npath = "{tmp_path}/matches.sqlite3"\n'
    )
    monkeypatch.setattr(doctor, "service_state", lambda: None)
    status = main(["doctor", "--config", str(config), "--json", "--save-frame", str(tmp_path / "start.png")])
    report = json.loads(capsys.readouterr().out)
    by_name = {check["name"]: check["status"] for check in report["checks"]}
    assert status == 0, report
    assert by_name["camera"] == by_name["calibration"] == by_name["gnubg"] == by_name["frame"] == "ok"
    assert by_name["leds"] == "warning" and report["problems"] == 0
    saved = cv2.imread(str(tmp_path / "start.png"))
    assert saved is not None and saved.shape == (720, 1280, 3)

    config.write_text(f'[camera]\nsource = "file:{tmp_path}/none.png"\n[buttons]\npins = ""\n')
    assert main(["doctor", "--config", str(config)]) == 1
    lines = capsys.readouterr().out.splitlines()
    camera = next(line for line in lines if line.split()[1] == "camera")
    assert camera.startswith("problem") and "; fix: " in camera


def test_exit_status() -> None:
    ok = check_service("active")
    assert exit_status([ok]) == 0
    assert exit_status([ok, check_service("failed")]) == 1
