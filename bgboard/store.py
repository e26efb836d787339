# SPDX-License-Identifier: MIT
"""The match store: every match, game and action, kept in an SQLite database as it happens.

Each action a player makes (a roll, a move, a cube action, a resignation) is checked against the
rules by applying it to the match's current :class:`~engine.match.MatchState`, then written in
one transaction with the time, who acted, the dice, the play, the cube, the GNUbgID before and
after, where it came from (the camera, a button, the keyboard, a correction) and the reading's
confidence. :meth:`MatchStore.record` returns only after the transaction is committed, so an
action it reports stored survives the program being killed or the power failing: the database
runs in WAL mode with ``synchronous=FULL``.

A match's state is its stored actions replayed through the engine, so a referee that stops can
carry on at the exact position, cube and score with :meth:`MatchStore.state`. Mistakes are never
erased: :meth:`MatchStore.undo` and :meth:`MatchStore.correct` add rows that take actions back.

>>> from engine.match import MatchOptions, OpeningRoll, Move, Double, Take
>>> store = MatchStore(":memory:")
>>> match = store.start_match(("Ann", "Bob"), 7, MatchOptions(), {"Event": "Club night"})
>>> stored = store.record(match, OpeningRoll(3, 1), source="camera", confidence=0.97)
>>> stored = store.record(match, Move("8/5 6/5"), source="camera", confidence=0.91)
>>> stored.kind, str(stored.action.play), stored.player, stored.gnubgid_after
('move', '8/5 6/5', 0, 'sGfwATDgc/ABMA:cAngAAAAAAAE')
>>> stored = store.record(match, Double(), source="button")
>>> stored = store.record(match, Take(), source="button")
>>> store.state(match).cube
Cube(value=2, owner=0)
>>> store.close()

Schema (version 3, in ``PRAGMA user_version``; ``PRAGMA application_id`` marks the file as
bgboard's):

``matches``
    ``id``, ``started`` (UTC), ``player0``, ``player1``, ``length`` (0 = money), ``options``
    (JSON: ``crawford``, ``jacoby``, ``beaver``, ``max_cube``), ``tags`` (JSON, the ``.mat``
    header tags), the current ``score0``/``score1`` and ``gnubgid``, ``finished`` (UTC, or
    NULL while the match is on) and ``touched`` (a counter that orders matches by last use).
``games``
    ``match``, ``number`` (1 for the first game), ``score0``/``score1`` before the game,
    ``started``, and once it is over ``winner``, ``points``, ``kind`` (1 single, 2 gammon,
    3 backgammon), ``ended`` (``played out``, ``resigned``, ``dropped``), ``cube`` and
    ``finished``.
``outbox_matches``, ``outbox`` (version 2)
    the hall publisher's outbox: the matches published under a table name, and each of their
    actions with its ``seq`` for that table (1, 2, ...) and ``acked`` (UTC, when the broker
    acknowledged it; NULL until then). See :mod:`bgboard.hall.outbox`.
``actions``
    ``id``, ``match``, ``game``, ``seq`` (1, 2, ... within the match), ``time`` (UTC, ISO 8601
    with milliseconds), ``player`` (who acted; NULL for the opening roll, which both make),
    ``kind`` (see :data:`KINDS`), ``dice`` (as rolled; for the opening roll player 0's die
    first), ``play`` (the canonical play) and ``position`` (the Position ID it leaves, seen from
    the mover) for a move, ``cube`` (the value a double offers, a take accepts, a drop refuses,
    a beaver redoubles to), ``resign`` (1, 2 or 3 points per cube), ``undoes`` (the action an
    ``undo`` row takes back), ``gnubgid_before``, ``gnubgid_after``, ``source`` (see
    :data:`SOURCES`), ``confidence`` (0 to 1, or NULL) and ``note``.
``analyses`` (version 3)
    gnubg's analysis of a match (``bgboard analyse``): ``match``, ``ply``, ``actions`` (how many
    actions stood when it was made, so a later one shows it is out of date), ``time`` and
    ``analysis`` (the JSON ``bgboard analyse --json`` prints). One per match and depth.
``frames`` (version 3)
    ``action`` and ``jpeg``: the still camera frame a move was judged on, kept while the live
    page is served (:meth:`MatchStore.keep_frame`), the referee's evidence in a dispute. An
    older store gains the table when it is next opened for writing.

All times are UTC. A :class:`MatchStore` may be shared between threads; each call takes a lock.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sqlite3
import threading
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from bgboard.errors import (
    NewerStoreError,
    NotAStoreError,
    StoreError,
    StoreInputError,
    StoreInUseError,
    UnknownMatchError,
)
from engine.dice import Dice
from engine.errors import BackgammonError
from engine.match import AcceptResign, Action, Beaver, Double, Drop, GameEnd, GameResult, MatchOptions, MatchState

# isort: split
from engine.match import Move, OpeningRoll, Phase, RejectResign, Resign, Roll, Take
from engine.movegen import legal_plays
from engine.play import Play
from engine.position import Position
from engine.record import GameRecord, MatchRecord

log = logging.getLogger(__name__)

#: The schema version this bgboard writes and the newest it reads (2 added the outbox, 3
#: the kept frames and gnubg's analyses; an older store is upgraded when it is opened for writing).
SCHEMA_VERSION: Final = 3

#: ``PRAGMA application_id`` of a bgboard match store: the bytes ``bgbd``.
APPLICATION_ID: Final = 0x62676264

#: Where an action came from.
SOURCES: Final = frozenset({"camera", "button", "keyboard", "web", "correction", "import", "gnubg"})

#: The export formats :meth:`MatchStore.export` writes.
FORMATS: Final = ("mat", "sgf")

#: The ``kind`` of each action class in the ``actions`` table (and ``undo`` for a take-back).
KINDS: Final[Mapping[type[Action], str]] = {
    OpeningRoll: "opening_roll",
    Roll: "roll",
    Move: "move",
    Double: "double",
    Take: "take",
    Drop: "drop",
    Beaver: "beaver",
    Resign: "resign",
    AcceptResign: "accept_resign",
    RejectResign: "reject_resign",
}
UNDO: Final = "undo"

#: The still frames moves were judged on (schema version 3): JPEG bytes, one per action at most.
_FRAMES_TABLE: Final = """
    CREATE TABLE IF NOT EXISTS frames (
        action INTEGER PRIMARY KEY REFERENCES actions(id),
        jpeg   BLOB NOT NULL
    )
    """

_SCHEMA: Final = (
    """
    CREATE TABLE matches (
        id       INTEGER PRIMARY KEY,
        started  TEXT NOT NULL,
        player0  TEXT NOT NULL,
        player1  TEXT NOT NULL,
        length   INTEGER NOT NULL CHECK (length >= 0),
        options  TEXT NOT NULL,
        tags     TEXT NOT NULL DEFAULT '{}',
        score0   INTEGER NOT NULL DEFAULT 0,
        score1   INTEGER NOT NULL DEFAULT 0,
        gnubgid  TEXT NOT NULL,
        finished TEXT,
        touched  INTEGER NOT NULL
    )
    """,
    """
    CREATE TABLE games (
        match    INTEGER NOT NULL REFERENCES matches(id),
        number   INTEGER NOT NULL CHECK (number >= 1),
        score0   INTEGER NOT NULL,
        score1   INTEGER NOT NULL,
        started  TEXT NOT NULL,
        winner   INTEGER CHECK (winner IN (0, 1)),
        points   INTEGER,
        kind     INTEGER CHECK (kind IN (1, 2, 3)),
        ended    TEXT,
        cube     INTEGER,
        finished TEXT,
        PRIMARY KEY (match, number)
    )
    """,
    """
    CREATE TABLE actions (
        id             INTEGER PRIMARY KEY,
        match          INTEGER NOT NULL REFERENCES matches(id),
        game           INTEGER NOT NULL,
        seq            INTEGER NOT NULL CHECK (seq >= 1),
        time           TEXT NOT NULL,
        player         INTEGER CHECK (player IN (0, 1)),
        kind           TEXT NOT NULL,
        dice           TEXT,
        play           TEXT,
        position       TEXT,
        cube           INTEGER,
        resign         INTEGER,
        undoes         INTEGER REFERENCES actions(id),
        gnubgid_before TEXT NOT NULL,
        gnubgid_after  TEXT NOT NULL,
        source         TEXT NOT NULL,
        confidence     REAL CHECK (confidence IS NULL OR (confidence >= 0 AND confidence <= 1)),
        note           TEXT,
        UNIQUE (match, seq)
    )
    """,
    _FRAMES_TABLE,
)

#: Version 2: the outbox of the hall publisher (:mod:`bgboard.hall.publish`). ``outbox_matches``
#: names the matches published under a table; ``outbox`` gives each of their actions the
#: table's sequence number (1, 2, ... per table name) and, once the broker has it, ``acked``.
_OUTBOX: Final = (
    """
    CREATE TABLE IF NOT EXISTS outbox_matches (
        table_name TEXT NOT NULL,
        match      INTEGER NOT NULL REFERENCES matches(id),
        PRIMARY KEY (table_name, match)
    )
    """,
    """
    CREATE TABLE IF NOT EXISTS outbox (
        table_name TEXT NOT NULL,
        seq        INTEGER NOT NULL CHECK (seq >= 1),
        action     INTEGER NOT NULL REFERENCES actions(id),
        acked      TEXT,
        PRIMARY KEY (table_name, seq),
        UNIQUE (table_name, action)
    )
    """,
)


#: Version 3: the ``analyses`` table. ``IF NOT EXISTS``: made both by a new store and by the
#: upgrade from an older version, and harmless to run again.
_ANALYSES: Final = """
    CREATE TABLE IF NOT EXISTS analyses (
        match    INTEGER NOT NULL REFERENCES matches(id),
        ply      INTEGER NOT NULL CHECK (ply >= 0),
        actions  INTEGER NOT NULL,
        time     TEXT NOT NULL,
        analysis TEXT NOT NULL,
        PRIMARY KEY (match, ply)
    )
    """

#: What each version added, by the version it upgrades from (all ``IF NOT EXISTS``: see
#: :meth:`MatchStore._upgrade`).
_UPGRADES: Final[Mapping[int, tuple[str, ...]]] = {1: _OUTBOX, 2: (_FRAMES_TABLE, _ANALYSES)}


# -- errors ----------------------------------------------------------------------------------


# -- values ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StoredAction:
    """One row of the ``actions`` table.

    :param id: the row id, unique in the store.
    :param match: the match's id.
    :param game: the game number in the match (1 for the first).
    :param seq: the row's place in the match: 1, 2, ... (undo rows count too).
    :param time: when it was recorded (UTC).
    :param player: who acted; ``None`` for an opening roll (both roll).
    :param kind: the action's kind (:data:`KINDS`) or ``"undo"``.
    :param action: the action in canonical form (a move holds its legal :class:`Play`, every
        action but the opening roll names its player in ``by``); ``None`` for an undo row.
    :param gnubgid_before: the GNUbgID before the action.
    :param gnubgid_after: the GNUbgID after it.
    :param source: where it came from (:data:`SOURCES`).
    :param confidence: the reading's confidence, 0 to 1, if there was a reading.
    :param note: free text.
    :param undoes: for an undo row, the id of the action it takes back.
    """

    id: int
    match: int
    game: int
    seq: int
    time: datetime
    player: int | None
    kind: str
    action: Action | None
    gnubgid_before: str
    gnubgid_after: str
    source: str
    confidence: float | None = None
    note: str | None = None
    undoes: int | None = None


@dataclass(frozen=True, slots=True)
class MatchSummary:
    """What :meth:`MatchStore.matches` lists about a match, read without replaying it.

    :param id: the match's id.
    :param players: player 0's and player 1's names.
    :param length: the match length, 0 for money.
    :param options: the rules in force.
    :param tags: the header tags (``Event``, ``EventDate``...).
    :param started: when the match was started (UTC).
    :param finished: when it was won (UTC), ``None`` while it is on (always for money).
    :param score: the score now.
    :param games: how many games have begun.
    :param actions: how many actions stand (taken-back ones and undo rows not counted).
    :param gnubgid: the GNUbgID now.
    """

    id: int
    players: tuple[str, str]
    length: int
    options: MatchOptions
    tags: Mapping[str, str]
    started: datetime
    finished: datetime | None
    score: tuple[int, int]
    games: int
    actions: int
    gnubgid: str

    @property
    def is_finished(self) -> bool:
        """Whether a player has won the match."""
        return self.finished is not None

    @property
    def status(self) -> str:
        """``"finished"`` or ``"in progress"``."""
        return "finished" if self.is_finished else "in progress"

    @property
    def length_text(self) -> str:
        """``"7p"`` for a 7-point match, ``"money"`` for a money session."""
        return f"{self.length}p" if self.length else "money"

    def to_json(self) -> dict[str, Any]:
        """The summary as JSON-ready values (times in UTC, ISO 8601)."""
        return {
            "id": self.id,
            "started": format_time(self.started),
            "players": list(self.players),
            "length": self.length,
            "score": list(self.score),
            "games": self.games,
            "actions": self.actions,
            "status": self.status,
            "finished": None if self.finished is None else format_time(self.finished),
            "gnubgid": self.gnubgid,
            "options": _options_json(self.options),
            "tags": dict(self.tags),
        }


@dataclass(slots=True)
class _Live:
    """An action that stands (not taken back), with the state before it."""

    id: int
    player: int | None
    before: MatchState


@dataclass(slots=True)
class _Match:
    """What the store keeps in memory about a match: enough to record and undo without replaying."""

    id: int
    players: tuple[str, str]
    seq: int
    state: MatchState
    live: list[_Live] = field(default_factory=list)


# -- times, options, names ------------------------------------------------------------------


def format_time(moment: datetime) -> str:
    """UTC, ISO 8601 with milliseconds: ``2026-11-22T13:02:11.042Z``."""
    utc = moment.astimezone(UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def parse_time(text: str) -> datetime:
    """Read a time written by :func:`format_time` (an aware UTC datetime)."""
    return datetime.fromisoformat(text).astimezone(UTC)


def _utc_now() -> datetime:
    return datetime.now(UTC)


def _stored_action(row_id: int, row: Mapping[str, Any], action: Action | None) -> StoredAction:
    """A stored action from its ``actions`` columns (a row read back, or one just written)."""
    return StoredAction(
        id=row_id,
        match=row["match"],
        game=row["game"],
        seq=row["seq"],
        time=parse_time(row["time"]),
        player=row["player"],
        kind=row["kind"],
        action=action,
        gnubgid_before=row["gnubgid_before"],
        gnubgid_after=row["gnubgid_after"],
        source=row["source"],
        # A row about to be written leaves out the columns it has no value for.
        confidence=row.get("confidence"),
        note=row.get("note"),
        undoes=row.get("undoes"),
    )


def _options_json(options: MatchOptions) -> dict[str, Any]:
    return {
        "crawford": options.crawford,
        "jacoby": options.jacoby,
        "beaver": options.beaver,
        "max_cube": options.max_cube,
    }


def _options_from_json(text: str) -> MatchOptions:
    data = json.loads(text)
    return MatchOptions(
        crawford=bool(data["crawford"]),
        jacoby=bool(data["jacoby"]),
        beaver=bool(data["beaver"]),
        max_cube=data["max_cube"],
    )


def default_store_path() -> Path:
    """``$BGBOARD_STORE``, else ``$XDG_DATA_HOME/bgboard/matches.sqlite3`` (``~/.local/share``)."""
    override = os.environ.get("BGBOARD_STORE")
    if override:
        return Path(override).expanduser()
    data_home = os.environ.get("XDG_DATA_HOME") or "~/.local/share"
    return Path(data_home).expanduser() / "bgboard" / "matches.sqlite3"


def file_in_the_way(path: Path) -> str | None:
    """``B is a file, not a folder`` when a file stands where one of ``path``'s folders should be."""
    blocker = next((p for p in path.parents if p.exists() and not p.is_dir()), None)
    return None if blocker is None else f"{blocker} is a file, not a folder"


def file_safe(name: str) -> str:
    """A player's name as part of a file name: letters (any alphabet) and digits kept.

    Spaces become ``_``; ``-`` and ``.`` stay; anything a file system or a shell could
    misread (``/``, ``:``, quotes...) is dropped.

    >>> file_safe("Zoë O'Brien"), file_safe("  a/b: c  "), file_safe("???")
    ('Zoë_OBrien', 'ab_c', 'player')
    """
    out = []
    for char in unicodedata.normalize("NFC", name):
        if char.isalnum() or char in "-.":
            out.append(char)
        elif char.isspace() or char == "_":
            out.append("_")
    text = re.sub(r"_+", "_", "".join(out)).strip("._-")
    return text[:40] or "player"


def default_file_name(summary: MatchSummary, fmt: str) -> str:
    """The file name players like: ``2026-11-22_1402_Ann-vs-Bob_7p.mat`` (``..._money.mat``).

    The date and time are local, taken from the ``EventDate``/``EventTime`` tags when they are
    there and well formed, else from when the match started.

    :raises StoreInputError: ``fmt`` is not one of :data:`FORMATS`.
    """
    if fmt not in FORMATS:
        raise StoreInputError(f"unknown export format {fmt!r}: use {' or '.join(FORMATS)}")
    local = summary.started.astimezone()
    date, clock = local.strftime("%Y-%m-%d"), local.strftime("%H%M")
    tag_date, tag_time = summary.tags.get("EventDate", ""), summary.tags.get("EventTime", "")
    if re.fullmatch(r"\d{4}\.\d{2}\.\d{2}", tag_date):
        date = tag_date.replace(".", "-")
        clock = tag_time.replace(".", "") if re.fullmatch(r"\d{2}\.\d{2}", tag_time) else clock
    names = "-vs-".join(file_safe(name) for name in summary.players)
    return f"{date}_{clock}_{names}_{summary.length_text}.{fmt}"


# -- actions as rows -------------------------------------------------------------------------


def describe(action: Action) -> str:
    """An action in a few words, for error messages: ``move 13/7*``, ``roll 31``, ``double``."""
    match action:
        case OpeningRoll(die0, die1):
            return f"opening roll {die0}-{die1}"
        case Roll(dice):
            return f"roll {dice}"
        case Move(play):
            text = play.position_id() if isinstance(play, Position) else str(play)
            return f"move {text or '(no play)'}"
        case Resign(points):
            return f"resign {points} point{'s' if points != 1 else ''} per cube"
    return KINDS.get(type(action), type(action).__name__).replace("_", " ")


def _row_fields(before: MatchState, action: Action, after: MatchState) -> tuple[Action, dict[str, Any]]:
    """The action in canonical form and the columns that describe it."""
    player = before.turn
    fields: dict[str, Any] = {"player": player, "kind": KINDS[type(action)]}
    match action:
        case OpeningRoll(die0, die1):
            fields["dice"] = f"{die0}{die1}"
            return OpeningRoll(die0, die1), fields
        case Roll(dice):
            fields["dice"] = str(dice)
            return Roll(dice, by=player), fields
        case Move():
            assert before.dice is not None
            # The engine shows the board from the next player's side afterwards; the mover's
            # side is what the camera saw and what the Position ID column keeps.
            left = after.position.swap()
            play = before.legal_plays().play_for(left) or Play()
            fields.update(dice=str(before.dice), play=str(play), position=left.position_id())
            return Move(play, by=player), fields
        case Double():
            fields["cube"] = before.cube.value * 2
            return Double(by=player), fields
        case Take():
            fields["cube"] = after.cube.value
            return Take(by=player), fields
        case Drop():
            fields["cube"] = before.cube.value
            return Drop(by=player), fields
        case Beaver():
            fields["cube"] = after.cube.value * 2
            return Beaver(by=player), fields
        case Resign(points):
            fields["resign"] = points
            return Resign(points, by=player), fields
        case AcceptResign():
            fields["resign"] = before.resigned
            return AcceptResign(by=player), fields
        case RejectResign():
            return RejectResign(by=player), fields
    raise TypeError(f"not a match action: {action!r}")


def _dice_of(text: str) -> tuple[int, int]:
    if len(text) != 2 or not text.isdigit():
        raise ValueError(f"dice {text!r} are not two digits")
    return int(text[0]), int(text[1])


#: The stored kinds that are one action with no more than who took it (the store's rows and the
#: hall's action messages spell them so).
CUBE_AND_RESIGN_ACTIONS: Final[dict[str, type[Double | Take | Drop | Beaver | AcceptResign | RejectResign]]] = {
    "double": Double,
    "take": Take,
    "drop": Drop,
    "beaver": Beaver,
    "accept_resign": AcceptResign,
    "reject_resign": RejectResign,
}


def _action_of_row(row: sqlite3.Row) -> Action:
    """The action a row stores; a move as the position it leaves (cheap to replay)."""
    kind, by = row["kind"], row["player"]
    if kind == "opening_roll":
        return OpeningRoll(*_dice_of(row["dice"]))
    if kind == "roll":
        return Roll(Dice(*_dice_of(row["dice"])), by=by)
    if kind == "move":
        return Move(Position.from_id(row["position"]), by=by)
    if kind == "resign":
        return Resign(row["resign"], by=by)
    if kind not in CUBE_AND_RESIGN_ACTIONS:
        raise ValueError(f"unknown action kind {kind!r}")
    return CUBE_AND_RESIGN_ACTIONS[kind](by=by)


def _canonical_move(row: sqlite3.Row) -> Move:
    """A stored move with its legal :class:`Play`, checked against the play text kept with it.

    The row holds all it takes: the position before (in the GNUbgID before), the dice, and the
    position the play left.
    """
    before = Position.from_id(row["gnubgid_before"].split(":")[0])
    left = Position.from_id(row["position"])
    play = legal_plays(before, Dice(*_dice_of(row["dice"]))).play_for(left)
    if play is None and left != before:
        raise ValueError(f"no legal play for {row['dice']} leads from {before.position_id()} to {row['position']}")
    play = play or Play()
    if str(play) != (row["play"] or ""):
        raise ValueError(f"the play {row['play']!r} does not lead to {row['position']} (the legal play is {play})")
    return Move(play, by=row["player"])


# -- the store -------------------------------------------------------------------------------


class MatchStore:
    """An SQLite match store (see the module docstring for the tables).

    :param path: the database file; ``":memory:"`` for a throw-away store. Its folder is made
        when missing.
    :param create: make the file when it does not exist; with ``False`` a missing file raises
        :class:`StoreError`.
    :param clock: returns the current time (aware); the default is the system's UTC clock.
    :param check: run SQLite's ``quick_check`` on opening, so a damaged file is named at once.
    :param busy_timeout: seconds to wait for another process's write to finish before giving up.
    :param durable: sync every commit to disk (``synchronous=FULL``); ``False`` (``NORMAL``) is
        for a second connection that writes only what may be lost and redone, the publisher's
        acknowledgements: its commits then never wait for the disk.
    :raises NotAStoreError: the file is not a bgboard match store, or it is damaged.
    :raises NewerStoreError: a newer bgboard wrote it.
    :raises StoreError: the file cannot be opened.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        create: bool = True,
        clock: Callable[[], datetime] | None = None,
        check: bool = True,
        busy_timeout: float = 10.0,
        durable: bool = True,
    ) -> None:
        self.path = Path(path)
        self._durable = durable
        self._name = str(path)
        self._clock = clock or _utc_now
        self._lock = threading.RLock()
        self._cache: dict[int, _Match] = {}
        memory = self._name == ":memory:"
        self._create = create
        if not memory:
            if self.path.is_dir():
                raise StoreError(f"{self._name} is a folder, not a match store (name the .sqlite3 file in it)")
            if not self.path.exists() and not create:
                raise StoreError(f"{self._name}: no match store there (nothing has been recorded yet)")
            if create:
                try:
                    self.path.parent.mkdir(parents=True, exist_ok=True)
                except OSError as exc:
                    why = file_in_the_way(self.path) or (exc.strerror or str(exc)).lower()
                    raise StoreError(f"{self._name}: cannot make the match store's folder: {why}") from None
        try:
            # Autocommit mode: every transaction is explicit (BEGIN IMMEDIATE ... COMMIT).
            self._db = sqlite3.connect(self._name, timeout=busy_timeout, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            raise StoreError(f"{self._name}: cannot open the match store: {exc}") from None
        self._db.row_factory = sqlite3.Row
        try:
            self._open(memory, check)
        except BaseException:
            self._db.close()
            raise

    def _open(self, memory: bool, check: bool) -> None:
        try:
            application_id = self._db.execute("PRAGMA application_id").fetchone()[0]
            version = self._db.execute("PRAGMA user_version").fetchone()[0]
        except sqlite3.DatabaseError as exc:
            raise NotAStoreError(f"{self._name}: not a bgboard match store ({exc})") from None
        if application_id not in (0, APPLICATION_ID):
            raise NotAStoreError(
                f"{self._name}: not a bgboard match store (an SQLite database of another program,"
                f" application id {application_id:#x})"
            )
        if version > SCHEMA_VERSION:
            raise NewerStoreError(
                f"{self._name}: this match store was written by a newer bgboard (schema version {version};"
                f" this bgboard reads up to {SCHEMA_VERSION}): upgrade bgboard to open it"
            )
        if version == 0 and not self._create and not memory:
            # Reading must change nothing: an empty file (or one of another program) stays as it is.
            self._refuse_foreign_tables()
            raise NotAStoreError(f"{self._name}: not a bgboard match store (the file is empty)")
        try:
            if version == 0:
                # Refuse another program's database before changing anything in it.
                self._refuse_foreign_tables()
            if check:
                problems = [row[0] for row in self._db.execute("PRAGMA quick_check")]
                if problems != ["ok"]:
                    lines = [line for p in problems for line in p.splitlines() if not line.startswith("***")]
                    first = lines[0] if lines else problems[0]
                    more = f" (and {len(lines) - 1} more)" if len(lines) > 1 else ""
                    raise NotAStoreError(
                        f"{self._name}: the match store is damaged: {first}{more}; move it aside to start a new"
                        f" store, or try: sqlite3 {self._name} .recover | sqlite3 recovered.sqlite3"
                    )
            if not memory:
                mode = self._db.execute("PRAGMA journal_mode=WAL").fetchone()[0]
                if mode.lower() != "wal":
                    log.warning("%s: SQLite refused WAL mode (journal mode %s)", self._name, mode)
            # FULL: the WAL is synced at every commit, so a committed action survives a power cut.
            self._db.execute(f"PRAGMA synchronous={'FULL' if self._durable else 'NORMAL'}")
            self._db.execute("PRAGMA foreign_keys=ON")
            if version == 0:
                self._create_schema()
            elif version < SCHEMA_VERSION and (self._create or memory):
                self._upgrade()
        except sqlite3.DatabaseError as exc:
            raise NotAStoreError(f"{self._name}: not a bgboard match store, or damaged ({exc})") from None

    def _create_schema(self) -> None:
        with self._transaction():
            # Another process may have made the schema while we waited for the lock.
            if self._db.execute("PRAGMA user_version").fetchone()[0] != 0:
                return
            self._refuse_foreign_tables()
            for statement in (*_SCHEMA, *_OUTBOX, _ANALYSES):
                self._db.execute(statement)
            self._db.execute(f"PRAGMA application_id={APPLICATION_ID}")
            self._db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")

    def _upgrade(self) -> None:
        """Bring an older store up to :data:`SCHEMA_VERSION`.

        Every upgrade statement is ``IF NOT EXISTS``, and all of them run whatever the older
        version: a store some other line of bgboard numbered alike (a table of one upgrade but
        not of another) still ends up with every table.
        """
        with self._transaction():
            # Another process may have upgraded it while we waited for the lock.
            version = self._db.execute("PRAGMA user_version").fetchone()[0]
            if version >= SCHEMA_VERSION:
                return
            for step in sorted(_UPGRADES):
                for statement in _UPGRADES[step]:
                    self._db.execute(statement)
            self._db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            log.info("%s: match store upgraded from schema version %d to %d", self._name, version, SCHEMA_VERSION)

    def _has_table(self, name: str) -> bool:
        query = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?"
        return self._db.execute(query, (name,)).fetchone() is not None

    def keep_frame(self, match_id: int, jpeg: bytes) -> int | None:
        """Keep ``jpeg``, the still frame the match's latest standing action was judged on.

        :returns: the action's id, or ``None`` when the match has no action yet or the store
            (an old one opened read-only) has no room for frames.
        """
        if not jpeg:
            raise StoreInputError("a frame is a non-empty JPEG")
        with self._transaction() as db:
            if not self._has_table("frames"):
                return None
            row = db.execute(
                "SELECT id FROM actions WHERE match = ? AND kind != ? AND id NOT IN"
                " (SELECT undoes FROM actions WHERE match = ? AND undoes IS NOT NULL) ORDER BY id DESC LIMIT 1",
                (match_id, UNDO, match_id),
            ).fetchone()
            if row is None:
                return None
            db.execute("INSERT OR REPLACE INTO frames (action, jpeg) VALUES (?, ?)", (row[0], jpeg))
            return int(row[0])

    def frame(self, action_id: int) -> bytes | None:
        """The still frame kept for the action ``action_id``, if any."""
        with self._lock:
            if not self._has_table("frames"):
                return None
            row = self._db.execute("SELECT jpeg FROM frames WHERE action = ?", (action_id,)).fetchone()
        return None if row is None else bytes(row[0])

    def framed_actions(self, match_id: int) -> set[int]:
        """The ids of the match's actions that have a still frame kept."""
        with self._lock:
            if not self._has_table("frames"):
                return set()
            query = "SELECT f.action FROM frames f JOIN actions a ON a.id = f.action WHERE a.match = ?"
            return {int(row[0]) for row in self._db.execute(query, (match_id,))}

    def _refuse_foreign_tables(self) -> None:
        query = "SELECT name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'"
        tables = sorted(row[0] for row in self._db.execute(query))
        if tables:
            raise NotAStoreError(
                f"{self._name}: an SQLite database, but not a bgboard match store (it has {', '.join(tables[:5])})"
            )

    # -- plumbing ----------------------------------------------------------------------------

    def close(self) -> None:
        """Close the database (what was recorded is already safe on disk)."""
        with self._lock:
            self._cache.clear()
            self._db.close()

    def __enter__(self) -> MatchStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"MatchStore({self._name!r})"

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction; the write lock is taken at the start so nothing can interleave.

        SQLite's own errors (a full disk, a lock held too long) come out as :class:`StoreError`
        naming the file; the transaction is rolled back, so the store is as it was.
        """
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
                try:
                    yield self._db
                    self._db.execute("COMMIT")
                except BaseException:
                    # SQLite rolls some failures back by itself; then there is nothing to undo.
                    if self._db.in_transaction:
                        self._db.execute("ROLLBACK")
                    raise
            except sqlite3.Error as exc:
                raise StoreError(f"{self._name}: the match store could not be written: {exc}") from exc

    @contextmanager
    def _reading(self) -> Iterator[None]:
        """Reads that see one snapshot of the file, whatever other processes write meanwhile."""
        with self._lock:
            if self._db.in_transaction:
                yield
                return
            self._db.execute("BEGIN")
            try:
                yield
            finally:
                self._db.execute("COMMIT")

    @contextmanager
    def connection(self, *, write: bool) -> Iterator[sqlite3.Connection]:
        """The store's database under its lock, for the tables another part keeps in the store's
        file (the hall's outbox, :mod:`bgboard.hall.outbox`): in one write transaction when
        ``write`` (errors as :class:`StoreError`), else one snapshot for reads."""
        if write:
            with self._transaction() as db:
                yield db
        else:
            with self._reading():
                yield self._db

    def _pragma(self, name: str) -> Any:
        with self._lock:
            return self._db.execute(f"PRAGMA {name}").fetchone()[0]

    @property
    def journal_mode(self) -> str:
        """SQLite's journal mode (``"wal"`` for a store on disk)."""
        return str(self._pragma("journal_mode"))

    @property
    def synchronous(self) -> int:
        """SQLite's ``synchronous`` setting (2 is FULL)."""
        return int(self._pragma("synchronous"))

    @property
    def schema_version(self) -> int:
        """The schema version of the file."""
        return int(self._pragma("user_version"))

    def integrity_check(self) -> list[str]:
        """SQLite's full ``integrity_check``: ``["ok"]`` for a sound file."""
        with self._lock:
            return [row[0] for row in self._db.execute("PRAGMA integrity_check")]

    def time_text(self, at: datetime | None = None) -> str:
        """``at`` (default: the store's clock now) as the store writes times.

        :raises StoreInputError: ``at`` has no time zone.
        """
        return self._now(at)

    def _now(self, at: datetime | None) -> str:
        moment = at if at is not None else self._clock()
        if moment.tzinfo is None:
            raise StoreInputError(f"time {moment!r} has no time zone: give an aware datetime")
        return format_time(moment)

    # -- matches -----------------------------------------------------------------------------

    def start_match(
        self,
        players: Sequence[str],
        length: int,
        options: MatchOptions | None = None,
        tags: Mapping[str, str] | None = None,
        *,
        at: datetime | None = None,
    ) -> int:
        """Start a match (``length`` points, 0 for a money session) and return its id.

        ``options`` default to gnubg's: the Crawford rule in a match, nothing else. The
        Crawford rule is switched off for money, where it means nothing. ``EventDate`` and
        ``EventTime`` tags are added from the local time unless given.

        :raises StoreInputError: the names, length, options or tags are not usable.
        """
        names = tuple(str(name).strip() if isinstance(name, str) else "" for name in players)
        if len(names) != 2 or not all(names):
            raise StoreInputError(f"a match needs the names of two players, not {players!r}")
        if isinstance(length, bool) or not isinstance(length, int) or length < 0:
            raise StoreInputError(f"the match length is 1 or more points (0 for money), not {length!r}")
        if options is None:
            options = MatchOptions(crawford=length > 0)
        elif not isinstance(options, MatchOptions):
            raise StoreInputError(f"options must be MatchOptions, not {options!r}")
        if length == 0 and options.crawford:
            options = replace(options, crawford=False)
        tag_dict = dict(tags or {})
        bad = [f"{k!r}: {v!r}" for k, v in tag_dict.items() if not isinstance(k, str) or not isinstance(v, str)]
        if bad:
            raise StoreInputError(f"tags are text names and values, not {', '.join(bad)}")
        started = self._now(at)
        local = parse_time(started).astimezone()
        tag_dict.setdefault("EventDate", local.strftime("%Y.%m.%d"))
        tag_dict.setdefault("EventTime", local.strftime("%H.%M"))
        state = MatchState(length, options=options)
        with self._transaction() as db:
            cursor = db.execute(
                "INSERT INTO matches (started, player0, player1, length, options, tags, gnubgid, touched)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, (SELECT coalesce(max(touched), 0) + 1 FROM matches))",
                (
                    started,
                    names[0],
                    names[1],
                    length,
                    json.dumps(_options_json(options)),
                    json.dumps(tag_dict, ensure_ascii=False),
                    state.gnubg_id(),
                ),
            )
            match_id = cursor.lastrowid
        assert match_id is not None
        self._cache[match_id] = _Match(match_id, (names[0], names[1]), 0, state)
        return match_id

    def _summary(self, row: sqlite3.Row) -> MatchSummary:
        return MatchSummary(
            id=row["id"],
            players=(row["player0"], row["player1"]),
            length=row["length"],
            options=_options_from_json(row["options"]),
            tags=json.loads(row["tags"]),
            started=parse_time(row["started"]),
            finished=None if row["finished"] is None else parse_time(row["finished"]),
            score=(row["score0"], row["score1"]),
            games=row["games"],
            actions=row["live"] or 0,
            gnubgid=row["gnubgid"],
        )

    _SUMMARY_SQL: Final = (
        "SELECT m.*, (SELECT count(*) FROM games g WHERE g.match = m.id) AS games,"
        " (SELECT sum(CASE WHEN a.kind = 'undo' THEN -1 ELSE 1 END) FROM actions a WHERE a.match = m.id) AS live"
        " FROM matches m"
    )

    def matches(self) -> list[MatchSummary]:
        """Every stored match, oldest first."""
        with self._lock:
            rows = self._db.execute(self._SUMMARY_SQL + " ORDER BY m.id").fetchall()
        return [self._summary(row) for row in rows]

    def summary(self, match_id: int) -> MatchSummary:
        """One match's summary.

        :raises UnknownMatchError: there is no such match.
        """
        with self._lock:
            row = self._db.execute(self._SUMMARY_SQL + " WHERE m.id = ?", (match_id,)).fetchone()
        if row is None:
            raise UnknownMatchError(self._unknown(match_id))
        return self._summary(row)

    def last_match(self, *, unfinished: bool = False) -> MatchSummary | None:
        """The match recorded to (or started) most recently; with ``unfinished``, the last one still on."""
        where = " WHERE m.finished IS NULL" if unfinished else ""
        with self._lock:
            row = self._db.execute(self._SUMMARY_SQL + where + " ORDER BY m.touched DESC, m.id DESC LIMIT 1").fetchone()
        return None if row is None else self._summary(row)

    def _unknown(self, match_id: object) -> str:
        return f"no match {match_id!r} in {self._name}"

    # -- replaying ---------------------------------------------------------------------------

    def _rows(self, match_id: int) -> list[sqlite3.Row]:
        return self._db.execute("SELECT * FROM actions WHERE match = ? ORDER BY seq", (match_id,)).fetchall()

    def _match_row(self, match_id: int) -> sqlite3.Row:
        row: sqlite3.Row | None = self._db.execute("SELECT * FROM matches WHERE id = ?", (match_id,)).fetchone()
        if row is None:
            raise UnknownMatchError(self._unknown(match_id))
        return row

    def _live_rows(self, match_id: int) -> tuple[list[sqlite3.Row], int]:
        """The rows that stand (undo rows and what they took back left out), and the last seq."""
        rows = self._rows(match_id)
        live: list[sqlite3.Row] = []
        for row in rows:
            if row["kind"] != UNDO:
                live.append(row)
            elif not live or live[-1]["id"] != row["undoes"]:
                raise StoreError(
                    f"{self._name}: match {match_id}, action {row['seq']}: it undoes action id {row['undoes']},"
                    " which is not the last one standing"
                )
            else:
                live.pop()
        return live, rows[-1]["seq"] if rows else 0

    def _replay(
        self, match_id: int, *, check_each: bool = False
    ) -> tuple[_Match, list[tuple[sqlite3.Row, MatchState, MatchState]]]:
        """Apply the stored actions to a new match.

        The state reached must have the GNUbgID stored with the last action and with the match;
        with ``check_each``, every action's GNUbgID after is checked on the way.
        """
        match_row = self._match_row(match_id)
        state = MatchState(match_row["length"], options=_options_from_json(match_row["options"]))
        live, seq = self._live_rows(match_id)
        replayed = _Match(match_id, (match_row["player0"], match_row["player1"]), seq, state)
        steps = []
        last = live[-1]["id"] if live else None
        for row in live:
            before = state
            try:
                state = before.apply(_action_of_row(row))
                if (check_each or row["id"] == last) and state.gnubg_id() != row["gnubgid_after"]:
                    raise ValueError(f"it leads to {state.gnubg_id()}, not to the stored {row['gnubgid_after']}")
            except (BackgammonError, ValueError, TypeError) as exc:
                raise StoreError(
                    f"{self._name}: match {match_id} does not replay at action {row['seq']}"
                    f" (id {row['id']}, {row['kind']}): {exc}"
                ) from None
            replayed.live.append(_Live(row["id"], row["player"], before))
            steps.append((row, before, state))
        if state.gnubg_id() != match_row["gnubgid"]:
            raise StoreError(
                f"{self._name}: match {match_id} replays to {state.gnubg_id()},"
                f" but the match is stored at {match_row['gnubgid']}"
            )
        replayed.state = state
        return replayed, steps

    def _current(self, match_id: int) -> _Match:
        """The match as recorded now; the cache is used when no other connection has written since."""
        cached = self._cache.get(match_id)
        row = self._db.execute("SELECT max(seq) FROM actions WHERE match = ?", (match_id,)).fetchone()
        seq = row[0] or 0
        if cached is not None and cached.seq == seq:
            return cached
        fresh, _ = self._replay(match_id)
        self._cache[match_id] = fresh
        return fresh

    def state(self, match_id: int) -> MatchState:
        """The match's state after its last stored action: where a resumed referee carries on.

        :raises UnknownMatchError: there is no such match.
        :raises StoreError: the stored actions do not replay (the store was tampered with).
        """
        with self._reading():
            return self._current(match_id).state

    def verify(self, match_id: int) -> MatchState:
        """Replay the match from its first action, checking every GNUbgID and play on the way.

        Unlike :meth:`state`, this never trusts the cache. Returns the final state.

        :raises StoreError: an action does not replay to what was stored.
        """
        with self._reading():
            replayed, steps = self._replay(match_id, check_each=True)
            for row, before, after in steps:
                where = f"{self._name}: match {match_id}, action {row['seq']} (id {row['id']})"
                if before.gnubg_id() != row["gnubgid_before"]:
                    raise StoreError(
                        f"{where}: stored GNUbgID before {row['gnubgid_before']} is not {before.gnubg_id()}"
                    )
                if row["game"] != after.game_number:
                    raise StoreError(f"{where}: stored in game {row['game']}, but it is game {after.game_number}")
                self._action(row)
            self._cache[match_id] = replayed
            return replayed.state

    def actions(self, match_id: int, *, all_rows: bool = False) -> list[StoredAction]:
        """The match's actions that stand, in order; with ``all_rows``, every row (undos too).

        :raises UnknownMatchError: there is no such match.
        """
        with self._reading():
            self._match_row(match_id)
            rows = self._rows(match_id) if all_rows else self._live_rows(match_id)[0]
        return [self._stored(row) for row in rows]

    def _action(self, row: sqlite3.Row) -> Action:
        """A row's action in canonical form (a move with its legal :class:`Play`)."""
        try:
            return _canonical_move(row) if row["kind"] == "move" else _action_of_row(row)
        except (BackgammonError, ValueError, TypeError) as exc:
            raise StoreError(
                f"{self._name}: match {row['match']}, action {row['seq']} (id {row['id']}) is not readable: {exc}"
            ) from None

    def _stored(self, row: sqlite3.Row) -> StoredAction:
        action = None if row["kind"] == UNDO else self._action(row)
        return _stored_action(row["id"], dict(row), action)

    # -- recording ---------------------------------------------------------------------------

    @staticmethod
    def _check_source(source: str, confidence: float | None, note: str | None) -> None:
        if source not in SOURCES:
            raise StoreInputError(f"unknown source {source!r}: one of {', '.join(sorted(SOURCES))}")
        if confidence is not None and (
            isinstance(confidence, bool)
            or not isinstance(confidence, int | float)
            or not 0.0 <= float(confidence) <= 1.0
        ):
            raise StoreInputError(f"a confidence is a number from 0 to 1, not {confidence!r}")
        if note is not None and not isinstance(note, str):
            raise StoreInputError(f"a note is text, not {note!r}")

    def record(
        self,
        match_id: int,
        action: Action,
        *,
        source: str,
        confidence: float | None = None,
        note: str | None = None,
        at: datetime | None = None,
    ) -> StoredAction:
        """Check ``action`` against the rules and store it in one transaction.

        Returns after the transaction is committed: from then on the action survives a crash.

        :param source: where the action came from (:data:`SOURCES`).
        :param confidence: the camera reading's confidence, 0 to 1.
        :param note: free text kept with the action.
        :param at: when it happened (aware); default now.
        :raises IllegalActionError: the rules forbid the action now (the message says which
            match, game and action); nothing is stored.
        :raises StoreInputError: bad ``source``, ``confidence``, ``note`` or ``at``; nothing is stored.
        :raises UnknownMatchError: there is no such match.
        """
        return self._write(match_id, [action], 0, source, confidence, note, at)[0]

    def undo(self, match_id: int, *, source: str, note: str | None = None, at: datetime | None = None) -> StoredAction:
        """Take back the last action that stands (an undo button), storing an ``undo`` row.

        Returns the undo row; the action taken back stays in the store, marked by it.

        :raises StoreError: there is nothing to take back.
        """
        return self._write(match_id, [], 1, source, None, note, at)[0]

    def correct(
        self,
        match_id: int,
        actions: Action | Sequence[Action],
        *,
        undo: int = 1,
        confidence: float | None = None,
        note: str | None = None,
        at: datetime | None = None,
    ) -> list[StoredAction]:
        """Replace the last ``undo`` actions that stand by ``actions``, in one transaction.

        For a misread the players put right: the wrong actions are taken back by undo rows and
        the right ones stored, all with source ``"correction"``. Nothing is written unless every
        replacement is legal.

        :returns: the undo rows, then the stored replacements.
        :raises IllegalActionError: a replacement is against the rules.
        :raises StoreError: fewer than ``undo`` actions stand.
        """
        if isinstance(undo, bool) or not isinstance(undo, int) or undo < 0:
            raise StoreInputError(f"undo counts actions to take back: 0 or more, not {undo!r}")
        replacements = list(actions) if isinstance(actions, Sequence) else [actions]
        return self._write(match_id, replacements, undo, "correction", confidence, note, at)

    def _write(
        self,
        match_id: int,
        actions: list[Action],
        undo: int,
        source: str,
        confidence: float | None,
        note: str | None,
        at: datetime | None,
    ) -> list[StoredAction]:
        self._check_source(source, confidence, note)
        time = self._now(at)
        with self._lock:
            try:
                with self._transaction() as db:
                    current = self._current(match_id)
                    # Work on a copy: the cache changes only once the transaction is committed.
                    work = _Match(current.id, current.players, current.seq, current.state, list(current.live))
                    stored = [self._write_undo(db, work, time, source, note) for _ in range(undo)]
                    if undo:
                        self._sync_after_undo(db, work, time)
                    stored += [self._write_action(db, work, a, time, source, confidence, note) for a in actions]
            except BaseException:
                # Whatever failed, the next call re-reads the match from the database.
                self._cache.pop(match_id, None)
                raise
            self._cache[match_id] = work
        return stored

    def _where(self, work: _Match) -> str:
        players = f"{work.players[0]} vs {work.players[1]}"
        return f"match {work.id} ({players}), game {work.state.game_number}, action {work.seq + 1}"

    def _write_undo(
        self, db: sqlite3.Connection, work: _Match, time: str, source: str, note: str | None
    ) -> StoredAction:
        if not work.live:
            raise StoreError(f"{self._where(work)}: there is nothing to take back")
        last = work.live.pop()
        before_id, after = work.state.gnubg_id(), last.before
        work.seq += 1
        row = {
            "match": work.id,
            "game": after.game_number,
            "seq": work.seq,
            "time": time,
            "player": last.player,
            "kind": UNDO,
            "undoes": last.id,
            "gnubgid_before": before_id,
            "gnubgid_after": after.gnubg_id(),
            "source": source,
            "note": note,
        }
        stored = self._insert(db, row, None)
        work.state = after
        return stored

    def _sync_after_undo(self, db: sqlite3.Connection, work: _Match, time: str) -> None:
        """Make the game rows and the match row say what the actions that stand say."""
        state = work.state
        games_left = state.game_number if work.live else 0
        db.execute("DELETE FROM games WHERE match = ? AND number > ?", (work.id, games_left))
        if work.live and not state.is_over():
            # The action that ended this game was taken back: the game is on again.
            self._set_result(db, work.id, state, time)
        self._set_match(db, work, state, time)

    def _write_action(
        self,
        db: sqlite3.Connection,
        work: _Match,
        action: Action,
        time: str,
        source: str,
        confidence: float | None,
        note: str | None,
    ) -> StoredAction:
        before = work.state
        try:
            after = before.apply(action)
            # The Match ID holds scores up to 32767: an endless money session can outgrow it.
            ids = before.gnubg_id(), after.gnubg_id()
        except BackgammonError as exc:
            error = type(exc)(f"{self._where(work)}, {describe(action)}: {exc}")
            raise error from None
        canonical, fields = _row_fields(before, action, after)
        work.seq += 1
        row = {
            "match": work.id,
            "game": after.game_number,
            "seq": work.seq,
            "time": time,
            **fields,
            "gnubgid_before": ids[0],
            "gnubgid_after": ids[1],
            "source": source,
            "confidence": None if confidence is None else float(confidence),
            "note": note,
        }
        db.execute(
            "INSERT OR IGNORE INTO games (match, number, score0, score1, started) VALUES (?, ?, ?, ?, ?)",
            (work.id, after.game_number, before.score[0], before.score[1], time),
        )
        stored = self._insert(db, row, canonical)
        if after.is_over() and not before.is_over():
            self._set_result(db, work.id, after, time)
        self._set_match(db, work, after, time)
        work.live.append(_Live(stored.id, fields["player"], before))
        work.state = after
        return stored

    @staticmethod
    def _set_result(db: sqlite3.Connection, match_id: int, state: MatchState, time: str) -> None:
        result = state.last_result if state.is_over() else None
        db.execute(
            "UPDATE games SET winner = ?, points = ?, kind = ?, ended = ?, cube = ?, finished = ?"
            " WHERE match = ? AND number = ?",
            (
                None if result is None else result.winner,
                None if result is None else result.points,
                None if result is None else result.kind,
                None if result is None else result.end.value,
                None if result is None else result.cube,
                None if result is None else time,
                match_id,
                state.game_number,
            ),
        )

    @staticmethod
    def _set_match(db: sqlite3.Connection, work: _Match, state: MatchState, time: str) -> None:
        db.execute(
            "UPDATE matches SET score0 = ?, score1 = ?, gnubgid = ?, finished = ?,"
            " touched = (SELECT max(touched) + 1 FROM matches) WHERE id = ?",
            (
                state.score[0],
                state.score[1],
                state.gnubg_id(),
                time if state.phase is Phase.MATCH_OVER else None,
                work.id,
            ),
        )

    def _insert(self, db: sqlite3.Connection, row: dict[str, Any], action: Action | None) -> StoredAction:
        columns = ", ".join(row)
        marks = ", ".join("?" for _ in row)
        cursor = db.execute(f"INSERT INTO actions ({columns}) VALUES ({marks})", tuple(row.values()))
        assert cursor.lastrowid is not None
        return _stored_action(cursor.lastrowid, row, action)

    # -- records and export ------------------------------------------------------------------

    def record_of(self, match_id: int) -> MatchRecord:
        """The match as a :class:`~engine.record.MatchRecord`: the actions that stand, game by game.

        The actions are in canonical form (see :class:`StoredAction`).

        :raises UnknownMatchError: there is no such match.
        :raises StoreError: the stored actions do not replay.
        """
        with self._reading():
            match_row = self._match_row(match_id)
            _, steps = self._replay(match_id)
        games: list[GameRecord] = []
        actions: list[Action] = []
        score = (0, 0)
        last: MatchState | None = None
        for row, before, after in steps:
            if last is not None and after.game_number != last.game_number:
                games.append(GameRecord(score, tuple(actions), last.last_result if last.is_over() else None))
                actions = []
            if not actions:
                score = before.score
            actions.append(self._action(row))
            last = after
        if last is not None:
            games.append(GameRecord(score, tuple(actions), last.last_result if last.is_over() else None))
        return MatchRecord(
            players=(match_row["player0"], match_row["player1"]),
            length=match_row["length"],
            options=_options_from_json(match_row["options"]),
            games=tuple(games),
            tags=json.loads(match_row["tags"]),
        )

    def export(self, match_id: int, fmt: str = "mat") -> str:
        """The match as the text of a ``.mat`` (gnubg's dialect) or ``.sgf`` file.

        :raises StoreInputError: ``fmt`` is not one of :data:`FORMATS`.
        :raises UnknownMatchError: there is no such match.
        """
        if fmt not in FORMATS:
            raise StoreInputError(f"unknown export format {fmt!r}: use {' or '.join(FORMATS)}")
        record = self.record_of(match_id)
        if fmt == "mat":
            from engine.matfile import write_mat

            return write_mat(record)
        from engine.sgf import write_sgf

        return write_sgf(record)

    def save_analysis(
        self, match_id: int, analysis: Mapping[str, Any], *, ply: int, at: datetime | None = None
    ) -> None:
        """Keep gnubg's analysis of a match (the ``bgboard analyse --json`` object) at ``ply``.

        It replaces an earlier one at the same depth; it records how many actions stood, so
        :meth:`analysis` can tell when the match has gone on since.

        :raises UnknownMatchError: there is no such match.
        """
        text = json.dumps(analysis, ensure_ascii=False)
        with self._transaction() as db:
            self._match_row(match_id)
            # An older store opened without upgrading (``create=False``) gains the table here.
            db.execute(_ANALYSES)
            actions = len(self._rows(match_id))
            db.execute(
                "INSERT OR REPLACE INTO analyses (match, ply, actions, time, analysis) VALUES (?, ?, ?, ?, ?)",
                (match_id, ply, actions, self._now(at), text),
            )

    def analysis(self, match_id: int, ply: int | None = None) -> dict[str, Any] | None:
        """The analysis kept for a match (at ``ply``, else the deepest), or ``None``.

        An analysis made before the last action was recorded is out of date: ``None`` too.

        :raises UnknownMatchError: there is no such match.
        """
        with self._reading():
            self._match_row(match_id)
            # An older store opened only to read has no analyses table: none kept.
            if not self._has_table("analyses"):
                return None
            actions = len(self._rows(match_id))
            query = "SELECT * FROM analyses WHERE match = ? AND actions = ?"
            arguments: tuple[int, ...] = (match_id, actions)
            if ply is not None:
                query += " AND ply = ?"
                arguments += (ply,)
            row = self._db.execute(query + " ORDER BY ply DESC LIMIT 1", arguments).fetchone()
        if row is None:
            return None
        kept: dict[str, Any] = json.loads(row["analysis"])
        return kept

    def results(self, match_id: int) -> list[GameResult | None]:
        """Each game's result from the ``games`` table, ``None`` for a game still on."""
        with self._reading():
            self._match_row(match_id)
            rows = self._db.execute("SELECT * FROM games WHERE match = ? ORDER BY number", (match_id,)).fetchall()
        return [
            None
            if row["winner"] is None
            else GameResult(row["winner"], row["points"], row["kind"], GameEnd(row["ended"]), row["cube"])
            for row in rows
        ]


@contextmanager
def held_by_one_table(path: Path) -> Iterator[None]:
    """Hold the store file at ``path`` for one table while the block runs: two referees
    recording into one store would interleave two matches' actions, and a second one resumed
    would fail only at its first roll. Readers (``bgboard matches``, ``export``, the match
    browser) are not kept out. The hold is the kernel's ``flock`` on the file, released when
    the process ends however it ends.

    :raises StoreInUseError: another process holds it.
    """
    import fcntl

    with open(path, "rb") as held:
        try:
            fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise StoreInUseError(
                f"{path} is in use by another referee: stop it first, or give this one its own store (--store)"
            ) from None
        try:
            yield
        finally:
            fcntl.flock(held, fcntl.LOCK_UN)


def match_id_of(store: MatchStore, text: str) -> int:
    """A match named on a command line: its id, or ``last`` for the match recorded to last.

    :raises UnknownMatchError: no such match (or no match at all for ``last``).
    """
    if text.strip().lower() == "last":
        last = store.last_match()
        if last is None:
            raise UnknownMatchError(f"no matches in {store.path}")
        return last.id
    if not text.strip().isdigit():
        raise StoreInputError(f"a match is given by its number (see bgboard matches) or 'last', not {text!r}")
    match_id = int(text)
    store.summary(match_id)
    return match_id


def summaries_text(summaries: Iterable[MatchSummary]) -> list[str]:
    """The lines ``bgboard matches`` prints: a header, then one line per match."""
    header = ("id", "started", "players", "length", "score", "games", "status")
    rows = [
        (
            str(s.id),
            s.started.astimezone().strftime("%Y-%m-%d %H:%M"),
            f"{s.players[0]} - {s.players[1]}",
            s.length_text,
            f"{s.score[0]}-{s.score[1]}",
            str(s.games),
            s.status,
        )
        for s in summaries
    ]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    right = {0, 4, 5}
    lines = []
    for r in [header, *rows]:
        cells = [c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))]
        lines.append("  ".join(cells).rstrip())
    return lines
