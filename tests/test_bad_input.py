# SPDX-License-Identifier: MIT
"""The sweep of bad inputs, kept: per command, the bad input, the one line it must print, and the
exit status. A new command gets its rows here.

Each row runs the command line in this process (``bgboard.cli.main``) with the input, and checks
that the error output is one line (no traceback) holding the expected words, and the status.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from bgboard.cli import main

ROOT = Path(__file__).resolve().parent.parent
PHOTO = ROOT.parent / "shared" / "data" / "boards" / "christiancorro" / "data" / "images" / "test"


@pytest.fixture
def bad(tmp_path: Path, profile: Path) -> Iterator[dict[str, str]]:
    """Bad files to name: a named pipe, a link to a device, a folder, a PNG named .mat."""
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    null_link = tmp_path / "out.toml"
    null_link.symlink_to("/dev/null")
    png = tmp_path / "board.mat"
    png.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(64))
    photo = sorted(PHOTO.glob("*.*g"))[0]
    garbage = tmp_path / "garbage.toml"
    text = profile.read_text(encoding="utf-8")
    garbage.write_text(re.sub(r'(?m)^position = ".*"$', 'position = "garbage"', text), encoding="utf-8")
    assert 'position = "garbage"' in garbage.read_text(encoding="utf-8")
    grey = tmp_path / "grey.png"
    import cv2

    assert cv2.imwrite(str(grey), cv2.imread(str(photo), cv2.IMREAD_GRAYSCALE))
    a_file = tmp_path / "a-file"
    a_file.write_text("x", encoding="utf-8")
    long_match = tmp_path / "long.mat"
    demo = (ROOT / "bgboard" / "data" / "demo-match.mat").read_text(encoding="utf-8")
    long_match.write_text(re.sub(r"(?m)^3 point match", "99 point match", demo), encoding="utf-8")
    cut = tmp_path / "cut.jpg"
    cut.write_bytes(photo.read_bytes()[:3000])
    yield {
        "pipe": str(pipe),
        "null_link": str(null_link),
        "folder": str(tmp_path),
        "png_mat": str(png),
        "photo": str(photo),
        "cut_jpg": str(cut),
        "garbage_position": str(garbage),
        "grey": str(grey),
        "long_match": str(long_match),
        "a_file": str(a_file),
        "profile": str(profile),
        "cut_png": str(png),
    }


#: (the arguments, with {names} of the fixture's files; words the one line must hold; status)
ROWS = [
    (["check-match", "/dev/zero"], "not a regular file (a device, a pipe or a folder), so not a match file", 1),
    (["check-match", "{pipe}"], "not a regular file", 1),
    (["vision", "read", "{photo}", "--profile", "/dev/zero"], "cannot read /dev/zero: not a regular file", 1),
    (["vision", "read", "{photo}", "--profile", "{pipe}"], "so not a profile", 1),
    (["referee", "--config", "/dev/zero", "--camera", "fake:x"], "/dev/zero: cannot read the config: not a regular", 2),
    (["leds", "check", "--port", "/dev/null", "--layout", "/dev/zero"], "so not an LED layout", 1),
    (["vision", "calibrate", "{photo}", "--markers", "-o", "{pipe}"], "it is a named pipe, not a file", 1),
    (["vision", "calibrate", "{photo}", "--markers", "-o", "{null_link}"], "it is a device, not a file", 1),
    (["vision", "calibrate", "{photo}", "--markers", "-o", "{folder}"], "it is a folder", 1),
    (["vision", "read", "{photo}", "--profile", "{garbage_position}"], "position must be the Position ID", 1),
    (["show", "4HPwATDgc/ABMB"], "padding bits set in its last character", 1),
    (["demo", "--table", "club-7"], "bgboard demo: error: --table names this table in the hall", 2),
    (["demo", "--level", "beginner"], "bgboard demo: error: --level goes with --against gnubg", 2),
    (["demo", "--side", "2", "--level", "beginner"], "--level and --side go with --against gnubg", 2),
    (
        ["vision", "read", "{grey}", "--profile", "{profile}"],
        "is a greyscale photo: the board is read from a colour",
        1,
    ),
    (["vision", "calibrate", "{grey}", "--markers", "-o", "{folder}/p.toml"], "is a greyscale photo", 1),
    (
        ["replay", "{png_mat}", "--profile", "{profile}"],
        "a .mat file is a match record: bgboard check-match reads it",
        2,
    ),
    (["replay", "{folder}", "--profile", "{profile}", "--hold", "100000"], "at most 60, not 100000", 2),
    (["analyse", "/dev/zero"], "/dev/zero: not a regular file (a device, a pipe or a folder), so not a match file", 1),
    (["hall"], "bgboard hall: error: --broker mqtt://HOST:PORT is needed", 2),
    (["analyse", "{long_match}"], "GNU Backgammon analyses matches up to 64 points; this one is 99", 1),
    (["hall", "--make-acl", "t1", "--acl-dir", "{a_file}"], "is a file: name a folder for the broker's files", 2),
    (["hint", "AAAAAgAAAAAAAA", "--dice", "31"], "is over: the player not on roll has borne off every checker", 1),
    (["vision", "dice", "/dev/zero"], "cannot read /dev/zero: not a regular file", 1),
    (["vision", "dice", "{cut_jpg}"], "is cut short: a JPEG without its end marker", 1),
    (["vision", "dice", "{cut_png}"], "is cut short: a PNG without its end (IEND)", 1),
]


@pytest.mark.parametrize(("arguments", "words", "status"), ROWS, ids=[" ".join(r[0]) for r in ROWS])
def test_a_bad_input_gets_one_line_and_its_status(
    arguments: list[str], words: str, status: int, bad: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [a.format(**bad) for a in arguments]
    assert main(argv) == status
    captured = capsys.readouterr()
    said = [line for line in (captured.err + captured.out).splitlines() if line.strip()]
    assert "Traceback" not in captured.err
    assert any(words in line for line in said), said
    assert len([line for line in said if line.startswith("bgboard")]) <= 1, said


def test_a_cut_image_is_said_in_one_line_without_the_decoders_own(bad: dict[str, str]) -> None:
    """libpng and libjpeg print their own lines on stderr for a cut file, below Python's reach:
    the file is refused before they see it."""
    import subprocess
    import sys

    for name in ("cut_png", "cut_jpg"):
        done = subprocess.run(
            [sys.executable, "-m", "bgboard", "vision", "dice", bad[name]], capture_output=True, text=True, check=False
        )
        assert done.returncode == 1
        assert done.stderr.splitlines() == [
            f"bgboard: error: {bad[name]} is cut short: " + done.stderr.split(": ")[-1].strip()
        ]


def test_ctrl_c_while_the_command_line_loads_ends_in_one_line() -> None:
    """Ctrl-C at any moment while the command line loads (its imports take a tenth of a second):
    never a traceback. The child reports its imports (``-X importtime``), so the signal is sent
    once bgboard's own code runs, whatever the machine's load (the interpreter's start, about
    20 ms, comes before it)."""
    import signal
    import subprocess
    import sys
    import time

    for delay in (0.0, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1):
        child = subprocess.Popen(
            [sys.executable, "-X", "importtime", "-m", "bgboard", "show", "4HPwATDgc/ABMA"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert child.stderr is not None
        seen = []
        for line in child.stderr:
            seen.append(line)
            # bgboard.errors is imported by the command line's own imports, inside bgboard's code.
            if line.rstrip().endswith("bgboard.errors"):
                break
        time.sleep(delay)
        child.send_signal(signal.SIGINT)
        _, err = child.communicate(timeout=30)
        said = [line for line in err.splitlines() if not line.startswith("import time:")]
        assert not any("Traceback" in line for line in said), f"after {delay} s: {said}"
        assert child.returncode in (0, 130, -signal.SIGINT), f"after {delay} s: {child.returncode} {said}"


XGID_BODY = "-b----E-C---eE---c-e----B-:0:0:1:52:0:0:3:0:10"


@pytest.mark.parametrize("xgid", [XGID_BODY, XGID_BODY + ":0"])
def test_show_takes_an_xgid_without_its_prefix_and_with_an_eleventh_field(
    xgid: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # Starting with "-" (the 25-point empty), argparse would take it for an option.
    assert main(["show", xgid]) == 0
    assert f"XGID={XGID_BODY}" in capsys.readouterr().out


def test_a_huge_input_is_named_not_repeated(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A 4 MB move line in a .mat file, a 2 MB word: each quoted once, cut, with its length."""
    mat = tmp_path / "big.mat"
    line = "  1) 31: 8/5 6/5" + " 13/10" * 700_000
    mat.write_text(f" 3 point match\n\n Game 1\n Ann : 0                  Bob : 0\n{line}\n", encoding="utf-8")
    assert main(["check-match", str(mat)]) == 1
    assert len(capsys.readouterr().out) < 2000
    assert main(["check-match", str(mat), "--json"]) == 1
    said = capsys.readouterr().out
    assert len(said) < 2000 and "characters)" in said
    assert main(["show", "A" * 2_000_000]) == 1
    err = capsys.readouterr().err
    assert len(err) < 500 and "(2000000 characters)" in err


@pytest.mark.parametrize(
    ("which", "words"),
    [("rotated", "Or the corners are in another order"), ("whole image", "These corners are the whole image's")],
)
def test_corners_given_out_of_order_or_of_the_whole_image_are_named(
    which: str, words: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import cv2

    sys.path.insert(0, str(ROOT / "tests" / "bgboard"))
    from rendered_table import CAMERA, LIGHTING, START, STYLE

    from vision.render import Scene, render

    shot = render(Scene(points=START), style=STYLE, camera=CAMERA, lighting=LIGHTING, seed=1)
    photo = tmp_path / "start.png"
    assert cv2.imwrite(str(photo), shot.image)
    corners = [(float(x), float(y)) for x, y in shot.corners]
    height, width = shot.image.shape[:2]
    if which == "rotated":
        corners = corners[1:] + corners[:1]
    else:
        corners = [(0, 0), (width - 1, 0), (width - 1, height - 1), (0, height - 1)]
    text = " ".join(f"{x:.0f},{y:.0f}" for x, y in corners)
    assert main(["vision", "calibrate", str(photo), "--corners", text, "-o", str(tmp_path / "p.toml")]) == 1
    err = capsys.readouterr().err
    assert words in err and "13-" in err and not (tmp_path / "p.toml").exists()
