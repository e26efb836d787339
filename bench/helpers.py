# SPDX-License-Identifier: MIT
"""What the benchmarks share with the tests."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent


def load_test_helper(relative: str, name: str) -> ModuleType:
    """Load a helper module of the tests (``relative`` to the project root, not part of any
    package) under a name of its own: the benchmarks use the tests' emulator and broker."""
    path = ROOT / relative
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def chromium(who: str) -> str:
    """Debian's Chromium, for Playwright to drive headless; ``who`` (the benchmark) says why
    it is missing."""
    import shutil

    path = shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(path).exists():
        sys.exit(f"{who}: no Chromium: install Debian's chromium (scripts/setup.sh --test)")
    return path


def sse_messages(received: list[tuple[float, bytes]]) -> list[tuple[float, bytes]]:
    """The server-sent events of an HTTP/1.1 answer read off a socket, each with the time of
    the ``recv`` that completed it: ``received`` is every ``recv``'s ``(time, bytes)`` in order,
    the head first, then a chunked body; each message is its lines without the blank line that
    ends it."""
    out: list[tuple[float, bytes]] = []
    raw = b""
    body = b""
    head = True
    size: int | None = None
    for at, data in received:
        raw += data
        if head:
            end = raw.find(b"\r\n\r\n")
            if end < 0:
                continue
            head, raw = False, raw[end + 4 :]
        while True:  # the chunks: a size in hex, its bytes, CRLF
            if size is None:
                end = raw.find(b"\r\n")
                if end < 0:
                    break
                size, raw = int(raw[:end].split(b";")[0], 16), raw[end + 2 :]
            if len(raw) < size + 2:
                break
            body, raw, size = body + raw[:size], raw[size + 2 :], None
        *whole, body = body.split(b"\n\n")
        out += [(at, message) for message in whole]
    return out
