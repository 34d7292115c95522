"""A workspace deleted or moved during a run, and a place that turned read-only, end the run with the fatal storage
message (one line, exit 2, no traceback), through the real Hydra entry with MLflow on, as a full disk does
(tests/test_storage_full.py). A moved workspace put back resumes; the run never finishes into the unlinked ledger."""

from __future__ import annotations

import os
import shutil
import subprocess
import textwrap

import pytest

from tests.fakes.gemini import gemini_server
from tests.test_storage_full import KEY, assert_one_message, command, rerun_here

#: At the ``AT``-th ledger commit the workspace ``WS`` is moved aside (``HOW=move``) or deleted (``HOW=delete``);
#: ``HOW=erofs`` fails the ``AT``-th file moved into the workspace as a read-only remount does; ``HOW=report``
#: moves it aside after scoring, as the report stage opens the ledger again for its statistics.
INJECT = textwrap.dedent("""
    import errno, os, shutil
    from faceedit_bench.storage import atomic, ledger_writer, statistics_cache
    how, at, ws = os.environ.get("HOW"), int(os.environ.get("AT", "0")), os.environ.get("WS", "")
    seen = [0]

    def now():
        seen[0] += 1
        return seen[0] == at

    if how in ("move", "delete"):
        commit = ledger_writer.LedgerWriter._commit
        def _commit(self, *args, **kwargs):
            if now():  # deleted: gone from its path at once, its files unlinked while the run may still write
                os.rename(ws, ws + (".moved" if how == "move" else ".deleted"))
                if how == "delete":
                    shutil.rmtree(ws + ".deleted", ignore_errors=True)
            return commit(self, *args, **kwargs)
        ledger_writer.LedgerWriter._commit = _commit
    elif how == "erofs":
        move = atomic.PendingFile.commit
        def _move(self):
            if str(self.target).startswith(ws) and now():
                raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(self.target))
            return move(self)
        atomic.PendingFile.commit = _move
    elif how == "report":
        opened = statistics_cache.StatisticsCache.__init__
        def __init__(self, *args):
            os.rename(ws, ws + ".moved")
            return opened(self, *args)
        statistics_cache.StatisticsCache.__init__ = __init__
""")


@pytest.mark.slow(seconds=15)
@pytest.mark.parametrize(("how", "at"), [("move", 4), ("delete", 4), ("erofs", 3), ("report", 0)])
def test_a_workspace_moved_deleted_or_read_only_during_a_run_ends_it_with_one_message(tmp_path, monkeypatch, how, at):
    workspace = tmp_path / "ws"
    with gemini_server(api_key=KEY) as server:
        args, env = command(tmp_path, server, workspace, INJECT)
        out = subprocess.run(args, env={**env, "HOW": how, "AT": str(at)}, cwd=tmp_path, capture_output=True,
                             text=True, timeout=600)
        assert_one_message(out)
        if how == "erofs":
            assert "Read-only file system" in out.stderr and "Make it writable" in out.stderr
        else:
            assert "was deleted or moved while the run was writing to it" in out.stderr, out.stderr
            # Nothing made anew where the workspace was: no ledger, no MLflow store, no report finished into nothing.
            assert not (workspace / "ledger.sqlite").exists() and not (workspace / "mlflow.db").exists()
            assert not list(workspace.glob("runs/*/report.json"))
        if how in ("move", "report"):  # put back, it resumes
            shutil.rmtree(workspace, ignore_errors=True)
            os.rename(f"{workspace}.moved", workspace)
        rerun_here(monkeypatch, args)
