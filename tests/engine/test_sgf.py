# SPDX-License-Identifier: MIT
"""Writing GNU Backgammon SGF (GM[6]) as gnubg's ``save match`` does."""

from __future__ import annotations

import re

from engine.dice import Dice
from engine.match import AcceptResign, MatchOptions, Move, OpeningRoll, Resign, Roll
from engine.matfile import read_mat
from engine.record import MatchRecorder
from engine.sgf import escape, write_sgf
from tests.engine.test_matcheck import CRAWFORD
from tests.engine.test_matfile import STUDIO, gammon_game


def test_a_game_tree_per_game_with_gnubgs_root_properties() -> None:
    text = write_sgf(read_mat(STUDIO).record)
    assert text.count("(;FF[4]GM[6]CA[UTF-8]AP[") == 1
    root = text.splitlines()[0]
    assert "MI[length:5][game:0][ws:0][bs:0]" in root
    assert "PW[Ann]PB[Bob]" in root
    assert "DT[2024-05-11]" in root and "PC[Backgammon Studio]" in root
    assert "RU[Crawford]" in root
    # Bob (Black) won 2 points: Ann dropped the redouble to 4.
    assert root.endswith("RE[B+2]")
    assert text.endswith(")\n")


def test_plays_and_cube_actions_as_nodes() -> None:
    nodes = write_sgf(read_mat(STUDIO).record).splitlines()[1:]
    assert nodes == [
        ";W[31hefe]",
        ";B[64aglp]",
        ";W[62mkmg]",  # 13/11 13/7*: White's points are letters from a
        ";B[66]",  # a dance
        ";W[44mimifbfb]",
        ";B[52]",
        ";W[21xwxv]",
        ";B[43ydlo]",  # bar/21 13/10 for Black: y is the bar, Black's 21 is White's 4
        ";W[double]",
        ";B[take]",
        ";W[33ififfcfc]",
        ";B[double]",
        ";W[drop])",
    ]


def test_the_crawford_game_is_marked() -> None:
    text = write_sgf(read_mat(CRAWFORD).record)
    rules = re.findall(r"RU\[([^\]]*)\]", text)
    assert rules == ["Crawford", "Crawford", "Crawford:CrawfordGame", "Crawford"]
    assert re.findall(r"MI\[length:3\]\[game:(\d)\]\[ws:(\d)\]\[bs:(\d)\]", text) == [
        ("0", "0", "0"),
        ("1", "1", "0"),
        ("2", "2", "0"),
        ("3", "2", "1"),
    ]


def test_money_play_with_the_jacoby_rule() -> None:
    text = write_sgf(gammon_game(5).record())
    assert "MI[length:0]" in text and "RU[Jacoby]" in text and "RU[Crawford" not in text
    # An undoubled gammon with the Jacoby rule: one point.
    assert re.search(r"RE\[[WB]\+1\]", text)


def test_a_resignation_after_a_roll() -> None:
    recorder = MatchRecorder(("Ann", "Bob"), 3, MatchOptions())
    for action in (OpeningRoll(3, 1), Move("8/5 6/5"), Roll(Dice(2, 1)), Resign(3), AcceptResign()):
        recorder.apply(action)
    text = write_sgf(recorder.record())
    # The resignation is only in RE, with R; the roll before it is a setup node.
    assert text.splitlines()[0].endswith("RE[W+3R]")
    assert text.splitlines()[-1] == ";PL[B]DI[21])"


def test_bearing_off_is_z() -> None:
    text = write_sgf(gammon_game(5).record())
    moves = re.findall(r";[WB]\[\d\d([a-z]*)\]", text)
    assert any("z" in m for m in moves)
    assert all(len(m) % 2 == 0 for m in moves)


def test_names_are_escaped() -> None:
    assert escape("a]b\\c") == "a\\]b\\\\c"
    recorder = MatchRecorder(("Ann [the first]", "Bob"), 3)
    recorder.apply(OpeningRoll(3, 1))
    assert "PW[Ann [the first\\]]" in write_sgf(recorder.record())
