"""FairFace in the Hugging Face ``HuggingFaceM4/FairFace`` parquet layout (METHODOLOGY §6.2).

``<root>/<config>/<split>-NNNNN-of-NNNNN.parquet`` with config ``0.25`` or ``1.25`` and split ``train`` or
``validation``. Columns: ``image`` (a struct ``{bytes, path}``), ``age``, ``gender``, ``race`` (ClassLabel
integers) and ``service_test`` (bool). The integers are mapped through the ClassLabel names that the
``datasets`` library stores in the file's ``huggingface`` schema metadata; a file without that metadata
uses the dataset card's names (:data:`CLASS_NAMES`), and a file whose names differ from the card is
refused rather than mislabelled.

Rows are numbered across the split's files in file-name order; a face is ``<config>/<split>/<row>``.
Images are copied byte for byte, once, into ``cache_dir`` (atomically), because a ``Face`` is a file.
"""

from __future__ import annotations

import functools
import hashlib
import json
from bisect import bisect_right
from pathlib import Path
from typing import Any

from faceedit_bench.errors import DatasetError
from faceedit_bench.storage.atomic import atomic_open
from faceedit_bench.storage.images import sniff_mime

#: ClassLabel names of HuggingFaceM4/FairFace (both configs), in the dataset card's order.
CLASS_NAMES = {
    "age": ("0-2", "3-9", "10-19", "20-29", "30-39", "40-49", "50-59", "60-69", "more than 70"),
    "gender": ("Male", "Female"),
    "race": ("East Asian", "Indian", "Black", "White", "Middle Eastern", "Latino_Hispanic", "Southeast Asian"),
}
COLUMNS = ("image", "age", "gender", "race", "service_test")
HF_SPLITS = {"train": "train", "val": "validation"}
SUFFIX = {"image/jpeg": ".jpg", "image/png": ".png", "image/webp": ".webp"}


def find_files(root: Path, config: str, split: str) -> list[Path]:
    """The split's parquet files under ``root`` (the dataset folder or its config folder)."""
    hf_split = HF_SPLITS[split]
    for folder in (root / config, root):
        files = sorted(folder.glob(f"{hf_split}-*.parquet"))
        if files:
            return files
    return []


class ParquetSplit:
    """One split of the parquet layout: labels of every row, and each row's image bytes on demand."""

    def __init__(self, files: list[Path], cache_dir: Path) -> None:
        self.files = files
        self._offsets: list[int] = []  # first global row of each (file, row group)
        self._groups: list[tuple[int, int]] = []  # (file index, row group)
        stat = [(f.name, f.stat().st_size) for f in files]
        self.cache_dir = cache_dir / hashlib.sha256(json.dumps(stat).encode()).hexdigest()[:16]

    @functools.cached_property
    def rows(self) -> list[dict[str, Any]]:
        """Every row's labels as names (``age``, ``gender``, ``race``) and ``service_test``; the image column
        is not read here (it holds every image's bytes)."""
        out: list[dict[str, Any]] = []
        for i, path in enumerate(self.files):
            pf = self._open(path)
            names = self._names(path, pf.schema_arrow)
            for g in range(pf.num_row_groups):
                self._offsets.append(len(out))
                self._groups.append((i, g))
                table = pf.read_row_group(g, columns=["age", "gender", "race", "service_test"])
                for row in table.to_pylist():
                    out.append({**{k: self._name(path, len(out), k, row[k], names[k]) for k in CLASS_NAMES},
                                "service_test": row["service_test"]})
        return out

    def image_file(self, index: int, stem: str) -> Path:
        """The row's image, copied once into the cache (same bytes as in the parquet file)."""
        for suffix in SUFFIX.values():
            cached = self.cache_dir / f"{stem}{suffix}"
            if cached.is_file():
                return cached
        data = self._image_bytes(index)
        mime = sniff_mime(data)
        if mime not in SUFFIX:
            raise DatasetError(f"FairFace parquet row {index} ({self.files[0].parent}) holds no JPEG/PNG/WebP image")
        cached = self.cache_dir / f"{stem}{SUFFIX[mime]}"
        cached.parent.mkdir(parents=True, exist_ok=True)
        with atomic_open(cached, "wb") as fh:
            fh.write(data)
        return cached

    def _image_bytes(self, index: int) -> bytes:
        assert self.rows is not None  # reading the labels maps rows to row groups
        at = bisect_right(self._offsets, index) - 1
        images = self._group_images(at)
        value = images[index - self._offsets[at]]
        if not value or not value.get("bytes"):
            raise DatasetError(f"FairFace parquet row {index}: the image struct has no bytes "
                               "(a download without embedded images?); re-download the parquet files.")
        return value["bytes"]

    @functools.lru_cache(maxsize=2)  # noqa: B019 - one split object per dataset; faces arrive in row order
    def _group_images(self, at: int) -> list[dict[str, Any]]:
        i, g = self._groups[at]
        return self._open(self.files[i]).read_row_group(g, columns=["image"]).column("image").to_pylist()

    @staticmethod
    @functools.cache
    def _open(path: Path) -> Any:
        import pyarrow.parquet as pq

        try:
            pf = pq.ParquetFile(path)
        except Exception as exc:  # pyarrow raises ArrowInvalid / OSError for a damaged file
            raise DatasetError(f"{path}: not a readable parquet file ({exc}); re-download it") from None
        missing = [c for c in COLUMNS if c not in pf.schema_arrow.names]
        if missing:
            raise DatasetError(f"{path}: lacks column(s) {', '.join(missing)} of the HuggingFaceM4/FairFace layout "
                               f"(has {', '.join(pf.schema_arrow.names)})")
        return pf

    @staticmethod
    def _names(path: Path, schema: Any) -> dict[str, tuple[str, ...]]:
        meta = (schema.metadata or {}).get(b"huggingface")
        if meta is None:
            return CLASS_NAMES
        features = json.loads(meta).get("info", {}).get("features", {})
        names = {k: tuple(features.get(k, {}).get("names") or CLASS_NAMES[k]) for k in CLASS_NAMES}
        for key, got in names.items():
            if got != CLASS_NAMES[key]:
                raise DatasetError(f"{path}: ClassLabel names of {key!r} are {list(got)}, not those of "
                                   f"HuggingFaceM4/FairFace ({list(CLASS_NAMES[key])}); is this FairFace?")
        return names

    @staticmethod
    def _name(path: Path, index: int, key: str, value: Any, names: tuple[str, ...]) -> str | None:
        if value is None or value == -1:  # ClassLabel's "no label"
            return None
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < len(names):
            raise DatasetError(f"{path}, row {index}: {key} {value!r} is not a ClassLabel index 0..{len(names) - 1}")
        return names[value]
