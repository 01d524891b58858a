"""`supportdesk serve`: the web API, the chat page and the channels, served by uvicorn.

Registered through `cli.PLUG_INS`, so only `supportdesk serve` imports it (and the web
framework it needs, an optional extra).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import logging
import os
import signal
import socket
import sys
from collections.abc import Callable
from typing import Any

from supportdesk.argtypes import at_least, port_number

SERVE_EXTRA = "pip install 'supportdesk[serve]'"
# The staff API's bearer token (POST /api/staff/...); unset, the staff endpoints are off.
STAFF_TOKEN_VARIABLE = "SUPPORTDESK_STAFF_TOKEN"


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    serve = sub.add_parser(
        "serve",
        parents=[common],
        description="Serve the desk to customers over HTTP: a JSON API, server-sent events and a chat page.",
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1, this machine only)")
    serve.add_argument("--port", type=port_number, default=8080, help="port (default: 8080; 0 picks a free one)")
    serve.add_argument(
        "--messages-per-minute", type=at_least(1, "messages"), default=20, metavar="N", help="per conversation; more get 429 (default: 20)"
    )
    serve.add_argument(
        "--client-conversations-per-minute", type=at_least(1, "conversations"), default=30, metavar="N",
        help="new conversations one client (IP address) may open a minute; more get 429 (default: 30)",
    )
    serve.add_argument(
        "--client-messages-per-minute", type=at_least(1, "messages"), default=120, metavar="N",
        help="messages one client may send a minute across its conversations; more get 429 (default: 120)",
    )
    serve.add_argument("--access-log", action="store_true", help="log each request (method, path, status; never a token)")
    serve.add_argument(
        "--loop", choices=LOOPS, default="auto",
        help="the event loop: uvloop's (the serve extra's) or asyncio's own; auto: uvloop when installed (default: auto)",
    )
    serve.set_defaults(func=_serve)


# What `--loop` takes. uvloop's loop (C, on libuv) runs a served message's event-loop work (the
# HTTP reads and writes, each stream's wake and write, the store thread's hand-backs) for less
# CPU than asyncio's own: 6 % less a served message, 8 % less on the event loop's thread, and a
# lower p95, in four alternated pairs of runs under bench_serve's --relay load (issue 34).
LOOPS = ("auto", "uvloop", "asyncio")


def loop_factory(choice: str) -> Callable[[], asyncio.AbstractEventLoop] | None:
    """The event loop `--loop` names (None: asyncio's own); auto is uvloop's when it is installed.
    Raises ImportError when uvloop is asked for by name and missing."""
    if choice == "asyncio":
        return None
    try:
        import uvloop
    except ImportError:
        if choice == "uvloop":
            raise
        return None
    return uvloop.new_event_loop


# The collector's youngest generation in a serve process (Python's default is 700). A served
# message allocates thousands of short-lived objects (requests, events, items, the model's
# reading), so at 700 the young generation was collected about once a message and each pass
# moved what was alive at that instant into the older generations, whose passes then walked
# the desk's long-lived objects (config, model, readers): 0.32 ms of collector CPU a served
# message under bench_serve's --relay load (--profile, 250 messages, timed by gc.callbacks),
# 0.08 ms so (issue 34). The relay peer runs with the same.
GC_YOUNG = 20_000


def tune_gc() -> None:
    """Once the process has built what it keeps (the desk, the app): what is alive now is moved
    out of the collector's sight (`gc.freeze`: never walked again, never freed while it lives
    anyway), and the young generation is collected every GC_YOUNG allocations instead of 700.
    Only collection timing changes: cycles are still found and freed."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(GC_YOUNG, *gc.get_threshold()[1:])


def _serve(args: argparse.Namespace) -> int:
    """The server on the event loop `--loop` names (asyncio.run's shutdown: tasks cancelled,
    async generators and the default executor closed)."""
    try:
        factory = loop_factory(args.loop)
    except ImportError:
        print(f"supportdesk: --loop uvloop needs uvloop; install it with {SERVE_EXTRA}", file=sys.stderr)
        return 1
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(_serve_on_loop(args))


async def _serve_on_loop(args: argparse.Namespace) -> int:
    try:
        import uvicorn

        from supportdesk.channels.conversations import ClientLimits
        from supportdesk.channels.web import create_app
    except ImportError as exc:
        print(f"supportdesk: serving needs the web extra ({exc.name} is missing); install it with {SERVE_EXTRA}", file=sys.stderr)
        return 1
    from supportdesk.wiring import open_desk

    try:
        sock = socket.socket(socket.AF_INET6 if ":" in args.host else socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((args.host, args.port))
        sock.listen(2048)  # connections made before uvicorn starts wait in the backlog
    except OSError as exc:
        print(f"supportdesk: cannot listen on {args.host}:{args.port}: {exc.strerror}; choose another --host/--port", file=sys.stderr)
        return 2

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    logging.getLogger("supportdesk.serve.access").setLevel(logging.INFO if args.access_log else logging.WARNING)
    async with await open_desk(args.db, args.config) as desk:
        # A PostgreSQL store opens and prepares the connections a served load uses now, before
        # the first customer, not during the load (issue 34); SQLite has nothing to warm.
        warm = getattr(desk.store, "warm", None)
        if warm is not None:
            await warm()
        # The model's one-off work too (the offline model's router, readers and rules), so the
        # first customer of each worker does not wait for it.
        desk.runner.warm()
        desk.runner.warm_model()
        # Staff act over the API with this token as the bearer; it is read here once and never
        # printed or logged (the access log writes method, path and status only).
        staff_token = os.environ.get(STAFF_TOKEN_VARIABLE, "").strip() or None
        limits = ClientLimits(
            conversations_per_minute=args.client_conversations_per_minute, messages_per_minute=args.client_messages_per_minute
        )
        app = create_app(desk, messages_per_minute=args.messages_per_minute, staff_token=staff_token, client_limits=limits)
        config = uvicorn.Config(
            app,
            log_level="warning",
            access_log=False,  # uvicorn's line includes the query string, where an event stream's token travels
            lifespan="on",
            timeout_graceful_shutdown=2,
        )
        server = uvicorn.Server(config)
        # SIGINT/SIGTERM end the server and then close the desk in order. uvicorn's own capture
        # would re-raise the signal afterwards, into asyncio.run's handler, which cancels the
        # desk's close half-way and leaves the database thread hanging.
        server.capture_signals = contextlib.nullcontext  # type: ignore[method-assign, assignment]
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, lambda: setattr(server, "should_exit", True))
        tune_gc()
        host, port = sock.getsockname()[:2]
        shown = f"[{host}]" if ":" in host else host
        staff = "on" if staff_token else f"off (set {STAFF_TOKEN_VARIABLE} to turn it on)"
        running = type(loop).__module__.partition(".")[0]  # uvloop or asyncio (`--loop`)
        print(f"supportdesk: serving {desk.config.desk.name} on http://{shown}:{port}/ (store: {desk.store.location}; "
              f"staff API {staff}; event loop {running})", file=sys.stderr, flush=True)
        with sock:
            await server.serve(sockets=[sock])
    return 0
