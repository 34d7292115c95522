"""Can the workspace be written? Checked before any work; a failed write later is turned into
guidance that says what could not be written and that nothing finished is lost."""

from __future__ import annotations

import errno
import os
import sqlite3
import tempfile
from pathlib import Path

from faceedit_bench.errors import StorageError

CHOOSE_ANOTHER = ("Choose another workspace with run.workspace=/path/to/dir on the command line, or "
                  "`export FACEEDIT_BENCH_HOME=/path/to/dir`.")
#: OS errors that mean "this place cannot be written", as opposed to a bug.
WRITE_ERRNOS = frozenset({errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC, errno.EDQUOT, errno.ENOTDIR,
                          errno.EEXIST, errno.EISDIR})
FULL = frozenset({errno.ENOSPC, errno.EDQUOT})


def check_writable_dir(path: str | Path, what: str = "workspace", how: str = CHOOSE_ANOTHER) -> Path:
    """``path`` if it is, or can become, a directory that takes new files, else a
    :class:`StorageError` naming the path and ``how`` to choose another. Nothing is created:
    the check writes (and removes) a probe file in the nearest existing folder on the way."""
    path = Path(path).expanduser().absolute()
    existing = next(p for p in (path, *path.parents) if p.exists())
    if not existing.is_dir():
        raise StorageError(f"The {what} {path} is a file, not a directory. {how}" if existing == path else
                           f"The {what} {path} cannot be created: {existing} is a file, not a directory. {how}")
    try:
        with tempfile.TemporaryFile(dir=existing, prefix=".faceedit-write-check-"):
            pass
    except OSError as exc:
        inside = "" if existing == path else f" (it would be created inside {existing})"
        raise StorageError(f"The {what} {path} cannot be written{inside}: {exc.strerror}. {how}") from exc
    return path


class WorkspaceGone(StorageError):
    """A file or folder of the workspace was deleted or moved while the run was writing to it."""

    def __init__(self, what: str, path: Path) -> None:
        self.what, self.path = what, Path(path)
        super().__init__(f"{what} {path} was deleted or moved while the run was writing to it")


class Place:
    """A file as it was when the run opened it (device and inode): SQLite goes on writing to a file that was
    deleted, or moved away, as if nothing happened, and the run would finish into nothing. :meth:`check` (a
    ``stat``, microseconds) tells that apart before a write counts on it. (For a file held open: a FUSE file
    system may renumber a folder it has forgotten, never an open file.)"""

    def __init__(self, path: Path, what: str) -> None:
        self.path, self.what = Path(path), what
        self._identity = _identity(self.path)

    def check(self) -> None:
        """Raise :class:`WorkspaceGone` unless ``path`` still names the file it named when opened."""
        if _identity(self.path) != self._identity:
            raise WorkspaceGone(self.what, self.path)


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        found = os.stat(path)
    except OSError:  # gone, or a folder on its way is gone or is now a file
        return None
    return found.st_dev, found.st_ino


#: SQLite's messages for a write the place refused (a full disk, a read-only mount, a failing disk).
_SQLITE_WRITE_FAILED = ("disk is full", "readonly database", "unable to open database", "disk I/O error")


def storage_error(exc: BaseException, workspace: Path) -> StorageError | None:
    """The user-facing form of a failed write into ``workspace`` (full disk, read-only place, no
    permission, a file in the way, the workspace deleted or moved), or None for any other error."""
    missing = isinstance(exc, FileNotFoundError) or "unable to open database" in str(exc)
    if isinstance(exc, WorkspaceGone) or (missing and not workspace.is_dir()):
        what = str(exc) if isinstance(exc, WorkspaceGone) else f"the workspace {workspace} was deleted or moved"
        return StorageError(
            f"The run stopped: {what}. If the workspace was moved, move it back to {workspace} (or give its new "
            "place as run.workspace=...) and run the same command again: it resumes from what the workspace holds; "
            "if it was deleted, the same command starts the run anew.")
    if isinstance(exc, sqlite3.OperationalError):
        text = str(exc)
        if not any(s in text for s in _SQLITE_WRITE_FAILED):
            return None
        problem, full = f"the ledger {workspace / 'ledger.sqlite'} could not be written ({text})", "full" in text
    elif isinstance(exc, OSError) and exc.errno in WRITE_ERRNOS:
        target = f"{exc.filename}" if exc.filename else f"a file in the workspace {workspace}"
        problem, full = f"{target} could not be written ({exc.strerror})", exc.errno in FULL
    else:
        return None
    fix = ("Free some disk space" if full else
           "Make it writable, or choose another workspace (run.workspace=... or FACEEDIT_BENCH_HOME; that one "
           "starts without this one's cached results)")
    return StorageError(
        f"The run stopped: {problem}. Nothing finished is lost: every finished step is kept in the ledger "
        f"and image store of {workspace}. {fix}, then run the same command again: it resumes where it stopped "
        "and rewrites this run's files.")
