"""The paper (b) sections pass SectionContract, and their schemas merge with the installed ones."""

from __future__ import annotations

import json

import jsonschema
import pytest

from faceedit_bench.api import Outcome
from faceedit_bench.api.testing import SectionContract
from faceedit_bench.testing import run_report_schema


class TestWinoBiasSection(SectionContract):
    @pytest.fixture
    def section(self):
        from faceedit_bench_audit.winobias.section import WINOBIAS

        return WINOBIAS

    @pytest.fixture
    def report_part(self):
        from faceedit_bench_audit.winobias.adherence import WinoBiasCollector

        collector = WinoBiasCollector()
        collector.answers["male"].update(stereotyped=8, anti_stereotyped=2, ambiguous=1)
        collector.answers["female"].update(stereotyped=6, anti_stereotyped=4)
        collector.unjudged["female"]["step_unsupported"] = 3
        return collector.finish()


class TestAuditSection(SectionContract):
    @pytest.fixture
    def section(self):
        from faceedit_bench_audit.audit.section import AUDIT

        return AUDIT

    @pytest.fixture
    def report_part(self):
        """Four panel-judged edits of two races (test_rubric_metric.py's sensitivity case)."""
        from faceedit_bench_audit.audit.items import AuditCollector
        from faceedit_bench_audit.audit.rubric import RUBRIC_METRIC, RUBRIC_TEMPLATE
        from faceedit_bench_audit.audit.settings import AuditConf
        from faceedit_bench_audit.audit.tables import audit_section
        from test_rubric_metric import answer, face, member, session

        from faceedit_bench.api import SessionResult
        from faceedit_bench.testing import JudgedSession, PanelRule, StepState, combine_panel

        rule = PanelRule("tolerance", ("gemini", "gpt"), "gemini")
        collector = AuditCollector(("race",))
        for n, race in enumerate(("White", "White", "Indian", "Indian")):
            members = {"gemini": member(answer(edit_success=2 + n % 2, race_change=2)),
                       "gpt": member(answer(edit_success=3, race_change=3 if n else 2))}
            s = session("O-01", "an executive")
            (question,) = RUBRIC_METRIC.questions(["src", "out"], s, face=face(race=race))
            judged = JudgedSession({"rubric": RUBRIC_METRIC.judge([question], [combine_panel(RUBRIC_TEMPLATE, members,
                                                                                         rule)], s)})
            state = StepState(1, Outcome.OK, "", f"in{n}", f"out{n}", False)
            collector.add(SessionResult(face(race=race), s, [state], None, image_hashes=("src", "out"), judged=judged))
        return json.loads(json.dumps(audit_section(collector, AuditConf(), n_resamples=99)))


def test_the_installed_sections_schemas_merge_into_one_valid_schema():
    from faceedit_bench.testing import load_plugins

    schema = run_report_schema(load_plugins().sections())
    jsonschema.validators.validator_for(schema).check_schema(schema)
    assert {"audit", "winobias", "winobias_human", "human_agreement"} <= set(schema["properties"])
