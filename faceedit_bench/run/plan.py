"""The cost of a run before paying: ``faceedit-bench plan <overrides>`` and ``run.dry_run=true``.

From the built experiment (components created without their keys, no provider call), per provider and model:
the calls the run would make, how many the workspace ledger already holds, their estimated cost at the dated
list prices, and the least time the configured rate limits allow. Nothing is written.

The calls are counted as the run makes them: one edit per step of every (face, session) the run selects, the
chain of a session followed through the ledger (a step after a recorded failure is not made; an answer whose
outcome the run retries is made again); one judge call per question of every asked judge metric per panel
member, the questions a face cannot be asked (a missing label) left out, identical questions once; the judge's
three sanity anchors per member, afresh whenever anything new is asked. What the plan cannot know is said
beside it: faces that admission will exclude (no face found) still count; re-asked unparsable answers and
retried attempts are not counted; under a prompt condition other than the baseline, or for a step with further
input images, the ledger is not looked up (every such call counts as new).

The cost of one call is the mean usage of the component's calls already in the ledger, else the usage it
declares (``usage_per_call``), priced with its price table; else it is unknown, never zero.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from faceedit_bench.errors import ConfigError
from faceedit_bench.execution.cost import cost_usd
from faceedit_bench.keys import edit_key, fingerprint, portable, step_seed
from faceedit_bench.records import Outcome
from faceedit_bench.run.access import usage_per_call
from faceedit_bench.run.components import parameter_defaults
from faceedit_bench.run.condition_plan import BuiltConditions, ConditionPlan
from faceedit_bench.run.condition_prompts import BASELINE
from faceedit_bench.run.shards import select_faces
from faceedit_bench.scoring.judge.panel import JudgePanel
from faceedit_bench.scoring.judge.service import judgment_key
from faceedit_bench.storage.images import content_hash
from faceedit_bench.storage.ledger_view import LedgerView

#: A rate limit that makes a provider's share of the run take longer than this is called out.
LONG_MINUTES = 10.0


@dataclass
class Calls:
    """One component's calls in the plan."""

    role: str  # editor, judge, judge member <label>
    component: str
    model: str
    setting: str  # where its parameters are set: editor.params, judge.params.members.gpt.params
    fp: str  # its fingerprint in the ledger
    limits: Any = None  # CallLimits of a hosted component (it has an endpoint); None for a local one
    prices: Mapping[str, Any] | None = None
    usage: Mapping[str, float] | None = None
    usage_source: str = ""
    calls: int = 0
    cached: int = 0
    keys: set[str] = field(default_factory=set)  # the judge questions counted (asked once each)
    default_limits: bool = False  # its rate limits are its plugin's defaults (none was configured)

    @property
    def new(self) -> int:
        return self.calls - self.cached

    @property
    def hosted(self) -> bool:
        return self.limits is not None

    def cost_usd(self) -> float | None:
        """The new calls' estimated cost; None when unknown (no usage or no prices); 0 for a local model."""
        if not self.hosted:
            return 0.0
        each = cost_usd(self.usage or {}, self.prices) if self.usage else None
        return None if each is None else each * self.new


@dataclass
class RunPlan:
    faces: int
    sessions: int
    rows: list[Calls]
    notes: list[str]

    def minutes(self) -> dict[str, float]:
        """Per provider key (components sharing it share its limits): the least time its limits allow."""
        out: dict[str, float] = {}
        for key, rows in _by_provider(self.rows).items():
            limits = rows[0].limits
            new = sum(r.new for r in rows)
            by_requests = new / limits.requests_per_minute if limits.requests_per_minute else 0.0
            by_tokens = new * limits.tokens_per_call / limits.tokens_per_minute if limits.tokens_per_minute else 0.0
            out[key] = max(by_requests, by_tokens)
        return out

    def warnings(self) -> list[str]:
        lines = []
        for key, minutes in self.minutes().items():
            if minutes <= LONG_MINUTES:
                continue
            rows = _by_provider(self.rows)[key]
            first, new = rows[0], sum(r.new for r in rows)
            limits = first.limits
            by_requests = bool(limits.requests_per_minute) and new / limits.requests_per_minute >= minutes
            setting = (f"{first.setting}.limits.requests_per_minute" if by_requests
                       else f"{first.setting}.limits.tokens_per_minute")
            rate = (f"{limits.requests_per_minute:g} requests/minute" if by_requests
                    else f"{limits.tokens_per_minute:g} tokens/minute at {limits.tokens_per_call} per call")
            which = "default limit" if first.default_limits else "limit"
            lines.append(f"{first.role} {first.component}'s {which} of {rate} makes its {new} new calls take at least "
                         f"{_duration(minutes)}; if your account allows more, raise it with {setting}=<n>")
        return lines

    def total_usd(self) -> float | None:
        costs = [r.cost_usd() for r in self.rows]
        return None if any(c is None for c in costs) else math.fsum(c for c in costs if c is not None)

    def render(self) -> str:
        head = f"Plan: {self.faces} faces x {self.sessions} sessions; no provider call was made."
        lines = [head, f"{'role':<22} {'component':<18} {'model':<28} {'calls':>7} {'cached':>7} {'new':>7} "
                       f"{'est. USD':>10}  time (rate limits)"]
        minutes = self.minutes()
        for row in self.rows:
            cost = row.cost_usd()
            usd = "local" if not row.hosted else "unknown" if cost is None else f"{cost:.2f}"
            time = _duration(minutes[row.limits.provider_key]) if row.hosted else "-"
            lines.append(f"{row.role:<22} {row.component:<18} {row.model:<28} {row.calls:>7} {row.cached:>7} "
                         f"{row.new:>7} {usd:>10}  {time}")
        total = self.total_usd()
        unknown = [f"{r.role} {r.component}" for r in self.rows if r.cost_usd() is None]
        known = math.fsum(c for r in self.rows if (c := r.cost_usd()) is not None)
        lines.append(f"Estimated cost of the new calls: ${total:.2f}" if total is not None else
                     f"Estimated cost of the new calls: ${known:.2f} and the unknown cost of {', '.join(unknown)} "
                     "(no usage per call known yet: a first run of a few faces measures it)")
        lines += [f"  {r.role} {r.component}: usage per call {r.usage_source}; prices as of "
                  f"{(r.prices or {}).get('as_of', '?')}" for r in self.rows if r.hosted]
        lines += [f"Warning: {w}" for w in self.warnings()]
        lines += [f"Note: {n}" for n in self.notes]
        return "\n".join(lines)


def _by_provider(rows: Iterable[Calls]) -> dict[str, list[Calls]]:
    out: dict[str, list[Calls]] = {}
    for row in rows:
        if row.hosted:
            out.setdefault(row.limits.provider_key, []).append(row)
    return out


def _duration(minutes: float) -> str:
    return f"{minutes * 60:.0f} s" if minutes < 1 else f"{minutes:.1f} min" if minutes < 90 else f"{minutes / 60:.1f} h"


# -- counting -------------------------------------------------------------------------------


def _component(role: str, name: str, description: Mapping[str, Any], obj: Any, setting: str, fp: str,
               ledger: LedgerView, table: str, column: str) -> Calls:
    limits = getattr(obj, "limits", None)
    limits = limits if getattr(limits, "endpoint", "") else None  # a local model's limits pace a machine, not a bill
    row = Calls(role, name, str(description.get("model") or description.get("version") or "-"), setting, fp,
                limits=limits, prices=getattr(obj, "prices", None), default_limits=_default_limits(obj, limits))
    measured, n = ledger.usage(table, column, fp)
    declared = usage_per_call(obj)
    if n:
        row.usage, row.usage_source = measured, f"measured on {n} calls in this workspace"
    elif declared:
        row.usage, row.usage_source = dict(declared), "as the plugin declares it"
    else:
        row.usage_source = "unknown"
    return row


def _default_limits(obj: Any, limits: Any) -> bool:
    """Whether the rate limits are those the component's factory defaults to (its ``limits`` parameter)."""
    try:
        default = parameter_defaults(type(obj)).get("limits")
    except (TypeError, ValueError):  # no readable parameters
        return False
    return isinstance(default, Mapping) and limits is not None and all(
        default.get(k) == getattr(limits, k) for k in ("requests_per_minute", "tokens_per_minute", "tokens_per_call"))


def _judges(exp: Any, ledger: LedgerView) -> list[Calls]:
    """One row per judge, or per member of a panel, keyed as the run's judge services key their answers."""
    if "judge" not in exp.components:
        return []
    judge, info = exp.components["judge"], exp.info.components["judge"]
    if isinstance(judge, JudgePanel):
        rows = []
        for label, member in judge.members.items():
            identity = {k: v for k, v in judge.descriptions[label].items() if k not in ("provider", "provider_version")}
            rows.append(_component(f"judge member {label}", str(identity.get("name")), identity, member,
                                   f"judge.params.members.{label}.params", fingerprint(portable(identity)), ledger,
                                   "judgments", "judge_fp"))
        return rows
    identity = {"name": info.name, **info.description}
    return [_component("judge", info.name, info.description, judge, "judge.params", fingerprint(portable(identity)),
                       ledger, "judgments", "judge_fp")]


def _faces_and_sessions(exp: Any) -> tuple[list[Any], Sequence[Any], Any]:
    """The faces and sessions the run selects, and its item filter (``run.sample``), as the run draws them."""
    run = exp.conf.run
    built = BuiltConditions(exp.conditions.conditions, {})  # conditions' own judges are not asked by the plan
    plan = ConditionPlan(built, SimpleNamespace(service=None), ledger=None, store=None, executors=None,
                         retry=frozenset(), parse_attempts=1, seed=run.seed, sample=run.sample)
    sessions = plan.sessions(exp.testset.sessions[: run.max_sessions])
    faces = list(select_faces(plan.faces(islice(exp.components["dataset"].faces(), run.max_faces)), run.shard))
    return faces, sessions, plan.selects()


def _file_hash(path: Path) -> str | None:
    try:
        return content_hash(Path(path).read_bytes())
    except OSError:
        return None


def plan_run(exp: Any) -> RunPlan:
    """The plan of a built experiment (no provider call, nothing written)."""
    conf, info = exp.conf, exp.info
    ledger = LedgerView(info.workspace / "ledger.sqlite")
    try:
        return _plan(exp, conf, info, ledger)
    finally:
        ledger.close()


def _plan(exp: Any, conf: Any, info: Any, ledger: LedgerView) -> RunPlan:
    editor_identity = {"name": conf.editor.name, **info.components["editor"].description}
    editor = _component("editor", conf.editor.name, info.components["editor"].description, exp.components["editor"],
                        "editor.params", fingerprint(portable(editor_identity)), ledger, "edits", "editor_fp")
    judges = _judges(exp, ledger)
    retry = frozenset(Outcome(o) for o in conf.run.retry_outcomes)
    faces, sessions, selects = _faces_and_sessions(exp)
    notes = ["faces that admission excludes (no face found, unreadable) make no calls; every face is counted",
             "answers re-asked because they did not parse and retried attempts are not counted"]
    first_base = None
    for face in faces:
        base = _file_hash(face.image)
        if base is None:
            continue  # unreadable: excluded at admission
        first_base = first_base or base
        references = [h for h in map(_file_hash, face.references) if h] or [base]
        for session in sessions:
            if selects is not None and not selects(face, session):
                continue
            hashes = _edit_chain(editor, ledger, retry, conf.run.seed, base, face, session)
            if hashes is not None and judges:
                _count_questions(judges, ledger, retry, exp.asked_judge_metrics, hashes, session, references, face,
                                 conf.run.seed)
    if judges and first_base is not None:
        _count_anchors(judges, ledger, retry, first_base, faces[0].image)
    if any(s.condition != BASELINE for s in sessions) or any(st.inputs for s in sessions for st in s.steps):
        notes.append("calls under a prompt condition other than the baseline, or of steps with further input "
                     "images, are not looked up in the ledger: each counts as new; the texts a condition has a "
                     "judge write (one per face) are not counted")
    return RunPlan(len(faces), len(sessions), [editor, *judges], notes)


def _edit_chain(editor: Calls, ledger: LedgerView, retry: frozenset[Outcome], seed: int, base: str, face: Any,
                session: Any) -> list[str] | None:
    """Count the session's edits; the hashes I_0..I_K (placeholders where not yet made), or None when a step
    would not succeed (the session is not judged)."""
    hashes = [base]
    known = True
    for step in session.steps:
        editor.calls += 1
        row = None
        if known and session.condition == BASELINE and not step.inputs:
            row = ledger.edit(edit_key(editor.fp, hashes[-1], step.instruction,
                                       step_seed(seed, base, session.session_id, step.k)))
        if row is not None and row[0] not in retry:
            editor.cached += 1
            if row[0] is not Outcome.OK or not row[1]:
                return None  # the run stops the session here: no further edit, no judge
            hashes.append(row[1])
            continue
        known = False
        hashes.append(f"planned:{face.face_id}/{session.session_id}@{session.condition}/{step.k}")
    return hashes


def _count_questions(judges: list[Calls], ledger: LedgerView, retry: frozenset[Outcome], metrics: Sequence[Any],
                     hashes: list[str], session: Any, references: list[str], face: Any, seed: int) -> None:
    for metric in metrics:
        for question in metric.questions(hashes, session, references, None, face=face):
            if question.skip_reason:
                continue  # not asked: recorded as skipped
            prompt = metric.template.render(**question.fields)
            labels = tuple(question.labels) if any(question.labels) else ()
            for judge in judges:
                key = judgment_key(judge.fp, metric.template, prompt, question.images, seed, labels)
                _count_once(judge, ledger, retry, key, planned=any(h.startswith("planned:") for h in question.images))


def _count_once(judge: Calls, ledger: LedgerView, retry: frozenset[Outcome], key: str, *, planned: bool) -> None:
    if key in judge.keys:
        return  # an identical question: one call serves both
    judge.keys.add(key)
    judge.calls += 1
    if not planned and (found := ledger.judgment(key)) is not None and found not in retry:
        judge.cached += 1


def _count_anchors(judges: list[Calls], ledger: LedgerView, retry: frozenset[Outcome], base: str,
                   image: Path) -> None:
    """The judge's sanity anchors on the first face: asked afresh when the run asks anything new, else from the
    ledger (faceedit_bench/scoring/judge/anchors.py)."""
    import numpy as np

    from faceedit_bench.scoring.judge.anchors import ANCHORS
    from faceedit_bench.scoring.judge.prompts import SC_TEMPLATE
    from faceedit_bench.storage.images import decode_rgb, encode_png

    fresh = any(j.new for j in judges)
    rgb = decode_rgb(Path(image).read_bytes(), label="anchor base image")
    for anchor in ANCHORS:
        edited = content_hash(encode_png(np.ascontiguousarray(anchor.make(rgb))))
        prompt = SC_TEMPLATE.render(instruction=anchor.instruction)
        for judge in judges:
            judge.calls += 1
            found = None if fresh else ledger.judgment(judgment_key(judge.fp, SC_TEMPLATE, prompt, [base, edited], 0))
            judge.cached += found is not None and found not in retry


# -- the command ----------------------------------------------------------------------------------

def print_plan(experiment: Any) -> None:
    """Print the plan of the experiment a dry run built (None: a sweep, or a config only Hydra's run resolves)."""
    if experiment is None:
        raise ConfigError("a plan is of one run: give one run's overrides (no -m sweep), e.g. faceedit-bench plan "
                          "editor=nano_banana dataset=sample run.max_faces=8")
    print(plan_run(experiment).render())
