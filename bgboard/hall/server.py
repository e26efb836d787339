# SPDX-License-Identifier: MIT
"""The tournament hall: every table's actions from the MQTT broker, kept and shown (``bgboard hall``).

:class:`Hall` subscribes to all tables (``bgboard/v1/tables/+/...``, see :mod:`bgboard.hall.publish`
for the topics and messages) and keeps every action in its own SQLite database
(:class:`HallStore`) once per table, store and sequence number, whatever the broker delivers
twice (a table restarted with a new match store under a known name numbers its actions from 1
again: both runs are kept, the newest shown).
Its MQTT session is persistent (clean session off, one fixed client id), so the broker queues
what the tables publish while the hall is down. A broker killed before it passed on actions it
had acknowledged loses them; the hall sees the gap (a table's state names its last sequence
number) and asks that table to send again from the first one it misses
(``bgboard/v1/hall/resend/NAME``), so in the end the hall holds exactly what every board holds.
It confirms to each table what it holds (``bgboard/v1/hall/confirmed/NAME``, retained), and a
table sends again, after each connection and at its stop, what the hall has not confirmed.

:func:`make_app` serves, with Starlette (run by uvicorn):

- ``GET /api/tables``: ``[{"table", "players", "score", "gnubgid", "actions", "last_seen"}]``
  (``actions``: the actions the hall holds for the table; ``players``, ``score`` and
  ``gnubgid`` after the last of them; ``last_seen``: when the hall last heard from the table,
  UTC), with ``length``, ``seq``, ``online``, ``last_move``, ``illegal``, ``check`` and
  ``tournament`` from the table's state as well, and what the GNUbgID shows (:func:`position_json`:
  ``board`` as the live page draws it, player 1 at the bottom, ``dice``, ``cube``, ``turn``);
- ``GET /api/tables/NAME/actions``: the actions held, in order (the messages as received;
  run after run); 404 for a table the hall does not know;
- ``GET /api/events``: server-sent events, one ``data:`` line of JSON (:func:`live_json`: the
  tables and the alerts) whenever something changed;
- ``GET /``: the hall page, read-only, kept up to date by those events: the alerts (illegal
  moves, "please check", tables offline; each links to its table), then each table's players
  (player 1 at the bottom), score, board (the live page's SVG board, ``/static/board.js``), last
  move, when the hall last heard from it, and an illegal move or a "please check" waiting.

:func:`~bgboard.hall.acl.make_acl` writes the broker's access list and password file for a list of tables (each
board may write only under its own table; the hall reads everything and writes only its own
orders; :mod:`bgboard.hall.acl`), and :func:`send_tournament` sends tournament mode to every board.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import json
import logging
import sqlite3
import string
import threading
import time
from collections.abc import AsyncIterator, Callable, Sequence
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
    confirmed_topic,
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
#: Seconds between two looks at what to confirm to the tables and what to ask again.
CONFIRM_EVERY: Final = 0.5
#: Seconds between two looks at the tables for the live page (``GET /api/events``).
LIVE_EVERY: Final = 0.5

#: ``PRAGMA user_version`` of a hall database: 2 keys the actions by the store too.
HALL_SCHEMA_VERSION: Final = 2

_SCHEMA: Final = (
    """
    CREATE TABLE IF NOT EXISTS actions (
        table_name TEXT NOT NULL,
        store      TEXT NOT NULL DEFAULT '',
        seq        INTEGER NOT NULL CHECK (seq >= 1),
        received   TEXT NOT NULL,
        message    TEXT NOT NULL,
        PRIMARY KEY (table_name, store, seq)
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
            self._db.execute("BEGIN IMMEDIATE")
            if self._db.execute("PRAGMA user_version").fetchone()[0] < HALL_SCHEMA_VERSION:
                self._upgrade()
            for statement in _SCHEMA:
                self._db.execute(statement)
            self._db.execute(f"PRAGMA application_id={HALL_APPLICATION_ID}")
            self._db.execute(f"PRAGMA user_version={HALL_SCHEMA_VERSION}")
            self._db.execute("COMMIT")
        except (sqlite3.Error, OSError) as exc:
            raise HallError(f"{self.path}: cannot open the hall database: {exc}") from None

    def _upgrade(self) -> None:
        """A hall database of version 1 (actions keyed by table and sequence number only): its
        actions are kept as those of the store ``""`` (messages that name no store)."""
        columns = [row[1] for row in self._db.execute("PRAGMA table_info(actions)")]
        if columns and "store" not in columns:
            self._db.execute("ALTER TABLE actions RENAME TO actions_v1")
            self._db.execute(_SCHEMA[0])
            self._db.execute(
                "INSERT INTO actions (table_name, store, seq, received, message)"
                " SELECT table_name, '', seq, received, message FROM actions_v1"
            )
            self._db.execute("DROP TABLE actions_v1")

    def close(self) -> None:
        """Close the database."""
        with self._lock:
            self._db.close()

    def add_action(self, message: dict[str, Any], received: str | None = None) -> bool:
        """Keep one action message; ``False`` when the hall already had it (a redelivery)."""
        table, seq, store = message["table"], message["seq"], _store_of(message)
        when = received or _now()
        with self._lock:
            cursor = self._db.execute(
                "INSERT OR IGNORE INTO actions (table_name, store, seq, received, message) VALUES (?, ?, ?, ?, ?)",
                (table, store, seq, when, json.dumps(message, ensure_ascii=False)),
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

    def knows(self, table: str) -> bool:
        """Whether the hall has heard of ``table`` (an action, its state or its presence)."""
        with self._lock:
            return self._db.execute("SELECT 1 FROM tables WHERE table_name = ?", (table,)).fetchone() is not None

    def actions(self, table: str) -> list[dict[str, Any]]:
        """The table's actions held: run after run (a run is one store published under the
        name, the first heard first), each in sequence order."""
        with self._lock:
            rows = self._db.execute(
                "SELECT message FROM actions a WHERE table_name = ? ORDER BY"
                " (SELECT min(received) FROM actions b WHERE b.table_name = a.table_name AND b.store = a.store),"
                " store, seq",
                (table,),
            ).fetchall()
        return [json.loads(row[0]) for row in rows]

    def counts(self) -> dict[str, tuple[int, int]]:
        """Each table's ``(actions held, highest sequence number held)``, all runs together."""
        with self._lock:
            rows = self._db.execute("SELECT table_name, count(*), max(seq) FROM actions GROUP BY table_name").fetchall()
        return {row[0]: (int(row[1]), int(row[2])) for row in rows}

    def runs(self) -> dict[tuple[str, str], tuple[int, int]]:
        """Each run's (``(table, store)``) ``(actions held, highest sequence number held)``."""
        with self._lock:
            rows = self._db.execute(
                "SELECT table_name, store, count(*), max(seq) FROM actions GROUP BY table_name, store"
            ).fetchall()
        return {(row[0], row[1]): (int(row[2]), int(row[3])) for row in rows}

    def first_missing(self, table: str, last: int, store: str = "") -> int | None:
        """The first sequence number up to ``last`` of the run ``(table, store)`` that the hall
        does not hold, if any."""
        with self._lock:
            held, top = self._db.execute(
                "SELECT count(*), coalesce(max(seq), 0) FROM actions WHERE table_name = ? AND store = ?", (table, store)
            ).fetchone()
            if held == top:
                return top + 1 if top < last else None
            has_first = self._db.execute(
                "SELECT 1 FROM actions WHERE table_name = ? AND store = ? AND seq = 1", (table, store)
            ).fetchone()
            # The first number after one held that is not held itself: the start of the first gap.
            row = self._db.execute(
                "SELECT min(seq) + 1 FROM actions a WHERE table_name = ? AND store = ? AND NOT EXISTS"
                " (SELECT 1 FROM actions b WHERE b.table_name = a.table_name AND b.store = a.store"
                " AND b.seq = a.seq + 1)",
                (table, store),
            ).fetchone()
        return 1 if has_first is None else int(row[0])

    def held_upto(self, table: str, store: str = "") -> int:
        """The sequence number up to which the hall holds every action of the run (0: none)."""
        with self._lock:
            held, top = self._db.execute(
                "SELECT count(*), coalesce(max(seq), 0) FROM actions WHERE table_name = ? AND store = ?", (table, store)
            ).fetchone()
        if held == top:
            return top
        first = self.first_missing(table, top, store)
        return top if first is None else first - 1

    def tables(self) -> list[dict[str, Any]]:
        """Every table as ``GET /api/tables`` lists it, by name: what its newest run says (the
        store its state names, else the store heard from last)."""
        out = []
        with self._lock:
            rows = self._db.execute(
                "SELECT t.table_name, t.state, t.online, t.last_seen,"
                " (SELECT count(*) FROM actions a WHERE a.table_name = t.table_name)"
                " FROM tables t ORDER BY t.table_name"
            ).fetchall()
            for table, state, online, last_seen, held in rows:
                shown = _store_of(json.loads(state)) if state else None
                run = self._db.execute(
                    "SELECT store FROM actions WHERE table_name = ? ORDER BY store = ? DESC, received DESC LIMIT 1",
                    (table, shown),
                ).fetchone()
                last = None
                if run is not None:
                    last = self._db.execute(
                        "SELECT message FROM actions WHERE table_name = ? AND store = ? ORDER BY seq DESC LIMIT 1",
                        (table, run[0]),
                    ).fetchone()[0]
                out.append(_table_json(table, state, online, last_seen, held, last))
        return out


def _store_of(message: dict[str, Any]) -> str:
    """The store a table's message names (``""`` for a board that names none)."""
    store = message.get("store")
    return store if isinstance(store, str) else ""


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
        "store": state.get("store") if last is None else last.get("store"),
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
        # Per run (table, store): the last sequence number its state named, and the progress seen.
        self._last: dict[tuple[str, str], int] = {}
        self._progress: dict[tuple[str, str], tuple[int, float]] = {}
        self._asked: dict[tuple[str, str], float] = {}
        # Per table: the store heard from last, and the confirmation last sent (store, upto).
        self._current: dict[str, str] = {}
        self._confirmed: dict[str, tuple[str, int]] = {}
        self._checker: threading.Thread | None = None
        # The broker's first answer at the start: accepted, or refused and why.
        self._answered = threading.Event()
        self._refused: str | None = None
        #: Action messages received, and how many of them the hall already had.
        self.received = 0
        self.duplicates = 0
        #: Resend requests sent to the tables.
        self.resends = 0
        #: Confirmations sent to the tables.
        self.confirmations = 0

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
            if not self._answered.is_set():
                # At the start, :meth:`start` raises with the reason: one line, not two.
                self._refused = str(reason)
                self._answered.set()
                return
            log.warning("the broker refused the hall: %s", reason)
            return
        # Subscribed again on every connection: a broker that restarted without its
        # persistence has forgotten the session.
        client.subscribe([(f"{TOPIC_ROOT}/tables/+/{leaf}", 1) for leaf in ("actions", "state", "online")])
        with self._lock:
            # A broker that restarted has lost the retained confirmations: all are sent again.
            self._confirmed.clear()
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
                with self._lock:
                    self._current[table] = _store_of(data)
                if self.store.add_action(data):
                    if self.on_action is not None:
                        self.on_action(data)
                else:
                    self.duplicates += 1
            elif leaf == "state":
                self.store.set_state(table, data)
                run = (table, _store_of(data))
                with self._lock:
                    self._current[table] = run[1]
                    if isinstance(data.get("seq"), int):
                        self._last[run] = max(self._last.get(run, 0), data["seq"])
            elif leaf == "online":
                self.store.set_online(table, bool(data.get("online")))
        except HallError:
            raise
        except Exception:
            log.exception("the hall could not keep a message on %s", message.topic)

    # -- asking for what is missing ---------------------------------------------------------

    def _check_loop(self) -> None:
        while not self._stop.wait(CONFIRM_EVERY):
            try:
                self.confirm()
                self.check_missing()
            except Exception:
                log.exception("checking the tables for missing actions")

    def confirm(self) -> list[tuple[str, str, int]]:
        """Confirm to each table (its store heard from last) up to where the hall holds every
        action, when that changed (retained: a table starting later reads it)."""
        client = self._client
        if client is None or not self.connected:
            return []
        with self._lock:
            current = dict(self._current)
            sent = dict(self._confirmed)
        done = []
        for table, store in current.items():
            upto = self.store.held_upto(table, store)
            if upto < 1 or sent.get(table) == (store, upto):
                continue
            message = {"v": 1, "store": store, "upto": upto}
            client.publish(confirmed_topic(table), json.dumps(message), qos=1, retain=True)
            with self._lock:
                self._confirmed[table] = (store, upto)
            self.confirmations += 1
            done.append((table, store, upto))
        return done

    def check_missing(self) -> list[tuple[str, int]]:
        """Ask each table that made no progress for a while for the actions the hall misses."""
        now = time.monotonic()
        asked: list[tuple[str, int]] = []
        counts = self.store.runs()
        with self._lock:
            lasts = dict(self._last)
        for run, last in lasts.items():
            table, store = run
            held = counts.get(run, (0, 0))[0]
            if held >= last:
                continue
            before = self._progress.get(run)
            if before is None or before[0] != held:
                self._progress[run] = (held, now)
                continue
            if now - before[1] < RESEND_AFTER or now - self._asked.get(run, 0.0) < RESEND_AFTER:
                continue
            first = self.store.first_missing(table, last, store)
            client = self._client
            if first is None or client is None or not self.connected:
                continue
            client.publish(resend_topic(table), json.dumps({"v": 1, "store": store, "from": first}), qos=1)
            self._asked[run] = now
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
#: The live page's folder, whose ``board.js`` the hall page draws its boards with.
WEB_STATIC: Final = Path(__file__).parents[1] / "web" / "static"


def position_json(gnubgid: str | None) -> dict[str, Any]:
    """What the board shows of a GNUbgID, as the live page's ``board.js`` draws it
    (:func:`bgboard.web.hub.board_json`'s ``board``; player 1 always at the bottom):
    ``{"board", "dice", "cube", "turn", "on_roll", "doubled"}`` (``board`` ``None`` without a
    readable GNUbgID; players numbered 1 and 2)."""
    empty: dict[str, Any] = {
        "board": None,
        "dice": [],
        "cube": {"value": 1, "owner": None},
        "turn": None,
        "on_roll": None,
        "doubled": False,
    }
    if not gnubgid:
        return empty
    try:
        from engine.ids import GameState, decode_gnubg_id

        position, fields = decode_gnubg_id(gnubgid)
        # The position is seen from the dice owner (gnubg's fMove).
        points, bar, off = position.to_absolute(fields.dice_owner + 1)
    except Exception:  # a damaged message must not take the hall page down
        return empty
    playing = fields.game_state == GameState.PLAYING
    rolled = fields.dice != (0, 0)
    return {
        "board": {"points": points, "bar": list(bar), "off": list(off), "bottom": 1},
        "dice": list(fields.dice) if rolled else [],
        "cube": {"value": fields.cube, "owner": None if fields.cube_owner is None else fields.cube_owner + 1},
        "turn": fields.turn + 1 if playing else None,
        "on_roll": fields.dice_owner + 1 if playing and rolled else None,
        "doubled": fields.doubled,
    }


def table_json(table: dict[str, Any]) -> dict[str, Any]:
    """One table of ``GET /api/tables``: :meth:`HallStore.tables`' keys and
    :func:`position_json`'s beside them."""
    return {**table, **position_json(table.get("gnubgid"))}


def _anchor(table: str) -> str:
    """The id of a table's box on the hall page (``#table-NAME`` links to it)."""
    return f"table-{table}"


def alerts(tables: Sequence[dict[str, Any]]) -> list[dict[str, str]]:
    """What needs the tournament director: each table's illegal move, "please check" waiting,
    or absence from the broker, as ``{"table", "kind", "text"}`` (``kind``: ``illegal``,
    ``check``, ``offline``)."""
    out = []
    for t in tables:
        if t.get("illegal"):
            out.append({"table": t["table"], "kind": "illegal", "text": f"illegal move: {t['illegal']}"})
        if t.get("check"):
            out.append({"table": t["table"], "kind": "check", "text": f"please check: {t['check']}"})
        if t.get("online") is False:
            out.append({"table": t["table"], "kind": "offline", "text": f"offline since {t.get('last_seen') or '-'}"})
    return out


def live_json(tables: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """One message of ``GET /api/events``: the tables (each with its board drawn in text,
    ``board``, and ``draw``: the state ``board.js`` draws, :func:`position_json` with the
    GNUbgID) and the alerts (:func:`alerts`)."""
    out = []
    for t in tables:
        draw = {"gnubgid": t["gnubgid"], "status": t["table"], **position_json(t["gnubgid"])}
        out.append({**t, "board": _board_text(t["gnubgid"]), "draw": draw if draw["board"] else None})
    return {"tables": out, "alerts": alerts(tables)}


def _player_line(t: dict[str, Any], player: int) -> str:
    """A player's name and score beside the board (player 1 below it, player 2 above)."""
    e = html.escape
    names = t["players"]
    name = names[player - 1] if len(names) >= player else f"Player {player}"
    score = t["score"][player - 1] if len(t["score"]) >= player else 0
    return (
        f"<div class='player player--p{player}' data-player='{player}'><span class='swatch swatch--p{player}'></span>"
        f"<span class='name'>{e(name)}</span> <span class='points'>{score}</span></div>"
    )


def _alert_item(a: dict[str, str]) -> str:
    """One alert, linking to its table's box."""
    e = html.escape
    return (
        f"<li class='{a['kind']}'>{e(a['table'])}: {e(a['text'])} "
        f"<a class='goto' href='#{e(_anchor(a['table']))}'>show table</a></li>"
    )


def hall_page(tables: Sequence[dict[str, Any]]) -> str:
    """The hall page: the alerts (each linking to its table), then one box per table (id
    ``table-NAME``): its players (player 1 at the bottom), score, board (drawn by
    ``board.js`` from ``data-draw``), last move and when the hall last heard from it (kept up
    to date by ``hall.js``)."""
    e = html.escape
    sections = []
    for t in tables:
        length = t.get("length")
        of = f"({length}-point match)" if length else "(money)" if length == 0 else "(no match yet)"
        draw = live_json([t])["tables"][0]["draw"]
        lines = [
            f"<h2>{e(t['table'])} <small class='match'>{' vs '.join(e(n) for n in t['players'])} {of}</small></h2>",
            _player_line(t, 2),
            f"<div class='board-holder' data-draw='{e(json.dumps(draw))}'></div>",
            _player_line(t, 1),
            f"<div class='last-move'>last move: {e(t['last_move'] or '-')}</div>",
        ]
        if t.get("illegal"):
            lines.append(f"<div class='illegal'>illegal move: {e(t['illegal'])}</div>")
        if t.get("check"):
            lines.append(f"<div class='check'>please check: {e(t['check'])}</div>")
        online = "online" if t.get("online") else "offline"
        lines.append(
            f"<div class='facts'><small>last heard <span class='ago' data-time='{e(t['last_seen'] or '')}'>"
            f"{e(t['last_seen'] or '-')}</span>, {t['actions']} actions held, {online}</small></div>"
        )
        css = "table" if t.get("online") else "table off"
        sections.append(f"<section id='{e(_anchor(t['table']))}' class='{css}'>{''.join(lines)}</section>")
    tournament = " (tournament mode: hints off)" if any(t.get("tournament") for t in tables) else ""
    said = "".join(_alert_item(a) for a in alerts(tables))
    page = string.Template((STATIC / "hall.html").read_text(encoding="utf-8"))
    return page.substitute(
        count=len(tables), tournament=tournament, alerts=said or "<li>none</li>", sections="\n".join(sections)
    )


def make_app(store: HallStore) -> Any:
    """The hall's web app (Starlette): the page and the read-only API."""
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.requests import Request
    from starlette.responses import FileResponse, HTMLResponse, JSONResponse, Response, StreamingResponse
    from starlette.routing import Route

    async def tables(request: Request) -> Response:
        return JSONResponse([table_json(t) for t in store.tables()])

    async def actions(request: Request) -> Response:
        name = request.path_params["name"]
        if not store.knows(name):
            return JSONResponse({"error": f"no table {name!r} in the hall"}, status_code=404)
        return JSONResponse(store.actions(name))

    async def page(request: Request) -> Response:
        return HTMLResponse(hall_page(store.tables()))

    async def board_js(request: Request) -> Response:
        # The live page's board, the same file: the hall draws its tables with it.
        return FileResponse(WEB_STATIC / "board.js", media_type="text/javascript")

    async def board_css(request: Request) -> Response:
        # And its colours, the same file too.
        return FileResponse(WEB_STATIC / "board.css", media_type="text/css")

    async def events(request: Request) -> Response:
        async def stream() -> AsyncIterator[str]:
            last: str | None = None
            quiet = 0.0
            while not await request.is_disconnected():
                text = json.dumps(live_json(await run_in_threadpool(store.tables)), ensure_ascii=False)
                if text != last:
                    last, quiet = text, 0.0
                    yield f"data: {text}\n\n"
                elif quiet >= 15.0:
                    quiet = 0.0
                    yield ": still here\n\n"
                await asyncio.sleep(LIVE_EVERY)
                quiet += LIVE_EVERY

        return StreamingResponse(stream(), media_type="text/event-stream", headers={"Cache-Control": "no-cache"})

    from starlette.routing import Mount
    from starlette.staticfiles import StaticFiles

    return Starlette(
        routes=[
            Route("/", page),
            Route("/static/board.js", board_js),
            Route("/static/board.css", board_css),
            Mount("/static", StaticFiles(directory=STATIC), name="static"),
            Route("/api/tables", tables),
            Route("/api/events", events),
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
        config = uvicorn.Config(
            make_app(store), host=bind.host, port=bind.port, log_level="warning", timeout_graceful_shutdown=2
        )
        server = uvicorn.Server(config)
        # uvicorn stops on Ctrl-C or SIGTERM, then raises the interrupt again: a normal end here.
        with contextlib.suppress(KeyboardInterrupt):
            server.run()
        say("hall: stopped; every action received is in the database")
    finally:
        hall.stop()
        store.close()
    return 0
