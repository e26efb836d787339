# SPDX-License-Identifier: MIT
"""``bgboard leds check``, ``devices`` and ``doctor``: the board's parts and an installation, checked."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from bgboard.cli.options import config_file, counting, positive
from bgboard.errors import CliError

if TYPE_CHECKING:
    import argparse

    from bgboard.cli.options import Subparsers


def register(sub: Subparsers) -> None:
    """Add ``leds`` (and its ``check``), ``devices`` and ``doctor`` to ``sub``."""
    leds = sub.add_parser("leds", help="the board's LEDs: check the wiring")
    lsub = leds.add_subparsers(dest="leds_command", required=True, metavar="COMMAND")
    _add_leds_check(lsub)
    _add_devices(sub)
    _add_doctor(sub)


def hardware_errors() -> tuple[type[Exception], ...]:
    """The LED layout's and panels' errors, said as ``bgboard: error: ...`` lines."""
    from hardware.layout import LayoutError
    from hardware.panels import PanelError

    return LayoutError, PanelError


# -- LEDs ------------------------------------------------------------------------------------


def _add_leds_check(sub: Subparsers) -> None:
    p = sub.add_parser("check", help="walk every LED of the layout", description=cmd_leds_check.__doc__)
    p.add_argument(
        "--port", required=True, help="the LED controller's port: a device path or a pyserial URL (hwgrep://VID:PID)"
    )
    p.add_argument("--layout", help="the LED layout file (default: the standard layout)")
    p.add_argument("--step-ms", type=counting, default=300, help="how long each LED stays lit (default 300)")
    p.add_argument(
        "--timeout", type=positive, default=5.0, help="seconds to wait for the controller to answer (default 5)"
    )
    p.set_defaults(func=cmd_leds_check)


def cmd_leds_check(args: argparse.Namespace, out: TextIO) -> int:
    """Light each LED of the layout in turn, naming it, then every LED in each colour, then dark."""
    from hardware.check import led_check
    from hardware.layout import LedLayout
    from hardware.serial_panel import open_link

    if not (isinstance(args.timeout, int | float) and math.isfinite(args.timeout) and args.timeout > 0):
        # The parser's type already refuses these; a usage error all the same when called directly.
        message = f"argument --timeout: must be more than 0, not {args.timeout}"
        print(f"bgboard leds check: error: {message}", file=sys.stderr)
        return 2
    if args.step_ms < 0:
        raise CliError(f"--step-ms must not be negative, not {args.step_ms}")
    layout = LedLayout.from_file_or_name(args.layout)
    # A port that does not exist, or a URL pyserial does not know, fails here at once.
    link = open_link(args.port, layout, boot_timeout=min(args.timeout, 3.0))
    try:
        led_check(
            link,
            layout,
            out,
            url=args.port,
            step_ms=args.step_ms,
            connect_timeout=args.timeout,
            last_error=lambda: link.stats.last_error,
        )
    finally:
        link.close()
    return 0


# -- devices ---------------------------------------------------------------------------------


def _cameras() -> list[str]:
    """``/dev/video*`` capture devices with their driver names, and whether picamera2 is there."""
    import importlib.util
    from pathlib import Path

    lines = []
    for device in sorted(Path("/dev").glob("video*"), key=lambda p: (len(p.name), p.name)):
        name_file = Path("/sys/class/video4linux") / device.name / "name"
        try:
            name = name_file.read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            name = ""
        lines.append(f"{device}  {name}".rstrip())
    if not lines:
        lines.append("no /dev/video* devices")
    try:
        has_picamera2 = importlib.util.find_spec("picamera2") is not None
    except (ImportError, ValueError):
        has_picamera2 = False
    lines.append(
        'picamera2: importable (use camera = "picamera2:")'
        if has_picamera2
        else "picamera2: not importable (on Raspberry Pi OS: sudo apt install python3-picamera2)"
    )
    return lines


def _add_devices(sub: Subparsers) -> None:
    p = sub.add_parser(
        "devices", help="list serial ports, cameras and the GPIO backend", description=cmd_devices.__doc__
    )
    p.set_defaults(func=cmd_devices)


def cmd_devices(args: argparse.Namespace, out: TextIO) -> int:
    """List the serial ports (for the LED controller), the cameras and the GPIO backend."""
    from hardware.devices import gpio_backend, serial_ports

    out.write("serial ports:\n")
    ports = serial_ports()
    if ports is None:
        out.write("  pyserial is not installed (pip install pyserial)\n")
    elif not ports:
        out.write("  none found\n")
    for port in ports or []:
        out.write("  " + port.describe().replace("\n", "\n  ") + "\n")
    out.write("cameras:\n")
    for line in _cameras():
        out.write(f"  {line}\n")
    out.write(f"GPIO backend: {gpio_backend()}\n")
    return 0


# -- doctor ----------------------------------------------------------------------------------


def _add_doctor(sub: Subparsers) -> None:
    p = sub.add_parser("doctor", help="check an installation and say how to fix it", description=cmd_doctor.__doc__)
    p.add_argument("--config", help="the config file (default: $BGBOARD_CONFIG, ~/.config, /etc/bgboard/config.toml)")
    p.add_argument("--buttons", action="store_true", help="also ask for a press of each button")
    p.add_argument("--timeout", type=positive, default=10.0, help="seconds to wait for the camera, LEDs, a button (10)")
    p.add_argument("--save-frame", metavar="FILE", help="save the camera's frame (a photo to calibrate from)")
    p.add_argument("--json", action="store_true", help="print the checks as one JSON object")
    p.set_defaults(func=cmd_doctor)


def cmd_doctor(args: argparse.Namespace, out: TextIO) -> int:
    """Check an installation (config, service, camera, calibration, LED controller, buttons, gnubg,
    GPIO, free space, the service user) and say what is wrong and how to fix it. Exit 1 on a problem."""
    from bgboard.doctor import DoctorOptions, exit_status, run_checks

    if args.save_frame is not None:
        from vision.frames import output_problem

        problem = output_problem(args.save_frame)
        if problem is None and Path(args.save_frame).suffix.lower() not in (
            ".png",
            ".jpg",
            ".jpeg",
            ".bmp",
            ".tif",
            ".tiff",
            ".webp",
        ):
            problem = "name a .png or .jpg file"
        if problem is not None:
            raise CliError(f"--save-frame {args.save_frame}: {problem}")
    options = DoctorOptions(
        config=config_file(args),
        buttons=args.buttons,
        camera_timeout=args.timeout,
        leds_timeout=args.timeout,
        button_timeout=args.timeout,
        save_frame=Path(args.save_frame) if args.save_frame else None,
    )
    # Button prompts go to stderr with --json, so stdout stays one JSON document.
    results = run_checks(options, sys.stderr if args.json else out)
    if args.json:
        problems = sum(r.status == "problem" for r in results)
        warnings = sum(r.status == "warning" for r in results)
        document = {"checks": [r.to_json() for r in results], "problems": problems, "warnings": warnings}
        out.write(json.dumps(document) + "\n")
    else:
        for result in results:
            out.write(result.line() + "\n")
    return exit_status(results)
