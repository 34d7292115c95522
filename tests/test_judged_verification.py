"""Judged metrics are verified as distributions (issue 37 item 9): a re-scoring by a judge that varies from
call to call reproduces an honest submission, and catches a mean shifted by 5 points.

The simulation goes through the functions ``verify`` uses (sessions.csv parsed, judged means compared, the
verdict), with :class:`tests.fakes.answers.VariedJudge`: 16 identities (8 per group), 5 sessions each, 4 judged
steps per session; a step's answer moves by one point in 30% of the asks.
"""

from __future__ import annotations

import csv
import io
import math

import numpy as np
import pytest

from faceedit_bench.leaderboard.errors import SubmissionRejected
from faceedit_bench.leaderboard.judged_comparison import (
    SessionTable,
    clustered_interval,
    failures,
    judged_differences,
    verdict,
)
from faceedit_bench.leaderboard.tolerances import JUDGE_TOLERANCE
from tests.fakes.answers import VariedJudge

IDENTITIES, SESSIONS, STEPS = 16, 5, 4
RESCORINGS = 200


def steady_scores(seed: int = 0) -> dict[tuple[str, str], list[int]]:
    """What a perfectly steady judge would answer for every step: a face effect plus a session effect."""
    rng = np.random.default_rng(seed)
    out = {}
    for i in range(IDENTITIES):
        face = rng.integers(3, 8)
        for s in range(SESSIONS):
            out[(f"face-{i:02d}", f"s{s}")] = [int(np.clip(face + rng.integers(-2, 3), 0, 10)) for _ in range(STEPS)]
    return out


def judged_run(steady: dict[tuple[str, str], list[int]], judge: VariedJudge, shift: float = 0.0) -> bytes:
    """The sessions.csv of one run judged by ``judge`` (SC x100 = 100 * mean of the step answers / 10)."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, ["face_id", "identity", "session_id", "condition", "excluded", "gender", "sc"])
    writer.writeheader()
    for (face, session), scores in steady.items():
        sc = 10.0 * sum(judge.score(v) for v in scores) / len(scores) + shift
        writer.writerow({"face_id": face, "identity": face, "session_id": session, "condition": "baseline",
                         "excluded": "", "gender": "female" if int(face[-2:]) % 2 else "male", "sc": f"{sc:.6g}"})
    return buf.getvalue().encode()


def record_of(table: bytes) -> dict:
    """The figures a report states for this table (the means verification compares)."""
    parsed = SessionTable.parse(table, ["sc"])
    values = parsed.values["sc"]

    def summary(keys):
        return {"n": len(keys), "mean": float(np.mean([values[k] for k in keys]))}

    groups = {label: {"metrics": {"sc": summary(parsed.group("gender", label) & values.keys())}}
              for label in ("female", "male")}
    return {"metrics": {"sc": summary(list(values))}, "groups": {"gender": groups}}


def rescorings_that_fail(shift: float, paired: bool = True) -> tuple[int, list]:
    steady = steady_scores()
    submitted = judged_run(steady, VariedJudge(seed=1), shift)
    record, table = record_of(submitted), SessionTable.parse(submitted, ["sc"]) if paired else None
    failed, last = 0, []
    for seed in range(100, 100 + RESCORINGS):
        rescored = SessionTable.parse(judged_run(steady, VariedJudge(seed=seed)), ["sc"])
        last = judged_differences(record, {"sc": JUDGE_TOLERANCE}, rescored, table)
        failed += bool(failures(last))
    return failed, last


def test_an_honest_submission_verifies_in_at_least_95_percent_of_rescorings():
    failed, differences = rescorings_that_fail(shift=0.0)
    assert failed <= 0.05 * RESCORINGS, f"{failed} of {RESCORINGS} honest re-scorings failed"
    overall = differences[0]
    assert overall.field == "metrics.sc.mean" and overall.n_identities == IDENTITIES
    assert overall.n_sessions == IDENTITIES * SESSIONS and overall.method.startswith("paired")
    assert {d.field for d in differences} == {"metrics.sc.mean", "groups.gender.female.sc.mean",
                                              "groups.gender.male.sc.mean"}


def test_a_mean_shifted_by_5_points_fails():
    failed, differences = rescorings_that_fail(shift=5.0)
    assert failed == RESCORINGS
    overall = differences[0]
    assert overall.verdict == "differs" and overall.ci_low > JUDGE_TOLERANCE
    sentence = overall.sentence()
    assert sentence.startswith("metrics.sc.mean: submitted - re-scored = +") and sentence.endswith("differs")


def test_without_a_submitted_sessions_table_judged_means_are_inconclusive():
    steady = steady_scores()
    run = judged_run(steady, VariedJudge(seed=1))
    differences = judged_differences(record_of(run), {"sc": JUDGE_TOLERANCE}, SessionTable.parse(run, ["sc"]), None)
    assert {d.verdict for d in differences} == {"inconclusive"}
    assert "no sessions.csv" in differences[0].sentence()


def test_a_sessions_table_with_a_non_number_is_refused():
    table = judged_run(steady_scores(), VariedJudge(seed=1)).replace(b",male,", b",male,nan", 1)
    with pytest.raises(SubmissionRejected, match="sessions.csv: sc of face-.* is 'nan.*', not a finite number"):
        SessionTable.parse(table, ["sc"])


def test_the_interval_is_clustered_by_identity():
    # Two identities whose sessions move together: the interval has G - 1 = 1 degree of freedom, far wider
    # than 8 independent sessions would give.
    mean, low, high, g = clustered_interval([1, 1, 1, 1, -1, -1, -1, -0.5], list("aaaabbbb"))
    assert g == 2 and mean == pytest.approx(0.0625) and high - low > 10
    assert clustered_interval([0.0, 0.0], ["a", "a"])[1:3] == (0.0, 0.0)  # a judge that answered the same
    assert math.isinf(clustered_interval([0.0, 1.0], ["a", "a"])[2])  # one identity: nothing to tell from
    assert [verdict(-1, 1, 2.5), verdict(3, 6, 2.5), verdict(1, 4, 2.5)] == ["reproduced", "differs", "inconclusive"]


def test_sessions_left_out_of_a_submission_make_its_judged_mean_inconclusive():
    # A tamperer blanks the lowest-scored sessions' values: every remaining pair agrees, the mean rises.
    steady = steady_scores()
    rows = list(csv.DictReader(io.StringIO(judged_run(steady, VariedJudge(seed=1)).decode())))
    for row in sorted(rows, key=lambda r: float(r["sc"]))[:8]:
        row["sc"] = ""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    tampered = buf.getvalue().encode()
    rescored = SessionTable.parse(judged_run(steady, VariedJudge(seed=2)), ["sc"])
    overall = judged_differences(record_of(tampered), {"sc": JUDGE_TOLERANCE}, rescored,
                                 SessionTable.parse(tampered, ["sc"]))[0]
    assert overall.verdict == "inconclusive" and overall.unpaired == 8 and failures([overall])
    assert "8 session(s) have a value in only one of the submitted and re-scored tables" in overall.sentence()
    assert "re-scored only" in overall.sentence()
