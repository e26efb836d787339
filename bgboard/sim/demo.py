# SPDX-License-Identifier: MIT
"""The demo: a real game played again on a rendered board, refereed from the camera frames.

The game is game 1 of a real 3-point match (``bgboard/data/demo-match.mat``, MIT licence, see
``bgboard/data/NOTICE``): two doubles, both taken, and a game won at a cube of 4, which ends the match. Nothing
is read from the record during refereeing: the record only says what the simulated players
do. Every turn is filmed by :mod:`vision.render` (a hand over the board, the dice rolled on
the right half, the checkers moved, a lamp's glare, sensor noise on every frame) and the
frames go through the same :class:`~bgboard.table.Table` as at a real table: the motion gate,
the board reader, the :class:`~bgboard.controller.Controller`, the SQLite match store and an
LED panel (drawn in the terminal, or the real firmware in simavr with ``leds="sim"``).

One move is first played wrong (a board that is legal for another roll), so the referee lights
it as illegal; the player then plays the roll properly. When the referee asks the players to
check (dice too hard to read, a board read doubtfully), they answer as they would at the
console: ``dice 53``, ``done`` to confirm, or ``correct 13/7 8/7``. The match ends in the
store and is exported as a ``.mat`` file.

With ``teach=True`` (``bgboard demo --teach``) the table runs in teach mode against the real
gnubg: after each roll gnubg's best play is said and lit (drawn on the terminal panel), and
after each move its verdict is said and stored with the move.

The players and the camera are :mod:`bgboard.sim.simulation`'s (shared with ``bench/table.py``,
which reports the same figures over this game and over random ones). This module is the
command: the console (the sinks of :mod:`bgboard.events`, the same as ``bgboard referee``'s,
with the players' lines among the table's events), the LED panel, the summary and the export.
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, Final, TextIO

import cv2

from bgboard.events import EventSink, LedsLit, Notice, console_sink, counted, frame_clock
from bgboard.session import SessionOptions, TableSession
from bgboard.sim.simulation import DemoGame, DemoReport, GnubgDemoGame, demo_record
from bgboard.store import MatchStore, default_file_name
from engine.opponent import GnubgOpponent, level_named
from hardware.layout import LedLayout
from hardware.panels import FakeLedPanel, LedPanel
from hardware.scene import Scene as LedScene

#: Seconds of firmware output looked at after each scene worth showing (a blink period and more).
FIRMWARE_LOOK: Final = 0.6
#: LED panels the demo can drive.
LED_CHOICES: Final = ("terminal", "sim", "none")


def _lit(scene: LedScene) -> dict[str, str]:
    """The lit LEDs of a scene in words (``{"point.13": "red fast blink"}``)."""
    return {name: str(light) for name, light in scene.items() if not light.is_off}


def _drawn_panel(layout: LedLayout, console: EventSink) -> tuple[FakeLedPanel, Callable[[float], None]]:
    """A panel that keeps the scenes, and a draw that tells the console the lights when they
    change: each scene change drawn would be too many lines."""
    panel = FakeLedPanel(layout)
    drawn: list[LedScene] = []

    def draw(t: float) -> None:
        scene = panel.last
        if not panel.scenes or (drawn and drawn[-1] == scene):
            return
        drawn[:] = [scene]
        lit = _lit(scene)
        words = ", ".join(f"{name} {light}" for name, light in lit.items()) or "nothing"
        console(LedsLit("leds", f"the LEDs show {words}", {"lit": lit}, t=t, scene=scene))

    return panel, draw


@contextmanager
def _sim_panel(
    layout: LedLayout, workdir: Path, console: EventSink
) -> Iterator[tuple[LedPanel, Callable[[float], None]]]:
    """The real firmware in simavr behind a serial port, driven through the serial panel."""
    from firmware_bridge.emulator import Emulator, build_emulator
    from hardware.serial_panel import SerialLedPanel

    build = build_emulator(Path(tempfile.gettempdir()) / "bgboard-emulator-build")
    workdir.mkdir(parents=True, exist_ok=True)
    emulator = Emulator(build, workdir)
    emulator.start()
    try:
        panel = SerialLedPanel(emulator.port, layout)
        try:
            if not panel.wait_connected(10.0):
                raise RuntimeError("the firmware in the emulator did not answer HELLO")
            device = panel.device
            about = (
                ""
                if device is None
                else (f"firmware {device.fw_major}.{device.fw_minor}.{device.fw_patch}, {device.led_count} LEDs")
            )
            console(
                Notice(
                    "leds",
                    f"the real firmware in simavr ({about})",
                    {"port": emulator.port},
                    console=f"LEDs: the real firmware in simavr on {emulator.port} ({about})",
                )
            )

            def report(t: float) -> None:
                # What the firmware put on its data pin over the last blink period: a blinking
                # LED is dark in half the frames.
                panel.wait_shown(2.0)
                mark = emulator.mark()
                time.sleep(FIRMWARE_LOOK)
                frames = emulator.leds[max(0, mark - 1) :]
                if not frames:
                    return
                lit: dict[str, str] = {}
                for _, data in frames:
                    for index in range(len(data) // 3):
                        g, r, b = data[3 * index : 3 * index + 3]
                        if r or g or b:
                            lit.setdefault(layout.name_at(index) or str(index), f"#{r:02x}{g:02x}{b:02x}")
                words = " ".join(f"{name}={rgb}" for name, rgb in sorted(lit.items()))
                text = f"the firmware lights {len(lit)} LEDs: {words}"
                console(Notice("firmware-leds", text, {"sim_ms": frames[-1][0], "lit": lit}, t=t, console=f"  {text}"))

            yield panel, report
        finally:
            panel.close()
    finally:
        emulator.stop()


def run_demo(
    *,
    json_lines: bool = False,
    out: TextIO | None = None,
    leds: str = "terminal",
    out_dir: Path | None = None,
    seed: int = 7,
    fps: float = 5.0,
    noise: float = 2.0,
    moves: int | None = None,
    session: SessionOptions | None = None,
    speed: float | None = None,
    linger: bool = False,
) -> int:
    """Play the demo game at a rendered table; print the events; export the match as ``.mat``.

    :param leds: ``terminal`` (the lights drawn as text when they have something to say),
        ``sim`` (the real firmware in simavr, through the serial link), or ``none``.
    :param out_dir: where the match store and the ``.mat`` file go (default: a new temporary folder).
    :param moves: stop after this many moves (the match is then left unfinished in the store).
    :param session: what the table's session attaches (:class:`~bgboard.session.SessionOptions`):
        ``teach``, teach mode with the real gnubg (``$BGBOARD_GNUBG``, else gnubg on the path),
        its best play lit and said after each roll, its verdict said after each move;
        ``against``, ``(level, side)``, a new game of a 3-point match against gnubg at that
        level (:data:`engine.opponent.LEVELS`), gnubg playing side 1 or 2, instead of the
        recorded game, the other side playing gnubg's 0-ply choices; the hall's publisher
        (``publish``) and the live page (``page``).
    :param speed: how many seconds of the camera's clock pass per real second (0: as fast as
        the computer goes); default 1 with the live page (a game a person can watch), else 0.
    :param linger: with the live page, keep it up after the game (changes from it still run)
        until Ctrl-C.
    :raises BindError: the live page's address cannot be listened on.
    :returns: the exit status (0: the game was played to its end, or to ``moves``).
    """
    stream = out or sys.stdout
    session = session or SessionOptions()
    against = session.against
    if leds not in LED_CHOICES:
        raise ValueError(f"leds is one of {', '.join(LED_CHOICES)}, not {leds!r}")
    # One core, as on the referee's small computer; the figures printed stay comparable.
    cv2.setNumThreads(1)
    record = demo_record()
    names = (record.players[0], record.players[1])
    if against is not None:
        level = level_named(against[0])
        gnubg_player = against[1] - 1
        names = ("gnubg", "Alice") if gnubg_player == 0 else ("Alice", "gnubg")
    console = console_sink(stream, json_lines=json_lines, stamp=frame_clock(7, 1))
    folder = Path(out_dir) if out_dir is not None else Path(tempfile.mkdtemp(prefix="bgboard-demo-"))
    folder.mkdir(parents=True, exist_ok=True)
    store_file = folder / "demo.sqlite3"
    if store_file.exists():
        store_file.unlink()
    layout = LedLayout.standard()
    if against is not None:
        console(
            Notice(
                "demo",
                "a game against gnubg at a rendered table",
                {"players": list(names), "length": 3, "level": level.name, "gnubg": gnubg_player + 1},
                console=f"bgboard demo: {names[0]} vs {names[1]}, game 1 of a 3-point match against GNU "
                f"Backgammon at level {level}, played on a rendered board.\n"
                f"Lines with * are what the players do: they roll for both sides and move gnubg's checkers as "
                f"the lights show; the others are what bgboard reads, judges and records.",
            )
        )
    else:
        console(
            Notice(
                "demo",
                "a real game replayed at a rendered table",
                {
                    "players": list(names),
                    "length": record.length,
                    "source": "bglab (MIT), Backgammon Galaxy match 969172, game 1",
                },
                console=f"bgboard demo: {names[0]} vs {names[1]}, game 1 of a real {record.length}-point match "
                "(Backgammon Galaxy, from the bglab collection, MIT licence), played again on a rendered board.\n"
                "Lines with * are what the players do; the others are what bgboard reads, judges and records.",
            )
        )
    pace = (1.0 if session.page is not None else 0.0) if speed is None else speed
    if pace < 0:
        raise ValueError(f"speed is 0 (as fast as possible) or more, not {speed!r}")
    with TableSession(session, console, now=lambda: game.film.t if game is not None else None) as table_session:
        stack = table_session.stack
        store = stack.enter_context(MatchStore(store_file))
        panel: LedPanel | None = None
        draw: Callable[[float], None] | None = None
        if leds == "terminal":
            panel, draw = _drawn_panel(layout, console)
        elif leds == "sim":
            panel, draw = stack.enter_context(_sim_panel(layout, folder / "emulator", console))
        else:
            panel = FakeLedPanel(layout)
        gnubg = table_session.start_gnubg()
        common: dict[str, Any] = {
            "store": store,
            "panel": panel,
            "sinks": [console],
            "draw": draw,
            "seed": seed,
            "fps": fps,
            "noise": noise,
            "hints": table_session.hints,
            "tick": _pacer(pace, table_session if session.attachments else None),
        }
        game: DemoGame | None = None
        if against is not None:
            assert gnubg is not None
            opponent = GnubgOpponent(gnubg, gnubg_player, level)
            game = GnubgDemoGame(opponent=opponent, brain=gnubg, names=names, **common)
        else:
            game = DemoGame(record, 0, **common)
        table_session.attach(game.table, store, game.match_id)
        table_session.start()
        try:
            report = game.play(moves)
        except KeyboardInterrupt:
            # Stopped (Ctrl-C, SIGTERM): what was played is kept and written out, exit 0.
            table_session.finish()
            mat = folder / default_file_name(store.summary(game.match_id), "mat")
            mat.write_text(store.export(game.match_id, "mat"), encoding="utf-8")
            text = f"stopped: the game so far is in {store_file} and written to {mat}"
            console(Notice("stopped", text, {"mat": str(mat), "store": str(store_file)}, console=f"\n{text}"))
            return 0
        # The publisher stops now, so that what it says comes before the summary.
        table_session.finish()
        mat = folder / default_file_name(store.summary(game.match_id), "mat")
        mat.write_text(store.export(game.match_id, "mat"), encoding="utf-8")
        report.mat_file, report.store_file = mat, store_file
        page_url = table_session.page_url
        if page_url is not None and linger:
            # Said before the summary, so that the last lines still name the files written.
            console(
                Notice(
                    "web-open",
                    f"the game is over; the live page stays at {page_url} until Ctrl-C",
                    {"url": page_url},
                )
            )
        _summarise(console, report, mat, store_file)
        if page_url is not None and linger:
            with suppress(KeyboardInterrupt):
                _linger(table_session, game, store, mat, console)
    return 0 if report.finished or moves is not None else 1


def _linger(table_session: TableSession, game: DemoGame, store: MatchStore, mat: Path, console: EventSink) -> None:
    """Run the live page's changes until Ctrl-C; whenever they change the match (an undo
    that reopens it, a correction), write ``mat`` again so that it never says other than the store."""
    written = store.export(game.match_id, "mat")
    while True:
        said = table_session.run_requests(game.film.t, wait=0.2)
        # The match is exported again only when a change recorded something or took it back.
        if not any(event.action is not None or event.kind == "undo" for event in said):
            continue
        now = store.export(game.match_id, "mat")
        if now == written:
            continue
        mat.write_text(now, encoding="utf-8")
        written = now
        over = store.summary(game.match_id).status
        text = f"{mat} written again: the match is {over}"
        console(Notice("mat-rewritten", text, {"mat": str(mat), "status": over}))


def _pacer(speed: float, session: TableSession | None) -> Callable[[float], None] | None:
    """What the demo does between frames: wait for the camera's clock (``speed`` > 0) and run
    the requests to the table (the live page's changes, the hall's orders) meanwhile, in the
    table's thread."""
    if speed == 0 and session is None:
        return None
    started: list[float] = []

    def tick(t: float) -> None:
        now = time.perf_counter()
        if not started:
            started.append(now - (t / speed if speed else 0.0))
        due = started[0] + t / speed if speed else now
        while True:
            left = due - time.perf_counter()
            if session is None:
                if left > 0:
                    time.sleep(left)
                return
            session.run_requests(t, wait=min(max(left, 0.0), 0.05))
            if left <= 0:
                return

    return tick


def _summarise(console: EventSink, report: DemoReport, mat: Path, store_file: Path) -> None:
    """The demo's last lines: its figures, and the files written."""
    figures = report.to_json()
    played, rolls = report.moves, report.rolls
    if not report.illegal_shown:
        illegal = "no illegal move was played"
    else:
        illegal = f"the illegal move was {'lit' if report.illegal_flagged else 'not lit'}"
    text = (
        f"{counted(played.total, 'move')}: {played.right} read right from the camera, {played.flagged} checked by the "
        f"players, {played.wrong} wrong accepted; {counted(rolls.total, 'roll')}: {rolls.right} read right, "
        f"{rolls.flagged} checked, {rolls.missed} not seen, {rolls.wrong} wrong; {illegal}; "
        f"{counted(len(report.answers), 'answer')} from the players; {report.seconds:.0f} s."
    )
    console(Notice("summary", text, figures, console=f"\n{text}"))
    console(
        Notice(
            "exported",
            f"match written to {mat}",
            {"mat": str(mat), "store": str(store_file)},
            console=f"match store: {store_file}\nmatch written to {mat}",
        )
    )
