# SPDX-License-Identifier: MIT
"""The match store: schema and settings, recording and replaying, refusals, corrections, export."""

from __future__ import annotations

import contextlib
import random
import re
import sqlite3
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from store_players import next_action

from bgboard.hall.outbox import Outbox
from bgboard.store import (
    APPLICATION_ID,
    SCHEMA_VERSION,
    MatchStore,
    MatchSummary,
    NewerStoreError,
    NotAStoreError,
    StoredAction,
    StoreError,
    StoreInputError,
    UnknownMatchError,
    default_file_name,
    file_safe,
    format_time,
)
from engine.dice import Dice
from engine.errors import IllegalActionError, InvalidNotationError
from engine.match import (
    Action,
    Double,
    Drop,
    GameEnd,
    MatchOptions,
    MatchState,
    Move,
    OpeningRoll,
    Phase,
    Roll,
    Take,
)
from engine.movegen import legal_plays
from engine.play import Play
from engine.position import Position
from engine.record import MatchRecorder

SOURCES = ("camera", "button", "keyboard")
START = datetime(2026, 11, 22, 14, 2, 11, 42000).astimezone()


class Clock:
    """A clock that moves on 1.5 s at every reading."""

    def __init__(self, start: datetime = START) -> None:
        self.now = start

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1.5)
        return self.now


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "store" / "matches.sqlite3"


@pytest.fixture
def store(db: Path) -> Iterator[MatchStore]:
    with MatchStore(db, clock=Clock()) as opened:
        yield opened


def play(
    store: MatchStore, match: int, rng: random.Random, *, limit: int = 100_000, **rates: float
) -> list[tuple[StoredAction, MatchState]]:
    """Record simulated players' actions until the match is over (or ``limit`` actions)."""
    state = store.state(match)
    done: list[tuple[StoredAction, MatchState]] = []
    while state.phase is not Phase.MATCH_OVER and len(done) < limit:
        action = next_action(state, rng, **rates)
        state = state.apply(action)
        stored = store.record(match, action, source=SOURCES[len(done) % 3], confidence=0.9)
        assert store.state(match) == state
        done.append((stored, state))
    return done


def row_count(db: Path) -> int:
    connection = sqlite3.connect(db)
    try:
        return int(connection.execute("SELECT count(*) FROM actions").fetchone()[0])
    finally:
        connection.close()


# -- schema and settings ---------------------------------------------------------------------


def test_a_new_store_has_the_schema_its_version_and_the_settings(store: MatchStore, db: Path) -> None:
    assert db.exists()
    assert store.schema_version == SCHEMA_VERSION == 3
    assert store.journal_mode == "wal"
    assert store.synchronous == 2  # FULL
    connection = sqlite3.connect(db)
    try:
        tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert {"matches", "games", "actions"} <= tables
        columns = {row[1] for row in connection.execute("PRAGMA table_info(actions)")}
        assert {
            "id",
            "match",
            "game",
            "seq",
            "time",
            "player",
            "kind",
            "dice",
            "play",
            "position",
            "cube",
            "gnubgid_before",
            "gnubgid_after",
            "source",
            "confidence",
            "note",
        } <= columns
        # WAL is a property of the file: a plain connection sees it too.
        assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert connection.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    finally:
        connection.close()
    assert store._db.execute("PRAGMA foreign_keys").fetchone()[0] == 1


def test_reopening_keeps_what_was_stored(db: Path) -> None:
    with MatchStore(db) as first:
        match = first.start_match(("Ann", "Bob"), 5)
        first.record(match, OpeningRoll(6, 1), source="camera")
        first.record(match, Move("13/7 8/7"), source="camera")
    with MatchStore(db) as second:
        assert second.schema_version == SCHEMA_VERSION
        state = second.state(match)
        assert state.phase is Phase.ROLL and state.on_roll == 1
        assert [a.kind for a in second.actions(match)] == ["opening_roll", "move"]


# -- recording and replaying ----------------------------------------------------------------


def test_a_whole_seeded_match_replays_exactly(store: MatchStore, db: Path) -> None:
    match = store.start_match(("Ann", "Bob"), 7, MatchOptions(crawford=True), {"Event": "Club night"})
    done = play(store, match, random.Random(17))
    final = done[-1][1]
    assert final.phase is Phase.MATCH_OVER and max(final.score) >= 7

    kinds = {stored.kind for stored, _ in done}
    assert {"opening_roll", "roll", "move", "double", "take", "drop"} <= kinds
    states = [state for _, state in done]
    assert any(s.crawford for s in states), "the seed should reach a Crawford game"
    assert any(s.post_crawford and s.phase is Phase.ROLL for s in states)
    games = max(s.game_number for s in states)
    assert games >= 4

    # A second store object knows nothing cached: it replays the actions from the file.
    with MatchStore(db) as fresh:
        assert fresh.state(match) == final
        assert fresh.verify(match) == final
        summary = fresh.summary(match)
        assert summary.score == final.score
        assert summary.games == games
        assert summary.actions == len(done)
        assert summary.is_finished and summary.status == "finished"
        assert summary.gnubgid == final.gnubg_id()
        stored = fresh.actions(match)
    assert [s.action for s in stored] == [s.action for s, _ in done]
    assert [s.id for s in stored] == [s.id for s, _ in done]
    assert [s.seq for s in stored] == list(range(1, len(done) + 1))

    # Each row says who acted and what the position was before and after.
    previous = MatchState.new_match(7)
    for row, (_, state) in zip(stored, done, strict=True):
        assert row.gnubgid_before == previous.gnubg_id()
        assert row.gnubgid_after == state.gnubg_id()
        assert row.game == state.game_number
        assert row.player == (None if row.kind == "opening_roll" else previous.turn)
        assert row.confidence == 0.9
        assert row.time.tzinfo is not None
        if isinstance(row.action, Move):
            assert isinstance(row.action.play, Play)
            assert row.action.play == previous.legal_plays().play_for(state.position.swap()) or not row.action.play
        previous = state

    # The record is the one a MatchRecorder builds from the same actions.
    recorder = MatchRecorder(("Ann", "Bob"), 7, MatchOptions(crawford=True), store.summary(match).tags)
    for row in stored:
        assert row.action is not None
        recorder.apply(row.action)
    record = store.record_of(match)
    assert record == recorder.record()
    assert record.final_score() == final.score
    assert record.tags["Event"] == "Club night"
    assert record.tags["EventDate"] == START.strftime("%Y.%m.%d")
    assert [g.result for g in record.games] == store.results(match)
    assert all(result is not None for result in store.results(match))
    assert list(record.states())[-1].state == final


def test_a_money_session_with_beavers_jacoby_and_resignations(store: MatchStore) -> None:
    options = MatchOptions(crawford=True, jacoby=True, beaver=True, max_cube=64)
    match = store.start_match(("Ann", "Bob"), 0, options)
    assert store.state(match).options.crawford is False  # no Crawford game in money play
    done = play(store, match, random.Random(3), limit=500, cube_rate=0.15, resign_rate=0.05)
    kinds = {stored.kind for stored, _ in done}
    assert {"beaver", "resign", "accept_resign", "reject_resign", "double", "take", "drop"} <= kinds
    final = done[-1][1]
    ends = {r.end for r in store.results(match) if r is not None}
    assert ends == {GameEnd.PLAYED, GameEnd.RESIGNED, GameEnd.DROPPED}
    assert store.verify(match) == final
    summary = store.summary(match)
    assert summary.length == 0 and not summary.is_finished and summary.score == final.score


def test_moves_are_stored_as_canonical_play_text_and_the_position_they_leave(store: MatchStore) -> None:
    match = store.start_match(("Ann", "Bob"), 5)
    store.record(match, OpeningRoll(2, 4), source="camera")
    # A camera gives the position the play leaves; the store keeps the play and that position.
    results = store.state(match).legal_plays().results
    target = next(p for p, pl in results.items() if str(pl) == "8/4 6/4")
    stored = store.record(match, Move(target), source="camera", confidence=0.8)
    assert stored.kind == "move"
    assert str(stored.action.play) == "8/4 6/4"  # type: ignore[union-attr]
    raw = store._db.execute("SELECT dice, play, position, player FROM actions WHERE id = ?", (stored.id,)).fetchone()
    assert tuple(raw) == ("42", "8/4 6/4", target.position_id(), 1)
    stored = store.record(match, Roll(Dice(1, 3)), source="button")
    raw = store._db.execute("SELECT dice, player FROM actions WHERE id = ?", (stored.id,)).fetchone()
    assert tuple(raw) == ("13", 0)  # rolled order kept
    stored = store.record(match, Move("6/5, 13/10"), source="keyboard")
    assert stored.action == Move(Play.parse("13/10 6/5"), by=0)
    assert str(stored.action.play) == "13/10 6/5"  # type: ignore[union-attr]


def test_cube_actions_store_the_cube_value(store: MatchStore) -> None:
    match = store.start_match(("Ann", "Bob"), 9)
    store.record(match, OpeningRoll(3, 1), source="camera")
    store.record(match, Move("8/5 6/5"), source="camera")
    double = store.record(match, Double(), source="button")
    take = store.record(match, Take(), source="button")
    assert (double.kind, double.player, take.kind, take.player) == ("double", 1, "take", 0)
    cubes = store._db.execute("SELECT cube FROM actions WHERE id IN (?, ?) ORDER BY id", (double.id, take.id))
    assert [row[0] for row in cubes] == [2, 2]
    assert store.state(match).cube.value == 2 and store.state(match).cube.owner == 0


def test_times_are_utc_with_milliseconds(store: MatchStore) -> None:
    match = store.start_match(("Ann", "Bob"), 3)
    moment = datetime(2026, 11, 22, 14, 2, 11, 987654, tzinfo=UTC)
    stored = store.record(match, OpeningRoll(4, 2), source="camera", at=moment)
    raw = store._db.execute("SELECT time FROM actions WHERE id = ?", (stored.id,)).fetchone()[0]
    assert raw == "2026-11-22T14:02:11.987Z" == format_time(moment)
    assert stored.time == moment.replace(microsecond=987000)
    with pytest.raises(StoreInputError, match="time zone"):
        store.record(match, Move("8/4 6/4"), source="camera", at=datetime(2026, 11, 22, 14, 3))


def test_a_second_store_object_on_the_same_file_sees_the_other_writes(db: Path) -> None:
    with MatchStore(db) as one, MatchStore(db) as two:
        match = one.start_match(("Ann", "Bob"), 5)
        one.record(match, OpeningRoll(6, 5), source="camera")
        assert two.state(match).phase is Phase.MOVE
        two.record(match, Move("24/13"), source="camera")
        # ``one`` cached the state before the move; it must notice the other write.
        assert one.state(match).on_roll == 1
        with pytest.raises(IllegalActionError):
            one.record(match, Move("24/13"), source="camera")
        one.record(match, Roll(Dice(3, 1)), source="camera")
        assert [a.seq for a in two.actions(match)] == [1, 2, 3]


def test_a_write_that_cannot_get_the_lock_fails_clearly_and_loses_nothing(db: Path) -> None:
    with MatchStore(db, busy_timeout=0.05) as store:
        match = store.start_match(("Ann", "Bob"), 5)
        store.record(match, OpeningRoll(6, 5), source="camera")
        other = sqlite3.connect(db, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        try:
            with pytest.raises(StoreError, match=f"{db}: the match store could not be written: database is locked"):
                store.record(match, Move("24/13"), source="camera")
        finally:
            other.execute("ROLLBACK")
            other.close()
        assert store.state(match).phase is Phase.MOVE
        store.record(match, Move("24/13"), source="camera")
        assert [a.kind for a in store.actions(match)] == ["opening_roll", "move"]


def test_last_match_is_the_one_recorded_to_last(store: MatchStore) -> None:
    assert store.last_match() is None
    first = store.start_match(("Ann", "Bob"), 3)
    second = store.start_match(("Cid", "Dee"), 5)
    last = store.last_match()
    assert last is not None and last.id == second
    store.record(first, OpeningRoll(5, 3), source="camera")
    last = store.last_match()
    assert last is not None and last.id == first and last.players == ("Ann", "Bob")
    assert [s.id for s in store.matches()] == [first, second]


# -- refusals ----------------------------------------------------------------------------------


def test_an_illegal_action_is_refused_and_nothing_is_stored(store: MatchStore, db: Path) -> None:
    match = store.start_match(("Ann", "Bob"), 7)
    store.record(match, OpeningRoll(3, 1), source="camera")
    before = store.state(match)
    rows = row_count(db)
    with pytest.raises(IllegalActionError) as refused:
        store.record(match, Move("13/9 6/5"), source="camera", confidence=0.4)
    message = str(refused.value)
    assert "match 1 (Ann vs Bob), game 1, action 2" in message
    assert "13/9 6/5" in message and "not legal for 3-1" in message
    assert row_count(db) == rows
    assert store.state(match) == before
    with pytest.raises(IllegalActionError, match=r"you can't double after rolling"):
        store.record(match, Double(), source="button")
    with pytest.raises(InvalidNotationError, match=r"action 2, move 13/x.*not a move"):
        store.record(match, Move("13/x"), source="keyboard")
    assert row_count(db) == rows
    # What was recorded is untouched and recording goes on.
    store.record(match, Move("8/5 6/5"), source="camera")
    with MatchStore(db) as fresh:
        assert [a.kind for a in fresh.actions(match)] == ["opening_roll", "move"]


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"source": "telepathy"}, "unknown source 'telepathy'"),
        ({"source": "camera", "confidence": 1.5}, "confidence is a number from 0 to 1, not 1.5"),
        ({"source": "camera", "confidence": "high"}, "not 'high'"),
        ({"source": "camera", "note": 7}, "a note is text"),
    ],
)
def test_bad_arguments_are_refused_and_nothing_is_stored(
    store: MatchStore, db: Path, kwargs: dict[str, object], words: str
) -> None:
    match = store.start_match(("Ann", "Bob"), 3)
    with pytest.raises(StoreInputError, match=words):
        store.record(match, OpeningRoll(3, 1), **kwargs)  # type: ignore[arg-type]
    assert row_count(db) == 0


def test_bad_match_arguments_and_unknown_matches(store: MatchStore, db: Path) -> None:
    with pytest.raises(StoreInputError, match="two players"):
        store.start_match(("Ann",), 3)
    with pytest.raises(StoreInputError, match="two players"):
        store.start_match(("Ann", "  "), 3)
    with pytest.raises(StoreInputError, match="not -1"):
        store.start_match(("Ann", "Bob"), -1)
    with pytest.raises(StoreInputError, match="tags"):
        store.start_match(("Ann", "Bob"), 3, tags={"Round": 3})  # type: ignore[dict-item]
    assert store.matches() == []
    with pytest.raises(UnknownMatchError, match=f"no match 42 in {db}"):
        store.record(42, OpeningRoll(3, 1), source="camera")
    with pytest.raises(UnknownMatchError):
        store.state(42)
    with pytest.raises(UnknownMatchError):
        store.record_of(42)


# -- corrections -------------------------------------------------------------------------------


def test_a_correction_takes_the_misread_move_back_and_is_marked_as_such(store: MatchStore, db: Path) -> None:
    match = store.start_match(("Ann", "Bob"), 5)
    store.record(match, OpeningRoll(6, 4), source="camera")
    wrong = store.record(match, Move("24/14"), source="camera", confidence=0.55)
    stored = store.correct(match, Move("24/18 13/9"), note="the camera misread the 6-point")
    undo, right = stored
    assert (undo.kind, undo.undoes, undo.source, undo.action) == ("undo", wrong.id, "correction", None)
    assert (right.kind, right.source, str(right.action.play)) == ("move", "correction", "24/18 13/9")  # type: ignore[union-attr]
    assert right.note == "the camera misread the 6-point"
    assert undo.gnubgid_before == wrong.gnubgid_after and undo.gnubgid_after == wrong.gnubgid_before
    # Nothing is erased: every row is still there, but only the right move stands.
    every = store.actions(match, all_rows=True)
    assert [a.kind for a in every] == ["opening_roll", "move", "undo", "move"]
    assert every[1].action == wrong.action == Move(legal_plays(Position.STARTING, Dice(6, 4)).parse("24/14")[1], by=0)
    assert [a.id for a in store.actions(match)] == [1, right.id]
    with MatchStore(db) as fresh:
        assert fresh.state(match) == store.state(match)
        assert fresh.verify(match).position == store.state(match).position
        assert fresh.summary(match).actions == 2
        assert str(fresh.record_of(match).games[0].actions[1].play) == "24/18 13/9"  # type: ignore[union-attr]


def test_an_illegal_correction_changes_nothing(store: MatchStore, db: Path) -> None:
    match = store.start_match(("Ann", "Bob"), 5)
    store.record(match, OpeningRoll(6, 4), source="camera")
    store.record(match, Move("24/14"), source="camera")
    state, rows = store.state(match), row_count(db)
    with pytest.raises(IllegalActionError, match="not legal for 6-4"):
        store.correct(match, Move("24/18 13/8"))
    assert row_count(db) == rows and store.state(match) == state
    with pytest.raises(StoreError, match="nothing to take back"):
        store.correct(match, [OpeningRoll(3, 1)], undo=3)
    assert row_count(db) == rows and store.state(match) == state


def test_undo_across_a_game_end_and_a_new_game(store: MatchStore) -> None:
    match = store.start_match(("Ann", "Bob"), 3)
    for action in (OpeningRoll(3, 1), Move("8/5 6/5"), Double(), Drop()):
        store.record(match, action, source="button")
    assert store.summary(match).score == (0, 1)
    assert store.results(match)[0] is not None
    store.record(match, OpeningRoll(2, 6), source="camera")
    assert store.summary(match).games == 2
    undo = store.undo(match, source="button")
    assert undo.kind == "undo" and undo.game == 1
    assert store.summary(match).games == 1
    store.undo(match, source="button", note="he did not mean to drop")
    assert store.state(match).phase is Phase.DOUBLED
    assert store.results(match) == [None]
    assert store.summary(match).score == (0, 0)
    store.record(match, Take(), source="button")
    assert store.state(match).cube.value == 2
    for _ in range(4):
        store.undo(match, source="keyboard")
    assert store.actions(match) == [] and store.summary(match).games == 0
    assert store.state(match) == MatchState.new_match(3)
    with pytest.raises(StoreError, match="nothing to take back"):
        store.undo(match, source="button")
    # A fresh start after taking everything back.
    store.record(match, OpeningRoll(1, 2), source="camera")
    assert store.verify(match).on_roll == 1 and store.summary(match).games == 1


def test_a_finished_match_can_be_taken_back_to_unfinished(store: MatchStore) -> None:
    match = store.start_match(("Ann", "Bob"), 1)
    for action in (OpeningRoll(3, 1), Move("8/5 6/5"), Double(), Drop()):
        store.record(match, action, source="button")
    assert store.state(match).phase is Phase.MATCH_OVER
    assert store.summary(match).is_finished
    assert store.last_match(unfinished=True) is None
    store.undo(match, source="button")
    assert not store.summary(match).is_finished
    last = store.last_match(unfinished=True)
    assert last is not None and last.id == match


# -- bad files ---------------------------------------------------------------------------------


def test_a_file_that_is_not_a_database_is_named_in_the_error(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    text = "Ann beat Bob 7-3 on Tuesday.\n" * 200
    path.write_text(text)
    with pytest.raises(NotAStoreError, match=f"{path}: not a bgboard match store"):
        MatchStore(path)
    assert path.read_text() == text  # and the file is left alone


def test_garbage_bytes_are_named_in_the_error(tmp_path: Path) -> None:
    path = tmp_path / "garbage.sqlite3"
    data = random.Random(3).randbytes(8192)
    path.write_bytes(data)
    with pytest.raises(NotAStoreError, match=str(path)):
        MatchStore(path)
    assert path.read_bytes() == data


def test_another_programs_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.sqlite3"
    connection = sqlite3.connect(path)
    connection.execute("CREATE TABLE photos (id INTEGER PRIMARY KEY, name TEXT)")
    connection.commit()
    connection.close()
    with pytest.raises(NotAStoreError, match=r"not a bgboard match store \(it has photos\)"):
        MatchStore(path)
    connection = sqlite3.connect(path)
    assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "delete"  # left as it was
    connection.close()
    connection = sqlite3.connect(path)
    connection.execute("PRAGMA application_id = 1234")
    connection.close()
    with pytest.raises(NotAStoreError, match="another program"):
        MatchStore(path)


def test_a_store_from_a_newer_bgboard_is_refused(db: Path) -> None:
    with MatchStore(db) as store:
        match = store.start_match(("Ann", "Bob"), 3)
        store.record(match, OpeningRoll(3, 1), source="camera")
    connection = sqlite3.connect(db)
    connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    connection.close()
    with pytest.raises(
        NewerStoreError,
        match=rf"{db}: .*newer bgboard \(schema version {SCHEMA_VERSION + 1}; .* up to {SCHEMA_VERSION}\)",
    ):
        MatchStore(db)
    # Refusing it wrote nothing: the match is still there for the newer bgboard.
    connection = sqlite3.connect(db)
    assert connection.execute("SELECT count(*) FROM actions").fetchone()[0] == 1
    connection.close()


def test_a_damaged_store_is_named_in_the_error(db: Path) -> None:
    with MatchStore(db) as store:
        match = store.start_match(("Ann", "Bob"), 7)
        play(store, match, random.Random(2), limit=300)
    connection = sqlite3.connect(db)
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    page_size = connection.execute("PRAGMA page_size").fetchone()[0]
    connection.close()
    data = bytearray(db.read_bytes())
    assert len(data) > 4 * page_size
    # Scribble over the b-tree page headers of a few pages past the schema page.
    for page in (2, 3, 4):
        data[page_size * (page - 1) : page_size * (page - 1) + 12] = b"\xff" * 12
    db.write_bytes(bytes(data))
    with pytest.raises(NotAStoreError, match=f"{db}: .*damaged"):
        MatchStore(db)


def test_a_missing_store_is_not_made_when_asked_not_to(tmp_path: Path) -> None:
    path = tmp_path / "nowhere" / "matches.sqlite3"
    with pytest.raises(StoreError, match=f"{path}: no match store there"):
        MatchStore(path, create=False)
    assert not path.parent.exists()


def test_a_store_the_replay_disagrees_with_is_reported(db: Path) -> None:
    with MatchStore(db) as store:
        match = store.start_match(("Ann", "Bob"), 5)
        store.record(match, OpeningRoll(3, 1), source="camera")
        store.record(match, Move("8/5 6/5"), source="camera")
    connection = sqlite3.connect(db)
    connection.execute("UPDATE actions SET position = '4HPwATDgc/ABMA' WHERE seq = 2")
    connection.commit()
    connection.close()
    with (
        MatchStore(db) as store,
        pytest.raises(StoreError, match=r"match 1 does not replay at action 2 \(id 2, move\)"),
    ):
        store.state(match)


def test_verify_checks_the_play_text_kept_with_a_move(db: Path) -> None:
    with MatchStore(db) as store:
        match = store.start_match(("Ann", "Bob"), 5)
        store.record(match, OpeningRoll(3, 1), source="camera")
        store.record(match, Move("8/5 6/5"), source="camera")
    connection = sqlite3.connect(db)
    connection.execute("UPDATE actions SET play = '8/4 6/5' WHERE seq = 2")
    connection.commit()
    connection.close()
    with MatchStore(db) as store:
        assert store.state(match).on_roll == 1  # the position still replays...
        with pytest.raises(StoreError, match=r"action 2 \(id 2\).*'8/4 6/5' does not lead to"):
            store.verify(match)  # ...but the record would not say what was played


# -- file names --------------------------------------------------------------------------------


def _summary(players: tuple[str, str], length: int, tags: dict[str, str] | None = None) -> MatchSummary:
    return MatchSummary(
        id=1,
        players=players,
        length=length,
        options=MatchOptions(),
        tags=tags or {},
        started=datetime(2026, 11, 22, 14, 2).astimezone().astimezone(UTC),
        finished=None,
        score=(0, 0),
        games=0,
        actions=0,
        gnubgid="",
    )


def test_file_names_players_like() -> None:
    assert default_file_name(_summary(("Ann", "Bob"), 7), "mat") == "2026-11-22_1402_Ann-vs-Bob_7p.mat"
    assert default_file_name(_summary(("Ann", "Bob"), 0), "sgf") == "2026-11-22_1402_Ann-vs-Bob_money.sgf"
    names = ("Zoë Ødegård", "José María/../etc")
    assert default_file_name(_summary(names, 11), "mat") == "2026-11-22_1402_Zoë_Ødegård-vs-José_María..etc_11p.mat"
    tagged = _summary(("Ann", "Bob"), 5, {"EventDate": "2025.01.31", "EventTime": "09.15"})
    assert default_file_name(tagged, "mat") == "2025-01-31_0915_Ann-vs-Bob_5p.mat"
    with pytest.raises(StoreInputError, match="unknown export format 'txt'"):
        default_file_name(_summary(("Ann", "Bob"), 7), "txt")


@pytest.mark.parametrize(
    ("name", "safe"),
    [("Ann", "Ann"), ("Jean-Luc", "Jean-Luc"), ("a:b*c?", "abc"), ("  ", "player"), ("Ли Вэй", "Ли_Вэй")],
)
def test_file_safe_names(name: str, safe: str) -> None:
    assert file_safe(name) == safe


def test_the_store_default_file_name_uses_the_local_start_time(store: MatchStore) -> None:
    match = store.start_match(("Ann", "Bob"), 7, at=START)
    summary = store.summary(match)
    assert summary.started == START.astimezone(UTC)
    assert default_file_name(summary, "mat") == "2026-11-22_1402_Ann-vs-Bob_7p.mat"


# -- export ------------------------------------------------------------------------------------


def _comparable(actions: tuple[Action, ...]) -> list[Action]:
    """Actions as a .mat file can carry them: no re-rolled opening, no player named in ``by``."""
    out: list[Action] = []
    for action in actions:
        if isinstance(action, OpeningRoll):
            if action.die0 != action.die1:
                out.append(action)
        elif hasattr(action, "by"):
            out.append(replace(action, by=None))  # type: ignore[type-var]
        else:
            out.append(action)
    return out


def test_mat_export_reads_back_to_the_same_record(store: MatchStore) -> None:
    from engine import matfile

    match = store.start_match(("Ann", "Bob"), 7, tags={"Event": "Club night", "Round": "2"})
    play(store, match, random.Random(5), resign_rate=0.0)
    text = store.export(match, "mat")
    assert " 7 point match" in text and '; [Event "Club night"]' in text
    read = matfile.read_mat(text)
    assert list(read.all_problems()) == []
    record = store.record_of(match)
    back = read.record
    assert back.players == record.players and back.length == record.length
    assert back.final_score() == record.final_score()
    assert len(back.games) == len(record.games)
    for ours, theirs in zip(record.games, back.games, strict=True):
        assert theirs.score == ours.score
        assert theirs.result == ours.result
        assert _comparable(theirs.actions) == _comparable(ours.actions)


def test_sgf_export(store: MatchStore) -> None:
    match = store.start_match(("Ann", "Bob"), 5)
    play(store, match, random.Random(8))
    text = store.export(match, "sgf")
    record = store.record_of(match)
    trees = text.split("(;")[1:]
    assert len(trees) == len(record.games) >= 2
    for tree, game in zip(trees, record.games, strict=True):
        assert tree.startswith("FF[4]GM[6]") and "PW[Ann]PB[Bob]" in tree
        result = game.result
        assert result is not None
        resigned = "R" if result.end is GameEnd.RESIGNED else ""
        assert f"RE[{'WB'[result.winner]}+{result.points}{resigned}]" in tree
        # One node per roll and play (a dance is the dice alone), one per double.
        assert len(re.findall(r";[WB]\[\d\d", tree)) == sum(isinstance(a, Move) for a in game.actions)
        assert len(re.findall(r";[WB]\[double\]", tree)) == sum(isinstance(a, Double) for a in game.actions)


def test_export_refuses_an_unknown_format(store: MatchStore) -> None:
    match = store.start_match(("Ann", "Bob"), 5)
    with pytest.raises(StoreInputError, match="unknown export format 'pdf'"):
        store.export(match, "pdf")


def test_a_damaged_store_is_named_in_one_line_with_what_to_do(tmp_path: Path) -> None:
    path = tmp_path / "damaged.sqlite3"
    with MatchStore(path) as store:
        match = store.start_match(("Ann", "Bob"), 5)
        store.record(match, OpeningRoll(3, 1), source="button")
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = bytearray(path.read_bytes())
    data[4096 + 8 : 4096 + 200] = b"\xff" * 192  # page 2's cells
    path.write_bytes(bytes(data))
    with pytest.raises(NotAStoreError) as caught:
        MatchStore(path, create=False)
    message = str(caught.value)
    assert "the match store is damaged: " in message and "\n" not in message
    assert "move it aside to start a new store" in message and ".recover" in message


def test_a_version_1_store_is_upgraded_with_the_outbox_and_keeps_its_matches(db: Path) -> None:
    with MatchStore(db) as store:
        match = store.start_match(("Ann", "Bob"), 3)
        store.record(match, OpeningRoll(3, 1), source="camera")
    connection = sqlite3.connect(db)
    connection.execute("DROP TABLE outbox")
    connection.execute("DROP TABLE outbox_matches")
    connection.execute("PRAGMA user_version = 1")
    connection.commit()
    connection.close()
    with MatchStore(db) as store:
        assert store.schema_version == SCHEMA_VERSION
        Outbox(store, "t1").add_match(match)
        assert Outbox(store, "t1").fill() == 1
        assert [m["kind"] for m in Outbox(store, "t1").pending()] == ["opening_roll"]


def test_the_outbox_numbers_each_tables_actions_in_order_and_keeps_the_acks(db: Path) -> None:
    with MatchStore(db) as store:
        first = store.start_match(("Ann", "Bob"), 3)
        store.record(first, OpeningRoll(3, 1), source="camera")
        Outbox(store, "t1").add_match(first)
        store.record(first, Move("8/5 6/5"), source="camera", confidence=0.9)
        assert Outbox(store, "t1").fill() == 2
        assert Outbox(store, "t1").fill() == 0
        store.undo(first, source="button")
        second = store.start_match(("Cy", "Di"), 1)
        Outbox(store, "t1").add_match(second)
        store.record(second, OpeningRoll(6, 5), source="camera")
        assert Outbox(store, "t1").fill() == 2
        pending = Outbox(store, "t1").pending()
        assert [(m["seq"], m["kind"], m["match"]) for m in pending] == [
            (1, "opening_roll", first),
            (2, "move", first),
            (3, "undo", first),
            (4, "opening_roll", second),
        ]
        assert pending[1]["play"] == "8/5 6/5" and pending[1]["players"] == ["Ann", "Bob"]
        assert pending[0]["dice"] == [3, 1] and pending[3]["match_seq"] == 1
        Outbox(store, "t1").acked([1, 2])
        assert [m["seq"] for m in Outbox(store, "t1").pending()] == [3, 4]
        assert [m["seq"] for m in Outbox(store, "t1").pending(after=3)] == [4]
        assert Outbox(store, "t1").counts() == (4, 2)
        assert Outbox(store, "t1").resend(2) == 1
        assert [m["seq"] for m in Outbox(store, "t1").pending()] == [2, 3, 4]
    # The acknowledgements survive reopening the store: what the broker has is not sent again.
    with MatchStore(db) as store:
        assert Outbox(store, "t1").counts() == (4, 1)
        assert Outbox(store, "t2").pending() == []


def test_a_frame_is_kept_with_the_latest_standing_action_and_a_version_1_store_gains_the_table(
    tmp_path: Path,
) -> None:
    path = tmp_path / "frames.sqlite3"
    with MatchStore(path) as store:
        match = store.start_match(("Ann", "Bob"), 3)
        assert store.keep_frame(match, b"\xff\xd8jpeg") is None  # nothing recorded yet
        store.record(match, OpeningRoll(3, 1), source="camera")
        moved = store.record(match, Move("8/5 6/5", by=0), source="camera")
        assert store.keep_frame(match, b"\xff\xd8first") == moved.id
        store.undo(match, source="button")
        # After the take-back the frame goes with the opening roll, the action that stands.
        roll = store.actions(match)[0]
        assert store.keep_frame(match, b"\xff\xd8second") == roll.id
        assert store.frame(moved.id) == b"\xff\xd8first"
        assert store.framed_actions(match) == {moved.id, roll.id}
    # An older store (version 1, no frames table) is upgraded when opened for writing only.
    connection = sqlite3.connect(path)
    connection.execute("DROP TABLE frames")
    connection.execute("DROP TABLE analyses")
    connection.execute("PRAGMA user_version = 1")
    connection.commit()
    connection.close()
    with MatchStore(path, create=False) as reader:
        assert reader.schema_version == 1 and reader.frame(moved.id) is None
        assert reader.keep_frame(match, b"\xff\xd8x") is None
    with MatchStore(path) as writer:
        assert writer.schema_version == SCHEMA_VERSION
        assert writer.keep_frame(match, b"\xff\xd8y") == roll.id
        assert len(writer.actions(match)) == 1
