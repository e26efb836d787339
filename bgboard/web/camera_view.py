# SPDX-License-Identifier: MIT
"""What the camera sees, for the live page: a still frame's playing field with its reading drawn.

The field is warped straight out of the frame with the calibration's homography (half size,
player 1's seat at the bottom, as :mod:`vision.geometry` lays it out) and the reading is drawn
over it: the count read on every point and on the bar (light discs for player 1's checkers,
dark for player 2's, an amber ring where the reader was unsure), the dice where they lie, and
the cube. Players compare it with the board in front of them when the page and the board
disagree.
"""

from __future__ import annotations

from typing import Final

import cv2
import numpy as np

from vision.features import SCALE, rectify
from vision.geometry import FIELD_H, FieldGeometry
from vision.reading import BoardReading

#: A point read with less confidence than this is ringed.
UNSURE: Final = 0.9
#: JPEG quality of the picture sent to the page.
QUALITY: Final = 80

_LIGHT: Final = (236, 236, 236)
_DARK: Final = (30, 30, 30)
_AMBER: Final = (0, 165, 245)  # BGR


def _label(image: np.ndarray, centre: tuple[float, float], count: int, confidence: float) -> None:
    """A disc with the count read (+ player 1, - player 2) at ``centre``."""
    x, y = round(centre[0]), round(centre[1])
    fill, ink = (_LIGHT, _DARK) if count > 0 else (_DARK, _LIGHT)
    cv2.circle(image, (x, y), 17, fill, -1, cv2.LINE_AA)
    ring = _AMBER if confidence < UNSURE else (120, 120, 120)
    cv2.circle(image, (x, y), 17, ring, 3 if confidence < UNSURE else 1, cv2.LINE_AA)
    text = str(abs(count))
    (w, h), _ = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, 0.7, 2)
    cv2.putText(image, text, (x - w // 2, y + h // 2), cv2.FONT_HERSHEY_SIMPLEX, 0.7, ink, 2, cv2.LINE_AA)


#: The widest a kept still frame is stored (pixels): enough to see every checker.
EVIDENCE_WIDTH: Final = 960


def evidence_jpeg(image: np.ndarray) -> bytes:
    """A still frame as kept in the store: at most :data:`EVIDENCE_WIDTH` wide, JPEG."""
    height, width = image.shape[:2]
    if width > EVIDENCE_WIDTH:
        size = (EVIDENCE_WIDTH, round(height * EVIDENCE_WIDTH / width))
        image = cv2.resize(image, size, interpolation=cv2.INTER_AREA)
    ok, jpeg = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 85])
    if not ok:
        raise ValueError("the still frame could not be encoded as JPEG")
    return bytes(jpeg)


def camera_picture(image: np.ndarray, reading: BoardReading, homography: np.ndarray, geometry: FieldGeometry) -> bytes:
    """The field of ``image`` with ``reading`` drawn over it, as JPEG bytes.

    :param homography: the calibration's field -> image homography.
    :param geometry: the calibration's field layout (where each point's column is).
    """
    field = rectify(image, homography)
    if field.ndim == 2:
        field = cv2.cvtColor(field, cv2.COLOR_GRAY2BGR)
    height = FIELD_H * SCALE
    for point in range(1, 25):
        count = reading.points[point - 1]
        if not count:
            continue
        row, _ = geometry.column(point)
        x = geometry.point_center_x(point) * SCALE
        y = 24 if row == 0 else height - 24
        confidence = reading.point_confidence[point - 1] if reading.point_confidence else 1.0
        _label(field, (x, y), count, confidence)
    bar_x = (geometry.half_width + geometry.bar_width / 2) * SCALE
    for index, count in enumerate(reading.bar):
        if count:
            # Player 1's bar checkers lie in the half nearer him, the bottom.
            _label(field, (bar_x, height / 2 + (60 if index == 0 else -60)), count if index == 0 else -count, 1.0)
    to_field = np.diag([SCALE, SCALE, 1.0]) @ np.linalg.inv(homography)
    for die in reading.dice:
        spot = to_field @ np.array([die.center[0], die.center[1], 1.0])
        x, y = round(spot[0] / spot[2]), round(spot[1] / spot[2])
        colour = (60, 200, 60) if die.flat else (0, 0, 230)
        cv2.rectangle(field, (x - 20, y - 20), (x + 20, y + 20), colour, 3, cv2.LINE_AA)
        cv2.putText(field, str(die.value), (x + 24, y + 8), cv2.FONT_HERSHEY_SIMPLEX, 0.8, colour, 2, cv2.LINE_AA)
    words = []
    if reading.cube is not None:
        owner = "centred" if reading.cube.owner is None else f"player {reading.cube.owner}'s"
        words.append(f"cube {reading.cube.value} {owner}")
    if reading.occluded:
        words.append("hand over the board")
    words.append(f"confidence {reading.confidence:.2f}")
    text = ", ".join(words)
    cv2.rectangle(field, (0, round(height / 2) - 14), (12 + 9 * len(text), round(height / 2) + 10), (0, 0, 0), -1)
    cv2.putText(field, text, (6, round(height / 2) + 4), cv2.FONT_HERSHEY_SIMPLEX, 0.5, (255, 255, 255), 1, cv2.LINE_AA)
    ok, jpeg = cv2.imencode(".jpg", field, [cv2.IMWRITE_JPEG_QUALITY, QUALITY])
    if not ok:
        raise ValueError("the camera picture could not be encoded as JPEG")
    return bytes(jpeg)
