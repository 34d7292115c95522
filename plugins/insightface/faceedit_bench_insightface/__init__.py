"""faceedit-bench-insightface: the paper's FSS embedder (insightface buffalo_l, ArcFace R50).

Hook implementations only; the logic lives in :mod:`faceedit_bench_insightface.embedder`,
which is imported lazily when the embedder is selected.
"""

from __future__ import annotations

from faceedit_bench.api import hookimpl

__version__ = "0.1.0"


@hookimpl
def faceedit_register_embedders(register):
    register(
        "insightface",
        "faceedit_bench_insightface.embedder:InsightFaceEmbedder",
        description="insightface buffalo_l (SCRFD det_10g + ArcFace w600k_r50, 512-d) from a local "
        "model directory; similarity = cosine, the paper's FSS scale",
    )


@hookimpl
def faceedit_config_searchpath():
    return ["pkg://faceedit_bench_insightface.conf"]
