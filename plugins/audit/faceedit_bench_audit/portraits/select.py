"""Select paper (b)'s factorial grid from FairFace and freeze it (``faceedit-bench portraits select``).

For each of the 84 cells (:mod:`~faceedit_bench_audit.portraits.grid`) the FairFace faces with that
race, gender and age bin are put in a seeded order (ascending sha256("<seed>|<cell>|<face key>"), so the
order of a cell never depends on the rest of the dataset) and checked one by one
(:mod:`~faceedit_bench_audit.portraits.quality`) until ``per_cell`` pass or ``max_checks`` were
checked. Every rejection is counted by reason, per cell and in total. A cell without a passing portrait is
``missing``: it is listed in the manifest, on the contact sheet and in the notes of every run on the grid.

The chosen images are copied byte for byte next to ``manifest.json`` under paper (b)'s names. A selection is
made in a new folder beside its place and moved there complete (:func:`write_selection`), so a selection cut
short by a kill is never mistaken for one, and a ``--force`` replacement keeps the old one until the new one is
whole; a folder is only ever replaced when it holds a selection this tool made and nothing else.
"""

from __future__ import annotations

import hashlib
import shutil
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Any

from faceedit_bench.api import (
    ConfigError,
    FaceDetector,
    FaceEditBenchError,
    ImageError,
    atomic_open,
    built_beside,
    file_lock,
    registered,
    restore_replaced,
)
from faceedit_bench.api.images import decode_rgb
from faceedit_bench_audit.portraits import grid
from faceedit_bench_audit.portraits.quality import REASONS, Criteria, check_portrait

Progress = Callable[[str], None]


def fairface_reader() -> Any:
    """The core's FairFace reader (the class registered as the ``fairface`` dataset) the grid is drawn from."""
    return registered("datasets", "fairface")


def load_detector(name: str, params: dict[str, Any]) -> Any:
    """A registered embedder by name, built with ``params`` (it must be able to ``detect()``)."""
    factory = registered("embedders", name)
    try:
        return factory(**params)
    except TypeError as exc:
        raise ConfigError(f"detector {name}: {exc}; see `faceedit-bench plugins`") from None


def select_grid(dataset: Any, detector: FaceDetector, out: Path, *, seed: int = 42, per_cell: int = 1,
                max_checks: int = 50, criteria: Criteria | None = None, version: str = "1.0.0",
                detector_name: str = "", progress: Progress | None = None) -> dict[str, Any]:
    """Select, copy the images into ``out`` and write ``out/manifest.json``; returns the manifest."""
    if per_cell < 1 or max_checks < per_cell:
        raise ConfigError(f"per_cell must be >= 1 and max_checks >= per_cell (got {per_cell}, {max_checks})")
    if not isinstance(detector, FaceDetector):
        raise ConfigError(f"detector {detector_name or type(detector).__name__} cannot detect faces with landmarks "
                          "(no detect() method); use one that can, e.g. --detector dlib")
    criteria = criteria or Criteria()
    by_cell: dict[str, list[tuple[str, dict[str, str | None]]]] = {c["cell"]: [] for c in grid.cells()}
    for key, labels in dataset.candidates():
        if labels.get("race") in grid.RACES and labels.get("gender") in grid.GENDERS \
                and labels.get("age_bin") in grid.AGES:
            by_cell[grid.cell_name(labels["race"], labels["gender"], labels["age_bin"])].append((key, labels))
    out.mkdir(parents=True, exist_ok=True)
    cells, total = [], Counter()
    for spec in grid.cells():
        ranked = sorted(by_cell[spec["cell"]], key=lambda c: _rank(seed, spec["cell"], c[0]))
        entry = _select_cell(dataset, detector, criteria, spec, ranked, per_cell, max_checks, out)
        total.update(entry["rejections"])
        cells.append(entry)
        if progress:
            progress(f"{spec['cell']}: {entry['status']} ({entry['checked']} checked of {len(ranked)})")
    missing = [c["cell"] for c in cells if c["status"] == "missing"]
    partial = [c["cell"] for c in cells if c["status"] == "partial"]
    manifest: dict[str, Any] = {
        "format": grid.FORMAT, "format_version": grid.FORMAT_VERSION, "version": version,
        "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "source": {k: v for k, v in dataset.describe().items() if k in ("name", "layout", "root", "split", "padding",
                                                                        "files", "labels", "format", "n_faces")},
        "selection": {"seed": seed, "per_cell": per_cell, "max_checks": max_checks,
                      "order": "ascending sha256('<seed>|<cell>|<face key>') within each cell",
                      "criteria": asdict(criteria),
                      "not_checked": "unobstructed features and expression are measured only where the detector "
                                     "gives 68-point landmarks (eyes_covered, mouth_covered, eyes_closed, "
                                     "mouth_open; lip colour not on grey-scale images); the degree of a smile and "
                                     "occluders these miss: judged on the contact sheet",
                      "features_unmeasured": sum(1 for c in cells for p in c["portraits"]
                                                 if p["checks"].get("eye_aspect") is None),
                      "lip_colour_unmeasured": sum(1 for c in cells for p in c["portraits"]
                                                   if p["checks"].get("eye_aspect") is not None
                                                   and p["checks"].get("lip_redness") is None)},
        "detector": {"name": detector_name, **dict(detector.describe())},
        "cells": cells,
        "rejections": {r: total[r] for r in REASONS if total[r]},
        "missing_cells": missing,
        "notes": ([grid.missing_note(missing, len(cells))] if missing else [])
        + ([f"{len(partial)} cells have fewer than {per_cell} portraits: {', '.join(partial)}"] if partial else []),
    }
    manifest["content_hash"] = grid.content_hash(manifest)
    write_manifest(out, manifest)
    return manifest


def write_manifest(out: Path, manifest: dict[str, Any]) -> None:
    import json

    with atomic_open(out / grid.MANIFEST, "w", encoding="utf-8") as fh:
        fh.write(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")


def _select_cell(dataset: Any, detector: FaceDetector, criteria: Criteria, spec: dict[str, str],
                 ranked: list[tuple[str, dict[str, str | None]]], per_cell: int, max_checks: int,
                 out: Path) -> dict[str, Any]:
    chosen: list[dict[str, Any]] = []
    rejections: Counter[str] = Counter()
    checked = 0
    for key, labels in ranked[:max_checks]:
        checked += 1
        image = dataset.face(key, labels).image
        try:
            rgb = decode_rgb(image.read_bytes(), label=str(image))
        except (ImageError, OSError):
            rejections["unreadable"] += 1
            continue
        reason, measured = check_portrait(rgb, detector.detect(rgb), criteria)
        if reason is not None:
            rejections[reason] += 1
            continue
        name = grid.portrait_file(spec["cell"], len(chosen) + 1, ".png" if image.suffix.lower() == ".png" else ".jpg")
        with image.open("rb") as src, atomic_open(out / name, "wb") as dst:
            shutil.copyfileobj(src, dst)  # the source bytes, never re-encoded
        chosen.append({"file": name, "source": key, "sha256": grid.sha256_file(out / name), "checks": measured})
        if len(chosen) == per_cell:
            break
    return {**spec, "status": "ok" if len(chosen) == per_cell else ("partial" if chosen else "missing"),
            "candidates": len(ranked), "checked": checked, "rejections": dict(sorted(rejections.items())),
            "portraits": chosen}


def _rank(seed: int, cell: str, key: str) -> str:
    return hashlib.sha256(f"{seed}|{cell}|{key}".encode()).hexdigest()


def approve(folder: Path, by: str) -> dict[str, Any]:
    """Record that a person approved the selection as it is now (outside the hashed content)."""
    manifest = grid.read_manifest(folder)
    if not by.strip():
        raise ConfigError("--by must name the person who approves the selection")
    manifest["approval"] = {"by": by, "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                            "content_hash": manifest["content_hash"]}
    write_manifest(folder, manifest)
    return manifest


def is_fairface_root(root: Path) -> bool:
    """``root`` holds FairFace itself (label CSVs or HF parquet files), not a portrait selection."""
    return root.is_dir() and (any(root.glob("fairface_label_*.csv")) or any(root.glob("*/train-*.parquet"))
                              or any(root.glob("train-*.parquet")))


# -- a selection folder: made beside its place and moved in complete; replaced only if the tool made it --


@contextmanager
def selection_lock(folder: Path) -> Iterator[None]:
    """Held while a selection folder is made or replaced: the jobs of a sweep that start together make it once."""
    with file_lock(folder.parent / f".{folder.name}.lock", what=f"selecting the portrait grid into {folder}",
                   timeout=3600):
        restore_replaced(folder)  # a replacement killed between its two renames: the old selection comes back
        yield


def check_replaceable(folder: Path, *, force: bool) -> None:
    """Refuse, before any work, to put a new selection where ``folder`` holds anything but a selection
    this tool made (manifest.json and the files it lists), or where ``force`` was not given."""
    if not folder.exists() or (folder.is_dir() and not any(folder.iterdir())):
        return
    if not folder.is_dir():
        raise ConfigError(f"--out {folder} is a file, not a folder; choose another --out")
    if not force:
        raise ConfigError(f"{folder} is not empty; a frozen selection is never overwritten (use --force)")
    try:
        manifest = grid.read_manifest(folder, verify=False)
    except FaceEditBenchError as exc:
        raise ConfigError(f"--out {folder} is not empty and is not a portrait selection ({exc}); it is never "
                          "replaced, even with --force. Choose another --out, or empty it yourself.") from None
    listed = (p["file"] for cell in manifest.get("cells") or [] for p in cell.get("portraits") or [])
    ours = {grid.MANIFEST, grid.SHEET, *listed}
    foreign = sorted(p.name for p in folder.iterdir() if p.name not in ours)
    if foreign:
        raise ConfigError(f"--out {folder} holds files its selection does not list ({', '.join(foreign[:5])}); it is "
                          "never replaced, even with --force. Move them out, or choose another --out.")


def write_selection(folder: Path, make: Callable[[Path], dict[str, Any]]) -> dict[str, Any]:
    """``make(tmp)`` writes a complete selection (images, manifest, contact sheet) into a new folder beside
    ``folder``, which then takes ``folder``'s place in one step (call under :func:`selection_lock`, after
    :func:`check_replaceable`): a kill at any instant leaves the old selection or the new one, never a part."""
    with built_beside(folder, folder=True) as tmp:
        return make(tmp)


def ensure_selection(root: Path, folder: Path, *, split: str, padding: float, seed: int, detector: str,
                     auto_select: bool) -> Path:
    """The selection folder for a FairFace root: ``folder`` as it is, or, when it is missing and
    ``auto_select`` is on, a new selection made with the default criteria (not yet approved by a person)."""
    with selection_lock(folder):
        return _ensure_selection(root, folder, split=split, padding=padding, seed=seed, detector=detector,
                                 auto_select=auto_select)


def _ensure_selection(root: Path, folder: Path, *, split: str, padding: float, seed: int, detector: str,
                      auto_select: bool) -> Path:
    if (folder / grid.MANIFEST).exists():
        made = grid.read_manifest(folder, verify=False)
        asked = {"split": split, "padding": padding, "seed": seed}
        used = {"split": made["source"].get("split"), "padding": made["source"].get("padding"),
                "seed": made["selection"].get("seed")}
        if used != asked:
            raise ConfigError(f"the selection at {folder} was made with {used}, not {asked}; set "
                              "dataset.params.selection=<another folder> or the parameters it was made with")
        return folder
    if not auto_select:
        raise FaceEditBenchError(f"no portrait selection at {folder}. Make one: faceedit-bench portraits select "
                                 f"--root {root} --out {folder}, or set dataset.params.auto_select=true")
    if folder.exists() and any(folder.iterdir()):
        raise FaceEditBenchError(f"{folder} holds files but no {grid.MANIFEST}, so it is not a selection; it is left "
                                 "as it is. Move it away, or set dataset.params.selection=<another folder>.")
    from faceedit_bench_audit.portraits.sheet import draw_sheet

    dataset = fairface_reader()(root=root, split=split, padding=padding)
    found = load_detector(detector, {})

    def make(tmp: Path) -> dict[str, Any]:
        manifest = select_grid(dataset, found, tmp, seed=seed, detector_name=detector)
        draw_sheet(tmp, manifest["cells"], tmp / grid.SHEET)
        return manifest

    write_selection(folder, make)
    return folder


def require_selection(folder: Path) -> None:
    restore_replaced(folder)
    if not folder.is_dir():
        raise FaceEditBenchError(f"no portrait selection at {folder}; make one with faceedit-bench portraits select "
                                 "--root /data/fairface --out <folder>, or put {Race}_{Gender}_{Age}.jpg files there")
