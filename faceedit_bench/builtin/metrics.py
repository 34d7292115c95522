"""Builtin identity metrics."""

from __future__ import annotations

from typing import Any

from faceedit_bench import hookimpl
from faceedit_bench.analysis.session_metrics import SessionMetric, drop_fss, overediting_rate, semantic_consistency


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
        ),
        description="Identity loss over a session, in percent (lower is better).",
    )
    register(
        "sc",
        SessionMetric(
            name="sc",
            higher_is_better=True,
            unit="x100",
            description="Semantic consistency: mean over the 4 steps of min(editing success, overediting)/10 from "
                        "the VIEScore-style judge on (I_k-1, I_k, P_k), x100 (METHODOLOGY §2.5, §3).",
            compute=semantic_consistency,
            requires=frozenset({"judge"}),
        ),
        description="Did the edits do what was asked without redrawing the image (higher is better; needs a judge).",
    )
    register(
        "oer",
        SessionMetric(
            name="oer",
            higher_is_better=False,
            unit="x100",
            description="Overediting rate: unrequested sub-axis changes per edit found by the state tracker, x100 "
                        "(METHODOLOGY §2.5; counting rules reconstructed, §8.5).",
            compute=overediting_rate,
            requires=frozenset({"judge"}),
        ),
        description="Unrequested changes per edit, x100 (lower is better; needs a state-tracking judge).",
    )
