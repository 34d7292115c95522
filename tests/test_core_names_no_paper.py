"""The generic core names no paper protocol: papers (b) and (c) live in their own packages (plugins/audit,
plugins/creval) and reach the core only through its hooks. A fourth paper is a package too, never an edit of
the core's modules, templates, schemas or presets.

"human" is a paper word only where it names paper (b)'s human evaluation (its ratings, runs, report and
command); the core's judge-human agreement on a labelled set (``analysis.human_labels``, paper (a)'s §8.5) and
people's scores in the agreement tables are generic.
"""

from __future__ import annotations

import re
from pathlib import Path

CORE = Path(__file__).resolve().parent.parent / "faceedit_bench"
CORE_CONF = CORE.parent / "conf"
PAPER_WORDS = re.compile(r"audit|creval|winobias|paper_b|rubric|human[-_ ](evaluation|agreement|ratings?|runs?|report|cli)\b",
                         re.IGNORECASE)
#: The core's own judge-human agreement (a judge against a labelled set), and ImagenHub's published human
#: evaluation that ``faceedit-bench reproduce`` recomputes (its table, files and paths): generic, removed before
#: the search.
GENERIC = re.compile(r"judge[-_ ]human[-_ ]agreement|ImagenHub's human[-_ ](evaluation|ratings)"
                     r"|(eval/|imagenhub_(eval_)?)human_ratings\b", re.IGNORECASE)
SUFFIXES = {".py", ".j2", ".json", ".yaml", ".css", ".md"}


def _mentions(text: str) -> list[str]:
    return sorted({m.group(0).lower() for m in PAPER_WORDS.finditer(GENERIC.sub("", text))})


def test_no_core_module_template_schema_or_preset_names_a_paper():
    found = {}
    for root in (CORE, CORE_CONF):
        for path in sorted(root.rglob("*")):
            if path.suffix in SUFFIXES and "__pycache__" not in path.parts:
                words = _mentions(path.read_text(encoding="utf-8"))
                if words:
                    found[str(path.relative_to(CORE.parent))] = words
    assert found == {}, f"paper names in the generic core (move them into the protocol's package): {found}"


def test_the_check_sees_each_paper_word_and_passes_the_generic_ones():
    assert _mentions("from faceedit_bench.analysis.audit import x") == ["audit"]
    assert _mentions("rule: paper_b") == ["paper_b"]
    assert _mentions("the CREval overall, WinoBias adherence, the rubric") == ["creval", "rubric", "winobias"]
    assert _mentions("the human evaluation; human_ratings.py") == ["human evaluation", "human_ratings"]
    assert _mentions("judge-human agreement on analysis.human_labels; human scores; every human in them") == []
