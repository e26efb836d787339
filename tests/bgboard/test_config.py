# SPDX-License-Identifier: MIT
"""The config: defaults, the file search, env overrides, CLI flags, errors that point, round trips."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

import bgboard.config as config_module
from bgboard.config import (
    ButtonsConfig,
    CameraConfig,
    Config,
    ConfigError,
    LedsConfig,
    MatchConfig,
    StoreConfig,
    config_paths,
    find_config,
    load_config,
)
from engine.match import MatchOptions

EXAMPLE = Path(config_module.__file__).with_name("config.example.toml")


@pytest.fixture
def no_system_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Point the system config at a file that is not there, so the host's /etc never leaks in."""
    missing = tmp_path / "etc" / "bgboard" / "config.toml"
    monkeypatch.setattr(config_module, "SYSTEM_CONFIG", missing)
    return missing


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


# -- defaults ------------------------------------------------------------------------------


def test_empty_file_is_the_defaults(tmp_path: Path) -> None:
    config = Config.load(write(tmp_path / "c.toml", ""))
    assert config == Config()
    assert config.source == tmp_path / "c.toml"


def test_defaults() -> None:
    config = Config()
    assert config.camera == CameraConfig(source=None, profile=None, settle=0.6)
    assert config.leds == LedsConfig(panel="fake", layout="standard", brightness=0.4)
    assert config.buttons.pins == ()
    assert config.match == MatchConfig(
        players=("Player 1", "Player 2"),
        length=7,
        crawford=True,
        jacoby=False,
        beaver=False,
        max_cube=None,
        mode="referee",
        player_at_bottom=1,
        teach=False,
        hint_ply=0,
    )
    assert config.store.path is None


def test_settle_default_matches_the_controller() -> None:
    from bgboard import controller

    assert Config().camera.settle == controller.SETTLE


def test_match_options_feed_the_engine() -> None:
    match = Config.from_toml("[match]\nlength = 0\njacoby = true\nbeaver = true\nmax_cube = 64").match
    assert match.options() == MatchOptions(crawford=True, jacoby=True, beaver=True, max_cube=64)


def test_store_path_defaults_to_the_store_module(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("BGBOARD_STORE", str(tmp_path / "s.sqlite3"))
    assert StoreConfig().resolved_path() == tmp_path / "s.sqlite3"
    assert StoreConfig(tmp_path / "x.db").resolved_path() == tmp_path / "x.db"


# -- reading a file ------------------------------------------------------------------------


FULL = """\
[camera]
source = "v4l2:///dev/video0?width=1280"
profile = "profiles/board.toml"
settle = 1

[leds]
panel = "serial:/dev/ttyUSB0"
layout = "layouts/mine.toml"
brightness = 0.25

[buttons]
pins = "done=5,undo=GPIO6"

[match]
players = ["Ann", "Bob"]
length = 0
crawford = false
jacoby = true
beaver = true
max_cube = 16
mode = "log"
player_at_bottom = 2
teach = true
hint_ply = 2

[store]
path = "/var/lib/bgboard/matches.sqlite3"
"""


def test_every_key(tmp_path: Path) -> None:
    config = Config.load(write(tmp_path / "conf" / "config.toml", FULL))
    assert config.camera == CameraConfig("v4l2:///dev/video0?width=1280", tmp_path / "conf/profiles/board.toml", 1.0)
    assert config.leds == LedsConfig("serial:/dev/ttyUSB0", str(tmp_path / "conf/layouts/mine.toml"), 0.25)
    assert config.buttons.as_dict() == {"done": 5, "undo": "GPIO6"}
    assert config.match == MatchConfig(("Ann", "Bob"), 0, False, True, True, 16, "log", 2, True, 2)
    assert config.store.path == Path("/var/lib/bgboard/matches.sqlite3")
    assert isinstance(config.camera.settle, float)


def test_layout_name_is_not_a_path(tmp_path: Path) -> None:
    assert Config.load(write(tmp_path / "c.toml", '[leds]\nlayout = "standard"')).leds.layout == "standard"


def test_home_in_paths_is_expanded(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    config = Config.from_toml('[store]\npath = "~/m.sqlite3"', base=Path("/elsewhere"))
    assert config.store.path == tmp_path / "m.sqlite3"


def test_buttons_as_a_table(tmp_path: Path) -> None:
    config = Config.from_toml("[buttons.pins]\ndone = 5\nhint = 21\n")
    assert config.buttons == ButtonsConfig((("done", 5), ("hint", 21)))
    inline = Config.from_toml('[buttons]\npins = { done = 5, hint = "21" }')
    assert inline.buttons == config.buttons


def test_example_file_is_valid_and_documents_every_key() -> None:
    text = EXAMPLE.read_text(encoding="utf-8")
    assert text.startswith("# SPDX-License-Identifier: MIT")
    config = Config.from_toml(text, str(EXAMPLE), EXAMPLE.parent)
    # The example shows the defaults, except for buttons wired up as an illustration.
    assert config.buttons.as_dict() == {"done": 5, "undo": 6, "double": 13, "take": 19, "drop": 26, "hint": 21}
    assert config == Config(buttons=config.buttons)
    for section, keys in config_module._SCHEMA.items():
        assert f"[{section}]" in text
        for key in keys:
            lines = [line for line in text.splitlines() if line.lstrip("# ").startswith(f"{key} =")]
            assert lines, f"{section}.{key} is not in the example"


# -- where the file is found ---------------------------------------------------------------


def test_no_file_anywhere_gives_defaults(no_system_config: Path, tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path / "home")}
    assert find_config(env) is None
    assert load_config(None, env) == Config()


def test_explicit_path_wins(no_system_config: Path, tmp_path: Path) -> None:
    write(no_system_config, "[match]\nlength = 3")
    named = write(tmp_path / "named.toml", "[match]\nlength = 4")
    given = write(tmp_path / "given.toml", "[match]\nlength = 5")
    config = load_config(given, {"BGBOARD_CONFIG": str(named)})
    assert config.match.length == 5
    assert config.source == given


def test_bgboard_config_before_user_and_system(no_system_config: Path, tmp_path: Path) -> None:
    write(no_system_config, "[match]\nlength = 3")
    write(tmp_path / "xdg" / "bgboard" / "config.toml", "[match]\nlength = 9")
    named = write(tmp_path / "named.toml", "[match]\nlength = 4")
    env = {"BGBOARD_CONFIG": str(named), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    assert load_config(None, env).match.length == 4
    assert config_paths(env) == [named, tmp_path / "xdg/bgboard/config.toml", no_system_config]


def test_user_config_before_system(no_system_config: Path, tmp_path: Path) -> None:
    write(no_system_config, "[match]\nlength = 3")
    write(tmp_path / "home" / ".config" / "bgboard" / "config.toml", "[match]\nlength = 9")
    assert load_config(None, {"HOME": str(tmp_path / "home")}).match.length == 9


def test_system_config(no_system_config: Path, tmp_path: Path) -> None:
    write(no_system_config, '[match]\nlength = 3\n[camera]\nprofile = "calibration.toml"')
    config = load_config(None, {"HOME": str(tmp_path / "home")})
    assert config.match.length == 3
    assert config.source == no_system_config
    # Relative paths follow the file: /etc/bgboard/calibration.toml for the appliance.
    assert config.camera.profile == no_system_config.parent / "calibration.toml"


def test_missing_bgboard_config_is_an_error(no_system_config: Path, tmp_path: Path) -> None:
    write(no_system_config, "")
    with pytest.raises(ConfigError, match=r"^environment: BGBOARD_CONFIG: there is no config file .*nope\.toml"):
        load_config(None, {"BGBOARD_CONFIG": str(tmp_path / "nope.toml")})


def test_missing_explicit_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"nope\.toml: cannot read the config: no such file or directory$"):
        load_config(tmp_path / "nope.toml", {})
    with pytest.raises(ConfigError, match=r"cannot read the config: it is a folder$"):
        load_config(tmp_path, {})


def test_file_that_is_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_bytes(b"[match]\nplayers = ['\xff', 'b']\n")
    with pytest.raises(ConfigError, match=r"cannot read the config: not a text file \(not UTF-8 at byte offset 20\)"):
        Config.load(path)


# -- environment overrides -----------------------------------------------------------------


def test_env_overrides_file(tmp_path: Path) -> None:
    path = write(tmp_path / "c.toml", '[leds]\npanel = "serial:/dev/ttyUSB0"\n[match]\nlength = 7')
    env = {"BGBOARD_LEDS_PANEL": "terminal", "BGBOARD_MATCH_LENGTH": "5"}
    config = load_config(path, env)
    assert config.leds.panel == "terminal"
    assert config.match.length == 5


@pytest.mark.parametrize(
    ("variable", "text", "section", "key", "value"),
    [
        ("BGBOARD_CAMERA_SOURCE", "file:frames/*.png", "camera", "source", "file:frames/*.png"),
        ("BGBOARD_CAMERA_SOURCE", "none", "camera", "source", None),
        ("BGBOARD_CAMERA_PROFILE", "p.toml", "camera", "profile", Path("p.toml")),
        ("BGBOARD_CAMERA_SETTLE", "1.5", "camera", "settle", 1.5),
        ("BGBOARD_LEDS_LAYOUT", "standard", "leds", "layout", "standard"),
        ("BGBOARD_LEDS_BRIGHTNESS", "1", "leds", "brightness", 1.0),
        ("BGBOARD_BUTTONS_PINS", "done=5, undo=6", "buttons", "pins", (("done", 5), ("undo", 6))),
        ("BGBOARD_BUTTONS_PINS", "", "buttons", "pins", ()),
        ("BGBOARD_MATCH_PLAYERS", "Ann, Bob", "match", "players", ("Ann", "Bob")),
        ("BGBOARD_MATCH_LENGTH", "0", "match", "length", 0),
        ("BGBOARD_MATCH_CRAWFORD", "no", "match", "crawford", False),
        ("BGBOARD_MATCH_JACOBY", "on", "match", "jacoby", True),
        ("BGBOARD_MATCH_BEAVER", "1", "match", "beaver", True),
        ("BGBOARD_MATCH_MAX_CUBE", "64", "match", "max_cube", 64),
        ("BGBOARD_MATCH_MAX_CUBE", "", "match", "max_cube", None),
        ("BGBOARD_MATCH_MODE", "log", "match", "mode", "log"),
        ("BGBOARD_MATCH_PLAYER_AT_BOTTOM", "2", "match", "player_at_bottom", 2),
        ("BGBOARD_MATCH_TEACH", "yes", "match", "teach", True),
        ("BGBOARD_MATCH_TEACH", "false", "match", "teach", False),
        ("BGBOARD_MATCH_HINT_PLY", "1", "match", "hint_ply", 1),
        ("BGBOARD_STORE_PATH", "/tmp/m.sqlite3", "store", "path", Path("/tmp/m.sqlite3")),
    ],
)
def test_env_parses_each_type(variable: str, text: str, section: str, key: str, value: object) -> None:
    config = Config.from_toml("[match]\nmax_cube = 8\n").with_environment({variable: text})
    assert getattr(getattr(config, section), key) == value


@pytest.mark.parametrize(
    ("variable", "text", "expected"),
    [
        ("BGBOARD_MATCH_LENGTH", "seven", "a whole number of points"),
        ("BGBOARD_MATCH_LENGTH", "-1", "a whole number of points"),
        ("BGBOARD_MATCH_CRAWFORD", "maybe", "true or false"),
        ("BGBOARD_LEDS_BRIGHTNESS", "2", "a number from 0 to 1"),
        ("BGBOARD_CAMERA_SETTLE", "nan", "a number of at least 0"),
        ("BGBOARD_MATCH_MAX_CUBE", "3", "a power of two"),
        ("BGBOARD_MATCH_MODE", "teach", '"referee" or "log"'),
        ("BGBOARD_MATCH_PLAYERS", "Ann", "two player names"),
        ("BGBOARD_MATCH_PLAYER_AT_BOTTOM", "0", "1 or 2"),
        ("BGBOARD_MATCH_BOTTOM_PLAYER", "2", "0 or 1"),
        ("BGBOARD_LEDS_PANEL", "", "an LED panel address"),
    ],
)
def test_env_type_errors_name_the_variable(variable: str, text: str, expected: str) -> None:
    with pytest.raises(ConfigError) as caught:
        Config().with_environment({variable: text})
    assert str(caught.value).startswith(f"environment: {variable}: expected {expected}")
    assert repr(text) in str(caught.value)
    assert caught.value.key == variable


def test_env_bad_button_pins_say_why() -> None:
    with pytest.raises(ConfigError, match=r"^environment: BGBOARD_BUTTONS_PINS: no button named 'dun'"):
        Config().with_environment({"BGBOARD_BUTTONS_PINS": "dun=5"})


def test_env_unknown_key_suggests() -> None:
    with pytest.raises(
        ConfigError, match=r"BGBOARD_LEDS_PANNEL: no key 'pannel' in \[leds\]; did you mean BGBOARD_LEDS_PANEL\?"
    ):
        Config().with_environment({"BGBOARD_LEDS_PANNEL": "fake"})


def test_env_misspelt_section_suggests() -> None:
    with pytest.raises(ConfigError, match=r"BGBOARD_LED_PANEL: no table \[led\]; did you mean BGBOARD_LEDS_PANEL\?"):
        Config().with_environment({"BGBOARD_LED_PANEL": "fake"})


def test_other_bgboard_variables_are_not_keys() -> None:
    env = {"BGBOARD_CONFIG": "/x.toml", "BGBOARD_LOG_LEVEL": "debug", "BGBOARD_WEB_LISTEN": ":80", "PATH": "/bin"}
    assert Config().with_environment(env) == Config()


def test_short_aliases() -> None:
    env = {"BGBOARD_CAMERA": "usb:0", "BGBOARD_LEDS": "terminal", "BGBOARD_BUTTONS": "done=5", "BGBOARD_STORE": "m.db"}
    config = Config().with_environment(env)
    assert config.camera.source == "usb:0"
    assert config.leds.panel == "terminal"
    assert config.buttons.as_dict() == {"done": 5}
    assert config.store.path == Path("m.db")


def test_long_name_beats_alias() -> None:
    env = {"BGBOARD_LEDS": "terminal", "BGBOARD_LEDS_PANEL": "fake"}
    assert Config().with_environment(env).leds.panel == "fake"
    assert Config().with_environment(dict(reversed(env.items()))).leds.panel == "fake"


def test_env_relative_paths_stay_relative(tmp_path: Path) -> None:
    path = write(tmp_path / "c.toml", "")
    assert load_config(path, {"BGBOARD_CAMERA_PROFILE": "p.toml"}).camera.profile == Path("p.toml")


# -- CLI flags -----------------------------------------------------------------------------


def test_flags_override_env_and_file(tmp_path: Path) -> None:
    path = write(tmp_path / "c.toml", "[match]\nlength = 7")
    config = load_config(path, {"BGBOARD_MATCH_LENGTH": "5"}).with_overrides(match_length=3)
    assert config.match.length == 3


def test_flags_none_means_not_given() -> None:
    assert Config().with_overrides(match_length=None, leds_panel=None) == Config()


def test_flags_typed_and_text_values(tmp_path: Path) -> None:
    config = Config().with_overrides(
        match_players=("Ann", "Bob"),
        match_crawford="false",
        match_max_cube="16",
        buttons_pins={"done": 5},
        store_path=tmp_path / "m.db",
        leds_panel="terminal",
    )
    assert config.match.players == ("Ann", "Bob")
    assert config.match.crawford is False
    assert config.match.max_cube == 16
    assert config.buttons.as_dict() == {"done": 5}
    assert config.store.path == tmp_path / "m.db"
    assert config.leds.panel == "terminal"
    assert Config().with_overrides(match_players="Ann,Bob").match.players == ("Ann", "Bob")


def test_flags_bad_value() -> None:
    with pytest.raises(ConfigError, match=r"^command line: match_length: expected a whole number of points.*-3"):
        Config().with_overrides(match_length=-3)
    with pytest.raises(ConfigError, match=r"^command line: match_crawford: expected true or false, got 'sometimes'"):
        Config().with_overrides(match_crawford="sometimes")
    with pytest.raises(ConfigError, match=r"match_jacoby: expected true or false, got 1"):
        Config().with_overrides(match_jacoby=1)


def test_flags_unknown_name() -> None:
    with pytest.raises(TypeError, match=r"no config key for the flag 'match_lenght'; did you mean 'match_length'\?"):
        Config().with_overrides(match_lenght=3)
    with pytest.raises(TypeError, match="'verbose'"):
        Config().with_overrides(verbose=True)


# -- errors in files -----------------------------------------------------------------------


def error_for(tmp_path: Path, text: str) -> ConfigError:
    path = write(tmp_path / "config.toml", text)
    with pytest.raises(ConfigError) as caught:
        Config.load(path)
    return caught.value


def test_unknown_key_names_file_line_and_suggests(tmp_path: Path) -> None:
    error = error_for(tmp_path, '[match]\nlength = 7\n\n# a comment\n  crawfrod = false\n[leds]\npanel = "fake"\n')
    assert str(error) == (
        f"{tmp_path / 'config.toml'}:5: match.crawfrod: no key 'crawfrod' in [match]; did you mean 'crawford'?"
    )
    assert (error.line, error.key) == (5, "match.crawfrod")


def test_unknown_key_that_belongs_elsewhere(tmp_path: Path) -> None:
    error = error_for(tmp_path, '[match]\nlength = 7\n[leds]\nsource = "usb:0"\n')
    assert error.line == 4
    assert "no key 'source' in [leds]; 'source' belongs in [camera]" in str(error)


def test_unknown_key_with_no_near_miss_lists_the_keys(tmp_path: Path) -> None:
    error = error_for(tmp_path, "[store]\nwhatever = 1\n")
    assert error.line == 2
    assert "the keys are path" in str(error)


def test_unknown_table_suggests(tmp_path: Path) -> None:
    error = error_for(tmp_path, "[match]\nlength = 7\n\n[ cammera ]  # typo\nsource = 'usb:0'\n")
    assert str(error) == f"{tmp_path / 'config.toml'}:4: no table [cammera]; did you mean [camera]?"


def test_unknown_table_far_from_any(tmp_path: Path) -> None:
    error = error_for(tmp_path, "[zzz]\n")
    assert "no table [zzz]; the tables are camera, leds, buttons, match, store" in str(error)


def test_key_outside_a_table(tmp_path: Path) -> None:
    error = error_for(tmp_path, "length = 7\n")
    assert str(error) == f"{tmp_path / 'config.toml'}:1: length: a key outside any table; put it under [match]"


def test_section_given_as_a_value(tmp_path: Path) -> None:
    error = error_for(tmp_path, '# leds\nleds = "fake"\n')
    assert error.line == 2
    assert 'leds is a table ([leds]), not "fake"' in str(error)


def test_dotted_keys_are_found(tmp_path: Path) -> None:
    error = error_for(tmp_path, 'match.length = 7\nmatch."moed" = "log"\n')
    assert error.line == 2
    assert "did you mean 'mode'?" in str(error)


@pytest.mark.parametrize(
    ("text", "line", "key", "message"),
    [
        ('[match]\nlength = "7"', 2, "match.length", 'expected a whole number of points, 0 for money, got "7"'),
        ("[match]\ncrawford = 1", 2, "match.crawford", "expected true or false, got 1"),
        ("[match]\nlength = true", 2, "match.length", "expected a whole number of points, 0 for money, got true"),
        ('[match]\nplayers = ["Ann"]', 2, "match.players", "expected two player names"),
        ("[match]\nplayers = 3", 2, "match.players", "expected two player names"),
        ("[match]\nmax_cube = 1", 2, "match.max_cube", "expected a power of two from 2 to 32768, got 1"),
        ('[match]\nmode = "Referee"', 2, "match.mode", 'expected "referee" or "log", got "Referee"'),
        ("[match]\n\nplayer_at_bottom = 0", 3, "match.player_at_bottom", "expected 1 or 2, got 0"),
        ("[match]\n\nbottom_player = 2", 3, "match.bottom_player", "expected 0 or 1, got 2"),
        ('[match]\nteach = "yes"', 2, "match.teach", 'expected true or false, got "yes"'),
        ("[match]\nhint_ply = 3", 2, "match.hint_ply", "expected 0, 1 or 2, got 3"),
        ("[leds]\nbrightness = 1.5", 2, "leds.brightness", "expected a number from 0 to 1, got 1.5"),
        ("[leds]\npanel = 3", 2, "leds.panel", "expected an LED panel address (a string), got 3"),
        ("[leds]\nlayout = []", 2, "leds.layout", "expected a layout name or a layout file (a string), got an array"),
        ('[camera]\nsettle = "1s"', 2, "camera.settle", 'expected a number of at least 0, got "1s"'),
        ("[camera]\nprofile = {}", 2, "camera.profile", "expected a file path (a string), got a table"),
        ("[store]\npath = 5", 2, "store.path", "expected a file path (a string), got 5"),
        ("[buttons]\npins = true", 2, "buttons.pins", "expected button pins"),
        ("[buttons]\npins = { done = true }", 2, "buttons.pins", "expected button pins"),
        ('[buttons]\npins = "done=5,undo=5"', 2, "buttons.pins", "buttons done and undo are both on pin 5"),
        ("[buttons.pins]\ndone = 5\nfoo = 6", 1, "buttons.pins", "no button named 'foo'"),
    ],
)
def test_type_errors_name_file_line_key_and_type(tmp_path: Path, text: str, line: int, key: str, message: str) -> None:
    error = error_for(tmp_path, text)
    assert str(error).startswith(f"{tmp_path / 'config.toml'}:{line}: {key}: {message}")
    assert (error.line, error.key) == (line, key)


def test_toml_syntax_error_names_file_line_and_column(tmp_path: Path) -> None:
    error = error_for(tmp_path, '[match]\nlength = 7\nplayers = ["Ann", \n')
    with pytest.raises(tomllib.TOMLDecodeError):
        tomllib.loads('[match]\nlength = 7\nplayers = ["Ann", \n')
    assert error.line is not None and error.column is not None
    assert str(error).startswith(f"{tmp_path / 'config.toml'}:{error.line}:{error.column}: not valid TOML: ")
    assert "(at line" not in str(error)


def test_toml_syntax_error_position() -> None:
    with pytest.raises(ConfigError) as caught:
        Config.from_toml("[match]\nlength = = 7\n", "f.toml")
    assert (caught.value.line, caught.value.column) == (2, 10)
    assert str(caught.value).startswith("f.toml:2:10: not valid TOML: ")


def test_duplicate_key_is_a_syntax_error() -> None:
    with pytest.raises(ConfigError, match=r"^f\.toml:3:\d+: not valid TOML"):
        Config.from_toml("[match]\nlength = 7\nlength = 5\n", "f.toml")


def test_config_error_is_a_value_error() -> None:
    assert issubclass(ConfigError, ValueError)


# -- writing back --------------------------------------------------------------------------


def test_defaults_round_trip() -> None:
    text = Config().to_toml()
    assert Config.from_toml(text) == Config()
    assert "# source is not set" in text


def test_full_round_trip(tmp_path: Path) -> None:
    config = Config.load(write(tmp_path / "a" / "config.toml", FULL))
    written = write(tmp_path / "b" / "config.toml", config.to_toml())
    assert Config.load(written) == config


def test_awkward_values_round_trip() -> None:
    config = Config().with_overrides(
        camera_source='file:C:\\frames\\"quoted" ü\t*.png',
        leds_panel="gpio:turn.1=17,turn.2=27",
        buttons_pins={"done": "BOARD29", "undo": 6},
        match_players=("Zoë", 'O"Brien'),
        match_max_cube=2,
        camera_settle=1e-05,
        leds_brightness=0,
    )
    assert Config.from_toml(config.to_toml()) == config


def test_written_file_has_every_table_and_key() -> None:
    text = Config().to_toml()
    data = tomllib.loads(text)
    assert list(data) == ["camera", "leds", "buttons", "match", "store", "hall"]
    for section, keys in config_module._SCHEMA.items():
        for key in keys:
            assert key in data[section] or f"# {key} is not set" in text


def test_config_is_frozen() -> None:
    config = Config()
    with pytest.raises(AttributeError):
        config.match.length = 3  # type: ignore[misc]
    assert hash(config) == hash(Config())


def test_teach_mode_from_the_environment_and_the_command_line() -> None:
    config = Config().with_environment({"BGBOARD_MATCH_TEACH": "on", "BGBOARD_MATCH_HINT_PLY": "2"})
    assert (config.match.teach, config.match.hint_ply) == (True, 2)
    assert Config().with_overrides(match_teach=True).match.teach is True
    # A flag not given leaves the file's or the environment's value.
    assert config.with_overrides(match_teach=None).match.teach is True
    with pytest.raises(ConfigError, match="BGBOARD_MATCH_HINT_PLY"):
        Config().with_environment({"BGBOARD_MATCH_HINT_PLY": "5"})


@pytest.mark.parametrize(("old", "new"), [(0, 1), (1, 2)])
def test_the_old_bottom_player_key_keeps_its_meaning_and_says_what_to_write(tmp_path: Path, old: int, new: int) -> None:
    # Before players were numbered 1 and 2, bottom_player gave the engine's index (0 or 1):
    # a config written then must seat the same person at the bottom now.
    file = write(tmp_path / "config.toml", f'[match]\nplayers = ["Ann", "Bob"]\nbottom_player = {old}\n')
    config = Config.load(file)
    assert config.match.player_at_bottom == new
    assert config.match.bottom_player == old
    assert config.notices == (
        f"{file}:3: match.bottom_player = {old} is read as player_at_bottom = {new}; "
        "write that instead (players are numbered 1 and 2 now, in the order of players)",
    )
    assert Config.from_toml(config.to_toml()).match == config.match
    assert "bottom_player" not in config.to_toml()


def test_the_old_bottom_player_variable_keeps_its_meaning() -> None:
    config = Config().with_environment({"BGBOARD_MATCH_BOTTOM_PLAYER": "1"})
    assert config.match.player_at_bottom == 2
    assert config.notices and "set BGBOARD_MATCH_PLAYER_AT_BOTTOM=2 instead" in config.notices[0]
    # The new name, when both are set, is the one that counts.
    both = Config().with_environment({"BGBOARD_MATCH_BOTTOM_PLAYER": "1", "BGBOARD_MATCH_PLAYER_AT_BOTTOM": "1"})
    assert both.match.player_at_bottom == 1


def test_old_and_new_bottom_keys_together_are_refused() -> None:
    with pytest.raises(ConfigError) as caught:
        Config.from_toml("[match]\nplayer_at_bottom = 1\nbottom_player = 1\n", source="c.toml")
    assert str(caught.value) == (
        "c.toml:3: match.bottom_player: bottom_player is the old name of player_at_bottom, and both are set: "
        "remove bottom_player"
    )
