"""The core's own report parts (cost, calls, performance, prompts, judge reliability) are report sections,
registered through the same hook as a plugin's, passing the same contract, read by a plugin's section through the
same ``SectionRun``; and the typed views of report parts follow the report's schema."""

from __future__ import annotations

import dataclasses
import json
import types
from typing import Any

import pytest

from faceedit_bench.api import hookimpl
from faceedit_bench.api.protocol import ReportSection, SectionRun
from faceedit_bench.plugin.launch import RunLaunch
from faceedit_bench.plugin.manager import load_plugins
from faceedit_bench.plugin.sections import SectionCollector
from faceedit_bench.report.part_views import CostPart, RunPart, cost_of, run_of
from faceedit_bench.report.report_schema import core_schema, section_part_schema
from faceedit_bench.testing import SectionContract
from tests.test_html_report import v11_report

CORE_PARTS = ("cost", "calls", "performance", "prompts", "judge_reliability")

LAUNCH = RunLaunch(
    stopped=None, edit_stage_s=2.0, score_stage_s=1.0, new_edits=8, peak_gpu_mem_bytes=None,
    calls={"gemini:default:GEMINI_API_KEY:m": {"calls": 9, "attempts": 10, "succeeded": 8, "gave_up": {"timeout": 1},
                                               "retries": {"rate_limited": 1}, "rate_wait_s": 0.5,
                                               "provider": "gemini", "roles": [{"role": "judge", "model": "m"}]}},
    spent_usd=0.25, budget_usd=1.0, cost_usd={"editor": None, "judge": 0.25},
    prices={"editor": {}, "judge": {"input_tokens": 1e-6}}, free=("editor",), faces_seen=2, dataset_faces=10,
    prompts={"sc": {"name": "viescore_tie", "version": "1", "hash": "ee" * 32}},
    judge_reliability={"anchors": [], "passed": 0, "failed": 0, "asked_now": True, "drift": []})


def core_sections() -> dict[str, ReportSection]:
    return {s.name: s for s in load_plugins(entry_points=False).sections() if s.name in CORE_PARTS}


def full_report() -> dict[str, Any]:
    report = v11_report()
    report["performance"] = {"edit_stage_s": 2.0, "score_stage_s": 1.0, "new_edits": 8, "edits_per_s": 4.0,
                             "peak_gpu_mem_bytes": None}
    return report


def test_the_core_parts_are_sections_registered_through_the_plugin_hook() -> None:
    plugins = load_plugins(entry_points=False)
    sections = core_sections()
    assert set(sections) == set(CORE_PARTS)
    for name, section in sections.items():
        assert type(section) is ReportSection  # the plugin's own class, nothing of the core's beside it
        registration = plugins.registry.get("sections", name)
        assert registration.provider == "faceedit_bench.builtin.report_parts"  # a builtin plugin, like any other
        assert plugins.pm.get_plugin(registration.provider).faceedit_register_sections is not None


class TestCoreSectionsPassTheSectionContract(SectionContract):
    """Every check a third party's section must pass, on each core part."""

    @pytest.fixture(params=CORE_PARTS)
    def section(self, request: pytest.FixtureRequest) -> ReportSection:
        return core_sections()[request.param]

    @pytest.fixture
    def report(self) -> dict[str, Any]:
        return full_report()

    @pytest.fixture
    def report_part(self, section: ReportSection, report: dict[str, Any]) -> Any:
        return report[section.name]

    @pytest.fixture
    def sessions(self) -> list[Any]:
        return []  # a launch's sections count no session: they finish with what the launch did

    @pytest.fixture
    def section_run(self) -> SectionRun:
        return SectionRun(judge_metrics={}, judged=True, launch=lambda: LAUNCH)


@pytest.mark.parametrize("name", CORE_PARTS)
def test_a_core_collector_finishes_with_the_launch_and_without_one_gives_nothing(name: str) -> None:
    import jsonschema

    section = core_sections()[name]
    collector = section.collector(SectionRun(judge_metrics={}, judged=True, launch=lambda: LAUNCH))
    assert isinstance(collector, SectionCollector)
    part = collector.finish()
    jsonschema.validate(part, section_part_schema(section))
    assert section.collector(SectionRun(judge_metrics={}, judged=True)).finish() is None  # no launch behind it
    if name in ("prompts", "judge_reliability"):  # the judge's: not in a run without one
        assert section.collector(SectionRun(judge_metrics={}, judged=False, launch=lambda: LAUNCH)) is None


def test_the_cost_part_is_estimated_from_the_launch() -> None:
    part = core_sections()["cost"].collector(SectionRun(judge_metrics={}, launch=lambda: LAUNCH)).finish()
    # priced: the judge only; projected from 2 faces to the dataset's 10
    assert part["estimated_usd"] == 0.25 and part["per_face_usd"] == 0.125 and part["projected_dataset_usd"] == 1.25
    assert part["new_usd"] == 0.25 and part["free"] == ["editor"] and part["stopped_by_budget"] is False


def launch_echo_plugin() -> types.ModuleType:
    """A third party's section that reads what the launch did, as the core's sections do."""

    class Echo:
        def __init__(self, run: SectionRun) -> None:
            self.run = run

        def add_session(self, result: Any) -> None:
            pass

        def finish(self) -> dict[str, Any] | None:
            launch = self.run.launch()
            return None if launch is None else {"new_edits": launch.new_edits, "spent_usd": launch.spent_usd}

    echo = ReportSection(name="launch_echo", title="Launch echo", schema={"type": "object"}, collector=Echo,
                         needs_judge=False)
    module = types.ModuleType("launch_echo_plugin")
    module.faceedit_register_sections = hookimpl(lambda register: register("launch_echo", echo))
    return module


@pytest.mark.slow(seconds=20)
def test_a_plugin_section_reads_the_launch_the_core_sections_report(plugins, compose, synthetic) -> None:
    from faceedit_bench.run.experiment import build_experiment, run_experiment

    plugins.add(launch_echo_plugin(), name="launch_echo_plugin", distribution="faceedit-bench-echo")
    cfg = compose(*synthetic, "testset=pose", "editor=noise", "run.max_faces=1", "run.max_sessions=1",
                  "analysis.n_resamples=99")
    report = run_experiment(build_experiment(cfg, plugins), plugins)
    assert report["performance"]["new_edits"] > 0
    assert report["launch_echo"] == {"new_edits": report["performance"]["new_edits"],
                                     "spent_usd": report["cost"]["new_usd"]}
    assert report["calls"] == {} and "prompts" not in report and "judge_reliability" not in report  # no judge


def test_part_views_have_the_fields_their_schema_declares() -> None:
    cost_schema = section_part_schema(core_sections()["cost"])
    assert [f.name for f in dataclasses.fields(CostPart)] == list(cost_schema["properties"])
    assert [f.name for f in dataclasses.fields(RunPart)] == list(core_schema()["properties"]["run"]["properties"])
    report = json.loads(json.dumps(full_report()))
    assert cost_of(report).estimated_usd == 1.2345 and cost_of(report).by_component["judge"] == 0.2345
    assert run_of(report).wall_time_s == 12.5 and run_of(report).re_reported is None  # an older report lacks it
    assert cost_of({}) == CostPart() and cost_of({}).stopped_by_budget is None  # no cost part at all
    with pytest.raises(dataclasses.FrozenInstanceError):
        cost_of(report).estimated_usd = 0.0  # type: ignore[misc]


def test_reports_written_before_the_parts_were_sections_still_compare() -> None:
    import jsonschema

    from faceedit_bench.report.compared_runs import report_shape

    older = full_report()
    older["judge_reliability"] = None  # anchors not checked, in a report from before
    jsonschema.validate(older, report_shape())
    older["cost"] = ["not", "a", "mapping"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(older, report_shape())  # the shape check still reads the core parts' schemas
