"""Every reference image the dataset lists is accounted for in report.json (issue 20 item 15): a face keeps
the references it can be measured against, and each one left out is counted by reason, like every other
exclusion, never only logged."""

from __future__ import annotations

from pathlib import Path

from faceedit_bench.report.run_report import metrics_for_tracking
from faceedit_bench.run.experiment import build_experiment, run_experiment


def test_unusable_references_are_counted_by_reason(plugins, compose, synthetic):
    cfg = compose(*synthetic, "testset=pose", "run.max_sessions=1", "+dataset.params.spoilt_references=2",
                  "+dataset.params.bad_reference=1", "+dataset.params.blank=1")
    report = run_experiment(build_experiment(cfg, plugins), plugins)
    # faces 0 and 1 list a good, an unreadable and a faceless reference: measured against the good one
    assert report["counts"]["faces"]["excluded"] == {"no_face_in_base": 1, "no_readable_reference": 1}
    assert report["counts"]["sessions"]["included"] == 4
    references = report["counts"]["references"]
    # 4 good faces (2 of them with 3 references), the faceless base's good one, the unreadable one's
    assert references == {"listed": 4 + 2 * 2 + 1 + 1, "used": 4, "of_excluded_faces": 1,
                          "ignored": {"invalid_reference_image": 2 + 1, "no_face_in_reference": 2}}
    assert references["listed"] == references["used"] + references["of_excluded_faces"] + sum(
        references["ignored"].values())
    tracked = metrics_for_tracking(report)
    assert tracked["references_ignored_no_face_in_reference"] == 2 and tracked["references_used"] == 4
    (page,) = Path(cfg.run.workspace, "runs").glob("*/report.html")
    assert "ignored: no_face_in_reference" in page.read_text()
