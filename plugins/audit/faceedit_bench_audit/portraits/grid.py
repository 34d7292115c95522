"""Paper (b)'s factorial portrait grid (METHODOLOGY §4.1): its 84 cells, the file naming and the frozen manifest.

7 races x 2 genders x 6 age bins. A portrait file is named ``{Race}_{Gender}_{Age}.jpg`` (paper (b)'s
naming; a second portrait of a cell ``{Race}_{Gender}_{Age}_2.jpg``) with Race in White, Black, EastAsian,
SoutheastAsian, Indian, MiddleEastern, Latino; Gender Male or Female; Age 20s..60s or 70plus.

A selection is frozen as ``manifest.json`` beside its images: every cell with its portraits (file, sha256,
source key, check measurements) or ``missing``, the rejections by reason, the criteria, the detector, the
seed and the source. ``content_hash`` is the sha256 of the canonical JSON of everything else except the
``approval`` block, so any change of the selection changes it and an approval names the hash it approved.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from faceedit_bench.api import FaceEditBenchError, file_under, fingerprint, parse_json, read_utf8

FORMAT = "faceedit_bench.portrait_grid"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
SHEET = "contact_sheet.png"
#: FairFace race label -> file-name token, in paper (b)'s order.
RACES = {"White": "White", "Black": "Black", "East Asian": "EastAsian", "Southeast Asian": "SoutheastAsian",
         "Indian": "Indian", "Middle Eastern": "MiddleEastern", "Latino_Hispanic": "Latino"}
GENDERS = {"male": "Male", "female": "Female"}
#: FairFace age bin -> file-name token.
AGES = {"20-29": "20s", "30-39": "30s", "40-49": "40s", "50-59": "50s", "60-69": "60s", "more than 70": "70plus"}
SUFFIXES = (".jpg", ".jpeg", ".png")
_NAME = re.compile(r"^(?P<race>[A-Za-z]+)_(?P<gender>Male|Female)_(?P<age>\d0s|70plus)(?:_(?P<n>[2-9]|\d{2,}))?$")


def cell_name(race: str, gender: str, age_bin: str) -> str:
    """``White_Male_20s`` for FairFace labels (``White``, ``male``, ``20-29``)."""
    return f"{RACES[race]}_{GENDERS[gender]}_{AGES[age_bin]}"


def cells() -> list[dict[str, str]]:
    """All 84 cells in grid order (race, then gender, then age), with their FairFace labels."""
    return [{"cell": cell_name(r, g, a), "race": r, "gender": g, "age_bin": a}
            for r in RACES for g in GENDERS for a in AGES]


def parse_name(path: Path) -> tuple[dict[str, str], int] | None:
    """(cell labels, portrait number) of a file named in paper (b)'s scheme, or ``None``."""
    m = _NAME.match(path.stem)
    if not m or path.suffix.lower() not in SUFFIXES:
        return None
    race = {v: k for k, v in RACES.items()}.get(m["race"])
    age = {v: k for k, v in AGES.items()}.get(m["age"])
    if race is None or age is None:
        return None
    gender = m["gender"].lower()
    return {"cell": cell_name(race, gender, age), "race": race, "gender": gender, "age_bin": age}, int(m["n"] or 1)


def portrait_file(cell: str, n: int, suffix: str) -> str:
    return f"{cell}{'' if n == 1 else f'_{n}'}{suffix}"


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def content_hash(manifest: Mapping[str, Any]) -> str:
    return fingerprint({k: v for k, v in manifest.items() if k not in ("content_hash", "approval")})


def missing_note(missing: list[str], total: int) -> str:
    """The sentence every output carries when cells are empty."""
    shown = ", ".join(missing[:12]) + (f" and {len(missing) - 12} more" if len(missing) > 12 else "")
    return (f"{len(missing)} of {total} grid cells have no usable portrait ({shown}); the audit runs on the "
            f"other {total - len(missing)} cells, so per-group results cover fewer portraits in those groups.")


def read_manifest(folder: Path, *, verify: bool = True) -> dict[str, Any]:
    """The manifest of a frozen selection; with ``verify``, its hash and every image's sha256 are checked."""
    path = folder / MANIFEST
    what = "portrait manifest"
    data = parse_json(read_utf8(path, what=what), str(path), what=what)
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise FaceEditBenchError(f"{path}: not a portrait-grid manifest (format {FORMAT!r})")
    if data.get("format_version") != FORMAT_VERSION:
        raise FaceEditBenchError(f"{path}: format_version {data.get('format_version')!r}; this version reads "
                                 f"{FORMAT_VERSION}")
    if verify:
        problems = verify_manifest(folder, data)
        if problems:
            raise FaceEditBenchError(f"{path}: the frozen selection does not match its manifest: "
                                     f"{'; '.join(problems)}. Restore the files, or select again "
                                     "(faceedit-bench portraits select).")
    return data


def verify_manifest(folder: Path, data: Mapping[str, Any]) -> list[str]:
    """What differs between a manifest and the files beside it (empty when it is intact)."""
    problems = []
    if data.get("content_hash") != content_hash(data):
        problems.append(f"content_hash {data.get('content_hash')!r} is not the hash of the content "
                        f"({content_hash(data)}): the manifest was edited")
    for cell in data.get("cells") or []:
        for p in cell.get("portraits") or []:
            image = file_under(folder, p["file"], str(folder / MANIFEST), what="portrait")
            if not image.is_file():
                problems.append(f"{p['file']} is missing")
            elif sha256_file(image) != p["sha256"]:
                problems.append(f"{p['file']} changed (sha256 {sha256_file(image)[:12]}, manifest {p['sha256'][:12]})")
    approval = data.get("approval")
    if approval and approval.get("content_hash") != data.get("content_hash"):
        problems.append("the approval names another content_hash: the selection changed after it was approved")
    return problems


def scan_folder(folder: Path) -> tuple[list[tuple[dict[str, str], int, Path]], list[str]]:
    """A hand-made selection: the images named in paper (b)'s scheme, and the image files that are not."""
    named, stray = [], []
    for path in sorted(folder.iterdir()):
        if not path.is_file() or path.suffix.lower() not in SUFFIXES or path.name == SHEET:
            continue  # the contact sheet earlier versions of `portraits show` drew into the folder is no portrait
        parsed = parse_name(path)
        if parsed is None:
            stray.append(path.name)
        else:
            named.append((parsed[0], parsed[1], path))
    return named, stray
