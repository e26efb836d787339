# SPDX-License-Identifier: MIT
"""Where each named LED sits in the chain, read from a TOML file.

A layout file has two tables::

    [chain]
    length = 44                # LEDs in the chain, spare ones included
    description = "..."        # optional

    [leds]
    status = 0
    turn.1 = 1
    point.1 = 3                # chain positions count from 0, the LED nearest the controller
    point.2 = [4, 5]           # several LEDs may show one name (two LEDs beside a point)
    cube.centre = 30
    cube.1.2 = 31
    ...

Every name of :data:`hardware.scene.LED_NAMES` must be there, and no chain position may be used
twice. Errors name the file, the key and (where it can be found) the line.

>>> layout = LedLayout.standard()
>>> layout.length, layout.indices("point.1"), layout.status_index
(44, (3,), 0)
>>> layout.name_at(3)
'point.1'
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Final

from engine.files import MAX_SETTINGS_FILE, read_limited
from hardware.scene import LED_NAMES, STATUS, check_led_name

#: The layout shipped with the package (see docs/leds.md, "The standard layout").
STANDARD: Final = "standard"
#: The longest chain a layout may describe (the serial firmware drives at most 96 of them).
MAX_CHAIN: Final = 1024


class LayoutError(ValueError):
    """A layout that cannot be used; the message names the file, the line (when known) and the key.

    :ivar source: the file (or ``<layout>``).
    :ivar key: the offending key, e.g. ``leds.point.7``, or ``None``.
    :ivar line: its line in the file, when a simple scan finds it.
    :ivar problem: what is wrong with it.
    """

    def __init__(self, source: str, key: str | None, problem: str, line: int | None = None) -> None:
        self.source, self.key, self.problem, self.line = source, key, problem, line
        where = source
        if line is not None:
            where += f", line {line}"
        if key is not None:
            where += f", {key}"
        super().__init__(f"{where}: {problem}")

    def at_line(self, line: int | None) -> LayoutError:
        """The same error with its line number."""
        return LayoutError(self.source, self.key, self.problem, line)


def _layout_error(source: str, key: str | None, message: str, line: int | None = None) -> LayoutError:
    return LayoutError(source, key, message, line)


def _normal_key(text: str) -> str:
    # Dotted keys may be written with spaces around the dots or quoted parts: normalise them.
    parts = [p.strip().strip("\"'") for p in text.split(".")]
    return ".".join(parts)


_TABLE = re.compile(r"^\s*\[\s*([^\[\]]+?)\s*\]\s*(#.*)?$")
_KEY = re.compile(r"""^\s*((?:"[^"]*"|'[^']*'|[A-Za-z0-9_.\- ]+?))\s*=""")


def _line_of(text: str, table: str, key: str) -> int | None:
    """The line where ``key`` of ``[table]`` is written, if a simple scan finds it."""
    current = ""
    for number, line in enumerate(text.splitlines(), start=1):
        header = _TABLE.match(line)
        if header:
            current = _normal_key(header.group(1))
            continue
        assignment = _KEY.match(line)
        if assignment and current == table and _normal_key(assignment.group(1)) == key:
            return number
    return None


def _table_line(text: str, table: str) -> int | None:
    """The line of the ``[table]`` header (or of a top-level ``table = ...`` key)."""
    for number, line in enumerate(text.splitlines(), start=1):
        header = _TABLE.match(line)
        if header and _normal_key(header.group(1)) == table:
            return number
    return _line_of(text, "", table)


def _flatten(table: Mapping[str, object], prefix: str = "") -> Iterable[tuple[str, object]]:
    for key, value in table.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            yield from _flatten(value, name + ".")
        else:
            yield name, value


@dataclass(frozen=True, slots=True)
class LedLayout:
    """Named LEDs -> positions in the chain.

    :param length: LEDs in the chain (positions ``0 .. length - 1``), spare ones included.
    :param leds: LED name -> the chain positions that show it (usually one).
    :param source: where the layout came from, for messages.
    :param description: free text from the file.
    :raises LayoutError: a name unknown or missing, a position out of the chain or used twice.
    """

    length: int
    leds: Mapping[str, tuple[int, ...]]
    source: str = field(default="<layout>", compare=False)
    description: str = field(default="", compare=False)
    _owner: dict[int, str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.length, int) or isinstance(self.length, bool) or not 1 <= self.length <= MAX_CHAIN:
            raise _layout_error(self.source, "chain.length", f"must be 1-{MAX_CHAIN}, not {self.length!r}")
        owner: dict[int, str] = {}
        leds: dict[str, tuple[int, ...]] = {}
        for name, indices in self.leds.items():
            try:
                check_led_name(name)
            except ValueError as exc:
                raise _layout_error(self.source, f"leds.{name}", str(exc)) from None
            if not indices:
                raise _layout_error(self.source, f"leds.{name}", "no chain position given")
            for index in indices:
                if not isinstance(index, int) or isinstance(index, bool):
                    raise _layout_error(
                        self.source, f"leds.{name}", f"a chain position is a whole number, not {index!r}"
                    )
                if not 0 <= index < self.length:
                    raise _layout_error(
                        self.source, f"leds.{name}", f"position {index} is outside the chain (0-{self.length - 1})"
                    )
                if index in owner:
                    raise _layout_error(
                        self.source, f"leds.{name}", f"position {index} is already used by {owner[index]}"
                    )
                owner[index] = name
            leds[name] = tuple(indices)
        missing = [name for name in LED_NAMES if name not in leds]
        if missing:
            raise _layout_error(self.source, "leds", f"missing {len(missing)} LED(s): {', '.join(missing)}")
        object.__setattr__(self, "leds", {name: leds[name] for name in LED_NAMES})
        object.__setattr__(self, "_owner", owner)

    def __hash__(self) -> int:
        return hash((self.length, tuple(self.leds.items())))

    # -- reading -------------------------------------------------------------------------------

    @classmethod
    def from_toml(cls, text: str, source: str = "<layout>") -> LedLayout:
        """Read a layout from TOML text; ``source`` names it in error messages."""
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            # tomllib's message carries the line and column.
            raise LayoutError(source, None, f"not valid TOML: {exc}") from None
        unknown = sorted(set(data) - {"chain", "leds"})
        if unknown:
            raise _layout_error(
                source,
                unknown[0],
                "unknown table or key; a layout has [chain] and [leds]",
                _table_line(text, unknown[0]),
            )
        chain = data.get("chain")
        if not isinstance(chain, dict):
            raise _layout_error(source, "chain", "missing: the [chain] table says how many LEDs the chain has")
        extra = sorted(set(chain) - {"length", "description"})
        if extra:
            raise _layout_error(
                source,
                f"chain.{extra[0]}",
                "unknown key; [chain] has length and description",
                _line_of(text, "chain", extra[0]),
            )
        if "length" not in chain:
            raise _layout_error(source, "chain.length", "missing: say how many LEDs the chain has")
        length = chain["length"]
        description = chain.get("description", "")
        if not isinstance(description, str):
            raise _layout_error(source, "chain.description", "must be text", _line_of(text, "chain", "description"))
        table = data.get("leds")
        if not isinstance(table, dict):
            raise _layout_error(source, "leds", "missing: the [leds] table maps LED names to chain positions")
        leds: dict[str, tuple[int, ...]] = {}
        for name, value in _flatten(table):
            raw: list[object] = value if isinstance(value, list) else [value]
            positions = [v for v in raw if isinstance(v, int) and not isinstance(v, bool)]
            if not raw or len(positions) != len(raw):
                raise _layout_error(
                    source,
                    f"leds.{name}",
                    f"expected a chain position or a list of them, not {value!r}",
                    _line_of(text, "leds", name),
                )
            leds[name] = tuple(positions)
        try:
            return cls(length, leds, source, description)
        except LayoutError as exc:
            # The checks know the key; only the text knows its line.
            table, _, key = (exc.key or "").partition(".")
            line = _line_of(text, table, key) if key else None
            if line is None:
                raise
            raise exc.at_line(line) from None

    @classmethod
    def load(cls, path: str | Path) -> LedLayout:
        """Read a layout file.

        :raises LayoutError: the file cannot be read or is not a valid layout.
        """
        try:
            text = read_limited(path, MAX_SETTINGS_FILE, "an LED layout").decode("utf-8")
        except OSError as exc:
            raise LayoutError(str(path), None, f"cannot read the LED layout: {exc.strerror or exc}") from None
        except UnicodeDecodeError as exc:
            why = f"not a text file (not UTF-8 at byte offset {exc.start})"
            raise LayoutError(str(path), None, f"cannot read the LED layout: {why}") from None
        return cls.from_toml(text, str(path))

    @classmethod
    def standard(cls) -> LedLayout:
        """The shipped 44-LED layout (``hardware/layouts/standard.toml``)."""
        return cls.named(STANDARD)

    @classmethod
    def named(cls, name: str) -> LedLayout:
        """A layout shipped with the package, by name (``standard``)."""
        resource = resources.files("hardware") / "layouts" / f"{name}.toml"
        if not resource.is_file():
            shipped = sorted(p.name.removesuffix(".toml") for p in (resources.files("hardware") / "layouts").iterdir())
            raise LayoutError(
                f"hardware/layouts/{name}.toml", None, f"no layout named {name!r}; bgboard ships {', '.join(shipped)}"
            )
        return cls.from_toml(resource.read_text(encoding="utf-8"), f"hardware/layouts/{name}.toml")

    @classmethod
    def from_file_or_name(cls, spec: str | Path | None) -> LedLayout:
        """A layout file path, or the name of a shipped layout; ``None`` gives the standard one."""
        if spec is None:
            return cls.standard()
        if isinstance(spec, str) and re.fullmatch(r"[a-z0-9_-]+", spec) and not Path(spec).exists():
            return cls.named(spec)
        return cls.load(spec)

    # -- views ---------------------------------------------------------------------------------

    def indices(self, name: str) -> tuple[int, ...]:
        """The chain positions that show LED ``name``."""
        try:
            return self.leds[name]
        except KeyError:
            check_led_name(name)
            raise

    @property
    def status_index(self) -> int:
        """The chain position of the status light (the one the firmware pulses when the link is lost)."""
        return self.leds[STATUS][0]

    @property
    def names(self) -> tuple[str, ...]:
        """Every LED name, in :data:`~hardware.scene.LED_NAMES` order."""
        return tuple(self.leds)

    def name_at(self, index: int) -> str | None:
        """The LED name at chain position ``index``, or ``None`` for a spare position."""
        return self._owner.get(index)

    def chain_order(self) -> list[tuple[int, str]]:
        """``(position, name)`` for every placed LED, along the chain (the order to wire and to check)."""
        return sorted(self._owner.items())

    def to_toml(self) -> str:
        """The layout as TOML text that :meth:`from_toml` reads back."""
        lines = ["[chain]", f"length = {self.length}"]
        if self.description:
            lines.append(f"description = {_toml_string(self.description)}")
        lines += ["", "[leds]"]
        for name, indices in self.leds.items():
            value = str(indices[0]) if len(indices) == 1 else "[" + ", ".join(map(str, indices)) + "]"
            lines.append(f"{name} = {value}")
        return "\n".join(lines) + "\n"


def _toml_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
