"""CREval-Bench in its published layout (github.com/ChonghuinanWang/CREval; METHODOLOGY §5.1)::

    <root>/bench/image/<item>.<png|jpg|jpeg|webp|bmp>        the source images
    <root>/bench/questiions_all/{IF,VC,VQ}/<item>.json      {"quality_check_questions": [{question_id,
                                                             thinking_process, question, choices, answer,
                                                             weight}]}   (also read: questions_all)
    <root>/bench/instruction.json                            the instruction of every item
    <root>/code/Category.json                                [{"id", "Category": "<Category> - <Dimension>",
                                                              "Description"}]   (also read: bench/Category.json)

``<root>`` may also be the ``bench`` folder itself. The instruction list's schema is not described by the
repository; this reader takes a list of objects or a mapping keyed by item. It reads the field names CREval's
own code reads (``code/gen_question_with_qwen_api.py``: ``input_image``, a list whose first file names the
item, and ``input_prompt``, the instruction; ``id``), and common alternatives: the item from
``image``/``filename``/``id``/``item``/``name``, the instruction from ``instruction``/``prompt``/
``edit_instruction``, the dimension from ``category_id``/``class_id``/``category``/``dimension`` (a
Category.json id or name); a mapping's value may be the instruction string alone. A dimension that
Category.json does not name is refused (a typo or another file); items that name none are counted
(``uncategorised``) and grouped as "unknown". Category.json calls the first category "Reconstruction";
the paper calls it "Customization", and so does this reader.

CREval's own code keeps one instruction file per category (``json/<name>_<id>.json``, ``<id>`` a Category.json
id) and takes an item's category from the file that lists it. Where such files lie in ``json/`` beside or
inside the bench folder they are read the same way: an item instruction.json gives no category takes its
file's, and without instruction.json the files alone list the items.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from faceedit_bench.api import fingerprint, parse_json, read_utf8
from faceedit_bench_creval.questions import (
    METRICS,
    QuestionItem,
    QuestionSet,
    QuestionSetError,
    merge_items,
    parse_questions,
)

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp", ".bmp")
QUESTION_DIRS = ("questiions_all", "questions_all")  # the repository's spelling, and its README's
PAPER_CATEGORY = {"Reconstruction": "Customization"}
UNKNOWN = "unknown"


@dataclass(frozen=True)
class BenchItem:
    item_id: str
    image: Path
    instruction: str
    category: str
    dimension: str


def _read_json(path: Path) -> Any:
    what = "CREval-Bench file"
    return parse_json(read_utf8(path, what=what, error=QuestionSetError), str(path), what=what, error=QuestionSetError)


def bench_dir(root: str | Path) -> Path:
    root = Path(root).expanduser()
    for candidate in (root / "bench", root):
        if any((candidate / d).is_dir() for d in QUESTION_DIRS):
            return candidate
    raise QuestionSetError(f"{root} is not CREval-Bench: no bench/questiions_all (or questions_all) folder there. "
                           "Point at the repository root or its bench folder.")


def _dimension_name(raw: str) -> tuple[str, str]:
    category, _, dimension = raw.partition(" - ")
    dimension = re.sub(r"\s*&\s*", " & ", dimension or category).strip()
    return PAPER_CATEGORY.get(category.strip(), category.strip()), dimension


def read_categories(bench: Path) -> dict[str, tuple[str, str]]:
    """Category.json as id (and name) -> (category, dimension)."""
    for path in (bench.parent / "code" / "Category.json", bench / "Category.json", bench / "code" / "Category.json"):
        if path.is_file():
            rows = _read_json(path)
            out = {}
            for row in rows if isinstance(rows, list) else []:
                if not isinstance(row, dict) or "Category" not in row or "id" not in row:
                    raise QuestionSetError(f"{path}: every entry needs an id and a Category")
                names = _dimension_name(str(row["Category"]))
                out[str(row["id"])] = names
                out[str(row["Category"])] = names
                out[names[1]] = names
            return out
    return {}


#: Field names, in the order they are tried; CREval's own first (code/gen_question_with_qwen_api.py).
_IMAGE_KEYS = ("input_image", "image", "filename", "file")
_ITEM_KEYS = (*_IMAGE_KEYS, "id", "item", "item_id", "name")
_TEXT_KEYS = ("input_prompt", "instruction", "prompt", "edit_instruction", "text")
_DIM_KEYS = ("category_id", "class_id", "category", "dimension", "class")


def _first(entry: dict[str, Any], keys: tuple[str, ...]) -> Any:
    return next((entry[k] for k in keys if entry.get(k) not in (None, "", [])), None)


def _item_name(value: Any) -> str | None:
    """The item an entry is about: an image file's stem (CREval's input_image is a list of files: the first)."""
    if isinstance(value, list):
        value = value[0] if value else None
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        return None
    return Path(str(value)).stem or None


#: CREval's own code takes an item's category from the instruction file that lists it, one file per category:
#: ``json/<name>_<id>.json`` with ``<id>`` a Category.json id (code/gen_question_with_qwen_api.py reads
#: ``json/dataset3_1.json`` to ``dataset3_9.json``), not from a field.
CATEGORY_FILE = re.compile(r"_(\d+)\.json$")


def read_category_files(bench: Path) -> dict[str, tuple[str, str | None]]:
    """item -> (instruction, Category.json id) from the per-category instruction files, in ``json/`` beside
    or inside the bench folder; empty when there are none."""
    for folder in (bench / "json", bench.parent / "json"):
        files = sorted(p for p in folder.glob("*.json") if CATEGORY_FILE.search(p.name)) if folder.is_dir() else []
        if files:
            out: dict[str, tuple[str, str | None]] = {}
            for path in files:
                category = CATEGORY_FILE.search(path.name).group(1)
                out.update({item: (text, dim if dim is not None else category)
                            for item, (text, dim) in _entries(path, _read_json(path)).items()})
            return out
    return {}


def read_instructions(bench: Path) -> dict[str, tuple[str, str | None]]:
    """item -> (instruction, dimension key or None): instruction.json, an item's category from it or else from
    the per-category file that lists the item (:func:`read_category_files`); those files alone without it."""
    by_file = read_category_files(bench)
    path = bench / "instruction.json"
    if not path.is_file():
        if by_file:
            return by_file
        raise QuestionSetError(f"{bench}: instruction.json is missing (the instruction of every item), and there "
                               "are no per-category instruction files (json/<name>_<category id>.json)")
    return {item: (text, dim if dim is not None else by_file.get(item, ("", None))[1])
            for item, (text, dim) in _entries(path, _read_json(path)).items()}


def _entries(path: Path, data: Any) -> dict[str, tuple[str, str | None]]:
    """An instruction file's entries: item -> (instruction, dimension key or None)."""
    entries = ([{"id": k, **(v if isinstance(v, dict) else {"instruction": v})} for k, v in data.items()]
               if isinstance(data, dict) else data)
    out = {}
    for i, entry in enumerate(entries if isinstance(entries, list) else []):
        if not isinstance(entry, dict):
            raise QuestionSetError(f"{path} entry {i}: an entry must be an object")
        item, text = _item_name(_first(entry, _ITEM_KEYS)), _first(entry, _TEXT_KEYS)
        if item is None or not isinstance(text, str):
            raise QuestionSetError(f"{path} entry {i}: needs an item ({'/'.join(_ITEM_KEYS)}) and an instruction "
                                   f"({'/'.join(_TEXT_KEYS)})")
        dim = _first(entry, _DIM_KEYS)
        out[item] = (text, None if dim is None else str(dim))
    return out


def _dimensions(instructions: dict[str, tuple[str, str | None]], categories: dict[str, tuple[str, str]],
                where: Path) -> dict[str, tuple[str, str]]:
    """item -> (category, dimension); an id Category.json does not name is refused, a missing one is unknown."""
    unknown = sorted({d for _, d in instructions.values() if d is not None and d not in categories})
    if unknown:
        known = sorted({k for k in categories if k.isdigit()}, key=int)
        source = "code/Category.json" if categories else "Category.json (none was found)"
        raise QuestionSetError(
            f"{where / 'instruction.json'} names categories that {source} does not: "
            f"{', '.join(map(repr, unknown[:10]))}. Known ids: {', '.join(known) or 'none'}; give each item a "
            "Category.json id or name, or put CREval's code/Category.json beside the bench folder.")
    return {item: categories[d] if d is not None else (UNKNOWN, UNKNOWN) for item, (_, d) in instructions.items()}


def read_bench(root: str | Path) -> tuple[list[BenchItem], QuestionSet]:
    """CREval-Bench's items (image, instruction, category, dimension) and its questions as a question set."""
    bench = bench_dir(root)
    qdir = next(bench / d for d in QUESTION_DIRS if (bench / d).is_dir())
    categories = read_categories(bench)
    instructions = read_instructions(bench)
    images = {p.stem: p for p in sorted((bench / "image").glob("*")) if p.suffix.lower() in IMAGE_SUFFIXES}
    items, qitems, problems = [], [], []
    dimensions = _dimensions(instructions, categories, bench)
    for stem in sorted(instructions):
        text = instructions[stem][0]
        category, dimension = dimensions[stem]
        files = {m: qdir / m / f"{stem}.json" for m in METRICS}
        lacking = [m for m, f in files.items() if not f.is_file()]
        if stem not in images or lacking:
            problems.append(f"{stem}: " + ("no source image in bench/image; " if stem not in images else "")
                            + (f"no {', '.join(lacking)} question file" if lacking else ""))
            continue
        questions = {}
        for m, f in files.items():
            raw = _read_json(f)
            questions[m] = parse_questions(raw.get("quality_check_questions") if isinstance(raw, dict) else None,
                                           str(f))
        items.append(BenchItem(stem, images[stem], text, category, dimension))
        qitems.append(QuestionItem(stem, stem, 1, text, questions, None, category, dimension))
    if problems:
        raise QuestionSetError(f"CREval-Bench at {bench} is incomplete ({len(problems)} item(s)): "
                               + "; ".join(problems[:5]) + ("; ..." if len(problems) > 5 else ""))
    if not items:
        raise QuestionSetError(f"CREval-Bench at {bench} lists no items in instruction.json")
    uncategorised = sum(1 for i in items if i.category == UNKNOWN)
    image_digest = fingerprint({i.item_id: i.image.name for i in items})
    qset = QuestionSet(
        name="creval_bench", version="published", items=merge_items(qitems),
        provenance={"generator": "published", "generator_model": "Qwen2.5-VL-72B-Instruct (per CREval's code)",
                    "source": "github.com/ChonghuinanWang/CREval bench/questiions_all",
                    "source_testset": {"name": "creval_bench", "items": len(items), "images": image_digest},
                    # items instruction.json gives no category: grouped as "unknown", counted here
                    **({"uncategorised": uncategorised} if uncategorised else {})},
        description="CREval-Bench's published IF/VC/VQ questions (Wang et al. 2026, METHODOLOGY §5.1)")
    return items, qset
