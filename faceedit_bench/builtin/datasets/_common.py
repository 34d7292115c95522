"""Helpers shared by the builtin dataset loaders: labels, parameter checks, errors."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from faceedit_bench.errors import ConfigError, DatasetError
from faceedit_bench.storage.user_files import csv_records, file_under, read_utf8

GENDERS = ("male", "female")
SKIN_TONES = ("light", "dark")

#: METHODOLOGY §2.2: young = ages 20-30, old = ages 50-60 (inclusive); other ages are
#: left out of the age contrast only, so they get ``None``.
YOUNG_AGES = (20, 30)
OLD_AGES = (50, 60)


def age_group(age: int | None) -> str | None:
    """The §2.2 age group of a numeric age, or ``None`` outside both ranges."""
    if age is None:
        return None
    if YOUNG_AGES[0] <= age <= YOUNG_AGES[1]:
        return "young"
    if OLD_AGES[0] <= age <= OLD_AGES[1]:
        return "old"
    return None


def demographics(
    gender: str | None, skin_tone: str | None, group: str | None, age: int | None = None, **extra: Any
) -> dict[str, str | None]:
    """The ``Face.demographics`` mapping: the three contrast keys, ``age``, then extras."""
    out: dict[str, str | None] = {
        "gender": gender,
        "skin_tone": skin_tone,
        "age_group": group,
        "age": None if age is None else str(age),
    }
    out.update({k: None if v is None else str(v) for k, v in extra.items()})
    return out


def natural_key(text: str) -> tuple[Any, ...]:
    """Sort key that orders ``train/9.jpg`` before ``train/10.jpg``; deterministic."""
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.split(r"(\d+)", text))


#: The parameters every dataset takes, with their defaults (docs/plugin_hooks.md, datasets). The dataset
#: entries in conf/ extend ``/dataset_params@params``, made of these (faceedit_bench/run/hydra_app.py), so
#: each is settable without ``+`` and shown by ``--cfg job``.
COMMON_PARAMS: dict[str, Any] = {"limit": None}
#: ... and those every dataset of faces takes besides (``/face_dataset_params@params``): the references
#: FSS is measured against, and the engine's checks of base images. A dataset with another default
#: states it in its signature and in its entry.
FACE_PARAMS: dict[str, Any] = {**COMMON_PARAMS, "max_references": 10, "min_base_fss": None, "single_face_only": True}


def check_dataset_params(**params: Any) -> dict[str, Any]:
    """The parameters every dataset takes (``limit``) and every dataset of faces takes besides
    (``max_references``, ``min_base_fss``, ``single_face_only``; :data:`FACE_PARAMS`), those given checked and
    returned by name, as a builtin dataset checks them: a bad one is a ConfigError naming
    ``dataset.params.<name>``."""
    checks = {"limit": check_limit, "max_references": lambda v: check_dataset_count("max_references", v),
              "min_base_fss": check_fss, "single_face_only": lambda v: check_dataset_flag("single_face_only", v)}
    unknown = sorted(set(params) - set(checks))
    if unknown:
        raise TypeError(f"check_dataset_params() checks {', '.join(checks)}, not {', '.join(unknown)}")
    return {name: checks[name](value) for name, value in params.items()}


def check_limit(limit: int | None) -> int | None:
    """A dataset's ``limit`` parameter checked: a non-negative integer (use the first N items; 0 is none) or None
    (all of them); anything else is a ConfigError naming ``dataset.params.limit``."""
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
        raise ConfigError(f"dataset.params.limit must be a non-negative integer or null, got {limit!r}")
    return limit


def check_dataset_count(name: str, value: int | None, *, allow_none: bool = True) -> int | None:
    """A dataset's count parameter (``max_references``, ...) checked: a positive integer, or None where
    ``allow_none``; anything else is a ConfigError naming ``dataset.params.<name>``."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        hint = " or null" if allow_none else ""
        raise ConfigError(f"dataset.params.{name} must be a positive integer{hint}, got {value!r}")
    return value


def check_fss(value: float | None) -> float | None:
    """A dataset's ``min_base_fss`` parameter checked: a number in [0, 1], or None for no floor."""
    if value is None:
        return None
    try:
        fss = float(value)
    except (TypeError, ValueError):
        fss = float("nan")
    if not 0.0 <= fss <= 1.0:
        raise ConfigError(f"dataset.params.min_base_fss must be a number in [0, 1] or null, got {value!r}")
    return fss


def check_dataset_flag(name: str, value: bool) -> bool:
    """A dataset's true/false parameter checked; anything else is a ConfigError naming ``dataset.params.<name>``."""
    if not isinstance(value, bool):
        raise ConfigError(f"dataset.params.{name} must be true or false, got {value!r}")
    return value


def resolve(root: Path, path: str | Path) -> Path:
    """``path`` if absolute, else relative to ``root``."""
    p = Path(path).expanduser()
    return p if p.is_absolute() else root / p


def require(path: Path, what: str, *, get: str, param: str = "root", example: str = "/data/dataset",
            root: Path | None = None) -> Path:
    """Return ``path`` if it exists, else raise a :class:`DatasetError` saying how to fix it, with what is
    there instead (:func:`layout_hint`; ``root`` is the dataset's folder ``path`` should be in)."""
    if not path.exists():
        raise DatasetError(
            f"{what} not found: {path}.{layout_hint(path, root)} {get} Then point the config at it, "
            f"e.g. dataset.params.{param}={example}"
        )
    return path


def _close_names(folder: Path, name: str) -> list[str]:
    try:
        names = sorted(p.name for p in folder.iterdir())
    except OSError:
        return []
    stem, suffix = Path(name).stem.lower(), Path(name).suffix.lower()
    same = [n for n in names if n.lower() == name.lower()  # another case, or a browser's second download
            or (Path(n).suffix.lower() == suffix and Path(n).stem.lower().startswith(stem + " ("))]
    if same or Path(name).stem.isdigit():  # numbered images: 10.jpg is not a misspelt 1.jpg
        return same
    return difflib.get_close_matches(name, names, n=3, cutoff=0.75)


def layout_hint(path: Path, root: Path | None = None) -> str:
    """What is there instead of a missing ``path``: a misnamed file or folder on the way to it (``anno`` for
    ``Anno``, ``fairface_label_val (1).csv``), or the whole layout one folder down (an archive unpacked into
    a folder of its own). ``""`` when nothing is near."""
    base = root if root is not None and root in path.parents else path.parent
    hints = []
    current = base
    for part in path.relative_to(base).parts:
        if not (current / part).exists():
            if close := _close_names(current, part):
                hints.append(f"{current} has {' and '.join(repr(n) for n in close)}, not {part!r}")
            break
        current = current / part
    if root is not None and root in path.parents and root.is_dir():
        rel = path.relative_to(root)
        nested = next((d for d in sorted(root.iterdir()) if d.is_dir() and (d / rel).exists()), None)
        if nested is not None:
            hints.append(f"{nested / rel} exists: set the root to {nested} instead")
    return "".join(f" Found: {h}." for h in hints)


def bad_line(path: Path, lineno: int, problem: str) -> DatasetError:
    return DatasetError(f"{path}, line {lineno}: {problem}")


def no_faces(path: Path, what: str, how: str) -> DatasetError:
    """The error for annotations that select no base image: a run of 0 faces measures nothing."""
    return DatasetError(f"{path} lists no {what}, so there is no face to edit (0 faces). {how}")


def check_files(paths: Iterable[Path], what: str, root: Path) -> None:
    """Raise if an image file listed by the annotations is missing (a partial download), or lies outside the
    dataset's ``root`` (a ``../`` or absolute name in the annotations: :func:`file_under`)."""
    for p in paths:
        file_under(root, str(p.relative_to(root) if p.is_relative_to(root) else p), f"{what} annotations",
                   what="image", error=DatasetError)
        if not p.is_file():
            raise DatasetError(f"{what} image listed in the annotations is missing: {p}")


def read_csv(path: Path, columns: Iterable[str]) -> Iterable[tuple[int, dict[str, str]]]:
    """``(line number, row)`` of a UTF-8 CSV whose header holds ``columns``.

    Cells are stripped; extra columns are kept. A short or long row is an error
    naming the line, so a stray comma never shifts labels silently; so is text that is
    not UTF-8 (the whole file is checked before the first row is returned).
    """
    text = read_utf8(path, what="CSV file", error=DatasetError)
    _, records = csv_records(text, str(path), what="CSV file", error=DatasetError, required=tuple(columns))
    return [(line, {k: v.strip() for k, v in row.items()}) for line, row in records]


def label(path: Path, lineno: int, column: str, value: str, allowed: Iterable[str]) -> str | None:
    """An allowed label, ``None`` for an empty cell, else an error naming the line."""
    if value == "":
        return None
    allowed = tuple(allowed)
    if value not in allowed:
        raise bad_line(path, lineno, f"{column} {value!r} is not one of {', '.join(allowed)} (or empty)")
    return value
