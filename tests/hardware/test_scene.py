# SPDX-License-Identifier: MIT
"""Scenes: LED names, colours and patterns, immutability, and the bytes a scene puts on the chain."""

from __future__ import annotations

import pytest

from firmware_bridge import protocol
from hardware.layout import LedLayout
from hardware.scene import (
    LED_NAMES,
    TEST,
    Colour,
    Light,
    Pattern,
    Scene,
    cube_led,
    point_led,
)


def test_there_are_44_named_leds_and_each_is_named_once() -> None:
    assert len(LED_NAMES) == 44 == len(set(LED_NAMES))
    assert {"point.1", "point.24", "bar.1", "off.2", "cube.centre", "cube.1.2", "cube.2.64", "turn.2", "status"} <= set(
        LED_NAMES
    )


def test_colour_indices_are_the_firmware_palette_indices() -> None:
    assert [c.value for c in Colour] == list(range(11))
    assert Colour.RED.rgb == protocol.DEFAULT_PALETTE[1] == (255, 0, 0)
    assert Colour.AMBER.value == protocol.SAFE_COLOUR
    assert TEST.colour.value == protocol.TEST_COLOUR


def test_colours_and_patterns_parse_as_people_write_them() -> None:
    assert Colour.parse("Warm White") is Colour.WARM_WHITE
    assert Colour.parse("warm-white") is Colour.WARM_WHITE
    assert Pattern.parse("fast_blink") is Pattern.FAST_BLINK
    assert Light.parse("red fast blink") == Light(Colour.RED, Pattern.FAST_BLINK)
    assert Light.parse("warm white slow pulse") == Light(Colour.WARM_WHITE, Pattern.SLOW_PULSE)
    assert str(Light(Colour.GREEN, Pattern.BLINK)) == "green blink"


@pytest.mark.parametrize(
    ("text", "words"),
    [("mauve", r"'mauve' is not a light: write a colour \(off, red, "), ("red wobble", "no pattern named 'wobble'")],
)
def test_unknown_colours_and_patterns_are_refused_by_name(text: str, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        Light.parse(text)


def test_a_scene_refuses_an_unknown_led_and_suggests_the_closest_name() -> None:
    with pytest.raises(ValueError, match=r"no LED is named 'piont.7' \(did you mean 'point.7'\?\)"):
        Scene({"piont.7": "red"})


def test_a_scene_is_immutable_and_equal_scenes_are_equal() -> None:
    a = Scene({"point.3": "red fast blink", "turn.1": Light(Colour.WARM_WHITE)})
    b = Scene({"turn.1": (Colour.WARM_WHITE, Pattern.STEADY), "point.3": ("red", "fast blink"), "point.4": "off"})
    assert a == b and hash(a) == hash(b)
    assert a.names == ("point.3", "turn.1")
    with pytest.raises(AttributeError):
        a.brightness = 3  # type: ignore[misc]
    with pytest.raises(TypeError):
        a["point.5"] = Light(Colour.RED)  # type: ignore[index]
    changed = a.with_lights({"point.3": None, "status": "green"})
    assert changed.names == ("turn.1", "status") and a.names == ("point.3", "turn.1")
    assert a.with_brightness(10) != a


def test_brightness_must_be_a_byte() -> None:
    with pytest.raises(ValueError, match="brightness is 0-255"):
        Scene({}, brightness=300)


def test_to_chain_puts_colour_and_pattern_in_each_leds_byte_at_its_chain_position() -> None:
    layout = LedLayout.standard()
    chain = Scene({"point.1": "red fast blink", "status": "green", "cube.2.64": "white blink"}).to_chain(layout)
    assert len(chain) == layout.length
    assert chain[layout.indices("point.1")[0]] == 0x12
    assert chain[layout.status_index] == 0x20
    assert chain[layout.indices("cube.2.64")[0]] == 0x51
    assert sum(1 for b in chain if b) == 3


def test_all_lights_every_led() -> None:
    chain = Scene.all("blue").to_chain(LedLayout.standard())
    assert set(chain) == {0x30}


def test_pattern_on_off_follows_the_firmware_rates() -> None:
    assert all(Pattern.STEADY.is_on(t) for t in (0, 123, 999))
    assert Pattern.BLINK.is_on(100) and not Pattern.BLINK.is_on(600)
    assert Pattern.FAST_BLINK.is_on(100) and not Pattern.FAST_BLINK.is_on(130)
    assert Pattern.BLINK.period_ms == protocol.BLINK_MS


def test_led_name_helpers_refuse_what_the_board_does_not_have() -> None:
    assert point_led(24) == "point.24"
    assert cube_led(64, 2) == "cube.2.64" and cube_led(1, None) == "cube.centre"
    for bad in (lambda: point_led(25), lambda: cube_led(3, 1), lambda: cube_led(128, 1), lambda: cube_led(2, 3)):
        with pytest.raises(ValueError):
            bad()
