# SPDX-License-Identifier: MIT
"""``bgboard doctor``: what is wrong with an installation, and how to fix it.

Each check is a small function returning a :class:`CheckResult` (``ok``, ``warning``,
``problem`` or ``skipped``, what was found, and the fix), so the tests run them one at a time
with fakes: a ``file:`` camera, the real LED firmware in simavr, gpiozero's mock pins.
:func:`run_checks` runs them all in order for the command line.

The service (``bgboard.service``) holds the camera and the LED controller while it runs, and
neither serves two programs at once, so while it is active the camera, calibration and LED
checks are skipped with a note to stop it first.
"""

from __future__ import annotations

import contextlib
import grp
import math
import os
import pwd
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal, TextIO

from bgboard.config import GNUBG_VARIABLE, Config, ConfigError, find_config, load_config

if TYPE_CHECKING:
    import numpy as np

Status = Literal["ok", "warning", "problem", "skipped"]

#: The systemd unit the install script writes.
SERVICE: Final = "bgboard"
#: The service's user, and the groups it needs: GPIO (buttons), the camera, the serial port.
SERVICE_USER: Final = "bgboard"
SERVICE_GROUPS: Final = ("gpio", "video", "dialout")
#: The LED controller's stable name, from the install script's udev rule.
LED_DEVICE: Final = "/dev/bgboard-leds"
#: Under this much free space where the store lives, a warning; under the second, a problem.
LOW_SPACE: Final = 200 * 1024 * 1024
NO_SPACE: Final = 20 * 1024 * 1024
#: How far (image pixels) the markers may lie from the profile's corners before it is stale.
CORNER_TOLERANCE: Final = 8.0
#: Without markers: the median colour change (Lab units) of the board's frame round the field,
#: at the profile's corners, beyond which the board or the camera has probably moved.
BORDER_TOLERANCE: Final = 12.0
#: Where to calibrate to, as the build guide says.
PROFILE_HINT: Final = "/etc/bgboard/board.toml"


@dataclass(frozen=True, slots=True)
class CheckResult:
    """The outcome of one check.

    :param name: the check's short name (``config``, ``camera``, ...).
    :param status: ``ok``, ``warning`` (works, but worth a look), ``problem`` (bgboard will not
        work as set up) or ``skipped`` (not checked here, and why).
    :param message: what was found.
    :param fix: what to do about it (empty when nothing is to be done).
    :param details: facts for ``--json`` (resolution, firmware version, free bytes, ...).
    """

    name: str
    status: Status
    message: str
    fix: str = ""
    details: Mapping[str, object] = field(default_factory=dict)

    def line(self) -> str:
        """One line for the terminal: status, name, what was found, and the fix."""
        text = f"{self.status:<8} {self.name:<12} {self.message}"
        return f"{text}; fix: {self.fix}" if self.fix else text

    def to_json(self) -> dict[str, object]:
        """The result as a JSON object."""
        return {
            "name": self.name,
            "status": self.status,
            "message": self.message,
            "fix": self.fix,
            "details": dict(self.details),
        }


def _ok(name: str, message: str, **details: object) -> CheckResult:
    return CheckResult(name, "ok", message, details=details)


def _with_timeout(work: Callable[[], Any], timeout: float) -> tuple[bool, Any, BaseException | None]:
    """Run ``work`` in a daemon thread: (finished in time, its result, its exception).

    Opening a camera can hang inside a driver; a daemon thread left behind does not keep the
    command from ending.
    """
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["result"] = work()
        except BaseException as exc:  # handed back to the caller, who reports it
            box["error"] = exc

    thread = threading.Thread(target=run, name="doctor-check", daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        return False, None, None
    return True, box.get("result"), box.get("error")


# -- config ----------------------------------------------------------------------------------


def check_config(path: Path | None = None, env: Mapping[str, str] = os.environ) -> tuple[CheckResult, Config | None]:
    """The config file: found (``path``, else the usual search) and valid.

    :returns: the result and the config to check the rest with (defaults when no file was
        found; ``None`` when the file is broken).
    """
    try:
        found = path if path is not None else find_config(env)
        if found is not None and not found.is_file():
            return (
                CheckResult(
                    "config",
                    "problem",
                    f"no config file {found}",
                    "run sudo scripts/install-pi.sh, which writes /etc/bgboard/config.toml, or give --config",
                ),
                None,
            )
        config = load_config(found, env)
    except ConfigError as exc:
        return CheckResult("config", "problem", str(exc), "correct that line (see bgboard/config.example.toml)"), None
    if found is None:
        return (
            CheckResult(
                "config",
                "warning",
                "no config file found; using the defaults (no camera, no LEDs)",
                "run sudo scripts/install-pi.sh, which writes /etc/bgboard/config.toml",
            ),
            config,
        )
    if config.notices:
        renamed = "; ".join(config.notices)
        return CheckResult("config", "warning", renamed, "change those lines; the old names still work"), config
    return _ok("config", f"{found} is valid", path=str(found)), config


# -- the service -----------------------------------------------------------------------------


def service_state(systemctl: str | None = None) -> str | None:
    """``active``, ``inactive``, ``failed``, ... for bgboard.service, or ``None`` without systemd or the unit."""
    program = systemctl or shutil.which("systemctl")
    if program is None or not Path("/run/systemd/system").is_dir():
        return None
    try:
        done = subprocess.run(
            [program, "show", "--property=LoadState,ActiveState", f"{SERVICE}.service"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    values = dict(line.partition("=")[::2] for line in done.stdout.splitlines())
    if values.get("LoadState") != "loaded":
        return None
    return values.get("ActiveState") or None


def check_service(state: str | None) -> CheckResult:
    """bgboard.service: running, failed, or not installed (``state`` from :func:`service_state`)."""
    if state is None:
        return CheckResult("service", "skipped", "no bgboard.service here (not installed, or no systemd)")
    if state == "failed":
        return CheckResult(
            "service",
            "problem",
            "bgboard.service failed",
            "see why with journalctl -u bgboard -n 50; then sudo systemctl restart bgboard",
        )
    if state in ("active", "activating", "reloading"):
        return _ok("service", f"bgboard.service is {state}", state=state)
    return CheckResult(
        "service", "warning", f"bgboard.service is {state}", "sudo systemctl enable --now bgboard", {"state": state}
    )


def _busy(name: str) -> CheckResult:
    return CheckResult(
        name,
        "skipped",
        "bgboard.service is running and holds the camera and the LED controller",
        "to check them: sudo systemctl stop bgboard, run bgboard doctor, then sudo systemctl start bgboard",
    )


# -- the camera and the calibration ----------------------------------------------------------


def check_camera(source: str | None, timeout: float = 10.0) -> tuple[CheckResult, np.ndarray | None]:
    """Open ``source`` (camera.source), read one frame within ``timeout`` seconds; report its size.

    :returns: the result and the frame (for the calibration check), or ``None``.
    """
    if not source:
        return (
            CheckResult(
                "camera",
                "problem",
                "no camera set (camera.source)",
                'set camera.source in the config: "picamera2:" for the Pi camera, "/dev/video0" for a USB camera',
            ),
            None,
        )

    def grab() -> Any:
        from vision.frames import open_source

        camera = open_source(source)
        try:
            # A camera's first frames can come before its exposure settles; one is enough here.
            return camera.read()
        finally:
            camera.close()

    finished, frame, error = _with_timeout(grab, timeout)
    fix = (
        "check the cable and camera.source (bgboard devices lists the cameras); the camera serves one program at a time"
    )
    if not finished:
        return CheckResult("camera", "problem", f"no frame from {source} within {timeout:g} s", fix), None
    if error is not None:
        return CheckResult("camera", "problem", f"{source}: {error}", fix), None
    if frame is None:
        return CheckResult("camera", "problem", f"{source} gave no frame", fix), None
    image = frame.image
    height, width = image.shape[:2]
    return _ok("camera", f"{source} gives {width}x{height} frames", width=width, height=height), image


def check_calibration(
    profile_path: Path | None,
    frame: np.ndarray | None,
    tolerance: float = CORNER_TOLERANCE,
    source: str | None = None,
) -> CheckResult:
    """The calibration profile: present and whole, made for this camera's resolution, still where
    the board is, and reading the camera's frame with confidence.

    With the corner markers in view, each marker's field corner must lie within ``tolerance``
    pixels of the profile's; without them, the board's frame round the field must still look as
    it did at calibration (:data:`BORDER_TOLERANCE`). Then the frame is read with the profile
    (:func:`vision.calibration.verify`): a reading that is occluded (a hand over the board now,
    or a profile made from a frame with one) or under its confidence floor is a problem; a
    board the reader found moved since calibration (and followed) is a warning.
    """
    camera = source or "the camera"
    recalibrate = (
        f"put the board in the starting position, then: bgboard doctor --save-frame start.png; "
        f"bgboard vision calibrate start.png --markers -o {profile_path or PROFILE_HINT}"
    )
    if profile_path is None:
        return CheckResult(
            "calibration",
            "problem",
            "no calibration profile set (camera.profile)",
            f"{recalibrate}; and set camera.profile",
        )
    from vision.profile import Profile, ProfileError

    try:
        profile = Profile.load(profile_path)
    except ProfileError as exc:
        return CheckResult("calibration", "problem", str(exc), recalibrate)
    if frame is None:
        return CheckResult("calibration", "skipped", f"{profile_path} loads; no frame to compare it with")
    try:
        profile.check_frame(frame, f"a frame of {camera}")
    except ProfileError as exc:
        return CheckResult("calibration", "problem", str(exc), recalibrate)
    placed = _placed(profile, profile_path, frame, tolerance, recalibrate)
    if placed.status == "problem":
        return placed
    read = _reads(profile, profile_path, frame, camera, recalibrate)
    if read.status != "ok":
        return CheckResult(read.name, read.status, read.message, read.fix, {**placed.details, **read.details})
    message = f"{placed.message}; {read.message}"
    return CheckResult(placed.name, placed.status, message, placed.fix, {**placed.details, **read.details})


def _placed(profile: Any, profile_path: Path, frame: np.ndarray, tolerance: float, recalibrate: str) -> CheckResult:
    """The profile's corners against the markers in ``frame``, or its frame round the field."""
    import numpy as np

    from vision.calibration import CalibrationError, find_markers

    corners = np.asarray(profile.corners, dtype=np.float64)
    try:
        found = find_markers(frame)
    except CalibrationError:
        found = None
    if found is not None:
        moved = float(np.linalg.norm(found - corners, axis=1).max())
        details = {"method": "markers", "moved_px": round(moved, 1), "tolerance_px": tolerance}
        if moved > tolerance:
            return CheckResult(
                "calibration",
                "problem",
                f"the corner markers lie up to {moved:.0f} px from {profile_path}'s corners:"
                " the board or the camera has moved",
                f"move it back, or calibrate again: {recalibrate}",
                details,
            )
        return _ok("calibration", f"{profile_path}: the corner markers are within {moved:.1f} px", **details)
    if not profile.border:
        return CheckResult(
            "calibration",
            "warning",
            f"{profile_path} fits the frame size, but no corner markers are in view to check the corners",
            "stick the markers on (bgboard vision markers -o markers.pdf) to let doctor check the calibration",
        )
    change = _border_change(profile, frame)
    details = {"method": "frame", "change": round(change, 1), "tolerance": BORDER_TOLERANCE}
    if change > BORDER_TOLERANCE:
        return CheckResult(
            "calibration",
            "problem",
            f"no corner markers in view, and the board's frame round the field looks unlike it did at calibration"
            f" (change {change:.0f}): the board or the camera has moved, or something lies on the frame",
            f"clear the frame, or calibrate again: {recalibrate}",
            details,
        )
    return _ok("calibration", f"{profile_path}: the board's frame is where the profile has it", **details)


def _reads(profile: Any, profile_path: Path, frame: np.ndarray, camera: str, recalibrate: str) -> CheckResult:
    """Read ``frame`` with the profile: a problem when occluded or not confident."""
    from vision.calibration import SELF_READ_CONFIDENCE, CalibrationError, verify
    from vision.dice import DiceModelError

    corners = [tuple(c) for c in profile.corners]
    try:
        reading = verify(profile, frame)
    except DiceModelError as exc:
        return CheckResult("calibration", "problem", f"cannot read the board: {exc}", "reinstall bgboard")
    except CalibrationError as exc:
        details: dict[str, object] = {"reads": exc.kind}
        if exc.kind == "occluded":
            return CheckResult(
                "calibration",
                "problem",
                f"a frame of {camera} read with {profile_path}: {exc}",
                "clear the board and run bgboard doctor again; if it still reads so, the profile was made from"
                f" a frame with something over the board (or the board has changed): calibrate again: {recalibrate}",
                details,
            )
        return CheckResult(
            "calibration",
            "problem",
            f"a frame of {camera} read with {profile_path}: {exc}",
            "set the board in the starting position, lit as when playing, and run bgboard doctor again; if it"
            f" still reads so, calibrate again: {recalibrate}",
            details,
        )
    figures: dict[str, object] = {
        "confidence": round(reading.confidence, 3),
        "confidence_floor": SELF_READ_CONFIDENCE,
    }
    # The reader follows a board that moved since calibration (it moves the profile's corners).
    moved = max(math.dist(a, b) for a, b in zip(corners, profile.corners, strict=True))
    if moved > 0.0:
        return CheckResult(
            "calibration",
            "warning",
            f"the board has moved up to {moved:.0f} px since {profile_path} was made; the reader found it where it"
            f" lies now, and the frame reads at confidence {reading.confidence:.3f}",
            f"the referee follows the board and saves its new corners; to start afresh, calibrate again: {recalibrate}",
            {"followed_px": round(moved, 1), **figures},
        )
    return _ok("calibration", f"the frame reads at confidence {reading.confidence:.3f}", **figures)


def _border_change(profile: Any, frame: np.ndarray) -> float:
    """The median colour change of the board's frame at the profile's corners since calibration.

    A general change of light is taken out first (the median over the band), as the reader
    does; what remains is large where the frame no longer lies where the profile has it.
    """
    import numpy as np

    from vision.features import border_band, border_mask

    now = border_band(frame, profile.homography, mean=profile.border_mean).astype(np.float32)
    then = np.asarray(profile.border, dtype=np.float32).reshape(now.shape)
    mask = border_mask(None)
    diff = now - then
    diff -= np.median(diff[mask], axis=0)
    return float(np.median(np.sqrt((diff**2).sum(axis=2))[mask]))


# -- the LED controller ----------------------------------------------------------------------


def expected_firmware() -> str:
    """The firmware version this bgboard speaks to (``firmware_bridge.protocol``)."""
    from firmware_bridge import protocol

    return f"{protocol.FW_MAJOR}.{protocol.FW_MINOR}.{protocol.FW_PATCH}"


def check_leds(
    panel: str,
    layout_name: str = "standard",
    timeout: float = 5.0,
    opener: Callable[[str], Any] | None = None,
) -> CheckResult:
    """The LED controller at ``panel`` (leds.panel) answers HELLO with the expected firmware.

    Only serial panels have a controller to ask; the others are reported for what they are.
    """
    from firmware_bridge import protocol
    from hardware.check import no_answer_message
    from hardware.layout import LayoutError, LedLayout
    from hardware.panels import PanelError, is_serial_address

    text = panel.strip()
    try:
        # Every panel lights a layout: a missing one would stop the referee whatever the panel.
        layout = LedLayout.from_file_or_name(layout_name)
    except LayoutError as exc:
        return CheckResult("leds", "problem", str(exc), "correct leds.layout in the config")
    if text in ("fake", "terminal") or text.startswith("terminal:"):
        return CheckResult(
            "leds",
            "warning",
            f"leds.panel = {text!r}: no LEDs on the board",
            f'set leds.panel = "{LED_DEVICE}" for the Nano (see docs/build-guide.md)',
        )
    if text.startswith(("gpio:", "gpio595:")):
        return CheckResult(
            "leds", "skipped", f"{text}: LEDs on GPIO pins answer nothing; watch them light when the referee starts"
        )
    url = text.removeprefix("serial:")
    url = url[2:] if url.startswith("///") else url
    if not (text.startswith("serial:") or is_serial_address(text)):
        return CheckResult(
            "leds", "problem", f"leds.panel = {text!r} is no LED panel address", "see bgboard/config.example.toml"
        )
    if url.startswith("/dev/") and not os.path.exists(url) and opener is None:
        fix = "plug the Nano into the Pi's USB; bgboard devices lists the serial ports and their USB ids"
        if url == LED_DEVICE:
            fix += (
                "; if it is there but the name is not, add its ids to /etc/udev/rules.d/60-bgboard.rules"
                " (BGBOARD_USB_IDS=VID:PID sudo scripts/install-pi.sh)"
            )
        return CheckResult("leds", "problem", f"no device {url}", fix)
    from hardware.serial_panel import open_link

    try:
        link = open_link(url, layout, opener=opener, boot_timeout=min(timeout, 3.0))
    except PanelError as exc:
        return CheckResult(
            "leds",
            "problem",
            str(exc),
            "plug in the LED controller, or correct leds.panel (bgboard devices lists the ports)",
        )
    try:
        answered = link.wait_connected(timeout)
        info = link.device
        last_error = link.stats.last_error
    finally:
        link.close()
    if not answered or info is None:
        return CheckResult("leds", "problem", no_answer_message(url, timeout, last_error), "see the message")
    version = info.firmware_version
    wanted = expected_firmware()
    details = {
        "firmware": version,
        "expected_firmware": wanted,
        "protocol": f"{info.proto_major}.{info.proto_minor}",
        "led_count": info.led_count,
    }
    flash = f"flash bgboard's firmware: make flash PORT={url if url.startswith('/') else '/dev/ttyUSB0'}"
    if info.proto_major != protocol.PROTO_MAJOR or version != wanted:
        return CheckResult(
            "leds",
            "problem",
            f"the LED controller on {url} runs firmware {version} (protocol {info.proto_major}.{info.proto_minor});"
            f" this bgboard expects firmware {wanted} (protocol {protocol.PROTO_MAJOR}.{protocol.PROTO_MINOR})",
            flash,
            details,
        )
    return _ok("leds", f"the LED controller on {url} answers: firmware {version}, {info.led_count} LEDs", **details)


# -- buttons ---------------------------------------------------------------------------------


def check_buttons(
    pins: Mapping[str, Any],
    out: TextIO,
    timeout: float = 10.0,
    pin_factory: Any = None,
) -> list[CheckResult]:
    """Ask for each button in turn ("press done ...") and say which ones answered, one result each."""
    if not pins:
        return [CheckResult("buttons", "skipped", "no buttons set (buttons.pins)")]
    from hardware.buttons import ButtonPanel
    from hardware.gpio import GpioError

    try:
        panel = ButtonPanel(pins, pin_factory=pin_factory)
    except GpioError as exc:
        return [CheckResult("buttons", "problem", str(exc), "run doctor on the Pi, as a user in the gpio group")]
    results = []
    wiring = "docs/leds.md"
    with panel:
        for name, pin in panel.pins.items():
            label = f"button {name}"
            if panel.is_pressed(name):
                results.append(
                    CheckResult(
                        label,
                        "problem",
                        f"GPIO{pin} reads pressed before anyone pressed it",
                        f"a short to GND, or the button is the normally-closed kind: check the wiring ({wiring})",
                    )
                )
                continue
            panel.pending()  # forget bounces and earlier presses
            out.write(f"press {name} (GPIO{pin}) within {timeout:g} s ...\n")
            out.flush()
            press = panel.get(timeout)
            if press is None:
                results.append(
                    CheckResult(
                        label,
                        "problem",
                        f"no press on GPIO{pin} within {timeout:g} s",
                        f"check the wire from GPIO{pin} to the button and from its other leg to GND ({wiring})",
                    )
                )
            elif press.name != name:
                results.append(
                    CheckResult(
                        label,
                        "problem",
                        f"asked for {name}, got {press.name} (GPIO{panel.pins[press.name]})",
                        f"the wires of {name} and {press.name} are swapped, or the pins in buttons.pins are",
                    )
                )
            else:
                results.append(_ok(label, f"GPIO{pin} answers", pin=str(pin)))
    return results


# -- gnubg, GPIO, space, the service user ----------------------------------------------------


def check_gnubg(program: str | None = None, timeout: float = 30.0) -> CheckResult:
    """GNU Backgammon is installed and answers a hint (the opening 31)."""
    from engine.dice import Dice
    from engine.hints import GnubgHints, HintError, find_gnubg
    from engine.position import Position

    # The program the table will run: the one $BGBOARD_GNUBG names, if set, else gnubg found.
    named = program or os.environ.get(GNUBG_VARIABLE) or None
    found = named or find_gnubg()
    if found is None:
        return CheckResult("gnubg", "problem", "gnubg is not installed: no hints", "sudo apt install gnubg")
    if named is not None and program is None and not (shutil.which(named) or os.access(named, os.X_OK)):
        return CheckResult(
            "gnubg",
            "problem",
            f"${GNUBG_VARIABLE} names {named}, which is no program: no hints",
            f"unset {GNUBG_VARIABLE}, or set it to gnubg's path (sudo apt install gnubg)",
        )
    start = time.monotonic()
    try:
        with GnubgHints(found, timeout=timeout, start_timeout=timeout) as hints:
            best = hints.plays(Position.STARTING, Dice(3, 1))[0].play
    except HintError as exc:
        return CheckResult("gnubg", "problem", f"{found} does not answer: {exc}", "sudo apt install --reinstall gnubg")
    took = time.monotonic() - start
    return _ok("gnubg", f"{found} answers (31 at the start: {best}, {took:.1f} s)", program=found, seconds=took)


def check_gpio(pi_model: str | None, backend: str, buttons: bool) -> CheckResult:
    """The Pi's model and the GPIO backend gpiozero would use (:func:`hardware.devices.gpio_backend`)."""
    if pi_model is None:
        if buttons:
            return CheckResult(
                "gpio",
                "warning",
                f"not a Raspberry Pi: the buttons in buttons.pins cannot work here ({backend})",
                "run bgboard on the Pi under the board, or leave buttons.pins empty",
            )
        return _ok("gpio", f"not a Raspberry Pi ({backend})", backend=backend)
    if backend.startswith("none"):
        return CheckResult(
            "gpio",
            "problem",
            f"{pi_model}: {backend}",
            "sudo apt install python3-lgpio (and pip install gpiozero in the venv: sudo scripts/install-pi.sh)",
        )
    return _ok("gpio", f"{pi_model}: {backend}", model=pi_model, backend=backend)


def check_space(store_path: Path, low: int = LOW_SPACE, none: int = NO_SPACE) -> CheckResult:
    """Free space on the file system that holds the match store (and that the store can be one)."""
    from bgboard.store import MatchStore, StoreError, file_in_the_way

    in_the_way = file_in_the_way(store_path)
    if store_path.is_dir():
        return CheckResult(
            "space",
            "problem",
            f"store.path {store_path} is a folder",
            "name a file, e.g. /var/lib/bgboard/matches.sqlite3",
        )
    if in_the_way is not None:
        return CheckResult("space", "problem", f"store.path {store_path}: {in_the_way}", "correct store.path")
    if store_path.exists():
        try:
            MatchStore(store_path, create=False).close()
        except StoreError as exc:
            return CheckResult("space", "problem", str(exc), "correct store.path, or move that file aside")
    folder = store_path.parent
    # The store may not exist yet: measure the nearest folder that does.
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    try:
        free = shutil.disk_usage(folder).free
    except OSError as exc:
        return CheckResult("space", "problem", f"cannot measure the space at {folder}: {exc}", "check the SD card")
    megabytes = free / 1024 / 1024
    details = {"path": str(store_path), "free_bytes": free}
    fix = (
        f"free some space on the file system of {folder} (sudo apt clean; old logs: sudo journalctl --vacuum-size=50M)"
    )
    if free < none:
        return CheckResult("space", "problem", f"only {megabytes:.0f} MB free for the store {store_path}", fix, details)
    if free < low:
        return CheckResult("space", "warning", f"{megabytes:.0f} MB free for the store {store_path}", fix, details)
    return _ok("space", f"{megabytes:,.0f} MB free for the store {store_path}", **details)


def check_user(user: str = SERVICE_USER, groups: Sequence[str] = SERVICE_GROUPS) -> CheckResult:
    """The service user exists and is in the groups for GPIO, the camera and the serial port."""
    try:
        entry = pwd.getpwnam(user)
    except KeyError:
        return CheckResult("user", "problem", f"no user {user}", "sudo scripts/install-pi.sh creates it")
    member = {g.gr_name for g in grp.getgrall() if user in g.gr_mem}
    with contextlib.suppress(KeyError):  # a primary group without a name
        member.add(grp.getgrgid(entry.pw_gid).gr_name)
    missing = [g for g in groups if g not in member]
    if missing:
        return CheckResult(
            "user",
            "problem",
            f"{user} is not in the group(s) {', '.join(missing)}",
            f"sudo usermod -aG {','.join(missing)} {user}; then sudo systemctl restart bgboard",
        )
    return _ok("user", f"{user} is in {', '.join(groups)}", groups=sorted(member))


# -- all of them -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DoctorOptions:
    """What :func:`run_checks` checks, and how long it waits."""

    config: Path | None = None
    buttons: bool = False
    camera_timeout: float = 10.0
    leds_timeout: float = 5.0
    button_timeout: float = 10.0
    gnubg_timeout: float = 30.0
    save_frame: Path | None = None


def run_checks(options: DoctorOptions, out: TextIO, env: Mapping[str, str] = os.environ) -> list[CheckResult]:
    """Every check in turn, as ``bgboard doctor`` runs them."""
    from hardware.devices import gpio_backend, raspberry_pi_model

    results: list[CheckResult] = []
    config_result, config = check_config(options.config, env)
    results.append(config_result)
    state = service_state()
    results.append(check_service(state))
    running = state in ("active", "activating", "reloading")
    model = raspberry_pi_model()
    if config is None:
        config = Config()
    if running:
        results += [_busy("camera"), _busy("calibration"), _busy("leds")]
    else:
        camera_result, frame = check_camera(config.camera.source, options.camera_timeout)
        results.append(camera_result)
        if frame is not None and options.save_frame is not None:
            results.append(_save_frame(frame, options.save_frame))
        results.append(check_calibration(config.camera.profile, frame, source=config.camera.source))
        results.append(check_leds(config.leds.panel, config.leds.layout, options.leds_timeout))
    if options.buttons:
        if running:
            results.append(_busy("buttons"))
        else:
            results += check_buttons(config.buttons.as_dict(), out, options.button_timeout)
    results.append(check_gnubg(timeout=options.gnubg_timeout))
    results.append(check_gpio(model, gpio_backend(), bool(config.buttons.pins)))
    results.append(check_space(config.store.resolved_path()))
    if model is not None or _user_exists(SERVICE_USER):
        results.append(check_user())
    return results


def _user_exists(user: str) -> bool:
    try:
        pwd.getpwnam(user)
    except KeyError:
        return False
    return True


def _save_frame(frame: np.ndarray, path: Path) -> CheckResult:
    import cv2

    if cv2.imwrite(str(path), frame):
        return _ok("frame", f"the camera's frame is saved in {path} (to calibrate from)", path=str(path))
    return CheckResult("frame", "problem", f"cannot write {path}", "give a writable file ending in .png or .jpg")


def exit_status(results: Sequence[CheckResult]) -> int:
    """0 when no check found a problem, else 1."""
    return 1 if any(r.status == "problem" for r in results) else 0
