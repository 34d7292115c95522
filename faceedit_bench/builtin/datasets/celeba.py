"""``celeba``: CelebA aligned faces in the official layout (METHODOLOGY §6.1).

Reads ``Anno/list_attr_celeba.txt``, ``Anno/identity_CelebA.txt``,
``Eval/list_eval_partition.txt`` and images from ``Img/img_align_celeba/``.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from faceedit_bench.builtin.datasets import _common as c
from faceedit_bench.errors import ConfigError, DatasetError
from faceedit_bench.records import Face
from faceedit_bench.storage.user_files import read_utf8

ATTR_FILE = "Anno/list_attr_celeba.txt"
IDENTITY_FILE = "Anno/identity_CelebA.txt"
PARTITION_FILE = "Eval/list_eval_partition.txt"
IMAGE_DIR = "Img/img_align_celeba"
PARTITIONS = {"train": 0, "val": 1, "test": 2}
N_ATTRIBUTES = 40
GET = (
    "Download CelebA (Align&Cropped images, Anno/ and Eval/) from "
    "https://mmlab.ie.cuhk.edu.hk/projects/CelebA.html and keep its folder layout."
)


class CelebADataset:
    """CelebA base faces with references from the same identity.

    Selection, deterministic: identities in ascending id order; each contributes its
    first ``bases_per_identity`` images (by file name) from ``partition``, but always
    leaves at least one other image of the identity for its references. References are
    the identity's other images from any partition, minus every chosen base image, first
    ``max_references`` by file name. Faces are yielded in file-name order.
    Labels: ``gender`` from ``Male``, ``age_group`` from ``Young`` (not young = old,
    METHODOLOGY §2.2); CelebA has no skin-tone label, and none is derived.

    :param root: the CelebA directory (holding ``Anno/``, ``Eval/``, ``Img/``).
    :param partition: ``train``, ``val``, ``test`` (default) or ``all``.
    :param bases_per_identity: base images per identity (default 1).
    :param limit: at most this many faces, first in file order (null = all).
    :param max_references: at most this many references per identity (default 10).
    :param min_base_fss: FSS a base image must reach against its references; the engine
        applies it with the embedder (default 0.95, the paper's CelebA threshold).
    :param single_face_only: the engine drops base images with other than one detected
        face (default true, as in the paper).
    """

    def __init__(
        self,
        root: str | Path,
        partition: str = "test",
        bases_per_identity: int = 1,
        limit: int | None = None,
        max_references: int | None = 10,
        min_base_fss: float | None = 0.95,
        single_face_only: bool = True,
    ) -> None:
        self.root = c.require(Path(root).expanduser(), "CelebA root", get=GET, example="/data/celeba")
        for rel in (ATTR_FILE, IDENTITY_FILE, PARTITION_FILE, IMAGE_DIR):
            c.require(self.root / rel, f"CelebA {rel}", get=GET, example="/data/celeba", root=self.root)
        if partition not in (*PARTITIONS, "all"):
            raise ConfigError(f"dataset.params.partition must be train, val, test or all, got {partition!r}")
        self.partition = partition
        self.bases_per_identity = c.check_dataset_count("bases_per_identity", bases_per_identity, allow_none=False)
        self.limit = c.check_limit(limit)
        self.max_references = c.check_dataset_count("max_references", max_references)
        self.min_base_fss = c.check_fss(min_base_fss)
        self.single_face_only = c.check_dataset_flag("single_face_only", single_face_only)

    def describe(self) -> dict[str, Any]:
        plan = self._plan
        return {
            "name": "celeba",
            "root": str(self.root),
            "format": "CelebA aligned: list_attr_celeba.txt, identity_CelebA.txt, list_eval_partition.txt",
            "partition": self.partition,
            "bases_per_identity": self.bases_per_identity,
            "limit": self.limit,
            "max_references": self.max_references,
            "min_base_fss": self.min_base_fss,
            "single_face_only": self.single_face_only,
            "reference_mode": "other_images",
            "n_faces": len(plan),
            "n_identities": len({identity for _, identity, _, _ in plan}),
        }

    def faces(self) -> Iterator[Face]:
        images = self.root / IMAGE_DIR
        for file, identity, refs, labels in self._plan:
            face = Face(
                face_id=f"celeba/{file}",
                identity=identity,
                image=images / file,
                references=tuple(images / r for r in refs),
                demographics=labels,
            )
            c.check_files((face.image, *face.references), "CelebA", images)
            yield face

    @functools.cached_property
    def _plan(self) -> list[tuple[str, str, tuple[str, ...], dict[str, str | None]]]:
        attrs = read_attributes(self.root / ATTR_FILE)
        ids = _read_pairs(self.root / IDENTITY_FILE, "identity id", None)
        parts = _read_pairs(self.root / PARTITION_FILE, "partition", {0, 1, 2})
        by_identity: dict[int, list[str]] = {}
        for file, identity in ids.items():
            by_identity.setdefault(identity, []).append(file)
        wanted = None if self.partition == "all" else PARTITIONS[self.partition]
        plan = []
        for identity in sorted(by_identity):
            files = sorted(by_identity[identity])
            candidates = [
                f for f in files if wanted is None or _lookup(parts, f, self.root / PARTITION_FILE) == wanted
            ]
            n_bases = min(self.bases_per_identity, len(candidates), len(files) - 1)  # keep >= 1 reference
            bases = candidates[:n_bases]
            refs = tuple(f for f in files if f not in bases)[: self.max_references]
            for file in bases:
                male, young = _lookup(attrs, file, self.root / ATTR_FILE)
                labels = c.demographics("male" if male else "female", None, "young" if young else "old")
                plan.append((file, str(identity), refs, labels))
        if not plan:
            raise c.no_faces(self.root / PARTITION_FILE, f"image of partition {self.partition!r} whose identity has "
                             "another image", "Choose another dataset.params.partition (train, val, test, all).")
        plan.sort(key=lambda p: p[0])
        return plan[: self.limit]


def read_attributes(path: Path) -> dict[str, tuple[bool, bool]]:
    """``file -> (Male, Young)`` from ``list_attr_celeba.txt``.

    Line 1 is the image count, line 2 the 40 attribute names, then ``<file>`` and 40
    values of 1/-1 in space-aligned columns (so split on any whitespace).
    """
    text = read_utf8(path, what="CelebA attribute file", error=DatasetError)
    lines = iter(enumerate(text.split("\n"), start=1))
    _, first = next(lines, (1, ""))
    if not first.strip().isdigit():
        raise c.bad_line(path, 1, f"expected the image count, found {first.strip()[:60]!r}")
    names = next(lines, (2, ""))[1].split()
    if len(names) != N_ATTRIBUTES or "Male" not in names or "Young" not in names:
        raise c.bad_line(path, 2, f"expected the {N_ATTRIBUTES} attribute names incl. Male and Young, "
                         f"found {len(names)} names")
    i_male, i_young = names.index("Male") + 1, names.index("Young") + 1
    out: dict[str, tuple[bool, bool]] = {}
    for lineno, line in lines:
        parts = line.split()
        if not parts:
            continue
        if len(parts) != N_ATTRIBUTES + 1 or not set(parts[1:]) <= {"1", "-1"}:
            raise c.bad_line(path, lineno, f"expected <file> and {N_ATTRIBUTES} values of 1 or -1")
        out[parts[0]] = (parts[i_male] == "1", parts[i_young] == "1")
    if len(out) != int(first):
        raise c.bad_line(path, 1, f"declares {int(first)} images but lists {len(out)}; is it truncated?")
    return out


def _read_pairs(path: Path, what: str, allowed: set[int] | None) -> dict[str, int]:
    """``<file> <int>`` lines (identity and partition files, no header)."""
    out: dict[str, int] = {}
    for lineno, line in enumerate(read_utf8(path, what=f"CelebA {what} file", error=DatasetError).split("\n"), 1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 2 or not parts[1].isdigit() or (allowed and int(parts[1]) not in allowed):
            raise c.bad_line(path, lineno, f"expected '<file> <{what}>', found {line.strip()[:80]!r}")
        out[parts[0]] = int(parts[1])
    return out


def _lookup(table: dict[str, Any], file: str, path: Path) -> Any:
    try:
        return table[file]
    except KeyError:
        raise DatasetError(f"{file} is listed in {IDENTITY_FILE} but not in {path}") from None
