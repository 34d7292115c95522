"""A reference run whose every reported value is pinned: restructuring the core (or re-expressing
a protocol on a new model) must not change one number.

The run: a scripted editor (noise edits, a refused and a no-image step) is exported to the replay
layout, one step image is removed, and ``editor=replay`` scores the export with the ``gemini``
judge (real SDK, fake server whose answers vary with the images it is shown). The values in
``tests/data/reference_report.json`` were produced by the code before the core was laid out by
stage, and produced again when the pixel embedder moved from float32 to float64 arithmetic (its FSS values
moved by at most 1e-7, Drop_FSS by at most 0.2% of an interval bound, nothing else; the report's group tests
were pinned then too). Regenerate them only for an intended change of results (``REGENERATE_REFERENCE=1``).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.gemini import gemini_server

KEY = "reference-gemini-key"
GOLDEN = Path(__file__).parent / "data" / "reference_report.json"
FAST = ["limits.max_attempts=2", "limits.backoff_initial_s=0.01", "limits.requests_per_minute=6000",
        "limits.tokens_per_minute=null"]
SCRIPT = "{pose-01/2: refused, pose-02/3: no_image}"
#: What describes the run rather than its results (versions, paths, timings, cache keys).
VOLATILE = {"run", "components", "performance", "wall_time_s", "computed", "created_at", "versions", "calls",
            "prompts", "cost", "output_dir", "schema_version", "stopped", "complete", "generated_at"}


def varied(schema: dict[str, Any], seed: int, root: dict[str, Any] | None = None) -> Any:
    """A schema-valid answer whose values depend on ``seed`` (so scores differ between images)."""
    root = root or schema
    if "$ref" in schema:
        return varied(root["$defs"][schema["$ref"].split("/")[-1]], seed, root)
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return varied(schema[key][seed % len(schema[key])], seed // 3, root)
    if "enum" in schema:
        return schema["enum"][seed % len(schema["enum"])]
    kind = schema.get("type")
    if kind == "object":
        return {name: varied(sub, seed // (i + 2) + i, root) for i, (name, sub) in enumerate(schema["properties"].items())}
    if kind == "array":
        return [varied(schema["items"], seed, root)]
    if kind == "integer":
        low, high = schema.get("minimum", 0), schema.get("maximum", 10)
        return low + seed % (high - low + 1)
    if kind == "number":
        return float(schema.get("minimum", 0))
    if kind == "boolean":
        return bool(seed % 2)
    return "ok"


def judge_answer(request: dict) -> str:
    seed = int(hashlib.sha256(json.dumps(request["contents"], sort_keys=True).encode()).hexdigest()[:8], 16)
    return json.dumps(varied(request["generationConfig"].get("responseJsonSchema") or {}, seed))


def values(report: dict[str, Any]) -> dict[str, Any]:
    kept = {k: v for k, v in report.items() if k not in VOLATILE}
    if kept.get("judge_reliability"):
        kept["judge_reliability"] = {k: v for k, v in kept["judge_reliability"].items() if k != "checked_at"}
    return kept


def reference_report(plugins: Any, compose: Any, synthetic: list[str], tmp_path: Path) -> dict[str, Any]:
    from faceedit_bench.cli import main
    from faceedit_bench.run.experiment import build_experiment, run_experiment

    common = [*synthetic, "testset=pose", "run.max_faces=3", "run.max_sessions=3", "analysis.n_resamples=99"]
    source = build_experiment(compose(*common, "editor=scripted", f"+editor.params.script={SCRIPT}",
                                      "+editor.params.noise=12.0"), plugins)
    run_experiment(source, plugins)
    export = tmp_path / "export"
    assert main(["export-replay", str(source.info.output_dir), str(export)]) == 0
    missing = sorted(export.glob("*/pose-03/step_2.*"))[0]
    missing.unlink()  # a step the submitter never produced: outcome no_image
    with gemini_server(api_key=KEY, judge_answer=judge_answer) as server:
        replay = build_experiment(compose(*common, "editor=replay", f"editor.params.root={export}", "judge=gemini",
                                          f"judge.params.base_url={server.url}",
                                          *[f"judge.params.{s}" for s in FAST]), plugins)
        return run_experiment(replay, plugins)


@pytest.mark.slow
def test_reference_run_reports_the_pinned_values(plugins, compose, synthetic, tmp_path, monkeypatch):
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    got = json.loads(json.dumps(values(reference_report(plugins, compose, synthetic, tmp_path)), default=str))
    if os.environ.get("REGENERATE_REFERENCE") == "1":
        GOLDEN.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n")
    expected = json.loads(GOLDEN.read_text())
    assert got["counts"]["steps"], "the reference run edited nothing"
    assert_holds(got, expected)


def assert_holds(got: Any, expected: Any, where: str = "report") -> None:
    """Every value of ``expected`` is in ``got`` unchanged (floats to their last few bits); sections added
    since may be new."""
    if isinstance(expected, dict):
        assert isinstance(got, dict), f"{where}: {got!r} is no longer a mapping"
        for key, value in expected.items():
            assert key in got, f"{where}.{key} is gone"
            assert_holds(got[key], value, f"{where}.{key}")
    elif isinstance(expected, list):
        assert isinstance(got, list) and len(got) == len(expected), f"{where}: {got!r} != {expected!r}"
        for i, (g, e) in enumerate(zip(got, expected)):
            assert_holds(g, e, f"{where}[{i}]")
    elif isinstance(expected, float) and isinstance(got, (int, float)):
        # Float sums and dot products may round their last bits differently with each CPU's vector width and
        # BLAS kernel; a change of results moves a value by far more than this.
        assert math.isclose(got, expected, rel_tol=1e-9, abs_tol=1e-12), f"{where}: {got!r} != {expected!r} (pinned)"
    else:
        assert got == expected, f"{where}: {got!r} != {expected!r} (pinned)"
