# SPDX-License-Identifier: MIT
"""The calibration view in a real browser, at a phone's size (touch) and a desktop's (mouse,
keys), on a referee started without a profile: the frame and the handles load, a handle
dragged moves and the outline and the bar's line follow, Confirm is refused without the token
and in the calibration's own words for corners off the field, and with the token and the
corners found the profile is written and the table reads the next frames with it.

Debian's Chromium, driven headless by Playwright, as in ``test_web_browser.py``. Screenshots
of each step go to ``$BGBOARD_SCREENSHOTS`` when it names a folder, else the test's own.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from calibration_table import Running, true_corners, waiting_for_calibration
from rendered_table import START
from test_web_browser import chromium_path

from vision.profile import Profile

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("browser"), pytest.mark.usefixtures("referee_threads_end")]

SIZES: dict[str, dict[str, Any]] = {
    "phone": {
        "viewport": {"width": 390, "height": 844},
        "has_touch": True,
        "is_mobile": True,
        "device_scale_factor": 2,
    },
    "desktop": {"viewport": {"width": 1366, "height": 768}},
}


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    path = chromium_path()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        # --no-sandbox: CI runs the tests as root, where Chromium's sandbox refuses to start.
        launched = p.chromium.launch(executable_path=path, args=["--no-sandbox"])
        yield launched
        launched.close()


class Shots:
    """Screenshots of a test's steps, named by the size and the step."""

    def __init__(self, folder: Path, size: str) -> None:
        self.folder = folder
        self.size = size
        folder.mkdir(parents=True, exist_ok=True)

    def __call__(self, page: Any, step: str) -> None:
        page.screenshot(path=str(self.folder / f"calibrate-{self.size}-{step}.png"), full_page=True)


def _handles(page: Any) -> list[tuple[float, float]]:
    """Where the page's handles are, in frame pixels, in the contract's order."""
    return [
        (float(x), float(y))
        for x, y in page.locator(".cal-handle").evaluate_all("hs => hs.map(h => [h.dataset.x, h.dataset.y])")
    ]


def _outline(page: Any) -> list[tuple[float, float]]:
    text = page.get_attribute("#outline", "points")
    return [(float(x), float(y)) for x, y in (pair.split(",") for pair in text.split())]


def _scale(page: Any) -> float:
    """Frame pixels per CSS pixel in the view as shown."""
    view = "s => s.viewBox.baseVal.width / s.getBoundingClientRect().width"
    return float(page.locator("#overlay").evaluate(view))


def _fits_the_width(page: Any) -> None:
    """Nothing off to the side: the page does not scroll sideways, the photo keeps its shape,
    every handle and every button lies within the screen's width."""
    # Laid out again, and the photo fitted to its column (a ResizeObserver's redraw), first.
    page.evaluate("() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))")
    width = page.viewport_size["width"]
    # A phone's browser widens its layout to hold what is too wide (zoomed out): the screen's
    # width is the viewport's, not innerWidth alone.
    sizes = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
    assert sizes[0] <= sizes[1] == width, f"the page is {sizes[0]} px wide, {sizes[1]} px shown, on a {width} px screen"
    shown = page.locator("#overlay").evaluate(
        "s => [s.getBoundingClientRect().width / s.getBoundingClientRect().height,"
        " s.viewBox.baseVal.width / s.viewBox.baseVal.height]"
    )
    assert shown[0] == pytest.approx(shown[1], rel=0.01)
    for item in page.locator(".cal-ring").all() + page.locator(".cal-tools button").all():
        box = item.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= width


def _drag(page: Any, size: str, index: int, dx: float, dy: float) -> None:
    """Drag handle ``index`` by ``dx``, ``dy`` CSS pixels: a finger on the phone, the mouse on the desktop."""
    ring = page.locator(f'.cal-handle[data-index="{index}"] .cal-ring').bounding_box()
    x, y = ring["x"] + ring["width"] / 2, ring["y"] + ring["height"] / 2
    if size == "phone":
        touch = page.context.new_cdp_session(page)
        touch.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": x, "y": y}]})
        for step in range(1, 9):
            point = {"x": x + dx * step / 8, "y": y + dy * step / 8}
            touch.send("Input.dispatchTouchEvent", {"type": "touchMove", "touchPoints": [point]})
        touch.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
        touch.detach()
    else:
        page.mouse.move(x, y)
        page.mouse.down()
        page.mouse.move(x + dx, y + dy, steps=8)
        page.mouse.up()


@pytest.mark.parametrize("size", list(SIZES))
def test_corners_are_placed_on_the_frame_and_confirmed_with_the_token(size: str, browser: Any, tmp_path: Path) -> None:
    shots = Shots(Path(os.environ.get("BGBOARD_SCREENSHOTS") or tmp_path / "shots"), size)
    config, camera, profile = waiting_for_calibration(tmp_path)
    run = Running(config, camera)
    context = browser.new_context(**SIZES[size])
    try:
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))

        # The live page asks for the calibration, and leads to it.
        page.goto(run.url)
        page.wait_for_selector("#calibrate-banner:not([hidden])")
        assert "not calibrated" in page.locator("#calibrate-banner").inner_text()
        shots(page, "1-live-uncalibrated")
        page.locator("#calibrate-banner a").click()

        # The frame and the four handles, on the corners the markers gave, each named.
        page.wait_for_selector(".cal-handle")
        page.wait_for_function("() => document.querySelector('#view').dataset.frame === '1280x720'")
        labels = page.locator(".cal-handle").evaluate_all("hs => hs.map(h => h.dataset.label)")
        assert labels == ["13", "24", "1", "12"]
        found = _handles(page)
        assert np.abs(np.asarray(found) - true_corners()).max() < 2.5
        assert "corner markers" in page.locator("#found").inner_text()
        assert "starting position" in page.locator("#position-words").inner_text()
        assert "not calibrated" in page.locator("#cal-state").inner_text()
        assert page.locator("#position-board svg .bg-checker").count() == 30
        # Every handle within the screen, and big enough for a fingertip; nothing off to the side.
        _fits_the_width(page)
        assert all(ring.bounding_box()["width"] >= 24 for ring in page.locator(".cal-ring").all())
        shots(page, "2-found")
        if size == "phone":
            # The whole photo, wider than the field: scaled to the phone's width, the buttons
            # wrapped. So again once the phone is turned and back: the page laid out at a wider
            # window first (as a browser may do before it knows its size) fits the narrow one.
            page.locator("#zoom").click()
            assert page.locator("#zoom").inner_text() == "Zoom to the field"
            _fits_the_width(page)
            shots(page, "2-whole-photo")
            page.set_viewport_size({"width": 844, "height": 390})
            _fits_the_width(page)
            page.set_viewport_size(SIZES[size]["viewport"])
            _fits_the_width(page)
            shots(page, "2-whole-photo-turned-back")
            page.locator("#zoom").click()
            assert _handles(page) == found

        # A handle dragged: it moves with the pointer, and the outline and the bar's line follow.
        bar = page.get_attribute("#bar-line", "x2"), page.get_attribute("#bar-line", "y2")
        k = _scale(page)
        _drag(page, size, 2, -40, -30)
        moved = _handles(page)
        assert moved[:2] == found[:2] and moved[3] == found[3]
        assert abs(moved[2][0] - (found[2][0] - 40 * k)) < 1.5 * k
        assert abs(moved[2][1] - (found[2][1] - 30 * k)) < 1.5 * k
        assert np.abs(np.asarray(_outline(page)[2]) - moved[2]).max() < 0.05
        assert (page.get_attribute("#bar-line", "x2"), page.get_attribute("#bar-line", "y2")) != bar
        shots(page, "3-dragged")

        # Confirmed without the token (none kept on this device): refused, nothing written.
        page.locator("#confirm").click()
        page.wait_for_selector(".answer--refused")
        assert "token" in page.locator("#answer").inner_text()
        assert not profile.exists()

        # With the token, the corner off the field: refused in the calibration's own words.
        page.locator("#token").fill(run.token)
        page.locator("#confirm").click()
        page.wait_for_function("() => document.querySelector('#answer').textContent.includes(' near ')")
        refusal = page.locator("#answer").inner_text()
        assert refusal.startswith("Refused: ") and "Nothing was written" in refusal
        assert page.locator("#trouble").count() == 1  # the place the refusal names, marked on the frame
        assert not profile.exists() and run.referee.table.reader is None
        shots(page, "4-refused")

        # Back to the corners found, confirmed: the profile is written and the table reads with it.
        page.locator("#reset").click()
        assert _handles(page) == found
        page.locator("#confirm").click()
        page.wait_for_selector(".answer--ok")
        assert "Calibrated: field corners from the corner markers" in page.locator("#answer").inner_text()
        assert "The board is calibrated" in page.locator("#cal-state").inner_text()
        assert page.locator("#trouble").count() == 0
        _fits_the_width(page)
        assert np.abs(np.asarray(Profile.load(profile).corners) - np.asarray(found)).max() < 0.06
        assert run.wait_for("calibrated")["how"] == "markers"
        shots(page, "5-confirmed")

        # The live page: no more banner, and what the camera sees is read with the new profile.
        page.locator(".answer--ok a").click()
        page.wait_for_selector("#board svg")
        assert page.locator("#calibrate-banner").is_hidden() and page.locator("#calibrate-link").is_visible()
        page.locator("#camera-panel summary").click()
        page.wait_for_function("() => document.querySelector('#camera').naturalWidth > 0", timeout=60_000)
        reading = run.referee.table.last_reading
        assert reading is not None and reading.points == START
        shots(page, "6-live-calibrated")
        assert errors == []
    finally:
        context.close()
        run.close()


def test_the_corners_turn_round_and_move_a_pixel_at_a_time_from_the_keyboard(browser: Any, tmp_path: Path) -> None:
    config, camera, _ = waiting_for_calibration(tmp_path)
    run = Running(config, camera)
    context = browser.new_context(**SIZES["desktop"])
    try:
        page = context.new_page()
        page.goto(run.url + "calibrate")
        page.wait_for_selector(".cal-handle")
        found = _handles(page)
        # The board seen from the other seat: the 13-point's corner where the 1-point's was.
        page.locator("#turn").click()
        assert _handles(page) == [found[2], found[3], found[0], found[1]]
        page.locator("#turn").click()
        assert _handles(page) == found
        # The arrow keys move the handle in focus by a frame pixel, ten with Shift.
        page.locator('.cal-handle[data-index="0"]').focus()
        page.keyboard.press("ArrowRight")
        page.keyboard.press("Shift+ArrowDown")
        assert _handles(page)[0] == (found[0][0] + 1, found[0][1] + 10)
        assert page.locator("#loupe").is_visible()
        # A handle dragged past another folds the outline: the page says so.
        page.locator("#reset").click()
        k = _scale(page)
        _drag(page, "desktop", 1, (found[0][0] - found[1][0] - 60) / k, 0)
        assert "folds" in page.locator("#found").inner_text()
        assert page.locator(".cal-field--bad").count() == 1
    finally:
        context.close()
        run.close()
