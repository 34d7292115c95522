"""How closely verification must reproduce each metric.

A metric computed from the embedder only is deterministic given the same images and the
same embedder version, up to the float32 rounding of the descriptors, which another CPU's kernels
or another build of the same version may change: it must reproduce to that noise. A metric that needs a judge
(registered with ``requires`` containing ``judge``) is re-asked from a hosted model and
varies between calls (PEERS §3.1): its tolerance is the equivalence margin of its means, which are
compared as distributions (:mod:`~faceedit_bench.leaderboard.judged_comparison`). The submission
states its tolerance per metric; the verifier refuses tolerances looser than its caps.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from faceedit_bench.analysis.session_metrics import judge_metric_values

#: Absolute tolerance of embedder-only values, in their unit (% for drop_fss, the similarity for FSS_k).
#: Measured on the sample faces (benchmarks/bench_reproduction.py, docs/submissions.md): descriptors moved by
#: float32 rounding (relative 1e-7) moved drop_fss's statistics by up to 1.9e-6, and by a relative 1e-6
#: (about 8 units in the last place) up to 1.5e-5; 1e-4 admits both, and is 100 times finer than the two
#: decimals a report shows.
EMBEDDER_TOLERANCE = 1e-4
#: Equivalence margin of a judge metric's means, in the metric's unit (x100 scales: 2.5 points): half of
#: the smallest shift a verification must catch (5 points), so the (1 - 2 alpha) interval of an honest
#: re-scoring has room inside it (tests/test_judged_verification.py simulates both).
JUDGE_TOLERANCE = 2.5
#: Absolute tolerance of disparity p-values (permutation tests on reproduced values).
P_VALUE_TOLERANCE = 0.01


def needs_judge(name: str, registered: Mapping[str, Any], has_judge: bool,
                stated: Iterable[str] | None = None) -> bool:
    """Whether metric ``name`` depends on a judge: from its registration's ``requires``, else from the
    ``requires`` the run report states for it (report 1.3); otherwise it is assumed judge-based only
    when a judge ran."""
    metric = registered.get(name)
    requires = getattr(metric, "requires", None)
    if requires is None:
        requires = list(stated or ()) or None
    if requires is None:
        return has_judge
    return "judge" in requires


def default_tolerance(name: str, registered: Mapping[str, Any], has_judge: bool,
                      stated: Iterable[str] | None = None) -> float:
    return JUDGE_TOLERANCE if needs_judge(name, registered, has_judge, stated) else EMBEDDER_TOLERANCE


def registered_metrics(plugins: Any = None) -> dict[str, Any]:
    """Registered session metrics by name (the objects carry ``higher_is_better`` and ``requires``)."""
    if plugins is None:
        from faceedit_bench.plugin.manager import current_plugins

        plugins = current_plugins()
    table = plugins.registry["metrics"]
    out: dict[str, Any] = {}
    for name in table.names():
        try:
            out[name] = table.get(name).load()
        except Exception:  # a clash or a broken plugin: the report's own statement is used instead
            continue
    judge_metrics = plugins.registry["judge_metrics"]
    for name in judge_metrics.names():
        try:
            values = judge_metric_values(judge_metrics.get(name).load())
        except Exception:
            continue
        out.update({v.name: v for v in values if v.name not in out})
    return out
