# SPDX-License-Identifier: MIT
"""``bgboard leds check`` and ``bgboard devices``, against an LED controller on a fake port."""

from __future__ import annotations

import argparse
import io
import logging
import os
import time
from pathlib import Path
from typing import Any

import pytest
from hardware_fakes import Controller

from bgboard.cli import main
from bgboard.cli.hardware_commands import cmd_leds_check
from firmware_bridge import link as link_module
from hardware import devices
from hardware.check import COLOUR_TEST, led_check
from hardware.layout import LedLayout
from hardware.panels import PanelError
from hardware.serial_panel import open_link


@pytest.fixture
def controller() -> Controller:
    """An LED controller on a fake port; ``controller.open`` is a Link's opener."""
    return Controller()


@pytest.fixture
def plugged(monkeypatch: pytest.MonkeyPatch, controller: Any) -> Any:
    """The controller answers on whatever port the command opens."""
    monkeypatch.setattr(link_module, "open_serial", lambda url, baudrate=0, timeout=0.0: controller.open(url))
    return controller


def _decoded(scene: bytes) -> tuple[int, list[int]]:
    return scene[0], list(scene[1:])


def test_the_walk_lights_each_led_alone_in_chain_order_then_each_colour_then_dark(controller: Any) -> None:
    layout = LedLayout.standard()
    out = io.StringIO()
    sleeps: list[float] = []
    link = open_link("/dev/ttyUSB0", layout, opener=controller.open)
    try:
        led_check(link, layout, out, url="/dev/ttyUSB0", step_ms=200, sleep=sleeps.append)
    finally:
        link.close()
    scenes = [_decoded(s)[1] for s in controller.scenes]
    assert len(scenes) == 44 + len(COLOUR_TEST) + 1
    for position, scene in enumerate(scenes[:44]):
        assert [i for i, b in enumerate(scene) if b] == [position]
        assert scene[position] == 0x50  # white, steady
    assert [set(s) for s in scenes[44:48]] == [{0x10}, {0x20}, {0x30}, {0x50}]
    assert not any(scenes[-1])
    assert sleeps == [0.2] * 44 + [0.6] * 4
    text = out.getvalue()
    assert "LED controller on /dev/ttyUSB0: firmware 1.2.3, protocol 1.0, 44 LEDs in use" in text
    assert "last reset: external" in text
    assert "\n    0  status\n    1  turn.1\n" in text and "\n   43  cube.1.64\n" in text
    assert "every LED red" in text and text.rstrip().endswith("while no program drives it.")


def test_the_walk_says_which_port_did_not_answer_and_what_to_check(controller: Any) -> None:
    controller.deaf = True
    layout = LedLayout.standard()
    link = open_link("/dev/ttyUSB3", layout, opener=controller.open, boot_timeout=0.2)
    try:
        with pytest.raises(PanelError, match=r"no LED controller answered on /dev/ttyUSB3 within 0\.3 s") as caught:
            led_check(link, layout, io.StringIO(), url="/dev/ttyUSB3", connect_timeout=0.3, sleep=lambda s: None)
    finally:
        link.close()
    assert "make flash PORT=/dev/ttyUSB3" in str(caught.value) and "bgboard devices" in str(caught.value)


def test_leds_check_on_the_command_line(plugged: Any, capsys: pytest.CaptureFixture[str]) -> None:
    out = io.StringIO()
    assert main(["leds", "check", "--port", "/dev/ttyUSB7", "--step-ms", "1"], out=out) == 0
    assert plugged.opened == ["/dev/ttyUSB7"]
    assert len(plugged.scenes) == 49
    assert "   24  point.20\n" in out.getvalue()


def test_leds_check_with_a_layout_file(plugged: Any, tmp_path: Path) -> None:
    text = LedLayout.standard().to_toml().replace("length = 44", "length = 46")
    path = tmp_path / "board.toml"
    path.write_text(text, encoding="utf-8")
    out = io.StringIO()
    assert main(["leds", "check", "--port", "/dev/ttyUSB7", "--step-ms", "1", "--layout", str(path)], out=out) == 0
    assert plugged.led_count == 46
    assert "spare positions (dark): 44, 45" in out.getvalue()


def test_leds_check_errors_are_one_line_and_exit_1(
    plugged: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plugged.deaf = True
    assert main(["leds", "check", "--port", "/dev/ttyUSB7", "--timeout", "0.3"], out=io.StringIO()) == 1
    err = capsys.readouterr().err
    assert "bgboard: error: no LED controller answered on /dev/ttyUSB7 within 0.3 s" in err
    bad = tmp_path / "bad.toml"
    bad.write_text("[chain]\nlength = 2\n[leds]\nstatus = 0\n", encoding="utf-8")
    assert main(["leds", "check", "--port", "/dev/ttyUSB7", "--layout", str(bad)], out=io.StringIO()) == 1
    assert f"bgboard: error: {bad}, leds: missing 43 LED(s): point.1" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("port", "reason"),
    [
        ("/dev/ttyUSB9", "no such device"),
        ("bogus://x", "invalid URL, protocol 'bogus' not known"),
        ("hwgrep://dead:beef", "no ports found matching"),
    ],
)
def test_leds_check_on_a_port_that_cannot_be_opened_fails_at_once(
    capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture, port: str, reason: str
) -> None:
    if port.startswith("/dev/") and os.path.exists(port):
        pytest.skip(f"{port} exists here")
    started = time.monotonic()
    assert main(["leds", "check", "--port", port], out=io.StringIO()) == 1
    assert time.monotonic() - started < 1.0  # not the 5 s wait for an answer
    err = capsys.readouterr().err
    assert err.startswith(f"bgboard: error: cannot open the LED controller's port {port}: {reason}")
    assert "bgboard devices lists the serial ports" in err and len(err.splitlines()) == 1
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


def test_leds_check_without_a_port_name_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["leds", "check", "--port", ""], out=io.StringIO()) == 1
    assert capsys.readouterr().err.startswith("bgboard: error: no serial port given: name the LED controller's port")
    with pytest.raises(PanelError, match="no serial port given"):
        open_link("  ", LedLayout.standard())


@pytest.mark.parametrize("timeout", ["nan", "0", "-1", "inf"])
def test_leds_check_wants_a_positive_timeout(capsys: pytest.CaptureFixture[str], timeout: str) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["leds", "check", "--port", "/dev/ttyUSB9", "--timeout", timeout], out=io.StringIO())
    assert caught.value.code == 2
    assert "argument --timeout" in capsys.readouterr().err
    # The command itself refuses it too, when called without the parser.
    args = argparse.Namespace(port="/dev/ttyUSB9", layout=None, step_ms=1, timeout=float(timeout))
    assert cmd_leds_check(args, io.StringIO()) == 2
    assert "argument --timeout: must be more than 0" in capsys.readouterr().err


def test_devices_lists_ports_cameras_and_the_gpio_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GPIOZERO_PIN_FACTORY", raising=False)
    monkeypatch.setattr(devices, "raspberry_pi_model", lambda path=None: None)
    port = devices.SerialPortInfo("/dev/ttyUSB0", "USB Serial", 0x1A86, 0x7523, by_id=("/dev/serial/by-id/usb-x",))
    monkeypatch.setattr(devices, "serial_ports", lambda: [port])
    out = io.StringIO()
    assert main(["devices"], out=out) == 0
    text = out.getvalue()
    assert (
        "serial ports:\n  /dev/ttyUSB0  USB Serial  USB 1a86:7523 (hwgrep://1a86:7523)\n      /dev/serial/by-id/usb-x\n"
        in text
    )
    assert "cameras:\n" in text and "picamera2: " in text
    assert text.endswith("GPIO backend: none (not a Raspberry Pi)\n")


def test_leds_check_takes_the_panel_address_form_of_a_port(capsys: pytest.CaptureFixture[str]) -> None:
    if os.path.exists("/dev/ttyUSB9"):
        pytest.skip("/dev/ttyUSB9 exists here")
    assert main(["leds", "check", "--port", "serial:/dev/ttyUSB9"], out=io.StringIO()) == 1
    assert "cannot open the LED controller's port /dev/ttyUSB9: no such device" in capsys.readouterr().err
