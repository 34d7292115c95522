"""``sample``: eight real faces from photos shipped inside installed packages (offline default)."""

from __future__ import annotations

import hashlib
import importlib.util
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from faceedit_bench.builtin.datasets import _common as c
from faceedit_bench.errors import DatasetError
from faceedit_bench.records import Face
from faceedit_bench.storage.atomic import atomic_open
from faceedit_bench.storage.images import decode_rgb

#: Bumped whenever the crop recipe changes, so stale cached files are never reused.
#: v2: references are no longer mirrored (a mirroring editor scored better than no edit).
RECIPE = "v2"
BASE_SIZE, REF_SIZE = 256, 320
BASE_SCALE, REF_SCALE = 2.2, 3.0  # crop side / face-box side
REF_SHIFT = (-0.12, 0.10)  # reference crop centre offset, in face-box sides
TOM_PAD_BASE, TOM_PAD_REF = 56, 90  # edge padding (px) around the tight 112x112 crop
#: What each reference is, as ``describe()`` reports it.
REFERENCES = (
    f"a wider (face box x{REF_SCALE}), off-centre crop of the same photo as the base image "
    f"(x{BASE_SCALE}, centred), resampled to {REF_SIZE}x{REF_SIZE} from the original pixels; "
    "never mirrored and never compressed"
)
CAVEAT = (
    "Only one photo exists per person in the installed packages, so each reference is another "
    "view of the same photo as the base image, not an independent image. FSS_0 is therefore near "
    "the top of the scale; edits that only mirror, re-encode, rescale or crop the image do not "
    "score better than no edit, but sample results are a smoke test and are not comparable to "
    "paper numbers."
)
SOURCES = {
    "t1": ("insightface", "data/images/t1.jpg"),
    "tom_hanks": ("insightface", "data/images/Tom_Hanks_54745.png"),
    "astronaut": ("skimage", "data/astronaut.png"),  # what skimage.data.astronaut() loads
}


@dataclass(frozen=True)
class _Person:
    identity: str
    source: str
    box: tuple[int, int, int, int] | None  # (left, top, right, bottom); None = already aligned
    gender: str


# Face boxes measured once with dlib's HOG detector, `dlib.get_frontal_face_detector()(rgb, 1)`
# (dlib 20.0.1), on the untouched source images, so this module needs no dlib at run time.
# t1.jpg holds exactly these 6 detections with score > 0; the astronaut's second detection
# (126,335,215,425; score 0.12) is a false positive on the suit and is left out. Persons are
# numbered left to right; genders were checked by viewing the crops (3 women, 3 men).
PEOPLE = (
    _Person("astronaut_eileen_collins", "astronaut", (175, 76, 265, 166), "female"),
    _Person("t1_person1", "t1", (67, 283, 175, 390), "female"),
    _Person("t1_person2", "t1", (275, 176, 364, 265), "female"),
    _Person("t1_person3", "t1", (450, 295, 557, 402), "male"),
    _Person("t1_person4", "t1", (724, 367, 832, 474), "male"),
    _Person("t1_person5", "t1", (870, 67, 999, 196), "male"),
    _Person("t1_person6", "t1", (1118, 283, 1226, 390), "female"),
    _Person("tom_hanks", "tom_hanks", None, "male"),
)


class SampleDataset:
    """Eight real faces that need no download: six people from insightface's ``t1.jpg``
    group photo, insightface's aligned ``Tom_Hanks_54745.png`` and scikit-image's
    ``astronaut()`` (Eileen Collins).

    Each person yields one base image (a 256x256 PNG crop, face box x2.2, centred) and one
    reference. CAVEAT: no installed package ships two photos of one person, so the reference
    is a different view of the SAME photo (a wider, off-centre crop, face box x3.0, 320x320,
    resampled from the source pixels), not an independent image, and FSS_0 sits near the top
    of the scale. The reference is never mirrored (a mirror editor would then move I_k TOWARDS
    it and beat no edit) and never compressed or downscaled below the base (which would reward
    editors that degrade the image); measured with dlib, editors that only mirror, JPEG-encode,
    rescale or crop do not beat the identity editor on Drop_FSS. Use this dataset as a smoke
    test only, never to compare with paper numbers (``describe()`` says so: ``reference_mode``
    is ``same_photo_variant``, ``references`` says what they are). Labels: gender (publicly
    known); skin tone and age unknown.
    Images are written once into ``cache_dir`` (atomically; deterministic PNG bytes) and
    regenerated if missing.

    :param cache_dir: where the crops are written (default ``~/.cache/faceedit_bench/sample``).
    :param limit: at most this many faces, in ``face_id`` order (null = all 8).
    :param max_references: accepted for a uniform config; each person has one reference.
    :param min_base_fss: FSS threshold the engine applies to base images (default null).
    :param single_face_only: the engine drops base images with other than one detected
        face (default true; every image here has exactly one).
    """

    def __init__(
        self,
        cache_dir: str | Path = "~/.cache/faceedit_bench/sample",
        limit: int | None = None,
        max_references: int | None = 10,
        min_base_fss: float | None = None,
        single_face_only: bool = True,
    ) -> None:
        self.cache_dir = Path(cache_dir).expanduser() / RECIPE
        self.sources = {name: _package_file(pkg, rel) for name, (pkg, rel) in SOURCES.items()}
        self.limit = c.check_limit(limit)
        self.max_references = c.check_dataset_count("max_references", max_references)
        self.min_base_fss = c.check_fss(min_base_fss)
        self.single_face_only = c.check_dataset_flag("single_face_only", single_face_only)

    def describe(self) -> dict[str, Any]:
        return {
            "name": "sample",
            "root": str(self.cache_dir),
            "format": f"faceedit_bench sample crops {RECIPE}",
            "sources": {k: _sha256(p) for k, p in sorted(self.sources.items())},
            "limit": self.limit,
            "min_base_fss": self.min_base_fss,
            "single_face_only": self.single_face_only,
            "reference_mode": "same_photo_variant",
            "references": REFERENCES,
            "caveat": CAVEAT,
            "n_faces": len(PEOPLE[: self.limit]),
        }

    def faces(self) -> Iterator[Face]:
        for person in PEOPLE[: self.limit]:  # PEOPLE is in identity order
            base, ref = self._files(person)
            refs = (ref,)[: self.max_references]
            yield Face(
                face_id=f"sample/{person.identity}",
                identity=person.identity,
                image=base,
                references=refs,
                demographics=c.demographics(person.gender, None, None, None),
            )

    def _files(self, person: _Person) -> tuple[Path, Path]:
        base = self.cache_dir / f"{person.identity}.png"
        ref = self.cache_dir / f"{person.identity}_ref.png"
        if not (base.is_file() and ref.is_file()):
            source = self.sources[person.source]
            src = Image.fromarray(decode_rgb(source.read_bytes(), label=str(source)))
            for path, image in zip((base, ref), _views(src, person.box)):
                _write_png(path, image)
        return base, ref


def _views(src: Image.Image, box: tuple[int, int, int, int] | None) -> tuple[Image.Image, Image.Image]:
    """The base image and its reference view of one face (see :data:`REFERENCES`)."""
    if box is None:
        # The aligned 112x112 crop is too tight for a HOG detector: pad with edge pixels
        # (reflection would mirror half-faces into the border and invite false detections).
        base = _pad(src, TOM_PAD_BASE).resize((BASE_SIZE, BASE_SIZE), Image.LANCZOS)
        ref = _pad(src, TOM_PAD_REF).resize((REF_SIZE, REF_SIZE), Image.LANCZOS)
    else:
        base = _square_crop(src, box, BASE_SCALE, BASE_SIZE, (0.0, 0.0))
        ref = _square_crop(src, box, REF_SCALE, REF_SIZE, REF_SHIFT)
    return base, ref


def _square_crop(
    im: Image.Image, box: tuple[int, int, int, int], scale: float, size: int, shift: tuple[float, float]
) -> Image.Image:
    # A square around the (shifted) face centre, moved (not clipped) to stay inside the
    # photo so the face is never stretched.
    left, top, right, bottom = box
    face = max(right - left, bottom - top)
    side = min(face * scale, im.width, im.height)
    cx, cy = (left + right) / 2 + shift[0] * face, (top + bottom) / 2 + shift[1] * face
    x0 = min(max(cx - side / 2, 0.0), im.width - side)
    y0 = min(max(cy - side / 2, 0.0), im.height - side)
    return im.resize((size, size), Image.LANCZOS, box=(x0, y0, x0 + side, y0 + side))


def _pad(im: Image.Image, pad: int) -> Image.Image:
    return Image.fromarray(np.pad(np.asarray(im), ((pad, pad), (pad, pad), (0, 0)), mode="edge"))


def _write_png(path: Path, image: Image.Image) -> None:
    """Write atomically, so a crash never leaves a truncated file that looks cached."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_open(path, "wb") as fh:  # the umask's mode: cached images are meant to be shared
        image.save(fh, format="PNG", optimize=False)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _package_file(package: str, relative: str) -> Path:
    # find_spec locates a top-level package without importing it (importing insightface
    # takes seconds).
    spec = importlib.util.find_spec(package)
    for folder in (spec.submodule_search_locations or []) if spec else []:
        if (Path(folder) / relative).is_file():
            return Path(folder) / relative
    raise DatasetError(
        f"The sample dataset needs {relative} from the {package!r} package, which is not installed "
        "(or lacks the file). Run `pip install insightface scikit-image`, or choose another dataset, "
        "e.g. dataset=folder dataset.params.root=/data/myfaces."
    )
