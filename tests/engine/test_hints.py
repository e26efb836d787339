# SPDX-License-Identifier: MIT
"""Hints from the real GNU Backgammon program (``engine.hints.GnubgHints``).

The long-lived gnubg process must give, for varied positions and rolls, the same best play and
the same cube action as gnubg's own ``hint`` in a separate fresh ``gnubg -t -q -r`` run; the
plays it names must be legal; a killed process is restarted; a slow answer is a timeout.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import replace

import pytest

from engine.cube import Cube
from engine.dice import Dice
from engine.hints import (
    BAD,
    DOUBTFUL,
    INSTALL_HINT,
    VERY_BAD,
    GnubgHints,
    GnubgNotFoundError,
    HintError,
    HintTimeoutError,
    find_gnubg,
    parse_cube_hint,
    parse_hint_plays,
    skill,
)
from engine.match import Double, MatchOptions, MatchState, Move, OpeningRoll, Phase, Roll
from engine.play import Play
from engine.position import Position

pytestmark = pytest.mark.oracle


def _gnubg() -> str:
    program = find_gnubg()
    if program is None:
        pytest.fail(INSTALL_HINT)
    return program


@pytest.fixture(scope="module")
def hints() -> Iterator[GnubgHints]:
    _gnubg()
    engine = GnubgHints(timeout=60.0)
    yield engine
    engine.close()


def _money(mover: dict[int, int], opponent: dict[int, int], dice: tuple[int, int] | None = None) -> MatchState:
    phase = Phase.ROLL if dice is None else Phase.MOVE
    roll = None if dice is None else Dice(*dice)
    return MatchState(0, on_roll=0, phase=phase, dice=roll, position=Position.from_points(mover, opponent))


def _played(*actions: OpeningRoll | Roll | Move | Double, length: int = 0) -> MatchState:
    state = MatchState.new_match(length) if length else MatchState.new_money_session()
    for action in actions:
        state = state.apply(action)
    return state


START = {6: 5, 8: 3, 13: 5, 24: 2}

#: Positions with the roll to play: (what it shows, the state).
PLAY_CASES: list[tuple[str, MatchState]] = [
    ("opening 31, player 0", _played(OpeningRoll(3, 1))),
    ("opening 31, player 1", _played(OpeningRoll(1, 3))),
    ("opening 62 in a 5-point match", _played(OpeningRoll(6, 2), length=5)),
    ("opening 54", _played(OpeningRoll(4, 5))),
    ("opening 21 in a 7-point match", _played(OpeningRoll(2, 1), length=7)),
    ("66 at the start", _money(START, START, (6, 6))),
    (
        "a hit: 64 after the opening 21 slot",
        _played(OpeningRoll(2, 1), Move(Play.parse("13/11 6/5")), Roll(Dice(6, 4))),
    ),
    (
        "bar entry against a 3-point board",
        _money({25: 1, 13: 6, 8: 3, 6: 5}, {1: 2, 2: 2, 4: 2, 6: 3, 13: 4, 24: 2}, (5, 3)),
    ),
    ("two on the bar with 44", _money({25: 2, 13: 5, 8: 3, 6: 5}, {1: 2, 3: 2, 6: 5, 8: 2, 13: 4}, (4, 4))),
    ("bear-off with gaps", _money({6: 2, 5: 1, 3: 3, 2: 2, 1: 1}, {1: 3, 2: 3, 3: 3, 17: 2, 18: 2}, (6, 4))),
    ("bear-off, the last two", _money({2: 1, 1: 1}, {4: 5, 5: 5, 6: 5}, (2, 1))),
    ("race with 55", _money({8: 3, 7: 4, 6: 4, 5: 2, 4: 2}, {8: 2, 7: 4, 6: 4, 5: 3, 3: 2}, (5, 5))),
    # Contact positions met in a real match from the corpus (bglab, lasse/match10013413.txt).
    ("corpus: game 1, 11 to play", MatchState.from_gnubg_id("OHeDQRBjzsgBIQ:MIGkAAAAAAAE")),
    ("corpus: game 2, 42 to play", MatchState.from_gnubg_id("4O1ggFg2O1MGAA:EQGqABAAAAAE")),
    ("corpus: game 2, 65 to play", MatchState.from_gnubg_id("7hsAAIDdFgLBAQ:UQm3ABAAAAAE")),
    ("corpus: game 2, 54 to play", MatchState.from_gnubg_id("HQAAArbtFgABAA:UYmyABAAAAAE")),
]

#: Positions before the roll: (what it shows, the state).
CUBE_CASES: list[tuple[str, MatchState]] = [
    ("the start: no double", _money(START, START)),
    ("a close race: double, take", _money({6: 3, 5: 3, 4: 3, 3: 2, 2: 2, 1: 2}, {6: 3, 5: 3, 4: 3, 3: 3, 2: 2, 1: 1})),
    (
        "a long race lead: double, pass",
        _money({6: 2, 5: 2, 4: 2, 3: 2, 2: 2, 1: 2}, {6: 4, 5: 3, 4: 3, 3: 3, 2: 1, 1: 1}),
    ),
    ("a sure gammon: too good", _money({1: 2}, {6: 5, 5: 5, 4: 5})),
    (
        "a redouble",
        replace(_money({6: 3, 5: 3, 4: 3, 3: 2, 2: 2, 1: 2}, {6: 3, 5: 3, 4: 3, 3: 3, 2: 2, 1: 1}), cube=Cube(2, 0)),
    ),
    ("corpus: 5-point match, 1-0", MatchState.from_gnubg_id("hnPwESDgc/AAaA:cAmgABAAAAAE")),
    (
        "a 5-point match at 2-1",
        MatchState(
            5,
            score=(2, 1),
            on_roll=0,
            phase=Phase.ROLL,
            position=Position.from_points({6: 3, 5: 3, 4: 3, 3: 2, 2: 2, 1: 2}, {6: 3, 5: 3, 4: 3, 3: 3, 2: 2, 1: 1}),
            options=MatchOptions(crawford=True),
        ),
    ),
]

_SCRIPT_SETUP = [
    "set sound enable off",
    "set player 0 human",
    "set player 1 human",
    "set beavers 0",
    "set evaluation chequerplay evaluation plies 0",
    "set evaluation cubedecision evaluation plies 0",
]


def _fresh_gnubg(blocks: list[list[str]]) -> list[str]:
    """Run one fresh gnubg on blocks of commands; what it printed for each block."""
    script = list(_SCRIPT_SETUP)
    for n, block in enumerate(blocks):
        script += [*block, f"end-of-case-{n}"]
    done = subprocess.run(
        ["stdbuf", "-oL", "-eL", _gnubg(), "-t", "-q", "-r"],
        input="\n".join(script) + "\n",
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=300,
        check=False,
        env=dict(os.environ, LC_ALL="C.UTF-8"),
    )
    chunks = re.split(r"Unknown keyword `end-of-case-\d+'\.", done.stdout)
    assert len(chunks) == len(blocks) + 1, done.stdout[-2000:]
    return chunks[: len(blocks)]


def _own_best(text: str) -> tuple[str, float] | None:
    """The first play of gnubg's hint list and its equity; ``None`` for no legal moves."""
    if "There are no legal moves." in text:
        return None
    found = re.search(r"^\s*1\.\s+Cubeful 0-ply\s+(.+?)\s+Eq\.:\s+([+-]\d+\.\d+)", text, re.MULTILINE)
    assert found, text[-1500:]
    return found.group(1), float(found.group(2))


def test_the_opening_31_is_8_5_6_5_for_either_player(hints: GnubgHints) -> None:
    for state in (PLAY_CASES[0][1], PLAY_CASES[1][1]):
        assert state.on_roll in (0, 1)
        best = hints.plays(state)[0]
        assert str(best.play) == "8/5 6/5"
        assert best.error == 0.0
        assert best.after == Position.from_points({8: 2, 5: 2, 6: 4, 13: 5, 24: 2}, START)
    assert {PLAY_CASES[0][1].on_roll, PLAY_CASES[1][1].on_roll} == {0, 1}
    assert str(hints.plays(Position.STARTING, Dice(3, 1), n=1)[0].play) == "8/5 6/5"


def test_the_best_play_is_gnubgs_own_hint_for_varied_positions(hints: GnubgHints) -> None:
    blocks = []
    for _, state in PLAY_CASES:
        assert state.dice is not None
        blocks.append([f"set gnubgid {state.gnubg_id()}", f"set dice {state.dice.first} {state.dice.second}", "hint 1"])
    own = _fresh_gnubg(blocks)
    for (name, state), text in zip(PLAY_CASES, own, strict=True):
        assert state.dice is not None
        ours = hints.plays(state, n=10)
        expected = _own_best(text)
        assert expected is not None, name
        assert ours[0].play == state.legal_plays().parse(expected[0])[1], name
        assert ours[0].equity == pytest.approx(expected[1], abs=1e-9), name
        legal = state.legal_plays()
        assert all(p.play in legal and legal.play_for(p.after) == p.play for p in ours), name
        assert len(ours) == min(10, len(legal)), name


def test_no_legal_play_is_an_empty_list_as_gnubg_says(hints: GnubgHints) -> None:
    dance = _money({25: 1, 13: 14}, {1: 2, 2: 2, 3: 2, 4: 2, 5: 2, 6: 2, 13: 3}, (6, 5))
    assert not dance.legal_plays()
    assert hints.plays(dance) == []
    (text,) = _fresh_gnubg([[f"set gnubgid {dance.gnubg_id()}", "hint"]])
    assert _own_best(text) is None


def test_equities_fall_and_errors_are_the_equity_lost(hints: GnubgHints) -> None:
    for name, state in PLAY_CASES:
        plays = hints.plays(state, n=8)
        equities = [p.equity for p in plays]
        assert equities == sorted(equities, reverse=True), name
        assert plays[0].error == 0.0, name
        for p in plays:
            assert p.error >= 0, name
            assert p.error == pytest.approx(plays[0].equity - p.equity, abs=0.0015), name
            assert p.chances is not None and 0 <= p.chances.win <= 1, name
            assert p.chances.win + p.chances.lose == pytest.approx(1, abs=0.002), name
            assert p.ply == 0, name


def test_a_2_ply_hint_is_evaluated_at_2_ply(hints: GnubgHints) -> None:
    state = PLAY_CASES[2][1]  # opening 62
    plays = hints.plays(state, ply=2, n=3)
    assert plays[0].ply == 2
    assert str(plays[0].play) == "24/18 13/11"
    assert all(p.error >= 0 for p in plays)
    # The depth goes back to 0 for the next request.
    assert hints.plays(state, n=1)[0].ply == 0


def test_cube_advice_is_gnubgs_own(hints: GnubgHints) -> None:
    own = _fresh_gnubg([[f"set gnubgid {state.gnubg_id()}", "hint"] for _, state in CUBE_CASES])
    seen = {}
    for (name, state), text in zip(CUBE_CASES, own, strict=True):
        ours = hints.cube(state)
        theirs = parse_cube_hint(text)
        proper = re.search(r"Proper cube action: (.*)", text)
        assert proper is not None, name
        assert proper.group(1).startswith(ours.action), name
        assert (ours.no_double, ours.double_take, ours.double_pass) == (
            theirs.no_double,
            theirs.double_take,
            theirs.double_pass,
        ), name
        seen[name] = ours
    start = seen["the start: no double"]
    assert (start.double, start.take, start.too_good) == (False, True, False)
    close = seen["a close race: double, take"]
    assert (close.double, close.take, close.action) == (True, True, "Double, take")
    lead = seen["a long race lead: double, pass"]
    assert (lead.double, lead.take, lead.action) == (True, False, "Double, pass")
    gammon = seen["a sure gammon: too good"]
    assert (gammon.double, gammon.too_good, gammon.take) == (False, True, False)
    assert gammon.action.startswith("Too good")
    assert seen["a redouble"].action.startswith("No redouble")


def test_a_double_on_offer_gets_the_same_advice_as_before_it(hints: GnubgHints) -> None:
    before = CUBE_CASES[2][1]
    doubled = before.apply(Double())
    assert doubled.phase is Phase.DOUBLED
    assert hints.cube(doubled) == hints.cube(before)


def test_no_cube_advice_when_the_cube_is_not_available(hints: GnubgHints) -> None:
    rolled = PLAY_CASES[0][1]
    with pytest.raises(HintError, match="no cube decision"):
        hints.cube(rolled)
    theirs = replace(CUBE_CASES[1][1], cube=Cube(2, 1))
    with pytest.raises(HintError, match="cannot double"):
        hints.cube(theirs)


def test_a_2_ply_cube_hint(hints: GnubgHints) -> None:
    advice = hints.cube(CUBE_CASES[0][1], ply=2)
    assert advice.ply == 2
    assert not advice.double


def test_a_hint_that_is_not_a_legal_play_is_an_error() -> None:
    text = (
        "    1. Cubeful 0-ply    8/2 6/5                      Eq.: +0.218\n"
        "       0.551 0.174 0.013 - 0.449 0.124 0.005\n"
    )
    with pytest.raises(HintError, match="not a legal play"):
        parse_hint_plays(text, Position.STARTING, Dice(3, 1))
    with pytest.raises(HintError, match="no legal play"):
        parse_hint_plays("There are no legal moves.\n", Position.STARTING, Dice(3, 1))
    with pytest.raises(HintError, match="no plays"):
        parse_hint_plays("Illegal or malformed position ID.\n", Position.STARTING, Dice(3, 1))
    with pytest.raises(HintError, match="no cube analysis"):
        parse_cube_hint("You cannot double.\n")


def test_skill_labels_follow_gnubg() -> None:
    assert [skill(e) for e in (0.0, 0.03, 0.031, 0.061, 0.121)] == ["", "", "doubtful", "bad", "very bad"]


def test_skill_labels_are_gnubgs_analysis_thresholds() -> None:
    """One scale, gnubg's: teach mode's labels use the thresholds gnubg's analysis marks with."""
    import re
    import subprocess

    program = find_gnubg()
    assert program is not None, INSTALL_HINT
    shown = subprocess.run(
        [program, "-t", "-q"], input="show analysis\n", capture_output=True, text=True, timeout=60, check=False
    ).stdout
    thresholds = {
        name: float(value) for value, name in re.findall(r"^\s+-(\d\.\d+) (doubtful|bad|very bad)$", shown, re.M)
    }
    assert thresholds == {"doubtful": DOUBTFUL, "bad": BAD, "very bad": VERY_BAD}


def test_a_killed_gnubg_is_restarted(hints: GnubgHints) -> None:
    state = PLAY_CASES[0][1]
    hints.plays(state)
    first = hints.pid
    assert first is not None
    os.kill(first, signal.SIGKILL)
    # At once, before anything noticed the death: the request still gets its answer.
    assert str(hints.plays(state)[0].play) == "8/5 6/5"
    second = hints.pid
    assert second is not None and second != first
    os.kill(second, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while hints.pid is not None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert str(hints.plays(state)[0].play) == "8/5 6/5"
    assert hints.pid not in (None, first, second)


def test_a_slow_answer_is_a_timeout_and_the_next_request_restarts() -> None:
    _gnubg()
    with GnubgHints(timeout=0.001) as slow:
        slow.start()
        assert slow.start_seconds is not None and slow.start_seconds > 0
        with pytest.raises(HintTimeoutError, match="no answer within"):
            slow.plays(PLAY_CASES[3][1], ply=2)
        assert slow.pid is None
        slow.timeout = 60.0
        assert slow.plays(PLAY_CASES[0][1])[0].play == Play.parse("8/5 6/5")
        assert slow.starts == 2


def test_without_gnubg_the_error_says_how_to_install_it() -> None:
    missing = GnubgHints("/nonexistent/gnubg")  # no error yet: nothing starts before a request
    with pytest.raises(GnubgNotFoundError, match="apt-get install gnubg"):
        missing.plays(Position.STARTING, Dice(3, 1))
    with pytest.raises(HintError, match="apt-get install gnubg"):
        missing.cube(CUBE_CASES[0][1])


def test_threads_may_share_one_engine(hints: GnubgHints) -> None:
    cases = PLAY_CASES[:8]
    expected = [hints.plays(state, n=1)[0].play for _, state in cases]
    results: dict[int, list[Play]] = {}

    def work(k: int) -> None:
        results[k] = [hints.plays(state, n=1)[0].play for _, state in cases]

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert results == {k: expected for k in range(4)}


def test_a_position_needs_dice_and_the_depth_is_checked(hints: GnubgHints) -> None:
    with pytest.raises(HintError, match="which roll"):
        hints.plays(Position.STARTING)
    with pytest.raises(HintError, match="which roll"):
        hints.plays(CUBE_CASES[0][1])
    with pytest.raises(ValueError, match="depth"):
        hints.plays(Position.STARTING, Dice(3, 1), ply=9)
