# SPDX-License-Identifier: MIT
"""A real Mosquitto broker for the tests, on a loopback port, killed and restarted at will."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

#: Debian's broker; CI installs it (scripts/setup.sh --test).
INSTALL = "sudo apt-get install mosquitto (scripts/setup.sh --test installs it)"


def mosquitto_path() -> str:
    """The mosquitto program: missing, the test fails (never skips) and says how to install it."""
    found = shutil.which("mosquitto") or next(
        (str(p) for p in (Path("/usr/sbin/mosquitto"), Path("/usr/local/sbin/mosquitto")) if p.exists()), None
    )
    if found is None:
        pytest.fail(f"mosquitto (the MQTT broker) is not installed: {INSTALL}")
    return found


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Broker:
    """One mosquitto process on 127.0.0.1:``port`` with a config file of its own.

    :param extra: more lines for mosquitto.conf (ACL and password files).
    """

    def __init__(self, folder: Path, *, extra: str = "", port: int | None = None) -> None:
        self.program = mosquitto_path()
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.port = port or free_port()
        self.conf = folder / "mosquitto.conf"
        anonymous = "" if "password_file" in extra else "allow_anonymous true\n"
        # Started by root, mosquitto becomes the user "mosquitto", who cannot read the test's
        # folders: it stays root here.
        user = "user root\n" if os.geteuid() == 0 else ""
        self.conf.write_text(
            f"listener {self.port} 127.0.0.1\n{user}{anonymous}persistence false\n"
            # The hall's session is queued for while it is away; unlimited, as docs/hall.md says.
            "max_queued_messages 0\nmax_inflight_messages 0\n"
            f"log_dest file {folder / 'mosquitto.log'}\n{extra}"
        )
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"mqtt://127.0.0.1:{self.port}"

    def start(self, timeout: float = 10.0) -> None:
        errors = self.folder / "mosquitto.err"
        with errors.open("ab") as err:
            self.process = subprocess.Popen([self.program, "-c", str(self.conf)], stdout=err, stderr=err)
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.process.poll() is not None:
                raise RuntimeError(f"mosquitto exited at start: {errors.read_text()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"mosquitto did not listen on port {self.port} within {timeout} s")

    def kill(self) -> None:
        """SIGKILL: the broker dies at once, with whatever it held in memory."""
        if self.process is not None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(10)
            self.process = None

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
            self.process = None


class Cable:
    """A TCP relay from a loopback port to the broker that can be cut, as a network cable pulled.

    Cut, it closes every connection through it and refuses new ones; mended, it relays again.
    """

    def __init__(self, broker_port: int) -> None:
        import threading

        self.broker_port = broker_port
        self.port = free_port()
        self._cut = threading.Event()
        self._lock = threading.Lock()
        self._socks: list[socket.socket] = []
        self._server = socket.create_server(("127.0.0.1", self.port))
        self._server.settimeout(0.2)
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"mqtt://127.0.0.1:{self.port}"

    def _accept(self) -> None:
        import threading

        while not self._closed.is_set():
            try:
                client, _ = self._server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            if self._cut.is_set():
                client.close()
                continue
            try:
                upstream = socket.create_connection(("127.0.0.1", self.broker_port), timeout=2)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._socks += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while True:
                data = source.recv(65536)
                if not data or self._cut.is_set():
                    break
                sink.sendall(data)
        for sock in (source, sink):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def cut(self) -> None:
        self._cut.set()
        with self._lock:
            socks, self._socks = self._socks, []
        for sock in socks:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def mend(self) -> None:
        self._cut.clear()

    def close(self) -> None:
        self.cut()
        self._closed.set()
        self._server.close()
        self._thread.join(2)
