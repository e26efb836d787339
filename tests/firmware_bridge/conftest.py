# SPDX-License-Identifier: MIT
"""The real LED firmware in simavr: a session-wide build and a fresh :class:`Emulator` per test.

The ``emulator`` fixture yields a running emulator. Its :attr:`Emulator.port` is a stable path
(a symlink to the pseudo-terminal) that survives :meth:`Emulator.kill` and :meth:`Emulator.start`,
like ``/dev/serial/by-id/...`` across a USB unplug and replug. By default the firmware is held in
reset until the port is first opened, so whoever opens it receives the BOOT message.

Other test modules can use the fixtures (pytest shares this conftest with the whole directory)
or import :class:`Emulator` and :func:`build_emulator` themselves.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from firmware_bridge.emulator import Build, Emulator, EmulatorError, build_emulator, open_serial

__all__ = ["Build", "Emulator", "build_emulator", "open_serial"]


@pytest.fixture(scope="session")
def emulator_build(tmp_path_factory: pytest.TempPathFactory) -> Build:
    """The firmware and the harness, built once per test process (about a second)."""
    try:
        return build_emulator(tmp_path_factory.mktemp("emulator-build"))
    except EmulatorError as exc:
        # Never a skip: the tests of the real firmware must run wherever the suite runs.
        pytest.fail(str(exc), pytrace=False)


@pytest.fixture
def make_emulator(emulator_build: Build, tmp_path: Path) -> Iterator[Callable[..., Emulator]]:
    """A factory of emulators, each in a directory of its own: ``make_emulator(start=True, wait_open=True)``.

    All of them are stopped at the end of the test.
    """
    made: list[Emulator] = []

    def make(start: bool = True, wait_open: bool = True) -> Emulator:
        workdir = tmp_path / f"emulator{len(made)}"
        workdir.mkdir()
        emu = Emulator(emulator_build, workdir)
        made.append(emu)
        if start:
            emu.start(wait_open=wait_open)
        return emu

    try:
        yield make
    finally:
        for emu in made:
            emu.stop()
            with contextlib.suppress(FileNotFoundError):
                os.unlink(emu.port)


@pytest.fixture
def emulator(make_emulator: Callable[..., Emulator]) -> Emulator:
    """A running emulator whose firmware starts when :attr:`Emulator.port` is first opened."""
    return make_emulator()
