"""The Face-Edit-Attributes taxonomy: axis > sub-axis > category > attribute.

RECONSTRUCTION (METHODOLOGY §8): paper (a)'s Appendix B list was never published. The
data file ``data/taxonomy/face_edit_attributes.json`` is our reconstruction; it keeps
every structural fact the paper states (§2.3), and this module refuses to load a file
that breaks them (the 3/8/35/169 counts, the per-sub-axis counts of §8.1, the exact
state-dictionary keys, unique attributes).

Categories are the values of the state dictionary (§8.5); attributes are the synonyms
and phrasings that instructions are written from.
"""

from __future__ import annotations

import difflib
import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from types import MappingProxyType
from typing import Any, ClassVar, NamedTuple

from faceedit_bench.errors import FaceEditBenchError
from faceedit_bench.keys import fingerprint

#: Where the builtin taxonomy lives inside the package (read via importlib.resources
#: so it also works from an installed wheel or zip).
DATA_PACKAGE = "faceedit_bench"
DATA_PATH = ("data", "taxonomy", "face_edit_attributes.json")

#: METHODOLOGY §8.1: (axis, #categories, #attributes) per sub-axis, in file order.
EXPECTED_COUNTS: dict[str, tuple[str, int, int]] = {
    "hair-color": ("Hair", 6, 30),
    "hair-style": ("Hair", 6, 29),
    "hair-type": ("Hair", 3, 15),
    "beard": ("Hair", 5, 23),
    "mustache": ("Hair", 4, 14),
    "hats": ("Accessories", 5, 25),
    "glasses": ("Accessories", 3, 15),
    "head position": ("Pose", 3, 18),
}
EXPECTED_AXES = ("Hair", "Accessories", "Pose")
EXPECTED_TOTALS = (3, 8, 35, 169)  # axes, sub-axes, categories, attributes (§2.3)


class TaxonomyError(FaceEditBenchError):
    """The taxonomy file breaks the structure of METHODOLOGY §2.3/§8.1, or a lookup failed."""


@dataclass(frozen=True)
class Category:
    name: str
    attributes: tuple[str, ...]


@dataclass(frozen=True)
class SubAxis:
    key: str  # the state-dictionary key, spelled as in §2.3
    default: str | None  # state value when the feature is absent (beard: "clean shaven")
    nullable: bool  # False: the key should always have a value (hair-color, hair-type, pose)
    categories: tuple[Category, ...]


@dataclass(frozen=True)
class Axis:
    name: str
    sub_axes: tuple[SubAxis, ...]


class AttributeEntry(NamedTuple):
    attribute: str
    category: str
    sub_axis: str
    axis: str


@dataclass(frozen=True, eq=False)
class Taxonomy:
    """A loaded, validated taxonomy. ``content_hash`` identifies the exact file content. :attr:`TESTSETS` names
    the builtin test sets frozen from the builtin taxonomy (``load_testset(name)``), each bound to it."""

    #: The builtin test sets, generated from the builtin taxonomy (:mod:`faceedit_bench.testsets.generator`).
    TESTSETS: ClassVar[tuple[str, ...]] = ("hair", "accessories", "pose", "multi_axis")

    name: str
    version: str
    reconstruction: bool
    note: str
    axes: tuple[Axis, ...]
    state_aliases: Mapping[str, tuple[str, ...]]
    content_hash: str

    @classmethod
    def builtin(cls) -> Taxonomy:
        """The builtin (reconstructed) Face-Edit-Attributes taxonomy, validated and cached."""
        return _builtin()

    # -- lookups -----------------------------------------------------------------------

    def attributes(self, axis: str | None = None, sub_axis: str | None = None) -> list[AttributeEntry]:
        """Every attribute with its category, sub-axis and axis, in file order."""
        if axis is not None and axis not in self.axis_names:
            raise TaxonomyError(f"unknown axis {axis!r}; axes are {', '.join(self.axis_names)}")
        if sub_axis is not None and sub_axis not in self.state_keys:
            raise TaxonomyError(f"unknown sub-axis {sub_axis!r}; sub-axes are {', '.join(self.state_keys)}")
        return [
            e
            for e in self._entries
            if (axis is None or e.axis == axis) and (sub_axis is None or e.sub_axis == sub_axis)
        ]

    def entry(self, attribute: str) -> AttributeEntry:
        try:
            return self._by_attribute[attribute]
        except KeyError:
            near = difflib.get_close_matches(attribute, list(self._by_attribute), n=3, cutoff=0.6)
            hint = f" Did you mean {' or '.join(repr(n) for n in near)}?" if near else ""
            msg = f"{attribute!r} is not an attribute of {self.name} {self.version}.{hint}"
            raise TaxonomyError(msg) from None

    def category_of(self, attribute: str) -> str:
        return self.entry(attribute).category

    @property
    def axis_names(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.axes)

    @property
    def state_keys(self) -> tuple[str, ...]:
        """The 8 state-dictionary keys (sub-axes), in file order."""
        return tuple(s.key for a in self.axes for s in a.sub_axes)

    def sub_axis(self, key: str) -> SubAxis:
        for a in self.axes:
            for s in a.sub_axes:
                if s.key == key:
                    return s
        raise TaxonomyError(f"unknown sub-axis {key!r}; sub-axes are {', '.join(self.state_keys)}")

    def axis_of(self, sub_axis: str) -> str:
        for a in self.axes:
            if any(s.key == sub_axis for s in a.sub_axes):
                return a.name
        raise TaxonomyError(f"unknown sub-axis {sub_axis!r}; sub-axes are {', '.join(self.state_keys)}")

    def categories(self, sub_axis: str | None = None) -> list[str]:
        keys = self.state_keys if sub_axis is None else (self.sub_axis(sub_axis).key,)
        return [c.name for k in keys for c in self.sub_axis(k).categories]

    def vocabulary(self) -> dict[str, list[str]]:
        """Allowed state values per key (the state tracker's vocabulary, §8.5), ``None`` aside."""
        return {k: self.categories(k) for k in self.state_keys}

    def canonical_category(self, value: str) -> str:
        """Map a state alias (e.g. "looking forward") to its category; categories map to themselves."""
        for category, aliases in self.state_aliases.items():
            if value == category or value in aliases:
                return category
        return value

    @functools.cached_property
    def _entries(self) -> tuple[AttributeEntry, ...]:
        return tuple(
            AttributeEntry(attr, c.name, s.key, a.name)
            for a in self.axes
            for s in a.sub_axes
            for c in s.categories
            for attr in c.attributes
        )

    @functools.cached_property
    def _by_attribute(self) -> dict[str, AttributeEntry]:
        return {e.attribute: e for e in self._entries}


# -- parsing and validation ----------------------------------------------------------------


def _strings(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v.strip() for v in value):
        raise TaxonomyError(f"{where} must be a non-empty list of non-empty strings")
    return tuple(value)


def parse_taxonomy(data: Mapping[str, Any], source: str = "<data>") -> Taxonomy:
    """Build and validate a :class:`Taxonomy` from the JSON structure; raise TaxonomyError."""

    def fail(msg: str) -> TaxonomyError:
        return TaxonomyError(f"{source}: {msg}")

    try:
        axes = tuple(
            Axis(
                ax["name"],
                tuple(
                    SubAxis(
                        s["key"],
                        s.get("default"),
                        bool(s.get("nullable", True)),
                        tuple(
                            Category(c["name"], _strings(c["attributes"], f"category {c['name']!r}"))
                            for c in s["categories"]
                        ),
                    )
                    for s in ax["sub_axes"]
                ),
            )
            for ax in data["axes"]
        )
        tax = Taxonomy(
            name=data["name"],
            version=data["version"],
            reconstruction=bool(data.get("reconstruction", False)),
            note=data.get("note", ""),
            axes=axes,
            state_aliases=MappingProxyType(
                {k: _strings(v, f"state alias {k!r}") for k, v in data.get("state_aliases", {}).items()}
            ),
            content_hash=fingerprint(data),
        )
    except (KeyError, TypeError) as exc:
        raise fail(f"malformed taxonomy ({type(exc).__name__}: {exc})") from None
    except TaxonomyError as exc:
        raise fail(str(exc)) from None

    # Structure of §2.3 / §8.1.
    if tax.axis_names != EXPECTED_AXES:
        raise fail(f"axes must be {list(EXPECTED_AXES)}, got {list(tax.axis_names)}")
    if set(tax.state_keys) != set(EXPECTED_COUNTS) or len(tax.state_keys) != len(EXPECTED_COUNTS):
        raise fail(f"sub-axis keys must be exactly {sorted(EXPECTED_COUNTS)}, got {list(tax.state_keys)}")
    for a in tax.axes:
        for s in a.sub_axes:
            axis, n_cat, n_attr = EXPECTED_COUNTS[s.key]
            got = (a.name, len(s.categories), sum(len(c.attributes) for c in s.categories))
            if got != (axis, n_cat, n_attr):
                raise fail(
                    f"sub-axis {s.key!r}: expected axis {axis}, {n_cat} categories, {n_attr} attributes "
                    f"(METHODOLOGY §8.1); got axis {got[0]}, {got[1]} categories, {got[2]} attributes"
                )
    cats = [c for s in EXPECTED_COUNTS for c in tax.categories(s)]
    totals = (len(tax.axes), len(tax.state_keys), len(cats), len(tax._entries))
    if totals != EXPECTED_TOTALS:  # implied by the per-sub-axis check; kept as a guard
        raise fail(f"expected axes/sub-axes/categories/attributes = {EXPECTED_TOTALS}, got {totals}")
    if dup := sorted({c for c in cats if cats.count(c) > 1}):
        raise fail(f"category names must be unique; repeated: {dup}")
    attrs = [e.attribute for e in tax._entries]
    if dup := sorted({a for a in attrs if attrs.count(a) > 1}):
        places = {a: [e.category for e in tax._entries if e.attribute == a] for a in dup}
        raise fail(f"attribute strings must be unique across the taxonomy; repeated: {places}")
    for a in tax.axes:
        for s in a.sub_axes:
            if s.default is not None and s.default not in [c.name for c in s.categories]:
                raise fail(f"sub-axis {s.key!r}: default {s.default!r} is not one of its categories")
    for category, aliases in tax.state_aliases.items():
        if category not in cats:
            raise fail(f"state alias target {category!r} is not a category")
        if clash := [x for x in aliases if x in cats]:
            raise fail(f"state aliases of {category!r} clash with category names: {clash}")
    return tax


@functools.lru_cache(maxsize=1)
def _builtin() -> Taxonomy:
    res = resources.files(DATA_PACKAGE)
    for part in DATA_PATH:
        res = res / part
    return parse_taxonomy(json.loads(res.read_text(encoding="utf-8")), source=str(res))
