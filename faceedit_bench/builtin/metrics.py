"""Builtin identity metrics. The judge-based values (sc, oer) are the values of the judge metrics
in :mod:`faceedit_bench.builtin.judge_metrics`."""

from __future__ import annotations

from typing import Any

from faceedit_bench import hookimpl
from faceedit_bench.analysis.session_metrics import SessionMetric, drop_fss


@hookimpl
def faceedit_register_metrics(register: Any) -> None:
    register(
        "drop_fss",
        SessionMetric(
            name="drop_fss",
            higher_is_better=False,
            unit="%",
            description="Mean percent drop of face similarity to the references over the 4 edits (METHODOLOGY §2.5).",
            compute=drop_fss,
            label="Drop_FSS",
        ),
        description="Identity loss over a session, in percent (lower is better).",
    )
