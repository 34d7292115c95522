"""Seeded template generator for the four test sets.

RECONSTRUCTION (METHODOLOGY §8.3-§8.4): paper (a)'s session list (App. D) and its
Gemini instruction prompt (App. C) were never published. This generator stands in for
both: attributes are drawn with a seeded RNG under the sampling rules of §8.4, and each
instruction is a fixed template following the verb rules of §8.3, so the output is a
pure function of (taxonomy, test-set name, seed). Its output was frozen once into
``data/testsets/*.json``; those files, not this module, define the benchmark.

Run ``python -m faceedit_bench.testsets.generator --check`` to compare the frozen
files with a fresh generation (``--write`` creates missing files, never overwrites
unless ``--force``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from faceedit_bench.records import STEPS_PER_SESSION
from faceedit_bench.storage.atomic import write_text
from faceedit_bench.taxonomy import AttributeEntry, Category, Taxonomy

GENERATOR = {"name": "template", "version": "1"}
DEFAULT_SEED = 0
TESTSET_VERSION = "1.0.0"
MAX_TRIES = 10_000  # per session; the constraints are loose, so this is never reached in practice


@dataclass(frozen=True)
class TestSetSpec:
    __test__ = False

    pool_axis: str | None  # None: all 169 attributes (Multi-Axis)
    n_sessions: int
    description: str


_RECON = (
    " RECONSTRUCTION of paper (a)'s unpublished App. D: sessions drawn by a seeded template "
    "generator (METHODOLOGY §8.3-§8.4), not the authors' sessions."
)

#: METHODOLOGY §2.4: test set -> attribute pool and number of sessions.
SPECS: dict[str, TestSetSpec] = {
    "hair": TestSetSpec("Hair", 10, "Hair-Test: 10 sessions of 4 chained edits from the Hair axis." + _RECON),
    "accessories": TestSetSpec(
        "Accessories",
        10,
        "Accessories-Test: 10 sessions of 4 chained edits from the Accessories axis." + _RECON,
    ),
    "pose": TestSetSpec("Pose", 5, "Pose-Test: 5 sessions of 4 chained head-position edits." + _RECON),
    "multi_axis": TestSetSpec(
        None, 10, "Multi-Axis-Test: 10 sessions of 4 chained edits from all 169 attributes." + _RECON
    ),
}


# -- instructions (§8.3) ---------------------------------------------------------------------

_POSE = {
    "look left": "make the person look left",
    "looking to the left": "make the person look to the left",
    "head turned left": "turn the person's head to the left",
    "leftward gaze": "turn the person's gaze leftward",
    "face turned to the left": "turn the person's face to the left",
    "looking leftward": "make the person look leftward",
    "look right": "make the person look right",
    "looking to the right": "make the person look to the right",
    "head turned right": "turn the person's head to the right",
    "rightward gaze": "turn the person's gaze rightward",
    "face turned to the right": "turn the person's face to the right",
    "looking rightward": "make the person look rightward",
    "looking straight ahead": "make the person look straight ahead",
    "looking ahead": "make the person look ahead",
    "frontal view": "turn the person's head to a frontal view",
    "facing the camera": "make the person face the camera",
    "forward gaze": "turn the person's gaze forward",
    "looking forward": "make the person look forward",
}

_CLEAN_SHAVEN = {
    "clean shaven face": "make the person clean shaven",
    "smooth shaven look": "give the person a smooth shaven look",
    "freshly shaved face": "remove the person's facial hair for a freshly shaved face",
    "beardless face": "make the person's face beardless",
}


def _article(phrase: str) -> str:
    """'a'/'an' before a countable singular phrase, nothing before mass nouns and plurals
    ('spiked hair', 'stubble', 'box braids', 'mutton chops', 'shades')."""
    if phrase.endswith(("hair", "stubble", "s")):
        return phrase
    return ("an " if phrase[0].lower() in "aeiou" else "a ") + phrase


def instruction_for(entry: AttributeEntry, index: int, previous: Sequence[AttributeEntry] = ()) -> str:
    """One imperative sentence for ``entry`` (§8.3 verb rules).

    ``index`` is the attribute's position within its category; it alternates between the
    verbs §8.3 allows so phrasing varies. ``previous`` holds the session's earlier steps:
    when a mustache was added earlier, clean-shaven steps say "beard" rather than "facial
    hair", so they do not undo an earlier edit of another sub-axis (§8.3 rule 4).
    """
    a, key = entry.attribute, entry.sub_axis
    if key == "head position":
        return _POSE[a]
    if key == "hair-color":
        color = a.removesuffix(" hair")
        return (
            f"make the person's hair color {color}",
            f"change the person's hair color to {color}",
            f"dye the person's hair {color}",
        )[index % 3]
    if key in ("hair-style", "hair-type"):
        return f"give the person {_article(a)}"
    if entry.category == "clean shaven":
        if any(p.sub_axis == "mustache" for p in previous):
            return f"shave off the person's beard for {_article(a)}"
        return _CLEAN_SHAVEN[a]
    if key in ("beard", "mustache"):
        # "give"/"add" alternate by position in the category (§8.3 allows both)
        return (f"give the person {_article(a)}", f"add {_article(a)} to the person's face")[index % 2]
    if key == "hats":
        return (f"put {_article(a)} on the person", f"add {_article(a)} to the person's head")[index % 2]
    if key == "glasses":
        return f"put {a} on the person" if index % 2 == 0 else f"add a pair of {a} to the person's face"
    raise ValueError(f"no instruction template for sub-axis {key!r} (attribute {a!r})")


# -- sampling (§8.4) -------------------------------------------------------------------------


def _rng(name: str, seed: int) -> random.Random:
    # One independent stream per test set, derived from the seed by a stable hash.
    digest = hashlib.sha256(f"faceedit_bench/testset/{name}/seed={seed}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def _choice(rng: random.Random, seq: Sequence[AttributeEntry]) -> AttributeEntry:
    # Only Random.random() is guaranteed reproducible across Python versions; choice() is not.
    return seq[min(int(rng.random() * len(seq)), len(seq) - 1)]


def _session_ok(name: str, steps: Sequence[AttributeEntry], n_pose_categories: int) -> bool:
    if name == "multi_axis":
        return len({s.axis for s in steps}) >= 2
    if name == "hair":
        return len({s.sub_axis for s in steps}) >= 2
    if name == "pose":  # "cycle through the categories": all three appear in each session
        return len({s.category for s in steps}) == n_pose_categories
    return True


def _draw_session(
    rng: random.Random, pool: Sequence[AttributeEntry], used_in_set: set[str], prefer_fresh: bool
) -> list[AttributeEntry]:
    steps: list[AttributeEntry] = []
    for _ in range(STEPS_PER_SESSION):
        # §8.4 forbids consecutive steps in one category "so every step asks for a visible
        # change". We apply that reason per sub-axis: a step may not target the category
        # its sub-axis already holds from the session's latest step there (which includes
        # the consecutive case), e.g. no "ash gray" -> beard -> "charcoal gray".
        held = {s.sub_axis: s.category for s in steps}
        taken = {s.attribute for s in steps}
        # Uniform draw conditioned on the constraints == uniform over the eligible set.
        eligible = [e for e in pool if e.attribute not in taken and held.get(e.sub_axis) != e.category]
        if prefer_fresh:  # Pose: vary phrasings across sessions until all 18 are used
            eligible = [e for e in eligible if e.attribute not in used_in_set] or eligible
        steps.append(_choice(rng, eligible))
    return steps


def _category(tax: Taxonomy, name: str) -> Category:
    return next(c for s in tax.state_keys for c in tax.sub_axis(s).categories if c.name == name)


def generate(name: str, seed: int = DEFAULT_SEED, taxonomy: Taxonomy | None = None) -> dict[str, Any]:
    """The test-set file content for ``name`` (a JSON-ready dict, stable key order)."""
    if name not in SPECS:
        raise ValueError(f"unknown test set {name!r}; known: {', '.join(SPECS)}")
    tax = taxonomy or Taxonomy.builtin()
    spec = SPECS[name]
    pool = tax.attributes(axis=spec.pool_axis)
    index = {a: i for c in tax.categories() for i, a in enumerate(_category(tax, c).attributes)}
    n_pose = len(tax.categories("head position"))
    rng = _rng(name, seed)
    used: set[str] = set()
    seen: set[tuple[str, ...]] = set()
    sessions = []
    for i in range(1, spec.n_sessions + 1):
        for _ in range(MAX_TRIES):  # reject whole sessions that break a session-level rule
            steps = _draw_session(rng, pool, used, prefer_fresh=(name == "pose"))
            key = tuple(s.attribute for s in steps)
            if key not in seen and _session_ok(name, steps, n_pose):
                break
        else:  # pragma: no cover - would mean the rules are unsatisfiable for this pool
            raise RuntimeError(f"could not draw session {i} of {name!r} within {MAX_TRIES} tries")
        seen.add(key)
        used.update(key)
        sessions.append(
            {
                "session_id": f"{name}-{i:02d}",
                "test_set": name,
                "steps": [
                    {
                        "k": k,
                        "attribute": e.attribute,
                        "category": e.category,
                        "sub_axis": e.sub_axis,
                        "axis": e.axis,
                        "instruction": instruction_for(e, index[e.attribute], steps[: k - 1]),
                    }
                    for k, e in enumerate(steps, start=1)
                ],
            }
        )
    return {
        "name": name,
        "version": TESTSET_VERSION,
        "taxonomy": {"name": tax.name, "version": tax.version, "content_hash": tax.content_hash},
        "generator": {**GENERATOR, "seed": seed},
        "reconstruction": True,
        "description": SPECS[name].description,
        "sessions": sessions,
    }


def render(content: dict[str, Any]) -> str:
    """The on-disk form of a test-set file: pretty-printed, keys in insertion order."""
    return json.dumps(content, indent=2, ensure_ascii=False) + "\n"


def frozen_dir() -> Path:
    return Path(__file__).resolve().parent.parent / "data" / "testsets"


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="write missing frozen files")
    ap.add_argument("--force", action="store_true", help="with --write: overwrite existing files")
    ap.add_argument("--check", action="store_true", help="compare frozen files with a fresh generation")
    args = ap.parse_args(argv)
    bad = 0
    for name in SPECS:
        path = frozen_dir() / f"{name}.json"
        content = generate(name)
        if args.write and (args.force or not path.exists()):
            write_text(path, render(content))
            print(f"wrote {path}")
        elif args.check or args.write:
            same = path.exists() and json.loads(path.read_text(encoding="utf-8")) == content
            bad += not same
            print(f"{name}: {'matches' if same else 'DIFFERS from'} the generator")
        else:
            print(render(content))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
