# SPDX-License-Identifier: MIT
"""The calibration view's API at a real referee: a board without a profile waits, is
calibrated from the page with the token, and is read from the next frame; a board calibrated
again mid-match keeps its match; every bad request is refused, naming what, and writes nothing.

The referee runs in a thread over rendered frames (only the camera is a fake, addressed as a
camera); the page's requests go to its real server over HTTP.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import cv2
import httpx
import numpy as np
import pytest
from calibration_table import HeldCamera, Running, moved_corners, true_corners, waiting_for_calibration
from rendered_table import PLAYED, START, frame, move_frames, opening_frames, referee_config

from bgboard.cli import main
from bgboard.config import Config, MatchConfig
from bgboard.events import Event
from bgboard.table import Table
from bgboard.web.calibration_view import UNNAMED, assumed_position
from bgboard.web.server import Bind, LiveWeb
from engine.match import MatchState, Move, OpeningRoll, Phase, Roll
from engine.position import Position
from vision.profile import Profile
from vision.render import DieSpec

pytestmark = pytest.mark.usefixtures("referee_threads_end")

#: The rendered dice are the 2D renderer's, 0.65 of a checker.
DIE_SIZE = 0.65


@pytest.fixture
def waiting(tmp_path: Path) -> Iterator[tuple[Running, Path]]:
    """A referee started with the live page and no profile yet, its camera held on the start."""
    config, camera, profile = waiting_for_calibration(tmp_path)
    run = Running(config, camera)
    try:
        yield run, profile
    finally:
        run.close()


def test_without_a_profile_the_referee_waits_reading_nothing_then_reads_once_calibrated(
    waiting: tuple[Running, Path],
) -> None:
    run, profile = waiting
    # The console says the board waits, and where to calibrate it; so does the page's state.
    said = run.wait_for("calibrate")
    assert said["url"] == run.url + "calibrate" and said["profile"] == str(profile)
    assert "not calibrated" in str(said["text"]) and str(said["url"]) in str(said["text"])
    assert run.events()[0]["calibrate"] == run.url + "calibrate"  # the web notice names it too
    with httpx.Client(base_url=run.url, timeout=30) as client:
        state = client.get("/api/state").json()
        assert state["calibrated"] is False and state["calibrate"] == "/calibrate"
        # Frames come, but nothing is read; a change from the page records nothing.
        run.wait_until_frames(5)
        assert run.referee.table.stats.reads == 0
        answer = client.post("/api/correct", json={"dice": "52"}, headers=run.headers).json()
        assert answer["accepted"] is False and answer["events"][0]["event"] == "not-calibrated"
        assert run.actions() == []

        # The view's frame: the markers found at the field's corners, the starting position.
        view = client.get("/api/calibration").json()
        assert view["how"] == "markers" and view["why"] is None
        assert np.abs(np.asarray(view["corners"]) - true_corners()).max() < 2.5
        assert view["image"] == {"width": 1280, "height": 720, "url": f"/api/calibration.jpg?frame={view['frame']}"}
        assert view["position"]["start"] is True and view["position"]["id"] == Position.STARTING.position_id()
        assert view["position"]["player1"] == "Ann" and view["position"]["named"] is True
        assert view["calibrated"] is False
        assert view["labels"][0] == "beside player 1's 13-point" and view["profile"] == str(profile)
        picture = client.get(view["image"]["url"])
        assert picture.headers["content-type"] == "image/jpeg"
        image = cv2.imdecode(np.frombuffer(picture.content, np.uint8), cv2.IMREAD_COLOR)
        assert image.shape == (720, 1280, 3)

        # No token: refused, nothing written. Corners off the field: refused in the
        # calibration's own words (what, and where), nothing written.
        # Placed by hand: a pixel right of the marker's corner.
        placed = [[view["corners"][0][0] + 1.0, view["corners"][0][1]], *view["corners"][1:]]
        body = {"corners": placed, "frame": view["frame"], "die_size": DIE_SIZE}
        assert client.post("/api/calibration", json=body).status_code == 401
        refused = client.post("/api/calibration", json={**body, "corners": moved_corners()}, headers=run.headers)
        assert refused.status_code == 422
        assert " near " in refused.json()["error"]
        assert not profile.exists()
        assert run.referee.table.reader is None

        # The corners found, with the token: the profile is written and the table reads with it.
        answer = client.post("/api/calibration", json=body, headers=run.headers)
        assert answer.status_code == 200, answer.text
        done = answer.json()
        assert done["profile"]["path"] == str(profile) and done["profile"]["how"] == "corners"
        assert [e["event"] for e in done["events"]] == ["calibrated"]
        assert done["state"]["calibrated"] is True
    written = Profile.load(profile)
    assert np.abs(np.asarray(written.corners) - np.asarray(body["corners"])).max() < 0.01
    assert written.die_fraction == DIE_SIZE
    reader = run.referee.table.reader
    assert reader is not None and reader.profile.corners == written.corners
    assert "the board is read from now on" in str(run.wait_for("calibrated")["text"])

    # The camera goes on: the opening roll is read and recorded from the camera.
    run.camera.release.set()
    roll = run.wait_for("opening-roll")
    assert roll["source"] == "camera"
    assert run.wait_for_actions(1) == [OpeningRoll(5, 2)]


def test_calibrating_again_mid_match_keeps_the_match_and_reads_with_the_new_profile(
    profile: Path, tmp_path: Path
) -> None:
    mine = Path(shutil.copy(profile, tmp_path / "board.toml"))
    config = referee_config(mine, tmp_path / "matches.sqlite3")
    # Bob's roll after Ann's move: his dice on his right, the left half as player 1 sees it.
    dice = (DieSpec(5, half="left", angle=10.0), DieSpec(1, half="left", angle=20.0))
    bobs_roll = [frame(PLAYED, hand=True, seed=40)] + [frame(PLAYED, dice, seed=41)] * 9
    # The opening roll and Ann's move first; then the board is held still.
    camera = HeldCamera("fake:camera", frame(START), opening_frames() + move_frames())
    camera.release.set()
    run = Running(config, camera)
    try:
        run.wait_for("move")
        camera.hold(bobs_roll)
        old = run.referee.table.reader
        before = run.wait_for_actions(2)
        with httpx.Client(base_url=run.url, timeout=30) as client:
            view = client.get("/api/calibration").json()
            # Mid-game: the position the table holds, seen from player 1's seat (Bob on roll).
            assert view["position"]["start"] is False and "Bob on roll" in view["position"]["words"]
            assert view["position"]["board"]["points"] == list(PLAYED)
            assert view["position"]["id"] == Position.from_absolute(PLAYED).position_id()
            assert view["calibrated"] is True and view["die_size"] == DIE_SIZE
            answer = client.post(
                "/api/calibration", json={"corners": view["corners"], "frame": view["frame"]}, headers=run.headers
            )
            assert answer.status_code == 200, answer.text
            event = answer.json()["events"][0]
            assert event["again"] is True and "match 1 goes on" in event["text"]
        assert run.actions() == before
        new = run.referee.table.reader
        assert new is not None and new is not old
        assert Profile.load(mine).position == Position.from_absolute(PLAYED).position_id()
        assert Profile.load(mine).source == "markers"  # the markers' corners, left where they were

        # The match goes on under the new profile: Bob's roll is read from the camera.
        camera.release.set()
        roll = run.wait_for("roll")
        assert roll["source"] == "camera"
        actions = run.wait_for_actions(3)
        assert actions[:2] == before
        assert isinstance(actions[2], Roll) and {actions[2].dice.first, actions[2].dice.second} == {1, 5}
    finally:
        run.close()


# -- refusals ------------------------------------------------------------------------------

_OK = [[347.0, 115.0], [926.0, 122.0], [912.0, 603.0], [345.0, 589.0]]
_BAD_BODIES = [
    (b"corners please", 400, "not JSON"),
    (b"[1, 2]", 400, "JSON object"),
    (b"{}", 400, 'give "corners"'),
    (b'{"corners": "347,115 926,122 912,603 345,589"}', 400, 'not "347,115 926,122'),
    (json.dumps({"corners": _OK[:3]}).encode(), 400, "not 3 items"),
    (json.dumps({"corners": [*_OK[:3], [345.0]]}).encode(), 400, "corners[3] (the corner beside player 1's 12-point)"),
    (json.dumps({"corners": [*_OK[:2], [912, "603"], _OK[3]]}).encode(), 400, "corners[2][1] (the y of the corner"),
    (json.dumps({"corners": [*_OK[:2], [True, 603], _OK[3]]}).encode(), 400, "corners[2][0] (the x of the corner"),
    (b'{"corners": [[347, 115], [926, 122], [912, NaN], [345, 589]]}', 400, "NaN is not a number"),
    (
        json.dumps({"corners": [_OK[0], [1300.0, 122.0], *_OK[2:]]}).encode(),
        400,
        "at 1300,122 is outside the 1280 x 720",
    ),
    (
        json.dumps({"corners": [[-3.0, 115.0], *_OK[1:]]}).encode(),
        400,
        "corners[0] (the corner beside player 1's 13-point)",
    ),
    (json.dumps({"corners": _OK, "colour": "white"}).encode(), 400, "unknown key 'colour'"),
    (json.dumps({"corners": _OK, "frame": "1"}).encode(), 400, "frame is the number"),
    (json.dumps({"corners": _OK, "die_size": 3}).encode(), 400, "from 0.2 to 1, not 3"),
    (json.dumps({"corners": _OK, "frame": 9999}).encode(), 409, "frame 9999 is no longer kept"),
    (json.dumps({"corners": [_OK[0], _OK[2], _OK[1], _OK[3]]}).encode(), 422, "cross"),
    (json.dumps({"corners": _OK, "pad": "x" * 3000}).encode(), 413, "at most 2048"),
]


@pytest.fixture(scope="module")
def kept(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Running, Path]]:
    """One referee waiting for its calibration, for all the refusals."""
    config, camera, profile = waiting_for_calibration(tmp_path_factory.mktemp("refusals"))
    run = Running(config, camera)
    with httpx.Client(base_url=run.url, timeout=30) as client:
        assert client.get("/api/calibration").status_code == 200  # a frame kept to calibrate on
    try:
        yield run, profile
    finally:
        run.close()


@pytest.mark.parametrize(("body", "status", "words"), _BAD_BODIES, ids=[w for _, _, w in _BAD_BODIES])
def test_a_bad_calibration_is_refused_naming_what_and_writes_nothing(
    kept: tuple[Running, Path], body: bytes, status: int, words: str
) -> None:
    run, profile = kept
    headers = {**run.headers, "Content-Type": "application/json"}
    with httpx.Client(base_url=run.url, timeout=30) as client:
        answer = client.post("/api/calibration", content=body, headers=headers)
    assert answer.status_code == status, answer.text
    assert words in answer.json()["error"]
    assert not profile.exists()
    assert run.referee.table.reader is None and run.actions() == []


@pytest.mark.parametrize("authorization", [None, "Bearer wrong-token", "Basic abc"])
def test_a_calibration_without_the_right_token_is_401_and_logged(
    kept: tuple[Running, Path], authorization: str | None, caplog: pytest.LogCaptureFixture
) -> None:
    run, profile = kept
    headers = {} if authorization is None else {"Authorization": authorization}
    with httpx.Client(base_url=run.url, timeout=30) as client:
        answer = client.post("/api/calibration", json={"corners": _OK}, headers=headers)
    assert answer.status_code == 401 and "token" in answer.json()["error"]
    assert any("refused POST /api/calibration" in r.getMessage() for r in caplog.records)
    assert not profile.exists()


@pytest.mark.parametrize(
    ("query", "status", "words"), [("abc", 400, "frame is the number"), ("9999", 404, "no longer kept")]
)
def test_a_frame_asked_for_that_is_not_kept_is_named(
    kept: tuple[Running, Path], query: str, status: int, words: str
) -> None:
    run, _ = kept
    with httpx.Client(base_url=run.url, timeout=30) as client:
        answer = client.get(f"/api/calibration.jpg?frame={query}")
    assert answer.status_code == status and words in answer.json()["error"]


# -- the view's pieces without a referee ----------------------------------------------------


def _uncalibrated_table() -> Table:
    return Table.from_config(Config(), state=MatchState.new_match(5), names=("Ann", "Bob"), calibrated=False)


def test_before_the_first_frame_the_view_says_so_and_with_no_field_found_starts_the_handles_inset() -> None:
    table = _uncalibrated_table()
    live = LiveWeb.start(Bind("127.0.0.1", 0), ("Ann", "Bob"))
    try:
        live.follow(table)
        live.calibrate(table, Path("never-written.toml"), lambda done: [])
        with httpx.Client(base_url=live.server.url, timeout=30) as client:
            none_yet = client.get("/api/calibration")
            assert none_yet.status_code == 503 and "no frame from the camera yet" in none_yet.json()["error"]
            # No board in sight (the camera turned away): neither markers nor the field found.
            # (A board without markers is found on the board itself: vision.calibration.)
            elsewhere = np.full((720, 1280, 3), 90, np.uint8)
            assert table.feed(elsewhere, 0.0) == []  # kept, not read
            view = client.get("/api/calibration").json()
        assert view["how"] is None and "not found" in view["why"]
        assert view["corners"] == [[192.0, 108.0], [1088.0, 108.0], [1088.0, 612.0], [192.0, 612.0]]
    finally:
        live.close()


def test_a_profile_that_cannot_be_written_changes_nothing(tmp_path: Path) -> None:
    """The folder went away under the running table: 500, and the table still waits."""
    table = _uncalibrated_table()
    live = LiveWeb.start(Bind("127.0.0.1", 0), ("Ann", "Bob"))
    stop = threading.Event()

    def own() -> None:
        # The table's owner: runs what the page queues, as the referee's loop does.
        while not stop.is_set():
            live.inbox.run_pending(lambda line: [], wait=0.05)

    owner = threading.Thread(target=own)
    owner.start()
    folder = tmp_path / "profiles"
    folder.mkdir()
    installed: list[object] = []

    def install(done: object) -> list[Event]:
        installed.append(done)
        return []

    try:
        live.follow(table)
        live.calibrate(table, folder / "board.toml", install)
        table.feed(frame(START), 0.0)
        with httpx.Client(base_url=live.server.url, timeout=30) as client:
            view = client.get("/api/calibration").json()
            folder.rmdir()
            answer = client.post(
                "/api/calibration", json={"corners": view["corners"]}, headers={"Authorization": f"Bearer {live.token}"}
            )
        assert answer.status_code == 500
        assert "no such folder" in answer.json()["error"] and "nothing changed" in answer.json()["error"]
        assert installed == [] and not table.calibrated
    finally:
        stop.set()
        owner.join(5)
        live.close()


def test_a_table_with_no_calibration_view_says_so() -> None:
    live = LiveWeb.start(Bind("127.0.0.1", 0), ("Ann", "Bob"))
    try:
        with httpx.Client(base_url=live.server.url, timeout=30) as client:
            for answer in (client.get("/api/calibration"), client.get("/api/calibration.jpg")):
                assert answer.status_code == 404 and "no calibration view" in answer.json()["error"]
            answer = client.post(
                "/api/calibration", json={"corners": _OK}, headers={"Authorization": f"Bearer {live.token}"}
            )
            assert answer.status_code == 404
            assert client.get("/calibrate").status_code == 200  # the page, which says it
    finally:
        live.close()


def test_the_position_assumed_is_the_start_between_games_and_the_match_s_own_mid_game() -> None:
    opened = MatchState.new_match(5).apply(OpeningRoll(3, 1))  # Ann (engine 0) on roll with 3-1
    for bottom in (0, 1):
        start = assumed_position(MatchState.new_match(5), bottom, ("Ann", "Bob"))
        assert start.start and start.position == Position.STARTING
        mid = assumed_position(opened, bottom, ("Ann", "Bob"))
        assert not mid.start and "before Ann's 3-1 is played" in mid.words
        assert mid.player1 == ("Ann", "Bob")[bottom] and mid.named
        # Players nobody named: the page says who player 1 is by the board, not by "Player 1".
        assert MatchConfig().players == UNNAMED
        unnamed = assumed_position(opened, bottom, MatchConfig().players)
        assert unnamed.player1 == f"Player {bottom + 1}" and not unnamed.named
        assert unnamed.to_json()["named"] is False
    # Ann plays 8/5 6/5; with Bob at the bottom (seat 1), the board from his seat is the
    # position as Bob, now on roll, sees it.
    after = opened.apply(Move("8/5 6/5"))
    assert after.phase is Phase.ROLL
    seen = assumed_position(after, 1, ("Ann", "Bob"))
    assert seen.position == after.position and "Bob on roll" in seen.words
    assert assumed_position(after, 0, ("Ann", "Bob")).position == after.position.swap()


# -- the command line ------------------------------------------------------------------------


def test_without_web_a_missing_profile_stays_an_error_that_names_the_way_out(
    no_user_config: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "board.toml"
    args = ["referee", "--config", str(no_user_config), "--camera", "file:x/*.png", "--store", str(tmp_path / "s")]
    assert main([*args, "--profile", str(missing)]) == 2
    err = capsys.readouterr().err
    assert "--profile" in err and "no such profile" in err and "--web" in err
    assert not (tmp_path / "s").exists()  # nothing recorded


def test_a_broken_profile_stays_an_error_with_web(
    no_user_config: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "board.toml"
    broken.write_text("version = 1\ncorners = 'no'\n", encoding="utf-8")
    args = ["referee", "--config", str(no_user_config), "--camera", "file:x/*.png", "--store", str(tmp_path / "s")]
    assert main([*args, "--profile", str(broken), "--web", "127.0.0.1:0"]) == 2
    err = capsys.readouterr().err
    assert "--profile: cannot use the calibration profile" in err and str(broken) in err


def test_with_web_a_profile_that_could_not_be_written_is_said_at_the_start(
    no_user_config: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nowhere = tmp_path / "no-such-folder" / "board.toml"
    args = ["referee", "--config", str(no_user_config), "--camera", "file:x/*.png", "--store", str(tmp_path / "s")]
    assert main([*args, "--profile", str(nowhere), "--web", "127.0.0.1:0"]) == 2
    err = capsys.readouterr().err
    assert "--profile: the calibration view could not write the profile" in err and "no such folder" in err


@pytest.mark.slow
def test_the_referee_command_waits_for_the_page_to_calibrate_then_reads(tmp_path: Path) -> None:
    """``bgboard referee --web`` from the command line, with a profile that does not exist yet."""
    photo = tmp_path / "start.png"
    cv2.imwrite(str(photo), frame(START))
    profile = tmp_path / "board.toml"
    root = Path(__file__).resolve().parents[2]
    command = [sys.executable, "-m", "bgboard", "referee", "--camera", f"file:{photo}", "--profile", str(profile)]
    command += ["--store", str(tmp_path / "m.sqlite3"), "--web", "127.0.0.1:0", "--json", "--leds", "fake"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("BGBOARD_")}
    env["XDG_CONFIG_HOME"] = str(tmp_path / "xdg")
    with subprocess.Popen(
        command, cwd=root, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True
    ) as referee:
        assert referee.stdout is not None
        lines = []
        for line in referee.stdout:
            lines.append(json.loads(line))
            if lines[-1]["event"] == "calibrate":
                break
        web, said = lines[0], lines[-1]
        assert web["event"] == "web" and said["url"] == web["calibrate"] == web["url"] + "calibrate"
        headers = {"Authorization": f"Bearer {web['token']}"}
        with httpx.Client(base_url=web["url"], timeout=30) as client:
            view = client.get("/api/calibration").json()
            answer = client.post("/api/calibration", json={"corners": view["corners"]}, headers=headers)
            assert answer.status_code == 200, answer.text
        for line in referee.stdout:
            lines.append(json.loads(line))
            if lines[-1]["event"] == "calibrated":
                break
        referee.send_signal(signal.SIGTERM)
        rest = [json.loads(line) for line in referee.stdout]
        assert referee.wait(30) == 0
    assert lines[-1]["how"] == "markers" and rest[-1]["event"] == "stopped"
    assert Profile.load(profile).image_size == (1280, 720)
