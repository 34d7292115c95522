"""The embedding workers make room for the provider calls only while editing: once the last
edit is done, the sessions left to score run at the run's own CPU priority, on every core."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from faceedit_bench.records import Outcome
from faceedit_bench.run.edit_stage import EditStage
from faceedit_bench.run.experiment import build_experiment, run_experiment
from faceedit_bench.scoring.identity import WORKER_NICENESS, EmbeddingService
from faceedit_bench.scoring.stage import ScoreStage
from faceedit_bench.storage.ledger import Ledger
from faceedit_bench.storage.store import ImageStore
from faceedit_bench.testing import PixelEmbedder, gradient_image

RAISE_PRIORITY = ("import os; os.nice(1); "
                  "os.setpriority(os.PRIO_PROCESS, 0, os.getpriority(os.PRIO_PROCESS, 0) - 1)")


def may_raise_priority() -> bool:
    """Whether this system lets a process raise a priority it lowered (CAP_SYS_NICE or RLIMIT_NICE)."""
    return subprocess.run([sys.executable, "-c", RAISE_PRIORITY], capture_output=True).returncode == 0


@pytest.mark.skipif(not hasattr(os, "setpriority"), reason="no process priorities on this platform")
def test_workers_run_lower_while_editing_and_at_the_runs_priority_after(tmp_path):
    if not may_raise_priority():
        pytest.skip("this system does not let a process raise a priority it lowered")
    store, ledger = ImageStore(tmp_path / "store"), Ledger(tmp_path / "ledger.sqlite")
    service = EmbeddingService(PixelEmbedder(), "fp", PixelEmbedder, store, ledger, 2, frozenset({Outcome.FAILED}))
    try:
        hashes = [store.put(gradient_image(i)) for i in range(EmbeddingService.POOL_THRESHOLD)]
        assert all(e.outcome is Outcome.OK for e in service.get(hashes).values())  # embedded by the pool
        workers = list(service._pool._processes)
        assert len(workers) == 2
        own = os.getpriority(os.PRIO_PROCESS, 0)
        # a worker lowers its priority in its initializer, which may still be running under load: wait for it
        lowered = {min(19, own + WORKER_NICENESS)}
        deadline = time.monotonic() + 60
        while {os.getpriority(os.PRIO_PROCESS, pid) for pid in workers} != lowered and time.monotonic() < deadline:
            time.sleep(0.05)
        assert {os.getpriority(os.PRIO_PROCESS, pid) for pid in workers} == lowered
        service.full_priority()
        assert {os.getpriority(os.PRIO_PROCESS, pid) for pid in workers} == {own}
        more = [store.put(gradient_image(i)) for i in range(100, 104)]
        assert all(e.outcome is Outcome.OK for e in service.get(more).values())  # the workers still embed
    finally:
        service.close()
        ledger.close()


def test_the_score_stage_hears_once_that_editing_ended_after_the_last_edit(plugins, compose, synthetic,
                                                                           monkeypatch):
    editing, edited, heard = [0], [0], []
    edit_session = EditStage.edit_session

    async def counted(self, face, session):
        editing[0] += 1
        try:
            return await edit_session(self, face, session)
        finally:
            editing[0] -= 1
            edited[0] += 1

    monkeypatch.setattr(EditStage, "edit_session", counted)
    monkeypatch.setattr(ScoreStage, "editing_ended", lambda self: heard.append((editing[0], edited[0])))
    report = run_experiment(build_experiment(compose(*synthetic, "testset=pose", "editor=noise"), plugins), plugins)
    sessions = report["counts"]["sessions"]["planned"]
    assert sessions == 20 and report["counts"]["steps"] == {"ok": 80}
    assert heard == [(0, sessions)]  # once, with nothing editing and every session edited
