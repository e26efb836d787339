# SPDX-License-Identifier: MIT
"""The README's and the manual's command examples, run as written: what a reader types gives what
the page shows; and the pages' links, which must lead somewhere.

The pages are README.md and every docs/*.md. Each fenced block whose first line starts with
``$ `` is a session: ``$ bgboard ...`` lines are run (the shell's glob expanded), ``$ cat FILE``
writes FILE with the lines that follow, and the other lines are the output expected. In the
expected output a line ``...`` stands for any number of lines, and a line ending in ``...`` for
any line starting with what comes before it. (The pages' ``>>>`` examples are doctests:
``--doctest-glob`` in pyproject.toml.)
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
#: The pages whose examples run and whose links are checked: the README, then the manual.
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]

#: Examples that need what a test machine has not: an LED controller on USB.
NEEDS_HARDWARE = {"leds"}

#: The README is read in five minutes; the manual in docs/ holds the rest.
README_MOST_LINES = 250


def _name(page: Path) -> str:
    """A page as the messages name it: from the project's folder."""
    return page.relative_to(ROOT).as_posix() if page.is_relative_to(ROOT) else str(page)


def sessions(page: Path = README) -> list[tuple[int, list[str]]]:
    """A page's ``$`` blocks that run here: (line number, lines)."""
    found: list[tuple[int, list[str]]] = []
    block: list[str] | None = None
    start = 0
    for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
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


def all_sessions() -> list[tuple[str, int, list[str]]]:
    """Every page's ``$`` blocks that run here: (page, line number, lines)."""
    return [(_name(page), line, lines) for page in PAGES for line, lines in sessions(page)]


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


@pytest.mark.parametrize(
    ("page", "line", "lines"), [pytest.param(*session, id=f"{session[0]}:{session[1]}") for session in all_sessions()]
)
def test_the_example_gives_what_the_page_shows(
    page: str, line: int, lines: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
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
        assert words[0] == "bgboard", f"{page} line {line}: {command}"
        argv = [match for word in words[1:] for match in (sorted(glob.glob(word)) if "*" in word else [word])]
        out = io.StringIO()
        with contextlib.redirect_stderr(io.StringIO()) as err:
            main(argv, out=out)
        actual = out.getvalue().splitlines() + err.getvalue().splitlines()
        assert matches(expected, actual), f"{page} line {line}: {command}\n" + "\n".join(actual)


def test_every_bgboard_example_but_the_hardware_ones_runs() -> None:
    # Ten ran when the README's examples moved to the manual: none may get lost on the way.
    assert len(all_sessions()) >= 10


def test_the_matcher_is_strict() -> None:
    assert matches(["a", "...", "d"], ["a", "b", "c", "d"])
    assert matches(["a", "b..."], ["a", "bcd"])
    assert not matches(["a", "d"], ["a", "b", "d"])
    assert not matches(["a"], ["a", "b"])


# -- the pages' links and length -------------------------------------------------------------------


_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
_REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?([^\s>]+)>?")
_CODE_SPAN = re.compile(r"(`+)(?!`).+?(?<!`)\1", re.DOTALL)


def _outside_blocks(page: Path) -> list[tuple[int, str]]:
    """The page's lines, numbered, those of fenced code blocks (and their fences) blank."""
    numbered: list[tuple[int, str]] = []
    fence = False
    for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        if line.lstrip().startswith(("```", "~~~")):
            fence = not fence
            line = ""
        numbered.append((number, "" if fence else line))
    return numbered


def _prose(page: Path) -> list[tuple[int, str]]:
    """The page's paragraphs outside fenced code blocks, inline code blanked (its line breaks
    kept): (the first line's number, text)."""
    paragraphs: list[tuple[int, str]] = []
    lines: list[str] = []
    start = 0
    for number, line in [*_outside_blocks(page), (0, "")]:
        if not line.strip():
            if lines:
                text = "\n".join(lines)
                paragraphs.append((start, _CODE_SPAN.sub(lambda m: "\n" * m.group(0).count("\n"), text)))
            lines = []
            continue
        if not lines:
            start = number
        lines.append(line)
    return paragraphs


def anchor(heading: str) -> str:
    """GitHub's anchor for a heading: its text (links and code marks dropped), lowercase,
    punctuation dropped but hyphens, spaces to hyphens.

    >>> anchor("At the table: `bgboard referee` and `bgboard replay`")
    'at-the-table-bgboard-referee-and-bgboard-replay'
    >>> anchor("How well will it read my board? `bgboard vision check`")
    'how-well-will-it-read-my-board-bgboard-vision-check'
    >>> anchor("3. Run the hall")
    '3-run-the-hall'
    """
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """Every heading's anchor on a page (a repeated one gets -1, -2, ... as on GitHub)."""
    found: set[str] = set()
    seen: dict[str, int] = {}
    for _, line in _outside_blocks(page):
        heading = _HEADING.match(line)
        if heading is None:
            continue
        name = anchor(heading.group(2))
        count = seen.get(name, 0)
        seen[name] = count + 1
        found.add(name if count == 0 else f"{name}-{count}")
    return found


def links(page: Path) -> list[tuple[int, str]]:
    """The page's links and images that point inside the project: (line number, target)."""
    found: list[tuple[int, str]] = []
    for start, text in _prose(page):
        for match in [*_LINK.finditer(text), *_REFERENCE.finditer(text)]:
            target = match.group(1)
            if not target or re.match(r"[a-z][a-z0-9+.-]*:", target, re.IGNORECASE):
                continue  # a web address, mailto:...
            found.append((start + text[: match.start()].count("\n"), target))
    return found


def _broken(page: Path, target: str) -> str | None:
    """Why a link from ``page`` leads nowhere, or None."""
    path, _, fragment = target.partition("#")
    goal = (page.parent / path).resolve() if path else page
    if not goal.exists():
        return f"{path} does not exist"
    if fragment and goal.suffix == ".md" and fragment not in anchors(goal):
        return f"{_name(goal)} has no heading whose anchor is #{fragment}"
    return None


@pytest.mark.parametrize("page", PAGES, ids=_name)
def test_every_link_leads_to_a_file_and_a_heading(page: Path) -> None:
    broken = [
        f"{_name(page)} line {line}: ({target}): {why}"
        for line, target in links(page)
        if (why := _broken(page, target))
    ]
    assert not broken, "\n".join(broken)


def test_the_link_checker_sees_broken_links(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "# A page\n\n## Its `second` heading\n\n[ok](#its-second-heading), [self](page.md#a-page),\n"
        "[gone](missing.md), [no such](#nowhere) and `[code](missing.md)`, [web](https://example.org).\n\n"
        "```\n[in a block](missing.md)\n# not a heading\n```\n",
        encoding="utf-8",
    )
    assert links(page) == [(5, "#its-second-heading"), (5, "page.md#a-page"), (6, "missing.md"), (6, "#nowhere")]
    assert anchors(page) == {"a-page", "its-second-heading"}
    assert [_broken(page, target) is None for _, target in links(page)] == [True, True, False, False]


def test_the_readme_is_short_and_links_to_every_page_of_the_manual() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MOST_LINES, (
        f"README.md has {len(lines)} lines, at most {README_MOST_LINES}: move the rest to docs/"
    )
    linked = {(README.parent / path.partition("#")[0]).resolve() for _, path in links(README)}
    unlinked = [_name(page) for page in PAGES[1:] if page.resolve() not in linked]
    assert not unlinked, f"README.md does not link to {unlinked}"


@pytest.mark.parametrize("marker", ["main-command", "test-command"])
def test_the_readme_keeps_the_commands_ci_runs(marker: str) -> None:
    # .ci/run and scripts/fresh-check.sh take them from between their markers, as written there.
    text = README.read_text(encoding="utf-8")
    block = re.search(rf"^<!-- {marker} -->\n```\n(.+)\n```\n<!-- /{marker} -->$", text, re.MULTILINE)
    assert block is not None and text.count(f"<!-- {marker} -->") == 1
    assert block.group(1).startswith("scripts/setup.sh")
