"""The core's own report parts, registered as report sections through the same hook as every plugin's: what a
launch did and cost (``faceedit_bench.report.launch_sections``). In this order on the page and in the console."""

from __future__ import annotations

from typing import Any

from faceedit_bench import hookimpl

PARTS = {
    "judge_reliability": "the judge's anchors, their drift and its agreement with people",
    "cost": "estimated USD of the run's calls, what this launch spent and the budget",
    "calls": "provider calls by role: attempts, retries, give-ups and rate-limit waits",
    "performance": "how long this launch's edit and score stages took",
    "prompts": "the judge's prompt template of each judge metric",
}


@hookimpl
def faceedit_register_sections(register: Any) -> None:
    # Lazy, like every builtin section: this registration layer imports no report module.
    for name, description in PARTS.items():
        register(name, f"faceedit_bench.report.launch_sections:{name.upper()}", description=description)
