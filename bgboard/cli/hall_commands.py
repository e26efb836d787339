# SPDX-License-Identifier: MIT
"""``bgboard hall``: the tournament hall over the MQTT broker (docs/hall.md)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from bgboard.cli.options import bind_address, broker_url, table_name
from bgboard.errors import CliError, UsageError

if TYPE_CHECKING:
    import argparse

    from bgboard.cli.options import Subparsers


def register(sub: Subparsers) -> None:
    """Add ``hall`` to ``sub``."""
    p = sub.add_parser(
        "hall", help="the tournament hall: every table from the MQTT broker", description=cmd_hall.__doc__
    )
    p.add_argument("--broker", type=broker_url, metavar="mqtt://HOST:PORT", help="the hall's MQTT broker")
    p.add_argument(
        "--bind",
        type=bind_address,
        default="127.0.0.1:8090",
        metavar="HOST:PORT",
        help="where to serve the hall page and API (default 127.0.0.1:8090; :PORT is this computer only,"
        " 0.0.0.0:PORT the local network)",
    )
    p.add_argument("--db", type=Path, default=Path("hall.sqlite3"), help="the hall's database (default hall.sqlite3)")
    p.add_argument(
        "--make-acl",
        nargs="+",
        type=table_name,
        metavar="TABLE",
        help="write the broker's ACL and passwords for these tables",
    )
    p.add_argument("--acl-dir", type=Path, default=Path("hall-acl"), help="where --make-acl writes (default hall-acl)")
    p.add_argument(
        "--tournament", choices=("on", "off"), help="send tournament mode (hints off) to every board, then exit"
    )
    p.add_argument(
        "--export",
        type=Path,
        metavar="FILE.zip",
        help="write every match in --db as .mat and .sgf files, a folder per table, to FILE.zip, then exit"
        " (no broker needed)",
    )
    p.set_defaults(func=cmd_hall)


def cmd_hall(args: argparse.Namespace, out: TextIO) -> int:
    """The tournament hall: keep every table's actions from the MQTT broker and serve the hall
    page and GET /api/tables (docs/hall.md). --make-acl writes the broker's access list and
    passwords for the tables named; --tournament on|off sends tournament mode to every board;
    --export FILE.zip writes every match the hall's database holds as .mat and .sgf files."""
    from bgboard.errors import HallError
    from bgboard.hall.acl import make_acl
    from bgboard.hall.server import run_hall, send_tournament

    try:
        if args.export is not None:
            return _export(args, out)
        if args.make_acl is not None:
            if args.acl_dir.exists() and not args.acl_dir.is_dir():
                raise UsageError(f"--acl-dir {args.acl_dir} is a file: name a folder for the broker's files")
            secret = make_acl(args.make_acl, args.acl_dir)
            out.write(
                f"wrote {args.acl_dir}/acl, passwd, passwords.txt (mode 600) and bgboard.conf for the hall"
                f" and {len(secret) - 1} tables; see docs/hall.md\n"
            )
            return 0
        if args.broker is None:
            raise UsageError("--broker mqtt://HOST:PORT is needed (or --make-acl TABLE...)")
        if args.tournament is not None:
            send_tournament(args.broker, args.tournament == "on")
            out.write(f"tournament mode {args.tournament}: sent to every board through {args.broker}\n")
            return 0
        return run_hall(args.broker, args.bind, args.db, say=lambda text: print(text, file=out, flush=True))
    except (HallError, ValueError) as exc:
        raise CliError(str(exc)) from None


def _export(args: argparse.Namespace, out: TextIO) -> int:
    """``--export FILE.zip``: the archive of the database's matches, without a broker.

    :raises HallError: the database cannot be read, or the archive written.
    """
    from bgboard.hall.server import export_archive

    others = [flag for flag, given in (("--broker", args.broker), ("--make-acl", args.make_acl)) if given]
    others += ["--tournament"] if args.tournament is not None else []
    if others:
        raise UsageError(f"--export works on --db alone: leave out {' and '.join(others)}")
    target: Path = args.export
    if target.exists() and not target.is_file():
        raise UsageError(f"--export {target} is not a file: name the .zip to write")
    if not args.db.exists():
        raise CliError(f"no hall database at {args.db}: name it with --db")
    done = export_archive(args.db, target)
    matches = f"{done.matches} match{'' if done.matches == 1 else 'es'}"
    tables = f"{done.tables} table{'' if done.tables == 1 else 's'}"
    out.write(f"wrote {target}: {matches} of {tables} as .mat and .sgf\n")
    for problem in done.problems:
        out.write(f"left out: {problem}\n")
    return 1 if done.problems else 0
