"""Untrusted JSON bodies, read safely: nesting checked before parsing, text made storable.

A body nested deeper than any real client sends (8,000 levels fit in 16 KB) would exhaust the
parser's recursion; it is refused from one linear scan of its bytes before `json.loads` sees it.
Parsed strings keep what the customer wrote except what no store can hold: a lone surrogate
(`"\\ud800"`, not UTF-8) and NUL (PostgreSQL text refuses it) become U+FFFD.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

from supportdesk.channels.conversations import ApiError

# Deeper than any client of ours nests (a Chatwoot event is about five levels).
MAX_JSON_DEPTH = 32
# Bodies past this are parsed in a thread: the event loop keeps serving meanwhile.
PARSE_IN_THREAD_BYTES = 64 * 1024

# A JSON string (escapes included) or one bracket: strings are skipped whole, so a bracket
# inside one is not counted. One pass, no backtracking (the string body is a possessive run).
_TOKENS = re.compile(rb'"(?:[^"\\]++|\\.)*+"|[\[\]{}]', re.DOTALL)
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def nesting_depth(body: bytes, *, stop_at: int = MAX_JSON_DEPTH) -> int:
    """How deep `body`'s arrays and objects nest; when that cannot pass `stop_at`, an upper bound
    (the number of openings), and the scan stops once it has."""
    openings = body.count(b"[") + body.count(b"{")
    if openings <= stop_at:
        return openings
    depth = deepest = 0
    for m in _TOKENS.finditer(body):
        token = m.group()
        if token in (b"[", b"{"):
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > stop_at:
                    break
        elif token in (b"]", b"}"):
            depth -= 1
    return deepest


def storable(value: Any) -> Any:
    """`value` (parsed JSON) with lone surrogates and NUL in its strings replaced by U+FFFD."""
    if isinstance(value, str):
        return _UNSTORABLE.sub("\ufffd", value) if _UNSTORABLE.search(value) else value
    if isinstance(value, list):
        return [storable(v) for v in value]
    if isinstance(value, dict):
        return {storable(k): storable(v) for k, v in value.items()}
    return value


async def parse(body: bytes, what: str = "the body") -> Any:
    """`body` as JSON, made storable; 400 with one line when it is not JSON or nests too deep."""
    if nesting_depth(body) > MAX_JSON_DEPTH:
        raise ApiError(400, f"{what} nests deeper than {MAX_JSON_DEPTH} levels of arrays and objects")
    try:
        if len(body) > PARSE_IN_THREAD_BYTES:
            value = await asyncio.to_thread(json.loads, body)
        else:
            value = json.loads(body)
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise ApiError(400, f"{what} is not valid JSON") from None
    return storable(value)
