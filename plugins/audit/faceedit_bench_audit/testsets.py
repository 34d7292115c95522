"""Paper (b)'s prompt sets as format-2 test sets (METHODOLOGY §4.2, §4.7): ``diagnostic`` and ``winobias``.

Both are frozen in ``data/testsets/{diagnostic,winobias}.json``; :func:`build` writes the same content
from the sources below, so ``faceedit-bench testset check`` proves the frozen files are what they claim.

- ``diagnostic``: the 20 diagnostic prompts, one single-step session each. ``session_id`` and
  ``prompt_id`` are the arXiv v3 ids (O-01..O-10, V-01..V-10); ``meta`` keeps the repository id
  (``repo_id``: B01..B10, D01..D10 of ``data/prompts/i2i_prompts.json``), the January-repo numbering
  (``january_id``), ``category``, ``subcategory`` and the repository's ``hypothesis`` tag. The texts and
  tags are read from that file, shipped unchanged in ``data/paper_b/`` (:data:`SOURCES` names its path and
  sha256); :data:`NUMBERING` maps the ids and says what each arXiv id rests on.
- ``winobias``: the 50 WinoBias prompts of the paper (b) repository's
  ``data/prompts/winobias_prompts_with_stereotype.json`` (= ``winobias_prompts.json`` plus the target
  occupation), shipped unchanged in ``data/paper_b/``. W-01..W-25 target a male-stereotyped occupation
  ("he"), W-26..W-50 a female-stereotyped one ("she"). Each step takes two images at once: the base
  face, which must be male, first, and a female face of another race second (input rule
  ``female_other_race``, :mod:`faceedit_bench.run.inputs`). ``meta`` records the target occupation,
  the stereotyped gender, the other occupation and the repository's own image pairing.
"""

from __future__ import annotations

import csv
import functools
import hashlib
import io
import json
from importlib import resources
from typing import Any

from faceedit_bench.api import TestSet
from faceedit_bench.api.judging import PublishedSample, load_testset

#: Where the published files come from (paper (b)'s repository, the snapshot read).
SOURCE_REPO = "https://github.com/seochan99/refusal-t2i-i2i"
SOURCE_COMMIT = "aae676a480b9b964a8081bf52806c838ff6c9149"
WINOBIAS_FILE = "winobias_prompts_with_stereotype.json"
NAMES = ("diagnostic", "winobias", "winobias_pairs")
VERSION = "1.0.0"

#: Paper (b)'s protocol data shipped in ``data/paper_b/``, byte for byte as in its repository at
#: SOURCE_COMMIT: file name -> (path in the repository, sha256). Read, never retyped; a test checks the hashes.
SOURCES = {
    "i2i_prompts.json": ("data/prompts/i2i_prompts.json",
                         "ef5b05debdb413e40bac0d266ccb98a5eb432d29407f3e22c71f75eab2278c3f"),
    WINOBIAS_FILE: ("data/prompts/winobias_prompts_with_stereotype.json",
                    "9005f9be04179771b2eddd09c9cc75643e88cb24283526875fbac4c6d6c5f679"),
    "exp1_amt_sampled.csv": ("data/amt_sampling/exp1_amt_sampled.csv",
                             "135172b0fda44ee2e6f9dc54e4b6c4cd1cf343c53adebc58d6df1acfaec69e24"),
}

# The two numberings of the 20 diagnostic prompts (METHODOLOGY §4.2): (arXiv v3 id, repository id, subcategory,
# what the arXiv id rests on). The repository id (B01..B10, D01..D10 of data/prompts/i2i_prompts.json) names the
# text; the January appendix of the repository (paper/appendix/ijcai26.tex @aae676a, Tables "O-01 to O-10" and
# "V-01 to V-10") numbers the same texts in the repository's order, O-nn = Bnn and V-nn = Dnn (january_id).
TABLE_8, TABLE_9, TABLES_19_20 = "seed Table 8", "seed Table 9", "seed Tables 19-20"
INFERRED = "inferred from Table 1's theme order"
NUMBERING = (
    ("O-01", "B01", "Authority", TABLE_8), ("O-02", "B02", "Authority", TABLE_8),
    ("O-03", "B03", "Authority", TABLE_8), ("O-04", "B06", "Authority", TABLE_8),
    ("O-05", "B07", "Authority", TABLE_8), ("O-06", "B04", "Service", INFERRED),
    ("O-07", "B05", "Service", TABLES_19_20), ("O-08", "B10", "Service", INFERRED),
    ("O-09", "B08", "Appearance", INFERRED), ("O-10", "B09", "Appearance", TABLES_19_20),
    ("V-01", "D01", "Physical", TABLE_9), ("V-02", "D02", "Physical", TABLE_9),
    ("V-03", "D05", "Physical", TABLE_9), ("V-04", "D08", "Physical", TABLE_9),
    ("V-05", "D03", "Aging", INFERRED), ("V-06", "D04", "Aging", INFERRED),
    ("V-07", "D06", "Situational", INFERRED), ("V-08", "D07", "Situational", INFERRED),
    ("V-09", "D09", "Situational", INFERRED), ("V-10", "D10", "Situational", INFERRED),
)


def january_id(repo_id: str) -> str:
    """The January appendix's id of a repository prompt id: B05 -> O-05, D03 -> V-03."""
    return {"B": "O", "D": "V"}[repo_id[0]] + "-" + repo_id[1:]


def data_bytes(name: str) -> bytes:
    """A shipped protocol file of :data:`SOURCES` (its sha256 is checked by the tests, not on every read)."""
    return (resources.files("faceedit_bench_audit") / "data" / "paper_b" / name).read_bytes()


def repo_prompts() -> dict[str, dict[str, Any]]:
    """The repository's i2i prompts by id (B01 ..., D10 ...), as published."""
    return {p["id"]: p for p in json.loads(data_bytes("i2i_prompts.json").decode("utf-8"))["prompts"]}


def repo_to_arxiv() -> dict[str, str]:
    return {repo: arxiv for arxiv, repo, _, _ in NUMBERING}


CATEGORIES = {"O": "Occupational", "V": "Vulnerability"}
#: The aging prompt: target age = source age + 30 (METHODOLOGY §4.3).
AGING_PROMPT = "V-05"

#: METHODOLOGY §4.7 occupation lists (20 each).
MALE_OCCUPATIONS = ("CEO", "developer", "analyst", "guard", "mechanic", "sheriff", "supervisor", "lawyer",
                    "physician", "manager", "janitor", "chief", "carpenter", "farmer", "construction worker",
                    "driver", "salesperson", "mover", "cook", "laborer")
FEMALE_OCCUPATIONS = ("nurse", "secretary", "housekeeper", "receptionist", "librarian", "hairdresser", "cashier",
                      "cleaner", "attendant", "editor", "designer", "writer", "baker", "tailor", "auditor",
                      "teacher", "accountant", "counselor", "assistant", "clerk")


def build(name: str) -> dict[str, Any]:
    """The content of the frozen file ``name`` (``diagnostic`` or ``winobias``)."""
    if name == "diagnostic":
        return _diagnostic()
    if name == "winobias":
        return _winobias()
    if name == "winobias_pairs":
        return _winobias_pairs()
    raise ValueError(f"not a paper (b) test set: {name!r} (one of {', '.join(NAMES)})")


def _diagnostic() -> dict[str, Any]:
    sessions = []
    published = repo_prompts()
    for arxiv, repo, sub, _ in NUMBERING:
        category = CATEGORIES[arxiv[0]]
        prompt, hypothesis = published[repo]["prompt"], published[repo]["hypothesis"]
        meta = {"repo_id": repo, "january_id": january_id(repo), "category": category, "subcategory": sub,
                "hypothesis": hypothesis, **({"aging_prompt": "true"} if arxiv == AGING_PROMPT else {})}
        sessions.append({"session_id": arxiv, "steps": [
            {"instruction": prompt, "prompt_id": arxiv, "prompt_category": f"{category}/{sub}", "meta": meta}]})
    return {
        "format": 2, "name": "diagnostic", "version": VERSION, "reconstruction": False,
        "description": (
            "Paper (b)'s 20 diagnostic prompts (METHODOLOGY §4.2), one single edit each. Ids are the arXiv v3 "
            "ids; meta.repo_id is the id in data/prompts/i2i_prompts.json of " f"{SOURCE_REPO} @{SOURCE_COMMIT[:7]} "
            "and meta.january_id the January-repo numbering. Only the O-01..O-05, V-01..V-04, O-07 and O-10 ids "
            "are confirmed by the paper's tables; the other arXiv ids follow the Table 1 theme order. "
            f"{AGING_PROMPT} is the aging prompt (target age = source age + 30)."),
        "sessions": sessions,
    }


def _source_bytes() -> bytes:
    return data_bytes(WINOBIAS_FILE)


def _winobias_rows() -> list[tuple[str, dict[str, Any], dict[str, str]]]:
    """(session id, source row, meta) of the 50 published prompts, in id order."""
    out = []
    for row in sorted(json.loads(_source_bytes().decode("utf-8")), key=lambda r: int(r["id"])):
        n, prompt, target = int(row["id"]), row["prompt"], row["gender_stereotype"]
        gender = "male" if n <= 25 else "female"
        others = [o for o in (*MALE_OCCUPATIONS, *FEMALE_OCCUPATIONS)
                  if o != target and f"the {o.lower()}" in prompt.lower()]
        meta = {"source_id": str(n), "target_occupation": target, "stereotyped_gender": gender,
                "pronoun": "he" if gender == "male" else "she", "other_occupation": others[0] if others else "",
                "paper_input_image_1": row["input_image_1"], "paper_input_image_2": row["input_image_2"]}
        out.append((f"W-{n:02d}", row, meta))
    return out


#: The editors of paper (b)'s published sample (its ``model`` column).
SAMPLE_MODELS = ("flux", "step1x", "qwen")
SAMPLE_FILE = "exp1_amt_sampled.csv"


def mitigation_sample(model: str) -> list[tuple[str, str]]:
    """Paper (b)'s 500-item stratified sample (METHODOLOGY §4.5; ``data/amt_sampling/exp1_amt_sampled.csv``,
    from which its released mitigation code drew the items it regenerated with feature prompts, and on which
    its human evaluation ran): the (``fairface_grid`` face id, diagnostic session id) items of ``model``'s rows
    (one of :data:`SAMPLE_MODELS`), or of every row for ``all``, in file order without repeats."""
    if model != "all" and model not in SAMPLE_MODELS:
        raise ValueError(f"paper (b)'s sample has the editors {', '.join(SAMPLE_MODELS)} (or all), not {model!r}")
    ids = repo_to_arxiv()
    rows = csv.DictReader(io.StringIO(data_bytes(SAMPLE_FILE).decode("utf-8"), newline=""))
    items = [(grid_face_id(f"{r['race']}_{r['gender']}_{r['age']}.jpg"), ids[r["promptId"]])
             for r in rows if model == "all" or r["model"] == model]
    return list(dict.fromkeys(items))


def grid_face_id(file_name: str) -> str:
    """The ``fairface_grid`` face id of a portrait named in paper (b)'s scheme (``Black_Male_40s.jpg``)."""
    return f"fairface_grid/{file_name.rsplit('.', 1)[0]}/1"


def _winobias_pairs() -> dict[str, Any]:
    raw = _source_bytes()
    sessions = [{"session_id": wid, "face": grid_face_id(row["input_image_1"]), "steps": [{
        "instruction": row["prompt"], "prompt_id": wid,
        "prompt_category": f"WinoBias/{meta['stereotyped_gender']}-stereotyped",
        "inputs": [{"role": "second_source", "source": "dataset", "face": grid_face_id(row["input_image_2"])}],
        "meta": meta}]} for wid, row, meta in _winobias_rows()]
    return {
        "format": 2, "name": "winobias_pairs", "version": VERSION, "reconstruction": False,
        "description": (
            "Paper (b)'s 50 WinoBias prompts (METHODOLOGY §4.7) with the repository's own image pairs, in its "
            f"order: data/prompts/winobias_prompts_with_stereotype.json of {SOURCE_REPO} @{SOURCE_COMMIT[:7]} "
            f"(sha256 {hashlib.sha256(raw).hexdigest()[:16]}). Each session runs on one portrait only, the file "
            "input_image_1 (e.g. Black_Male_40s.jpg), with input_image_2 as the second image: 50 requests per "
            "editor. Run it on the FairFace grid (dataset=fairface_grid), whose face ids follow those names; a "
            "grid cell left empty leaves its sessions unrun (or unsupported, for a missing second image). The "
            "repository puts the stereotyped gender first (female first for W-26..W-50). testset=winobias is "
            "the same prompts on every male portrait of the grid, with a seeded female partner."),
        "sessions": sessions,
    }


def _winobias() -> dict[str, Any]:
    raw = _source_bytes()
    sessions = []
    for wid, row, meta in _winobias_rows():
        prompt, gender = row["prompt"], meta["stereotyped_gender"]
        sessions.append({"session_id": wid, "steps": [{
            "instruction": prompt, "prompt_id": wid, "prompt_category": f"WinoBias/{gender}-stereotyped",
            "inputs": [{"role": "female_source", "source": "dataset", "rule": "female_other_race"}],
            "meta": meta}]})
    return {
        "format": 2, "name": "winobias", "version": VERSION, "reconstruction": False,
        "description": (
            "Paper (b)'s 50 WinoBias prompts (METHODOLOGY §4.7) from data/prompts/winobias_prompts_with_stereotype"
            f".json of {SOURCE_REPO} @{SOURCE_COMMIT[:7]} (sha256 {hashlib.sha256(raw).hexdigest()[:16]}), "
            "i.e. winobias_prompts.json plus the target occupation. W-01..W-25 target a male-stereotyped "
            "occupation ('he'), W-26..W-50 a female-stereotyped one ('she'). Two input images at once: the base "
            "face (male) first, then a female face of another race (rule female_other_race: the smallest "
            "sha256('<seed>|<base id>|<candidate id>') among them). Run it on male base faces, e.g. "
            "dataset=fairface_grid dataset.params.base_gender=male. meta.paper_input_image_1/2 keep the "
            "repository's own pairing, which puts the stereotyped gender first (female first for W-26..W-50)."),
        "sessions": sessions,
    }


class FrozenTestSet:
    """The loader registered for one of :data:`NAMES`: the frozen file ``data/testsets/<name>.json`` (validated
    once, cached). ``faceedit-bench testset check`` calls :meth:`check` (the frozen file equals what
    :func:`build` makes from the published sources) and ``testset show`` prints :attr:`label`."""

    label = "paper (b)'s published prompts"
    source = "its published source"

    def __init__(self, name: str) -> None:
        self.name = name

    def __call__(self) -> TestSet:
        return _load(self.name)

    def frozen(self) -> dict[str, Any]:
        return json.loads(_frozen_file(self.name).read_text(encoding="utf-8"))

    def check(self) -> bool:
        return self.frozen() == build(self.name)


def _frozen_file(name: str) -> Any:
    return resources.files("faceedit_bench_audit") / "data" / "testsets" / f"{name}.json"


@functools.cache
def _load(name: str) -> TestSet:
    res = _frozen_file(name)
    return load_testset(json.loads(res.read_text(encoding="utf-8")), f"builtin test set {name!r} ({res})")


#: The registered loaders (``testset=diagnostic`` ...).
DIAGNOSTIC, WINOBIAS, WINOBIAS_PAIRS = (FrozenTestSet(name) for name in NAMES)

#: ``run.sample={published: paper_b_mitigation, model: flux}``: the 500 (portrait, prompt) rows of the paper's
#: mitigation study, per editor (METHODOLOGY §4.5).
MITIGATION_SAMPLE = PublishedSample(
    items=lambda model: mitigation_sample(model), models=(*SAMPLE_MODELS, "all"),
    source=(f"{SOURCE_REPO} @{SOURCE_COMMIT[:7]} {SOURCES[SAMPLE_FILE][0]} (sha256 {SOURCES[SAMPLE_FILE][1][:16]}): "
            "paper (b)'s 500-item stratified sample, drawn with seed 42, 25 per prompt id; its mitigation code "
            "regenerated each editor's own rows with the feature prompt"))
