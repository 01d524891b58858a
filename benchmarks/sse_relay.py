"""The peer of `bench_serve.py --relay`: a bare Starlette SSE relay, no storage and no agents.

It answers the same three routes as `supportdesk serve` with the same event format, so one load
generator drives both: `POST /api/conversations` makes a conversation (an id and a token),
`GET /api/conversations/{id}/events?token=...` follows it as server-sent events, and
`POST /api/conversations/{id}/messages` (Bearer token, `{"text": ...}`) gives the message the
conversation's next seq, answers 202 `{"seq": n}` and fans out two events to every open stream of
the conversation: the customer's message (seq n) and an echo as the agent's answer (seq n + 1).
Everything lives in this process's memory. Written for the benchmark; run as its own process:

    python benchmarks/sse_relay.py --port 0     # prints "relay on http://127.0.0.1:PORT/ "
"""

from __future__ import annotations

import argparse
import asyncio
import json
import secrets
import socket
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import datetime, timezone

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

# The loop serve picks for the same --loop, so the bar compares like with like.
from supportdesk.channels.command import loop_factory, tune_gc


@dataclass
class Conversation:
    token: str
    seq: int = 0
    streams: set[asyncio.Queue[str]] = field(default_factory=set)

    def publish(self, kind: str, data: dict[str, object]) -> None:
        self.seq += 1
        body = json.dumps({"type": kind, "seq": self.seq, **data}, ensure_ascii=False)
        chunk = f"id: {self.seq}\nevent: {kind}\ndata: {body}\n\n"
        for queue in self.streams:
            queue.put_nowait(chunk)


def create_app() -> Starlette:
    conversations: dict[str, Conversation] = {}

    def find(request: Request, token: str | None) -> Conversation | None:
        found = conversations.get(request.path_params["id"])
        return found if found is not None and token == found.token else None

    async def create(request: Request) -> Response:
        cid, token = secrets.token_hex(8), secrets.token_urlsafe(32)
        conversations[cid] = Conversation(token)
        return JSONResponse({"conversation_id": cid, "token": token}, status_code=201)

    async def post(request: Request) -> Response:
        conversation = find(request, request.headers.get("authorization", "").removeprefix("Bearer "))
        if conversation is None:
            return JSONResponse({"error": "no such conversation"}, status_code=404)
        text = (await request.json())["text"]
        at = datetime.now(timezone.utc).isoformat()
        conversation.publish("message", {"from": "customer", "text": text, "at": at})
        seq = conversation.seq
        conversation.publish("message", {"from": "agent", "agent": "Relay", "text": f"You said: {text}", "at": at})
        return JSONResponse({"seq": seq}, status_code=202)

    async def events(request: Request) -> Response:
        conversation = find(request, request.query_params.get("token"))
        if conversation is None:
            return JSONResponse({"error": "no such conversation"}, status_code=404)
        queue: asyncio.Queue[str] = asyncio.Queue()
        conversation.streams.add(queue)

        async def stream() -> AsyncIterator[str]:
            try:
                yield "retry: 1000\n\n"
                while True:
                    chunks = [await queue.get()]
                    while not queue.empty():
                        chunks.append(queue.get_nowait())
                    yield "".join(chunks)
            finally:
                conversation.streams.discard(queue)

        return StreamingResponse(stream(), media_type="text/event-stream", headers={"Cache-Control": "no-store"})

    return Starlette(routes=[
        Route("/api/conversations", create, methods=["POST"]),
        Route("/api/conversations/{id}/messages", post, methods=["POST"]),
        Route("/api/conversations/{id}/events", events),
    ])


def main() -> int:
    import uvicorn

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--loop", choices=("auto", "uvloop", "asyncio"), default="auto",
                        help="the event loop, as `supportdesk serve --loop` takes it (default auto: uvloop's when installed)")
    args = parser.parse_args()
    # Served as `supportdesk serve` is: uvicorn on a socket bound first, access log off.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", args.port))
    sock.listen(2048)
    server = uvicorn.Server(uvicorn.Config(create_app(), log_level="warning", access_log=False, timeout_graceful_shutdown=2))
    tune_gc()  # (what serve does once it has built its app)
    print(f"relay on http://127.0.0.1:{sock.getsockname()[1]}/ ", file=sys.stderr, flush=True)
    # On the event loop serve would run on (`supportdesk serve --loop`): the peer gets what serve gets.
    with sock, asyncio.Runner(loop_factory=loop_factory(args.loop)) as runner:
        runner.run(server.serve(sockets=[sock]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
