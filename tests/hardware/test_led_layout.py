# SPDX-License-Identifier: MIT
"""LED layouts in TOML: the standard one, and clear errors naming the file, line and key."""

from __future__ import annotations

from pathlib import Path

import pytest

from hardware.layout import LayoutError, LedLayout
from hardware.scene import LED_NAMES

ROOT = Path(__file__).resolve().parents[2]


def test_the_standard_layout_places_every_led_once_along_a_44_led_chain() -> None:
    layout = LedLayout.standard()
    assert layout.length == 44
    assert layout.names == LED_NAMES
    positions = [i for name in layout.names for i in layout.indices(name)]
    assert sorted(positions) == list(range(44))
    assert layout.status_index == 0
    # The chain runs along player 1's rail from his 1-point to his 12-point, bar between 6 and 7.
    assert [layout.indices(f"point.{p}")[0] for p in range(1, 13)] == [3, 4, 5, 6, 7, 8, 10, 11, 12, 13, 14, 15]
    assert layout.indices("bar.1") == (9,)
    # The doubling track runs along the bar from player 2's 64 to player 1's 64.
    track = [layout.indices(n)[0] for n in ("cube.2.64", "cube.2.2", "cube.centre", "cube.1.2", "cube.1.64")]
    assert track == [31, 36, 37, 38, 43]


def test_the_standard_layout_file_is_package_data() -> None:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert '"layouts/*.toml"' in text
    assert LedLayout.load(ROOT / "hardware" / "layouts" / "standard.toml") == LedLayout.standard()


def test_a_layout_round_trips_through_toml() -> None:
    layout = LedLayout.standard()
    assert LedLayout.from_toml(layout.to_toml()) == layout


def test_nested_quoted_and_dotted_keys_and_several_leds_per_name_are_read_alike() -> None:
    text = LedLayout.standard().to_toml().replace("point.1 = 3\n", '"point.1" = [3]\n')
    text = text.replace("cube.1.2 = 38\n", "cube . 1 . 2 = 38\n").replace(
        "[chain]\nlength = 44", "[chain]\nlength = 46"
    )
    text = text.replace("point.2 = 4\n", "point.2 = [4, 44, 45]\n")
    layout = LedLayout.from_toml(text, "mine.toml")
    assert layout.indices("point.1") == (3,)
    assert layout.indices("cube.1.2") == (38,)
    assert layout.indices("point.2") == (4, 44, 45)
    assert layout.name_at(45) == "point.2"


def _broken(old: str, new: str) -> str:
    text = LedLayout.standard().to_toml()
    assert old in text
    return text.replace(old, new)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            _broken("point.7 = 10\n", "point.7 = 9\n"),
            r"^bad\.toml, line \d+, leds\.\S+: position 9 is already used by ",
        ),
        (
            _broken("point.7 = 10\n", "piont.7 = 10\n"),
            r"^bad\.toml, line 12, leds\.piont\.7: no LED is named 'piont\.7' \(did you mean 'point\.7'\?\)",
        ),
        (_broken("point.7 = 10\n", ""), r"^bad\.toml, leds: missing 1 LED\(s\): point\.7$"),
        (_broken("point.7 = 10\n", "point.7 = 44\n"), r"^bad\.toml, line 12, leds\.point\.7: position 44 is outside"),
        (_broken("point.7 = 10\n", 'point.7 = "ten"\n'), r"line 12, leds\.point\.7: expected a chain position"),
        (_broken("point.7 = 10\n", "point.7 = true\n"), r"line 12, leds\.point\.7: expected a chain position"),
        (_broken("length = 44", "length = 0"), r"^bad\.toml, line 2, chain\.length: must be 1-1024, not 0"),
        (_broken("length = 44", "lenght = 44"), r"^bad\.toml, line 2, chain\.lenght: unknown key"),
        (_broken("[leds]", "[led]"), r"^bad\.toml, line 5, led: unknown table"),
        (_broken("[leds]", "[leds"), r"^bad\.toml: not valid TOML: .*\(at line 5, column 6\)"),
    ],
)
def test_a_bad_layout_is_refused_naming_the_file_line_and_key(text: str, message: str) -> None:
    with pytest.raises(LayoutError, match=message):
        LedLayout.from_toml(text, "bad.toml")


def test_a_missing_file_names_the_path(tmp_path: Path) -> None:
    with pytest.raises(LayoutError, match=r"nowhere\.toml: cannot read the LED layout: "):
        LedLayout.load(tmp_path / "nowhere.toml")


def test_a_layout_is_found_by_file_or_by_shipped_name(tmp_path: Path) -> None:
    path = tmp_path / "mine.toml"
    path.write_text(LedLayout.standard().to_toml(), encoding="utf-8")
    assert LedLayout.from_file_or_name(str(path)).source == str(path)
    assert LedLayout.from_file_or_name("standard") == LedLayout.standard()
    assert LedLayout.from_file_or_name(None) == LedLayout.standard()
    with pytest.raises(LayoutError, match="no layout named 'huge'; bgboard ships standard"):
        LedLayout.from_file_or_name("huge")


def test_chain_order_lists_the_leds_along_the_wire() -> None:
    order = LedLayout.standard().chain_order()
    assert order[:3] == [(0, "status"), (1, "turn.1"), (2, "off.1")]
    assert [i for i, _ in order] == list(range(44))
