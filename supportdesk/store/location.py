"""Where the desk's database is: `--db`/`SUPPORTDESK_DB` as typed, parsed once.

A `postgresql://` (or `postgres://`) URL selects the PostgreSQL adapter; a plain path or a
`sqlite:///path` URL the SQLite one. Anything shaped like a URL is never taken for a file
path (a typo in a scheme must not create a folder named `postgresql:` holding a password).
A password never leaves this module unmasked except to the driver: `display` is what
messages, logs and screens show.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit, urlunsplit

from supportdesk.folders import data_dir
from supportdesk.store.protocol import StoreLocationError

POSTGRES_SCHEMES = frozenset({"postgresql", "postgres"})
_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*)://")
MASK = "***"


def default_db_path() -> Path:
    return data_dir() / "desk.db"


@dataclass(frozen=True)
class StoreLocation:
    """Where the session store is: a SQLite file or a PostgreSQL URL."""

    kind: Literal["sqlite", "postgresql"]
    # The SQLite file (or ":memory:"), or the PostgreSQL URL the driver gets (secret and all).
    target: str = field(repr=False)
    # The same for people: the URL with its password masked.
    display: str

    @property
    def path(self) -> Path:
        assert self.kind == "sqlite"
        return Path(self.target)

    def __str__(self) -> str:
        return self.display


def redact_url(url: str) -> str:
    """The URL with any password (in the user part or the query) replaced by ***."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return MASK
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        if ":" in userinfo:
            netloc = f"{userinfo.split(':', 1)[0]}:{MASK}@{host}"
    query = parts.query
    if query:
        pairs = [(k, MASK if k.lower() in ("password", "passfile") else v) for k, v in parse_qsl(query, True)]
        query = urlencode(pairs, safe="*")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def url_password(url: str) -> str | None:
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    found = parts.password
    for key, value in parse_qsl(parts.query, True):
        if key.lower() == "password":
            found = value
    return unquote(found) if found else None


def scrub(text: str, url: str) -> str:
    """Text (a driver's error message, say) with the URL's password masked wherever it appears."""
    secret = url_password(url)
    if secret:
        text = text.replace(secret, MASK).replace(quote(secret, safe=""), MASK)
    return text


def parse_location(value: str | os.PathLike[str] | None = None) -> StoreLocation:
    """--db as given, else $SUPPORTDESK_DB, else the data folder's desk.db."""
    if value is None or str(value) == "":
        value = os.environ.get("SUPPORTDESK_DB") or None
    if value is None:
        path = str(default_db_path())
        return StoreLocation("sqlite", path, path)
    text = os.fspath(value)
    match = _URL.match(text)
    if match is None:
        return StoreLocation("sqlite", text, text)
    scheme = match.group(1).lower()
    if scheme in POSTGRES_SCHEMES:
        display = redact_url(text)
        try:
            parts = urlsplit(text)
            parts.port  # noqa: B018 - raises on a port that is not a number
        except ValueError as exc:
            raise StoreLocationError(f"{display}: not a valid PostgreSQL URL ({exc})") from None
        if not parts.path.strip("/"):
            raise StoreLocationError(
                f"{display}: the URL names no database; add one, as in postgresql://user:password@host:5432/desk"
            )
        return StoreLocation("postgresql", text, display)
    if scheme == "sqlite":
        # As SQLAlchemy reads it: sqlite:///desk.db is relative, sqlite:////srv/desk.db absolute.
        rest = text[match.end():]
        if rest.startswith("/"):
            rest = rest[1:]
        elif rest:
            raise StoreLocationError(f"{text}: a SQLite URL has no host; write sqlite:///relative.db or sqlite:////abs/path.db")
        if not rest:
            raise StoreLocationError(f"{text}: the URL names no file; write sqlite:///desk.db")
        path = unquote(rest.split("?", 1)[0])
        return StoreLocation("sqlite", path, path)
    raise StoreLocationError(
        f"{redact_url(text)}: unknown database URL scheme {scheme!r}; use a file path, "
        "sqlite:///path or postgresql://user:password@host/database"
    )
