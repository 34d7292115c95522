"""docs/fidelity.md and its data (faceedit_bench/data/fidelity/*.yaml): every listed preset composes to the
documented defaults, the page is the rendering of the data, and a run's "Read first" notes come from them."""

from __future__ import annotations

from pathlib import Path

import pytest
from omegaconf import OmegaConf

from faceedit_bench.report import fidelity

ROOT = Path(__file__).resolve().parent.parent


def test_every_data_file_loads_with_its_presets_and_statuses():
    papers = fidelity.load_all()
    assert {"paper_a", "paper_b", "paper_b_winobias"} <= set(papers)
    for name, paper in papers.items():
        assert paper.presets and paper.elements, name
        assert {e.status for e in paper.elements} <= set(fidelity.STATUSES)
        assert len({e.element for e in paper.elements}) == len(paper.elements), f"{name}: an element twice"


@pytest.mark.parametrize("name", sorted(fidelity.load_all()))
def test_each_preset_composes_to_the_documented_defaults(name, compose):
    """Compose each listed preset as `--cfg job` does; every element with a setting must equal its default in each
    preset that has the setting, and every setting exists in at least one of the file's presets."""
    paper = fidelity.load_all()[name]
    configs = {p: OmegaConf.to_container(compose(f"experiment={p}"), resolve=False) for p in paper.presets}
    for e in paper.elements:
        if e.config is None:
            continue
        found = {p: fidelity.select(c, e.config) for p, c in configs.items()}
        assert any(f for f, _ in found.values()), f"{name}: {e.element}: no preset has {e.config}"
        for preset, (present, value) in found.items():
            if present:
                assert fidelity.matches(e.default, value), (
                    f"{name}: {e.element}: experiment={preset} composes {e.config}={value!r}, the data say "
                    f"{e.default!r}; fix the preset or the data, then regenerate {fidelity.DOC}")


def test_the_page_is_the_rendering_of_the_data():
    page = (ROOT / fidelity.DOC).read_text(encoding="utf-8")
    assert page == fidelity.render_markdown(), (
        f"{fidelity.DOC} is not the rendering of faceedit_bench/data/fidelity/: run "
        f"python -m faceedit_bench.report.fidelity {fidelity.DOC}")


def test_a_data_file_of_another_shape_is_refused_with_its_name():
    with pytest.raises(fidelity.FidelityError, match="creval.yaml.*status"):
        fidelity.parse("paper: x\npresets: [creval]\nelements:\n- {element: a, paper: b, config: null, default: c, "
                       "source: d, status: maybe, effect: null}\n", "creval.yaml")
    new = fidelity.parse('paper: "CREval (paper c)"\npresets: [creval]\nelements:\n- {element: "Answering judge '
                         'model", paper: "gpt-4o", config: judge.params.model, default: "gpt-4o-2024-11-20", '
                         'source: "CREval code", status: same, effect: null}\n', "creval.yaml")
    assert "## CREval (paper c)" in fidelity.render_markdown({"creval": new})


def test_matching_reads_documented_text_as_yaml():
    assert fidelity.matches(0.1, 0.1) and fidelity.matches("0.1", 0.1) and fidelity.matches("null", None)
    assert fidelity.matches(["winobias"], ["winobias"]) and not fidelity.matches("flux", "qwen")
    assert fidelity.select({"conditions": ["baseline", {"position": "prepend"}]}, "conditions.1.position") == (
        True, "prepend")
    assert fidelity.select({"run": {"sample": None}}, "run.sample.model") == (False, None)


def test_the_read_first_notes_list_a_presets_deviations_and_what_the_run_changed(compose):
    config = OmegaConf.to_container(compose("experiment=paper_b"), resolve=True)
    notes = fidelity.preset_notes("paper_b", config)
    assert any(n.startswith("Differs from Paper (b): demographic audit and feature-prompt mitigation "
                            "(docs/fidelity.md): Gemini seed") for n in notes)
    assert not any("Mitigation sample" in n for n in notes)  # an element of the other preset
    assert not any("Differs" in n and "this run's setting" in n for n in notes)
    changed = OmegaConf.to_container(compose("experiment=paper_b", "judge.params.rounding=half_up",
                                             "judge.params.members.gemini.params.temperature=1.0"), resolve=True)
    notes = fidelity.preset_notes("paper_b", changed)
    assert any("this run's setting: Panel rounding: judge.params.rounding=half_up" in n for n in notes)
    assert any("judge.params.members.gemini.params.temperature=1.0 (the paper: 0.1; the preset: 0.1)" in n
               for n in notes)
    assert fidelity.preset_notes(None, config) == [] and fidelity.preset_notes("smoke", config) == []
