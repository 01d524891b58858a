"""Web conversations: sessions a customer reaches with a bearer token, and their turns.

Framework-free: `web.py` maps HTTP onto this. A conversation is a desk session with channel
`web`; its token is shown once, and only its SHA-256 is stored (in the session's meta), compared
in constant time. A customer message is stored before the caller is told so; the turn runs in
the background, one at a time per session, through the desk's runner and store.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import hashlib
import hmac
import logging
import math
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from supportdesk.channels.hub import Hub
from supportdesk.channels.view import customer_event, delta_event
from supportdesk.engine.desk import Desk
from supportdesk.engine.events import Appended, Token
from supportdesk.engine.log import SessionInfo

log = logging.getLogger("supportdesk.serve")

CHANNEL = "web"
# Channels whose customers wait on this server: their unanswered messages are answered on start-up.
RESUMED_CHANNELS = ("web", "chatwoot")
# A message body larger than this is refused (413) before it is parsed.
MAX_MESSAGE_BYTES = 16 * 1024
# How many recent sessions are looked at on start-up for a message left unanswered by a restart.
RESUME_LOOKBACK = 500


class ApiError(Exception):
    """A request the API refuses: the status, one line for the client, extra headers."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


@dataclass
class RateLimit:
    """At most `per_minute` messages in any 60 s per conversation (in this worker)."""

    per_minute: int
    clock: Callable[[], float] = time.monotonic
    _sent: dict[str, collections.deque[float]] = field(default_factory=dict)

    def check(self, session_id: str) -> None:
        now = self.clock()
        sent = self._sent.setdefault(session_id, collections.deque())
        while sent and now - sent[0] >= 60.0:
            sent.popleft()
        if len(sent) >= self.per_minute:
            wait = max(1, math.ceil(60.0 - (now - sent[0])))
            raise ApiError(
                429, f"more than {self.per_minute} messages a minute; try again in {wait} s", {"Retry-After": str(wait)}
            )
        sent.append(now)


class Conversations:
    def __init__(self, desk: Desk, *, messages_per_minute: int = 20):
        self.desk = desk
        self.hub = Hub(desk.store, lambda item: customer_event(item, desk.config))
        self.rate = RateLimit(messages_per_minute)
        self._wanted: dict[str, int] = {}  # session -> turns asked for and not yet started
        self._workers: dict[str, asyncio.Task[None]] = {}
        # Called with the session id after each turn (a channel that relays replies elsewhere).
        self.after_turn: list[Callable[[str], Awaitable[None]]] = []

    async def start(self) -> None:
        self.hub.start()
        await self._resume_unanswered()

    async def close(self) -> None:
        workers = list(self._workers.values())
        for task in workers:
            task.cancel()
        for task in workers:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self.hub.close()

    # --- conversations and their tokens -----------------------------------------------------------

    async def create(self, *, channel: str = CHANNEL, meta: dict[str, object] | None = None) -> tuple[str, str]:
        token = secrets.token_urlsafe(32)
        info = await self.desk.store.create_session(
            self.desk.config.desk.entry, channel=channel, meta={**(meta or {}), "token_sha256": token_digest(token)}
        )
        return info.id, token

    async def authorize(self, session_id: str, token: str | None) -> SessionInfo:
        """The conversation if `token` is its own; 404, 401 or 403 otherwise."""
        info = await self.desk.store.get_session(session_id) if _plausible_id(session_id) else None
        digest = info.meta.get("token_sha256") if info is not None else None
        if info is None or not isinstance(digest, str):
            raise ApiError(404, "no such conversation")
        if not token:
            raise ApiError(401, "this conversation needs its token: send Authorization: Bearer TOKEN")
        if not hmac.compare_digest(token_digest(token), digest):
            raise ApiError(403, "that token is not this conversation's")
        return info

    # --- messages and turns ---------------------------------------------------------------------

    async def post(self, session_id: str, text: str) -> int:
        """Store the customer's message (durably, before returning its seq) and ask for a turn."""
        self.rate.check(session_id)
        item = await self.desk.runner.receive(session_id, text)
        await self.hub.stored(session_id, [item])  # no read back of what it stored
        self.want_turn(session_id)
        return item.seq

    def want_turn(self, session_id: str) -> None:
        """Run the agents on this session once more; turns of one session never overlap.

        Messages that arrive while a turn runs are answered by the next turn, in order."""
        self._wanted[session_id] = self._wanted.get(session_id, 0) + 1
        if session_id not in self._workers:
            task = asyncio.create_task(self._work(session_id), name=f"supportdesk-turn-{session_id}")
            self._workers[session_id] = task

    async def _work(self, session_id: str) -> None:
        try:
            while self._wanted.pop(session_id, 0):
                await self._turn(session_id)
        finally:
            self._workers.pop(session_id, None)

    async def _turn(self, session_id: str) -> None:
        config = self.desk.config
        try:
            async for event in self.desk.runner.retry_turn(session_id):
                if isinstance(event, Token):
                    self.hub.publish_delta(session_id, delta_event(config, event.agent, event.text))
                elif isinstance(event, Appended):
                    await self.hub.stored(session_id, [event.item])  # no read back of what it stored
        except asyncio.CancelledError:
            raise
        except Exception:  # the message is stored; staff see the session and can retry the turn
            log.exception("the turn on session %s failed", session_id)
        await self.hub.poke(session_id)
        for hook in self.after_turn:
            try:
                await hook(session_id)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("relaying the turn on session %s failed", session_id)

    async def _resume_unanswered(self) -> None:
        """A worker stopped between a 202 and its turn: answer those messages now."""
        for info in await self.desk.store.list_sessions(limit=RESUME_LOOKBACK):
            if info.channel not in RESUMED_CHANNELS or info.item_count == 0:
                continue
            [last] = await self.desk.store.latest(info.id, 1)
            if last.kind == "message" and last.role == "customer":
                self.want_turn(info.id)

    async def idle(self) -> None:
        """Wait until no turn is running or asked for (tests, benchmarks, shutdown)."""
        while self._workers:
            await asyncio.gather(*list(self._workers.values()), return_exceptions=True)


def _plausible_id(session_id: str) -> bool:
    return 0 < len(session_id) <= 64 and session_id.isascii() and session_id.replace("-", "").isalnum()
