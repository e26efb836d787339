# SPDX-License-Identifier: MIT
"""The LED link's cost and speed, against the real firmware in simavr (paced to wall-clock time).

Run from the project root::

    python bench/leds.py [--scenes 200] [--fault-scenes 200] [--fault-leds 64] [--seed 1] [--json]

Prints the bytes one whole scene takes on the wire (64 and 96 LEDs) and its time at 115200
baud; the median and 95th percentile time from :meth:`Link.show` until the device's ACK
(:meth:`Link.wait_shown` returning), over the emulator; and, through
:mod:`firmware_bridge.faults` with 10 % of the frames dropped and 1 % of the bytes corrupted in
both directions, how many scenes were sent, whether the device showed every one of them in
order (read from the LED chain's decoded data pin), and the histogram of tries per scene.

The firmware and the harness are built the way the tests build them (the ``Emulator`` class
and ``build_emulator`` of ``tests/firmware_bridge/conftest.py``): ``make``, ``avr-gcc`` and
simavr's headers are needed.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.helpers import load_test_helper
from firmware_bridge import faults, messages, protocol
from firmware_bridge.framing import encode_frame
from firmware_bridge.link import Link

ROOT = Path(__file__).resolve().parent.parent

WIRE_BITS_PER_BYTE = 10  # 8N1: a start bit, 8 data bits, a stop bit


def _emulator_module() -> ModuleType:
    return load_test_helper("tests/firmware_bridge/conftest.py", "bgboard_led_emulator")


def _scene(i: int, count: int, family: int = 0) -> tuple[list[int], int]:
    """Scene ``i``: every LED lit, steady; rotation and brightness make each scene's colours unique.

    Runs use different ``family`` values so that no scene of one run looks like one of another.
    """
    leds = [messages.led_byte((i + k) % 15 + 1) for k in range(count)]
    return leds, (10 + i // 15 + 40 * family) % (protocol.BRIGHTNESS_CAP + 1)


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round((len(ordered) - 1) * fraction))]


def wire_sizes(counts: tuple[int, ...] = (64, 96)) -> dict[str, Any]:
    """Bytes of a whole scene's frame (COBS and the delimiter included) and its time at the link's speed."""
    out: dict[str, Any] = {}
    ack = len(encode_frame(protocol.ACK, 1, bytes((protocol.SET_SCENE, 0))))
    for count in counts:
        lit = len(encode_frame(protocol.SET_SCENE, 1, messages.scene(_scene(0, count)[0], 255)))
        dark = len(encode_frame(protocol.SET_SCENE, 1, messages.scene([0] * count, 255)))
        out[str(count)] = {
            "frame_bytes": lit,
            "frame_bytes_all_dark": dark,
            "ack_bytes": ack,
            "frame_ms_at_115200": round(lit * WIRE_BITS_PER_BYTE / protocol.BAUDRATE * 1000, 2),
        }
    return out


def latency(emulator: Any, count: int, scenes: int) -> dict[str, Any]:
    """Times from show() until the ACK, over the emulator, for ``scenes`` different scenes."""
    times: list[float] = []
    with Link(emulator.port, count) as link:
        if not link.wait_connected(10.0):
            raise SystemExit(f"no handshake with the emulator: {link.stats.last_error}")
        for i in range(scenes):
            leds, brightness = _scene(i, count)
            started = time.perf_counter()
            link.show(leds, brightness)
            if not link.wait_shown(5.0):
                raise SystemExit(f"scene {i} not acknowledged: {link.stats}")
            times.append(time.perf_counter() - started)
        stats = link.stats
    return {
        "leds": count,
        "scenes": scenes,
        "median_ms": round(statistics.median(times) * 1000, 2),
        "p95_ms": round(_percentile(times, 0.95) * 1000, 2),
        "max_ms": round(max(times) * 1000, 2),
        "resends": stats.resends,
    }


def noisy(emulator: Any, count: int, scenes: int, drop: float, corrupt: float, seed: int) -> dict[str, Any]:
    """``scenes`` scenes, each waited for, through a line that drops and corrupts; checked on the chain."""
    ports: list[faults.FaultyPort] = []
    opener = faults.faulty_opener(drop, corrupt, seed, ports=ports)
    mark = emulator.mark()
    started = time.perf_counter()
    not_acknowledged = 0
    with Link(emulator.port, count, opener=opener) as link:
        for i in range(scenes):
            leds, brightness = _scene(i, count, 1)
            link.show(leds, brightness)
            if not link.wait_shown(30.0):
                not_acknowledged += 1
        elapsed = time.perf_counter() - started
        last = messages.expected_wire_bytes(*_scene(scenes - 1, count, 1))
        emulator.wait_leds(lambda data: data[: len(last)] == last, 5.0, start=mark)
        stats = link.stats
    expected = {messages.expected_wire_bytes(*_scene(i, count, 1)): i for i in range(scenes)}
    seen = [expected[key] for _, data in emulator.leds[mark:] if (key := data[: 3 * count]) in expected]
    shown = [i for k, i in enumerate(seen) if k == 0 or seen[k - 1] != i]
    in_order = shown == list(range(scenes))
    histogram = stats.tries_histogram
    return {
        "leds": count,
        "drop": drop,
        "corrupt": corrupt,
        "scenes_sent": scenes,
        "scenes_acknowledged": stats.scenes_applied,
        "not_acknowledged": not_acknowledged,
        "all_applied_in_order": in_order,
        # When not: the scenes never seen on the chain, and the sequence as seen.
        "never_shown": sorted(set(range(scenes)) - set(shown)),
        "shown_sequence": None if in_order else shown,
        "tries_histogram": {str(k): v for k, v in histogram.items()},
        "max_tries": max(histogram) if histogram else 0,
        "frames_sent": stats.frames_sent,
        "resends": stats.resends,
        "naks": stats.naks,
        "reconnects": stats.reconnects,
        "host_bad_frames": stats.bad_frames,
        "frames_dropped": {
            "host_to_device": sum(p.tx.frames_dropped for p in ports),
            "device_to_host": sum(p.rx.frames_dropped for p in ports),
        },
        "bytes_corrupted": {
            "host_to_device": sum(p.tx.bytes_corrupted for p in ports),
            "device_to_host": sum(p.rx.bytes_corrupted for p in ports),
        },
        "seconds": round(elapsed, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--scenes", type=int, default=200, help="scenes timed per chain length")
    parser.add_argument("--fault-scenes", type=int, default=200, help="scenes sent through the noisy line")
    parser.add_argument("--fault-leds", type=int, default=64, help="LEDs of the scenes on the noisy line")
    parser.add_argument("--drop", type=float, default=0.10, help="share of frames dropped, each way")
    parser.add_argument("--corrupt", type=float, default=0.01, help="share of bytes corrupted, each way")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--verbose", action="store_true", help="show the link's warnings (reconnects)")
    args = parser.parse_args(argv)
    if not 1 <= args.fault_scenes <= 15 * (protocol.BRIGHTNESS_CAP - 50):
        parser.error("--fault-scenes: 1 to 690 (each scene must look different on the chain)")
    logging.basicConfig(level=logging.WARNING if args.verbose else logging.ERROR, format="%(name)s: %(message)s")

    module = _emulator_module()
    with tempfile.TemporaryDirectory(prefix="bench-leds-") as tmp:
        try:
            build = module.build_emulator(Path(tmp) / "build")
        except BaseException as error:  # pytest.fail's exception, when the tool chain is missing
            if isinstance(error, KeyboardInterrupt):
                raise
            print(f"cannot build the emulator: {error}", file=sys.stderr)
            return 1
        emulator = module.Emulator(build, Path(tmp))
        emulator.start()
        try:
            result = {
                "wire": wire_sizes(),
                "latency": [latency(emulator, count, args.scenes) for count in (64, 96)],
                "faults": noisy(emulator, args.fault_leds, args.fault_scenes, args.drop, args.corrupt, args.seed),
                "load_average": [round(x, 2) for x in os.getloadavg()],
            }
        finally:
            emulator.stop()

    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"wire, one whole scene at {protocol.BAUDRATE} baud:")
    for count, size in result["wire"].items():
        print(
            f"  {count} LEDs: {size['frame_bytes']} bytes ({size['frame_ms_at_115200']} ms), "
            f"all dark {size['frame_bytes_all_dark']} bytes; ACK {size['ack_bytes']} bytes"
        )
    print("show() until the device's ACK, over the emulator:")
    for run in result["latency"]:
        print(
            f"  {run['leds']} LEDs, {run['scenes']} scenes: median {run['median_ms']} ms, "
            f"p95 {run['p95_ms']} ms, max {run['max_ms']} ms, resends {run['resends']}"
        )
    fault = result["faults"]
    print(
        f"noisy line ({fault['drop']:.0%} of frames dropped, {fault['corrupt']:.0%} of bytes corrupted, "
        f"both ways; {fault['leds']} LEDs):"
    )
    print(f"  scenes sent: {fault['scenes_sent']}, acknowledged: {fault['scenes_acknowledged']}")
    print(f"  all applied in order: {'yes' if fault['all_applied_in_order'] else 'no'}")
    histogram = ", ".join(f"{tries}: {n}" for tries, n in fault["tries_histogram"].items())
    print(f"  tries per scene: {{{histogram}}}; max {fault['max_tries']}")
    print(
        f"  frames sent {fault['frames_sent']}, resends {fault['resends']}, NAKs {fault['naks']}, "
        f"reconnects {fault['reconnects']}, {fault['seconds']} s"
    )
    print(f"load average: {result['load_average']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
