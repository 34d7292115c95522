"""Overedit counting, OER, the matrix and frequent patterns (METHODOLOGY §2.5, §8.5), on hand-computed cases."""

from __future__ import annotations

from fractions import Fraction

import pytest

from faceedit_bench.records import Step
from faceedit_bench.scoring.overediting import (
    Overedit,
    OvereditMatrix,
    StepOveredits,
    frequent_patterns,
    session_oer,
    step_overedits,
)
from faceedit_bench.taxonomy import Taxonomy

F = frozenset
BASE = {  # the paper's example base state (§2.5)
    "hair-color": F({"black hair"}),
    "beard": F({"clean shaven"}),
    "hair-type": F({"straight hair"}),
    "head position": F({"looking straight ahead"}),
    "hair-style": F(),
    "mustache": F(),
    "hats": F(),
    "glasses": F(),
}


def state(**changes):
    s = dict(BASE)
    s.update({k.replace("_", "-").replace("head-position", "head position"): F(v) for k, v in changes.items()})
    return s


def step(k, attribute, category, sub_axis, axis="Hair"):
    return Step(k, f"instruction {k}", attribute, category, sub_axis, axis)


RED = ("hair-color", "red hair")


def test_unchanged_state_has_no_overedits():
    assert step_overedits(BASE, dict(BASE), *RED) == []


def test_single_label_change_is_one_overedit_in_the_new_category():
    after = state(hair_color={"red hair"}, hair_type={"curly hair"})
    assert step_overedits(BASE, after, *RED) == [
        Overedit("hair-type", "red hair", "curly hair", "changed", ("straight hair",), ("curly hair",))
    ]


def test_overlapping_multi_label_sets_are_no_change():
    before = state(hair_type={"straight hair", "wavy hair"})
    after = state(hair_type={"wavy hair", "curly hair"})
    assert step_overedits(before, after, *RED) == []


def test_disjoint_multi_label_sets_are_one_change_in_the_alphabetically_first_new_category():
    before = state(hair_type={"straight hair"})
    after = state(hair_type={"wavy hair", "curly hair"})
    [o] = step_overedits(before, after, *RED)
    assert (o.changed_category, o.kind, o.after) == ("curly hair", "changed", ("curly hair", "wavy hair"))


def test_none_to_category_is_added():
    [o] = step_overedits(BASE, state(mustache={"handlebar mustache"}), "beard", "mutton chops")
    assert (o.sub_axis, o.intended_category, o.changed_category, o.kind) == (
        "mustache", "mutton chops", "handlebar mustache", "added")


def test_category_to_none_counts_the_removed_category():
    before = state(glasses={"sunglasses"})
    [o] = step_overedits(before, BASE, "hats", "beret")
    assert (o.sub_axis, o.changed_category, o.kind, o.before, o.after) == (
        "glasses", "sunglasses", "removed", ("sunglasses",), ())


def test_multi_label_removal_uses_the_alphabetically_first_removed_category():
    before = state(glasses={"sunglasses", "round glasses"})
    [o] = step_overedits(before, BASE, "hats", "beret")
    assert (o.changed_category, o.kind) == ("round glasses", "removed")


def test_changes_of_the_target_sub_axis_are_not_overedits():
    # asked for red, got blue: wrong target value is SC's business, not an overedit
    assert step_overedits(BASE, state(hair_color={"blue hair"}), *RED) == []
    # target sub-axis removed entirely: still not an overedit
    assert step_overedits(BASE, state(hair_color=set()), *RED) == []


def test_several_keys_changing_in_one_step_count_one_each():
    after = state(hair_color={"red hair"}, beard={"stubble"}, hats={"beanie"}, head_position={"looking left"})
    found = step_overedits(BASE, after, *RED)
    assert [(o.sub_axis, o.kind) for o in found] == [
        ("beard", "changed"), ("head position", "changed"), ("hats", "added")]


def test_bad_states_are_refused_with_a_clear_error():
    with pytest.raises(ValueError, match="same keys"):
        step_overedits(BASE, {k: v for k, v in BASE.items() if k != "hats"}, *RED)
    with pytest.raises(ValueError, match="not a state key"):
        step_overedits(BASE, BASE, "hair color", "red hair")
    with pytest.raises(TypeError, match="set of categories"):
        step_overedits(BASE, {**BASE, "hats": "beanie"}, *RED)


SESSION = (
    step(1, "crimson red hair", "red hair", "hair-color"),
    step(2, "mutton chops", "mutton chops", "beard"),
    step(3, "beret", "beret", "hats", "Accessories"),
    step(4, "look left", "looking left", "head position", "Pose"),
)


def test_session_with_two_overedits_has_oer_one_half():
    s1 = state(hair_color={"red hair"})
    s2 = state(hair_color={"red hair"}, beard={"mutton chops"}, mustache={"handlebar mustache"})  # overedit 1
    s3 = state(hair_color={"red hair"}, beard={"mutton chops"}, mustache={"handlebar mustache"}, hats={"beret"},
               hair_type={"curly hair"})  # overedit 2
    s4 = dict(s3, **{"head position": F({"looking left"})})
    result = session_oer([BASE, s1, s2, s3, s4], SESSION)
    assert result.defined and result.oer == 0.5 and result.n_overedits == 2
    assert [len(s.overedits) for s in result.steps] == [0, 1, 1, 0]
    assert result.steps[1].overedits[0].changed_category == "handlebar mustache"
    assert result.steps[2].overedits[0].changed_category == "curly hair"


def test_oer_exceeds_one_when_several_keys_change_in_one_step():
    s1 = state(hair_color={"red hair"}, hair_type={"curly hair"}, beard={"stubble"}, hats={"beanie"},
               glasses={"sunglasses"}, head_position={"looking right"})  # 5 overedits in step 1
    s2 = dict(s1, beard=F({"mutton chops"}))
    s3 = dict(s2, hats=F({"beret"}))
    s4 = dict(s3, **{"head position": F({"looking left"})})
    result = session_oer([BASE, s1, s2, s3, s4], SESSION)
    assert result.oer == 1.25 and result.n_overedits == 5


def test_session_with_a_missing_state_is_undefined_not_zero():
    s1 = state(hair_color={"red hair"})
    result = session_oer([BASE, s1, None, s1, None], SESSION)
    assert not result.defined and result.oer is None and result.n_overedits is None
    assert result.steps == () and "I_2, I_4" in result.reason
    with pytest.raises(ValueError, match="one state per image"):
        session_oer([BASE, s1], SESSION)


@pytest.fixture(scope="module")
def categories():
    return Taxonomy.builtin().categories()


def test_matrix_places_counts_in_intended_row_and_changed_column(categories):
    m = OvereditMatrix.from_taxonomy()
    assert m.categories == tuple(categories) and len(categories) == 35
    m.add("red hair", step_overedits(BASE, state(hair_color={"red hair"}, beard={"stubble"}), *RED))
    m.add("red hair", [])  # a clean edit still counts in the row's denominator
    m.add("mutton chops", step_overedits(BASE, state(beard={"mutton chops"}, mustache={"handlebar mustache"},
                                                     hair_type={"wavy hair", "curly hair"}), "beard", "mutton chops"))
    d = m.as_dict()
    r, s = categories.index("red hair"), categories.index("stubble")
    mc = categories.index("mutton chops")
    assert d["matrix"][r][s] == 1 and m.count("red hair", "stubble") == 1
    assert m.count("mutton chops", "handlebar mustache") == 1 and m.count("mutton chops", "curly hair") == 1
    assert m.count("mutton chops", "wavy hair") == 0  # multi-label: one cell only
    assert d["edits"][r] == 2 and d["edits"][mc] == 1
    assert sum(map(sum, d["matrix"])) == 3
    # row sums equal the overedit counts of the intended category
    assert d["overedits"] == [sum(row) for row in d["matrix"]]
    assert d["overedits"][r] == 1 and d["overedits"][mc] == 2


def test_matrix_refuses_unknown_categories_and_mismatched_rows(categories):
    m = OvereditMatrix(categories)
    with pytest.raises(ValueError, match="not a matrix category"):
        m.add("pink hair", [])
    with pytest.raises(ValueError, match="not a matrix category"):
        m.add("red hair", [Overedit("hair-color", "red hair", "other", "changed")])
    with pytest.raises(ValueError, match="belongs to intended category"):
        m.add("red hair", [Overedit("beard", "beret", "stubble", "changed")])
    assert m.as_dict()["edits"] == [0] * 35  # nothing half-counted


def test_matrix_merge_and_round_trip(categories):
    a, b = OvereditMatrix(categories), OvereditMatrix(categories)
    a.add("red hair", [Overedit("beard", "red hair", "stubble", "changed")])
    b.add("red hair", [Overedit("beard", "red hair", "stubble", "changed")])
    b.add("beret", [])
    merged = a.merge(b)
    assert merged.count("red hair", "stubble") == 2
    assert merged.as_dict()["edits"][categories.index("beret")] == 1
    assert a.count("red hair", "stubble") == 1  # inputs untouched
    assert OvereditMatrix.from_dict(merged.as_dict()).as_dict() == merged.as_dict()
    with pytest.raises(ValueError, match="different categories"):
        a.merge(OvereditMatrix(categories[:-1]))


def test_matrix_add_session_skips_undefined_sessions(categories):
    m = OvereditMatrix(categories)
    s1 = state(hair_color={"red hair"}, beard={"stubble"})
    m.add_session(session_oer([BASE, s1, None, None, None], SESSION))
    assert m.as_dict()["edits"] == [0] * 35
    s = [BASE, s1, s1, s1, s1]
    m.add_session(session_oer(s, SESSION))
    assert sum(m.as_dict()["edits"]) == 4 and m.count("red hair", "stubble") == 1


def _edits(attribute, n, with_change, category="handlebar mustache"):
    o = (Overedit("mustache", "mutton chops", category, "added"),)
    return [StepOveredits(1, attribute, "mutton chops", "beard", o if i < with_change else ()) for i in range(n)]


def test_frequent_pattern_threshold_is_inclusive_at_exactly_15_percent():
    at = frequent_patterns(_edits("mutton chops", 100, 15))
    assert at == [{"attribute": "mutton chops", "category": "handlebar mustache", "count": 15, "edits": 100,
                   "share": 0.15}]
    assert frequent_patterns(_edits("mutton chops", 100, 14)) == []
    assert frequent_patterns(_edits("mutton chops", 20, 3)) != []  # 3/20 == 0.15 exactly
    assert frequent_patterns(_edits("mutton chops", 20, 3), threshold=0.2) == []
    assert frequent_patterns(_edits("mutton chops", 3, 1), threshold=Fraction(1, 3)) != []


def test_frequent_patterns_are_per_attribute_and_sorted():
    edits = _edits("mutton chops", 10, 5) + _edits("long mutton chops", 4, 1, "curly hair")
    edits += _edits("bushy mutton chops", 10, 1)  # 10% < 15%
    found = frequent_patterns(edits)
    assert [(p["attribute"], p["category"], p["count"], p["edits"]) for p in found] == [
        ("mutton chops", "handlebar mustache", 5, 10), ("long mutton chops", "curly hair", 1, 4)]
    assert frequent_patterns(edits, min_edits=5) == found[:1]
    with pytest.raises(ValueError, match="threshold"):
        frequent_patterns(edits, threshold=0)
