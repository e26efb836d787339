# SPDX-License-Identifier: MIT
"""Playing against gnubg at the board.

- The controller's side (a pure state machine): it asks for gnubg's decisions, lights gnubg's
  move, records only that move, marks where a board differs, and records gnubg's cube actions
  and resignations.
- The whole table over rendered frames with the real gnubg (``bgboard play``'s referee and
  ``bgboard demo --against gnubg``): a person first moves gnubg's checkers wrong, is told where
  by the red lights, and sets them right.
"""

from __future__ import annotations

import io
import json
import threading
from pathlib import Path

import pytest
from rendered_table import START, Cameras, FakeCamera, frame, make_referee, moved, opening_frames
from test_controller import ROLL_31, after, kinds, reading_of

from bgboard.cli import main
from bgboard.config import Config
from bgboard.controller import Controller
from bgboard.store import MatchStore
from bgboard.web.hub import WebHub
from engine.dice import Dice
from engine.hints import INSTALL_HINT, find_gnubg
from engine.match import (
    AcceptResign,
    Double,
    MatchState,
    Move,
    OpeningRoll,
    Phase,
    RejectResign,
    Resign,
    Roll,
    Take,
)
from engine.matfile import read_mat
from engine.play import Play
from hardware import scene as sc
from hardware.panels import FakeLedPanel
from hardware.presenter import present

pytestmark = pytest.mark.usefixtures("referee_threads_end")


@pytest.fixture
def gnubgs_turn() -> MatchState:
    """Engine player 1 (seat 1) won the opening roll with 3-1; gnubg plays him."""
    return MatchState.new_match(5).apply(OpeningRoll(1, 3))


def wanted(c: Controller) -> list[str]:
    """What the controller asked gnubg for since the last look."""
    return [str(r.fields["wanted"]) for r in c.take_requests() if r.kind == "gnubg"]


def asked(c: Controller) -> list[str]:
    """The kinds of the requests the controller made since the last look."""
    return [r.kind for r in c.take_requests()]


# -- the controller ---------------------------------------------------------------------------


def test_gnubg_is_asked_once_for_its_move_and_its_move_is_lit(gnubgs_turn: MatchState) -> None:
    c = Controller(gnubgs_turn, gnubg=1, names=("Ann", "gnubg"))
    before = reading_of(gnubgs_turn.position, 1, dice=ROLL_31)
    assert c.on_reading(before, 0.0) == []
    [request] = c.take_requests()
    assert request.kind == "gnubg" and request.fields["wanted"] == "move"
    assert request.fields["gnubgid"] == gnubgs_turn.gnubg_id() and request.fields["may_resign"] is True
    c.on_reading(before, 0.2)
    c.on_tick(0.4)
    assert wanted(c) == []  # asked once per state
    events = c.on_gnubg_move(gnubgs_turn.gnubg_id(), Play.parse("8/5 6/5"), 0.5)
    assert kinds(events) == ["gnubg-move"]
    assert events[0].text == "gnubg plays 8/5 6/5: move its checkers as the lights show"
    assert c.gnubg_move == Play.parse("8/5 6/5")
    # Lit as a hint is: from-points blue, to-points blinking green.
    assert c.scene() == present(gnubgs_turn, hint=Play.parse("8/5 6/5"))
    assert c.scene()["point.8"] == sc.HINT_FROM and c.scene()["point.5"] == sc.HINT_TO
    # An answer for another state is ignored.
    assert c.on_gnubg_move("4HPwATDgc/ABMA:cAkAAAAAAAAA", Play.parse("24/21 6/5"), 0.6) == []


def test_the_live_page_draws_gnubgs_move_to_make(gnubgs_turn: MatchState) -> None:
    c = Controller(gnubgs_turn, gnubg=1, names=("Ann", "gnubg"))
    hub = WebHub(("Ann", "gnubg"))
    hub.follow_controller(c)
    assert hub.state()["hint"] is None
    for event in c.on_gnubg_move(gnubgs_turn.gnubg_id(), Play.parse("8/5 6/5"), 0.1):
        hub(event.at(0.1))
    hint = hub.state()["hint"]
    assert hint["gnubg"] is True and hint["play"] == "8/5 6/5" and len(hint["arrows"]) == 2


def test_another_move_is_marked_and_only_gnubgs_is_recorded(gnubgs_turn: MatchState) -> None:
    c = Controller(gnubgs_turn, gnubg=1, names=("Ann", "gnubg"))
    c.on_reading(reading_of(gnubgs_turn.position, 1, dice=ROLL_31), 0.0)
    c.on_gnubg_move(gnubgs_turn.gnubg_id(), Play.parse("8/5 6/5"), 0.1)
    # The person moves 13/10 6/5 instead, a legal play of 3-1 but not gnubg's.
    wrong = reading_of(after(gnubgs_turn, "13/10 6/5"), 1)
    events = c.on_reading(wrong, 1.0) + c.on_tick(2.0)
    assert kinds(events) == ["not-gnubgs-move"]
    assert "it plays 8/5 6/5" in events[0].text and events[0].verdict == "illegal"
    assert c.state == gnubgs_turn  # nothing recorded
    judgement = c.judgement
    assert judgement is not None and set(judgement.marks) == {13, 10, 8, 5}
    scene = c.scene()
    assert all(scene[f"point.{p}"] == sc.ILLEGAL for p in (13, 10))
    assert scene["status"] == sc.ILLEGAL
    # Said as a correction it is refused too; "done" does not record it.
    refused = c.on_command("correct 13/10 6/5", 2.1)
    assert kinds(refused) == ["refused"] and "gnubg plays 8/5 6/5" in refused[0].text
    assert kinds(c.on_button("done", 2.2)) == ["not-gnubgs-move"]
    # Set right: the red lights go, and the move is recorded.
    right = reading_of(after(gnubgs_turn, "8/5 6/5"), 1)
    events = c.on_reading(right, 3.0)
    assert kinds(events) == ["legal-now"] and events[0].text == "that is gnubg's move now"
    assert c.judgement is None
    events = c.on_tick(4.0)
    assert kinds(events)[0] == "move"
    assert events[0].action == Move(Play.parse("8/5 6/5"), by=1) and events[0].source == "camera"
    # Recorded, it cannot be corrected to another move either.
    refused = c.on_command("correct 13/10 6/5", 4.1)
    assert kinds(refused) == ["refused"] and "gnubg plays 8/5 6/5" in refused[0].text
    assert c.state.on_roll == 0


def test_gnubgs_double_is_recorded_and_lit(gnubgs_turn: MatchState) -> None:
    # Ann (engine 0) is on roll; gnubg plays engine 1 and is asked about the cube after her move.
    state = gnubgs_turn.apply(Move(Play.parse("8/5 6/5"))).apply(Roll(Dice(6, 4)))
    c = Controller(state, gnubg=1, names=("Ann", "gnubg"))
    events = c.on_command("correct 24/18 13/9", 0.0)
    assert kinds(events)[0] == "move"
    [request] = c.take_requests()
    assert request.kind == "gnubg" and request.fields["wanted"] == "double"
    events = c.on_gnubg_double(str(request.fields["gnubgid"]), True, 0.1)
    assert kinds(events) == ["double", "gnubg-cube"]
    assert events[0].source == "gnubg" and isinstance(events[0].action, Double)
    assert c.state.phase is Phase.DOUBLED
    assert "turn the cube to 2 and offer it to Ann" in events[1].text
    assert c.scene() == present(c.state)
    # Ann takes with the button.
    assert kinds(c.on_button("take", 0.2))[0] == "take"
    assert c.state.cube.value == 2 and c.state.cube.owner == 0


def test_no_double_says_roll_for_gnubg(gnubgs_turn: MatchState) -> None:
    state = gnubgs_turn.apply(Move(Play.parse("8/5 6/5"))).apply(Roll(Dice(6, 4)))
    c = Controller(state, gnubg=1, names=("Ann", "gnubg"))
    c.on_command("correct 24/18 13/9", 0.0)
    [request] = c.take_requests()
    events = c.on_gnubg_double(str(request.fields["gnubgid"]), False, 0.1)
    assert kinds(events) == ["gnubg-roll"] and events[0].text == "gnubg does not double: roll the dice for it"
    assert c.state.phase is Phase.ROLL


def test_gnubg_takes_or_drops_a_double(gnubgs_turn: MatchState) -> None:
    state = gnubgs_turn.apply(Move(Play.parse("8/5 6/5")))
    for take in (True, False):
        c = Controller(state, gnubg=1, names=("Ann", "gnubg"))
        events = c.on_button("double", 0.0)
        assert kinds(events)[0] == "double" and wanted(c) == ["take"]
        events = c.on_gnubg_take(c.state.gnubg_id(), take, 0.1)
        assert kinds(events)[0] == ("take" if take else "drop") and events[0].source == "gnubg"
        assert kinds(events)[-1] == "gnubg-cube"
        if take:
            assert isinstance(events[0].action, Take)
            assert c.state.cube.owner == 1 and "put the cube at 2 on its side" in events[-1].text
        else:
            assert c.state.is_over() and "gnubg drops the cube at 2" in events[-1].text


def test_a_refused_resignation_makes_gnubg_play_on(gnubgs_turn: MatchState) -> None:
    c = Controller(gnubgs_turn, gnubg=1, names=("Ann", "gnubg"))
    assert c.ask_gnubg() == []
    [request] = c.take_requests()
    events = c.on_gnubg_resigns(str(request.fields["gnubgid"]), 2, 0.0)
    assert kinds(events) == ["resign", "gnubg-resigns"] and isinstance(events[0].action, Resign)
    assert c.state.phase is Phase.RESIGNED
    events = c.on_command("reject", 0.1)
    assert isinstance(events[0].action, RejectResign)
    # Asked again for its move, now told it may not resign.
    [again] = c.take_requests()
    assert again.fields["wanted"] == "move" and again.fields["may_resign"] is False
    # Nobody resigns, doubles or answers for gnubg.
    for command in ("resign", "double"):
        refused = c.on_command(command, 0.2)
        assert (
            kinds(refused) == ["refused"] and refused[0].text == "gnubg decides its own cube actions and resignations"
        )
    assert c.state.phase is Phase.MOVE


def test_an_accepted_resignation_ends_the_game(gnubgs_turn: MatchState) -> None:
    c = Controller(gnubgs_turn, gnubg=1, names=("Ann", "gnubg"))
    c.on_gnubg_resigns(gnubgs_turn.gnubg_id(), 1, 0.0)
    events = c.on_button("take", 0.1)
    assert isinstance(events[0].action, AcceptResign) and c.state.is_over()


def test_teach_mode_hints_the_persons_moves_only(gnubgs_turn: MatchState) -> None:
    c = Controller(gnubgs_turn, gnubg=1, teach=True)
    c.on_command("teach on", 0.0)
    assert "hint" not in asked(c)
    c.on_gnubg_move(gnubgs_turn.gnubg_id(), Play.parse("8/5 6/5"), 0.1)
    c.on_command("correct 8/5 6/5", 0.2)
    assert "hint" not in asked(c)
    c.on_command("dice 64", 0.3)
    assert "hint" in asked(c)


def test_gnubg_must_be_player_0_or_1() -> None:
    with pytest.raises(ValueError, match="0 or 1"):
        Controller(MatchState.new_match(3), gnubg=2)


# -- at the table, with the real gnubg ----------------------------------------------------------


@pytest.fixture
def needs_gnubg() -> None:
    if find_gnubg() is None:
        pytest.fail(INSTALL_HINT)


@pytest.mark.usefixtures("needs_gnubg")
def test_bgboard_play_over_rendered_frames_a_wrong_move_is_set_right(config: Config) -> None:
    """gnubg plays Ann's side (side 1, the bottom); it wins the opening roll 5-2 and plays
    24/22 13/8 (gnubg 1.07 at 0-ply, 5-point match). The person first moves 13/8 6/4, sees the
    red lights, and sets it right."""
    wrong = moved(START, (13, 8), (6, 4))
    right = moved(START, (24, 22), (13, 8))
    frames = opening_frames()
    frames += [frame(moved(START, (13, 8)), hand=True, seed=40), frame(wrong, hand=True, seed=41)]
    frames += [frame(wrong, seed=42)] * 9
    frames += [frame(moved(wrong, (4, 6)), hand=True, seed=43), frame(right, hand=True, seed=44)]
    frames += [frame(right, seed=45)] * 9
    panel = FakeLedPanel()
    out = io.StringIO()
    referee = make_referee(
        config,
        out=out,
        source_factory=Cameras(FakeCamera("fake:camera", frames)),
        json_lines=True,
        live=False,
        end_with_source=True,
        panel=panel,
        against=("expert", 1),
    )
    assert referee.run(threading.Event()) == 0
    events = [json.loads(line) for line in out.getvalue().splitlines()]
    kinds_seen = [e["event"] for e in events]
    assert "gnubg plays side 1 at level expert (0-ply, no noise)" in [e["text"] for e in events]
    assert [k for k in kinds_seen if k in ("opening-roll", "gnubg-move", "not-gnubgs-move", "legal-now", "move")] == [
        "opening-roll",
        "gnubg-move",
        "not-gnubgs-move",
        "legal-now",
        "move",
    ]
    told = next(e for e in events if e["event"] == "not-gnubgs-move")
    assert told["gnubg"] == "24/22 13/8" and sorted(told["marks"]) == [4, 6, 22, 24]
    # The red lights were shown on the points that differ.
    lit = [dict(scene.items()) for scene in panel.scenes]
    assert any(all(leds.get(f"point.{p}") == sc.ILLEGAL for p in (4, 6, 22, 24)) for leds in lit)
    # And gnubg's move was lit: from 24 and 13 blue, to 22 and 8 green.
    assert any(leds.get("point.24") == sc.HINT_FROM and leds.get("point.22") == sc.HINT_TO for leds in lit)
    assert config.store.path is not None
    with MatchStore(config.store.path, create=False) as store:
        summary = store.last_match()
        assert summary is not None and summary.players[0] == "gnubg"
        actions = store.actions(summary.id)
    assert [a.action for a in actions] == [OpeningRoll(5, 2), Move(Play.parse("24/22 13/8"), by=0)]


def test_bgboard_play_takes_the_referees_options(referee_calls: list[tuple[Config, dict[str, object]]]) -> None:
    out = io.StringIO()
    assert main(["play", "--against", "gnubg", "--level", "beginner", "--side", "2", "--camera", "fake:x"], out) == 0
    assert referee_calls[0][1]["session"].against == ("beginner", 1)
    assert main(["play", "--against", "gnubg", "--camera", "fake:x"], out) == 0
    assert referee_calls[1][1]["session"].against == ("expert", 2)
    assert main(["referee", "--camera", "fake:x"], out) == 0
    assert referee_calls[2][1]["session"].against is None


def test_bgboard_play_takes_one_name_and_leds_none(referee_calls: list[tuple[Config, dict[str, object]]]) -> None:
    # gnubg is the other player: the person's name alone will do, on the person's side.
    assert main(["play", "--against", "gnubg", "--players", "Ann", "--camera", "fake:x"], io.StringIO()) == 0
    assert referee_calls[0][0].match.players == ("Ann", "gnubg")
    assert main(["play", "--against", "gnubg", "--side", "2", "--players", "Ann", "--camera", "fake:x"]) == 0
    assert referee_calls[1][0].match.players == ("gnubg", "Ann")
    # "none", as the demo takes it: no LEDs wired.
    assert main(["play", "--against", "gnubg", "--leds", "none", "--camera", "fake:x"], io.StringIO()) == 0
    assert referee_calls[2][0].leds.panel == "fake"


@pytest.mark.usefixtures("needs_gnubg")
def test_demo_against_gnubg_moves_gnubgs_checkers_wrong_then_right(tmp_path: Path) -> None:
    out = io.StringIO()
    status = main(
        ["demo", "--against", "gnubg", "--leds", "none", "--moves", "8", "--json", "--out", str(tmp_path)], out
    )
    assert status == 0
    events = [json.loads(line) for line in out.getvalue().splitlines()]
    kinds_seen = [e["event"] for e in events]
    assert kinds_seen.count("gnubg-move") >= 4
    told = kinds_seen.index("not-gnubgs-move")
    # After the red lights, the person sets the checkers as lit and that move is recorded.
    shown = next(e for e in reversed(events[:told]) if e["event"] == "gnubg-move")
    recorded = next(e for e in events[told:] if e["event"] == "move")
    assert recorded["play"] == shown["play"]
    summary = next(e for e in events if e["event"] == "summary")
    assert summary["illegal_flagged"] == 1 and summary["moves"]["wrong"] == 0
    mat = next(tmp_path.glob("*.mat"))
    record = read_mat(mat.read_text(encoding="utf-8"), mat.name)
    assert not record.problems and "gnubg" in record.record.players


def test_without_gnubg_a_game_against_it_does_not_start_and_records_nothing(
    config: Config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from bgboard.errors import SetupError

    monkeypatch.setenv("BGBOARD_GNUBG", "/nonexistent/gnubg")
    camera = Cameras(FakeCamera("fake:camera", opening_frames()))
    with pytest.raises(SetupError, match="--against gnubg: /nonexistent/gnubg not found"):
        make_referee(config, out=io.StringIO(), source_factory=camera, live=False, against=("expert", 1))
    with MatchStore(config.store.resolved_path()) as store:
        assert store.matches() == []
    # The demo against gnubg stops at once too, before its game, rather than at the first roll.
    assert main(["demo", "--against", "gnubg", "--leds", "none", "--out", str(tmp_path / "demo")]) == 1
    assert "--against gnubg: /nonexistent/gnubg not found" in capsys.readouterr().err


@pytest.mark.usefixtures("needs_gnubg")
def test_gnubgs_beaver_is_recorded_as_a_beaver_not_a_take() -> None:
    """A money session with beavers: doubled at the very start, gnubg takes and redoubles."""
    from engine.hints import GnubgHints
    from engine.match import Beaver
    from engine.opponent import GnubgOpponent

    state = MatchState.new_money_session(beaver=True)
    state = state.apply(OpeningRoll(3, 1)).apply(Move(Play.parse("8/5 6/5"))).apply(Double())
    with GnubgHints(None) as gnubg:
        assert GnubgOpponent(gnubg, state.turn or 0, "expert").answers_double(state) == "beaver"
    c = Controller(state, gnubg=state.turn, names=("Ann", "gnubg") if state.turn == 1 else ("gnubg", "Ann"))
    events = c.on_gnubg_take(state.gnubg_id(), "beaver", 0.1)
    assert isinstance(events[0].action, Beaver) and events[0].source == "gnubg"
    assert events[-1].fields == {"action": "beaver", "cube": 4, "player": number_of(state.turn)}
    assert c.state.phase is Phase.DOUBLED and c.state.turn != state.turn  # the doubler answers the beaver
    # Where beavers are not allowed, gnubg's beaver is the take it includes.
    plain = MatchState.new_money_session().apply(OpeningRoll(3, 1)).apply(Move(Play.parse("8/5 6/5")))
    plain = plain.apply(Double())
    c = Controller(plain, gnubg=plain.turn)
    assert isinstance(c.on_gnubg_take(plain.gnubg_id(), "beaver", 0.1)[0].action, Take)


def number_of(player: int | None) -> int | None:
    return None if player is None else player + 1
