"""A fake Chatwoot API on 127.0.0.1 that records every call, and agent-bot webhook payloads.

The payloads carry the fields Chatwoot's agent-bot listener sends: the message's
`webhook_data` (id, content, message_type, content_type, private, sender, inbox, conversation,
account) merged with the event name, and for conversation events the conversation's event
data (id = display id, inbox_id, status, meta.sender ...)."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

ACCOUNT = 1
INBOX = 3
CONTACT = {"id": 17, "name": "Dana Reyes", "email": "dana@example.com", "phone_number": None, "type": "contact"}


@dataclass
class Call:
    method: str
    path: str
    token: str | None
    body: dict[str, Any]


@dataclass
class FakeChatwoot:
    url: str = ""
    calls: list[Call] = field(default_factory=list)
    # The next this-many calls answer 503 (Chatwoot down).
    failures: int = 0
    failed: int = 0

    async def _record(self, request: Request) -> JSONResponse:
        if self.failures > 0:
            self.failures -= 1
            self.failed += 1
            return JSONResponse({"error": "maintenance"}, status_code=503)
        body = await request.json()
        self.calls.append(Call(request.method, request.url.path, request.headers.get("api_access_token"), body))
        return JSONResponse({"id": len(self.calls), **body})

    def messages(self, conversation_id: int, *, private: bool | None = None) -> list[Call]:
        path = f"/api/v1/accounts/{ACCOUNT}/conversations/{conversation_id}/messages"
        return [c for c in self.calls if c.path == path and (private is None or c.body.get("private") is private)]

    async def wait_for(self, condition, timeout: float = 20.0) -> None:
        async with asyncio.timeout(timeout):
            while not condition():
                await asyncio.sleep(0.02)


@asynccontextmanager
async def fake_chatwoot() -> AsyncIterator[FakeChatwoot]:
    fake = FakeChatwoot()
    app = Starlette(
        routes=[
            Route("/api/v1/accounts/{account}/conversations/{conversation}/messages", fake._record, methods=["POST"]),
            Route("/api/v1/accounts/{account}/conversations/{conversation}/toggle_status", fake._record, methods=["POST"]),
        ]
    )
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    fake.url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off"))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        while not server.started:
            await asyncio.sleep(0.01)
        yield fake
    finally:
        server.should_exit = True
        await task
        sock.close()


def conversation_data(conversation_id: int, status: str = "pending", inbox_id: int = INBOX) -> dict[str, Any]:
    return {
        "additional_attributes": {},
        "can_reply": True,
        "channel": "Channel::WebWidget",
        "contact_inbox": {"id": 5, "contact_id": CONTACT["id"], "inbox_id": inbox_id, "source_id": "c0ffee"},
        "id": conversation_id,
        "inbox_id": inbox_id,
        "messages": [],
        "labels": [],
        "meta": {"sender": CONTACT, "assignee": None, "team": None, "hmac_verified": False},
        "status": status,
        "custom_attributes": {},
        "snoozed_until": None,
        "unread_count": 1,
        "first_reply_created_at": None,
        "priority": None,
        "waiting_since": 1763900000,
        "agent_last_seen_at": 0,
        "contact_last_seen_at": 0,
        "last_activity_at": 1763900000,
        "timestamp": 1763900000,
        "created_at": 1763900000,
        "updated_at": 1763900000.0,
    }


def message_created(
    message_id: int,
    conversation_id: int,
    content: str | None,
    *,
    message_type: str = "incoming",
    private: bool = False,
    status: str = "pending",
    inbox_id: int = INBOX,
    account_id: int = ACCOUNT,
) -> dict[str, Any]:
    sender = CONTACT if message_type == "incoming" else {"id": 2, "name": "Support bot", "type": "agent_bot"}
    return {
        "event": "message_created",
        "id": message_id,
        "content": content,
        "created_at": "2026-11-23T12:00:00.000Z",
        "message_type": message_type,
        "content_type": "text",
        "content_attributes": {},
        "source_id": None,
        "private": private,
        "sender": sender,
        "inbox": {"id": inbox_id, "name": "Website"},
        "conversation": conversation_data(conversation_id, status, inbox_id),
        "account": {"id": account_id, "name": "Acme Cloud"},
    }


def conversation_resolved(conversation_id: int) -> dict[str, Any]:
    return {"event": "conversation_resolved", **conversation_data(conversation_id, "resolved")}
