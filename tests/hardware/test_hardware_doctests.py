# SPDX-License-Identifier: MIT
"""The examples in the hardware package's docstrings still hold."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["hardware.scene", "hardware.layout", "hardware.presenter", "hardware.panels", "hardware.terminal"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0, f"{name} has no examples"
    assert result.failed == 0
