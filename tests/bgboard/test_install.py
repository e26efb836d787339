# SPDX-License-Identifier: MIT
"""scripts/install-pi.sh, run into a temporary root (``--root``: no apt, users, systemd or udev).

The script builds a real virtual environment there and pip-installs this checkout into it,
offline (``--no-deps --no-build-isolation --no-index``, with this environment's setuptools).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import setuptools  # type: ignore[import-untyped,unused-ignore]

from bgboard.config import Config

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "install-pi.sh"
PIP_ARGS = "--no-deps --no-build-isolation --no-index"

# One installation serves the module: keep its tests on one worker.
pytestmark = pytest.mark.xdist_group("install")

_JUNK = (".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".*_cache", ".hypothesis")


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A frozen copy of the sources: the checkout itself may change while the tests run."""
    copy = tmp_path_factory.mktemp("checkout") / "bgboard"
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns(*_JUNK), symlinks=True)
    return copy


def run(root: Path, *args: str, env: dict[str, str] | None = None, check: bool = True, source: Path = ROOT) -> str:
    environment = dict(os.environ)
    # The offline build needs a setuptools new enough for pyproject.toml (PEP 639 licence).
    environment["PYTHONPATH"] = str(Path(setuptools.__file__).resolve().parents[1])
    environment["PYTHON"] = sys.executable
    environment.pop("BGBOARD_USB_IDS", None)
    environment.update(env or {})
    done = subprocess.run(
        ["bash", str(source / "scripts" / "install-pi.sh"), "--root", str(root), "--pip-args", PIP_ARGS, *args],
        capture_output=True,
        text=True,
        env=environment,
        timeout=300,
        check=False,
    )
    if check:
        assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


def snapshot(root: Path) -> dict[str, str]:
    """Every file and link under ``root`` (the venv's own files aside) with a hash of its content."""
    files = {}
    for path in sorted(root.rglob("*")):
        name = str(path.relative_to(root))
        if "/venv/lib" in f"/{name}" or "__pycache__" in name:
            continue
        if path.is_symlink():
            files[name] = "-> " + os.readlink(path)
        elif path.is_file():
            files[name] = hashlib.sha256(path.read_bytes()).hexdigest()
    return files


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory, checkout: Path) -> tuple[Path, str]:
    root = tmp_path_factory.mktemp("pi")
    return root, run(root, source=checkout)


def test_the_script_is_valid_bash_and_shellcheck_clean() -> None:
    subprocess.run(["bash", "-n", str(SCRIPT)], check=True)
    # shellcheck is the Debian package of that name (scripts/setup.sh --test installs it).
    done = subprocess.run(["shellcheck", str(SCRIPT)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def test_install_writes_every_file_and_prints_what_it_would_run(installed: tuple[Path, str]) -> None:
    root, output = installed
    for path in (
        "etc/bgboard/config.toml",
        "etc/systemd/system/bgboard.service",
        "etc/udev/rules.d/60-bgboard.rules",
        "opt/bgboard/venv/bin/python",
        "var/lib/bgboard",
    ):
        assert (root / path).exists(), path
    assert os.readlink(root / "usr/local/bin/bgboard") == "/opt/bgboard/venv/bin/bgboard"
    # Without a system, the commands that would change it are shown, not run.
    assert "would run: useradd --system" in output and "would run: systemctl enable bgboard.service" in output
    assert "would run: udevadm control --reload-rules" in output
    done = subprocess.run(
        [str(root / "opt/bgboard/venv/bin/bgboard"), "--version"], capture_output=True, text=True, check=True
    )
    assert done.stdout.startswith("bgboard ")
    cfg = (root / "opt/bgboard/venv/pyvenv.cfg").read_text()
    assert "include-system-site-packages = true" in cfg


def test_a_second_run_changes_nothing(installed: tuple[Path, str], checkout: Path) -> None:
    root, _ = installed
    before = snapshot(root)
    output = run(root, source=checkout)
    assert snapshot(root) == before
    assert "nothing changed" in output
    assert not [line for line in output.splitlines() if line.startswith(("wrote", "created", "installed", "linked"))]
    assert "unchanged: bgboard in /opt/bgboard/venv (same sources)" in output


def test_the_unit_starts_the_referee_with_resume_and_restarts_it(installed: tuple[Path, str]) -> None:
    unit = (installed[0] / "etc/systemd/system/bgboard.service").read_text()
    lines = set(unit.splitlines())
    assert "ExecStart=/opt/bgboard/venv/bin/bgboard referee --resume --config /etc/bgboard/config.toml" in lines
    assert {"User=bgboard", "Restart=always", "RestartSec=5", "WantedBy=multi-user.target"} <= lines
    assert "After=dev-bgboard\\x2dleds.device local-fs.target" in lines
    assert "@" not in unit.replace("@...@", "")


def test_the_udev_rule_names_the_led_controller_by_usb_ids(installed: tuple[Path, str]) -> None:
    rule = (installed[0] / "etc/udev/rules.d/60-bgboard.rules").read_text()
    rules = [line for line in rule.splitlines() if line and not line.startswith("#")]
    for vendor, product in (("1a86", "7523"), ("0403", "6001"), ("2341", "0043")):
        assert any(f'ATTRS{{idVendor}}=="{vendor}", ATTRS{{idProduct}}=="{product}"' in line for line in rules)
    assert all('SYMLINK+="bgboard-leds"' in line and 'TAG+="systemd"' in line for line in rules)
    assert len(rules) == 3


def test_the_config_points_at_the_pi_devices_and_is_valid(installed: tuple[Path, str]) -> None:
    config = Config.load(installed[0] / "etc/bgboard/config.toml")
    assert config.leds.panel == "/dev/bgboard-leds"
    assert config.store.path == Path("/var/lib/bgboard/matches.sqlite3")
    assert config.camera.source == "picamera2:"
    assert config.camera.profile == Path("/etc/bgboard/board.toml")


def test_the_users_config_is_never_overwritten(installed: tuple[Path, str], checkout: Path, tmp_path: Path) -> None:
    root = tmp_path / "pi"
    shutil.copytree(installed[0], root, symlinks=True)
    config = root / "etc/bgboard/config.toml"
    config.write_text('[leds]\npanel = "terminal"\n')
    output = run(root, source=checkout)
    assert config.read_text() == '[leds]\npanel = "terminal"\n'
    assert "kept: /etc/bgboard/config.toml" in output


def test_other_usb_ids_change_the_rule_and_bad_ones_are_refused(
    installed: tuple[Path, str], checkout: Path, tmp_path: Path
) -> None:
    root = tmp_path / "pi"
    shutil.copytree(installed[0], root, symlinks=True)
    output = run(root, env={"BGBOARD_USB_IDS": "1a86:55d4"}, source=checkout)
    assert "wrote: /etc/udev/rules.d/60-bgboard.rules (changed)" in output
    rule = (root / "etc/udev/rules.d/60-bgboard.rules").read_text()
    assert 'ATTRS{idProduct}=="55d4"' in rule and "7523" not in rule
    done = run(root, env={"BGBOARD_USB_IDS": "CH340"}, check=False, source=checkout)
    assert "is not VID:PID" in done


def test_a_dry_run_changes_nothing(tmp_path: Path, checkout: Path) -> None:
    root = tmp_path / "pi"
    output = run(root, "--dry-run", source=checkout)
    assert "would write: /etc/systemd/system/bgboard.service (new)" in output
    assert "would run: pip install" in output
    assert not [p for p in root.rglob("*")]


def test_uninstall_removes_what_it_installed_and_keeps_config_and_store(
    installed: tuple[Path, str], tmp_path: Path
) -> None:
    root = tmp_path / "pi"
    shutil.copytree(installed[0], root, symlinks=True)
    (root / "var/lib/bgboard/matches.sqlite3").write_bytes(b"the matches")
    (root / "etc/bgboard/board.toml").write_text("# the calibration\n")
    output = run(root, "--uninstall")
    for gone in ("etc/systemd/system/bgboard.service", "etc/udev/rules.d/60-bgboard.rules", "opt/bgboard"):
        assert not (root / gone).exists(), gone
    assert not (root / "usr/local/bin/bgboard").is_symlink()
    assert (root / "etc/bgboard/config.toml").is_file() and (root / "etc/bgboard/board.toml").is_file()
    assert (root / "var/lib/bgboard/matches.sqlite3").read_bytes() == b"the matches"
    assert "would run: systemctl disable --now bgboard.service" in output
    assert "absent: /etc/systemd/system/bgboard.service" in run(root, "--uninstall")

    run(root, "--uninstall", "--purge")
    assert not (root / "etc/bgboard").exists() and not (root / "var/lib/bgboard").exists()


def test_purge_goes_only_with_uninstall(tmp_path: Path) -> None:
    output = run(tmp_path, "--purge", check=False)
    assert "--purge goes with --uninstall" in output
