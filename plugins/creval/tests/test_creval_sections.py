"""The CREval report sections pass the section contract (faceedit_bench.testing.SectionContract) and merge
into the run report's schema once the package is installed."""

from __future__ import annotations

import json

import jsonschema
import pytest
from faceedit_bench_creval.collector import creval_section
from faceedit_bench_creval.section import CREVAL, CREVAL_FACE
from test_creval import ONE_FAILED, judge_item

from faceedit_bench.api.testing import SectionContract
from faceedit_bench.testing import run_report_schema


def _part(metric: str, extension: bool) -> dict:
    judged = [*judge_item(ONE_FAILED, "zero").detail]
    return json.loads(json.dumps(creval_section(judged, metric=metric, extension=extension, on_failure="zero")))


class TestCrevalSection(SectionContract):
    @pytest.fixture
    def section(self):
        return CREVAL

    @pytest.fixture
    def report_part(self):
        return _part("creval", extension=False)


class TestCrevalFaceSection(SectionContract):
    @pytest.fixture
    def section(self):
        return CREVAL_FACE

    @pytest.fixture
    def report_part(self):
        return _part("creval_face", extension=True)


def test_the_installed_sections_merge_into_the_run_report_schema(plugins):
    schema = run_report_schema(plugins.sections())
    jsonschema.validators.validator_for(schema).check_schema(schema)
    assert {"creval", "creval_face"} <= set(schema["properties"])
