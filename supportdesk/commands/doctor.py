"""`supportdesk doctor`: one screen that says whether the session store and the configured model will work.

It checks, in order, what a user would otherwise find out the hard way: which desk file and
provider are in use, whether the API key variable is set, whether the server answers, whether
it serves the configured model(s), and whether it accepts tool calls (the desk cannot hand off
without them). Every line is ✓, ✗ or ! with plain words; never a traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import os
from collections.abc import Callable
from typing import Any

from supportdesk.config import ConfigError, DeskConfig, resolve_config_path
from supportdesk.engine.protocol import ModelProvider, ModelServer, ProviderError
from supportdesk.models import make_provider
from supportdesk.text import safe_text
from supportdesk.wiring import load_config

OK, BAD, WARN = "✓", "✗", "!"
# How many served model names to show when the configured one is missing.
_SHOW_MODELS = 8

Print = Callable[[str], None]


def register(sub: Any, common: argparse.ArgumentParser | None = None) -> None:
    parents = [common] if common is not None else []
    parser = sub.add_parser(
        "doctor",
        parents=parents,
        description="Check that the configured model provider answers, serves the model and accepts tools.",
    )
    if common is None:
        parser.add_argument("--config", metavar="PATH", help="desk file (default: see README)")
        parser.add_argument("--db", metavar="PATH|URL", help="the session database to check")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Exit 0 when everything works, 1 when a check failed, 2 when the desk file or --db is unusable as given."""
    path = getattr(args, "config", None)
    try:
        config = load_config(path)
    except ConfigError as exc:
        _line(print, BAD, "config", str(resolve_config_path(path)))
        for problem in exc.problems:
            print(f"    {safe_text(problem)}")
        return 2
    store = asyncio.run(check_store(getattr(args, "db", None)))
    if store:
        return store
    return asyncio.run(diagnose(config))


async def check_store(db: Any, out: Print = print) -> int:
    """One line on the session store: which adapter, where (password masked), how many sessions.

    0 when it opens; 2 when --db names a database that cannot be reached as given; 1 otherwise."""
    from supportdesk.store import StoreError, StoreLocationError, open_store, parse_location

    try:
        location = parse_location(db)
        if location.kind == "sqlite" and location.target != ":memory:" and not location.path.exists():
            _line(out, OK, "store", f"SQLite {location.display} (created on first use)")
            return 0
        async with await open_store(location) as store:
            count = await store.count_sessions()
    except StoreLocationError as exc:
        _line(out, BAD, "store", str(exc))
        return 2
    except StoreError as exc:
        _line(out, BAD, "store", str(exc))
        return 1
    name = "PostgreSQL" if location.kind == "postgresql" else "SQLite"
    _line(out, OK, "store", f"{name} {location.display} ({count} sessions)")
    return 0


def _line(out: Print, mark: str, what: str, text: str) -> None:
    out(f"{mark} {what:<9} {safe_text(text)}")


async def diagnose(config: DeskConfig, out: Print = print, provider: ModelProvider | None = None) -> int:
    """Check the configured provider (or `provider`, already built) as far as it can be checked:
    a `ModelServer` gets the key, server, model and tool checks; any other provider has nothing
    to reach. The provider is closed before returning."""
    _line(out, OK, "config", config.source or "(built in)")
    if provider is None:
        try:
            provider = make_provider(config)
        except ImportError as exc:  # the provider's extra is not installed
            _line(out, BAD, "client", str(exc))
            return 1
    try:
        if not isinstance(provider, ModelServer):
            _line(out, OK, "provider", f"{provider.name}: the embedded model needs no server, key or download")
            return 0
        return await _check_server(config, provider, out)
    finally:
        await provider.aclose()


async def _check_server(config: DeskConfig, provider: ModelServer, out: Print) -> int:
    settings = config.model
    _line(out, OK, "provider", provider.describe())
    failed = False
    if settings.api_key_env:
        if os.environ.get(settings.api_key_env, "").strip():
            _line(out, OK, "api key", f"read from ${settings.api_key_env} (set)")
        else:
            _line(out, BAD, "api key", f"${settings.api_key_env} is not set; export it with the server's key")
            return 1
    else:
        _line(out, OK, "api key", "none configured (fine for local servers; set model.api_key_env for hosted ones)")

    models = _models_in_use(config)
    served: list[str] | None
    try:
        served = await provider.list_models()
        _line(out, OK, "server", f"answers at {settings.base_url} ({len(served)} models listed)")
    except ProviderError as exc:
        if exc.kind == "unknown_model":
            # No /models route (some proxies): the tool probe below still checks the model.
            served = None
            _line(out, WARN, "server", "answers but lists no models at /models; checking the model directly")
        elif exc.kind == "bad_response":
            served = None
            _line(out, WARN, "server", f"{exc.message}; checking the model directly")
        else:
            _line(out, BAD, "server", exc.message)
            return 1
    except Exception as exc:  # whatever a server answers, one line, never a traceback
        served = None
        _line(out, WARN, "server", f"answered /models with something unreadable ({_what(exc)}); checking the model directly")

    usable: list[str] = []
    for model, users in models.items():
        who = f" (used by {', '.join(users)})" if users else ""
        if served is None or model in served:
            usable.append(model)
            if served is not None:
                _line(out, OK, "model", f"{model} is served{who}")
        else:
            shown = ", ".join(served[:_SHOW_MODELS]) + (" ..." if len(served) > _SHOW_MODELS else "")
            _line(out, BAD, "model", f"{model}{who} is not served; the server has: {shown or 'none'}")
            failed = True

    for model in usable:
        try:
            called = await provider.probe_tools(model)
        except ProviderError as exc:
            kind = "model" if exc.kind == "unknown_model" else "tools"
            _line(out, BAD, kind, f"{model}: {exc.message}")
            failed = True
            continue
        except Exception as exc:  # whatever a server answers, one line, never a traceback
            _line(out, BAD, "tools", f"{model}: the server's answer could not be read ({_what(exc)})")
            failed = True
            continue
        if called:
            _line(out, OK, "tools", f"{model} made a tool call when asked (handoffs will work)")
        else:
            _line(
                out,
                BAD,
                "tools",
                f"{model} answered with text instead of a tool call; agents cannot hand off with it "
                "(use a model or server with tool calling)",
            )
            failed = True
    return 1 if failed else 0


def _what(exc: BaseException) -> str:
    said = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {said[:120]}" if said else type(exc).__name__


def _models_in_use(config: DeskConfig) -> dict[str, list[str]]:
    """Each model name the desk will ask for, with the agents that override to it."""
    models: dict[str, list[str]] = {}
    if config.model.model:
        models[config.model.model] = []
    for agent in config.agents.values():
        if agent.model:
            models.setdefault(agent.model, []).append(agent.name)
    return models
