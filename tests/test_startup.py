"""Start-up: what a command imports before it does its work, and MLflow opened after the first call.

Budgets on imports, not on time: each command runs in a subprocess, and the modules it had imported
(``sys.modules``) when it showed its help, or when its first provider call left, are checked against
the heavy ones it must not load by then (benchmarks/bench_startup.py measures the seconds).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.cli_in_process import bench_in_process
from tests.fakes.gemini import gemini_server
from tests.test_report_default_run import default_run_page  # noqa: F401 - the shared default run

ROOT = Path(__file__).resolve().parent.parent
KEY = "startup-key"

#: Never needed to show help or list things: the tracking store, statistics, plotting, ML frameworks, SDKs.
HEAVY = ("mlflow", "sqlalchemy", "alembic", "scipy", "statsmodels", "pandas", "matplotlib", "torch",
         "transformers", "diffusers", "onnxruntime", "insightface", "google.genai", "openai", "dlib",
         "faceedit_bench.run.experiment", "faceedit_bench.analysis.aggregate")
#: Not needed before a run's first provider call (MLflow is opened on a thread once the work is under way).
HEAVY_BEFORE_FIRST_CALL = ("mlflow", "sqlalchemy", "alembic", "scipy", "statsmodels", "pandas", "matplotlib",
                           "torch", "transformers", "diffusers", "onnxruntime", "insightface", "openai")

#: Runs ``argv[2:]`` as ``python -m <argv[1]>``; writes the imported modules to ``argv[0]``'s file at exit,
#: or, when FIRST_CALL_PORT is set, when the first connection to that port is made.
PROBE = textwrap.dedent("""
    import atexit, json, os, runpy, socket, sys
    out, module = sys.argv[1], sys.argv[2]
    def dump():
        if not os.path.exists(out):
            with open(out, "w") as f:
                json.dump(sorted(sys.modules), f)
    port = int(os.environ.get("FIRST_CALL_PORT") or 0)
    if port:
        connect = socket.socket.connect
        def first_call(self, address, *args):
            if isinstance(address, tuple) and address[1] == port:
                dump()
            return connect(self, address, *args)
        socket.socket.connect = first_call
    else:
        atexit.register(dump)
    sys.argv = [module, *sys.argv[3:]]
    runpy.run_module(module, run_name="__main__", alter_sys=True)
""")


def probe(tmp_path: Path, module: str, *args: str, env: dict[str, str] | None = None,
          ) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    out = tmp_path / "modules.json"
    out.unlink(missing_ok=True)
    env = {**os.environ, "FACEEDIT_BENCH_HOME": str(tmp_path / "ws"), **(env or {})}
    proc = subprocess.run([sys.executable, "-c", PROBE, str(out), module, *args], capture_output=True, text=True,
                          cwd=tmp_path, env=env, timeout=600)
    assert out.is_file(), proc.stderr[-3000:]
    return proc, set(json.loads(out.read_text()))


def loaded(modules: set[str], heavy: tuple[str, ...]) -> list[str]:
    return sorted(h for h in heavy if h in modules)


@pytest.mark.parametrize("args", [
    ("faceedit_bench", "--help"),
    ("faceedit_bench.cli", "--help"),
    ("faceedit_bench.cli", "ls", "editor"),
    ("faceedit_bench.cli", "plugins"),
    ("faceedit_bench.cli", "testset", "show", "pose"),
    ("faceedit_bench.cli", "results", "--help"),
    ("faceedit_bench.cli", "merge", "--help"),
], ids=lambda a: " ".join(a))
def test_commands_that_make_no_calls_import_nothing_heavy(tmp_path, args):
    proc, modules = probe(tmp_path, *args)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert loaded(modules, HEAVY) == []
    if args[0] == "faceedit_bench.cli":  # none composes a config (Hydra is for runs) or writes a report
        # ... but `plugins` loads every report section and parses its templates, to list a broken one
        report_code = () if args[1] == "plugins" else ("faceedit_bench.api.sections", "jinja2")
        assert loaded(modules, ("hydra", *report_code)) == []


@pytest.mark.slow(seconds=10)  # the default run, about 10 s of CPU (once per test session: see the fixture)
def test_results_of_a_workspace_import_nothing_heavy(tmp_path, default_run_page):  # noqa: F811
    """pyarrow imports pandas for any conversion of Python values and for ``read_table``'s datasets: the table
    of a workspace's runs is read and labelled without either."""
    workspace = default_run_page.parent.parent.parent
    proc, modules = probe(tmp_path, "faceedit_bench.cli", "results", str(workspace))
    assert proc.returncode == 0 and "steps rows from 1 run(s)" in proc.stderr, proc.stderr[-3000:]
    assert loaded(modules, HEAVY) == []


@pytest.mark.slow(seconds=9)
def test_the_first_call_waits_for_no_tracking_store_and_mlflow_still_records_the_run(tmp_path):
    with gemini_server(api_key=KEY) as server:
        command = ["faceedit_bench", "editor=nano_banana", f"editor.params.base_url={server.url}", "testset=pose",
                   "run.max_faces=1", "run.max_sessions=1", "tracking=mlflow", "run.progress=false"]
        proc, modules = probe(tmp_path, *command,
                              env={"GEMINI_API_KEY": KEY, "FIRST_CALL_PORT": server.url.rsplit(":", 1)[1]})
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert loaded(modules, HEAVY_BEFORE_FIRST_CALL) == []
        assert "MLflow: new run" in proc.stdout and "FINISHED" in proc.stdout, proc.stdout[-2000:]
        calls = server.calls
        # The same command again: nothing new to log, so MLflow is not imported at all.
        rerun, modules = probe(tmp_path, *command, env={"GEMINI_API_KEY": KEY})
    assert rerun.returncode == 0 and server.calls == calls, rerun.stderr[-3000:]
    assert "already holds these results (FINISHED)" in rerun.stdout, rerun.stdout[-2000:]
    assert loaded(modules, ("mlflow", "sqlalchemy", "alembic")) == []


def test_a_tracking_store_that_cannot_be_opened_stops_the_run_with_a_clear_error(tmp_path, monkeypatch, capfd,
                                                                                  plugins):
    """Run in this process (tests/cli_in_process.py: the same command code; start-up is not its subject), with
    the test plugin's pixel embedder."""
    notes = tmp_path / "notes.db"
    notes.write_text("my notes, not an MLflow store")
    with gemini_server(api_key=KEY) as server:
        proc = bench_in_process(
            monkeypatch, capfd, tmp_path, "editor=nano_banana", f"editor.params.base_url={server.url}",
            "testset=pose", "run.max_faces=1", "run.max_sessions=1", "embedder=pixel", "tracking=mlflow",
            f"tracking.params.tracking_uri=sqlite:///{notes}", "run.progress=false", env={"GEMINI_API_KEY": KEY},
            plugins=plugins)
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert "Error: MLflow tracking could not open the store" in proc.stderr
    assert "tracking=none" in proc.stderr and "Traceback" not in proc.stderr
    assert notes.read_text() == "my notes, not an MLflow store"
