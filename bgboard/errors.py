# SPDX-License-Identifier: MIT
"""Every error bgboard raises, under one root, :class:`BgboardError`.

Each is also the built-in error it is a kind of (a bad value a :class:`ValueError`, a missing
match a :class:`LookupError`), so that code expecting those still catches it; the command line
catches the root and prints its message on one line. The engine's own errors have their root in
:mod:`engine.errors`."""

from __future__ import annotations


class BgboardError(Exception):
    """Root of every error the application raises; its message says what is wrong and where."""


class CliError(BgboardError):
    """A problem with what the user asked for; printed as ``bgboard: error: ...``."""


class UsageError(CliError):
    """Options that do not go together, or one missing its partner: exit status 2, as for
    argparse's own usage errors."""


class ConfigError(BgboardError, ValueError):
    """A config that cannot be used; the message names the file (or variable), line and key.

    :ivar source: the file, ``environment`` or ``command line``.
    :ivar line: the line in the file, when known.
    :ivar column: the column in the file, for TOML syntax errors.
    :ivar key: ``section.key``, or the environment variable's name.
    :ivar problem: what is wrong, without the place.
    """

    def __init__(self, source: str, line: int | None, key: str | None, problem: str, column: int | None = None) -> None:
        self.source = source
        self.line = line
        self.column = column
        self.key = key
        self.problem = problem
        place = source
        if line is not None:
            place += f":{line}"
            if column is not None:
                place += f":{column}"
        super().__init__(f"{place}: {key}: {problem}" if key else f"{place}: {problem}")


class SetupError(BgboardError):
    """The table cannot start as configured; the message says which setting and how to set it."""


class StoreError(BgboardError):
    """A problem with the match store; the message names the file or the match."""


class NotAStoreError(StoreError):
    """The file is not a bgboard match store (not SQLite, another program's, or corrupt)."""


class NewerStoreError(StoreError):
    """The store was written by a newer bgboard, with a schema this one does not know."""


class UnknownMatchError(StoreError, LookupError):
    """No match has that id."""


class StoreInUseError(StoreError):
    """Another table (a referee) refereeing into the same store holds it."""


class StoreInputError(StoreError, ValueError):
    """A bad argument: an unknown source, a confidence outside 0 to 1, a bad player name."""


class PublishError(BgboardError, ValueError):
    """A bad broker address or table name; the message says what is wrong."""


class HallError(BgboardError):
    """The hall cannot start: the broker cannot be reached, or the database cannot be used."""


class BindError(BgboardError, ValueError):
    """A ``HOST:PORT`` that cannot be used; the message says why."""


class CalibrationRequestError(BgboardError, ValueError):
    """A confirmation's body that is not four corners in the frame (an HTTP 400); says what and where."""


class FrameGoneError(BgboardError, LookupError):
    """The frame a page placed its corners on is no longer kept, or there is none yet."""


class AnalyseInputError(BgboardError, ValueError):
    """What was named to analyse cannot be: no such match or file, or a file that does not read."""


class HintRequestError(BgboardError, ValueError):
    """The command line does not name a position we can hint."""


class ScriptError(BgboardError, RuntimeError):
    """The controller did not take an action of the record."""


class SimulationError(BgboardError, RuntimeError):
    """The referee did not take what the players told it: the simulated game cannot go on."""


class StoppedError(SetupError):
    """Told to stop (Ctrl-C, SIGTERM) while still starting: nothing was recorded."""
