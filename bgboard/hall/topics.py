# SPDX-License-Identifier: MIT
"""Where tables and the hall meet on the broker: the topics, table names and the broker's URL.

Topics and messages (JSON, UTF-8; ``v`` is the schema version, 1):

Every message of a table names ``store``, the identity of the match store it comes from (a
random id kept in the store): a new store published under a known table name starts its
sequence numbers at 1 again, and the hall keeps the actions by (table, store, seq).

``bgboard/v1/tables/NAME/actions`` (QoS 1, not retained)
    one stored action: ``v``, ``table``, ``store``, ``seq`` (the table's sequence number), ``match``,
    ``game``, ``match_seq``, ``time`` (UTC), ``players`` [2], ``length``, ``player`` (0 or 1,
    the index in ``players``; null for the opening roll), ``kind`` (the store's kinds and
    ``undo``), ``dice``, ``play``, ``cube``, ``resign``, ``undoes``, ``gnubgid_before``,
    ``gnubgid_after``, ``source``, ``confidence``, ``note``.
``bgboard/v1/tables/NAME/state`` (QoS 1, retained)
    the table now: ``v``, ``table``, ``store``, ``match``, ``players``, ``length``, ``score``,
    ``gnubgid``, ``finished``, ``seq`` (the last sequence number given out), ``last_move``,
    ``illegal`` (what the referee says about an illegal move waiting to be put right, or
    null), ``check`` (a "please check" waiting, or null), ``tournament``, ``options`` (the
    match's rules: ``crawford``, ``jacoby``, ``beaver``, ``max_cube``), ``tags`` (its header
    tags), ``started`` (UTC), ``page`` (the table's live page, ``http://HOST:PORT/``, or null),
    ``time``.
``bgboard/v1/tables/NAME/online`` (QoS 1, retained)
    ``{"v": 1, "online": true}`` while connected; the broker publishes ``false`` (the
    client's will) when the board vanishes.
``bgboard/v1/hall/control`` (retained, written by the hall)
    ``{"v": 1, "tournament": true}``: tournament mode (hints off).
``bgboard/v1/hall/resend/NAME`` (written by the hall)
    ``{"v": 1, "store": ID, "from": SEQ}``: the hall misses the table's actions from ``SEQ`` on
    (the broker acknowledged them, then died before delivering them); they are sent again (by
    the table whose store is ``ID``; without ``store``, by any).
``bgboard/v1/hall/confirmed/NAME`` (QoS 1, retained, written by the hall)
    ``{"v": 1, "store": ID, "upto": SEQ}``: the hall holds every action of the store ``ID`` up
    to ``SEQ``. A table keeps sending again what the hall has not confirmed (after each
    connection, and at its stop for a while), not only what the broker has not acknowledged.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import unquote, urlsplit

from bgboard.errors import PublishError

#: The first part of every topic: the project, then the schema version of the messages.
TOPIC_ROOT: Final = "bgboard/v1"
#: Tournament mode and other orders from the hall (retained).
CONTROL_TOPIC: Final = f"{TOPIC_ROOT}/hall/control"
#: A table name: letters, digits, ``-`` and ``_`` (it is a topic level and a broker user name).
TABLE_NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
#: The broker user the hall connects as (see :func:`bgboard.hall.acl.make_acl`).
HALL_USER: Final = "hall"
#: The MQTT port when the URL names none.
DEFAULT_PORT: Final = 1883


def table_topic(table: str, leaf: str) -> str:
    """``bgboard/v1/tables/TABLE/LEAF`` (``actions``, ``state``, ``online``)."""
    return f"{TOPIC_ROOT}/tables/{table}/{leaf}"


def resend_topic(table: str) -> str:
    """Where the hall asks ``table`` to send its actions again."""
    return f"{TOPIC_ROOT}/hall/resend/{table}"


def confirmed_topic(table: str) -> str:
    """Where the hall confirms what it holds of ``table``'s actions (retained)."""
    return f"{TOPIC_ROOT}/hall/confirmed/{table}"


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
