# SPDX-License-Identifier: MIT
"""The printable marker sheet: the calibration finds all four markers on it, at the size asked."""

from __future__ import annotations

import struct
from pathlib import Path

import cv2
import numpy as np
import pytest

from bgboard.cli import main
from vision.calibration import check_corners, find_markers
from vision.markers import PAPER_MM, marker_sheet, mm_to_px, write_marker_sheet


def _marker_sides(sheet: np.ndarray) -> list[float]:
    detector = cv2.aruco.ArucoDetector(
        cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50), cv2.aruco.DetectorParameters()
    )
    corners, ids, _ = detector.detectMarkers(sheet)
    assert ids is not None and sorted(ids.ravel().tolist()) == [0, 1, 2, 3]
    return [float(np.linalg.norm(quad[0][0] - quad[0][1])) for quad in corners]


@pytest.mark.parametrize("paper", ["a4", "letter"])
def test_the_calibration_finds_the_four_markers_on_the_sheet_in_board_order(paper: str) -> None:
    sheet = marker_sheet(30, paper, 300)
    corners = find_markers(sheet)
    # Laid out as on the board seen from player 1's seat, the sheet's four inner corners make a
    # field the calibration accepts: 13-point top left, 24 top right, 1 bottom right, 12 bottom left.
    check_corners(corners, cv2.cvtColor(sheet, cv2.COLOR_GRAY2BGR))
    (x0, y0), (x1, _), (x2, y2), (_, y3) = corners
    assert x0 < x1 and y0 < y3 and abs(x1 - x2) < 2 and abs(y2 - y3) < 2


def test_the_page_and_the_markers_have_the_size_asked_for() -> None:
    sheet = marker_sheet(40, "a4", 200)
    width_mm, height_mm = PAPER_MM["a4"]
    assert sheet.shape == (mm_to_px(height_mm, 200), mm_to_px(width_mm, 200))
    for side in _marker_sides(sheet):
        assert abs(side - mm_to_px(40, 200)) <= 1.5


def test_the_markers_are_found_when_the_sheet_is_seen_small_as_a_camera_would() -> None:
    sheet = marker_sheet(30, "a4", 300)
    # A camera over the board sees a 30 mm marker about 30 pixels wide.
    small = cv2.resize(sheet, None, fx=0.1, fy=0.1, interpolation=cv2.INTER_AREA)
    assert find_markers(small).shape == (4, 2)


def test_markers_too_big_for_the_paper_or_too_few_pixels_are_refused() -> None:
    with pytest.raises(ValueError, match="on a4 paper"):
        marker_sheet(120, "a4")
    with pytest.raises(ValueError, match="raise --dpi"):
        marker_sheet(10, "a4", 50)
    with pytest.raises(ValueError, match="unknown paper"):
        marker_sheet(30, "a3")


def test_the_png_carries_its_resolution_and_reads_back(tmp_path: Path) -> None:
    path = write_marker_sheet(tmp_path / "markers.png", 30, "letter", 300)
    data = path.read_bytes()
    at = data.index(b"pHYs")
    per_metre_x, per_metre_y, unit = struct.unpack(">IIB", data[at + 4 : at + 13])
    assert unit == 1 and per_metre_x == per_metre_y == round(300 / 0.0254)
    image = cv2.imread(str(path), cv2.IMREAD_GRAYSCALE)
    assert image is not None and find_markers(image).shape == (4, 2)


def test_the_pdf_is_one_page_of_the_paper_size(tmp_path: Path) -> None:
    path = write_marker_sheet(tmp_path / "markers.pdf", 30, "a4", 150)
    data = path.read_bytes()
    assert data.startswith(b"%PDF-1.4") and data.rstrip().endswith(b"%%EOF")
    assert b"/MediaBox [0 0 595.276 841.890]" in data
    assert data.count(b"/Type /Page ") == 1


def test_the_command_writes_the_sheet_and_says_where_each_marker_goes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "sheet.png"
    assert main(["vision", "markers", "-o", str(out), "--size-mm", "35", "--dpi", "150"]) == 0
    text = capsys.readouterr().out
    assert "id 0: beside player 1's 13-point corner" in text
    assert "id 2: beside player 1's 1-point corner" in text
    image = cv2.imread(str(out), cv2.IMREAD_GRAYSCALE)
    assert image is not None and find_markers(image).shape == (4, 2)
    assert main(["vision", "markers", "-o", str(out), "--size-mm", "500"]) == 1
