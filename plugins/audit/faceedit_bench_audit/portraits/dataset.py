"""``fairface_grid``: paper (b)'s 84-cell portrait grid (METHODOLOGY §4.1), frozen or hand-made."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from faceedit_bench.api import ConfigError, Face, FaceEditBenchError, fingerprint, restore_replaced
from faceedit_bench_audit.portraits import grid
from faceedit_bench_audit.portraits.select import ensure_selection, fairface_reader, is_fairface_root

GET = ("Make a selection with `faceedit-bench portraits select --root /data/fairface --out <folder>` (then look "
       "at <folder>/contact_sheet.png and `faceedit-bench portraits approve <folder> --by <name>`), or put "
       "hand-picked portraits named {Race}_{Gender}_{Age}.jpg (e.g. White_Male_20s.jpg) in a folder.")


def _existing(root: str | Path) -> Path:
    """The grid folder (or FairFace root) the config names; an error saying how to make one when it is absent."""
    path = Path(root).expanduser()
    if not path.exists():
        raise FaceEditBenchError(f"portrait grid folder not found: {path}. {GET} Then point the config at it, e.g. "
                                 "dataset.params.root=/data/grid")
    return path


class FairFaceGridDataset:
    """The portraits of a grid folder: ``manifest.json`` and its images (a frozen selection: the manifest's
    hash and every image's sha256 are checked before the run), or, without a manifest, a hand-made
    selection of files named ``{Race}_{Gender}_{Age}.jpg`` (any other image file is an error).

    Each portrait is its own identity (no references: FSS is measured against the base image). Labels:
    ``gender`` (male/female), ``race`` (the FairFace name, e.g. ``Latino_Hispanic``), ``age_bin`` (e.g.
    ``20-29``, ``more than 70``) and ``age_group`` as for ``fairface``; ``skin_tone`` and ``age`` are null.
    Cells without a portrait are listed in ``describe()`` (``missing_cells``) and in ``notes``, which every
    report of a run on the grid carries.

    :param root: the grid folder; or a FairFace root (label CSVs or HF parquet), whose selection is then
        ``selection`` (default ``<root>/faceedit_grid``), made there on first use when ``auto_select``.
    :param selection: the selection folder for a FairFace ``root`` (null = ``<root>/faceedit_grid``).
    :param auto_select: make a missing selection of a FairFace root with the default criteria and
        ``detector`` (default true; it is marked not approved until a person approves it).
    :param split: FairFace split to select from (paper (b): train).
    :param padding: FairFace release to select from (paper (b): 1.25).
    :param seed: the selection's seed (paper (b): 42).
    :param detector: registered embedder used to check portraits (default dlib).
    :param base_gender: yield only these base faces (``male`` or ``female``; null = all). Every portrait
        stays available as a further input (``partners()``), e.g. for ``testset=winobias``'s female partner.
    :param require_approval: refuse a frozen selection nobody approved (default false; the report says so).
    :param limit: at most this many faces, in grid order (null = all).
    :param max_references: accepted for a uniform config; unused (no references).
    :param min_base_fss: FSS threshold the engine applies to base images (default null).
    :param single_face_only: the engine drops images with other than one detected face (default true: the
        selection checked for exactly one face).
    """

    #: Where ``faceedit-bench data check fairface_grid`` points (source, licence, layout).
    docs_page = "docs/datasets/fairface_grid.md"
    #: What ``faceedit-bench`` says when ``dataset.params.root`` is not given (parameter -> (what, example)).
    required_settings = {"root": ("a FairFace folder, or a portrait grid folder made by `faceedit-bench portraits "
                                  "select` (docs/paper_b.md)", "/data/fairface")}

    #: Every cell is named by these (a dataset capability): a run's metrics are checked against them.
    label_keys = ("gender", "race", "age_bin")

    def __init__(self, root: str | Path, base_gender: str | None = None, require_approval: bool = False,
                 selection: str | Path | None = None, auto_select: bool = True, split: str = "train",
                 padding: float = 1.25, seed: int = 42, detector: str = "dlib",
                 limit: int | None = None, max_references: int | None = 10, min_base_fss: float | None = None,
                 single_face_only: bool = True) -> None:
        if base_gender not in (None, *grid.GENDERS):
            raise ConfigError(f"dataset.params.base_gender must be male, female or null, got {base_gender!r}")
        restore_replaced(Path(root).expanduser())  # a `portraits select --force` killed mid-swap: the old one is back
        root = _existing(root)
        self.fairface_root: Path | None = None
        if is_fairface_root(root):
            self.fairface_root = root
            root = ensure_selection(root, Path(selection).expanduser() if selection else root / "faceedit_grid",
                                    split=split, padding=padding, seed=seed, detector=detector,
                                    auto_select=bool(auto_select))
        self.root = root
        if not self.root.is_dir():
            raise FaceEditBenchError(f"portrait grid {self.root} is not a folder. {GET}")
        self.base_gender = base_gender
        self.require_approval = bool(require_approval)
        # checked by the core before the dataset is made (limit, max_references, min_base_fss, single_face_only)
        self.limit, self.max_references = limit, max_references
        self.min_base_fss, self.single_face_only = min_base_fss, single_face_only
        self._load  # noqa: B018 - read and verify now, so a bad selection stops the run before any work

    @classmethod
    def check(cls, **params: Any) -> list[str]:
        """``faceedit-bench data check fairface_grid <root>``: a grid folder's portraits and missing cells, or a
        FairFace root (checked as ``fairface``) and whether its selection exists yet. Nothing is selected."""
        root = _existing(params["root"])
        if not is_fairface_root(root):
            grid_set = cls(**params)
            description = grid_set.describe()
            return [f"grid folder ({description['selection']}): {description['cells_filled']} of "
                    f"{description['cells_expected']} cells filled, {description['n_faces']} faces",
                    *Face.label_summary(f.demographics for f in grid_set.faces()),
                    *[f"note: {n}" for n in description["notes"]]]
        selection = Path(params["selection"]).expanduser() if params.get("selection") else root / "faceedit_grid"
        lines = ["FairFace root: " + "; ".join(fairface_reader().check(
            root=root, split=params.get("split", "train"), padding=params.get("padding", 1.25))[:3])]
        if (selection / grid.MANIFEST).exists():
            lines += [f"selection {selection}: " + line for line in cls.check(**{**params, "root": selection})]
        else:
            lines.append(f"no selection at {selection} yet: the first run makes one there (auto_select), or make "
                         f"and look at it first: faceedit-bench portraits select --root {root} --out {selection}")
        return lines

    def describe(self) -> dict[str, Any]:
        selection, portraits, extra = self._load
        missing = self.missing_cells()
        return {
            "name": "fairface_grid",
            "root": str(self.root),
            **({"fairface_root": str(self.fairface_root)} if self.fairface_root else {}),
            "selection": selection,
            **extra,
            "base_gender": self.base_gender,
            "limit": self.limit,
            "min_base_fss": self.min_base_fss,
            "single_face_only": self.single_face_only,
            "reference_mode": "self",
            "cells_expected": len(grid.cells()),
            "cells_filled": len(grid.cells()) - len(missing),
            "missing_cells": missing,
            "notes": self.notes(),
            "n_faces": len(self._bases()),
        }

    def notes(self) -> list[str]:
        out = []
        missing = self.missing_cells()
        if missing:
            out.append(grid.missing_note(missing, len(grid.cells())))
        selection, _, extra = self._load
        if selection == "manifest" and not extra.get("approved_by"):
            out.append("The portrait selection has not been approved by a person (faceedit-bench portraits approve).")
        return out

    def missing_cells(self) -> list[str]:
        filled = {f.identity.split("/")[0] for f in self._all()}
        return [cell["cell"] for cell in grid.cells() if cell["cell"] not in filled]

    def faces(self) -> Iterator[Face]:
        yield from self._bases()

    def partners(self) -> Iterator[Face]:
        """Every portrait, whatever ``base_gender`` (the faces a step's further input may use)."""
        yield from self._all()

    def _bases(self) -> list[Face]:
        faces = [f for f in self._all() if self.base_gender in (None, f.demographics.get("gender"))]
        return faces[: self.limit]

    def _all(self) -> list[Face]:
        return self._load[1]

    @functools.cached_property
    def _load(self) -> tuple[str, list[Face], dict[str, Any]]:
        if (self.root / grid.MANIFEST).exists():
            manifest = grid.read_manifest(self.root)
            approval = manifest.get("approval") or {}
            if self.require_approval and not approval:
                raise FaceEditBenchError(f"{self.root / grid.MANIFEST} has not been approved; look at the contact "
                                         f"sheet and run `faceedit-bench portraits approve {self.root} --by <name>`, "
                                         "or set dataset.params.require_approval=false")
            entries = [(cell, n, self.root / p["file"]) for cell in manifest["cells"]
                       for n, p in enumerate(cell.get("portraits") or [], start=1)]
            extra = {"content_hash": manifest["content_hash"], "manifest_version": manifest.get("version"),
                     "approved_by": approval.get("by"), "source": manifest.get("source")}
            return "manifest", [self._face(*e) for e in entries], extra
        named, stray = grid.scan_folder(self.root)
        if stray:
            raise FaceEditBenchError(f"{self.root}: image file(s) not named {{Race}}_{{Gender}}_{{Age}}.jpg: "
                                     f"{', '.join(stray[:10])}. Rename them (Race in {', '.join(grid.RACES.values())}; "
                                     f"Age in {', '.join(grid.AGES.values())}) or move them out.")
        if not named:
            raise FaceEditBenchError(f"{self.root} holds no portraits and no {grid.MANIFEST}. {GET}")
        order = {cell["cell"]: i for i, cell in enumerate(grid.cells())}
        named.sort(key=lambda e: (order[e[0]["cell"]], e[1]))
        seen = [(e[0]["cell"], e[1]) for e in named]
        dupes = sorted({f"{cell}_{n}" for cell, n in seen if seen.count((cell, n)) > 1})
        if dupes:
            raise FaceEditBenchError(f"{self.root}: more than one file for {', '.join(dupes)} (e.g. .jpg and .png)")
        files = {f"{e[0]['cell']}/{e[1]}": grid.sha256_file(e[2]) for e in named}
        return "hand-made", [self._face(*e) for e in named], {"content_hash": fingerprint(files)}

    def _face(self, cell: dict[str, Any], n: int, image: Path) -> Face:
        if not image.is_file():
            raise FaceEditBenchError(f"portrait {image} is missing")
        age_groups = fairface_reader().AGE_GROUPS
        labels = {"gender": cell["gender"], "skin_tone": None, "age_group": age_groups.get(cell["age_bin"]),
                  "age": None, "race": cell["race"], "age_bin": cell["age_bin"]}  # Face.demographics' keys
        identity = f"{cell['cell']}/{n}"
        return Face(face_id=f"fairface_grid/{identity}", identity=identity, image=image, references=(),
                    demographics=labels)
