# SPDX-License-Identifier: MIT
"""A referee started with the live page and a camera held on one scene until the test lets it
go on: the calibration view's tests calibrate on the held frame, then watch the table read.

Shared by ``test_web_calibration.py`` (the API) and ``test_web_calibration_browser.py`` (the
page in Chromium).
"""

from __future__ import annotations

import io
import json
import threading
import time
from pathlib import Path

import numpy as np
from rendered_table import CAMERA, START, STEP, STYLE, frame, make_referee, opening_frames

from bgboard.config import Config
from bgboard.store import MatchStore
from bgboard.web.server import Bind
from vision.frames import Frame
from vision.render import Scene, render

#: Seconds a referee thread may take to do what it is told.
TIMEOUT = 60.0


def true_corners() -> np.ndarray:
    """The field's corners in the rendered frames (the renderer's ground truth)."""
    return render(Scene(points=START), style=STYLE, camera=CAMERA, seed=1).corners


def moved_corners() -> list[list[float]]:
    """The true corners with the one beside the 1-point pulled well into the field: refused."""
    corners = true_corners().tolist()
    corners[2] = [780.0, 500.0]
    return corners


class HeldCamera:
    """A frame source addressed like a camera, about 50 frames a second: the frames queued in
    :attr:`queue`, one by one, while :attr:`release` is set; otherwise, and once they are played,
    the last frame again (a board left alone)."""

    def __init__(self, url: str, held: np.ndarray, queued: list[np.ndarray]) -> None:
        self.url = url
        self.held = held
        self.queue = list(queued)
        self.release = threading.Event()
        self.closed = threading.Event()
        self.seq = 0
        self._lock = threading.Lock()

    def hold(self, queued: list[np.ndarray]) -> None:
        """Hold the frame now shown, with ``queued`` to play once released again."""
        with self._lock:
            self.release.clear()
            self.queue = list(queued)

    def read(self) -> Frame | None:
        # Paced, so a table left alone is not kept spinning on the same frame.
        if self.closed.wait(0.02):
            return None
        with self._lock:
            if self.release.is_set() and self.queue:
                self.held = self.queue.pop(0)
            self.seq += 1
            return Frame(self.held, (self.seq - 1) * STEP, self.seq)

    def close(self) -> None:
        self.closed.set()


class Running:
    """A referee with the live page, running in a thread, its console (JSON Lines) in a string."""

    def __init__(self, config: Config, camera: HeldCamera, **options: object) -> None:
        self.out = io.StringIO()
        self.camera = camera
        self.config = config
        self.referee = make_referee(
            config,
            out=self.out,
            json_lines=True,
            source_factory=lambda url: camera,
            live=False,
            stall=60.0,
            web=Bind("127.0.0.1", 0),
            **options,  # type: ignore[arg-type]
        )
        self.stop = threading.Event()
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        notice = self.wait_for("web")
        self.url = str(notice["url"])
        self.token = str(notice["token"])

    def _run(self) -> None:
        try:
            self.referee.run(self.stop)
        except BaseException as exc:
            self.error = exc

    @property
    def headers(self) -> dict[str, str]:
        """The table's token, as a change must carry it."""
        return {"Authorization": f"Bearer {self.token}"}

    def events(self) -> list[dict[str, object]]:
        return [json.loads(line) for line in self.out.getvalue().splitlines()]

    def kinds(self) -> list[object]:
        return [e["event"] for e in self.events()]

    def wait_for(self, kind: str, count: int = 1) -> dict[str, object]:
        """The ``count``-th event of ``kind``, once the referee has said it."""
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            found = [e for e in self.events() if e["event"] == kind]
            if len(found) >= count:
                return found[count - 1]
            assert self.thread.is_alive(), f"the referee stopped: {self.error!r} {self.kinds()}"
            time.sleep(0.02)
        raise AssertionError(f"no {kind!r} event in {TIMEOUT} s: {self.kinds()}")

    def wait_until_frames(self, count: int) -> None:
        """Until the table has been fed ``count`` frames."""
        deadline = time.monotonic() + TIMEOUT
        while self.referee.table.stats.frames < count:
            assert time.monotonic() < deadline, "the table was fed no frames"
            time.sleep(0.02)

    def actions(self) -> list[object]:
        """What the store holds for the referee's match."""
        assert self.config.store.path is not None
        with MatchStore(self.config.store.path, create=False, check=False) as store:
            return [a.action for a in store.actions(self.referee.match_id)]

    def wait_for_actions(self, count: int) -> list[object]:
        """The store's actions once it holds ``count`` (the console hears of one before the store)."""
        deadline = time.monotonic() + TIMEOUT
        while len(actions := self.actions()) < count:
            assert time.monotonic() < deadline, f"the store holds {actions}"
            time.sleep(0.02)
        return actions

    def close(self) -> None:
        self.stop.set()
        self.thread.join(TIMEOUT)
        assert not self.thread.is_alive(), "the referee did not stop"
        if self.error is not None:
            raise self.error


def waiting_for_calibration(tmp_path: Path) -> tuple[Config, HeldCamera, Path]:
    """A referee's config whose profile does not exist yet, and a camera held on the starting
    position that plays the opening roll (5-2, Ann first) once released."""
    from rendered_table import referee_config

    profile = tmp_path / "board.toml"
    config = referee_config(profile, tmp_path / "matches.sqlite3")
    return config, HeldCamera("fake:camera", frame(START), opening_frames()), profile
