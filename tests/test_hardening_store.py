"""Issue 13, the store's rows: read-only files, a full disk, an empty file, no empty session.

Read-only files are tested the way they happen: another user's file (mode 444) opened by a
non-root process (root ignores file modes), so the test runs the real command as `nobody`.
A full disk is a small tmpfs where the machine lets us mount one, and an injected SQLite
"disk full" at the store's write path everywhere.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from supportdesk.cli import main
from supportdesk.wiring import open_desk
from supportdesk.engine.runner import drain
from supportdesk.items import Message
from supportdesk.store import SessionStore, StoreError
from supportdesk.store import sessions as sessions_module
from tests.ci import cannot_run

NOBODY = 65534


def _command(*args: str) -> list[str]:
    return [sys.executable, "-m", "supportdesk.cli", *args]


def _run_as_nobody(args: list[str], cache: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(cache), "XDG_CACHE_HOME": str(cache), "XDG_DATA_HOME": str(cache)}
    return subprocess.run(
        ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A folder another user can read (pytest's tmp_path is private to root)."""
    folder = Path(tempfile.mkdtemp(prefix="sd-harden-"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _nobody_can_run() -> str | None:
    """Why the command cannot run as another user here, or None when it can."""
    if os.geteuid() != 0:
        return "needs root to start a process as another user"
    if shutil.which("setpriv") is None:
        return "setpriv is not installed"
    probe = subprocess.run(
        ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", sys.executable, "-c", "import supportdesk.cli"],
        capture_output=True,
        timeout=60,
    )
    if probe.returncode != 0:
        return f"the checkout or its venv is not readable by another user: {probe.stderr.decode(errors='replace')[-300:]}"
    return None


def _folders_nobody_needs() -> dict[Path, int]:
    """What `nobody` must be able to enter (x) and, for the folders Python imports from, list
    (r, x): the interpreter's and the checkout's paths. A checkout in a 0700 home is the usual
    obstacle. The mode bit each folder needs and lacks, by folder."""
    needed: dict[Path, int] = {}
    listed = [Path(p) for p in sys.path if p and Path(p).is_dir()]
    for path in [Path(sys.executable).parent, Path(sys.executable).resolve().parent, Path(sys.prefix), Path(sys.base_prefix), Path.cwd(), *listed]:
        path = path.resolve()
        for folder in [path, *path.parents]:
            want = stat.S_IXOTH | (stat.S_IROTH if folder == path and path in {p.resolve() for p in listed} else 0)
            needed[folder] = needed.get(folder, 0) | want
    return needed


@pytest.fixture
def nobody_can_run() -> Iterator[None]:
    """Runs the command as `nobody`: where the checkout or the interpreter sits in a folder other
    users cannot enter (a 0700 home), those folders are opened to others (enter, and list the
    import paths) for the test and given their modes back after it. Without root or setpriv the
    test skips, and fails under CI."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        cannot_run(_nobody_can_run() or "cannot run a process as another user")
    before: dict[Path, int] = {}
    # One such test at a time on the machine (xdist workers too): a test giving the modes back
    # must not close a folder another one still runs `nobody` through.
    lock = open(Path(tempfile.gettempdir()) / "supportdesk-tests-nobody.lock", "w")
    fcntl.flock(lock, fcntl.LOCK_EX)
    try:
        for folder, want in _folders_nobody_needs().items():
            mode = stat.S_IMODE(folder.stat().st_mode)
            if mode & want != want:
                before[folder] = mode
                folder.chmod(mode | want)
        why = _nobody_can_run()
        if why:
            cannot_run(why)
        yield
    finally:
        for folder, mode in before.items():
            folder.chmod(mode)
        lock.close()  # (and with it the lock)


def _one_clean_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert "Traceback" not in stderr
    assert len(lines) == 1, stderr
    return lines[0]


def _wal_files(db: Path) -> list[Path]:
    return [p for p in (Path(f"{db}-wal"), Path(f"{db}-shm"), Path(f"{db}-journal")) if p.exists()]


async def _make_desk_db(db: Path) -> str:
    async with await open_desk(db) as desk:
        events = await drain(desk.runner.send(None, "hello there"))
        return events[0].session_id  # type: ignore[union-attr]


# --- read-only files -------------------------------------------------------------------------


async def test_another_users_read_only_database_is_read_but_never_written(shared_dir: Path, nobody_can_run: None) -> None:
    db = shared_dir / "desk.db"
    session = await _make_desk_db(db)
    assert not _wal_files(db)  # the last close checkpointed and removed them
    db.chmod(0o444)
    cache = shared_dir / "cache"
    cache.mkdir(mode=0o777)
    cache.chmod(0o777)

    ran = _run_as_nobody(_command("run", "--db", str(db), "I was charged twice"), cache)
    assert ran.returncode == 1
    line = _one_clean_line(ran.stderr)
    assert str(db) in line and "read-only" in line
    assert not _wal_files(db)

    listed = _run_as_nobody(_command("sessions", "list", "--db", str(db)), cache)
    assert listed.returncode == 0, listed.stderr
    assert session in listed.stdout
    shown = _run_as_nobody(_command("sessions", "show", session, "--db", str(db)), cache)
    assert shown.returncode == 0 and "hello there" in shown.stdout
    exported = _run_as_nobody(_command("export", session, "--db", str(db)), cache)
    assert exported.returncode == 0 and "hello there" in exported.stdout
    searched = _run_as_nobody(_command("sessions", "list", "--search", "hello", "--db", str(db)), cache)
    assert searched.returncode == 0 and session in searched.stdout
    assert not _wal_files(db)
    # The session was not touched: still one customer message and its answer.
    async with await SessionStore.open(db, read_only=True) as store:
        assert (await store.get_session(session)).item_count == (await store.last_seq(session))
        assert await store.count_sessions() == 1


async def test_a_read_only_folder_is_named_when_a_new_database_cannot_be_made(shared_dir: Path, nobody_can_run: None) -> None:
    cache = shared_dir / "cache"
    cache.mkdir()
    cache.chmod(0o777)
    ran = _run_as_nobody(_command("run", "--db", str(shared_dir / "new.db"), "hello"), cache)
    assert ran.returncode == 1
    line = _one_clean_line(ran.stderr)
    assert str(shared_dir) in line and "read-only" in line
    assert not (shared_dir / "new.db").exists()


async def test_a_read_only_open_refuses_writes_in_one_line_and_creates_no_wal_files(tmp_path: Path) -> None:
    db = tmp_path / "desk.db"
    session = await _make_desk_db(db)
    async with await SessionStore.open(db, read_only=True) as store:
        assert store.readonly
        assert (await store.get_session(session)) is not None
        assert await store.search("hello")
        with pytest.raises(StoreError, match="read-only") as refused:
            await store.create_session("triage", first=[Message(role="customer", text="hi", agent="triage")])
        assert str(db) in str(refused.value) and "\n" not in str(refused.value)
        assert not _wal_files(db)
    assert not _wal_files(db)


# --- a full disk ---------------------------------------------------------------------------------


def _disk_full(*args: object) -> int:
    exc = sqlite3.OperationalError("database or disk is full")
    exc.sqlite_errorcode = sqlite3.SQLITE_FULL  # type: ignore[attr-defined]
    raise exc


async def test_disk_full_at_the_first_append_is_one_line_and_leaves_no_empty_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "desk.db"
    await _make_desk_db(db)
    monkeypatch.setattr(sessions_module._PreparedAppend, "run", _disk_full)
    code = await _main_in_thread(["run", "--db", str(db), "refund me please"])
    assert code == 1
    line = _one_clean_line(capsys.readouterr().err)
    assert str(db) in line and "disk is full" in line and "not saved" in line
    monkeypatch.undo()
    async with await SessionStore.open(db) as store:
        assert await store.count_sessions() == 1  # the failed run left no empty session


async def test_disk_full_on_an_existing_session_says_the_message_was_not_saved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "desk.db"
    session = await _make_desk_db(db)
    async with await SessionStore.open(db) as store:
        before = await store.last_seq(session)
    monkeypatch.setattr(sessions_module._PreparedAppend, "run", _disk_full)
    code = await _main_in_thread(["run", "--db", str(db), "--session", session, "and another thing"])
    assert code == 1
    line = _one_clean_line(capsys.readouterr().err)
    assert "disk is full" in line and "not saved" in line
    monkeypatch.undo()
    async with await SessionStore.open(db) as store:
        assert await store.last_seq(session) == before


async def _main_in_thread(argv: list[str]) -> int:
    """main() runs its own event loop, so it cannot run inside this test's loop."""
    import asyncio

    return await asyncio.to_thread(main, argv)


@pytest.fixture
def tiny_tmpfs() -> Iterator[Path]:
    """A 1 MiB tmpfs: a real full disk. Skipped where the machine does not allow mounts (a
    failure under CI, which runs as root on Linux)."""
    if os.geteuid() != 0 or sys.platform != "linux":
        cannot_run("mounting a tmpfs needs root on Linux")
    point = Path(tempfile.mkdtemp(prefix="sd-full-"))
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(point)], capture_output=True, timeout=30
    )
    if mounted.returncode != 0:
        point.rmdir()
        cannot_run(f"this machine does not allow mounting a tmpfs: {mounted.stderr.decode(errors='replace').strip()}")
    try:
        yield point
    finally:
        subprocess.run(["umount", "-l", str(point)], capture_output=True, timeout=30)
        shutil.rmtree(point, ignore_errors=True)


def _fill(folder: Path, leave: int = 0) -> None:
    """Fill the file system under folder, leaving about `leave` bytes."""
    free = shutil.disk_usage(folder).free - leave
    with (folder / "filler").open("wb") as out:
        try:
            while free > 0:
                chunk = min(free, 64 * 1024)
                out.write(b"\0" * chunk)
                out.flush()
                free -= chunk
        except OSError:
            pass


def test_disk_full_while_creating_a_database_on_a_real_full_disk(tiny_tmpfs: Path) -> None:
    _fill(tiny_tmpfs, leave=8 * 1024)
    db = tiny_tmpfs / "desk.db"
    ran = subprocess.run(_command("run", "--db", str(db), "hello"), capture_output=True, text=True, timeout=120)
    assert ran.returncode == 1
    line = _one_clean_line(ran.stderr)
    assert str(db) in line and "disk is full" in line


async def test_disk_full_on_an_existing_database_on_a_real_full_disk(tiny_tmpfs: Path) -> None:
    db = tiny_tmpfs / "desk.db"
    session = await _make_desk_db(db)
    async with await SessionStore.open(db) as store:
        before = await store.last_seq(session)
    _fill(tiny_tmpfs)
    long_message = "my card was charged twice " * 2000  # more than the few free bytes left
    ran = subprocess.run(
        _command("run", "--db", str(db), "--session", session, long_message), capture_output=True, text=True, timeout=120
    )
    assert ran.returncode == 1
    line = _one_clean_line(ran.stderr)
    assert "disk is full" in line and "not saved" in line
    (tiny_tmpfs / "filler").unlink()
    async with await SessionStore.open(db) as store:
        assert await store.last_seq(session) == before


# --- an empty file -------------------------------------------------------------------------------


async def test_an_empty_file_of_another_user_is_refused(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        cannot_run("giving a file to another user needs root")
    db = tmp_path / "empty.db"
    db.touch()
    os.chown(db, NOBODY, NOBODY)
    with pytest.raises(StoreError, match="empty file owned by another user") as refused:
        await SessionStore.open(db)
    assert str(db) in str(refused.value)
    assert db.stat().st_size == 0 and not _wal_files(db)


async def test_an_empty_file_of_ones_own_becomes_a_new_desk(tmp_path: Path) -> None:
    db = tmp_path / "mine.db"
    db.touch()
    async with await SessionStore.open(db) as store:
        assert await store.count_sessions() == 0
    assert db.stat().st_size > 0


# --- one transaction for a session and its first item -------------------------------------------


async def test_a_failed_first_append_leaves_no_session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    async with await SessionStore.open(tmp_path / "desk.db") as store:
        monkeypatch.setattr(sessions_module._PreparedAppend, "run", _disk_full)
        with pytest.raises(StoreError, match="disk is full"):
            await store.create_session("triage", first=[Message(role="customer", text="hi", agent="triage")])
        monkeypatch.undo()
        assert await store.count_sessions() == 0
        info = await store.create_session("triage", first=[Message(role="customer", text="hi there", agent="triage")])
        assert info.item_count == 1 and info.title == "hi there"
        [first] = await store.range(info.id, 1, 1)
        assert first.kind == "message" and first.text == "hi there"


async def test_a_lock_held_past_the_timeout_is_one_line_naming_the_file(tmp_path: Path) -> None:
    db = tmp_path / "desk.db"
    async with await SessionStore.open(db, busy_timeout_ms=100) as store:
        holder = sqlite3.connect(db, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        try:
            with pytest.raises(StoreError, match="locked") as locked:
                await store.create_session("triage")
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        assert str(db) in str(locked.value)
