# SPDX-License-Identifier: MIT
"""Hints: the best plays for a roll and the right cube action, from GNU Backgammon.

:class:`HintEngine` is what the rest of bgboard asks: ``plays(state, dice, ply, n)`` gives the
plays ranked best first as :class:`RankedPlay` (the play, its equity, its error against the
best, the win/gammon/backgammon chances), and ``cube(state, ply)`` gives a :class:`CubeAdvice`
(double or not, take or pass, the three cubeful equities).

:class:`GnubgHints` implements it with the real ``gnubg`` program (Debian package ``gnubg``,
also built for the Raspberry Pi) run as one long-lived subprocess in text mode,
``gnubg -t -q -r``, kept at arm's length so its GPL stays outside our code. Each request sets
the position with ``set gnubgid``, the dice with ``set dice`` and the depth with
``set evaluation ... plies N``, asks ``hint``, and then sends a word gnubg does not know
(``bgboard-end-N``): gnubg answers every command in order and flushes its output after each,
so its complaint ``Unknown keyword `bgboard-end-N'.`` closes the answer. Every play gnubg
names is read back with :meth:`engine.movegen.LegalPlays.parse`, against the engine's legal
plays; a hint that is not a legal play raises :class:`HintError` and is never passed on.

This is the one module of the engine that runs a program and keeps time (a time limit per
request); it still imports only the standard library, and nothing starts before the first
request, so importing it without gnubg installed is fine.

>>> skill(0.0), skill(0.05), skill(0.1), skill(0.3)
('', 'doubtful', 'bad', 'very bad')
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import select
import shutil
import subprocess
import threading
import time
import weakref
from dataclasses import dataclass, replace
from typing import Final, Protocol

from engine.dice import Dice
from engine.errors import BackgammonError, IllegalPlayError, InvalidNotationError
from engine.match import MatchState, Phase
from engine.movegen import legal_plays
from engine.play import Play
from engine.position import Position

log = logging.getLogger(__name__)

#: Where Debian installs gnubg (``/usr/games`` is not on every ``PATH``).
DEBIAN_GNUBG: Final = "/usr/games/gnubg"

#: What to do when gnubg is missing.
INSTALL_HINT: Final = (
    "GNU Backgammon (gnubg) is not installed; hints need it: "
    "sudo apt-get install gnubg (Debian, Ubuntu, Raspberry Pi OS), or scripts/setup.sh --test"
)

#: gnubg's error sizes for its skill labels (equity lost against the best play): its analysis
#: thresholds (``show analysis``), so teach mode at the table and the analysis afterwards give
#: one play the same label.
DOUBTFUL: Final = 0.03
BAD: Final = 0.06
VERY_BAD: Final = 0.12

#: The deepest search :class:`GnubgHints` asks for (gnubg itself goes to 7 plies, slowly).
MAX_PLY: Final = 4


class HintError(BackgammonError, RuntimeError):
    """The hint engine could not answer: gnubg missing, dead, or saying something we cannot use."""


class HintTimeoutError(HintError, TimeoutError):
    """The hint engine took longer than the time limit; the gnubg process was killed."""


class GnubgNotFoundError(HintError, FileNotFoundError):
    """The gnubg program is not installed (the message says how to install it)."""


def skill(error: float) -> str:
    """gnubg's label for a play that loses ``error`` equity: ``''``, doubtful, bad or very bad."""
    if error > VERY_BAD:
        return "very bad"
    if error > BAD:
        return "bad"
    if error > DOUBTFUL:
        return "doubtful"
    return ""


@dataclass(frozen=True, slots=True)
class Chances:
    """gnubg's six probabilities for the side on roll: win, win a gammon or a backgammon, and
    the same for a loss (gammons include backgammons)."""

    win: float
    win_gammon: float
    win_backgammon: float
    lose: float
    lose_gammon: float
    lose_backgammon: float

    def __str__(self) -> str:
        return (
            f"{self.win:.3f} {self.win_gammon:.3f} {self.win_backgammon:.3f} - "
            f"{self.lose:.3f} {self.lose_gammon:.3f} {self.lose_backgammon:.3f}"
        )

    def to_json(self) -> dict[str, float]:
        """The six chances by name."""
        return {
            "win": self.win,
            "win_gammon": self.win_gammon,
            "win_backgammon": self.win_backgammon,
            "lose": self.lose,
            "lose_gammon": self.lose_gammon,
            "lose_backgammon": self.lose_backgammon,
        }


@dataclass(frozen=True, slots=True)
class RankedPlay:
    """One play of a hint list.

    :param play: the play, canonical and legal for the position and roll.
    :param after: the position it leads to, still seen from the side that moved.
    :param equity: its cubeful equity (money equity; in a match gnubg's normalised EMG).
    :param error: equity lost against the best play (0 for the best), never negative.
    :param chances: win/gammon/backgammon chances, when the engine gives them.
    :param ply: the depth this play was evaluated at (gnubg evaluates the weaker plays shallower).
    """

    play: Play
    after: Position
    equity: float
    error: float
    chances: Chances | None = None
    ply: int = 0

    @property
    def skill(self) -> str:
        """gnubg's label for the error: ``''``, doubtful, bad or very bad."""
        return skill(self.error)

    def to_json(self) -> dict[str, object]:
        """``play`` (text), ``equity``, ``error``, ``ply``, ``skill`` and ``chances``."""
        out: dict[str, object] = {"play": str(self.play), "equity": self.equity, "error": self.error}
        out["ply"] = self.ply
        out["skill"] = self.skill
        if self.chances is not None:
            out["chances"] = self.chances.to_json()
        return out


@dataclass(frozen=True, slots=True)
class CubeAdvice:
    """What to do with the cube, for the player about to roll and for his opponent.

    :param action: gnubg's words, e.g. ``"Double, take"``, ``"No double, take"``,
        ``"Too good to double, pass"``, ``"No redouble, beaver"``.
    :param double: the player on roll should double (or redouble) now.
    :param take: doubled, the opponent should take (a beaver counts as a take).
    :param too_good: the player on roll is too good to double: he plays on for a gammon.
    :param no_double: cubeful equity if he does not double.
    :param double_take: cubeful equity if he doubles and is taken.
    :param double_pass: cubeful equity if he doubles and is passed (dropped).
    :param cubeless: the cubeless equity, when given.
    :param chances: win/gammon/backgammon chances, when given.
    :param ply: the depth of the evaluation.
    :param listed: the choices as gnubg listed them, best first: words, equity, and the
        difference from the best (gnubg's, from unrounded equities); empty if not known.
    """

    action: str
    double: bool
    take: bool
    too_good: bool
    no_double: float
    double_take: float
    double_pass: float
    cubeless: float | None = None
    chances: Chances | None = None
    ply: int = 0
    listed: tuple[tuple[str, float, float], ...] = ()

    def ranked(self) -> list[tuple[str, float, float]]:
        """The three choices best first (as gnubg lists them): words, equity, difference from the best."""
        if self.listed:
            return list(self.listed)
        choices = [
            ("No double", self.no_double),
            ("Double, take", self.double_take),
            ("Double, pass", self.double_pass),
        ]
        best = (1 if self.take else 2) if self.double and not self.too_good else 0
        rest = sorted((c for i, c in enumerate(choices) if i != best), key=lambda c: -c[1])
        top = choices[best][1]
        return [(words, equity, round(equity - top, 3)) for words, equity in [choices[best], *rest]]

    def to_json(self) -> dict[str, object]:
        """Every field by name, chances as an object."""
        out: dict[str, object] = {
            "action": self.action,
            "double": self.double,
            "take": self.take,
            "too_good": self.too_good,
            "no_double": self.no_double,
            "double_take": self.double_take,
            "double_pass": self.double_pass,
            "cubeless": self.cubeless,
            "ply": self.ply,
        }
        if self.chances is not None:
            out["chances"] = self.chances.to_json()
        return out


class HintEngine(Protocol):
    """Something that ranks plays and advises on the cube."""

    def plays(
        self, state: MatchState | Position, dice: Dice | None = None, ply: int = 0, n: int = 5
    ) -> list[RankedPlay]:
        """The ``n`` best plays for ``dice`` (default: the state's roll), best first.

        An empty list means there is no legal play (a dance).
        """
        ...

    def cube(self, state: MatchState, ply: int = 0) -> CubeAdvice:
        """The cube advice for the player about to roll (or, during a double, for its answer)."""
        ...

    def close(self) -> None:
        """Free what the engine holds (a subprocess, say)."""
        ...


# -- preparing requests ----------------------------------------------------------------------


def state_to_move(state: MatchState | Position, dice: Dice | None) -> MatchState:
    """The state with ``dice`` rolled and waiting for the move; a bare position is a money game.

    :raises HintError: no dice, or the state is not one where a roll is played.
    """
    if isinstance(state, Position):
        if dice is None:
            raise HintError("which roll? a position needs dice for a hint")
        return MatchState(0, on_roll=0, phase=Phase.MOVE, dice=dice, position=state)
    roll = dice if dice is not None else state.dice
    if roll is None:
        raise HintError("which roll? the state has no dice rolled; give the dice")
    if state.phase is Phase.MOVE:
        return state if state.dice == roll else replace(state, dice=roll)
    if state.phase is Phase.ROLL:
        return replace(state, phase=Phase.MOVE, dice=roll)
    raise HintError(f"no roll can be played now: the match waits for the {state.phase.value}")


def state_to_double(state: MatchState) -> MatchState:
    """The state where the cube decision is made: the player on roll, before rolling.

    During a double the decision is the same one, seen from the doubled player's side.

    :raises HintError: no cube decision now (dice rolled, cube not available, game over).
    """
    if state.phase is Phase.DOUBLED and not state.beavered:
        state = replace(state, phase=Phase.ROLL)
    if state.phase is not Phase.ROLL:
        raise HintError(f"no cube decision now: the match waits for the {state.phase.value}")
    if not state.can_double():
        raise HintError(
            f"no cube decision now: player {state.on_roll} cannot double (the cube is at "
            f"{state.cube.value}, {'centred' if state.cube.owner is None else f'owned by player {state.cube.owner}'}"
            f"{', Crawford game' if state.crawford else ''})"
        )
    return state


def check_ply(ply: int) -> int:
    """``ply`` if gnubg can search that deep here (0 to :data:`MAX_PLY`).

    :raises ValueError: another depth.
    """
    if not isinstance(ply, int) or isinstance(ply, bool) or not 0 <= ply <= MAX_PLY:
        raise ValueError(f"the evaluation depth is 0 to {MAX_PLY} plies, not {ply!r}")
    return ply


# -- reading gnubg's answers -----------------------------------------------------------------

_NUMBER = r"[+-]?\d+\.\d+"
_MOVE_LINE = re.compile(
    rf"^\s*(\d+)\.\s+(?:Cubeful|Cubeless)\s+(\d+)-ply\s+(.*?)\s+Eq\.:\s+({_NUMBER})(?:\s+\(({_NUMBER})\))?\s*$"
)
_CHANCES_LINE = re.compile(rf"^\s*({_NUMBER}) ({_NUMBER}) ({_NUMBER}) - ({_NUMBER}) ({_NUMBER}) ({_NUMBER})\s*$")
_CUBELESS_LINE = re.compile(rf"^\s*(\d+)-ply cubeless equity ({_NUMBER})")
_CUBE_CHOICE = re.compile(
    rf"^\s*\d+\.\s+(No (?:re)?double|(?:Re)?[Dd]ouble, (?:take|pass|beaver))\s+({_NUMBER})(?:\s+\(({_NUMBER})\))?"
)
_PROPER = re.compile(r"^\s*Proper cube action:\s*(.*?)\s*(?:\(\s*[-\d.]+%\s*\))?\s*$")
_NO_MOVES = "There are no legal moves."


def _chances(match: re.Match[str]) -> Chances:
    return Chances(*(float(match.group(i)) for i in range(1, 7)))


def parse_hint_plays(text: str, position: Position, dice: Dice) -> list[RankedPlay]:
    """Read gnubg's ``hint`` list for ``position`` and ``dice`` into checked :class:`RankedPlay`.

    :raises HintError: a play that is not legal (or named twice), or no list at all.
    """
    legal = legal_plays(position, dice)
    lines = text.splitlines()
    if any(line.strip() == _NO_MOVES for line in lines):
        if legal:
            raise HintError(f"gnubg sees no legal play for {dice.spoken()} in {position.position_id()}, but there are")
        return []
    out: list[RankedPlay] = []
    seen: set[Position] = set()
    for i, line in enumerate(lines):
        m = _MOVE_LINE.match(line)
        if not m:
            continue
        text_play = m.group(3)
        try:
            after, play = legal.parse(text_play)
        except (IllegalPlayError, InvalidNotationError) as exc:
            raise HintError(
                f"gnubg's hint {text_play!r} is not a legal play for {dice.spoken()} in {position.position_id()}: {exc}"
            ) from None
        if after in seen:
            raise HintError(f"gnubg named the play {play} twice for {dice.spoken()} in {position.position_id()}")
        seen.add(after)
        diff = float(m.group(5)) if m.group(5) is not None else 0.0
        chances = None
        if i + 1 < len(lines):
            c = _CHANCES_LINE.match(lines[i + 1])
            chances = _chances(c) if c else None
        out.append(RankedPlay(play, after, float(m.group(4)), max(-diff, 0.0) + 0.0, chances, int(m.group(2))))
    if not out:
        raise HintError(f"gnubg gave no plays for {dice.spoken()} in {position.position_id()}: {_tail(text)}")
    return out


def parse_cube_hint(text: str) -> CubeAdvice:
    """Read gnubg's cube ``hint`` (``Cube analysis`` ... ``Proper cube action: ...``).

    :raises HintError: the text is not a cube analysis.
    """
    cubeless: float | None = None
    chances: Chances | None = None
    ply = 0
    equities: dict[str, float] = {}
    listed: list[tuple[str, float, float]] = []
    action: str | None = None
    for line in text.splitlines():
        if m := _CUBELESS_LINE.match(line):
            ply, cubeless = int(m.group(1)), float(m.group(2))
        elif (m := _CHANCES_LINE.match(line)) and chances is None:
            chances = _chances(m)
        elif m := _CUBE_CHOICE.match(line):
            words = m.group(1).lower().replace("redouble", "double")
            key = "no_double" if words.startswith("no") else ("double_pass" if "pass" in words else "double_take")
            equities[key] = float(m.group(2))
            listed.append((m.group(1), float(m.group(2)), float(m.group(3) or 0.0)))
        elif m := _PROPER.match(line):
            action = m.group(1)
    if action is None or set(equities) != {"no_double", "double_take", "double_pass"}:
        raise HintError(f"gnubg gave no cube analysis: {_tail(text)}")
    words = action.lower()
    too_good = words.startswith("too good")
    double = not too_good and not words.startswith("no ")
    if "take" in words or "beaver" in words:
        take = True
    elif "pass" in words:
        take = False
    else:
        take = equities["double_take"] <= equities["double_pass"]
    return CubeAdvice(
        action, double, take, too_good, **equities, cubeless=cubeless, chances=chances, ply=ply, listed=tuple(listed)
    )


def _tail(text: str, lines: int = 6) -> str:
    kept = [line.strip() for line in text.splitlines() if line.strip()]
    return " / ".join(kept[-lines:]) or "(nothing)"


# -- the gnubg program -----------------------------------------------------------------------


def find_gnubg() -> str | None:
    """The gnubg program: on ``PATH``, or where Debian puts it (``/usr/games/gnubg``)."""
    found = shutil.which("gnubg")
    if found:
        return found
    if os.access(DEBIAN_GNUBG, os.X_OK):
        return DEBIAN_GNUBG
    return None


#: Sent once after start: no sounds, nobody plays by itself, equities not match winning
#: chances, probabilities not percentages, three decimals, no confirmation questions.
_SETUP: Final = (
    "set sound enable off",
    "set player 0 human",
    "set player 1 human",
    "set confirm new off",
    "set output mwc off",
    "set output winpc off",
    "set output digits 3",
)


class _ProcessDiedError(HintError):
    """The process ended while answering (a reused process may have been killed meanwhile)."""


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.kill()
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:  # pragma: no cover - a process that ignores SIGKILL
        log.warning("gnubg (pid %d) did not end after SIGKILL", process.pid)
    for stream in (process.stdin, process.stdout):
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()


def _beavers(state: MatchState) -> int:
    # gnubg allows 3 beavers by default; our rules allow them only when the session does.
    return 3 if state.is_money and state.options.beaver else 0


class GnubgHints:
    """Hints from the gnubg program, run as one long-lived subprocess (``gnubg -t -q -r``).

    The process starts at the first request (or :meth:`start`) and serves every request after
    it; requests are serialised by a lock, so threads may share one instance. If the process
    dies, the next request starts a fresh one; if a request takes longer than ``timeout``
    seconds, the process is killed and :class:`HintTimeoutError` raised. For example::

        with GnubgHints() as hints:
            hints.plays(Position.STARTING, Dice(3, 1))[0].play   # Play.parse('8/5 6/5')

    :param program: the gnubg executable (default: :func:`find_gnubg`).
    :param timeout: seconds a request may take.
    :param start_timeout: seconds the program may take to start.
    :raises GnubgNotFoundError: (at the first request) gnubg is not installed.
    """

    def __init__(self, program: str | None = None, *, timeout: float = 30.0, start_timeout: float = 30.0) -> None:
        """See the class docstring."""
        self.program = program
        self.timeout = timeout
        self.start_timeout = start_timeout
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._finalizer: weakref.finalize[[subprocess.Popen[bytes]], GnubgHints] | None = None
        self._buffer = b""
        self._serial = 0
        self._settings: dict[str, str] = {}
        #: Seconds the last start of the program took (until it answered its first command).
        self.start_seconds: float | None = None
        #: How many times the program has been started.
        self.starts = 0

    # -- the process ---------------------------------------------------------------------

    @property
    def pid(self) -> int | None:
        """The running process's id, or ``None`` when none runs."""
        process = self._process
        return process.pid if process is not None and process.poll() is None else None

    def start(self) -> None:
        """Start the program now (requests start it when needed).

        :raises GnubgNotFoundError: gnubg is not installed.
        :raises HintError: it did not start.
        """
        with self._lock:
            self._ensure_started()

    def close(self) -> None:
        """Stop the program; a later request starts it again."""
        with self._lock:
            self._discard()

    def __enter__(self) -> GnubgHints:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _discard(self) -> None:
        if self._finalizer is not None:
            self._finalizer()
        self._process = None
        self._finalizer = None
        self._buffer = b""
        self._settings = {}

    def _ensure_started(self) -> bool:
        """Start the program if none runs; ``True`` if a fresh one was started."""
        if self._process is not None and self._process.poll() is None:
            return False
        if self._process is not None:
            log.warning(
                "gnubg (pid %d) ended with status %s; starting it again", self._process.pid, self._process.returncode
            )
            self._discard()
        program = self.program or find_gnubg()
        if program is None:
            raise GnubgNotFoundError(INSTALL_HINT)
        started = time.monotonic()
        env = dict(os.environ, LC_ALL="C.UTF-8", LANG="C.UTF-8")
        try:
            process = subprocess.Popen(
                [program, "-t", "-q", "-r"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                # gnubg writes complaints (our end markers among them) to stderr and flushes
                # stdout after every command: one pipe keeps them in order.
                stderr=subprocess.STDOUT,
                bufsize=0,
                env=env,
            )
        except FileNotFoundError:
            raise GnubgNotFoundError(f"{program} not found. {INSTALL_HINT}") from None
        except OSError as exc:
            raise HintError(f"cannot start {program}: {exc}") from None
        self._process = process
        self._finalizer = weakref.finalize(self, _stop, process)
        self.starts += 1
        try:
            self._exchange(list(_SETUP), self.start_timeout)
        except _ProcessDiedError as exc:
            self._discard()
            raise HintError(f"{program} did not start: {exc}") from None
        self.start_seconds = time.monotonic() - started
        log.debug("gnubg started (pid %d) in %.3f s", process.pid, self.start_seconds)
        return True

    def _exchange(self, commands: list[str], timeout: float) -> str:
        """Send ``commands`` and an end marker; return everything gnubg said before the marker."""
        process = self._process
        assert process is not None and process.stdin is not None and process.stdout is not None
        self._serial += 1
        marker = f"bgboard-end-{self._serial}"
        payload = "".join(f"{c}\n" for c in [*commands, marker]).encode()
        end = re.compile(rb"Unknown keyword `" + re.escape(marker.encode()) + rb"'\.?[^\n]*\n")
        deadline = time.monotonic() + timeout
        try:
            process.stdin.write(payload)
            process.stdin.flush()
        except (BrokenPipeError, ConnectionResetError, ValueError):
            raise _ProcessDiedError("gnubg's input is closed") from None
        fd = process.stdout.fileno()
        while True:
            found = end.search(self._buffer)
            if found:
                answer = self._buffer[: found.start()]
                self._buffer = self._buffer[found.end() :]
                return answer.decode("utf-8", errors="replace")
            left = deadline - time.monotonic()
            if left <= 0:
                self._discard()
                raise HintTimeoutError(f"gnubg gave no answer within {timeout:g} s; it was stopped and will restart")
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 65536)
                if not chunk:
                    self._discard()
                    raise _ProcessDiedError(f"gnubg ended: {_tail(self._buffer.decode('utf-8', errors='replace'))}")
                self._buffer += chunk

    def _request(self, commands: list[str], timeout: float | None = None) -> str:
        """Run commands in the program, starting (or restarting once) as needed."""
        limit = self.timeout if timeout is None else timeout
        with self._lock:
            fresh = self._ensure_started()
            try:
                return self._exchange(self._setting_commands(commands), limit)
            except _ProcessDiedError:
                if fresh:
                    raise
                # Killed between requests without our noticing: one fresh try.
                self._ensure_started()
                return self._exchange(self._setting_commands(commands), limit)

    def run(self, commands: list[str], timeout: float | None = None) -> str:
        """Run gnubg commands in the process and return what gnubg said (output and complaints).

        This is how a whole match is analysed (:func:`engine.analysis.analyse_record`): the
        same process, so the Pi keeps one gnubg (and its networks) in memory.

        :param timeout: seconds the commands may take (default: the engine's ``timeout``).
        :raises HintError: gnubg missing or failing.
        :raises HintTimeoutError: gnubg took longer than the time limit (it is stopped).
        """
        return self._request(list(commands), timeout)

    def _setting_commands(self, commands: list[str]) -> list[str]:
        # Settings (``set evaluation ...``, ``set beavers``) are sent only when they change;
        # the process remembers them.
        out = []
        for command in commands:
            if command.startswith(("set evaluation ", "set beavers ")):
                key = command.rsplit(" ", 1)[0]
                if self._settings.get(key) == command:
                    continue
                self._settings[key] = command
            out.append(command)
        return out

    # -- hints ---------------------------------------------------------------------------

    def plays(
        self, state: MatchState | Position, dice: Dice | None = None, ply: int = 0, n: int = 5
    ) -> list[RankedPlay]:
        """The ``n`` best plays for ``dice`` (default: the state's roll), best first, by gnubg.

        ``state`` is a :class:`MatchState` (the score and cube count) or a bare
        :class:`Position` (then a money game with the cube in the middle). An empty list means
        there is no legal play.

        :raises HintError: no dice, gnubg missing or failing, or a hint that is not legal.
        :raises HintTimeoutError: gnubg took longer than the time limit.
        :raises ValueError: ``ply`` out of range or ``n`` below 1.
        """
        check_ply(ply)
        if n < 1:
            raise ValueError(f"ask for one play or more, not {n!r}")
        moving = state_to_move(state, dice)
        assert moving.dice is not None
        roll = moving.dice
        text = self._request(
            [
                f"set evaluation chequerplay evaluation plies {ply}",
                f"set beavers {_beavers(moving)}",
                f"set gnubgid {moving.gnubg_id()}",
                f"set dice {roll.first} {roll.second}",
                f"hint {n}",
            ]
        )
        return parse_hint_plays(text, moving.position, roll)[:n]

    def cube(self, state: MatchState, ply: int = 0) -> CubeAdvice:
        """gnubg's cube advice for the player about to roll (during a double: for its answer).

        :raises HintError: no cube decision in this state, or gnubg missing or failing.
        :raises HintTimeoutError: gnubg took longer than the time limit.
        :raises ValueError: ``ply`` out of range.
        """
        check_ply(ply)
        deciding = state_to_double(state)
        text = self._request(
            [
                f"set evaluation cubedecision evaluation plies {ply}",
                f"set beavers {_beavers(deciding)}",
                f"set gnubgid {deciding.gnubg_id()}",
                "hint",
            ]
        )
        return parse_cube_hint(text)
