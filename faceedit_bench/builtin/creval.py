"""Builtin plugin: the CREval judge metrics (METHODOLOGY §5) with their report sections.

``creval`` answers frozen question sets (``questions=[...]``); ``creval_face`` (an EXTENSION, §5.4)
answers questions written from the taxonomy for taxonomy-bound face sessions.
"""

from __future__ import annotations

import functools
from dataclasses import replace
from typing import Any

from faceedit_bench import hookimpl
from faceedit_bench.analysis.creval_report import CrevalReport
from faceedit_bench.scoring.creval.metric import CREVAL_FACE_METRIC, CREVAL_METRIC

CREVAL = replace(CREVAL_METRIC, report=functools.partial(CrevalReport, "creval"))
CREVAL_FACE = replace(CREVAL_FACE_METRIC, report=functools.partial(CrevalReport, "creval_face", extension=True))


@hookimpl
def faceedit_register_judge_metrics(register: Any) -> None:
    register("creval", CREVAL, description="CREval QA scoring of frozen question sets: IF/VC/VQ, overall "
                                           "0.4/0.4/0.2, x100 (select the sets with questions=[...]).")
    register("creval_face", CREVAL_FACE, description="EXTENSION: CREval QA scoring of taxonomy-bound face steps "
                                                     "with questions from the taxonomy, x100.")
