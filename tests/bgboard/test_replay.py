# SPDX-License-Identifier: MIT
"""``bgboard replay``: recorded frames (a folder of photos, a video file) through the real
table pipeline: reader, motion gate, controller and an SQLite store."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import cv2
import numpy as np
import pytest
from rendered_table import FakeCamera, move_frames, opening_frames, save_profile

from bgboard.cli import main
from bgboard.config import Config
from bgboard.referee import SetupError
from bgboard.replay import replay
from bgboard.store import MatchStore
from engine.match import Move, OpeningRoll


@pytest.fixture(scope="module")
def profile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return save_profile(tmp_path_factory.mktemp("profile") / "board.toml")


@pytest.fixture(scope="module")
def images() -> list[np.ndarray]:
    return opening_frames() + move_frames()


@pytest.fixture(scope="module")
def photos(tmp_path_factory: pytest.TempPathFactory, images: list[np.ndarray]) -> Path:
    """The game as a folder of PNG photos, taken in name order."""
    folder = tmp_path_factory.mktemp("photos")
    for n, image in enumerate(images):
        assert cv2.imwrite(str(folder / f"IMG_{n:04d}.png"), image)
    return folder


@pytest.fixture(scope="module")
def video(tmp_path_factory: pytest.TempPathFactory, images: list[np.ndarray]) -> Path:
    """The game as a video at 5 frames a second (Motion JPEG in AVI)."""
    path = tmp_path_factory.mktemp("video") / "game.avi"
    height, width = images[0].shape[:2]
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter.fourcc(*"MJPG"), 5.0, (width, height))
    assert writer.isOpened()
    for image in images:
        writer.write(image)
    writer.release()
    return path


@pytest.fixture
def config(profile: Path) -> Config:
    return Config().with_overrides(camera_profile=str(profile), match_players="Ann,Bob", match_length="5")


def test_a_folder_of_photos_gives_the_opening_roll_and_the_move(config: Config, photos: Path) -> None:
    out = io.StringIO()
    summary = replay(str(photos), config, out=out, fps=5.0)
    lines = out.getvalue().splitlines()
    assert (summary.frames, summary.reads, summary.rolls, summary.moves, summary.flagged) == (23, 2, 1, 1, 0)
    said = [line.split("s  ", 1)[1] for line in lines[:-1]]
    assert said[0] == "opening roll 5-2: Ann plays first"
    assert said[1] in ("Ann played 13/8 13/11", "Ann played 13/11 13/8")
    # Stamped with the frames' time: the dice lay still for the gate's and the controller's settle
    # after the last hand (frame 2, at 0.4 s).
    assert re.match(r" +\d+\.\d\ds  ", lines[0])
    assert 1.6 <= float(lines[0].split("s", 1)[0]) <= 2.4
    assert lines[-1] == "replay: 23 frames, 2 reads, 1 rolls and 1 moves recorded, 0 flagged"


def test_a_video_file_gives_the_same_with_its_own_timestamps(config: Config, video: Path, tmp_path: Path) -> None:
    out = io.StringIO()
    store = tmp_path / "replayed.sqlite3"
    summary = replay(str(video), config, out=out, json_lines=True, store_path=store)
    events = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [e["event"] for e in events] == ["opening-roll", "move", "summary"]
    assert events[0]["dice"] == [5, 2] and events[0]["source"] == "camera"
    assert events[-1]["frames"] == 23 and events[-1]["moves"] == 1 and events[-1]["rolls"] == 1
    # With --store the match is recorded there.
    with MatchStore(store, create=False) as stored:
        actions = [a.action for a in stored.actions(summary.match_id)]
    assert actions[0] == OpeningRoll(5, 2) and isinstance(actions[1], Move)


def test_the_cli_replays_a_folder_as_json_lines(
    no_user_config: Path, photos: Path, profile: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Nothing is written to the user's store without --store.
    monkeypatch.setenv("BGBOARD_STORE", str(tmp_path / "users.sqlite3"))
    out = io.StringIO()
    status = main(["replay", str(photos), "--profile", str(profile), "--fps", "5", "--json"], out=out)
    assert status == 0
    events = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [e["event"] for e in events] == ["opening-roll", "move", "summary"]
    assert not (tmp_path / "users.sqlite3").exists()


def test_an_old_config_seats_the_same_player_and_says_what_to_write(
    no_user_config: Path, photos: Path, profile: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # bottom_player = 1 counted from 0: Bob, the second named, sits at the bottom, as he did.
    config = tmp_path / "config.toml"
    config.write_text('[match]\nplayers = ["Ann", "Bob"]\nlength = 5\nbottom_player = 1\n', encoding="utf-8")
    out = io.StringIO()
    argv = ["replay", str(photos), "--config", str(config), "--profile", str(profile), "--fps", "5", "--json"]
    assert main(argv, out=out) == 0
    events = [json.loads(line) for line in out.getvalue().splitlines()]
    assert events[0]["text"] == "opening roll 2-5: Bob plays first"
    assert events[0]["on_roll"] == 2 and events[0]["dice"] == [2, 5]
    assert events[1]["event"] == "move" and events[1]["player"] == 2
    assert capsys.readouterr().err == (
        f"bgboard: note: {config}:4: match.bottom_player = 1 is read as player_at_bottom = 2; write that instead"
        " (players are numbered 1 and 2 now, in the order of players)\n"
    )


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("missing-folder", "no images match"),
        ("video:missing.avi", "cannot open the video file"),
        ("ftp://camera", "unknown kind of frame source"),
    ],
)
def test_a_bad_source_gives_a_clear_error(
    no_user_config: Path,
    profile: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    source: str,
    message: str,
) -> None:
    target = str(tmp_path / source) if source == "missing-folder" else source
    assert main(["replay", target, "--profile", str(profile)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"bgboard: error: cannot replay {target}:") and message in err


def test_a_source_that_gives_no_frame_records_no_match(
    config: Config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("bgboard.replay.open_source", lambda url: FakeCamera(url, []))
    store = tmp_path / "replayed.sqlite3"
    with pytest.raises(SetupError, match=r"^cannot replay empty:source: it gave no frames$"):
        replay("empty:source", config, out=io.StringIO(), store_path=store)
    assert not store.exists()


def test_an_address_that_is_no_camera_is_a_clear_error(
    no_user_config: Path, profile: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["replay", "usb:front", "--profile", str(profile)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("bgboard: error: cannot replay usb:front: the camera's number is 0 to 63")


def test_an_unreadable_photo_names_the_frame(config: Config, tmp_path: Path) -> None:
    (tmp_path / "a.png").write_bytes(b"not a png")
    with pytest.raises(SetupError, match=r"frame 1: .*a\.png:? (is )?not an image"):
        replay(str(tmp_path), config, out=io.StringIO())


def test_replay_needs_a_profile(no_user_config: Path, photos: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(photos)]) == 2
    assert "camera.profile" in capsys.readouterr().err


def test_one_photo_per_scene_is_held_still_with_hold(config: Config, tmp_path: Path) -> None:
    # Three photos, as someone taking a picture after each step: the dice, a hand, the move.
    images = [opening_frames()[-1], move_frames()[0], move_frames()[-1]]
    for n, image in enumerate(images):
        assert cv2.imwrite(str(tmp_path / f"IMG_{n:04d}.png"), image)
    out = io.StringIO()
    without = replay(str(tmp_path), config, out=out)
    assert without.rolls == 0 and without.moves == 0
    out = io.StringIO()
    held = replay(str(tmp_path), config, out=out, hold=2.0)
    assert (held.rolls, held.moves) == (1, 1), out.getvalue()
    assert held.frames == 3 * 10
    with pytest.raises(SetupError, match="--hold"):
        replay(str(tmp_path), config, out=io.StringIO(), hold=0)


def test_frames_of_another_size_are_refused_before_anything_is_recorded(
    profile: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    big = tmp_path / "big"
    big.mkdir()
    cv2.imwrite(str(big / "01.png"), np.full((480, 640, 3), 128, np.uint8))
    store = tmp_path / "s.sqlite3"
    args = ["--profile", str(profile), "--store", str(store)]
    assert main(["replay", str(big), *args], out=io.StringIO()) == 2
    assert "first frame is 640x480 but the profile was made for 1280x720" in capsys.readouterr().err
    camera = f"file:{big / '01.png'}"
    assert main(["referee", "--camera", camera, "--leds", "fake", *args], out=io.StringIO()) == 2
    assert "frame is 640x480 but the profile was made for 1280x720" in capsys.readouterr().err
    assert not store.exists()


def test_a_missing_profile_given_by_flag_names_the_flag(
    no_user_config: Path, photos: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["replay", str(photos), "--profile", str(photos / "missing.toml")], out=io.StringIO()) == 2
    assert "bgboard: error: --profile: cannot use the calibration profile" in capsys.readouterr().err
    assert main(["vision", "read", str(next(photos.iterdir())), "--profile", ""], out=io.StringIO()) == 1
    assert "no profile named (an empty file name)" in capsys.readouterr().err
