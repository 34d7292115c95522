"""Assembling the judge of an experiment: one judge or a panel, and the selected judge metrics.

``judge=<name>`` creates one registered judge. ``judge=panel`` (or a protocol package's
panel entry) creates every member as its own component from
``judge.params.members`` (label -> ``{name, params}``; each member keeps its own model, endpoint,
limits and prices) and combines their answers by ``judge.params.rule``
(:mod:`faceedit_bench.scoring.judge.panel`).

``metrics=[...]`` is one list naming what a run reports, e.g. ``metrics=[fss,sc]``. The identity metrics
(``fss``: FSS_k and Drop_FSS, from the embedder) are computed whenever the dataset's images are faces, so
naming them only documents the choice; every other name is a judge metric, and the list replaces
``judge_metrics``. Without ``metrics`` the run asks ``judge_metrics`` (:func:`judge_metric_names`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from faceedit_bench import __version__
from faceedit_bench.config import ComponentConf
from faceedit_bench.errors import ConfigError
from faceedit_bench.execution.calls import Executors
from faceedit_bench.keys import fingerprint, portable
from faceedit_bench.plugin.manager import BUILTIN_PROVIDER, Plugins
from faceedit_bench.plugin.payloads import ComponentInfo
from faceedit_bench.records import Outcome
from faceedit_bench.scoring.judge.declared import JudgeMetric
from faceedit_bench.scoring.judge.metrics import JudgeScorer
from faceedit_bench.scoring.judge.panel import JudgePanel, PanelRule, PanelService
from faceedit_bench.scoring.judge.service import JudgeService

PANEL = "panel"
PANEL_PARAMS = ("members", "rule", "primary", "tolerance", "quorum", "rounding", "categorical", "notes")


def create_judge(plugins: Plugins, conf: ComponentConf,
                 create_component: Callable[..., tuple[Any, ComponentInfo]], *, key: str = "judge",
                 ) -> tuple[Any, ComponentInfo]:
    """The judge (or panel) ``conf`` selects; ``key``: where it is in the config (``conditions[1].judge``)."""
    if conf.name != PANEL:
        return create_component(plugins, "judge", conf, where=f"{key}.params")
    params = dict(conf.params)
    unknown = sorted(set(params) - set(PANEL_PARAMS))
    if unknown:
        raise ConfigError(f"judge 'panel' does not take parameter(s) {', '.join(unknown)}. "
                          f"Accepted: {', '.join(PANEL_PARAMS)}.")
    members = _member_confs(params.get("members"))
    judges, descriptions = {}, {}
    for label, member in members.items():
        if member.name == PANEL:
            raise ConfigError(f"judge.params.members.{label}: a panel member cannot itself be a panel")
        where = f"{key}.params.members.{label}"
        try:
            judges[label], info = create_component(plugins, "judge", member, where=f"{where}.params")
        except ConfigError as exc:
            if where in str(exc):
                raise
            raise ConfigError(f"{where}: {exc}") from exc
        descriptions[label] = {"name": member.name, "provider": info.provider,
                               "provider_version": info.provider_version, **info.description}
    try:
        rule = PanelRule(rule=str(params.get("rule") or "tolerance"), members=tuple(members),
                         primary=str(params.get("primary") or next(iter(members), "")),
                         tolerance=float(params.get("tolerance", 1.0) if params.get("tolerance") is not None else 1.0),
                         quorum=params.get("quorum"), rounding=str(params.get("rounding") or "half_even"),
                         categorical=str(params.get("categorical") or "majority"))
    except ValueError as exc:
        raise ConfigError(str(exc)) from exc
    notes = params.get("notes") or []
    if not isinstance(notes, (list, tuple)) or not all(isinstance(n, str) for n in notes):
        raise ConfigError(f"judge.params.notes must be a list of sentences, not {notes!r}")
    panel = JudgePanel(judges, descriptions, rule, tuple(notes))
    return panel, ComponentInfo("judge", PANEL, BUILTIN_PROVIDER, __version__, panel.describe())


def _member_confs(raw: Any) -> dict[str, ComponentConf]:
    """Members as label -> {name, params} (a list of {name, params} is labelled by name)."""
    how = ("give them as judge.params.members.<label>={name: <judge>, params: {...}}, e.g. with "
           "+judge@judge.params.members.gemini=gemini, or use a ready panel entry of the judge group")
    if isinstance(raw, Mapping):
        items = list(raw.items())
    elif isinstance(raw, (list, tuple)):
        items = []
        for m in raw:
            name = m.get("name") if isinstance(m, Mapping) else None
            label = str(name)
            n = 2
            while any(label == existing for existing, _ in items):
                label, n = f"{name}_{n}", n + 1
            items.append((label, m))
    else:
        raise ConfigError(f"judge=panel needs judge.params.members: {how}")
    out = {}
    for label, m in items:
        if not isinstance(m, Mapping) or not m.get("name"):
            raise ConfigError(f"judge.params.members.{label} needs a judge name: {how}")
        out[str(label)] = ComponentConf(name=str(m["name"]), params=dict(m.get("params") or {}))
    if len(out) < 2:
        raise ConfigError(f"a judge panel needs at least two members, got {len(out)}: {how}")
    return out


#: Names that stand for the embedder's identity metrics.
IDENTITY_NAMES = frozenset({"fss", "drop_fss", "identity"})


def judge_metric_names(metrics: Sequence[str] | None, judge_metrics: Sequence[str], judged: bool) -> list[str]:
    if metrics is None:
        return list(judge_metrics)
    names = [str(m) for m in metrics if str(m) not in IDENTITY_NAMES]
    if names and not judged:
        raise ConfigError(f"metrics={list(metrics)} names judge metric(s) {', '.join(names)}, which need a judge: "
                          "add judge=<name> (e.g. judge=gemini), or keep only fss")
    return names


def select_judge_metrics(plugins: Plugins, names: list[str]) -> list[JudgeMetric]:
    if not names:
        raise ConfigError("judge_metrics is empty; select at least one (e.g. judge_metrics=[sc,state]) or judge=none")
    if len(set(names)) != len(names):
        raise ConfigError(f"judge_metrics lists a metric twice: {names}")
    metrics = []
    for name in names:
        metric = plugins.registry.get("judge_metrics", name).load()
        if not isinstance(metric, JudgeMetric):
            raise ConfigError(f"judge metric {name!r} is registered as a {type(metric).__name__}, not a JudgeMetric "
                              "(faceedit_bench.api.JudgeMetric); fix the plugin that registers it")
        metrics.append(metric)
    return metrics


def judge_scorer(name: str, judge: Any, description: Mapping[str, Any], metrics: list[JudgeMetric], ledger: Any,
                 store: Any, executors: Executors, *, parse_attempts: int, retry: frozenset[Outcome],
                 seed: int) -> JudgeScorer:
    """The scorer over one judge's service, or over a panel's members' services."""

    def service(judge: Any, identity: dict[str, Any]) -> JudgeService:
        fp = fingerprint(portable(identity))
        ledger.record_component(fp, "judge", identity)
        return JudgeService(judge, fp, executors.get(judge.limits), ledger, store,
                            parse_attempts=parse_attempts, retry=retry)

    identity = {"name": name, **description}
    if isinstance(judge, JudgePanel):
        # A member's identity is what it would have alone: its answers are shared with single-judge runs.
        services = {label: service(member, {k: v for k, v in judge.descriptions[label].items()
                                            if k not in ("provider", "provider_version")})
                    for label, member in judge.members.items()}
        return JudgeScorer(PanelService(services, judge.rule, judge.describe()), name, identity, seed=seed,
                           metrics=metrics)
    return JudgeScorer(service(judge, identity), name, identity, seed=seed, metrics=metrics)
