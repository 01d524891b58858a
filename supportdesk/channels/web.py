"""The web API and chat page: an ASGI app (Starlette) over `Conversations`.

JSON in, JSON out; every refusal is `{"error": "..."}` with its status, and no traceback ever
reaches a client. The event stream is server-sent events whose `id` is the item's seq, so a
client that reconnects with `Last-Event-ID` (EventSource does it by itself) misses nothing.
Tokens travel in `Authorization: Bearer`, or in `?token=` for the event stream because
EventSource cannot set headers; the access log writes paths without their query, so no token
is ever logged.

Staff act through `POST /api/staff/sessions/{id}/{action}` (takeover, reply, release, state, tag)
with the staff token (`$SUPPORTDESK_STAFF_TOKEN` when serve starts) as the bearer: the same actions
and refusals as `supportdesk takeover ...` (`staff.requests.perform`), audited with origin `api`. A
conversation's customer token never authorises them; without a configured staff token they are off.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import logging
from collections.abc import AsyncIterator
from importlib import resources
from typing import Any, cast

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from supportdesk.channels import payload
from supportdesk.channels.conversations import MAX_MESSAGE_BYTES, ApiError, ClientLimits, Conversations, WebChannel
from supportdesk.channels.protocol import Channel
from supportdesk.channels.view import CustomerEvent
from supportdesk.engine.confirmation import answer_meta
from supportdesk.engine.desk import Desk
from supportdesk.engine.errors import TurnError
from supportdesk.staff import Actor, WhenError
from supportdesk.staff.requests import STAFF_ACTIONS, Inputs, Refused, StaffAction, UnknownSession, find_session, perform, said

log = logging.getLogger("supportdesk.serve")
access_log = logging.getLogger("supportdesk.serve.access")

# A comment line this often keeps proxies and browsers from closing a quiet stream.
KEEPALIVE_SECONDS = 15.0
# What EventSource waits before reconnecting, in ms.
RETRY_MS = 1000

# The Chatwoot webhook's path ends in a secret: the access log shows the prefix only.
WEBHOOK_PREFIX = "/channels/chatwoot/webhook/"
STATIC_FILES = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/static/chat.js": ("chat.js", "text/javascript; charset=utf-8"),
    "/static/chat.css": ("chat.css", "text/css; charset=utf-8"),
}
SECURITY_HEADERS = [
    # Only the page's own script and style run; customer text can never become markup that loads anything.
    (b"content-security-policy", b"default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
]


def error(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status, headers=headers)


def create_app(
    desk: Desk,
    *,
    messages_per_minute: int = 20,
    chatwoot_options: dict[str, Any] | None = None,
    staff_token: str | None = None,
    client_limits: ClientLimits = ClientLimits(),
) -> Starlette:
    """The app; `chatwoot_options` go to `ChatwootChannel` (tests pass env and retry timings);
    `staff_token` turns the staff endpoints on (None: they answer 403)."""
    conversations = Conversations(desk, messages_per_minute=messages_per_minute, client_limits=client_limits)
    channel_routes: list[Route] = []
    # Every channel this server runs, on one contract (channels/protocol.py).
    channels: list[Channel] = [WebChannel(conversations)]
    chatwoot = None
    if desk.config.channels.chatwoot is not None:
        from supportdesk.channels.chatwoot import ChatwootChannel

        chatwoot = ChatwootChannel(desk.config.channels.chatwoot, conversations, **(chatwoot_options or {}))
        channel_routes.append(Route(WEBHOOK_PREFIX + "{secret}", chatwoot.webhook, methods=["POST"]))
        channels.append(chatwoot)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        # The channels start before any turn resumes (Chatwoot's relays follow from the log's head).
        for channel in channels:
            await channel.start()
        await conversations.start()
        try:
            yield
        finally:
            for channel in reversed(channels):
                await channel.close()
            await conversations.close()

    async def create(request: Request) -> Response:
        conversations.client_created.check(_client(request))
        await _read_body(request, allow_empty=True)
        session_id, token = await conversations.create()
        return JSONResponse({"conversation_id": session_id, "token": token}, status_code=201)

    async def post_message(request: Request) -> Response:
        session_id = request.path_params["id"]
        info = await conversations.authorize(session_id, _bearer(request))
        body = await _read_body(request)
        if not isinstance(body, dict) or "text" not in body:
            raise ApiError(422, 'send a JSON object with the message in "text"')
        text = body["text"]
        if not isinstance(text, str):
            raise ApiError(422, '"text" must be a string')
        if not text.strip():
            raise ApiError(422, '"text" is empty; write a message')
        seq = await conversations.post(
            session_id, text, meta=_offer_answer(body.get("answer")), client=_client(request), session=info
        )
        return JSONResponse({"seq": seq}, status_code=202)

    async def events(request: Request) -> Response:
        session_id = request.path_params["id"]
        await conversations.check_token(session_id, _bearer(request) or request.query_params.get("token"))
        after = _last_event_id(request)
        events = await conversations.hub.stream(session_id, after, idle=KEEPALIVE_SECONDS)

        async def stream() -> AsyncIterator[str]:
            yield f"retry: {RETRY_MS}\n\n"
            try:
                async for batch in events:
                    # A quiet stream gets a comment line; the end (shutdown, or a reader that fell
                    # behind) closes it and EventSource resumes from its Last-Event-ID.
                    yield "".join(map(_sse, batch)) if batch else ": keep-alive\n\n"
            finally:
                await events.aclose()

        return StreamingResponse(
            stream(),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
        )

    async def staff_action(request: Request) -> Response:
        action = request.path_params["action"]
        if action not in STAFF_ACTIONS:
            raise ApiError(404, f"no staff action {action!r}; actions: {', '.join(STAFF_ACTIONS)}")
        _authorize_staff(request, staff_token)
        conversations.staff_actions.check("staff")  # (one staff token: its actions share one limit)
        body = await _read_body(request, allow_empty=True)
        given, person = _staff_inputs(body if body is not None else {})
        session_id = await find_session_or_404(request.path_params["id"])
        try:
            items = await perform(desk.runner, session_id, cast(StaffAction, action), given, Actor(person, "api"))
        except WhenError as exc:
            raise ApiError(422, str(exc)) from None
        except (Refused, TurnError) as exc:  # what `supportdesk takeover ...` refuses with exit 2
            raise ApiError(409, str(exc)) from None
        if action == "release":
            # A message the customer wrote while staff held it gets its turn now (issue 39 §3);
            # the turn answers only an unanswered message (`runner.unfinished_turn`), once.
            conversations.want_turn(session_id)
        return JSONResponse({
            "session": session_id,
            "items": [{"seq": i.seq, "kind": i.kind, "text": said(i)} for i in items],
        })

    async def find_session_or_404(given: str) -> str:
        try:
            return await find_session(desk.store, given)
        except UnknownSession as exc:
            raise ApiError(404, str(exc)) from None

    async def healthz(request: Request) -> Response:
        await desk.store.get_session("-")  # a primary-key probe: the database answers
        return JSONResponse({"status": "ok"})

    async def static(request: Request) -> Response:
        name, media_type = STATIC_FILES[request.url.path]
        body = resources.files("supportdesk.channels").joinpath("static", name).read_bytes()
        return Response(body, media_type=media_type, headers={"Cache-Control": "no-cache"})

    routes = [
        Route("/", static),
        Route("/static/chat.js", static),
        Route("/static/chat.css", static),
        Route("/healthz", healthz),
        Route("/api/conversations", create, methods=["POST"]),
        Route("/api/conversations/{id}/messages", post_message, methods=["POST"]),
        Route("/api/conversations/{id}/events", events),
        Route("/api/staff/sessions/{id}/{action}", staff_action, methods=["POST"]),
        *channel_routes,
    ]

    async def on_api_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, ApiError)
        return error(exc.status, exc.message, exc.headers)

    async def on_http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        message = {404: "not found", 405: "method not allowed"}.get(exc.status_code, exc.detail)
        return error(exc.status_code, message, dict(exc.headers or {}))

    async def on_crash(request: Request, exc: Exception) -> Response:
        log.error("%s %s failed: %s: %s", request.method, loggable_path(request.url.path), type(exc).__name__, exc)
        return error(500, "the desk failed to answer; try again")

    app = Starlette(
        routes=routes,
        lifespan=lifespan,
        middleware=[Middleware(_Edge)],
        exception_handlers={ApiError: on_api_error, HTTPException: on_http_error, Exception: on_crash},
    )
    app.state.conversations = conversations
    app.state.chatwoot = chatwoot
    app.state.channels = channels
    return app


# --- request parts ---------------------------------------------------------------------------------


def _client(request: Request) -> str:
    """Who a per-client limit counts: the peer's address (a proxy in front counts as one client)."""
    return request.client.host if request.client is not None else "-"


def _bearer(request: Request) -> str | None:
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None


def _authorize_staff(request: Request, staff_token: str | None) -> None:
    """Only the configured staff token acts as staff; a customer's token is never one."""
    if not staff_token:
        raise ApiError(403, "the staff API is off; start `supportdesk serve` with SUPPORTDESK_STAFF_TOKEN set")
    given = _bearer(request)
    if given is None:
        raise ApiError(401, "staff actions need the staff token in Authorization: Bearer", {"WWW-Authenticate": "Bearer"})
    if not hmac.compare_digest(given.encode("utf-8", "surrogatepass"), staff_token.encode("utf-8", "surrogatepass")):
        raise ApiError(401, "that is not the staff token", {"WWW-Authenticate": "Bearer"})


def _staff_inputs(body: Any) -> tuple[Inputs, str]:
    """A staff action's JSON body read as the command line's options; `as` names who acts."""
    if not isinstance(body, dict):
        raise ApiError(422, "send a JSON object")

    def text(key: str, default: str | None = "") -> Any:
        value = body.get(key, default)
        if value is not None and not isinstance(value, str):
            raise ApiError(422, f'"{key}" must be a string')
        return value

    def words(key: str) -> tuple[str, ...]:
        value = body.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ApiError(422, f'"{key}" must be a list of strings')
        return tuple(value)

    person = (text("as") or "").strip()
    if not person:
        raise ApiError(422, 'name the member of staff acting in "as"')
    given = Inputs(
        reason=text("reason"), text=text("text"), to=text("to", None), summary=text("summary"), state=text("state"),
        until=text("until", None), tags=words("tags"), remove=words("remove"), priority=text("priority", None),
    )
    return given, person


def _offer_answer(said: Any) -> dict[str, Any] | None:
    """A button's answer to an offer (issue 33): {"offer_id": "...", "yes": true|false}, kept with
    the message for the desk's confirmation gate; None when the message is plain text."""
    if said is None:
        return None
    if not isinstance(said, dict) or set(said) != {"offer_id", "yes"}:
        raise ApiError(422, '"answer" must be {"offer_id": "...", "yes": true or false}')
    offer_id, yes = said["offer_id"], said["yes"]
    if not isinstance(offer_id, str) or not 0 < len(offer_id) <= 64 or not isinstance(yes, bool):
        raise ApiError(422, '"answer" must be {"offer_id": "...", "yes": true or false}')
    return answer_meta(offer_id, yes)


def _last_event_id(request: Request) -> int:
    raw = request.headers.get("last-event-id") or request.query_params.get("last_event_id") or "0"
    try:
        value = int(raw)
    except ValueError:
        raise ApiError(400, "Last-Event-ID must be the number of the last event received") from None
    if value < 0:
        raise ApiError(400, "Last-Event-ID must be the number of the last event received")
    return value


async def _read_body(request: Request, *, allow_empty: bool = False) -> Any:
    """The JSON body, refused with 413 past MAX_MESSAGE_BYTES (read no further) or 400 if malformed."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > MAX_MESSAGE_BYTES:
        raise ApiError(413, f"the message is over {MAX_MESSAGE_BYTES // 1024} KB")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_MESSAGE_BYTES:
            raise ApiError(413, f"the message is over {MAX_MESSAGE_BYTES // 1024} KB")
    if not body and allow_empty:
        return None
    return await payload.parse(bytes(body))


def loggable_path(path: str) -> str:
    """`path` as a log line may show it: the Chatwoot webhook's secret cut off."""
    return WEBHOOK_PREFIX + "…" if path.startswith(WEBHOOK_PREFIX) else path


def _sse(event: CustomerEvent) -> str:
    """The event as server-sent-event text, encoded once however many streams send it: the hub
    hands the same event object to every stream of the conversation (kept on the event, which
    is frozen and whose data nothing changes once made)."""
    text: str | None = event.__dict__.get(_SSE_TEXT)
    if text is None:
        data = json.dumps({"type": event.type, **({"seq": event.seq} if event.seq is not None else {}), **event.data}, ensure_ascii=False)
        head = f"id: {event.seq}\n" if event.seq is not None else ""
        text = f"{head}event: {event.type}\ndata: {data}\n\n"
        object.__setattr__(event, _SSE_TEXT, text)
    return text


_SSE_TEXT = "_sse_text"


class _Edge:
    """Security headers on every response, and an access log line without the query string."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status = 0

        async def send_with_headers(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message["headers"] = list(message.get("headers", [])) + SECURITY_HEADERS
                # The path only: a token in the query (or a secret in the path) must never reach a log.
                access_log.info("%s %s %s", scope["method"], loggable_path(scope["path"]), status)
            await send(message)

        await self.app(scope, receive, send_with_headers)
