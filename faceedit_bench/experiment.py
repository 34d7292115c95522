"""Turn a composed config into components, run the engine, write the run's artifacts."""

from __future__ import annotations

import csv
import inspect
import json
import re
import subprocess
import time
from contextlib import ExitStack
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

from faceedit_bench import __version__
from faceedit_bench.aggregate import Aggregator
from faceedit_bench.config import GROUP_KINDS, ComponentConf, ExperimentConfig
from faceedit_bench.contact_sheet import render
from faceedit_bench.engine import Engine, EngineParts, SessionResult
from faceedit_bench.errors import ConfigError
from faceedit_bench.keys import fingerprint
from faceedit_bench.ledger import Ledger
from faceedit_bench.plugins import Plugins
from faceedit_bench.records import Outcome, TestSet
from faceedit_bench.report import build_report
from faceedit_bench.run import ComponentInfo, RunInfo
from faceedit_bench.scoring import EmbeddingService
from faceedit_bench.store import ImageStore
from faceedit_bench.summary import format_summary


@dataclass
class Experiment:
    conf: ExperimentConfig
    info: RunInfo
    components: dict[str, Any]  # kind -> the created object
    testset: TestSet
    metrics: list[Any]


# -- building -----------------------------------------------------------------------------


def create_component(plugins: Plugins, group: str, conf: ComponentConf) -> tuple[Any, ComponentInfo]:
    kind = GROUP_KINDS[group]
    registration = plugins.registry.get(kind, conf.name)
    factory = registration.load()
    _check_params(group, conf, factory)
    obj = factory(**conf.params)
    description = dict(obj.describe()) if hasattr(obj, "describe") else {}
    if isinstance(obj, TestSet):
        description = {"name": obj.name, "version": obj.version, "content_hash": obj.content_hash}
    info = ComponentInfo(group, conf.name, registration.provider,
                         plugins.provider_version(registration.provider), description)
    return obj, info


def _check_params(group: str, conf: ComponentConf, factory: Any) -> None:
    """Reject unknown parameters with the list of accepted ones, before anything runs."""
    try:
        sig = inspect.signature(factory)
    except (TypeError, ValueError):
        return
    if any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values()):
        return
    accepted = [n for n, p in sig.parameters.items() if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)]
    unknown = sorted(set(conf.params) - set(accepted))
    if unknown:
        raise ConfigError(
            f"{group} {conf.name!r} does not take parameter(s) {', '.join(unknown)}. "
            f"Accepted: {', '.join(accepted) or '(none)'}."
        )
    missing = [n for n, p in sig.parameters.items()
               if p.default is p.empty and p.kind is not p.VAR_POSITIONAL and n not in conf.params]
    if missing:
        raise ConfigError(
            f"{group} {conf.name!r} needs parameter(s) {', '.join(missing)}: "
            + " ".join(f"{group}.params.{m}=..." for m in missing)
        )


def flatten(obj: Any, prefix: str = "") -> dict[str, str]:
    if isinstance(obj, dict):
        out: dict[str, str] = {}
        for key, value in obj.items():
            out.update(flatten(value, f"{prefix}{key}."))
        return out or ({prefix[:-1]: "{}"} if prefix else {})
    return {prefix[:-1]: json.dumps(obj) if isinstance(obj, (list, bool)) or obj is None else str(obj)}


def _git_sha() -> str:
    try:
        root = Path(__file__).resolve().parent.parent
        out = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5)
        return out.stdout.strip() if out.returncode == 0 else "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


#: Settings that change how a run executes, not what it measures.
RUNTIME_ONLY = ("workers", "progress", "workspace", "max_contact_sheets", "retry_outcomes")


def build_experiment(cfg: Any, plugins: Plugins) -> Experiment:
    conf: ExperimentConfig = OmegaConf.to_object(cfg)
    resolved = OmegaConf.to_container(cfg, resolve=True)
    assert isinstance(resolved, dict)
    components: dict[str, Any] = {}
    infos: dict[str, ComponentInfo] = {}
    for group in ("testset", "dataset", "embedder", "editor", "tracking"):
        components[group], infos[group] = create_component(plugins, group, getattr(conf, group))
    if conf.judge.name != "none":
        components["judge"], infos["judge"] = create_component(plugins, "judge", conf.judge)
    testset: TestSet = components["testset"]
    metrics = [plugins.registry.get("metrics", n).load() for n in plugins.registry["metrics"].names()]
    scientific = {
        kind: {"name": i.name, "description": i.description}
        for kind, i in infos.items() if kind != "tracking"
    }
    scientific["run"] = {k: v for k, v in resolved["run"].items() if k not in RUNTIME_ONLY}
    run_key = fingerprint(scientific)
    names = {g: infos[g].name for g in infos}
    run_name = f"{names['editor']}@{names['testset']}/{names['dataset']}/{names['embedder']}"
    workspace = Path(conf.run.workspace).expanduser().resolve()
    output_dir = workspace / "runs" / f"{re.sub(r'[^A-Za-z0-9_.-]+', '-', run_name)}-{run_key[:12]}"
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
        **{f"{g}.provider": f"{i.provider}=={i.provider_version}" for g, i in infos.items()},
        **{str(k): str(v) for k, v in conf.tags.items()},
    }
    info = RunInfo(
        run_key=run_key, run_name=run_name, experiment_name=f"faceedit/{testset.name}",
        components=infos, config=resolved, params=flatten(resolved), tags=tags,
        workspace=workspace, output_dir=output_dir,
    )
    return Experiment(conf, info, components, testset, metrics)


# -- running ------------------------------------------------------------------------------


def run_from_config(cfg: Any, plugins: Plugins) -> dict[str, Any]:
    return run_experiment(build_experiment(cfg, plugins), plugins)


class ArtifactWriter:
    """Writes the per-step and per-session tables as results stream in, plus contact sheets."""

    STEP_COLUMNS = ["face_id", "identity", "session_id", "k", "instruction", "category", "sub_axis", "axis",
                    "outcome", "reason", "resumed", "image_hash", "faces_detected", "fss", "embedder",
                    "session_excluded"]

    def __init__(self, out: Path, stack: ExitStack, store: ImageStore, max_sheets: int, scored_by: str,
                 demographic_keys: tuple[str, ...] = ("gender", "skin_tone", "age_group")) -> None:
        self.out, self.store, self.max_sheets, self.scored_by = out, store, max_sheets, scored_by
        self.keys = demographic_keys
        self.steps = csv.writer(stack.enter_context(open(out / "steps.csv", "w", newline="")))
        self.steps.writerow(self.STEP_COLUMNS + list(demographic_keys))
        self.sessions_fh = stack.enter_context(open(out / "sessions.csv", "w", newline=""))
        self.sessions: csv.DictWriter | None = None
        self.sheets = 0
        (out / "contact_sheets").mkdir(exist_ok=True)

    def write(self, result: SessionResult, values: dict[str, float | None]) -> None:
        face, session = result.face, result.session
        demo = [face.demographics.get(k) or "" for k in self.keys]
        fss = result.fss or ()
        nf = result.n_faces or ()
        base_row = [face.face_id, face.identity, session.session_id, 0, "", "", "", "", "ok" if result.steps else "",
                    "", "", result.image_hashes[0] if result.image_hashes else "",
                    nf[0] if nf else "", _fmt(fss[0]) if fss else "", self.scored_by if fss else "",
                    result.excluded or ""]
        self.steps.writerow(base_row + demo)
        for state in result.steps:
            step = session.steps[state.k - 1]
            self.steps.writerow([
                face.face_id, face.identity, session.session_id, state.k, step.instruction, step.category,
                step.sub_axis, step.axis, state.outcome.value, state.reason, state.resumed, state.output_hash or "",
                nf[state.k] if len(nf) > state.k else "", _fmt(fss[state.k]) if len(fss) > state.k else "",
                self.scored_by if len(fss) > state.k else "", result.excluded or "",
            ] + demo)
        row = {"face_id": face.face_id, "identity": face.identity, "session_id": session.session_id,
               "excluded": result.excluded or "", **{k: face.demographics.get(k) or "" for k in self.keys},
               **{name: _fmt(v) for name, v in values.items()}}
        if self.sessions is None:
            self.sessions = csv.DictWriter(self.sessions_fh, fieldnames=list(row), extrasaction="ignore", restval="")
            self.sessions.writeheader()
        self.sessions.writerow(row)
        if result.steps and self.sheets < self.max_sheets:
            self._sheet(result)

    def _sheet(self, result: SessionResult) -> None:
        fss = result.fss or ()
        tiles = [(self.store.get(result.image_hashes[0]), f"I0 FSS {_fmt(fss[0]) if fss else '-'}")]
        for state in result.steps:
            step = result.session.steps[state.k - 1]
            score = f"FSS {_fmt(fss[state.k])}" if len(fss) > state.k else state.outcome.value
            data = self.store.get(state.output_hash) if state.output_hash else None
            tiles.append((data, f"I{state.k} {score}: {step.instruction}"))
        title = f"{result.face.face_id} | {result.session.session_id}" + (
            f" | excluded: {result.excluded}" if result.excluded else "")
        name = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{result.face.face_id}__{result.session.session_id}") + ".png"
        (self.out / "contact_sheets" / name).write_bytes(render(title, tiles))
        self.sheets += 1


def _fmt(value: float | None) -> str:
    return "" if value is None else f"{value:.6g}"


def _tracker_hooks(pm: Any, tracker: Any) -> str | None:
    """Register the selected tracker for this run so it receives the lifecycle hooks."""
    from faceedit_bench.hookspecs import PROJECT

    has_hooks = any(getattr(getattr(tracker, n, None), f"{PROJECT}_impl", None) for n in dir(tracker))
    return pm.register(tracker, name=f"tracker-{id(tracker)}") if has_hooks else None


def run_experiment(exp: Experiment, plugins: Plugins) -> dict[str, Any]:
    from tqdm import tqdm

    conf, info = exp.conf, exp.info
    c = exp.components
    pm = plugins.pm
    workspace = info.workspace
    store = ImageStore(workspace / "store")
    ledger = Ledger(workspace / "ledger.sqlite")
    info.output_dir.mkdir(parents=True, exist_ok=True)
    retry = frozenset(Outcome(o) for o in conf.run.retry_outcomes)
    editor_identity = {"name": conf.editor.name, **info.components["editor"].description}
    embedder_identity = {"name": conf.embedder.name, **info.components["embedder"].description}
    editor_fp, embedder_fp = fingerprint(editor_identity), fingerprint(embedder_identity)
    ledger.record_component(editor_fp, "editor", editor_identity)
    ledger.record_component(embedder_fp, "embedder", embedder_identity)
    embeddings = EmbeddingService(
        c["embedder"], embedder_fp, lambda: plugins.registry.create("embedders", conf.embedder.name, conf.embedder.params),
        store, ledger, conf.run.workers, retry,
    )
    dataset = c["dataset"]
    sessions = exp.testset.sessions[: conf.run.max_sessions]
    parts = EngineParts(
        info=info, editor=c["editor"],
        editor_fp=editor_fp,
        embeddings=embeddings, similarity=c["embedder"].similarity, store=store, ledger=ledger,
        run_seed=conf.run.seed, retry=retry,
        min_base_fss=getattr(dataset, "min_base_fss", None),
        single_face_only=bool(getattr(dataset, "single_face_only", False)),
    )
    tracker_name = _tracker_hooks(pm, c["tracking"])
    started = time.perf_counter()
    total = _expected_faces(info.components["dataset"].description.get("n_faces"), conf.run.max_faces)
    try:
        with ExitStack() as stack:
            progress = stack.enter_context(tqdm(
                total=total * len(sessions) * 4 if total else None, unit="step", desc=info.run_name,
                disable=not conf.run.progress, dynamic_ncols=True))
            stack.callback(embeddings.close)
            stack.callback(ledger.close)
            pm.hook.faceedit_run_start(run=info)
            engine = Engine(parts, pm.hook, progress)
            aggregator = Aggregator(exp.metrics, conf.run.confidence)
            scored_by = f"{conf.embedder.name} {embedder_identity.get('version', 'unknown')}"
            writer = ArtifactWriter(info.output_dir, stack, store, conf.run.max_contact_sheets, scored_by)
            faces = islice(dataset.faces(), conf.run.max_faces)
            for result in engine.run(faces, sessions):
                writer.write(result, aggregator.add(result))
            for reason in engine.face_exclusions.values():
                aggregator.note_face_exclusion(reason)
        computed = {"embeddings": embeddings.computed}
        report = build_report(info, exp.testset, aggregator.sections(),
                              wall_time_s=time.perf_counter() - started, computed=computed)
        artifacts = write_artifacts(info, report)
        pm.hook.faceedit_run_end(run=info, report=report, artifacts=artifacts)
    except BaseException as exc:
        pm.hook.faceedit_run_error(run=info, error=exc)
        raise
    finally:
        if tracker_name:
            pm.unregister(name=tracker_name)
    print(format_summary(report, info.output_dir))
    return report


def _expected_faces(n_faces: Any, limit: int | None) -> int | None:
    """For the progress bar's ETA: the dataset's own count when it states one."""
    if not isinstance(n_faces, int):
        return limit
    return min(n_faces, limit) if limit is not None else n_faces


def write_artifacts(info: RunInfo, report: dict[str, Any]) -> dict[str, str]:
    out = info.output_dir
    (out / "report.json").write_text(json.dumps(report, indent=2, sort_keys=False, default=str))
    (out / "config.yaml").write_text(OmegaConf.to_yaml(OmegaConf.create(info.config)))
    return {name: str(out / name) for name in
            ("report.json", "config.yaml", "steps.csv", "sessions.csv", "contact_sheets")}
