"""faceedit-bench-eyewear: do edits put glasses on faces? One judge metric (``glasses``), one report section
(``eyewear``) and one preset (``experiment=eyewear``), registered through faceedit_bench's hooks."""

from faceedit_bench.api import hookimpl
from faceedit_bench_eyewear.metric import GLASSES
from faceedit_bench_eyewear.section import EYEWEAR


@hookimpl
def faceedit_register_judge_metrics(register):
    register("glasses", GLASSES, description="does the person wear glasses after each step?")


@hookimpl
def faceedit_register_sections(register):
    register("eyewear", EYEWEAR, description="the share of sessions that end up wearing glasses")


@hookimpl
def faceedit_config_searchpath():
    # conf/experiment/eyewear.yaml: `python -m faceedit_bench experiment=eyewear` composes once installed.
    return ["pkg://faceedit_bench_eyewear.conf"]
