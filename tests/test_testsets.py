"""The four frozen test sets obey METHODOLOGY §2.4/§8.3/§8.4 and load, hash and validate."""

from __future__ import annotations

import json
import re
from importlib import resources

import pluggy
import pytest

from faceedit_bench.plugin import hookspecs
from faceedit_bench.plugin.registry import ComponentTable, Register
from faceedit_bench.records import Session, Step, TestSet
from faceedit_bench.taxonomy import Taxonomy
from faceedit_bench.testsets import (
    BUILTIN_NAMES,
    TESTSET_NAMES,
    TestSetError,
    describe_testset,
    frozen_content,
    frozen_matches_generator,
    load_testset,
    regenerate,
)
from faceedit_bench.testsets.generator import generate, instruction_for, render

EXPECTED = {  # §2.4: pool axis (None: all 169) and number of sessions
    "hair": ("Hair", 10),
    "accessories": ("Accessories", 10),
    "pose": ("Pose", 5),
    "multi_axis": (None, 10),
}
VERBS = {  # §8.3 rule 2: allowed opening words per sub-axis
    "hair-color": ("make the person's hair", "change the person's hair", "dye the person's hair"),
    "hair-style": ("give the person ",),
    "hair-type": ("give the person ",),
    "beard": ("give the person ", "add ", "make the person", "remove the person's facial hair", "shave off"),
    "mustache": ("give the person ", "add "),
    "hats": ("put ", "add "),
    "glasses": ("put ", "add "),
    "head position": ("make the person look", "make the person face", "turn the person's"),
}


@pytest.fixture(scope="module")
def tax():
    return Taxonomy.builtin()


@pytest.fixture(scope="module")
def sets():
    return {n: load_testset(n) for n in TESTSET_NAMES}


def all_sessions(sets):
    return [s for ts in sets.values() for s in ts.sessions]


def test_shape(sets):
    assert TESTSET_NAMES == ("hair", "accessories", "pose", "multi_axis")
    assert sum(len(ts.sessions) for ts in sets.values()) == 35
    for name, ts in sets.items():
        assert isinstance(ts, TestSet) and ts.name == name and ts.version == "1.0.0"
        assert ts.reconstruction and "RECONSTRUCTION" in ts.description
        assert len(ts.sessions) == EXPECTED[name][1]
        for i, s in enumerate(ts.sessions, start=1):
            assert isinstance(s, Session) and s.session_id == f"{name}-{i:02d}" and s.test_set == name
            assert [st.k for st in s.steps] == [1, 2, 3, 4]
            assert all(isinstance(st, Step) for st in s.steps)
    assert sum(len(s.steps) for s in all_sessions(sets)) == 140


def test_steps_agree_with_taxonomy_and_pool(sets, tax):
    for name, ts in sets.items():
        pool_axis = EXPECTED[name][0]
        for s in ts.sessions:
            for st in s.steps:
                assert tuple(tax.entry(st.attribute)) == (st.attribute, st.category, st.sub_axis, st.axis)
                assert pool_axis is None or st.axis == pool_axis


def test_session_rules(sets):
    for s in all_sessions(sets):
        cats = [st.category for st in s.steps]
        assert all(a != b for a, b in zip(cats, cats[1:])), s.session_id  # no consecutive category
        assert len({st.attribute for st in s.steps}) == 4, s.session_id  # no attribute repeats
        # Our per-sub-axis reading of the "visible change" rule (see generator).
        for k, st in enumerate(s.steps):
            earlier = [p.category for p in s.steps[:k] if p.sub_axis == st.sub_axis]
            assert not earlier or earlier[-1] != st.category, s.session_id


def test_test_set_specific_rules(sets, tax):
    for s in sets["multi_axis"].sessions:
        assert len({st.axis for st in s.steps}) >= 2, s.session_id
    for s in sets["hair"].sessions:
        assert len({st.sub_axis for st in s.steps}) >= 2, s.session_id
    pose = sets["pose"].sessions
    for s in pose:
        assert {st.category for st in s.steps} == set(tax.categories("head position")), s.session_id
    sequences = [tuple(st.attribute for st in s.steps) for s in pose]
    assert len(set(sequences)) == 5
    # 20 pose steps over 18 phrasings: every phrasing is used before any is reused.
    assert len({a for seq in sequences for a in seq}) == 18
    for ts in sets.values():  # no two sessions of a set are identical
        assert len({tuple(st.attribute for st in s.steps) for s in ts.sessions}) == len(ts.sessions)


def test_instructions_follow_verb_rules(sets):
    for s in all_sessions(sets):
        for st in s.steps:
            text = st.instruction
            assert text == text.strip() and "\n" not in text and "." not in text, text  # one sentence
            assert "the person" in text, text
            assert text.startswith(VERBS[st.sub_axis]), (st.sub_axis, text)


def test_every_attribute_has_a_natural_instruction(tax):
    for e in tax.attributes():
        text = instruction_for(e, 0)
        assert text.startswith(VERBS[e.sub_axis]), text
        assert "  " not in text and not re.search(r"\b(a|an) (a|an)\b", text), text
        if e.sub_axis == "hair-color":
            assert e.attribute.removesuffix(" hair") in text
        elif e.sub_axis not in ("head position",) and e.category != "clean shaven":
            assert e.attribute in text, text
        for i in (1, 2):  # alternative verbs keep the attribute too
            assert instruction_for(e, i).startswith(VERBS[e.sub_axis])


@pytest.mark.parametrize(
    ("attribute", "index", "expected"),
    [
        ("crimson red hair", 0, "make the person's hair color crimson red"),
        ("ruby red hair", 1, "change the person's hair color to ruby red"),
        ("A-line bob", 0, "give the person an A-line bob"),
        ("cornrows", 0, "give the person cornrows"),
        ("beach waves", 0, "give the person beach waves"),
        ("five o'clock shadow", 0, "give the person a five o'clock shadow"),
        ("mutton chops", 1, "add mutton chops to the person's face"),
        ("clean shaven face", 0, "make the person clean shaven"),
        ("freshly shaved face", 2, "remove the person's facial hair for a freshly shaved face"),
        ("stetson hat", 0, "put a stetson hat on the person"),
        ("artist beret", 1, "add an artist beret to the person's head"),
        ("shades", 0, "put shades on the person"),
        ("round eyeglasses", 1, "add a pair of round eyeglasses to the person's face"),
        ("look left", 0, "make the person look left"),
        ("head turned right", 0, "turn the person's head to the right"),
        ("frontal view", 0, "turn the person's head to a frontal view"),
        ("leftward gaze", 0, "turn the person's gaze leftward"),
        ("facing the camera", 0, "make the person face the camera"),
    ],
)
def test_instruction_examples(tax, attribute, index, expected):
    assert instruction_for(tax.entry(attribute), index) == expected


def test_clean_shaven_does_not_undo_an_earlier_mustache(tax):
    mustache = tax.entry("handlebar mustache")
    text = instruction_for(tax.entry("freshly shaved face"), 2, [mustache])
    assert "facial hair" not in text and "beard" in text
    assert instruction_for(tax.entry("clean shaven face"), 0, [mustache]) != "make the person clean shaven"


def test_frozen_files_match_generator(tax):
    for name in TESTSET_NAMES:
        assert frozen_matches_generator(name), name
        content = frozen_content(name)
        assert content == regenerate(name) == generate(name, seed=0)
        assert content["generator"] == {"name": "template", "version": "1", "seed": 0}
        ref = {"name": tax.name, "version": tax.version, "content_hash": tax.content_hash}
        assert content["taxonomy"] == ref
        text = (resources.files("faceedit_bench") / "data" / "testsets" / f"{name}.json").read_text("utf-8")
        assert text == render(content)  # pretty-printed in the generator's key order


def test_generator_is_seeded():
    assert generate("hair", seed=0) == generate("hair", seed=0)
    assert generate("hair", seed=1)["sessions"] != generate("hair", seed=0)["sessions"]
    assert generate("pose", seed=0)["sessions"] != generate("hair", seed=0)["sessions"]


def test_frozen_check_detects_a_changed_file(monkeypatch):
    import faceedit_bench.testsets as mod

    original = mod.frozen_content

    def edited(name):
        data = original(name)
        data["sessions"][0]["steps"][0]["instruction"] += " please"
        return data

    monkeypatch.setattr(mod, "frozen_content", edited)
    assert not mod.frozen_matches_generator("hair")


# -- content hash, user files, errors -------------------------------------------------------


def _write(path, data, indent=2):
    path.write_text(json.dumps(data, indent=indent), encoding="utf-8")
    return path


def test_content_hash_ignores_whitespace_not_content(tmp_path, sets):
    data = frozen_content("accessories")
    same = load_testset(_write(tmp_path / "a.json", data, indent=None))
    assert same.content_hash == sets["accessories"].content_hash
    data["sessions"][3]["steps"][2]["instruction"] = data["sessions"][3]["steps"][2]["instruction"] + " now"
    changed = load_testset(_write(tmp_path / "b.json", data))
    assert changed.content_hash != sets["accessories"].content_hash
    assert len({ts.content_hash for ts in sets.values()}) == 4


def test_user_testset_loads(tmp_path, tax):
    data = {
        "name": "my_set",
        "version": "0.1",
        "taxonomy": {"name": tax.name, "version": tax.version},
        "sessions": [
            {
                "session_id": "mine-1",
                "test_set": "my_set",
                "steps": [
                    {"k": k, "instruction": f"edit {a}", **tax.entry(a)._asdict()}
                    for k, a in enumerate(["beret", "shades", "look left", "stubble"], start=1)
                ],
            }
        ],
    }
    ts = load_testset(str(_write(tmp_path / "mine.json", data)))
    assert ts.name == "my_set" and not ts.reconstruction
    assert [st.category for st in ts.sessions[0].steps] == ["beret", "sunglasses", "looking left", "stubble"]
    assert "user-defined" in describe_testset(ts)


def _broken(tmp_path, mutate):
    data = frozen_content("hair")
    mutate(data)
    return _write(tmp_path / "broken.json", data)


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d["sessions"][1]["steps"][2].update(category="pixie cut"), r"hair-02.*step 3.*category"),
        (lambda d: d["sessions"][0]["steps"][1].update(k=5), r"hair-01.*step 2.*'k' must be 2"),
        (lambda d: d["sessions"][0]["steps"].pop(), r"exactly 4 steps"),
        (lambda d: d["sessions"][4]["steps"][0].update(attribute="aviator glasses"), r"not an attribute"),
        (lambda d: d["sessions"][0]["steps"][0].pop("instruction"), r"'instruction' must be a non-empty"),
        (lambda d: d["sessions"][2].update(session_id="hair-01"), r"duplicate session_id"),
        (lambda d: d["sessions"][2].update(test_set="pose"), r"test_set is 'pose'"),
        (lambda d: d["taxonomy"].update(version="2.0.0"), r"installed taxonomy"),
        (lambda d: d["taxonomy"].update(content_hash="0" * 64), r"content_hash"),
        (lambda d: d.pop("sessions"), r"sessions"),
    ],
)
def test_broken_user_file_gives_clear_error(tmp_path, mutate, message):
    path = _broken(tmp_path, mutate)
    with pytest.raises(TestSetError, match=message) as info:
        load_testset(path)
    assert str(path) in str(info.value)  # the error names the file


def test_missing_and_invalid_files(tmp_path):
    with pytest.raises(TestSetError, match="neither a builtin name"):
        load_testset("haircut")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(TestSetError, match="bad.json.*not valid JSON"):
        load_testset(bad)
    with pytest.raises(TestSetError):
        regenerate("my_set")


# -- plugin and display ---------------------------------------------------------------------


def test_hook_registers_the_builtin_test_sets_and_a_file_loader(tmp_path):
    from faceedit_bench.builtin import testsets as plugin

    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    pm.register(plugin, name="builtin_testsets")
    table = ComponentTable("testsets")
    pm.hook.faceedit_register_testsets(register=Register(table, "builtin_testsets"))
    assert table.names() == sorted([*BUILTIN_NAMES, "file"])  # paper (a)'s four and paper (b)'s two
    for name in BUILTIN_NAMES:
        reg = table.get(name)
        assert reg.provider == "builtin_testsets" and reg.description
        ts = reg.load()()
        assert isinstance(ts, TestSet) and ts.name == name
        assert reg.load()() is ts  # cached
    own = tmp_path / "mine.json"
    own.write_text(json.dumps(frozen_content("pose")))
    assert table.get("file").load()(path=str(own)).content_hash == table.get("pose").load()().content_hash


def test_describe_mentions_everything(sets):
    for ts in sets.values():
        text = describe_testset(ts)
        assert "RECONSTRUCTION" in text and ts.content_hash in text and ts.taxonomy_version in text
        assert ts.name in text.splitlines()[0] and ts.version in text.splitlines()[0]
        for s in ts.sessions:
            assert s.session_id in text
            for st in s.steps:
                assert f"{st.k}. {st.instruction}  [{st.category} / {st.sub_axis}]" in text
