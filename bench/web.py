# SPDX-License-Identifier: MIT
"""Live page figures: from the controller's event to the page's SVG updated, in Chromium.

Run from the project root::

    .venv/bin/python bench/web.py [--pages 1 20] [--gap 0.1] [--json]
    .venv/bin/python bench/web.py --screenshot docs/web.png

The demo's real game (``bgboard/data/demo-match.mat``) is told to a
:class:`~bgboard.controller.Controller` action by action (rolls and plays given as the players
would type them), and each action's events go to a :class:`~bgboard.web.hub.WebHub` served by the
live page's server (:mod:`bgboard.web.server`, uvicorn in a thread of this process, as in
``bgboard demo --web``). Headless Chromium (Debian's, driven by Playwright) opens the page
``--pages`` times at once. For every action:

- sent: the wall clock just before the controller's events are handed to the hub (the table
  hands them to its sinks at that moment);
- updated: the wall clock in the page once ``board.js`` has put the new SVG in the document,
  and at the next animation frame after it (the browser's next paint, 60 a second headless).

Both clocks are this computer's (``performance.timeOrigin + performance.now()`` in the page), so
the difference needs no round trip. Also measured: the time the table's own thread spends handing
an action's events to the hub (encoding, the snapshot, every page's queue). Actions are
``--gap`` seconds apart, so each is measured on its own; with 20 pages every page's latency
counts.

``--overlay`` measures the broadcast overlay's chances instead (:mod:`bgboard.web.overlay`): the
same actions, and for each that changes the position evaluated, the time from the events handed
to the hub to ``GET /api/chances`` serving gnubg's chances for the new position (asked every
5 ms), with the evaluation's own time in gnubg.

``--screenshot PATH`` plays the demo's game at a rendered table (as ``bgboard demo --web``
does) up to its illegal move and saves a phone-sized picture of the page (the README's).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bgboard.controller import Controller
from bgboard.events import Event
from bgboard.sim.simulation import DemoGame, demo_record
from bgboard.store import MatchStore
from bgboard.web.server import Bind, LiveWeb
from engine.dice import Dice
from engine.match import Double, Drop, Move, OpeningRoll, Roll, Take

#: Set in each page before app.js runs: when each state was drawn, and at the next frame.
TIMING = """
window.__drawn = [];
window.bgUpdated = (seq) => {
  const at = performance.timeOrigin + performance.now();
  requestAnimationFrame(() => window.__drawn.push([seq, at, performance.timeOrigin + performance.now()]));
};
"""


def chromium() -> str:
    path = shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(path).exists():
        sys.exit("bench/web.py: no Chromium: install Debian's chromium (scripts/setup.sh --test)")
    return path


def actions_as_typed(controller: Controller) -> list[tuple[str, Any]]:
    """The demo game's actions as the controller is told them: (what, how)."""
    record = demo_record()
    out: list[tuple[str, Any]] = []
    for action in record.games[0].actions:
        match action:
            case OpeningRoll(die0, die1):
                # Named bottom player's die first, as at the console.
                first, second = (die0, die1) if controller.seat(0) == 1 else (die1, die0)
                out.append(("dice", Dice(first, second)))
            case Roll(dice):
                out.append(("dice", dice))
            case Move(play):
                out.append(("move", str(play)))
            case Double():
                out.append(("button", "double"))
            case Take():
                out.append(("button", "take"))
            case Drop():
                out.append(("button", "drop"))
            case _:
                break
    return out


def tell(controller: Controller, what: str, how: Any, t: float) -> list[Event]:
    if what == "button":
        return controller.on_button(how, t)
    if what == "dice":
        return controller.correct(how, t)
    return controller.correct(how, t)


def board_key(state: dict[str, Any]) -> str:
    """What the page draws of a state (all but its time and sequence number)."""
    return json.dumps({k: v for k, v in state.items() if k not in ("t", "seq")}, sort_keys=True)


def measure(pages: int, gap: float) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    record = demo_record()
    names = (record.players[0], record.players[1])
    controller = Controller(record.initial_state(0), names=names)
    live = LiveWeb.start(Bind("127.0.0.1", 0), names)
    live.hub.follow_controller(controller)
    sent: dict[int, float] = {}
    handing: list[float] = []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
            opened = []
            for _ in range(pages):
                page = browser.new_page(viewport={"width": 412, "height": 915})
                page.add_init_script(TIMING)
                page.on("pageerror", lambda exc: print("page error:", exc, file=sys.stderr))
                page.goto(live.server.url)
                opened.append(page)
            for page in opened:
                page.wait_for_selector("#board svg")
            deadline = time.monotonic() + 10
            while live.hub.pages < pages and time.monotonic() < deadline:
                time.sleep(0.05)
            t = 0.0
            last = board_key(live.hub.state())
            for what, how in actions_as_typed(controller):
                t += 1.0
                events = tell(controller, what, how, t)
                start = time.time() * 1000
                began = time.perf_counter()
                for event in events:
                    live.hub(event.at(t))
                handing.append(1000 * (time.perf_counter() - began))
                state = live.hub.state()
                # Only a changed state is sent (and drawn) again.
                if board_key(state) != last:
                    sent[state["seq"]] = start
                    last = board_key(state)
                time.sleep(gap)
            time.sleep(0.5)
            drawn = [page.evaluate("window.__drawn") for page in opened]
            browser.close()
    finally:
        live.close()
    dom: list[float] = []
    frame: list[float] = []
    missing = 0
    for page_times in drawn:
        # An update is drawn once, with the sequence number of whichever of its events first
        # changed the state: the first drawing after the last update's events counts.
        previous = 0
        for seq, start in sorted(sent.items()):
            times = [(at, painted) for s, at, painted in page_times if previous < int(s) <= seq]
            previous = seq
            if not times:
                missing += 1
                continue
            dom.append(times[0][0] - start)
            frame.append(times[0][1] - start)

    def figures(values: list[float]) -> dict[str, float]:
        ordered = sorted(values)
        p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
        return {"median_ms": round(statistics.median(ordered), 1), "p95_ms": round(p95, 1)}

    return {
        "pages": pages,
        "updates": len(sent),
        "measured": len(dom),
        "missing": missing,
        "svg_updated": figures(dom),
        "next_frame": figures(frame),
        "table_thread": figures(handing),
    }


def screenshot(path: Path) -> None:
    """The page during the demo's game, at its illegal move, phone-sized."""
    import tempfile

    from playwright.sync_api import sync_playwright

    record = demo_record()
    folder = Path(tempfile.mkdtemp(prefix="bgboard-web-"))
    store = MatchStore(folder / "demo.sqlite3")
    live = LiveWeb.start(Bind("127.0.0.1", 0), (record.players[0], record.players[1]), store_path=store.path)
    shown = threading.Event()
    done = threading.Event()
    game: DemoGame | None = None

    def tick(t: float) -> None:
        assert game is not None
        judgement = game.controller.judgement
        if judgement is not None and judgement.verdict == "illegal" and not shown.is_set():
            shown.set()
            done.wait(30)

    game = DemoGame(record, 0, store=store, tick=tick)
    live.follow(game.table)
    thread = threading.Thread(target=game.play, args=(7,), daemon=True)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 412, "height": 915}, device_scale_factor=2)
            page.goto(live.server.url)
            page.wait_for_selector("#board svg")
            thread.start()
            if not shown.wait(300):
                sys.exit("bench/web.py: the demo's illegal move never came")
            page.wait_for_selector(".bg-mark--illegal")
            time.sleep(0.3)
            path.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(path), clip={"x": 0, "y": 0, "width": 412, "height": 640})
            browser.close()
    finally:
        done.set()
        thread.join(60)
        live.close()
        store.close()
    print(f"wrote {path}")


def measure_overlay(gap: float) -> dict[str, Any]:
    import httpx

    from bgboard.web.overlay import position_to_evaluate

    record = demo_record()
    names = (record.players[0], record.players[1])
    controller = Controller(record.initial_state(0), names=names)
    live = LiveWeb.start(Bind("127.0.0.1", 0), names)
    live.hub.follow_controller(controller)
    url = f"http://127.0.0.1:{live.server.port}/api/chances"
    served: list[float] = []
    gnubg: list[float] = []
    late = 0
    try:
        with httpx.Client() as client:
            client.get(url)  # the evaluator starts at the first request
            t = 0.0
            last = None
            for what, how in actions_as_typed(controller):
                t += 1.0
                events = tell(controller, what, how, t)
                began = time.perf_counter()
                for event in events:
                    live.hub(event.at(t))
                wanted = position_to_evaluate(live.hub.state())
                if wanted is not None and wanted[0] != last:
                    last = wanted[0]
                    while time.perf_counter() - began < 10:
                        answer = client.get(url).json()
                        if answer["gnubgid"] == wanted[0]:
                            served.append(1000 * (time.perf_counter() - began))
                            gnubg.append(1000 * answer["seconds"])
                            break
                        time.sleep(0.005)
                    else:
                        late += 1
                time.sleep(gap)
    finally:
        live.close()

    def figures(values: list[float]) -> dict[str, float]:
        ordered = sorted(values)
        p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
        return {"median_ms": round(statistics.median(ordered), 1), "p95_ms": round(p95, 1)}

    return {"positions": len(served), "late": late, "chances_served": figures(served), "gnubg_eval": figures(gnubg)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, nargs="+", default=[1, 20], help="pages open at once, per run")
    parser.add_argument("--gap", type=float, default=0.1, help="seconds between actions (default 0.1)")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--screenshot", type=Path, help="save a picture of the page during the demo instead")
    parser.add_argument("--overlay", action="store_true", help="measure the overlay's chances (gnubg) instead")
    args = parser.parse_args()
    if args.overlay:
        found = measure_overlay(args.gap)
        if args.json:
            print(json.dumps(found, indent=2))
            return
        served, ev = found["chances_served"], found["gnubg_eval"]
        print(
            f"{found['positions']} positions: event -> chances served median {served['median_ms']} ms,"
            f" p95 {served['p95_ms']} ms (gnubg's eval median {ev['median_ms']} ms, p95 {ev['p95_ms']} ms)"
            + (f"; {found['late']} not served within 10 s" if found["late"] else "")
        )
        return
    if args.screenshot is not None:
        screenshot(args.screenshot)
        return
    results = [measure(n, args.gap) for n in args.pages]
    if args.json:
        print(json.dumps(results, indent=2))
        return
    for r in results:
        svg, frame = r["svg_updated"], r["next_frame"]
        print(
            f"{r['pages']:>2} page{'s' if r['pages'] != 1 else ' '}: {r['updates']} updates, "
            f"event -> SVG updated median {svg['median_ms']} ms, p95 {svg['p95_ms']} ms; "
            f"-> next frame median {frame['median_ms']} ms, p95 {frame['p95_ms']} ms; "
            f"the table's thread spent median {r['table_thread']['median_ms']} ms,"
            f" p95 {r['table_thread']['p95_ms']} ms handing an action's events to the pages"
            + (f" ({r['missing']} not seen)" if r["missing"] else "")
        )


if __name__ == "__main__":
    main()
