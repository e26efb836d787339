# SPDX-License-Identifier: MIT
"""The ``bgboard`` command line.

Each subcommand is a small function; ``main`` parses the arguments, configures logging and
turns the engine's errors into ``bgboard: error: ...`` lines with exit status 1 (2 for usage
errors, as argparse does).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import math
import os
import re
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TextIO

import bgboard
from bgboard.errors import BgboardError, CliError
from engine.dice import Dice
from engine.errors import BackgammonError
from engine.judge import RawBoard, judge
from engine.match import MatchState, Phase
from engine.movegen import legal_plays
from engine.position import Position, decode_position_id
from engine.text import board_lines, default_margin

if TYPE_CHECKING:
    from bgboard.config import Config
    from bgboard.publish import BrokerUrl

log = logging.getLogger(__name__)


# -- option values ---------------------------------------------------------------------------


def _number(text: str, *, integer: bool = False) -> float:
    try:
        value = int(text) if integer else float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not {'a whole number' if integer else 'a number'}") from None
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
    """``HOST:PORT`` for a web server (:class:`bgboard.webserver.Bind`)."""
    from bgboard.webserver import Bind, BindError

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


# -- moves -----------------------------------------------------------------------------------


def _moves_line(line: str) -> dict[str, object]:
    fields = line.split()
    if len(fields) != 2:
        raise CliError("expected '<PositionID> <d1><d2>'")
    position = Position.from_id(fields[0])
    dice = Dice.parse(fields[1])
    results = legal_plays(position, dice).results
    ordered = sorted((after.position_id(), str(play)) for after, play in results.items())
    return {
        "position": fields[0],
        "dice": [dice.first, dice.second],
        "results": [pid for pid, _ in ordered],
        "plays": [play for _, play in ordered],
    }


def cmd_moves(args: argparse.Namespace, out: TextIO) -> int:
    """List the legal plays of one position and roll, or of many read from stdin (--batch)."""
    if args.batch:
        if args.position is not None:
            raise CliError("--batch reads '<PositionID> <d1><d2>' lines from stdin: leave out the position and roll")
        for n, line in enumerate(sys.stdin, start=1):
            try:
                record = _moves_line(line)
            except (BackgammonError, CliError) as exc:
                record = {"line": n, "error": str(exc)}
            out.write(json.dumps(record) + "\n")
            out.flush()
        return 0
    if args.position is None:
        raise CliError("give a position (Position ID, GNUbgID or XGID) and a roll, or --batch to read them from stdin")
    position, state = _position_from_any(args.position)
    if args.dice is not None:
        dice = Dice.parse(args.dice)
    elif state is not None and state.dice is not None:
        dice = state.dice
    else:
        raise CliError(f"which roll? {args.position} has no dice: give them after it, e.g. 31")
    plays = legal_plays(position, dice)
    if args.json:
        out.write(json.dumps(_moves_line(f"{position.position_id()} {dice}")) + "\n")
        return 0
    if not plays:
        out.write(f"no legal play with {dice.spoken()}\n")
        return 0
    ordered = sorted(plays.results.items(), key=lambda kv: str(kv[1]))
    width = max(len(str(play)) for _, play in ordered)
    for after, play in ordered:
        out.write(f"{play!s:<{width}}  {after.position_id()}\n")
    out.write(f"{len(plays)} distinct results, {plays.dice_used} dice each\n")
    return 0


# -- judge -----------------------------------------------------------------------------------


def cmd_judge(args: argparse.Namespace, out: TextIO) -> int:
    """Judge a move: the position before, the roll, the position after (same side on roll).

    Exit status 0 for a legal move or one on its way (partial), 1 for an illegal or unreadable one."""
    before = _position_from_any(args.before)[0]
    dice = Dice.parse(args.dice)
    after_text = args.after.strip()
    try:
        if after_text.upper().startswith("XGID=") or ":" in after_text:
            after = _position_from_any(after_text)[0]
            opponent, mover = after.opponent, after.mover
        else:
            # A bare Position ID is decoded raw: a board with checkers missing is judged, not refused.
            opponent, mover = decode_position_id(after_text)
    except BackgammonError as exc:
        raise CliError(f"{args.after!r} is not a Position ID, GNUbgID or XGID: {exc}") from None
    verdict = judge(before, dice, RawBoard(mover, opponent))
    status = 1 if verdict.verdict in ("illegal", "unreadable") else 0
    if args.json:
        out.write(json.dumps(verdict.to_json()) + "\n")
        return status
    line: str = verdict.verdict
    if verdict.play is not None and verdict.play:
        line += f": {verdict.play}"
    out.write(line + "\n")
    for reason in verdict.reasons:
        out.write(f"  {reason}\n")
    if verdict.marks:
        out.write(f"  points: {' '.join(_point_word(p) for p in verdict.marks)}\n")
    if verdict.nearest:
        out.write(f"  nearest legal: {', '.join(str(p) or 'no move' for p in verdict.nearest)}\n")
    return status


def _point_word(point: int) -> str:
    return {25: "bar", 0: "off"}.get(point, str(point))


# -- show ------------------------------------------------------------------------------------


def _position_from_any(text: str) -> tuple[Position, MatchState | None]:
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
        raise CliError(f"{text!r} is not a Position ID, GNUbgID or XGID: {exc}") from None


def show_lines(position: Position, state: MatchState | None, names: tuple[str, str] | None = None) -> list[str]:
    """``bgboard show``'s text: IDs, the board, pip counts, and the match when known."""
    if state is None:
        # A bare Position ID says nothing of the match: show it as a money game, cube in the
        # middle, with the side on roll (player 1 in gnubg's numbering) about to roll.
        state = MatchState(length=0, on_roll=1, phase=Phase.ROLL, position=position)
    on_roll = state.on_roll if state.on_roll is not None else 1
    who = names or (f"player {on_roll}", f"player {1 - on_roll}")
    cube = state.cube
    cube_text = f"Cube: {cube.value}"
    if state.length:
        middle = f"{state.length} point match ({cube_text})"
        scores = (f"{state.score[on_roll]} points", f"{state.score[1 - on_roll]} points")
    else:
        middle = f"Money session ({cube_text})"
        scores = ("", "")
    if state.crawford and state.length:
        middle += ", Crawford game"
    top = [scores[1]]
    bottom: list[str] = []
    if cube.owner is not None:
        (bottom if cube.owner == on_roll else top).append(f"Cube: {cube.value}, owned")
    if state.dice is not None and state.phase is Phase.MOVE:
        bottom.append(f"Rolled {state.dice}")
    elif state.phase is Phase.DOUBLED:
        bottom.append("Double offered")
    else:
        bottom.append("On roll")
    bottom.append(scores[0])
    lines = [
        f" GNU Backgammon  Position ID: {position.position_id()}",
        f"                 Match ID   : {state.match_id()}",
    ]
    margin = default_margin(position, who, middle, [t for t in top if t], [b for b in bottom if b])
    lines += board_lines(position, margin)
    pips = position.pips()
    lines += [
        "",
        f" Pip counts: X {pips[0]}, O {pips[1]}",
        f" GNUbgID: {state.gnubg_id()}",
        f" XGID: {state.xgid()}",
    ]
    return lines


def cmd_show(args: argparse.Namespace, out: TextIO) -> int:
    """Draw a position given as a GNUbgID, an XGID or a Position ID."""
    position, state = _position_from_any(args.id)
    for line in show_lines(position, state):
        out.write(line + "\n")
    return 0


# -- hint ------------------------------------------------------------------------------------


def cmd_hint(args: argparse.Namespace, out: TextIO) -> int:
    """GNU Backgammon's best plays for a roll, in its hint layout, or its cube advice when no
    dice are given (on the command line or in the GNUbgID). Needs gnubg (apt-get install gnubg)."""
    from bgboard.hint import HintRequestError, run_hint

    if args.id is not None:
        if args.gnubgid is not None or args.xgid is not None:
            raise CliError("give the position once: as ID, --gnubgid or --xgid")
        if args.id.strip().upper().startswith("XGID="):
            args.xgid = args.id
        else:
            args.gnubgid = args.id
    try:
        return run_hint(args, out)
    except HintRequestError as exc:
        raise CliError(str(exc)) from None


# -- the hall ---------------------------------------------------------------------------------


def broker_url(text: str) -> BrokerUrl:
    """An argparse type: ``mqtt://HOST:PORT`` (a :class:`bgboard.publish.BrokerUrl`)."""
    from bgboard.publish import BrokerUrl, PublishError

    try:
        return BrokerUrl.parse(text)
    except PublishError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def table_name(text: str) -> str:
    """An argparse type: a table name (letters, digits, - and _)."""
    from bgboard.publish import PublishError, check_table_name

    try:
        return check_table_name(text)
    except PublishError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _table_for(args: argparse.Namespace) -> str:
    """``--table``, which ``--publish`` needs."""
    if args.publish is not None and args.table is None:
        raise CliError("--publish needs --table NAME: the name the hall shows this table under")
    return str(args.table or "")


def _publish_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--publish",
        type=broker_url,
        metavar="mqtt://HOST:PORT",
        help="publish every stored action and the table's state to the hall's MQTT broker (docs/hall.md)",
    )
    p.add_argument("--table", type=table_name, help="this table's name in the hall (with --publish)")


def cmd_hall(args: argparse.Namespace, out: TextIO) -> int:
    """The tournament hall: keep every table's actions from the MQTT broker and serve the hall
    page and GET /api/tables (docs/hall.md). --make-acl writes the broker's access list and
    passwords for the tables named; --tournament on|off sends tournament mode to every board."""
    from bgboard.hall import HallError, make_acl, run_hall, send_tournament

    try:
        if args.make_acl is not None:
            secret = make_acl(args.make_acl, args.acl_dir)
            out.write(
                f"wrote {args.acl_dir}/acl, passwd, passwords.txt (mode 600) and bgboard.conf for the hall"
                f" and {len(secret) - 1} tables; see docs/hall.md\n"
            )
            return 0
        if args.broker is None:
            raise CliError("--broker mqtt://HOST:PORT is needed (or --make-acl TABLE...)")
        if args.tournament is not None:
            send_tournament(args.broker, args.tournament == "on")
            out.write(f"tournament mode {args.tournament}: sent to every board through {args.broker}\n")
            return 0
        return run_hall(args.broker, args.bind, args.db, say=lambda text: print(text, file=out, flush=True))
    except (HallError, ValueError) as exc:
        raise CliError(str(exc)) from None


# -- demo ------------------------------------------------------------------------------------


def _against_options(p: argparse.ArgumentParser, what: str, *, required: bool = False) -> None:
    """``--against gnubg``, ``--level`` and ``--side``: gnubg playing one side."""
    from engine.opponent import LEVELS

    p.add_argument("--against", choices=("gnubg",), required=required, help=f"{what}GNU Backgammon plays one side")
    p.add_argument(
        "--level",
        choices=tuple(LEVELS),
        default="expert",
        help="gnubg's level, its own plies and noise (default expert): "
        + ", ".join(str(level) for level in LEVELS.values()),
    )
    p.add_argument(
        "--side",
        type=int,
        choices=(1, 2),
        default=1,
        help="the side you play (default 1, the first player, at the bottom of the camera's view); "
        "gnubg plays the other",
    )


def _against(args: argparse.Namespace) -> tuple[str, int] | None:
    """gnubg's level and the side it plays (1 or 2), or None without ``--against``."""
    if getattr(args, "against", None) is None:
        return None
    return args.level, 3 - args.side


def cmd_demo(args: argparse.Namespace, out: TextIO) -> int:
    """Play a real game again on a rendered board: bgboard reads, judges and records it from
    the camera frames, lights the LEDs, and writes the match as a .mat file."""
    from bgboard.demo import run_demo
    from bgboard.webserver import BindError
    from firmware_bridge.emulator import EmulatorError

    if args.out is not None and args.out.exists() and not args.out.is_dir():
        raise CliError(f"--out {args.out} is a file, not a folder: name a folder for the store and the .mat file")
    if args.web is not None and threading.current_thread() is threading.main_thread():
        import signal

        def stop(number: int, frame: object) -> None:
            raise KeyboardInterrupt

        # The page stays up after the game until stopped: SIGTERM (a service manager, a test)
        # stops it as Ctrl-C does, closing the server and the store.
        signal.signal(signal.SIGTERM, stop)
    try:
        return run_demo(
            web=args.web,
            speed=args.speed,
            linger=True,
            json_lines=args.json,
            out=out,
            leds=args.leds,
            out_dir=args.out,
            seed=args.seed,
            fps=args.fps,
            noise=args.noise,
            moves=args.moves,
            teach=args.teach,
            publish=args.publish,
            table=_table_for(args),
            against=_against(args),
        )
    except EmulatorError as exc:
        raise CliError(f"--leds sim: {exc}") from None
    except BindError as exc:
        raise CliError(f"--web: {exc}") from None


def cmd_serve(args: argparse.Namespace, out: TextIO) -> int:
    """Serve the match browser over a match store: the stored matches, any game replayed move by
    move, .mat and .sgf downloads (history only: nothing can be changed). Ctrl-C stops it."""
    import time

    from bgboard.store import MatchStore, StoreError
    from bgboard.webserver import BindError, WebServer, history_app

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


# -- vision ----------------------------------------------------------------------------------


def _vision_errors() -> tuple[type[Exception], ...]:
    from vision.calibration import CalibrationError
    from vision.dice import DiceModelError
    from vision.frames import CameraError
    from vision.labels import LabelError
    from vision.profile import ProfileError

    return CalibrationError, CameraError, ProfileError, DiceModelError, LabelError


def cmd_vision_calibrate(args: argparse.Namespace, out: TextIO) -> int:
    """Calibrate a board from an image of a known position; write the profile.

    The playing field's corners are found in the image (the four corner markers if they are
    there, else the points themselves) unless --corners gives them. The image must show the
    position, with nothing over the field and the points where the corners put them: else
    nothing is written and the error says why and where in the image."""
    from vision.calibration import calibrate, find_markers, parse_corners
    from vision.frames import read_image
    from vision.profile import check_output

    check_output(args.output)
    image = read_image(args.image)
    corners = None
    if args.markers:
        corners = find_markers(image)
    elif args.corners is not None:
        corners = parse_corners(args.corners)
    position = None
    if args.position is not None:
        try:
            position = _position_from_any(args.position)[0]
        except CliError as exc:
            raise CliError(f"--position: {exc}") from None
    # Without --die-size, the size of real dice.
    sized = {} if args.die_size is None else {"die_fraction": args.die_size}
    profile = calibrate(image, corners, position=position, bar_fraction=args.bar_width, check=True, **sized)
    if args.markers:
        profile.source = "markers"
    profile.save(args.output)
    where = {"found": "found in the image", "markers": "from the markers", "corners": "as given"}.get(
        profile.source, profile.source
    )
    corners_text = " ".join(f"{x:.0f},{y:.0f}" for x, y in profile.corners)
    out.write(
        f"calibrated from {args.image}: field corners {where} ({corners_text}),"
        f" bar {profile.bar_fraction:.3f} of the field's width, dice {profile.die_fraction:.2f} of a checker;"
        f" profile written to {args.output}\n"
    )
    return 0


def cmd_vision_read(args: argparse.Namespace, out: TextIO) -> int:
    """Read the checkers, dice and cube from one image with a calibration profile."""
    from vision.frames import read_image
    from vision.profile import Profile
    from vision.reader import BoardReader

    profile = Profile.load(args.profile)
    image = read_image(args.image)
    reading = BoardReader(profile, points=args.points).read(image)
    if args.json:
        out.write(json.dumps(reading.to_json()) + "\n")
        return 0
    out.write(f"points (player 1's 1 to 24): {' '.join(str(n) for n in reading.points)}\n")
    out.write(f"bar {reading.bar[0]}-{reading.bar[1]}, off {reading.off[0]}-{reading.off[1]}\n")
    for die in reading.dice:
        out.write(f"die {die.value} on the {die.half} half{'' if die.flat else ' (cocked)'}\n")
    if reading.cube is not None:
        owner = "centred" if reading.cube.owner is None else f"player {reading.cube.owner}'s"
        out.write(f"cube {reading.cube.value}, {owner}\n")
    out.write(f"confidence {reading.confidence:.3f}{', OCCLUDED' if reading.occluded else ''}\n")
    return 0


def cmd_vision_check(args: argparse.Namespace, out: TextIO) -> int:
    """Read a labelled set of photos of your own board and say how well they were read.

    Each photo is read with a profile calibrated on another photo of the same camera (the one
    its label names with calibrate_on, else the first of the same size and field without a
    hand over it), or on itself; the calibration is checked as `vision calibrate` checks it.
    Prints per photo what was read wrong and how sure, then the whole set's figures."""
    from vision.check import check, summary
    from vision.labels import load_labels

    path = Path(args.labels)
    frames = load_labels(path)
    if not frames:
        raise CliError(f"{args.labels}: no frames to check")

    def line(result: Any) -> None:
        if args.json:
            return
        name = result.file
        if not result.read:
            why = result.refused or ""
            out.write(f"{name}: not read, calibration on {result.calibrated_on} refused: {why}\n")
            return
        wrong = ", ".join(f"{w} {a} read {b}" for w, a, b in result.wrong[:6]) or "nothing"
        flags = " OCCLUDED" if result.occluded else ""
        hand = " (hand over the field)" if result.hand else ""
        out.write(
            f"{name}{hand}: wrong {wrong}; confidence {result.confidence:.3f}{flags};"
            f" dice {list(result.dice)} of {list(result.dice_labelled)}; {result.read_ms:.0f} ms\n"
        )

    results = check(frames, path.parent, corners=args.corners, progress=line)
    figures = summary(results)
    if args.json:
        out.write(json.dumps({**figures, "results": [r.to_json() for r in results]}) + "\n")
        return 0
    clear = figures["hand_free"]
    out.write(
        f"{figures['frames']} frames, {clear} without a hand over the field:"
        f" {figures['exact']} read exactly, {figures['right_and_sure']} of them with confidence"
        f" {SURE_TEXT} or more; points right {_share(figures['points_right'])};"
        f" calibrations refused {figures['calibrations_refused']}\n"
        f"read wrong with confidence {SURE_TEXT} or more: {figures['confident_wrong']};"
        f" frames with a hand flagged: {figures['hands_flagged']} of {figures['hands']};"
        f" dice read right {_share(figures['dice_right'])}; field corners found within 2% of the field's width:"
        f" {figures['corners_within']} of {figures['corners_tried']}; a whole read {figures['read_ms']} ms (median)\n"
    )
    return 0


#: How sure a reading must be to be taken as it is (vision.check.SURE), spelt out so that
#: building the parser loads no OpenCV.
SURE_TEXT = "0.9"


def _share(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def cmd_vision_dice(args: argparse.Namespace, out: TextIO) -> int:
    """Find and read the six-sided dice in any top-down photo (ArUco markers in it are no dice)."""
    from vision.dice import read_dice
    from vision.frames import read_image
    from vision.markers import hide_markers, marker_quads, on_marker

    image = read_image(args.image)
    # The corner markers' black and white cells look like pips: they are painted over first,
    # and anything still found on one is dropped.
    quads = marker_quads(image)
    dice = [d for d in read_dice(hide_markers(image, quads)) if not on_marker(d.box, quads)]
    if args.json:
        records = [{"value": d.value, "box": list(d.box), "confidence": round(d.confidence, 4)} for d in dice]
        out.write(json.dumps({"dice": records}) + "\n")
        return 0
    for d in dice:
        out.write(f"{d.value}  at {d.box[0]},{d.box[1]} ({d.box[2]}x{d.box[3]})  confidence {d.confidence:.3f}\n")
    out.write(f"{len(dice)} dice\n")
    return 0


# -- LEDs and devices ------------------------------------------------------------------------


def _hardware_errors() -> tuple[type[Exception], ...]:
    from hardware.layout import LayoutError
    from hardware.panels import PanelError

    return LayoutError, PanelError


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


def cmd_vision_sample(args: argparse.Namespace, out: TextIO) -> int:
    """Write sample camera photos to try the camera commands on without a camera: start.png to
    calibrate from, and photos/ with one photo per scene of the demo's game, for replay --hold."""
    from bgboard.samples import write_samples

    if not args.folder.strip():
        raise CliError("name a folder for the photos")
    folder = Path(args.folder)
    if folder.exists() and not folder.is_dir():
        raise CliError(f"{folder} is a file, not a folder")
    samples = write_samples(folder, moves=args.moves)
    out.write(f"wrote {samples.start}: the starting position, with the corner markers, to calibrate from\n")
    out.write(f"wrote {len(samples.photos)} photos in {folder / 'photos'}, one a scene:\n")
    for path, caption in zip(samples.photos, samples.captions, strict=True):
        out.write(f"  {path.name}  {caption}\n")
    if samples.moves < args.moves:
        out.write(f"the game's first {samples.moves} moves only: then comes a double, which photos do not show\n")
    return 0


def cmd_vision_markers(args: argparse.Namespace, out: TextIO) -> int:
    """Write a printable sheet of the four ArUco corner markers: PNG, JPEG or PDF, as FILE's
    suffix says (.png, .jpg or .jpeg, .pdf)."""
    from vision.markers import place_words, write_marker_sheet

    try:
        path = write_marker_sheet(args.output, size_mm=args.size_mm, paper=args.paper, dpi=args.dpi)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    out.write(f"wrote {path}: four {args.size_mm:g} mm markers on {args.paper} paper at {args.dpi} dpi\n")
    for marker_id in range(4):
        out.write(f"  {place_words(marker_id)}\n")
    out.write("print at 100% (no 'fit to page'); the sheet's 100 mm bar checks the scale\n")
    return 0


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
        config=_config_file(args),
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


# -- the match store -------------------------------------------------------------------------


def _store_path(args: argparse.Namespace) -> Path:
    from bgboard.store import default_store_path

    if args.store is None:
        return default_store_path()
    if not args.store.strip():
        raise CliError("--store names no file: give the match store's path, or leave --store out")
    return Path(args.store).expanduser()


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
            f"{_count(totals['illegal'], 'illegal play')}, {_count(totals['problems'], 'problem')}, "
            f"{_count(totals['lost'], 'lost move')}\n"
        )
    return 0 if totals["illegal"] == 0 and totals["problems"] == 0 else 1


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"


def _write_check_report(report: object, out: TextIO) -> None:
    """One file's report as text: a summary line, then what is wrong, indented."""
    from engine.matcheck import FileReport

    assert isinstance(report, FileReport)
    verdict = "ok"
    if not report.ok:
        verdict = f"{_count(len(report.illegal), 'illegal play')}, {_count(len(report.problems), 'problem')}"
    if report.lost_moves:
        verdict += f", {_count(len(report.lost_moves), 'lost move')}"
    out.write(
        f"{report.file}: {_count(report.games, 'game')}, {_count(report.plays, 'play')}, "
        f"{_count(report.cube_actions, 'cube action')}: {verdict}\n"
    )
    for bad in report.illegal:
        where = f"game {bad.game}, move {bad.move}, {bad.player}"
        out.write(f"  illegal: {where}: {bad.play!r}: {bad.reason} (line {bad.line})\n")
    for problem in report.problems:
        out.write(f"  problem: {problem}\n")
    for lost in report.lost_moves:
        out.write(f"  lost move: game {lost.game}, move {lost.move}, {lost.player}: {lost.text!r} (line {lost.line})\n")


# -- at the table: referee and replay --------------------------------------------------------


def _config_file(args: argparse.Namespace) -> Path | None:
    """The ``--config`` file, or ``None`` for the usual search (``$BGBOARD_CONFIG``, ~/.config...)."""
    return Path(args.config).expanduser() if args.config else None


def _load_config(args: argparse.Namespace) -> Config:
    """The config in force, its notices (a renamed key, and what to write instead) said on stderr."""
    from bgboard.config import load_config

    config = load_config(_config_file(args))
    for notice in config.notices:
        print(f"bgboard: note: {notice}", file=sys.stderr)
    return config


def _setup_failed(exc: Exception) -> int:
    """A setting that keeps the command from starting: exit status 2, as for a usage error."""
    print(f"bgboard: error: {exc}", file=sys.stderr)
    return 2


def cmd_referee(args: argparse.Namespace, out: TextIO) -> int:
    """Referee and record a match at the table until it ends or Ctrl-C (SIGINT/SIGTERM).

    Reads the camera, the buttons and commands typed at the keyboard (done, undo, double, take,
    drop, hint, resign, accept, reject, dice 52, correct 13/8 13/11); prints one line per event.
    """
    import signal

    main_thread = threading.current_thread() is threading.main_thread()
    stop = threading.Event()
    previous = {}
    if main_thread:
        # Ctrl-C or systemd's stop ends the match cleanly: store closed, LEDs dark. Set first,
        # before the camera stack loads, so that a stop at any moment is a clean one.
        previous = {number: signal.signal(number, lambda *_: stop.set()) for number in (signal.SIGINT, signal.SIGTERM)}
    try:
        return _referee(args, out, stop, main_thread)
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def _referee(args: argparse.Namespace, out: TextIO, stop: threading.Event, main_thread: bool) -> int:
    from bgboard.config import ConfigError
    from bgboard.referee import Referee, SetupError, StoppedError, stuck_threads

    # Each override, the flag that gives it (errors name the flag), and its value.
    flags = {
        "camera_source": ("--camera", args.camera),
        "camera_profile": ("--profile", args.profile),
        "leds_panel": ("--leds", args.leds),
        "store_path": ("--store", args.store),
        "match_mode": ("--mode", args.mode),
        "match_length": ("--length", args.length),
        "match_players": ("--players", args.players),
        "match_teach": ("--teach", True if args.teach else None),
    }
    given = {name.replace("_", ".", 1): flag for name, (flag, value) in flags.items() if value is not None}
    against = _against(args)
    if stop.is_set():
        return 0  # stopped while starting: nothing was recorded
    try:
        config = _load_config(args).with_overrides(
            flag_names={name: flag for name, (flag, _) in flags.items()},
            **{name: value for name, (_, value) in flags.items()},
        )
        table = _table_for(args)
        referee = Referee(
            config,
            out=out,
            json_lines=args.json,
            resume=args.resume,
            stdin=sys.stdin,
            given=given,
            stop=stop,
            publish=args.publish,
            table_name=table,
            web=args.web,
            against=against,
        )
    except StoppedError:
        status = 0
    except (ConfigError, SetupError) as exc:
        status = _setup_failed(exc)
    else:
        status = referee.run(stop)
    if main_thread and stuck_threads():
        # A camera driver that never returned: Python's exit would abort inside it, so the
        # process ends here, everything else being closed already.
        out.flush()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)
    return status


def cmd_play(args: argparse.Namespace, out: TextIO) -> int:
    """Play a match against GNU Backgammon at the real board, refereed and recorded as by
    bgboard referee: you roll real dice for both sides, gnubg's move lights up (from-points
    blue, to-points green) and you move its checkers; the camera checks that the board shows
    its move. gnubg doubles, takes, drops and resigns itself; its cube action shows on the cube
    LEDs and is said. Until Ctrl-C (SIGINT/SIGTERM) or the end of the match."""
    return cmd_referee(args, out)


def cmd_replay(args: argparse.Namespace, out: TextIO) -> int:
    """Run recorded frames (a folder of photos, a video file, a frame-source URL) through the
    referee's pipeline; print the events and a summary. Nothing is stored unless --store is given."""
    from bgboard.config import ConfigError
    from bgboard.referee import SetupError
    from bgboard.replay import replay

    try:
        config = _load_config(args).with_overrides(camera_profile=args.profile, match_mode=args.mode)
        replay(
            args.source,
            config,
            out=out,
            json_lines=args.json,
            fps=args.fps,
            store_path=args.store,
            hold=args.hold,
            profile_name="--profile" if args.profile is not None else "camera.profile",
        )
    except (ConfigError, SetupError) as exc:
        return _setup_failed(exc)
    return 0


# -- main ------------------------------------------------------------------------------------


def _store_option(parser: argparse.ArgumentParser) -> None:
    # --db was this option's first name; it still works.
    parser.add_argument(
        "--store",
        "--db",
        dest="store",
        help="the match store (default: $BGBOARD_STORE or ~/.local/share/bgboard/matches.sqlite3)",
    )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand."""
    parser = argparse.ArgumentParser(
        prog="bgboard",
        description="Referee, teach and record backgammon played on a real board.",
    )
    parser.add_argument("--version", action="version", version=f"bgboard {bgboard.__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more log output")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("moves", help="legal plays for a position and roll", description=cmd_moves.__doc__)
    p.add_argument("position", nargs="?", help="Position ID (side on roll), GNUbgID or XGID")
    p.add_argument("dice", nargs="?", help="the roll, e.g. 31")
    p.add_argument(
        "--batch", action="store_true", help="read '<PositionID> <d1><d2>' lines from stdin, write JSON lines"
    )
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_moves)

    p = sub.add_parser("judge", help="judge a move from the positions before and after", description=cmd_judge.__doc__)
    p.add_argument("before", help="the position before the move (Position ID, GNUbgID or XGID; side on roll)")
    p.add_argument("dice", help="the roll, e.g. 63")
    p.add_argument("after", help="the position after the move, still from the side that moved")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_judge)

    p = sub.add_parser("show", help="draw a position", description=cmd_show.__doc__)
    p.add_argument("id", help="GNUbgID, XGID or Position ID")
    p.set_defaults(func=cmd_show)

    p = sub.add_parser("hint", help="GNU Backgammon's ranked plays or cube advice", description=cmd_hint.__doc__)
    p.add_argument("id", nargs="?", help="the position: a GNUbgID, an XGID or a Position ID (a money game)")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--gnubgid", help="the position and match as a GNUbgID (PositionID:MatchID)")
    which.add_argument("--xgid", help="the position and match as an XGID")
    p.add_argument("--dice", help="the roll, e.g. 31 (default: the dice in the ID; none: cube advice)")
    p.add_argument("--ply", type=int, choices=(0, 1, 2), default=0, help="gnubg's search depth (default 0)")
    p.add_argument("-n", type=counting, default=5, help="how many plays to list (default 5)")
    p.add_argument("--timeout", type=positive, default=30.0, help="seconds gnubg may take (default 30)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_hint)

    vision = sub.add_parser("vision", help="the camera: calibrate a board, read a frame, read dice")
    vsub = vision.add_subparsers(dest="vision_command", required=True, metavar="COMMAND")
    p = vsub.add_parser(
        "calibrate",
        help="make a board profile from an image, checked by reading the image back",
        description=cmd_vision_calibrate.__doc__,
    )
    p.add_argument("image", help="an image of the board showing a known position")
    where = p.add_mutually_exclusive_group()
    where.add_argument(
        "--corners",
        help="the field's corners 'x,y x,y x,y x,y', beside player 1's 13-, 24-, 1- and 12-point"
        " (default: found in the image)",
    )
    where.add_argument("--markers", action="store_true", help="find the four ArUco corner markers, and only them")
    p.add_argument(
        "--position", help="what the image shows, player 1 on roll: a Position ID, GNUbgID or XGID (default: the start)"
    )
    p.add_argument(
        "--bar-width", type=fraction, help="the bar's width as a fraction of the field's (0: none); default: measured"
    )
    p.add_argument(
        "--die-size",
        type=die_size,
        metavar="FRACTION",
        help="a die's side over a checker's diameter (real dice: 0.4 to 0.5, the default 0.45; the 2D renderer: 0.65)",
    )
    p.add_argument("-o", "--output", required=True, help="the profile to write (TOML)")
    p.set_defaults(func=cmd_vision_calibrate)
    p = vsub.add_parser("read", help="read a board from an image", description=cmd_vision_read.__doc__)
    p.add_argument("image")
    p.add_argument("--profile", required=True, help="the board's calibration profile")
    p.add_argument(
        "--points",
        # vision.reader.POINT_READERS, spelt out: building the parser must not load OpenCV.
        choices=("auto", "net", "model"),
        default="auto",
        help="who reads the points: the learned reader (net), the calibration's models (model), or auto",
    )
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_vision_read)
    p = vsub.add_parser(
        "check", help="read labelled photos of your board and say how well", description=cmd_vision_check.__doc__
    )
    p.add_argument("labels", help='the labels (JSON, the format the README\'s "The camera" describes)')
    p.add_argument(
        "--corners",
        choices=("labelled", "found"),
        default="labelled",
        help="calibrate with the labels' corners or with those found in each photo (default: labelled;"
        " found corners are held against the labels either way)",
    )
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_vision_check)
    p = vsub.add_parser("dice", help="read the dice in a photo", description=cmd_vision_dice.__doc__)
    p.add_argument("image")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_vision_dice)
    p = vsub.add_parser(
        "markers", help="a printable sheet of the four corner markers", description=cmd_vision_markers.__doc__
    )
    p.add_argument("-o", "--output", required=True, help="the sheet to write: FILE.png, FILE.jpg or FILE.pdf")
    p.add_argument("--size-mm", type=positive, default=30.0, help="each marker's side in mm (default 30)")
    p.add_argument("--paper", choices=("a4", "letter"), default="a4", help="the paper size (default a4)")
    p.add_argument("--dpi", type=counting, default=300, help="the printer's resolution (default 300)")
    p.set_defaults(func=cmd_vision_markers)
    p = vsub.add_parser(
        "sample", help="sample photos to try the camera commands on", description=cmd_vision_sample.__doc__
    )
    p.add_argument("folder", help="the folder to write start.png and photos/ into (made if missing)")
    p.add_argument("--moves", type=counting, default=4, help="how many moves of the demo's game (default 4)")
    p.set_defaults(func=cmd_vision_sample)

    p = sub.add_parser("demo", help="referee a real game on a rendered board", description=cmd_demo.__doc__)
    p.add_argument("--json", action="store_true", help="print the events as JSON Lines")
    p.add_argument(
        "--leds",
        choices=("terminal", "sim", "none"),
        default="terminal",
        help="draw the LEDs in the terminal (default), drive the real firmware in simavr, or none",
    )
    p.add_argument(
        "--out", type=folder_name, help="folder for the match store and the .mat file (default: a new temp folder)"
    )
    p.add_argument("--seed", type=seed, default=7, help="seed for the frames' details and the wrong move (default 7)")
    p.add_argument("--fps", type=positive, default=5.0, help="frames a second of the simulated camera (default 5)")
    p.add_argument(
        "--noise", type=grey_levels, default=2.0, help="sensor noise of still frames, grey levels (default 2)"
    )
    p.add_argument("--moves", type=counting, help="stop after this many moves (default: the whole game)")
    p.add_argument(
        "--teach",
        action="store_true",
        help="teach mode: gnubg's best play lit after each roll, its verdict on each move",
    )
    _against_options(p, "a new game against gnubg instead of the recorded one: ")
    _publish_options(p)
    p.add_argument(
        "--web",
        type=bind_address,
        metavar="HOST:PORT",
        help="serve the live page there (localhost unless HOST names another address); stays up after the game",
    )
    p.add_argument(
        "--speed",
        type=speed,
        help="seconds of the camera's clock per real second, 0 as fast as possible (default: 1 with --web, else 0)",
    )
    p.set_defaults(func=cmd_demo)

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
    p.set_defaults(func=cmd_hall)

    leds = sub.add_parser("leds", help="the board's LEDs: check the wiring")
    lsub = leds.add_subparsers(dest="leds_command", required=True, metavar="COMMAND")
    p = lsub.add_parser("check", help="walk every LED of the layout", description=cmd_leds_check.__doc__)
    p.add_argument(
        "--port", required=True, help="the LED controller's port: a device path or a pyserial URL (hwgrep://VID:PID)"
    )
    p.add_argument("--layout", help="the LED layout file (default: the standard layout)")
    p.add_argument("--step-ms", type=counting, default=300, help="how long each LED stays lit (default 300)")
    p.add_argument(
        "--timeout", type=positive, default=5.0, help="seconds to wait for the controller to answer (default 5)"
    )
    p.set_defaults(func=cmd_leds_check)

    p = sub.add_parser(
        "devices", help="list serial ports, cameras and the GPIO backend", description=cmd_devices.__doc__
    )
    p.set_defaults(func=cmd_devices)

    p = sub.add_parser("doctor", help="check an installation and say how to fix it", description=cmd_doctor.__doc__)
    p.add_argument("--config", help="the config file (default: $BGBOARD_CONFIG, ~/.config, /etc/bgboard/config.toml)")
    p.add_argument("--buttons", action="store_true", help="also ask for a press of each button")
    p.add_argument("--timeout", type=positive, default=10.0, help="seconds to wait for the camera, LEDs, a button (10)")
    p.add_argument("--save-frame", metavar="FILE", help="save the camera's frame (a photo to calibrate from)")
    p.add_argument("--json", action="store_true", help="print the checks as one JSON object")
    p.set_defaults(func=cmd_doctor)

    p = sub.add_parser("matches", help="list the matches in the match store", description=cmd_matches.__doc__)
    _store_option(p)
    p.add_argument("--json", action="store_true", help="print one JSON object per match")
    p.set_defaults(func=cmd_matches)

    p = sub.add_parser("export", help="write a stored match as a .mat or .sgf file", description=cmd_export.__doc__)
    p.add_argument("match", help="the match's number (see bgboard matches) or 'last'")
    p.add_argument("--format", choices=("mat", "sgf"), help="the file format (default: the -o file's suffix, else mat)")
    p.add_argument(
        "-o", "--output", default=".", help="the file to write, or a folder for the usual file name (default: here)"
    )
    p.add_argument("--force", action="store_true", help="replace the file if it exists")
    _store_option(p)
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("analyse", help="GNU Backgammon's analysis of a match", description=cmd_analyse.__doc__)
    p.add_argument("match", help="a stored match's number (see bgboard matches), 'last', or a .mat file")
    p.add_argument("--ply", type=int, default=0, help="gnubg's search depth for checker play and cube (default: 0)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    _store_option(p)
    p.set_defaults(func=cmd_analyse)

    p = sub.add_parser(
        "check-match", help="replay .mat match files and report illegal plays", description=cmd_check_match.__doc__
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help=".mat files, or folders of them (.mat and .txt files)")
    p.add_argument("--json", action="store_true", help="print one JSON object per file")
    p.set_defaults(func=cmd_check_match)

    for name in ("referee", "play"):
        if name == "referee":
            p = sub.add_parser(
                "referee", help="referee and record a match at the table", description=cmd_referee.__doc__
            )
        else:
            p = sub.add_parser(
                "play", help="play a match against GNU Backgammon at the real board", description=cmd_play.__doc__
            )
            _against_options(p, "", required=True)
        _referee_options(p)
    _more_commands(sub)
    return parser


def _referee_options(p: argparse.ArgumentParser) -> None:
    """The options of ``referee`` and ``play``."""
    p.add_argument("--config", help="the config file (default: $BGBOARD_CONFIG, ~/.config/bgboard/config.toml)")
    p.add_argument("--camera", help="the frame source (camera.source): picamera2:, v4l2:///dev/video0, video:FILE")
    p.add_argument(
        "--profile",
        help="the board's calibration profile (camera.profile); with --web it may not exist yet:"
        " the live page's calibration view calibrates the board and writes it",
    )
    p.add_argument("--leds", help="the LED panel (leds.panel): fake, terminal, serial:/dev/ttyUSB0, gpio595:...")
    p.add_argument("--store", help="the match store (store.path)")
    p.add_argument("--mode", choices=("referee", "log"), help="judge every move, or only record (match.mode)")
    p.add_argument("--length", help="points to win the match, 0 for money (match.length)")
    p.add_argument("--players", help='the players\' names, "Ann,Bob" (match.players)')
    p.add_argument("--resume", action="store_true", help="carry on with the last unfinished match in the store")
    p.add_argument(
        "--teach",
        action="store_true",
        help="light gnubg's best play after each roll and say its verdict on each move (match.teach)",
    )
    p.add_argument("--json", action="store_true", help="print the events as JSON Lines")
    _publish_options(p)
    p.add_argument(
        "--web",
        type=bind_address,
        metavar="HOST:PORT",
        help="serve the live page there, with its calibration view (localhost unless HOST names another address)",
    )
    p.set_defaults(func=cmd_referee if p.prog.endswith("referee") else cmd_play)


def _more_commands(sub: Any) -> None:

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

    p = sub.add_parser("replay", help="run recorded frames through the referee", description=cmd_replay.__doc__)
    p.add_argument("source", help="a folder of photos (name order), a video file, or a frame-source URL")
    p.add_argument("--profile", help="the board's calibration profile (default: camera.profile)")
    p.add_argument("--config", help="the config file (match settings, settle time)")
    p.add_argument("--fps", type=positive, help="frames a second (default: the frames' own times; images 10 a second)")
    p.add_argument("--mode", choices=("referee", "log"), help="judge every move, or only record (match.mode)")
    p.add_argument(
        "--hold", type=positive, help="show each photo for this many seconds (a folder with one photo per scene)"
    )
    p.add_argument("--store", help="record into this match store (default: nothing is stored)")
    p.add_argument("--json", action="store_true", help="print the events as JSON Lines")
    p.set_defaults(func=cmd_replay)


#: An XGID's body: 26 point letters and the nine fields after them.
_XGID_BODY: Final = re.compile(r"^[-a-oA-O]{26}(:[^:\s]*){9}$")

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
        handled += _vision_errors()
    if args.command in ("leds", "devices"):
        handled += _hardware_errors()
    try:
        status: int = args.func(args, stream)
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
    return status
