"""Requirements checked before paying (issue 37, finding 6): every metric, judge metric and report section says
what it needs of the faces, and a run that could score nothing, or only part, says so before its first call.

The finding: ``experiment=paper_b`` on a dataset without race and age labels made 40 edits and 12 judge calls,
then reported "0 of 40 rubric edits scored" with exit 0. Here the same command stops with exit 2, names the
missing labels and how to get them, and the fake providers receive no request."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from faceedit_bench.errors import ConfigError
from faceedit_bench.plugin.needs import Needs, needs_of
from faceedit_bench.records import Face
from faceedit_bench.run.experiment import build_experiment, run_experiment
from faceedit_bench.run.plan import plan_run
from faceedit_bench.testing import run_cli
from tests.datasets.conftest import write_csv, write_image
from tests.fakes.gemini import gemini_server

KEY = "AIza-needs-test-key"
FAST = ["limits.max_attempts=2", "limits.requests_per_minute=6000", "limits.tokens_per_minute=null",
        "limits.backoff_initial_s=0.01", "limits.timeout_s=5"]


BASIC = ("file", "identity", "role", "gender", "skin_tone", "age")


def folder(tmp_path: Path, rows: list[tuple[str, ...]], header: tuple[str, ...] = BASIC) -> Path:
    root = tmp_path / "faces"
    write_csv(root / "manifest.csv", header, rows)
    for n, row in enumerate(rows):
        write_image(root / row[0], n)
    return root


def paper_b(server: Any, root: Path, *more: str) -> list[str]:
    """Paper (b)'s preset with one Gemini judge and a Gemini editor, both at the fake server."""
    return ["experiment=paper_b", "editor=nano_banana", f"editor.params.base_url={server.url}", "judge=gemini",
            f"judge.params.base_url={server.url}", "dataset=folder", f"dataset.params.root={root}",
            "dataset.params.single_face_only=false", "embedder=pixel", "tracking=none", "run.workers=1",
            "run.max_sessions=2", *(f"{g}.params.{s}" for g in ("editor", "judge") for s in FAST), *more]


@pytest.fixture
def gemini(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    with gemini_server(api_key=KEY, retry_after=0.01) as server:
        yield server


GENDER_ONLY = [(f"p{i}.png", f"p{i}", "base", "male" if i % 2 else "female", "", "") for i in range(4)]
LABELLED = (*BASIC, "race", "age_bin")


def test_paper_b_without_race_and_age_labels_stops_before_any_call(plugins, compose, gemini, tmp_path):
    root = folder(tmp_path, GENDER_ONLY)
    with pytest.raises(ConfigError) as caught:
        build_experiment(compose(*paper_b(gemini, root)), plugins)
    message = str(caught.value)
    assert message.startswith("this run would score nothing: judge metric rubric can use 0 of 4 faces")
    assert "4 with no race label" in message and "4 with no age_bin label" in message
    assert "dataset=fairface_grid" in message and "manifest.csv" in message  # how to get them
    assert "faceedit-bench data check folder" in message and "docs/datasets/folder.md" in message
    assert gemini.calls == 0 and not (tmp_path / "ws" / "ledger.sqlite").exists()


def test_the_command_exits_2_with_one_line_and_pays_nothing(plugins, gemini, tmp_path, capsys, monkeypatch):
    root = folder(tmp_path, GENDER_ONLY)
    monkeypatch.setattr("faceedit_bench.plugin.manager.get_plugins", lambda: plugins)  # with the test's embedder
    with pytest.raises(SystemExit) as stopped:
        run_cli(["run", *paper_b(gemini, root), f"run.workspace={tmp_path / 'ws'}", "run.progress=false"])
    err = capsys.readouterr().err
    assert stopped.value.code == 2 and gemini.calls == 0
    assert "Error: this run would score nothing" in err and "Traceback" not in err


def test_a_run_that_can_score_part_asks_for_allow_partial_and_then_runs(plugins, compose, gemini, tmp_path, capsys):
    rows = [("a.png", "a", "base", "male", "", "", "White", "20-29"),
            ("b.png", "b", "base", "female", "", "", "Black", "30-39"),
            ("c.png", "c", "base", "female", "", "", "", "40-49")]  # c has no race: the rubric cannot ask about it
    root = folder(tmp_path, rows, LABELLED)
    with pytest.raises(ConfigError, match=r"can score only part .*can use 2 of 3 faces \(1 with no race label\)"
                                          r".*run.allow_partial=true"):
        build_experiment(compose(*paper_b(gemini, root)), plugins)
    assert gemini.calls == 0
    exp = build_experiment(compose(*paper_b(gemini, root, "run.allow_partial=true")), plugins)
    assert "Warning: scoring only part (run.allow_partial=true): judge metric rubric can use 2 of 3" in \
        capsys.readouterr().err
    plan = {row.role: row.calls for row in plan_run(exp).rows}
    report = run_experiment(exp, plugins)
    assert report["counts"]["steps"] == {"ok": 3 * 2}  # every face edited, as asked
    # The plan counted what the run then asked: the face without a race label is not asked about
    edits = sum(c.wants_image for c in gemini.gemini_calls)
    assert plan == {"editor": edits, "judge": gemini.calls - edits} == {"editor": 6, "judge": 2 * 2 + 3}


def test_a_fully_labelled_folder_runs_without_a_word(plugins, compose, gemini, tmp_path, capsys):
    rows = [("a.png", "a", "base", "male", "", "", "White", "20-29"),
            ("b.png", "b", "base", "female", "", "", "Black", "30-39")]
    build_experiment(compose(*paper_b(gemini, folder(tmp_path, rows, LABELLED))), plugins)
    assert "Warning" not in capsys.readouterr().err


def test_declared_labels_are_checked_without_reading_faces(plugins, compose, gemini, tmp_path, monkeypatch):
    """A dataset that is not cheap to read is checked against the labels its format declares."""
    from faceedit_bench.builtin.datasets.folder import FolderDataset

    root = folder(tmp_path, GENDER_ONLY)
    monkeypatch.setattr(FolderDataset, "faces_cheap", False)
    monkeypatch.setattr(FolderDataset, "label_keys", ("gender",), raising=False)
    with pytest.raises(ConfigError, match="would score nothing: judge metric rubric can use 0 of 4 faces"):
        build_experiment(compose(*paper_b(gemini, root)), plugins)
    monkeypatch.setattr(FolderDataset, "label_keys", None, raising=False)  # declares nothing: not checked
    build_experiment(compose(*paper_b(gemini, root)), plugins)


def test_needs_of_a_judge_metric_include_its_image_roles():
    from faceedit_bench_audit.audit.rubric import RUBRIC_METRIC
    from faceedit_bench_audit.winobias.metric import WINOBIAS_METRIC

    assert needs_of(RUBRIC_METRIC).labels == ("race", "gender", "age_bin")
    assert needs_of(WINOBIAS_METRIC).inputs == 1
    face = Face("f", "i", Path("x.png"), (), {"race": "White", "gender": None})
    assert Needs(labels=("race", "gender"), references=1).unmet_by(face) == ["gender label", "reference image"]
    with pytest.raises(ValueError):
        Needs(labels="race")  # type: ignore[arg-type]


def test_a_section_s_needs_count_only_in_a_run_where_it_collects():
    from types import SimpleNamespace

    from faceedit_bench.api.sections import ReportSection
    from faceedit_bench.run.data_needs import parts

    needs = Needs(labels=("race",), how="a race column")
    exp = SimpleNamespace(asked_judge_metrics=[], metrics=[], components={}, conf=SimpleNamespace(analysis=None))
    collecting = ReportSection(name="needy", title="t", schema={"type": "object"}, collector=lambda run: object(),
                               needs=needs)
    idle = ReportSection(name="idle", title="t", schema={"type": "object"}, collector=lambda run: None, needs=needs)
    assert parts(exp, [collecting, idle]) == [("report section needy", needs)]
