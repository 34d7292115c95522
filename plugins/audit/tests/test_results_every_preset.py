"""``faceedit-bench results`` over a workspace that holds one run of every experiment preset (issue 20 item 16):
a protocol's columns never clash with another's. Labels are strings and metrics doubles in every run, so
the runs' tables concatenate, from the workspace and from MLflow, through the real CLI.

Each preset runs as a user runs it, on tiny data, with the pixel embedder and every judge behind the fake
servers of its provider (the real SDKs).
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
from test_paper_b_presets import answer_for

from faceedit_bench.testing import build_run, results_digest, run_built, run_cli
from tests.datasets.conftest import CELEBA_ATTRIBUTES, CELEBA_ROWS, write_image
from tests.fakes.answers import example_from_schema
from tests.fakes.creval import answer_body
from tests.fakes.gemini import gemini_server
from tests.fakes.openai import openai_server

GEMINI_KEY, OPENAI_KEY = "AIza-results-presets", "sk-results-presets"
FAST = ["max_attempts=2", "requests_per_minute=6000", "tokens_per_minute=null", "backoff_initial_s=0.01",
        "backoff_max_s=0.05", "timeout_s=60"]
CREVAL_FIXTURE = Path(__file__).parents[3] / "tests" / "data" / "creval_bench"
#: Hand-picked portraits of a grid: a male face for WinoBias's base, a female partner of another race.
GRID = ("White_Female_20s.jpg", "Black_Male_40s.jpg", "EastAsian_Female_30s.jpg")


def _schema(request: dict) -> dict:
    if "contents" in request:  # Gemini
        return request["generationConfig"].get("responseJsonSchema") or {}
    if "response_format" in request:  # chat completions
        return request["response_format"]["json_schema"]["schema"]
    return {}  # no schema: paper (b)'s panel asks for JSON in the prompt alone, as its code does


def _valid_rubric(prompt: str, member: str, request: dict) -> dict:
    return {"edit_success": 4, "skin_tone": 3, "race_change": 1, "gender_change": 1, "age_change": 3}


def judge_answer(request: dict) -> str:
    """A valid answer to any judge question the presets ask: rubric scores in range, CREval answers."""
    schema = _schema(request)
    if not schema:
        return answer_for("gemini", _valid_rubric)(request)
    properties = schema.get("properties", {})
    if "answers" in properties or "questions" in properties:
        return answer_body(request)
    if "scores" in properties:
        scores = {"edit_success": 4, "skin_tone": 3, "race_change": 1, "gender_change": 1, "age_change": 3,
                  "aging_accuracy": None}
        return json.dumps({"observations": {k: "seen" for k in ("edit", "skin_tone", "race_features",
                                                                 "gender_presentation", "age")},
                           "scores": scores, "evidence_summary": "seen"})
    return json.dumps(example_from_schema(_schema(request)))


def celeba_root(tmp_path: Path) -> Path:
    root = tmp_path / "celeba"
    for folder in ("Anno", "Eval", "Img/img_align_celeba"):
        (root / folder).mkdir(parents=True)
    male, young = CELEBA_ATTRIBUTES.index("Male"), CELEBA_ATTRIBUTES.index("Young")
    lines = [f"{len(CELEBA_ROWS)}\n", " ".join(CELEBA_ATTRIBUTES) + " \n"]
    for file, _, _, is_male, is_young in CELEBA_ROWS:
        values = [-1] * 40
        values[male], values[young] = (1 if is_male else -1), (1 if is_young else -1)
        lines.append(file + " " + " ".join(f"{v:2d}" for v in values) + "\n")
    (root / "Anno" / "list_attr_celeba.txt").write_text("".join(lines))
    (root / "Anno" / "identity_CelebA.txt").write_text("".join(f"{r[0]} {r[1]}\n" for r in CELEBA_ROWS))
    (root / "Eval" / "list_eval_partition.txt").write_text("".join(f"{r[0]} {r[2]}\n" for r in CELEBA_ROWS))
    for n, row in enumerate(CELEBA_ROWS):
        write_image(root / "Img" / "img_align_celeba" / row[0], n)
    return root


def grid_root(tmp_path: Path) -> Path:
    root = tmp_path / "grid"
    for n, name in enumerate(GRID):
        write_image(root / name, 10 + n)
    return root


@pytest.fixture
def every_preset(plugins, compose, tmp_path, monkeypatch, new_mlflow_store) -> Path:
    """One workspace with a run of the default experiment and of every preset, each run twice; MLflow tracks them."""
    new_mlflow_store(tmp_path / "ws")
    monkeypatch.setenv("GEMINI_API_KEY", GEMINI_KEY)
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    common = ["embedder=pixel", "run.workers=1", "analysis.n_resamples=99", "tracking=mlflow"]
    celeba, grid = celeba_root(tmp_path), grid_root(tmp_path)
    with gemini_server(api_key=GEMINI_KEY, judge_answer=judge_answer) as g, \
            openai_server(api_key=OPENAI_KEY, judge_answer=judge_answer) as o:
        gemini = [f"judge.params.base_url={g.url}", *[f"judge.params.limits.{s}" for s in FAST]]
        panel = [f"judge.params.members.gemini.params.base_url={g.url}",
                 f"judge.params.members.gpt.params.base_url={o.url}/v1",
                 *[f"judge.params.members.{m}.params.limits.{s}" for m in ("gemini", "gpt") for s in FAST]]
        grid_run = [f"dataset.params.root={grid}", *panel]
        runs = {
            "default": ["testset=pose", "run.max_faces=2", "run.max_sessions=1"],
            "smoke": ["experiment=smoke"],
            "paper_celeba": ["experiment=paper_celeba", f"dataset.params.root={celeba}",
                             "dataset.params.min_base_fss=null", "testset=pose", "run.max_faces=2",
                             "run.max_sessions=1", *gemini],
            "paper_celeba_cluster": ["experiment=paper_celeba_cluster", f"dataset.params.root={celeba}",
                                     "dataset.params.min_base_fss=null", "testset=hair", "run.max_faces=2",
                                     "run.max_sessions=1", *gemini],
            "paper_b": ["experiment=paper_b", "editor=noise", "run.max_sessions=2", *grid_run],
            # the paper's published sample names cells this 3-portrait grid lacks: every item here instead
            "paper_b_mitigation": ["experiment=paper_b_mitigation", "editor=noise", "run.max_sessions=2",
                                   "run.sample=null", *grid_run],
            "paper_b_winobias": ["experiment=paper_b_winobias", "editor=two_image", "run.max_sessions=2",
                                 *grid_run],
            "creval": ["experiment=creval", f"dataset.params.root={CREVAL_FIXTURE}", "editor=noise",
                       f"judge.params.base_url={o.url}/v1", *[f"judge.params.limits.{s}" for s in FAST]],
        }
        for name, overrides in runs.items():
            report = run_built(build_run(compose(*common, *overrides), plugins), plugins)
            assert report["run"]["complete"], name
            # Run again, each preset reports the same results, every protocol's sections included: nothing new
            # for MLflow.
            rerun = run_built(build_run(compose(*common, *overrides), plugins), plugins)
            assert results_digest(rerun) == results_digest(report), name
    return Path(compose().run.workspace)


@pytest.mark.slow(seconds=16)
def test_results_of_every_preset_concatenate_with_labels_as_text_and_metrics_as_numbers(every_preset, tmp_path,
                                                                                        capsys):
    workspace = every_preset
    uri = f"sqlite:///{workspace / 'mlflow.db'}"
    calls = [("sessions", [str(workspace)], "parquet"), ("sessions", [str(workspace)], "csv"),
             ("steps", [str(workspace)], "parquet"), ("sessions", ["--tracking-uri", uri], "parquet")]
    for table, source, suffix in calls:
        out = tmp_path / f"{table}-{len(source)}.{suffix}"
        assert run_cli(["results", *source, "--table", table, "--out", str(out)]) == 0, capsys.readouterr().err
        assert "from 8 run(s)" in capsys.readouterr().err
        frame = pd.read_parquet(out) if suffix == "parquet" else pd.read_csv(out)
        assert frame["run_key"].nunique() == 8
        if suffix == "parquet":
            schema = pq.read_schema(out)
            labels = [n for n in schema.names if n in ("gender", "race", "age_bin", "age_group", "skin_tone")
                      and table == "steps" or n.startswith("label_")]
            assert labels and all(str(schema.field(n).type) == "string" for n in labels), schema
    keys = ["run_key", "face_id", "session_id", "condition"]
    here, tracked = (pd.read_parquet(tmp_path / f"sessions-{n}.parquet").sort_values(keys, ignore_index=True)
                     for n in (1, 2))
    pd.testing.assert_frame_equal(here, tracked[here.columns])  # the workspace and MLflow agree
    # the rubric's skin-tone score is a number; the datasets' skin-tone labels are text, in their own column
    assert str(here["skin_tone"].dtype) == "float64" and pd.api.types.is_string_dtype(here["label_skin_tone"])
    assert here.loc[here["dataset"] == "fairface_grid", "skin_tone"].notna().any()
    assert set(here["gender"].dropna()) >= {"male", "female"}
