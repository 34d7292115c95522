"""``folder``: your own face images, described by a CSV manifest.

Layout::

    /data/myfaces/
        manifest.csv
        alice/portrait.jpg
        alice/holiday.jpg
        bob/id.png
        ...

``manifest.csv`` (UTF-8, comma separated) starts with the header
``file,identity,role,gender,skin_tone,age``; one row per image:

=============  ==============================================================================
``file``       image path relative to the dataset root (a path outside it, ``../`` or absolute, only with
               ``dataset.params.allow_outside_root=true``)
``identity``   any non-empty string; rows with the same value show the same person
``role``       ``base`` (an image I_0 that gets edited) or ``reference`` (another image of
               that person, used only to measure identity similarity, FSS)
``gender``     ``male``, ``female`` or empty (unknown)
``skin_tone``  ``light``, ``dark`` or empty
``age``        age in years, or empty; 20-30 counts as ``young`` and 50-60 as ``old``
               (METHODOLOGY §2.2), other ages are kept but left out of the age contrast
=============  ==============================================================================

Extra columns are allowed and become dataset-specific demographic labels (empty cell =
unknown), e.g. a ``race`` column. Example::

    file,identity,role,gender,skin_tone,age
    alice/portrait.jpg,alice,base,female,light,27
    alice/holiday.jpg,alice,reference,female,light,
    bob/id.png,bob,base,male,,

Rules: every file must exist and appear once; a reference is never a base image. The
references of a base image are its identity's reference rows (sorted by ``file``, at most
``max_references``). A base image whose identity has no reference row (``bob`` above) is
kept with ``references=()``: its FSS is then measured against the base image itself
(reference mode ``self``), which is weaker, and ``describe()`` counts such faces.
Labels come from the base image's own row.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from faceedit_bench.builtin.datasets import _common as c
from faceedit_bench.errors import DatasetError
from faceedit_bench.records import Face
from faceedit_bench.storage.user_files import file_under

COLUMNS = ("file", "identity", "role", "gender", "skin_tone", "age")
ROLES = ("base", "reference")
FORMAT = "faceedit_bench folder manifest v1"


class FolderDataset:
    """Images in a directory, listed by a CSV manifest (format: module docstring).

    :param root: the dataset directory.
    :param manifest: the manifest CSV, relative to ``root`` or absolute (default
        ``manifest.csv``).
    :param name: prefix of every ``face_id`` (``<name>/<file>``) and the name reported.
    :param limit: at most this many base faces, first in ``file`` order (null = all).
    :param max_references: at most this many references per identity (null = all).
    :param min_base_fss: FSS threshold a base image must pass against its references; the
        engine applies it with the embedder (null = keep every base image).
    :param single_face_only: the engine drops base images where the detector finds other
        than exactly one face.
    :param allow_outside_root: let the manifest name files outside ``root`` (``../``, absolute paths);
        refused by default, so a manifest cannot make a run read any file the user can read.
    """

    #: The manifest is read once, no image is opened: a run's faces are checked for what its metrics need.
    faces_cheap = True

    def __init__(
        self,
        root: str | Path,
        manifest: str | Path = "manifest.csv",
        name: str = "folder",
        limit: int | None = None,
        max_references: int | None = 10,
        min_base_fss: float | None = None,
        single_face_only: bool = True,
        allow_outside_root: bool = False,
    ) -> None:
        get = "Create it with your images and a manifest.csv (see faceedit_bench.builtin.datasets.folder)."
        self.root = c.require(
            Path(root).expanduser(), "folder dataset root", get=get, example="/data/myfaces"
        )
        self.manifest = c.require(
            c.resolve(self.root, manifest), "folder dataset manifest", get=get, param="manifest",
            example="manifest.csv", root=self.root,
        )
        self.name = name
        self.limit = c.check_limit(limit)
        self.max_references = c.check_dataset_count("max_references", max_references)
        self.min_base_fss = c.check_fss(min_base_fss)
        self.single_face_only = c.check_dataset_flag("single_face_only", single_face_only)
        self.allow_outside_root = c.check_dataset_flag("allow_outside_root", allow_outside_root)

    def describe(self) -> dict[str, Any]:
        faces = self._faces
        n_self = sum(1 for f in faces if not f.references)
        mode = "self" if faces and n_self == len(faces) else "other_images" if not n_self else "mixed"
        return {
            "name": self.name,
            "root": str(self.root),
            "manifest": str(self.manifest),
            "format": FORMAT,
            "limit": self.limit,
            "max_references": self.max_references,
            "min_base_fss": self.min_base_fss,
            "single_face_only": self.single_face_only,
            "reference_mode": mode,
            "n_faces": len(faces),
            "n_identities": len({f.identity for f in faces}),
            "n_self_reference": n_self,
        }

    def faces(self) -> Iterator[Face]:
        yield from self._faces

    def _listed(self, file: str, lineno: int) -> Path:
        return file_under(self.root, file, f"{self.manifest}, line {lineno}", what="image", error=DatasetError,
                          allow_outside=self.allow_outside_root,
                          how_to_allow="set dataset.params.allow_outside_root=true")

    @functools.cached_property
    def _faces(self) -> list[Face]:
        # A manifest is user-sized, and checking that no reference is a base image
        # needs every row, so the whole manifest is read once.
        bases: list[tuple[str, str, dict[str, str | None]]] = []
        refs: dict[str, list[str]] = {}
        seen: dict[Path, int] = {}
        for lineno, row in c.read_csv(self.manifest, COLUMNS):
            file, identity = row["file"], row["identity"]
            if not file or not identity:
                raise c.bad_line(self.manifest, lineno, "file and identity must not be empty")
            role = row["role"]
            if role not in ROLES:
                raise c.bad_line(self.manifest, lineno, f"role {role!r} is not base or reference")
            path = self._listed(file, lineno)
            if not path.is_file():
                raise c.bad_line(self.manifest, lineno, f"image {path} does not exist")
            key = path.resolve()
            if key in seen:
                raise c.bad_line(self.manifest, lineno, f"{file} is already listed on line {seen[key]}; "
                                 "an image is either a base image or a reference, once")
            seen[key] = lineno
            if role == "base":
                bases.append((file, identity, self._labels(row, lineno)))
            else:
                refs.setdefault(identity, []).append(file)
        if not bases:
            raise c.no_faces(self.manifest, "base image (a row with role=base)",
                             "Add a row per image to edit under the header, e.g. "
                             "alice/portrait.jpg,alice,base,female,light,27 (format: faceedit-bench "
                             "docs, or the faceedit_bench.builtin.datasets.folder docstring).")
        bases.sort(key=lambda b: c.natural_key(b[0]))
        faces = []
        for file, identity, labels in bases[: self.limit]:
            ref_files = sorted(refs.get(identity, ()), key=c.natural_key)[: self.max_references]
            faces.append(Face(
                face_id=f"{self.name}/{file}",
                identity=identity,
                image=self.root / file,
                references=tuple(self.root / r for r in ref_files),
                demographics=labels,
            ))
        return faces

    def _labels(self, row: dict[str, str], lineno: int) -> dict[str, str | None]:
        if "age_group" in row:
            raise c.bad_line(self.manifest, 1, "age_group is derived from age; remove the age_group column")
        age = _age(self.manifest, lineno, row["age"])
        extra = {k: (v or None) for k, v in row.items() if k not in COLUMNS}
        return c.demographics(
            c.label(self.manifest, lineno, "gender", row["gender"], c.GENDERS),
            c.label(self.manifest, lineno, "skin_tone", row["skin_tone"], c.SKIN_TONES),
            c.age_group(age),
            age,
            **extra,
        )


def _age(path: Path, lineno: int, text: str) -> int | None:
    if not text:
        return None
    try:
        age = float(text)
    except ValueError:
        age = math.nan
    if not 0 <= age <= 150:
        raise c.bad_line(path, lineno, f"age {text!r} is not a number of years between 0 and 150")
    return int(age)  # completed years

