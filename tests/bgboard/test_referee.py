# SPDX-License-Identifier: MIT
"""``bgboard referee``: the threaded referee over rendered camera frames, a real reader,
controller and SQLite store; only the camera is a fake, addressed as a camera is."""

from __future__ import annotations

import dataclasses
import io
import json
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np
import pytest
from rendered_table import (
    CAMERA,
    PLAYED,
    START,
    STYLE,
    Cameras,
    FakeCamera,
    frame,
    make_referee,
    move_frames,
    moved,
    opening_frames,
    save_profile,
)

from bgboard.camera import CAMERA_BACK, CAMERA_LOST
from bgboard.cli import main
from bgboard.config import Config
from bgboard.referee import Referee
from bgboard.store import MatchStore
from engine.hints import INSTALL_HINT, find_gnubg
from engine.match import Move, OpeningRoll, Phase
from hardware.panels import FakeLedPanel
from hardware.scene import Scene
from vision.frames import Frame
from vision.profile import Profile
from vision.render import DieSpec, render
from vision.render import Scene as Shot

pytestmark = pytest.mark.usefixtures("referee_threads_end")

#: Seconds a referee thread may take to play what it is given.
TIMEOUT = 60.0


class Running:
    """A referee running in a thread, its console in a string, stopped by an event."""

    def __init__(self, referee: Referee, out: io.StringIO) -> None:
        self.referee = referee
        self.out = out
        self.stop = threading.Event()
        self.status: int | None = None
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            self.status = self.referee.run(self.stop)
        except BaseException as exc:
            self.error = exc

    def events(self) -> list[dict[str, object]]:
        return [json.loads(line) for line in self.out.getvalue().splitlines()]

    def kinds(self) -> list[object]:
        return [e["event"] for e in self.events()]

    def wait_for(self, kind: str, timeout: float = TIMEOUT) -> dict[str, object]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = [e for e in self.events() if e["event"] == kind]
            if found:
                return found[0]
            assert self.thread.is_alive() or kind in self.kinds(), f"the referee stopped: {self.kinds()}"
            time.sleep(0.02)
        raise AssertionError(f"no {kind!r} event in {TIMEOUT} s: {self.kinds()}")

    def finish(self, timeout: float = TIMEOUT) -> None:
        """Wait for the referee to end by itself (the recording ended)."""
        self.thread.join(timeout)
        assert not self.thread.is_alive(), f"the referee did not stop: {self.kinds()}"
        if self.error is not None:
            raise self.error
        assert self.status == 0

    def stop_now(self) -> None:
        self.stop.set()
        self.finish(10.0)


def idle() -> Cameras:
    """A camera that sends one frame of the starting position, then nothing (a board left alone).

    The referee starts only once a camera has sent a frame.
    """
    return Cameras(FakeCamera("fake:camera", [frame(START)], then="stall"))


def start(config: Config, factory: Callable[[str], FakeCamera], **options: object) -> Running:
    out = io.StringIO()
    options.setdefault("json_lines", True)
    options.setdefault("live", False)
    referee = make_referee(config, out=out, source_factory=factory, **options)  # type: ignore[arg-type]
    return Running(referee, out)


def stored(config: Config) -> list[object]:
    assert config.store.path is not None
    with MatchStore(config.store.path, create=False) as store:
        summary = store.last_match()
        assert summary is not None
        return [a.action for a in store.actions(summary.id)]


def test_the_opening_roll_and_a_move_are_recorded_from_the_camera(config: Config) -> None:
    panel = FakeLedPanel()
    cameras = Cameras(FakeCamera("fake:camera", opening_frames() + move_frames()))
    run = start(config, cameras, panel=panel, end_with_source=True)
    run.finish()
    events = run.events()
    kinds = run.kinds()
    # Every line is one JSON object with the event's kind and its words.
    assert all(isinstance(e["event"], str) and isinstance(e["text"], str) for e in events)
    assert kinds[0] == "started" and kinds[-1] == "stopped"
    assert [k for k in kinds if k in ("opening-roll", "move")] == ["opening-roll", "move"]
    move = next(e for e in events if e["event"] == "move")
    assert sorted(str(move["play"]).split()) == ["13/11", "13/8"]
    assert move["source"] == "camera"
    assert "Ann" in str(events[0]["text"]) and "5-point match" in str(events[0]["text"])

    actions = stored(config)
    # Ann, the first named, sits at the bottom by default: the 5 on her side is hers.
    assert actions[0] == OpeningRoll(5, 2)
    assert isinstance(actions[1], Move) and actions[1].by == 0
    assert len(actions) == 2
    # The LEDs showed the match, and went dark when the referee stopped.
    assert len(panel.scenes) >= 3
    assert panel.last == Scene.dark()
    assert cameras.opened == ["fake:camera"]


def test_a_camera_that_stops_is_reopened_and_the_match_goes_on(config: Config) -> None:
    # The camera sends the opening roll, then nothing (a read that hangs); opened again, it
    # sends the move.
    cameras = Cameras(
        FakeCamera("fake:camera", opening_frames(), then="stall"),
        FakeCamera("fake:camera", move_frames()),
    )
    run = start(config, cameras, end_with_source=True, stall=0.3, backoff=(0.05, 0.2))
    run.finish()
    kinds = run.kinds()
    assert kinds.count("camera-lost") == 1 and kinds.count("camera-back") == 1
    assert kinds.index("opening-roll") < kinds.index("camera-lost") < kinds.index("camera-back") < kinds.index("move")
    lost = next(e for e in run.events() if e["event"] == "camera-lost")
    assert lost["text"] == CAMERA_LOST and "no frame for 0.3 s" in str(lost["reason"])
    assert next(e for e in run.events() if e["event"] == "camera-back")["text"] == CAMERA_BACK
    assert len(cameras.opened) == 2
    actions = stored(config)
    # The bottom player's die first, and by default the first-named player sits at the bottom.
    assert actions[0] == OpeningRoll(5, 2) and isinstance(actions[1], Move)


class FailingCamera(FakeCamera):
    """Plays its images, then its read fails as an unplugged camera's does."""

    def read(self) -> Frame | None:
        if self.seq < len(self.images):
            return super().read()
        raise OSError("no such device")


def test_a_camera_that_ends_or_fails_is_reopened_with_a_backoff(config: Config) -> None:
    attempts: list[float] = []

    def factory(url: str) -> FakeCamera:
        attempts.append(time.monotonic())
        if len(attempts) == 1:
            return FailingCamera(url, opening_frames()[:1])  # a frame, then unplugged
        if len(attempts) < 4:
            raise OSError("no such device")
        if len(attempts) == 4:
            return FakeCamera(url, opening_frames()[:2])  # two frames, then the end: reopened
        return FakeCamera(url, [], then="stall")

    run = start(config, factory, stall=30.0, backoff=(0.05, 0.1))
    run.wait_for("camera-back")
    deadline = time.monotonic() + TIMEOUT
    while len(attempts) < 5 and time.monotonic() < deadline:
        time.sleep(0.02)
    run.stop_now()
    kinds = run.kinds()
    # Said once per outage, however many tries it takes.
    assert kinds.count("camera-lost") == 2 and kinds.count("camera-back") == 1
    assert "no such device" in str(next(e for e in run.events() if e["event"] == "camera-lost")["reason"])
    # The waits double: 0.05 s, then 0.1 s.
    assert attempts[2] - attempts[1] >= 0.04 and attempts[3] - attempts[2] >= 0.09


def test_resume_carries_on_at_the_stored_state(config: Config) -> None:
    # Stopped mid-match (as by Ctrl-C) after the opening roll and the first move.
    first = start(config, Cameras(FakeCamera("fake:camera", opening_frames() + move_frames(), then="stall")))
    first.wait_for("move")
    first.stop_now()
    assert first.kinds()[-1] == "stopped"
    assert "--resume" in str(first.events()[-1]["text"])
    assert config.store.path is not None
    with MatchStore(config.store.path) as store:
        summary = store.last_match(unfinished=True)
        assert summary is not None
        expected = store.state(summary.id)
    assert expected.phase is Phase.ROLL and expected.on_roll == 1

    out = io.StringIO()
    second = make_referee(config, out=out, resume=True, source_factory=idle(), live=False)
    state = second.table.controller.state
    assert second.match_id == summary.id
    assert state == expected
    assert (state.position, state.cube, state.score, state.on_roll) == (
        expected.position,
        expected.cube,
        expected.score,
        expected.on_roll,
    )
    Running(second, out).stop_now()
    first_line = out.getvalue().splitlines()[0]
    assert first_line.split("  ", 1)[1].startswith(f"resumed match {summary.id}, Ann vs Bob, 5-point match")
    assert first_line.endswith("score 0-0, Bob to roll or double")


def test_resume_with_nothing_to_resume_starts_a_new_match(config: Config) -> None:
    # The boot service always passes --resume: on a fresh store, or after a match ended, it
    # must begin the next match rather than refuse and be restarted forever.
    out = io.StringIO()
    referee = make_referee(config, out=out, resume=True, source_factory=idle())
    Running(referee, out).stop_now()
    first = out.getvalue().splitlines()[0]
    assert "started match" in first and "nothing unfinished to resume" in first
    assert config.store.path is not None
    with MatchStore(config.store.path) as store:
        assert store.state(referee.match_id).phase is Phase.OPENING


def test_keyboard_lines_reach_the_controller(config: Config) -> None:
    read_end, write_end = os.pipe()
    with os.fdopen(read_end, "r") as keyboard, os.fdopen(write_end, "w") as typing:
        run = start(config, idle(), stdin=keyboard, stall=30.0)
        typing.write("dice 52\n")
        typing.flush()
        assert run.wait_for("opening-roll")["source"] == "correction"
        typing.write("\n13/8 13/11\n")
        typing.flush()
        move = run.wait_for("move")
        assert move["source"] == "correction"
        assert sorted(str(move["play"]).split()) == ["13/11", "13/8"]
        typing.write("hint\n")
        typing.close()  # EOF ends the keyboard, not the referee
        # Not in teach mode: no hint engine, and the players are told so.
        assert "teach" in str(run.wait_for("hint-unavailable")["reason"])
        assert run.thread.is_alive()
        run.stop_now()
    actions = stored(config)
    # The bottom player's die first, and by default the first-named player sits at the bottom.
    assert actions[0] == OpeningRoll(5, 2) and isinstance(actions[1], Move)


def test_buttons_are_queued_to_the_table(config: Config) -> None:
    pressed: list[Callable[[str], None]] = []

    class Buttons:
        closed = False

        def close(self) -> None:
            self.closed = True

    buttons = Buttons()

    def factory(pins: dict[str, object], callback: Callable[[str], None]) -> Buttons:
        assert pins == {"done": 5, "undo": 6}
        pressed.append(callback)
        return buttons

    config = config.with_overrides(buttons_pins="done=5,undo=6")
    run = start(config, idle(), buttons=factory, stall=30.0)
    pressed[0]("undo")  # from gpiozero's thread
    assert run.wait_for("refused")["text"] == "nothing to take back"
    run.stop_now()
    assert buttons.closed


class LinkedPanel(FakeLedPanel):
    """A fake panel with a link that can drop, and LEDs that blink only when refreshed."""

    connected = False
    animated = True
    refreshes = 0

    def refresh(self) -> None:
        self.refreshes += 1


def test_the_led_link_dropping_and_coming_back_is_said(config: Config) -> None:
    panel = LinkedPanel()
    run = start(config, idle(), panel=panel, stall=30.0)
    panel.connected = True
    run.wait_for("leds-connected")
    panel.connected = False
    assert "reconnecting" in str(run.wait_for("leds-lost")["text"])
    panel.connected = True
    run.wait_for("leds-back")
    run.stop_now()
    assert [k for k in run.kinds() if str(k).startswith("leds")] == ["leds-connected", "leds-lost", "leds-back"]
    # The ticks refreshed the blinking LEDs.
    assert panel.refreshes > 0


def test_the_match_end_says_how_to_export_it(config: Config) -> None:
    config = config.with_overrides(match_length="1")
    read_end, write_end = os.pipe()
    with os.fdopen(read_end, "r") as keyboard, os.fdopen(write_end, "w") as typing:
        run = start(config, idle(), stdin=keyboard, stall=30.0)
        # A 1-point match: player 1 opens, and resigns a single game at once.
        typing.write("dice 52\n13/8 13/11\nresign\naccept\n")
        typing.flush()
        run.finish()
    kinds = run.kinds()
    assert "match-over" in kinds
    export = run.events()[kinds.index("export")]
    assert "bgboard export last --format mat --store " in str(export["text"])
    assert kinds[-1] == "stopped" and run.events()[-1]["text"] == "stopped: the match is over"


# -- the command line ---------------------------------------------------------------------------


def test_cli_without_a_camera_exits_2_naming_camera_source(
    no_user_config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["referee", "--config", str(no_user_config)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("bgboard: error: no camera")
    assert "camera.source" in err and "--camera" in err


def test_cli_without_a_profile_exits_2_naming_camera_profile(
    no_user_config: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    args = ["referee", "--config", str(no_user_config), "--camera", "file:x/*.png", "--store", str(tmp_path / "s")]
    assert main(args) == 2
    assert "camera.profile" in capsys.readouterr().err


def test_teach_without_gnubg_says_so_once_and_still_records(config: Config, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BGBOARD_GNUBG", "/nonexistent/gnubg")
    cameras = Cameras(FakeCamera("fake:camera", opening_frames() + move_frames()))
    run = start(config.with_overrides(match_teach=True), cameras, end_with_source=True)
    run.finish()
    kinds = run.kinds()
    assert kinds.count("hint-unavailable") == 1
    unavailable = next(e for e in run.events() if e["event"] == "hint-unavailable")
    assert "/nonexistent/gnubg" in str(unavailable["reason"]) and "apt-get install gnubg" in str(unavailable["reason"])
    assert [k for k in kinds if k in ("opening-roll", "hint-unavailable", "move")] == [
        "opening-roll",
        "hint-unavailable",
        "move",
    ]
    assert "feedback" not in kinds
    actions = stored(config)
    # The bottom player's die first, and by default the first-named player sits at the bottom.
    assert actions[0] == OpeningRoll(5, 2) and isinstance(actions[1], Move)
    gnubg = run.referee.session.gnubg
    assert gnubg is not None and gnubg._process is None  # closed at the end


@pytest.mark.oracle
def test_teach_with_gnubg_hints_after_the_roll_and_judges_the_move(
    config: Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("BGBOARD_GNUBG", raising=False)
    if find_gnubg() is None:
        pytest.fail(INSTALL_HINT)
    cameras = Cameras(FakeCamera("fake:camera", opening_frames() + move_frames()))
    run = start(config.with_overrides(match_teach=True), cameras, end_with_source=True)
    run.finish()
    kinds = [k for k in run.kinds() if k in ("opening-roll", "hint", "move", "feedback")]
    assert kinds == ["opening-roll", "hint", "move", "feedback"]
    hint = next(e for e in run.events() if e["event"] == "hint")
    assert str(hint["text"]).startswith("hint: ") and hint["ply"] == 0
    move = next(e for e in run.events() if e["event"] == "move")
    assert str(move["note"]).startswith("gnubg 0-ply: ")
    assert config.store.path is not None
    with MatchStore(config.store.path, create=False) as store:
        summary = store.last_match()
        assert summary is not None
        assert store.actions(summary.id)[-1].note == move["note"]


def test_cli_teach_flag_sets_match_teach(
    no_user_config: Path, referee_calls: list[tuple[Config, dict[str, object]]], tmp_path: Path, profile: Path
) -> None:
    args = ["referee", "--config", str(no_user_config), "--camera", "file:x/*.png", "--profile", str(profile)]
    assert main([*args, "--store", str(tmp_path / "s.sqlite3")]) == 0
    assert main([*args, "--store", str(tmp_path / "s.sqlite3"), "--teach"]) == 0
    assert [c.match.teach for c, _ in referee_calls] == [False, True]


def test_the_cli_tells_the_referee_which_settings_came_from_flags(
    no_user_config: Path, referee_calls: list[tuple[Config, dict[str, object]]], tmp_path: Path, profile: Path
) -> None:
    args = ["referee", "--config", str(no_user_config), "--camera", "fake:x", "--profile", str(profile)]
    assert main([*args, "--store", str(tmp_path / "s"), "--resume", "--players", "Cid,Dan", "--length", "7"]) == 0
    options = referee_calls[0][1]["options"]
    assert options.given == {
        "camera.source": "--camera",
        "camera.profile": "--profile",
        "store.path": "--store",
        "match.length": "--length",
        "match.players": "--players",
    }
    assert options.resume is True


def test_what_the_reader_learns_in_play_is_saved_to_the_profile(config: Config, tmp_path: Path) -> None:
    profile = save_profile(tmp_path / "board.toml")
    before = Profile.load(profile).references
    assert before is not None and before.borrowed[23]
    config = config.with_overrides(camera_profile=str(profile))
    dice = (DieSpec(6, half="right", angle=10.0), DieSpec(4, half="left", angle=20.0))
    played = moved(START, (24, 18), (24, 20))
    frames = [frame(START, hand=True, seed=s) for s in range(10, 13)] + [frame(START, dice, seed=20)] * 9
    frames += [frame(moved(START, (24, 18)), hand=True, seed=30), frame(played, hand=True, seed=31)]
    frames += [frame(played, seed=32)] * 9
    run = start(config, Cameras(FakeCamera("fake:camera", frames)), end_with_source=True)
    run.finish()
    assert [k for k in run.kinds() if k in ("opening-roll", "move")] == ["opening-roll", "move"]
    # The 24-point, bare after 24/18 24/20, has a reference of its own in the profile now.
    after = Profile.load(profile).references
    assert after is not None and not after.borrowed[23]
    assert int(after.borrowed.sum()) < int(before.borrowed.sum())
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("board")] == ["board.toml"]


def test_a_board_bumped_in_play_is_followed_and_its_new_corners_are_saved(config: Config, tmp_path: Path) -> None:
    profile = save_profile(tmp_path / "board.toml")
    config = config.with_overrides(camera_profile=str(profile))
    # Between the opening roll and the move, the board is knocked some 15 pixels aside.
    bumped = dataclasses.replace(CAMERA, offset=(0.012, -0.008), rotation=CAMERA.rotation + 0.4)
    frames = opening_frames()
    frames += [frame(moved(START, (13, 8)), hand=True, seed=30, camera=bumped)]
    frames += [frame(PLAYED, hand=True, seed=31, camera=bumped)] + [frame(PLAYED, seed=32, camera=bumped)] * 9
    run = start(config, Cameras(FakeCamera("fake:camera", frames)), end_with_source=True)
    run.finish()
    assert [k for k in run.kinds() if k in ("opening-roll", "move", "please-check")] == ["opening-roll", "move"]
    actions = stored(config)
    assert isinstance(actions[1], Move) and str(actions[1].play) == "13/11 13/8"
    truth = render(Shot(points=START), style=STYLE, camera=bumped).corners
    before = render(Shot(points=START), style=STYLE, camera=CAMERA).corners
    assert np.abs(before - truth).max() > 10
    assert np.abs(np.asarray(Profile.load(profile).corners) - truth).max() < 1.5


def test_the_live_page_follows_the_referee_and_its_changes_are_run_as_keyboard_lines(config: Config) -> None:
    import httpx

    from bgboard.web.server import Bind

    run = start(config, idle(), stall=30.0, web=Bind("127.0.0.1", 0))
    notice = run.wait_for("web")
    url, token = str(notice["url"]), str(notice["token"])
    assert url.startswith("http://127.0.0.1:")
    with httpx.Client(base_url=url, timeout=15) as client:
        refused = client.post("/api/correct", json={"dice": "52"})
        assert refused.status_code == 401
        assert client.get("/api/state").json()["status"] == "waiting for the opening roll"
        answer = client.post("/api/correct", json={"dice": "52"}, headers={"Authorization": f"Bearer {token}"})
        assert answer.status_code == 200 and answer.json()["accepted"] is True
        state = client.get("/api/state").json()
        assert state["turn"] == 1 and state["dice"] == [5, 2]
        # The page's change went through the referee's own loop: on the console and in the store.
        assert run.wait_for("opening-roll")["source"] == "correction"
    run.stop_now()
    assert stored(config) == [OpeningRoll(5, 2)]


def test_a_recording_is_played_once_and_ends_the_referee(config: Config, tmp_path: Path) -> None:
    """A folder of photos (or a video) is not a camera: played again from its start, its old
    frames would be judged as the board now. It ends the referee, which says so."""
    folder = tmp_path / "photos"
    folder.mkdir()
    for n, image in enumerate(opening_frames()):
        assert cv2.imwrite(str(folder / f"{n:03d}.png"), image)
    recording = config.with_overrides(camera_source=f"file:{folder}/*.png?fps=5")
    run = Running(make_referee(recording, out=(out := io.StringIO()), json_lines=True, live=False), out)
    run.finish()
    kinds = run.kinds()
    assert "camera-lost" not in kinds and kinds.count("opening-roll") == 1
    stopped = run.events()[-1]
    assert stopped["event"] == "stopped" and "ended (a recording is played once)" in str(stopped["text"])
    assert stored(recording) == [OpeningRoll(5, 2)]
