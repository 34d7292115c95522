"""The package plugs in like a third party's: its hooks register what it adds, it reads CREval-Bench, its
intervals stay in range, and a data check of its dataset reads the layout without writing to it."""

from __future__ import annotations

from pathlib import Path

import pytest
from creval_support import FIXTURE
from faceedit_bench_creval.collector import creval_section
from faceedit_bench_creval.dataset import CrevalBenchDataset
from faceedit_bench_creval.metric import CREVAL_METRIC
from faceedit_bench_creval.scoring import ItemResult, MetricScore

from faceedit_bench.api import ConfigError, Outcome, create_registered, registered
from faceedit_bench.testing import run_cli


def test_the_package_registers_its_parts_through_hooks(plugins):
    assert plugins.info["creval"].distribution == "faceedit-bench-creval"
    assert {"creval", "creval_face"} <= set(plugins.registry["judge_metrics"].names())
    assert {"creval", "creval_face"} <= {s.name for s in plugins.sections()}
    assert {"file", "creval_bench"} <= set(plugins.registry["question_sets"].names())
    assert "creval_bench" in plugins.registry["datasets"].names()
    assert "creval_bench" in plugins.registry["testsets"].names()
    assert "questions" in plugins.registry["commands"].names()
    assert "pkg://faceedit_bench_creval.conf" in plugins.searchpath()
    assert [Path(str(t)).name for t in plugins.fidelity_tables()].count("creval.yaml") == 1


def test_a_question_set_loader_reads_the_published_layout():
    qset = registered("question_sets", "creval_bench")(str(FIXTURE))
    assert qset.name == "creval_bench" and len(qset.items) == 3


def test_creval_values_are_bounded_0_to_100():
    assert all(v.bounds == (0, 100) for v in CREVAL_METRIC.values)


def test_a_creval_interval_on_three_items_stays_within_0_to_100():
    # three items: 0, 75 and 100 on every metric; Student-t gave about [-101, 217] here
    items = [ItemResult(f"s{n}", 1, f"i{n}", "Stylization", "Material", ("a", "b"),
                        {m: MetricScore(m, Outcome.OK, v / 100) for m in ("IF", "VC", "VQ")})
             for n, v in enumerate((0.0, 75.0, 100.0))]
    overall = creval_section(items, metric="creval", extension=False)["overall"]
    for name in ("IF", "VC", "VQ", "overall"):
        s = overall[name]
        assert 0 <= s["ci_low"] <= s["mean"] <= s["ci_high"] <= 100, (name, s)
        assert s["ci_method"] == "bootstrap_percentile"


def test_creval_bench_limit_is_checked_like_every_datasets():
    assert CrevalBenchDataset(str(FIXTURE), limit=0).describe()["n_faces"] == 0  # 0 is 0 items, not all of them
    assert CrevalBenchDataset(str(FIXTURE), limit=2).describe()["n_faces"] == 2
    with pytest.raises(ConfigError, match="dataset.params.limit must be a non-negative integer or null, got -1"):
        create_registered("datasets", "creval_bench", {"root": str(FIXTURE), "limit": -1})  # checked by the core


def test_a_data_check_of_creval_bench_reads_the_layout_and_writes_nothing(capsys):
    before = sorted(str(p.relative_to(FIXTURE)) for p in FIXTURE.rglob("*"))
    assert run_cli(["data", "check", "creval_bench", str(FIXTURE)]) == 0
    assert capsys.readouterr().out.splitlines()[0].endswith(": usable")
    assert sorted(str(p.relative_to(FIXTURE)) for p in FIXTURE.rglob("*")) == before


def test_the_question_sets_enter_the_run_key_by_content_not_by_path(plugins, compose, tmp_path, monkeypatch):
    """analysis.creval.questions is a setting with metadata run_key=False: the same sets at another path are
    the same run (they resume it); other questions are another run, through the bound metric's identity."""
    import json
    import shutil

    from faceedit_bench.testing import build_run

    monkeypatch.setenv("CREVAL_KEY", "k")
    same, edited = tmp_path / "same", tmp_path / "edited"
    shutil.copytree(FIXTURE, same)
    shutil.copytree(FIXTURE, edited)
    question = next((edited / "bench" / "questiions_all" / "IF").glob("*.json"))
    data = json.loads(question.read_text())
    question.write_text(json.dumps(data).replace("?", " now?", 1))

    def key(questions: Path) -> str:
        cfg = compose("experiment=creval", f"dataset.params.root={FIXTURE}", "editor=noise", "embedder=pixel",
                      "tracking=none", "judge=gemini", "judge.params.api_key_env=CREVAL_KEY",
                      f"analysis.creval.questions=[creval_bench:{questions}]")
        return build_run(cfg, plugins).info.run_key

    assert key(FIXTURE) == key(same) != key(edited)
