# SPDX-License-Identifier: MIT
"""Match analysis by GNU Backgammon: error rates, ratings, luck and the marked mistakes.

:func:`analyse_record` gives a :class:`~engine.record.MatchRecord` to the gnubg program that
gives hints (:class:`~engine.hints.GnubgHints`) and has gnubg analyse it with its own
``analyse match``:

1. the match is written as a ``.mat`` file in gnubg's dialect (:func:`~engine.matfile.write_mat`)
   to a temporary folder and read with ``import mat``;
2. ``set analysis chequerplay evaluation plies N`` and ``set analysis cubedecision evaluation
   plies N`` set the depth; ``analyse match`` analyses every checker play and cube decision;
3. ``show statistics match`` prints gnubg's statistics; :func:`parse_statistics` reads each
   player's overall error rate (mEMG per decision), overall rating and luck rate from it, as
   gnubg prints them;
4. a short script run by gnubg's own Python (the ``>`` command) walks the analysed match
   (``gnubg.match()``) and prints, as JSON, every checker play and cube decision gnubg marked
   doubtful, bad or very bad: the play made, gnubg's best and the equity lost, in gnubg's
   normalised equity (EMG), as its analysis shows them; and every decision it analysed
   (:class:`Decision`): gnubg's top plays with their equities and chances, and the cubeful
   equities of each cube decision.

Nothing is computed here that gnubg does not say: the figures are gnubg's own for that match
and depth. The engine stays at arm's length from gnubg (a separate process), as for hints.

>>> e = MarkedError(1, 4, 0, (6, 1), "13/7 6/5*", "24/17*", 0.075, "bad")
>>> e.to_json()["dice"], e.describe()
([6, 1], 'game 1, move 4: 61 played 13/7 6/5*, best 24/17* (-0.075, bad)')
"""

from __future__ import annotations

import json
import re
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Protocol

from engine.errors import BackgammonError
from engine.hints import Chances, HintError, check_ply
from engine.matfile import write_mat
from engine.record import MatchRecord

#: gnubg's ratings, as ``show statistics match`` words them (best last).
RATINGS: Final = (
    "Awful!",
    "Beginner",
    "Casual player",
    "Intermediate",
    "Advanced",
    "Expert",
    "World class",
    "Supernatural",
)

#: gnubg's marks for a mistake, mildest first.
LABELS: Final = ("doubtful", "bad", "very bad")

#: What a cube decision is called in :attr:`MarkedError.play` and :attr:`MarkedError.best`.
CUBE_WORDS: Final = ("no double", "double", "take", "pass")


class AnalysisError(BackgammonError, RuntimeError):
    """gnubg could not analyse the match, or said something that cannot be read."""


class CommandRunner(Protocol):
    """Something that runs gnubg commands and returns what gnubg said (:class:`~engine.hints.GnubgHints`)."""

    def run(self, commands: list[str], timeout: float | None = None) -> str:
        """Run ``commands`` in gnubg; ``timeout`` seconds at most."""
        ...


@dataclass(frozen=True, slots=True)
class MarkedError:
    """One checker play or cube decision that gnubg marked doubtful, bad or very bad.

    :param game: the game, 1 for the first.
    :param move: the row of the game's move list (as numbered in a ``.mat`` file and in
        gnubg's move list), 1 for the first.
    :param player: who erred: 0 (the ``.mat`` file's player 1, gnubg's first column) or 1.
    :param dice: the roll for a checker play; empty for a cube decision.
    :param play: the play made (gnubg's notation), or for a cube decision ``"double"``,
        ``"no double"``, ``"take"`` or ``"pass"``.
    :param best: gnubg's best play, or the right cube decision in the same words.
    :param equity_lost: how much equity the choice lost against the best (EMG; positive).
    :param label: gnubg's mark: ``doubtful``, ``bad`` or ``very bad``.
    """

    game: int
    move: int
    player: int
    dice: tuple[int, ...]
    play: str
    best: str
    equity_lost: float
    label: str

    @property
    def is_cube(self) -> bool:
        """A cube decision (no dice), not a checker play."""
        return not self.dice

    def to_json(self) -> dict[str, object]:
        """``game``, ``move``, ``dice``, ``play``, ``best``, ``equity_lost``, ``label``."""
        return {
            "game": self.game,
            "move": self.move,
            "dice": list(self.dice),
            "play": self.play,
            "best": self.best,
            "equity_lost": self.equity_lost,
            "label": self.label,
        }

    def describe(self) -> str:
        """The mistake in players' words: where, what was played, what was best, how much it cost."""
        where = f"game {self.game}, move {self.move}"
        if self.is_cube:
            what = f"{self.play}, right was {self.best}"
        else:
            what = f"{self.dice[0]}{self.dice[1]} played {self.play or 'nothing'}, best {self.best}"
        return f"{where}: {what} (-{self.equity_lost:.3f}, {self.label})"


@dataclass(frozen=True, slots=True)
class Alternative:
    """One play of gnubg's ranked list at a checker-play decision, as its analysis shows it.

    :param rank: the play's place in gnubg's list, 1 for the best.
    :param play: the play, in gnubg's notation.
    :param equity: its cubeful equity (EMG), rounded as gnubg prints it (3 decimals).
    :param difference: the equity against the best play's (0 for the best, else negative).
    :param chances: gnubg's win, gammon and backgammon chances after the play, for the player
        who made it (3 decimals, as gnubg prints them).
    :param made: the play that was made.
    """

    rank: int
    play: str
    equity: float
    difference: float
    chances: Chances | None = None
    made: bool = False

    def to_json(self) -> dict[str, object]:
        """``rank``, ``play``, ``equity``, ``difference``, ``chances`` (by name, or ``null``), ``made``."""
        return {
            "rank": self.rank,
            "play": self.play,
            "equity": self.equity,
            "difference": self.difference,
            "chances": None if self.chances is None else self.chances.to_json(),
            "made": self.made,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Alternative:
        """Read back :meth:`to_json`."""
        return cls(
            int(data["rank"]),
            str(data["play"]),
            float(data["equity"]),
            float(data["difference"]),
            _chances_of(data.get("chances")),
            bool(data.get("made", False)),
        )


@dataclass(frozen=True, slots=True)
class CubeFigures:
    """gnubg's cubeful equities at a cube decision, the right action, and the error made.

    The equities are the doubler's (the player on roll), in EMG for the cube as it was, as
    gnubg's "Cube analysis" prints them; a pass is worth +1. At a take or a pass they are the
    figures of the double that came before, still from the doubler's side.

    :param no_double: the equity of not doubling.
    :param double_take: the equity when the opponent takes the double.
    :param double_pass: the equity when he passes (+1).
    :param cube: the cube's value before the double.
    :param played: the decision made: ``no double``, ``double``, ``take`` or ``pass``.
    :param equity_lost: what that decision lost against the right one (EMG, positive or 0).
    :param label: gnubg's mark for it (``doubtful``, ``bad``, ``very bad``) or ``""``.
    :param chances: the doubler's chances before the roll, as gnubg prints them.
    """

    no_double: float
    double_take: float
    double_pass: float
    cube: int
    played: str
    equity_lost: float
    label: str = ""
    chances: Chances | None = None

    @property
    def double(self) -> bool:
        """Doubling is right: the double (taken or passed) is worth more than no double."""
        return min(self.double_take, self.double_pass) > self.no_double

    @property
    def take(self) -> bool:
        """Taking is right: the take costs the taker less than the pass."""
        return self.double_take < self.double_pass

    @property
    def action(self) -> str:
        """gnubg's words for the proper cube action: ``No double, take``, ``Double, pass``,
        ``Too good to redouble, pass`` ... (``redouble`` once the cube has been turned)."""
        word = "redouble" if self.cube > 1 else "double"
        answer = "take" if self.take else "pass"
        if self.double:
            return f"{word.capitalize()}, {answer}"
        if self.no_double >= self.double_pass:
            return f"Too good to {word}, {answer}"
        return f"No {word}, {answer}"

    @property
    def best(self) -> str:
        """The right choice at this decision, in :data:`CUBE_WORDS`: the doubler's (``double`` or
        ``no double``) at a double or a missed one, the taker's (``take`` or ``pass``) at a take or a pass."""
        if self.played in ("take", "pass"):
            return "take" if self.take else "pass"
        return "double" if self.double else "no double"

    def to_json(self) -> dict[str, object]:
        """The figures, ``action`` (gnubg's words) and ``best``, and the decision made with its loss."""
        return {
            "no_double": self.no_double,
            "double_take": self.double_take,
            "double_pass": self.double_pass,
            "cube": self.cube,
            "action": self.action,
            "played": self.played,
            "best": self.best,
            "equity_lost": self.equity_lost,
            "label": self.label,
            "chances": None if self.chances is None else self.chances.to_json(),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CubeFigures:
        """Read back :meth:`to_json` (``action`` and ``best`` follow from the figures)."""
        return cls(
            float(data["no_double"]),
            float(data["double_take"]),
            float(data["double_pass"]),
            int(data["cube"]),
            str(data["played"]),
            float(data["equity_lost"]),
            str(data.get("label", "")),
            _chances_of(data.get("chances")),
        )


#: What a decision is: a checker play (with the cube decision before the roll, if any), a
#: double, a take or a pass.
DECISION_KINDS: Final = ("move", "double", "take", "pass")


@dataclass(frozen=True, slots=True)
class Decision:
    """One action of the match as gnubg analysed it, marked or not: a checker play with gnubg's
    top alternatives, and the cube figures wherever gnubg analysed a cube decision.

    :param game: the game, 1 for the first.
    :param move: the row of the game's move list, as in :class:`MarkedError`.
    :param player: who acted, 0 or 1.
    :param kind: one of :data:`DECISION_KINDS`.
    :param dice: the roll of a checker play; empty otherwise.
    :param play: the play made (gnubg's notation; ``""`` for no move), or the cube action's word.
    :param equity_lost: a checker play's loss against gnubg's best (EMG), ``None`` when gnubg
        ranked no plays (a forced play or none).
    :param label: gnubg's mark for the checker play, or ``""``.
    :param alternatives: gnubg's best plays (up to 5), best first, then the play made when it
        is not among them.
    :param cube: the cube decision: for a checker play the one before the roll (``no double``),
        else the double, take or pass itself; ``None`` when gnubg had none to analyse.
    """

    game: int
    move: int
    player: int
    kind: str
    dice: tuple[int, ...] = ()
    play: str = ""
    equity_lost: float | None = None
    label: str = ""
    alternatives: tuple[Alternative, ...] = ()
    cube: CubeFigures | None = None

    def to_json(self) -> dict[str, object]:
        """The decision's fields; ``alternatives`` a list, ``cube`` an object or ``null``."""
        return {
            "game": self.game,
            "move": self.move,
            "player": self.player,
            "kind": self.kind,
            "dice": list(self.dice),
            "play": self.play,
            "equity_lost": self.equity_lost,
            "label": self.label,
            "alternatives": [a.to_json() for a in self.alternatives],
            "cube": None if self.cube is None else self.cube.to_json(),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Decision:
        """Read back :meth:`to_json`."""
        cube = data.get("cube")
        return cls(
            int(data["game"]),
            int(data["move"]),
            int(data["player"]),
            str(data["kind"]),
            tuple(int(d) for d in data.get("dice") or ()),
            str(data.get("play", "")),
            _optional_float(data.get("equity_lost")),
            str(data.get("label", "")),
            tuple(Alternative.from_json(a) for a in data.get("alternatives") or ()),
            None if cube is None else CubeFigures.from_json(cube),
        )


def _chances_of(data: Any) -> Chances | None:
    if data is None:
        return None
    return Chances(
        float(data["win"]),
        float(data["win_gammon"]),
        float(data["win_backgammon"]),
        float(data["lose"]),
        float(data["lose_gammon"]),
        float(data["lose_backgammon"]),
    )


@dataclass(frozen=True, slots=True)
class PlayerAnalysis:
    """One player's figures from gnubg's ``show statistics match``.

    :param name: the player's name.
    :param error_rate: gnubg's overall error rate, mEMG per decision (checker plays and close
        cube decisions), as a positive number: gnubg prints it negative, as a loss.
    :param rating: gnubg's overall rating (one of :data:`RATINGS`).
    :param luck: gnubg's luck rate, mEMG per roll; positive is lucky.
    :param luck_total: gnubg's total luck in EMG.
    :param luck_rating: gnubg's words for the luck (``"Go to bed"`` ... ``"Go to Las Vegas"``).
    :param errors: every checker play and cube decision gnubg marked, in match order.
    """

    name: str
    error_rate: float | None
    rating: str
    luck: float | None
    luck_total: float | None = None
    luck_rating: str = ""
    errors: tuple[MarkedError, ...] = ()

    def to_json(self) -> dict[str, object]:
        """The contract's keys (``name``, ``error_rate``, ``rating``, ``luck``, ``errors``) and a few more."""
        return {
            "name": self.name,
            "error_rate": self.error_rate,
            "rating": self.rating,
            "luck": self.luck,
            "luck_total": self.luck_total,
            "luck_rating": self.luck_rating,
            "errors": [e.to_json() for e in self.errors],
        }


@dataclass(frozen=True, slots=True)
class MatchAnalysis:
    """gnubg's analysis of a whole match.

    :param players: player 0's figures, then player 1's.
    :param ply: the depth of the analysis (checker play and cube alike).
    :param seconds: how long gnubg took (import, analysis and read-out).
    :param decisions: every action gnubg analysed, in match order (:class:`Decision`).
    """

    players: tuple[PlayerAnalysis, PlayerAnalysis]
    ply: int
    seconds: float = field(default=0.0, compare=False)
    decisions: tuple[Decision, ...] = ()

    def to_json(self) -> dict[str, object]:
        """``{"players": [...], "ply": N, "decisions": [...]}``: the ``bgboard analyse --json`` object."""
        return {
            "players": [p.to_json() for p in self.players],
            "ply": self.ply,
            "decisions": [d.to_json() for d in self.decisions],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> MatchAnalysis:
        """Read back what :meth:`to_json` wrote (as kept in the match store).

        :raises AnalysisError: the object is not an analysis.
        """
        try:
            players = []
            for index, p in enumerate(data["players"]):
                errors = tuple(
                    MarkedError(
                        int(e["game"]),
                        int(e["move"]),
                        index,
                        tuple(int(d) for d in e["dice"]),
                        str(e["play"]),
                        str(e["best"]),
                        float(e["equity_lost"]),
                        str(e["label"]),
                    )
                    for e in p["errors"]
                )
                players.append(
                    PlayerAnalysis(
                        str(p["name"]),
                        _optional_float(p["error_rate"]),
                        str(p["rating"]),
                        _optional_float(p["luck"]),
                        _optional_float(p.get("luck_total")),
                        str(p.get("luck_rating", "")),
                        errors,
                    )
                )
            ply = int(data.get("ply", 0))
            decisions = tuple(Decision.from_json(d) for d in data.get("decisions") or ())
        except (KeyError, TypeError, ValueError) as exc:
            raise AnalysisError(f"not a match analysis: {exc!r}") from None
        if len(players) != 2:
            raise AnalysisError(f"not a match analysis: {len(players)} players")
        return cls((players[0], players[1]), ply, decisions=decisions)

    def lines(self) -> list[str]:
        """The analysis in players' words, a line each: per player the figures, then the mistakes."""
        out = [f"GNU Backgammon's analysis ({self.ply}-ply):"]
        for p in self.players:
            rate = "n/a" if p.error_rate is None else f"{p.error_rate:.1f}"
            luck = "n/a" if p.luck is None else f"{p.luck:+.1f}"
            # gnubg rates ordinary luck "None": said only when it says something.
            words = f" ({p.luck_rating})" if p.luck_rating not in ("", "None") else ""
            marks = ", ".join(f"{sum(e.label == label for e in p.errors)} {label}" for label in LABELS)
            out.append(
                f"{p.name}: error rate {rate} mEMG per move ({p.rating or 'no rating'}), "
                f"luck {luck} mEMG per roll{words}; {marks}"
            )
            out.extend(f"  {e.describe()}" for e in p.errors)
        return out


def _optional_float(value: Any) -> float | None:
    return None if value is None else float(value)


# -- reading gnubg's statistics ---------------------------------------------------------------

_NUMBER = r"([+-]?\d+(?:\.\d+)?|n/a)"
_RATED = "|".join(re.escape(r) for r in RATINGS)


def _figures(line: str) -> tuple[float | None, float | None]:
    """The two players' first figures on a statistics line (each is ``EMG (MWC%)`` or ``EMG``)."""
    label_end = 41  # gnubg prints the label in 40 columns and a space
    values = re.findall(_NUMBER + r"(?:\s*\(\s*[+-]?[\d.]+%?\))?", line[label_end:])
    if len(values) < 2:
        raise AnalysisError(f"gnubg's statistics line has not two figures: {line.strip()!r}")
    return tuple(None if v == "n/a" else float(v) for v in values[:2])  # type: ignore[return-value]


def parse_statistics(text: str) -> dict[str, tuple[object, object]]:
    """Read gnubg's ``show statistics match`` into the overall figures, per player.

    Returns ``error_rate`` (positive, mEMG per decision), ``rating``, ``luck`` (mEMG per roll),
    ``luck_total`` (EMG) and ``luck_rating``, each as (player 0's, player 1's).

    :raises AnalysisError: the text is not gnubg's statistics.
    """
    section = ""
    found: dict[str, tuple[object, object]] = {}
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.endswith("statistics") and not line.startswith(" "):
            section = stripped.split()[0].lower()
            continue
        if section == "overall" and stripped.startswith("Error rate mEMG"):
            a, b = _figures(line)
            found["error_rate"] = (None if a is None else abs(a), None if b is None else abs(b))
        elif section == "overall" and stripped.startswith("Overall rating"):
            ratings = re.findall(_RATED, line[41:])
            found["rating"] = (ratings[0] if ratings else "", ratings[1] if len(ratings) > 1 else "")
        elif section == "luck" and stripped.startswith("Luck rate mEMG"):
            found["luck"] = _figures(line)
        elif section == "luck" and stripped.startswith("Luck total EMG"):
            found["luck_total"] = _figures(line)
        elif section == "luck" and stripped.startswith("Luck rating"):
            cells = [c.strip() for c in re.split(r"\s{2,}", line[41:].strip())]
            found["luck_rating"] = (cells[0] if cells else "", cells[1] if len(cells) > 1 else "")
    missing = {"error_rate", "rating", "luck"} - set(found)
    if missing:
        raise AnalysisError(f"gnubg printed no match statistics ({', '.join(sorted(missing))} missing): {_tail(text)}")
    return found


def _tail(text: str, lines: int = 6) -> str:
    kept = [line.strip() for line in text.splitlines() if line.strip()]
    return " / ".join(kept[-lines:]) or "(nothing)"


# -- walking gnubg's analysed match ------------------------------------------------------------

#: The prefix of the line the walker prints.
_MARK: Final = "@@bgboard-analysis "

#: The prefix of the walker's line of every analysed decision.
_DECISIONS: Final = "@@bgboard-decisions "

#: Run by gnubg's Python (``>exec(...)``) after ``analyse match``: every marked checker play and
#: cube decision, as one JSON line. gnubg keeps checker plays as equities (EMG, the numbers its
#: hint list shows), but cube equities as match winning chances in a match: ``gnubg.mwc2eq``
#: turns them into EMG for the cube as it was then, where a pass is worth +1.
_WALKER: Final = r"""
import json as _json
import gnubg as _gnubg

def _bgboard_walk():
    m = _gnubg.match(1, 1, 0, 0)
    length = m["match-info"]["match-length"]
    found = []
    decisions = []
    for number, game in enumerate(m["games"], 1):
        info = game["info"]
        score = (info["score-X"], info["score-O"])
        crawford = 1 if info.get("crawford") else 0
        cube, owner = info.get("initial-cube", 1), -1
        row, last, doubled = 0, None, None

        def emg(value, mover):
            if not length:
                return value
            ci = _gnubg.cubeinfo(cube, owner, mover, length, score, crawford, 0)
            return _gnubg.mwc2eq(value, ci)

        for record in game["game"]:
            action = record.get("action")
            if action not in ("move", "double", "take", "drop"):
                continue
            side = 0 if record["player"] == "X" else 1
            # A .mat row holds player 0's action, then player 1's: a new row starts with
            # player 0, or with player 1 acting twice in a row.
            if side == 0 or last in (None, 1):
                row += 1
            last = side
            a = record.get("analysis") or {}
            base = {"game": number, "move": row, "player": side}
            # Every analysed decision, marked or not: the figures the replay shows.
            decision = dict(base, kind=action if action != "drop" else "pass")
            decisions.append(decision)
            if action == "move":
                decision["dice"] = list(record.get("dice") or [])
                cube_skill = a.get("cube-skill")
                if "nd-cubeful-eq" in a:
                    nd = emg(a["nd-cubeful-eq"], side)
                    dt = emg(a["dt-cubeful-eq"], side)
                    decision["cube"] = dict(nd=nd, dt=dt, value=cube, probs=list(a.get("probs") or []),
                                            played="no double", skill=cube_skill or "")
                    if cube_skill:
                        found.append(dict(base, dice=[], play="no double", best="double",
                                          lost=min(dt, 1.0) - nd, label=cube_skill))
                skill = a.get("skill")
                moves = a.get("moves") or []
                board = _gnubg.positionfromid(record["board"])
                if record.get("move"):
                    decision["play"] = _gnubg.movetupletostring(record["move"], board)
                if moves:
                    ranked = sorted(range(len(moves)), key=lambda i: -moves[i]["score"])
                    imove = a.get("imove")
                    keep = ranked[:5]
                    if imove is not None and imove not in keep:
                        keep.append(imove)
                    top = moves[ranked[0]]["score"]
                    decision["alternatives"] = [
                        dict(rank=ranked.index(i) + 1, play=_gnubg.movetupletostring(moves[i]["move"], board),
                             score=moves[i]["score"], diff=moves[i]["score"] - top,
                             probs=list(moves[i].get("probs") or []), made=i == imove)
                        for i in keep
                    ]
                    if imove is not None:
                        decision["play"] = _gnubg.movetupletostring(moves[imove]["move"], board)
                        decision["lost"] = top - moves[imove]["score"]
                    decision["skill"] = skill or ""
                if skill and moves and "imove" in a:
                    best = max(moves, key=lambda mv: mv["score"])
                    made = moves[a["imove"]]
                    found.append(dict(base, dice=list(record["dice"]),
                                      play=_gnubg.movetupletostring(made["move"], board),
                                      best=_gnubg.movetupletostring(best["move"], board),
                                      lost=best["score"] - made["score"], label=skill))
            elif action == "double":
                doubled = None
                if "nd-cubeful-eq" in a:
                    doubled = (emg(a["nd-cubeful-eq"], side), emg(a["dt-cubeful-eq"], side),
                               list(a.get("probs") or []))
                    decision["cube"] = dict(nd=doubled[0], dt=doubled[1], value=cube, probs=doubled[2],
                                            played="double", skill=a.get("skill") or "")
                if a.get("skill") and doubled:
                    nd, dt = doubled[0], doubled[1]
                    found.append(dict(base, dice=[], play="double", best="no double",
                                      lost=nd - min(dt, 1.0), label=a["skill"]))
            else:
                skill = a.get("skill")
                if doubled:
                    decision["cube"] = dict(nd=doubled[0], dt=doubled[1], value=cube, probs=doubled[2],
                                            played=decision["kind"], skill=skill or "")
                if skill and doubled:
                    dt = doubled[1]
                    if action == "take":
                        found.append(dict(base, dice=[], play="take", best="pass", lost=dt - 1.0, label=skill))
                    else:
                        found.append(dict(base, dice=[], play="pass", best="take", lost=1.0 - dt, label=skill))
                if action == "take":
                    cube, owner = cube * 2, side
    print(%(mark)r + _json.dumps(found))
    print(%(decisions)r + _json.dumps(decisions))

_bgboard_walk()
"""


def _walker_errors(text: str, mark: str = _MARK) -> list[dict[str, Any]]:
    for line in text.splitlines():
        if line.startswith(mark):
            try:
                found = json.loads(line[len(mark) :])
            except json.JSONDecodeError as exc:
                raise AnalysisError(f"gnubg's list of marked plays does not read: {exc}") from None
            if not isinstance(found, list):
                raise AnalysisError("gnubg's list of marked plays is not a list")
            return found
    raise AnalysisError(
        "gnubg's Python did not list the marked plays (is this gnubg built with Python?): " + _tail(text)
    )


def _marked(found: Sequence[dict[str, Any]]) -> list[MarkedError]:
    out = []
    for item in found:
        try:
            out.append(
                MarkedError(
                    int(item["game"]),
                    int(item["move"]),
                    int(item["player"]),
                    tuple(int(d) for d in item["dice"]),
                    str(item["play"]),
                    str(item["best"]),
                    # Rounded as gnubg prints equities (3 decimals, after rounding away float noise).
                    round(abs(float(item["lost"])), 3),
                    str(item["label"]),
                )
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise AnalysisError(f"gnubg's marked play {item!r} does not read: {exc!r}") from None
    return out


def _rounded_chances(probs: Sequence[float]) -> Chances | None:
    """gnubg's five probabilities (win, win gammon, win backgammon, lose gammon, lose
    backgammon) as the six chances it prints, 3 decimals."""
    if len(probs) != 5:
        return None
    win, wg, wbg, lg, lbg = (float(p) for p in probs)
    return Chances(*(round(x, 3) for x in (win, wg, wbg, 1.0 - win, lg, lbg)))


def _cube_figures(item: dict[str, Any]) -> CubeFigures:
    nd, dt, dp = float(item["nd"]), float(item["dt"]), 1.0
    played = str(item["played"])
    lost = {
        "no double": min(dt, dp) - nd,
        "double": nd - min(dt, dp),
        "take": dt - dp,
        "pass": dp - dt,
    }[played]
    return CubeFigures(
        round(nd, 3),
        round(dt, 3),
        dp,
        int(item.get("value") or 1),
        played,
        round(max(lost, 0.0), 3),
        str(item.get("skill") or ""),
        _rounded_chances(item.get("probs") or ()),
    )


def _decisions(found: Sequence[dict[str, Any]]) -> list[Decision]:
    """The walker's list of every analysed action, read (rounded as gnubg prints its figures)."""
    out = []
    for item in found:
        try:
            kind = str(item["kind"])
            lost = item.get("lost")
            alternatives = tuple(
                Alternative(
                    int(a["rank"]),
                    str(a["play"]),
                    round(float(a["score"]), 3),
                    round(float(a["diff"]), 3) + 0.0,  # never -0.0
                    _rounded_chances(a.get("probs") or ()),
                    bool(a.get("made")),
                )
                for a in item.get("alternatives") or ()
            )
            out.append(
                Decision(
                    int(item["game"]),
                    int(item["move"]),
                    int(item["player"]),
                    kind,
                    tuple(int(d) for d in item.get("dice") or ()),
                    str(item.get("play") or (kind if kind != "move" else "")),
                    None if lost is None else round(abs(float(lost)), 3),
                    str(item.get("skill") or ""),
                    alternatives,
                    None if not item.get("cube") else _cube_figures(item["cube"]),
                )
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise AnalysisError(f"gnubg's analysed decision {item!r} does not read: {exc!r}") from None
    return out


#: gnubg's complaint when ``import mat`` fails.
_IMPORT_FAILED = re.compile(r"(?im)^.*(?:invalid move|not a valid|cannot|could not|error).*$")


def analysis_commands(mat_path: str, walker_path: str, ply: int) -> list[str]:
    """The gnubg commands that analyse the match in ``mat_path`` at ``ply`` and print the figures."""
    return [
        "set confirm new off",
        f'import mat "{mat_path}"',
        f"set analysis chequerplay evaluation plies {ply}",
        f"set analysis cubedecision evaluation plies {ply}",
        "analyse match",
        "show statistics match",
        f">exec(open({walker_path!r}, encoding='utf-8').read())",
        # Leave the process with no match loaded, as hints expect it (they set every position).
        "new match 1",
    ]


def analyse_record(record: MatchRecord, gnubg: CommandRunner, *, ply: int = 0, timeout: float = 600.0) -> MatchAnalysis:
    """Have gnubg analyse ``record`` at ``ply`` and read its figures (see the module docstring).

    :param gnubg: the gnubg process, usually the hint engine (:func:`bgboard.config.gnubg_hints`).
    :param timeout: seconds the analysis may take (a long match at 2-ply takes a minute here,
        several on a Pi).
    :raises AnalysisError: nothing to analyse, or gnubg could not analyse it.
    :raises HintError: gnubg missing, failing or too slow.
    :raises ValueError: ``ply`` out of range.
    """
    check_ply(ply)
    if not any(game.actions for game in record.games):
        raise AnalysisError("the match has no moves yet: nothing to analyse")
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="bgboard-analyse-") as folder:
        mat = Path(folder) / "match.mat"
        walker = Path(folder) / "walk.py"
        mat.write_text(write_mat(record), encoding="utf-8")
        walker.write_text(_WALKER % {"mark": _MARK, "decisions": _DECISIONS}, encoding="utf-8")
        text = gnubg.run(analysis_commands(str(mat), str(walker), ply), timeout)
    # gnubg's importer stops a game at a move it finds illegal and goes on: never analyse half a game.
    refused = re.search(r"(?im)^.*invalid move.*$", text)
    if refused:
        raise AnalysisError(f"gnubg did not read the whole match: {refused.group(0).strip()}")
    if "Statistics" not in text and "statistics" not in text:
        problem = _IMPORT_FAILED.search(text)
        raise AnalysisError(f"gnubg did not analyse the match: {problem.group(0).strip() if problem else _tail(text)}")
    figures = parse_statistics(text)
    errors = _marked(_walker_errors(text))
    decisions = _decisions(_walker_errors(text, _DECISIONS))
    players = []
    for side in (0, 1):

        def figure(key: str, side: int = side) -> object:
            return figures[key][side] if key in figures else None

        players.append(
            PlayerAnalysis(
                record.players[side],
                figure("error_rate"),  # type: ignore[arg-type]
                str(figure("rating") or ""),
                figure("luck"),  # type: ignore[arg-type]
                figure("luck_total"),  # type: ignore[arg-type]
                str(figure("luck_rating") or ""),
                tuple(e for e in errors if e.player == side),
            )
        )
    return MatchAnalysis((players[0], players[1]), ply, time.monotonic() - started, tuple(decisions))


__all__ = [
    "CUBE_WORDS",
    "DECISION_KINDS",
    "LABELS",
    "RATINGS",
    "Alternative",
    "AnalysisError",
    "CommandRunner",
    "CubeFigures",
    "Decision",
    "HintError",
    "MarkedError",
    "MatchAnalysis",
    "PlayerAnalysis",
    "analyse_record",
    "analysis_commands",
    "parse_statistics",
]
