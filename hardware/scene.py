# SPDX-License-Identifier: MIT
"""What the board's LEDs should show: named LEDs, colours, patterns, and immutable scenes.

Every LED has a name that says what it stands for, never where it sits in the chain (a
:class:`~hardware.layout.LedLayout` maps names to chain positions):

- ``point.1`` ... ``point.24``: the light beside each point, in player 1's numbering;
- ``bar.1``, ``bar.2``: each player's half of the bar;
- ``off.1``, ``off.2``: each player's bear-off tray;
- ``cube.centre``: the doubling track's centre circle (the cube at 1, or 64 centred);
- ``cube.1.2`` ... ``cube.1.64``, ``cube.2.2`` ... ``cube.2.64``: the track's circles on each
  owner's side;
- ``turn.1``, ``turn.2``: whose turn it is;
- ``status``: the controller's own light (the firmware pulses it amber when the link is lost).

Colours are indices into the device's 16-colour palette and patterns are animated by the
device itself, so a scene is a few bytes and blinking stays smooth whatever the host does.

>>> scene = Scene({"point.6": ILLEGAL, "turn.1": TURN})
>>> scene["point.6"]
Light(colour=Colour.RED, pattern=Pattern.FAST_BLINK)
>>> scene.with_lights({"point.6": None}).names
('turn.1',)
>>> Light.parse("warm white")
Light(colour=Colour.WARM_WHITE, pattern=Pattern.STEADY)
"""

from __future__ import annotations

import difflib
import enum
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Protocol, TypeVar

from firmware_bridge import protocol
from firmware_bridge.messages import led_byte

if TYPE_CHECKING:
    from hardware.layout import LedLayout

# -- the names ---------------------------------------------------------------------------------

#: The doubling track's values on each owner's side, from the centre outwards.
CUBE_VALUES: Final = (2, 4, 8, 16, 32, 64)
#: The seats at the table: player 1 (whose numbering names the points) and player 2.
SEATS: Final = (1, 2)

POINT_LEDS: Final = tuple(f"point.{n}" for n in range(1, 25))
BAR_LEDS: Final = ("bar.1", "bar.2")
OFF_LEDS: Final = ("off.1", "off.2")
CUBE_CENTRE: Final = "cube.centre"
CUBE_LEDS: Final = (CUBE_CENTRE, *(f"cube.{seat}.{v}" for seat in SEATS for v in CUBE_VALUES))
TURN_LEDS: Final = ("turn.1", "turn.2")
STATUS: Final = "status"

#: Every LED a layout must place, in a fixed order (points, bar, trays, cube track, turn, status).
LED_NAMES: Final = (*POINT_LEDS, *BAR_LEDS, *OFF_LEDS, *CUBE_LEDS, *TURN_LEDS, STATUS)
_KNOWN: Final = frozenset(LED_NAMES)


def _seat(seat: int) -> int:
    if seat not in SEATS:
        raise ValueError(f"a seat is 1 or 2 (player 1 or player 2), not {seat!r}")
    return seat


def point_led(point: int) -> str:
    """The light beside ``point`` (1-24, player 1's numbering)."""
    if not isinstance(point, int) or not 1 <= point <= 24:
        raise ValueError(f"a point is 1-24, not {point!r}")
    return f"point.{point}"


def bar_led(seat: int) -> str:
    """The light of player ``seat``'s half of the bar."""
    return f"bar.{_seat(seat)}"


def off_led(seat: int) -> str:
    """The light of player ``seat``'s bear-off tray."""
    return f"off.{_seat(seat)}"


def turn_led(seat: int) -> str:
    """Player ``seat``'s turn light."""
    return f"turn.{_seat(seat)}"


def cube_led(value: int, seat: int | None) -> str:
    """The doubling-track light for a cube at ``value`` owned by ``seat`` (``None``: centred).

    The centre circle stands for the cube at 1 (and 64, printed on the same face), so a centred
    cube always lights it; an owned cube lights its value on the owner's side.
    """
    if seat is None:
        return CUBE_CENTRE
    if value not in CUBE_VALUES:
        raise ValueError(f"the track's circles on each side are {', '.join(map(str, CUBE_VALUES))}, not {value!r}")
    return f"cube.{_seat(seat)}.{value}"


def is_led_name(name: object) -> bool:
    """Whether ``name`` is one of :data:`LED_NAMES`."""
    return name in _KNOWN


def check_led_name(name: object) -> str:
    """``name`` if it names an LED, else a ``ValueError`` that suggests the closest name."""
    if isinstance(name, str) and name in _KNOWN:
        return name
    close = difflib.get_close_matches(str(name), LED_NAMES, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise ValueError(
        f"no LED is named {name!r}{hint}; the names are point.1-24, bar.1/2, off.1/2, cube.centre,"
        " cube.1.2-64, cube.2.2-64, turn.1/2 and status"
    )


# -- colours and patterns ----------------------------------------------------------------------


def _words(text: str) -> str:
    return " ".join(text.replace("_", " ").replace("-", " ").lower().split())


class _Worded(Protocol):
    @property
    def words(self) -> str: ...


_Named = TypeVar("_Named", bound=_Worded)


def _by_words(members: Iterable[_Named], text: str, kind: str) -> _Named:
    """The member whose name, in words, is ``text``'s (case, ``_`` and ``-`` do not matter)."""
    wanted = _words(text)
    choices = list(members)
    for member in choices:
        if member.words == wanted:
            return member
    raise ValueError(f"no {kind} named {text!r}; the {kind}s are {', '.join(m.words for m in choices)}")


class Colour(enum.IntEnum):
    """A colour of the device's default palette; the value is the palette index (0 is dark)."""

    OFF = protocol.COLOUR_OFF
    RED = 1
    GREEN = 2
    BLUE = 3
    AMBER = 4
    WHITE = 5
    YELLOW = 6
    CYAN = 7
    MAGENTA = 8
    PURPLE = 9
    WARM_WHITE = 10

    @property
    def rgb(self) -> tuple[int, int, int]:
        """The colour's red, green and blue in the default palette."""
        return protocol.DEFAULT_PALETTE[self.value]

    @property
    def words(self) -> str:
        """The name as people write it: ``warm white``."""
        return _words(self.name)

    @classmethod
    def parse(cls, text: str) -> Colour:
        """A colour from its name: ``"red"``, ``"Warm White"``, ``"warm_white"``, ``"warm-white"``."""
        return _by_words(cls, text, "colour")

    def __repr__(self) -> str:
        return f"Colour.{self.name}"


class Pattern(enum.IntEnum):
    """How the device animates an LED (the numbers are the protocol's)."""

    STEADY = protocol.PATTERN_STEADY
    #: 1 Hz, half on.
    BLINK = protocol.PATTERN_BLINK
    #: 4 Hz, half on.
    FAST_BLINK = protocol.PATTERN_FAST_BLINK
    #: Brightness rising and falling over 1.5 s.
    PULSE = protocol.PATTERN_PULSE
    #: The same over 3 s.
    SLOW_PULSE = protocol.PATTERN_SLOW_PULSE

    @property
    def period_ms(self) -> int:
        """One cycle of the animation in milliseconds (0 for steady)."""
        return _PERIODS[self]

    @property
    def words(self) -> str:
        """The name as people write it: ``fast blink``."""
        return _words(self.name)

    def is_on(self, t_ms: float) -> bool:
        """Whether an on/off LED that cannot dim is lit at time ``t_ms`` (bright half of a pulse)."""
        period = self.period_ms
        return period == 0 or t_ms % period < period / 2

    @classmethod
    def parse(cls, text: str) -> Pattern:
        """A pattern from its name: ``"steady"``, ``"fast blink"``, ``"slow_pulse"``."""
        return _by_words(cls, text, "pattern")

    def __repr__(self) -> str:
        return f"Pattern.{self.name}"


_PERIODS: Final = {
    Pattern.STEADY: 0,
    Pattern.BLINK: protocol.BLINK_MS,
    Pattern.FAST_BLINK: protocol.FAST_BLINK_MS,
    Pattern.PULSE: protocol.PULSE_MS,
    Pattern.SLOW_PULSE: protocol.SLOW_PULSE_MS,
}


@dataclass(frozen=True, slots=True)
class Light:
    """One LED's colour and pattern."""

    colour: Colour
    pattern: Pattern = Pattern.STEADY

    def __post_init__(self) -> None:
        # Accept plain ints from callers that work with palette indices, but store the enums.
        object.__setattr__(self, "colour", Colour(self.colour))
        object.__setattr__(self, "pattern", Pattern(self.pattern))

    @property
    def byte(self) -> int:
        """The LED's byte in a SET_SCENE: ``colour << 4 | pattern``."""
        return led_byte(self.colour, self.pattern)

    @property
    def is_off(self) -> bool:
        """Whether the LED is dark."""
        return self.colour is Colour.OFF

    @classmethod
    def parse(cls, text: str) -> Light:
        """A light from words: a colour, then optionally a pattern (``"red fast blink"``, ``"green"``)."""
        words = _words(text).split()
        for cut in range(len(words), 0, -1):
            try:
                colour = Colour.parse(" ".join(words[:cut]))
            except ValueError:
                continue
            rest = " ".join(words[cut:])
            return cls(colour, Pattern.parse(rest) if rest else Pattern.STEADY)
        colours = ", ".join(c.words for c in Colour)
        raise ValueError(
            f"{text!r} is not a light: write a colour ({colours}) and a pattern if not steady, e.g. 'red fast blink'"
        )

    def __str__(self) -> str:
        return self.colour.words if self.pattern is Pattern.STEADY else f"{self.colour.words} {self.pattern.words}"


#: The colours of what the board says; :class:`hardware.presenter.Theme` gathers them.
ILLEGAL: Final = Light(Colour.RED, Pattern.FAST_BLINK)
HINT_FROM: Final = Light(Colour.BLUE)
HINT_TO: Final = Light(Colour.GREEN, Pattern.BLINK)
CHECK: Final = Light(Colour.AMBER, Pattern.BLINK)
CUBE: Final = Light(Colour.WHITE)
CUBE_OFFERED: Final = Light(Colour.WHITE, Pattern.BLINK)
TURN: Final = Light(Colour.WARM_WHITE)
READY: Final = Light(Colour.GREEN)
#: The status light, all being well, in the hall's tournament mode (hints off).
TOURNAMENT: Final = Light(Colour.PURPLE, Pattern.SLOW_PULSE)
#: The self-test walk's colour, as the firmware's SELF_TEST uses.
TEST: Final = Light(Colour(protocol.TEST_COLOUR))

LightLike = Light | tuple[Colour | int | str, Pattern | int | str] | str | None


def as_light(value: LightLike) -> Light | None:
    """A :class:`Light` from a light, a ``(colour, pattern)`` pair or words; ``None`` stays dark."""
    if value is None or isinstance(value, Light):
        return value
    if isinstance(value, str):
        return Light.parse(value)
    colour, pattern = value
    return Light(
        Colour.parse(colour) if isinstance(colour, str) else Colour(colour),
        Pattern.parse(pattern) if isinstance(pattern, str) else Pattern(pattern),
    )


# -- scenes ------------------------------------------------------------------------------------


class Scene(Mapping[str, Light]):
    """An immutable mapping of LED names to lights, with a brightness (0-255) for the whole board.

    LEDs not in the scene are dark; a light whose colour is ``OFF`` is dropped, so two scenes
    showing the same thing are equal. The device caps the brightness (``BRIGHTNESS_CAP``).

    :param lights: LED name -> :class:`Light`, ``(colour, pattern)`` or words like ``"red blink"``.
    :param brightness: 0-255, scales every colour.
    :raises ValueError: an unknown LED name, colour or pattern, or a brightness out of range.
    """

    __slots__ = ("_brightness", "_lights")

    _lights: dict[str, Light]
    _brightness: int

    def __init__(self, lights: Mapping[str, LightLike] | None = None, brightness: int = 255) -> None:
        if not isinstance(brightness, int) or isinstance(brightness, bool) or not 0 <= brightness <= 255:
            raise ValueError(f"brightness is 0-255, not {brightness!r}")
        checked: dict[str, Light] = {}
        for name, value in (lights or {}).items():
            light = as_light(value)
            if light is not None and not light.is_off:
                checked[check_led_name(name)] = light
        ordered = {name: checked[name] for name in LED_NAMES if name in checked}
        object.__setattr__(self, "_lights", ordered)
        object.__setattr__(self, "_brightness", brightness)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("a Scene is immutable; use with_lights() or with_brightness()")

    def __getitem__(self, name: str) -> Light:
        return self._lights[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._lights)

    def __len__(self) -> int:
        return len(self._lights)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Scene):
            return self._lights == other._lights and self._brightness == other._brightness
        return NotImplemented

    def __hash__(self) -> int:
        return hash((tuple(self._lights.items()), self._brightness))

    def __repr__(self) -> str:
        inner = ", ".join(f"{name!r}: {str(light)!r}" for name, light in self._lights.items())
        return f"Scene({{{inner}}}, brightness={self._brightness})"

    @property
    def brightness(self) -> int:
        """0-255 for the whole board."""
        return self._brightness

    @property
    def names(self) -> tuple[str, ...]:
        """The lit LEDs, in :data:`LED_NAMES` order."""
        return tuple(self._lights)

    def light(self, name: str) -> Light | None:
        """The light of LED ``name``, or ``None`` when it is dark."""
        return self._lights.get(check_led_name(name))

    def with_lights(self, lights: Mapping[str, LightLike]) -> Scene:
        """A new scene with ``lights`` set over these (``None`` darkens an LED)."""
        merged: dict[str, LightLike] = dict(self._lights)
        merged.update(lights)
        return Scene(merged, self._brightness)

    def with_brightness(self, brightness: int) -> Scene:
        """The same lights at another brightness."""
        return Scene(self._lights, brightness)

    def to_chain(self, layout: LedLayout) -> list[int]:
        """One LED byte per LED of ``layout``'s chain (``colour << 4 | pattern``; 0 is dark).

        :raises ValueError: the scene lights an LED the layout does not place.
        """
        chain = [0] * layout.length
        for name, light in self._lights.items():
            for index in layout.indices(name):
                chain[index] = light.byte
        return chain

    @classmethod
    def dark(cls, brightness: int = 255) -> Scene:
        """Every LED off."""
        return cls({}, brightness)

    @classmethod
    def all(cls, light: LightLike, brightness: int = 255) -> Scene:
        """Every LED showing the same ``light`` (the colour test)."""
        return cls(dict.fromkeys(LED_NAMES, light), brightness)
