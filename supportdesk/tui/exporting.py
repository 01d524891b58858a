"""Writing a session's transcript to a file: one behaviour for the chat's ctrl+o, `/export` and the
browser's export key. Each asks for the path (`ExportDialog`); the default is under the data folder."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from supportdesk.engine.log import SessionInfo, default_db_path
from supportdesk.reports.export import session_json_text, session_markdown
from supportdesk.items import Item
from supportdesk.text import counted


def default_export_dir(app: Any) -> Path:
    """The app's export folder when it was given one, else `exports/` beside the default database."""
    configured = getattr(app, "export_dir", None)
    return Path(configured) if configured else default_db_path().parent / "exports"


def default_export_path(app: Any, session_id: str, fmt: str = "markdown") -> Path:
    return default_export_dir(app) / f"supportdesk-{session_id}.{'json' if fmt == 'json' else 'md'}"


def write_export(
    notify: Callable[..., Any], path: Path, info: SessionInfo, items: Sequence[Item], config: Any
) -> Path | None:
    """Write the transcript (`.json` writes JSON, anything else Markdown); one line on failure."""
    if path.is_dir():
        path = path / f"supportdesk-{info.id}.md"
    if path.suffix.lower() == ".json":
        text = session_json_text(info, list(items))
    else:
        text = session_markdown(info, list(items), config)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        notify(f"Could not write {path}: {exc.strerror or exc}", severity="error", markup=False)
        return None
    notify(f"Exported {counted(len(items), 'item')} to {path}", title="Export", markup=False)
    return path
