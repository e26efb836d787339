# SPDX-License-Identifier: MIT
"""``bgboard analyse``: GNU Backgammon's analysis of a stored match or a ``.mat`` file.

The match is read (from the match store, or from the file with bgboard's own reader, so a file
that does not read is named with its line), handed to the gnubg process that gives hints
(:func:`bgboard.config.gnubg_hints`) and analysed there with gnubg's ``analyse match``
(:mod:`engine.analysis`). A stored match's analysis is kept in the store beside it.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, TextIO

from bgboard.config import MAX_MATCH_LENGTH
from bgboard.errors import AnalyseInputError
from bgboard.store import MatchStore, StoredAction, StoreError
from engine.analysis import AnalysisError, MatchAnalysis, analyse_record
from engine.errors import BackgammonError
from engine.hints import GnubgHints, HintError, find_gnubg
from engine.match import MatchState, Move
from engine.matfile import read_mat_file
from engine.movegen import legal_plays
from engine.record import MatchRecord

log = logging.getLogger(__name__)

#: Seconds an analysis may take before gnubg is given up: a long match at 2-ply takes about a
#: minute on a PC, several on a Pi.
TIMEOUT = 1800.0


#: Seconds the analysis at the end of a match may take (0-ply: about a second for 7 points).
END_TIMEOUT = 120.0


def is_match_file(name: str) -> bool:
    """``name`` names a match file, not a stored match (a number, or ``last``)."""
    return not (name.strip().isdigit() or name.strip().lower() == "last")


def record_of_file(path: Path) -> MatchRecord:
    """The match in a ``.mat`` file, read and replayed by bgboard's reader.

    :raises AnalyseInputError: the file is missing, or does not read or replay (file and line named).
    """
    if path.is_dir():
        raise AnalyseInputError(f"{path} is a folder: name a .mat file, a stored match's number or 'last'")
    if path.exists() and not path.is_file():
        raise AnalyseInputError(f"{path}: not a regular file (a device, a pipe or a folder), so not a match file")
    if not path.is_file():
        raise AnalyseInputError(
            f"{path}: no such match file (a stored match is named by its number, see bgboard matches, or 'last')"
        )
    read = read_mat_file(path)
    problems = [problem.describe(str(path)) for problem in read.all_problems()]
    problems += [
        f"{path}:{game.illegal.line}: game {game.number}: illegal play {game.illegal.play!r}: {game.illegal.reason}"
        for game in read.games
        if game.illegal is not None
    ]
    if problems:
        more = f" (and {len(problems) - 1} more; bgboard check-match lists them)" if len(problems) > 1 else ""
        raise AnalyseInputError(f"{problems[0]}{more}")
    if not any(game.actions for game in read.record.games):
        raise AnalyseInputError(f"{path}: no moves in this match file: nothing to analyse")
    return read.record


def analyse(record: MatchRecord, gnubg: GnubgHints, ply: int) -> MatchAnalysis:
    """gnubg's analysis of ``record`` at ``ply`` (see :func:`engine.analysis.analyse_record`).

    :raises AnalyseInputError: a match longer than gnubg analyses.
    """
    if record.length > MAX_MATCH_LENGTH:
        raise AnalyseInputError(
            f"GNU Backgammon analyses matches up to {MAX_MATCH_LENGTH} points; this one is {record.length} points long"
        )
    return analyse_record(record, gnubg, ply=ply, timeout=TIMEOUT)


def write_analysis(analysis: MatchAnalysis, out: TextIO, as_json: bool) -> None:
    """Print the analysis: one JSON object, or lines in players' words."""
    if as_json:
        out.write(json.dumps(analysis.to_json(), ensure_ascii=False) + "\n")
    else:
        out.write("\n".join(analysis.lines()) + "\n")


def analyse_finished_match(store: MatchStore, match_id: int, gnubg: GnubgHints | None) -> MatchEndAnalysis | None:
    """gnubg's 0-ply analysis at the end of a match (teach and log modes), kept in the store.

    Optional by design, and quick (a 7-point match takes about a second at 0-ply): without
    gnubg installed it returns ``None``; when gnubg fails, the match is recorded all the same
    and the text says why there is no analysis.

    :param gnubg: the hint process of teach mode; ``None`` starts one for the analysis (and
        stops it after) when gnubg is installed.
    """
    from bgboard.config import GNUBG_VARIABLE, gnubg_hints

    own: GnubgHints | None = None
    if gnubg is None:
        if find_gnubg() is None and not os.environ.get(GNUBG_VARIABLE):
            return None
        gnubg = own = gnubg_hints()
    try:
        record = store.record_of(match_id)
        analysis = analyse_record(record, gnubg, ply=0, timeout=END_TIMEOUT)
        store.save_analysis(match_id, analysis.to_json(), ply=0)
    except (AnalysisError, HintError, StoreError) as exc:
        log.warning("no analysis of match %d: %s", match_id, exc)
        return MatchEndAnalysis(f"no analysis of the match: {exc}", None)
    finally:
        if own is not None:
            own.close()
    return MatchEndAnalysis("\n".join(analysis.lines()), analysis)


@dataclass(frozen=True, slots=True)
class MatchEndAnalysis:
    """What is said at the end of a match: the analysis in words, and the analysis (``None`` if it failed)."""

    text: str
    analysis: MatchAnalysis | None

    def fields(self) -> dict[str, object]:
        """The event's fields: ``analysis`` (the ``bgboard analyse --json`` object) when there is one."""
        return {} if self.analysis is None else {"analysis": self.analysis.to_json()}


#: The stored kind of the action a cube error was made with (a missed double has none).
_CUBE_KINDS: Final = {"double": "double", "take": "take", "pass": "drop"}


def errors_by_action(actions: Sequence[StoredAction], analysis: Mapping[str, Any]) -> dict[int, dict[str, Any]]:
    """Each error of a kept analysis (``bgboard analyse --json``) with the stored action it was
    made with: ``{action id: error}``, the error given a ``ref`` (``"P-N"``: player P's Nth).

    A checker error is the player's move in that game with those dice that leads where the
    error's play does; a cube error is his double, take or drop in that game. A missed double
    ("no double") was made with no action and is left out, as is an error nothing matches.
    """
    out: dict[int, dict[str, Any]] = {}
    for player, figures in enumerate(analysis.get("players", [])):
        for number, error in enumerate(figures.get("errors", [])):
            found = _made_with(actions, player, error, set(out))
            if found is not None:
                out[found] = {**error, "ref": f"{player}-{number}"}
    return out


def _made_with(actions: Sequence[StoredAction], player: int, error: Mapping[str, Any], used: set[int]) -> int | None:
    dice = sorted(error.get("dice") or [])
    kind = "move" if dice else _CUBE_KINDS.get(str(error.get("play")))
    for row in actions:
        if row.id in used or row.player != player or row.game != error.get("game") or row.kind != kind:
            continue
        if not dice:
            return row.id
        if not isinstance(row.action, Move):
            continue
        try:
            before = MatchState.from_gnubg_id(row.gnubgid_before, game_number=row.game)
            if before.dice is None or sorted((before.dice.first, before.dice.second)) != dice:
                continue
            legal = legal_plays(before.position, before.dice)
            if legal.parse(str(error.get("play") or ""))[0] == legal.parse(str(row.action.play))[0]:
                return row.id
        except BackgammonError:
            continue
    return None


#: The stored kind of each kind of analysed decision (:data:`engine.analysis.DECISION_KINDS`).
_DECISION_KINDS: Final = {"move": "move", "double": "double", "take": "take", "pass": "drop"}


def decisions_by_action(actions: Sequence[StoredAction], analysis: Mapping[str, Any]) -> dict[int, dict[str, Any]]:
    """Each analysed decision of a kept analysis (its ``decisions``: gnubg's alternatives and
    cube figures) with the stored action it was made with: ``{action id: decision}``.

    gnubg analysed the match's moves, doubles, takes and drops in the order they were stored:
    within a game, each decision goes with the next stored action of the same player and kind
    (an older analysis without ``decisions`` gives none).
    """
    out: dict[int, dict[str, Any]] = {}
    by_game: dict[int, list[StoredAction]] = {}
    for row in actions:
        if row.action is not None and row.player is not None and row.kind in _DECISION_KINDS.values():
            by_game.setdefault(row.game, []).append(row)
    at: dict[int, int] = {}
    for decision in analysis.get("decisions") or []:
        if not isinstance(decision, Mapping):
            continue
        game = decision.get("game")
        rows = by_game.get(game) if isinstance(game, int) else None
        if not rows:
            continue
        kind = _DECISION_KINDS.get(str(decision.get("kind")))
        start = at.get(game, 0)
        for index in range(start, len(rows)):
            if rows[index].player == decision.get("player") and rows[index].kind == kind:
                out[rows[index].id] = dict(decision)
                at[game] = index + 1
                break
    return out
