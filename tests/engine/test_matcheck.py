# SPDX-License-Identifier: MIT
"""The match checker catches what is wrong in a file, and only that."""

from __future__ import annotations

import random
import re

import pytest

from engine.dice import Dice
from engine.errors import BackgammonError, InvalidNotationError
from engine.match import Double, Drop, MatchOptions, MatchState, Move, OpeningRoll, Phase, Roll, Take
from engine.matcheck import EXAMPLE, FileReport, check_file, check_mat, check_record, match_files
from engine.matfile import read_mat, write_mat
from engine.movegen import legal_plays
from engine.play import parse_steps
from engine.record import GameRecord, MatchRecord, MatchRecorder


def random_match(seed: int, length: int = 5, games: int = 3) -> MatchRecord:
    """Games of random legal plays; now and then a double, taken or dropped."""
    rng = random.Random(seed)
    recorder = MatchRecorder(("Ann", "Bob"), length)
    for _ in range(games):
        state = recorder.apply(OpeningRoll(rng.randint(1, 6), rng.randint(1, 6)))
        while state.phase is Phase.OPENING:
            state = recorder.apply(OpeningRoll(rng.randint(1, 6), rng.randint(1, 6)))
        while not state.is_over():
            if state.phase is Phase.ROLL:
                if state.can_double() and rng.random() < 0.04:
                    state = recorder.apply(Double())
                    state = recorder.apply(Take() if rng.random() < 0.7 else Drop())
                    continue
                state = recorder.apply(Roll(Dice(rng.randint(1, 6), rng.randint(1, 6))))
            else:
                options = sorted(state.legal_plays().positions()) or [state.position]
                state = recorder.apply(Move(rng.choice(options)))
        if state.phase is Phase.MATCH_OVER:
            break
    return recorder.record()


def test_a_random_match_written_and_read_is_all_right() -> None:
    for seed in range(4):
        mat = read_mat(write_mat(random_match(seed)), f"m{seed}.mat")
        report = check_mat(mat)
        assert report.ok, report.to_json()
        assert report.games == len(mat.record.games) >= 1
        assert report.plays == sum(1 for c in mat.games[0].cells if c.kind == "roll") + sum(
            g.plays for g in mat.games[1:]
        )


_ROW = re.compile(r"^(?P<head>\s*\d+\) )(?P<left>.{27}) (?P<right>.*)$")


def mutants(text: str, rng: random.Random) -> list[tuple[str, int, str]]:
    """Texts with one play changed: a destination moved, a die swapped, or a step dropped."""
    out = []
    lines = text.splitlines()
    for k, line in enumerate(lines):
        for cell in re.findall(r"\d\d: (?:\d+/\d+\*? ?)+", line):
            moves = cell[4:].split()
            if not moves:
                continue
            kind = rng.choice(["destination", "die", "drop"])
            if kind == "drop":
                changed = " ".join(moves[:-1])
            elif kind == "die":
                dice = cell[:2]
                other = str(rng.choice([d for d in "123456" if d not in dice]))
                changed = " ".join(moves)
                cell_new = f"{other}{dice[1]}: {changed}"
                out.append(("\n".join([*lines[:k], line.replace(cell, cell_new, 1), *lines[k + 1 :]]), k + 1, kind))
                continue
            else:
                source, dest = moves[0].rstrip("*").split("/")
                new_dest = max(0, int(dest) + rng.choice([-1, 1]))
                changed = " ".join([f"{source}/{new_dest}", *moves[1:]])
            mutated = line.replace(cell, cell[:4] + changed + " ", 1)
            out.append(("\n".join([*lines[:k], mutated, *lines[k + 1 :]]), k + 1, kind))
    return out


def test_mutated_plays_are_caught_where_the_rules_say_they_are_illegal() -> None:
    rng = random.Random(11)
    record = random_match(3, games=1)
    text = write_mat(record)
    states = [step.state for step in record.game_states(0)]
    caught = 0
    original = read_mat(text).games[0].cells
    for mutated, line, kind in rng.sample(mutants(text, rng), 60):
        mat = read_mat(mutated)
        game = mat.games[0]
        cell = next(c for c, o in zip(game.cells, original, strict=True) if c != o)
        # What the engine says about the changed play, from the position it was played in.
        index = game.cells.index(cell)
        rolls_before = sum(1 for c in game.cells[:index] if c.kind == "roll")
        moves = [s for s in states if s.phase is Phase.MOVE]
        before: MatchState = moves[rolls_before]
        assert cell.dice is not None
        try:
            steps = parse_steps(cell.play)
        except InvalidNotationError:
            # Not a play at all ("21/21"): bad input, reported with its line.
            assert game.illegal is None and [p.line for p in game.problems] == [line], cell.text
            caught += 1
            continue
        try:
            legal_plays(before.position, cell.dice).resolve(steps)
            legal = bool(before.legal_plays()) or not cell.play
        except BackgammonError:
            legal = False
        if cell.dice != before.dice:
            # Another roll: the game after it goes elsewhere, so only its own verdict counts.
            illegal_here = game.illegal is not None and game.illegal.line == line
            assert illegal_here == (not legal), (kind, cell.text)
        elif legal:
            assert game.illegal is None or game.illegal.line > line, (kind, cell.text)
        else:
            assert game.illegal is not None and game.illegal.line == line, (kind, cell.text, mutated)
            assert game.illegal.play == cell.text
            caught += 1
    assert caught >= 20


def test_a_play_into_a_blocked_point_is_illegal_with_a_reason() -> None:
    text = EXAMPLE.replace("64: 24/18 13/9", "64: 24/20 13/7")
    report = check_mat(read_mat(text, "bad.mat"))
    assert [entry.to_json() for entry in report.illegal] == [
        {
            "game": 1,
            "move": 1,
            "player": "Bob",
            "play": "64: 24/20 13/7",
            "reason": "24/20 13/7 is not a legal play for 6-4",
            "line": 7,
        }
    ]
    assert not report.ok


def test_a_play_that_leaves_a_die_unplayed_is_illegal() -> None:
    report = check_mat(read_mat(EXAMPLE.replace("64: 24/18 13/9", "64: 24/18")))
    assert report.illegal[0].reason == "24/18: 6-4 must be played in full (both dice)"


def test_a_double_from_the_player_without_the_cube_is_a_problem() -> None:
    text = EXAMPLE.replace(
        "  2)  Doubles => 2                Drops\n      Wins 1 point",
        "  2)  Doubles => 2                Takes\n"
        "  3) 21: 6/4 5/4                 52: 13/8 13/11\n"
        "  4)  Doubles => 4\n",
    )
    report = check_mat(read_mat(text, "cube.mat"))
    assert report.illegal == []
    assert report.problems[0].startswith("cube.mat:10: game 1: move 4: Doubles => 4: you can't double")


def test_a_wrong_cube_value_is_a_problem() -> None:
    report = check_mat(read_mat(EXAMPLE.replace("Doubles => 2", "Doubles => 4"), "v.mat"))
    assert report.problems == [
        "v.mat:8: game 1: move 2: Doubles => 4: the cube was at 1, so 2: '2)  Doubles => 4                Drops'"
    ]


def test_wins_that_do_not_match_the_cube_are_a_problem() -> None:
    report = check_mat(read_mat(EXAMPLE.replace("Wins 1 point", "Wins 2 point"), "w.mat"))
    assert report.problems == ["w.mat:9: game 1: Wins 2 point, but a dropped double scores the cube before it, 1"]


def test_the_score_of_the_next_game_must_follow_from_the_result() -> None:
    second = "\n Game 2\n Ann : 0                        Bob : 2\n  1) 31: 8/5 6/5                 64: 24/18 13/9\n"
    report = check_mat(read_mat(EXAMPLE + second, "s.mat"))
    assert "s.mat:11: game 2: the score line says 0-2, but the games before end at 1-0" in report.problems


CRAWFORD = """ 3 point match

 Game 1
 Ann : 0                        Bob : 0
  1) 31: 8/5 6/5                 64: 24/18 13/9
  2)  Doubles => 2                Drops
      Wins 1 point

 Game 2
 Ann : 1                        Bob : 0
  1) 31: 8/5 6/5                 64: 24/18 13/9
  2)  Doubles => 2                Drops
      Wins 1 point

 Game 3
 Ann : 2                        Bob : 0
  1) 31: 8/5 6/5                  Doubles => 2
  2)  Drops
                                  Wins 1 point

 Game 4
 Ann : 2                        Bob : 1
  1) 31: 8/5 6/5                  Doubles => 2
  2)  Drops
                                  Wins 1 point
"""


def test_no_double_in_the_crawford_game_and_doubles_after_it() -> None:
    report = check_mat(read_mat(CRAWFORD, "c.mat"))
    # Game 3 is the Crawford game (Ann is first 1-away); game 4 is post-Crawford.
    assert report.problems == [
        "c.mat:17: game 3: move 1: Doubles => 2: no doubling in the Crawford game: "
        "'1) 31: 8/5 6/5                  Doubles => 2'"
    ]
    off = check_mat(read_mat('; [Crawford "Off"]\n' + CRAWFORD, "c.mat"))
    assert off.ok


def test_the_json_report_has_the_contract_keys() -> None:
    data = check_mat(read_mat(EXAMPLE, "e.mat")).to_json()
    assert list(data)[:5] == ["file", "games", "plays", "illegal", "problems"]
    assert (data["file"], data["games"], data["plays"], data["illegal"], data["problems"]) == ("e.mat", 1, 2, [], [])
    assert data["cube_actions"] == 2 and data["lost_moves"] == []


def test_check_file_and_match_files(tmp_path: pytest.TempPathFactory) -> None:
    from pathlib import Path

    folder = Path(str(tmp_path))
    (folder / "a.mat").write_text(EXAMPLE, encoding="utf-8")
    (folder / "sub").mkdir()
    (folder / "sub" / "b.txt").write_text(EXAMPLE, encoding="utf-8")
    (folder / "notes.md").write_text("not a match", encoding="utf-8")
    assert [p.name for p in match_files([folder])] == ["a.mat", "b.txt"]
    assert check_file(folder / "a.mat").ok
    missing = check_file(folder / "missing.mat")
    assert isinstance(missing, FileReport) and not missing.ok
    assert missing.problems[0].startswith(f"{folder / 'missing.mat'}: cannot read the file")


def test_check_record_replays_a_stored_match() -> None:
    record = random_match(2)
    assert check_record(record).ok
    game = record.games[0]
    assert game.result is not None
    wrong_score = MatchRecord(
        record.players, record.length, record.options, (game, GameRecord((3, 3), record.games[1].actions, None))
    )
    assert check_record(wrong_score, "r").problems[0].startswith("r: game 2: starts at (3, 3)")
    illegal = MatchRecord(
        record.players,
        record.length,
        MatchOptions(),
        (GameRecord((0, 0), (OpeningRoll(3, 1), Move("24/20 13/12"))),),
    )
    assert "not legal" in check_record(illegal, "r").problems[0]
