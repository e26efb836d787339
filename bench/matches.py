# SPDX-License-Identifier: MIT
"""How long the match checker takes on the whole bglab corpus, on one core.

Run from the project root::

    python bench/matches.py [PATH ...] [--json]

Reads and checks every match file (``engine.matcheck.check_file``: parse, replay every play
through the engine, check cube actions, results and scores) one after the other in this one
process, and prints files, games, plays, cube actions, illegal plays, problems, lost moves,
the seconds taken (CPU time of this process, and wall-clock time) and plays per second.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.matcheck import check_file, match_files

CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "matches" / "bglab"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", default=[str(CORPUS)], help="match files or folders (default: bglab)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)

    files = list(match_files(args.paths))
    if not files:
        print(f"no match files in {' '.join(args.paths)}", file=sys.stderr)
        return 1
    cpu, wall = time.process_time(), time.perf_counter()
    reports = [check_file(path) for path in files]
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    plays = sum(r.plays for r in reports)
    result = {
        "files": len(files),
        "games": sum(r.games for r in reports),
        "plays": plays,
        "cube_actions": sum(r.cube_actions for r in reports),
        "illegal": sum(len(r.illegal) for r in reports),
        "problems": sum(len(r.problems) for r in reports),
        "lost_moves": sum(len(r.lost_moves) for r in reports),
        "cpu_seconds": round(cpu, 2),
        "wall_seconds": round(wall, 2),
        "plays_per_second": round(plays / cpu) if cpu else None,
        "python": platform.python_version(),
        "machine": platform.machine(),
    }
    if args.json:
        print(json.dumps(result))
    else:
        print(f"files           {result['files']:>9,}")
        print(f"games           {result['games']:>9,}")
        print(f"plays           {result['plays']:>9,}")
        print(f"cube actions    {result['cube_actions']:>9,}")
        print(f"illegal plays   {result['illegal']:>9,}")
        print(f"problems        {result['problems']:>9,}")
        print(f"lost moves      {result['lost_moves']:>9,}")
        print(f"seconds (CPU)   {cpu:>9.1f}   (wall {wall:.1f})")
        print(f"plays/s         {result['plays_per_second']:>9,}")
    return 0 if result["illegal"] == 0 and result["problems"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
