"""A workspace deleted or moved during a run is noticed at the next write: the ledger's commit and the image
store's put refuse to go on writing into a file or folder that is no longer where the run opened it (SQLite and
open files would write on into the unlinked file, and the run would finish into nothing). The message is the
fatal storage message of the run (one line, exit 2: tests/test_workspace_gone_run.py runs it end to end)."""

from __future__ import annotations

import errno
import shutil
import sqlite3

import pytest

from faceedit_bench.records import Outcome
from faceedit_bench.storage.ledger import EditRow, Ledger
from faceedit_bench.storage.store import ImageStore
from faceedit_bench.storage.workspace import WorkspaceGone, storage_error


def put(ledger: Ledger, key: str) -> None:
    ledger.put_edit(key, editor_fp="e", face_id="f", session_id="s", k=1, instruction="i", input_hash="h",
                    row=EditRow(key, Outcome.OK, "out", "", {}, 0.1))


@pytest.mark.parametrize("how", ["deleted", "moved", "replaced"])
def test_a_ledger_deleted_or_moved_stops_the_next_commit(tmp_path, how):
    path = tmp_path / "ws" / "ledger.sqlite"
    ledger = Ledger(path)
    put(ledger, "a")
    ledger.flush()
    if how == "deleted":
        shutil.rmtree(tmp_path / "ws")
    elif how == "moved":
        (tmp_path / "ws").rename(tmp_path / "elsewhere")
    else:  # moved away, and a new ledger made where it was (another run): not the file this run opened
        (tmp_path / "ws").rename(tmp_path / "elsewhere")
        Ledger(path).close()
    put(ledger, "b")
    with pytest.raises(WorkspaceGone, match="ledger .* was deleted or moved"):
        ledger.flush()
    ledger.close()  # quietly: the error was raised once, to the run
    assert how == "replaced" or not path.exists()  # nothing made anew where the workspace was
    if how != "deleted":  # what was committed before is kept in the moved file
        db = sqlite3.connect(tmp_path / "elsewhere" / "ledger.sqlite")
        assert [k for (k,) in db.execute("SELECT edit_key FROM edits")] == ["a"]
        db.close()


def test_a_ledger_closed_after_its_file_was_deleted_says_so_with_nothing_left_to_commit(tmp_path):
    ledger = Ledger(tmp_path / "ledger.sqlite")
    put(ledger, "a")
    ledger.flush()
    (tmp_path / "ledger.sqlite").unlink()
    with pytest.raises(WorkspaceGone):
        ledger.close()


def test_an_image_store_deleted_or_moved_is_not_made_anew(tmp_path):
    store = ImageStore(tmp_path / "ws" / "store")
    kept = store.put(b"first")
    (tmp_path / "ws").rename(tmp_path / "elsewhere")
    with pytest.raises(WorkspaceGone, match="image store"):
        store.put(b"second")
    assert not (tmp_path / "ws").exists()
    assert (tmp_path / "elsewhere" / "store" / kept[:2] / kept).read_bytes() == b"first"


def test_the_messages_say_what_happened_and_how_to_resume(tmp_path):
    workspace = tmp_path / "ws"
    gone = storage_error(WorkspaceGone("the ledger", workspace / "ledger.sqlite"), workspace)
    assert gone is not None and "was deleted or moved" in str(gone) and "run the same command again" in str(gone)
    # A write that failed because the workspace's folder is gone says so, not "no such file".
    missing = storage_error(FileNotFoundError(errno.ENOENT, "No such file or directory", str(workspace / "runs")),
                            workspace)
    assert missing is not None and f"the workspace {workspace} was deleted or moved" in str(missing)
    workspace.mkdir()  # there: a missing file is some other problem, not mapped
    assert storage_error(FileNotFoundError(errno.ENOENT, "No such file", "x"), workspace) is None
    # A read-only place (a remount), however SQLite or the OS says it.
    for exc in (OSError(errno.EROFS, "Read-only file system", str(workspace / "store" / "x")),
                sqlite3.OperationalError("attempt to write a readonly database"),
                sqlite3.OperationalError("disk I/O error")):
        message = storage_error(exc, workspace)
        assert message is not None and "could not be written" in str(message), exc
        assert "Make it writable" in str(message) and "run the same command again" in str(message)
