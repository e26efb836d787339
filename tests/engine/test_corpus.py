# SPDX-License-Identifier: MIT
"""The whole bglab corpus (1,777 real match files) replays without a single illegal play or inconsistency."""

from __future__ import annotations

import pytest

from engine.matcheck import check_file, match_files
from tests.conftest import SHARED_DATA

pytestmark = pytest.mark.slow

CORPUS = SHARED_DATA / "matches" / "bglab"


def test_every_play_in_the_corpus_is_legal_and_every_result_adds_up() -> None:
    assert CORPUS.is_dir(), f"the shared match corpus is not at {CORPUS}"
    files = list(match_files([CORPUS]))
    reports = [check_file(path) for path in files]
    assert len(files) == 1777
    assert sum(r.games for r in reports) == 5008
    assert sum(r.plays for r in reports) == 211_218
    assert [entry for r in reports for entry in r.illegal] == []
    assert [problem for r in reports for problem in r.problems] == []
    # Eleven plays are written ????: the transcript lost them. One game each, not illegal.
    lost = [(r.file, lost.game) for r in reports for lost in r.lost_moves]
    assert len(lost) == len(set(lost)) == 11
    assert {r.dialect for r in reports} == {"Backgammon Galaxy", "Backgammon Studio"}
