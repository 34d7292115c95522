"""The identity baseline wherever its measurement matches (issue 25, item 15): a reference run measured without
the editors' judge is their table's reference row, with the metrics that need no judge; no table of the baseline
alone; a table without a reference says in one command how to get one."""

from __future__ import annotations

from faceedit_bench.leaderboard.build import build_leaderboard
from faceedit_bench.leaderboard.views import build_views
from tests.test_leaderboard_support import rewrite_record
from tests.test_leaderboard_views import _registry, _submit

JUDGED = {"edits": {}, "changed": {}}  # attribute_changes: a judged run (judge "judge")


def _with_sc(judge_version: str):
    """A judged metric (SC) and the judge's version in a submission record."""
    def change(record):
        record["metrics"]["sc"] = {**record["metrics"]["drop_fss"], "mean": 50.0, "ci_low": 40.0, "ci_high": 60.0,
                                   "higher_is_better": True, "unit": "x100", "description": "judged"}
        record.setdefault("measures", {})["sc"] = {"label": "SC", "higher_is_better": True, "unit": "x100",
                                                   "description": "judged", "bounds": [0, 100], "requires": ["judge"],
                                                   "section": "metrics"}
        record["judge"]["description"]["version"] = judge_version
        record["judge"]["version"] = judge_version
    return change


def _views(tmp_path, plugins):
    result = build_leaderboard(tmp_path / "lb", plugins=plugins)
    assert not result.collection.rejected, result.collection.rejected
    views = build_views(result.collection.entries, _registry(drop_fss=False, sc=True))
    return [v for v in views if not v.label.startswith("all test sets")], result


def test_a_reference_measured_with_another_judge_lends_its_judge_free_metrics(tmp_path, plugins):
    _submit(tmp_path, plugins, editor="identity", values=(0.0, 0.0, 0.0, 0.0), attribute_changes=JUDGED)
    _submit(tmp_path, plugins, editor="alpha", values=(3.0, 3.4, 3.1, 3.6), attribute_changes=JUDGED)
    subs = tmp_path / "lb" / "submissions"
    rewrite_record(next(subs.glob("identity-*")), _with_sc("old-judge"))
    rewrite_record(next(subs.glob("alpha-*")), _with_sc("new-judge"))
    (view,), result = _views(tmp_path, plugins)  # one table: the baseline has none of its own
    rows = view.sections[0].rows
    assert [(r.id.split("-")[0], r.reference) for r in rows] == [("identity", True), ("alpha", False)]
    titles = [c.title for c in view.sections[0].columns]
    drop, sc = titles.index("drop_fss (%)"), titles.index("sc (x100)")
    assert rows[0].cells[drop].text.startswith("0.000") and rows[0].cells[sc].text == "n/a"  # not the old judge's
    assert rows[1].cells[sc].text.startswith("50.000")
    assert "reference measured with judge judge: only its metrics that need no judge" in rows[0].cells[2].sub
    assert "only its metrics that need no judge are shown" in result.page.read_text()


def test_a_table_without_a_reference_says_how_to_get_one(tmp_path, plugins):
    _submit(tmp_path, plugins, editor="alpha", values=(3.0, 3.4, 3.1, 3.6), attribute_changes=JUDGED)
    (view,), _ = _views(tmp_path, plugins)
    note = next(n for n in view.notes if n.startswith("No reference row"))
    assert "`faceedit-bench run editor=identity testset=pose dataset=synthetic embedder=pixel judge=judge`" in note


def test_a_baseline_already_in_the_judged_table_is_not_shown_again_alone(tmp_path, plugins):
    _submit(tmp_path, plugins, editor="identity", values=(0.0, 0.0, 0.0, 0.0))  # no judge
    _submit(tmp_path, plugins, editor="identity", editor_version="2", values=(0.0, 0.0, 0.0, 0.0),
            attribute_changes=JUDGED)
    _submit(tmp_path, plugins, editor="alpha", values=(3.0, 3.4, 3.1, 3.6), attribute_changes=JUDGED)
    (view,), _ = _views(tmp_path, plugins)
    assert [(r.id.split("-")[0], r.reference) for r in view.sections[0].rows] == [("identity", True),
                                                                                 ("alpha", False)]
