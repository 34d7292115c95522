"""Builtin plugin: registers the four frozen test sets of METHODOLOGY §2.4.

The sessions are a RECONSTRUCTION of paper (a)'s unpublished App. D (see
:mod:`faceedit_bench.testsets`); each loader returns the cached, validated TestSet.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING

from faceedit_bench import hookimpl
from faceedit_bench.testsets import BUILTIN_NAMES, load_testset

if TYPE_CHECKING:
    from faceedit_bench.plugin.registry import Register

DESCRIPTIONS = {
    "hair": "Hair-Test: 10 sessions from the Hair axis (reconstruction)",
    "accessories": "Accessories-Test: 10 sessions from hats and glasses (reconstruction)",
    "pose": "Pose-Test: 5 sessions of head-position edits (reconstruction)",
    "multi_axis": "Multi-Axis-Test: 10 sessions from all 169 attributes (reconstruction)",
}


@hookimpl
def faceedit_register_testsets(register: Register) -> None:
    for name in BUILTIN_NAMES:
        # load_testset caches builtin sets, so every call returns the same TestSet.
        register(name, functools.partial(load_testset, name), description=DESCRIPTIONS[name])
    register("file", load_testset_file, description="A frozen test set of your own (JSON in the builtin format)")


def load_testset_file(path: str):  # noqa: ANN201 - returns a TestSet
    """``testset=file testset.params.path=/my/sessions.json``."""
    return load_testset(Path(path).expanduser())
