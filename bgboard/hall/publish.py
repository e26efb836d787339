# SPDX-License-Identifier: MIT
"""Publishing a table to the tournament hall's MQTT broker (``--publish mqtt://HOST:PORT``).

The match store is the outbox. Every action the table stores (undo rows too) gets the table's
sequence number, 1, 2, ... across all the matches published under that table name
(:class:`~bgboard.hall.outbox.Outbox`), and is published with QoS 1 until the broker
acknowledges it (``PUBACK``); the acknowledgement is written in the store, so a board that is
switched off, or offline for an hour, sends what the broker never had when it is back, in
order. The table's state is published retained, so the hall (or anyone subscribing) sees every
table at once; an illegal move or a "please check" said by the referee is published at once.

The broker's acknowledgement is not the end: a broker that dies loses what it acknowledged but
had not delivered yet. The hall confirms what it holds (``bgboard/v1/hall/confirmed/NAME``,
retained: the store's identity and the sequence number up to which it holds every action); the
confirmation is written in the store, and what the hall has not confirmed is sent again after
every connection to the broker (a restart too), and waited for at the stop (up to the linger).

Refereeing never waits for the network: :class:`Publisher` is a sink of the table's events
(:mod:`bgboard.events`) that only notes what changed and wakes its own thread; that thread
reads the outbox on a second SQLite connection whose commits are not synced to disk (an
acknowledgement lost in a power cut only makes an action be sent twice, and the hall keeps
it once), and paho-mqtt's own thread talks to the broker, reconnecting with a backoff. A
broker that is down costs the table nothing.

The topics and messages are :mod:`bgboard.hall.topics`'s.
"""

from __future__ import annotations

import json
import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final

from bgboard.events import Event, Notice, counted
from bgboard.hall.outbox import Outbox
from bgboard.hall.topics import (
    CONTROL_TOPIC,
    BrokerUrl,
    check_table_name,
    confirmed_topic,
    new_client,
    resend_topic,
    table_topic,
)
from bgboard.store import MatchStore, format_time

if TYPE_CHECKING:
    from bgboard.session import TableSession

log = logging.getLogger(__name__)

#: Actions handed to the MQTT client and not yet acknowledged, at most.
WINDOW: Final = 200
#: Seconds between looks at the outbox when nothing wakes the publisher.
POLL: Final = 0.5
#: Seconds a stopping table waits for the hall's confirmation once the broker holds everything:
#: a hall that is up confirms within a fraction of a second; none in this time and the hall is
#: not there now (what it has not confirmed waits in the outbox for the table's next run).
CONFIRM_GRACE: Final = 2.0


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
        outbox = Outbox(store, self.table)
        outbox.add_match(match_id)
        #: The store's identity, sent with every message (:meth:`Outbox.store_id`).
        self.store_id = outbox.store_id()
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._dirty = True
        # What the events say that the store does not: the last move in words, an illegal move
        # or a "please check" waiting.
        self._said: dict[str, Any] = {"last_move": None, "illegal": None, "check": None}
        self.tournament = False
        #: The table's live page (``http://HOST:PORT/``), named in the state when it has one.
        self.page_url: str | None = None
        self._acks: queue.SimpleQueue[tuple[int, int]] = queue.SimpleQueue()
        self._resends: queue.SimpleQueue[int] = queue.SimpleQueue()
        self._confirms: queue.SimpleQueue[int] = queue.SimpleQueue()
        self._generation = 0
        self._connected = False
        self._link_told: bool | None = None
        self._linger = 0.0
        self._thread: threading.Thread | None = None
        self._client: Any = None
        #: Why the broker refused this table's login (its reason code), while it does.
        self.refused: str | None = None
        #: Set at stop when the broker held everything but no hall confirmed it (none running).
        self.hall_silent = False
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
            elif event.verdict in ("legal", "partial") and self._said["illegal"] is not None:
                self._said["illegal"] = None
            else:
                return
            # What the hall shows changed: the state is published again at once.
            self._dirty = True
        self._wake.set()

    def set_match(self, match_id: int) -> None:
        """Publish ``match_id`` too, and show it as the table's match (the next match begun)."""
        Outbox(self._store, self.table).add_match(match_id)
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
    #: sending until the hall confirms it holds everything: what it has not confirmed waits in
    #: the store's outbox for the next run, but a demo's store is gone when it ends.
    LINGER: Final = 10.0

    def stop(self, linger: float = 0.0) -> None:
        """Stop: while connected, go on sending for up to ``linger`` seconds until the hall
        confirms it holds everything; then say the table is offline and disconnect. What is not sent stays
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
            # Said once through the table's link news, with the reason; not logged on every retry.
            self.refused = str(reason)
            self._tell_link(False)
            return
        self.refused = None
        with self._lock:
            self._generation += 1
            self._connected = True
            self._dirty = True
            self.connections += 1
        self._tell_link(True)
        client.subscribe([(CONTROL_TOPIC, 1), (resend_topic(self.table), 1), (confirmed_topic(self.table), 1)])
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
        elif data.get("store", self.store_id) != self.store_id:
            return  # about another store published under this name before
        elif message.topic == confirmed_topic(self.table):
            if isinstance(data.get("upto"), int) and data["upto"] >= 1:
                self._confirms.put(data["upto"])
        elif isinstance(data.get("from"), int) and data["from"] >= 1:
            self._resends.put(data["from"])
        self._wake.set()

    # -- the publisher's thread ------------------------------------------------------------

    def _outbox(self) -> tuple[Outbox, bool]:
        """The outbox to read and acknowledge in: on a second connection to a file store."""
        store = self._store
        if str(store.path) == ":memory:":
            return Outbox(store, self.table), False
        return Outbox(MatchStore(store.path, create=False, check=False, durable=False), self.table), True

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
                outbox.store.close()

    def _loop(self, outbox: Outbox) -> None:
        generation = -1
        sent_upto = 0
        inflight: dict[int, int] = {}
        last_state: dict[str, Any] | None = None
        last_fill = 0.0
        deadline: float | None = None
        # While stopping: when the broker or the hall last took something.
        progress = 0.0
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
                outbox.resend(first)
                sent_upto = min(sent_upto, first - 1)
            confirmed = 0
            while True:
                try:
                    confirmed = max(confirmed, self._confirms.get_nowait())
                except queue.Empty:
                    break
            if confirmed:
                outbox.confirm(confirmed)
                progress = time.monotonic()
            now = time.monotonic()
            if dirty or now - last_fill > 1.0:
                outbox.fill()
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
                outbox.acked(acked)
                self.acked += len(acked)
                progress = time.monotonic()
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
                    for message in outbox.unconfirmed(after=sent_upto, limit=room):
                        info = client.publish(table_topic(self.table, "actions"), _dumps(message), qos=1)
                        inflight[info.mid] = message["seq"]
                        sent_upto = message["seq"]
            if self._stop.is_set():
                now = time.monotonic()
                if deadline is None:
                    deadline, progress = now + self._linger, now
                    # Everything stored before the stop counts (and is sent while lingering).
                    outbox.fill()
                total, acked_all = outbox.counts()
                # Done when the hall holds everything, not only the broker (a confirmation
                # arriving wakes the loop); a broker never reached is not waited for, a broker
                # lost for a moment is (paho reconnects), up to the linger; a hall that does not
                # confirm what the broker holds is not there, and is not waited for either.
                with self._lock:
                    # Read now, not at the top of the loop: the broker may have answered since.
                    ever = self.connections > 0
                unheard = acked_all >= total and not inflight and now - progress >= CONFIRM_GRACE
                if not ever or outbox.confirmed() >= total or now >= deadline or unheard:
                    self.hall_silent = ever and unheard and now < deadline and outbox.confirmed() < total
                    return
                if connected and not inflight and acked_all < total:
                    self._wake.set()

    def _state(self, outbox: Outbox, match_id: int, said: dict[str, Any]) -> dict[str, Any]:
        """The retained state message (without its time)."""
        summary = outbox.store.summary(match_id)
        seq = outbox.counts()[0]
        options = summary.options
        return {
            "v": 1,
            "table": self.table,
            "store": self.store_id,
            "match": match_id,
            "players": list(summary.players),
            "length": summary.length,
            "score": list(summary.score),
            "gnubgid": summary.gnubgid,
            "finished": summary.is_finished,
            "seq": seq,
            **said,
            "tournament": self.tournament,
            # What the hall needs to write this match's .mat and .sgf as the store would (the
            # actions alone do not say the rules, the header tags or when it began).
            "options": {
                "crawford": options.crawford,
                "jacoby": options.jacoby,
                "beaver": options.beaver,
                "max_cube": options.max_cube,
            },
            "tags": dict(summary.tags),
            "started": format_time(summary.started),
            "page": self.page_url,
        }


@dataclass(frozen=True, slots=True)
class Publishing:
    """The hall's publisher, attached to a table's session (:class:`bgboard.session.TableSession`).

    The publisher is a sink of the table's events; it starts when the table's owner begins,
    and stops with the session, sending for up to :attr:`Publisher.LINGER` seconds what the
    hall has not confirmed yet. The hall's tournament mode reaches the table through the
    session (:meth:`~bgboard.session.TableSession.set_tournament`), and so does news of the
    link to the broker.

    :param url: the broker.
    :param table: the table's name.
    :param report: say at the end what the broker has of the table's actions (the demo).
    """

    url: BrokerUrl
    table: str
    report: bool = False

    def check(self) -> None:
        """Refuse a bad table name now (a broker that is down is no reason not to start).

        :raises PublishError: a bad table name.
        """
        check_table_name(self.table)

    def attach(self, session: TableSession) -> None:
        """Publish ``session``'s match as table :attr:`table`.

        :raises PublishError: a bad table name.
        """
        assert session.store is not None
        store = session.store

        def link(up: bool) -> None:
            session.say_later(_link_event(up, publisher.table, publisher.refused))

        publisher = Publisher(
            self.url,
            self.table,
            store,
            session.match_id,
            on_control=lambda data: session.set_tournament(bool(data.get("tournament"))),
            on_link=link,
        )
        # After the store's sink: each action is committed when the publisher wakes.
        session.table.sinks.add(publisher)

        def start() -> None:
            # The live page is attached after the publisher, so its address is known only now.
            publisher.page_url = session.page_url
            text = f"publishing as table {publisher.table} to {publisher.url}"
            session.table.say(Event("publishing", text), session.now())
            publisher.start()

        stopped: list[bool] = []

        def stop() -> None:
            if stopped:
                return
            stopped.append(True)
            # What the hall has not confirmed yet stays in the outbox for the next run.
            publisher.stop(linger=Publisher.LINGER)
            if self.report:
                session.console(_published(publisher, store))

        session.on_start.append(start)
        session.on_finish.append(stop)
        session.stack.callback(stop)


def _link_event(up: bool, table: str, refused: str | None = None) -> Event:
    """What the table says when the hall's broker is reached, lost, or refuses the table."""
    if up:
        return Event("hall-connected", "publishing: connected to the hall's broker")
    if refused is not None:
        return Event(
            "hall-lost",
            f"publishing: the hall's broker refused table {table}: {refused} (check the user and password"
            " in --publish against the hall's ACL); the actions wait in the store (the match goes on)",
            {"refused": refused},
        )
    return Event(
        "hall-lost",
        "publishing: the hall's broker cannot be reached; the actions wait in the store (the match goes on)",
    )


def _published(publisher: Publisher, store: MatchStore) -> Notice:
    """What was published: all acknowledged, or how many wait in the outbox."""
    total, acked = Outbox(store, publisher.table).counts()
    where = f"{publisher.url} as table {publisher.table}"
    if acked == total and publisher.hall_silent:
        text = (
            f"published {counted(total, 'action')} to {where}; the broker has them all, but no hall confirmed"
            " them (is bgboard hall running?): they are sent again when the table next starts"
        )
    elif acked == total:
        text = f"published {counted(total, 'action')} to {where}; the broker has them all"
    else:
        text = f"published to {where}: the broker has {acked} of {counted(total, 'action')}; the rest wait in the store"
    return Notice("published", text, {"table": publisher.table, "actions": total, "acked": acked})
