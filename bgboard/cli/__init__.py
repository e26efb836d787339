# SPDX-License-Identifier: MIT
"""The ``bgboard`` command line.

``main`` parses the arguments, configures logging and turns the engine's errors into
``bgboard: error: ...`` lines with exit status 1 (2 for usage errors, as argparse does). Each
subcommand is a small ``cmd_*`` function in the module of its group, which adds the command's
sub-parser and options beside that function (the module's ``register``):

- :mod:`bgboard.cli.options`: what options take (the argparse types), the position a command
  is given, the ``--config`` file;
- :mod:`bgboard.cli.position_commands`: ``moves``, ``judge``, ``show``, ``hint``;
- :mod:`bgboard.cli.vision_commands`: ``vision calibrate``, ``read``, ``check``, ``dice``,
  ``markers``, ``sample``;
- :mod:`bgboard.cli.table_commands`: ``demo``, ``referee``, ``play``, ``replay``;
- :mod:`bgboard.cli.hall_commands`: ``hall``;
- :mod:`bgboard.cli.hardware_commands`: ``leds check``, ``devices``, ``doctor``;
- :mod:`bgboard.cli.match_commands`: ``matches``, ``export``, ``analyse``, ``check-match``,
  ``serve``.
"""

from __future__ import annotations

import argparse
import logging
import re
import signal
import sys
import threading
from collections.abc import Sequence
from typing import Final, TextIO

import bgboard
from bgboard.cli import (
    hall_commands,
    hardware_commands,
    match_commands,
    position_commands,
    table_commands,
    vision_commands,
)
from bgboard.errors import BgboardError, UsageError
from engine.errors import BackgammonError

log = logging.getLogger(__name__)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand."""
    parser = argparse.ArgumentParser(
        prog="bgboard",
        description="Referee, teach and record backgammon played on a real board.",
    )
    parser.add_argument("--version", action="version", version=f"bgboard {bgboard.__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more log output")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    # In the order `bgboard --help` lists the commands.
    position_commands.register(sub)
    vision_commands.register(sub)
    table_commands.register(sub, "demo")
    hall_commands.register(sub)
    hardware_commands.register(sub)
    match_commands.register(sub, "matches", "export", "analyse", "check-match")
    table_commands.register(sub, "referee", "play")
    match_commands.register(sub, "serve")
    table_commands.register(sub, "replay")
    return parser


#: An XGID's body: 26 point letters and the nine fields after them (ten as some programs write).
_XGID_BODY: Final = re.compile(r"^[-a-oA-O]{26}(:[^:\s]*){9,10}$")

#: What ``bgboard`` alone prints: where a new user starts.
FIRST_STEPS = """\
bgboard {version}: referee, teach and record backgammon played on a real board.

Try first:
  bgboard demo                  a real game played again on a rendered board: read from the
                                camera frames, judged, lit and recorded (about a minute)
  bgboard show 4HPwATDgc/ABMA   draw a position (a Position ID, GNUbgID or XGID)
  bgboard doctor                check an installation: camera, calibration, LEDs, gnubg, GPIO
  bgboard COMMAND --help        any command's options; bgboard --help lists them all

Building a board (parts, wiring, camera, calibration): docs/build-guide.md in bgboard's source.
"""


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = build_parser()
    stream = out if out is not None else sys.stdout
    # An XGID pasted without its "XGID=" starts with "-" when the 25-point is empty: argparse
    # would take it for an option.
    arguments = [f"XGID={a}" if _XGID_BODY.match(a) else a for a in (sys.argv[1:] if argv is None else argv)]
    if not arguments:
        stream.write(FIRST_STEPS.format(version=bgboard.__version__))
        return 0
    # argparse says only "the following arguments are required: COMMAND" for an unknown option
    # given before any command; name the option instead.
    known = {option for action in parser._actions for option in action.option_strings}
    for word in arguments:
        if not word.startswith("-"):
            break
        if word.split("=", 1)[0] not in known and not re.fullmatch(r"-v+", word):
            parser.error(f"unrecognized option {word}: options go after the command (bgboard --help lists them)")
    args = parser.parse_args(arguments)
    logging.basicConfig(level=logging.WARNING - 10 * args.verbose, format="%(levelname)s %(name)s: %(message)s")
    handled: tuple[type[Exception], ...] = (BackgammonError, BgboardError)
    if args.command == "vision":
        handled += vision_commands.vision_errors()
    if args.command in ("leds", "devices"):
        handled += hardware_commands.hardware_errors()
    previous = None
    if threading.current_thread() is threading.main_thread():
        # SIGTERM (a service manager, `kill`) stops any command as Ctrl-C does: the table's
        # commands and the servers stop cleanly with status 0, a one-off command says it was
        # interrupted (130).
        previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        status: int = args.func(args, stream)
    except UsageError as exc:
        print(f"bgboard {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except handled as exc:
        print(f"bgboard: error: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        return 1
    except KeyboardInterrupt:
        print("bgboard: interrupted", file=sys.stderr)
        return 130
    except OSError as exc:
        # A file that cannot be read or written: said with its name, never as a traceback.
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"bgboard: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 1
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    return status


def _interrupt(number: int, frame: object) -> None:
    raise KeyboardInterrupt
