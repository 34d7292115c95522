"""Atomic file writes that respect the umask.

Every file faceedit_bench writes goes through here: it is written under a temporary name in
its target's directory and moved into place with ``os.replace``, so a reader (or a second
process writing the same file) never sees half a file, and a killed run never leaves one.
``tempfile.mkstemp`` creates files 0600; they are given ``0o666 & ~umask`` instead, the mode
``open()`` would have given them, so a shared workspace and a web-served report work.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import tempfile
import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO, Any

_umask_lock = threading.Lock()
TMP_SUFFIX = ".tmp"
_HOST = re.sub(r'[^A-Za-z0-9-]+', '-', socket.gethostname())[:40]


def owner() -> str:
    """``<host>-<pid>`` of this process, in every temporary name: which process on which machine writes
    it, so the leftovers of a killed process can be told from the files a live one is still writing.
    Read at each call: a forked child is another owner than its parent."""
    return f"{_HOST}-{os.getpid()}"


#: ``.<name>.<host>-<pid>.<tag>`` and, for temporaries, ``.tmp`` after it.
_OWNED = re.compile(r"^\..+\.(?P<host>[A-Za-z0-9-]*)-(?P<pid>\d+)\.(?P<tag>[^.]+)(?P<tmp>\.tmp)?$")


def current_umask() -> int:
    """The process's umask, read without changing it where the OS allows (Linux reports it in
    /proc; ``os.umask`` can only be read by setting it, which races with threads creating files)."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    with _umask_lock:
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


def file_mode() -> int:
    """The mode a new regular file gets from ``open()`` under the current umask."""
    return 0o666 & ~current_umask()


def _remove(fh: IO[Any], tmp: str) -> None:
    try:
        with suppress(OSError):  # discarded: what it could not write (a full disk) is not wanted
            fh.close()
    finally:
        Path(tmp).unlink(missing_ok=True)


class PendingFile:
    """A file written under a temporary name beside ``target`` and moved into place by
    :meth:`commit`; :meth:`discard` (or garbage collection, or interpreter exit) removes it."""

    def __init__(self, target: Path | str, mode: str = "wb", *, encoding: str | None = None,
                 newline: str | None = None) -> None:
        self.target = Path(target)
        fd, self.tmp = tempfile.mkstemp(dir=self.target.parent, prefix=f".{self.target.name}.{owner()}.",
                                        suffix=TMP_SUFFIX)
        try:
            _chmod(fd, self.tmp, file_mode())
            self.fh: IO[Any] = os.fdopen(fd, mode, encoding=encoding, newline=newline)
        except BaseException:
            os.close(fd)
            Path(self.tmp).unlink(missing_ok=True)
            raise
        self._cleanup = weakref.finalize(self, _remove, self.fh, self.tmp)

    def close(self) -> None:
        """Close the file (it stays pending: commit or discard it)."""
        self.fh.close()

    def commit(self) -> Path:
        """Close the file and replace ``target`` with it, in one step."""
        self.fh.close()
        os.replace(self.tmp, self.target)
        self._cleanup.detach()
        return self.target

    def discard(self) -> None:
        self._cleanup()

    @property
    def committed(self) -> bool:
        return not self._cleanup.alive


def _chmod(fd: int, path: str, mode: int) -> None:
    if hasattr(os, "fchmod"):
        os.fchmod(fd, mode)
    else:  # Windows
        os.chmod(path, mode)


@contextmanager
def atomic_open(target: Path | str, mode: str = "wb", *, encoding: str | None = None,
                newline: str | None = None) -> Iterator[IO[Any]]:
    """``with atomic_open(path, "w") as fh: ...``: the file appears complete when the block
    ends, and not at all when it raises."""
    pending = PendingFile(target, mode, encoding=encoding, newline=newline)
    try:
        yield pending.fh
    except BaseException:
        pending.discard()
        raise
    pending.commit()


def write_bytes(target: Path | str, data: bytes) -> Path:
    with atomic_open(target, "wb") as fh:
        fh.write(data)
    return Path(target)


def write_text(target: Path | str, text: str, *, encoding: str = "utf-8", newline: str | None = None) -> Path:
    """Write ``text`` to ``target`` atomically (:func:`atomic_open`): a reader sees the old file or the new one."""
    with atomic_open(target, "w", encoding=encoding, newline=newline) as fh:
        fh.write(text)
    return Path(target)


def create_empty(target: Path | str) -> bool:
    """Create ``target`` empty with the umask's mode unless it exists (for files another library
    then opens, e.g. a SQLite database, which would otherwise be created 0644 whatever the umask).
    Returns whether it was created here."""
    try:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # open() applies the umask
    except FileExistsError:
        return False
    os.close(fd)
    return True


def remove_stale_temporaries(directory: Path | str) -> int:
    """Remove the temporary files and folders in ``directory`` left by processes of this machine
    that no longer run (a run killed while writing); those of live processes, or of other machines
    sharing the folder, are kept. Returns how many were removed."""
    removed = 0
    for path in Path(directory).glob(f".*{TMP_SUFFIX}"):
        match = _OWNED.match(path.name)
        if match is None or not match["tmp"] or not left_by_gone_process(path.name):
            continue
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
        removed += 1
    return removed


def left_by_gone_process(name: str) -> bool:
    """Whether the file name ``name`` (``.<name>.<host>-<pid>.<tag>[.tmp]``, see :func:`owner`) was
    made by a process of this machine that no longer runs. False where that cannot be known: another
    machine's process, a name without an owner, or an OS without a liveness test."""
    match = _OWNED.match(name)
    if os.name != "posix" or match is None or match["host"] != _HOST:  # os.kill(pid, 0) tests nothing on Windows
        return False
    return not _alive(int(match["pid"]))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True
