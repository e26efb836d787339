# SPDX-License-Identifier: MIT
"""Game state and the judge's verdict in, a :class:`~hardware.scene.Scene` out.

Pure functions: the same state always gives the same scene, so tests compare scenes directly.

What the board shows, most urgent first on any one LED:

1. an illegal move: the points the judge marked, fast-blinking red (``Judgement.marks``);
2. "please check": a doubtful reading, amber; the status light says it even when no point is named;
3. a hint: the points the checkers leave in blue, the points they land on in blinking green;
4. the doubling track at the cube's value on its owner's side, white (the centre while it is
   centred); while a double is offered, the circle the cube goes to if it is taken blinks;
5. the turn light of the player who must act (both before the opening roll; the winner's
   pulses when a game is over);
6. the status light: green when all is well, red while a move is illegal, amber to check.

The engine numbers the players 0 and 1 (as gnubg does); the board's LEDs are named after the
seats, player 1 (whose numbering names the points) and player 2. ``bottom_player`` says which
engine player sits at seat 1; by default engine player 1, gnubg's bottom player.

>>> from engine.judge import Judgement
>>> from engine.match import MatchState, OpeningRoll
>>> state = MatchState.new_match(7).apply(OpeningRoll(3, 1))   # player 0 rolled the 3: he plays 3-1
>>> scene = present(state, Judgement("illegal", marks=(8, 4)))
>>> [(name, str(light)) for name, light in scene.items()]
[('point.17', 'red fast blink'), ('point.21', 'red fast blink'), ('cube.centre', 'white'), \
('turn.2', 'warm white'), ('status', 'red fast blink')]
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from engine.cube import Cube
from engine.judge import Judgement
from engine.match import MatchState, Phase
from engine.play import Play
from engine.position import BAR, OFF
from hardware import scene as sc
from hardware.scene import CUBE_VALUES, Light, LightLike, Pattern, Scene


@dataclass(frozen=True, slots=True)
class Theme:
    """The light for each thing the board says; change one for a colour-blind player, say.

    >>> Theme.from_mapping({"hint_to": "cyan blink"}).hint_to
    Light(colour=Colour.CYAN, pattern=Pattern.BLINK)
    """

    illegal: Light = sc.ILLEGAL
    check: Light = sc.CHECK
    hint_from: Light = sc.HINT_FROM
    hint_to: Light = sc.HINT_TO
    cube: Light = sc.CUBE
    cube_offered: Light = sc.CUBE_OFFERED
    turn: Light = sc.TURN
    ready: Light = sc.READY

    @classmethod
    def from_mapping(cls, values: dict[str, LightLike]) -> Theme:
        """A theme from ``{role: light}`` (config), e.g. ``{"illegal": "magenta fast blink"}``.

        :raises ValueError: an unknown role or a light that does not parse.
        """
        roles = cls.__dataclass_fields__
        changes: dict[str, Light] = {}
        for role, value in values.items():
            if role not in roles:
                raise ValueError(f"no LED role {role!r}; the roles are {', '.join(roles)}")
            light = sc.as_light(value)
            if light is None or light.is_off:
                raise ValueError(f"the {role} light cannot be dark")
            changes[role] = light
        return cls(**changes)


DEFAULT_THEME: Final = Theme()


def seat_of(player: int, bottom_player: int = 1) -> int:
    """The seat (1 or 2) of engine player ``player`` (0 or 1)."""
    if player not in (0, 1) or bottom_player not in (0, 1):
        raise ValueError(f"engine players are 0 and 1, not {player!r} (bottom player {bottom_player!r})")
    return 1 if player == bottom_player else 2


def mover_led(point: int, seat: int) -> str:
    """The LED of ``point`` in the mover's numbering (25 bar, 0 off) for the mover at ``seat``."""
    if point == BAR:
        return sc.bar_led(seat)
    if point == OFF:
        return sc.off_led(seat)
    if not 1 <= point <= 24:
        raise ValueError(f"a point is 0 (off), 1-24 or 25 (bar), not {point!r}")
    return sc.point_led(point if seat == 1 else 25 - point)


def hint_points(play: Play) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The points a play's checkers leave and land on, in the mover's numbering, high to low.

    A point a checker only passes through (``13/7/5``'s 7) is neither.

    >>> hint_points(Play.parse("13/7 7/5 6/5"))
    ((13, 6), (5,))
    """
    net: Counter[int] = Counter()
    for step in play:
        net[step.source] -= 1
        net[step.dest] += 1
    leave = tuple(sorted((p for p, n in net.items() if n < 0), reverse=True))
    land = tuple(sorted((p for p, n in net.items() if n > 0), reverse=True))
    return leave, land


def _on_track(value: int) -> int:
    return min(max(value, CUBE_VALUES[0]), CUBE_VALUES[-1])


def scene_for(
    *,
    mover: int | None,
    turn: int | None = None,
    cube: Cube | None = None,
    offered: bool = False,
    judgement: Judgement | None = None,
    hint: Play | None = None,
    check: bool | Iterable[int | str] = False,
    winner: int | None = None,
    opening: bool = False,
    bottom_player: int = 1,
    theme: Theme = DEFAULT_THEME,
    brightness: int = 255,
) -> Scene:
    """The scene for a board described piece by piece (what :func:`present` reads off a match).

    :param mover: the engine player (0 or 1) whose numbering the judgement's marks and the hint
        use (the player on roll), or ``None`` when nobody is on roll.
    :param turn: the engine player who must act now (lit turn light); default ``mover``.
    :param cube: the cube's value and owner (engine players); default centred at 1.
    :param offered: a double is on offer (by ``mover``), waiting for take or drop.
    :param judgement: the judge's verdict on the board as it stands: ``illegal`` lights its
        marks; ``unreadable`` asks to check.
    :param hint: a play to show (from-points and to-points), in the mover's numbering.
    :param check: the reading is doubtful: ``True``, or the points to check (player 1's
        numbering, 1-24) and LED names.
    :param winner: the engine player who won the game just over (his turn light pulses).
    :param opening: before the opening roll: both players act, both turn lights are on.
    :param bottom_player: the engine player at seat 1 (the layout's player 1).
    :param theme: the light for each role.
    :param brightness: 0-255, the whole scene's.
    """
    lights: dict[str, Light] = {}
    mover_seat = None if mover is None else seat_of(mover, bottom_player)
    turn = mover if turn is None else turn

    # Lowest priority first; later roles overwrite earlier ones on a shared LED.
    if opening:
        lights[sc.turn_led(1)] = lights[sc.turn_led(2)] = theme.turn
    elif winner is not None:
        lights[sc.turn_led(seat_of(winner, bottom_player))] = Light(theme.turn.colour, Pattern.PULSE)
    elif turn is not None:
        lights[sc.turn_led(seat_of(turn, bottom_player))] = theme.turn

    cube = Cube() if cube is None else cube
    if offered and mover_seat is not None:
        taker = 3 - mover_seat
        lights[sc.cube_led(_on_track(cube.value * 2), taker)] = theme.cube_offered
    elif cube.owner is None or cube.value == 1:
        lights[sc.CUBE_CENTRE] = theme.cube
    else:
        lights[sc.cube_led(_on_track(cube.value), seat_of(cube.owner, bottom_player))] = theme.cube

    if hint is not None:
        if mover_seat is None:
            raise ValueError("a hint needs the mover: its points are in his numbering")
        leave, land = hint_points(hint)
        for point in leave:
            lights[mover_led(point, mover_seat)] = theme.hint_from
        for point in land:
            lights[mover_led(point, mover_seat)] = theme.hint_to

    status = theme.ready
    to_check: tuple[int | str, ...] = () if isinstance(check, bool) else tuple(check)
    if check is True or to_check or (judgement is not None and judgement.verdict == "unreadable"):
        status = theme.check
        for item in to_check:
            lights[_check_led(item)] = theme.check

    if judgement is not None and judgement.verdict == "illegal":
        status = theme.illegal
        if mover_seat is None:
            raise ValueError("an illegal move needs the mover: the judge's marks are in his numbering")
        for point in judgement.marks:
            lights[mover_led(point, mover_seat)] = theme.illegal

    lights[sc.STATUS] = status
    return Scene(lights, brightness)


def in_tournament(scene: Scene) -> Scene:
    """``scene`` with the status light saying tournament mode (hints off) while all is well:
    an illegal move or a check keeps its own status light.

    >>> str(in_tournament(Scene({"status": sc.READY}))["status"])
    'purple slow pulse'
    """
    if scene.get(sc.STATUS) != sc.READY:
        return scene
    return Scene({**scene, sc.STATUS: sc.TOURNAMENT}, scene.brightness)


def _check_led(item: int | str) -> str:
    if isinstance(item, int) and not isinstance(item, bool):
        return sc.point_led(item)
    return sc.check_led_name(item)


def present(
    state: MatchState,
    judgement: Judgement | None = None,
    hint: Play | None = None,
    check: bool | Iterable[int | str] = False,
    *,
    bottom_player: int = 1,
    theme: Theme = DEFAULT_THEME,
    brightness: int = 255,
) -> Scene:
    """The scene for a match: turn, cube, and whatever the judge, the hint engine or the reader add.

    :param state: the match as it stands (whose turn, the cube, a double on offer).
    :param judgement: the verdict on the board as read now, if any (see :func:`scene_for`).
    :param hint: a play to show the player on roll.
    :param check: the reading is doubtful (``True``, or points in player 1's numbering / LED names).
    :param bottom_player: the engine player at seat 1.
    """
    winner = None
    if state.is_over() and state.last_result is not None:
        winner = state.last_result.winner
    return scene_for(
        mover=state.on_roll,
        turn=state.turn,
        cube=state.cube,
        offered=state.phase is Phase.DOUBLED,
        judgement=judgement,
        hint=hint,
        check=check,
        winner=winner,
        opening=state.phase is Phase.OPENING,
        bottom_player=bottom_player,
        theme=theme,
        brightness=brightness,
    )
