"""The eyewear section passes faceedit_bench's contract for report sections (SectionContract): schema valid,
parts valid against it, settings compose, MLflow metrics finite with safe names, console within the width,
template escaped with its anchor, warnings well formed, leaderboard record bounded."""

import pytest
from faceedit_bench_eyewear.section import EYEWEAR

from faceedit_bench.api.testing import SectionContract

RATED = {"label": "eyewear", "min_share": 0.5, "sessions": 4, "left_out": {"no usable answer": 1},
         "rate": {"rule": ">= 0.5", "n": 3, "count": 2, "rate": 2 / 3, "ci_low": 0.2077, "ci_high": 0.9385},
         "measures": {"glasses_sessions": {"label": "Sessions with glasses", "higher_is_better": False}}}
# Nothing judged: the rate is undefined (None), never 0, and the sessions are counted as left out.
UNRATED = {**RATED, "sessions": 2, "left_out": {"not judged": 2},
           "rate": {"rule": ">= 0.5", "n": 0, "count": 0, "rate": None, "ci_low": None, "ci_high": None}}


class TestEyewearSection(SectionContract):
    @pytest.fixture
    def section(self):
        return EYEWEAR

    @pytest.fixture(params=[RATED, UNRATED], ids=["rated", "unrated"])
    def report_part(self, request):
        return request.param


def test_a_run_without_the_glasses_metric_has_no_eyewear_part():
    from faceedit_bench.api.sections import SectionRun

    assert EYEWEAR.collector(SectionRun(judge_metrics={"sc": object()})) is None
