"""A fatal storage error (a full disk) ends a run with one message and the documented exit code (2): no traceback,
no "--- Logging error ---", nothing written after the stop; the rerun, once there is room, resumes. Through the
real Hydra entry point with MLflow on: deterministically (the ledger or a file write fails at a chosen write), and
on a small tmpfs filled to several levels (when this process may mount one)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.gemini import gemini_server
from tests.module_runs import run_here
from tests.test_sharding import WRAPPER

ROOT = Path(__file__).resolve().parent.parent
KEY = "test-storage-full-key"
NOISE = ("Traceback", "Logging error", "Error executing job", "Exception ignored", "HYDRA_FULL_ERROR")

#: Fails the ``FULL_AT``-th write of ``FULL_KIND`` (a ledger commit, or a file moved into place in the workspace
#: ``FULL_IN``) as a full disk does.
INJECT = textwrap.dedent("""
    import errno, os, sqlite3
    from faceedit_bench.storage import atomic, ledger_writer
    kind, at = os.environ.get("FULL_KIND"), int(os.environ.get("FULL_AT", "0"))
    seen = [0]

    def full():
        seen[0] += 1
        return seen[0] >= at

    if kind == "ledger":
        commit = ledger_writer.LedgerWriter._commit
        def _commit(self, db, *args, **kwargs):
            if full():
                raise sqlite3.OperationalError("database or disk is full")
            return commit(self, db, *args, **kwargs)
        ledger_writer.LedgerWriter._commit = _commit
    elif kind == "file":
        move = atomic.PendingFile.commit
        def _move(self):
            if str(self.target).startswith(os.environ["FULL_IN"]) and full():
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self.target))
            return move(self)
        atomic.PendingFile.commit = _move
""")


def command(tmp: Path, server: Any, workspace: Path, inject: str = INJECT) -> tuple[list[str], dict[str, str]]:
    """A hosted run through the real Hydra entry with MLflow on, with ``inject`` run first in its process (the
    fault it meets; it finds its workspace in ``$WS``)."""
    script = tmp / "bench.py"
    script.write_text("if __name__ == '__main__':\n" + textwrap.indent(inject + WRAPPER, "    "))
    env = {**os.environ, "GEMINI_API_KEY": KEY, "WS": str(workspace),
           "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    args = [sys.executable, str(script), "run", "dataset=synthetic", f"+dataset.params.root={tmp / 'faces'}",
            "+dataset.params.n=4", "embedder=pixel", "tracking=mlflow", "run.progress=false", "testset=hair",
            "run.max_sessions=2", "run.workers=1", "editor=nano_banana", f"editor.params.base_url={server.url}",
            "editor.params.limits.requests_per_minute=60000", "editor.params.limits.tokens_per_minute=null",
            f"run.workspace={workspace}"]
    return args, env


def rerun_here(monkeypatch: pytest.MonkeyPatch, args: list[str]) -> None:
    """The same run again, in this process (what is checked of the rerun, that it resumes and finishes, is
    not about the process boundary; the stopped run above it is the real process)."""
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    overrides = args[3:]  # after the interpreter, the script and its mode
    workspace = next(a.split("=", 1)[1] for a in overrides if a.startswith("run.workspace="))
    report = run_here(Path(workspace), *overrides)
    assert report["counts"]["steps"] == {"ok": 4 * 2 * 4}  # every step of the run edited


def assert_one_message(out: subprocess.CompletedProcess[str]) -> None:
    err = out.stderr
    assert out.returncode == 2, err[-3000:]
    assert err.startswith("Error: ") and err.count("\n") == 1, err[-3000:]
    assert "run the same command again" in err
    for noise in NOISE:
        assert noise not in err, err[-3000:]


#: Where each fault stops the run (4 faces, 2 sessions; as measured): the ledger's 6th commit mid-edits (2 edits in),
#: the 40th file at a contact sheet, after every edit. The ledger's 2nd commit and the 3rd file (a base image into
#: the image store) stop it at admission, before any edit: those two run in `make test-stress`.
@pytest.mark.slow(seconds=15)
@pytest.mark.parametrize(("kind", "at"), [
    ("ledger", 6), ("file", 40),
    pytest.param("ledger", 2, marks=pytest.mark.stress), pytest.param("file", 3, marks=pytest.mark.stress)])
def test_a_full_disk_ends_the_run_with_one_message_and_the_rerun_resumes(tmp_path, monkeypatch, kind, at):
    with gemini_server(api_key=KEY) as server:
        args, env = command(tmp_path, server, tmp_path / "ws")
        out = subprocess.run(args, env={**env, "FULL_KIND": kind, "FULL_AT": str(at), "FULL_IN": str(tmp_path / "ws")}, cwd=tmp_path,
                             capture_output=True, text=True, timeout=600)
        assert_one_message(out)
        rerun_here(monkeypatch, args)


@pytest.fixture
def small_tmpfs(tmp_path: Path) -> Any:
    mount = tmp_path / "tmpfs"
    mount.mkdir()
    try:
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=32m", "tmpfs", str(mount)], capture_output=True,
                              text=True, timeout=60)
    except OSError as exc:
        pytest.skip(f"not tested: mount cannot be run here ({exc})")
    if done.returncode != 0:
        pytest.skip(f"not tested: this process may not mount a tmpfs ({done.stderr.strip()})")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False, timeout=60)


def fill(mount: Path, free_kib: int) -> Path:
    stat = os.statvfs(mount)
    filler = mount / f"filler-{uuid.uuid4().hex[:6]}"
    filler.write_bytes(b"\0" * max(0, stat.f_bavail * stat.f_frsize - free_kib * 1024))
    return filler


@pytest.mark.stress
@pytest.mark.slow(seconds=90)
def test_a_full_tmpfs_at_several_fill_levels_ends_with_one_message(tmp_path, small_tmpfs):
    stopped = 0
    with gemini_server(api_key=KEY) as server:
        # Each level stops a different writer (measured: 300 and 800 KiB free stop the ledger, 1500 and 1800 MLflow's
        # store, 2100 a file of the image store, 2400 a contact sheet; with 2700 the run finished).
        for level, free_kib in enumerate((300, 1500, 2200)):
            args, env = command(tmp_path, server, small_tmpfs / f"ws{level}")
            filler = fill(small_tmpfs, free_kib)
            out = subprocess.run(args, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600)
            if out.returncode != 0:
                stopped += 1
                assert_one_message(out)
            filler.unlink()  # room again: the same command resumes and finishes
            rerun = subprocess.run(args, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600)
            assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert stopped >= 2, "the fill levels no longer stop the run: lower them"
