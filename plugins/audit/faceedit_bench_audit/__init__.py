"""faceedit-bench-audit: paper (b)'s protocol as a plugin package (docs/paper_b.md, plugins/audit/README.md).

It adds, through the public hooks only:

* judge metrics ``rubric`` (the 5-axis rubric, :mod:`.audit.rubric`) and ``winobias`` (:mod:`.winobias.metric`);
* report sections ``audit`` (:mod:`.audit.section`), ``winobias`` and ``winobias_human``
  (:mod:`.winobias.section`), ``human_agreement`` (:mod:`.human.section`);
* the ``paper_b_features`` prompt condition (:mod:`.features`) and the ``paper_b_mitigation`` published sample;
* the dataset ``fairface_grid`` (:mod:`.portraits.dataset`) and the test sets ``diagnostic``, ``winobias``,
  ``winobias_pairs`` (:mod:`.testsets`);
* the commands ``faceedit-bench human`` (:mod:`.human.cli`) and ``faceedit-bench portraits`` (:mod:`.portraits.cli`);
* its presets (``experiment=paper_b``, ``paper_b_mitigation``, ``paper_b_winobias``, ``judge=paper_b_panel`` ...)
  in ``conf/`` and its fidelity tables in ``data/fidelity/``.

Loading this module is cheap: each part is imported when it is used.
"""

from __future__ import annotations

from importlib import resources
from typing import Any

from faceedit_bench.api import hookimpl

_PKG = "faceedit_bench_audit"
TESTSETS = {
    "diagnostic": "paper (b): the 20 diagnostic prompts (O-01..V-10), one edit each",
    "winobias": "paper (b): 50 WinoBias prompts, two input images each (male base face first)",
    "winobias_pairs": "paper (b): 50 WinoBias prompts on the repository's own 50 image pairs (FairFace grid)",
}


@hookimpl
def faceedit_register_judge_metrics(register: Any) -> None:
    # Lazy "module:attribute" targets, as below: a part is imported when a run or a command uses it.
    register("rubric", f"{_PKG}.audit.rubric:RUBRIC_METRIC",
             description="Paper (b)'s 5-axis rubric + aging accuracy on (source, edit), 1-5.")
    register("winobias", f"{_PKG}.winobias.metric:WINOBIAS_METRIC",
             description="WinoBias stereotype adherence of two-person edits (paper (b) §4.7), binomial test vs 0.5.")


@hookimpl
def faceedit_register_sections(register: Any) -> None:
    register("audit", f"{_PKG}.audit.section:AUDIT",
             description="paper (b)'s audit of the rubric: rates, group tables, disparities (analysis.audit)")
    register("winobias", f"{_PKG}.winobias.section:WINOBIAS",
             description="WinoBias stereotype adherence: share, binomial test, undecided bounds")
    register("winobias_human", f"{_PKG}.winobias.section:WINOBIAS_HUMAN",
             description="people's WinoBias annotations (faceedit-bench human winobias)")
    register("human_agreement", f"{_PKG}.human.section:HUMAN_AGREEMENT",
             description="people's ratings of a run's outputs (faceedit-bench human report)")


@hookimpl
def faceedit_register_commands(register: Any) -> None:
    register("human", f"{_PKG}.human.cli:add_parser",
             description="people's ratings and WinoBias annotations of a run: export sheets, report agreement")
    register("portraits", f"{_PKG}.portraits.cli:add_parser",
             description="paper (b)'s FairFace portrait grid: select, show, check and approve its cells")


@hookimpl
def faceedit_register_condition_templates(register: Any) -> None:
    register("paper_b_features", f"{_PKG}.features:FEATURES_CONDITION",
             description="paper (b)'s feature prompt: the judge describes the source portrait's features once")


@hookimpl
def faceedit_register_datasets(register: Any) -> None:
    register("fairface_grid", f"{_PKG}.portraits.dataset:FairFaceGridDataset",
             description="paper (b)'s 84-cell FairFace portrait grid: a frozen selection (manifest) or "
                         "hand-made {Race}_{Gender}_{Age}.jpg files; missing cells reported")


@hookimpl
def faceedit_register_testsets(register: Any) -> None:
    for name, description in TESTSETS.items():
        register(name, f"{_PKG}.testsets:{name.upper()}", description=description)


@hookimpl
def faceedit_register_samples(register: Any) -> None:
    register("paper_b_mitigation", f"{_PKG}.testsets:MITIGATION_SAMPLE",
             description="paper (b)'s 500-item mitigation sample (METHODOLOGY §4.5), per editor or all")


@hookimpl
def faceedit_config_searchpath() -> list[str]:
    return [f"pkg://{_PKG}.conf"]


@hookimpl
def faceedit_fidelity_tables() -> list[Any]:
    folder = resources.files(_PKG) / "data" / "fidelity"
    return [f for f in folder.iterdir() if f.name.endswith(".yaml")]
