# SPDX-License-Identifier: MIT
"""The settings of one board: TOML file, then ``BGBOARD_*`` environment variables, then CLI flags.

A config file has five tables; every key is optional, so an empty file (or none at all) is a
valid config. ``bgboard/config.example.toml`` documents every key. In short:

==========  ===================================================================================
``camera``  ``source`` (a frame source address, see :mod:`vision.frames`), ``profile`` (the
            calibration profile file), ``settle`` (seconds the board must lie still)
``leds``    ``panel`` (an LED panel address, see :mod:`hardware.panels`), ``layout`` (a shipped
            layout's name or a layout file), ``brightness`` (0 to 1)
``buttons`` ``pins``: ``"done=5,undo=6"`` or a table ``{ done = 5, undo = 6 }``
``match``   ``players``, ``length`` (0 = money), ``crawford``, ``jacoby``, ``beaver``,
            ``max_cube``, ``mode`` (``referee`` or ``log``), ``player_at_bottom`` (1 or 2),
            ``teach`` (hints and feedback from gnubg), ``hint_ply`` (gnubg's depth, 0 to 2)
``store``   ``path`` (the SQLite match store)
==========  ===================================================================================

Where the file is found (:func:`find_config`): the path given, else ``$BGBOARD_CONFIG``, else
``$XDG_CONFIG_HOME/bgboard/config.toml`` (``~/.config``), else ``/etc/bgboard/config.toml``,
else the built-in defaults. Relative paths in a file are relative to the file's folder.

Players are numbered 1 and 2 in the order ``players`` names them, as everywhere bgboard speaks
to people. A key that was renamed (:data:`RENAMED`) is still read, with the meaning it had, and
the config's :attr:`Config.notices` say what to write instead.

Any key can be overridden by an environment variable ``BGBOARD_<SECTION>_<KEY>``
(``BGBOARD_LEDS_PANEL=terminal``, ``BGBOARD_MATCH_MAX_CUBE=64``), and four keys also by the
short names the rest of bgboard uses: ``BGBOARD_CAMERA`` (camera source), ``BGBOARD_LEDS``
(LED panel), ``BGBOARD_BUTTONS`` (button pins) and ``BGBOARD_STORE`` (store path).

>>> config = Config.from_toml('[match]\\nlength = 5\\nplayers = ["Ann", "Bob"]', source="example")
>>> config.match.length, config.match.players, config.leds.panel
(5, ('Ann', 'Bob'), 'fake')
>>> config.with_environment({"BGBOARD_MATCH_LENGTH": "0"}).match.length
0
>>> Config.from_toml("[match]\\nlenght = 5", source="example")
Traceback (most recent call last):
...
bgboard.errors.ConfigError: example:2: match.lenght: no key 'lenght' in [match]; did you mean 'length'?
"""

from __future__ import annotations

import difflib
import json
import math
import os
import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal

from bgboard.errors import ConfigError
from engine.cube import CUBE_LIMIT, is_cube_value
from engine.files import MAX_SETTINGS_FILE, read_limited
from engine.match import MatchOptions
from hardware.buttons import parse_button_pins
from hardware.gpio import Pin
from hardware.panels import PanelError

if TYPE_CHECKING:
    from engine.hints import GnubgHints

#: Where the appliance's config lives (written by the install script).
SYSTEM_CONFIG: Final = Path("/etc/bgboard/config.toml")
#: Every environment variable that overrides a key starts with this.
ENV_PREFIX: Final = "BGBOARD_"
#: The variable naming the config file to read.
CONFIG_VARIABLE: Final = "BGBOARD_CONFIG"
#: The variable naming the gnubg program, when it is neither on ``PATH`` nor in /usr/games.
GNUBG_VARIABLE: Final = "BGBOARD_GNUBG"
#: The longest match: GNU Backgammon's match equity tables end at 64 points.
MAX_MATCH_LENGTH: Final = 64

#: Seconds the board must lie still; the same default as :data:`bgboard.controller.SETTLE`,
#: repeated here because importing the controller would import OpenCV.
SETTLE: Final = 0.6

Mode = Literal["referee", "log"]


def gnubg_hints(*, timeout: float = 30.0) -> GnubgHints:
    """The hint engine: the gnubg program ``$BGBOARD_GNUBG`` names, else gnubg on the path.

    Nothing starts until the first request, so a missing gnubg is said when a hint is first
    asked for, not here.

    :param timeout: seconds one request may take before the program is given up (and restarted).
    """
    # Imported here: reading a config starts no process machinery.
    from engine.hints import GnubgHints

    return GnubgHints(os.environ.get(GNUBG_VARIABLE) or None, timeout=timeout)


# -- the settings --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CameraConfig:
    """The camera and what the vision needs to read it.

    :param source: a frame source address (:func:`vision.frames.open_source`), or ``None``
        when no camera is configured and the command must be given one.
    :param profile: the board's calibration profile (:mod:`vision.profile`), or ``None``.
    :param settle: seconds dice or a finished move must lie still before they are judged.
    """

    source: str | None = None
    profile: Path | None = None
    settle: float = SETTLE


@dataclass(frozen=True, slots=True)
class LedsConfig:
    """The LED panel.

    :param panel: an LED panel address (:func:`hardware.panels.open_panel`): ``fake``,
        ``terminal``, ``serial:URL``, ``gpio:...`` or ``gpio595:...``.
    :param layout: a shipped layout's name or a layout file (:meth:`LedLayout.from_file_or_name`).
    :param brightness: from 0 (dark) to 1 (full).
    """

    panel: str = "fake"
    layout: str = "standard"
    brightness: float = 0.4


@dataclass(frozen=True, slots=True)
class ButtonsConfig:
    """The push buttons: each button's GPIO pin, in the order given; none by default."""

    pins: tuple[tuple[str, Pin], ...] = ()

    def as_dict(self) -> dict[str, Pin]:
        """Button name -> pin, as :class:`hardware.buttons.ButtonPanel` takes them."""
        return dict(self.pins)


@dataclass(frozen=True, slots=True)
class MatchConfig:
    """The match to play and how to referee it.

    :param players: the names of engine players 0 and 1.
    :param length: points to win the match; 0 for money play.
    :param crawford: the Crawford rule (match play).
    :param jacoby: the Jacoby rule (money play).
    :param beaver: beavers allowed (money play).
    :param max_cube: the highest cube value, a power of two, or ``None`` for no limit.
    :param mode: ``referee`` (judge and record) or ``log`` (record only).
    :param player_at_bottom: the player (1 or 2, in the order of ``players``) sitting at the
        bottom of the camera's view: the board's player 1, whose numbering names the points and
        whose seat the LEDs call ``turn.1``.
    :param teach: teach mode: gnubg's best play lit after each roll, its verdict on each move
        said and stored with it (needs gnubg installed).
    :param hint_ply: gnubg's search depth for hints, 0 to 2 (0 answers in about 10 ms).
    """

    players: tuple[str, str] = ("Player 1", "Player 2")
    length: int = 7
    crawford: bool = True
    jacoby: bool = False
    beaver: bool = False
    max_cube: int | None = None
    mode: Mode = "referee"
    player_at_bottom: int = 1
    teach: bool = False
    hint_ply: int = 0

    @property
    def bottom_player(self) -> int:
        """The engine's index (0 or 1) of the player at the bottom."""
        return self.player_at_bottom - 1

    def options(self) -> MatchOptions:
        """The rules in force, as the engine takes them."""
        return MatchOptions(crawford=self.crawford, jacoby=self.jacoby, beaver=self.beaver, max_cube=self.max_cube)


@dataclass(frozen=True, slots=True)
class StoreConfig:
    """The match store.

    :param path: the SQLite file, or ``None`` for :func:`bgboard.store.default_store_path`.
    """

    path: Path | None = None

    def resolved_path(self) -> Path:
        """The store's file: ``path``, else the default location."""
        if self.path is not None:
            return self.path
        from bgboard.store import default_store_path

        return default_store_path()


@dataclass(frozen=True, slots=True)
class HallConfig:
    """Publishing the table to a tournament hall (``docs/hall.md``).

    :param broker: the hall's MQTT broker, ``mqtt://[USER@]HOST[:PORT]``; ``None``: not published.
    :param table: this table's name in the hall (needed with ``broker``).
    """

    broker: str | None = None
    table: str | None = None


@dataclass(frozen=True, slots=True)
class Config:
    """All the settings, one frozen section per TOML table.

    ``source`` (the file read, if any) is informative and not compared; so are ``notices``,
    what the file or environment should say instead of a renamed key (each naming the file and
    line or the variable), for whoever runs the config to show.
    """

    camera: CameraConfig = field(default_factory=CameraConfig)
    leds: LedsConfig = field(default_factory=LedsConfig)
    buttons: ButtonsConfig = field(default_factory=ButtonsConfig)
    match: MatchConfig = field(default_factory=MatchConfig)
    store: StoreConfig = field(default_factory=StoreConfig)
    hall: HallConfig = field(default_factory=HallConfig)
    source: Path | None = field(default=None, compare=False)
    notices: tuple[str, ...] = field(default=(), compare=False)

    @classmethod
    def from_toml(cls, text: str, source: str = "<config>", base: Path | None = None) -> Config:
        """The config that TOML ``text`` describes; ``base`` is the folder relative paths start from.

        :raises ConfigError: a syntax error, an unknown table or key, or a value of the wrong type.
        """
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise _syntax_error(source, text, exc) from None
        return _from_mapping(data, text, source, base)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Config:
        """Read one config file (no search, no environment).

        :raises ConfigError: the file cannot be read or is not a valid config.
        """
        file = Path(path).expanduser()
        try:
            text = read_limited(file, MAX_SETTINGS_FILE, "a config file").decode("utf-8")
        except UnicodeDecodeError as exc:
            why = f"not a text file (not UTF-8 at byte offset {exc.start})"
            raise ConfigError(str(file), None, None, f"cannot read the config: {why}") from None
        except OSError as exc:
            why = "it is a folder" if file.is_dir() else (exc.strerror or str(exc)).lower()
            raise ConfigError(str(file), None, None, f"cannot read the config: {why}") from None
        config = cls.from_toml(text, str(file), file.parent)
        return replace(config, source=file)

    def with_environment(self, env: Mapping[str, str]) -> Config:
        """This config with the ``BGBOARD_<SECTION>_<KEY>`` variables in ``env`` applied.

        Variables whose middle part is not a section (``BGBOARD_CONFIG``, ``BGBOARD_LOG_LEVEL``)
        are not keys and are left alone; a known section with an unknown key is an error.
        ``BGBOARD_CAMERA``, ``BGBOARD_LEDS``, ``BGBOARD_BUTTONS`` and ``BGBOARD_STORE`` set the
        camera source, LED panel, button pins and store path when the long name is not given.

        :raises ConfigError: naming the variable whose value or name is wrong.
        """
        changes: dict[tuple[str, str], object] = {}
        aliased: dict[tuple[str, str], tuple[str, str]] = {}
        renamed: dict[tuple[str, str], object] = {}
        notices: list[str] = []
        for variable, text in env.items():
            if not variable.startswith(ENV_PREFIX):
                continue
            old = _RENAMED_VARIABLES.get(variable)
            if old is not None:
                rename = RENAMED[old]
                value = rename.read(_parse_text(rename.old, text, "environment", variable))
                renamed[old[0], rename.key] = value
                new = _env_name(old[0], rename.key)
                notices.append(f"environment: {variable} is an old name: set {new}={value} instead ({rename.why})")
                continue
            if variable in _ALIASES:
                aliased[_ALIASES[variable]] = (variable, text)
                continue
            section, sep, key = variable[len(ENV_PREFIX) :].lower().partition("_")
            if section not in _SCHEMA or not sep:
                # Other BGBOARD_ variables are not keys, but a near miss on a real key is a typo.
                close = difflib.get_close_matches(section, _SCHEMA, n=1)
                if sep and close and key in _SCHEMA[close[0]]:
                    hint = f"did you mean {_env_name(close[0], key)}?"
                    raise ConfigError("environment", None, variable, f"no table [{section}]; {hint}")
                continue
            kind = _SCHEMA[section].get(key)
            if kind is None:
                close = difflib.get_close_matches(key, _SCHEMA[section], n=1)
                hint = f"; did you mean {_env_name(section, close[0])}?" if close else ""
                raise ConfigError("environment", None, variable, f"no key {key!r} in [{section}]{hint}")
            changes[section, key] = _parse_text(kind, text, "environment", variable)
        # The long name is the more specific one, so it wins over the short alias.
        for target, (variable, text) in aliased.items():
            if target not in changes:
                changes[target] = _parse_text(_SCHEMA[target[0]][target[1]], text, "environment", variable)
        for target, value in renamed.items():
            changes.setdefault(target, value)
        config = self._with(changes)
        return replace(config, notices=config.notices + tuple(notices)) if notices else config

    def with_overrides(self, *, flag_names: Mapping[str, str] | None = None, **flags: object) -> Config:
        """This config with CLI flags applied, named ``<section>_<key>`` (``match_length=5``).

        ``None`` means the flag was not given. Strings are parsed as environment values are
        (``match_players="Ann,Bob"``), so argparse values can be passed as they come.
        ``flag_names`` maps those names to the flags the user typed (``{"match_length":
        "--length"}``), for the errors to name; without it they name ``match_length``.

        :raises TypeError: a flag that names no key.
        :raises ConfigError: a value of the wrong type.
        """
        changes: dict[tuple[str, str], object] = {}
        for name, value in flags.items():
            shown = (flag_names or {}).get(name, name)
            section, _, key = name.partition("_")
            kind = _SCHEMA.get(section, {}).get(key)
            if kind is None:
                names = [f"{s}_{k}" for s, keys in _SCHEMA.items() for k in keys]
                close = difflib.get_close_matches(name, names, n=1)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                raise TypeError(f"no config key for the flag {name!r}{hint}")
            if value is None:
                continue
            if isinstance(value, str) and kind.parse_text is not None:
                changes[section, key] = _parse_text(kind, value, "command line", shown)
            else:
                try:
                    changes[section, key] = kind.parse(value, None)
                except _BadValueError as bad:
                    raise ConfigError("command line", None, shown, bad.problem(repr(value))) from None
        return self._with(changes)

    def to_toml(self) -> str:
        """The config as TOML that reads back as an equal config; keys left unset are comments."""
        out: list[str] = []
        for section, keys in _SCHEMA.items():
            values = getattr(self, section)
            if out:
                out.append("")
            out.append(f"[{section}]")
            for key, kind in keys.items():
                value = getattr(values, key)
                out.append(f"# {key} is not set" if value is None else f"{key} = {kind.dump(value)}")
        return "\n".join(out) + "\n"

    def _with(self, changes: Mapping[tuple[str, str], object]) -> Config:
        sections: dict[str, dict[str, object]] = {}
        for (section, key), value in changes.items():
            sections.setdefault(section, {})[key] = value
        return replace(self, **{name: replace(getattr(self, name), **values) for name, values in sections.items()})


# -- searching and loading -----------------------------------------------------------------


def config_paths(env: Mapping[str, str] = os.environ) -> list[Path]:
    """The files :func:`find_config` looks for, first choice first."""
    paths = []
    if env.get(CONFIG_VARIABLE):
        paths.append(Path(env[CONFIG_VARIABLE]).expanduser())
    config_home = env.get("XDG_CONFIG_HOME") or (str(Path(env["HOME"]) / ".config") if env.get("HOME") else None)
    if config_home:
        paths.append(Path(config_home) / "bgboard" / "config.toml")
    paths.append(SYSTEM_CONFIG)
    return paths


def find_config(env: Mapping[str, str] = os.environ) -> Path | None:
    """The config file to read: ``$BGBOARD_CONFIG``, the user's, the system's, or ``None``.

    :raises ConfigError: ``$BGBOARD_CONFIG`` names a file that is not there (a typo must not
        fall back silently to another config).
    """
    if env.get(CONFIG_VARIABLE):
        named = Path(env[CONFIG_VARIABLE]).expanduser()
        if not named.is_file():
            raise ConfigError("environment", None, CONFIG_VARIABLE, f"there is no config file {named}")
        return named
    for candidate in config_paths(env):
        if candidate.is_file():
            return candidate
    return None


def load_config(path: Path | None = None, env: Mapping[str, str] = os.environ) -> Config:
    """The config in force: the file (``path``, else the first of :func:`config_paths` that
    exists, else the defaults), then the environment overrides from ``env``.

    CLI flags go on top with :meth:`Config.with_overrides`.

    :raises ConfigError: naming the file, line and key, or the variable, at fault.
    """
    if path is None:
        path = find_config(env)
    config = Config() if path is None else Config.load(path)
    return config.with_environment(env)


# -- the schema: what each key holds, how it is read and written ---------------------------


class _BadValueError(Exception):
    """A value of the wrong type or range; ``expected`` says what would do, ``reason`` why not."""

    def __init__(self, expected: str, reason: str | None = None) -> None:
        super().__init__(expected)
        self.expected = expected
        self.reason = reason

    def problem(self, shown: str) -> str:
        """The message for a value shown as ``shown``."""
        return self.reason or f"expected {self.expected}, got {shown}"


@dataclass(frozen=True, slots=True)
class _Kind:
    """How one key's value is checked (from TOML or Python), read from text, and written."""

    parse: Callable[[object, Path | None], object]
    dump: Callable[[Any], str]
    # From an environment variable or flag to a TOML-like value; None when the text is the value.
    parse_text: Callable[[str], object] | None = None


def _string(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


def _boolean(value: object, _base: Path | None) -> bool:
    if not isinstance(value, bool):
        raise _BadValueError("true or false")
    return value


def _boolean_text(text: str) -> object:
    word = text.strip().lower()
    if word in ("1", "true", "yes", "on"):
        return True
    if word in ("0", "false", "no", "off"):
        return False
    return text


def _integer_text(text: str) -> object:
    try:
        return int(text.strip())
    except ValueError:
        return text


def _number_text(text: str) -> object:
    try:
        return float(text.strip())
    except ValueError:
        return text


def _optional_text(inner: Callable[[str], object] | None) -> Callable[[str], object]:
    # TOML has no null: an unset key is left out of a file, and given as "" or "none" in text.
    def parse(text: str) -> object:
        if text.strip().lower() in ("", "none"):
            return None
        return inner(text) if inner else text

    return parse


def _number(low: float, high: float | None) -> Callable[[object, Path | None], object]:
    expected = f"a number from {low:g} to {high:g}" if high is not None else f"a number of at least {low:g}"

    def parse(value: object, _base: Path | None) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise _BadValueError(expected)
        number = float(value)
        if not math.isfinite(number) or number < low or (high is not None and number > high):
            raise _BadValueError(expected)
        return number

    return parse


def _integer(allowed: Callable[[int], bool], expected: str) -> Callable[[object, Path | None], object]:
    def parse(value: object, _base: Path | None) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not allowed(value):
            raise _BadValueError(expected)
        return value

    return parse


def _text(expected: str, allowed: tuple[str, ...] = ()) -> Callable[[object, Path | None], object]:
    def parse(value: object, _base: Path | None) -> str:
        if not isinstance(value, str) or not value.strip() or (allowed and value not in allowed):
            raise _BadValueError(expected)
        return value

    return parse


def _optional(inner: Callable[[object, Path | None], object]) -> Callable[[object, Path | None], object]:
    def parse(value: object, base: Path | None) -> object:
        return None if value is None else inner(value, base)

    return parse


def _path(value: object, base: Path | None) -> Path:
    if not isinstance(value, str | os.PathLike) or not str(value).strip():
        raise _BadValueError("a file path (a string)")
    path = Path(value).expanduser()
    return base / path if base is not None and not path.is_absolute() else path


def _layout(value: object, base: Path | None) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _BadValueError("a layout name or a layout file (a string)")
    # A bare name is a shipped layout; anything else is a file, relative to the config's folder.
    if re.fullmatch(r"[a-z0-9_-]+", value):
        return value
    return str(_path(value, base))


def _players(value: object, _base: Path | None) -> tuple[str, str]:
    if (
        not isinstance(value, list | tuple)
        or len(value) != 2
        or not all(isinstance(name, str) and name.strip() for name in value)
    ):
        raise _BadValueError('two player names, such as ["Ann", "Bob"] in the file or "Ann,Bob" as a flag')
    first, second = value[0].strip(), value[1].strip()
    if first.casefold() == second.casefold():
        raise _BadValueError("two player names", f"the two players need different names, not {first!r} twice")
    return (first, second)


def _length(value: object, base: Path | None) -> int:
    length = _integer(lambda n: n >= 0, "a whole number of points, 0 for money")(value, base)
    assert isinstance(length, int)
    if length > MAX_MATCH_LENGTH:
        # gnubg's match equity tables, and so its hints and analyses, end at 64 points.
        raise _BadValueError(
            "a whole number of points, 0 for money",
            f"a match is 1 to {MAX_MATCH_LENGTH} points long (0 for money; GNU Backgammon, which gives the"
            f" hints and analyses, plays matches up to {MAX_MATCH_LENGTH}), not {length}",
        )
    return length


def _players_text(text: str) -> object:
    return [name.strip() for name in text.split(",")]


def _pins(value: object, _base: Path | None) -> tuple[tuple[str, Pin], ...]:
    expected = 'button pins, such as "done=5,undo=6" or { done = 5, undo = 6 }'
    if isinstance(value, Mapping):
        if not all(isinstance(pin, int | str) and not isinstance(pin, bool) for pin in value.values()):
            raise _BadValueError(expected)
        spec: str | Mapping[str, Pin] = {str(name): pin for name, pin in value.items()}
    elif isinstance(value, str):
        if not value.strip():
            return ()
        spec = value
    elif isinstance(value, list | tuple) and all(isinstance(pair, list | tuple) and len(pair) == 2 for pair in value):
        spec = {str(name): pin for name, pin in value}
    else:
        raise _BadValueError(expected)
    try:
        return tuple(parse_button_pins(spec).items())
    except PanelError as exc:
        raise _BadValueError(expected, str(exc)) from None


def _dump_pins(pins: tuple[tuple[str, Pin], ...]) -> str:
    items = ", ".join(f"{name} = {pin if isinstance(pin, int) else _string(pin)}" for name, pin in pins)
    return f"{{ {items} }}" if items else "{}"


_TEXT_DUMP: Final = _string
_SCHEMA: Final[dict[str, dict[str, _Kind]]] = {
    "camera": {
        "source": _Kind(_optional(_text("a frame source address (a string)")), _TEXT_DUMP, _optional_text(None)),
        "profile": _Kind(_optional(_path), lambda path: _string(str(path)), _optional_text(None)),
        "settle": _Kind(_number(0, None), repr, _number_text),
    },
    "leds": {
        "panel": _Kind(_text("an LED panel address (a string)"), _TEXT_DUMP),
        "layout": _Kind(_layout, _TEXT_DUMP),
        "brightness": _Kind(_number(0, 1), repr, _number_text),
    },
    "buttons": {
        "pins": _Kind(_pins, _dump_pins),
    },
    "match": {
        "players": _Kind(_players, lambda names: f"[{_string(names[0])}, {_string(names[1])}]", _players_text),
        "length": _Kind(_length, str, _integer_text),
        "crawford": _Kind(_boolean, lambda flag: "true" if flag else "false", _boolean_text),
        "jacoby": _Kind(_boolean, lambda flag: "true" if flag else "false", _boolean_text),
        "beaver": _Kind(_boolean, lambda flag: "true" if flag else "false", _boolean_text),
        "max_cube": _Kind(
            _optional(_integer(lambda n: is_cube_value(n) and n > 1, f"a power of two from 2 to {CUBE_LIMIT}")),
            str,
            _optional_text(_integer_text),
        ),
        "mode": _Kind(_text('"referee" or "log"', ("referee", "log")), _TEXT_DUMP),
        "player_at_bottom": _Kind(_integer(lambda n: n in (1, 2), "1 or 2"), str, _integer_text),
        "teach": _Kind(_boolean, lambda flag: "true" if flag else "false", _boolean_text),
        "hint_ply": _Kind(_integer(lambda n: 0 <= n <= 2, "0, 1 or 2"), str, _integer_text),
    },
    "store": {
        "path": _Kind(_optional(_path), lambda path: _string(str(path)), _optional_text(None)),
    },
    "hall": {
        "broker": _Kind(
            _optional(_text("the hall's broker, mqtt://HOST:PORT (a string)")), _TEXT_DUMP, _optional_text(None)
        ),
        "table": _Kind(_optional(_text("this table's name in the hall (a string)")), _TEXT_DUMP, _optional_text(None)),
    },
}


@dataclass(frozen=True, slots=True)
class Renamed:
    """A key that was renamed: still read, with its old meaning, and turned into the new key.

    :ivar key: the new key, in the same table.
    :ivar old: how the old key's value was checked.
    :ivar read: the old value as the new key's value.
    :ivar why: what changed, for the notice.
    """

    key: str
    old: _Kind
    read: Callable[[Any], object]
    why: str


#: Old keys, by ``(table, key)``.
RENAMED: Final = {
    ("match", "bottom_player"): Renamed(
        "player_at_bottom",
        _Kind(_integer(lambda n: n in (0, 1), "0 or 1"), str, _integer_text),
        lambda n: n + 1,
        "players are numbered 1 and 2 now, in the order of players",
    ),
}
_RENAMED_VARIABLES: Final = {f"{ENV_PREFIX}{table}_{key}".upper(): (table, key) for table, key in RENAMED}

_ALIASES: Final = {
    "BGBOARD_CAMERA": ("camera", "source"),
    "BGBOARD_LEDS": ("leds", "panel"),
    "BGBOARD_BUTTONS": ("buttons", "pins"),
    "BGBOARD_STORE": ("store", "path"),
}


def _env_name(section: str, key: str) -> str:
    return f"{ENV_PREFIX}{section}_{key}".upper()


def _parse_text(kind: _Kind, text: str, source: str, name: str) -> object:
    value = kind.parse_text(text) if kind.parse_text is not None else text
    try:
        return kind.parse(value, None)
    except _BadValueError as bad:
        raise ConfigError(source, None, name, bad.problem(repr(text))) from None


def _show(value: object) -> str:
    """A TOML value as the user wrote it, near enough, for an error message."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "an array"
    return str(value)


def _from_mapping(data: Mapping[str, Any], text: str, source: str, base: Path | None) -> Config:
    changes: dict[tuple[str, str], object] = {}
    notices: list[str] = []
    for section, table in data.items():
        if section not in _SCHEMA:
            if not isinstance(table, dict):
                # A key outside any table: say which table it belongs in, if any.
                homes = [name for name, keys in _SCHEMA.items() if section in keys]
                hint = f"; put it under [{homes[0]}]" if homes else ""
                raise ConfigError(source, _line_of(text, "", section), section, f"a key outside any table{hint}")
            close = difflib.get_close_matches(section, _SCHEMA, n=1)
            hint = f"; did you mean [{close[0]}]?" if close else f"; the tables are {', '.join(_SCHEMA)}"
            raise ConfigError(source, _line_of(text, section, None), None, f"no table [{section}]{hint}")
        if not isinstance(table, dict):
            raise ConfigError(
                source, _line_of(text, "", section), section, f"{section} is a table ([{section}]), not {_show(table)}"
            )
        for key, value in table.items():
            kind = _SCHEMA[section].get(key)
            where = f"{section}.{key}"
            rename = RENAMED.get((section, key))
            if rename is not None:
                line = _line_of(text, section, key)
                if rename.key in table:
                    problem = f"{key} is the old name of {rename.key}, and both are set: remove {key}"
                    raise ConfigError(source, line, where, problem)
                try:
                    new_value = rename.read(rename.old.parse(value, base))
                except _BadValueError as bad:
                    problem = f"{bad.problem(_show(value))} ({key} is the old name of {rename.key})"
                    raise ConfigError(source, line, where, problem) from None
                changes[section, rename.key] = new_value
                place = f"{source}:{line}" if line is not None else source
                notices.append(
                    f"{place}: {where} = {_show(value)} is read as {rename.key} = {new_value}; "
                    f"write that instead ({rename.why})"
                )
                continue
            if kind is None:
                close = difflib.get_close_matches(key, _SCHEMA[section], n=1)
                elsewhere = [name for name, keys in _SCHEMA.items() if key in keys]
                if close:
                    hint = f"; did you mean {close[0]!r}?"
                elif elsewhere:
                    hint = f"; {key!r} belongs in [{elsewhere[0]}]"
                else:
                    hint = f"; the keys are {', '.join(_SCHEMA[section])}"
                problem = f"no key {key!r} in [{section}]{hint}"
                raise ConfigError(source, _line_of(text, section, key), where, problem)
            try:
                changes[section, key] = kind.parse(value, base)
            except _BadValueError as bad:
                problem = bad.problem(_show(value))
                raise ConfigError(source, _line_of(text, section, key), where, problem) from None
    return replace(Config()._with(changes), notices=tuple(notices))


_TOML_PLACE: Final = re.compile(r"\s*\(at line (\d+), column (\d+)\)\s*$")
_TOML_END: Final = " (at end of document)"


def _syntax_error(source: str, text: str, exc: tomllib.TOMLDecodeError) -> ConfigError:
    message = str(exc)
    line: int | None = getattr(exc, "lineno", None)
    column: int | None = getattr(exc, "colno", None)
    place = _TOML_PLACE.search(message)
    if place:
        # Python before 3.14 gives the place only inside the message.
        line, column = int(place[1]), int(place[2])
        message = message[: place.start()]
    elif message.endswith(_TOML_END):
        # The error is at the end of the text: point at the last line, just after its end.
        lines = text.splitlines() or [""]
        line, column = len(lines), len(lines[-1]) + 1
        message = message.removesuffix(_TOML_END) + " at the end of the file"
    return ConfigError(source, line, None, f"not valid TOML: {message}", column)


_HEADER: Final = re.compile(r"^\s*\[\s*([^\[\]]+?)\s*\]\s*(?:#.*)?$")
_ASSIGN: Final = re.compile(r"""^\s*((?:"[^"]*"|'[^']*'|[A-Za-z0-9_\-. ])+?)\s*=""")


def _dotted(text: str) -> str:
    """A TOML dotted key with its quotes and spaces gone, to compare keys however written."""
    return ".".join(part.strip().strip("\"'") for part in text.split("."))


def _line_of(text: str, table: str, key: str | None) -> int | None:
    """The line that sets ``table.key`` (or opens ``[table]``), else the table's line, else None.

    tomllib reports no positions for valid TOML, so the line is found by scanning the text.
    """
    wanted = f"{table}.{key}" if table and key else (key or table)
    current = ""
    table_line = None
    for number, line in enumerate(text.splitlines(), 1):
        header = _HEADER.match(line)
        if header:
            current = _dotted(header[1])
            if current == wanted:
                return number
            if current == table and table_line is None:
                table_line = number
            continue
        assign = _ASSIGN.match(line)
        if key and assign:
            name = _dotted(assign[1])
            if (f"{current}.{name}" if current else name) == wanted:
                return number
    return table_line
