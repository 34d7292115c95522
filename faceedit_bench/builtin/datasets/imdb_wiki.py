"""Reading the metadata of an IMDB-WIKI crop release (``imdb.mat`` / ``wiki.mat``, §6.3).

The ``.mat`` file holds one 1x1 struct named ``imdb`` (or ``wiki``) whose fields are
1xN arrays; ``full_path`` and ``name`` are cell arrays. Read with scipy's ``loadmat``
(the files are MATLAB v5, not HDF5).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from faceedit_bench.errors import DatasetError

FIELDS = ("dob", "photo_taken", "full_path", "gender", "name", "face_score", "second_face_score")


@dataclass(frozen=True)
class ImdbImage:
    full_path: str  # relative to the crop folder, e.g. "01/nm0000001_rm124825600_1899-5-10_1968.jpg"
    name: str | None
    gender: str | None  # "male" / "female" / None (NaN in the file)
    age: int | None  # age on 1 July of photo_taken; None where dob is unusable
    face_score: float  # -inf: no face found
    second_face_score: float  # nan: no second face

    def single_face(self, min_face_score: float = 0.0) -> bool:
        """§6.3 filter: a face was found (finite score above the threshold) and no second one."""
        return math.isfinite(self.face_score) and self.face_score > min_face_score and math.isnan(
            self.second_face_score
        )


def matlab_date(serial: float) -> date | None:
    """A MATLAB serial date number as a date (``datenum`` counts from year 0, Python from year 1)."""
    try:
        return date.fromordinal(int(serial) - 366)
    except (ValueError, OverflowError):  # NaN, 0 or out-of-range serials occur in the metadata
        return None


def age_on_july_first(dob: float, photo_taken: float) -> int | None:
    """Age in completed years on 1 July of ``photo_taken`` (the release's own convention)."""
    birth = matlab_date(dob)
    if birth is None or not math.isfinite(photo_taken):
        return None
    age = int(photo_taken) - birth.year - ((birth.month, birth.day) > (7, 1))
    return age if 0 <= age <= 120 else None  # impossible ages are metadata errors


def read_mat(path: Path) -> list[ImdbImage]:
    """Every image entry of an ``imdb.mat`` / ``wiki.mat`` file, in file order."""
    from scipy.io import loadmat  # scipy is a core dependency, but only this loader needs it

    try:
        mat = loadmat(str(path))
    except Exception as exc:  # scipy raises several types for non-.mat or truncated files
        raise DatasetError(f"{path} is not a readable IMDB-WIKI .mat file ({exc})") from exc
    keys = [k for k in ("imdb", "wiki") if k in mat]
    if not keys:
        found = sorted(k for k in mat if not k.startswith("__"))
        raise DatasetError(f"{path} holds no 'imdb' or 'wiki' struct; found {found}")
    struct = mat[keys[0]][0, 0]
    missing = [f for f in FIELDS if f not in (struct.dtype.names or ())]
    if missing:
        raise DatasetError(f"{path}: struct {keys[0]!r} lacks field(s) {', '.join(missing)}")
    cols = {f: struct[f][0] for f in FIELDS}
    n = len(cols["full_path"])
    if any(len(v) != n for v in cols.values()):
        lengths = {f: len(v) for f, v in cols.items()}
        raise DatasetError(f"{path}: fields of {keys[0]!r} have different lengths {lengths}")
    out = []
    for i in range(n):
        g = float(cols["gender"][i])
        out.append(ImdbImage(
            full_path=str(cols["full_path"][i][0]),
            name=str(cols["name"][i][0]) if cols["name"][i].size else None,  # some names are empty cells
            gender=None if math.isnan(g) else "male" if g == 1 else "female",
            age=age_on_july_first(float(cols["dob"][i]), float(cols["photo_taken"][i])),
            face_score=float(cols["face_score"][i]),
            second_face_score=float(cols["second_face_score"][i]),
        ))
    return out
