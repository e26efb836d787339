# SPDX-License-Identifier: MIT
"""The tournament hall's throughput and latency, through a real Mosquitto on a loopback port.

Run from the project root::

    python bench/hall.py [--tables 20] [--actions 80] [--pace 0.1] [--json]

Tables are corpus matches typed into the controller (:class:`bgboard.sim.scripted.ScriptedTable`,
no camera), each with its own match store and :class:`~bgboard.hall.publish.Publisher`; the hall
(:class:`~bgboard.hall.server.Hall`, its SQLite database and its web API served by uvicorn) runs in
the same process. Two runs:

- throughput: every table plays ``--actions`` actions as fast as it can; actions per second
  from the first action stored at a board to the last one kept by the hall;
- latency: every table plays one action every ``--pace`` seconds; for each action, the time
  from its commit in the board's store to the hall keeping it (the hall's event), and to
  ``GET /api/tables`` counting it (polled every 10 ms), median and 95th percentile.

Needs Debian's ``mosquitto`` and the corpus of ``../shared/data/matches/bglab``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from types import ModuleType
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.helpers import load_test_helper
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

    def __init__(self, folder: Path, broker_url: str, records: list[MatchRecord], api: str, hall_times: dict) -> None:
        self.folder = folder
        self.url = BrokerUrl.parse(broker_url)
        self.records = records
        self.api = api
        self.hall_times = hall_times
        self.board_times: dict[tuple[str, int], float] = {}
        self.api_times: dict[tuple[str, int], float] = {}
        #: How long each call of a publisher took the table's thread (s).
        self.publish_took: list[float] = []
        self.lock = threading.Lock()

    def play(self, tag: str, actions: int, pace: float, poll: bool) -> dict[str, Any]:
        names = [f"{tag}{n:03d}" for n in range(len(self.records))]
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=20)
    parser.add_argument("--actions", type=int, default=80, help="actions per table (at most)")
    parser.add_argument("--pace", type=float, default=0.1, help="seconds between a table's actions (latency run)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    import uvicorn

    broker_module = _broker_module()
    records = corpus(args.tables)
    with tempfile.TemporaryDirectory(prefix="bgboard-bench-hall-") as tmp:
        folder = Path(tmp)
        broker = broker_module.Broker(folder / "broker")
        broker.start()
        hall_times: dict[tuple[str, int], float] = {}

        def kept(message: dict[str, Any]) -> None:
            hall_times[(message["table"], message["seq"])] = time.perf_counter()

        store = HallStore(folder / "hall.sqlite3")
        hall = Hall(BrokerUrl.parse(broker.url), store, on_action=kept)
        hall.start()
        port = broker_module.free_port()
        server = uvicorn.Server(uvicorn.Config(make_app(store), host="127.0.0.1", port=port, log_level="warning"))
        web = threading.Thread(target=server.run, daemon=True)
        web.start()
        while not server.started:
            time.sleep(0.05)
        try:
            run = Run(folder, broker.url, records, f"http://127.0.0.1:{port}/api/tables", hall_times)
            results = {
                "throughput": run.play("fast", args.actions, 0.0, poll=False),
                "latency": run.play("paced", args.actions, args.pace, poll=True),
                "duplicates": hall.duplicates,
            }
        finally:
            server.should_exit = True
            web.join(5)
            hall.stop()
            store.close()
            broker.stop()
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
        f"latency: {paced['tables']} tables, one action every {args.pace} s each, {paced['kept']} actions: "
        f"board's commit to the hall's event median {paced['hall_ms_median']} ms, p95 {paced['hall_ms_p95']} ms; "
        f"to GET /api/tables (polled every 10 ms) median {paced.get('api_ms_median')} ms, "
        f"p95 {paced.get('api_ms_p95')} ms"
    )


if __name__ == "__main__":
    main()
