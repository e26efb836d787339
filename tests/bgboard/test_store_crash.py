# SPDX-License-Identifier: MIT
"""Crash safety: a writer killed with SIGKILL at random moments loses no action it reported stored.

A child process (``store_players.py``) records a long match, printing each action's id only after
:meth:`MatchStore.record` returned. The test kills it at seeded random moments, 50 times; after
each kill the database must open cleanly and pass ``integrity_check``, hold every reported
action, and replay; the next child must resume the same match at exactly the stored state.
"""

from __future__ import annotations

import os
import queue
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from bgboard.store import MatchStore

HERE = Path(__file__).resolve().parent
WRITER = HERE / "store_players.py"
KILLS = 50
#: The longest the test waits for a child to start; only reached when something is broken.
START_TIMEOUT = 60.0


@dataclass
class Run:
    """What one child printed before it was killed."""

    lines: list[str] = field(default_factory=list)
    stderr: str = ""
    returncode: int | None = None


def _run_child(db: Path, seed: int, rng: random.Random) -> Run:
    child = subprocess.Popen(
        [sys.executable, str(WRITER), str(db), str(seed)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=HERE,
    )
    assert child.stdout is not None and child.stderr is not None
    lines: queue.Queue[str | None] = queue.Queue()

    def read() -> None:
        assert child.stdout is not None
        for line in child.stdout:
            lines.put(line.rstrip("\n"))
        lines.put(None)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    run = Run()
    try:
        if rng.random() < 0.15:
            # Some kills land while the child starts: importing, opening, replaying, creating.
            time.sleep(rng.uniform(0.0, 0.3))
        else:
            first = lines.get(timeout=START_TIMEOUT)
            if first is not None:
                run.lines.append(first)
                time.sleep(rng.uniform(0.0, 0.25))
    finally:
        if child.poll() is None:
            os.kill(child.pid, signal.SIGKILL)
        run.returncode = child.wait()
        reader.join(timeout=START_TIMEOUT)
        run.stderr = child.stderr.read()
        child.stdout.close()
        child.stderr.close()
    while not lines.empty():
        line = lines.get()
        if line is not None:
            run.lines.append(line)
    return run


def _raw_rows(db: Path) -> tuple[set[int], dict[int, tuple[int, int, int]]]:
    """Every action id, and per match the number of rows and the lowest and highest seq."""
    connection = sqlite3.connect(db)
    try:
        ids = {row[0] for row in connection.execute("SELECT id FROM actions")}
        seqs = {
            row[0]: (row[1], row[2], row[3])
            for row in connection.execute("SELECT match, count(*), min(seq), max(seq) FROM actions GROUP BY match")
        }
        return ids, seqs
    finally:
        connection.close()


def _resume_point(store: MatchStore) -> tuple[int, int, str] | None:
    last = store.last_match(unfinished=True)
    if last is None:
        return None
    return last.id, last.actions, store.state(last.id).gnubg_id()


@pytest.mark.slow
def test_sigkill_at_random_moments_loses_no_reported_action(tmp_path: Path) -> None:
    rng = random.Random(1122)
    db = tmp_path / "matches.sqlite3"
    reported: list[int] = []
    rows_before = 0
    resume: tuple[int, int, str] | None = None
    per_run: list[int] = []
    matches_seen: set[int] = set()
    began = time.monotonic()
    checking = 0.0
    for run_number in range(KILLS):
        run = _run_child(db, run_number, rng)
        assert run.returncode == -signal.SIGKILL, f"the writer died by itself ({run.returncode}):\n{run.stderr}"
        assert "Traceback" not in run.stderr, run.stderr
        ids = []
        current = None
        touched = set() if resume is None else {resume[0]}
        for index, line in enumerate(run.lines):
            words = line.split()
            if words[0] == "match":
                match, live, gnubgid = int(words[1]), int(words[2]), words[3]
                if index == 0 and resume is not None:
                    # The child carries on with the same match, exactly where the store says it stopped.
                    assert (match, live, gnubgid) == resume, f"run {run_number} resumed wrongly"
                else:
                    assert live == 0 and match not in matches_seen, f"run {run_number}: {line!r} is not a new match"
                matches_seen.add(match)
                touched.add(match)
                current = match
            elif words[0] == "over":
                assert int(words[1]) == current
            else:
                ids.append(int(words[0]))
        reported += ids
        per_run.append(len(ids))

        check_began = time.monotonic()
        with MatchStore(db, create=False) as store:
            assert store.integrity_check() == ["ok"]
            assert store.journal_mode == "wal"
            stored, seqs = _raw_rows(db)
            missing = set(reported) - stored
            assert not missing, f"run {run_number}: reported actions {sorted(missing)} are not in the store"
            # Between a commit and its line on stdout only one action can be in flight.
            assert 0 <= len(stored) - rows_before - len(ids) <= 1
            rows_before = len(stored)
            # No action is half there: each match's rows are numbered 1, 2, ... without a gap.
            assert all(count == high and low == 1 for count, low, high in seqs.values())
            # The match the next child resumes, and any match this child finished, replay (fully
            # checked every tenth kill, and all of them at the end).
            summaries = store.matches()
            if summaries:
                touched.add(summaries[-1].id)
            for summary in summaries:
                if summary.id in touched:
                    final = store.verify(summary.id) if run_number % 10 == 9 else store.state(summary.id)
                    assert final.gnubg_id() == summary.gnubgid
                    assert final.score == summary.score
                    assert summary.actions == seqs.get(summary.id, (0, 0, 0))[0]
            resume = _resume_point(store)
        checking += time.monotonic() - check_began
    elapsed = time.monotonic() - began

    with MatchStore(db, create=False) as store:
        summaries = store.matches()
        for summary in summaries:
            store.verify(summary.id)
        total = sum(s.actions for s in summaries)
    assert total >= len(reported)
    # The writer must really have been interrupted mid-match, again and again.
    assert sum(1 for n in per_run if n > 0) >= KILLS // 2
    assert len(summaries) >= 2, "no match was finished and followed by a new one"
    print(
        f"\n{KILLS} kills in {elapsed:.1f} s (checks {checking:.1f} s):"
        f" {len(reported)} actions reported, {total} stored,"
        f" {len(summaries)} matches, actions per run min {min(per_run)} / mean {sum(per_run) / KILLS:.0f}"
        f" / max {max(per_run)}"
    )
