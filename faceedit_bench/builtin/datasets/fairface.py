"""``fairface``: FairFace portraits in either published layout (METHODOLOGY §6.2): the official label
CSVs with ``train/`` and ``val/`` images, or the Hugging Face ``HuggingFaceM4/FairFace`` parquet files
(:mod:`faceedit_bench.builtin.datasets.fairface_hf`)."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from faceedit_bench.builtin.datasets import _common as c
from faceedit_bench.builtin.datasets.fairface_hf import HF_SPLITS, ParquetSplit, find_files
from faceedit_bench.errors import ConfigError, DatasetError
from faceedit_bench.records import Face
from faceedit_bench.storage.images import unreadable_images

COLUMNS = ("file", "age", "gender", "race", "service_test")
AGE_BINS = ("0-2", "3-9", "10-19", "20-29", "30-39", "40-49", "50-59", "60-69", "more than 70")
GENDERS = ("Male", "Female")
RACES = ("White", "Black", "Latino_Hispanic", "East Asian", "Southeast Asian", "Indian", "Middle Eastern")
#: Closest bins to the §2.2 age groups (20-30 young, 50-60 old).
AGE_GROUPS = {"20-29": "young", "50-59": "old"}
GET = (
    "Download FairFace (images fairface-img-margin125-trainval.zip or margin025, and "
    "fairface_label_train.csv / fairface_label_val.csv) from https://github.com/joojs/fairface "
    "and unzip so that <root>/val/1.jpg and <root>/fairface_label_val.csv exist; or download the "
    "Hugging Face dataset HuggingFaceM4/FairFace so that <root>/1.25/train-00000-of-00002.parquet exists."
)
LAYOUTS = ("auto", "csv", "hf")


class FairFaceDataset:
    """FairFace images, one face per image, no identities.

    FairFace has one image per person, so every face is its own identity
    (``identity`` = its file) and ``references`` is empty: FSS is measured against the
    base image itself (reference mode ``self``). Labels: ``gender`` lower-cased,
    ``race`` (7 classes), ``age_bin`` (the FairFace bin); ``age_group`` is ``young`` for
    20-29 and ``old`` for 50-59, the bins nearest METHODOLOGY §2.2, else null.
    ``skin_tone`` is null: it is never derived from ``race``. Faces are yielded in
    natural file order (``val/9.jpg`` before ``val/10.jpg``).

    Two layouts: ``csv`` (the official release: label CSVs, ``train/N.jpg``; a face is ``val/N.jpg``)
    and ``hf`` (``HuggingFaceM4/FairFace`` parquet files, ``<root>/<padding>/<split>-*.parquet``, split
    ``val`` read from the ``validation`` files; a face is ``1.25/train/<row>``, its image copied once into
    ``cache_dir``). Both give the same labels.

    :param root: the unzipped FairFace directory (holding ``train/`` and ``val/``), or the
        Hugging Face dataset folder (holding ``1.25/`` or ``0.25/``).
    :param split: ``val`` (default) or ``train``.
    :param labels: the label CSV, relative to ``root`` or absolute (default
        ``fairface_label_<split>.csv``; csv layout only).
    :param padding: which image release ``root`` holds, 0.25 or 1.25 (paper (b) used 1.25); in the
        hf layout it is the config folder read.
    :param layout: ``auto`` (default: csv when the label file exists, else hf), ``csv`` or ``hf``.
    :param cache_dir: where the hf layout's images are copied (default ``~/.cache/faceedit_bench/fairface``).
    :param limit: at most this many faces (null = all).
    :param max_references: accepted for a uniform config; unused (no references).
    :param min_base_fss: FSS threshold the engine applies to base images (default null).
    :param single_face_only: the engine drops images with other than one detected face
        (default false: paper (b) used every FairFace image as is).
    """

    #: FairFace's age bins that have a §2.2 age group (for datasets built on FairFace's labels).
    AGE_GROUPS = AGE_GROUPS

    #: Every FairFace row has these (DATASET_CAPABILITIES): a run's metrics are checked against them.
    label_keys = ("gender", "race", "age_bin")

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
        layout: str = "auto",
        cache_dir: str | Path = "~/.cache/faceedit_bench/fairface",
    ) -> None:
        if split not in ("train", "val"):
            raise ConfigError(f"dataset.params.split must be train or val, got {split!r}")
        if padding not in (0.25, 1.25):
            raise ConfigError(f"dataset.params.padding must be 0.25 or 1.25 (the releases), got {padding!r}")
        if layout not in LAYOUTS:
            raise ConfigError(f"dataset.params.layout must be one of {', '.join(LAYOUTS)}, got {layout!r}")
        self.root = c.require(Path(root).expanduser(), "FairFace root", get=GET, example="/data/fairface")
        label_file = c.resolve(self.root, labels or f"fairface_label_{split}.csv")
        self.parquet: ParquetSplit | None = None
        self.labels: Path | None = None
        if layout == "hf" or (layout == "auto" and labels is None and not label_file.exists()):
            files = find_files(self.root, f"{padding:.2f}", split)
            if not files:
                raise DatasetError(
                    f"FairFace: neither {label_file} (csv layout) nor {self.root / f'{padding:.2f}'}/"
                    f"{HF_SPLITS[split]}-*.parquet (Hugging Face layout) exists."
                    f"{c.layout_hint(label_file, self.root) or c.layout_hint(self.root / f'{padding:.2f}', self.root)}"
                    f" {GET} Then point the config at it, e.g. dataset.params.root=/data/fairface")
            self.parquet = ParquetSplit(files, Path(cache_dir).expanduser())
        else:
            self.labels = c.require(label_file, "FairFace label file", get=GET, param="labels",
                                    example=f"/data/fairface/fairface_label_{split}.csv", root=self.root)
        self.layout = "hf" if self.parquet else "csv"
        self.split = split
        self.padding = float(padding)
        self.limit = c.check_limit(limit)
        self.max_references = c.check_dataset_count("max_references", max_references)
        self.min_base_fss = c.check_fss(min_base_fss)
        self.single_face_only = c.check_dataset_flag("single_face_only", single_face_only)

    @classmethod
    def check(cls, *, decode: bool = True, **params: Any) -> list[str]:
        """``faceedit-bench data check fairface <root>``: the labels read and every listed image present and,
        with ``decode``, decoded (csv layout), or the parquet rows (hf layout; images are only copied out by a
        run). Nothing is written."""
        dataset = cls(**params)
        plan = dataset.candidates()
        decoded: list[str] = []
        if dataset.parquet is None:
            missing = [dataset.root / file for file, _ in plan if not (dataset.root / file).is_file()]
            if missing:
                raise DatasetError(f"{len(missing)} of {len(plan)} images listed in {dataset.labels} are missing, "
                                   f"e.g. {missing[0]}.{c.layout_hint(missing[0], dataset.root)} Unzip the images of "
                                   f"the release into {dataset.root}. {GET}")
            if decode:
                n, unreadable = unreadable_images(dataset.root / file for file, _ in plan)
                if unreadable:
                    shown = "; ".join(unreadable[:5]) + (f"; and {len(unreadable) - 5} more" if len(unreadable) > 5
                                                         else "")
                    raise DatasetError(f"{len(unreadable)} of {n} images do not decode: {shown}")
                decoded = [f"images decoded: {n} of {n} readable"]
            where = f"{dataset.labels.name if dataset.labels else ''} and the images it lists"
            release = (f"padding {dataset.padding} assumed: label files and images do not say which release they "
                       "are (paper (b) used 1.25: fairface-img-margin125-trainval.zip)")
        else:
            where = ", ".join(p.name for p in dataset.parquet.files)
            release = f"padding {dataset.padding} (the {dataset.padding:.2f}/ folder; paper (b) used 1.25)"
        return [f"layout {dataset.layout}: {where}", f"split {dataset.split}, {release}",
                f"{len(plan)} faces (each its own identity; FSS against itself)",
                *Face.label_summary(labels for _, labels in plan), *decoded]

    def describe(self) -> dict[str, Any]:
        fmt = ("HuggingFaceM4/FairFace parquet (image struct, ClassLabel age/gender/race, service_test)"
               if self.parquet else "FairFace label CSV (file,age,gender,race,service_test)")
        return {
            "name": "fairface",
            "root": str(self.root),
            "layout": self.layout,
            **({"files": [p.name for p in self.parquet.files]} if self.parquet else {"labels": str(self.labels)}),
            "format": fmt,
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
            yield self.face(file, labels)

    def candidates(self) -> list[tuple[str, dict[str, str | None]]]:
        """Every face's key (``val/1.jpg`` or ``1.25/train/0``) and labels, without touching images."""
        return list(self._plan)

    def face(self, file: str, labels: dict[str, str | None]) -> Face:
        """The face of one key of :meth:`candidates` (its image checked, or copied out of the parquet file)."""
        if self.parquet is not None:
            image = self.parquet.image_file(int(file.rsplit("/", 1)[1]), file.replace("/", "_"))
        else:
            image = self.root / file
            c.check_files((image,), "FairFace", self.root)
        return Face(face_id=f"fairface/{file}", identity=file, image=image, references=(), demographics=labels)

    @functools.cached_property
    def _plan(self) -> list[tuple[str, dict[str, str | None]]]:
        if self.parquet is not None:
            return self._parquet_plan()[: self.limit]
        # Read and check every row first, so a bad row stops the run before any work.
        assert self.labels is not None
        rows, seen = [], set()
        for lineno, row in c.read_csv(self.labels, COLUMNS):
            if not row["file"] or row["file"] in seen:
                raise c.bad_line(self.labels, lineno, f"file {row['file']!r} is empty or listed twice")
            seen.add(row["file"])
            age = c.label(self.labels, lineno, "age", row["age"], AGE_BINS)
            gender = c.label(self.labels, lineno, "gender", row["gender"], GENDERS)
            race = c.label(self.labels, lineno, "race", row["race"], RACES)
            c.label(self.labels, lineno, "service_test", row["service_test"], ("True", "False"))
            rows.append((row["file"], demographics(gender, race, age)))
        if not rows:
            raise c.no_faces(self.labels, "image (only a header)",
                             "Use the label file of the FairFace release, e.g. fairface_label_val.csv.")
        rows.sort(key=lambda r: c.natural_key(r[0]))
        return rows[: self.limit]

    def _parquet_plan(self) -> list[tuple[str, dict[str, str | None]]]:
        assert self.parquet is not None
        rows = self.parquet.rows
        if not rows:
            raise DatasetError(f"{self.parquet.files[0]}: the parquet files hold no rows (0 faces)")
        key = f"{self.padding:.2f}/{self.split}"
        return [(f"{key}/{n}", demographics(r["gender"], r["race"], r["age"])) for n, r in enumerate(rows)]


def demographics(gender: str | None, race: str | None, age: str | None) -> dict[str, str | None]:
    """The ``Face.demographics`` of FairFace labels (the same for both layouts)."""
    return c.demographics(gender.lower() if gender else None, None, AGE_GROUPS.get(age or ""), None,
                          race=race, age_bin=age)
