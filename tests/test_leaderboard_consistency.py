"""Unverified is not unchecked (issue 41 item 6): a submission whose numbers disagree with themselves or with
its bundled tables is refused before it is listed, with a message naming the figure; unverified entries are
shown apart from verified ones and never ranked above them."""

from __future__ import annotations

import hashlib

import pytest

from faceedit_bench.analysis.session_metrics import SessionMetric
from faceedit_bench.leaderboard.build import build_leaderboard
from faceedit_bench.leaderboard.bundle import read_submission
from faceedit_bench.leaderboard.cells import NOTHING_TO_RANK_AGAINST, UNVERIFIED_RANK
from faceedit_bench.leaderboard.entries import collect_submissions
from faceedit_bench.leaderboard.submit import submit
from faceedit_bench.leaderboard.verify import Verification, write_verification
from faceedit_bench.leaderboard.views import build_views
from faceedit_bench.report.templates import stylesheet
from tests.test_leaderboard_support import rewrite_record, write_fake_run

VALUES = (2.4, 3.9, 2.2, 3.6)


def _submit(tmp_path, plugins, **kw):
    run = write_fake_run(tmp_path / "ws", **kw)
    return submit(str(run), out=tmp_path / "lb" / "submissions", plugins=plugins)


def _rejection(tmp_path) -> str:
    collection = collect_submissions(tmp_path / "lb")
    assert not collection.entries
    (rejected,) = collection.rejected
    return rejected.reason


def test_an_honest_submission_is_listed(tmp_path, plugins):
    sub = _submit(tmp_path, plugins, editor="a", values=VALUES, sessions_table=True)
    assert (sub / "sessions.csv").is_file()
    (entry,) = collect_submissions(tmp_path / "lb").entries
    assert entry.status == "unverified"


def test_a_mean_outside_its_own_interval_is_refused_naming_the_figure(tmp_path, plugins):
    sub = _submit(tmp_path, plugins, editor="a", values=VALUES)
    record = rewrite_record(sub, lambda r: r["metrics"]["drop_fss"].update(mean=0.01))
    low, high = record["metrics"]["drop_fss"]["ci_low"], record["metrics"]["drop_fss"]["ci_high"]
    assert low > 0.01  # the case: a hand-edited 0.01 whose own interval is far above it
    reason = _rejection(tmp_path)
    assert f"metrics.drop_fss.mean is 0.01, outside its own interval [{low:.6g}, {high:.6g}]" in reason
    result = build_leaderboard(tmp_path / "lb", out=tmp_path / "out", plugins=plugins)
    assert "metrics.drop\\_fss.mean is 0.01" in result.table.read_text()  # listed as rejected, never ranked


@pytest.mark.parametrize(("change", "message"), [
    (lambda r: r["metrics"]["drop_fss"].update(mean=3.2), "metrics.drop_fss.mean is 3.2; sessions.csv gives 3.025"),
    (lambda r: r["groups"]["gender"]["male"]["metrics"]["drop_fss"].update(n=3),
     "groups.gender.male.drop_fss.n is 3; sessions.csv has 2 values"),
    (lambda r: r["outcomes"]["steps"].update(ok=15), "outcomes.steps is {'ok': 15}; steps.csv counts {'ok': 16}"),
])
def test_a_figure_its_tables_contradict_is_refused(tmp_path, plugins, change, message):
    sub = _submit(tmp_path, plugins, editor="a", values=VALUES, sessions_table=True)
    rewrite_record(sub, change)
    assert message in _rejection(tmp_path)


def test_unverified_entries_are_ranked_after_verified_ones_and_say_so(tmp_path, plugins):
    better = _submit(tmp_path, plugins, editor="better", values=(1.0, 1.2, 1.1, 1.3))  # lower drop_fss: better
    worse = _submit(tmp_path, plugins, editor="worse", values=(5.0, 5.2, 5.1, 5.3))
    write_verification(Verification(worse.name, read_submission(worse).sha256, "verified", compared=7,
                                    verified_at="2026-01-01T00:00:00Z"), tmp_path / "lb" / "verifications")
    registry = {"drop_fss": SessionMetric("drop_fss", False, "%", "test", lambda s: None)}
    (view,) = build_views(collect_submissions(tmp_path / "lb").entries, registry)
    rows = view.sections[0].rows
    assert [(r.id.split("-")[0], r.cells[0].text, r.cells[2].text) for r in rows] == [
        ("worse", "1", "verified"), ("better", "2", "unverified")]
    assert rows[1].cells[0].sub == UNVERIFIED_RANK and not rows[0].cells[0].sub
    # the intervals' label does not claim one method for all (SC's is Wilson or bootstrap, not Student t)
    assert dict(view.details)["intervals"] == "95% confidence, by each metric's own method"
    assert better.name == rows[1].id


def test_ranks_say_only_what_the_table_holds(tmp_path, plugins):
    """No entry verified: an unverified rank does not claim to come after verified ones; one entry alone: no rank
    "1" (of 1), and the page says nothing is ranked."""
    _submit(tmp_path, plugins, editor="a", values=(1.0, 1.2, 1.1, 1.3))
    registry = {"drop_fss": SessionMetric("drop_fss", False, "%", "test", lambda s: None)}
    (alone,) = build_views(collect_submissions(tmp_path / "lb").entries, registry)
    (row,) = alone.sections[0].rows
    assert (row.cells[0].text, row.cells[0].sub) == ("–", NOTHING_TO_RANK_AGAINST) and not alone.sections[0].ranked
    page = build_leaderboard(tmp_path / "lb", plugins=plugins).page.read_text()
    assert "nothing: fewer than two entries have a drop_fss to compare" in page
    assert stylesheet() in page  # the look of every page the project writes (report.html's style.css)
    _submit(tmp_path, plugins, editor="b", values=(5.0, 5.2, 5.1, 5.3))
    (view,) = build_views(collect_submissions(tmp_path / "lb").entries, registry)
    assert [(r.cells[0].text, r.cells[0].sub) for r in view.sections[0].rows] == [("1", ""), ("2", "")]
    page = build_leaderboard(tmp_path / "lb", plugins=plugins).page.read_text()
    assert UNVERIFIED_RANK not in page and "ranked after every verified" not in page
    assert "fewer than two entries" not in page


def test_an_inconclusive_verification_leaves_the_entry_unverified_with_its_reason(tmp_path, plugins):
    sub = _submit(tmp_path, plugins, editor="a", values=VALUES)
    write_verification(Verification(sub.name, read_submission(sub).sha256, "inconclusive",
                                    reason="1 judged mean(s) not reproduced (first: metrics.sc.mean: ...)",
                                    verified_at="2026-01-01T00:00:00Z"), tmp_path / "lb" / "verifications")
    (entry,) = collect_submissions(tmp_path / "lb").entries
    assert entry.status == "unverified" and entry.status_note.startswith("re-scored 2026-01-01T00:00:00Z, inconclusive")


def test_an_entry_made_against_a_non_default_endpoint_says_so(tmp_path, plugins):
    sub = _submit(tmp_path, plugins, editor="a", values=VALUES)
    rewrite_record(sub, lambda r: r["editor"]["description"].update(base_url="http://user:secret@127.0.0.1:8123/v1"))
    _submit(tmp_path, plugins, editor="b", values=(1.0, 1.2, 1.1, 1.3))
    registry = {"drop_fss": SessionMetric("drop_fss", False, "%", "test", lambda s: None)}
    (view,) = build_views(collect_submissions(tmp_path / "lb").entries, registry)
    editors = {r.id.split("-")[0]: r.cells[1].sub for r in view.sections[0].rows}
    assert editors["a"].endswith(" · editor via 127.0.0.1:8123, not the provider's public host")
    assert "secret" not in editors["a"] and "endpoint" not in editors["b"] and "via" not in editors["b"]
    page = build_leaderboard(tmp_path / "lb", out=tmp_path / "out", plugins=plugins).table.read_text()
    assert "editor via 127.0.0.1:8123, not the provider's public host" in page


def test_an_unreadable_value_in_the_sessions_table_is_an_inconsistency(tmp_path, plugins):
    sub = _submit(tmp_path, plugins, editor="a", values=VALUES, sessions_table=True)
    table = (sub / "sessions.csv").read_text().replace(",3.9\n", ",three\n")
    (sub / "sessions.csv").write_text(table)
    rewrite_record(sub, lambda r: r["files"]["sessions_table"].update(
        sha256=hashlib.sha256(table.encode()).hexdigest(), bytes=len(table.encode())))
    assert "metrics.drop_fss: sessions.csv holds a value that is not a number" in _rejection(tmp_path)
