# SPDX-License-Identifier: MIT
"""Shared test set-up: the project root on the path (for ``bench.seeded``), shared data."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

#: The read-only shared data (real match files, dice photos), beside the project checkout.
SHARED_DATA = ROOT.parent / "shared" / "data"


@pytest.fixture(autouse=True)
def _no_error_logs(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    """A test fails when the code logs an ERROR it did not expect."""
    yield
    errors = [r for r in caplog.get_records("call") if r.levelno >= logging.ERROR]
    assert not errors, f"unexpected ERROR log records: {[r.getMessage() for r in errors]}"
