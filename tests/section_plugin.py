"""A protocol plugin written against the public API only (faceedit_bench.api and its topic modules): one
report section, ``tally``, that counts every session's step outcomes and states the share of usable edits with
its Wilson interval. tests/test_sections.py registers it and follows it through a run."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from faceedit_bench.api import hookimpl
from faceedit_bench.api.sections import (
    Column,
    ReportSection,
    SectionHtml,
    SectionRun,
    ValueSpec,
    ViewSpec,
    check_number,
    fitted_tables,
    metric_key,
    mostly_missing_warning,
)
from faceedit_bench.api.statistics import Threshold

SCHEMA = {
    "type": "object", "required": ["label", "sessions", "steps", "ok_rate", "measures"],
    "properties": {
        "label": {"type": "string"},
        "sessions": {"type": "integer", "minimum": 0},
        "steps": {"$ref": "#/$defs/tallyCounts"},
        "ok_rate": {"type": "object", "required": ["rate", "ci_low", "ci_high", "n"]},
        "measures": {"type": "object"},
    },
    "$defs": {"tallyCounts": {"type": "object", "additionalProperties": {"type": "integer", "minimum": 0}}},
}
MEASURE = {"label": "OK share", "higher_is_better": True, "unit": "share", "bounds": [0.0, 1.0],
           "description": "Share of edit steps that gave a usable image (Wilson interval)."}


@dataclass
class TallySettings:
    # What the section calls itself on the page and in the console.
    label: str = "tally"
    # Steps shown per row of the console table (at least 1).
    per_row: int = 4

    def __post_init__(self) -> None:
        check_number("analysis.tally.per_row", self.per_row, whole=True, at_least=1)


class TallyCollector:
    def __init__(self, run: SectionRun) -> None:
        self.settings, self.confidence = run.settings, run.confidence
        self.sessions = 0
        self.steps: Counter[str] = Counter()

    def add_session(self, result: Any) -> None:
        self.sessions += 1
        self.steps.update(state.outcome.value for state in result.steps)

    def finish(self) -> dict[str, Any]:
        hits = [1.0 if outcome == "ok" else 0.0 for outcome in self.steps.elements()]
        rate = Threshold(">=", 1).rate(hits, confidence=self.confidence, what="usable edits")
        return {"label": self.settings.label, "sessions": self.sessions, "steps": dict(sorted(self.steps.items())),
                "ok_rate": {k: rate[k] for k in ("rate", "ci_low", "ci_high", "n")}, "measures": {"ok_share": MEASURE}}


def tracking(part: Mapping[str, Any]) -> dict[str, float]:
    out = {metric_key("tally", "steps", outcome): float(n) for outcome, n in part["steps"].items()}
    if part["ok_rate"]["rate"] is not None:
        out[metric_key("tally", "ok_share")] = float(part["ok_rate"]["rate"])
    return out


def console(part: Mapping[str, Any], width: int) -> list[Any]:
    rows = [[outcome, str(n)] for outcome, n in part["steps"].items()]
    return fitted_tables([Column("outcome")], [Column("steps", True)], rows, width,
                         title=f"{part['label']}: {part['sessions']} sessions")


def warnings(part: Mapping[str, Any]) -> list[Any]:
    steps = part["steps"]
    return [mostly_missing_warning("tally_not_ok", "tallied steps", "gave no usable image", sum(steps.values()),
                                   {o: n for o, n in steps.items() if o != "ok"})]


def read_share(part: Mapping[str, Any]) -> dict[str, Any] | None:
    rate = part.get("ok_rate")
    if not isinstance(rate, Mapping):
        return None
    return {"mean": rate.get("rate"), "ci_low": rate.get("ci_low"), "ci_high": rate.get("ci_high"), "n": rate.get("n")}


TALLY = ReportSection(
    name="tally", title="Tally of step outcomes", schema=SCHEMA, collector=TallyCollector, settings=TallySettings,
    tracking=tracking, console=console,
    html=SectionHtml("tally.html.j2", "tests", "data/section_templates", nav="tally"),
    warnings=warnings, record=lambda part: {"ok_rate": part["ok_rate"]},
    views=(ViewSpec("tally", "Tally: usable edits", "The share of edit steps that gave a usable image.",
                    (ValueSpec("ok_share", "tally", read_share),), rank_by="ok_share"),),
    needs_judge=False, description="the share of usable edits, counted by a test plugin")


@hookimpl
def faceedit_register_sections(register: Any) -> None:
    register("tally", TALLY, description="a test plugin's tally of step outcomes")
