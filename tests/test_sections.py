"""The report-section interface: a section registered by a plugin (tests/section_plugin.py, public API only)
appears in report.json with its schema validated, in report.html with its nav entry, in the console, in MLflow
(a real sqlite store) and in a leaderboard view; its settings compose at analysis.<name>; the builtin sections
and the plugin's pass SectionContract; and the generic modules name no paper."""

from __future__ import annotations

import ast
import dataclasses
import json
import re
from pathlib import Path
from types import SimpleNamespace

import jsonschema
import pytest

from faceedit_bench.errors import ConfigError
from faceedit_bench.plugin.manager import using_sections
from faceedit_bench.plugin.sections import ReportSection, SectionRun, ValueSpec, ViewSpec
from faceedit_bench.records import Outcome
from faceedit_bench.report.report_schema import run_report_schema
from faceedit_bench.run.experiment import build_experiment, run_experiment
from faceedit_bench.testing import SectionContract
from tests import section_plugin

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def with_tally(plugins):
    from faceedit_bench.run.hydra_app import register_configs

    plugins.add(section_plugin, name="tally_protocol", distribution="faceedit-bench-tally")
    register_configs(plugins)  # the schema now has analysis.tally
    return plugins


def test_a_plugin_section_goes_through_a_run_into_every_output(with_tally, compose, synthetic, tmp_path, capsys):
    from mlflow.tracking import MlflowClient

    from faceedit_bench.leaderboard.entries import collect_submissions
    from faceedit_bench.leaderboard.submit import submit
    from faceedit_bench.leaderboard.views import build_views
    from faceedit_bench.report.summary import format_summary

    cfg = compose(*synthetic, "testset=pose", "editor=noise", "run.max_sessions=2", "tracking=mlflow",
                  "analysis.n_resamples=99", "analysis.tally.label=hats")
    report = run_experiment(build_experiment(cfg, with_tally), with_tally)
    printed = capsys.readouterr().out
    part = report["tally"]
    assert part["label"] == "hats" and part["sessions"] == report["counts"]["sessions"]["planned"]
    assert part["steps"] == report["counts"]["steps"]  # every session reached the collector
    jsonschema.validate(report, run_report_schema(with_tally.sections()))
    assert report["measures"]["ok_share"]["section"] == "tally"  # stated inline, read like any measure
    # the console: the section's table, within the summary
    assert "hats: 8 sessions" in printed or "hats:" in printed
    (run_dir,) = (Path(cfg.run.workspace) / "runs").glob("noise-*")
    page = (run_dir / "report.html").read_text()
    assert '<a href="#tally">tally</a>' in page and '<h2 id="tally">hats: step outcomes</h2>' in page
    # MLflow, a real sqlite store: the section's metrics beside the core's
    client = MlflowClient(tracking_uri=f"sqlite:///{Path(cfg.run.workspace) / 'mlflow.db'}")
    (tracked,) = client.search_runs([client.get_experiment_by_name("faceedit/pose").experiment_id])
    assert tracked.data.metrics["tally_steps_ok"] == part["steps"]["ok"]
    assert tracked.data.metrics["tally_ok_share"] == pytest.approx(part["ok_rate"]["rate"])
    # the leaderboard: the record keeps the section's part, and its view ranks by it
    with using_sections(with_tally.sections()):
        submit(str(run_dir), out=tmp_path / "lb" / "submissions", plugins=with_tally)
        (entry,) = collect_submissions(tmp_path / "lb").entries
        assert entry.record["tally"] == {"ok_rate": part["ok_rate"]}
        (view,) = build_views([entry], {})
        (tally,) = [s for s in view.sections if s.contrast == "tally"]
        assert tally.rank_by == "OK share" and tally.columns[3].title == "OK share (share)"
        assert tally.rows[0].cells[3].text.startswith(f"{part['ok_rate']['rate']:.3f}")
        assert "hats" in format_summary(report, run_dir, width=100)


def test_section_settings_compose_and_an_unknown_key_is_refused_with_the_closest(with_tally, compose, synthetic):
    cfg = compose(*synthetic, "testset=pose", "analysis.tally.per_row=2")
    assert build_experiment(cfg, with_tally).conf.analysis.tally.per_row == 2
    with pytest.raises(ConfigError, match=r"analysis\.tally\.lable is unknown \(did you mean analysis\.tally\.label"):
        build_experiment(compose(*synthetic, "testset=pose", "+analysis.tally.lable=x"), with_tally)
    with pytest.raises(ConfigError, match="analysis.tally.per_row=0"):
        build_experiment(compose(*synthetic, "testset=pose", "analysis.tally.per_row=0"), with_tally)


def test_a_report_part_no_installed_section_claims_is_left_out_never_a_crash(tmp_path):
    from faceedit_bench.report.html import render_html_report
    from faceedit_bench.report.run_report import metrics_for_tracking
    from faceedit_bench.report.summary import format_summary
    from tests.test_html_report import v11_report

    report = {**v11_report(), "tally": {"label": "from elsewhere", "sessions": 1, "steps": {"ok": 1}}}
    with using_sections(()):  # an installation without the plugin that wrote it
        assert "from elsewhere" not in render_html_report(report)
        assert not any(k.startswith("tally") for k in metrics_for_tracking(report))
        assert "from elsewhere" not in format_summary(report, tmp_path, width=100)


@dataclasses.dataclass
class NoDefault:
    a: int


def test_a_section_is_checked_when_it_is_declared():
    with pytest.raises(ValueError, match="run report's own key"):
        ReportSection("metrics", "x", {"type": "object"})
    with pytest.raises(ValueError, match="lowercase"):
        ReportSection("Tally", "x", {"type": "object"})
    with pytest.raises(ValueError, match="need a default"):
        ReportSection("t", "x", {"type": "object"}, settings=NoDefault)
    with pytest.raises(ValueError, match="another section"):
        ReportSection("t", "x", {"type": "object"}, views=(ViewSpec("v", "v", "v", (ValueSpec("a", "u", read=dict),),
                                                                    rank_by="a"),))


def test_two_plugins_registering_one_section_name_is_a_clash(plugins):
    from faceedit_bench.errors import ClashError
    from faceedit_bench.plugin.manager import PluginLoadWarning
    from tests.test_plugins import make_module

    plugins.add(section_plugin, name="one")
    with pytest.warns(PluginLoadWarning, match="report section 'tally' is registered by several plugins"):
        plugins.add(make_module("two", faceedit_register_sections=lambda register: register(
            "tally", section_plugin.TALLY)), name="two")
    with pytest.raises(ClashError, match="one, two"):
        plugins.sections()


# -- SectionContract, run against the test plugin's section and the builtin ones ------------------------------


def _results(*outcomes: list[str]) -> list[SimpleNamespace]:
    return [SimpleNamespace(steps=[SimpleNamespace(outcome=Outcome(o)) for o in steps]) for steps in outcomes]


class TestTallySection(SectionContract):
    @pytest.fixture
    def section(self):
        return section_plugin.TALLY

    @pytest.fixture
    def sessions(self):
        return _results(["ok", "ok"], ["refused", "ok"], ["no_image"])

    @pytest.fixture
    def section_run(self):
        return SectionRun(judge_metrics={}, settings=section_plugin.TallySettings())

    @pytest.fixture
    def report_part(self, section, sessions, section_run):
        collector = section.collector(section_run)
        for result in sessions:
            collector.add_session(result)
        return collector.finish()


class TestOvereditingSection(SectionContract):
    @pytest.fixture
    def section(self):
        from faceedit_bench.report.overediting_section import OVEREDITING

        return OVEREDITING

    @pytest.fixture
    def report_part(self):
        from faceedit_bench.scoring.judge.standard import OvereditCollector

        return OvereditCollector().finish()




# -- no paper in the generic modules -------------------------------------------------------------------------

#: The generic modules this step made loop over registered sections (issue 22 §1): they name no paper.
GENERIC = ("report/run_report.py", "report/html.py", "report/summary.py", "report/summary_tables.py",
           "analysis/aggregate.py", "report/read_first.py", "report/html_sections.py", "report/report_schema.py",
           "leaderboard/record_sections.py", "leaderboard/named_views.py",
           "leaderboard/reproduction.py", "leaderboard/references.py", "leaderboard/schema.py",
           "plugin/sections.py", "run/section_settings.py", "report/templates/report.html.j2", "report/headline.py",
           "report/templates/macros.html.j2", "report/templates/style.css")
PAPER = re.compile(r"audit|creval|winobias|paper_b|rubric|human", re.IGNORECASE)


@pytest.mark.parametrize("module", GENERIC)
def test_the_generic_modules_name_no_paper(module):
    path = ROOT / "faceedit_bench" / module
    text = path.read_text()
    if path.suffix == ".py":  # its code and docstrings, as written
        ast.parse(text)
    found = sorted({m.group(0).lower() for m in PAPER.finditer(text)})
    assert not found, f"{module} names {found}: loop over the registered sections instead"


def test_the_builtin_sections_schemas_merge_into_one_valid_schema():
    from faceedit_bench.plugin.manager import load_plugins

    schema = run_report_schema(load_plugins(entry_points=False).sections())
    jsonschema.validators.validator_for(schema).check_schema(schema)
    assert {"overediting"} <= set(schema["properties"])
    json.dumps(schema)
