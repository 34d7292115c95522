"""The reconstructed Face-Edit-Attributes taxonomy keeps every fact of METHODOLOGY §2.3/§8."""

from __future__ import annotations

import copy
import json
from importlib import resources

import pytest

from faceedit_bench.keys import fingerprint as content_hash
from faceedit_bench.taxonomy import Taxonomy, TaxonomyError, parse_taxonomy

SUB_AXIS_COUNTS = {  # §8.1: key -> (axis, categories, attributes)
    "hair-color": ("Hair", 6, 30),
    "hair-style": ("Hair", 6, 29),
    "hair-type": ("Hair", 3, 15),
    "beard": ("Hair", 5, 23),
    "mustache": ("Hair", 4, 14),
    "hats": ("Accessories", 5, 25),
    "glasses": ("Accessories", 3, 15),
    "head position": ("Pose", 3, 18),
}


@pytest.fixture(scope="module")
def tax():
    return Taxonomy.builtin()


@pytest.fixture
def raw():
    res = resources.files("faceedit_bench") / "data" / "taxonomy" / "face_edit_attributes.json"
    return json.loads(res.read_text(encoding="utf-8"))


def test_totals(tax):
    assert tax.name == "face-edit-attributes" and tax.version == "1.0.0" and tax.reconstruction
    assert len(tax.axes) == 3
    assert len(tax.state_keys) == 8
    assert len(tax.categories()) == 35
    assert len(tax.attributes()) == 169
    assert [len(tax.attributes(axis=a)) for a in ("Hair", "Accessories", "Pose")] == [111, 40, 18]
    n_cats = [len({e.category for e in tax.attributes(axis=a)}) for a in ("Hair", "Accessories", "Pose")]
    assert n_cats == [24, 8, 3]


def test_per_sub_axis_counts_and_keys(tax):
    assert set(tax.state_keys) == set(SUB_AXIS_COUNTS)
    for key, (axis, n_cat, n_attr) in SUB_AXIS_COUNTS.items():
        assert tax.axis_of(key) == axis
        assert len(tax.categories(key)) == n_cat, key
        assert len(tax.attributes(sub_axis=key)) == n_attr, key


def test_attributes_and_categories_unique(tax):
    attrs = [e.attribute for e in tax.attributes()]
    assert len(attrs) == len(set(attrs))
    cats = tax.categories()
    assert len(cats) == len(set(cats))


@pytest.mark.parametrize(
    ("attribute", "category", "sub_axis"),
    [
        ("spiked hair", "spiked cut", "hair-style"),
        ("liberty spiked hair", "spiked cut", "hair-style"),
        ("mohawk hair", "spiked cut", "hair-style"),
        ("gelled spiked hair", "spiked cut", "hair-style"),
        ("buzz cut", "buzz cut", "hair-style"),
        ("bob cut", "bob cut", "hair-style"),
        ("crimson red hair", "red hair", "hair-color"),
        ("ruby red hair", "red hair", "hair-color"),
        ("snapback cap", "baseball cap", "hats"),
        ("baseball hat", "baseball cap", "hats"),
        ("stetson hat", "cowboy hat", "hats"),
        ("panama hat", "panama hat", "hats"),
        ("beret", "beret", "hats"),
        ("slouchy beanie hat", "beanie", "hats"),
        ("handlebar mustache", "handlebar mustache", "mustache"),
        ("toothbrush mustache", "toothbrush mustache", "mustache"),
        ("mutton chops", "mutton chops", "beard"),
        ("stubble", "stubble", "beard"),
        ("clean shaven face", "clean shaven", "beard"),
        ("straight hair", "straight hair", "hair-type"),
        ("curly hair", "curly hair", "hair-type"),
        ("look left", "looking left", "head position"),
        ("look right", "looking right", "head position"),
        ("looking straight ahead", "looking straight ahead", "head position"),
        ("looking ahead", "looking straight ahead", "head position"),
        ("frontal view", "looking straight ahead", "head position"),
    ],
)
def test_named_examples_present(tax, attribute, category, sub_axis):
    entry = tax.entry(attribute)
    assert (entry.category, entry.sub_axis) == (category, sub_axis)
    assert tax.category_of(attribute) == category


def test_named_categories_present(tax):
    for cat in ("buzz cut", "bob cut", "spiked cut", "red hair", "blue hair", "clean shaven", "straight hair",
                "curly hair", "handlebar mustache", "mutton chops"):
        assert cat in tax.categories()
    assert tax.categories("head position") == ["looking left", "looking right", "looking straight ahead"]


def test_spiked_cut_has_exactly_the_papers_four(tax):
    assert [e.attribute for e in tax.attributes(sub_axis="hair-style") if e.category == "spiked cut"] == [
        "spiked hair", "liberty spiked hair", "mohawk hair", "gelled spiked hair"]


@pytest.mark.parametrize("word", ["aviator", "cat-eye", "cat eye", "geometric", "browline", "earring",
                                  "looking up", "looking down", "look up", "look down", "upward", "downward",
                                  "makeup", "lipstick", "smil", "jawline", "nose", "necklace"])
def test_exclusions_absent(tax, word):
    strings = [s for e in tax.attributes() for s in (e.attribute, e.category)]
    assert not [s for s in strings if word in s.lower()]


def test_state_vocabulary(tax):
    assert tax.sub_axis("beard").default == "clean shaven"
    for key in ("mustache", "hats", "glasses", "hair-style"):
        assert tax.sub_axis(key).default is None and tax.sub_axis(key).nullable
    for key in ("hair-color", "hair-type"):
        assert not tax.sub_axis(key).nullable
    assert tax.canonical_category("looking forward") == "looking straight ahead"
    assert tax.canonical_category("beret") == "beret"
    assert tax.vocabulary()["glasses"] == ["round glasses", "rectangular glasses", "sunglasses"]


def test_attributes_in_file_order(tax, raw):
    cats = [c for ax in raw["axes"] for s in ax["sub_axes"] for c in s["categories"]]
    from_file = [a for c in cats for a in c["attributes"]]
    assert [e.attribute for e in tax.attributes()] == from_file
    first = tax.attributes()[0]
    assert tuple(first) == ("jet black hair", "black hair", "hair-color", "Hair")


def test_unknown_attribute_suggests(tax):
    with pytest.raises(TaxonomyError, match="crimson red hair"):
        tax.entry("crimson red")
    with pytest.raises(TaxonomyError):
        tax.attributes(axis="Makeup")


def test_content_hash(tax, raw):
    assert tax.content_hash == content_hash(raw) and len(tax.content_hash) == 64
    # Whitespace and key order do not matter; content does.
    assert content_hash(json.loads(json.dumps(raw, indent=7, sort_keys=True))) == tax.content_hash
    raw["axes"][0]["sub_axes"][0]["categories"][0]["attributes"][0] = "pitch black hair"
    assert parse_taxonomy(raw).content_hash != tax.content_hash


def _attrs(raw, key):
    return next(s for ax in raw["axes"] for s in ax["sub_axes"] if s["key"] == key)


def test_validation_rejects_wrong_count(raw):
    _attrs(raw, "glasses")["categories"][0]["attributes"].append("aviator glasses")
    with pytest.raises(TaxonomyError, match="glasses.*15 attributes"):
        parse_taxonomy(raw, source="x.json")


def test_validation_rejects_duplicate_attribute(raw):
    # Same count, but one attribute moved under two categories.
    _attrs(raw, "hats")["categories"][1]["attributes"][0] = "beret"
    with pytest.raises(TaxonomyError, match="unique.*beret"):
        parse_taxonomy(raw)


def test_validation_rejects_misspelt_key(raw):
    _attrs(raw, "head position")["key"] = "head-position"
    with pytest.raises(TaxonomyError, match="sub-axis keys"):
        parse_taxonomy(raw)


def test_validation_rejects_bad_default_and_malformed(raw):
    bad = copy.deepcopy(raw)
    _attrs(bad, "beard")["default"] = "no beard"
    with pytest.raises(TaxonomyError, match="default"):
        parse_taxonomy(bad)
    del raw["axes"][2]["sub_axes"][0]["categories"]
    with pytest.raises(TaxonomyError, match="malformed"):
        parse_taxonomy(raw)


def test_load_is_cached(tax):
    assert Taxonomy.builtin() is tax
