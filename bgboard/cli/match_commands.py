# SPDX-License-Identifier: MIT
"""``bgboard matches``, ``export``, ``analyse``, ``check-match`` and ``serve``: recorded
matches, in the match store or in .mat files."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from bgboard.cli.options import bind_address
from bgboard.errors import CliError
from bgboard.events import counted
from engine.errors import quoted

if TYPE_CHECKING:
    import argparse

    from bgboard.cli.options import Subparsers


def register(sub: Subparsers, *names: str) -> None:
    """Add the commands named to ``sub`` (all of them when none is): matches, export, analyse,
    check-match, serve."""
    commands = {
        "matches": _add_matches,
        "export": _add_export,
        "analyse": _add_analyse,
        "check-match": _add_check_match,
        "serve": _add_serve,
    }
    for name in names or commands:
        commands[name](sub)


# -- the match store -------------------------------------------------------------------------


def _store_option(parser: argparse.ArgumentParser) -> None:
    # --db was this option's first name; it still works.
    parser.add_argument(
        "--store",
        "--db",
        dest="store",
        help="the match store (default: $BGBOARD_STORE or ~/.local/share/bgboard/matches.sqlite3)",
    )


def _store_path(args: argparse.Namespace) -> Path:
    from bgboard.store import default_store_path

    if args.store is None:
        return default_store_path()
    if not args.store.strip():
        raise CliError("--store names no file: give the match store's path, or leave --store out")
    return Path(args.store).expanduser()


def _add_matches(sub: Subparsers) -> None:
    p = sub.add_parser("matches", help="list the matches in the match store", description=cmd_matches.__doc__)
    _store_option(p)
    p.add_argument("--json", action="store_true", help="print one JSON object per match")
    p.set_defaults(func=cmd_matches)


def cmd_matches(args: argparse.Namespace, out: TextIO) -> int:
    """List the stored matches: number, start, players, length, score, games, finished or not."""
    from bgboard.store import MatchStore, StoreError, default_file_name, summaries_text

    path = _store_path(args)
    if not path.exists():
        # Listing must not create a store: a mistyped --store would leave an empty file behind.
        if not args.json:
            out.write(f"no matches yet: there is no match store at {path}\n")
        return 0
    try:
        with MatchStore(path, create=False) as store:
            summaries = store.matches()
    except StoreError as exc:
        raise CliError(str(exc)) from None
    if args.json:
        for summary in summaries:
            record = {**summary.to_json(), "file_name": default_file_name(summary, "mat")}
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
        return 0
    if not summaries:
        out.write(f"no matches in {path}\n")
        return 0
    for line in summaries_text(summaries):
        out.write(line + "\n")
    return 0


def _export_target(output: str, name: str) -> Path:
    """Where ``export -o`` writes: the file named, or ``name`` in the folder named."""
    if not output:
        raise CliError("-o names no file: give a file or a folder")
    target = Path(output).expanduser()
    if output.endswith(("/", os.sep)) or target.is_dir():
        target.mkdir(parents=True, exist_ok=True)
        target = target / name
    return target


def _export_format(args: argparse.Namespace) -> str:
    """The format asked for, or the one the output file's suffix names; never SGF in a .mat file."""
    suffix = Path(args.output).suffix.lower().lstrip(".")
    if args.format is None:
        return suffix if suffix in ("mat", "sgf") else "mat"
    if suffix in ("mat", "sgf") and suffix != args.format:
        raise CliError(f"{args.output} names a .{suffix} file but --format is {args.format}: change one of them")
    return str(args.format)


def _add_export(sub: Subparsers) -> None:
    p = sub.add_parser("export", help="write a stored match as a .mat or .sgf file", description=cmd_export.__doc__)
    p.add_argument("match", help="the match's number (see bgboard matches) or 'last'")
    p.add_argument("--format", choices=("mat", "sgf"), help="the file format (default: the -o file's suffix, else mat)")
    p.add_argument(
        "-o", "--output", default=".", help="the file to write, or a folder for the usual file name (default: here)"
    )
    p.add_argument("--force", action="store_true", help="replace the file if it exists")
    _store_option(p)
    p.set_defaults(func=cmd_export)


def cmd_export(args: argparse.Namespace, out: TextIO) -> int:
    """Write a stored match as a .mat or .sgf file; -o names the file or a folder for it.

    The format follows the file's suffix unless --format says; an existing file is replaced
    only with --force."""
    from bgboard.store import MatchStore, StoreError, UnknownMatchError, default_file_name, match_id_of

    path = _store_path(args)
    fmt = _export_format(args)
    try:
        with MatchStore(path, create=False) as store:
            match_id = match_id_of(store, args.match)
            summary = store.summary(match_id)
            if summary.actions == 0:
                raise CliError(
                    f"match {match_id} has nothing recorded yet (not even the opening roll): nothing to export"
                )
            text = store.export(match_id, fmt)
            name = default_file_name(summary, fmt)
    except UnknownMatchError as exc:
        listing = f"bgboard matches --store {path}" if args.store else "bgboard matches"
        raise CliError(f"{exc} ({listing} lists them)") from None
    except StoreError as exc:
        raise CliError(str(exc)) from None
    target = _export_target(args.output, name)
    if target.exists() or target.is_symlink():
        if not target.is_file():
            raise CliError(f"{target} exists and is not a regular file: name a file or a folder")
        if not args.force:
            raise CliError(f"{target} exists: use --force to replace it, or name another file")
    # Write beside the target and rename, so an interrupted export never leaves half a file.
    partial = target.with_name(f".{target.name}.partial")
    try:
        partial.write_text(text, encoding="utf-8")
        os.replace(partial, target)
    except OSError as exc:
        with contextlib.suppress(OSError):
            partial.unlink(missing_ok=True)
        raise CliError(f"cannot write {target}: {exc.strerror or exc}") from None
    out.write(f"{target}\n")
    return 0


# -- analyse ---------------------------------------------------------------------------------


def _add_analyse(sub: Subparsers) -> None:
    p = sub.add_parser("analyse", help="GNU Backgammon's analysis of a match", description=cmd_analyse.__doc__)
    p.add_argument("match", help="a stored match's number (see bgboard matches), 'last', or a .mat file")
    p.add_argument("--ply", type=int, default=0, help="gnubg's search depth for checker play and cube (default: 0)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    _store_option(p)
    p.set_defaults(func=cmd_analyse)


def cmd_analyse(args: argparse.Namespace, out: TextIO) -> int:
    """GNU Backgammon's analysis of a stored match (its number, or 'last') or of a .mat file:
    per player the error rate (mEMG per move), gnubg's rating and the luck, then every checker
    play and cube decision gnubg marks doubtful, bad or very bad. A stored match's analysis is
    kept in the store. Needs gnubg (apt-get install gnubg)."""
    from bgboard.analyse import AnalyseInputError, analyse, is_match_file, record_of_file, write_analysis
    from bgboard.config import gnubg_hints
    from bgboard.store import MatchStore, StoreError, UnknownMatchError, match_id_of
    from engine.hints import MAX_PLY

    if not 0 <= args.ply <= MAX_PLY:
        raise CliError(f"--ply is gnubg's search depth, 0 to {MAX_PLY} plies, not {args.ply}")
    with gnubg_hints() as gnubg:
        if is_match_file(args.match):
            try:
                record = record_of_file(Path(args.match).expanduser())
            except AnalyseInputError as exc:
                raise CliError(str(exc)) from None
            write_analysis(analyse(record, gnubg, args.ply), out, args.json)
            return 0
        path = _store_path(args)
        try:
            with MatchStore(path, create=False) as store:
                match_id = match_id_of(store, args.match)
                record = store.record_of(match_id)
                if not any(game.actions for game in record.games):
                    raise CliError(f"match {match_id} has no moves yet: nothing to analyse")
                analysis = analyse(record, gnubg, args.ply)
                store.save_analysis(match_id, analysis.to_json(), ply=args.ply)
        except UnknownMatchError as exc:
            listing = f"bgboard matches --store {path}" if args.store else "bgboard matches"
            raise CliError(f"{exc} ({listing} lists them)") from None
        except StoreError as exc:
            raise CliError(str(exc)) from None
    write_analysis(analysis, out, args.json)
    return 0


# -- check-match -----------------------------------------------------------------------------


#: From how many files on a terminal ``check-match`` shows a progress bar.
_PROGRESS_FROM = 20


def _add_check_match(sub: Subparsers) -> None:
    p = sub.add_parser(
        "check-match", help="replay .mat match files and report illegal plays", description=cmd_check_match.__doc__
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help=".mat files, or folders of them (.mat and .txt files)")
    p.add_argument("--json", action="store_true", help="print one JSON object per file")
    p.set_defaults(func=cmd_check_match)


def cmd_check_match(args: argparse.Namespace, out: TextIO) -> int:
    """Replay every game of .mat files (or folders of them) and report illegal plays and inconsistencies.

    Exit status 0 only when no play is illegal and nothing is inconsistent (a move the
    transcript lost, written ????, is reported but is neither).
    """
    from engine.matcheck import check_file, match_files

    files = list(match_files(args.paths))
    if not files:
        raise CliError(f"no .mat or .txt match files in {' '.join(args.paths)}")
    for folder in args.paths:
        if Path(folder).is_dir() and not any(match_files([folder])):
            print(f"bgboard: warning: {folder}: no .mat or .txt match files in this folder", file=sys.stderr)
    progress = sys.stderr.isatty() and len(files) >= _PROGRESS_FROM
    totals = {"games": 0, "plays": 0, "illegal": 0, "problems": 0, "lost": 0}
    for done, path in enumerate(files, 1):
        report = check_file(path)
        if progress:
            # Clear the bar before writing, so a report never lands in the middle of it.
            sys.stderr.write("\r\x1b[K")
        for key, count in (("games", report.games), ("plays", report.plays), ("illegal", len(report.illegal))):
            totals[key] += count
        totals["problems"] += len(report.problems)
        totals["lost"] += len(report.lost_moves)
        if args.json:
            out.write(json.dumps(report.to_json(), ensure_ascii=False) + "\n")
        else:
            _write_check_report(report, out)
        if progress:
            filled = 30 * done // len(files)
            sys.stderr.write(f"[{'#' * filled}{'.' * (30 - filled)}] {done}/{len(files)} files")
            sys.stderr.flush()
    if progress:
        sys.stderr.write("\r\x1b[K")
    if not args.json and len(files) > 1:
        out.write(
            f"total: {len(files)} files, {totals['games']} games, {totals['plays']} plays: "
            f"{counted(totals['illegal'], 'illegal play')}, {counted(totals['problems'], 'problem')}, "
            f"{counted(totals['lost'], 'lost move')}\n"
        )
    return 0 if totals["illegal"] == 0 and totals["problems"] == 0 else 1


def _write_check_report(report: object, out: TextIO) -> None:
    """One file's report as text: a summary line, then what is wrong, indented."""
    from engine.matcheck import FileReport

    assert isinstance(report, FileReport)
    verdict = "ok"
    if not report.ok:
        verdict = f"{counted(len(report.illegal), 'illegal play')}, {counted(len(report.problems), 'problem')}"
    if report.lost_moves:
        verdict += f", {counted(len(report.lost_moves), 'lost move')}"
    out.write(
        f"{report.file}: {counted(report.games, 'game')}, {counted(report.plays, 'play')}, "
        f"{counted(report.cube_actions, 'cube action')}: {verdict}\n"
    )
    for bad in report.illegal:
        where = f"game {bad.game}, move {bad.move}, {bad.player}"
        out.write(f"  illegal: {where}: {quoted(bad.play)}: {bad.reason} (line {bad.line})\n")
    for problem in report.problems:
        out.write(f"  problem: {problem}\n")
    for lost in report.lost_moves:
        out.write(
            f"  lost move: game {lost.game}, move {lost.move}, {lost.player}: {quoted(lost.text)} (line {lost.line})\n"
        )


# -- serve -----------------------------------------------------------------------------------


def _add_serve(sub: Subparsers) -> None:
    p = sub.add_parser("serve", help="the match browser over a match store", description=cmd_serve.__doc__)
    _store_option(p)
    p.add_argument(
        "--bind",
        type=bind_address,
        default="127.0.0.1:8080",
        metavar="HOST:PORT",
        help="where to listen (default 127.0.0.1:8080; 0.0.0.0:8080 for the local network)",
    )
    p.set_defaults(func=cmd_serve)


def cmd_serve(args: argparse.Namespace, out: TextIO) -> int:
    """Serve the match browser over a match store: the stored matches, any game replayed move by
    move, .mat and .sgf downloads (history only: nothing can be changed). Ctrl-C stops it."""
    import time

    from bgboard.store import MatchStore, StoreError
    from bgboard.web.server import BindError, WebServer, history_app

    path = _store_path(args)
    try:
        # Opened once here so that a missing or foreign file is named now, not at the first page.
        with MatchStore(path, create=False):
            pass
    except StoreError as exc:
        raise CliError(f"--store: {exc}") from None
    try:
        server = WebServer(history_app(path), args.bind)
    except BindError as exc:
        raise CliError(f"--bind: {exc}") from None
    with server:
        out.write(f"the match browser is at {server.url} (the matches in {path}); Ctrl-C stops it\n")
        out.flush()
        with contextlib.suppress(KeyboardInterrupt):
            while True:
                time.sleep(3600)
    return 0
