"""Leaderboard tables: ranking direction from the metric registry, comparable entries only,
verification status, deterministic output."""

from __future__ import annotations

import json
import shutil

import pytest

from faceedit_bench.analysis.session_metrics import SessionMetric
from faceedit_bench.leaderboard.build import build_leaderboard
from faceedit_bench.leaderboard.entries import collect_submissions
from faceedit_bench.leaderboard.submit import submit
from faceedit_bench.leaderboard.verify import Verification, write_verification
from faceedit_bench.leaderboard.views import build_views
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
    assert ("BIAS (identities 2/1; Holm p 0.010, id p 0.010, q 0.010; paper's rule: BIAS (p = 0.010); worst: male)"
            in result.table.read_text())


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
    rewrite_record(sub, lambda r: r.update(notes="edited"))  # changed after verification
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
    assert table.index("| 1 | zeta v1") < table.index("| 2 | alpha v1") < table.index("| 3 | mid v1")


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
    _submit(tmp_path, plugins, editor="a", values=(1.0, 1.2, 1.1, 1.3))
    (entry,) = collect_submissions(tmp_path / "lb").entries  # the counts set after the checks: steps.csv has none
    entry.record["outcomes"]["steps"] = {"ok": 8, "refused": 1, "no_image": 3, "api_error": 2, "invalid_image": 1,
                                         "skipped": 1}
    (view,) = build_views([entry], _registry(drop_fss=False))
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
    assert "| ref | identity (reference: no edit · identity-" in result.table.read_text()


def _across(views):
    return [v for v in views if v.label.startswith("all test sets")]


def test_all_test_sets_view_has_the_papers_avg_column_and_ranks_by_it(tmp_path, plugins) -> None:
    means = {"alpha": {"pose": 3.0, "hair": 5.0, "accessories": 1.0, "multi_axis": 3.0},   # Avg. 3.0
             "beta": {"pose": 2.0, "hair": 6.0, "accessories": 2.0, "multi_axis": 2.4},    # Avg. 3.1
             "gamma": {"pose": 0.5, "hair": 0.5},                                           # two of four
             "identity": {"pose": 0.0, "hair": 0.0, "accessories": 0.0, "multi_axis": 0.0}}
    for editor, per in means.items():
        for testset, mean in per.items():
            _submit(tmp_path, plugins, editor=editor, testset=testset, values=(mean - 0.1, mean + 0.1))
    views = build_views(collect_submissions(tmp_path / "lb").entries, _registry(drop_fss=False))
    assert len(views) == 5  # one per test set, and the view over all of them
    (view,) = _across(views)
    (section,) = view.sections
    titles = [c.title for c in section.columns]
    assert titles[2:7] == ["drop_fss · accessories 1.0.0", "drop_fss · hair 1.0.0", "drop_fss · multi_axis 1.0.0",
                           "drop_fss · pose 1.0.0", "drop_fss · Avg."]
    table = {r.id: [c.text for c in r.cells] for r in section.rows}
    assert [r.id for r in section.rows] == ["identity 1", "alpha 1", "beta 1", "gamma 1"]
    assert table["alpha 1"][0] == "1" and table["alpha 1"][6] == "3.000"
    assert table["beta 1"][0] == "2" and table["beta 1"][6] == "3.100"
    assert table["identity 1"][0] == "ref"  # the baseline (Avg. 0) is not ranked
    assert table["gamma 1"][0] == "–" and table["gamma 1"][6] == "n/a" and table["gamma 1"][2] == "n/a"
    gamma_avg = next(r for r in section.rows if r.id == "gamma 1").cells[6]
    assert gamma_avg.sub == "2 of 4 test sets"  # an average over a subset is not comparable: not given


def test_all_test_sets_view_pools_the_overediting_patterns(tmp_path, plugins) -> None:
    # Per test set, "hair color" -> "skin tone" stays below 15% (2/20, 1/10); pooled over both it is 3/30 = 10%.
    # "beard" -> "mustache" is 3/20 = 15% on pose alone and 1/10 on hair: 4/30 = 13.3%, no longer a pattern.
    # "glasses" -> "eye color" is 1/10 and 4/10: pooled 5/20 = 25%.
    counts = {"pose": {"edits": {"hair color": 20, "beard": 20, "glasses": 10},
                       "changed": {"hair color": {"skin tone": 2}, "beard": {"mustache": 3}, "glasses": {"eye color": 1}}},
              "hair": {"edits": {"hair color": 10, "beard": 10, "glasses": 10},
                       "changed": {"hair color": {"skin tone": 1}, "beard": {"mustache": 1}, "glasses": {"eye color": 4}}}}
    for testset, c in counts.items():
        _submit(tmp_path, plugins, editor="alpha", testset=testset, values=(1.0, 1.2), attribute_changes=c)
    (view,) = _across(build_views(collect_submissions(tmp_path / "lb").entries, _registry(drop_fss=False)))
    (patterns,) = view.sections[0].tables
    assert [[c.text for c in r.cells] for r in patterns.rows] == [["alpha 1", "glasses", "eye color", "5 / 20", "25.0%"]]
    result = build_leaderboard(tmp_path / "lb", plugins=plugins)
    assert "Frequent overediting patterns, pooled over test sets" in result.page.read_text()
    assert "| alpha 1 | glasses | eye color | 5 / 20 | 25.0% (over 2 test set(s)) |" in result.table.read_text()


def test_a_preliminary_entry_is_listed_apart_without_a_rank_and_submit_warns(tmp_path, plugins):
    from faceedit_bench.cli.leaderboard import preliminary_warning

    few = write_fake_run(tmp_path / "ws", editor="few", values=(1.0, 1.2, 1.1, 1.3))
    report = json.loads((few / "report.json").read_text())
    report["sample_size"] = {"sessions": 4, "identities": 4, "preliminary": True, "preliminary_below_identities": 10,
                             "reason": "4 identities, fewer than 10: intervals and flags rest on few people"}
    (few / "report.json").write_text(json.dumps(report))
    target = submit(str(few), out=tmp_path / "lb" / "submissions", plugins=plugins)
    assert "WARNING: preliminary: 4 identities" in preliminary_warning(target)
    _submit(tmp_path, plugins, editor="many", values=(5.0, 5.2, 5.1, 5.3))
    (view,) = build_views(collect_submissions(tmp_path / "lb").entries, _registry(drop_fss=False))
    rows = view.sections[0].rows
    assert _order(view) == ["many", "few"]  # the better mean, but preliminary: after the ranked entry
    # the one ranked entry has nothing to rank against: no "1" (of 1)
    assert [r.cells[0].text for r in rows] == ["–", "–"] and "preliminary" in rows[1].cells[2].text
    assert rows[0].cells[0].sub == "nothing to rank against" and not view.sections[0].ranked
