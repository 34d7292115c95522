"""``SectionContract``: the checks every report section must pass (served by :mod:`faceedit_bench.testing`).

Subclass it in the protocol package's tests and give a ``section`` fixture (the registered
:class:`~faceedit_bench.plugin.sections.ReportSection`) and a ``report_part`` fixture (its part of a report,
e.g. what its collector finished with after a run). To check the collector itself, also give ``sessions``
(session results to feed it) and, when the default does not activate it, ``section_run``::

    class TestMySection(SectionContract):
        @pytest.fixture
        def section(self):
            return MY_SECTION

        @pytest.fixture
        def report_part(self, my_run_report):
            return my_run_report["my_section"]
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

import pytest

from faceedit_bench.leaderboard.record_sections import bounded
from faceedit_bench.plugin.sections import ReportSection, SectionRun, settings_of
from faceedit_bench.report.console import render
from faceedit_bench.report.html_sections import section_pages
from faceedit_bench.report.report_schema import run_report_schema, section_part_schema

#: A tracker metric name every store takes unquoted: snake_case.
SAFE_NAME = re.compile(r"^[a-z0-9][a-z0-9_]*$")
WIDTHS = (60, 100)
WARNING_FIELDS = {"code", "what", "missing", "total", "share", "reasons", "message"}


def _optional(request: pytest.FixtureRequest, name: str) -> Any:
    try:
        return request.getfixturevalue(name)
    except pytest.FixtureLookupError:
        return None


class SectionContract:
    """Checks every report section must pass (module docstring)."""

    def test_is_a_section_with_a_valid_schema(self, section: Any) -> None:
        jsonschema = pytest.importorskip("jsonschema")
        assert isinstance(section, ReportSection)
        schema = run_report_schema([section])
        jsonschema.validators.validator_for(schema).check_schema(schema)

    def test_report_part_follows_the_schema(self, section: Any, report_part: Any) -> None:
        jsonschema = pytest.importorskip("jsonschema")
        assert json.loads(json.dumps(report_part, allow_nan=False)) == report_part  # plain JSON, no NaN
        jsonschema.validate(report_part, section_part_schema(section))

    def test_collector_finishes_what_the_schema_says(self, section: Any, request: pytest.FixtureRequest) -> None:
        sessions = _optional(request, "sessions")
        if section.collector is None or sessions is None:
            pytest.skip("no collector, or no sessions fixture to feed it")
        jsonschema = pytest.importorskip("jsonschema")
        run = _optional(request, "section_run") or SectionRun(judge_metrics={}, settings=settings_of(None, section))
        collector = section.collector(run)
        assert collector is not None, "the collector is not active for section_run: give a section_run fixture"
        for result in sessions:
            collector.add_session(result)
        part = collector.finish()
        if part is not None:
            jsonschema.validate(json.loads(json.dumps(part, allow_nan=False)), section_part_schema(section))

    def test_settings_have_defaults_and_compose(self, section: Any) -> None:
        if section.settings is None:
            pytest.skip("no settings")
        from omegaconf import OmegaConf

        defaults = section.settings()
        assert OmegaConf.to_object(OmegaConf.structured(section.settings)) == defaults

    def test_tracking_metrics_are_finite_floats_with_safe_names(self, section: Any, report_part: Any) -> None:
        if section.tracking is None:
            pytest.skip("no tracking")
        metrics = section.tracking(report_part)
        assert metrics, "the part gives no tracker metric"
        for name, value in metrics.items():
            assert SAFE_NAME.match(name), f"tracker metric {name!r}: use snake_case (letters, digits, _)"
            assert isinstance(value, float) and math.isfinite(value), f"{name}={value!r}: a finite float"

    def test_console_fits_the_width(self, section: Any, report_part: Any, request: pytest.FixtureRequest) -> None:
        if section.console is None:
            pytest.skip("no console lines")
        shown = (_optional(request, "report") or {section.name: report_part}) if section.console_reads_report \
            else report_part
        for width in WIDTHS:
            text = render(list(section.console(shown, width)), width)
            wide = [line for line in text.splitlines() if len(line) > width]
            assert not wide, f"at {width} columns these lines are wider: {wide[:3]}"

    def test_template_renders_escaped_with_its_anchor(self, section: Any, report_part: Any,
                                                      request: pytest.FixtureRequest) -> None:
        if section.html is None:
            pytest.skip("no page section")
        report = _optional(request, "report") or {section.name: report_part}
        page = {"display": str, "ci_label": "95% CI", "plot_error": None}
        (shown,) = section_pages(report, None, page, [section])
        assert f'id="{shown["anchor"]}"' in shown["html"], "the template's heading needs the section's anchor id"
        hostile = "<script>alert(1)</script>"
        broken = section_pages({**report, section.name: _with_text(report_part, hostile)}, None, page, [section])
        assert all(hostile not in s["html"] for s in broken), "a string reached the page unescaped"

    def test_warnings_are_report_warnings(self, section: Any, report_part: Any) -> None:
        if section.warnings is None:
            pytest.skip("no warnings")
        for w in section.warnings(report_part):
            assert w is None or WARNING_FIELDS <= set(w), f"a warning needs {sorted(WARNING_FIELDS)}: {w}"

    def test_record_is_bounded_json_its_views_read(self, section: Any, report_part: Any) -> None:
        if section.record is None:
            assert not [v for view in section.views for v in view.values if v.source == section.name], \
                "views read the section's record part, and it keeps none"
            return
        kept = section.record(report_part)
        assert kept is None or bounded(kept) == json.loads(json.dumps(kept)), "the record must be bounded JSON"
        for view in section.views:
            for value in view.values:
                if value.source == section.name and kept is not None:
                    found = value.read(bounded(kept))
                    assert found is None or isinstance(found.get("mean"), (int, float, type(None)))


def _with_text(value: Any, text: str) -> Any:
    """``value`` with every string replaced by ``text`` (keys kept): where a template shows a string."""
    if isinstance(value, str):
        return text
    if isinstance(value, Mapping):
        return {k: _with_text(v, text) for k, v in value.items()}
    if isinstance(value, list):
        return [_with_text(v, text) for v in value]
    return value
