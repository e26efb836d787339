# SPDX-License-Identifier: MIT
"""A printable sheet of the four ArUco corner markers that ``bgboard vision calibrate --markers`` finds.

The sheet holds markers 0 to 3 of :data:`vision.calibration.MARKER_DICTIONARY`, at a given size
on A4 or US letter paper, laid out as they go round the board seen from player 1's seat (0 top
left, 1 top right, 2 bottom right, 3 bottom left), each labelled with its id and its corner of
the playing field, and a scale bar in millimetres to check the print was not scaled.

Each marker is stuck on the board's frame with its corner nearest the middle of the board
touching the field's corner (:func:`vision.calibration.find_markers` takes that corner); which
way up a marker lies does not matter.

The sheet is written as PNG, JPEG or PDF, as the file's suffix says. :func:`hide_markers` and
:func:`on_marker` keep the dice reader from taking a marker's black and white cells for a die.

>>> sheet = marker_sheet(size_mm=30, paper="a4", dpi=100)
>>> sheet.shape
(1169, 827)
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path
from typing import Final

import cv2
import numpy as np

from vision.calibration import MARKER_DICTIONARY
from vision.frames import output_problem

#: Paper sizes in millimetres, portrait (width, height).
PAPER_MM: Final = {"a4": (210.0, 297.0), "letter": (215.9, 279.4)}
#: Where each marker goes: its id, the point it sits beside (player 1's numbering) and its corner
#: of the field seen from player 1's seat, in the order :func:`vision.calibration.find_markers` uses.
PLACES: Final = (
    (0, 13, "top left"),
    (1, 24, "top right"),
    (2, 1, "bottom right"),
    (3, 12, "bottom left"),
)
#: A marker is 6 x 6 cells: a 4 x 4 code inside a black border one cell wide.
CELLS: Final = 6
#: White margin round each marker, in cells: detectors need a quiet zone at least one cell wide.
QUIET_CELLS: Final = 1.5
#: The paper's unprintable margin we keep clear, millimetres.
PAGE_MARGIN_MM: Final = 12.0
#: The scale bar's length in millimetres.
SCALE_MM: Final = 100


def mm_to_px(mm: float, dpi: float) -> int:
    """Millimetres to whole pixels at ``dpi``."""
    return round(mm / 25.4 * dpi)


def place_words(marker_id: int) -> str:
    """Where marker ``marker_id`` goes, in words for the sheet and the guide."""
    _, point, corner = PLACES[marker_id]
    return f"id {marker_id}: beside player 1's {point}-point corner ({corner} of the field, from player 1's seat)"


def _marker(marker_id: int, side: int) -> np.ndarray:
    """Marker ``marker_id`` as a ``side`` x ``side`` black-and-white image, cells as even as pixels allow."""
    dictionary = cv2.aruco.getPredefinedDictionary(MARKER_DICTIONARY)
    cells = cv2.aruco.generateImageMarker(dictionary, marker_id, CELLS)
    # Nearest-neighbour keeps the edges sharp; cells differ by at most one pixel.
    image: np.ndarray = cv2.resize(cells, (side, side), interpolation=cv2.INTER_NEAREST)
    return image


def _text(sheet: np.ndarray, text: str, x: int, y: int, height_px: int, thickness: int = 1) -> int:
    """Write ``text`` with its baseline at ``y``, ``height_px`` tall; returns the text's width."""
    font = cv2.FONT_HERSHEY_SIMPLEX
    (_, base_h), _ = cv2.getTextSize("H", font, 1.0, thickness)
    scale = height_px / base_h
    (width, _), _ = cv2.getTextSize(text, font, scale, thickness)
    cv2.putText(sheet, text, (x, y), font, scale, 0, thickness, cv2.LINE_AA)
    return int(width)


def marker_sheet(size_mm: float = 30.0, paper: str = "a4", dpi: int = 300) -> np.ndarray:
    """The sheet as a greyscale image (white paper, black ink), portrait, at ``dpi``.

    :param size_mm: each marker's side, black border included.
    :param paper: ``a4`` or ``letter``.
    :param dpi: the printer's resolution; the image is the page at this resolution.
    :raises ValueError: an unknown paper, a resolution too low to draw a marker's cells, or
        markers too big for the paper (naming the largest size that fits).
    """
    if paper not in PAPER_MM:
        raise ValueError(f"unknown paper {paper!r}: use {' or '.join(PAPER_MM)}")
    if dpi < 50 or dpi > 1200:
        raise ValueError(f"the resolution must be from 50 to 1200 dpi, not {dpi}")
    width_mm, height_mm = PAPER_MM[paper]
    # Two markers side by side with their quiet zones, inside the page margins.
    box_cells = CELLS + 2 * QUIET_CELLS
    largest = (width_mm - 2 * PAGE_MARGIN_MM) / 2 / box_cells * CELLS
    # Vertically: a title, two rows of markers with two label lines each, and the scale bar.
    largest = min(largest, (height_mm - 2 * PAGE_MARGIN_MM - 60.0) / 2 / box_cells * CELLS)
    if not 10.0 <= size_mm <= largest:
        raise ValueError(f"the markers must be from 10 to {largest:.0f} mm on {paper} paper, not {size_mm:g} mm")
    side = mm_to_px(size_mm, dpi)
    if side < 4 * CELLS:
        raise ValueError(f"{size_mm:g} mm at {dpi} dpi leaves under 4 pixels a cell: raise --dpi")

    page_w, page_h = mm_to_px(width_mm, dpi), mm_to_px(height_mm, dpi)
    sheet = np.full((page_h, page_w), 255, dtype=np.uint8)
    margin = mm_to_px(PAGE_MARGIN_MM, dpi)
    line = mm_to_px(4.0, dpi)  # text height of the labels
    small = mm_to_px(3.0, dpi)
    thick = max(1, round(dpi / 150))

    y = margin + line
    _text(sheet, "bgboard corner markers (ArUco 4x4, ids 0-3)", margin, y, line, thick)
    y += round(1.8 * small)
    _text(
        sheet,
        f"Each marker {size_mm:g} mm square. Cut along the grey lines; stick each one on the board's frame",
        margin,
        y,
        small,
        thick,
    )
    y += round(1.6 * small)
    _text(sheet, "with its corner nearest the board's middle touching the playing field's corner.", margin, y, small)
    top = y + line

    quiet = round(QUIET_CELLS * side / CELLS)
    box = side + 2 * quiet
    column_w = (page_w - 2 * margin) // 2
    row_h = box + round(3.5 * small)
    # Laid out as on the board seen from player 1's seat: ids 0 1 over 3 2.
    slots = {0: (0, 0), 1: (1, 0), 3: (0, 1), 2: (1, 1)}
    for marker_id, (column, row) in slots.items():
        x0 = margin + column * column_w + (column_w - box) // 2
        y0 = top + row * row_h
        sheet[y0 + quiet : y0 + quiet + side, x0 + quiet : x0 + quiet + side] = _marker(marker_id, side)
        # A light grey cut line round the quiet zone: light enough not to be taken for a marker edge.
        cv2.rectangle(sheet, (x0, y0), (x0 + box, y0 + box), 200, max(1, thick // 2))
        _, point, corner = PLACES[marker_id]
        label_x = margin + column * column_w + mm_to_px(2.0, dpi)
        _text(
            sheet, f"id {marker_id}: beside player 1's {point}-point corner", label_x, y0 + box + small + thick, small
        )
        _text(sheet, f"({corner} of the field, from player 1's seat)", label_x, y0 + box + round(2.4 * small), small)

    # The scale bar: a ruler with a tick every 10 mm, to measure on the print.
    y_bar = top + 2 * row_h + line
    length = mm_to_px(SCALE_MM, dpi)
    x_bar = margin
    bar_h = mm_to_px(2.0, dpi)
    cv2.rectangle(sheet, (x_bar, y_bar), (x_bar + length, y_bar + bar_h), 0, thick)
    for mm in range(0, SCALE_MM + 1, 10):
        x = x_bar + mm_to_px(mm, dpi)
        if mm % 20 == 0 and mm < SCALE_MM:
            sheet[y_bar : y_bar + bar_h, x : x_bar + mm_to_px(mm + 10, dpi)] = 0
        cv2.line(sheet, (x, y_bar + bar_h), (x, y_bar + bar_h + mm_to_px(2.0, dpi)), 0, thick)
        _text(sheet, str(mm), x - small // 2, y_bar + bar_h + mm_to_px(2.0, dpi) + small + thick, small)
    _text(
        sheet,
        f"{SCALE_MM} mm: measure this bar on the print; if it is not {SCALE_MM} mm, print at 100% (no 'fit to page')",
        x_bar,
        y_bar + bar_h + mm_to_px(2.0, dpi) + round(2.8 * small),
        small,
    )
    return sheet


def _png_with_dpi(image: np.ndarray, dpi: int) -> bytes:
    """PNG bytes with a ``pHYs`` chunk, so printing programs print at the intended size.

    OpenCV writes no resolution into a PNG; the chunk goes right after IHDR, as the PNG
    specification requires (before the image data).
    """
    ok, encoded = cv2.imencode(".png", image)
    if not ok:
        raise ValueError("OpenCV could not encode the sheet as PNG")
    data = encoded.tobytes()
    per_metre = round(dpi / 0.0254)
    body = b"pHYs" + struct.pack(">IIB", per_metre, per_metre, 1)
    chunk = struct.pack(">I", 9) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)
    ihdr_end = 8 + 4 + 4 + 13 + 4  # signature, IHDR length, type, data, CRC
    return data[:ihdr_end] + chunk + data[ihdr_end:]


def _pdf(image: np.ndarray, paper: str) -> bytes:
    """A one-page PDF of the greyscale ``image`` filling a page of ``paper`` size.

    Written by hand (a page, one Flate-compressed image) so no PDF library is needed.
    """
    width_mm, height_mm = PAPER_MM[paper]
    width_pt, height_pt = width_mm / 25.4 * 72, height_mm / 25.4 * 72
    rows, columns = image.shape[:2]
    pixels = zlib.compress(np.ascontiguousarray(image, dtype=np.uint8).tobytes(), 9)
    content = f"q {width_pt:.3f} 0 0 {height_pt:.3f} 0 0 cm /Sheet Do Q".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {width_pt:.3f} {height_pt:.3f}]"
        " /Resources << /XObject << /Sheet 4 0 R >> >> /Contents 5 0 R >>".encode(),
        f"<< /Type /XObject /Subtype /Image /Width {columns} /Height {rows} /ColorSpace /DeviceGray"
        f" /BitsPerComponent 8 /Filter /FlateDecode /Length {len(pixels)} >>\nstream\n".encode()
        + pixels
        + b"\nendstream",
        f"<< /Length {len(content)} >>\nstream\n".encode() + content + b"\nendstream",
    ]
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    for offset in offsets:
        out += f"{offset:010d} 00000 n \n".encode()
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


#: The kinds of file the sheet is written as, by the name's suffix.
SHEET_SUFFIXES: Final = {".png": "PNG", ".jpg": "JPEG", ".jpeg": "JPEG", ".pdf": "PDF"}


def _jpeg_with_dpi(image: np.ndarray, dpi: int) -> bytes:
    """JPEG bytes (quality 95) whose JFIF header carries the resolution, as the PNG's pHYs does."""
    ok, encoded = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 95])
    if not ok:
        raise ValueError("OpenCV could not encode the sheet as JPEG")
    data = bytearray(encoded.tobytes())
    # SOI, APP0 marker and length, "JFIF\0", version; then units (1: per inch), x and y density.
    if data[6:11] == b"JFIF\x00":
        data[13:18] = struct.pack(">BHH", 1, dpi, dpi)
    return bytes(data)


def write_marker_sheet(path: str | Path, size_mm: float = 30.0, paper: str = "a4", dpi: int = 300) -> Path:
    """Write the sheet to ``path`` in the kind of file its suffix names: ``.png``, ``.jpg`` or
    ``.jpeg``, ``.pdf`` (either case); each carries the resolution, so it prints at the size asked.

    :raises ValueError: see :func:`marker_sheet`; or ``cannot write PATH: why``: no name, a
        folder, a missing folder, no permission, a suffix that names none of those kinds.
    """
    target = Path(path)
    shown = str(path) if str(path) else "''"
    problem = output_problem(path)
    if problem:
        raise ValueError(f"cannot write {shown}: {problem}")
    kind = SHEET_SUFFIXES.get(target.suffix.lower())
    if kind is None:
        what = f"the suffix {target.suffix!r}" if target.suffix else "a name without a suffix"
        raise ValueError(
            f"cannot write {shown}: {what} names no kind of sheet; end the name in .png, .jpg (or .jpeg) or .pdf"
        )
    sheet = marker_sheet(size_mm, paper, dpi)
    if kind == "PDF":
        data = _pdf(sheet, paper)
    elif kind == "JPEG":
        data = _jpeg_with_dpi(sheet, dpi)
    else:
        data = _png_with_dpi(sheet, dpi)
    try:
        target.write_bytes(data)
    except OSError as exc:
        raise ValueError(f"cannot write {shown}: {exc.strerror or exc}") from None
    return target


# -- markers in a photo ----------------------------------------------------------------------

#: How far round a marker its white margin reaches, as a share of the marker's side on each
#: side (the sheet's is 1.5 cells of 6, a quarter; the margin left round a marker stuck on a
#: board is often less).
MARKER_MARGIN: Final = 0.3


def marker_quads(image: np.ndarray) -> list[np.ndarray]:
    """Every ArUco marker of :data:`vision.calibration.MARKER_DICTIONARY` in ``image`` (any id):
    its four corners in pixels (4 x 2)."""
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) if image.ndim == 3 else image
    detector = cv2.aruco.ArucoDetector(
        cv2.aruco.getPredefinedDictionary(MARKER_DICTIONARY), cv2.aruco.DetectorParameters()
    )
    found, _, _ = detector.detectMarkers(grey)
    return [np.asarray(quad, dtype=np.float64).reshape(4, 2) for quad in found]


def _grown(quad: np.ndarray, share: float) -> np.ndarray:
    centre = quad.mean(axis=0)
    return np.asarray(centre + (quad - centre) * (1.0 + 2.0 * share), dtype=np.float64)


def hide_markers(image: np.ndarray, quads: list[np.ndarray]) -> np.ndarray:
    """A copy of ``image`` with each marker, and its white margin, painted over in the colour
    round it (the board's frame, the paper): nothing there to take for a die's pips."""
    if not quads:
        return image
    out = image.copy()
    for quad in quads:
        inner = np.round(_grown(quad, MARKER_MARGIN)).astype(np.int32)
        outer = np.round(_grown(quad, MARKER_MARGIN + 0.2)).astype(np.int32)
        ring = np.zeros(image.shape[:2], dtype=np.uint8)
        cv2.fillPoly(ring, [outer], 1)
        cv2.fillPoly(ring, [inner], 0)
        colour = np.median(image[ring.astype(bool)], axis=0) if ring.any() else 255
        fill = tuple(float(v) for v in np.atleast_1d(colour))
        cv2.fillPoly(out, [inner], fill if image.ndim == 3 else fill[0])
    return out


def on_marker(box: tuple[float, float, float, float], quads: list[np.ndarray]) -> bool:
    """Whether a box ``(x, y, w, h)`` lies mostly on a marker or its white margin (a quarter of
    the box or more), or has its centre there."""
    x, y, w, h = (float(v) for v in box)
    rect = np.array([[x, y], [x + w, y], [x + w, y + h], [x, y + h]], dtype=np.float32)
    for quad in quads:
        grown = _grown(quad, MARKER_MARGIN).astype(np.float32)
        if cv2.pointPolygonTest(grown, (x + w / 2, y + h / 2), False) >= 0:
            return True
        # Both convex: their overlap is convex too.
        shared, _ = cv2.intersectConvexConvex(rect, cv2.convexHull(grown))
        if w * h > 0 and shared >= 0.25 * w * h:
            return True
    return False
