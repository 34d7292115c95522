"""The plugin as the host sees it: hooks, config entry, packaging and import cost."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import faceedit_bench_mlflow
import pytest
from faceedit_bench_mlflow.tracker import MlflowTracker
from mlflow_helpers import make_pm

import faceedit_bench
from faceedit_bench.registry import Register, Registry

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


def test_config_entry_composes_and_matches_the_constructor():
    from hydra import compose, initialize_config_module
    from omegaconf import OmegaConf

    (entry,) = faceedit_bench_mlflow.faceedit_config_searchpath()
    with initialize_config_module(config_module=entry.removeprefix("pkg://"), version_base="1.3"):
        cfg = compose(overrides=["+tracking=mlflow"])
    tracking = OmegaConf.to_container(cfg.tracking)
    assert tracking["name"] == "mlflow"
    signature = inspect.signature(MlflowTracker)
    assert list(tracking["params"]) == list(signature.parameters)
    assert {k: p.default for k, p in signature.parameters.items()} == tracking["params"]
    MlflowTracker(**tracking["params"])


def test_every_config_param_is_commented():
    yaml = PLUGIN_ROOT / "faceedit_bench_mlflow" / "conf" / "tracking" / "mlflow.yaml"
    lines = yaml.read_text().splitlines()
    params = [i for i, line in enumerate(lines) if line.startswith("  ") and not line.strip().startswith("#")]
    assert len(params) == 4
    assert all(lines[i - 1].lstrip().startswith("#") for i in params)


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


@pytest.mark.slow
def test_wheel_is_discovered_through_its_entry_point(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(tmp_path / "dist"),
         str(PLUGIN_ROOT)],
        capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    (wheel,) = (tmp_path / "dist").glob("faceedit_bench_mlflow-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        entry_points = next(archive.read(n).decode() for n in names if n.endswith("entry_points.txt"))
        archive.extractall(tmp_path / "site")
    assert "faceedit_bench_mlflow/conf/tracking/mlflow.yaml" in names
    assert "[faceedit_bench]\nmlflow = faceedit_bench_mlflow" in entry_points

    code = """
import sys, pluggy, faceedit_bench.hookspecs as specs
from faceedit_bench.registry import Register, Registry
pm = pluggy.PluginManager("faceedit_bench")
pm.add_hookspecs(specs)
pm.load_setuptools_entrypoints("faceedit_bench")
plugin = pm.get_plugin("mlflow")
registry = Registry()
pm.hook.faceedit_register_trackers(register=Register(registry["trackers"], "mlflow"))
tracker = registry.create("trackers", "mlflow")
assert "mlflow" not in sys.modules
print(plugin.__file__, tracker.describe()["name"])
"""
    out = _python(code, [tmp_path / "site", CORE_ROOT])
    assert out.split() == [str(tmp_path / "site" / "faceedit_bench_mlflow" / "__init__.py"), "mlflow"]
