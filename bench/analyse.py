# SPDX-License-Identifier: MIT
"""How long GNU Backgammon takes to analyse a whole match (``bgboard analyse``), by depth.

Run from the project root::

    python bench/analyse.py [--match FILE.mat] [--plies 0 2] [--repeat 1] [--json]

Starts gnubg once (and prints how long that took), then times (wall clock, and the CPU time
gnubg used, which a machine busy with other work does not inflate)
:func:`engine.analysis.analyse_record` end to end at each depth: the match written as a
``.mat``, imported by gnubg, ``analyse match``, its statistics printed and read, the marked
plays listed. The default match is a 7-point match of the shared corpus
(``../shared/data/matches/bglab``: 6 games, 230 checker plays, 12 cube actions; the corpus's
7-point matches have 199 checker plays at the median).
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.analysis import analyse_record
from engine.hints import GnubgHints
from engine.matfile import read_mat_file

#: The shared match corpus, next to the repository.
CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "matches" / "bglab"

#: A 7-point match of the corpus.
DEFAULT_MATCH = CORPUS / "lasse" / "match12557747.txt"


def _cpu_seconds(pid: int | None) -> float | None:
    """CPU seconds a process has used (Linux ``/proc``): the gnubg time a busy machine does not inflate."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    import os

    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> int:
    """Time the analysis at each depth asked for and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--match", type=Path, default=DEFAULT_MATCH, help="the .mat file to analyse")
    parser.add_argument("--plies", type=int, nargs="+", default=[0, 2], help="the depths to time (default: 0 2)")
    parser.add_argument("--repeat", type=int, default=1, help="analyses per depth; the best and the last are shown")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    read = read_mat_file(args.match)
    problems = list(read.all_problems())
    if problems:
        print(f"{problems[0].describe(str(args.match))}", file=sys.stderr)
        return 1
    record = read.record
    plays = sum(g.plays for g in read.games)
    results: dict[str, object] = {
        "match": str(args.match),
        "length": record.length,
        "games": len(record.games),
        "checker_plays": plays,
        "machine": f"{platform.machine()}, {platform.python_implementation()} {platform.python_version()}",
    }
    with GnubgHints(timeout=3600.0) as gnubg:
        started = time.perf_counter()
        gnubg.start()
        results["start_seconds"] = round(time.perf_counter() - started, 3)
        by_ply: dict[str, dict[str, float]] = {}
        for ply in args.plies:
            times, cpu = [], []
            for _ in range(args.repeat):
                started, used = time.perf_counter(), _cpu_seconds(gnubg.pid)
                analysis = analyse_record(record, gnubg, ply=ply, timeout=3600.0)
                times.append(time.perf_counter() - started)
                after = _cpu_seconds(gnubg.pid)
                if used is not None and after is not None:
                    cpu.append(after - used)
            errors = sum(len(p.errors) for p in analysis.players)
            by_ply[str(ply)] = {
                "seconds": round(min(times), 3),
                "ms_per_checker_play": round(1000 * min(times) / max(plays, 1), 2),
                "gnubg_cpu_seconds": round(min(cpu), 2) if cpu else -1.0,
                "marked": errors,
            }
        results["analysis"] = by_ply
    if args.json:
        print(json.dumps(results))
        return 0
    print(
        f"{args.match.name}: {record.length}-point match, {len(record.games)} games, {plays} checker plays"
        f" ({results['machine']}); gnubg started in {results['start_seconds']} s"
    )
    for ply, figures in by_ply.items():
        print(
            f"  {ply}-ply: {figures['seconds']:.2f} s ({figures['ms_per_checker_play']:.1f} ms per checker play;"
            f" gnubg used {figures['gnubg_cpu_seconds']:.2f} s of CPU),"
            f" {figures['marked']:.0f} plays and cube decisions marked"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
