# SPDX-License-Identifier: MIT
"""The engine's exceptions, one root and a class per kind of mistake."""

from __future__ import annotations


class BackgammonError(Exception):
    """Root of every error the engine raises."""


class InvalidPositionError(BackgammonError, ValueError):
    """Checker counts that cannot be a backgammon position (for example 16 checkers a side)."""


class InvalidIdError(BackgammonError, ValueError):
    """A Position ID, Match ID, GNUbgID or XGID that does not decode."""


class InvalidNotationError(BackgammonError, ValueError):
    """Text that is not a play, a roll or a point in any notation we read."""


class IllegalPlayError(BackgammonError, ValueError):
    """A well-formed play that the rules do not allow for this position and roll."""


class NoSuchPlayError(IllegalPlayError):
    """A play whose checkers can be moved as written, but whose result no legal play for the
    roll gives (a die not used, a wrong distance, the larger die not played): callers say why
    from the rules; :class:`IllegalPlayError` alone is a step that cannot be made at all."""


class IllegalActionError(BackgammonError, ValueError):
    """A match action out of turn or against the rules (doubling without the cube, moving before rolling)."""


#: How many characters of someone's input an error message quotes.
QUOTE_LIMIT = 60


def quoted(text: str, limit: int = QUOTE_LIMIT) -> str:
    """``text`` quoted for an error message, cut to ``limit`` characters when longer, with its
    length: a 4 MB line is named, not repeated.

    >>> quoted("13/8 13/11")
    "'13/8 13/11'"
    >>> quoted("13/10 " * 1000)
    "'13/10 13/10 13/10 13/10 13/10 13/10 13/10 13/10 13/10 13/10 …' (6000 characters)"
    """
    if len(text) <= limit:
        return repr(text)
    shown = repr(text[:limit])
    return f"{shown[:-1]}…{shown[-1]} ({len(text)} characters)"
