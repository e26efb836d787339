# SPDX-License-Identifier: MIT
"""The calibration profile of one board under one camera, saved as TOML.

It holds what the reader needs and cannot see in a single frame: where the playing field is
(its four corners in the image, hence the homography), the image size it was made for, the
bar's width, and what this board's checkers, empty points and checker seams look like under
this light (small Gaussian models of a few features, learned from a picture of a known
position).
"""

from __future__ import annotations

import difflib
import itertools
import math
import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import cv2
import numpy as np

from engine.errors import BackgammonError
from engine.files import MAX_PROFILE, read_limited
from engine.position import Position
from vision.features import BORDER_SIZE, LOOK_SIZE, STEPS
from vision.follow import view_from_text, view_to_text
from vision.frames import output_problem
from vision.geometry import FIELD_H, FIELD_W, FieldGeometry
from vision.points_net import NETWORKS
from vision.strips import STRIPS, TEMPERATURES, References, png_from_text, png_text

PROFILE_VERSION = 1
#: Squared distance (in standard deviations) beyond which a sample counts no worse.
ROBUST_CLIP = 25.0
#: A die's side over a checker's diameter when the calibration is not told: that of real dice,
#: 0.4 to 0.5 (16 mm dice beside 38 mm checkers are 0.42, a tournament's 19 mm beside 40 mm
#: 0.48). The 2D renderer draws bigger ones (0.65, :attr:`vision.render.BoardStyle.die_fraction`),
#: and its boards are calibrated with their size. On 3D-rendered boards with real-sized dice,
#: 57% of the dice were read right looking for 0.65, 76% looking for 0.45, and 75% looking for
#: each board's own size.
DIE_FRACTION: Final = 0.45
#: The die fractions a profile may hold: real dice are 0.4 to 0.5 of a checker.
DIE_FRACTION_RANGE: Final = (0.2, 1.0)


class ProfileError(ValueError):
    """A profile file that is missing, malformed, or made for another camera."""


@dataclass
class Gaussian:
    """A Gaussian model of a feature vector: mean and covariance."""

    mean: list[float]
    cov: list[list[float]]

    @classmethod
    def fit(cls, samples: np.ndarray, floor: float) -> Gaussian:
        """Fit to ``samples`` (n x k); ``floor`` keeps each variance from collapsing."""
        samples = np.asarray(samples, dtype=np.float64).reshape(len(samples), -1)
        mean = samples.mean(axis=0)
        cov = np.cov(samples, rowvar=False) if len(samples) > 1 else np.zeros((samples.shape[1],) * 2)
        cov = np.atleast_2d(cov) + np.eye(samples.shape[1]) * floor
        return cls([float(v) for v in mean], [[float(v) for v in row] for row in cov])

    def _prepared(self) -> tuple[np.ndarray, np.ndarray, float]:
        # Inverse and log-determinant once per model: the reader evaluates models every frame.
        cached = self.__dict__.get("_cache")
        if cached is None:
            cov = np.asarray(self.cov)
            _, logdet = np.linalg.slogdet(cov)
            norm = float(logdet) + len(self.mean) * math.log(2 * math.pi)
            cached = (np.asarray(self.mean), np.linalg.inv(cov), norm)
            self.__dict__["_cache"] = cached
        return cached

    def mahalanobis(self, x: np.ndarray) -> np.ndarray:
        """Squared Mahalanobis distance of each row of ``x`` (… x k) from the mean."""
        mean, inv, _ = self._prepared()
        diff = x - mean
        result: np.ndarray = np.einsum("...i,ij,...j->...", diff, inv, diff)
        return result

    def log_likelihood(self, x: np.ndarray, clip: float = ROBUST_CLIP) -> np.ndarray:
        """Log density of each row of ``x`` (… x k), with distances beyond ``clip`` held there.

        Holding far samples at the clip keeps one stray pixel patch (a checker's rim, a glint,
        a shadow) from vetoing an otherwise fitting explanation.
        """
        _, _, norm = self._prepared()
        maha = np.minimum(self.mahalanobis(x), clip)
        return -0.5 * (maha + norm)


@dataclass
class Profile:
    """Everything the board reader knows about one board and camera.

    :param image_size: ``(width, height)`` of the frames the profile was made from.
    :param corners: the field's corners in image pixels, in the contract order (beside player
        1's 13-point, 24-point, 1-point, 12-point).
    :param bar_fraction: the bar strip's width as a fraction of the field's width.
    :param models: feature models by name (``p1``, ``p2``, ``empty``, ``seam``, ``smooth``).
    :param source: where the corners came from (``corners`` or ``markers``).
    :param cube_kind: ``cube`` or ``track`` (a doubling track with a counter).
    :param empty_means: the Lab colour of every sample spot of every point when bare (24 x
        steps x 3), measured or estimated at calibration.
    :param border: Lab pixels of the board's frame round the field at calibration (see
        :func:`vision.features.border_band`), to notice an arm reaching over it.
    :param border_mean: whether :attr:`border` holds each pixel's mean (profiles made before
        hold one sample per pixel, and frames are compared with them sampled alike).
    :param references: what each point and half of the bar looks like bare under this camera
        and light (:class:`vision.strips.References`), for the learned point reader: cut at
        calibration, and learnt further from the positions confirmed in play.
    :param view: the board and its frame in grey as the calibration frame showed them through
        :attr:`corners` (:func:`vision.follow.board_view`), to find the board again if it
        moved before the reader saw a clear frame (renewed each time it is followed).
    :param look: the playing field in colour as the calibration frame showed it, a quarter of the
        rectified field's size (BGRA; alpha 0 where something stood over the points, a dice
        cup, so that its look is not known): the reader holds each frame against it to see
        what lies over the field that is no checker, die or cube (a hand, an arm, a cup).
    :param die_fraction: a die's side as a fraction of a checker's diameter, from
        :data:`DIE_FRACTION_RANGE` (real dice are 0.4 to 0.5; so is the default, which
        profiles made before it was a key stand for too: they were made on real boards).
    """

    image_size: tuple[int, int]
    corners: list[tuple[float, float]]
    bar_fraction: float
    models: dict[str, Gaussian] = field(default_factory=dict)
    source: str = "corners"
    checker_fraction: float = 0.92
    position: str = ""
    border: list[int] = field(default_factory=list)
    border_mean: bool = True
    empty_means: list[list[list[float]]] = field(default_factory=list)
    cube_kind: str = "cube"
    references: References | None = None
    die_fraction: float = DIE_FRACTION
    view: np.ndarray | None = field(default=None, compare=False, repr=False)
    look: np.ndarray | None = field(default=None, compare=False, repr=False)

    @property
    def geometry(self) -> FieldGeometry:
        """The field layout for this board."""
        return FieldGeometry(bar_fraction=self.bar_fraction, checker_fraction=self.checker_fraction)

    @property
    def homography(self) -> np.ndarray:
        """3x3 homography from field coordinates to image pixels."""
        return field_homography(np.asarray(self.corners, dtype=np.float64))

    def save(self, path: str | Path) -> None:
        """Write the profile as TOML.

        :raises ProfileError: ``cannot write PATH: why`` (no such folder, a folder, no name, ...).
        """
        check_output(path)
        lines = [
            "# bgboard calibration profile: one board under one camera",
            f"version = {PROFILE_VERSION}",
            f"image_size = [{self.image_size[0]}, {self.image_size[1]}]",
            f"corners = [{', '.join(f'[{x:.2f}, {y:.2f}]' for x, y in self.corners)}]",
            f"bar_fraction = {self.bar_fraction:.5f}",
            f"checker_fraction = {self.checker_fraction:.5f}",
            f'source = "{self.source}"',
            f'position = "{self.position}"',
            f'cube_kind = "{self.cube_kind}"',
            f"die_fraction = {self.die_fraction:.4f}",
            f"border = [{', '.join(str(v) for v in self.border)}]",
            f"border_mean = {'true' if self.border_mean else 'false'}",
            "empty_means = ["
            + ", ".join(
                "[" + ", ".join("[" + ", ".join(f"{v:.2f}" for v in c) + "]" for c in row) + "]"
                for row in self.empty_means
            )
            + "]",
        ]
        if self.references is not None:
            lines.append(f"references_borrowed = [{', '.join(str(int(b)) for b in self.references.borrowed)}]")
            lines.append(f"references_evidence = [{', '.join(f'{v:.4f}' for v in self.references.evidence)}]")
            if self.references.misread is not None:
                counts = [*self.references.misread, *(self.references.read_back or ())]
                lines.append(f"references_misread = [{', '.join(str(c) for c in counts)}]")
            if self.references.network != "points":
                lines.append(f'references_network = "{self.references.network}"')
            lines.append(f'references = "{self.references.to_text()}"')
        if self.view is not None:
            lines.append(f'view = "{view_to_text(self.view)}"')
        if self.look is not None:
            lines.append(f'look = "{png_text(self.look)}"')
        lines.append("")
        for name, model in self.models.items():
            lines.append(f"[models.{name}]")
            lines.append(f"mean = [{', '.join(f'{v:.6g}' for v in model.mean)}]")
            rows = ", ".join("[" + ", ".join(f"{v:.6g}" for v in row) + "]" for row in model.cov)
            lines.append(f"cov = [{rows}]")
            lines.append("")
        target = Path(path)
        text = "\n".join(lines)
        try:
            if target.exists() and not target.is_file():
                target.write_text(text, encoding="utf-8")
                return
            # A whole new file, then renamed over the old one: the referee saves what it learnt
            # while it runs, and a power cut must not leave half a profile.
            temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
            try:
                temporary.write_text(text, encoding="utf-8")
                os.replace(temporary, target)
            finally:
                temporary.unlink(missing_ok=True)
        except OSError as exc:
            raise ProfileError(f"cannot write {_shown(path)}: {exc.strerror or exc}") from None

    @classmethod
    def load(cls, path: str | Path) -> Profile:
        """Read a profile written by :meth:`save`, and check it holds all the reader needs.

        :raises ProfileError: naming the file and what is wrong with it in words: missing, a
            folder, empty, not TOML, a key missing or misspelt, a value of the wrong kind or
            out of range, a model the reader needs missing.
        """
        name = str(path)
        if not name.strip():
            raise ProfileError("no profile named (an empty file name)")
        where = Path(path)
        if where.is_dir():
            raise ProfileError(f"{name} is a folder, not a profile")
        try:
            raw = read_limited(where, MAX_PROFILE, "a profile")
        except FileNotFoundError:
            raise ProfileError(f"{name}: no such profile") from None
        except OSError as exc:
            raise ProfileError(f"cannot read {name}: {exc.strerror or exc}") from None
        if not raw.strip():
            raise ProfileError(f"{name} is empty: not a profile (make one with bgboard vision calibrate)")
        try:
            data: dict[str, Any] = tomllib.loads(raw.decode("utf-8"))
        except UnicodeDecodeError:
            raise ProfileError(f"{name} is not a profile: not a text file") from None
        except tomllib.TOMLDecodeError as exc:
            raise ProfileError(f"{name} is not a TOML profile: {exc}") from None
        return _Checker(name, data).profile()

    def check_frame(self, image: np.ndarray, where: str = "frame") -> None:
        """Refuse a frame from another camera (another size) than the profile's.

        :raises ProfileError: naming both sizes.
        """
        height, width = image.shape[:2]
        if (width, height) != tuple(self.image_size):
            raise ProfileError(
                f"{where} is {width}x{height} but the profile was made for {self.image_size[0]}x{self.image_size[1]}:"
                " another camera or resolution; calibrate again"
            )


#: The keys of a profile's top level, and whether the reader cannot do without them.
_KEYS: Final = {
    "version": True,
    "image_size": True,
    "corners": True,
    "bar_fraction": True,
    "models": True,
    "checker_fraction": False,
    "source": False,
    "position": False,
    "cube_kind": False,
    "die_fraction": False,
    "border": False,
    "border_mean": False,
    "empty_means": False,
    "references": False,
    "references_borrowed": False,
    "references_evidence": False,
    "references_misread": False,
    "references_network": False,
    "view": False,
    "look": False,
}
#: Models of a colour (L, a, b); the others are of one shape feature.
_COLOUR_MODELS: Final = re.compile(r"(p1|p2|bar_empty|empty[01](_\d+)?)")
_SHAPE_MODELS: Final = re.compile(r"(edge|top|ring)_p[12]|flat|no_ring")


class _Checker:
    """Turns a profile's parsed TOML into a :class:`Profile`, or says in words what is wrong."""

    def __init__(self, name: str, data: dict[str, Any]) -> None:
        self.name = name
        self.data = data

    def fail(self, what: str) -> ProfileError:
        return ProfileError(f"{self.name}: {what}")

    def profile(self) -> Profile:
        data = self.data
        unknown = [key for key in data if key not in _KEYS]
        for key, needed in _KEYS.items():
            if needed and key not in data:
                guess = difflib.get_close_matches(key, unknown, n=1)
                if guess:
                    raise self.fail(f"missing key {key!r}; is {guess[0]!r} that key misspelt?")
                cut = " (the file may be cut short)" if key == "models" else ""
                raise self.fail(f"missing key {key!r}{cut}; calibrate again to make a whole profile")
        if unknown:
            guess = difflib.get_close_matches(unknown[0], list(_KEYS), n=1)
            hint = f" (did you mean {guess[0]!r}?)" if guess else ""
            raise self.fail(f"unknown key {unknown[0]!r}{hint}")
        version = data["version"]
        if version != PROFILE_VERSION or isinstance(version, bool):
            raise self.fail(f"profile version {version!r}, expected {PROFILE_VERSION}; calibrate again")
        size = self.numbers("image_size", data["image_size"], 2, "two whole numbers, width and height")
        if any(v != int(v) or v < 16 for v in size):
            raise self.fail(f"image_size must be two whole numbers, width and height, not {data['image_size']!r}")
        width, height = int(size[0]), int(size[1])
        corners = data["corners"]
        if not isinstance(corners, list) or len(corners) != 4:
            raise self.fail(f"corners must be four x,y pairs, not {_short(corners)}")
        pairs = [self.numbers("corners", c, 2, "four x,y pairs") for c in corners]
        problem = corner_problem(np.asarray(pairs, dtype=np.float64), width, height)
        if problem:
            raise self.fail(f"corners: {problem}")
        bar_fraction = self.number("bar_fraction", data["bar_fraction"])
        if not 0.0 <= bar_fraction < 0.5:
            raise self.fail(f"bar_fraction must be from 0 to 0.5, not {bar_fraction:g}")
        checker_fraction = self.number("checker_fraction", data.get("checker_fraction", 0.92))
        if not 0.3 <= checker_fraction <= 1.0:
            raise self.fail(f"checker_fraction must be from 0.3 to 1, not {checker_fraction:g}")
        die_fraction = self.number("die_fraction", data.get("die_fraction", DIE_FRACTION))
        low, high = DIE_FRACTION_RANGE
        if not low <= die_fraction <= high:
            raise self.fail(
                f"die_fraction (a die's side over a checker's diameter) must be from {low:g} to {high:g},"
                f" not {die_fraction:g}"
            )
        texts = {key: data.get(key, default) for key, default in (("source", "corners"), ("position", ""))}
        texts["cube_kind"] = data.get("cube_kind", "cube")
        for key, value in texts.items():
            if not isinstance(value, str):
                raise self.fail(f"{key} must be a string, not {_short(value)}")
        if texts["cube_kind"] not in ("cube", "track"):
            raise self.fail(f"cube_kind must be 'cube' or 'track', not {texts['cube_kind']!r}")
        if texts["position"]:
            # The position calibrated on is read back whenever the reader needs its first look:
            # a bad one is said now, with the file, not at the first frame.
            try:
                Position.from_id(texts["position"])
            except BackgammonError as exc:
                raise self.fail(f"position must be the Position ID calibrated on: {exc}") from None
        border = self.border(data.get("border", []))
        border_mean = data.get("border_mean", False)
        if not isinstance(border_mean, bool):
            raise self.fail(f"border_mean must be true or false, not {_short(border_mean)}")
        empty_means = self.empty_means(data.get("empty_means", []))
        models = self.models(data["models"])
        references = self.references(
            data.get("references"),
            data.get("references_borrowed"),
            data.get("references_evidence"),
            data.get("references_misread"),
            data.get("references_network", "points"),
        )
        view = data.get("view")
        if view is not None:
            if not isinstance(view, str):
                raise self.fail(f"view must be a string (a PNG in base64), not {_short(view)}")
            try:
                view = view_from_text(view)
            except ValueError as exc:
                raise self.fail(f"view: {exc}; calibrate again, or delete the line") from None
        look = data.get("look")
        if look is not None:
            if not isinstance(look, str):
                raise self.fail(f"look must be a string (a PNG in base64), not {_short(look)}")
            try:
                look = png_from_text(look, cv2.IMREAD_UNCHANGED)
            except ValueError as exc:
                raise self.fail(f"look: it is {exc}; calibrate again, or delete the line") from None
            if look.shape != (*LOOK_SIZE[::-1], 4):
                raise self.fail(
                    f"look is {look.shape[1]} x {look.shape[0]} pixels, not {LOOK_SIZE[0]} x {LOOK_SIZE[1]} in colour:"
                    " calibrate again, or delete the line"
                )
        return Profile(
            image_size=(width, height),
            corners=[(float(x), float(y)) for x, y in pairs],
            bar_fraction=bar_fraction,
            models=models,
            source=texts["source"],
            checker_fraction=checker_fraction,
            position=texts["position"],
            border=border,
            border_mean=border_mean,
            cube_kind=texts["cube_kind"],
            empty_means=empty_means,
            references=references,
            die_fraction=die_fraction,
            view=view,
            look=look,
        )

    def number(self, key: str, value: object, *, finite: bool = True) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.fail(f"{key} must be a number, not {_short(value)}")
        if finite and not math.isfinite(value):
            raise self.fail(f"{key} must be a finite number, not {value!r}")
        return float(value)

    def numbers(self, key: str, value: object, count: int, what: str, *, finite: bool = True) -> list[float]:
        if not isinstance(value, list) or len(value) != count:
            raise self.fail(f"{key} must be {what}, not {_short(value)}")
        try:
            return [self.number(key, v, finite=finite) for v in value]
        except ProfileError:
            raise self.fail(f"{key} must be {what}, not {_short(value)}") from None

    def border(self, value: object) -> list[int]:
        wanted = BORDER_SIZE[0] * BORDER_SIZE[1] * 3
        if not isinstance(value, list) or len(value) not in (0, wanted):
            length = len(value) if isinstance(value, list) else _short(value)
            raise self.fail(f"border must be a list of {wanted} numbers (the frame round the field), not {length}")
        if not all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 255 for v in value):
            raise self.fail("border must hold whole numbers from 0 to 255")
        return list(value)

    def empty_means(self, value: object) -> list[list[list[float]]]:
        if not isinstance(value, list) or len(value) not in (0, 24):
            raise self.fail(f"empty_means must be 24 rows (one a point) of {STEPS} L,a,b colours")
        rows = []
        for row in value:
            if not isinstance(row, list) or len(row) != STEPS:
                raise self.fail(f"empty_means must be 24 rows (one a point) of {STEPS} L,a,b colours")
            # A spot never seen bare is nan, as saved.
            rows.append([self.numbers("empty_means", c, 3, "L,a,b colours", finite=False) for c in row])
        return rows

    def references(
        self, text: object, borrowed: object, evidence: object, misread: object, network: object = "points"
    ) -> References | None:
        if text is None and borrowed is None:
            return None
        if text is None or borrowed is None:
            missing = "references" if text is None else "references_borrowed"
            raise self.fail(f"missing key {missing!r} (the file may be cut short); calibrate again")
        if not isinstance(text, str):
            raise self.fail(f"references must be a string (the strips, base64), not {_short(text)}")
        if (
            not isinstance(borrowed, list)
            or len(borrowed) != STRIPS
            or not all(isinstance(b, int) and not isinstance(b, bool) and b in (0, 1) for b in borrowed)
        ):
            raise self.fail(f"references_borrowed must be {STRIPS} numbers, each 0 or 1")
        try:
            references = References.from_text(text, [bool(b) for b in borrowed])
        except ValueError as exc:
            raise self.fail(f"references: {exc}") from None
        if evidence is not None:
            what = f"{len(TEMPERATURES)} numbers (one a temperature)"
            values = self.numbers("references_evidence", evidence, len(TEMPERATURES), what)
            if any(v < 0 for v in values):
                raise self.fail("references_evidence must not be negative")
            references.evidence = np.asarray(values, np.float64)
            references.temperature = TEMPERATURES[int(np.argmin(references.evidence))]
        if misread is not None:
            counts = misread if isinstance(misread, list) else []
            if len(counts) not in (2, 4) or not all(
                isinstance(c, int) and not isinstance(c, bool) and 0 <= c <= STRIPS for c in counts
            ):
                what = (
                    f"two counts of strips from 0 to {STRIPS} (with its own references, all borrowed),"
                    " and the points misread reading it whole by the network and by the models"
                )
                raise self.fail(f"references_misread must be {what}, not {_short(misread)}")
            references.misread = (counts[0], counts[1])
            references.read_back = (counts[2], counts[3]) if len(counts) == 4 else None
        if network not in NETWORKS:
            raise self.fail(f"references_network must be one of {', '.join(NETWORKS)}, not {_short(network)}")
        references.network = str(network)
        return references

    def models(self, value: object) -> dict[str, Gaussian]:
        if not isinstance(value, dict):
            raise self.fail(f"models must be tables [models.NAME], not {_short(value)}")
        models: dict[str, Gaussian] = {}
        for name, table in value.items():
            colour = _COLOUR_MODELS.fullmatch(name)
            if not colour and not _SHAPE_MODELS.fullmatch(name):
                raise self.fail(f"unknown model [models.{name}]")
            if not isinstance(table, dict) or "mean" not in table or "cov" not in table:
                raise self.fail(f"[models.{name}] must have a mean and a cov (the file may be cut short)")
            k = 3 if colour else 1
            mean = self.numbers(f"[models.{name}] mean", table["mean"], k, f"{k} numbers")
            rows = table["cov"]
            if not isinstance(rows, list) or len(rows) != k:
                raise self.fail(f"[models.{name}] cov must be {k} rows of {k} numbers, not {_short(rows)}")
            cov = [self.numbers(f"[models.{name}] cov", r, k, f"{k} rows of {k} numbers") for r in rows]
            matrix = np.asarray(cov)
            if not np.allclose(matrix, matrix.T) or np.any(np.linalg.eigvalsh(matrix) <= 0):
                raise self.fail(f"[models.{name}] cov is not a covariance (symmetric, positive definite)")
            models[name] = Gaussian(mean, cov)
        for needed in ("p1", "p2"):
            if needed not in models:
                raise self.fail(f"missing the model [models.{needed}] (the file may be cut short); calibrate again")
        for parity in (0, 1):
            each = all(f"empty{parity}_{j}" in models for j in range(STEPS))
            if f"empty{parity}" not in models and not each:
                raise self.fail(
                    f"missing the model [models.empty{parity}] (the file may be cut short); calibrate again"
                )
        return models


def _short(value: object) -> str:
    """A value as a profile's problem quotes it: its repr, cut short."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _shown(path: str | Path) -> str:
    return str(path) if str(path) else "''"


def check_output(path: str | Path) -> None:
    """Refuse a path a profile cannot be written to, before any work is done.

    :raises ProfileError: ``cannot write PATH: why``.
    """
    problem = output_problem(path)
    if problem:
        raise ProfileError(f"cannot write {_shown(path)}: {problem}")


#: How far (a share of the image's width or height) a field's corner may lie outside the image:
#: a photo cropped at the field cuts its corners off by a few pixels (1% on real photos).
CORNER_OUTSIDE = 0.03


def corner_problem(corners: np.ndarray, width: int, height: int) -> str | None:
    """What is wrong with four field corners (contract order) in a ``width`` x ``height`` image.

    Four distinct finite points inside the image (or just outside it, :data:`CORNER_OUTSIDE`),
    going round a convex quadrilateral of a useful size clockwise on screen: beside player 1's
    13-, 24-, 1- then 12-point.
    """
    names = ("13-point", "24-point", "1-point", "12-point")
    corners = np.asarray(corners, dtype=np.float64)
    if corners.shape != (4, 2):
        return "the corners must be four x,y pairs"
    # A photo cropped at the field may cut a corner off: one may lie a little outside it.
    mx, my = CORNER_OUTSIDE * width, CORNER_OUTSIDE * height
    for (x, y), name in zip(corners, names, strict=True):
        if not (math.isfinite(x) and math.isfinite(y)):
            return f"the corner beside the {name} is not a number"
        if not (-mx <= x < width + mx and -my <= y < height + my):
            return f"the corner beside the {name} ({x:.0f},{y:.0f}) is outside the {width}x{height} image"
    close = max(4.0, 0.01 * min(width, height))
    for i, j in itertools.combinations(range(4), 2):
        if float(np.linalg.norm(corners[i] - corners[j])) < close:
            x, y = corners[i]
            return (
                f"the corners beside the {names[i]} and the {names[j]} are the same point ({x:.0f},{y:.0f}):"
                " give the field's four corners"
            )
    order = "give them in order round the field: beside the 13-, 24-, 1- then 12-point"
    if _crossing(corners[0], corners[1], corners[2], corners[3]) or _crossing(
        corners[1], corners[2], corners[3], corners[0]
    ):
        return f"two sides of the quadrilateral the corners make cross each other: {order}"
    signed = 0.5 * sum(
        corners[i][0] * corners[(i + 1) % 4][1] - corners[(i + 1) % 4][0] * corners[i][1] for i in range(4)
    )
    share = abs(signed) / (width * height)
    if share < 0.02:
        return (
            f"the corners enclose {100 * share:.1f}% of the {width}x{height} image (they lie on a line, or"
            " close together): give the playing field's four corners"
        )
    if not cv2.isContourConvex(corners.astype(np.float32).reshape(-1, 1, 2)):
        return f"the corners do not make a convex quadrilateral (one lies inside the others): {order}"
    if signed <= 0:
        return (
            "the corners must go round the field clockwise on screen: beside the 13-, 24-, 1- then 12-point"
            " (top-left, top-right, bottom-right, bottom-left seen from player 1's seat)"
        )
    return None


def _crossing(a: np.ndarray, b: np.ndarray, c: np.ndarray, d: np.ndarray) -> bool:
    """Whether the segments a-b and c-d cross (properly: not only touching)."""

    def side(p: np.ndarray, q: np.ndarray, r: np.ndarray) -> float:
        return float((q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0]))

    return side(a, b, c) * side(a, b, d) < 0 and side(c, d, a) * side(c, d, b) < 0


def field_homography(corners: np.ndarray) -> np.ndarray:
    """Homography from the field rectangle (FIELD_W x FIELD_H) to the four image corners."""
    field_corners = np.array([[0, 0], [FIELD_W, 0], [FIELD_W, FIELD_H], [0, FIELD_H]], dtype=np.float64)
    corners = np.asarray(corners, dtype=np.float64)
    if corners.shape != (4, 2) or not np.isfinite(corners).all():
        raise ProfileError("the corners must be four x,y pairs")
    try:
        h, _ = cv2.findHomography(field_corners, corners)
    except cv2.error:
        h = None
    if h is None:
        raise ProfileError("the four corners do not make a quadrilateral")
    return np.asarray(h, dtype=np.float64)
