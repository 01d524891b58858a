"""The desk as a Chatwoot agent bot.

Chatwoot posts its agent-bot events to `POST /channels/chatwoot/webhook/{secret}`. Every
delivery is authenticated by the secret in the URL (older Chatwoot versions sign nothing) and,
when a signing secret is configured, by `X-Chatwoot-Signature`: `sha256=` and the hex HMAC-SHA256
of `{X-Chatwoot-Timestamp}.{raw body}`, with timestamps older or newer than
`max_signature_age` refused.

The bot acts only on `message_created` events whose message is incoming, not private, in a
conversation whose status is `pending` (the bot's while it holds it); everything else is answered
200 and ignored. Each Chatwoot conversation is one desk session (id `cw-{account}-{conversation}`,
channel `chatwoot`); the customer's message is stored with its Chatwoot id before the 200, so a
redelivered event is recognised and processed once. The turn runs like a web turn; a relay follows
the session's customer events (whoever wrote them: this server, or staff in the TUI) and posts
each agent reply to Chatwoot, and, when the desk asks for a person, a private note with the handoff
summary followed by `toggle_status` `open`. Chatwoot being down is retried with backoff for as
long as it takes, and reported in the session (an `info` notice staff see in the TUI).
`conversation_resolved` closes the session.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
import logging
import math
import os
import time
from collections.abc import Callable, Mapping
from typing import Any, TypeGuard

import httpx
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from supportdesk.channels.conversations import MAX_MESSAGE_BYTES, ApiError, Conversations
from supportdesk.channels.payload import parse
from supportdesk.channels.view import CustomerEvent
from supportdesk.config import ChatwootSettings, ConfigError
from supportdesk.engine.confirmation import answer_meta
from supportdesk.engine.runner import DuplicateItem
from supportdesk.items import Message, Notice, ToolCall

log = logging.getLogger("supportdesk.serve.chatwoot")

CHANNEL = "chatwoot"
# Webhook bodies past this are refused (a Chatwoot message event is a few KB).
MAX_WEBHOOK_BYTES = 1024 * 1024
# Backoff between attempts at a Chatwoot call: doubling from `first` up to `cap` seconds.
RETRY_FIRST = 0.5
RETRY_CAP = 60.0
# The notice data key marking the last item relayed to Chatwoot (the outbox's position).
RELAYED = "chatwoot_relayed"
# Attempts before the session is told that Chatwoot is unreachable (retrying goes on after).
ATTEMPTS_BEFORE_REPORT = 4


class ChatwootUnavailable(Exception):
    """Chatwoot did not take a call (unreachable, 5xx, 429); worth trying again."""


class ChatwootRefused(Exception):
    """Chatwoot refused a call for good (401, 404 ...): retrying cannot help."""


class ChatwootApi:
    """The two calls the bot makes, with `api_access_token`."""

    def __init__(self, settings: ChatwootSettings, token: str, *, timeout: float = 10.0):
        self.settings = settings
        self._client = httpx.AsyncClient(
            base_url=settings.base_url, headers={"api_access_token": token}, timeout=timeout
        )

    def _conversation(self, conversation_id: int) -> str:
        return f"/api/v1/accounts/{self.settings.account_id}/conversations/{conversation_id}"

    async def send_message(self, conversation_id: int, content: str, *, private: bool = False) -> None:
        body = {"content": content, "message_type": "outgoing", "private": private}
        await self._post(f"{self._conversation(conversation_id)}/messages", body)

    async def send_select(self, conversation_id: int, content: str, options: list[tuple[str, str]]) -> None:
        """An interactive `input_select` message: the contact picks one option (title, value)."""
        body = {
            "content": content,
            "message_type": "outgoing",
            "private": False,
            "content_type": "input_select",
            "content_attributes": {"items": [{"title": title, "value": value} for title, value in options]},
        }
        await self._post(f"{self._conversation(conversation_id)}/messages", body)

    async def open_conversation(self, conversation_id: int) -> None:
        await self._post(f"{self._conversation(conversation_id)}/toggle_status", {"status": "open"})

    async def _post(self, path: str, body: dict[str, Any]) -> None:
        try:
            response = await self._client.post(path, json=body)
        except httpx.HTTPError as exc:
            raise ChatwootUnavailable(f"{type(exc).__name__}") from None
        if response.status_code == 429 or response.status_code >= 500:
            raise ChatwootUnavailable(f"HTTP {response.status_code}")
        if response.status_code >= 400:
            raise ChatwootRefused(f"HTTP {response.status_code} for {path}")

    async def aclose(self) -> None:
        await self._client.aclose()


def session_id_for(account_id: int, conversation_id: int) -> str:
    return f"cw-{account_id}-{conversation_id}"


def signature(secret: str, timestamp: str, body: bytes) -> str:
    """What Chatwoot sends in X-Chatwoot-Signature for this body and timestamp."""
    mac = hmac.new(secret.encode("utf-8"), timestamp.encode("ascii") + b"." + body, hashlib.sha256)
    return f"sha256={mac.hexdigest()}"


class ChatwootChannel:
    """The Chatwoot agent bot as a channel (channels/protocol.py): a thread is a Chatwoot
    conversation id; it receives through its webhook and delivers through its own relay, which
    marks each delivery in the log so a restart delivers what was stored but not sent."""

    name = CHANNEL

    def __init__(
        self,
        settings: ChatwootSettings,
        conversations: Conversations,
        *,
        env: Mapping[str, str] = os.environ,
        clock: Callable[[], float] = time.time,
        retry_first: float = RETRY_FIRST,
        retry_cap: float = RETRY_CAP,
    ):
        missing = [
            name
            for name in (settings.token_env, settings.webhook_secret_env, settings.signing_secret_env)
            if name is not None and not env.get(name)
        ]
        if missing:
            raise ConfigError(
                [f"channels.chatwoot: set the environment variable {name} (named in the desk file)" for name in missing]
            )
        self.settings = settings
        self.conversations = conversations
        self.desk = conversations.desk
        self.api = ChatwootApi(settings, env[settings.token_env])
        self._path_secret = env[settings.webhook_secret_env]
        self._signing_secret = env.get(settings.signing_secret_env) if settings.signing_secret_env else None
        self._clock = clock
        self._retry_first = retry_first
        self._retry_cap = retry_cap
        self._locks: dict[int, asyncio.Lock] = {}
        self._relays: dict[str, asyncio.Task[None]] = {}
        self._handed_over: set[str] = set()

    # --- lifecycle ---------------------------------------------------------------------------------

    def session_for(self, thread: str) -> str:
        """The session of Chatwoot conversation `thread` (its id) in the configured account."""
        return session_id_for(self.settings.account_id, int(thread))

    async def start(self) -> None:
        """Relay the sessions still held by the bot (a restart must not leave one unfollowed),
        each from the last item relayed: the log is the outbox, so a reply stored but not yet
        delivered when the worker stopped is delivered now (at least once)."""
        for info in await self.desk.store.list_sessions(limit=500):
            if info.channel == CHANNEL and info.status not in ("resolved", "needs_human"):
                await self._follow(info.id, after=await self._relayed_upto(info.id))

    async def _relayed_upto(self, session_id: str) -> int:
        """The seq of the last item relayed to Chatwoot (its marker notice), or 0."""
        for notice in reversed(await self.desk.store.of_kind(session_id, "notice")):
            if isinstance(notice, Notice) and isinstance(notice.data.get(RELAYED), int):
                return int(notice.data[RELAYED])
        return 0

    async def close(self) -> None:
        relays = list(self._relays.values())
        for task in relays:
            task.cancel()
        for task in relays:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self.api.aclose()

    # --- the webhook -------------------------------------------------------------------------------

    async def webhook(self, request: Request) -> Response:
        if not hmac.compare_digest(request.path_params["secret"].encode(), self._path_secret.encode()):
            raise ApiError(404, "not found")
        body = await _read_limited(request)
        if self._signing_secret is not None:
            self._check_signature(request, body)
        payload = await parse(body)
        if not isinstance(payload, dict):
            raise ApiError(400, "the body is not a Chatwoot event")
        match payload.get("event"):
            case "message_created":
                return await self._message_created(payload)
            case "message_updated":
                return await self._option_chosen(payload)
            case "conversation_resolved":
                return await self._conversation_resolved(payload)
            case other:
                return _ignored(f"event {other!r} is not for the bot")

    def _check_signature(self, request: Request, body: bytes) -> None:
        assert self._signing_secret is not None
        timestamp = request.headers.get("x-chatwoot-timestamp", "")
        given = request.headers.get("x-chatwoot-signature", "")
        if not timestamp or not given:
            raise ApiError(401, "unsigned delivery: X-Chatwoot-Signature and X-Chatwoot-Timestamp are required")
        try:
            sent_at = float(timestamp)
        except ValueError:
            raise ApiError(401, "X-Chatwoot-Timestamp is not a time") from None
        if not math.isfinite(sent_at):  # "nan" fails every comparison, so it would pass the age test
            raise ApiError(401, "X-Chatwoot-Timestamp is not a time")
        age = abs(self._clock() - sent_at)
        if age > self.settings.max_signature_age:
            raise ApiError(401, "stale delivery: X-Chatwoot-Timestamp is too far from now")
        expected = signature(self._signing_secret, timestamp, body)
        if not given.startswith("sha256="):
            given = f"sha256={given}"
        if not hmac.compare_digest(expected.encode(), given.encode()):
            raise ApiError(401, "X-Chatwoot-Signature does not match the body")

    async def _message_created(self, payload: dict[str, Any]) -> Response:
        conversation = _table(payload, "conversation")
        message_id = payload.get("id")
        conversation_id = conversation.get("id")
        if not _is_int(message_id) or not _is_int(conversation_id):
            raise ApiError(422, "message_created needs the message's id and its conversation's id (integers)")
        # Each field by its documented type: a string is not a boolean, false is not 0.
        message_type = payload.get("message_type")
        if not (message_type in MESSAGE_TYPES and type(message_type) in (str, int)):
            raise ApiError(422, f"message_type must be one of {', '.join(map(repr, MESSAGE_TYPES))}")
        private = payload.get("private", False)
        if private is not None and not isinstance(private, bool):
            raise ApiError(422, '"private" must be true or false')
        status = conversation.get("status")
        if status is not None and not isinstance(status, str):
            raise ApiError(422, "the conversation's status must be a string")
        content = payload.get("content")
        if content is not None and not isinstance(content, str):
            raise ApiError(422, '"content" must be a string')
        if message_type not in ("incoming", 0):
            return _ignored("not an incoming message (the bot's own echo, or an agent's)")
        if private:
            return _ignored("a private note")
        if status != "pending":
            return _ignored("the conversation is not pending: people hold it")
        if not self._ours(payload, conversation):
            return _ignored("another account or inbox")
        if content is None or not content.strip():
            return _ignored("no text")
        if len(content.encode("utf-8", "surrogatepass")) > MAX_MESSAGE_BYTES:
            raise ApiError(413, f"the message is over {MAX_MESSAGE_BYTES // 1024} KB")

        session_id = session_id_for(self.settings.account_id, conversation_id)
        async with self._locks.setdefault(conversation_id, asyncio.Lock()):
            store = self.desk.store
            info = await store.get_session(session_id)
            if info is None:
                inbox = _table(payload, "inbox")
                meta = {"chatwoot_account": self.settings.account_id, "chatwoot_conversation": conversation_id}
                if isinstance(inbox.get("id"), int):
                    meta["chatwoot_inbox"] = inbox["id"]
                try:
                    await store.create_session(self.desk.config.desk.entry, session_id=session_id, channel=CHANNEL, meta=meta)
                except Exception:
                    # Another worker got the same first delivery and created it a moment ago:
                    # carry on with its session (and its dedupe) rather than answer 500.
                    if await store.get_session(session_id) is None:
                        raise
                    if await self._seen(session_id, message_id):
                        return JSONResponse({"status": "duplicate", "message_id": message_id})
            elif await self._seen(session_id, message_id):
                return JSONResponse({"status": "duplicate", "message_id": message_id})
            await self._follow(session_id)
            # The check above answers a plain redelivery cheaply; the store's own check, in the
            # append's transaction, refuses the copy another worker stores at the same moment.
            try:
                item = await self.desk.runner.receive(
                    session_id, content, meta={"chatwoot_message_id": message_id}, external_id=f"chatwoot:{message_id}"
                )
            except DuplicateItem:
                return JSONResponse({"status": "duplicate", "message_id": message_id})
        self.conversations.want_turn(session_id)
        return JSONResponse({"status": "stored", "seq": item.seq})

    async def _option_chosen(self, payload: dict[str, Any]) -> Response:
        """The contact chose an option of the bot's `input_select` (an offer's Yes / No, issue 33):
        Chatwoot updates that message with `content_attributes.submitted_values`. Stored as the
        customer's message carrying a structured answer naming the offer, so the desk's gate
        reads the choice, not words."""
        if payload.get("content_type") != "input_select":
            return _ignored("an update that is not a choice")
        conversation = _table(payload, "conversation")
        message_id, conversation_id = payload.get("id"), conversation.get("id")
        if not isinstance(message_id, int) or not isinstance(conversation_id, int):
            raise ApiError(422, "message_updated needs the message's id and its conversation's id")
        if conversation.get("status") != "pending":
            return _ignored("the conversation is not pending: people hold it")
        if not self._ours(payload, conversation):
            return _ignored("another account or inbox")
        submitted = _table(payload, "content_attributes").get("submitted_values")
        chosen = submitted[0] if isinstance(submitted, list) and submitted and isinstance(submitted[0], dict) else {}
        value, title = chosen.get("value"), chosen.get("title")
        answer, _, offer_id = value.partition(":") if isinstance(value, str) else ("", "", "")
        if answer not in ("yes", "no") or not offer_id or len(offer_id) > 64:
            return _ignored("no choice of an offer")
        session_id = session_id_for(self.settings.account_id, conversation_id)
        async with self._locks.setdefault(conversation_id, asyncio.Lock()):
            if await self.desk.store.get_session(session_id) is None:
                return _ignored("a conversation the bot never had")
            messages = await self.desk.store.of_kind(session_id, "message")
            if any(m.meta.get("chatwoot_choice") == message_id for m in messages):
                return JSONResponse({"status": "duplicate", "message_id": message_id})
            text = title if isinstance(title, str) and title.strip() else answer.capitalize()
            meta = {"chatwoot_choice": message_id, **answer_meta(offer_id, answer == "yes")}
            try:
                item = await self.desk.runner.receive(
                    session_id, text[:200], meta=meta, external_id=f"chatwoot-choice:{message_id}"
                )
            except DuplicateItem:
                return JSONResponse({"status": "duplicate", "message_id": message_id})
        self.conversations.want_turn(session_id)
        return JSONResponse({"status": "stored", "seq": item.seq})

    def _ours(self, payload: dict[str, Any], conversation: dict[str, Any]) -> bool:
        account = payload.get("account")
        if isinstance(account, dict) and account.get("id") not in (None, self.settings.account_id):
            return False
        if not self.settings.inboxes:
            return True
        inbox = _table(payload, "inbox")
        inbox_id = inbox.get("id", conversation.get("inbox_id"))
        return inbox_id in self.settings.inboxes

    async def _seen(self, session_id: str, message_id: int) -> bool:
        """Whether this Chatwoot message is already in the session (a redelivery)."""
        messages = await self.desk.store.of_kind(session_id, "message")
        return any(m.meta.get("chatwoot_message_id") == message_id for m in messages)

    async def _conversation_resolved(self, payload: dict[str, Any]) -> Response:
        conversation_id = payload.get("id")
        if not _is_int(conversation_id):
            raise ApiError(422, "conversation_resolved needs the conversation's id")
        session_id = session_id_for(self.settings.account_id, conversation_id)
        if await self.desk.store.get_session(session_id) is None:
            return _ignored("a conversation the bot never had")
        await self.desk.store.set_status(session_id, "resolved")
        relay = self._relays.pop(session_id, None)
        if relay is not None:
            relay.cancel()
        return JSONResponse({"status": "resolved"})

    # --- replies to Chatwoot -----------------------------------------------------------------------

    async def _follow(self, session_id: str, after: int | None = None) -> None:
        if session_id in self._relays:
            return
        start = await self.desk.store.last_seq(session_id) if after is None else after
        task = asyncio.create_task(self._relay(session_id, start), name=f"supportdesk-chatwoot-{session_id}")
        self._relays[session_id] = task

    async def _relay(self, session_id: str, after: int) -> None:
        """Post the session's customer-facing events to Chatwoot, in order, each once."""
        while True:
            events = await self.conversations.hub.stream(session_id, after)
            try:
                async for batch in events:
                    for event in batch:
                        if event.seq is None:
                            continue  # a streamed piece: Chatwoot gets the stored reply
                        if await self.deliver(session_id, event):
                            # Marked once delivered (or refused for good): a restart resumes after it.
                            await self.desk.store.append(session_id, [Notice(
                                notice_kind="info", agent=await self._agent(session_id),
                                text=f"relayed item {event.seq} to Chatwoot", data={RELAYED: event.seq},
                            )])
                        after = event.seq
            finally:
                await events.aclose()
            # The stream ended (this reader fell behind): resume after the last event relayed.

    async def deliver(self, session_id: str, event: CustomerEvent) -> bool:
        """Post one event to Chatwoot; whether it was one to post."""
        conversation_id = int(session_id.rsplit("-", 1)[1])
        if event.type == "message" and event.data.get("from") in ("agent", "staff"):
            await self._with_retries(session_id, lambda: self.api.send_message(conversation_id, event.data["text"]))
            return True
        if event.type == "offer":
            # The question went as the agent's message; the choice comes back as `message_updated`.
            options = [(event.data["yes"], f"yes:{event.data['offer_id']}"), (event.data["no"], f"no:{event.data['offer_id']}")]
            await self._with_retries(session_id, lambda: self.api.send_select(conversation_id, "Please choose:", options))
            return True
        if event.type == "status" and event.data.get("status") in ("person", "delayed"):
            # (A take-over by desk staff, status "staff", leaves the conversation pending: the
            # bot keeps receiving the customer's messages for the person holding it in the desk.)
            if session_id in self._handed_over:
                return False
            summary = await self.handoff_summary(session_id)
            await self._with_retries(session_id, lambda: self.api.send_message(conversation_id, summary, private=True))
            await self._with_retries(session_id, lambda: self.api.open_conversation(conversation_id))
            self._handed_over.add(session_id)
            return True
        return False

    async def _with_retries(self, session_id: str, call: Callable[[], Any]) -> None:
        delay = self._retry_first
        failures = 0
        while True:
            try:
                await call()
            except ChatwootRefused as exc:
                await self._report(session_id, f"Chatwoot refused a reply ({exc}); it was not delivered.", "refused")
                return
            except ChatwootUnavailable as exc:
                failures += 1
                if failures == ATTEMPTS_BEFORE_REPORT:
                    await self._report(
                        session_id,
                        f"Chatwoot could not be reached ({exc}); the reply waits and is retried until it is delivered.",
                        "unreachable",
                    )
                await asyncio.sleep(delay)
                delay = min(delay * 2, self._retry_cap)
                continue
            if failures >= ATTEMPTS_BEFORE_REPORT:
                await self._report(session_id, f"Chatwoot is reachable again; the reply was delivered after {failures + 1} attempts.", "recovered")
            return

    async def _report(self, session_id: str, text: str, state: str) -> None:
        log.warning("session %s: %s", session_id, text)
        notice = Notice(notice_kind="info", text=text, data={"chatwoot": state}, agent=await self._agent(session_id))
        await self.desk.store.append(session_id, [notice])

    async def _agent(self, session_id: str) -> str:
        info = await self.desk.store.get_session(session_id)
        return info.active_agent if info is not None else self.desk.config.desk.entry

    async def handoff_summary(self, session_id: str) -> str:
        """For the people taking over: what the customer wants, what the agents did, why a person."""
        store, config = self.desk.store, self.desk.config
        context = {k: e.value for k, e in (await store.context_at(session_id)).items()}
        messages = [m for m in await store.of_kind(session_id, "message") if isinstance(m, Message)]
        customer = [m.text for m in messages if m.role == "customer"]
        wants = context.get("issue") or (customer[0] if customer else "(nothing said yet)")
        did: list[str] = []
        for handoff in await store.handoffs(session_id):
            to = config.agents.get(handoff.to_agent)
            did.append(f"handed to {to.title if to else handoff.to_agent} ({handoff.reason})")
        for call in await store.of_kind(session_id, "tool_call"):
            if isinstance(call, ToolCall) and call.name not in ("request_human",):
                did.append(f"{call.name}({json.dumps(call.arguments, ensure_ascii=False)})")
        notices = [n for n in await store.of_kind(session_id, "notice") if isinstance(n, Notice)]
        why = next(
            (n.text for n in reversed(notices) if n.notice_kind in ("human_requested", "limit", "provider_error")),
            "the desk asked for a person",
        )
        lines = [
            "Handoff from the supportdesk bot",
            f"Customer wants: {wants}",
            f"Agents did: {'; '.join(did) if did else 'nothing yet'}",
            f"Why a person: {why}",
            f"Desk session: {session_id}",
        ]
        return "\n".join(lines)


# Chatwoot's message types, by name or by number (0 incoming, 1 outgoing, 2 activity, 3 template).
MESSAGE_TYPES = ("incoming", "outgoing", "activity", "template", 0, 1, 2, 3)


def _is_int(value: object) -> TypeGuard[int]:
    return type(value) is int  # (True is an int to isinstance)


def _ignored(why: str) -> Response:
    return JSONResponse({"status": "ignored", "why": why})


async def _read_limited(request: Request) -> bytes:
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_WEBHOOK_BYTES:
            raise ApiError(413, "the delivery is over 1 MB")
    return bytes(body)


def _table(payload: dict[str, Any], key: str) -> dict[str, Any]:
    """The JSON object under `key`, or an empty one when the webhook sent something else."""
    value = payload.get(key)
    return value if isinstance(value, dict) else {}
