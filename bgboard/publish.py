# SPDX-License-Identifier: MIT
"""Publishing a table to the tournament hall's MQTT broker (``--publish mqtt://HOST:PORT``).

The match store is the outbox. Every action the table stores (undo rows too) gets the table's
sequence number, 1, 2, ... across all the matches published under that table name
(:meth:`~bgboard.store.MatchStore.outbox_fill`), and is published with QoS 1 until the broker
acknowledges it (``PUBACK``); the acknowledgement is written in the store, so a board that is
switched off, or offline for an hour, sends what the broker never had when it is back, in
order. The table's state is published retained, so the hall (or anyone subscribing) sees every
table at once.

Refereeing never waits for the network: :class:`Publisher` is a sink of the table's events
(:mod:`bgboard.events`) that only notes what changed and wakes its own thread; that thread
reads the outbox on a second SQLite connection whose commits are not synced to disk (an
acknowledgement lost in a power cut only makes an action be sent twice, and the hall keeps
it once), and paho-mqtt's own thread talks to the broker, reconnecting with a backoff. A
broker that is down costs the table nothing.

Topics and messages (JSON, UTF-8; ``v`` is the schema version, 1):

``bgboard/v1/tables/NAME/actions`` (QoS 1, not retained)
    one stored action: ``v``, ``table``, ``seq`` (the table's sequence number), ``match``,
    ``game``, ``match_seq``, ``time`` (UTC), ``players`` [2], ``length``, ``player`` (0 or 1,
    the index in ``players``; null for the opening roll), ``kind`` (the store's kinds and
    ``undo``), ``dice``, ``play``, ``cube``, ``resign``, ``undoes``, ``gnubgid_before``,
    ``gnubgid_after``, ``source``, ``confidence``, ``note``.
``bgboard/v1/tables/NAME/state`` (QoS 1, retained)
    the table now: ``v``, ``table``, ``match``, ``players``, ``length``, ``score``,
    ``gnubgid``, ``finished``, ``seq`` (the last sequence number given out), ``last_move``,
    ``illegal`` (what the referee says about an illegal move waiting to be put right, or
    null), ``check`` (a "please check" waiting, or null), ``tournament``, ``time``.
``bgboard/v1/tables/NAME/online`` (QoS 1, retained)
    ``{"v": 1, "online": true}`` while connected; the broker publishes ``false`` (the
    client's will) when the board vanishes.
``bgboard/v1/hall/control`` (retained, written by the hall)
    ``{"v": 1, "tournament": true}``: tournament mode (hints off).
``bgboard/v1/hall/resend/NAME`` (written by the hall)
    ``{"v": 1, "from": SEQ}``: the hall misses the table's actions from ``SEQ`` on (the broker
    acknowledged them, then died before delivering them); they are sent again.
"""

from __future__ import annotations

import json
import logging
import os
import queue
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final
from urllib.parse import unquote, urlsplit

from bgboard.errors import PublishError
from bgboard.events import Event
from bgboard.store import MatchStore, format_time

log = logging.getLogger(__name__)

#: The first part of every topic: the project, then the schema version of the messages.
TOPIC_ROOT: Final = "bgboard/v1"
#: Tournament mode and other orders from the hall (retained).
CONTROL_TOPIC: Final = f"{TOPIC_ROOT}/hall/control"
#: A table name: letters, digits, ``-`` and ``_`` (it is a topic level and a broker user name).
TABLE_NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
#: The MQTT port when the URL names none.
DEFAULT_PORT: Final = 1883
#: Actions handed to the MQTT client and not yet acknowledged, at most.
WINDOW: Final = 200
#: Seconds between looks at the outbox when nothing wakes the publisher.
POLL: Final = 0.5


def table_topic(table: str, leaf: str) -> str:
    """``bgboard/v1/tables/TABLE/LEAF`` (``actions``, ``state``, ``online``)."""
    return f"{TOPIC_ROOT}/tables/{table}/{leaf}"


def resend_topic(table: str) -> str:
    """Where the hall asks ``table`` to send its actions again."""
    return f"{TOPIC_ROOT}/hall/resend/{table}"


def check_table_name(name: str) -> str:
    """``name`` if it is a usable table name.

    >>> check_table_name("club-7")
    'club-7'

    :raises PublishError: it is not (empty, too long, or with ``/``, ``+``, ``#``, spaces...).
    """
    if not TABLE_NAME.fullmatch(name):
        raise PublishError(
            f"bad table name {name!r}: use 1 to 64 letters, digits, '-' or '_', starting with a letter or digit"
        )
    return name


@dataclass(frozen=True, slots=True)
class BrokerUrl:
    """Where the broker is: ``mqtt://[USER[:PASSWORD]@]HOST[:PORT]``.

    A password left out of the URL is read from ``$BGBOARD_MQTT_PASSWORD`` by whoever connects
    (see :func:`connect_options`), so it need not show in the process list.

    >>> BrokerUrl.parse("mqtt://table-1@hall.local:1884")
    BrokerUrl(host='hall.local', port=1884, username='table-1', password=None)
    """

    host: str
    port: int = DEFAULT_PORT
    username: str | None = None
    password: str | None = None

    @classmethod
    def parse(cls, text: str) -> BrokerUrl:
        """Read a broker URL.

        :raises PublishError: not ``mqtt://HOST[:PORT]``, with what is wrong.
        """
        try:
            parts = urlsplit(text)
            port = parts.port
        except ValueError as exc:
            raise PublishError(f"bad broker URL {text!r}: {exc}") from None
        if parts.scheme != "mqtt":
            raise PublishError(f"bad broker URL {text!r}: it starts with mqtt:// (e.g. mqtt://hall.local:1883)")
        if not parts.hostname:
            raise PublishError(f"bad broker URL {text!r}: no host (e.g. mqtt://hall.local:1883)")
        if parts.path not in ("", "/") or parts.query or parts.fragment:
            raise PublishError(f"bad broker URL {text!r}: only mqtt://[USER[:PASSWORD]@]HOST[:PORT]")
        return cls(
            parts.hostname,
            DEFAULT_PORT if port is None else port,
            None if parts.username is None else unquote(parts.username),
            None if parts.password is None else unquote(parts.password),
        )

    def __str__(self) -> str:
        user = f"{self.username}@" if self.username else ""
        return f"mqtt://{user}{self.host}:{self.port}"


def new_client(client_id: str, url: BrokerUrl, *, clean: bool = True) -> Any:
    """A paho-mqtt client for ``url`` (credentials set, not connected yet).

    :param clean: a clean session; ``False`` asks the broker to keep the client's subscriptions
        and queue its QoS 1 messages while it is away (the hall's).
    """
    import paho.mqtt.client as mqtt
    from paho.mqtt.enums import CallbackAPIVersion

    client = mqtt.Client(
        callback_api_version=CallbackAPIVersion.VERSION2,
        client_id=client_id,
        clean_session=clean,
    )
    password = url.password if url.password is not None else os.environ.get("BGBOARD_MQTT_PASSWORD")
    if url.username is not None:
        client.username_pw_set(url.username, password)
    # Whole seconds (paho's type): 1 s, doubling to 5 s between tries.
    client.reconnect_delay_set(1, 5)
    return client


def _dumps(message: dict[str, Any]) -> bytes:
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode()


class Publisher:
    """Sends a table's stored actions and state to the broker, from its own thread.

    Use it as one of the table's sinks (it takes every event) and :meth:`start` it; :meth:`stop`
    sends what it can within ``linger`` seconds and disconnects.

    :param url: the broker.
    :param table: the table's name (:func:`check_table_name`).
    :param store: the match store the table records in (the outbox).
    :param match_id: the match being played (published with the matches published before
        under this table name).
    :param on_control: called (from the MQTT client's thread) with each message of the hall's
        control topic, e.g. ``{"v": 1, "tournament": true}``.
    :param on_link: called (from the MQTT client's thread) with ``True`` when the broker is
        connected, ``False`` when the connection is lost; once per change.
    :raises PublishError: a bad table name.
    """

    def __init__(
        self,
        url: BrokerUrl,
        table: str,
        store: MatchStore,
        match_id: int,
        *,
        on_control: Callable[[dict[str, Any]], None] | None = None,
        on_link: Callable[[bool], None] | None = None,
    ) -> None:
        self.url = url
        self.on_link = on_link
        self.table = check_table_name(table)
        self.match_id = match_id
        self.on_control = on_control
        self._store = store
        store.outbox_add_match(table, match_id)
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._dirty = True
        # What the events say that the store does not: the last move in words, an illegal move
        # or a "please check" waiting.
        self._said: dict[str, Any] = {"last_move": None, "illegal": None, "check": None}
        self.tournament = False
        self._acks: queue.SimpleQueue[tuple[int, int]] = queue.SimpleQueue()
        self._resends: queue.SimpleQueue[int] = queue.SimpleQueue()
        self._generation = 0
        self._connected = False
        self._link_told: bool | None = None
        self._linger = 0.0
        self._thread: threading.Thread | None = None
        self._client: Any = None
        #: Actions the broker acknowledged during this run.
        self.acked = 0
        #: Connections made to the broker during this run.
        self.connections = 0

    # -- the sink (the table's thread: never waits) -----------------------------------------

    def __call__(self, event: Event) -> None:
        """Note what ``event`` changes for the hall, and wake the publisher's thread."""
        with self._lock:
            if event.action is not None or event.kind == "undo":
                self._dirty = True
                if event.kind == "move":
                    self._said["last_move"] = event.text
                self._said["illegal"] = self._said["check"] = None
            elif event.verdict == "illegal":
                self._said["illegal"] = event.text
            elif event.verdict == "check" or event.kind == "please-check":
                self._said["check"] = event.text
            elif event.verdict in ("legal", "partial"):
                self._said["illegal"] = None
            else:
                return
        self._wake.set()

    def set_match(self, match_id: int) -> None:
        """Publish ``match_id`` too, and show it as the table's match (the next match begun)."""
        self._store.outbox_add_match(self.table, match_id)
        with self._lock:
            self.match_id = match_id
            self._dirty = True
        self._wake.set()

    @property
    def connected(self) -> bool:
        """Whether the broker is connected now."""
        return self._connected

    # -- running ------------------------------------------------------------------------------

    def start(self) -> None:
        """Connect (in the background: a broker that is down is tried again) and start sending."""
        client = new_client(f"bgboard-table-{self.table}", self.url)
        client.max_inflight_messages_set(100)
        client.max_queued_messages_set(0)
        client.will_set(table_topic(self.table, "online"), _dumps({"v": 1, "online": False}), qos=1, retain=True)
        client.on_connect = self._on_connect
        client.on_disconnect = self._on_disconnect
        # A broker that cannot be reached at all (down, a wrong address) is said as lost too.
        client.on_connect_fail = lambda client, userdata: self._tell_link(False)
        client.on_publish = self._on_publish
        client.on_message = self._on_message
        self._client = client
        client.connect_async(self.url.host, self.url.port, keepalive=10)
        client.loop_start()
        self._thread = threading.Thread(target=self._run, name=f"publish-{self.table}", daemon=True)
        self._thread.start()

    #: Seconds a table stopping (the referee, ``play``, the demo) lets its publisher go on
    #: sending while the broker takes it: what the broker has not taken waits in the store's
    #: outbox for the next run, but a demo's store is gone when it ends.
    LINGER: Final = 10.0

    def stop(self, linger: float = 0.0) -> None:
        """Stop: while connected, go on sending for up to ``linger`` seconds until the broker
        has everything; then say the table is offline and disconnect. What is not sent stays
        in the outbox for the next run."""
        self._linger = linger
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(linger + 10.0)
        client = self._client
        if client is not None:
            if self._connected:
                info = client.publish(
                    table_topic(self.table, "online"), _dumps({"v": 1, "online": False}), qos=1, retain=True
                )
                if linger > 0:
                    info.wait_for_publish(min(1.0, linger))
            client.disconnect()
            client.loop_stop()
            self._client = None

    def __enter__(self) -> Publisher:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- paho's thread ----------------------------------------------------------------------

    def _on_connect(self, client: Any, userdata: Any, flags: Any, reason: Any, properties: Any) -> None:
        if reason.is_failure:
            log.warning("%s refused table %s: %s", self.url, self.table, reason)
            return
        with self._lock:
            self._generation += 1
            self._connected = True
            self._dirty = True
        self.connections += 1
        self._tell_link(True)
        client.subscribe([(CONTROL_TOPIC, 1), (resend_topic(self.table), 1)])
        client.publish(table_topic(self.table, "online"), _dumps({"v": 1, "online": True}), qos=1, retain=True)
        self._wake.set()

    def _on_disconnect(self, client: Any, userdata: Any, flags: Any, reason: Any, properties: Any) -> None:
        with self._lock:
            self._connected = False
        if not self._stop.is_set():
            self._tell_link(False)

    def _tell_link(self, up: bool) -> None:
        if self.on_link is None or up == self._link_told:
            return
        self._link_told = up
        try:
            self.on_link(up)
        except Exception:
            log.exception("telling that the broker is %s", "connected" if up else "lost")

    def _on_publish(self, client: Any, userdata: Any, mid: int, reason: Any, properties: Any) -> None:
        self._acks.put((self._generation, mid))
        self._wake.set()

    def _on_message(self, client: Any, userdata: Any, message: Any) -> None:
        try:
            data = json.loads(message.payload)
        except ValueError:
            log.warning("ignored a message on %s that is not JSON", message.topic)
            return
        if not isinstance(data, dict):
            return
        if message.topic == CONTROL_TOPIC:
            self.tournament = bool(data.get("tournament"))
            with self._lock:
                self._dirty = True
            if self.on_control is not None:
                try:
                    self.on_control(data)
                except Exception:
                    log.exception("the hall's order %s could not be followed", data)
        elif isinstance(data.get("from"), int) and data["from"] >= 1:
            self._resends.put(data["from"])
        self._wake.set()

    # -- the publisher's thread ------------------------------------------------------------

    def _outbox(self) -> tuple[MatchStore, bool]:
        """The store to read and acknowledge in: a second connection to a file store."""
        store = self._store
        if str(store.path) == ":memory:":
            return store, False
        return MatchStore(store.path, create=False, check=False, durable=False), True

    def _run(self) -> None:
        try:
            outbox, own = self._outbox()
        except Exception:
            log.exception("table %s cannot publish: the outbox cannot be opened", self.table)
            return
        try:
            self._loop(outbox)
        except Exception:
            # A failing publisher must not take the table with it: the outbox keeps everything.
            log.exception("publishing table %s stopped", self.table)
        finally:
            if own:
                outbox.close()

    def _loop(self, outbox: MatchStore) -> None:
        generation = -1
        sent_upto = 0
        inflight: dict[int, int] = {}
        last_state: dict[str, Any] | None = None
        last_fill = 0.0
        deadline: float | None = None
        while True:
            self._wake.wait(POLL)
            self._wake.clear()
            with self._lock:
                dirty, self._dirty = self._dirty, False
                connected, current = self._connected, self._generation
                said = dict(self._said)
                match_id = self.match_id
            if current != generation:
                # A new connection: whatever was in flight is sent again (the hall keeps one copy).
                generation, sent_upto, last_state = current, 0, None
                inflight.clear()
            while True:
                try:
                    first = self._resends.get_nowait()
                except queue.Empty:
                    break
                outbox.outbox_resend(self.table, first)
                sent_upto = min(sent_upto, first - 1)
            now = time.monotonic()
            if dirty or now - last_fill > 1.0:
                outbox.outbox_fill(self.table)
                last_fill = now
            acked: list[int] = []
            while True:
                try:
                    ack_generation, mid = self._acks.get_nowait()
                except queue.Empty:
                    break
                seq = inflight.pop(mid, None) if ack_generation == generation else None
                if seq is not None:
                    acked.append(seq)
            if acked:
                outbox.outbox_acked(self.table, acked)
                self.acked += len(acked)
            client = self._client
            if connected and client is not None:
                # The state is read again only when something changed: an action, an event, a
                # new connection (which must publish it again), tournament mode.
                state = self._state(outbox, match_id, said) if dirty or last_state is None else last_state
                if state != last_state:
                    stamped = {**state, "time": format_time(datetime.now(UTC))}
                    client.publish(table_topic(self.table, "state"), _dumps(stamped), qos=1, retain=True)
                    last_state = state
                room = WINDOW - len(inflight)
                if room > 0:
                    for message in outbox.outbox_pending(self.table, after=sent_upto, limit=room):
                        info = client.publish(table_topic(self.table, "actions"), _dumps(message), qos=1)
                        inflight[info.mid] = message["seq"]
                        sent_upto = message["seq"]
            if self._stop.is_set():
                if deadline is None:
                    deadline = time.monotonic() + self._linger
                total, acked_all = outbox.outbox_counts(self.table)
                if not connected or acked_all == total or time.monotonic() >= deadline:
                    return
                if not inflight:
                    self._wake.set()

    def _state(self, outbox: MatchStore, match_id: int, said: dict[str, Any]) -> dict[str, Any]:
        """The retained state message (without its time)."""
        summary = outbox.summary(match_id)
        seq = outbox.outbox_counts(self.table)[0]
        return {
            "v": 1,
            "table": self.table,
            "match": match_id,
            "players": list(summary.players),
            "length": summary.length,
            "score": list(summary.score),
            "gnubgid": summary.gnubgid,
            "finished": summary.is_finished,
            "seq": seq,
            **said,
            "tournament": self.tournament,
        }
