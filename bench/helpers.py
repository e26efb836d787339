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
