# SPDX-License-Identifier: MIT
"""The tournament hall: every table's actions from the MQTT broker, kept and shown (``bgboard hall``).

:class:`Hall` subscribes to all tables (``bgboard/v1/tables/+/...``, see :mod:`bgboard.hall.publish`
for the topics and messages) and keeps every action in its own SQLite database
(:class:`HallStore`) once per table and sequence number, whatever the broker delivers twice.
Its MQTT session is persistent (clean session off, one fixed client id), so the broker queues
what the tables publish while the hall is down. A broker killed before it passed on actions it
had acknowledged loses them; the hall sees the gap (a table's state names its last sequence
number) and asks that table to send again from the first one it misses
(``bgboard/v1/hall/resend/NAME``), so in the end the hall holds exactly what every board holds.

:func:`make_app` serves, with Starlette (run by uvicorn):

- ``GET /api/tables``: ``[{"table", "players", "score", "gnubgid", "actions", "last_seen"}]``
  (``actions``: the actions the hall holds for the table; ``players``, ``score`` and
  ``gnubgid`` after the last of them; ``last_seen``: when the hall last heard from the table,
  UTC), with ``length``, ``seq``, ``online``, ``last_move``, ``illegal``, ``check`` and
  ``tournament`` from the table's state as well;
- ``GET /api/tables/NAME/actions``: the actions held, in order (the messages as received);
- ``GET /``: the hall page, read-only, refreshed every two seconds: each table's players,
  score, board, last move, and an illegal move or a "please check" waiting.

:func:`~bgboard.hall.acl.make_acl` writes the broker's access list and password file for a list of tables (each
board may write only under its own table; the hall reads everything and writes only its own
orders; :mod:`bgboard.hall.acl`), and :func:`send_tournament` sends tournament mode to every board.
"""

from __future__ import annotations

import contextlib
import html
import json
import logging
import sqlite3
import string
import threading
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from bgboard.errors import HallError
from bgboard.hall.topics import (
    CONTROL_TOPIC,
    TOPIC_ROOT,
    BrokerUrl,
    PublishError,
    check_table_name,
    new_client,
    resend_topic,
)
from bgboard.store import format_time

if TYPE_CHECKING:
    from bgboard.web.server import Bind

log = logging.getLogger(__name__)

#: ``PRAGMA application_id`` of a hall database: the bytes ``bghl``.
HALL_APPLICATION_ID: Final = 0x6267686C
#: The hall's MQTT client id: one persistent session, so the broker queues while it is away.
HALL_CLIENT_ID: Final = "bgboard-hall"
#: Seconds a table must make no progress while the hall misses its actions before they are
#: asked for again (a table catching up is not interrupted).
RESEND_AFTER: Final = 2.0

_SCHEMA: Final = (
    """
    CREATE TABLE IF NOT EXISTS actions (
        table_name TEXT NOT NULL,
        seq        INTEGER NOT NULL CHECK (seq >= 1),
        received   TEXT NOT NULL,
        message    TEXT NOT NULL,
        PRIMARY KEY (table_name, seq)
    ) WITHOUT ROWID
    """,
    """
    CREATE TABLE IF NOT EXISTS tables (
        table_name TEXT PRIMARY KEY,
        state      TEXT,
        online     INTEGER,
        last_seen  TEXT
    )
    """,
)


def _now() -> str:
    return format_time(datetime.now(UTC))


class HallStore:
    """The hall's database: every table's actions (one row per table and sequence number) and
    its last state. Safe to share between threads.

    :param path: the SQLite file (made when missing), or ``":memory:"``.
    :raises HallError: the file cannot be opened, or is not a hall database.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        self._lock = threading.Lock()
        try:
            if self.path != ":memory:":
                Path(path).parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=10)
            app = self._db.execute("PRAGMA application_id").fetchone()[0]
            if app not in (0, HALL_APPLICATION_ID):
                raise HallError(f"{self.path}: not a hall database (an SQLite database of another program)")
            if app == 0 and self._db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
                raise HallError(f"{self.path}: not a hall database (it has other tables)")
            self._db.execute("PRAGMA journal_mode=WAL")
            # A commit survives the hall being killed; only a power cut could lose the last few,
            # and those the tables send again when asked (see Hall).
            self._db.execute("PRAGMA synchronous=NORMAL")
            for statement in _SCHEMA:
                self._db.execute(statement)
            self._db.execute(f"PRAGMA application_id={HALL_APPLICATION_ID}")
        except (sqlite3.Error, OSError) as exc:
            raise HallError(f"{self.path}: cannot open the hall database: {exc}") from None

    def close(self) -> None:
        """Close the database."""
        with self._lock:
            self._db.close()

    def add_action(self, message: dict[str, Any], received: str | None = None) -> bool:
        """Keep one action message; ``False`` when the hall already had it (a redelivery)."""
        table, seq = message["table"], message["seq"]
        when = received or _now()
        with self._lock:
            cursor = self._db.execute(
                "INSERT OR IGNORE INTO actions (table_name, seq, received, message) VALUES (?, ?, ?, ?)",
                (table, seq, when, json.dumps(message, ensure_ascii=False)),
            )
            self._seen(table, when)
        return cursor.rowcount == 1

    def _seen(self, table: str, when: str) -> None:
        self._db.execute(
            "INSERT INTO tables (table_name, last_seen) VALUES (?, ?)"
            " ON CONFLICT (table_name) DO UPDATE SET last_seen = excluded.last_seen",
            (table, when),
        )

    def set_state(self, table: str, state: dict[str, Any]) -> None:
        """Keep a table's last state message."""
        with self._lock:
            self._seen(table, _now())
            self._db.execute("UPDATE tables SET state = ? WHERE table_name = ?", (json.dumps(state), table))

    def set_online(self, table: str, online: bool) -> None:
        """Note whether the table is connected to the broker."""
        with self._lock:
            self._seen(table, _now())
            self._db.execute("UPDATE tables SET online = ? WHERE table_name = ?", (int(online), table))

    def actions(self, table: str) -> list[dict[str, Any]]:
        """The table's actions held, in sequence order."""
        with self._lock:
            rows = self._db.execute(
                "SELECT message FROM actions WHERE table_name = ? ORDER BY seq", (table,)
            ).fetchall()
        return [json.loads(row[0]) for row in rows]

    def counts(self) -> dict[str, tuple[int, int]]:
        """Each table's ``(actions held, highest sequence number held)``."""
        with self._lock:
            rows = self._db.execute("SELECT table_name, count(*), max(seq) FROM actions GROUP BY table_name").fetchall()
        return {row[0]: (int(row[1]), int(row[2])) for row in rows}

    def first_missing(self, table: str, last: int) -> int | None:
        """The first sequence number up to ``last`` that the hall does not hold, if any."""
        with self._lock:
            held, top = self._db.execute(
                "SELECT count(*), coalesce(max(seq), 0) FROM actions WHERE table_name = ?", (table,)
            ).fetchone()
            if held == top:
                return top + 1 if top < last else None
            has_first = self._db.execute("SELECT 1 FROM actions WHERE table_name = ? AND seq = 1", (table,)).fetchone()
            # The first number after one held that is not held itself: the start of the first gap.
            row = self._db.execute(
                "SELECT min(seq) + 1 FROM actions a WHERE table_name = ? AND NOT EXISTS"
                " (SELECT 1 FROM actions b WHERE b.table_name = a.table_name AND b.seq = a.seq + 1)",
                (table,),
            ).fetchone()
        return 1 if has_first is None else int(row[0])

    def tables(self) -> list[dict[str, Any]]:
        """Every table as ``GET /api/tables`` lists it, by name."""
        with self._lock:
            rows = self._db.execute(
                "SELECT t.table_name, t.state, t.online, t.last_seen,"
                " (SELECT count(*) FROM actions a WHERE a.table_name = t.table_name),"
                " (SELECT message FROM actions a WHERE a.table_name = t.table_name ORDER BY seq DESC LIMIT 1)"
                " FROM tables t ORDER BY t.table_name"
            ).fetchall()
        return [_table_json(*row) for row in rows]


def _table_json(
    table: str, state_text: str | None, online: int | None, last_seen: str | None, held: int, last_text: str | None
) -> dict[str, Any]:
    """One table for the API: what the actions held say, and the table's state beside it."""
    from engine.ids import decode_gnubg_id

    state = json.loads(state_text) if state_text else {}
    last = json.loads(last_text) if last_text else None
    players: list[str] = list(state.get("players") or [])
    score: list[int] = list(state.get("score") or [0, 0])
    gnubgid = state.get("gnubgid")
    length = state.get("length")
    if last is not None and last.get("gnubgid_after"):
        players, gnubgid, length = list(last.get("players") or players), last["gnubgid_after"], last.get("length")
        try:
            score = list(decode_gnubg_id(gnubgid)[1].score)
        except Exception:  # a damaged message must not take the hall page down
            log.warning("table %s: cannot read the GNUbgID %r", table, gnubgid)
    return {
        "table": table,
        "players": players,
        "score": score,
        "gnubgid": gnubgid,
        "actions": held,
        "last_seen": last_seen,
        "length": length,
        "seq": state.get("seq"),
        "online": None if online is None else bool(online),
        "last_move": state.get("last_move"),
        "illegal": state.get("illegal"),
        "check": state.get("check"),
        "tournament": state.get("tournament"),
    }


class Hall:
    """Subscribes to every table on the broker and keeps what they publish in ``store``.

    :param url: the broker (the hall's credentials in it, or its password in
        ``$BGBOARD_MQTT_PASSWORD``).
    :param store: the hall's database.
    :param client_id: the MQTT client id (one per hall: the broker keeps its session).
    :param on_action: called with each new action kept (from the MQTT client's thread).
    """

    def __init__(
        self,
        url: BrokerUrl,
        store: HallStore,
        *,
        client_id: str = HALL_CLIENT_ID,
        on_action: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        self.url = url
        self.store = store
        self.client_id = client_id
        self.on_action = on_action
        self._client: Any = None
        self._connected = threading.Event()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        # Per table: the last sequence number its state named, and the progress seen.
        self._last: dict[str, int] = {}
        self._progress: dict[str, tuple[int, float]] = {}
        self._asked: dict[str, float] = {}
        self._checker: threading.Thread | None = None
        # The broker's first answer at the start: accepted, or refused and why.
        self._answered = threading.Event()
        self._refused: str | None = None
        #: Action messages received, and how many of them the hall already had.
        self.received = 0
        self.duplicates = 0
        #: Resend requests sent to the tables.
        self.resends = 0

    def start(self, timeout: float = 5.0) -> None:
        """Connect to the broker and subscribe; later losses of the broker are retried.

        :raises HallError: the broker cannot be reached, or refuses the hall, within ``timeout``.
        """
        client = new_client(self.client_id, self.url, clean=False)
        client.on_connect = self._on_connect
        client.on_disconnect = self._on_disconnect
        client.on_message = self._on_message
        try:
            client.connect(self.url.host, self.url.port, keepalive=10)
        except OSError as exc:
            raise HallError(f"cannot reach the broker at {self.url}: {exc.strerror or exc}") from None
        client.loop_start()
        self._answered.wait(timeout)
        if not self._connected.is_set():
            client.disconnect()
            client.loop_stop()
            why = self._refused or "no answer"
            raise HallError(f"the broker at {self.url} did not accept the hall: {why}")
        self._client = client
        self._checker = threading.Thread(target=self._check_loop, name="hall-resend", daemon=True)
        self._checker.start()

    def stop(self) -> None:
        """Disconnect (the broker keeps the hall's session and queues for it)."""
        self._stop.set()
        if self._client is not None:
            self._client.disconnect()
            self._client.loop_stop()
            self._client = None
        if self._checker is not None:
            self._checker.join(5)

    def __enter__(self) -> Hall:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def connected(self) -> bool:
        """Whether the broker is connected now."""
        return self._connected.is_set()

    def set_tournament(self, on: bool) -> None:
        """Send tournament mode (hints off) to every board, retained for boards joining later."""
        if self._client is None:
            raise HallError("the hall is not connected")
        info = self._client.publish(CONTROL_TOPIC, json.dumps({"v": 1, "tournament": on}), qos=1, retain=True)
        info.wait_for_publish(5)

    # -- the MQTT client's thread -----------------------------------------------------------

    def _on_connect(self, client: Any, userdata: Any, flags: Any, reason: Any, properties: Any) -> None:
        if reason.is_failure:
            self._refused = str(reason)
            self._answered.set()
            log.warning("the broker refused the hall: %s", reason)
            return
        # Subscribed again on every connection: a broker that restarted without its
        # persistence has forgotten the session.
        client.subscribe([(f"{TOPIC_ROOT}/tables/+/{leaf}", 1) for leaf in ("actions", "state", "online")])
        if self._answered.is_set():
            log.warning("the broker at %s is back", self.url)
        self._connected.set()
        self._answered.set()

    def _on_disconnect(self, client: Any, userdata: Any, flags: Any, reason: Any, properties: Any) -> None:
        was = self._connected.is_set()
        self._connected.clear()
        if was and not self._stop.is_set():
            # Said on the hall's console; the client reconnects by itself, and the tables send
            # again what the broker loses.
            log.warning("lost the broker at %s (%s): reconnecting", self.url, reason)

    def _on_message(self, client: Any, userdata: Any, message: Any) -> None:
        # The broker gets its PUBACK once this returns: what is acknowledged is committed.
        parts = message.topic.split("/")
        if len(parts) != 5 or parts[2] != "tables":
            return
        table, leaf = parts[3], parts[4]
        try:
            check_table_name(table)
            data = json.loads(message.payload) if message.payload else None
        except (PublishError, ValueError):
            log.warning("ignored a bad message on %s", message.topic)
            return
        if not isinstance(data, dict):
            return
        try:
            if leaf == "actions":
                if data.get("table") != table or not isinstance(data.get("seq"), int) or data["seq"] < 1:
                    log.warning("ignored an action message on %s without its table and sequence number", message.topic)
                    return
                self.received += 1
                if self.store.add_action(data):
                    if self.on_action is not None:
                        self.on_action(data)
                else:
                    self.duplicates += 1
            elif leaf == "state":
                self.store.set_state(table, data)
                if isinstance(data.get("seq"), int):
                    with self._lock:
                        self._last[table] = max(self._last.get(table, 0), data["seq"])
            elif leaf == "online":
                self.store.set_online(table, bool(data.get("online")))
        except HallError:
            raise
        except Exception:
            log.exception("the hall could not keep a message on %s", message.topic)

    # -- asking for what is missing ---------------------------------------------------------

    def _check_loop(self) -> None:
        while not self._stop.wait(0.5):
            try:
                self.check_missing()
            except Exception:
                log.exception("checking the tables for missing actions")

    def check_missing(self) -> list[tuple[str, int]]:
        """Ask each table that made no progress for a while for the actions the hall misses."""
        now = time.monotonic()
        asked: list[tuple[str, int]] = []
        counts = self.store.counts()
        with self._lock:
            lasts = dict(self._last)
        for table, last in lasts.items():
            held = counts.get(table, (0, 0))[0]
            if held >= last:
                continue
            before = self._progress.get(table)
            if before is None or before[0] != held:
                self._progress[table] = (held, now)
                continue
            if now - before[1] < RESEND_AFTER or now - self._asked.get(table, 0.0) < RESEND_AFTER:
                continue
            first = self.store.first_missing(table, last)
            client = self._client
            if first is None or client is None or not self.connected:
                continue
            client.publish(resend_topic(table), json.dumps({"v": 1, "from": first}), qos=1)
            self._asked[table] = now
            self.resends += 1
            log.info(
                "table %s: the hall misses actions from %d on (it holds %d of %d): asked again",
                table,
                first,
                held,
                last,
            )
            asked.append((table, first))
        return asked


def send_tournament(url: BrokerUrl, on: bool, timeout: float = 5.0) -> None:
    """Send tournament mode to every board (retained), as a short-lived client of its own.

    :raises HallError: the broker cannot be reached, or does not acknowledge it in time.
    """
    client = new_client(f"{HALL_CLIENT_ID}-control", url)
    try:
        client.connect(url.host, url.port, keepalive=10)
    except OSError as exc:
        raise HallError(f"cannot reach the broker at {url}: {exc.strerror or exc}") from None
    client.loop_start()
    try:
        info = client.publish(CONTROL_TOPIC, json.dumps({"v": 1, "tournament": on}), qos=1, retain=True)
        info.wait_for_publish(timeout)
        if not info.is_published():
            raise HallError(f"the broker at {url} did not acknowledge tournament mode (is the hall's user allowed?)")
    finally:
        client.disconnect()
        client.loop_stop()


# -- the web side ----------------------------------------------------------------------------


def _board_text(gnubgid: str | None) -> str:
    if not gnubgid:
        return ""
    try:
        from engine.ids import decode_gnubg_id
        from engine.text import board_lines

        return "\n".join(board_lines(decode_gnubg_id(gnubgid)[0]))
    except Exception:
        return gnubgid


#: The hall page's folder: its HTML (a :class:`string.Template`) and its style.
STATIC: Final = Path(__file__).with_name("static")


def hall_page(tables: Sequence[dict[str, Any]]) -> str:
    """The hall page: one box per table."""
    sections = []
    for t in tables:
        e = html.escape
        players = " vs ".join(e(p) for p in t["players"]) or "(no match yet)"
        score = "-".join(str(s) for s in t["score"])
        length = t.get("length")
        of = f" in a {length}-point match" if length else " (money)" if length == 0 else ""
        lines = [
            f"<h2>{e(t['table'])}</h2>",
            f"<div>{players}: {score}{of}</div>",
            f"<pre>{e(_board_text(t['gnubgid']))}</pre>",
            f"<div>last move: {e(t['last_move'] or '-')}</div>",
        ]
        if t.get("illegal"):
            lines.append(f"<div class='illegal'>illegal move: {e(t['illegal'])}</div>")
        if t.get("check"):
            lines.append(f"<div class='check'>please check: {e(t['check'])}</div>")
        online = "online" if t.get("online") else "offline"
        lines.append(
            f"<div><small>{t['actions']} actions held, {online}, last seen {e(t['last_seen'] or '-')}</small></div>"
        )
        css = "" if t.get("online") else " class='off'"
        sections.append(f"<section{css}>{''.join(lines)}</section>")
    tournament = " (tournament mode: hints off)" if any(t.get("tournament") for t in tables) else ""
    page = string.Template((STATIC / "hall.html").read_text(encoding="utf-8"))
    return page.substitute(count=len(tables), tournament=tournament, sections="\n".join(sections))


def make_app(store: HallStore) -> Any:
    """The hall's web app (Starlette): the page and the read-only API."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import HTMLResponse, JSONResponse, Response
    from starlette.routing import Route

    async def tables(request: Request) -> Response:
        return JSONResponse(store.tables())

    async def actions(request: Request) -> Response:
        name = request.path_params["name"]
        return JSONResponse(store.actions(name))

    async def page(request: Request) -> Response:
        return HTMLResponse(hall_page(store.tables()))

    from starlette.routing import Mount
    from starlette.staticfiles import StaticFiles

    return Starlette(
        routes=[
            Route("/", page),
            Mount("/static", StaticFiles(directory=STATIC), name="static"),
            Route("/api/tables", tables),
            Route("/api/tables/{name}/actions", actions),
        ]
    )


def run_hall(url: BrokerUrl, bind: Bind, db: Path, *, say: Callable[[str], None] = print) -> int:
    """``bgboard hall``: subscribe, keep, serve until interrupted.

    :raises HallError: the database cannot be used, or the broker cannot be reached.
    """
    import uvicorn

    store = HallStore(db)
    hall = Hall(url, store)
    try:
        hall.start()
        say(f"hall: subscribed to {url} as {hall.client_id}; {db}; page on http://{bind}/")
        server = uvicorn.Server(uvicorn.Config(make_app(store), host=bind.host, port=bind.port, log_level="warning"))
        # uvicorn stops on Ctrl-C or SIGTERM, then raises the interrupt again: a normal end here.
        with contextlib.suppress(KeyboardInterrupt):
            server.run()
        say("hall: stopped; every action received is in the database")
    finally:
        hall.stop()
        store.close()
    return 0
