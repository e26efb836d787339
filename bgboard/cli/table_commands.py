# SPDX-License-Identifier: MIT
"""``bgboard demo``, ``referee``, ``play`` and ``replay``: a match at a table, real or rendered,
refereed from the camera's frames; with gnubg playing one side, the hall's publisher and the
live page as the options ask."""

from __future__ import annotations

import os
import sys
import threading
from typing import TYPE_CHECKING, TextIO

from bgboard.cli.options import (
    bind_address,
    broker_url,
    config_file,
    counting,
    folder_name,
    grey_levels,
    positive,
    seed,
    speed,
    table_name,
)
from bgboard.errors import CliError, UsageError

if TYPE_CHECKING:
    import argparse

    from bgboard.cli.options import Subparsers
    from bgboard.config import Config, HallConfig
    from bgboard.hall.topics import BrokerUrl
    from bgboard.session import SessionOptions


def register(sub: Subparsers, *names: str) -> None:
    """Add the commands named to ``sub`` (all of them when none is): demo, referee, play, replay."""
    commands = {"demo": _add_demo, "referee": _add_referee, "play": _add_play, "replay": _add_replay}
    for name in names or commands:
        commands[name](sub)


# -- what the table's session attaches: gnubg, the hall, the live page ------------------------


def _against_options(p: argparse.ArgumentParser, what: str, *, required: bool = False) -> None:
    """``--against gnubg``, ``--level`` and ``--side``: gnubg playing one side."""
    from engine.opponent import LEVELS

    p.add_argument("--against", choices=("gnubg",), required=required, help=f"{what}GNU Backgammon plays one side")
    p.add_argument(
        "--level",
        choices=tuple(LEVELS),
        help="gnubg's level, its own plies and noise (default expert): "
        + ", ".join(str(level) for level in LEVELS.values()),
    )
    p.add_argument(
        "--side",
        type=int,
        choices=(1, 2),
        help="the side you play (default 1, the first player, at the bottom of the camera's view); "
        "gnubg plays the other",
    )


def _against(args: argparse.Namespace) -> tuple[str, int] | None:
    """gnubg's level and the side it plays (1 or 2), or None without ``--against``.

    :raises UsageError: ``--level`` or ``--side`` without ``--against``: they would be ignored.
    """
    if getattr(args, "against", None) is None:
        given = [flag for flag in ("level", "side") if getattr(args, flag, None) is not None]
        if given:
            flags = " and ".join(f"--{flag}" for flag in given)
            verb = "goes" if len(given) == 1 else "go"
            raise UsageError(f"{flags} {verb} with --against gnubg: without it nobody plays gnubg's side")
        return None
    return args.level or "expert", 3 - (args.side or 1)


def _publish_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--publish",
        type=broker_url,
        metavar="mqtt://HOST:PORT",
        help="publish every stored action and the table's state to the hall's MQTT broker (docs/hall.md)",
    )
    p.add_argument("--table", type=table_name, help="this table's name in the hall (with --publish)")


def _hall_for(args: argparse.Namespace, hall: HallConfig | None = None) -> tuple[BrokerUrl | None, str]:
    """Where to publish and as which table: ``--publish`` and ``--table``, else the config's
    ``[hall]`` ``broker`` and ``table`` (the Pi's service takes them from there).

    :raises UsageError: a broker without a table name, or ``--table`` without a broker.
    :raises CliError: the config's broker is no ``mqtt://`` URL, or its table no usable name.
    """
    from bgboard.errors import PublishError
    from bgboard.hall.topics import BrokerUrl, check_table_name

    url, table = args.publish, args.table
    if hall is not None:
        try:
            if url is None and hall.broker:
                url = BrokerUrl.parse(hall.broker)
            if table is None and hall.table:
                table = check_table_name(hall.table)
        except PublishError as exc:
            raise CliError(f"[hall] in the config: {exc}") from None
    if url is not None and table is None:
        raise UsageError(
            "--publish needs --table NAME (or hall.table in the config): the name the hall shows this table under"
        )
    if url is None and args.table is not None:
        raise UsageError("--table names this table in the hall: it goes with --publish mqtt://HOST:PORT")
    return url, str(table or "") if url is not None else ""


def _session_options(
    args: argparse.Namespace, against: tuple[str, int] | None, hall: HallConfig | None = None
) -> SessionOptions:
    """What the table's session attaches for ``referee``, ``play`` and ``demo``: gnubg as the
    opponent, the hall's publisher (from the flags or the config's ``[hall]``), the live page."""
    from bgboard.session import SessionOptions

    url, table = _hall_for(args, hall)
    publish = page = None
    if url is not None:
        from bgboard.hall.publish import Publishing

        publish = Publishing(url, table, report=args.command == "demo")
    if args.web is not None:
        from bgboard.web.server import LivePage

        page = LivePage(args.web)
    return SessionOptions(teach=bool(getattr(args, "teach", False)), against=against, publish=publish, page=page)


# -- demo ------------------------------------------------------------------------------------


def _add_demo(sub: Subparsers) -> None:
    p = sub.add_parser("demo", help="referee a real game on a rendered board", description=cmd_demo.__doc__)
    p.add_argument("--json", action="store_true", help="print the events as JSON Lines")
    p.add_argument(
        "--leds",
        choices=("terminal", "sim", "none"),
        default="terminal",
        help="draw the LEDs in the terminal (default), drive the real firmware in simavr, or none",
    )
    p.add_argument(
        "--out", type=folder_name, help="folder for the match store and the .mat file (default: a new temp folder)"
    )
    p.add_argument("--seed", type=seed, default=7, help="seed for the frames' details and the wrong move (default 7)")
    p.add_argument("--fps", type=positive, default=5.0, help="frames a second of the simulated camera (default 5)")
    p.add_argument(
        "--noise", type=grey_levels, default=2.0, help="sensor noise of still frames, grey levels (default 2)"
    )
    p.add_argument("--moves", type=counting, help="stop after this many moves (default: the whole game)")
    p.add_argument(
        "--teach",
        action="store_true",
        help="teach mode: gnubg's best play lit after each roll, its verdict on each move",
    )
    _against_options(p, "a new game against gnubg instead of the recorded one: ")
    _publish_options(p)
    p.add_argument(
        "--web",
        type=bind_address,
        metavar="HOST:PORT",
        help="serve the live page there (localhost unless HOST names another address); stays up after the game",
    )
    p.add_argument(
        "--speed",
        type=speed,
        help="seconds of the camera's clock per real second, 0 as fast as possible (default: 1 with --web, else 0)",
    )
    p.set_defaults(func=cmd_demo)


def cmd_demo(args: argparse.Namespace, out: TextIO) -> int:
    """Play a real game again on a rendered board: bgboard reads, judges and records it from
    the camera frames, lights the LEDs, and writes the match as a .mat file."""
    from bgboard.sim.demo import run_demo
    from bgboard.web.server import BindError
    from firmware_bridge.emulator import EmulatorError

    if args.out is not None and args.out.exists() and not args.out.is_dir():
        raise CliError(f"--out {args.out} is a file, not a folder: name a folder for the store and the .mat file")
    try:
        return run_demo(
            speed=args.speed,
            linger=True,
            json_lines=args.json,
            out=out,
            leds=args.leds,
            out_dir=args.out,
            seed=args.seed,
            fps=args.fps,
            noise=args.noise,
            moves=args.moves,
            session=_session_options(args, _against(args)),
        )
    except EmulatorError as exc:
        raise CliError(f"--leds sim: {exc}") from None
    except BindError as exc:
        raise CliError(f"--web: {exc}") from None


# -- at the table: referee, play and replay --------------------------------------------------


def _load_config(args: argparse.Namespace) -> Config:
    """The config in force, its notices (a renamed key, and what to write instead) said on stderr."""
    from bgboard.config import load_config

    config = load_config(config_file(args))
    for notice in config.notices:
        print(f"bgboard: note: {notice}", file=sys.stderr)
    return config


def _setup_failed(exc: Exception) -> int:
    """A setting that keeps the command from starting: exit status 2, as for a usage error."""
    print(f"bgboard: error: {exc}", file=sys.stderr)
    return 2


def _referee_options(p: argparse.ArgumentParser) -> None:
    """The options of ``referee`` and ``play``."""
    p.add_argument("--config", help="the config file (default: $BGBOARD_CONFIG, ~/.config/bgboard/config.toml)")
    p.add_argument("--camera", help="the frame source (camera.source): picamera2:, v4l2:///dev/video0, video:FILE")
    p.add_argument(
        "--profile",
        help="the board's calibration profile (camera.profile); with --web it may not exist yet:"
        " the live page's calibration view calibrates the board and writes it",
    )
    p.add_argument("--leds", help="the LED panel (leds.panel): none, terminal, serial:/dev/ttyUSB0, gpio595:...")
    p.add_argument("--store", help="the match store (store.path)")
    p.add_argument("--mode", choices=("referee", "log"), help="judge every move, or only record (match.mode)")
    p.add_argument("--length", help="points to win the match, 0 for money (match.length)")
    p.add_argument(
        "--players",
        help='the players\' names, "Ann,Bob" (match.players); with --against gnubg, yours alone will do',
    )
    p.add_argument("--resume", action="store_true", help="carry on with the last unfinished match in the store")
    p.add_argument(
        "--teach",
        action="store_true",
        help="light gnubg's best play after each roll and say its verdict on each move (match.teach)",
    )
    p.add_argument("--json", action="store_true", help="print the events as JSON Lines")
    _publish_options(p)
    p.add_argument(
        "--web",
        type=bind_address,
        metavar="HOST:PORT",
        help="serve the live page there, with its calibration view (localhost unless HOST names another address)",
    )


def _add_referee(sub: Subparsers) -> None:
    p = sub.add_parser("referee", help="referee and record a match at the table", description=cmd_referee.__doc__)
    _referee_options(p)
    p.set_defaults(func=cmd_referee)


def cmd_referee(args: argparse.Namespace, out: TextIO) -> int:
    """Referee and record a match at the table until it ends or Ctrl-C (SIGINT/SIGTERM).

    Reads the camera, the buttons and commands typed at the keyboard (done, undo, double, take,
    drop, hint, resign, accept, reject, dice 52, correct 13/8 13/11); prints one line per event.
    """
    import signal

    main_thread = threading.current_thread() is threading.main_thread()
    stop = threading.Event()
    previous = {}
    if main_thread:
        # Ctrl-C or systemd's stop ends the match cleanly: store closed, LEDs dark. Set first,
        # before the camera stack loads, so that a stop at any moment is a clean one.
        previous = {number: signal.signal(number, lambda *_: stop.set()) for number in (signal.SIGINT, signal.SIGTERM)}
    try:
        return _referee(args, out, stop, main_thread)
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def _referee(args: argparse.Namespace, out: TextIO, stop: threading.Event, main_thread: bool) -> int:
    from bgboard.camera import stuck_threads
    from bgboard.config import ConfigError
    from bgboard.errors import SetupError, StoppedError
    from bgboard.referee import Referee, RefereeOptions

    against = _against(args)
    players = args.players
    if against is not None and players is not None and "," not in players:
        # Against gnubg one name is enough: the person's; gnubg is the other player.
        names = [players.strip(), "gnubg"] if against[1] == 2 else ["gnubg", players.strip()]
        players = ",".join(names)
    # Each override, the flag that gives it (errors name the flag), and its value.
    flags = {
        "camera_source": ("--camera", args.camera),
        "camera_profile": ("--profile", args.profile),
        # "none", as the demo takes it: no LEDs wired, the scenes kept and shown nowhere.
        "leds_panel": ("--leds", "fake" if args.leds == "none" else args.leds),
        "store_path": ("--store", args.store),
        "match_mode": ("--mode", args.mode),
        "match_length": ("--length", args.length),
        "match_players": ("--players", players),
        "match_teach": ("--teach", True if args.teach else None),
    }
    given = {name.replace("_", ".", 1): flag for name, (flag, value) in flags.items() if value is not None}
    if stop.is_set():
        return 0  # stopped while starting: nothing was recorded
    try:
        config = _load_config(args).with_overrides(
            flag_names={name: flag for name, (flag, _) in flags.items()},
            **{name: value for name, (_, value) in flags.items()},
        )
        referee = Referee(
            config,
            out=out,
            options=RefereeOptions(json_lines=args.json, resume=args.resume, stdin=sys.stdin, given=given, stop=stop),
            session=_session_options(args, against, config.hall),
        )
    except StoppedError:
        status = 0
    except (ConfigError, SetupError) as exc:
        status = _setup_failed(exc)
    else:
        status = referee.run(stop)
    if main_thread and stuck_threads():
        # A camera driver that never returned: Python's exit would abort inside it, so the
        # process ends here, everything else being closed already.
        out.flush()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)
    return status


def _add_play(sub: Subparsers) -> None:
    p = sub.add_parser(
        "play", help="play a match against GNU Backgammon at the real board", description=cmd_play.__doc__
    )
    _against_options(p, "", required=True)
    _referee_options(p)
    p.set_defaults(func=cmd_play)


def cmd_play(args: argparse.Namespace, out: TextIO) -> int:
    """Play a match against GNU Backgammon at the real board, refereed and recorded as by
    bgboard referee: you roll real dice for both sides, gnubg's move lights up (from-points
    blue, to-points green) and you move its checkers; the camera checks that the board shows
    its move. gnubg doubles, takes, drops and resigns itself; its cube action shows on the cube
    LEDs and is said. Until Ctrl-C (SIGINT/SIGTERM) or the end of the match."""
    return cmd_referee(args, out)


def _add_replay(sub: Subparsers) -> None:
    p = sub.add_parser("replay", help="run recorded frames through the referee", description=cmd_replay.__doc__)
    p.add_argument("source", help="a folder of photos (name order), a video file, or a frame-source URL")
    p.add_argument("--profile", help="the board's calibration profile (default: camera.profile)")
    p.add_argument("--config", help="the config file (match settings, settle time)")
    p.add_argument("--fps", type=positive, help="frames a second (default: the frames' own times; images 10 a second)")
    p.add_argument("--mode", choices=("referee", "log"), help="judge every move, or only record (match.mode)")
    p.add_argument(
        "--hold", type=positive, help="show each photo for this many seconds (a folder with one photo per scene)"
    )
    p.add_argument("--store", help="record into this match store (default: nothing is stored)")
    p.add_argument("--json", action="store_true", help="print the events as JSON Lines")
    p.set_defaults(func=cmd_replay)


def cmd_replay(args: argparse.Namespace, out: TextIO) -> int:
    """Run recorded frames (a folder of photos, a video file, a frame-source URL) through the
    referee's pipeline; print the events and a summary. Nothing is stored unless --store is given."""
    from bgboard.config import ConfigError
    from bgboard.referee import SetupError
    from bgboard.replay import replay

    try:
        config = _load_config(args).with_overrides(camera_profile=args.profile, match_mode=args.mode)
        replay(
            args.source,
            config,
            out=out,
            json_lines=args.json,
            fps=args.fps,
            store_path=args.store,
            hold=args.hold,
            profile_name="--profile" if args.profile is not None else "camera.profile",
        )
    except (ConfigError, SetupError) as exc:
        return _setup_failed(exc)
    return 0
