# SPDX-License-Identifier: MIT
"""A table's outbox: what it publishes to the hall, kept in its match store until the broker has it.

The outbox lives in the match store's file (its tables ``outbox_matches`` and ``outbox`` are
part of the store's schema, see :mod:`bgboard.store`), so an action and its place in the
outbox survive the same power cut. Every action of a published match (undo rows too) gets the
table's sequence number, 1, 2, ... across all the matches published under that table name,
and keeps it; ``acked`` is set when the broker acknowledges it.

The outbox's own table ``outbox_hall`` (made by the outbox when first used, so the store's
schema version stays as it is) holds, per table name, the store's identity (``store``, a random
id given once: a new store published under a known name is a new run to the hall, not the old
one restarted) and ``confirmed``, the sequence number up to which the hall (not only the
broker) confirmed that it holds every action. What the hall has not confirmed is sent again
after every connection to the broker, across restarts too.

>>> from bgboard.store import MatchStore
>>> from engine.match import MatchOptions, OpeningRoll
>>> store = MatchStore(":memory:")
>>> match = store.start_match(("Ann", "Bob"), 5, MatchOptions())
>>> outbox = Outbox(store, "club-7")
>>> outbox.add_match(match)
>>> _ = store.record(match, OpeningRoll(3, 1), source="camera")
>>> outbox.fill()
1
>>> [(m["seq"], m["kind"], m["dice"]) for m in outbox.pending()]
[(1, 'opening_roll', [3, 1])]
>>> outbox.acked([1])
>>> outbox.counts()
(1, 1)
>>> outbox.confirmed()
0
>>> outbox.confirm(1)
>>> outbox.confirmed(), len(outbox.store_id())
(1, 16)
>>> store.close()
"""

from __future__ import annotations

import secrets
import sqlite3
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from bgboard.store import MatchStore

#: The outbox's own table: per table name, the store's identity and what the hall confirmed.
_HALL_TABLE = """
    CREATE TABLE IF NOT EXISTS outbox_hall (
        table_name TEXT PRIMARY KEY,
        store      TEXT NOT NULL,
        confirmed  INTEGER NOT NULL DEFAULT 0 CHECK (confirmed >= 0)
    )
"""


class Outbox:
    """The actions ``store`` keeps for publishing under the table name ``table``.

    :param store: the match store (any connection to the file: the publisher opens its own).
    :param table: the table's name (:func:`bgboard.hall.topics.check_table_name`).
    """

    def __init__(self, store: MatchStore, table: str) -> None:
        self.store = store
        self.table = table
        self._store_id: str | None = None

    def store_id(self) -> str:
        """The store's identity under this table name (a random id, given at the first call
        and kept in the store): sent with every message, so that the hall tells this store's
        actions from those of another store published under the same name."""
        if self._store_id is None:
            with self.store.connection(write=True) as db:
                db.execute(_HALL_TABLE)
                row = db.execute("SELECT store FROM outbox_hall WHERE table_name = ?", (self.table,)).fetchone()
                if row is None:
                    ident = secrets.token_hex(8)
                    db.execute("INSERT INTO outbox_hall (table_name, store) VALUES (?, ?)", (self.table, ident))
                else:
                    ident = row[0]
            self._store_id = ident
        return self._store_id

    def confirm(self, upto: int) -> None:
        """Note that the hall holds every action up to ``upto`` (never lowered)."""
        self.store_id()
        with self.store.connection(write=True) as db:
            db.execute(
                "UPDATE outbox_hall SET confirmed = max(confirmed, ?) WHERE table_name = ?", (int(upto), self.table)
            )

    def confirmed(self) -> int:
        """The sequence number up to which the hall confirmed holding every action (0: none)."""
        with self.store.connection(write=False) as db:
            if db.execute("SELECT 1 FROM sqlite_master WHERE name = 'outbox_hall'").fetchone() is None:
                return 0
            row = db.execute("SELECT confirmed FROM outbox_hall WHERE table_name = ?", (self.table,)).fetchone()
        return 0 if row is None else int(row[0])

    def add_match(self, match_id: int) -> None:
        """Publish the actions of match ``match_id`` (those stored already too).

        :raises UnknownMatchError: there is no such match.
        """
        self.store.summary(match_id)
        with self.store.connection(write=True) as db:
            db.execute("INSERT OR IGNORE INTO outbox_matches (table_name, match) VALUES (?, ?)", (self.table, match_id))

    def fill(self) -> int:
        """Give the table's sequence numbers to the actions not yet in its outbox, in the order
        they were stored; returns how many were added.

        Every row of a published match counts, undo rows included: the hall keeps what the
        board keeps.
        """
        table = self.table
        with self.store.connection(write=True) as db:
            last = db.execute("SELECT coalesce(max(seq), 0) FROM outbox WHERE table_name = ?", (table,)).fetchone()[0]
            rows = db.execute(
                "SELECT a.id FROM actions a JOIN outbox_matches m ON m.match = a.match AND m.table_name = ?"
                " WHERE a.id NOT IN (SELECT action FROM outbox WHERE table_name = ?) ORDER BY a.id",
                (table, table),
            ).fetchall()
            db.executemany(
                "INSERT INTO outbox (table_name, seq, action) VALUES (?, ?, ?)",
                [(table, last + n, row[0]) for n, row in enumerate(rows, 1)],
            )
        return len(rows)

    def pending(self, *, after: int = 0, limit: int = 100) -> list[dict[str, Any]]:
        """The actions the broker has not acknowledged, with ``seq`` above ``after``, in order:
        each the JSON-ready message :mod:`bgboard.hall.publish` sends (:func:`action_message`)."""
        return self._rows("AND o.acked IS NULL AND o.seq > ? ORDER BY o.seq LIMIT ?", (after, limit))

    def unconfirmed(self, *, after: int = 0, limit: int = 100) -> list[dict[str, Any]]:
        """What the publisher sends: the actions the broker has not acknowledged, or the hall
        has not confirmed (:meth:`confirm`), with ``seq`` above ``after``, in order."""
        self.store_id()
        return self._rows(
            "AND (o.acked IS NULL OR o.seq > coalesce((SELECT h.confirmed FROM outbox_hall h"
            " WHERE h.table_name = o.table_name), 0)) AND o.seq > ? ORDER BY o.seq LIMIT ?",
            (after, limit),
        )

    def messages(self) -> list[dict[str, Any]]:
        """Every action in the outbox, acknowledged or not, in order (as sent)."""
        return self._rows("ORDER BY o.seq", ())

    def _rows(self, where: str, values: tuple[Any, ...]) -> list[dict[str, Any]]:
        store = self.store_id()
        with self.store.connection(write=False) as db:
            rows = db.execute(
                "SELECT o.seq AS table_seq, a.*, m.player0, m.player1, m.length FROM outbox o"
                " JOIN actions a ON a.id = o.action JOIN matches m ON m.id = a.match"
                f" WHERE o.table_name = ? {where}",
                (self.table, *values),
            ).fetchall()
        return [action_message(self.table, row, store) for row in rows]

    def acked(self, seqs: Iterable[int], at: datetime | None = None) -> None:
        """Note that the broker acknowledged the actions ``seqs`` (at ``at``, default now)."""
        when = self.store.time_text(at)
        with self.store.connection(write=True) as db:
            db.executemany(
                "UPDATE outbox SET acked = ? WHERE table_name = ? AND seq = ? AND acked IS NULL",
                [(when, self.table, seq) for seq in seqs],
            )

    def resend(self, first: int) -> int:
        """Send the actions from ``first`` on again (the hall misses them); returns how many."""
        with self.store.connection(write=True) as db:
            cursor = db.execute(
                "UPDATE outbox SET acked = NULL WHERE table_name = ? AND seq >= ? AND acked IS NOT NULL",
                (self.table, first),
            )
        return cursor.rowcount

    def counts(self) -> tuple[int, int]:
        """``(actions in the outbox, of which the broker acknowledged)``."""
        with self.store.connection(write=False) as db:
            row = db.execute("SELECT count(*), count(acked) FROM outbox WHERE table_name = ?", (self.table,)).fetchone()
        return int(row[0]), int(row[1])


def action_message(table: str, row: sqlite3.Row, store: str) -> dict[str, Any]:
    """One outbox row as the message of ``bgboard/v1/tables/NAME/actions`` (see
    :mod:`bgboard.hall.topics`); ``store`` is the store's identity (:meth:`Outbox.store_id`)."""
    return {
        "v": 1,
        "table": table,
        "store": store,
        "seq": row["table_seq"],
        "match": row["match"],
        "game": row["game"],
        "match_seq": row["seq"],
        "time": row["time"],
        "players": [row["player0"], row["player1"]],
        "length": row["length"],
        "player": row["player"],
        "kind": row["kind"],
        "dice": None if row["dice"] is None else [int(ch) for ch in row["dice"]],
        "play": row["play"],
        "cube": row["cube"],
        "resign": row["resign"],
        "undoes": row["undoes"],
        "gnubgid_before": row["gnubgid_before"],
        "gnubgid_after": row["gnubgid_after"],
        "source": row["source"],
        "confidence": row["confidence"],
        "note": row["note"],
    }
