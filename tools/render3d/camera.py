# SPDX-License-Identifier: MIT
"""From Cycles' linear image to a camera's JPEG: exposure, white balance, tone, lens, blur, noise.

Cycles renders scene-referred light; a real camera then exposes it, balances its white (never
quite), compresses highlights, bends straight lines a little, smears a frame when something
shakes, adds sensor noise and compresses to JPEG. Exposure and white balance are settled on a
setup's first frame and kept (a camera on a fixed setting), within a few percent.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from tools.render3d.plan import undistort


@dataclass(frozen=True)
class Sensor:
    """The camera's settled exposure gain and white-balance gains (linear RGB)."""

    gain: float
    balance: tuple[float, float, float]

    @classmethod
    def settle(cls, linear: np.ndarray, field: np.ndarray, mid: float, correction: float) -> Sensor:
        """Meter on the field (``field``: image polygon, n x 2) and balance grey-world, ``correction`` of the way."""
        mask = np.zeros(linear.shape[:2], np.uint8)
        cv2.fillPoly(mask, [np.round(field).astype(np.int32)], 1)
        inside = linear[mask > 0] if mask.any() else linear.reshape(-1, 3)
        means = inside.mean(axis=0) + 1e-6
        grey = float(means.mean())
        balance = (grey / means) ** correction
        luma = (inside * balance) @ np.array([0.2126, 0.7152, 0.0722])
        median = float(np.median(luma)) + 1e-6
        high = float(np.percentile(luma, 99.5)) + 1e-6
        # Metering for the middle, but not so bright that the white checkers burn out.
        gain = min(mid / median, 1.15 / high)
        return cls(gain=float(gain), balance=(float(balance[0]), float(balance[1]), float(balance[2])))


def tone(linear: np.ndarray) -> np.ndarray:
    """Linear light (exposed) to sRGB 0-1, with a soft shoulder instead of a hard clip."""
    x = np.maximum(linear, 0.0)
    knee = 0.8
    over = x > knee
    x = np.where(over, knee + (1 - knee) * (1 - np.exp(-(x - knee) / (1 - knee))), x)
    out: np.ndarray = np.where(x <= 0.0031308, 12.92 * x, 1.055 * np.power(np.maximum(x, 1e-8), 1 / 2.4) - 0.055)
    return out


def develop(
    linear: np.ndarray,
    sensor: Sensor,
    rng: np.random.Generator,
    *,
    exposure: float,
    distortion: float,
    vignette: float,
    noise: float,
    blur: tuple[float, float] | None,
) -> np.ndarray:
    """The camera's 8-bit BGR frame from a linear RGB render.

    :param exposure: this frame's exposure relative to the settled one (auto exposure wanders).
    :param distortion: radial lens distortion (see :func:`tools.render3d.plan.undistort`).
    :param vignette: darkening of the image corners (0-1).
    :param noise: sensor noise sigma in 8-bit levels (at mid grey; shot noise grows with light).
    :param blur: motion blur ``(length in pixels, angle in degrees)``, or None.
    """
    h, w = linear.shape[:2]
    gains = np.float32(sensor.gain * exposure) * np.asarray(sensor.balance, np.float32)
    img: np.ndarray = linear.astype(np.float32) * gains
    if vignette > 0:
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        r2 = ((xx - (w - 1) / 2) ** 2 + (yy - (h - 1) / 2) ** 2) / ((w / 2) ** 2 + (h / 2) ** 2)
        img *= (1.0 - vignette * r2)[:, :, None]
    if distortion:
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float64)
        src = undistort(np.stack([xx, yy], axis=-1), (w, h), distortion).astype(np.float32)
        img = cv2.remap(img, src[..., 0], src[..., 1], cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
    if blur is not None:
        length, angle = blur
        n = max(3, math.ceil(length) | 1)
        kernel = np.zeros((n, n), np.float32)
        c = (n - 1) / 2
        dx, dy = math.cos(math.radians(angle)), math.sin(math.radians(angle))
        cv2.line(
            kernel,
            (round(c - dx * length / 2), round(c - dy * length / 2)),
            (round(c + dx * length / 2), round(c + dy * length / 2)),
            1.0,
            1,
            cv2.LINE_AA,
        )
        img = cv2.filter2D(img, -1, kernel / kernel.sum())
    out = tone(img) * 255.0
    # Shot noise grows with the signal's square root, read noise does not; both on the sensor's values.
    sigma = noise * np.sqrt(0.3 + 0.7 * np.clip(out, 0, 255) / 128.0)
    out = out + rng.normal(0.0, 1.0, out.shape).astype(np.float32) * sigma
    rgb = np.clip(np.round(out), 0, 255).astype(np.uint8)
    return np.ascontiguousarray(rgb[:, :, ::-1])


def jpeg(image: np.ndarray, quality: int) -> bytes:
    """JPEG bytes of a BGR image."""
    ok, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, int(quality)])
    if not ok:
        raise RuntimeError("JPEG encoding failed")
    return bytes(data.tobytes())
