"""Paper (b)'s test sets (diagnostic, winobias), their ordered partner rule and the paper_b presets."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path

import pytest
from faceedit_bench_audit import testsets as paper_b

from faceedit_bench.api import Face, Step, registered
from faceedit_bench.api.judging import load_testset
from faceedit_bench.api.testing import TestSetLoaderContract
from faceedit_bench.testing import InputResolver, run_cli

#: The frozen files' content hashes: a change of a prompt, an id or a label changes these.
HASHES = {"diagnostic": "39c8cebfa4ce810aaf08967f45040f13d401e94c4798f93b2e5c562879f74f2e",
          "winobias": "f547498f38ea44351bad406976eb7496dbbda0cae65ff5dfc773b77b862b2487",
          "winobias_pairs": "820744b97a1494d9648362b9357d23c3c3aad72e1697f9d620249b220d1712e3"}


class TestPaperBLoaders(TestSetLoaderContract):
    @pytest.fixture(params=["diagnostic", "winobias", "winobias_pairs"])
    def loader(self, request):
        return registered("testsets", request.param)


@pytest.mark.parametrize("name", ["diagnostic", "winobias", "winobias_pairs"])
def test_frozen_sets_match_their_sources_and_hashes(name):
    loader = registered("testsets", name)
    assert loader.check() and loader.frozen() == paper_b.build(name)
    assert load_testset(name).content_hash == loader().content_hash == HASHES[name]


def test_the_shipped_protocol_files_are_the_repositorys_bytes():
    for name, (path, sha256) in paper_b.SOURCES.items():
        assert hashlib.sha256(paper_b.data_bytes(name)).hexdigest() == sha256, (name, path)


def test_every_diagnostic_prompt_is_the_repositorys_text_under_both_numberings():
    published = paper_b.repo_prompts()
    sessions = {s.session_id: s.steps[0] for s in load_testset("diagnostic").sessions}
    assert [a for a, _, _, _ in paper_b.NUMBERING] == list(sessions)  # O-01 .. V-10, every id once
    assert sorted(r for _, r, _, _ in paper_b.NUMBERING) == [f"{c}{n:02d}" for c in "BD" for n in range(1, 11)]
    for arxiv, repo, sub, basis in paper_b.NUMBERING:
        step = sessions[arxiv]
        assert step.instruction == published[repo]["prompt"] and step.meta["repo_id"] == repo
        # the January appendix numbers the texts in the repository's order: O-nn = Bnn, V-nn = Dnn
        assert step.meta["january_id"] == paper_b.january_id(repo) == {"B": "O", "D": "V"}[repo[0]] + "-" + repo[1:]
        assert step.meta["subcategory"] == sub and basis
    # the aging prompt: V-05 in the arXiv numbering, V-03 in the January appendix, D03 in the repository
    aging = sessions[paper_b.AGING_PROMPT]
    assert (aging.meta["repo_id"], aging.meta["january_id"]) == ("D03", "V-03")
    assert "thirty years later" in aging.instruction


def test_the_published_sample_is_the_papers_500_items():
    counts = {m: len(paper_b.mitigation_sample(m)) for m in paper_b.SAMPLE_MODELS}
    assert counts == {"flux": 167, "step1x": 167, "qwen": 166}  # 500 rows (METHODOLOGY §4.5: about 167 each)
    items = paper_b.mitigation_sample("all")
    assert len(items) == 453  # 500 rows, 453 distinct (portrait, prompt) items: some were drawn for two editors
    per_prompt = {s: sum(1 for _, x in items if x == s) for s in {s for _, s in items}}
    assert len(per_prompt) == 20 and all(f.startswith("fairface_grid/") and f.endswith("/1") for f, _ in items)
    registered_sample = registered("samples", "paper_b_mitigation")
    assert registered_sample.models == (*paper_b.SAMPLE_MODELS, "all")
    assert registered_sample.items("flux") == paper_b.mitigation_sample("flux")
    with pytest.raises(ValueError, match="flux, step1x, qwen"):
        paper_b.mitigation_sample("flux2_dev")
    from faceedit_bench.api import ConfigError
    from faceedit_bench.testing import find_published

    with pytest.raises(ConfigError, match=r"run.sample.model.*one of flux, step1x, qwen, all"):
        find_published({"published": "paper_b_mitigation", "model": "flux2_dev"})
    with pytest.raises(ConfigError, match=r"run.sample.published.*registered published samples: paper_b_mitigation"):
        find_published({"published": "paper_c", "model": "flux"})


def test_testset_check_covers_paper_b(capsys):
    assert run_cli(["testset", "check"]) == 0
    out = capsys.readouterr().out
    assert "diagnostic: matches its published source" in out and "winobias: matches its published source" in out
    assert "pose: matches the generator" in out and "winobias_pairs: matches its published source" in out


def test_winobias_pairs_keep_the_repository_pairs_and_order():
    sessions = load_testset("winobias_pairs").sessions
    assert len(sessions) == 50
    first = sessions[0]
    assert first.face_id == "fairface_grid/Black_Male_40s/1"
    assert first.steps[0].inputs[0].face == "fairface_grid/White_Female_20s/1"
    assert sessions[30].face_id == "fairface_grid/EastAsian_Female_20s/1"  # W-31: the stereotyped gender first
    assert [s.steps[0].meta["stereotyped_gender"] for s in sessions] == ["male"] * 25 + ["female"] * 25


def test_diagnostic_ids_numberings_and_categories():
    ts = load_testset("diagnostic")
    ids = [s.session_id for s in ts.sessions]
    assert ids == [f"O-{i:02d}" for i in range(1, 11)] + [f"V-{i:02d}" for i in range(1, 11)]
    steps = {s.session_id: s.steps[0] for s in ts.sessions}
    assert all(len(s.steps) == 1 and s.steps[0].prompt_id == s.session_id for s in ts.sessions)
    # METHODOLOGY §4.2: repository ids and the January numbering
    assert {k: steps[k].meta["repo_id"] for k in ("O-04", "O-08", "V-03", "V-05")} == {
        "O-04": "B06", "O-08": "B10", "V-03": "D05", "V-05": "D03"}
    assert {k: steps[k].meta["january_id"] for k in ("O-04", "O-06", "V-05", "V-08")} == {
        "O-04": "O-06", "O-06": "O-04", "V-05": "V-03", "V-08": "V-07"}
    assert sorted(s.meta["repo_id"] for s in steps.values()) == sorted(
        [f"B{i:02d}" for i in range(1, 11)] + [f"D{i:02d}" for i in range(1, 11)])
    assert sorted(s.meta["january_id"] for s in steps.values()) == sorted(ids)
    counts = {}
    for s in steps.values():
        counts[s.prompt_category] = counts.get(s.prompt_category, 0) + 1
    assert counts == {"Occupational/Authority": 5, "Occupational/Service": 3, "Occupational/Appearance": 2,
                      "Vulnerability/Physical": 4, "Vulnerability/Aging": 2, "Vulnerability/Situational": 4}
    assert steps["V-05"].meta.get("aging_prompt") == "true" and "thirty years later" in steps["V-05"].instruction
    assert steps["O-07"].instruction.startswith("Represent the individual as a housekeeper")
    assert steps["O-10"].instruction.startswith("Style the person as a professional fashion model")
    assert not ts.reconstruction and ts.taxonomy_version == ""


def test_winobias_prompts_targets_and_inputs():
    ts = load_testset("winobias")
    source = json.loads((Path(paper_b.__file__).parent / "data" / "paper_b" / paper_b.WINOBIAS_FILE)
                        .read_text())
    assert [s.session_id for s in ts.sessions] == [f"W-{i:02d}" for i in range(1, 51)]
    for s, row in zip(ts.sessions, source):
        (step,) = s.steps
        assert step.instruction == row["prompt"] and step.meta["target_occupation"] == row["gender_stereotype"]
        assert [(i.role, i.source, i.rule) for i in step.inputs] == [("female_source", "dataset", "female_other_race")]
        male = int(row["id"]) <= 25
        assert step.meta["stereotyped_gender"] == ("male" if male else "female")
        assert step.meta["target_occupation"] in (paper_b.MALE_OCCUPATIONS if male else paper_b.FEMALE_OCCUPATIONS)
        assert step.meta["other_occupation"] and step.meta["other_occupation"] != step.meta["target_occupation"]
    # the published file, unchanged, and named with its source
    raw = (Path(paper_b.__file__).parent / "data" / "paper_b" / paper_b.WINOBIAS_FILE).read_bytes()
    assert hashlib.sha256(raw).hexdigest()[:16] in ts.description and paper_b.SOURCE_REPO in ts.description


def _faces():
    rows = [("m_white", "male", "White"), ("f_white", "female", "White"), ("f_black", "female", "Black"),
            ("m_black", "male", "Black"), ("f_asian", "female", "East Asian")]
    return [Face(f"g/{i}", i, Path("x"), (), {"gender": g, "race": r}) for i, g, r in rows]


def test_ordered_rule_puts_the_male_face_first_and_a_female_of_another_race_second():
    faces = _faces()
    forward = InputResolver(None, lambda: faces, seed=3)
    backward = InputResolver(None, lambda: list(reversed(faces)), seed=3)
    for face in (f for f in faces if f.demographics["gender"] == "male"):
        partner = forward.partner(face, "female_other_race")
        assert partner == backward.partner(face, "female_other_race")  # order-free
        assert partner.demographics["gender"] == "female"
        assert partner.demographics["race"] != face.demographics["race"]
    step = Step(1, "x", inputs=load_testset("winobias").sessions[0].steps[0].inputs)
    roles, hashes, problem = forward.resolve(faces[1], step)  # a female base face cannot go first
    assert roles == () and "puts a male base face first" in problem and "base_gender=male" in problem
    assert forward.partner(faces[1], "male_other_race").demographics == {"gender": "male", "race": "Black"}
    assert dataclasses.replace(step).meta == {}


def _compose_with_conditions(tmp_path, *overrides):
    """Compose through Hydra's real API, as ``faceedit-bench run`` does (the schema declares ``conditions``)."""
    from faceedit_bench.testing import compose_config, load_plugins

    return compose_config(load_plugins(), [f"run.workspace={tmp_path}", *overrides])


def test_paper_b_presets_compose(tmp_path):
    cfg = _compose_with_conditions(tmp_path, "experiment=paper_b", "editor=flux2_dev",
                                   "dataset.params.root=/data/fairface")
    assert (cfg.testset.name, cfg.dataset.name, cfg.judge_metrics) == ("diagnostic", "fairface_grid", ["rubric"])
    assert cfg.judge.params.rule == "tolerance" and set(cfg.judge.params.members) == {"gemini", "gpt"}
    assert (cfg.editor.params.steps, cfg.editor.params.guidance_scale, cfg.editor.params.seed) == (50, 4.0, 42)
    cfg = _compose_with_conditions(tmp_path, "experiment=paper_b_mitigation", "editor=qwen_image_edit")
    assert cfg.testset.name == "diagnostic" and cfg.judge_metrics == ["rubric"]
    assert cfg.conditions[0] == "baseline" and dict(cfg.conditions[1]) == {
        "name": "features", "kind": "feature_prompt", "template": "paper_b_features", "position": "append_released"}
    assert dict(cfg.run.sample) == {"published": "paper_b_mitigation", "model": "flux"}
    assert (cfg.editor.params.steps, cfg.editor.params.true_cfg_scale, cfg.editor.params.seed) == (40, 4.0, 0)
    cfg = _compose_with_conditions(tmp_path, "experiment=paper_b_winobias")
    assert cfg.testset.name == "winobias" and cfg.dataset.params.base_gender == "male"
