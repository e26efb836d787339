# SPDX-License-Identifier: MIT
"""``bgboard vision``: calibrate a board, read a photo of it, check the reader on labelled
photos, read dice, print the corner markers, write sample photos.

OpenCV is loaded by the commands, never by building the parser.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from bgboard.cli.options import counting, die_size, fraction, position_from_any, positive
from bgboard.errors import CliError

if TYPE_CHECKING:
    import argparse

    from bgboard.cli.options import Subparsers


def register(sub: Subparsers) -> None:
    """Add ``vision`` and its commands to ``sub``: calibrate, read, check, dice, markers, sample."""
    vision = sub.add_parser("vision", help="the camera: calibrate a board, read a frame, read dice")
    vsub = vision.add_subparsers(dest="vision_command", required=True, metavar="COMMAND")
    for add in (_add_calibrate, _add_read, _add_check, _add_dice, _add_markers, _add_sample):
        add(vsub)


def vision_errors() -> tuple[type[Exception], ...]:
    """The camera stack's errors, said as ``bgboard: error: ...`` lines (loading it when called)."""
    from vision.calibration import CalibrationError
    from vision.dice import DiceModelError
    from vision.frames import CameraError
    from vision.labels import LabelError
    from vision.profile import ProfileError

    return CalibrationError, CameraError, ProfileError, DiceModelError, LabelError


def _add_calibrate(sub: Subparsers) -> None:
    p = sub.add_parser(
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


def cmd_vision_calibrate(args: argparse.Namespace, out: TextIO) -> int:
    """Calibrate a board from an image of a known position; write the profile.

    The playing field's corners are found in the image (the four corner markers if they are
    there, else the points themselves) unless --corners gives them. The image must show the
    position, with nothing over the field and the points where the corners put them: else
    nothing is written and the error says why and where in the image."""
    from vision.calibration import calibrate, find_markers, parse_corners
    from vision.frames import is_greyscale, read_image
    from vision.profile import check_output

    check_output(args.output)
    image = read_image(args.image)
    if is_greyscale(image):
        raise CliError(f"{args.image} is a greyscale photo: the board is read from a colour one (the sides' colours)")
    corners = None
    if args.markers:
        corners = find_markers(image)
    elif args.corners is not None:
        corners = parse_corners(args.corners)
    position = None
    if args.position is not None:
        try:
            position = position_from_any(args.position)[0]
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


def _add_read(sub: Subparsers) -> None:
    p = sub.add_parser("read", help="read a board from an image", description=cmd_vision_read.__doc__)
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


def cmd_vision_read(args: argparse.Namespace, out: TextIO) -> int:
    """Read the checkers, dice and cube from one image with a calibration profile."""
    from vision.frames import is_greyscale, read_image
    from vision.profile import Profile
    from vision.reader import BoardReader

    profile = Profile.load(args.profile)
    image = read_image(args.image)
    if is_greyscale(image):
        raise CliError(f"{args.image} is a greyscale photo: the board is read from a colour one (the sides' colours)")
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


def _add_check(sub: Subparsers) -> None:
    p = sub.add_parser(
        "check", help="read labelled photos of your board and say how well", description=cmd_vision_check.__doc__
    )
    p.add_argument("labels", help="the labels (JSON, the format docs/camera.md describes)")
    p.add_argument(
        "--corners",
        choices=("labelled", "found"),
        default="labelled",
        help="calibrate with the labels' corners or with those found in each photo (default: labelled;"
        " found corners are held against the labels either way)",
    )
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_vision_check)


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


def _add_dice(sub: Subparsers) -> None:
    p = sub.add_parser("dice", help="read the dice in a photo", description=cmd_vision_dice.__doc__)
    p.add_argument("image")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_vision_dice)


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


def _add_markers(sub: Subparsers) -> None:
    p = sub.add_parser(
        "markers", help="a printable sheet of the four corner markers", description=cmd_vision_markers.__doc__
    )
    p.add_argument("-o", "--output", required=True, help="the sheet to write: FILE.png, FILE.jpg or FILE.pdf")
    p.add_argument("--size-mm", type=positive, default=30.0, help="each marker's side in mm (default 30)")
    p.add_argument("--paper", choices=("a4", "letter"), default="a4", help="the paper size (default a4)")
    p.add_argument("--dpi", type=counting, default=300, help="the printer's resolution (default 300)")
    p.set_defaults(func=cmd_vision_markers)


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


def _add_sample(sub: Subparsers) -> None:
    p = sub.add_parser(
        "sample", help="sample photos to try the camera commands on", description=cmd_vision_sample.__doc__
    )
    p.add_argument("folder", help="the folder to write start.png and photos/ into (made if missing)")
    p.add_argument("--moves", type=counting, default=4, help="how many moves of the demo's game (default 4)")
    p.set_defaults(func=cmd_vision_sample)


def cmd_vision_sample(args: argparse.Namespace, out: TextIO) -> int:
    """Write sample camera photos to try the camera commands on without a camera: start.png to
    calibrate from, and photos/ with one photo per scene of the demo's game, for replay --hold."""
    from bgboard.sim.samples import write_samples

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
