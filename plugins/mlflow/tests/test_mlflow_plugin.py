"""The plugin as the host sees it: hooks, config entry, packaging and import cost."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import faceedit_bench_mlflow
from faceedit_bench_mlflow.tracker import MlflowTracker
from mlflow_helpers import make_pm

import faceedit_bench
from faceedit_bench.api import Register
from faceedit_bench.api.testing import PluginDistributionContract
from faceedit_bench.testing import Registry

PLUGIN_ROOT = Path(__file__).resolve().parents[1]
CORE_ROOT = Path(faceedit_bench.__file__).resolve().parents[1]
CI_VARS = ("PYTEST_CURRENT_TEST", "CI", "GITHUB_ACTIONS", "GITLAB_CI", "JENKINS_URL", "TRAVIS", "BUILDKITE")


def _clean_env(pythonpath: list[Path]) -> dict[str, str]:
    """The environment minus every variable that would switch MLflow telemetry off by itself."""
    drop = {"MLFLOW_DISABLE_TELEMETRY", "DO_NOT_TRACK", *CI_VARS}
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env["PYTHONPATH"] = os.pathsep.join(str(p) for p in pythonpath)
    return env


def _python(code: str, pythonpath: list[Path]) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], env=_clean_env(pythonpath), capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


class TestMlflowDistribution(PluginDistributionContract):
    plugin_root = PLUGIN_ROOT
    distribution = "faceedit-bench-mlflow"
    module = "faceedit_bench_mlflow"
    group, kind, component = "tracking", "trackers", "mlflow"
    dependencies = ("mlflow",)


def test_registers_the_tracker_lazily_and_its_config():
    registry = Registry()
    pm = make_pm(faceedit_bench_mlflow)
    pm.hook.faceedit_register_trackers(register=Register(registry["trackers"], "mlflow"))
    registration = registry.get("trackers", "mlflow")
    assert registration.target == "faceedit_bench_mlflow.tracker:MlflowTracker"
    assert isinstance(registry.create("trackers", "mlflow", {"log_contact_sheets": False}), MlflowTracker)
    assert pm.hook.faceedit_config_searchpath() == [["pkg://faceedit_bench_mlflow.conf"]]


def test_tracker_hookimpls_match_the_specs():
    tracker = MlflowTracker()
    pm = make_pm(tracker)  # check_pending: no hookimpl without a spec
    names = {caller.name for caller in pm.get_hookcallers(tracker) or []}
    assert names == {"faceedit_run_start", "faceedit_step_done", "faceedit_run_end", "faceedit_run_error"}






def test_loading_sets_telemetry_env_without_importing_mlflow():
    code = """
import os, sys
import faceedit_bench_mlflow
from faceedit_bench_mlflow.tracker import MlflowTracker
MlflowTracker().describe()
assert "mlflow" not in sys.modules, "loading the plugin imported mlflow"
assert os.environ.get("MLFLOW_DISABLE_TELEMETRY") == "true", "telemetry not disabled"
assert os.environ.get("DO_NOT_TRACK") == "true"
import mlflow  # only reached when the variables are set
from mlflow.telemetry import get_telemetry_client
from mlflow.telemetry.utils import is_telemetry_disabled
assert is_telemetry_disabled() and get_telemetry_client() is None
print("ok")
"""
    assert _python(code, [CORE_ROOT, PLUGIN_ROOT]).strip() == "ok"

