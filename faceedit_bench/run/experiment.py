"""Turn a composed config into components, run the engine, write the run's artifacts."""

from __future__ import annotations

import json
import re
import subprocess
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

from faceedit_bench import __version__
from faceedit_bench.analysis.aggregate import Aggregator
from faceedit_bench.analysis.cached import caching_statistics
from faceedit_bench.analysis.session_metrics import IMAGE_METRICS, image_metric_values, judge_metric_values
from faceedit_bench.config import ExperimentConfig
from faceedit_bench.errors import ConfigError
from faceedit_bench.execution.budget import Budget
from faceedit_bench.execution.calls import Executors
from faceedit_bench.execution.offline import calls_off
from faceedit_bench.keys import fingerprint, portable, run_key
from faceedit_bench.plugin.launch import RunLaunch
from faceedit_bench.plugin.manager import Plugins, using_sections
from faceedit_bench.plugin.payloads import ComponentInfo, RunInfo
from faceedit_bench.plugin.protocols import capability
from faceedit_bench.plugin.sections import collector_files
from faceedit_bench.records import Outcome, TestSet
from faceedit_bench.report.artifacts import ArtifactWriter, write_artifacts
from faceedit_bench.report.run_report import build_report, metrics_for_tracking, results_digest
from faceedit_bench.report.summary import format_summary
from faceedit_bench.report.tables import run_identifiers
from faceedit_bench.run import condition_plan
from faceedit_bench.run.admission import Admission
from faceedit_bench.run.call_roles import call_roles, call_tags
from faceedit_bench.run.components import create_component
from faceedit_bench.run.cost_section import launch_account
from faceedit_bench.run.data_needs import check_data_needs
from faceedit_bench.run.edit_stage import EditStage
from faceedit_bench.run.engine import Engine
from faceedit_bench.run.image_metrics import detector_of, image_metric_identities, image_scorer, select_image_metrics
from faceedit_bench.run.inputs import InputResolver
from faceedit_bench.run.judges import create_judge, judge_metric_names, judge_scorer, select_judge_metrics
from faceedit_bench.run.progress import expected_faces, open_progress, plan_stages
from faceedit_bench.run.required import check_no_missing
from faceedit_bench.run.section_settings import prepare_sections, run_key_analysis
from faceedit_bench.run.setting_keys import check_setting_keys
from faceedit_bench.run.shards import bind_gpu, open_ledger, select_faces, shard_run_info
from faceedit_bench.scoring.identity import EmbeddingService
from faceedit_bench.scoring.judge.agreement import read_labels
from faceedit_bench.scoring.judge.metrics import JudgeScorer
from faceedit_bench.scoring.stage import ScoreStage
from faceedit_bench.storage.ledger import Ledger
from faceedit_bench.storage.pixels import PIXELS_VERSION
from faceedit_bench.storage.run_images import RunImages
from faceedit_bench.storage.statistics_cache import StatisticsCache
from faceedit_bench.storage.store import ImageStore
from faceedit_bench.storage.workspace import check_writable_dir, storage_error


@dataclass
class Experiment:
    conf: ExperimentConfig
    info: RunInfo
    components: dict[str, Any]  # kind -> the created object
    testset: TestSet
    metrics: list[Any]
    judge_metrics: list[Any] = field(default_factory=list)
    conditions: Any = None  # condition_plan.BuiltConditions
    image_metrics: list[Any] = field(default_factory=list)  # the selected ImageMetric objects

    @property
    def asked_judge_metrics(self) -> list[Any]:
        """The selected judge metrics this test set allows (a metric that needs a taxonomy
        binding is skipped, with the reason, for free-text steps)."""
        return [m for m in self.judge_metrics if self.testset.bound or not m.needs_taxonomy]


# -- building -----------------------------------------------------------------------------


def flatten(obj: Any, prefix: str = "") -> dict[str, str]:
    if isinstance(obj, dict):
        out: dict[str, str] = {}
        for key, value in obj.items():
            out.update(flatten(value, f"{prefix}{key}."))
        return out or ({prefix[:-1]: "{}"} if prefix else {})
    return {prefix[:-1]: json.dumps(obj) if isinstance(obj, (list, bool)) or obj is None else str(obj)}


def _git_sha() -> str:
    try:
        root = Path(__file__).resolve().parents[2]
        out = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5)
        return out.stdout.strip() if out.returncode == 0 else "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def preset_choice() -> str | None:
    """The ``experiment=`` preset Hydra composed this job from (its runtime choices); None outside a Hydra job."""
    from hydra.core.hydra_config import HydraConfig

    if not HydraConfig.initialized():
        return None
    choice = HydraConfig.get().runtime.choices.get("experiment")
    return None if choice in (None, "null") else str(choice)


def build_experiment(cfg: Any, plugins: Plugins, preset: str | None = None) -> Experiment:
    """``preset``: the experiment preset the config was composed from; default: Hydra's runtime choice."""
    preset = preset if preset is not None else preset_choice()
    check_setting_keys(cfg, plugins)  # every key known to the schema or to its component's factory
    check_no_missing(cfg)  # a `???` setting left unset: say which, with an example
    conf: ExperimentConfig = OmegaConf.to_object(cfg)  # validates every setting (config.py)
    check_writable_dir(conf.run.workspace)
    bind_gpu(conf.run)  # a shard keeps one GPU, before any component initialises CUDA
    resolved = OmegaConf.to_container(cfg, resolve=True)
    assert isinstance(resolved, dict)
    components: dict[str, Any] = {}
    infos: dict[str, ComponentInfo] = {}
    for group in ("testset", "dataset", "embedder", "editor", "tracking"):
        components[group], infos[group] = create_component(plugins, group, getattr(conf, group))
    if conf.judge.name != "none":
        components["judge"], infos["judge"] = create_judge(plugins, conf.judge, create_component)
    names = judge_metric_names(conf.metrics, conf.judge_metrics, judged=conf.judge.name != "none")
    judge_metrics = select_judge_metrics(plugins, names) if names or conf.metrics is None else []
    conditions = condition_plan.build(plugins, conf.conditions, has_judge="judge" in components,
                                      create_component=create_component)
    testset: TestSet = components["testset"]
    # the report sections check their settings and bind the selected metrics to them (e.g. question sets)
    judge_metrics = prepare_sections(plugins, judge_metrics, conf.analysis, resolved, testset,
                                     judged="judge" in components)
    if infos["dataset"].description.get("n_faces") == 0:
        raise ConfigError(f"dataset {conf.dataset.name!r} selects 0 faces, so the run would measure nothing; "
                          "check its annotations and dataset.params (limit, partition, allow_list).")
    if conf.analysis.human_labels:  # config.py checked it exists; a malformed or non-UTF-8 file fails now
        read_labels(Path(conf.analysis.human_labels).expanduser())
    image_metrics = select_image_metrics(plugins, conf.image_metrics, conf.image_metric_params,
                                         has_detector=detector_of(components["embedder"]) is not None,
                                         faces=capability(components["dataset"], "dataset", "measures_identity"))
    metrics = session_metrics(plugins, judge_metrics, image_metrics)
    identities: dict[str, Any] = {kind: {"name": i.name, "description": i.description} for kind, i in infos.items()}
    if image_metrics:  # only then: the run key of a run without them is what it was
        identities["image_metrics"] = image_metric_identities(
            image_metrics, {"name": conf.embedder.name, **infos["embedder"].description})
    if "judge" in components:  # what the judge is asked decides its numbers
        identities["judge_metrics"] = {m.name: m.identity for m in judge_metrics}
    if conditions.identity() is not None:  # baseline only: the run key is what it was before conditions
        identities["conditions"] = conditions.identity()
    run_settings = {k: v for k, v in resolved["run"].items() if not (k == "sample" and v is None)}
    key = run_key(identities, run_settings, run_key_analysis(plugins.sections(), resolved["analysis"]))
    names = {g: infos[g].name for g in infos}
    run_name = f"{names['editor']}@{names['testset']}/{names['dataset']}/{names['embedder']}"
    workspace = Path(conf.run.workspace).expanduser().resolve()
    output_dir = workspace / "runs" / f"{re.sub(r'[^A-Za-z0-9_.-]+', '-', run_name)}-{key[:12]}"
    tags = {
        "faceedit_bench.version": __version__,
        "faceedit_bench.git_sha": _git_sha(),
        "testset": testset.name,
        "testset.version": testset.version,
        "testset.content_hash": testset.content_hash,
        "taxonomy.version": testset.taxonomy_version,
        "reconstruction": str(testset.reconstruction).lower(),
        "plugins": ",".join(sorted(f"{i.distribution}=={i.version}" for i in plugins.info.values()
                                   if i.distribution != "faceedit-bench")) or "none",
        **{f"{g}": i.name for g, i in infos.items()},
        **call_tags(call_roles(components, infos, conditions.judges)),  # endpoints: tags, never metric names
        **{str(k): str(v) for k, v in conf.tags.items()},
    }
    info = shard_run_info(RunInfo(
        run_key=key, run_name=run_name, experiment_name=f"faceedit/{testset.name}",
        components=infos, config=resolved, params=flatten(resolved), tags=tags,
        workspace=workspace, output_dir=output_dir, preset=preset,
    ), conf.run.shard)
    exp = Experiment(conf, info, components, testset, metrics, judge_metrics, conditions, image_metrics)
    if conf.run.dry_run or not calls_off():  # a command that pays nothing (merge) re-derives what was run
        check_data_needs(exp, plugins.sections())  # a run that could score nothing stops before its first call
    return exp


def session_metrics(plugins: Plugins, judge_metrics: list[Any], image_metrics: list[Any] = ()) -> list[Any]:
    """The registered session metrics and the selected judge and image metrics' values, by name."""
    metrics = {n: plugins.registry.get("metrics", n).load() for n in plugins.registry["metrics"].names()}
    declared = [("judge", m.name, judge_metric_values(m)) for m in judge_metrics]
    declared += [("image", m.name, image_metric_values(m)) for m in image_metrics]
    for kind, name, values in declared:
        for value in values:
            if value.name in metrics:
                raise ConfigError(f"{kind} metric {name!r} reports a value named {value.name!r}, which another "
                                  "metric already reports; rename one of them")
            metrics[value.name] = value
    return [metrics[n] for n in sorted(metrics)]


# -- running ------------------------------------------------------------------------------


def run_from_config(cfg: Any, plugins: Plugins) -> dict[str, Any]:
    return run_experiment(build_experiment(cfg, plugins), plugins)


def run_experiment(exp: Experiment, plugins: Plugins) -> dict[str, Any]:
    try:
        with using_sections(plugins.sections()):  # the report, tracker and summary read this plugin set's sections
            return _run_experiment(exp, plugins)
    except Exception as exc:  # a full disk or read-only place: say what, and that nothing finished is lost
        friendly = storage_error(exc, exp.info.workspace)
        if friendly is None:
            raise
        raise friendly from exc


def _run_experiment(exp: Experiment, plugins: Plugins) -> dict[str, Any]:
    conf, info = exp.conf, exp.info
    c = exp.components
    pm = plugins.pm
    workspace = info.workspace
    store = ImageStore(workspace / "store")
    ledger = open_ledger(workspace, info, conf.run.shard)
    info.output_dir.mkdir(parents=True, exist_ok=True)
    retry = frozenset(Outcome(o) for o in conf.run.retry_outcomes)
    editor_identity = {"name": conf.editor.name, **info.components["editor"].description}
    # The pixel decoding is part of what an embedding measures: a fix of it recomputes cached embeddings.
    embedder_identity = {"name": conf.embedder.name, **info.components["embedder"].description,
                         "pixels": PIXELS_VERSION}
    editor_fp, embedder_fp = fingerprint(portable(editor_identity)), fingerprint(portable(embedder_identity))
    ledger.record_component(editor_fp, "editor", editor_identity)
    ledger.record_component(embedder_fp, "embedder", embedder_identity)
    executors = Executors(Budget(conf.run.budget_usd))
    judge_scorer = _judge_scorer(exp, ledger, store, executors, retry)
    embeddings = EmbeddingService(
        c["embedder"], embedder_fp, lambda: plugins.registry.create("embedders", conf.embedder.name, conf.embedder.params),
        store, ledger, conf.run.workers, retry,
    )
    dataset = c["dataset"]
    plan = condition_plan.ConditionPlan(exp.conditions, judge_scorer, ledger=ledger, store=store, executors=executors,
                                        retry=retry, parse_attempts=conf.run.judge_parse_attempts, seed=conf.run.seed,
                                        sample=conf.run.sample)
    sessions = plan.sessions(exp.testset.sessions[: conf.run.max_sessions])  # once per prompt condition
    # The selected tracker receives the lifecycle hooks for this run only.
    tracker_name = pm.register(c["tracking"])
    started = time.perf_counter()
    launch: dict[str, RunLaunch] = {}  # what this launch did, once its work is done (the launch sections read it)
    total = expected_faces(info.components["dataset"].description.get("n_faces"), conf.run.max_faces)
    try:
        with ExitStack() as stack:
            stack.callback(embeddings.close)
            stack.callback(ledger.close)
            pm.hook.faceedit_run_start(run=info)
            stages = plan_stages(total, sessions, judged=judge_scorer is not None)
            progress = stack.enter_context(open_progress(stages, enabled=conf.run.progress, title=info.run_name,
                                                         interval_s=conf.run.progress_interval_s))
            identity = capability(dataset, "dataset", "measures_identity")  # False: not faces
            admission = Admission(store, embeddings, c["embedder"].similarity,
                                  min_base_fss=capability(dataset, "dataset", "min_base_fss"),
                                  single_face_only=capability(dataset, "dataset", "single_face_only"),
                                  identity=identity)
            edit = EditStage(info, c["editor"], editor_fp, store, ledger, conf.run.seed, retry, executors, pm.hook,
                             progress, inputs=InputResolver(store, capability(dataset, "dataset", "partners"), conf.run.seed),
                             prompts=plan.prompts)
            measuring = image_scorer(exp.image_metrics, c["embedder"], embedder_identity, embedder_fp, store, ledger,
                                     conf.run.workers, retry, embeddings)
            if measuring is not None:
                stack.callback(measuring.close)
            score = ScoreStage(embeddings, c["embedder"].similarity, judge_scorer, ledger=ledger, store=store,
                               human_labels=conf.analysis.human_labels, seed=conf.run.seed, identity=identity,
                               image_scorer=measuring)
            engine = Engine(admission, edit, score, progress)
            stack.callback(engine.close)
            available = {*(["embedder"] if identity else []), *(["judge"] if judge_scorer is not None else []),
                         *(["taxonomy"] if exp.testset.bound else []), *([IMAGE_METRICS] if measuring else [])}
            aggregator = plan.aggregator(lambda: Aggregator(
                exp.metrics, conf.run.confidence, available=available, analysis=conf.analysis,
                judge_metrics=exp.asked_judge_metrics, image_metrics=exp.image_metrics,
                panel=getattr(judge_scorer.service, "rule", None) if judge_scorer else None,
                run_access=run_access(exp, store, ledger, embedder_fp, lambda: launch.get("done"))),
                confidence=conf.run.confidence, alpha=conf.analysis.alpha, judge_metrics=exp.asked_judge_metrics)
            writer = ArtifactWriter(info.output_dir, stack, store, conf.run.max_contact_sheets,
                                    judged_by=judge_scorer.label() if judge_scorer else "",
                                    run_ids=run_identifiers(info.run_key, info.run_name, info.components),
                                    metrics=[m.name for m in exp.metrics], sheets_after=edit.first_call_done)
            # The sample is drawn over all faces, then sharded, so shards together run the unsharded items.
            faces = select_faces(plan.faces(islice(dataset.faces(), conf.run.max_faces)), conf.run.shard)
            engine.select = plan.selects()
            stats = engine.run(faces, sessions, lambda result: writer.write(result, aggregator.add(result)))
            writer.draw_held_sheets()
            aggregator.face_exclusions.update(stats.face_exclusions)
        computed = {"embeddings": embeddings.computed, "edit_calls": stats.new_edit_calls,
                    "judge_calls": judge_scorer.service.calls_made if judge_scorer else 0,
                    **({"image_values": measuring.computed} if measuring is not None else {})}
        launch["done"] = launch_account(exp, aggregator, judge_scorer, executors, stats)
        # Each statistic and plot is kept in the ledger as it is done: a killed report resumes where it was,
        # and an unchanged one is read back.
        with StatisticsCache(ledger.path) as kept, caching_statistics(kept):
            sections = aggregator.sections()
            plan.add_sections(sections)
            sections["counts"]["images_converted"] = dict(sorted(stats.image_conversions.items()))
            sections["counts"]["references"] = stats.references
            report = build_report(info, exp.testset, sections, wall_time_s=time.perf_counter() - started,
                                  computed=computed, stopped=stats.stopped)
            artifacts = write_artifacts(info, report, store, tables_from=writer)
            artifacts.update({p.name: str(p) for c in aggregator.collectors.values()  # the sections' own tables
                              for p in collector_files(c, info.output_dir)})
        pm.hook.faceedit_run_end(run=info, report=report, artifacts=artifacts, metrics=metrics_for_tracking(report),
                                 results_digest=results_digest(report))
    except BaseException as exc:
        pm.hook.faceedit_run_error(run=info, error=exc)
        raise
    finally:
        pm.unregister(name=tracker_name)
    print(format_summary(report, info.output_dir))
    return report


def run_access(exp: Experiment, store: ImageStore, ledger: Ledger, detector_fp: str,
               launch: Callable[[], RunLaunch | None]) -> dict[str, Any]:
    """What report sections may read of the run: its images, its folder, its components and (``launch``, once
    its work is done) what this launch did."""
    detector = detector_of(exp.components["embedder"])
    return {"images": RunImages(store, detector=detector, detector_fp=detector_fp, ledger=ledger.path),
            "run_dir": exp.info.output_dir,
            "components": {"detector": detector, "embedder": exp.components["embedder"],
                           "judge": exp.components.get("judge")}, "launch": launch}


def _judge_scorer(exp: Experiment, ledger: Ledger, store: ImageStore, executors: Executors,
                  retry: frozenset[Outcome]) -> JudgeScorer | None:
    if "judge" not in exp.components:
        return None
    conf = exp.conf
    return judge_scorer(conf.judge.name, exp.components["judge"], exp.info.components["judge"].description,
                        exp.asked_judge_metrics, ledger, store, executors, parse_attempts=conf.run.judge_parse_attempts,
                        retry=retry, seed=conf.run.seed)

