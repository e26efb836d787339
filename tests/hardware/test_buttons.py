# SPDX-License-Identifier: MIT
"""Buttons on GPIO, pressed on gpiozero's mock pins."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hardware_fakes import mock_pins

from hardware.buttons import BUTTON_NAMES, ButtonPanel, Press, parse_button_pins
from hardware.gpio import GpioError
from hardware.panels import PanelAddressError

PINS = {"done": 5, "undo": 6, "double": 13, "take": 19, "drop": 26, "hint": 21}


@pytest.fixture
def mock_factory() -> Iterator[Any]:
    """gpiozero on mock pins."""
    yield from mock_pins()


def _press(factory: Any, pin: int) -> None:
    factory.pin(pin).drive_low()
    factory.pin(pin).drive_high()


def test_each_press_is_queued_by_name_in_order(mock_factory: Any) -> None:
    with ButtonPanel(PINS, bounce_time=None) as buttons:
        assert buttons.names == BUTTON_NAMES
        assert buttons.get(timeout=0) is None
        _press(mock_factory, 13)
        _press(mock_factory, 5)
        first = buttons.get(timeout=1)
        assert isinstance(first, Press) and first.name == "double"
        assert [p.name for p in buttons.pending()] == ["done"]
        assert buttons.pending() == []


def test_buttons_use_the_internal_pull_up_so_a_press_pulls_the_pin_low(mock_factory: Any) -> None:
    with ButtonPanel("take=19,drop=26") as buttons:
        assert mock_factory.pin(19).state  # pulled up, not pressed
        assert not buttons.is_pressed("take")
        mock_factory.pin(19).drive_low()
        assert buttons.is_pressed("take")
        with pytest.raises(KeyError, match="no button 'hint' is wired"):
            buttons.is_pressed("hint")


def test_when_pressed_is_called_with_the_name(mock_factory: Any) -> None:
    seen: list[str] = []
    with ButtonPanel({"hint": 21, "undo": "GPIO6"}, when_pressed=seen.append) as buttons:
        _press(mock_factory, 6)
        _press(mock_factory, 21)
        assert seen == ["undo", "hint"]
        assert len(buttons.pending()) == 2


def test_a_release_is_not_a_press(mock_factory: Any) -> None:
    with ButtonPanel({"done": 5}) as buttons:
        mock_factory.pin(5).drive_low()
        mock_factory.pin(5).drive_high()
        mock_factory.pin(5).drive_high()
        assert [p.name for p in buttons.pending()] == ["done"]


def test_closing_releases_the_pins_for_the_next_panel(mock_factory: Any) -> None:
    ButtonPanel({"done": 5}).close()
    with ButtonPanel({"undo": 5}) as again:
        _press(mock_factory, 5)
        assert [p.name for p in again.pending()] == ["undo"]


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ({"confirm": 5}, "no button named 'confirm'; the buttons are done, undo"),
        ("done=5,undo=5", "buttons done and undo are both on pin 5"),
        ("done", "expected NAME=VALUE"),
    ],
)
def test_bad_button_maps_are_refused(spec: Any, words: str) -> None:
    with pytest.raises(PanelAddressError, match=words):
        parse_button_pins(spec)


def test_a_pin_already_in_use_is_a_gpio_error(mock_factory: Any) -> None:
    with ButtonPanel({"done": 5}), pytest.raises(GpioError, match="buttons: "):
        ButtonPanel({"undo": 5})
