"""A kill at any instant of a first-time initialisation never breaks the workspace: every rerun succeeds.

Each test kills a piece of work with SIGKILL at instants spread over its writes (:mod:`tests.kill_instants`:
an instant is the N-th SQL statement, file or folder created, renamed or removed; exact, whatever the
machine's load), then reruns it on what the kill left.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent


def kill_and_rerun(scenario: str, folder: Path, instants: int, *args: str) -> dict[str, Any]:
    """:func:`tests.kill_instants.kill_and_rerun` in a process of its own; every attempt was killed."""
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
           "MLFLOW_DISABLE_TELEMETRY": "true", "DO_NOT_TRACK": "true"}
    env.pop("MLFLOW_TRACKING_URI", None)
    done = subprocess.run([sys.executable, "-m", "tests.kill_instants", scenario, str(folder), str(instants), *args],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert result["calibration"]["ok"], result["calibration"]["error"]
    assert result["instants"], result
    # The ledger's writer commits what waits, so a busy machine groups more rows per commit and an attempt may
    # make a few fewer writes than its calibration (1% fewer beside a CPU hog on each core): an instant in the
    # last 5% may be past the attempt's end. Every earlier instant must have killed the work.
    for instant in result["instants"]:
        assert instant["killed"] or instant["at"] > 0.95 * result["operations"], (
            f"the work finished before write {instant['at']}: {result['operations']} writes")
    return result


def reruns(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Each instant's rerun, which must have succeeded (the traceback of the first that did not, else)."""
    failed = [(i["at"], i["rerun"]["error"]) for i in result["instants"] if not i["rerun"]["ok"]]
    assert not failed, f"{len(failed)} reruns failed; after a kill at write {failed[0][0]}:\n{failed[0][1]}"
    return [i["rerun"] for i in result["instants"]]


@pytest.mark.stress
@pytest.mark.slow(seconds=35)
def test_a_new_workspace_killed_at_instants_of_every_phase_of_its_first_run_always_runs_again(tmp_path):
    """The first run of a new workspace creates its ledger, image store, run folder and MLflow store (about
    2,400 writes, 3/4 of them MLflow's schema migrations, 1 to 6 s), edits, scores and reports. Killed at 6
    instants spread over all of it (the first write, the edits, the report's last writes) and at 5 spread over
    the store's creation (its first and last write included), each workspace runs again to the same results,
    with one MLflow run, FINISHED."""
    result = kill_and_rerun("first_run", tmp_path, 6, "5")
    (first, last), = result["calibration"]["store_writes"]
    at = [i["at"] for i in result["instants"]]
    assert first in at and last in at and sum(first <= a <= last for a in at) >= 5, (first, last, at)
    assert any(a < first for a in at) and any(a > last for a in at)  # and some before and after it
    expected = result["calibration"]
    for rerun in reruns(result):
        assert rerun["steps"] == {"ok": 16} and rerun["metrics"] == expected["metrics"]
        assert rerun["mlflow_runs"] == ["FINISHED"]


@pytest.mark.stress
@pytest.mark.slow(seconds=12)
def test_a_first_shard_killed_at_any_instant_runs_again_and_merges(tmp_path):
    result = kill_and_rerun("first_shard", tmp_path, 5)
    for rerun in reruns(result):
        assert rerun["steps"] == {"ok": 8} and rerun["metrics"] == result["calibration"]["metrics"]
        assert rerun["merged_shards"] == ["shard-0-of-2"] and rerun["rows"]["edits"] == 8
        assert rerun["missing"] == ["shard-1-of-2"]  # said, not mistaken for finished


def test_a_ledger_and_a_shard_ledger_killed_at_every_write_open_again_whole(tmp_path):
    result = kill_and_rerun("new_ledgers", tmp_path, 10_000)  # every write: a few dozen
    assert len(result["instants"]) == result["operations"]
    schemas = [rerun["schema"] for rerun in reruns(result)]
    assert all(schema == schemas[0] for schema in schemas)
    tables = schemas[0]["workspace"]
    assert {"edits", "embeddings", "judgments", "anchors", "components"} <= set(tables)
    assert "latency_s" in tables["edits"] and schemas[0]["shard"] == tables


@pytest.mark.stress
@pytest.mark.slow(seconds=14)
def test_a_store_an_earlier_version_left_half_made_is_built_again(tmp_path):
    """Before this release MLflow's store was migrated in place: a kill left it half made for good. Such a
    store holds nothing yet, and the tracker builds it again."""
    result = kill_and_rerun("store_made_in_place", tmp_path, 5)
    assert all(rerun["mlflow_runs"] == ["RUNNING"] for rerun in reruns(result))
