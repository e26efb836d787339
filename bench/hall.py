# SPDX-License-Identifier: MIT
"""The tournament hall's throughput and latency, through a real Mosquitto on a loopback port.

Run from the project root::

    python bench/hall.py [--tables 20] [--actions 80] [--pace 0.1] [--json]
    python bench/hall.py --page [--tables 100] [--actions 30] [--pace 1.0] [--json]

Tables are corpus matches typed into the controller (:class:`bgboard.sim.scripted.ScriptedTable`,
no camera), each with its own match store and :class:`~bgboard.hall.publish.Publisher`; the hall
(:class:`~bgboard.hall.server.Hall`, its SQLite database and its web API served by uvicorn) runs in
the same process. Two runs:

- throughput: every table plays ``--actions`` actions as fast as it can; actions per second
  from the first action stored at a board to the last one kept by the hall;
- latency: every table plays one action every ``--pace`` seconds; for each action, the time
  from its commit in the board's store to the hall keeping it (the hall's event), and to
  ``GET /api/tables`` counting it (polled every 10 ms), median and 95th percentile.

``--page`` runs the hall's page instead, as the tournament director sees it, with a broker and a
hall of its own (so the page shows these tables only): ``--tables`` tables (100 unless told)
each play one action every ``--pace`` seconds (1 s unless told: 100 actions a second in all,
a busy hall; ``--actions`` 30 unless told), their starts spread evenly over one ``--pace`` (as
tables playing on their own, not in step) once every publisher is connected. The hall's page
(``GET /``) is open in headless Chromium (Debian's, driven by Playwright) from before the first
action. For each action:

- committed: the wall clock (``time.time()``) once the board's store holds it (a sink after
  the store's and the publisher's, as above);
- on the page: the wall clock in the page (``performance.timeOrigin + performance.now()``, this
  computer's clock too) when the page's document first shows the table's box (id
  ``table-NAME``) with "N actions held", N at least the action's number: a
  ``MutationObserver`` added before the page's scripts run looks, after each change of the
  document, at the boxes the changed or added nodes are in or hold (never the whole page: it
  costs the page well under a millisecond a change) and notes each (table, N) the first time
  it is seen; and at the next animation frame after it (the browser's next paint). Only the
  box's id and that text are relied on, however ``hall.js`` updates the page;
- as events: the same through the hall's ``GET /api/events`` without a browser, for comparison:
  a process of its own (a reader in this one, parsing the hall's big messages, would hold the
  GIL from the hall and the tables and slow them) reads the stream off a plain socket, keeping
  only each ``recv``'s wall clock and bytes while the tables play; the messages are read after.

Figures: median, 95th percentile and maximum of committed -> on the page, how many of the
actions committed the page showed, and the page's long tasks (50 ms or more of its main thread,
from a ``PerformanceObserver``): a page whose long tasks add up to most of the run cannot keep
up, and its messages wait. The tables, the hall and its server are this one Python process (the
broker, the events' reader and Chromium are not), and all share the machine's cores.

Needs Debian's ``mosquitto`` and the corpus of ``../shared/data/matches/bglab``; ``--page``
Debian's ``chromium`` too.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import multiprocessing
import select
import socket
import statistics
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from types import ModuleType
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.helpers import chromium, load_test_helper, sse_messages
from bgboard.events import Event
from bgboard.hall.publish import Publisher
from bgboard.hall.server import Hall, HallStore, make_app
from bgboard.hall.topics import BrokerUrl
from bgboard.sim.scripted import ScriptedTable
from bgboard.store import MatchStore
from engine.matfile import read_mat
from engine.record import MatchRecord

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "data" / "matches" / "bglab"


def _broker_module() -> ModuleType:
    return load_test_helper("tests/bgboard/mqtt_broker.py", "bgboard_bench_broker")


def corpus(n: int) -> list[MatchRecord]:
    records = []
    for path in sorted(CORPUS.rglob("*.txt")):
        record = read_mat(path.read_text(encoding="utf-8", errors="replace"), str(path)).record
        if record.games and record.games[0].actions:
            records.append(record)
        if len(records) == n:
            return records
    raise SystemExit(f"fewer than {n} matches under {CORPUS}")


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


class Run:
    """One run: tables publishing, the hall keeping, the API polled."""

    def __init__(
        self,
        folder: Path,
        broker_url: str,
        records: list[MatchRecord],
        api: str,
        hall_times: dict[tuple[str, int], float],
    ) -> None:
        self.folder = folder
        self.url = BrokerUrl.parse(broker_url)
        self.records = records
        self.api = api
        self.hall_times = hall_times
        self.board_times: dict[tuple[str, int], float] = {}
        #: The same moments by the wall clock (ms), to compare with a browser's.
        self.board_wall: dict[tuple[str, int], float] = {}
        self.api_times: dict[tuple[str, int], float] = {}
        #: How long each call of a publisher took the table's thread (s).
        self.publish_took: list[float] = []
        self.lock = threading.Lock()

    def play(self, tag: str, actions: int, pace: float, poll: bool, *, spread: bool = False) -> dict[str, Any]:
        """Play every table; with ``spread``, wait for every publisher to be connected, then
        start the tables one after the other, evenly over one ``pace``."""
        names = [f"{tag}{n:03d}" for n in range(len(self.records))]
        together = threading.Barrier(len(names))
        stores: list[tuple[MatchStore, int]] = []
        publishers: list[Publisher] = []
        stop_poll = threading.Event()
        poller = threading.Thread(target=self._poll, args=(stop_poll,), daemon=True) if poll else None
        if poller is not None:
            poller.start()

        def table(name: str, record: MatchRecord) -> None:
            store = MatchStore(self.folder / f"{name}.sqlite3")
            scripted = ScriptedTable(record, store)
            publisher = Publisher(self.url, name, store, scripted.match_id)
            count = 0

            def stamp(event: Event) -> None:
                # After the store's sink and the publisher's: the action is committed.
                nonlocal count
                if event.action is not None or event.kind == "undo":
                    count += 1
                    with self.lock:
                        self.board_times[(name, count)] = time.perf_counter()
                        self.board_wall[(name, count)] = time.time() * 1000

            def publish(event: Event) -> None:
                # The table's side of publishing: it must never hold the table up.
                start = time.perf_counter()
                publisher(event)
                took = time.perf_counter() - start
                with self.lock:
                    self.publish_took.append(took)

            scripted.sinks.add(publish)
            scripted.sinks.add(stamp)
            publisher.start()
            with self.lock:
                stores.append((store, scripted.match_id))
                publishers.append(publisher)
            if spread:
                deadline = time.monotonic() + 30
                while not publisher.connected and time.monotonic() < deadline:
                    time.sleep(0.05)
                together.wait(60)
                time.sleep(pace * names.index(name) / len(names))
            for n, _ in enumerate(scripted.steps(), 1):
                if n == actions:
                    break
                if pace:
                    time.sleep(pace)

        threads = [threading.Thread(target=table, args=(n, r)) for n, r in zip(names, self.records, strict=True)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        keys = [k for k in self.board_times if k[0].startswith(tag)]
        end = time.monotonic() + 60
        while time.monotonic() < end and not all(k in self.hall_times for k in keys):
            time.sleep(0.01)
        time.sleep(0.1)
        stop_poll.set()
        if poller is not None:
            poller.join()
        for publisher in publishers:
            publisher.stop()
        total = sum(len(store.actions(match, all_rows=True)) for store, match in stores)
        for store, _ in stores:
            store.close()
        first = min(self.board_times[k] for k in keys)
        last = max(self.hall_times[k] for k in keys if k in self.hall_times)
        to_hall = [1000 * (self.hall_times[k] - self.board_times[k]) for k in keys if k in self.hall_times]
        to_api = [1000 * (self.api_times[k] - self.board_times[k]) for k in keys if k in self.api_times]
        out: dict[str, Any] = {
            "tables": len(names),
            "actions": total,
            "kept": len(to_hall),
            "seconds": round(last - first, 2),
            "actions_per_s": round(len(to_hall) / (last - first), 1),
            "hall_ms_median": round(statistics.median(to_hall), 1),
            "hall_ms_p95": round(pct(to_hall, 0.95), 1),
        }
        if self.publish_took:
            out["publish_ms_median"] = round(1000 * statistics.median(self.publish_took), 3)
            out["publish_ms_max"] = round(1000 * max(self.publish_took), 3)
            self.publish_took.clear()
        if to_api:
            out["api_ms_median"] = round(statistics.median(to_api), 1)
            out["api_ms_p95"] = round(pct(to_api, 0.95), 1)
        return out

    def _poll(self, stop: threading.Event) -> None:
        seen: dict[str, int] = {}
        while not stop.is_set():
            try:
                with urllib.request.urlopen(self.api, timeout=5) as answer:
                    rows = json.loads(answer.read())
            except OSError:  # a busy machine: poll again
                continue
            now = time.perf_counter()
            for row in rows:
                name, held = row["table"], row["actions"]
                for seq in range(seen.get(name, 0) + 1, held + 1):
                    self.api_times[(name, seq)] = now
                seen[name] = max(seen.get(name, 0), held)
            time.sleep(0.01)


@dataclass
class Served:
    """A broker, a hall keeping what it hears, and the hall's web app on a free port."""

    broker_url: str
    hall: Hall
    port: int
    #: When the hall kept each (table, sequence number) (``time.perf_counter()``).
    hall_times: dict[tuple[str, int], float] = field(default_factory=dict)


@contextlib.contextmanager
def serving(folder: Path, broker_module: ModuleType) -> Iterator[Served]:
    """Start a broker, a hall and its web app under ``folder``; stop them after."""
    import uvicorn

    broker = broker_module.Broker(folder / "broker")
    broker.start()
    hall_times: dict[tuple[str, int], float] = {}

    def kept(message: dict[str, Any]) -> None:
        hall_times[(message["table"], message["seq"])] = time.perf_counter()

    store = HallStore(folder / "hall.sqlite3")
    hall = Hall(BrokerUrl.parse(broker.url), store, on_action=kept)
    hall.start()
    port = broker_module.free_port()
    config = uvicorn.Config(
        make_app(store), host="127.0.0.1", port=port, log_level="warning", timeout_graceful_shutdown=1
    )
    server = uvicorn.Server(config)
    web = threading.Thread(target=server.run, daemon=True)
    web.start()
    while not server.started:
        time.sleep(0.05)
    try:
        yield Served(broker.url, hall, port, hall_times)
    finally:
        server.should_exit = True
        web.join(5)
        hall.stop()
        store.close()
        broker.stop()


#: Set in the hall's page before its scripts run: each (table, N) the first time the page's
#: document shows the box ``table-NAME`` with "N actions held", when, and at the next frame; and
#: the page's long tasks (50 ms or more of its main thread).
OBSERVER = r"""
window.__held = [];
(() => {
  const seen = new Set();
  // The box a node is in (a change inside a box: its text, a part replaced), or the boxes it
  // holds (a node added: a box, or a container of boxes). Only the nodes changed are looked
  // at, never the whole list, so that watching costs the page little.
  const within = (node) => {
    const element = node.nodeType === Node.ELEMENT_NODE ? node : node.parentElement;
    return element ? element.closest('[id^="table-"]') : null;
  };
  new MutationObserver((changes) => {
    const at = performance.timeOrigin + performance.now();
    const found = new Set();
    for (const change of changes) {
      const box = within(change.target);
      if (box) found.add(box);
      for (const node of change.addedNodes) {
        const added = within(node);
        if (added) found.add(added);
        else if (node.nodeType === Node.ELEMENT_NODE) {
          for (const inner of node.querySelectorAll('[id^="table-"]')) found.add(inner);
        }
      }
    }
    const fresh = [];
    for (const box of found) {
      const held = /(\d+) actions? held/.exec(box.textContent || "");
      if (!held) continue;
      const key = `${box.id.slice(6)} ${held[1]}`;
      if (seen.has(key)) continue;
      seen.add(key);
      fresh.push([box.id.slice(6), Number(held[1])]);
    }
    if (fresh.length) {
      requestAnimationFrame(() => {
        const painted = performance.timeOrigin + performance.now();
        for (const [table, n] of fresh) window.__held.push([table, n, at, painted]);
      });
    }
  }).observe(document, { subtree: true, childList: true, characterData: true });
  // What keeps the page's main thread busy: its tasks of 50 ms or more.
  window.__long = [];
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) window.__long.push(entry.duration);
  }).observe({ type: "longtask", buffered: true });
})();
"""


def hall_events(port: int, pipe: Connection) -> None:
    """The hall's ``GET /api/events`` read as a plain client, in a process of its own: while the
    tables play, only each ``recv``'s wall clock (ms) and bytes are kept; told to stop, it sends
    back when each (table, actions held) was first in a message, how many messages came and
    their sizes."""
    sock = socket.create_connection(("127.0.0.1", port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    request = f"GET /api/events HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: text/event-stream\r\n\r\n"
    sock.sendall(request.encode())
    received: list[tuple[float, bytes]] = []
    while True:
        ready, _, _ = select.select([sock.fileno(), pipe.fileno()], [], [])
        if pipe.fileno() in ready:
            break
        data = sock.recv(1 << 16)
        if not data:
            break
        received.append((time.time() * 1000, data))
        if len(received) == 1:
            pipe.send("ready")
    sock.close()
    seen: dict[tuple[str, int], float] = {}
    sizes: list[int] = []
    for at, message in sse_messages(received):
        for line in message.split(b"\n"):
            if line.startswith(b"data: "):
                sizes.append(len(line))
                for table in json.loads(line[6:])["tables"]:
                    seen.setdefault((table["table"], int(table["actions"])), at)
    pipe.recv()
    pipe.send((seen, sizes))


def shown_after(seen: dict[tuple[str, int], float], committed: dict[tuple[str, int], float]) -> tuple[list[float], int]:
    """The times (ms) from each action committed to it first shown (the first (table, N) seen
    with N at least its number), and how many were never shown."""
    best: dict[tuple[str, int], float] = {}
    tops: dict[str, int] = {}
    for (table, n), _ in seen.items():
        tops[table] = max(tops.get(table, 0), n)
    for table, top in tops.items():
        running = math.inf
        for n in range(top, 0, -1):
            running = min(running, seen.get((table, n), math.inf))
            best[(table, n)] = running
    out = [best[key] - at for key, at in committed.items() if best.get(key, math.inf) < math.inf]
    return out, len(committed) - len(out)


def page_run(records: list[MatchRecord], actions: int, pace: float, broker_module: ModuleType) -> dict[str, Any]:
    """The hall's page in Chromium while the tables play (see the module's docstring)."""
    from playwright.sync_api import sync_playwright

    with (
        tempfile.TemporaryDirectory(prefix="bgboard-bench-hall-page-") as tmp,
        serving(Path(tmp), broker_module) as served,
    ):
        base = f"http://127.0.0.1:{served.port}"
        run = Run(Path(tmp), served.broker_url, records, f"{base}/api/tables", served.hall_times)
        # Spawned, not forked: this process has the hall's and the tables' threads.
        context = multiprocessing.get_context("spawn")
        ours, theirs = context.Pipe()
        reader = context.Process(target=hall_events, args=(served.port, theirs), daemon=True)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium("bench/hall.py"), args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.add_init_script(OBSERVER)
            page.on("pageerror", lambda exc: print("page error:", exc, file=sys.stderr))
            page.goto(f"{base}/")
            # Its events followed: the page says "live" at its first message (if it says so at all).
            page.wait_for_function(
                "() => { const live = document.getElementById('live'); return !live || live.textContent === 'live'; }",
                timeout=30_000,
            )
            reader.start()
            if not ours.poll(60) or ours.recv() != "ready":
                sys.exit("bench/hall.py: GET /api/events did not answer")
            played = run.play("page", actions, pace, poll=False, spread=True)
            # The hall has kept every action: wait for the page to show them all (or 10 s).
            tops: dict[str, int] = {}
            for table, n in run.board_wall:
                tops[table] = max(tops.get(table, 0), n)
            want = sum(tops.values())
            deadline = time.monotonic() + 10
            held: list[list[Any]] = []
            while time.monotonic() < deadline:
                held = page.evaluate("window.__held")
                shown: dict[str, int] = {}
                for table, n, *_ in held:
                    shown[table] = max(shown.get(table, 0), int(n))
                if sum(min(shown.get(t, 0), top) for t, top in tops.items()) >= want:
                    break
                time.sleep(0.2)
            time.sleep(0.3)
            held = page.evaluate("window.__held")
            long_tasks: list[float] = page.evaluate("window.__long")
            browser.close()
        ours.send("stop")
        if not ours.poll(60):
            sys.exit("bench/hall.py: the events' reader did not answer")
        seen, sizes = ours.recv()
        reader.join(10)
    in_dom = {(str(t), int(n)): float(at) for t, n, at, _ in held}
    painted = {(str(t), int(n)): float(frame) for t, n, _, frame in held}
    dom, missing = shown_after(in_dom, run.board_wall)
    frame, _ = shown_after(painted, run.board_wall)
    sse, sse_missing = shown_after(seen, run.board_wall)

    def figures(values: list[float]) -> dict[str, float | None]:
        if not values:
            return {"median_ms": None, "p95_ms": None, "max_ms": None}
        return {
            "median_ms": round(statistics.median(values), 1),
            "p95_ms": round(pct(values, 0.95), 1),
            "max_ms": round(max(values), 1),
        }

    return {
        "tables": played["tables"],
        "pace_s": pace,
        "committed": len(run.board_wall),
        "kept": played["kept"],
        "hall_ms_median": played["hall_ms_median"],
        "hall_ms_p95": played["hall_ms_p95"],
        "page_shown": len(dom),
        "page_missing": missing,
        "page": figures(dom),
        "page_next_frame": figures(frame),
        "events_shown": len(sse),
        "events_missing": sse_missing,
        "events": figures(sse),
        "played_s": round((max(run.board_wall.values()) - min(run.board_wall.values())) / 1000, 1),
        "long_tasks": len(long_tasks),
        "long_tasks_s": round(sum(long_tasks) / 1000, 1),
        "long_task_ms_median": round(statistics.median(long_tasks), 1) if long_tasks else None,
        "event_messages": len(sizes),
        "event_message_kb_median": round(statistics.median(sizes) / 1000, 1) if sizes else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, help="tables at once (20; with --page 100)")
    parser.add_argument("--actions", type=int, help="actions per table, at most (80; with --page 30)")
    parser.add_argument(
        "--pace", type=float, help="seconds between a table's actions (latency run: 0.1; with --page 1.0)"
    )
    parser.add_argument("--page", action="store_true", help="measure the hall's page in Chromium instead")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    broker_module = _broker_module()
    if args.page:
        tables = 100 if args.tables is None else args.tables
        pace = 1.0 if args.pace is None else args.pace
        found = page_run(corpus(tables), 30 if args.actions is None else args.actions, pace, broker_module)
        if args.json:
            print(json.dumps(found))
            return
        on, frame, sse = found["page"], found["page_next_frame"], found["events"]
        print(
            f"page: {found['tables']} tables, one action every {pace} s each (starts spread over {pace} s):"
            f" {found['page_shown']} of {found['committed']} actions committed seen on the hall's page in Chromium;"
            f" commit -> page shows it median {on['median_ms']} ms, p95 {on['p95_ms']} ms, max {on['max_ms']} ms;"
            f" -> next frame median {frame['median_ms']} ms, p95 {frame['p95_ms']} ms"
        )
        print(
            f"      the page's main thread: {found['long_tasks']} tasks of 50 ms or more"
            + (f" (median {found['long_task_ms_median']} ms)" if found["long_tasks"] else "")
            + f", {found['long_tasks_s']} s of the {found['played_s']} s played"
        )
        print(
            f"      the same through GET /api/events without a browser ({found['event_messages']} messages of"
            f" {found['event_message_kb_median']} kB): {found['events_shown']} seen, median {sse['median_ms']} ms,"
            f" p95 {sse['p95_ms']} ms, max {sse['max_ms']} ms; board's commit to the hall's event median"
            f" {found['hall_ms_median']} ms, p95 {found['hall_ms_p95']} ms"
        )
        return
    tables = 20 if args.tables is None else args.tables
    actions = 80 if args.actions is None else args.actions
    pace = 0.1 if args.pace is None else args.pace
    records = corpus(tables)
    with tempfile.TemporaryDirectory(prefix="bgboard-bench-hall-") as tmp, serving(Path(tmp), broker_module) as served:
        api = f"http://127.0.0.1:{served.port}/api/tables"
        run = Run(Path(tmp), served.broker_url, records, api, served.hall_times)
        results: dict[str, Any] = {
            "throughput": run.play("fast", actions, 0.0, poll=False),
            "latency": run.play("paced", actions, pace, poll=True),
            "duplicates": served.hall.duplicates,
        }
    if args.json:
        print(json.dumps(results))
        return
    fast, paced = results["throughput"], results["latency"]
    print(
        f"throughput: {fast['tables']} tables, {fast['kept']} of {fast['actions']} actions kept by the hall in "
        f"{fast['seconds']} s: {fast['actions_per_s']} actions/s "
        f"(board to hall: median {fast['hall_ms_median']} ms, p95 {fast['hall_ms_p95']} ms); "
        f"the table's side of publishing an event: median {fast['publish_ms_median']} ms, "
        f"at most {fast['publish_ms_max']} ms"
    )
    print(
        f"latency: {paced['tables']} tables, one action every {pace} s each, {paced['kept']} actions: "
        f"board's commit to the hall's event median {paced['hall_ms_median']} ms, p95 {paced['hall_ms_p95']} ms; "
        f"to GET /api/tables (polled every 10 ms) median {paced.get('api_ms_median')} ms, "
        f"p95 {paced.get('api_ms_p95')} ms"
    )


if __name__ == "__main__":
    main()
