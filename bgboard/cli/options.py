# SPDX-License-Identifier: MIT
"""What the commands' options take, shared by the command modules: the argparse types that
check a value as it is parsed (a positive number, a fraction, ``HOST:PORT``, a broker's URL...),
the position a command is given, and the ``--config`` file.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import TYPE_CHECKING, Final, TypeAlias

from bgboard.errors import CliError
from engine.errors import BackgammonError, quoted
from engine.match import MatchState
from engine.position import Position

if TYPE_CHECKING:
    from bgboard.hall.topics import BrokerUrl

    #: What each command module's ``register`` adds its commands to.
    Subparsers: TypeAlias = argparse._SubParsersAction[argparse.ArgumentParser]


def _number(text: str, *, integer: bool = False) -> float:
    try:
        value = int(text) if integer else float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{quoted(text)} is not {'a whole number' if integer else 'a number'}"
        ) from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return value


#: The largest number an option takes: a million seconds is eleven days (a timer's overflow
#: lies beyond; a still photo held that long would never end).
_LARGEST: Final = 1_000_000.0


def positive(text: str) -> float:
    """An option's value that must be a finite number above 0 (seconds, frames a second)."""
    value = _number(text)
    if not 0 < value <= _LARGEST:
        raise argparse.ArgumentTypeError(f"must be more than 0 and at most {_LARGEST:,.0f}, not {text}")
    return value


def grey_levels(text: str) -> float:
    """Sensor noise in grey levels: 0 to 50 (past that a frame is mostly noise)."""
    value = _number(text)
    if not 0 <= value <= 50:
        raise argparse.ArgumentTypeError(f"must be from 0 to 50, not {text}")
    return value


def fraction(text: str) -> float:
    """An option's value that must be a finite number from 0 up to (not including) 1."""
    value = _number(text)
    if not 0 <= value < 1:
        raise argparse.ArgumentTypeError(f"must be from 0 up to 1, not {text}")
    return value


def die_size(text: str) -> float:
    """``--die-size``: a die's side over a checker's diameter, in the range a profile may hold."""
    from vision.profile import DIE_FRACTION_RANGE

    value = _number(text)
    low, high = DIE_FRACTION_RANGE
    if not low <= value <= high:
        raise argparse.ArgumentTypeError(f"must be from {low:g} to {high:g} (a die's side over a checker's): {text}")
    return value


def folder_name(text: str) -> Path:
    """An option naming a folder: not an empty string (which would mean "here" unseen)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("names no folder")
    return Path(text)


def counting(text: str) -> int:
    """An option's value that must be a whole number, 1 to a million."""
    value = int(_number(text, integer=True))
    if not 1 <= value <= _LARGEST:
        raise argparse.ArgumentTypeError(f"must be from 1 to {_LARGEST:,.0f}, not {text}")
    return value


def bind_address(text: str) -> object:
    """``HOST:PORT`` for a web server (:class:`bgboard.web.server.Bind`)."""
    from bgboard.web.server import Bind, BindError

    try:
        return Bind.parse(text)
    except BindError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def speed(text: str) -> float:
    """A speed factor: 0 (as fast as possible) or more."""
    value = _number(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"a speed is 0 (as fast as possible) or more, not {text!r}")
    return value


def seed(text: str) -> int:
    """A random seed: a whole number, 0 or more."""
    value = int(_number(text, integer=True))
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {text}")
    return value


def broker_url(text: str) -> BrokerUrl:
    """An argparse type: ``mqtt://HOST:PORT`` (a :class:`bgboard.hall.topics.BrokerUrl`)."""
    from bgboard.hall.topics import BrokerUrl, PublishError

    try:
        return BrokerUrl.parse(text)
    except PublishError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def table_name(text: str) -> str:
    """An argparse type: a table name (letters, digits, - and _)."""
    from bgboard.hall.topics import PublishError, check_table_name

    try:
        return check_table_name(text)
    except PublishError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def position_from_any(text: str) -> tuple[Position, MatchState | None]:
    """A Position ID, a GNUbgID (``pos:match``) or an XGID, with the match state when given."""
    text = text.strip()
    try:
        if text.upper().startswith("XGID="):
            state = MatchState.from_xgid(text)
            return state.position, state
        if ":" in text:
            state = MatchState.from_gnubg_id(text)
            return state.position, state
        return Position.from_id(text), None
    except BackgammonError as exc:
        raise CliError(f"{quoted(text)} is not a Position ID, GNUbgID or XGID: {exc}") from None


def config_file(args: argparse.Namespace) -> Path | None:
    """The ``--config`` file, or ``None`` for the usual search (``$BGBOARD_CONFIG``, ~/.config...)."""
    return Path(args.config).expanduser() if args.config else None
