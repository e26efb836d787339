# SPDX-License-Identifier: MIT
"""The LED controller's real firmware running in simavr, behind a serial port.

:func:`build_emulator` builds the firmware's ELF and the simavr harness with the project's
Makefile; :class:`Emulator` runs them. Its :attr:`Emulator.port` is a stable path (a symlink to
the pseudo-terminal) that survives :meth:`Emulator.kill` and :meth:`Emulator.start`, like
``/dev/serial/by-id/...`` across a USB unplug and replug, so the host opens it exactly as it
opens the real controller. By default the firmware is held in reset until the port is first
opened, so whoever opens it receives the BOOT message.

The tests and ``bgboard demo --leds sim`` use it; nothing else needs it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


class EmulatorError(RuntimeError):
    """The emulator cannot be built or started."""


#: What to install when the tool chain is missing (Debian / Raspberry Pi OS).
DEBIAN_PACKAGES = "gcc-avr avr-libc binutils-avr libsimavr-dev pkg-config gcc make"

#: How long the harness takes to print its PTY line, at most (it starts in milliseconds).
START_TIMEOUT_S = 10.0


@dataclass(frozen=True, slots=True)
class Build:
    """The two programs an emulator needs: the firmware's ELF and the simavr harness."""

    elf: Path
    harness: Path


def _missing_tools() -> list[str]:
    missing = [tool for tool in ("avr-gcc", "avr-objcopy", "make", "pkg-config", "cc") if shutil.which(tool) is None]
    if "pkg-config" not in missing:
        # Not `pkg-config --exists simavr`: Debian's simavr.pc requires libelf.pc, which the
        # harness does not need. The variable lookup works without it.
        done = subprocess.run(
            ["pkg-config", "--variable=includedir", "simavr"], capture_output=True, text=True, check=False
        )
        include = Path(done.stdout.strip() or "/usr/include") / "simavr"
        if (
            done.returncode != 0
            or not (include / "sim_avr.h").exists()
            or not (include / "parts" / "uart_pty.h").exists()
        ):
            missing.append("simavr headers (pkg-config simavr)")
    return missing


def build_emulator(out_dir: Path) -> Build:
    """Build the firmware ELF and the harness into ``out_dir`` with the project's Makefile.

    Incremental: ``make`` rebuilds only what changed, so a cache folder can be reused.

    :raises EmulatorError: the tool chain is missing (naming the Debian packages), the project's
        Makefile is not there (bgboard installed without its sources), or the build failed.
    """
    missing = _missing_tools()
    if missing:
        raise EmulatorError(
            f"cannot build the LED firmware and its emulator: missing {', '.join(missing)}; "
            f"install the Debian packages: apt-get install --no-install-recommends {DEBIAN_PACKAGES}"
        )
    if not (ROOT / "Makefile").is_file():
        raise EmulatorError(f"cannot build the LED firmware: no Makefile in {ROOT} (run bgboard from its source tree)")
    fw_dir, sim_dir = out_dir / "avr", out_dir / "sim"
    done = subprocess.run(
        [
            "make",
            "--no-print-directory",
            "-C",
            str(ROOT),
            f"FW_BUILD={fw_dir}",
            f"SIM_BUILD={sim_dir}",
            "firmware-elf",
            "harness",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise EmulatorError(f"building the firmware or the harness failed:\n{done.stdout}\n{done.stderr}")
    return Build(elf=fw_dir / "bgboard-leds.elf", harness=sim_dir / "harness")


class Emulator:
    """The firmware running in simavr behind a pseudo-terminal, watched through the harness.

    ``leds`` and ``rx`` fill in the background from the harness's report lines; times are
    simulated milliseconds since the firmware started (they restart with every :meth:`start`).
    """

    def __init__(self, build: Build, workdir: Path) -> None:
        self.build = build
        self.workdir = workdir
        #: The stable path to open: a symlink to the current pseudo-terminal.
        self.port = str(workdir / "ttyBGL0")
        #: The pseudo-terminal itself (changes with every start).
        self.pty = ""
        #: (t_ms, bytes in wire order G, R, B per LED) for every LEDS line, oldest first.
        self.leds: list[tuple[float, bytes]] = []
        #: t_ms of every 0x00 the device's UART received, oldest first.
        self.rx: list[float] = []
        self._last_ms = 0.0
        self._proc: subprocess.Popen[str] | None = None
        self._reader: threading.Thread | None = None
        self._changed = threading.Condition()
        self._log_path = workdir / "harness.log"

    # -- life cycle -------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        """Whether the harness process is alive."""
        return self._proc is not None and self._proc.poll() is None

    def start(self, wait_open: bool = True) -> None:
        """Start the harness and return once it printed its PTY line and made the link.

        With ``wait_open`` the firmware starts only when someone opens the port (about 50 ms
        later), so the opener gets BOOT; otherwise it runs at once. Reports of an earlier run
        are cleared.
        """
        if self.running:
            raise RuntimeError("the emulator is already running: kill() or stop() it first")
        self._end(signal.SIGTERM)  # reap a harness that exited by itself
        with self._changed:
            self.pty = ""
            self.leds = []
            self.rx = []
            self._last_ms = 0.0
        command = [str(self.build.harness), "--link", self.port]
        if wait_open:
            command.append("--wait-open")
        command.append(str(self.build.elf))
        with self._log_path.open("a") as log:
            self._proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=log, text=True, bufsize=1)
        self._reader = threading.Thread(target=self._read, args=(self._proc,), daemon=True)
        self._reader.start()
        with self._changed:
            if not self._changed.wait_for(lambda: self.pty != "" or not self.running, START_TIMEOUT_S):
                self.kill()
                raise EmulatorError(f"the harness printed no PTY line within {START_TIMEOUT_S} s{self._log_tail()}")
        if not self.pty:
            raise EmulatorError(f"the harness exited at start{self._log_tail()}")
        assert os.readlink(self.port) == self.pty, "the harness printed its PTY line before making the link"

    def kill(self) -> None:
        """SIGKILL the harness: the device vanishes like an unplugged USB cable.

        The link goes too, as udev removes ``/dev/serial/by-id/...``: left dangling, it could
        point at a recycled pty number, another emulator's.
        """
        self._end(signal.SIGKILL)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.port)

    def stop(self) -> None:
        """End the harness cleanly (SIGTERM); it removes the link."""
        self._end(signal.SIGTERM)

    def _end(self, how: signal.Signals) -> None:
        proc = self._proc
        if proc is None:
            return
        if proc.poll() is None:
            proc.send_signal(how)
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if self._reader is not None:
            self._reader.join(timeout=5)
        if proc.stdout is not None:
            proc.stdout.close()
        self._proc = None
        self._reader = None

    def _log_tail(self) -> str:
        try:
            text = self._log_path.read_text(errors="replace")
        except OSError:
            return ""
        return "\nharness stderr:\n" + text[-2000:] if text else ""

    def _read(self, proc: subprocess.Popen[str]) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            kind, _, rest = line.strip().partition(" ")
            with self._changed:
                if kind == "PTY":
                    self.pty = rest
                elif kind == "LEDS":
                    t_ms, _, data = rest.partition(" ")
                    self._last_ms = float(t_ms)
                    self.leds.append((self._last_ms, bytes.fromhex(data)))
                elif kind == "RX":
                    self._last_ms = float(rest)
                    self.rx.append(self._last_ms)
                self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()

    # -- observing ----------------------------------------------------------------------------

    def sim_ms(self) -> float:
        """The latest simulated time reported (by a LEDS or RX line)."""
        with self._changed:
            return self._last_ms

    def mark(self) -> int:
        """The index the next LEDS entry will get: pass it as ``start`` to :meth:`wait_leds`."""
        with self._changed:
            return len(self.leds)

    def wait_leds(
        self, predicate: Callable[[bytes], bool], timeout: float = 3.0, start: int = 0
    ) -> tuple[float, bytes]:
        """The first LEDS entry from index ``start`` on whose data satisfies ``predicate``.

        Entries already seen count. Raises AssertionError, quoting the last LEDS lines, when
        none turns up within ``timeout`` seconds.
        """
        deadline = time.monotonic() + timeout
        index = start
        with self._changed:
            while True:
                while index < len(self.leds):
                    entry = self.leds[index]
                    if predicate(entry[1]):
                        return entry
                    index += 1
                left = deadline - time.monotonic()
                if left <= 0 or (not self.running and index >= len(self.leds)):
                    recent = "\n".join(f"  LEDS {t:.1f} {data.hex()}" for t, data in self.leds[-6:])
                    raise AssertionError(
                        f"no matching LEDS line within {timeout} s (running: {self.running}); "
                        f"the last ones:\n{recent}{self._log_tail()}"
                    )
                self._changed.wait(left)

    def wait_sim_ms(self, t_ms: float, timeout: float = 3.0) -> None:
        """Wait until a report at simulated time ``t_ms`` or later (needs LEDS or RX activity)."""
        with self._changed:
            if not self._changed.wait_for(lambda: self._last_ms >= t_ms, timeout):
                raise AssertionError(f"simulated time reached only {self._last_ms:.1f} ms, not {t_ms:.1f} ms")

    def wait_rx(self, count: int, timeout: float = 3.0) -> float:
        """The time of the ``count``-th RX line (1-based), waiting for it if need be."""
        with self._changed:
            if not self._changed.wait_for(lambda: len(self.rx) >= count, timeout):
                raise AssertionError(f"only {len(self.rx)} RX lines within {timeout} s, expected {count}")
            return self.rx[count - 1]

    def open_serial(self, timeout: float = 0.05) -> Any:
        """A raw pyserial port on :attr:`port` (115200 8N1)."""
        return open_serial(self.port, timeout)


def open_serial(port: str, timeout: float = 0.05) -> Any:
    """A raw pyserial port at the link's speed; a pty ignores the speed, a real board does not."""
    import serial  # type: ignore[import-untyped,unused-ignore]  # stubs are optional

    return serial.Serial(port, 115200, timeout=timeout)
