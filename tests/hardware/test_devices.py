# SPDX-License-Identifier: MIT
"""What ``bgboard devices`` finds: serial ports with their by-id names, the GPIO backend."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hardware_fakes import mock_pins

from hardware.devices import SerialPortInfo, gpio_backend, raspberry_pi_model, serial_ports


@pytest.fixture
def mock_factory() -> Iterator[Any]:
    """gpiozero on mock pins."""
    yield from mock_pins()


def test_serial_ports_carry_usb_ids_and_by_id_links(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    tty = tmp_path / "ttyUSB0"
    tty.touch()
    by_id = tmp_path / "by-id"
    by_id.mkdir()
    (by_id / "usb-1a86_USB_Serial-if00-port0").symlink_to(tty)
    fake = [
        SimpleNamespace(
            device=str(tty),
            description="USB Serial",
            vid=0x1A86,
            pid=0x7523,
            serial_number=None,
            manufacturer="QinHeng",
        ),
        SimpleNamespace(
            device="/dev/ttyS0", description="n/a", vid=None, pid=None, serial_number=None, manufacturer=None
        ),
    ]
    import serial.tools.list_ports

    monkeypatch.setattr(serial.tools.list_ports, "comports", lambda: fake)
    ports = serial_ports(by_id)
    assert ports is not None
    usb = next(p for p in ports if p.device == str(tty))
    assert usb.usb_id == "1a86:7523" and usb.hwgrep == "hwgrep://1a86:7523"
    assert usb.by_id == (str(by_id / "usb-1a86_USB_Serial-if00-port0"),)
    text = usb.describe()
    assert "USB 1a86:7523 (hwgrep://1a86:7523)" in text and "usb-1a86_USB_Serial-if00-port0" in text
    plain = next(p for p in ports if p.device == "/dev/ttyS0")
    assert plain.hwgrep is None and plain.describe() == "/dev/ttyS0"


def test_a_machine_that_is_not_a_pi_reports_no_gpio_backend(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("GPIOZERO_PIN_FACTORY", raising=False)
    assert gpio_backend(tmp_path / "missing") == "none (not a Raspberry Pi)"
    other = tmp_path / "model"
    other.write_bytes(b"Pine64 RockPro64\x00")
    assert raspberry_pi_model(other) is None
    assert gpio_backend(other) == "none (not a Raspberry Pi)"


def test_on_a_pi_the_backend_is_the_pin_factory_gpiozero_picks(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, mock_factory: Any
) -> None:
    monkeypatch.delenv("GPIOZERO_PIN_FACTORY", raising=False)
    model = tmp_path / "model"
    model.write_bytes(b"Raspberry Pi 5 Model B Rev 1.0\x00")
    assert raspberry_pi_model(model) == "Raspberry Pi 5 Model B Rev 1.0"
    assert gpio_backend(model) == "mock (gpiozero MockFactory) on Raspberry Pi 5 Model B Rev 1.0"


def test_on_a_pi_without_a_working_driver_the_backend_is_none(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from gpiozero import Device

    monkeypatch.delenv("GPIOZERO_PIN_FACTORY", raising=False)
    monkeypatch.setattr(Device, "pin_factory", None)
    model = tmp_path / "model"
    model.write_bytes(b"Raspberry Pi 4 Model B Rev 1.5\x00")
    answer = gpio_backend(model)
    # This machine has no GPIO chip: every driver fails, and no warning escapes.
    assert answer.startswith("none (") and answer.endswith("on Raspberry Pi 4 Model B Rev 1.5")


def test_the_environment_chooses_the_backend_first(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "mock")
    assert gpio_backend() == "mock (set by GPIOZERO_PIN_FACTORY)"


def test_serial_port_info_without_usb_has_no_hwgrep() -> None:
    assert SerialPortInfo("/dev/ttyAMA0").hwgrep is None
    assert SerialPortInfo("/dev/ttyACM0", vid=0x2341, pid=0x43).hwgrep == "hwgrep://2341:0043"
