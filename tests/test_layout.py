# SPDX-License-Identifier: MIT
"""The package layout rules of the design: what each package may import."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ALLOWED_SIBLINGS = {
    "engine": set(),
    "firmware_bridge": set(),
    "vision": {"engine"},
    "hardware": {"engine", "firmware_bridge"},
    "bgboard": {"engine", "vision", "hardware", "firmware_bridge"},
}
PACKAGES = set(ALLOWED_SIBLINGS)


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_engine_imports_only_the_standard_library() -> None:
    for path in (ROOT / "engine").rglob("*.py"):
        foreign = {n for n in _imports(path) if n not in sys.stdlib_module_names and n != "engine"}
        assert not foreign, f"{path.relative_to(ROOT)} imports {sorted(foreign)}"


def test_packages_import_only_the_siblings_the_design_allows() -> None:
    for package, allowed in ALLOWED_SIBLINGS.items():
        for path in (ROOT / package).rglob("*.py"):
            siblings = (_imports(path) & PACKAGES) - {package}
            assert siblings <= allowed, f"{path.relative_to(ROOT)} imports {sorted(siblings - allowed)}"


def test_top_level_names_belong_to_this_distribution() -> None:
    from importlib.metadata import packages_distributions

    owners = packages_distributions()
    for package in PACKAGES:
        assert set(owners.get(package, [])) == {"bgboard"}, f"{package} is provided by {owners.get(package)}"


def test_engine_works_with_numpy_and_opencv_unimportable() -> None:
    """The rules engine runs where the camera stack cannot: a blocker refuses every non-stdlib import."""
    import subprocess

    program = """
import sys
class Blocker:
    def find_spec(self, name, path=None, target=None):
        top = name.split(".")[0]
        if top not in sys.stdlib_module_names and top != "engine":
            raise ImportError(f"blocked: {name}")
        return None
sys.meta_path.insert(0, Blocker())
from engine.dice import Dice
from engine.movegen import legal_plays
from engine.position import Position
from engine.matfile import read_mat
from engine.judge import judge
plays = legal_plays(Position.STARTING, Dice.parse("31"))
print(len(plays), "numpy" in sys.modules, "cv2" in sys.modules, "serial" in sys.modules)
"""
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, cwd=ROOT, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["16", "False", "False", "False"]


def test_the_controller_imports_without_opencv_or_sqlite() -> None:
    """The controller and its explanations need a reading's shape, not the camera or the store."""
    import subprocess

    program = """
import sys
class Blocker:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("cv2", "sqlite3", "_sqlite3"):
            raise ImportError(f"blocked: {name}")
        return None
sys.meta_path.insert(0, Blocker())
from bgboard.controller import Controller
from bgboard.explain import explain
from engine.match import MatchState
from vision.reading import BoardReading
controller = Controller(MatchState.new_match(5))
print(type(controller).__name__, "cv2" in sys.modules, "sqlite3" in sys.modules)
"""
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, cwd=ROOT, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["Controller", "False", "False"]


def test_importing_the_engine_starts_no_process_machinery() -> None:
    """``import engine`` is the pure rules; gnubg's driver (``engine.hints``) is imported by name."""
    import subprocess

    program = "import sys, engine; print('engine.hints' in sys.modules, 'subprocess' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, cwd=ROOT, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "False"]


def _engine_modules_imported(path: Path) -> set[str]:
    """The engine modules one engine module imports, wherever in it (type-only imports too)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules = [node.module]
        elif isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        else:
            continue
        names.update(m.split(".")[1] for m in modules if m.startswith("engine."))
    return names


def test_the_engine_modules_import_each_other_without_a_cycle() -> None:
    """Value types (``play``) do not reach back for the generator (``movegen``) that uses them."""
    import graphlib

    graph = {path.stem: _engine_modules_imported(path) for path in (ROOT / "engine").glob("*.py")}
    try:
        order = list(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as exc:
        raise AssertionError(f"engine modules import each other in a circle: {' -> '.join(exc.args[1])}") from None
    assert set(order) >= {"play", "movegen"}


def test_every_application_error_is_listed_in_one_module_under_one_root() -> None:
    """The command line catches :class:`bgboard.errors.BgboardError`: an error class of the
    application's defined anywhere else, or outside that root, would end in a traceback."""
    import inspect

    import bgboard.errors

    elsewhere = []
    for path in (ROOT / "bgboard").rglob("*.py"):
        if path.name == "errors.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and node.name.endswith("Error") and not node.name.startswith("_"):
                elsewhere.append(f"{path.relative_to(ROOT)}: {node.name}")
    assert not elsewhere, elsewhere
    listed = [c for _, c in inspect.getmembers(bgboard.errors, inspect.isclass) if c.__module__ == "bgboard.errors"]
    assert len(listed) > 15
    assert all(issubclass(c, bgboard.errors.BgboardError) for c in listed)


def test_the_command_line_prints_an_application_error_on_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    from bgboard.cli import main

    assert main(["analyse", "--store", str(ROOT / "no-such-store.sqlite3"), "1"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("bgboard: error: ") and err.count("\n") == 1 and "Traceback" not in err


#: The application's rooms: each a subpackage the table's own modules never import.
ROOMS = ("web", "hall", "sim", "cli")
#: The table's own modules, kept flat in ``bgboard/``: they run a table without a page, a hall
#: or a simulation, and the rooms build on them.
CORE = {
    "analyse",
    "camera",
    "config",
    "controller",
    "doctor",
    "errors",
    "events",
    "explain",
    "hint",
    "referee",
    "replay",
    "session",
    "store",
    "table",
}


def _bgboard_imports(path: Path) -> set[str]:
    """The ``bgboard`` modules ``path`` imports, as dotted names below ``bgboard``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names if alias.name.startswith("bgboard."))
        elif (
            isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and node.module.startswith("bgboard.")
        ):
            names.add(node.module)
    return {name.removeprefix("bgboard.") for name in names}


def test_bgboard_is_its_core_modules_and_its_rooms() -> None:
    flat = {p.stem for p in (ROOT / "bgboard").glob("*.py")} - {"__init__", "__main__"}
    rooms = {p.name for p in (ROOT / "bgboard").iterdir() if (p / "__init__.py").exists()}
    assert flat == CORE, f"modules beside the core: {sorted(flat - CORE)}; missing: {sorted(CORE - flat)}"
    assert rooms == set(ROOMS)
    for room in ROOMS:
        doc = ast.get_docstring(ast.parse((ROOT / "bgboard" / room / "__init__.py").read_text(encoding="utf-8")))
        assert doc and len(doc.splitlines()) >= 3, f"bgboard/{room}/__init__.py says what it offers"


def test_the_core_never_imports_the_web_the_hall_or_the_simulation() -> None:
    for name in sorted(CORE):
        path = ROOT / "bgboard" / f"{name}.py"
        rooms = {imported.split(".")[0] for imported in _bgboard_imports(path)} & set(ROOMS)
        assert not rooms, f"bgboard/{name}.py imports bgboard.{sorted(rooms)}"


def test_the_rooms_do_not_import_the_command_line() -> None:
    for room in ("web", "hall", "sim"):
        for path in (ROOT / "bgboard" / room).rglob("*.py"):
            assert not any(name == "cli" or name.startswith("cli.") for name in _bgboard_imports(path)), (
                f"{path.relative_to(ROOT)} imports the command line"
            )
