# SPDX-License-Identifier: MIT
"""What hardware this machine has for bgboard: serial ports and the GPIO backend (``bgboard devices``).

Nothing here fails on a machine without the hardware: it reports what it finds.
"""

from __future__ import annotations

import importlib
import os
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Final

#: Where udev puts stable names for serial devices.
BY_ID: Final = Path("/dev/serial/by-id")
#: The device tree's model string: "Raspberry Pi 5 Model B Rev 1.0".
MODEL: Final = Path("/proc/device-tree/model")

#: gpiozero's pin factories by class name, as ``GPIOZERO_PIN_FACTORY`` names them.
_FACTORY_NAMES: Final = {
    "LGPIOFactory": "lgpio",
    "RPiGPIOFactory": "rpigpio",
    "PiGPIOFactory": "pigpio",
    "NativeFactory": "native",
    "MockFactory": "mock",
}


@dataclass(frozen=True, slots=True)
class SerialPortInfo:
    """One serial port, as pyserial lists it, with its stable ``/dev/serial/by-id`` names."""

    device: str
    description: str = ""
    vid: int | None = None
    pid: int | None = None
    serial_number: str | None = None
    manufacturer: str | None = None
    by_id: tuple[str, ...] = ()

    @property
    def usb_id(self) -> str | None:
        """``VID:PID`` in hex, for a USB port."""
        if self.vid is None or self.pid is None:
            return None
        return f"{self.vid:04x}:{self.pid:04x}"

    @property
    def hwgrep(self) -> str | None:
        """A pyserial URL that finds this port by its USB ids, wherever it is plugged in."""
        return None if self.usb_id is None else f"hwgrep://{self.usb_id}"

    def describe(self) -> str:
        """One line for ``bgboard devices``."""
        parts = [self.device]
        if self.description and self.description != "n/a":
            parts.append(self.description)
        if self.usb_id:
            parts.append(f"USB {self.usb_id} ({self.hwgrep})")
        if self.serial_number:
            parts.append(f"serial {self.serial_number}")
        line = "  ".join(parts)
        for path in self.by_id:
            line += f"\n    {path}"
        return line


def _by_id_links(directory: Path) -> dict[str, list[str]]:
    """Resolved device -> the by-id links pointing at it."""
    links: dict[str, list[str]] = {}
    try:
        entries = sorted(directory.iterdir())
    except OSError:
        return links
    for entry in entries:
        try:
            links.setdefault(str(entry.resolve()), []).append(str(entry))
        except OSError:
            continue
    return links


def serial_ports(by_id_dir: Path = BY_ID) -> list[SerialPortInfo] | None:
    """Every serial port pyserial sees, sorted by device; ``None`` when pyserial is not installed."""
    try:
        list_ports = importlib.import_module("serial.tools.list_ports")
    except ImportError:
        return None
    links = _by_id_links(by_id_dir)
    out = []
    for port in list_ports.comports():
        resolved = str(Path(port.device).resolve()) if port.device.startswith("/") else port.device
        out.append(
            SerialPortInfo(
                device=port.device,
                description=port.description or "",
                vid=port.vid,
                pid=port.pid,
                serial_number=port.serial_number,
                manufacturer=port.manufacturer,
                by_id=tuple(links.get(resolved, ())),
            )
        )
    return sorted(out, key=lambda p: p.device)


def raspberry_pi_model(path: Path = MODEL) -> str | None:
    """The Raspberry Pi's model, or ``None`` on anything else."""
    try:
        model = path.read_bytes().rstrip(b"\x00").decode("ascii", "replace").strip()
    except OSError:
        return None
    return model if model.startswith("Raspberry Pi") else None


def gpio_backend(model_path: Path = MODEL) -> str:
    """The GPIO backend gpiozero would use here, in words; never raises.

    ``GPIOZERO_PIN_FACTORY`` wins when set; off a Pi the answer is ``none (not a Raspberry Pi)``.
    """
    chosen = os.environ.get("GPIOZERO_PIN_FACTORY")
    if chosen:
        return f"{chosen} (set by GPIOZERO_PIN_FACTORY)"
    model = raspberry_pi_model(model_path)
    if model is None:
        return "none (not a Raspberry Pi)"
    try:
        gpiozero = importlib.import_module("gpiozero")
    except ImportError:
        return f"none: gpiozero is not installed (pip install gpiozero) on {model}"
    try:
        with warnings.catch_warnings():
            # gpiozero warns for each driver it falls back from; the answer says which one it took.
            warnings.simplefilter("ignore")
            gpiozero.Device.ensure_pin_factory()
    except Exception as exc:  # any driver's failure means the same: no GPIO through gpiozero
        return f"none ({exc}) on {model}"
    name = type(gpiozero.Device.pin_factory).__name__
    return f"{_FACTORY_NAMES.get(name, name)} (gpiozero {name}) on {model}"
