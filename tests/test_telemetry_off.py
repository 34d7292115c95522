import os
import subprocess
import sys


def test_importing_faceedit_bench_turns_telemetry_off_before_any_tracker_loads():
    env = {k: v for k, v in os.environ.items()
           if k not in {"MLFLOW_DISABLE_TELEMETRY", "DO_NOT_TRACK", "RAY_USAGE_STATS_ENABLED"}}
    code = "import faceedit_bench, os; print(os.environ['MLFLOW_DISABLE_TELEMETRY'], os.environ['DO_NOT_TRACK'], os.environ['RAY_USAGE_STATS_ENABLED'])"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["true", "true", "0"]
