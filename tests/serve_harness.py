"""A real `serve` app on 127.0.0.1 for tests: uvicorn in the test's loop, an SSE reader."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import uvicorn

from supportdesk.channels.web import create_app
from supportdesk.config import DeskConfig, parse_desk
from supportdesk.engine.desk import Desk
from supportdesk.wiring import open_desk

REPO = Path(__file__).resolve().parent.parent
# Refunds from $20 wait for staff, so the demo's $29.99 duplicate needs an approval.
APPROVAL_DESK_THRESHOLD = 20.0


def repo_desk(*, approval_threshold: float | None = None) -> DeskConfig:
    text = (REPO / "agents.toml").read_text(encoding="utf-8")
    if approval_threshold is not None:
        assert "approval_threshold = 250.0" in text
        text = text.replace("approval_threshold = 250.0", f"approval_threshold = {approval_threshold}")
    return parse_desk(text, str(REPO / "agents.toml"))


def write_approval_desk(folder: Path) -> Path:
    text = (REPO / "agents.toml").read_text(encoding="utf-8")
    path = folder / "agents.toml"
    path.write_text(text.replace("approval_threshold = 250.0", f"approval_threshold = {APPROVAL_DESK_THRESHOLD}"))
    return path


@dataclass
class Served:
    url: str
    desk: Desk
    app: Any

    @property
    def conversations(self) -> Any:
        return self.app.state.conversations


@asynccontextmanager
async def serving(db: Path | str, config: DeskConfig, **app_options: Any) -> AsyncIterator[Served]:
    async with await open_desk(db, config) as desk:
        app = create_app(desk, **app_options)
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        server = uvicorn.Server(
            uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on", timeout_graceful_shutdown=1)
        )
        task = asyncio.create_task(server.serve(sockets=[sock]))
        try:
            while not server.started:
                if task.done():
                    task.result()
                await asyncio.sleep(0.01)
            yield Served(f"http://127.0.0.1:{port}", desk, app)
        finally:
            server.should_exit = True
            await task
            sock.close()


async def new_conversation(client: httpx.AsyncClient) -> tuple[str, str]:
    response = await client.post("/api/conversations")
    assert response.status_code == 201, response.text
    body = response.json()
    return body["conversation_id"], body["token"]


async def say(client: httpx.AsyncClient, conversation: tuple[str, str], text: str) -> int:
    cid, token = conversation
    response = await client.post(
        f"/api/conversations/{cid}/messages", json={"text": text}, headers={"Authorization": f"Bearer {token}"}
    )
    assert response.status_code == 202, response.text
    return response.json()["seq"]


@dataclass
class SseEvent:
    id: int | None
    event: str
    data: dict[str, Any]


async def read_events(
    client: httpx.AsyncClient,
    conversation: tuple[str, str],
    until: Callable[[list[SseEvent]], bool],
    *,
    last_event_id: int | None = None,
    timeout: float = 20.0,
    token_in_query: bool = False,
    on_open: Callable[[], Awaitable[object]] | None = None,
) -> list[SseEvent]:
    """Events of the conversation's stream until `until(events)` holds (or fail at `timeout`)."""
    cid, token = conversation
    headers = {} if token_in_query else {"Authorization": f"Bearer {token}"}
    params = {"token": token} if token_in_query else {}
    if last_event_id is not None:
        headers["Last-Event-ID"] = str(last_event_id)
    events: list[SseEvent] = []
    async with asyncio.timeout(timeout):
        async with client.stream("GET", f"/api/conversations/{cid}/events", headers=headers, params=params) as response:
            assert response.status_code == 200, await response.aread()
            assert response.headers["content-type"].startswith("text/event-stream")
            if on_open is not None:  # the stream is subscribed once its headers arrive
                await on_open()
            async for event in parse_sse(response.aiter_lines()):
                events.append(event)
                if until(events):
                    return events
    raise AssertionError(f"the stream ended before the condition held: {events}")


async def parse_sse(lines: AsyncIterator[str]) -> AsyncIterator[SseEvent]:
    fields: dict[str, str] = {}
    async for line in lines:
        if line == "":
            if "data" in fields:
                yield SseEvent(int(fields["id"]) if "id" in fields else None, fields.get("event", "message"), json.loads(fields["data"]))
            fields = {}
        elif not line.startswith(":"):
            name, _, value = line.partition(":")
            fields[name] = value[1:] if value.startswith(" ") else value


def final_agent_reply(events: list[SseEvent], containing: str = "") -> bool:
    return any(e.event == "message" and e.data["from"] == "agent" and containing in e.data["text"] for e in events)
