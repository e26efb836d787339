# SPDX-License-Identifier: MIT
"""Each point and each half of the bar cut out of a frame as a small upright strip.

The learned point reader (:mod:`vision.points_net`) looks at one strip at a time: the column a
point's checkers may cover, from the board's edge to the middle of the field, a little wider
than the point, warped out of the camera frame with the calibration's homography and turned so
that the edge is at the top. Every strip has the same size whatever the camera, so one network
reads them all. The bar is cut as two strips, each from the middle of the bar outwards: the
lower half (where player 1's checkers on the bar rest) and the upper (player 2's).

The network does not read a strip alone but beside its *reference*: the same strip of this
board, under this camera and this light, with nothing on it. Calibration cuts the references
from its own frame (the position is known, so the bare points are known); a point that holds
checkers there borrows the strip of the nearest bare point of its colour in its row, marked as
borrowed. During play every position the players confirm shows more points bare, and their
strips replace what was borrowed (:meth:`References.learn`): the reader learns the board at
hand. Which side a checker belongs to is a matter of this board's colours too: two channels
carry how far each pixel's colour lies from each side's checker colour learnt at calibration,
so the network itself learns only what stacks look like against their bare point.

A strip's :data:`CHANNELS` channels: its colour in Lab, its reference's colour in Lab (each
scaled to about -1..1), the distances to player 1's and player 2's checker colour, and 1 where
the reference is borrowed.

Strips are cut with one ``cv2.remap`` from maps made once per profile, after a light blur of
the frame (a strip's pixel spans a few of the camera's).

>>> from vision.geometry import FieldGeometry
>>> cutter = StripCutter(FieldGeometry(), np.eye(3))
>>> frame = np.full((1000, 1200, 3), 128, np.uint8)
>>> cutter.colour(frame).shape
(26, 96, 20, 3)
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

import cv2
import numpy as np

from vision.geometry import FIELD_H, FieldGeometry

#: A strip's size: across the point, and along it from the edge.
STRIP_W: Final = 20
STRIP_H: Final = 96
#: Strips per frame: points 1 to 24 (player 1's numbering), then the bar's lower and upper half.
STRIPS: Final = 26
BAR_LOWER: Final = 24
BAR_UPPER: Final = 25
#: Channels: L, a, b; the reference's L, a, b; the distances to each side's checker colour; borrowed.
CHANNELS: Final = 9
#: A strip is this many point widths across, so that a checker set off the point's axis shows whole.
WIDTH_IN_POINTS: Final = 1.25
#: Colour distances (Lab units) are divided by this, and held at :data:`DISTANCE_CAP`.
DISTANCE_SCALE: Final = 40.0
DISTANCE_CAP: Final = 3.0

#: Classes of a strip: 0 nothing, 1..15 that many of player 1's checkers, 16..30 of player 2's.
CLASSES: Final = 31

Colour = tuple[float, float, float]


def label_of(count: int) -> int:
    """The class of a stack: ``count`` checkers, positive for player 1's, negative for player 2's.

    >>> label_of(0), label_of(3), label_of(-2)
    (0, 3, 17)
    """
    if not -15 <= count <= 15:
        raise ValueError(f"no stack of {count} checkers")
    return count if count >= 0 else 15 - count


def count_of(label: int) -> int:
    """The signed stack of a class (the inverse of :func:`label_of`).

    >>> [count_of(k) for k in (0, 3, 17, 30)]
    [0, 3, -2, -15]
    """
    if not 0 <= label < CLASSES:
        raise ValueError(f"no class {label}")
    return label if label <= 15 else 15 - label


def strip_counts(points: Sequence[int], bar: Sequence[int]) -> list[int]:
    """The signed stack on each of the 26 strips of a board: its points (player 1's numbering),
    then its bar's lower half (player 1's checkers) and upper half (player 2's, negative)."""
    if len(points) != 24 or len(bar) != 2:
        raise ValueError("a board has 24 points and a bar of two counts")
    return [int(c) for c in points] + [int(bar[0]), -int(bar[1])]


def strip_labels(points: Sequence[int], bar: Sequence[int]) -> np.ndarray:
    """The 26 classes of a board (see :func:`strip_counts`)."""
    return np.asarray([label_of(c) for c in strip_counts(points, bar)], np.int64)


def _quads(geometry: FieldGeometry) -> list[np.ndarray]:
    """Each strip's field-coordinate corners: top-left, top-right, bottom-right, bottom-left of
    the upright strip (its top at the board's edge, or at the bar's middle)."""
    quads = []
    half = WIDTH_IN_POINTS * geometry.point_width / 2
    for point in range(1, 25):
        row, _ = geometry.column(point)
        cx = geometry.point_center_x(point)
        if row == 0:
            quad = [(cx - half, 0.0), (cx + half, 0.0), (cx + half, FIELD_H / 2), (cx - half, FIELD_H / 2)]
        else:
            # Turned half round: the bottom edge at the top, player 1's left on the strip's right.
            quad = [(cx + half, FIELD_H), (cx - half, FIELD_H), (cx - half, FIELD_H / 2), (cx + half, FIELD_H / 2)]
        quads.append(np.asarray(quad, np.float64))
    x0, _, x1, _ = geometry.bar_box()
    middle = FIELD_H / 2
    # The lower half from the middle down, the upper from the middle up: each side's stack on
    # the bar grows from the middle towards its own side (geometry.bar_slot_center).
    quads.append(np.asarray([(x1, middle), (x0, middle), (x0, float(FIELD_H)), (x1, float(FIELD_H))], np.float64))
    quads.append(np.asarray([(x0, middle), (x1, middle), (x1, 0.0), (x0, 0.0)], np.float64))
    return quads


class StripCutter:
    """Cut the strips of one board under one camera.

    :param geometry: the board's field layout.
    :param homography: field coordinates to image pixels (the profile's).
    """

    def __init__(self, geometry: FieldGeometry, homography: np.ndarray) -> None:
        self.geometry = geometry
        self.homography = np.asarray(homography, np.float64)
        strip = np.asarray([(0, 0), (STRIP_W, 0), (STRIP_W, STRIP_H), (0, STRIP_H)], np.float64)
        gx, gy = np.meshgrid(np.arange(STRIP_W) + 0.5, np.arange(STRIP_H) + 0.5)
        grid = np.stack([gx.ravel(), gy.ravel(), np.ones(gx.size)])
        maps = []
        for quad in _quads(geometry):
            to_field = cv2.getPerspectiveTransform(strip.astype(np.float32), quad.astype(np.float32))
            mapped = self.homography @ to_field.astype(np.float64) @ grid
            maps.append((mapped[:2] / mapped[2]).T.reshape(STRIP_H, STRIP_W, 2))
        both = np.concatenate(maps, axis=0).astype(np.float32)
        self._map_x = np.ascontiguousarray(both[..., 0])
        self._map_y = np.ascontiguousarray(both[..., 1])
        # How many image pixels one strip pixel spans, for the blur before sampling.
        span = np.hypot(np.diff(both[:STRIP_H, :, 0], axis=1), np.diff(both[:STRIP_H, :, 1], axis=1))
        self.pixels_per_strip_pixel = float(np.median(span))
        # Only the part of the frame the strips come from is blurred.
        x0, y0 = np.floor(both.reshape(-1, 2).min(axis=0)).astype(int) - 4
        x1, y1 = np.ceil(both.reshape(-1, 2).max(axis=0)).astype(int) + 4
        self._window = (int(x0), int(y0), int(x1), int(y1))

    def masks_round(self, circles: Sequence[tuple[float, float, float]]) -> np.ndarray:
        """Which strip pixels lie within any of ``circles`` (image ``x, y, radius``): a boolean
        ``(26, STRIP_H, STRIP_W)`` mask."""
        inside = np.zeros(self._map_x.shape, bool)
        for x, y, r in circles:
            inside |= (self._map_x - x) ** 2 + (self._map_y - y) ** 2 <= r * r
        return inside.reshape(STRIPS, STRIP_H, STRIP_W)

    def colour(self, image: np.ndarray) -> np.ndarray:
        """The strips in colour, ``(26, STRIP_H, STRIP_W, 3)`` BGR uint8."""
        k = max(1, round(self.pixels_per_strip_pixel)) | 1
        height, width = image.shape[:2]
        x0, y0, x1, y1 = self._window
        x0, y0 = max(0, x0), max(0, y0)
        x1, y1 = min(width, x1), min(height, y1)
        if x1 <= x0 or y1 <= y0:
            x0, y0, x1, y1 = 0, 0, width, height
        source = image[y0:y1, x0:x1]
        if k > 1:
            source = cv2.blur(source, (k, k))
        flat = cv2.remap(source, self._map_x - x0, self._map_y - y0, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
        return flat.reshape(STRIPS, STRIP_H, STRIP_W, 3)


def _bare_stand_in(index: int, bare: Sequence[bool], geometry: FieldGeometry) -> int | None:
    """The bare point whose strip stands in for point ``index`` (0-based) as its reference: of
    the same colour (parity) and row, the nearest; else of the same colour in the other row."""
    point = index + 1
    row, _ = geometry.column(point)
    x = geometry.point_center_x(point)
    same_row = []
    other_row = []
    for other in range(24):
        if other == index or not bare[other] or (other - index) % 2:
            continue
        other_row_, _ = geometry.column(other + 1)
        distance = abs(geometry.point_center_x(other + 1) - x)
        (same_row if other_row_ == row else other_row).append((distance, other))
    for group in (same_row, other_row):
        if group:
            return min(group)[1]
    return None


#: The most strips the network may read wrong on a calibration frame when every reference is
#: borrowed (its position known: harder than play, where a bare point's reference is its own
#: look) for it to read that board; with the frame's own references it must read every strip.
#: One is a slip a person makes too; more is a board unlike any it learnt.
MISREADS_ALLOWED: Final = 1

#: The temperatures a board's readings may be softened by (see :meth:`References.weigh`).
TEMPERATURES: Final = (1.0, 1.25, 1.5, 2.0, 2.5, 3.0, 4.0, 6.0)


def soften(probabilities: np.ndarray, temperature: float) -> np.ndarray:
    """Probabilities ``(n, classes)`` softened by ``temperature`` (1: unchanged)."""
    if temperature == 1.0:
        return probabilities
    logp = np.log(np.maximum(probabilities, 1e-12)) / temperature
    logp -= logp.max(axis=1, keepdims=True)
    p = np.exp(logp)
    result: np.ndarray = p / p.sum(axis=1, keepdims=True)
    return result


def misreads(probabilities: np.ndarray, counts: Sequence[int]) -> int:
    """How many strips ``probabilities`` ``(26, CLASSES)`` read as another stack than ``counts``
    (:func:`strip_counts`) say."""
    labels = np.asarray([label_of(c) for c in counts])
    return int((np.argmax(probabilities, axis=1) != labels).sum())


@dataclass
class References:
    """What each strip of this board looks like bare, under this camera and light, and how far
    the learned reader's confidence is to be trusted on this board.

    :ivar strips: ``(26, STRIP_H, STRIP_W, 3)`` BGR uint8.
    :ivar borrowed: per strip, whether its reference is another strip's (never seen bare itself).
    :ivar evidence: for each of :data:`TEMPERATURES`, the summed surprise (negative log
        probability) of the stacks known on this board, read at that temperature.
    :ivar temperature: the one that surprises least: the reader's probabilities on this board
        are softened by it. The network's confidence was fitted on rendered boards; a real board
        unlike them shows here as confident mistakes at calibration or in play, and this board's
        readings then grow less sure, never more than the network's own.
    :ivar misread: how many strips the network read wrong on the calibration frame, with the
        frame's own references and with every reference borrowed (None: not tried). Any with
        its own, or past :data:`MISREADS_ALLOWED` borrowed, and the network does not know this
        board: ``auto`` reads it with the models instead, unless they misread it more.
    :ivar read_back: how many points (and halves of the bar) the calibration frame was read wrong,
        read whole as in play, by the network and by the models (None: not tried).
    :ivar network: the name of the point network this board is read with (see
        :data:`vision.points_net.NETWORKS`): the one that misread the calibration frame least.
    """

    strips: np.ndarray
    borrowed: np.ndarray
    evidence: np.ndarray = field(default_factory=lambda: np.zeros(len(TEMPERATURES)))
    temperature: float = 1.0
    misread: tuple[int, int] | None = None
    read_back: tuple[int, int] | None = None
    network: str = "points"

    def weigh(self, probabilities: np.ndarray, counts: Sequence[int], keep_out: Sequence[bool] | None = None) -> None:
        """Weigh the reader's probabilities ``(26, CLASSES)`` of strips whose stacks are known
        (:func:`strip_counts`; ``keep_out`` ones left out), and choose the temperature anew."""
        labels = np.asarray([label_of(c) for c in counts])
        chosen = np.ones(len(labels), bool) if keep_out is None else ~np.asarray(keep_out, bool)
        if not chosen.any():
            return
        for k, t in enumerate(TEMPERATURES):
            p = soften(probabilities[chosen], t)[np.arange(int(chosen.sum())), labels[chosen]]
            self.evidence[k] += float(-np.log(np.maximum(p, 1e-12)).sum())
        self.temperature = TEMPERATURES[int(np.argmin(self.evidence))]

    def try_on(self, own: np.ndarray, borrowed: np.ndarray, counts: Sequence[int]) -> None:
        """Try the network on the calibration frame, whose stacks are known (:func:`strip_counts`):
        its probabilities ``(26, CLASSES)`` with the frame's own references (``own``) and with
        every reference borrowed (``borrowed``, weighed for the temperature). Sets
        :attr:`misread`."""
        self.misread = (misreads(own, counts), misreads(borrowed, counts))
        self.weigh(borrowed, counts)

    @property
    def knows_board(self) -> bool:
        """Whether the network read the calibration frame well enough to read this board (see
        :attr:`misread`); a board it was never tried on counts as known."""
        return self.misread is None or (self.misread[0] == 0 and self.misread[1] <= MISREADS_ALLOWED)

    @property
    def reads_better(self) -> bool:
        """Whether the network is the better reader of this board: it knows the board
        (:attr:`knows_board`), or it misread the calibration frame at fewer points than the
        models did, each reading it whole (:attr:`read_back`: on a board unlike any either was
        made for, each point the network reads that the models would misread is a question
        fewer to the players)."""
        if self.knows_board:
            return True
        return self.read_back is not None and self.read_back[0] < self.read_back[1]

    @classmethod
    def from_frame(cls, strips: np.ndarray, counts: Sequence[int], geometry: FieldGeometry) -> References:
        """References from a frame of a known position: its strips and their stacks
        (:func:`strip_counts`). A strip that is not bare borrows a bare one's (see
        :func:`_bare_stand_in`; a half of the bar the other half's)."""
        if strips.shape != (STRIPS, STRIP_H, STRIP_W, 3) or len(counts) != STRIPS:
            raise ValueError(f"references need {STRIPS} strips and their stacks")
        bare = [c == 0 for c in counts]
        refs = strips.copy()
        borrowed = np.zeros(STRIPS, bool)
        for index in range(24):
            if bare[index]:
                continue
            borrowed[index] = True
            stand_in = _bare_stand_in(index, bare[:24], geometry)
            if stand_in is not None:
                refs[index] = strips[stand_in]
        for half, other in ((BAR_LOWER, BAR_UPPER), (BAR_UPPER, BAR_LOWER)):
            if not bare[half]:
                borrowed[half] = True
                if bare[other]:
                    refs[half] = strips[other]
        return cls(refs, borrowed)

    def learn(self, strips: np.ndarray, counts: Sequence[int], keep_out: Sequence[bool] | None = None) -> int:
        """Take the strips a confirmed position shows bare as their references.

        :param strips: the frame's strips (BGR).
        :param counts: the confirmed stack on each strip (:func:`strip_counts`).
        :param keep_out: strips not to learn from (a die lies on them).
        :returns: how many references were borrowed before and are now seen.
        """
        newly = 0
        for index, count in enumerate(counts):
            if count != 0 or (keep_out is not None and keep_out[index]):
                continue
            # A running mean keeps one odd frame (a shadow passing) from taking over.
            if self.borrowed[index]:
                self.strips[index] = strips[index]
                self.borrowed[index] = False
                newly += 1
            else:
                mixed = 0.7 * self.strips[index].astype(np.float32) + 0.3 * strips[index].astype(np.float32)
                self.strips[index] = np.clip(mixed + 0.5, 0, 255).astype(np.uint8)
        return newly

    def to_text(self) -> str:
        """The references as one line of text: the strips side by side as a PNG, in base64."""
        return png_text(np.concatenate(list(self.strips), axis=1))

    def borrowing_all(self, geometry: FieldGeometry) -> References:
        """These references with every strip's borrowed from another bare strip, as a point
        never seen bare has it: to try the reader on the frame the references come from."""
        bare = [not b for b in self.borrowed]
        strips = self.strips.copy()
        for index in range(24):
            stand_in = _bare_stand_in(index, bare[:24], geometry)
            if stand_in is not None:
                strips[index] = self.strips[stand_in]
        strips[BAR_LOWER], strips[BAR_UPPER] = self.strips[BAR_UPPER], self.strips[BAR_LOWER]
        return References(strips, np.ones(STRIPS, bool))

    @classmethod
    def from_text(cls, text: str, borrowed: Sequence[bool]) -> References:
        """The references :meth:`to_text` wrote.

        :raises ValueError: the text is not such references (damaged, or of another strip size).
        """
        try:
            tiled = png_from_text(text, cv2.IMREAD_COLOR)
        except ValueError as exc:
            raise ValueError(f"the references are {exc}") from None
        if tiled.shape != (STRIP_H, STRIP_W * STRIPS, 3):
            raise ValueError(
                f"the references are {tiled.shape[1]}x{tiled.shape[0]} pixels, not {STRIP_W * STRIPS}x{STRIP_H}"
                " (made by another version: calibrate again)"
            )
        if len(borrowed) != STRIPS:
            raise ValueError(f"the references need {STRIPS} borrowed flags, not {len(borrowed)}")
        strips = np.ascontiguousarray(tiled.reshape(STRIP_H, STRIPS, STRIP_W, 3).transpose(1, 0, 2, 3))
        return cls(strips, np.asarray(borrowed, bool))


def png_text(image: np.ndarray) -> str:
    """An image as one line of text, as profiles keep images: a PNG, in base64."""
    ok, data = cv2.imencode(".png", image)
    if not ok:
        raise ValueError(f"an image of shape {image.shape} cannot be written as a PNG")
    return base64.b64encode(data.tobytes()).decode("ascii")


def png_from_text(text: str, flags: int) -> np.ndarray:
    """The image :func:`png_text` wrote, read with ``cv2.imdecode``'s ``flags``.

    :raises ValueError: ``not base64 text`` or ``not a PNG image``.
    """
    try:
        data = np.frombuffer(base64.b64decode(text.encode("ascii"), validate=True), np.uint8)
    except (ValueError, UnicodeEncodeError) as exc:
        raise ValueError("not base64 text") from exc
    image = cv2.imdecode(data, flags) if len(data) else None
    if image is None:
        raise ValueError("not a PNG image")
    return np.asarray(image)


def _lab_planes(strips: np.ndarray) -> np.ndarray:
    """BGR strips ``(n, STRIP_H, STRIP_W, 3)`` as OpenCV's 8-bit Lab, channel planes first:
    ``(n, 3, STRIP_H, STRIP_W)`` float32."""
    n = len(strips)
    lab = cv2.cvtColor(strips.reshape(n * STRIP_H, STRIP_W, 3), cv2.COLOR_BGR2LAB).astype(np.float32)
    # Channel planes first: the sums below then run over whole planes, not triples.
    return lab.reshape(n, STRIP_H, STRIP_W, 3).transpose(0, 3, 1, 2)


def _normalised(planes: np.ndarray) -> np.ndarray:
    """Lab planes ``(n, 3, H, W)`` scaled as the network takes them."""
    out = np.empty(planes.shape, np.float32)
    out[:, 0] = (planes[:, 0] - 128.0) / 128.0
    out[:, 1] = (planes[:, 1] - 128.0) / 64.0
    out[:, 2] = (planes[:, 2] - 128.0) / 64.0
    return out


def encode_references(references: np.ndarray) -> np.ndarray:
    """The references' part of the network's input (channels 3 to 5 of :func:`encode`), to be
    passed to it again while the references stay as they are: ``(n, 3, STRIP_H, STRIP_W)``."""
    return _normalised(_lab_planes(references))


def encode(
    strips: np.ndarray,
    references: np.ndarray,
    borrowed: np.ndarray,
    checker_colours: np.ndarray,
) -> np.ndarray:
    """The network's input, ``(n, CHANNELS, STRIP_H, STRIP_W)`` float32.

    :param strips: BGR strips ``(n, STRIP_H, STRIP_W, 3)``.
    :param references: each strip's reference, the same shape.
    :param borrowed: ``(n,)`` whether each reference is borrowed.
    :param checker_colours: player 1's and player 2's checker colour in OpenCV's 8-bit Lab,
        ``(2, 3)`` for all strips or ``(n, 2, 3)`` one pair per strip.
    """
    return encode_against(strips, encode_references(references), borrowed, checker_colours)


def encode_against(
    strips: np.ndarray,
    encoded_references: np.ndarray,
    borrowed: np.ndarray,
    checker_colours: np.ndarray,
) -> np.ndarray:
    """:func:`encode` with the references encoded already (by :func:`encode_references`), as a
    reader keeps them while they stay as they are."""
    n = len(strips)
    planes = _lab_planes(strips)
    out = np.empty((n, CHANNELS, STRIP_H, STRIP_W), np.float32)
    out[:, 0:3] = _normalised(planes)
    out[:, 3:6] = encoded_references
    colours = np.asarray(checker_colours, np.float32)
    if colours.ndim == 2:
        colours = np.broadcast_to(colours, (n, 2, 3))
    for k in (0, 1):
        square = np.zeros((n, STRIP_H, STRIP_W), np.float32)
        for c in range(3):
            square += (planes[:, c] - colours[:, k, c, None, None]) ** 2
        out[:, 6 + k] = np.minimum(np.sqrt(square) / DISTANCE_SCALE, DISTANCE_CAP)
    out[:, 8] = np.asarray(borrowed, np.float32)[:, None, None]
    return out


def field_strip_quads(geometry: FieldGeometry) -> list[np.ndarray]:
    """Each strip's four corners in field coordinates (for drawing what the reader looks at)."""
    return [quad.copy() for quad in _quads(geometry)]


__all__ = [
    "BAR_LOWER",
    "BAR_UPPER",
    "CHANNELS",
    "CLASSES",
    "STRIPS",
    "STRIP_H",
    "STRIP_W",
    "TEMPERATURES",
    "References",
    "StripCutter",
    "count_of",
    "encode",
    "encode_against",
    "encode_references",
    "field_strip_quads",
    "label_of",
    "soften",
    "strip_counts",
    "strip_labels",
]
