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

Each action message says which match of the table's store it belongs to, and the table's state
names the rules, header tags and start of its match; from them the hall writes every match it
holds as GNU Backgammon's ``.mat`` and ``.sgf``, with the engine's writers, exactly as the
table's own store exports it (:class:`HallMatch`, :func:`write_archive`).

:func:`make_app` serves, with Starlette (run by uvicorn):

- ``GET /api/tables``: ``[{"table", "players", "score", "gnubgid", "actions", "last_seen"}]``
  (``actions``: the actions the hall holds for the table; ``players``, ``score`` and
  ``gnubgid`` after the last of them; ``last_seen``: when the hall last heard from the table,
  UTC), with ``length``, ``seq``, ``online``, ``last_move``, ``illegal``, ``check`` and
  ``tournament`` from the table's state as well, what the GNUbgID shows (:func:`position_json`:
  ``board`` as the live page draws it, player 1 at the bottom, ``dice``, ``cube``, ``turn``),
  ``dispute`` (an undo or a correction held last), ``last_play`` (the last move standing, for
  its arrows), ``page`` and ``replay`` (the table's live page and match browser, when it has
  them) and ``downloads`` (its match's ``.mat`` and ``.sgf`` from the hall);
- ``GET /api/tables/NAME/actions``: the actions held, in order (the messages as received;
  run after run); 404 for a table the hall does not know;
- ``GET /api/tables/NAME/matches``: the table's matches held (:meth:`HallMatch.to_json`), and
  ``GET /api/tables/NAME/matches/STORE/MATCH.mat`` (or ``.sgf``) one of them as a file, named
  as the store names it; ``GET /api/tables/NAME/export.zip`` all of them, and
  ``GET /api/export.zip`` every table's (:func:`write_archive`);
- ``GET /api/events``: server-sent events, one ``data:`` line of JSON (:func:`live_json`: the
  tables and the alerts) as soon as something changed (:class:`LiveFeed`: the hall's database
  wakes it, the text is made once for every page);
- ``GET /``: the hall page, read-only, kept up to date by those events: the alerts (illegal
  moves, "please check", disputes, tables offline; each links to its table, its live page, its
  replay and its files), then each table's players (player 1 at the bottom), score, board (the
  live page's SVG board, ``/static/board.js``, with the last move's arrows), last move, when
  the hall last heard from it, an illegal move or a "please check" waiting, and its downloads.

:func:`~bgboard.hall.acl.make_acl` writes the broker's access list and password file for a list of tables (each
board may write only under its own table; the hall reads everything and writes only its own
orders; :mod:`bgboard.hall.acl`), and :func:`send_tournament` sends tournament mode to every board.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import io
import json
import logging
import re
import sqlite3
import string
import threading
import time
import zipfile
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Final
from urllib.parse import quote

from bgboard.errors import HallError, PublishError
from bgboard.hall.topics import (
    CONTROL_TOPIC,
    TOPIC_ROOT,
    BrokerUrl,
    check_table_name,
    confirmed_topic,
    new_client,
    resend_topic,
)
from bgboard.store import CUBE_AND_RESIGN_ACTIONS, FORMATS, MatchSummary, default_file_name, format_time, parse_time

if TYPE_CHECKING:
    from bgboard.web.server import Bind
    from engine.match import Action, MatchOptions, MatchState
    from engine.record import MatchRecord

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
#: Seconds the live feed (``GET /api/events``) lets pass after making its text before it makes
#: the next: what changes meanwhile goes out together (a burst of actions is one message).
LIVE_GAP: Final = 0.05
#: Seconds of silence after which a page is sent a comment, so that proxies keep it open.
KEEP_ALIVE: Final = 15.0
#: The newest actions of a table read to find its last move standing and a dispute (an undo
#: or a correction may take back a few).
RECENT: Final = 40

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
    # What the actions do not say of a match (its rules, header tags and start), from the
    # table's state while the match was on: made when missing, so older databases gain it.
    """
    CREATE TABLE IF NOT EXISTS matches (
        table_name TEXT NOT NULL,
        store      TEXT NOT NULL,
        match      INTEGER NOT NULL,
        info       TEXT NOT NULL,
        PRIMARY KEY (table_name, store, match)
    ) WITHOUT ROWID
    """,
)


def _now() -> str:
    return format_time(datetime.now(UTC))


class HallStore:
    """The hall's database: every table's actions (one row per table and sequence number), its
    last state, and what each match's state said of it. Safe to share between threads.

    Every change to a table (an action, its state, its presence) is counted
    (:attr:`version`) and told to the callbacks given to :meth:`on_change`, from the thread that
    made it; :meth:`tables` works each table out again only when it changed.

    :param path: the SQLite file (made when missing), or ``":memory:"``.
    :raises HallError: the file cannot be opened, or is not a hall database.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        self._lock = threading.Lock()
        # The number of changes so far, and per table the number at its last change: a table's
        # row for the API is kept until it changes.
        self._version = 0
        self._versions: dict[str, int] = {}
        self._rows: dict[str, tuple[int, dict[str, Any]]] = {}
        self._listeners: list[Callable[[], None]] = []
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

    # -- changes -----------------------------------------------------------------------------

    @property
    def version(self) -> int:
        """How many changes the hall has kept since the database was opened."""
        with self._lock:
            return self._version

    def on_change(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call ``callback`` (from the thread that made it) after each change kept; returns
        what stops it. A callback must be quick: the MQTT client's thread waits for it."""
        with self._lock:
            self._listeners.append(callback)

        def stop() -> None:
            with self._lock, contextlib.suppress(ValueError):
                self._listeners.remove(callback)

        return stop

    def _changed(self, table: str) -> None:
        """Count a change to ``table`` (with the lock held)."""
        self._version += 1
        self._versions[table] = self._version

    def _tell(self) -> None:
        """Tell the callbacks (without the lock: one may read the store)."""
        with self._lock:
            listeners = list(self._listeners)
        for callback in listeners:
            try:
                callback()
            except Exception:
                log.exception("telling the hall's pages of a change")

    # -- keeping -------------------------------------------------------------------------------

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
            self._changed(table)
        self._tell()
        return cursor.rowcount == 1

    def _seen(self, table: str, when: str) -> None:
        self._db.execute(
            "INSERT INTO tables (table_name, last_seen) VALUES (?, ?)"
            " ON CONFLICT (table_name) DO UPDATE SET last_seen = excluded.last_seen",
            (table, when),
        )

    def set_state(self, table: str, state: dict[str, Any]) -> None:
        """Keep a table's last state message, and what it says of its match."""
        info = _match_info(state)
        with self._lock:
            self._seen(table, _now())
            self._db.execute("UPDATE tables SET state = ? WHERE table_name = ?", (json.dumps(state), table))
            if info is not None:
                self._db.execute(
                    "INSERT OR REPLACE INTO matches (table_name, store, match, info) VALUES (?, ?, ?, ?)",
                    (table, _store_of(state), state["match"], json.dumps(info, ensure_ascii=False)),
                )
            self._changed(table)
        self._tell()

    def set_online(self, table: str, online: bool) -> None:
        """Note whether the table is connected to the broker."""
        with self._lock:
            self._seen(table, _now())
            self._db.execute("UPDATE tables SET online = ? WHERE table_name = ?", (int(online), table))
            self._changed(table)
        self._tell()

    # -- reading ---------------------------------------------------------------------------------

    def knows(self, table: str) -> bool:
        """Whether the hall has heard of ``table`` (an action, its state or its presence)."""
        with self._lock:
            return self._db.execute("SELECT 1 FROM tables WHERE table_name = ?", (table,)).fetchone() is not None

    def names(self) -> list[str]:
        """Every table the hall has heard of, by name."""
        with self._lock:
            return [row[0] for row in self._db.execute("SELECT table_name FROM tables ORDER BY table_name")]

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

    def matches(self, table: str) -> list[HallMatch]:
        """The table's matches held (each one match of one store, with at least one action):
        run after run, each run's in the order they were played."""
        messages = self.actions(table)
        with self._lock:
            infos = {
                (row[0], int(row[1])): json.loads(row[2])
                for row in self._db.execute("SELECT store, match, info FROM matches WHERE table_name = ?", (table,))
            }
        grouped: dict[tuple[str, int], list[dict[str, Any]]] = {}
        for message in messages:
            match = message.get("match")
            if isinstance(match, int):
                grouped.setdefault((_store_of(message), match), []).append(message)
        return [HallMatch.of(table, key[0], key[1], held, infos.get(key)) for key, held in grouped.items()]

    def match(self, table: str, store: str, match: int) -> HallMatch | None:
        """One match of the table held, or ``None``."""
        with self._lock:
            rows = self._db.execute(
                "SELECT message FROM actions WHERE table_name = ? AND store = ? ORDER BY seq", (table, store)
            ).fetchall()
            info = self._db.execute(
                "SELECT info FROM matches WHERE table_name = ? AND store = ? AND match = ?", (table, store, match)
            ).fetchone()
        held = [m for m in (json.loads(row[0]) for row in rows) if m.get("match") == match]
        if not held:
            return None
        return HallMatch.of(table, store, match, held, None if info is None else json.loads(info[0]))

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
            return int(top)
        first = self.first_missing(table, top, store)
        return top if first is None else first - 1

    def tables(self) -> list[dict[str, Any]]:
        """Every table as ``GET /api/tables`` lists it, by name: what its newest run says (the
        store its state names, else the store heard from last)."""
        return [dict(row) for _, row in self.snapshot()]

    def snapshot(self) -> list[tuple[int, dict[str, Any]]]:
        """Every table as :meth:`tables` gives it, by name, each with the :attr:`version` of its
        last change (the same number: the same row, which must not be changed)."""
        with self._lock:
            out = []
            for (table,) in self._db.execute("SELECT table_name FROM tables ORDER BY table_name").fetchall():
                version = self._versions.get(table, 0)
                kept = self._rows.get(table)
                if kept is None or kept[0] != version:
                    kept = (version, self._table_row(table))
                    self._rows[table] = kept
                out.append(kept)
        return out

    def _table_row(self, table: str) -> dict[str, Any]:
        """One table worked out from the database (with the lock held)."""
        state, online, last_seen = self._db.execute(
            "SELECT state, online, last_seen FROM tables WHERE table_name = ?", (table,)
        ).fetchone()
        held = self._db.execute("SELECT count(*) FROM actions WHERE table_name = ?", (table,)).fetchone()[0]
        shown = _store_of(json.loads(state)) if state else None
        run = self._db.execute(
            "SELECT store FROM actions WHERE table_name = ? ORDER BY store = ? DESC, received DESC LIMIT 1",
            (table, shown),
        ).fetchone()
        recent: list[dict[str, Any]] = []
        if run is not None:
            rows = self._db.execute(
                "SELECT message FROM actions WHERE table_name = ? AND store = ? ORDER BY seq DESC LIMIT ?",
                (table, run[0], RECENT),
            ).fetchall()
            recent = [json.loads(row[0]) for row in reversed(rows)]
        return _table_json(table, state, online, last_seen, held, recent)


def _store_of(message: dict[str, Any]) -> str:
    """The store a table's message names (``""`` for a board that names none)."""
    store = message.get("store")
    return store if isinstance(store, str) else ""


def _match_info(state: dict[str, Any]) -> dict[str, Any] | None:
    """What a state message says of its match that its actions do not (``players``,
    ``length``, ``options``, ``tags``, ``started``), or ``None`` when it says none of it (a
    board that sends none)."""
    match, options, tags = state.get("match"), state.get("options"), state.get("tags")
    if not isinstance(match, int) or not isinstance(options, dict) or not isinstance(tags, dict):
        return None
    return {
        "players": state.get("players"),
        "length": state.get("length"),
        "options": options,
        "tags": {str(k): str(v) for k, v in tags.items()},
        "started": state.get("started"),
    }


def _page_url(value: Any) -> str | None:
    """A table's live page as its state names it (``http://HOST:PORT/``), if it is a web
    address: anything else (a ``javascript:`` link) is not put on the hall's page."""
    if isinstance(value, str) and re.fullmatch(r"https?://[^\s\"'<>]+", value):
        return value if value.endswith("/") else value + "/"
    return None


def store_key(store: str) -> str:
    """A store's identity as it is written in the hall's addresses: ``-`` for the store of a
    board that names none (``""``)."""
    return store or "-"


def match_path(table: str, store: str, match: int, fmt: str) -> str:
    """The address of a match's file from the hall: ``/api/tables/NAME/matches/STORE/MATCH.FMT``."""
    return f"/api/tables/{quote(table, safe='')}/matches/{quote(store_key(store), safe='')}/{match}.{fmt}"


_RESIGN: Final = {1: "single", 2: "gammon", 3: "backgammon"}


def said(message: dict[str, Any], players: Sequence[str]) -> str:
    """An action message in words: ``Ann's move 8/5 6/5``, ``opening roll 31``."""
    kind = message.get("kind")
    dice = "".join(str(d) for d in message.get("dice") or [])
    cube, resign = message.get("cube"), message.get("resign")
    what = {
        "opening_roll": f"opening roll {dice}",
        "roll": f"roll {dice}",
        "move": f"move {message.get('play') or 'no move'}",
        "double": f"double to {cube}",
        "take": "take",
        "drop": "drop",
        "beaver": f"beaver to {cube}",
        "resign": f"resignation ({_RESIGN.get(resign, resign) if isinstance(resign, int) else resign})",
        "accept_resign": "acceptance of the resignation",
        "reject_resign": "refusal of the resignation",
        "undo": "undo",
    }.get(str(kind), str(kind))
    player = message.get("player")
    if player in (0, 1) and len(players) == 2:
        return f"{players[player]}'s {what}"
    return what


def _standing(recent: Sequence[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """The actions of ``recent`` (a run's newest, oldest first) that stand, each undo taking
    back the last one standing, and the action the last undo took back (``None``: none, or one
    older than ``recent``)."""
    stack: list[dict[str, Any]] = []
    undone: dict[str, Any] | None = None
    for message in recent:
        if message.get("kind") == "undo":
            undone = stack.pop() if stack else None
        else:
            stack.append(message)
    return stack, undone


def _last_play(standing: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """The last move standing in the game of the last action standing: ``{"player" (0 or 1),
    "play", "match", "game"}``, or ``None``."""
    if not standing:
        return None
    top = standing[-1]
    for message in reversed(standing):
        if (message.get("match"), message.get("game")) != (top.get("match"), top.get("game")):
            break
        if message.get("kind") == "move" and message.get("player") in (0, 1):
            return {
                "player": message["player"],
                "play": message.get("play") or "",
                "match": message.get("match"),
                "game": message.get("game"),
            }
    return None


def _dispute(recent: Sequence[dict[str, Any]], players: Sequence[str]) -> str | None:
    """What the players disputed, when the last action held is an undo, or a correction that
    replaced what was recorded (an undo of source ``correction`` just before it); else ``None``."""
    if not recent:
        return None
    last = recent[-1]
    if last.get("kind") == "undo":
        _, undone = _standing(recent)
        what = "an action" if undone is None else said(undone, players)
        how = "corrected" if last.get("source") == "correction" else "undo"
        return f"{what} taken back ({how})"
    before = recent[-2] if len(recent) > 1 else None
    if (
        last.get("source") == "correction"
        and before is not None
        and before.get("kind") == "undo"
        and before.get("source") == "correction"
    ):
        return f"corrected to {said(last, players)}"
    return None


def _table_json(
    table: str,
    state_text: str | None,
    online: int | None,
    last_seen: str | None,
    held: int,
    recent: Sequence[dict[str, Any]],
) -> dict[str, Any]:
    """One table for the API: what the actions held say (``recent``: the newest of its run
    shown, oldest first), and the table's state beside it."""
    from engine.ids import decode_gnubg_id

    state = json.loads(state_text) if state_text else {}
    last = recent[-1] if recent else None
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
    page = _page_url(state.get("page"))
    downloads = None
    if last is not None and isinstance(last.get("match"), int):
        run = _store_of(last)
        downloads = {fmt: match_path(table, run, last["match"], fmt) for fmt in FORMATS}
    standing, _ = _standing(recent)
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
        "match": state.get("match") if last is None else last.get("match"),
        "online": None if online is None else bool(online),
        "last_move": state.get("last_move"),
        "illegal": state.get("illegal"),
        "check": state.get("check"),
        "tournament": state.get("tournament"),
        "dispute": _dispute(recent, players),
        "last_play": _last_play(standing),
        "page": page,
        "replay": None if page is None else page + "matches",
        "downloads": downloads,
    }


@dataclass(frozen=True)
class HallMatch:
    """One match a table published (one match of one of its stores), as the hall holds it.

    :param table: the table's name.
    :param store: the store's identity (``""``: a board that names none).
    :param match: the match's number in that store.
    :param players: player 0's and player 1's names.
    :param length: the match length, 0 for money.
    :param options: the rules (from the table's state; else gnubg's defaults, the Jacoby rule
        as the GNUbgIDs say).
    :param tags: the header tags (from the table's state; else ``EventDate`` and ``EventTime``
        of the first action, local time).
    :param started: when the match began (from the table's state; else its first action).
    :param messages: its action messages held, in the match's order (undo rows too).
    """

    table: str
    store: str
    match: int
    players: tuple[str, str]
    length: int
    options: MatchOptions
    tags: dict[str, str]
    started: datetime
    messages: tuple[dict[str, Any], ...] = field(repr=False)

    @classmethod
    def of(
        cls, table: str, store: str, match: int, messages: Sequence[dict[str, Any]], info: dict[str, Any] | None
    ) -> HallMatch:
        """The match from its action messages and what the table's state said of it."""
        from engine.ids import decode_gnubg_id
        from engine.match import MatchOptions

        held = tuple(sorted(messages, key=lambda m: m.get("match_seq") or 0))
        first = held[0] if held else {}
        info = info or {}
        names = info.get("players") or first.get("players") or ["", ""]
        players = (str(names[0]), str(names[1])) if len(names) == 2 else ("", "")
        length: int = next((n for n in (info.get("length"), first.get("length")) if isinstance(n, int)), 0)
        try:
            options = MatchOptions(**info["options"])
        except (KeyError, TypeError, ValueError, ArithmeticError):
            jacoby = False
            with contextlib.suppress(Exception):
                jacoby = decode_gnubg_id(first["gnubgid_before"])[1].jacoby
            options = MatchOptions(crawford=length > 0, jacoby=jacoby)
        when = _time_of(info.get("started")) or _time_of(first.get("time")) or datetime.now(UTC)
        tags = info.get("tags")
        if not isinstance(tags, dict):
            local = when.astimezone()
            tags = {"EventDate": local.strftime("%Y.%m.%d"), "EventTime": local.strftime("%H.%M")}
        return cls(table, store, match, players, length, options, dict(tags), when, held)

    @property
    def missing(self) -> int | None:
        """The first of the match's actions (``match_seq``) the hall does not hold, if one
        before the last held is missing: the files stop before it."""
        for expected, message in enumerate(self.messages, 1):
            if message.get("match_seq") != expected:
                return expected
        return None

    @property
    def score(self) -> tuple[int, int]:
        """The score after the last action held."""
        from engine.ids import decode_gnubg_id

        with contextlib.suppress(Exception):
            fields = decode_gnubg_id(self.messages[-1]["gnubgid_after"])[1]
            return (fields.score[0], fields.score[1])
        return (0, 0)

    @property
    def finished(self) -> bool:
        """Whether a player has won the match (never for money)."""
        return self.length > 0 and max(self.score) >= self.length

    def record(self) -> MatchRecord:
        """The match as the engine's record, as the table's store gives it
        (:meth:`bgboard.store.MatchStore.record_of`): each undo takes back the action before
        it that stands, and every action left is replayed and checked against its GNUbgID.
        Actions after one the hall misses (:attr:`missing`) are left out.

        :raises HallError: the actions do not replay (the message says which).
        """
        from engine.errors import BackgammonError
        from engine.match import MatchState
        from engine.record import GameRecord, MatchRecord

        gap = self.missing
        held = self.messages if gap is None else self.messages[: gap - 1]
        where = f"table {self.table}, match {self.match} (store {store_key(self.store)})"
        standing: list[dict[str, Any]] = []
        for message in held:
            if message.get("kind") != "undo":
                standing.append(message)
            elif standing:
                standing.pop()
            else:
                raise HallError(f"{where}: action {message.get('match_seq')} undoes an action that is not there")
        games: list[GameRecord] = []
        actions: list[Action] = []
        score = (0, 0)
        state = MatchState(self.length, options=self.options)
        last: MatchState | None = None
        for message in standing:
            before = state
            try:
                applied, kept = _action_of(message, before)
                state = before.apply(applied)
            except (BackgammonError, KeyError, TypeError, ValueError) as exc:
                raise HallError(
                    f"{where}: action {message.get('match_seq')} ({message.get('kind')}) does not replay: {exc}"
                ) from None
            after = message.get("gnubgid_after")
            if after and state.gnubg_id() != after:
                raise HallError(
                    f"{where}: action {message.get('match_seq')} ({message.get('kind')}) leads to"
                    f" {state.gnubg_id()}, not to the table's {after}"
                )
            # Game after game as the store splits them: a new game number starts a new game.
            if last is not None and state.game_number != last.game_number:
                games.append(GameRecord(score, tuple(actions), last.last_result if last.is_over() else None))
                actions = []
            if not actions:
                score = before.score
            actions.append(kept)
            last = state
        if last is not None:
            games.append(GameRecord(score, tuple(actions), last.last_result if last.is_over() else None))
        return MatchRecord(self.players, self.length, self.options, tuple(games), dict(self.tags))

    def files(self) -> dict[str, str]:
        """The match as the texts of its ``.mat`` (gnubg's dialect) and ``.sgf`` files, as
        the table's store writes them (:meth:`bgboard.store.MatchStore.export`).

        :raises HallError: the match does not replay.
        """
        from engine.matfile import write_mat
        from engine.sgf import write_sgf

        record = self.record()
        return {"mat": write_mat(record), "sgf": write_sgf(record)}

    def export(self, fmt: str) -> str:
        """The match as the text of a ``.mat`` or ``.sgf`` file (:meth:`files`).

        :raises HallError: ``fmt`` is not one of :data:`~bgboard.store.FORMATS`, or the match
            does not replay.
        """
        if fmt not in FORMATS:
            raise HallError(f"unknown export format {fmt!r}: use {' or '.join(FORMATS)}")
        record = self.record()
        if fmt == "mat":
            from engine.matfile import write_mat

            return write_mat(record)
        from engine.sgf import write_sgf

        return write_sgf(record)

    def file_name(self, fmt: str) -> str:
        """The name the table's store gives the match's file
        (:func:`bgboard.store.default_file_name`): ``2026-11-22_1402_Ann-vs-Bob_7p.mat``."""
        summary = MatchSummary(
            id=self.match,
            players=self.players,
            length=self.length,
            options=self.options,
            tags=self.tags,
            started=self.started,
            finished=None,
            score=self.score,
            games=max((m.get("game") or 0 for m in self.messages), default=0),
            actions=len(self.messages),
            gnubgid=str(self.messages[-1].get("gnubgid_after") or "") if self.messages else "",
        )
        return default_file_name(summary, fmt)

    def to_json(self) -> dict[str, Any]:
        """The match as ``GET /api/tables/NAME/matches`` lists it: ``table``, ``store``,
        ``match``, ``players``, ``length``, ``score``, ``finished``, ``actions`` (the messages
        held, undo rows too), ``started``, ``missing`` (the first action not held, if any),
        ``mat`` and ``sgf`` (its files' addresses) and ``files`` (their names)."""
        return {
            "table": self.table,
            "store": self.store,
            "match": self.match,
            "players": list(self.players),
            "length": self.length,
            "score": list(self.score),
            "finished": self.finished,
            "actions": len(self.messages),
            "started": format_time(self.started),
            "missing": self.missing,
            **{fmt: match_path(self.table, self.store, self.match, fmt) for fmt in FORMATS},
            "files": {fmt: self.file_name(fmt) for fmt in FORMATS},
        }


def _time_of(value: Any) -> datetime | None:
    """A message's time (``2026-11-22T14:02:30.000Z``), or ``None``."""
    if not isinstance(value, str):
        return None
    try:
        return parse_time(value)
    except ValueError:
        return None


def _action_of(message: dict[str, Any], before: MatchState) -> tuple[Action, Action]:
    """The engine's action an action message stands for, in ``before``: the action to apply
    and the action to record (the same, but for a move: applied as the position its play
    leaves, which is quick to check, and recorded with its legal play, checked against the
    play's text as the store checks it).

    :raises ValueError: an unknown kind, or a play the dice cannot make.
    :raises BackgammonError: a play that is not one.
    """
    from engine.dice import Dice
    from engine.match import Move, OpeningRoll, Resign, Roll
    from engine.movegen import legal_plays
    from engine.play import Play

    kind, by = message["kind"], message.get("player")
    if kind == "opening_roll":
        opening = OpeningRoll(*message["dice"])
        return opening, opening
    if kind == "roll":
        roll = Roll(Dice(*message["dice"]), by=by)
        return roll, roll
    if kind == "move":
        if before.dice is None:
            raise ValueError("a move before the dice are rolled")
        text = message.get("play") or ""
        legal = legal_plays(before.position, before.dice)
        if text:
            left, play = legal.parse(text)
        else:
            left, play = before.position, Play()
        if str(play) != text:
            raise ValueError(f"the play {text!r} is not written as the legal play {play} is")
        return Move(left, by=by), Move(play, by=by)
    if kind == "resign":
        resign = Resign(message["resign"], by=by)
        return resign, resign
    if kind not in CUBE_AND_RESIGN_ACTIONS:
        raise ValueError(f"unknown action kind {kind!r}")
    action = CUBE_AND_RESIGN_ACTIONS[kind](by=by)
    return action, action


@dataclass(frozen=True, slots=True)
class Archive:
    """What :func:`write_archive` wrote: the matches (``TABLE/NAME.mat`` and ``.sgf`` each),
    the tables they came from, and the matches it could not write, each in a line (also in
    the archive's ``problems.txt``)."""

    matches: int
    tables: int
    problems: tuple[str, ...]


def write_archive(store: HallStore, out: IO[bytes], tables: Sequence[str] | None = None) -> Archive:
    """Every match the hall holds (of ``tables``, default all) as a zip archive: a folder per
    table, a ``.mat`` and an ``.sgf`` per match named as the store names them (``_2``... added
    when two would share a name); a match that does not replay is left out and said in
    ``problems.txt``."""
    written = 0
    problems: list[str] = []
    names = store.names() if tables is None else list(tables)
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for table in names:
            used: set[str] = set()
            for match in store.matches(table):
                try:
                    files = match.files()
                except HallError as exc:
                    problems.append(str(exc))
                    continue
                base = match.file_name("mat").removesuffix(".mat")
                name, n = base, 1
                while name in used:
                    n += 1
                    name = f"{base}_{n}"
                used.add(name)
                for fmt, text in files.items():
                    archive.writestr(f"{table}/{name}.{fmt}", text.encode("utf-8"))
                written += 1
        if problems:
            archive.writestr("problems.txt", "".join(f"{line}\n" for line in problems).encode("utf-8"))
    return Archive(written, len(names), tuple(problems))


def export_archive(db: Path, target: Path) -> Archive:
    """``bgboard hall --export``: write the archive of every match in the hall's database
    ``db`` to ``target`` (written beside it first, then renamed: never half a file).

    :raises HallError: ``db`` is missing or not a hall database, ``target`` is not a file, or
        it cannot be written.
    """
    if not db.is_file():
        raise HallError(f"no hall database at {db}" + (" (it is not a file)" if db.exists() else ""))
    if target.exists() and not target.is_file():
        raise HallError(f"{target} is not a file: name the .zip to write")
    store = HallStore(db)
    part = target.with_name(f".{target.name}.part")
    try:
        with part.open("wb") as out:
            done = write_archive(store, out)
        part.replace(target)
    except OSError as exc:
        part.unlink(missing_ok=True)
        raise HallError(f"cannot write {target}: {exc.strerror or exc}") from None
    finally:
        store.close()
    return done


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


def links(t: dict[str, Any]) -> dict[str, str]:
    """Where the hall page sends a tournament director about table ``t``: ``table`` (its box),
    ``live`` (its live page) and ``replay`` (its match browser) when it has a page, ``mat``
    and ``sgf`` (its match's files from the hall) when the hall holds an action of it."""
    out = {"table": f"#{_anchor(t['table'])}"}
    if t.get("page"):
        out["live"] = t["page"]
    if t.get("replay"):
        out["replay"] = t["replay"]
    out.update(t.get("downloads") or {})
    return out


def alerts(tables: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """What needs the tournament director: each table's illegal move, "please check" waiting,
    dispute (an undo or a correction held last, until its next action) or absence from the
    broker, as ``{"table", "kind", "text", "links"}`` (``kind``: ``illegal``, ``check``,
    ``dispute``, ``offline``; ``links``: :func:`links`)."""
    out: list[dict[str, Any]] = []
    for t in tables:
        said: list[tuple[str, str]] = []
        if t.get("illegal"):
            said.append(("illegal", f"illegal move: {t['illegal']}"))
        if t.get("check"):
            said.append(("check", f"please check: {t['check']}"))
        if t.get("dispute"):
            said.append(("dispute", f"dispute: {t['dispute']}"))
        if t.get("online") is False:
            said.append(("offline", f"offline since {t.get('last_seen') or '-'}"))
        out += [{"table": t["table"], "kind": kind, "text": text, "links": links(t)} for kind, text in said]
    return out


def draw_json(t: dict[str, Any]) -> dict[str, Any] | None:
    """The state ``board.js`` draws for table ``t`` (:func:`position_json` of its GNUbgID, and
    its last move standing as arrows, ``last_move``), or ``None`` without a readable GNUbgID."""
    draw: dict[str, Any] = {"gnubgid": t["gnubgid"], "status": t["table"], **position_json(t["gnubgid"])}
    if draw["board"] is None:
        return None
    play = t.get("last_play")
    if play:
        from bgboard.web.hub import arrows
        from engine.errors import BackgammonError
        from engine.play import Play

        text = play.get("play") or ""
        # The hall draws player 1 at the bottom: the mover's seat is his number.
        seat = play["player"] + 1
        with contextlib.suppress(BackgammonError):
            steps = Play.parse(text) if text else Play()
            draw["last_move"] = {"player": seat, "play": text or "no move", "arrows": arrows(steps, seat)}
    return draw


def live_table(t: dict[str, Any]) -> dict[str, Any]:
    """One table of ``GET /api/events``: its row (:meth:`HallStore.tables`), its board drawn in
    text (``board``) and ``draw`` (:func:`draw_json`)."""
    return {**t, "board": _board_text(t["gnubgid"]), "draw": draw_json(t)}


def live_json(tables: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """One message of ``GET /api/events``: the tables (:func:`live_table`) and the alerts
    (:func:`alerts`)."""
    return {"tables": [live_table(t) for t in tables], "alerts": alerts(tables)}


class LiveFeed:
    """The messages of ``GET /api/events``, made once for every page as soon as the hall's
    database changed.

    The database's change (in the MQTT client's thread) wakes the feed's task in the server's
    event loop; the task makes the message (each table's part again only when that table
    changed), hands it to every page following, then lets :data:`LIVE_GAP` pass, so that a
    burst of changes goes out as one message.
    """

    def __init__(self, store: HallStore) -> None:
        self.store = store
        #: The last message made, how many different ones were made, and the database's
        #: version (:attr:`HallStore.version`) it was made from.
        self.text = ""
        self.version = 0
        self.made_from = -1
        self._parts: dict[str, tuple[int, str]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake: asyncio.Event | None = None
        self._made: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None
        self._unlisten: Callable[[], None] | None = None

    def make(self) -> str:
        """The message now: ``{"tables": [...], "alerts": [...]}`` (:func:`live_json`)."""
        rows = []
        parts: dict[str, tuple[int, str]] = {}
        for version, row in self.store.snapshot():
            kept = self._parts.get(row["table"])
            if kept is None or kept[0] != version:
                kept = (version, json.dumps(live_table(row), ensure_ascii=False))
            parts[row["table"]] = kept
            rows.append(row)
        self._parts = parts
        tables = ", ".join(text for _, text in parts.values())
        return f'{{"tables": [{tables}], "alerts": {json.dumps(alerts(rows), ensure_ascii=False)}}}'

    def _start(self) -> None:
        """Start the feed's task in the running loop (once per loop)."""
        loop = asyncio.get_running_loop()
        if self._loop is loop:
            return
        self.close()
        wake, made = asyncio.Event(), asyncio.Event()
        wake.set()

        def changed() -> None:
            # A wake already pending covers this change: the message is made after it is
            # cleared, so from a database that already holds the change.
            if not wake.is_set():
                with contextlib.suppress(RuntimeError):  # the loop is closed: the hall stops
                    loop.call_soon_threadsafe(wake.set)

        self._loop, self._wake, self._made = loop, wake, made
        self._unlisten = self.store.on_change(changed)
        self._task = loop.create_task(self._run())

    async def _run(self) -> None:
        from starlette.concurrency import run_in_threadpool

        while True:
            assert self._wake is not None
            await self._wake.wait()
            self._wake.clear()
            # Every change counted by now is in what is made next.
            version = self.store.version
            try:
                text = await run_in_threadpool(self.make)
            except Exception:
                log.exception("making the hall page's message")
                text = self.text
            self.made_from = version
            if text != self.text:
                self.text, self.version = text, self.version + 1
            made, self._made = self._made, asyncio.Event()
            assert made is not None
            made.set()
            await asyncio.sleep(LIVE_GAP)

    async def follow(self) -> AsyncIterator[str]:
        """The server-sent events for one page: each new message as a ``data:`` line, and a
        comment after :data:`KEEP_ALIVE` seconds of silence."""
        self._start()
        # A page coming in gets the hall as it is now, not the message made before the last
        # changes (which the feed is already making again).
        while self.made_from < self.store.version:
            made = self._made
            assert made is not None
            try:
                await asyncio.wait_for(made.wait(), KEEP_ALIVE)
            except TimeoutError:
                break
        seen = 0
        while True:
            if self.version != seen:
                seen = self.version
                yield f"data: {self.text}\n\n"
                continue
            made = self._made
            assert made is not None
            try:
                await asyncio.wait_for(made.wait(), KEEP_ALIVE)
            except TimeoutError:
                yield ": still here\n\n"

    def close(self) -> None:
        """Stop the feed's task and stop listening to the database."""
        if self._unlisten is not None:
            self._unlisten()
            self._unlisten = None
        if self._task is not None:
            with contextlib.suppress(RuntimeError):  # its loop is closed already
                self._task.cancel()
            self._task = None
        self._loop = None


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


#: The links of a table or an alert, in the order shown: (key of :func:`links`, words).
_LINK_WORDS: Final = (("live", "live page"), ("replay", "replay"), ("mat", ".mat"), ("sgf", ".sgf"))


def _link_items(found: dict[str, str]) -> str:
    """A table's links as the page writes them (what ``hall.js`` writes too)."""
    e = html.escape
    out = []
    for key, words in _LINK_WORDS:
        if key in found:
            # The files are saved; the table's own pages open beside the hall's.
            how = " download" if key in FORMATS else " target='_blank' rel='noopener'"
            out.append(f"<a class='{key}' href='{e(found[key])}'{how}>{words}</a>")
    return " ".join(out)


def _alert_item(a: dict[str, Any]) -> str:
    """One alert, linking to its table's box, its live page, its replay and its files."""
    e = html.escape
    found = a["links"]
    more = _link_items(found)
    return (
        f"<li class='{a['kind']}'>{e(a['table'])}: {e(a['text'])} "
        f"<a class='goto' href='{e(found['table'])}'>show table</a>{' ' + more if more else ''}</li>"
    )


def hall_page(tables: Sequence[dict[str, Any]]) -> str:
    """The hall page: the alerts (each linking to its table), then one box per table (id
    ``table-NAME``): its players (player 1 at the bottom), score, board (drawn by
    ``board.js`` from ``data-draw``, the last move's arrows on it), last move, when the hall
    last heard from it (kept up to date by ``hall.js``) and its links."""
    e = html.escape
    sections = []
    for t in tables:
        length = t.get("length")
        of = f"({length}-point match)" if length else "(money)" if length == 0 else "(no match yet)"
        draw = draw_json(t)
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
        if t.get("dispute"):
            lines.append(f"<div class='dispute'>dispute: {e(t['dispute'])}</div>")
        online = "online" if t.get("online") else "offline"
        lines.append(
            f"<div class='facts'><small>last heard <span class='ago' data-time='{e(t['last_seen'] or '')}'>"
            f"{e(t['last_seen'] or '-')}</span>, {t['actions']} actions held, {online}</small></div>"
        )
        found = _link_items(links(t))
        every = f"/api/tables/{quote(t['table'], safe='')}/export.zip"
        lines.append(
            f"<div class='links'>{found + ' ' if found else ''}"
            f"<a class='zip' href='{e(every)}' download>every match (.zip)</a></div>"
        )
        css = "table" if t.get("online") else "table off"
        sections.append(f"<section id='{e(_anchor(t['table']))}' class='{css}'>{''.join(lines)}</section>")
    tournament = " (tournament mode: hints off)" if any(t.get("tournament") for t in tables) else ""
    said = "".join(_alert_item(a) for a in alerts(tables))
    page = string.Template((STATIC / "hall.html").read_text(encoding="utf-8"))
    return page.substitute(
        count=len(tables), tournament=tournament, alerts=said or "<li>none</li>", sections="\n".join(sections)
    )


def _attachment(name: str) -> str:
    """A ``Content-Disposition`` that saves a file as ``name`` (any alphabet: RFC 6266's
    ``filename*``, with a plain ASCII name beside it for old clients)."""
    plain = re.sub(r"[^A-Za-z0-9._-]", "_", name)
    return f"attachment; filename=\"{plain}\"; filename*=UTF-8''{quote(name, safe='')}"


def _stamp() -> str:
    """Now, local, as the archives' names say it: ``2026-11-22_1402``."""
    return datetime.now().astimezone().strftime("%Y-%m-%d_%H%M")


def make_app(store: HallStore) -> Any:
    """The hall's web app (Starlette): the page and the read-only API."""
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.requests import Request
    from starlette.responses import FileResponse, HTMLResponse, JSONResponse, Response, StreamingResponse
    from starlette.routing import Mount, Route
    from starlette.staticfiles import StaticFiles

    feed = LiveFeed(store)

    def error(status: int, text: str) -> Response:
        return JSONResponse({"error": text}, status_code=status)

    def unknown(name: str) -> Response:
        return error(404, f"no table {name!r} in the hall")

    async def tables(request: Request) -> Response:
        return JSONResponse([table_json(t) for t in await run_in_threadpool(store.tables)])

    async def actions(request: Request) -> Response:
        name = request.path_params["name"]
        if not store.knows(name):
            return unknown(name)
        return JSONResponse(await run_in_threadpool(store.actions, name))

    async def matches(request: Request) -> Response:
        name = request.path_params["name"]
        if not store.knows(name):
            return unknown(name)

        def listed() -> list[dict[str, Any]]:
            return [m.to_json() for m in store.matches(name)]

        return JSONResponse(await run_in_threadpool(listed))

    async def match_file(request: Request) -> Response:
        name, key, file = (request.path_params[k] for k in ("name", "store", "file"))
        if not store.knows(name):
            return unknown(name)
        asked = re.fullmatch(r"(\d+)\.(mat|sgf)", file)
        if asked is None:
            return error(404, f"no file {file!r}: a match's files are MATCH.mat and MATCH.sgf")
        number, fmt = int(asked[1]), asked[2]
        found = await run_in_threadpool(store.match, name, "" if key == "-" else key, number)
        if found is None:
            return error(404, f"table {name!r} has no match {number} of store {key!r} in the hall")
        try:
            text = await run_in_threadpool(found.export, fmt)
        except HallError as exc:
            return error(503, str(exc))
        return Response(
            text,
            media_type="application/x-sgf" if fmt == "sgf" else "text/plain; charset=utf-8",
            headers={"Content-Disposition": _attachment(found.file_name(fmt))},
        )

    def archive(tables: Sequence[str] | None, name: str) -> Response:
        buffer = io.BytesIO()
        write_archive(store, buffer, tables)
        return Response(
            buffer.getvalue(),
            media_type="application/zip",
            headers={"Content-Disposition": _attachment(f"{name}_{_stamp()}.zip")},
        )

    async def export_all(request: Request) -> Response:
        return await run_in_threadpool(archive, None, "hall")

    async def export_table(request: Request) -> Response:
        name = request.path_params["name"]
        if not store.knows(name):
            return unknown(name)
        return await run_in_threadpool(archive, [name], name)

    async def page(request: Request) -> Response:
        return HTMLResponse(hall_page(await run_in_threadpool(store.tables)))

    async def board_js(request: Request) -> Response:
        # The live page's board, the same file: the hall draws its tables with it.
        return FileResponse(WEB_STATIC / "board.js", media_type="text/javascript")

    async def board_css(request: Request) -> Response:
        # And its colours, the same file too.
        return FileResponse(WEB_STATIC / "board.css", media_type="text/css")

    async def events(request: Request) -> Response:
        return StreamingResponse(feed.follow(), media_type="text/event-stream", headers={"Cache-Control": "no-cache"})

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        try:
            yield
        finally:
            feed.close()

    app = Starlette(
        routes=[
            Route("/", page),
            Route("/static/board.js", board_js),
            Route("/static/board.css", board_css),
            Mount("/static", StaticFiles(directory=STATIC), name="static"),
            Route("/api/tables", tables),
            Route("/api/events", events),
            Route("/api/export.zip", export_all),
            Route("/api/tables/{name}/actions", actions),
            Route("/api/tables/{name}/matches", matches),
            Route("/api/tables/{name}/matches/{store}/{file}", match_file),
            Route("/api/tables/{name}/export.zip", export_table),
        ],
        lifespan=lifespan,
    )
    app.state.feed = feed
    return app


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
