"""A scripted OpenAI-compatible chat-completion server on 127.0.0.1 for tests.

It speaks real HTTP (HTTP/1.1, chunked server-sent events), so the client's transport,
timeouts and connection handling are exercised for real. Tests queue replies; each request
takes the next one (or a `Scripted` callable decides from the request body). Every request
body is kept for assertions.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# --- replies ----------------------------------------------------------------------------------


@dataclass
class Status:
    """A plain HTTP error (or any JSON body) with optional headers such as Retry-After."""

    code: int
    body: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Stream:
    """Server-sent chat-completion chunks; `drop_after` cuts the connection after that many."""

    chunks: list[dict[str, Any]]
    drop_after: int | None = None
    done: bool = True


@dataclass
class Complete:
    """A whole (non-streamed) chat completion with this assistant message."""

    message: dict[str, Any]
    finish_reason: str = "stop"
    usage: dict[str, int] | None = None


@dataclass
class Hang:
    """Accept the request and say nothing for this long (or until the server stops)."""

    seconds: float = 30.0


@dataclass
class Raw:
    """Exactly these bytes as the body (an empty reply, HTML, half a JSON document ...)."""

    body: bytes
    content_type: str = "application/json"
    code: int = 200


Reply = Status | Stream | Complete | Hang | Raw
Scripted = Callable[[dict[str, Any]], Reply]


def _chunk(delta: dict[str, Any], finish: str | None = None, model: str = "fake-model") -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": 1763700000,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def text_stream(text: str, pieces: int = 3, usage: dict[str, int] | None = None) -> Stream:
    """A streamed text reply cut into about `pieces` deltas."""
    size = max(1, -(-len(text) // pieces))
    chunks = [_chunk({"role": "assistant", "content": ""})]
    chunks += [_chunk({"content": text[i : i + size]}) for i in range(0, len(text), size)]
    chunks.append(_chunk({}, "stop"))
    if usage is not None:
        chunks.append({**_chunk({}), "choices": [], "usage": usage})
    return Stream(chunks)


def tool_stream(calls: list[tuple[str, str]], text: str = "", usage: dict[str, int] | None = None) -> Stream:
    """Streamed tool calls [(name, arguments JSON)], llama.cpp style: the id and the name are
    repeated in every delta and the arguments arrive in pieces."""
    chunks = [_chunk({"role": "assistant", "content": text or None})]
    for index, (name, arguments) in enumerate(calls):
        call_id = f"call_{index}_{abs(hash((name, arguments))) % 10**8}"
        half = len(arguments) // 2
        for part in (arguments[:half], arguments[half:]):
            chunks.append(
                _chunk(
                    {
                        "tool_calls": [
                            {
                                "index": index,
                                "id": call_id,
                                "type": "function",
                                "function": {"name": name, "arguments": part},
                            }
                        ]
                    }
                )
            )
    chunks.append(_chunk({}, "tool_calls"))
    if usage is not None:
        chunks.append({**_chunk({}), "choices": [], "usage": usage})
    return Stream(chunks)


# --- the server ------------------------------------------------------------------------------


class FakeLLMServer:
    def __init__(self, models: list[str] | None = None, *, list_models: bool = True):
        # None: the server has no /models route (some proxies), so GET /models is a 404.
        self.models: list[str] | None = (models if models is not None else ["fake-model"]) if list_models else None
        # Set to answer GET requests with this instead (a 401 for a bad key, say).
        self.models_reply: Status | Raw | None = None
        self.replies: deque[Reply | Scripted] = deque()
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.paths: list[str] = []
        self.stopping = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def push(self, *replies: Reply | Scripted) -> None:
        self.replies.extend(replies)

    def start(self) -> FakeLLMServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output quiet
                pass

            def do_GET(self) -> None:
                server.paths.append(self.path)
                if server.models_reply is not None:
                    reply = server.models_reply
                    if isinstance(reply, Raw):
                        self._raw(reply)
                    else:
                        self._json(reply.code, reply.body, reply.headers)
                elif self.path.rstrip("/").endswith("/models") and server.models is not None:
                    data = [{"id": m, "object": "model", "created": 0, "owned_by": "fake"} for m in server.models]
                    self._json(200, {"object": "list", "data": data})
                else:
                    self._json(404, {"error": {"message": f"no route {self.path}"}})

            def do_POST(self) -> None:
                server.paths.append(self.path)
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                server.requests.append(body)
                server.headers.append({k.lower(): v for k, v in self.headers.items()})
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._json(404, {"error": {"message": f"no route {self.path}"}})
                    return
                reply = server.replies.popleft() if server.replies else Status(
                    500, {"error": {"message": "the fake server has no reply queued"}}
                )
                if callable(reply):
                    reply = reply(body)
                self._reply(reply, body)

            def _reply(self, reply: Reply, body: dict[str, Any]) -> None:
                if isinstance(reply, Status):
                    self._json(reply.code, reply.body, reply.headers)
                elif isinstance(reply, Complete):
                    usage = reply.usage or {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
                    self._json(
                        200,
                        {
                            "id": "chatcmpl-fake",
                            "object": "chat.completion",
                            "created": 1763700000,
                            "model": body.get("model", "fake-model"),
                            "choices": [{"index": 0, "message": {"role": "assistant", **reply.message}, "finish_reason": reply.finish_reason}],
                            "usage": usage,
                        },
                    )
                elif isinstance(reply, Hang):
                    server.stopping.wait(reply.seconds)
                    self.close_connection = True
                elif isinstance(reply, Stream):
                    self._stream(reply)
                elif isinstance(reply, Raw):
                    self._raw(reply)

            def _raw(self, reply: Raw) -> None:
                self.send_response(reply.code)
                self.send_header("content-type", reply.content_type)
                self.send_header("content-length", str(len(reply.body)))
                self.end_headers()
                self.wfile.write(reply.body)

            def _json(self, code: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
                data = json.dumps(payload).encode()
                self.send_response(code)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, reply: Stream) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                for i, chunk in enumerate(reply.chunks):
                    if reply.drop_after is not None and i >= reply.drop_after:
                        # Half a chunked frame, then the connection goes away.
                        self.wfile.write(b"40\r\ndata: {\"id\"")
                        self.wfile.flush()
                        time.sleep(0.05)
                        self.close_connection = True
                        self.connection.shutdown(2)
                        return
                    self._frame(f"data: {json.dumps(chunk)}\n\n".encode())
                if reply.done:
                    self._frame(b"data: [DONE]\n\n")
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()

            def _frame(self, data: bytes) -> None:
                self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                self.wfile.flush()

        return Handler
