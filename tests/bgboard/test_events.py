# SPDX-License-Identifier: MIT
"""The table's event stream and its sinks: the console in words, JSON Lines, the store."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from rendered_table import STEP, move_frames, opening_frames, save_profile

from bgboard.config import Config
from bgboard.events import (
    Event,
    JsonLinesSink,
    LedsLit,
    Notice,
    Players,
    Sinks,
    StoreSink,
    TextSink,
    console_sink,
    frame_clock,
)
from bgboard.store import MatchStore
from bgboard.table import Table
from engine.dice import Dice
from engine.match import OpeningRoll, Roll
from hardware.scene import ILLEGAL, Scene
from hardware.terminal import render

#: Keys every JSON line has, whichever command printed it.
COMMON = {"event", "text", "t"}


def test_every_event_has_the_common_keys_and_its_own_fields() -> None:
    events = [
        Event("roll", "Ann rolled 5-2", {"dice": [5, 2]}, Roll(Dice(5, 2)), "camera", 0.98765, t=3.0),
        Event("please-check", "please check", {"points": [13]}, verdict="check"),
        Players("players", "Ann rolls 5-2", {"dice": [5, 2]}, t=2.8),
        Notice("summary", "1 move", {"moves": 1}, console="\n1 move"),
        LedsLit("leds", "the LEDs show status red", {"lit": {"status": "red"}}, scene=Scene()),
    ]
    for event in events:
        line = event.to_json()
        assert set(line) >= COMMON and line["event"] == event.kind and line["text"] == event.text
        assert set(event.fields) <= set(line)
    assert events[0].to_json() == {
        "event": "roll",
        "text": "Ann rolled 5-2",
        "dice": [5, 2],
        "action": "Roll",
        "source": "camera",
        "confidence": 0.9877,
        "t": 3.0,
    }
    # The scene is the console's to draw; JSON says the lights in words.
    assert "scene" not in events[-1].to_json()


def test_an_event_is_stamped_once() -> None:
    event = Event("roll", "rolled")
    assert event.at(None) is event and event.at(1.5).t == 1.5
    assert event.at(1.5).at(9.0).t == 1.5
    assert isinstance(Players("players", "rolls").at(2.0), Players)


def test_the_console_says_each_kind_of_event_in_its_own_way() -> None:
    out = io.StringIO()
    sink = TextSink(out, stamp=frame_clock(7, 1))
    sink(Event("roll", "Ann rolled 5-2", t=3.0))
    sink(Players("players", "Bob plays 13/8", t=3.2))
    sink(Notice("exported", "match written to m.mat", console="match store: s\nmatch written to m.mat"))
    sink(Notice("summary", "1 move"))
    scene = Scene({"point.24": ILLEGAL})
    sink(LedsLit("leds", "the LEDs show point.24", t=4.0, scene=scene))
    board = "\n".join(render(scene, colour=False))
    assert out.getvalue() == (
        f"    3.0s  Ann rolled 5-2\n  * Bob plays 13/8\nmatch store: s\nmatch written to m.mat\n1 move\n{board}\n\n"
    )


def test_the_referees_console_stamps_the_time_of_day() -> None:
    out = io.StringIO()
    console_sink(out)(Event("started", "started match 1"))
    stamp, text = out.getvalue().rstrip("\n").split("  ", 1)
    assert text == "started match 1" and len(stamp) == 8 and stamp[2] == stamp[5] == ":"


def test_sinks_deliver_in_order_and_can_be_added_and_removed() -> None:
    got: list[tuple[str, str]] = []

    def first(event: Event) -> None:
        got.append(("first", event.kind))

    def second(event: Event) -> None:
        got.append(("second", event.kind))

    sinks = Sinks(first)
    sinks(Event("roll", "a"))
    sinks.add(second)
    sinks(Event("move", "b"))
    sinks.remove(first)
    sinks(Event("undo", "c"))
    assert got == [("first", "roll"), ("first", "move"), ("second", "move"), ("second", "undo")]
    assert list(sinks) == [second] and len(sinks) == 1
    with pytest.raises(ValueError):
        sinks.remove(first)


def test_a_failing_sink_stops_the_delivery_and_the_error_is_seen() -> None:
    got: list[Event] = []

    def refuse(event: Event) -> None:
        raise RuntimeError("the disk is full")

    sinks = Sinks(refuse, got.append)
    with pytest.raises(RuntimeError, match="disk is full"):
        sinks(Event("move", "played"))
    assert got == []


def test_the_store_sink_records_actions_and_skips_the_rest() -> None:
    with MatchStore(":memory:") as store:
        match = store.start_match(["Ann", "Bob"], 5)
        sink = StoreSink(store, match)
        sink(Event("started", "started"))
        sink(Event("opening-roll", "opening roll 5-2", action=OpeningRoll(5, 2), source="camera", confidence=0.9))
        sink(Players("players", "Ann plays 13/8 13/11"))
        (stored,) = store.actions(match)
        assert stored.action == OpeningRoll(5, 2) and stored.source == "camera"


# -- one stream, two consoles -------------------------------------------------------------------


@pytest.fixture(scope="module")
def profile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return save_profile(tmp_path_factory.mktemp("profile") / "board.toml")


def test_the_text_and_the_json_console_get_the_same_events(profile: Path) -> None:
    """One table, both consoles on its stream: line for line the same events, in the same order."""
    config = Config().with_overrides(camera_profile=str(profile), match_players="Ann,Bob", match_length="5")
    text, lines = io.StringIO(), io.StringIO()
    with MatchStore(":memory:") as store:
        match = store.start_match(["Ann", "Bob"], 5)
        table = Table.from_config(
            config,
            store=store,
            match_id=match,
            sinks=[TextSink(text, stamp=frame_clock(8, 2)), JsonLinesSink(lines)],
        )
        for n, image in enumerate(opening_frames() + move_frames()):
            table.feed(image, n * STEP)
        table.say(Event("stopped", "stopped"), 5.0)
        assert [a.action.__class__.__name__ for a in store.actions(match)] == ["OpeningRoll", "Move"]
    said = [line.split("s  ", 1) for line in text.getvalue().splitlines()]
    printed: list[dict[str, Any]] = [json.loads(line) for line in lines.getvalue().splitlines()]
    assert [e["event"] for e in printed] == ["opening-roll", "move", "stopped"]
    assert [words for _, words in said] == [e["text"] for e in printed]
    assert [float(stamp) for stamp, _ in said] == [e["t"] for e in printed]
    assert all(set(e) >= COMMON for e in printed)
