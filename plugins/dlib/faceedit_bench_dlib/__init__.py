"""faceedit-bench-dlib: the offline default face embedder (dlib HOG + ResNet 128-d).

Hook implementations only; the logic lives in :mod:`faceedit_bench_dlib.embedder`,
which is imported lazily when the embedder is selected.
"""

from __future__ import annotations

from faceedit_bench.api import hookimpl

__version__ = "0.1.0"


@hookimpl
def faceedit_register_embedders(register):
    register(
        "dlib",
        "faceedit_bench_dlib.embedder:DlibEmbedder",
        description="dlib HOG detector + 5-point landmarks + ResNet 128-d descriptor; "
        "similarity = clip(1 - L2, 0, 1), offline, not comparable with buffalo_l FSS",
    )


@hookimpl
def faceedit_config_searchpath():
    return ["pkg://faceedit_bench_dlib.conf"]
