"""``fairface``: FairFace portraits with their label CSVs (METHODOLOGY §6.2)."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from faceedit_bench.builtin.datasets import _common as c
from faceedit_bench.errors import ConfigError
from faceedit_bench.records import Face

COLUMNS = ("file", "age", "gender", "race", "service_test")
AGE_BINS = ("0-2", "3-9", "10-19", "20-29", "30-39", "40-49", "50-59", "60-69", "more than 70")
GENDERS = ("Male", "Female")
RACES = ("White", "Black", "Latino_Hispanic", "East Asian", "Southeast Asian", "Indian", "Middle Eastern")
#: Closest bins to the §2.2 age groups (20-30 young, 50-60 old).
AGE_GROUPS = {"20-29": "young", "50-59": "old"}
GET = (
    "Download FairFace (images fairface-img-margin125-trainval.zip or margin025, and "
    "fairface_label_train.csv / fairface_label_val.csv) from https://github.com/joojs/fairface "
    "and unzip so that <root>/val/1.jpg and <root>/fairface_label_val.csv exist."
)


class FairFaceDataset:
    """FairFace images, one face per image, no identities.

    FairFace has one image per person, so every face is its own identity
    (``identity`` = its file) and ``references`` is empty: FSS is measured against the
    base image itself (reference mode ``self``). Labels: ``gender`` lower-cased,
    ``race`` (7 classes), ``age_bin`` (the FairFace bin); ``age_group`` is ``young`` for
    20-29 and ``old`` for 50-59, the bins nearest METHODOLOGY §2.2, else null.
    ``skin_tone`` is null: it is never derived from ``race``. Faces are yielded in
    natural file order (``val/9.jpg`` before ``val/10.jpg``).

    :param root: the unzipped FairFace directory (holding ``train/`` and ``val/``).
    :param split: ``val`` (default) or ``train``.
    :param labels: the label CSV, relative to ``root`` or absolute (default
        ``fairface_label_<split>.csv``).
    :param padding: which image release ``root`` holds, 0.25 or 1.25; informational,
        recorded in ``describe()`` (paper (b) used 1.25).
    :param limit: at most this many faces (null = all).
    :param max_references: accepted for a uniform config; unused (no references).
    :param min_base_fss: FSS threshold the engine applies to base images (default null).
    :param single_face_only: the engine drops images with other than one detected face
        (default false: paper (b) used every FairFace image as is).
    """

    def __init__(
        self,
        root: str | Path,
        split: str = "val",
        labels: str | Path | None = None,
        padding: float = 1.25,
        limit: int | None = None,
        max_references: int | None = 10,
        min_base_fss: float | None = None,
        single_face_only: bool = False,
    ) -> None:
        if split not in ("train", "val"):
            raise ConfigError(f"dataset.params.split must be train or val, got {split!r}")
        if padding not in (0.25, 1.25):
            raise ConfigError(f"dataset.params.padding must be 0.25 or 1.25 (the releases), got {padding!r}")
        self.root = c.require(Path(root).expanduser(), "FairFace root", get=GET, example="/data/fairface")
        self.labels = c.require(
            c.resolve(self.root, labels or f"fairface_label_{split}.csv"), "FairFace label file", get=GET,
            param="labels", example=f"/data/fairface/fairface_label_{split}.csv",
        )
        self.split = split
        self.padding = float(padding)
        self.limit = c.check_limit(limit)
        self.max_references = c.check_positive("max_references", max_references)
        self.min_base_fss = c.check_fss(min_base_fss)
        self.single_face_only = bool(single_face_only)

    def describe(self) -> dict[str, Any]:
        return {
            "name": "fairface",
            "root": str(self.root),
            "labels": str(self.labels),
            "format": "FairFace label CSV (file,age,gender,race,service_test)",
            "split": self.split,
            "padding": self.padding,
            "limit": self.limit,
            "min_base_fss": self.min_base_fss,
            "single_face_only": self.single_face_only,
            "reference_mode": "self",
            "n_faces": len(self._plan),
        }

    def faces(self) -> Iterator[Face]:
        for file, labels in self._plan:
            face = Face(face_id=f"fairface/{file}", identity=file, image=self.root / file,
                        references=(), demographics=labels)
            c.check_files((face.image,), "FairFace")
            yield face

    @functools.cached_property
    def _plan(self) -> list[tuple[str, dict[str, str | None]]]:
        # Read and check every row first, so a bad row stops the run before any work.
        rows, seen = [], set()
        for lineno, row in c.read_csv(self.labels, COLUMNS):
            if not row["file"] or row["file"] in seen:
                raise c.bad_line(self.labels, lineno, f"file {row['file']!r} is empty or listed twice")
            seen.add(row["file"])
            age = c.label(self.labels, lineno, "age", row["age"], AGE_BINS)
            gender = c.label(self.labels, lineno, "gender", row["gender"], GENDERS)
            race = c.label(self.labels, lineno, "race", row["race"], RACES)
            c.label(self.labels, lineno, "service_test", row["service_test"], ("True", "False"))
            labels = c.demographics(
                gender.lower() if gender else None, None, AGE_GROUPS.get(age or ""), None,
                race=race, age_bin=age,
            )
            rows.append((row["file"], labels))
        if not rows:
            raise c.no_faces(self.labels, "image (only a header)",
                             "Use the label file of the FairFace release, e.g. fairface_label_val.csv.")
        rows.sort(key=lambda r: c.natural_key(r[0]))
        return rows[: self.limit]
