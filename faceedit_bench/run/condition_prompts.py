"""Prompt conditions: the text an editor receives for a step under each named condition.

* ``baseline``: the test set's instruction, unchanged. The edit key is the same as before
  conditions existed.
* ``feature_prompt``: a registered judge template describes the **source image** I_0
  once. The answer is cached in the ledger under the judge's identity, the template's hash and the
  image's hash. Its text (``identity_prompt``) is joined to every step's instruction:

  - ``append_released``: paper (b)'s released code verbatim,
    ``f"{instruction}. {feature}"`` (run_preservation_experiment.py @aae676a), the code that produced
    the paper's published deltas (Table 4). After the 20 diagnostic prompts, which all end with a
    period, that is a doubled period (".. Maintain the person's ..."), kept as the editors saw it.
  - ``append`` (the default): the same order without the doubled period: ``instruction + " " +
    feature`` when the instruction ends in ``.``, ``!`` or ``?``, else ``instruction + ". " + feature``.
  - ``prepend`` (the paper's formula i_feat = M(i, p_feat + p) and its Fig. 3):
    ``feature + " " + instruction``, with a period added after the feature text when it has no final
    punctuation.
* ``rewrite``: a judge template (``instruction_rewrite``) rewrites each (source image,
  instruction). The rewritten text replaces the instruction. It is cached in the same way.

A condition's identity (kind, template name, version and hash, position) is part of its edits'
keys. The seed does not depend on the condition, so the edits of one (face, session, step) under
two conditions differ only in their prompt. The judge metrics are asked about the test set's own
instruction, so both sides of a pair answer the same question.

If the judge's answer is not ``ok`` (refused, api_error, parse_error, failed), the step ends as
``prompt_failed`` and the reason names the judge outcome. It never falls back to the baseline
prompt. The same happens to a text that names a demographic label when the condition says
``flagged: exclude``. Such a step is not stored as an edit: it is worked out again from the cached
judge answer on every run, so a judge answer that is retried later can still succeed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from faceedit_bench.errors import ConfigError
from faceedit_bench.records import AdmittedFace, JudgeAnswer, Outcome, Session, Step
from faceedit_bench.scoring.judge.condition_templates import ConditionTemplate, demographic_labels

BASELINE = "baseline"
JOINING = {
    "append_released": "instruction + '. ' + text, verbatim as paper (b)'s released code",
    "append": "instruction + ' ' + text if the instruction ends in . ! ?, else instruction + '. ' + text",
    "prepend": "text (+ '.' if it has no final . ! ?) + ' ' + instruction",
}
#: Why a composition is used, as the report says next to each delta it produced.
WHY = {
    "append_released": ("paper (b)'s released code composes it this way (f\"{base_prompt}. {identity_suffix}\", "
                        "scripts/experiment/exp2_preservation/*/run_preservation_experiment.py @aae676a), and that "
                        "code produced the published deltas (Table 4); the paper's formula and Fig. 3 prepend"),
    "append": "the released code's order (feature text after the instruction) without its doubled period",
    "prepend": ("the paper's formula i_feat = M(i, p_feat + p) and Fig. 3 prepend; the published deltas come from "
                "the released code, which appends (position: append_released)"),
}


@dataclass(frozen=True)
class Condition:
    name: str
    kind: str
    template: ConditionTemplate | None = None
    position: str | None = None  # feature_prompt: prepend | append
    flagged: str = "keep"  # keep | exclude texts that name a demographic label
    judge: dict[str, Any] | None = None  # a judge of its own ({name, params}); None: the run's judge

    @property
    def identity(self) -> dict[str, Any] | None:
        """What the condition adds to an edit's key (None for baseline: its keys are unchanged)."""
        if self.kind == BASELINE or self.template is None:
            return None
        t = self.template.template
        return {"kind": self.kind, "template": f"{t.name}@{t.version}", "template_hash": t.hash,
                "position": self.position}

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "kind": self.kind}
        if self.template is not None:
            out.update(template=self.template.template.describe(), flagged=self.flagged,
                       judge=self.judge["name"] if self.judge else "the run's judge (of a panel, its primary member)")
        if self.position is not None:
            out.update(position=self.position, joining=JOINING[self.position], why=WHY[self.position])
        return out


def registered_templates(plugins: Any = None) -> dict[str, ConditionTemplate]:
    """The condition templates plugins register (``faceedit_register_condition_templates``), by name."""
    if plugins is None:
        from faceedit_bench.plugin.manager import current_plugins

        plugins = current_plugins()
    table = plugins.registry["condition_templates"]
    found = {name: table.get(name).load() for name in table.entries}
    wrong = sorted(n for n, t in found.items() if not isinstance(t, ConditionTemplate))
    if wrong:
        raise ConfigError(f"condition template(s) {', '.join(wrong)} are not ConditionTemplate objects; the plugins "
                          "that register them need fixing (faceedit-bench plugins names them)")
    return found


def default_template(kind: str, templates: Mapping[str, ConditionTemplate]) -> str | None:
    """A kind's default template: the only one registered for it (None: none, or several to choose from)."""
    fitting = [n for n, t in templates.items() if t.kind == kind]
    return fitting[0] if len(fitting) == 1 else None


def build_conditions(specs: list[dict[str, Any]], *, has_judge: bool,
                     templates: Mapping[str, ConditionTemplate] | None = None) -> list[Condition]:
    """Conditions from the checked ``conditions`` entries (setting_checks.py), with ``templates`` (default: the
    registered ones). An unknown template, or a template of another kind, or a condition that needs a judge in
    a run without one, is a ConfigError."""
    templates = registered_templates() if templates is None else templates
    out = []
    for spec in specs:
        kind = spec["kind"]
        if kind == BASELINE:
            out.append(Condition(BASELINE, BASELINE))
            continue
        fitting = sorted(n for n, t in templates.items() if t.kind == kind)
        name = spec.get("template") or default_template(kind, templates)
        if name is None:
            raise ConfigError(f"condition {spec['name']!r} ({kind}) names no template, and "
                              + (f"several are installed: choose one of {', '.join(fitting)} (template: <name>)."
                                 if fitting else "no plugin registers one: install the protocol that provides it."))
        template = templates.get(name)
        if template is None or template.kind != kind:
            raise ConfigError(f"condition {spec['name']!r}: template {name!r} is not a {kind} template; "
                              f"use one of {', '.join(fitting) or '(none installed)'}.")
        if spec.get("judge") is None and not has_judge:
            raise ConfigError(f"condition {spec['name']!r} ({kind}) asks a judge to write its prompts, and this run "
                              "has none: choose one (e.g. judge=gemini) or give the condition its own "
                              "(judge: {name: gemini, params: {...}}).")
        out.append(Condition(spec["name"], kind, template, spec.get("position"), spec.get("flagged", "keep"),
                             spec.get("judge")))
    return out


def join(position: str, instruction: str, text: str) -> str:
    """The composed prompt (the rule of the module docstring)."""
    instruction, text = instruction.strip(), text.strip()
    if position == "append_released":
        return f"{instruction}. {text}"
    if position == "append":
        return f"{instruction} {text}" if instruction.endswith((".", "!", "?")) else f"{instruction}. {text}"
    return f"{text} {instruction}" if text.endswith((".", "!", "?")) else f"{text}. {instruction}"


@dataclass(frozen=True)
class Composed:
    """The prompt for one step under one condition, or why there is none (``failure``)."""

    prompt: str | None
    identity: dict[str, Any] | None
    failure: str | None = None


@dataclass
class _Tally:
    """Per condition: each distinct judge question's outcome and flags (counted once per question)."""

    outcomes: dict[str, str] = field(default_factory=dict)  # question -> judge outcome
    flagged: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # question -> labels found
    failed_steps: Counter[str] = field(default_factory=Counter)  # why a step got no prompt -> steps


class ConditionPrompts:
    """Writes the prompts of the non-baseline conditions, asking each condition's judge service."""

    def __init__(self, conditions: list[Condition], services: dict[str, Any], seed: int = 0) -> None:
        self.conditions = {c.name: c for c in conditions}
        self.services = services  # condition name -> a JudgeService (or a panel's service)
        self.seed = seed
        self.tallies = {c.name: _Tally() for c in conditions if c.kind != BASELINE}

    async def compose(self, face: AdmittedFace, session: Session, step: Step) -> Composed:
        condition = self.conditions[session.condition]
        if condition.kind == BASELINE or condition.template is None:
            return Composed(step.instruction, None)
        spec, tally = condition.template, self.tallies[condition.name]
        fields = {"instruction": step.instruction} if spec.per_instruction else {}
        answer: JudgeAnswer = await self.services[condition.name].ask(spec.template, [face.base_hash], self.seed,
                                                                        **fields)
        question = f"{face.base_hash}:{step.instruction}" if spec.per_instruction else face.base_hash
        tally.outcomes[question] = answer.outcome.value
        what = f"{condition.kind} ({spec.template.name}@{spec.template.version})"
        if answer.outcome is not Outcome.OK or not answer.value:
            why = f"judge answer {answer.outcome.value}"
            tally.failed_steps[why] += 1
            return Composed(None, condition.identity, f"{what}: {why}: {answer.reason}".rstrip(": "))
        text = spec.text(answer.value)
        labels = demographic_labels(text)
        tally.flagged[question] = labels
        if labels and condition.flagged == "exclude":
            tally.failed_steps["demographic label (flagged: exclude)"] += 1
            named = ", ".join(label for _, label in labels)
            return Composed(None, condition.identity, f"{what}: the text names a demographic label ({named}) and "
                                                      "the condition excludes such texts (flagged: exclude)")
        prompt = text if condition.kind == "rewrite" else join(condition.position or "append", step.instruction, text)
        return Composed(prompt, condition.identity)

    def section(self) -> dict[str, Any]:
        """Per condition: the judge's answers (one per source image, or per (image, instruction)), the
        texts flagged for demographic labels (by attribute and label), and the steps left without a prompt."""
        out = {}
        for name, tally in self.tallies.items():
            by_label: Counter[str] = Counter()
            by_attribute: Counter[str] = Counter()
            for labels in tally.flagged.values():
                by_label.update(f"{a}:{label}" for a, label in labels)
                by_attribute.update({a for a, _ in labels})
            out[name] = {
                "questions": len(tally.outcomes),
                "answers": dict(sorted(Counter(tally.outcomes.values()).items())),
                "flagged_texts": sum(1 for labels in tally.flagged.values() if labels),
                "flagged_by_attribute": dict(sorted(by_attribute.items())),
                "flagged_labels": dict(sorted(by_label.items())),
                "flagged_policy": self.conditions[name].flagged,
                "steps_without_prompt": dict(sorted(tally.failed_steps.items())),
            }
        return out


async def prompt_for(prompts: ConditionPrompts | None, face: AdmittedFace, session: Session,
                     step: Step) -> Composed:
    """The edit stage's one call: the step's prompt under its session's condition."""
    if prompts is None or session.condition == BASELINE:
        return Composed(step.instruction, None)
    return await prompts.compose(face, session, step)


def expand_sessions(sessions: tuple[Session, ...], conditions: list[Condition]) -> tuple[Session, ...]:
    """Every session once per condition (in the order of ``conditions``); one baseline: unchanged."""
    if [c.name for c in conditions] == [BASELINE]:
        return sessions
    return tuple(replace(s, condition=c.name) for c in conditions for s in sessions)


