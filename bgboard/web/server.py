# SPDX-License-Identifier: MIT
"""The web server: the live page inside the table process, and the match browser over a store.

Two Starlette applications, served by uvicorn in a thread of their own (:class:`WebServer`):

- :func:`live_app` (``bgboard demo --web``, ``bgboard referee --web``): the page, ``GET
  /api/state``, ``GET /api/events`` (server-sent events from a :class:`~bgboard.web.hub.WebHub`),
  and the changes a page may ask for, ``POST /api/correct`` and ``POST /api/command``, which
  need the table's token (``Authorization: Bearer TOKEN``) and go through an
  :class:`~bgboard.session.Inbox` to the table's own thread. With a store, the match browser's
  routes too. At the referee, the calibration view (``/calibrate``): ``GET /api/calibration``
  (a camera frame kept, the corners found on it, the position it must show), ``GET
  /api/calibration.jpg`` (that frame) and ``POST /api/calibration`` (the corners a person
  placed; the token is needed), see :mod:`bgboard.web.calibration_view`.
- :func:`history_app` (``bgboard serve``): the stored matches, ``GET /api/matches``, one
  match's moves with the board after each and gnubg's analysis when one is kept, each error
  on its move (``GET /api/matches/ID``), its ``.mat`` or ``.sgf``
  (``GET /api/matches/ID/export?format=mat|sgf``), and the browser page.

Reading is open to whoever reaches the address (by default only this computer: the server is
bound to localhost unless told otherwise); changing the match needs the token. A request
without it gets 401, changes nothing, and is logged with its address.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import ipaddress
import json
import logging
import os
import secrets
import socket
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import uvicorn
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.gzip import GZipMiddleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from bgboard.analyse import decisions_by_action, errors_by_action
from bgboard.config import MatchConfig
from bgboard.errors import BindError
from bgboard.events import Event, StoreSink
from bgboard.session import Inbox, TableSession
from bgboard.store import (
    FORMATS,
    MatchStore,
    StoredAction,
    StoreError,
    UnknownMatchError,
    default_file_name,
    describe,
)
from bgboard.web.calibration_view import CalibrationRequestError, Calibrator, FrameGoneError
from bgboard.web.hub import PAGE_COMMANDS, WebHub, arrows, state_json
from bgboard.web.overlay import overlay_routes
from engine.errors import BackgammonError, quoted
from engine.match import MatchState, Move
from engine.movegen import legal_plays
from engine.play import Play
from engine.position import Position
from hardware.presenter import seat_of

if TYPE_CHECKING:
    from bgboard.table import Table
    from bgboard.web.calibration_view import Calibrated

log = logging.getLogger(__name__)

#: The page's files, shipped in the package.
STATIC: Final = Path(__file__).with_name("static")
#: Seconds between keep-alive comments on an idle event stream (proxies drop silent streams).
KEEP_ALIVE: Final = 15.0
#: Milliseconds a page's EventSource waits before reconnecting.
RETRY_MS: Final = 1000
#: Seconds a change waits for the table to run it before the page is told it is still queued.
CHANGE_WAIT: Final = 10.0
#: The port when ``--web`` names only a host.
DEFAULT_PORT: Final = 8080
#: The largest calibration body taken (four corners and two numbers need about 150 bytes).
CALIBRATION_BODY: Final = 2048
#: What the calibration view's API says on a table that has none (the demo's rendered board).
NO_CALIBRATION: Final = (
    "this table has no calibration view: bgboard referee --web has one, which writes the board's profile"
    " (camera.profile)"
)


@dataclass(frozen=True, slots=True)
class Bind:
    """Where to listen: a host (an address or a name) and a port (0: any free one)."""

    host: str
    port: int

    @classmethod
    def parse(cls, text: str) -> Bind:
        """``HOST:PORT``, ``:PORT`` or ``PORT`` (localhost), ``HOST`` (port 8080), ``[::]:PORT``.

        >>> Bind.parse(":8080"), Bind.parse("0.0.0.0:80"), Bind.parse("[::1]:8000")
        (Bind(host='127.0.0.1', port=8080), Bind(host='0.0.0.0', port=80), Bind(host='::1', port=8000))

        :raises BindError: no port number, or one out of range.
        """
        text = text.strip()
        if not text:
            raise BindError("give HOST:PORT, e.g. 127.0.0.1:8080 (or 0.0.0.0:8080 for the local network)")
        host, port_text = "", text
        if text.startswith("["):
            host, _, rest = text[1:].partition("]")
            port_text = rest[1:] if rest.startswith(":") else str(DEFAULT_PORT)
        elif text.count(":") == 1:
            host, port_text = text.split(":")
        elif ":" in text:
            raise BindError(f"{text!r}: write an IPv6 address in brackets, e.g. [::1]:8080")
        elif not text.isdigit():
            host, port_text = text, str(DEFAULT_PORT)
        if not port_text.isdigit() or not 0 <= int(port_text) <= 65535:
            raise BindError(f"{text!r}: the port is a number from 0 to 65535, not {port_text!r}")
        return cls(host or "127.0.0.1", int(port_text))

    def __str__(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"


def new_token() -> str:
    """A fresh table token: 128 random bits, URL-safe."""
    return secrets.token_urlsafe(16)


def page_host(host: str) -> str:
    """The address a phone on the network types for a server listening on ``host``."""
    with contextlib.suppress(ValueError):
        if ipaddress.ip_address(host).is_unspecified:
            # Listening everywhere: name this computer's address on the network. Connecting a
            # UDP socket sends nothing; it only picks the interface a packet would leave by.
            with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
                probe.connect(("192.0.2.1", 9))
                return str(probe.getsockname()[0])
            return socket.gethostname()
    return f"[{host}]" if ":" in host else host


def qr_text(data: str) -> str:
    """``data`` as a QR code drawn with block characters, for the console."""
    import io

    import segno

    out = io.StringIO()
    segno.make(data, error="m").terminal(out=out, compact=True, border=2)
    return out.getvalue().rstrip("\n")


# -- shared pieces -------------------------------------------------------------------------


def _page(name: str) -> Callable[[Request], Response]:
    def endpoint(request: Request) -> Response:
        return FileResponse(STATIC / name, media_type="text/html; charset=utf-8")

    return endpoint


def _no_store(response: Response) -> Response:
    response.headers["Cache-Control"] = "no-store"
    return response


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


#: The match tag that says who sat at the bottom of the camera's view ("1" or "2", the
#: config's ``match.player_at_bottom``), written by :func:`bgboard.table.new_match`.
BOTTOM_TAG: Final = "PlayerAtBottom"


def bottom_player_of(tags: Mapping[str, str]) -> int:
    """The engine player (0 or 1) at the bottom of the table for a match with these tags: the
    :data:`BOTTOM_TAG`, or the config's default (the first named) for a match without one."""
    text = str(tags.get(BOTTOM_TAG, "")).strip()
    return int(text) - 1 if text in ("1", "2") else MatchConfig().bottom_player


def _play_arrows(state: MatchState, text: str, seat: int) -> list[dict[str, Any]] | None:
    """The arrows of play ``text`` (gnubg's or the store's) made from ``state``, or ``None``."""
    if state.dice is None:
        return None
    try:
        play = Play() if text.strip() in ("", "no move") else legal_plays(state.position, state.dice).parse(text)[1]
    except BackgammonError:
        return None
    return arrows(play, seat)


def _step(
    row: StoredAction,
    names: tuple[str, str],
    bottom: int,
    error: dict[str, Any] | None,
    decision: dict[str, Any] | None = None,
) -> dict[str, Any] | None:
    """One step of the replay: the action in words, the board after it (the move drawn as
    arrows, as the live page draws the last move) and the board before it (the decision: the
    dice, the play made and, for an error or any analysed play not gnubg's first, gnubg's best
    as arrows), seen from the table's
    bottom seat, with gnubg's figures for the decision (its alternatives and cube equities,
    :func:`bgboard.analyse.decisions_by_action`) when an analysis has them. ``None`` when a
    stored ID does not read."""
    try:
        before = MatchState.from_gnubg_id(row.gnubgid_before, game_number=row.game)
        after = MatchState.from_gnubg_id(row.gnubgid_after, game_number=row.game)
    except BackgammonError:
        return None
    who = "" if row.player is None else f"{names[row.player]}: "
    state = state_json(after, names, bottom_player=bottom)
    earlier = state_json(before, names, bottom_player=bottom)
    earlier["last_move"] = earlier["hint"] = None
    state["last_move"] = None
    if isinstance(row.action, Move) and row.player is not None and isinstance(row.action.play, Play):
        seat = seat_of(row.player, bottom)
        made = {
            "player": row.player + 1,
            "play": str(row.action.play) or "no move",
            "arrows": arrows(row.action.play, seat),
        }
        state["last_move"] = made
        alternatives = (decision or {}).get("alternatives") or []
        if error is not None:
            earlier["last_move"] = made
            best = _play_arrows(before, str(error.get("best") or ""), seat)
            if best is not None:
                earlier["hint"] = {"play": str(error.get("best")), "arrows": best}
        elif alternatives:
            # Any analysed play opens on its decision too: the play made, and gnubg's best
            # beside it where they differ (an unmarked play may still not be the best).
            earlier["last_move"] = made
            text = str(alternatives[0].get("play") or "")
            best = _play_arrows(before, text, seat)
            if best is not None and best != made["arrows"]:
                earlier["hint"] = {"play": text, "arrows": best}
    return {
        "game": row.game,
        "seq": row.seq,
        "kind": row.kind,
        "player": None if row.player is None else row.player + 1,
        "text": who + describe(row.action),
        "source": row.source,
        "note": row.note,
        "state": state,
        "before": earlier,
        "error": error,
        "decision": decision,
    }


def _match_routes(store_path: Path) -> list[Route]:
    """The match browser's API over the store at ``store_path`` (one connection per request:
    the table's own connection belongs to its thread, and SQLite's WAL lets readers in)."""

    @contextlib.contextmanager
    def opened() -> Iterator[MatchStore]:
        with MatchStore(store_path, create=False, check=False) as store:
            yield store

    def match_id(request: Request) -> int:
        text = request.path_params["match"]
        if not text.isdigit():
            raise UnknownMatchError(f"no match {text!r}: matches are numbered 1, 2, ...")
        return int(text)

    def matches(request: Request) -> Response:
        try:
            with opened() as store:
                summaries = store.matches()
        except StoreError as exc:
            return _error(503, str(exc))
        out = [
            {
                "id": s.id,
                "players": list(s.players),
                "length": s.length,
                "score": list(s.score),
                "finished": s.is_finished,
                "started": s.to_json()["started"],
                "games": s.games,
                "actions": s.actions,
            }
            for s in summaries
        ]
        return _no_store(JSONResponse(out))

    def match(request: Request) -> Response:
        try:
            number = match_id(request)
            with opened() as store:
                summary = store.summary(number)
                actions = store.actions(number)
                framed = store.framed_actions(number)
                analysis = store.analysis(number)
        except UnknownMatchError as exc:
            return _error(404, str(exc))
        except StoreError as exc:
            return _error(503, str(exc))
        names = summary.players
        bottom = bottom_player_of(summary.tags)
        # gnubg's analysis, when one is kept and up to date, with each error on its move.
        errors = errors_by_action(actions, analysis) if analysis is not None else {}
        # gnubg's figures for every decision it analysed, each on its step (not repeated in
        # the analysis sent along: they are the bulk of it).
        decisions = decisions_by_action(actions, analysis) if analysis is not None else {}
        if analysis is not None:
            analysis = {key: value for key, value in analysis.items() if key != "decisions"}
        steps = []
        for row in actions:
            if row.action is None:
                continue
            step = _step(row, names, bottom, errors.get(row.id), decisions.get(row.id))
            if step is None:
                continue  # an ID gnubg's own format cannot hold (none in practice): the step is left out
            step["frame"] = f"/api/matches/{number}/frames/{row.id}" if row.id in framed else None
            steps.append(step)
        body = {"match": summary.to_json(), "bottom": bottom + 1, "steps": steps, "analysis": analysis}
        return _no_store(JSONResponse(body))

    def export(request: Request) -> Response:
        fmt = request.query_params.get("format", "mat")
        if fmt not in FORMATS:
            return _error(400, f"format is {' or '.join(FORMATS)}, not {fmt!r}")
        try:
            number = match_id(request)
            with opened() as store:
                text = store.export(number, fmt)
                name = default_file_name(store.summary(number), fmt)
        except UnknownMatchError as exc:
            return _error(404, str(exc))
        except StoreError as exc:
            return _error(503, str(exc))
        return PlainTextResponse(
            text,
            media_type="application/x-sgf" if fmt == "sgf" else "text/plain; charset=utf-8",
            headers={"Content-Disposition": f'attachment; filename="{name}"'},
        )

    def frame(request: Request) -> Response:
        action = request.path_params["action"]
        try:
            number = match_id(request)
            with opened() as store:
                picture = store.frame(int(action)) if action.isdigit() else None
                if picture is not None and int(action) not in store.framed_actions(number):
                    picture = None
        except UnknownMatchError as exc:
            return _error(404, str(exc))
        except StoreError as exc:
            return _error(503, str(exc))
        if picture is None:
            return _error(404, f"no still frame kept for action {action} of match {number}")
        return Response(picture, media_type="image/jpeg")

    return [
        Route("/api/matches", matches),
        Route("/api/matches/{match}/frames/{action}", frame),
        Route("/api/matches/{match}", match),
        Route("/api/matches/{match}/export", export),
        Route("/matches", _page("matches.html")),
    ]


def _compressed() -> list[Middleware]:
    """Gzip for whoever accepts it (the pages' scripts and styles, the JSON); Starlette leaves
    the server-sent events uncompressed, so each still reaches the page at once."""
    return [Middleware(GZipMiddleware, minimum_size=500)]


def _static() -> Mount:
    return Mount("/static", StaticFiles(directory=STATIC), name="static")


# -- the live page -------------------------------------------------------------------------


def _refused(request: Request, why: str) -> JSONResponse:
    client = request.client.host if request.client is not None else "unknown"
    log.warning("refused %s %s from %s: %s", request.method, request.url.path, client, why)
    return JSONResponse(
        {"error": f"{why}: changes need the table's token (Authorization: Bearer TOKEN)"},
        status_code=401,
        headers={"WWW-Authenticate": 'Bearer realm="bgboard"'},
    )


class CameraFeedView:
    """The latest still frame of a table and its reading, as a picture for the page.

    :ivar source: gives the picture's JPEG bytes, or ``None`` before the first still frame;
        ``None`` itself when the table has no camera (set by :meth:`LiveWeb.follow`).
    """

    def __init__(self) -> None:
        self.source: Callable[[], bytes | None] | None = None

    def picture(self) -> bytes | None:
        """The picture now, if there is one."""
        return None if self.source is None else self.source()


class CalibrationSlot:
    """The table's calibrator, once whoever runs the table gives it one (:meth:`LiveWeb.calibrate`).

    :ivar calibrator: ``None``: the table has no calibration view (the demo).
    """

    def __init__(self) -> None:
        self.calibrator: Calibrator | None = None


def _not_a_number(name: str) -> float:
    raise ValueError(f"{name} is not a number JSON allows")


#: The events that say a change was not made.
REFUSALS: Final = frozenset({"refused", "unknown", "not-calibrated", "illegal", "not-gnubgs-move", "please-check"})
#: The most a change's body may hold, in bytes (a correction is a few dozen).
CHANGE_BODY: Final = 4096
#: The longest command or correction a page may send, in characters.
COMMAND_LENGTH: Final = 200


async def _small_json(request: Request, limit: int) -> dict[str, Any]:
    """The request's body, at most ``limit`` bytes of one JSON object.

    :raises _BadRequestError: too long (413), not JSON, or not an object (400).
    """
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise _BadRequestError(f"the body is {declared} bytes: at most {limit} are taken", 413)
    raw = b""
    async for chunk in request.stream():
        raw += chunk
        if len(raw) > limit:
            raise _BadRequestError(f"the body is longer than the {limit} bytes taken", 413)
    try:
        data = json.loads(raw or b"{}", parse_constant=_not_a_number)
    except ValueError as exc:
        reason = str(exc) if "JSON allows" in str(exc) else "the body is not JSON"
        raise _BadRequestError(reason) from None
    if not isinstance(data, dict):
        raise _BadRequestError("the body is a JSON object")
    return data


def live_app(
    hub: WebHub,
    inbox: Inbox,
    token: str,
    *,
    store_path: Path | None = None,
    camera: CameraFeedView | None = None,
    calibration: CalibrationSlot | None = None,
) -> Starlette:
    """The live page's application.

    :param hub: the table's events and state.
    :param inbox: where the changes go (the table's owner runs them).
    :param token: what ``Authorization: Bearer`` must carry for a change.
    :param store_path: the match store, for the match browser's routes (``None``: none).
    :param camera: the camera's picture (``GET /api/camera.jpg``); ``None``: none.
    :param calibration: the calibration view's calibrator (``/api/calibration``); ``None`` or
        an empty slot: the view says the table has none.
    """

    def authorised(request: Request) -> str | None:
        """Why the request may not change the match (``None``: it may)."""
        scheme, _, given = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not given.strip():
            return "no token"
        if not hmac.compare_digest(given.strip().encode(), token.encode()):
            return "wrong token"
        return None

    async def state(request: Request) -> Response:
        return _no_store(JSONResponse(hub.state()))

    async def events(request: Request) -> Response:
        last = request.headers.get("last-event-id", "")
        subscriber, first = await hub.subscribe(int(last) if last.isdigit() else None)

        async def stream() -> AsyncIterator[str]:
            try:
                yield f"retry: {RETRY_MS}\n\n"
                for message in first:
                    yield message
                while True:
                    sent = await hub.next_message(subscriber, KEEP_ALIVE)
                    if sent is None:
                        return
                    # A comment line: it keeps the connection open through idle minutes.
                    yield sent or ": keep-alive\n\n"
            finally:
                hub.unsubscribe(subscriber)

        return StreamingResponse(
            stream(),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
        )

    async def change_body(request: Request) -> dict[str, Any] | Response:
        """The JSON body of a change, or the answer refusing it (no token: 401; longer than
        :data:`CHANGE_BODY` bytes: 413, read no further; no JSON: 400)."""
        why = authorised(request)
        if why is not None:
            return _refused(request, why)
        try:
            return await _small_json(request, CHANGE_BODY)
        except _BadRequestError as exc:
            return _error(exc.status, str(exc))

    async def change(request: Request, command: str) -> Response:
        future: Future[list[Event]] = inbox.submit(command)
        try:
            said = await asyncio.wait_for(asyncio.wrap_future(future), CHANGE_WAIT)
        except TimeoutError:
            return JSONResponse({"queued": command, "events": []}, status_code=202)
        answers = [event.to_json() for event in said]
        # Recorded, or done without a refusal (teach on, a hint asked for): accepted.
        recorded = any(event.action is not None or event.kind == "undo" for event in said)
        refused = any(event.kind in REFUSALS for event in said)
        accepted = recorded or (bool(said) and not refused)
        return JSONResponse({"command": command, "accepted": accepted, "events": answers, "state": hub.state()})

    async def correct(request: Request) -> Response:
        data = await change_body(request)
        if isinstance(data, Response):
            return data
        given = {key: data[key] for key in ("play", "position", "dice") if data.get(key) not in (None, "")}
        if len(given) != 1 or not all(isinstance(v, str) for v in given.values()):
            return _error(400, 'give one of "play" ("13/7 8/7"), "position" (a Position ID) or "dice" ("53")')
        key, value = next(iter(given.items()))
        if "\n" in value:
            return _error(400, f"{key} is one line")
        if len(value) > COMMAND_LENGTH:
            return _error(400, f"{key} is at most {COMMAND_LENGTH} characters, not {len(value)}")
        if key == "position":
            try:
                Position.from_id(value)
            except BackgammonError as exc:
                return _error(400, f"position is a Position ID: {exc}")
        return await change(request, f"dice {value}" if key == "dice" else f"correct {value}")

    async def command(request: Request) -> Response:
        data = await change_body(request)
        if isinstance(data, Response):
            return data
        text = data.get("command")
        if not isinstance(text, str) or not text.strip() or "\n" in text:
            return _error(400, 'give "command": one of ' + ", ".join(sorted(PAGE_COMMANDS)))
        if len(text) > COMMAND_LENGTH:
            return _error(400, f"a command is at most {COMMAND_LENGTH} characters, not {len(text)}")
        verb = text.split()[0].lower()
        if verb not in PAGE_COMMANDS:
            return _error(
                400, f"{quoted(verb)} is not a command the page may give: " + ", ".join(sorted(PAGE_COMMANDS))
            )
        return await change(request, text.strip())

    async def check(request: Request) -> Response:
        """Whether a token is right, so the page can say so before it is needed."""
        why = authorised(request)
        return _refused(request, why) if why is not None else JSONResponse({"ok": True})

    def camera_jpeg(request: Request) -> Response:
        # A plain function: Starlette runs it in its thread pool, so warping and encoding the
        # frame never holds up the event streams.
        picture = None if camera is None else camera.picture()
        if picture is None:
            return _error(404, "no still frame from the camera yet")
        return Response(picture, media_type="image/jpeg", headers={"Cache-Control": "no-store"})

    def calibrator() -> Calibrator | None:
        return None if calibration is None else calibration.calibrator

    def calibration_frame(request: Request) -> Response:
        # A plain function (the thread pool): finding the corners takes a while on a big frame.
        found = calibrator()
        if found is None:
            return _error(404, NO_CALIBRATION)
        try:
            shot = found.snapshot()
        except FrameGoneError as exc:
            return _error(503, str(exc))
        return _no_store(JSONResponse(found.to_json(shot)))

    def calibration_jpeg(request: Request) -> Response:
        found = calibrator()
        if found is None:
            return _error(404, NO_CALIBRATION)
        text = request.query_params.get("frame")
        if text is not None and not text.isdigit():
            return _error(400, f"frame is the number GET /api/calibration gave, not {text!r}")
        try:
            shot = found.get(None if text is None else int(text))
        except FrameGoneError as exc:
            return _error(404, str(exc))
        return _no_store(Response(shot.jpeg(), media_type="image/jpeg"))

    async def calibrate(request: Request) -> Response:
        from vision.calibration import CalibrationError
        from vision.profile import ProfileError

        why = authorised(request)
        if why is not None:
            return _refused(request, why)
        found = calibrator()
        if found is None:
            return _error(404, NO_CALIBRATION)
        try:
            data = await _small_json(request, CALIBRATION_BODY)
            done: Calibrated = await run_in_threadpool(found.calibrate, data)
        except _BadRequestError as exc:
            return _error(exc.status, str(exc))
        except CalibrationRequestError as exc:
            return _error(400, str(exc))
        except FrameGoneError as exc:
            return _error(409, str(exc))
        except CalibrationError as exc:
            # The calibration's own words: what is wrong and where; nothing was written.
            return JSONResponse({"error": str(exc), "kind": exc.kind or None}, status_code=422)
        future = found.install(done)
        summary = {"text": f"calibrated: {done.text}", "profile": done.to_json()}
        try:
            said = await asyncio.wait_for(asyncio.wrap_future(future), CHANGE_WAIT)
        except TimeoutError:
            return JSONResponse({**summary, "queued": True, "events": []}, status_code=202)
        except ProfileError as exc:
            return _error(500, f"{exc}: nothing changed, the table reads as before")
        except Exception as exc:
            log.exception("the new profile could not be put to use")
            return _error(500, f"the profile was written, but the table could not read with it: {exc}")
        events = [event.to_json() for event in said]
        return JSONResponse({**summary, "events": events, "state": hub.state()})

    routes: list[Route | Mount] = [
        Route("/", _page("index.html")),
        Route("/calibrate", _page("calibrate.html")),
        Route("/api/calibration", calibration_frame),
        Route("/api/calibration", calibrate, methods=["POST"]),
        Route("/api/calibration.jpg", calibration_jpeg),
        Route("/api/camera.jpg", camera_jpeg),
        Route("/api/state", state),
        Route("/api/events", events),
        Route("/api/correct", correct, methods=["POST"]),
        Route("/api/command", command, methods=["POST"]),
        Route("/api/token", check, methods=["POST"]),
        *overlay_routes(hub),
        _static(),
    ]
    if store_path is not None:
        routes[1:1] = _match_routes(store_path)
    return Starlette(routes=routes, middleware=_compressed())


class _BadRequestError(ValueError):
    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


def history_app(store_path: Path) -> Starlette:
    """The match browser over the store at ``store_path`` (``bgboard serve``): history only."""

    async def home(request: Request) -> Response:
        return FileResponse(STATIC / "matches.html", media_type="text/html; charset=utf-8")

    return Starlette(routes=[Route("/", home), *_match_routes(store_path), _static()], middleware=_compressed())


# -- the server thread ----------------------------------------------------------------------


class WebServer:
    """uvicorn serving ``app`` from a thread of its own, on a socket bound at once.

    The socket is bound in the constructor, so an address in use or not this computer's is an
    error before anything else starts (:class:`BindError`); port 0 takes a free port
    (:attr:`port`).

    :param on_stop: called before the server stops (the hub ends its streams).
    """

    def __init__(self, app: Starlette, bind: Bind, *, on_stop: Callable[[], None] | None = None) -> None:
        self.bind = bind
        self.on_stop = on_stop
        family = socket.AF_INET6 if ":" in bind.host else socket.AF_INET
        try:
            self._socket = socket.create_server((bind.host, bind.port), family=family, reuse_port=False)
        except OSError as exc:
            raise BindError(f"cannot listen on {bind}: {_why(exc)}") from None
        self.port: int = self._socket.getsockname()[1]
        config = uvicorn.Config(
            app,
            log_level="warning",
            access_log=False,
            lifespan="off",
            timeout_graceful_shutdown=1,
            ws="none",
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._serve, name="web", daemon=True)

    def _serve(self) -> None:
        asyncio.run(self._server.serve(sockets=[self._socket]))

    def start(self) -> WebServer:
        """Start serving; returns once the server accepts connections."""
        self._thread.start()
        while not self._server.started and self._thread.is_alive():
            self._thread.join(0.01)
        return self

    @property
    def url(self) -> str:
        """The address to open the page at, from this network."""
        return f"http://{page_host(self.bind.host)}:{self.port}/"

    def stop(self) -> None:
        """Stop serving and wait for the thread (open streams are ended first)."""
        if self.on_stop is not None:
            self.on_stop()
        self._server.should_exit = True
        if self._thread.is_alive():
            self._thread.join(5.0)
        self._socket.close()

    def __enter__(self) -> WebServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@dataclass
class LiveWeb:
    """The live page of one table: hub, inbox, token and server, started together.

    :ivar hub: the table's events and state for the pages.
    :ivar inbox: the pages' changes, for the table's owner to run.
    :ivar token: the table's token.
    :ivar server: the running server.
    """

    hub: WebHub
    inbox: Inbox
    token: str
    server: WebServer
    camera: CameraFeedView
    calibration: CalibrationSlot

    @classmethod
    def start(
        cls,
        bind: Bind,
        names: tuple[str, str],
        *,
        store_path: Path | None = None,
        token: str | None = None,
        inbox: Inbox | None = None,
    ) -> LiveWeb:
        """Bind, then serve the page in a thread.

        :param inbox: where the pages' changes go (default: a new one).
        :raises BindError: the address cannot be listened on.
        """
        hub, camera, calibration = WebHub(names), CameraFeedView(), CalibrationSlot()
        inbox = inbox if inbox is not None else Inbox()
        token = token or new_token()
        app = live_app(hub, inbox, token, store_path=store_path, camera=camera, calibration=calibration)
        server = WebServer(app, bind, on_stop=hub.close)
        return cls(hub, inbox, token, server.start(), camera, calibration)

    def follow(self, table: Table) -> None:
        """Show ``table``: its events and state (:meth:`WebHub.follow`) and its camera's last
        still frame with the reading drawn (:func:`bgboard.web.camera_view.camera_picture`)."""
        self.hub.follow(table)

        def picture() -> bytes | None:
            # One read of each attribute: the table's thread replaces them, never changes them,
            # and drops the still frame before it takes another reader (calibrated again).
            reader = table.reader
            still = table.last_still
            if still is None or reader is None:
                return None
            from bgboard.web.camera_view import camera_picture

            image, reading = still
            profile = reader.profile
            return camera_picture(image, reading, profile.homography, profile.geometry)

        self.camera.source = picture
        stores = [sink for sink in table.sinks if isinstance(sink, StoreSink)]
        if stores:
            table.sinks.add(FrameKeeper(table, stores[0].store, stores[0].match_id))

    def calibrate(self, table: Table, path: Path, install: Callable[[Calibrated], list[Event]]) -> None:
        """Give the page a calibration view of ``table``'s camera (``/calibrate``), writing the
        board's profile to ``path``; ``install`` (called in the table's thread, through the
        inbox) makes the table read with a new profile."""
        self.calibration.calibrator = Calibrator(table, self.inbox, path, install)
        self.hub.calibrate_url = "/calibrate"
        self.hub.refresh()

    @property
    def calibrate_url(self) -> str | None:
        """The calibration view's address, when the table has one."""
        return None if self.calibration.calibrator is None else f"{self.server.url}calibrate"

    @property
    def page_url(self) -> str:
        """The page's address with the token after ``#`` (never sent to the server by a browser)."""
        return f"{self.server.url}#token={self.token}"

    def notice(self, *, qr: bool = True) -> Event:
        """What the console says at the start: the address, the token, the calibration view's
        address when there is one, and a QR code of the page's address with the token."""
        from bgboard.events import Notice

        url = self.server.url
        text = f"the live page is at {url} (changes need the token {self.token})"
        console = f"live page: {url}\ntoken: {self.token} (the page asks for it before a change)"
        fields = {"url": url, "token": self.token}
        if self.calibrate_url is not None:
            console += f"\ncalibration view: {self.calibrate_url}"
            fields["calibrate"] = self.calibrate_url
        if qr:
            console += f"\nscan to open the page with the token:\n{qr_text(self.page_url)}"
        return Notice("web", text, fields, console=console)

    def close(self) -> None:
        """Stop the server."""
        self.server.stop()


def _why(exc: OSError) -> str:
    """The system's words for a failed bind, without Python's "(while attempting to bind...)"."""
    return os.strerror(exc.errno) if exc.errno else str(exc)


@dataclass(frozen=True, slots=True)
class LivePage:
    """The live page, attached to a table's session (:class:`bgboard.session.TableSession`).

    It follows the session's table, takes its changes through the session's inbox, offers the
    calibration view when the session names a profile to write, and says its address and
    token on the console.

    :param bind: where to listen.
    """

    bind: Bind

    def check(self) -> None:
        """Refuse an address this computer cannot listen on (in use, not its own) at once.

        :raises BindError: it cannot, with the address and why.
        """
        family = socket.AF_INET6 if ":" in self.bind.host else socket.AF_INET
        try:
            probe = socket.create_server((self.bind.host, self.bind.port), family=family, reuse_port=False)
        except OSError as exc:
            raise BindError(f"cannot listen on {self.bind}: {_why(exc)}") from None
        probe.close()

    def attach(self, session: TableSession) -> None:
        """Start the page on ``session``'s table; the session's stack stops it.

        :raises BindError: the address cannot be listened on.
        """
        table = session.table
        path = session.store.path if session.store is not None else None
        live = LiveWeb.start(
            self.bind,
            table.controller.names,
            store_path=None if path is None or str(path) == ":memory:" else Path(path),
            inbox=session.inbox,
        )
        session.stack.callback(live.close)
        live.follow(table)
        if session.profile is not None and session.on_calibrated is not None:
            live.calibrate(table, session.profile, session.on_calibrated)
        session.calibrate_url = live.calibrate_url
        session.page_url = live.server.url
        # The console only: the token must not reach the pages, which anyone may read.
        session.console(live.notice())


class FrameKeeper:
    """Keeps, for every move recorded, the still frame it was judged on in the match store
    (:meth:`~bgboard.store.MatchStore.keep_frame`): the referee's evidence in a dispute,
    shown by the match browser. Added after the store's sink, so the move is stored first."""

    def __init__(self, table: Table, store: MatchStore, match_id: int) -> None:
        self.table = table
        self.store = store
        self.match_id = match_id

    def __call__(self, event: Event) -> None:
        """Keep the frame in view if ``event`` recorded a move."""
        still = self.table.last_still
        if not isinstance(event.action, Move) or event.source is None or still is None:
            return
        from bgboard.web.camera_view import evidence_jpeg

        try:
            self.store.keep_frame(self.match_id, evidence_jpeg(still[0]))
        except (StoreError, ValueError) as exc:
            # Evidence is worth having, but never worth stopping the match for.
            log.warning("the still frame of a move could not be kept: %s", exc)
