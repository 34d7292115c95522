"""``celebset``: CelebSET-style celebrity faces from IMDB-WIKI (METHODOLOGY §6.3-6.4).

No public CelebSET annotation file or format exists, so this loader reads a
RECONSTRUCTION, from one of two inputs:

(a) ``celebset.csv`` (§6.4), one row per image, header
    ``file,celeb_name,celeb_id,gender,skin,dob,photo_taken,age,age_group,split``:
    ``file`` is the IMDB-WIKI ``full_path`` (relative to the crop folder ``root``),
    ``gender`` male/female, ``skin`` light/dark, ``dob`` YYYY-MM-DD, ``photo_taken`` a
    year, ``age`` years, ``age_group`` young (20-30) / old (50-60) / other, ``split``
    base/reference. Empty cells mean unknown. The identity is ``celeb_name``.

(b) an IMDB-WIKI crop release (``imdb_crop/`` with ``imdb.mat``, or ``wiki_crop/`` with
    ``wiki.mat``) plus a CSV ``name,skin_tone`` giving each chosen celebrity's skin tone
    (light/dark, labelled by hand as §6.4 prescribes). Only celebrities in that CSV are
    used, optionally narrowed by an allow-list; only single-face images are kept
    (finite ``face_score`` above ``min_face_score`` and no second face).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator
from datetime import date
from pathlib import Path
from typing import Any

from faceedit_bench.builtin.datasets import _common as c
from faceedit_bench.builtin.datasets.imdb_wiki import read_mat
from faceedit_bench.errors import DatasetError
from faceedit_bench.records import Face
from faceedit_bench.storage.user_files import read_utf8

CSV_COLUMNS = (
    "file", "celeb_name", "celeb_id", "gender", "skin", "dob", "photo_taken", "age", "age_group", "split",
)
#: celebrity -> (base images as (file, labels), reference files)
_Groups = dict[str, tuple[list[tuple[str, dict[str, str | None]]], list[str]]]
#: Base images per celebrity taken from a .mat release when ``bases_per_identity`` is
#: null: about 1.5x the paper's final 517/80 per celebrity, so the engine's FSS filter
#: (min_base_fss) still leaves enough.
MAT_BASES_PER_IDENTITY = 10
GET = (
    "CelebSET has no public annotation file: build celebset.csv (METHODOLOGY §6.4) next to the "
    "IMDB-WIKI crops (https://data.vision.ee.ethz.ch/cvl/rrothe/imdb-wiki/, imdb_crop.tar), or use "
    "the crops' imdb.mat with dataset.params.mat=imdb.mat and dataset.params.skin_tones=<name,skin_tone CSV>."
)


class CelebSETDataset:
    """CelebSET reconstruction (format: module docstring).

    From a CSV, bases are the ``split=base`` rows and references the identity's
    ``split=reference`` rows. From a ``.mat`` file, each celebrity's single-face images,
    sorted by ``full_path``, give the first ``bases_per_identity`` as bases (leaving at
    least one reference) and the rest as references. References are capped at
    ``max_references`` (file order); a base whose celebrity has no reference keeps
    ``references=()`` (FSS against itself, counted in ``describe()``). Faces are yielded
    in file order. ``age_group``: young 20-30, old 50-60 (§2.2).

    :param root: the IMDB-WIKI crop folder (image paths are relative to it).
    :param annotations: input (a), relative to ``root`` or absolute (default ``celebset.csv``).
    :param mat: input (b), e.g. ``imdb.mat``; when set, ``annotations`` is not read.
    :param skin_tones: input (b) only: CSV ``name,skin_tone`` of the celebrities to use.
    :param allow_list: only these celebrity names: a list, or a text file with one per line.
    :param min_face_score: input (b): minimum ``face_score`` (default 0, as §6.3).
    :param bases_per_identity: most base images per celebrity (null: every base row of
        a CSV; 10 from a .mat).
    :param limit: at most this many faces, first in file order (null = all).
    :param max_references: at most this many references per celebrity (default 10).
    :param min_base_fss: FSS a base image must reach, applied by the engine (default 0.85,
        the paper's CelebSET threshold).
    :param single_face_only: the engine drops base images with other than one detected face.
    """

    def __init__(
        self,
        root: str | Path,
        annotations: str | Path = "celebset.csv",
        mat: str | Path | None = None,
        skin_tones: str | Path | None = None,
        allow_list: str | Path | Iterable[str] | None = None,
        min_face_score: float = 0.0,
        bases_per_identity: int | None = None,
        limit: int | None = None,
        max_references: int | None = 10,
        min_base_fss: float | None = 0.85,
        single_face_only: bool = True,
    ) -> None:
        self.root = c.require(Path(root).expanduser(), "CelebSET/IMDB-WIKI crop folder", get=GET,
                              example="/data/imdb_crop")
        if mat is not None:
            self.source = "mat"
            self.input = c.require(c.resolve(self.root, mat), "IMDB-WIKI .mat file", get=GET, param="mat",
                                   example="imdb.mat", root=self.root)
            if skin_tones is None:
                raise DatasetError(
                    "dataset.params.skin_tones is required with dataset.params.mat: a CSV with "
                    "header name,skin_tone (light/dark) listing the celebrities to use."
                )
            self.skin_tones: Path | None = c.require(
                c.resolve(self.root, skin_tones), "skin-tone CSV", get=GET, param="skin_tones",
                example="/data/celebset_skin.csv",
            )
        else:
            self.source = "csv"
            self.input = c.require(c.resolve(self.root, annotations), "CelebSET annotation CSV", get=GET,
                                   param="annotations", example="/data/imdb_crop/celebset.csv", root=self.root)
            self.skin_tones = None
        self.allow_list = _allow_list(self.root, allow_list)
        self.min_face_score = float(min_face_score)
        self.bases_per_identity = c.check_dataset_count("bases_per_identity", bases_per_identity)
        if self.bases_per_identity is None and self.source == "mat":
            self.bases_per_identity = MAT_BASES_PER_IDENTITY
        self.limit = c.check_limit(limit)
        self.max_references = c.check_dataset_count("max_references", max_references)
        self.min_base_fss = c.check_fss(min_base_fss)
        self.single_face_only = c.check_dataset_flag("single_face_only", single_face_only)

    def describe(self) -> dict[str, Any]:
        plan = self._plan
        n_self = sum(1 for _, _, refs, _ in plan if not refs)
        return {
            "name": "celebset",
            "root": str(self.root),
            "source": self.source,
            "input": str(self.input),
            "skin_tones": None if self.skin_tones is None else str(self.skin_tones),
            "format": "CelebSET reconstruction (METHODOLOGY §6.4; no public annotation format exists), from "
            + ("celebset.csv" if self.source == "csv" else "IMDB-WIKI .mat + skin-tone CSV"),
            "reconstruction": True,
            "allow_list": None if self.allow_list is None else sorted(self.allow_list),
            "min_face_score": self.min_face_score if self.source == "mat" else None,
            "bases_per_identity": self.bases_per_identity,
            "limit": self.limit,
            "max_references": self.max_references,
            "min_base_fss": self.min_base_fss,
            "single_face_only": self.single_face_only,
            "reference_mode": "other_images" if not n_self else "self" if n_self == len(plan) else "mixed",
            "n_faces": len(plan),
            "n_identities": len({identity for _, identity, _, _ in plan}),
            "n_self_reference": n_self,
        }

    def faces(self) -> Iterator[Face]:
        for file, identity, refs, labels in self._plan:
            face = Face(face_id=f"celebset/{file}", identity=identity, image=self.root / file,
                        references=tuple(self.root / r for r in refs), demographics=labels)
            c.check_files((face.image, *face.references), "CelebSET", self.root)
            yield face

    @functools.cached_property
    def _plan(self) -> list[tuple[str, str, tuple[str, ...], dict[str, str | None]]]:
        groups = self._groups_from_csv() if self.source == "csv" else self._groups_from_mat()
        if not any(bases for bases, _ in groups.values()):
            narrowed = " among the celebrities of dataset.params.allow_list" if self.allow_list is not None else ""
            how = ("Give rows with split=base." if self.source == "csv" else
                   "Check that the skin-tone CSV names celebrities of the .mat file, each with at least two "
                   "single-face images (face_score above dataset.params.min_face_score).")
            raise c.no_faces(self.input, f"base image{narrowed}", how)
        plan = []
        for identity in sorted(groups):
            bases, refs = groups[identity]
            refs = sorted(refs, key=c.natural_key)[: self.max_references]
            for file, labels in sorted(bases, key=lambda b: c.natural_key(b[0]))[: self.bases_per_identity]:
                plan.append((file, identity, tuple(refs), labels))
        plan.sort(key=lambda p: c.natural_key(p[0]))
        return plan[: self.limit]

    def _groups_from_csv(self) -> _Groups:
        path, seen = self.input, set()
        groups: _Groups = {}
        for lineno, row in c.read_csv(path, CSV_COLUMNS):
            file, name = row["file"], row["celeb_name"]
            if not file or not name:
                raise c.bad_line(path, lineno, "file and celeb_name must not be empty")
            if file in seen:
                raise c.bad_line(path, lineno, f"{file} is listed twice; list each image once")
            seen.add(file)
            split = c.label(path, lineno, "split", row["split"], ("base", "reference"))
            if split is None:
                raise c.bad_line(path, lineno, "split must be base or reference")
            labels = _csv_labels(path, lineno, row)
            if self.allow_list is not None and name not in self.allow_list:
                continue
            bases, refs = groups.setdefault(name, ([], []))
            if split == "base":
                bases.append((file, labels))
            else:
                refs.append(file)
        return groups

    def _groups_from_mat(self) -> _Groups:
        skins = _read_skin_tones(self.skin_tones)  # type: ignore[arg-type]
        if self.allow_list is not None:
            unlabelled = sorted(self.allow_list - skins.keys())
            if unlabelled:
                raise DatasetError(
                    f"allow_list names without a row in {self.skin_tones}: {', '.join(unlabelled)}"
                )
        wanted = skins.keys() if self.allow_list is None else self.allow_list
        by_name: dict[str, dict[str, Any]] = {}
        for img in read_mat(self.input):
            if img.name in wanted and img.single_face(self.min_face_score):
                # keyed by path: a duplicated entry must not become its own reference
                by_name.setdefault(img.name, {}).setdefault(img.full_path, img)
        groups: _Groups = {}
        for name, by_path in by_name.items():
            images = sorted(by_path.values(), key=lambda i: c.natural_key(i.full_path))
            n_bases = min(self.bases_per_identity or 0, len(images) - 1)  # keep >= 1 reference
            bases = [(i.full_path, c.demographics(i.gender, skins[name], c.age_group(i.age), i.age))
                     for i in images[:n_bases]]
            groups[name] = (bases, [i.full_path for i in images[n_bases:]])
        return groups


def _csv_labels(path: Path, lineno: int, row: dict[str, str]) -> dict[str, str | None]:
    age = None
    if row["age"]:
        if not row["age"].isdigit():
            raise c.bad_line(path, lineno, f"age {row['age']!r} is not a whole number of years")
        age = int(row["age"])
    group = c.label(path, lineno, "age_group", row["age_group"], ("young", "old", "other"))
    if age is not None and group is not None and (c.age_group(age) or "other") != group:
        raise c.bad_line(path, lineno, f"age_group {group!r} contradicts age {age} (young 20-30, old 50-60)")
    if row["dob"]:
        try:
            date.fromisoformat(row["dob"])
        except ValueError:
            raise c.bad_line(path, lineno, f"dob {row['dob']!r} is not YYYY-MM-DD") from None
    if row["photo_taken"] and not row["photo_taken"].isdigit():
        raise c.bad_line(path, lineno, f"photo_taken {row['photo_taken']!r} is not a year")
    if age is not None:
        group = c.age_group(age)
    return c.demographics(
        c.label(path, lineno, "gender", row["gender"], c.GENDERS),
        c.label(path, lineno, "skin", row["skin"], c.SKIN_TONES),
        None if group == "other" else group,
        age,
    )


def _read_skin_tones(path: Path) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for lineno, row in c.read_csv(path, ("name", "skin_tone")):
        if not row["name"] or row["name"] in out:
            raise c.bad_line(path, lineno, f"name {row['name']!r} is empty or listed twice")
        out[row["name"]] = c.label(path, lineno, "skin_tone", row["skin_tone"], c.SKIN_TONES)
    return out


def _allow_list(root: Path, value: str | Path | Iterable[str] | None) -> frozenset[str] | None:
    if value is None:
        return None
    if isinstance(value, (str, Path)):
        path = c.require(
            c.resolve(root, value), "celebrity allow-list", get="Write one celebrity name per line.",
            param="allow_list", example="/data/celebset_names.txt",
        )
        lines = read_utf8(path, what="celebrity allow-list", error=DatasetError).splitlines()
        return frozenset(line.strip() for line in lines if line.strip())
    return frozenset(str(v) for v in value)
