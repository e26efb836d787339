# SPDX-License-Identifier: MIT
"""Fixtures shared by the command-line tests of the table (referee, replay)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture
def no_user_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No config file or BGBOARD_ variable of the user's gets in; an empty config file to pass."""
    for name in list(os.environ):
        if name.startswith("BGBOARD_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    empty = tmp_path / "config.toml"
    empty.write_text("", encoding="utf-8")
    return empty
