"""The garbage collector's pace in a faceedit-bench command's own process.

A command allocates hundreds of thousands of objects it keeps to its end as it imports and composes
(modules, classes, pydantic models, OmegaConf nodes, the SDKs' types). With CPython's default threshold
(a collection every 700 new container objects) the collector ran 281 times in the rerun of a one-face run and
traversed them again and again: 0.09 of its 0.92 s of CPU (measured). With :data:`FIRST_GENERATION`, set by
the command's entry point, it ran 18 times (0.03 s). Cyclic garbage still goes as the run goes on, a few tens
of thousands of allocations later.
"""

from __future__ import annotations

import gc

#: New container objects between two collections of the youngest generation (CPython's default: 700).
FIRST_GENERATION = 50_000


def collect_less_often() -> None:
    """Only for a command's own process (its entry points call it first), never on import: a program that
    imports faceedit_bench keeps its own settings."""
    first, second, third = gc.get_threshold()
    if 0 < first < FIRST_GENERATION:  # 0: the collector is off, and stays so
        gc.set_threshold(FIRST_GENERATION, second, third)
