# SPDX-License-Identifier: MIT
"""Command line: ``python -m tools.render3d --out DIR --setups N --frames M --seed S``."""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from tools.render3d.frames import Setup, render_setup, setup_name


def _size(text: str) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"size must be WIDTHxHEIGHT, not {text!r}") from None
    if w < 64 or h < 64:
        raise argparse.ArgumentTypeError(f"size {text} is too small")
    return w, h


def main(argv: list[str] | None = None) -> int:
    """Render the setups asked for; print a line per frame and the time per frame."""
    parser = argparse.ArgumentParser(prog="python -m tools.render3d", description=__doc__)
    parser.add_argument("--out", type=Path, required=True, help="folder for the setups' folders")
    parser.add_argument("--setups", type=int, default=1, help="how many setups (boards under a camera)")
    parser.add_argument("--frames", type=int, default=5, help="frames per setup, the calibration frame included")
    parser.add_argument("--seed", type=int, default=0, help="seed of the first setup (the next ones count up)")
    parser.add_argument("--size", type=_size, default=(1280, 720), help="image size, WIDTHxHEIGHT")
    parser.add_argument("--samples", type=int, default=8, help="Cycles samples per pixel (denoised)")
    parser.add_argument("--threads", type=int, default=1, help="CPU threads for Cycles")
    parser.add_argument("--resume", action="store_true", help="skip setups whose frames are all there")
    parser.add_argument(
        "--varied",
        action="store_true",
        help="boards and positions as real tables vary (see tools.render3d.plan.Style.vary and vision.render.arranged)",
    )
    args = parser.parse_args(argv)
    if args.frames < 1 or args.setups < 1:
        parser.error("--setups and --frames must be at least 1")
    times: list[float] = []
    started = time.monotonic()
    for seed in range(args.seed, args.seed + args.setups):
        folder = args.out / setup_name(seed)
        if args.resume and all((folder / f"{i:02d}.json").exists() for i in range(args.frames)):
            continue
        setup = Setup.from_seed(seed, args.size, args.varied)
        times += render_setup(setup, args.out, args.frames, samples=args.samples, threads=args.threads)
    if times:
        print(
            f"{len(times)} frames in {time.monotonic() - started:.0f} s: median {statistics.median(times):.1f} s"
            f" per frame ({args.size[0]}x{args.size[1]}, {args.samples} samples, {args.threads} thread(s))",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
