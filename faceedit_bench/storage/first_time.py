"""First-time creation of structures that a kill at any instant must never leave half made.

A structure made in several steps (an MLflow store migrated through a hundred schema revisions, a
portrait selection of dozens of images and a manifest) is built under a temporary name beside its
place and moved there by one rename once it is complete. Whoever looks, a reader or the rerun after
a kill, finds all of it or nothing (and builds it again); never a part.

Temporary names carry their owner (host and process id, :mod:`faceedit_bench.storage.atomic`), so
the next process removes what a killed one left and never touches what a live one is building.
Callers hold the structure's lock (:mod:`faceedit_bench.storage.locks`) around the build.

Replacing a folder that exists takes two renames (the old one aside, the new one in). A process
killed between them leaves the old folder aside under a name that says so; :func:`restore_replaced`
puts it back before anything else looks, so the folder is never lost.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from faceedit_bench.storage import atomic

REPLACED = "replaced"  # suffix of a folder set aside while its replacement moves in


def _prefix(target: Path) -> str:
    return f".{target.name}.{atomic.owner()}."


@contextmanager
def built_beside(target: Path, *, folder: bool = False) -> Iterator[Path]:
    """A new temporary path beside ``target`` to build it in: an empty file (SQLite opens one as an
    empty database) or, with ``folder``, an empty folder. When the block ends it is moved onto
    ``target`` in one rename (a folder that exists is set aside first: :func:`replace_folder`; the caller
    decides whether it may be); when the block raises, it is removed. Leftovers of killed processes are
    removed first."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic.remove_stale_temporaries(target.parent)
    if folder:
        tmp = Path(tempfile.mkdtemp(dir=target.parent, prefix=_prefix(target), suffix=atomic.TMP_SUFFIX))
        os.chmod(tmp, 0o777 & ~atomic.current_umask())  # mkdtemp makes it 0700
    else:
        fd, name = tempfile.mkstemp(dir=target.parent, prefix=_prefix(target), suffix=atomic.TMP_SUFFIX)
        os.close(fd)
        tmp = Path(name)
        os.chmod(tmp, atomic.file_mode())  # mkstemp makes it 0600
    try:
        yield tmp
        if folder:
            replace_folder(tmp, target)
        else:
            _fsync(tmp)  # a builder may have written it without syncing: durable before it is in place
            os.replace(tmp, target)
    except BaseException:
        if folder:
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            tmp.unlink(missing_ok=True)
        raise


def replace_folder(new: Path, target: Path) -> None:
    """Put the complete folder ``new`` in place of the folder ``target`` (which may be missing).
    Between the two renames the old folder lies aside, where :func:`restore_replaced` finds it."""
    new, target = Path(new), Path(target)
    if not target.exists() or (target.is_dir() and not any(target.iterdir())):
        os.replace(new, target)  # onto nothing, or onto an empty folder: one step
        return
    aside = target.with_name(f"{_prefix(target)}{REPLACED}")
    os.replace(target, aside)
    os.replace(new, target)
    shutil.rmtree(aside)


def restore_replaced(target: Path) -> Path | None:
    """When a process was killed while replacing the folder ``target`` (the old one aside, the new one
    not in place yet), move the old one back; returns where it was found, else None."""
    target = Path(target)
    if target.exists() or not target.parent.is_dir():
        return None
    for aside in sorted(target.parent.glob(f".{target.name}.*.{REPLACED}")):
        if aside.is_dir() and atomic.left_by_gone_process(aside.name):
            os.replace(aside, target)
            return aside
    return None


def _fsync(path: Path) -> None:
    with open(path, "rb+") as fh:
        os.fsync(fh.fileno())
