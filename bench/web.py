# SPDX-License-Identifier: MIT
"""Live page figures: from the controller's event to the page's SVG updated, in Chromium, and
to plain event-stream clients.

Run from the project root::

    .venv/bin/python bench/web.py [--pages 1 20] [--sse 100] [--gap 0.1] [--json]
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

``--sse`` (100 by default, after the pages' runs; ``--pages 0`` or ``--sse 0`` leaves either out)
measures the server alone, without a browser: that many plain event-stream clients are connected
at once to the page's ``GET /api/events`` and the same actions are told to the controller, each
``--gap`` seconds after the last. The clients run in a process of their own (so that the
server, in this process, has the other core and the GIL to itself): one asyncio loop, one raw
socket per client (an :class:`asyncio.Protocol` sending ``GET /api/events`` with ``Connection:
close``), whose only work while measuring is to note the wall clock and the bytes of every
``recv``; the chunked body is decoded and the messages read after the run. For every action:

- sent: the wall clock just before its events are handed to the hub (as above);
- received, per client: the wall clock of the ``recv`` that completed the last of the action's
  messages: each event's (``id:`` its hub number) and each new state (``event: state``, whose
  ``seq`` is the hub's number of the event it follows).

Figures over all (action, client) pairs: median, 95th percentile and maximum; how many clients
got every message (every event numbered from the first action's to the last's, and every state
any client got); and the table's thread's time handing the events over (as above: with 100
streams, one ``call_soon_threadsafe`` per stream and message).

``--screenshot PATH`` plays the demo's game at a rendered table (as ``bgboard demo --web``
does) up to its illegal move and saves a phone-sized picture of the page (the README's).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import statistics
import sys
import threading
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import helpers
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
    return helpers.chromium("bench/web.py")


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

    return {"positions": len(served), "late": late, "chances_served": figures(served), "gnubg_eval": figures(gnubg)}


def figures(values: list[float], *, most: bool = False) -> dict[str, float]:
    """Median and 95th percentile (and the maximum if ``most``) of ``values``, rounded."""
    if not values:
        return {"median_ms": float("nan"), "p95_ms": float("nan"), **({"max_ms": float("nan")} if most else {})}
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    out = {"median_ms": round(statistics.median(ordered), 1), "p95_ms": round(p95, 1)}
    if most:
        out["max_ms"] = round(ordered[-1], 1)
    return out


class EventStream(asyncio.Protocol):
    """One plain client of ``GET /api/events``: while measuring it only keeps each ``recv``'s
    wall clock and bytes (:meth:`messages` reads them afterwards)."""

    def __init__(self, request: bytes) -> None:
        self.request = request
        self.got: list[tuple[float, bytes]] = []
        self.transport: asyncio.Transport | None = None
        self.first = asyncio.get_running_loop().create_future()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        transport.write(self.request)

    def data_received(self, data: bytes) -> None:
        self.got.append((time.time() * 1000, data))
        if not self.first.done():
            self.first.set_result(None)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.first.done():
            self.first.set_result(None)

    def messages(self) -> list[tuple[str, int, float]]:
        """``(kind, number, wall clock ms)`` of each message received: ``("event", id)`` or
        ``("state", seq)``, at the ``recv`` that completed it."""
        out: list[tuple[str, int, float]] = []
        for at, message in helpers.sse_messages(self.got):
            lines = message.decode().split("\n")
            fields = dict(line.split(": ", 1) for line in lines if ": " in line and not line.startswith(":"))
            if "id" in fields:
                out.append(("event", int(fields["id"]), at))
            elif fields.get("event") == "state":
                out.append(("state", int(json.loads(fields["data"])["seq"]), at))
        return out


async def _clients(port: int, count: int, pipe: Connection) -> None:
    loop = asyncio.get_running_loop()
    request = (
        f"GET /api/events HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: text/event-stream\r\nConnection: close\r\n\r\n"
    ).encode()
    streams: list[EventStream] = []
    for _ in range(count):
        _, stream = await loop.create_connection(lambda: EventStream(request), "127.0.0.1", port)
        streams.append(stream)
    await asyncio.wait_for(asyncio.gather(*(stream.first for stream in streams)), 30)
    pipe.send("ready")
    stop: asyncio.Future[None] = loop.create_future()

    def told() -> None:
        if not stop.done():
            stop.set_result(None)

    loop.add_reader(pipe.fileno(), told)
    await stop
    loop.remove_reader(pipe.fileno())
    pipe.recv()
    for stream in streams:
        if stream.transport is not None:
            stream.transport.close()
    pipe.send([stream.messages() for stream in streams])


def event_stream_clients(port: int, count: int, pipe: Connection) -> None:
    """The clients' process: ``count`` streams, "ready" once each has its first bytes, their
    messages (:meth:`EventStream.messages`) when told to stop."""
    asyncio.run(_clients(port, count, pipe))


def measure_sse(clients: int, gap: float) -> dict[str, Any]:
    record = demo_record()
    names = (record.players[0], record.players[1])
    controller = Controller(record.initial_state(0), names=names)
    live = LiveWeb.start(Bind("127.0.0.1", 0), names)
    live.hub.follow_controller(controller)
    # Spawned, not forked: this process has the server's threads.
    context = multiprocessing.get_context("spawn")
    ours, theirs = context.Pipe()
    process = context.Process(target=event_stream_clients, args=(live.server.port, clients, theirs), daemon=True)
    #: Each action: the wall clock before its events were handed over (ms), and the hub's
    #: numbers of its events (first, last).
    actions: list[tuple[float, int, int]] = []
    handing: list[float] = []
    try:
        process.start()
        if not ours.poll(60) or ours.recv() != "ready":
            sys.exit("bench/web.py: the event-stream clients did not connect")
        deadline = time.monotonic() + 10
        while live.hub.pages < clients and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)
        t = 0.0
        seq = live.hub.state()["seq"]
        for what, how in actions_as_typed(controller):
            t += 1.0
            events = tell(controller, what, how, t)
            start = time.time() * 1000
            began = time.perf_counter()
            for event in events:
                live.hub(event.at(t))
            handing.append(1000 * (time.perf_counter() - began))
            if events:
                actions.append((start, seq + 1, seq + len(events)))
                seq += len(events)
            time.sleep(gap)
        time.sleep(0.5)
        ours.send("stop")
        if not ours.poll(60):
            sys.exit("bench/web.py: the event-stream clients did not answer")
        received: list[list[tuple[str, int, float]]] = ours.recv()
        process.join(10)
    finally:
        if process.is_alive():
            process.terminate()
        live.close()
    if not actions:
        sys.exit("bench/web.py: the demo's game told the hub nothing")
    first_seq, last = actions[0][1], actions[-1][2]
    # The states the actions caused (not the one each client is sent first).
    states = {n for got in received for kind, n, _ in got if kind == "state" and first_seq <= n <= last}
    latency: list[float] = []
    complete = 0
    for got in received:
        event_at = {n: at for kind, n, at in got if kind == "event"}
        state_at: dict[int, float] = {}
        for kind, n, at in got:
            if kind == "state":
                state_at.setdefault(n, at)
        if all(n in event_at for n in range(first_seq, last + 1)) and states <= state_at.keys():
            complete += 1
        for start, first, final in actions:
            times = [event_at[n] for n in range(first, final + 1) if n in event_at]
            times += [state_at[n] for n in range(first, final + 1) if n in state_at]
            if times:
                latency.append(max(times) - start)
    return {
        "clients": clients,
        "actions": len(actions),
        "events": last - first_seq + 1,
        "states": len(states),
        "measured": len(latency),
        "complete_clients": complete,
        "received": figures(latency, most=True),
        "table_thread": figures(handing, most=True),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--pages", type=int, nargs="+", default=[1, 20], help="pages open at once in Chromium, per run (0: none)"
    )
    parser.add_argument(
        "--sse", type=int, nargs="+", default=[100], help="plain event-stream clients at once, per run (0: none)"
    )
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
    results = [{"run": "chromium", **measure(n, args.gap)} for n in args.pages if n > 0]
    results += [{"run": "sse", **measure_sse(n, args.gap)} for n in args.sse if n > 0]
    if args.json:
        print(json.dumps(results, indent=2))
        return
    for r in results:
        if r["run"] == "sse":
            got, thread = r["received"], r["table_thread"]
            print(
                f"{r['clients']} event streams (no browser): {r['actions']} actions ({r['events']} events,"
                f" {r['states']} states), event -> all of the action's messages received: median"
                f" {got['median_ms']} ms, p95 {got['p95_ms']} ms, max {got['max_ms']} ms over {r['measured']}"
                f" (action, client) pairs; {r['complete_clients']} of {r['clients']} clients got every message;"
                f" the table's thread spent median {thread['median_ms']} ms, p95 {thread['p95_ms']} ms,"
                f" max {thread['max_ms']} ms handing an action's events to the streams"
            )
            continue
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
