"""Hook specifications: the whole contract between faceedit_bench and its plugins.

Every hook is prefixed ``faceedit_`` and called with keyword arguments only, so new
arguments can be added without breaking plugins. A plugin is a module (or object)
holding functions decorated with :data:`faceedit_bench.hookimpl`, published under the
``faceedit_bench`` entry-point group::

    [project.entry-points.faceedit_bench]
    my_editor = "faceedit_bench_my_editor"

The full reference, with an example for each hook, is ``docs/plugin_hooks.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    from faceedit_bench.plugin.payloads import RunInfo, StepRecord, TrackedRun
    from faceedit_bench.plugin.registry import Register

PROJECT = "faceedit_bench"
hookspec = pluggy.HookspecMarker(PROJECT)


# -- registration: called once per plugin, right after loading -------------------------


@hookspec
def faceedit_register_editors(register: Register) -> None:
    """Register editor factories: ``register("name", factory, description=...)``.

    The factory receives the selected config entry's ``params`` as keyword arguments
    and returns an :class:`~faceedit_bench.plugin.protocols.Editor`.
    """


@hookspec
def faceedit_register_judges(register: Register) -> None:
    """Register MLLM judge factories (used by judge-based metrics)."""


@hookspec
def faceedit_register_metrics(register: Register) -> None:
    """Register session metrics: ``register("name", metric)`` where ``metric`` is a
    :class:`~faceedit_bench.analysis.session_metrics.SessionMetric` (carries ``higher_is_better``)."""


@hookspec
def faceedit_register_judge_metrics(register: Register) -> None:
    """Register judge metrics: ``register("name", metric)`` where ``metric`` is a
    :class:`~faceedit_bench.scoring.judge.declared.JudgeMetric` (a prompt template with its answer
    schema, the images it sees, its values and how they aggregate). A run selects metrics by name
    with ``judge_metrics=[...]``."""


@hookspec
def faceedit_register_image_metrics(register: Register) -> None:
    """Register image metrics: ``register("name", factory)`` where ``factory(**params)`` returns an
    :class:`~faceedit_bench.scoring.image_metric.ImageMetric` named ``name`` (a class is a factory): per step,
    it sees I_0, I_{k-1}, I_k, the references, the instruction and the faces the run's detector found, and
    returns named values that declare their direction, bounds, unit, label and session aggregation. A run
    selects metrics by name with ``image_metrics=[...]`` and sets parameters at ``image_metric_params.<name>``."""


@hookspec
def faceedit_register_embedders(register: Register) -> None:
    """Register face-embedder factories returning a
    :class:`~faceedit_bench.plugin.protocols.FaceEmbedder`."""


@hookspec
def faceedit_register_datasets(register: Register) -> None:
    """Register dataset factories returning a :class:`~faceedit_bench.plugin.protocols.Dataset`."""


@hookspec
def faceedit_register_testsets(register: Register) -> None:
    """Register test-set loaders: zero-argument callables returning a
    :class:`~faceedit_bench.records.TestSet`."""


@hookspec
def faceedit_register_question_sets(register: Register) -> None:
    """Register question-set loaders: ``register("name", loader)`` where ``loader(path)`` reads a frozen set of
    questions (the object a question-answer protocol's judge metric answers). The core only keeps them by
    name; the protocol that answers them loads one with ``registered("question_sets", name)`` (or, in a
    section's ``prepare``, ``setup.load("question_sets", name)``) and documents its type and settings."""


@hookspec
def faceedit_register_trackers(register: Register) -> None:
    """Register experiment-tracker factories (the ``tracking`` config group)."""


@hookspec
def faceedit_register_sections(register: Register) -> None:
    """Register report sections: ``register("name", section)`` where ``section`` is a
    :class:`~faceedit_bench.plugin.sections.ReportSection` named ``name`` (or a lazy ``"module:attr"``): its
    collector, its part of ``report.json`` with its schema, settings at ``analysis.<name>``, MLflow metrics,
    console lines, report.html template and leaderboard views. Every run drives every registered section."""


@hookspec
def faceedit_register_commands(register: Register) -> None:
    """Register ``faceedit-bench`` subcommands: ``register("name", add_parser)`` where ``add_parser(subparsers)``
    adds the subcommand ``name`` to the argparse subparsers and sets ``func`` (``args -> exit code``) with
    ``set_defaults``. Keep it cheap: import heavy modules inside ``func``."""


@hookspec
def faceedit_register_condition_templates(register: Register) -> None:
    """Register prompt-condition templates: ``register("name", template)`` where ``template`` is a
    :class:`~faceedit_bench.scoring.judge.condition_templates.ConditionTemplate` (a judge prompt, the condition kind it
    serves and how its answer becomes the editor's text). A run names it in ``conditions=[...]``; a kind's only
    registered template is its default."""


@hookspec
def faceedit_register_samples(register: Register) -> None:
    """Register published samples: ``register("name", sample)`` where ``sample`` is a
    :class:`~faceedit_bench.run.sampling.PublishedSample` (the (face id, session id) items a paper ran, per
    model, and their source). A run takes one with ``run.sample={published: <name>, model: <model>}``."""


@hookspec
def faceedit_register_reproductions(register: Register) -> None:
    """Register reproductions of published results: ``register("name", add_parser)`` where
    ``add_parser(subparsers)`` adds ``name`` (underscores as hyphens) under ``faceedit-bench reproduce`` and sets
    ``func`` (``args -> exit code``). Keep it cheap: import heavy modules inside ``func``."""


@hookspec
def faceedit_config_searchpath() -> list[str]:
    """Return Hydra search-path entries (e.g. ``["pkg://my_plugin.conf"]``) holding this
    plugin's config-group files such as ``editor/my_editor.yaml``. Installing the plugin
    is then enough for ``editor=my_editor`` to compose."""


@hookspec
def faceedit_fidelity_tables() -> list[Any]:
    """Return this plugin's fidelity tables: YAML files (paths or ``importlib.resources`` files) that list, for
    each protocol element of a paper, the paper's value, the setting of the preset that holds the project's
    default, the source and the status (same / reconstruction / deviation) with its measured effect
    (format: ``faceedit_bench.report.fidelity``). They make ``docs/fidelity.md``, are checked against the
    composed presets, and a run of a listed preset shows its deviations in the report's "Read first" box."""


# -- run lifecycle: observers, return None; trackers implement these --------------------


@hookspec
def faceedit_run_start(run: RunInfo) -> None:
    """Called once before any work, with the resolved components and config."""


@hookspec
def faceedit_step_done(run: RunInfo, step: StepRecord) -> None:
    """Called after every edit step of every session, whether computed or resumed."""


@hookspec
def faceedit_run_end(run: RunInfo, report: dict[str, Any], artifacts: dict[str, str], metrics: dict[str, float],
                     results_digest: str) -> None:
    """Called once after aggregation with the run report (see ``schemas/run_report``), the artifact files
    written for the run (name -> absolute path), the report flattened into numeric ``metrics`` (each report
    section's part by its own ``tracking``) and ``results_digest``, the same for two launches with the same
    results (a tracker that holds them may skip logging them again)."""


@hookspec
def faceedit_run_error(run: RunInfo, error: BaseException) -> None:
    """Called when a run stops on an error or interruption. Must not raise."""


# -- reading what a tracker recorded (submissions, leaderboards) ------------------------


@hookspec(firstresult=True)
def faceedit_tracked_runs(tracking_uri: str, run_id: str | None, experiments: list[str] | None,
                          files: list[str]) -> list[TrackedRun] | None:
    """Runs recorded at ``tracking_uri`` by this plugin's tracker, each with the artifacts
    named in ``files``. With ``run_id``: that run alone (raise a
    :class:`~faceedit_bench.errors.FaceEditBenchError` if it does not exist). Without: every
    finished faceedit_bench run of ``experiments`` (default: every ``faceedit/...``
    experiment), oldest first. Return None when the URI is not this tracker's."""


@hookspec(firstresult=True)
def faceedit_log_run_metrics(tracking_uri: str, run_key: str, metrics: dict[str, float]) -> str | None:
    """Add ``metrics`` to the run this plugin's tracker recorded for ``run_key`` at ``tracking_uri``
    (analyses done after the run, e.g. people's ratings added by a protocol package's command); return that run's id.
    Return None when the URI is not this tracker's; raise a
    :class:`~faceedit_bench.errors.FaceEditBenchError` when it is but holds no such run."""


@hookspec(firstresult=True)
def faceedit_log_run_artifacts(tracking_uri: str, run_key: str, files: dict[str, str]) -> str | None:
    """Add ``files`` (local path -> folder in the run's artifacts, "" for the top) to the run this plugin's tracker
    recorded for ``run_key`` at ``tracking_uri``, replacing a file of the same name there (a report rewritten
    after the run); return that run's id. None and errors as :func:`faceedit_log_run_metrics`."""
