"""Leaderboard tables: ranking direction from the metric registry, comparable entries only,
verification status, deterministic output."""

from __future__ import annotations

import json
import shutil

import pytest

from faceedit_bench.leaderboard.build import build_leaderboard
from faceedit_bench.leaderboard.entries import collect_submissions
from faceedit_bench.leaderboard.submit import submit
from faceedit_bench.leaderboard.verify import Verification, write_verification
from faceedit_bench.leaderboard.views import build_views
from faceedit_bench.metrics import SessionMetric
from tests.test_leaderboard_support import rewrite_record, write_fake_run


def _submit(tmp_path, plugins, **kw):
    run = write_fake_run(tmp_path / "ws", **kw)
    return submit(str(run), out=tmp_path / "lb" / "submissions", plugins=plugins)


def _order(view, section=0):
    return [row.id.split("-")[0] for row in view.sections[section].rows]


def _registry(**directions):
    return {name: SessionMetric(name, hib, "%", "test", lambda s: None) for name, hib in directions.items()}


def test_rank_direction_follows_the_registered_metric_not_the_submission(tmp_path, plugins):
    _submit(tmp_path, plugins, editor="low", values=(1.0, 1.2, 1.1, 1.3), metric="score", hib=False)
    _submit(tmp_path, plugins, editor="high", values=(5.0, 5.2, 5.1, 5.3), metric="score", hib=False)
    entries = collect_submissions(tmp_path / "lb").entries

    (view,) = build_views(entries, _registry(score=True))  # registered: higher is better
    assert _order(view) == ["high", "low"]
    assert [c.hib for c in view.sections[0].columns if c.title.startswith("score")] == ["true"]
    (view,) = build_views(entries, _registry(score=False))
    assert _order(view) == ["low", "high"]
    (view,) = build_views(entries, {})  # not registered here: the reports' own statement (lower is better)
    assert _order(view) == ["low", "high"]
    assert view.sections[0].rows[0].cells[0].text == "1"


def test_contradicting_unregistered_directions_give_no_ranking(tmp_path, plugins):
    _submit(tmp_path, plugins, editor="a", values=(1.0, 1.2, 1.1, 1.3), metric="score", hib=False)
    _submit(tmp_path, plugins, editor="b", values=(2.0, 2.2, 2.1, 2.3), metric="score", hib=True)
    (view,) = build_views(collect_submissions(tmp_path / "lb").entries, {})
    assert view.metrics == [] and view.rank_by is None


def test_only_comparable_entries_share_a_table(tmp_path, plugins):
    _submit(tmp_path, plugins, editor="a", values=(1.0, 1.2, 1.1, 1.3))
    _submit(tmp_path, plugins, editor="b", values=(2.0, 2.2, 2.1, 2.3), embedder_version="2")
    views = build_views(collect_submissions(tmp_path / "lb").entries, _registry(drop_fss=False))
    assert len(views) == 2 and {v.label for v in views} == {
        "pose 1.0.0 · synthetic · pixel 1 · no judge", "pose 1.0.0 · synthetic · pixel 2 · no judge"}


def test_counts_groups_and_bias_flags_are_shown(tmp_path, plugins):
    _submit(tmp_path, plugins, editor="biased", values=(1.0, 9.0, 1.2, 9.5), refused=1)
    result = build_leaderboard(tmp_path / "lb", plugins=plugins)
    (entry,) = result.collection.entries
    (view,) = build_views(result.collection.entries, _registry(drop_fss=False))
    overall, gender = view.sections
    cells = {c.title: cell.text for c, cell in zip(overall.columns, overall.rows[0].cells)}
    assert cells["sessions"] == "3/4" and cells["excluded"] == "1" and cells["refused"] == "1"
    assert cells["failed"] == "0" and cells["cost (USD)"] == "n/a"
    assert gender.contrast == "gender"
    cells = {c.title: cell for c, cell in zip(gender.columns, gender.rows[0].cells)}
    assert cells["bias · drop_fss"].text == "BIAS" and "worst: male" in cells["bias · drop_fss"].sub
    assert cells["drop_fss · female"].text.startswith("9.250")
    assert "BIAS (p = 0.010, worst: male)" in result.table.read_text()


def test_verification_status_is_bound_to_the_submission_bytes(tmp_path, plugins):
    sub = _submit(tmp_path, plugins, editor="a", values=(1.0, 1.2, 1.1, 1.3))
    record_dir = tmp_path / "lb" / "verifications"
    from faceedit_bench.leaderboard.bundle import read_submission

    sha = read_submission(sub).sha256
    assert collect_submissions(tmp_path / "lb").entries[0].status == "unverified"
    write_verification(Verification(sub.name, sha, "verified", compared=7, verified_at="2026-01-01T00:00:00Z"),
                       record_dir)
    (entry,) = collect_submissions(tmp_path / "lb").entries
    assert (entry.status, entry.status_note) == ("verified", "re-scored 2026-01-01T00:00:00Z: all 7 values reproduced")
    rewrite_record(sub, lambda r: r["metrics"]["drop_fss"].update(mean=0.0))  # changed after verification
    (entry,) = collect_submissions(tmp_path / "lb").entries
    assert entry.status == "unverified" and "changed after its verification" in entry.status_note
    write_verification(Verification(sub.name, read_submission(sub).sha256, "failed", reason="3 values differ",
                                    verified_at="2026-01-02T00:00:00Z"), record_dir)
    (view,) = build_views(collect_submissions(tmp_path / "lb").entries, _registry(drop_fss=False))
    assert view.sections[0].rows[0].cells[0].text == "–"  # failed entries get no rank
    (record_dir / f"{sub.name}.json").write_text("{not json")
    assert collect_submissions(tmp_path / "lb").entries[0].status == "unverified"


def test_build_is_deterministic_and_independent_of_directory_order(tmp_path, plugins):
    for i, name in enumerate(("zeta", "alpha", "mid")):
        _submit(tmp_path, plugins, editor=name, values=(i + 1.0, i + 1.5, i + 1.2, i + 1.7))
    first = build_leaderboard(tmp_path / "lb", out=tmp_path / "out1", plugins=plugins)
    copy = tmp_path / "copy"
    shutil.copytree(tmp_path / "lb", copy)
    second = build_leaderboard(copy, out=tmp_path / "out2", plugins=plugins)
    assert first.page.read_bytes() == second.page.read_bytes()
    assert first.table.read_bytes() == second.table.read_bytes()
    table = first.table.read_text()
    assert table.index("| 1 | zeta 1") < table.index("| 2 | alpha 1") < table.index("| 3 | mid 1")


def test_submit_refuses_to_overwrite_and_an_unfinished_run(tmp_path, plugins):
    run = write_fake_run(tmp_path / "ws", editor="a")
    out = tmp_path / "lb" / "submissions"
    submit(str(run), out=out, plugins=plugins)
    with pytest.raises(Exception, match="already exists"):
        submit(str(run), out=out, plugins=plugins)
    submit(str(run), out=out, plugins=plugins, force=True)
    report = json.loads((run / "report.json").read_text())
    report["run"]["complete"] = False
    (run / "report.json").write_text(json.dumps(report))
    with pytest.raises(Exception, match="did not finish"):
        submit(str(run), out=out, plugins=plugins, submission_id="other")


def test_submit_without_images_lists_hashes_but_no_files(tmp_path, plugins):
    run = write_fake_run(tmp_path / "ws", editor="a", refused=1)
    sub = submit(str(run), out=tmp_path / "lb" / "submissions", plugins=plugins, images=False)
    record = json.loads((sub / "submission.json").read_text())
    assert not (sub / "images").exists() and not record["files"]["images_bundled"]
    assert len(record["files"]["images"]) == 12 and all(e["path"] is None for e in record["files"]["images"])
    assert len(record["files"]["refusals"]) == 1
    assert collect_submissions(tmp_path / "lb").entries[0].status == "unverified"


def test_failed_column_counts_neither_refusals_nor_answers_without_an_image(tmp_path, plugins) -> None:
    sub = _submit(tmp_path, plugins, editor="a", values=(1.0, 1.2, 1.1, 1.3))
    rewrite_record(sub, lambda r: r["outcomes"].update(
        steps={"ok": 8, "refused": 1, "no_image": 3, "api_error": 2, "invalid_image": 1, "skipped": 1}))
    (view,) = build_views(collect_submissions(tmp_path / "lb").entries, _registry(drop_fss=False))
    overall = view.sections[0]
    cells = {c.title: cell for c, cell in zip(overall.columns, overall.rows[0].cells)}
    assert cells["refused"].text == "1" and cells["no image"].text == "3"
    assert cells["failed"].text == "3" and cells["failed"].sub == "api_error 2, invalid_image 1"


def test_identity_baseline_is_a_reference_row_never_ranked(tmp_path, plugins) -> None:
    _submit(tmp_path, plugins, editor="identity", values=(0.0, 0.0, 0.0, 0.0))
    _submit(tmp_path, plugins, editor="alpha", values=(3.0, 3.4, 3.1, 3.6))
    _submit(tmp_path, plugins, editor="beta", values=(1.0, 1.3, 1.2, 1.1))
    result = build_leaderboard(tmp_path / "lb", plugins=plugins)
    (view,) = build_views(result.collection.entries, _registry(drop_fss=False))
    for section in view.sections:
        assert [(r.id.split("-")[0], r.reference) for r in section.rows] == [
            ("identity", True), ("beta", False), ("alpha", False)]
    ranks = [r.cells[0].text for r in view.sections[0].rows]
    assert ranks == ["ref", "1", "2"]  # Drop_FSS 0 would be "best", but no edit is not an editor's result
    page = result.page.read_text()
    reference_body = page[page.index('<tbody class="reference">'):page.index('<tbody class="ranked">')]
    assert 'data-id="identity-' in reference_body and 'data-id="beta-' not in reference_body
    assert "| ref | identity 1 (reference: no edit · identity-" in result.table.read_text()
