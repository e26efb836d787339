# SPDX-License-Identifier: MIT
"""The broadcast overlay: a transparent page for a streaming program, and gnubg's chances.

``GET /overlay`` is a page with a transparent background, made to be laid over the table's
video in a streaming program's browser source (OBS, 1920 x 1080): the players' names, the
score and the match length, the pip counts, the cube, the last move, and gnubg's winning and
gammon chances as a bar, as chess broadcasts show. The page reads the live page's own stream
(``GET /api/events``, ``GET /api/state``) and ``GET /api/chances``; reading needs no token.

The chances come from an :class:`Evaluator`: a gnubg of its own
(:class:`engine.hints.GnubgHints`, gnubg's ``eval``) in a thread of its own, fed by a
subscription to the table's :class:`~bgboard.web.hub.WebHub` as a page is fed. The table's
thread only hands the hub's messages over, as it does for every page: it never waits for gnubg.
Only the newest position waiting is evaluated (a burst of actions is not queued up). The
evaluator starts at the first request for the chances (nobody watching, no gnubg) and ends
when the hub ends its subscriptions (the server stops). Without gnubg the overlay shows
everything but the bar; ``GET /api/chances`` then says why in ``error``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import threading
import time
from collections import deque
from dataclasses import replace
from pathlib import Path
from typing import Any, Final

from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Route

from bgboard.web.hub import WebHub
from engine.errors import BackgammonError
from engine.hints import GnubgHints, GnubgNotFoundError, HintError
from engine.match import MatchState, Phase

log = logging.getLogger(__name__)

#: The page's files (the live page's folder).
STATIC: Final = Path(__file__).with_name("static")
#: The row of gnubg's ``eval`` table the chances are read from (0: static, 1 or 2 plies).
PLY: Final = 2
#: Seconds gnubg may take for one evaluation.
TIMEOUT: Final = 20.0
#: The phases whose position is evaluated (a game is on and someone is on roll).
_PLAYING: Final = (Phase.ROLL, Phase.MOVE, Phase.DOUBLED)
#: One row of gnubg's ``eval``: ``static:`` or `` 2 ply:``, then Win W(g) W(bg) L(g) L(bg) Equity Cubeful.
_EVAL_ROW: Final = re.compile(
    r"^\s*(static|(\d) ply):\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([-+][\d.]+)\s+([-+][\d.]+)"
)


def parse_eval(text: str, ply: int = PLY) -> dict[str, float]:
    """The chances in gnubg's ``eval`` answer, from the row of ``ply`` (the deepest row if there is
    no such row): ``win``, ``gammon``, ``backgammon``, ``lose_gammon``, ``lose_backgammon``
    (gammons include backgammons), ``equity`` (cubeless) and ``cubeful``, for the side on roll.

    >>> parse_eval("        Win     W(g)    W(bg)   L(g)    L(bg)   Equity    Cubeful\\n"
    ...            "static: 0.522   0.154   0.008   0.130   0.008   +0.043    +0.043")["win"]
    0.522

    :raises HintError: no evaluation in the text.
    """
    rows: dict[int, tuple[float, ...]] = {}
    for line in text.splitlines():
        m = _EVAL_ROW.match(line)
        if m:
            rows[0 if m.group(1) == "static" else int(m.group(2))] = tuple(float(m.group(i)) for i in range(3, 10))
    if not rows:
        tail = " / ".join(line.strip() for line in text.splitlines() if line.strip())[-300:]
        raise HintError(f"gnubg gave no evaluation: {tail or '(nothing)'}")
    row = rows.get(ply, rows[max(rows)])
    keys = ("win", "gammon", "backgammon", "lose_gammon", "lose_backgammon", "equity", "cubeful")
    return dict(zip(keys, row, strict=True))


def position_to_evaluate(state: dict[str, Any]) -> tuple[str, int] | None:
    """The gnubg ID to evaluate for a live page's state (``GET /api/state``) and the player (1 or
    2) the chances are for: the side on roll, before its roll (the dice do not count, so a roll
    does not change the bar); ``None`` between games."""
    text, on_roll = state.get("gnubgid"), state.get("on_roll")
    if not isinstance(text, str) or on_roll not in (1, 2):
        return None
    try:
        match = MatchState.from_gnubg_id(text)
    except (BackgammonError, ValueError):
        return None
    if match.phase not in _PLAYING or match.on_roll is None:
        return None
    player = match.on_roll + 1
    if match.phase is not Phase.ROLL:
        match = replace(match, phase=Phase.ROLL, dice=None)
    try:
        return match.gnubg_id(), player
    except (BackgammonError, ValueError):
        return None


class Evaluator:
    """gnubg's chances for the position on a table, evaluated off the table's thread.

    Two threads of its own: one follows the hub (a subscription, in an event loop of its own,
    that only notes the newest state), the other asks gnubg. :meth:`chances` is what ``GET
    /api/chances`` answers.

    :param hub: the table's hub.
    :param hints: the gnubg to ask (default: a new :class:`GnubgHints`; closed with the evaluator).
    :param ply: the row of gnubg's evaluation read (see :func:`parse_eval`).
    """

    def __init__(self, hub: WebHub, *, hints: GnubgHints | None = None, ply: int = PLY) -> None:
        self.hub = hub
        self.hints = hints if hints is not None else GnubgHints(timeout=TIMEOUT)
        self.ply = ply
        self._wake = threading.Condition()
        self._wanted: tuple[str, int, float] | None = None
        self._latest: dict[str, Any] | None = None
        self._done: set[str] = set()
        self._error: str | None = None
        self._closed = False
        self._started = False
        self._subscribed = threading.Event()
        self._ready = threading.Event()
        #: Seconds from a new position reaching the evaluator to its chances served (the last 1000).
        self.latencies: deque[float] = deque(maxlen=1000)

    # -- running ---------------------------------------------------------------------------

    def start(self) -> Evaluator:
        """Follow the hub and evaluate from now on (once; later calls do nothing)."""
        with self._wake:
            if self._started or self._closed:
                return self
            self._started = True
        threading.Thread(target=self._listen, name="overlay-follow", daemon=True).start()
        threading.Thread(target=self._work, name="overlay-gnubg", daemon=True).start()
        self._subscribed.wait(5.0)
        return self

    def close(self) -> None:
        """Stop following and evaluating, and stop gnubg."""
        with self._wake:
            self._closed = True
            self._wake.notify_all()
        # The listener sees it within a second (it waits for the hub at most that long).

    def _listen(self) -> None:
        try:
            asyncio.run(self._follow())
        finally:
            self._subscribed.set()
            self.close()

    async def _follow(self) -> None:
        subscriber, first = await self.hub.subscribe()
        self._subscribed.set()
        try:
            for message in first:
                self._take(message)
            while not self._closed:
                sent = await self.hub.next_message(subscriber, 1.0)
                if sent is None:
                    return  # the hub ended its subscriptions: the server is stopping
                if sent:
                    self._take(sent)
        finally:
            self.hub.unsubscribe(subscriber)

    def _take(self, message: str) -> None:
        """Note a hub message's state (``event: state``); the events themselves are not needed."""
        if not message.startswith("event: state\n"):
            return
        try:
            state = json.loads(message.rsplit("data: ", 1)[1])
        except (ValueError, IndexError):
            return
        self.want(state)

    def want(self, state: dict[str, Any]) -> None:
        """Evaluate the position of ``state`` (a ``GET /api/state`` object) next."""
        found = position_to_evaluate(state)
        with self._wake:
            if found is None:
                self._wanted = None
                self._latest = None  # between games: no bar
                return
            latest = self._latest
            if latest is not None and latest["gnubgid"] == found[0]:
                return
            if self._wanted is not None and self._wanted[0] == found[0]:
                return
            self._wanted = (*found, time.monotonic())
            self._wake.notify_all()

    def _work(self) -> None:
        try:
            # gnubg is started now, so the first move's chances do not wait for it to load.
            try:
                self.hints.start()
            except GnubgNotFoundError as exc:
                self._error = f"gnubg is missing: {exc}"
                log.info("the overlay shows no chances: %s", exc)
            except HintError as exc:
                log.warning("gnubg did not start for the overlay: %s", exc)
            self._ready.set()
            while True:
                with self._wake:
                    while self._wanted is None and not self._closed:
                        self._wake.wait()
                    if self._closed:
                        return
                    assert self._wanted is not None
                    gnubgid, player, since = self._wanted
                if self._error is not None and self._error.startswith("gnubg is missing"):
                    with self._wake:
                        if self._wanted is not None and self._wanted[0] == gnubgid:
                            self._wanted = None
                    continue
                chances = self._evaluate(gnubgid, player)
                with self._wake:
                    if self._wanted is not None and self._wanted[0] == gnubgid:
                        self._wanted = None
                        if chances is not None:
                            self._latest = chances
                            self.latencies.append(time.monotonic() - since)
        finally:
            self.hints.close()

    def _evaluate(self, gnubgid: str, player: int) -> dict[str, Any] | None:
        started = time.monotonic()
        try:
            text = self.hints.run([f"set gnubgid {gnubgid}", "eval"])
            found = parse_eval(text, self.ply)
        except GnubgNotFoundError as exc:
            self._error = f"gnubg is missing: {exc}"
            log.info("the overlay shows no chances: %s", exc)
            return None
        except HintError as exc:
            self._error = str(exc)
            log.warning("gnubg could not evaluate %s for the overlay: %s", gnubgid, exc)
            return None
        self._error = None
        return {
            "gnubgid": gnubgid,
            "for": player,
            **found,
            "ply": self.ply,
            "seconds": round(time.monotonic() - started, 4),
        }

    # -- answering ---------------------------------------------------------------------------

    def chances(self) -> dict[str, Any]:
        """The chances of the newest position evaluated, for the player on roll (``for``), or
        ``null`` fields before the first and between games; ``pending``: a newer position is
        being evaluated; ``ready``: gnubg has started (or was found missing); ``error``: why
        there are none (gnubg missing, say)."""
        with self._wake:
            latest = self._latest
            pending = self._wanted is not None
        empty = dict.fromkeys(("gnubgid", "for", "win", "gammon", "backgammon", "lose_gammon", "lose_backgammon"))
        out: dict[str, Any] = dict(latest) if latest is not None else empty
        out["pending"] = pending
        out["ready"] = self._ready.is_set()
        out["error"] = self._error
        return out

    def respond(self, request: Request) -> Response:
        """``GET /api/chances``: :meth:`chances`, starting the evaluator at the first request.

        A plain method, so Starlette runs it in its thread pool: the first request waits for
        the subscription to the hub.
        """
        self.start()
        return JSONResponse(self.chances(), headers={"Cache-Control": "no-store"})


def overlay_routes(hub: WebHub, evaluator: Evaluator | None = None) -> list[Route]:
    """``GET /overlay`` (the page) and ``GET /api/chances`` (gnubg's chances, from ``evaluator``,
    by default a new :class:`Evaluator` of ``hub`` started at the first request; the route's
    endpoint is its :meth:`Evaluator.respond`)."""
    chosen = evaluator if evaluator is not None else Evaluator(hub)

    def page(request: Request) -> Response:
        return FileResponse(STATIC / "overlay.html", media_type="text/html; charset=utf-8")

    return [Route("/overlay", page), Route("/api/chances", chosen.respond)]
