"""``metrics=[...]``: one list naming what a run reports, e.g. ``metrics=[fss,sc]``.

The identity metrics (``fss``: FSS_k and Drop_FSS, from the embedder) are computed whenever the
dataset's images are faces, so naming them only documents the choice; every other name is a judge
metric, and the list replaces ``judge_metrics``. Without ``metrics`` the run asks ``judge_metrics``.
"""

from __future__ import annotations

from collections.abc import Sequence

from faceedit_bench.errors import ConfigError

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
