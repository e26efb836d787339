# SPDX-License-Identifier: MIT
"""``bgboard referee`` at the edges: a camera that never works, one photo, being stopped, LEDs
that are not there, and flags that are wrong.

A camera or LED port that cannot be opened at the start is a set-up error (exit 2, one line, no
match in the store); stopping with SIGINT or SIGTERM always exits 0 with the camera released.
"""

from __future__ import annotations

import io
import json
import logging
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import cv2
import pytest
from rendered_table import (
    START,
    Cameras,
    FakeCamera,
    frame,
    make_referee,
    move_frames,
    opening_frames,
    referee_config,
    save_profile,
)

from bgboard.camera import stuck_threads
from bgboard.cli import main
from bgboard.config import Config, ConfigError
from bgboard.errors import SetupError, StoppedError
from bgboard.store import MatchStore
from hardware.panels import FakeLedPanel
from hardware.scene import Scene
from vision.frames import Frame

pytestmark = pytest.mark.usefixtures("referee_threads_end")


@pytest.fixture(scope="module")
def profile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return save_profile(tmp_path_factory.mktemp("profile") / "board.toml")


@pytest.fixture(scope="module")
def frames_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The opening roll and a move as PNG files (23 frames, 1280 x 720)."""
    folder = tmp_path_factory.mktemp("frames")
    for n, image in enumerate(opening_frames() + move_frames()):
        assert cv2.imwrite(str(folder / f"f{n:03d}.png"), image)
    return folder


@pytest.fixture
def config(profile: Path, tmp_path: Path) -> Config:
    return referee_config(profile, tmp_path / "matches.sqlite3")


def idle() -> Cameras:
    """A camera that sends one frame, then nothing."""
    return Cameras(FakeCamera("fake:camera", [frame(START)], then="stall"))


# -- the command line in child processes -----------------------------------------------------------


@dataclass
class Child:
    status: int
    out: str
    err: str


def child_env(home: Path) -> dict[str, str]:
    """No bgboard settings of the user's; a home of the test's own."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("BGBOARD_")}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / "xdg"), XDG_DATA_HOME=str(home / "data"))
    return env


def bgboard(home: Path, *args: str) -> list[str]:
    empty = home / "config.toml"
    if not empty.exists():
        home.mkdir(parents=True, exist_ok=True)
        empty.write_text("", encoding="utf-8")
    return [sys.executable, "-m", "bgboard", args[0], "--config", str(empty), *args[1:]]


def run_all(commands: Sequence[list[str]], env: dict[str, str], timeout: float = 60.0) -> list[Child]:
    """Run ``commands`` at once; each must end by itself within ``timeout`` seconds."""
    procs = [
        subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for command in commands
    ]
    children = []
    try:
        for proc in procs:
            out, err = proc.communicate(timeout=timeout)
            children.append(Child(proc.returncode, out, err))
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    return children


def _picamera2_missing() -> bool:
    import importlib.util

    return importlib.util.find_spec("picamera2") is None


def _no_device(*paths: str) -> str | None:
    return next((path for path in paths if not os.path.exists(path)), None)


def test_a_camera_that_cannot_open_is_a_set_up_error_and_no_match_is_recorded(tmp_path: Path, profile: Path) -> None:
    index = next(n for n in range(7, 64) if not os.path.exists(f"/dev/video{n}"))
    video = _no_device("/dev/video9", "/dev/video19", "/dev/video29")
    assert video is not None
    folder = tmp_path / "no-images"
    folder.mkdir()
    (folder / "notes.txt").write_text("no photo here", encoding="utf-8")
    text = tmp_path / "photo.jpg"
    text.write_text("this is not a JPEG", encoding="utf-8")
    cameras = [
        f"usb:{index}",
        f"v4l2://{video}",
        f"video:{tmp_path / 'nope.mp4'}",
        "bogus://x",
        f"file:{tmp_path / 'nope'}/*.png",
        str(folder),
        str(text),
    ]
    if _picamera2_missing():
        cameras.append("picamera2:")
    home = tmp_path / "home"
    stores = [tmp_path / f"s{n}.sqlite3" for n in range(len(cameras))]
    commands = [
        bgboard(home, "referee", "--camera", camera, "--profile", str(profile), "--leds", "fake", "--store", str(store))
        for camera, store in zip(cameras, stores, strict=True)
    ]
    children = run_all(commands, child_env(home))
    for camera, store, child in zip(cameras, stores, children, strict=True):
        assert child.status == 2, (camera, child)
        lines = child.err.splitlines()
        # One line: no "camera stopped", no OpenCV [ WARN ...] lines.
        assert len(lines) == 1 and lines[0].startswith(f"bgboard: error: cannot open the camera {camera}: "), (
            camera,
            child.err,
        )
        assert child.out == "", (camera, child.out)
        assert not store.exists(), f"{camera}: the store was touched"


def test_a_camera_that_opens_but_sends_nothing_is_given_up_after_the_first_frame_wait(
    config: Config, tmp_path: Path
) -> None:
    started = time.monotonic()
    with pytest.raises(SetupError, match=r"^cannot open the camera fake:camera: no frame within 0\.3 s$"):
        make_referee(
            config,
            out=io.StringIO(),
            source_factory=Cameras(FakeCamera("fake:camera", [], then="stall")),
            first_frame=0.3,
        )
    assert time.monotonic() - started < 3.0
    # A source that ends at once, and one whose opening raises anything at all.
    with pytest.raises(SetupError, match=r"^cannot open the camera fake:camera: it sent no frame$"):
        make_referee(config, out=io.StringIO(), source_factory=Cameras(FakeCamera("fake:camera", [])))

    def broken(url: str) -> FakeCamera:
        raise ValueError("invalid literal for int() with base 10: 'front'")

    with pytest.raises(SetupError, match=r"^cannot open the camera fake:camera: invalid literal"):
        make_referee(config, out=io.StringIO(), source_factory=broken)
    assert config.store.path is not None and not config.store.path.exists()


def test_a_camera_that_hangs_while_opening_is_left_behind_and_a_stop_ends_the_wait(config: Config) -> None:
    release = threading.Event()

    def hanging(url: str) -> FakeCamera:
        release.wait()  # a driver that never returns from opening the device
        return FakeCamera(url, [])

    try:
        with pytest.raises(SetupError, match=r"^cannot open the camera fake:camera: it did not open within 0\.2 s$"):
            make_referee(config, out=io.StringIO(), source_factory=hanging, first_frame=0.2)
        # The command line ends the process with os._exit while such a thread is alive.
        assert [t.name for t in stuck_threads()] == ["camera-open"]
        stop = threading.Event()
        threading.Timer(0.2, stop.set).start()
        started = time.monotonic()
        with pytest.raises(StoppedError):
            make_referee(config, out=io.StringIO(), source_factory=hanging, first_frame=30.0, stop=stop)
        assert time.monotonic() - started < 5.0
    finally:
        release.set()
    deadline = time.monotonic() + 5
    while stuck_threads() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert stuck_threads() == []
    assert config.store.path is not None and not config.store.path.exists()


def test_one_photo_is_a_still_camera(config: Config, frames_dir: Path) -> None:
    photo = f"file:{frames_dir / 'f000.png'}"
    out = io.StringIO()
    panel = FakeLedPanel()
    referee = make_referee(config.with_overrides(camera_source=photo), out=out, json_lines=True, panel=panel)
    stop = threading.Event()
    thread = threading.Thread(target=referee.run, args=(stop,))
    thread.start()
    time.sleep(1.5)
    stop.set()
    thread.join(10)
    assert not thread.is_alive()
    kinds = [json.loads(line)["event"] for line in out.getvalue().splitlines()]
    assert kinds == ["started", "stopped"]
    # The same frame keeps coming, about ten a second.
    assert referee.table.stats.frames >= 5


class SlowCamera(FakeCamera):
    """Frames that take a while to read (decoding a large photo), for ever; notes a close mid-read."""

    def __init__(self, url: str) -> None:
        super().__init__(url, [frame(START)])
        self.reading = False
        self.closed_mid_read = False
        self.reads = 0

    def read(self) -> Frame | None:
        if self.closed.is_set():
            return None
        self.reading = True
        time.sleep(0.15)
        self.reads += 1
        self.reading = False
        return Frame(self.images[0], self.reads * 0.2, self.reads)

    def close(self) -> None:
        self.closed_mid_read = self.closed_mid_read or self.reading
        super().close()


def test_a_stop_joins_the_camera_closes_it_and_darkens_the_leds(config: Config) -> None:
    camera = SlowCamera("fake:camera")
    panel = FakeLedPanel()
    referee = make_referee(config, out=io.StringIO(), source_factory=Cameras(camera), panel=panel, live=True)
    stop = threading.Event()
    thread = threading.Thread(target=referee.run, args=(stop,))
    thread.start()
    deadline = time.monotonic() + 10
    while camera.reads < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    while not camera.reading:
        time.sleep(0.001)
    stop.set()  # in the middle of a read
    thread.join(10)
    assert not thread.is_alive()
    # When run() returns, no camera thread is left inside the source, and it was closed after
    # the read in progress had finished.
    left = [t.name for t in threading.enumerate() if t.name.startswith(("camera", "ticker"))]
    assert left == []
    assert camera.closed.is_set() and not camera.closed_mid_read
    assert panel.last == Scene.dark()


@pytest.mark.slow
def test_sigint_and_sigterm_always_exit_0_with_the_store_intact(
    tmp_path: Path, profile: Path, frames_dir: Path
) -> None:
    stops = 50
    home = tmp_path / "home"
    env = child_env(home)
    camera = f"file:{frames_dir}/*.png?loop=1"

    def one(n: int) -> tuple[int, Child, Path, float]:
        store = tmp_path / f"s{n}.sqlite3"
        command = bgboard(
            home, "referee", "--json", "--camera", camera, "--profile", str(profile), "--leds", "fake",
            "--store", str(store),
        )  # fmt: skip
        proc = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
        )
        watchdog = threading.Timer(60, proc.kill)
        watchdog.start()
        try:
            assert proc.stdout is not None
            first = proc.stdout.readline()  # "started": the camera's first frame has come
            delay = (n % 10) * 0.07
            time.sleep(delay)
            proc.send_signal(signal.SIGINT if n % 2 else signal.SIGTERM)
            out, err = proc.communicate()
        finally:
            watchdog.cancel()
        return n, Child(proc.returncode, first + out, err), store, delay

    began = time.monotonic()
    with ThreadPoolExecutor(max_workers=3) as pool:
        results = list(pool.map(one, range(stops)))
    took = time.monotonic() - began
    for n, child, store, delay in results:
        what = f"stop {n} ({'SIGINT' if n % 2 else 'SIGTERM'} {delay:.2f} s after the first frame)"
        assert "terminate called" not in child.err, f"{what}: {child.err}"
        assert child.status == 0, f"{what}: exit {child.status}: {child.err}"
        events = [json.loads(line) for line in child.out.splitlines()]
        assert events[0]["event"] == "started" and events[-1]["event"] == "stopped", f"{what}: {child.out}"
        with sqlite3.connect(store) as db:
            assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        with MatchStore(store, create=False) as stored:
            last = stored.last_match(unfinished=True)
            assert last is not None and last.id == events[0]["match"]
            stored.state(last.id)
    print(f"{stops} stops in {took:.1f} s")


# -- LEDs that are not there -------------------------------------------------------------------------


def _missing_port() -> str:
    port = _no_device("/dev/ttyUSB9", "/dev/ttyUSB19", "/dev/ttyUSB29")
    assert port is not None
    return port


@pytest.mark.parametrize("address", ["serial:PORT", "PORT", "serial:bogus://x", "hwgrep://dead:beef"])
def test_an_led_port_that_cannot_be_opened_is_a_set_up_error(
    config: Config, caplog: pytest.LogCaptureFixture, address: str
) -> None:
    port = _missing_port()
    address = address.replace("PORT", port)
    shown = address.removeprefix("serial:")
    with pytest.raises(SetupError) as caught:
        make_referee(config.with_overrides(leds_panel=address), out=io.StringIO(), source_factory=idle())
    message = str(caught.value)
    assert message.startswith("leds.panel: cannot open the LEDs")
    assert f"cannot open the LED controller's port {shown}: " in message and "bgboard devices" in message
    if shown == port:
        assert "no such device" in message
    # Said once, in the error: no warning from the link's thread.
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert config.store.path is not None and not config.store.path.exists()


def test_the_cli_names_the_led_port_and_exits_2(tmp_path: Path, profile: Path, frames_dir: Path) -> None:
    port = _missing_port()
    home = tmp_path / "home"
    store = tmp_path / "s.sqlite3"
    camera = f"file:{frames_dir / 'f000.png'}"
    command = bgboard(home, "referee", "--camera", camera, "--profile", str(profile), "--store", str(store))
    children = run_all(
        [[*command, "--leds", f"serial:{port}"], [*command, "--leds", "hwgrep://dead:beef"]], child_env(home)
    )
    for child in children:
        assert child.status == 2, child
        lines = child.err.splitlines()
        assert len(lines) == 1 and lines[0].startswith("bgboard: error: --leds: cannot open the LEDs"), child.err
        assert "bgboard devices" in child.err and "WARNING" not in child.err
    assert f"port {port}: no such device" in children[0].err
    assert not store.exists()


# -- the flags ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        (["--players", "Ann"], "--players: expected two player names"),
        (["--players", "Ann,Ann"], "--players: the two players need different names, not 'Ann' twice"),
        (["--players", "Ann,ann"], "--players: the two players need different names"),
        (["--length", "seven"], "--length: expected a whole number of points"),
        (["--length", "99999"], "--length: a match is 1 to 64 points long (0 for money; GNU Backgammon"),
        (["--length", "65"], "--length: a match is 1 to 64 points long"),
        (["--leds", ""], "--leds: expected an LED panel address"),
    ],
)
def test_flag_errors_name_the_flag(
    no_user_config: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], expected: str
) -> None:
    store = tmp_path / "s.sqlite3"
    args = ["referee", "--config", str(no_user_config), "--camera", "fake:camera", "--store", str(store)]
    assert main([*args, *flags]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"bgboard: error: command line: {expected}")
    assert len(err.splitlines()) == 1
    assert "match_" not in err and "leds_" not in err
    assert not store.exists()


def test_the_config_file_refuses_the_same_player_twice_and_too_long_a_match() -> None:
    with pytest.raises(ConfigError, match=r"match\.players: the two players need different names"):
        Config.from_toml('[match]\nplayers = ["Ann", "Ann"]', "c.toml")
    with pytest.raises(ConfigError, match=r"match\.length: a match is 1 to 64 points long"):
        Config.from_toml("[match]\nlength = 40000", "c.toml")
    # Without flag names, the overrides are named as before.
    with pytest.raises(ConfigError, match=r"^command line: match_players: "):
        Config().with_overrides(match_players="Ann,Ann")


def test_resume_with_other_players_or_length_says_the_stored_match_keeps_its_own(config: Config) -> None:
    stop = threading.Event()
    stop.set()
    first = make_referee(config, out=io.StringIO(), source_factory=idle())
    first.run(stop)  # started, then stopped at once: nothing played
    other = config.with_overrides(match_players="Cid,Dan", match_length="7")
    given = {"match.players": "--players", "match.length": "--length"}
    out = io.StringIO()
    second = make_referee(other, out=out, json_lines=True, resume=True, source_factory=idle(), given=given)
    assert second.match_id == first.match_id
    assert second.store.summary(second.match_id).players == ("Ann", "Bob")
    second.run(stop)
    events = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [e["event"] for e in events] == ["resumed", "settings-kept", "stopped"]
    assert events[1]["text"] == (
        f"--players Cid,Dan and --length 7 ignored: resumed match {first.match_id} keeps its own settings"
        " (Ann vs Bob, 5-point match); leave out --resume for a new match"
    )
    # The same players and length given again, or none given: nothing to say.
    out = io.StringIO()
    third = make_referee(config, out=out, json_lines=True, resume=True, source_factory=idle(), given=given)
    third.run(stop)
    assert "settings-kept" not in out.getvalue()


def test_a_second_referee_on_the_same_store_is_refused_and_records_nothing(config: Config) -> None:
    first = make_referee(config, out=io.StringIO(), source_factory=idle())
    try:
        with pytest.raises(SetupError, match=r"store.path: .*matches.sqlite3 is in use by another referee"):
            make_referee(config, out=io.StringIO(), resume=True, source_factory=idle())
        assert len(first.store.matches()) == 1  # the second started nothing
    finally:
        stop = threading.Event()
        stop.set()
        first.run(stop)
    # Once the first has stopped, the store is free again.
    again = make_referee(config, out=io.StringIO(), resume=True, source_factory=idle())
    assert again.match_id == first.match_id
    stop = threading.Event()
    stop.set()
    again.run(stop)


@pytest.mark.parametrize("host", ["127.0.0.1", "10.99.99.99"])
def test_a_live_page_that_cannot_listen_stops_the_referee_before_any_match(config: Config, host: str) -> None:
    """A port in use, or an address not this computer's: refused at once, and no empty "in
    progress" match is left in the store for each try."""
    import socket

    from bgboard.web.server import Bind

    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1] if host == "127.0.0.1" else 8080
        for _ in range(2):
            with pytest.raises(SetupError, match=rf"^--web: cannot listen on {host}:{port}: "):
                make_referee(config, out=io.StringIO(), source_factory=idle(), web=Bind(host, port))
    with MatchStore(config.store.resolved_path()) as store:
        assert store.matches() == []
