"""Helpers for testing faceedit_bench and its plugins: a contract mixin for every component kind.

``EditorContract`` is a pytest mixin every editor plugin can run::

    class TestMyEditor(EditorContract):
        @pytest.fixture
        def editor(self):
            return MyEditor(...)

The others do the same for their kind, each with its fixture: ``EmbedderContract`` (``embedder``),
``FaceDetectorContract`` (``detector``), ``JudgeContract`` (``judge``), ``DatasetContract`` (``dataset``),
``TestSetLoaderContract`` (``loader``), ``QuestionSetLoaderContract`` (``loader``, ``source``),
``TrackerContract`` (``tracker``), ``ImageMetricContract`` (``metric``), ``SectionContract`` (``section``, ``report_part``) for a protocol's report section. ``PluginDistributionContract`` checks a plugin distribution's
packaging (wheel, entry point, config entry). ``PixelEmbedder`` is a fast stand-in embedder for engine tests that
need no face model; it is not a face recognizer and is never registered as a plugin. ``skip_without_cuda()``,
called in a test or fixture, skips a test that needs a CUDA device. Everything here needs pytest; plugins
import these names from ``faceedit_bench.api.testing`` (their public home) or from here.

A plugin's tests import the core only through ``faceedit_bench.api`` and this package, which also serves what
they need to drive a component as a run does (:mod:`faceedit_bench.testing.harness`): ``load_plugins``,
``Plugins``, ``Registry``, ``hook_manager``, ``Executor``, ``JudgeService`` with ``SC_TEMPLATE`` and
``STATE_TEMPLATE``, ``compose_config`` and ``register_configs`` (Hydra's composition), ``build_run``,
``run_built`` and ``run_config`` (a run's config checked, and a whole run), ``run_cli`` (the ``faceedit-bench``
command in-process), ``summary_text`` and ``html_report`` (what a run prints and writes), ``RunStopped``; and,
for a protocol package's tests, the pipeline's pieces they build by hand (:mod:`faceedit_bench.testing.pipeline`).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    # What plugins' tests check and no plugin's code needs (so not in faceedit_bench.api): a report read back, the
    # failures and costs a component's calls are recorded with.
    from faceedit_bench.execution.call_errors import GaveUp
    from faceedit_bench.execution.cost import cost_usd
    from faceedit_bench.execution.secrets import MissingSecretError
    from faceedit_bench.plugin.payloads import ComponentInfo
    from faceedit_bench.report.console import render as render_console
    from faceedit_bench.report.html_file import write_html_report
    from faceedit_bench.report.report_schema import run_report_schema
    from faceedit_bench.report.run_report import metrics_for_tracking, results_digest
    from faceedit_bench.scoring.judge.declared import MetricJudgment
    from faceedit_bench.scoring.judge.service import ParseFailure, parse_answer
    from faceedit_bench.testing.components import (
        EditorContract,
        EmbedderContract,
        FaceDetectorContract,
        JudgeContract,
    )
    from faceedit_bench.testing.data import DatasetContract, QuestionSetLoaderContract, TestSetLoaderContract
    from faceedit_bench.testing.distribution import PluginDistributionContract
    from faceedit_bench.testing.harness import (
        SC_TEMPLATE,
        STATE_TEMPLATE,
        Executor,
        JudgeService,
        Plugins,
        Registry,
        RunStopped,
        build_run,
        compose_config,
        hook_manager,
        html_report,
        load_plugins,
        register_configs,
        run_built,
        run_cli,
        run_config,
        summary_text,
        using_plugins,
    )
    from faceedit_bench.testing.helpers import PixelEmbedder, gradient_image, skip_without_cuda
    from faceedit_bench.testing.image_metrics import ImageMetricContract
    from faceedit_bench.testing.pipeline import (
        Executors,
        ImageStore,
        InputResolver,
        JudgedSession,
        Ledger,
        PanelRule,
        StepState,
        TestSetError,
        build_conditions,
        build_views,
        check_conditions,
        collect_submissions,
        combine_panel,
        find_published,
        join_condition,
        kendall_lines,
        metric_ranks,
        pairwise_accuracy,
        submit_run,
        system_agreement,
        worst_groups,
    )
    from faceedit_bench.testing.sections import SectionContract
    from faceedit_bench.testing.tracking import TrackerContract, end_run

#: Each name and the module that holds it. A name is imported on first use: a process that loads the test
#: plugin (tests/fake_plugin.py) imports only what it touches, not pytest, SciPy and the leaderboard with it.
_HOMES: dict[str, str] = {
    "GaveUp": "faceedit_bench.execution.call_errors",
    "cost_usd": "faceedit_bench.execution.cost",
    "MissingSecretError": "faceedit_bench.execution.secrets",
    "ComponentInfo": "faceedit_bench.plugin.payloads",
    "write_html_report": "faceedit_bench.report.html_file",
    "run_report_schema": "faceedit_bench.report.report_schema",
    **dict.fromkeys(("metrics_for_tracking", "results_digest"), "faceedit_bench.report.run_report"),
    "MetricJudgment": "faceedit_bench.scoring.judge.declared",
    **dict.fromkeys(("ParseFailure", "parse_answer"), "faceedit_bench.scoring.judge.service"),
    **dict.fromkeys(
        ("EditorContract", "EmbedderContract", "FaceDetectorContract", "JudgeContract"),
        "faceedit_bench.testing.components",
    ),
    **dict.fromkeys(
        ("DatasetContract", "QuestionSetLoaderContract", "TestSetLoaderContract"), "faceedit_bench.testing.data"
    ),
    "PluginDistributionContract": "faceedit_bench.testing.distribution",
    **dict.fromkeys(
        (
            "Executor",
            "JudgeService",
            "Plugins",
            "Registry",
            "RunStopped",
            "SC_TEMPLATE",
            "STATE_TEMPLATE",
            "build_run",
            "compose_config",
            "hook_manager",
            "html_report",
            "load_plugins",
            "register_configs",
            "run_built",
            "run_cli",
            "run_config",
            "summary_text",
            "using_plugins",
        ),
        "faceedit_bench.testing.harness",
    ),
    **dict.fromkeys(("PixelEmbedder", "gradient_image", "skip_without_cuda"), "faceedit_bench.testing.helpers"),
    "ImageMetricContract": "faceedit_bench.testing.image_metrics",
    **dict.fromkeys(
        (
            "Executors",
            "ImageStore",
            "InputResolver",
            "JudgedSession",
            "Ledger",
            "PanelRule",
            "StepState",
            "TestSetError",
            "build_conditions",
            "build_views",
            "check_conditions",
            "collect_submissions",
            "combine_panel",
            "find_published",
            "join_condition",
            "kendall_lines",
            "metric_ranks",
            "pairwise_accuracy",
            "submit_run",
            "system_agreement",
            "worst_groups",
        ),
        "faceedit_bench.testing.pipeline",
    ),
    "SectionContract": "faceedit_bench.testing.sections",
    **dict.fromkeys(("TrackerContract", "end_run"), "faceedit_bench.testing.tracking"),
}
#: Names served under another name than their home module's.
_RENAMED: dict[str, tuple[str, str]] = {"render_console": ("faceedit_bench.report.console", "render")}


def __getattr__(name: str) -> Any:
    home, attribute = _RENAMED.get(name) or (_HOMES.get(name), name)
    if home is None:
        raise AttributeError(f"module 'faceedit_bench.testing' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), attribute)
    globals()[name] = value  # the next use is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "SC_TEMPLATE",
    "STATE_TEMPLATE",
    "ComponentInfo",
    "DatasetContract",
    "GaveUp",
    "MetricJudgment",
    "MissingSecretError",
    "ParseFailure",
    "cost_usd",
    "parse_answer",
    "EditorContract",
    "EmbedderContract",
    "Executor",
    "Executors",
    "FaceDetectorContract",
    "ImageMetricContract",
    "ImageStore",
    "InputResolver",
    "JudgeContract",
    "JudgeService",
    "JudgedSession",
    "Ledger",
    "PanelRule",
    "PixelEmbedder",
    "PluginDistributionContract",
    "Plugins",
    "QuestionSetLoaderContract",
    "Registry",
    "RunStopped",
    "SectionContract",
    "StepState",
    "TestSetError",
    "TestSetLoaderContract",
    "TrackerContract",
    "end_run",
    "metrics_for_tracking",
    "results_digest",
    "build_conditions",
    "build_run",
    "build_views",
    "check_conditions",
    "collect_submissions",
    "combine_panel",
    "compose_config",
    "find_published",
    "gradient_image",
    "hook_manager",
    "html_report",
    "join_condition",
    "kendall_lines",
    "load_plugins",
    "metric_ranks",
    "pairwise_accuracy",
    "register_configs",
    "render_console",
    "run_report_schema",
    "write_html_report",
    "run_built",
    "run_cli",
    "run_config",
    "skip_without_cuda",
    "submit_run",
    "summary_text",
    "system_agreement",
    "using_plugins",
    "worst_groups",
]
