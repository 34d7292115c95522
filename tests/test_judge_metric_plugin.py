"""A judge metric registered by a plugin package built in a temporary directory, used by name from
the command line (``judge_metrics=[hat]``), with no edit to the core."""

from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import sys

import pytest

from tests.fakes.answers import example_from_schema
from tests.fakes.gemini import gemini_server

KEY = "toy-metric-gemini-key"

PYPROJECT = """
[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"

[project]
name = "faceedit-bench-hat"
version = "0.1.0"
dependencies = []

[project.entry-points.faceedit_bench]
hat = "faceedit_bench_hat"
"""

MODULE = '''
from pydantic import BaseModel, ConfigDict, Field

from faceedit_bench.api import hookimpl
from faceedit_bench.api.judging import JudgeMetric, PromptTemplate


class HatAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    hat: int = Field(ge=1, le=5, strict=True, description="1: no hat at all; 5: a hat, clearly")
    reasoning: str


HAT = PromptTemplate(
    name="hat-rubric",
    version="1",
    text="Step $k. The person was asked: $instruction\\nRate from 1 to 5 whether the person in the image "
         "wears a hat. Answer JSON: {\\"hat\\": ..., \\"reasoning\\": \\"...\\"}",
    schema=HatAnswer,
    source="a toy rubric for the tests",
)


@hookimpl
def faceedit_register_judge_metrics(register):
    register("hat", JudgeMetric(
        name="hat", template=HAT, images=("current",), over="steps",
        description="Is there a hat (1-5)?",
        values=(JudgeMetric.Value("hat_present", True, "1-5", "Hat present, 1 (none) to 5 (clearly), mean over steps",
                           point=lambda answer: answer["hat"]),),
    ), description="a toy hat rubric")
'''


def judge_answer(request: dict) -> str:
    """hat = k + 1 at step k (read from the prompt), so the session mean is 3.5 over 4 steps."""
    schema = request["generationConfig"].get("responseJsonSchema") or {}
    text = json.dumps(request["contents"])
    if "hat" in schema.get("properties", {}):
        k = int(re.search(r"Step (\d+)\.", text).group(1))
        return json.dumps({"hat": k + 1, "reasoning": "seen"})
    return json.dumps(example_from_schema(schema))


@pytest.mark.slow
def test_a_plugin_judge_metric_is_used_by_name_from_the_command_line(tmp_path):
    pkg = tmp_path / "src" / "faceedit-bench-hat"
    (pkg / "faceedit_bench_hat").mkdir(parents=True)
    (pkg / "pyproject.toml").write_text(PYPROJECT)
    (pkg / "faceedit_bench_hat" / "__init__.py").write_text(MODULE)
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                    "--target", str(site), str(pkg)], check=True, capture_output=True, text=True)
    env = {**os.environ, "PYTHONPATH": str(site), "FACEEDIT_BENCH_HOME": str(tmp_path / "ws"), "GEMINI_API_KEY": KEY}

    listing = subprocess.run([sys.executable, "-m", "faceedit_bench.cli", "plugins", "--json"],
                             capture_output=True, text=True, env=env, check=True)
    hat = next(p for p in json.loads(listing.stdout)["plugins"] if p["name"] == "hat")
    assert hat["registers"] == {"judge_metrics": ["hat"]} and hat["distribution"] == "faceedit-bench-hat"

    with gemini_server(api_key=KEY, judge_answer=judge_answer) as server:
        out = subprocess.run(
            [sys.executable, "-m", "faceedit_bench", "editor=identity", "testset=pose", "tracking=none",
             "judge=gemini", f"judge.params.base_url={server.url}", "judge.params.limits.requests_per_minute=6000",
             "judge_metrics=[hat]", "run.max_faces=1", "run.max_sessions=1", "run.workers=1", "run.progress=false",
             "analysis.n_resamples=99"],
            capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert out.returncode == 0, out.stderr
    (run_dir,) = (tmp_path / "ws" / "runs").glob("identity*")
    report = json.loads((run_dir / "report.json").read_text())
    metric = report["metrics"]["hat_present"]
    assert (metric["higher_is_better"], metric["unit"]) == (True, "1-5") and "Hat present" in metric["description"]
    assert metric["n"] == 1 and metric["mean"] == 3.5  # (2 + 3 + 4 + 5) / 4
    assert "sc" not in report["metrics"] and "oer" not in report["metrics"]  # not selected: not asked
    assert "overediting" not in report
    assert report["counts"]["judge"] == {"hat-rubric@1": {"ok": 4}}
    assert [p["mean"] for p in report["trajectory"]["hat_present"]] == [2.0, 3.0, 4.0, 5.0]
    assert report["prompts"]["hat"]["name"] == "hat-rubric"
    with open(run_dir / "steps.csv") as fh:
        rows = [r for r in csv.DictReader(fh) if r["k"] != "0"]
    assert [json.loads(r["judge_values"])["hat"] for r in rows] == [
        {"outcome": "ok", "hat_present": float(k + 1)} for k in range(1, 5)]
    with open(run_dir / "sessions.csv") as fh:
        assert next(csv.DictReader(fh))["hat_present"] == "3.5"
