# SPDX-License-Identifier: MIT
"""The README's command examples, run as written: what a reader types gives what the README shows.

Each fenced block whose first line starts with ``$ `` is a session: ``$ bgboard ...`` lines are
run (the shell's glob expanded), ``$ cat FILE`` writes FILE with the lines that follow, and the
other lines are the output expected. In the expected output a line ``...`` stands for any number
of lines, and a line ending in ``...`` for any line starting with what comes before it.
"""

from __future__ import annotations

import contextlib
import glob
import io
import re
import shlex
from datetime import datetime
from pathlib import Path

import pytest

from bgboard.cli import main
from bgboard.store import MatchStore
from engine.match import Double, Drop, MatchOptions, Move, OpeningRoll, Take

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"

#: Examples that need what a test machine has not: an LED controller on USB.
NEEDS_HARDWARE = {"leds"}


def sessions() -> list[tuple[int, list[str]]]:
    """The README's ``$`` blocks that run here: (line number, lines)."""
    found: list[tuple[int, list[str]]] = []
    block: list[str] | None = None
    start = 0
    for number, line in enumerate(README.read_text(encoding="utf-8").splitlines(), 1):
        if line.startswith("```"):
            if block is not None:
                if block and block[0].startswith("$ ") and block[0].split()[2] not in NEEDS_HARDWARE:
                    found.append((start, block))
                block = None
            else:
                block, start = [], number + 1
        elif block is not None:
            block.append(line)
    return found


def matches(expected: list[str], actual: list[str]) -> bool:
    """``actual`` fits ``expected`` with its ``...`` gaps and ``...`` line prefixes (and decimals
    one off in their last place, see :func:`_same`)."""
    if not expected:
        return not actual
    head, rest = expected[0], expected[1:]
    if head == "...":
        return any(matches(rest, actual[skip:]) for skip in range(len(actual) + 1))
    if not actual:
        return False
    line = actual[0].rstrip()
    fits = line.startswith(head[:-3].rstrip()) if head.endswith("...") else _same(line, head.rstrip())
    return fits and matches(rest, actual[1:])


_NUMBER = re.compile(r"[+-]?\d+\.(\d+)")


def _same(line: str, expected: str) -> bool:
    """The lines are equal, or differ only in decimals by one in their last place: gnubg's
    equities round differently in the last digit on processors with other vector instructions."""
    if line == expected:
        return True
    if _NUMBER.sub("#", line) != _NUMBER.sub("#", expected):
        return False
    for got, want in zip(_NUMBER.finditer(line), _NUMBER.finditer(expected), strict=True):
        places = len(want.group(1))
        if len(got.group(1)) != places or abs(float(got.group(0)) - float(want.group(0))) > 1.5 * 10**-places:
            return False
    return True


def _store(path: Path) -> None:
    """The match store the ``matches`` example lists."""
    with MatchStore(path) as store:
        first = store.start_match(("Ann", "Bob"), 1, at=datetime(2026, 11, 22, 14, 2, 30).astimezone())
        for action in (OpeningRoll(3, 1), Move("8/5 6/5"), Double(), Drop()):
            store.record(first, action, source="button")
        second = store.start_match(("Ann", "Cid"), 7, MatchOptions(), at=datetime(2026, 11, 23, 20, 15).astimezone())
        for action in (OpeningRoll(6, 4), Move("24/14"), Double(), Take()):
            store.record(second, action, source="camera", confidence=0.9)


def _steps(lines: list[str]) -> list[tuple[str, list[str]]]:
    steps: list[tuple[str, list[str]]] = []
    for line in lines:
        if line.startswith("$ "):
            steps.append((line[2:], []))
        else:
            steps[-1][1].append(line)
    return steps


@pytest.mark.parametrize(("line", "lines"), sessions(), ids=lambda v: str(v) if isinstance(v, int) else "")
def test_the_example_gives_what_the_readme_shows(
    line: int, lines: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    steps = _steps(lines)
    commands = [shlex.split(command) for command, _ in steps]
    # The examples' relative paths (../shared/...) as from the project's folder.
    work = tmp_path / "work"
    work.mkdir()
    (tmp_path / "shared").symlink_to(ROOT.parent / "shared")
    monkeypatch.chdir(work)
    monkeypatch.setenv("BGBOARD_STORE", str(tmp_path / "matches.sqlite3"))
    if any(words[:2] == ["bgboard", "matches"] for words in commands):
        _store(tmp_path / "matches.sqlite3")
    for (command, expected), words in zip(steps, commands, strict=True):
        if words[0] == "cat":
            Path(words[1]).write_text("\n".join(expected) + "\n", encoding="utf-8")
            continue
        assert words[0] == "bgboard", f"README line {line}: {command}"
        argv = [match for word in words[1:] for match in (sorted(glob.glob(word)) if "*" in word else [word])]
        out = io.StringIO()
        with contextlib.redirect_stderr(io.StringIO()) as err:
            main(argv, out=out)
        actual = out.getvalue().splitlines() + err.getvalue().splitlines()
        assert matches(expected, actual), f"README line {line}: {command}\n" + "\n".join(actual)


def test_every_bgboard_example_but_the_hardware_ones_runs() -> None:
    assert len(sessions()) >= 7


def test_the_matcher_is_strict() -> None:
    assert matches(["a", "...", "d"], ["a", "b", "c", "d"])
    assert matches(["a", "b..."], ["a", "bcd"])
    assert not matches(["a", "d"], ["a", "b", "d"])
    assert not matches(["a"], ["a", "b"])
