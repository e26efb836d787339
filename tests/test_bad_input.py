# SPDX-License-Identifier: MIT
"""The sweep of bad inputs, kept: per command, the bad input, the one line it must print, and the
exit status. A new command gets its rows here.

Each row runs the command line in this process (``bgboard.cli.main``) with the input, and checks
that the error output is one line (no traceback) holding the expected words, and the status.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from bgboard.cli import main

ROOT = Path(__file__).resolve().parent.parent
PHOTO = ROOT.parent / "shared" / "data" / "boards" / "christiancorro" / "data" / "images" / "test"


@pytest.fixture
def bad(tmp_path: Path) -> Iterator[dict[str, str]]:
    """Bad files to name: a named pipe, a link to a device, a folder, a PNG named .mat."""
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    null_link = tmp_path / "out.toml"
    null_link.symlink_to("/dev/null")
    png = tmp_path / "board.mat"
    png.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(64))
    photo = sorted(PHOTO.glob("*.*g"))[0]
    yield {
        "pipe": str(pipe),
        "null_link": str(null_link),
        "folder": str(tmp_path),
        "png_mat": str(png),
        "photo": str(photo),
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
