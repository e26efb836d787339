# SPDX-License-Identifier: MIT
"""The calibration profile of one board under one camera, saved as TOML.

It holds what the reader needs and cannot see in a single frame: where the playing field is
(its four corners in the image, hence the homography), the image size it was made for, the
bar's width, and what this board's checkers, empty points and checker seams look like under
this light (small Gaussian models of a few features, learned from a picture of a known
position).
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from vision.geometry import FIELD_H, FIELD_W, FieldGeometry

PROFILE_VERSION = 1
#: Squared distance (in standard deviations) beyond which a sample counts no worse.
ROBUST_CLIP = 25.0


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
    """

    image_size: tuple[int, int]
    corners: list[tuple[float, float]]
    bar_fraction: float
    models: dict[str, Gaussian] = field(default_factory=dict)
    source: str = "corners"
    checker_fraction: float = 0.92
    position: str = ""
    border: list[int] = field(default_factory=list)
    empty_means: list[list[list[float]]] = field(default_factory=list)
    cube_kind: str = "cube"

    @property
    def geometry(self) -> FieldGeometry:
        """The field layout for this board."""
        return FieldGeometry(bar_fraction=self.bar_fraction, checker_fraction=self.checker_fraction)

    @property
    def homography(self) -> np.ndarray:
        """3x3 homography from field coordinates to image pixels."""
        return field_homography(np.asarray(self.corners, dtype=np.float64))

    def save(self, path: str | Path) -> None:
        """Write the profile as TOML."""
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
            f"border = [{', '.join(str(v) for v in self.border)}]",
            "empty_means = ["
            + ", ".join(
                "[" + ", ".join("[" + ", ".join(f"{v:.2f}" for v in c) + "]" for c in row) + "]"
                for row in self.empty_means
            )
            + "]",
            "",
        ]
        for name, model in self.models.items():
            lines.append(f"[models.{name}]")
            lines.append(f"mean = [{', '.join(f'{v:.6g}' for v in model.mean)}]")
            rows = ", ".join("[" + ", ".join(f"{v:.6g}" for v in row) + "]" for row in model.cov)
            lines.append(f"cov = [{rows}]")
            lines.append("")
        Path(path).write_text("\n".join(lines), encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> Profile:
        """Read a profile written by :meth:`save`.

        :raises ProfileError: the file is missing or not a profile.
        """
        try:
            data: dict[str, Any] = tomllib.loads(Path(path).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ProfileError(f"{path}: no such profile") from None
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ProfileError(f"{path}: not a TOML profile: {exc}") from None
        try:
            if data.get("version") != PROFILE_VERSION:
                raise ProfileError(f"{path}: profile version {data.get('version')!r}, expected {PROFILE_VERSION}")
            models = {
                name: Gaussian(list(m["mean"]), [list(r) for r in m["cov"]])
                for name, m in data.get("models", {}).items()
            }
            return cls(
                image_size=(int(data["image_size"][0]), int(data["image_size"][1])),
                corners=[(float(x), float(y)) for x, y in data["corners"]],
                bar_fraction=float(data["bar_fraction"]),
                models=models,
                source=str(data.get("source", "corners")),
                checker_fraction=float(data.get("checker_fraction", 0.92)),
                position=str(data.get("position", "")),
                border=[int(v) for v in data.get("border", [])],
                cube_kind=str(data.get("cube_kind", "cube")),
                empty_means=[[[float(v) for v in c] for c in row] for row in data.get("empty_means", [])],
            )
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, ProfileError):
                raise
            raise ProfileError(f"{path}: malformed profile ({exc!r})") from None

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


def field_homography(corners: np.ndarray) -> np.ndarray:
    """Homography from the field rectangle (FIELD_W x FIELD_H) to the four image corners."""
    field_corners = np.array([[0, 0], [FIELD_W, 0], [FIELD_W, FIELD_H], [0, FIELD_H]], dtype=np.float64)
    h, _ = cv2.findHomography(field_corners, corners.astype(np.float64))
    if h is None:
        raise ProfileError("the four corners do not make a quadrilateral")
    return np.asarray(h, dtype=np.float64)
