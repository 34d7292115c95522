"""A whole protocol written outside the repository works end to end (issue 22).

The package is docs/examples/eyewear_protocol, the code docs/protocol_package.md shows: one judge metric
(``glasses``), one report section (``eyewear``) and one preset (``experiment=eyewear``), written against the
public API only (``faceedit_bench.api`` and its topic modules, ``faceedit_bench.testing``). It is copied
into a temporary directory, installed with pip into a folder of its own and run from the command line against a
fake Gemini (the real SDK) with MLflow on a real sqlite store. The section must reach report.json (valid against
the merged schema), report.html, the console, the MLflow run and a leaderboard view, and the package's own
SectionContract test must pass.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from PIL import Image

from tests.fakes.answers import example_from_schema
from tests.fakes.gemini import gemini_server

pytestmark = pytest.mark.slow(seconds=3)

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "docs" / "examples" / "eyewear_protocol"
PUBLIC = {"faceedit_bench.api", "faceedit_bench.api.sections", "faceedit_bench.api.images",
          "faceedit_bench.api.statistics", "faceedit_bench.api.judging", "faceedit_bench.api.testing",
          "faceedit_bench.testing"}
KEY = "eyewear-gemini-key"
# The session whose steps show glasses from step FIRST_GLASSES[session] on (pose has 4 steps per session).
FIRST_GLASSES = {"pose-01": 2, "pose-02": 4, "pose-03": 1}
SHARES = {s: (4 - first + 1) / 4 for s, first in FIRST_GLASSES.items()}  # 0.75, 0.25, 1.0


def judge_answer(request: dict) -> str:
    """Glasses from a session's FIRST_GLASSES step on, read from the prompt ("Step k of session s"); any other
    question (the run's judge anchors) gets an answer that fits its schema."""
    schema = request["generationConfig"].get("responseJsonSchema") or {}
    if "glasses" not in schema.get("properties", {}):
        return json.dumps(example_from_schema(schema))
    text = " ".join(part.get("text", "") for content in request["contents"] for part in content["parts"])
    k, session = re.search(r"Step (\d+) of session ([\w-]+)\.", text).groups()
    return json.dumps({"glasses": int(k) >= FIRST_GLASSES[session], "reasoning": "seen"})


def test_the_example_package_imports_only_the_public_api():
    """What makes it a third party's package: no private core module, function-level imports included."""
    imported = set()
    for path in EXAMPLE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                imported.add(node.module)
            elif isinstance(node, ast.Import):
                imported.update(alias.name for alias in node.names)
    core = {m for m in imported if m.split(".")[0] == "faceedit_bench"}
    assert core and core <= PUBLIC, f"private core modules: {sorted(core - PUBLIC)}"


def test_the_docs_page_shows_every_file_of_the_package():
    """docs/protocol_package.md includes the package's files (pymdownx.snippets), so the page is this code."""
    page = (ROOT / "docs" / "protocol_package.md").read_text(encoding="utf-8")
    shown = set(re.findall(r'^--8<-- "examples/eyewear_protocol/([^"]+)"$', page, re.M))
    files = {p.relative_to(EXAMPLE).as_posix() for p in EXAMPLE.rglob("*")
             if p.is_file() and "__pycache__" not in p.parts and p.stat().st_size}  # the empty conf/__init__.py
    assert shown == files


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """The package copied into a temporary directory and installed with pip into ``site``."""
    tmp = tmp_path_factory.mktemp("external-protocol")
    src = shutil.copytree(EXAMPLE, tmp / "src" / "faceedit-bench-eyewear",
                          ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "build"))
    site = tmp / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                    "--target", str(site), str(src)], check=True, capture_output=True, text=True)
    env = {**os.environ, "PYTHONPATH": str(site), "GEMINI_API_KEY": KEY, "COLUMNS": "120"}
    return tmp, src, env


def test_the_packages_own_section_contract_test_passes(installed):
    tmp, src, env = installed
    done = subprocess.run([sys.executable, "-m", "pytest", str(src / "tests"), "-q", "-p", "no:cacheprovider",
                           "-p", "no:randomly", "--rootdir", str(src)],
                          capture_output=True, text=True, env=env, cwd=tmp, timeout=240)
    assert done.returncode == 0, done.stdout + done.stderr
    passed = re.search(r"(\d+) passed", done.stdout)
    assert passed and int(passed.group(1)) >= 10, done.stdout  # the contract's checks ran, not skipped


def test_the_preset_runs_into_every_output(installed, new_mlflow_store):
    tmp, _, env = installed
    ws = tmp / "ws"
    uri = new_mlflow_store(ws)
    env = {**env, "FACEEDIT_BENCH_HOME": str(ws)}
    listing = subprocess.run([sys.executable, "-m", "faceedit_bench.cli", "plugins", "--json"],
                             capture_output=True, text=True, env=env, check=True)
    eyewear = next(p for p in json.loads(listing.stdout)["plugins"] if p["name"] == "eyewear")
    assert eyewear["registers"] == {"judge_metrics": ["glasses"], "sections": ["eyewear"]}, eyewear

    with gemini_server(api_key=KEY, judge_answer=judge_answer) as server:
        out = subprocess.run(
            [sys.executable, "-m", "faceedit_bench", "experiment=eyewear", f"judge.params.base_url={server.url}",
             "judge.params.limits.requests_per_minute=6000", f"tracking.params.tracking_uri={uri}",
             "run.max_faces=1", "run.max_sessions=3", "run.workers=1", "run.progress=false",
             "analysis.n_resamples=99"],
            capture_output=True, text=True, env=env, cwd=tmp, timeout=300)
    assert out.returncode == 0, out.stderr
    (run_dir,) = (ws / "runs").glob("identity*")

    # report.json: the section's part, valid against the schema the installed plugins make
    report = json.loads((run_dir / "report.json").read_text())
    part = report["eyewear"]
    assert part["sessions"] == 3 and part["left_out"] == {}
    assert {k: part["rate"][k] for k in ("n", "count")} == {"n": 3, "count": 2}  # 0.75 and 1.0 reach 0.5
    assert part["rate"]["rate"] == pytest.approx(2 / 3) and part["rate"]["ci_low"] < 2 / 3 < part["rate"]["ci_high"]
    assert report["metrics"]["glasses_worn"]["mean"] == pytest.approx(sum(SHARES.values()) / 3)
    assert report["measures"]["glasses_sessions"]["section"] == "eyewear"
    assert report["counts"]["judge"] == {"eyewear-glasses@1": {"ok": 12}}
    schema = subprocess.run([sys.executable, "-c", "import json; from faceedit_bench.testing import "
                             "run_report_schema; print(json.dumps(run_report_schema()))"],
                            capture_output=True, text=True, env=env, check=True)
    merged = json.loads(schema.stdout)
    assert "eyewear" in merged["properties"]
    jsonschema.validate(report, merged)

    # report.html: the package's template under its anchor, with the page's nav entry
    page = (run_dir / "report.html").read_text()
    assert '<h2 id="eyewear">eyewear: glasses after editing</h2>' in page and 'href="#eyewear"' in page
    assert "2 of 3 judged sessions show glasses" in page

    # the run folder: the eyes of the two sessions with glasses, cut where the run's detector found the face
    eyes = sorted(p.name for p in (run_dir / "eyewear").glob("*.png"))
    assert [name.split("_")[-1] for name in eyes] == ["pose-01.png", "pose-03.png"], eyes
    assert all(Image.open(run_dir / "eyewear" / name).size[0] > 8 for name in eyes)

    # the console: the section's table
    assert "eyewear: glasses in 2 of 3 judged sessions" in out.stdout, out.stdout

    # MLflow: the section's metrics on the run, read back with the client
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    (run,) = client.search_runs([e.experiment_id for e in client.search_experiments()])
    assert run.data.metrics["eyewear_sessions"] == 3.0
    assert run.data.metrics["eyewear_glasses_sessions"] == pytest.approx(2 / 3)

    # a leaderboard built from the MLflow store: the section's named view lists the run
    lb = tmp / "lb"
    built = subprocess.run([sys.executable, "-m", "faceedit_bench.cli", "leaderboard", "build", "--dir", str(lb),
                            "--tracking-uri", uri], capture_output=True, text=True, env=env, timeout=240)
    assert built.returncode == 0 and "1 entries" in built.stdout + built.stderr, built.stdout + built.stderr
    board = (lb / "index.html").read_text()
    view = re.search(r'<section class="view"[^>]*data-contrast="eyewear"[^>]*>(.*?)</section>', board, re.S)
    assert view, "no eyewear view on the leaderboard page"
    assert "Eyewear: glasses put on faces" in view.group(1) and "Sessions with glasses (share)" in view.group(1)
    (row,) = re.findall(r"<tr data-id=.*?</tr>", view.group(1), re.S)  # the run, as the no-edit reference
    assert 'data-value="identity"' in row and f'data-value="{2 / 3!r}"' in row, row
