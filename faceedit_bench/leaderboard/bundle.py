"""Submission bundles on disk: writing one (``submit``) and checking a stranger's (``verify``, ``leaderboard build``).

A bundle is a directory (or a zip of one)::

    submission.json                      the record (schema: schemas/submission.schema.json)
    steps.csv                            the run's per-step table
    sessions.csv                         the run's per-session table (when the run had one)
    images/<face_dir>/<session_id>/step_<k>.<ext>      edited images, replay layout (optional)
    images/<face_dir>/<session_id>/step_<k>.refused    refusal markers (text: the reason)

Checking never follows a link, never reads more than the limits allow, and accepts exactly
the files the record lists, each with the size and sha256 the record states.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import shutil
import stat
import tempfile
import warnings
import zipfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from PIL import Image

from faceedit_bench.errors import FaceEditBenchError
from faceedit_bench.leaderboard.errors import SubmissionRejected
from faceedit_bench.leaderboard.limits import (
    DEFAULT_LIMITS,
    Limits,
    parse_json,
    read_bounded,
    regular_file_size,
    safe_relative_path,
)
from faceedit_bench.leaderboard.record import SESSIONS_FILE, row_hash, step_rows
from faceedit_bench.leaderboard.schema import printable, validate_submission
from faceedit_bench.storage.images import content_hash
from faceedit_bench.storage.replay_layout import REPLAY_EXTENSIONS, face_dir, replay_extension, replay_step_path
from faceedit_bench.storage.store import ImageStore

SUBMISSION_FILE = "submission.json"
STEPS_FILE = "steps.csv"
TABLES = (STEPS_FILE, SESSIONS_FILE)
IMAGES_DIR = "images"
REFUSED_SUFFIX = ".refused"
#: Pillow formats accepted per file extension. Decoders are limited to these, so a file can
#: never reach an exotic decoder (EPS would start Ghostscript) by its contents.
FORMATS = {".png": "PNG", ".jpg": "JPEG", ".jpeg": "JPEG", ".webp": "WEBP", ".bmp": "BMP", ".gif": "GIF",
           ".tiff": "TIFF", ".tif": "TIFF"}
assert set(FORMATS) == set(REPLAY_EXTENSIONS)


def step_path(face_id: str, session_id: str, k: int, suffix: str) -> str:
    return f"{IMAGES_DIR}/{replay_step_path(face_id, session_id, k, suffix)}"


# -- writing (submit) -------------------------------------------------------------------------


def _extension(data: bytes) -> str:
    with Image.open(io.BytesIO(data)) as im:
        fmt = im.format or ""
    ext = replay_extension(fmt) if fmt else ""
    if ext not in FORMATS:
        raise FaceEditBenchError(f"an edited image is {fmt or 'of an unknown format'}; the replay layout takes "
                                 f"{', '.join(sorted(set(FORMATS.values())))} only.")
    return ext


def bundle_images(record: dict[str, Any], steps_table: bytes, store: ImageStore | None, root: Path) -> None:
    """Copy every edited image from the store into ``root/images`` (replay layout, bytes unchanged)
    and write the refusal markers; fill ``path`` and ``bytes`` of each entry in ``record["files"]``."""
    if store is None:
        raise FaceEditBenchError(
            "the run's image store was not found, so its images cannot be bundled. Pass --workspace <dir> (the "
            "workspace holding store/), or --no-images to submit numbers only (they cannot be verified then)."
        )
    reasons = {(r["face_id"], r["session_id"], r["k"]): (r.get("reason") or "refused")
               for r in step_rows(steps_table) if r["outcome"] == "refused"}
    for entry in record["files"]["images"]:
        if entry["sha256"] not in store:
            raise FaceEditBenchError(f"image {entry['sha256'][:12]} of {entry['face_id']} {entry['session_id']} step "
                                     f"{entry['k']} is not in the store {store.root}; pass --workspace or --no-images.")
        data = store.get(entry["sha256"])
        if content_hash(data) != entry["sha256"]:
            raise FaceEditBenchError(f"store file {store.path(entry['sha256'])} does not match its hash; the store is "
                                     "damaged. Rerun the experiment to rewrite it.")
        entry["path"] = step_path(entry["face_id"], entry["session_id"], entry["k"], _extension(data))
        entry["bytes"] = len(data)
        _write(root / entry["path"], data)
    for entry in record["files"]["refusals"]:
        data = reasons[(entry["face_id"], entry["session_id"], str(entry["k"]))].encode()
        entry["path"] = step_path(entry["face_id"], entry["session_id"], entry["k"], REFUSED_SUFFIX)
        entry["bytes"] = len(data)
        _write(root / entry["path"], data)
    record["files"]["images_bundled"] = True


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


# -- reading (verify, build) ------------------------------------------------------------------


@dataclass
class Submission:
    """A submission whose ``submission.json`` was read within limits and follows the schema."""

    record: dict[str, Any]
    root: Path
    sha256: str  # of submission.json's bytes: what a verification is bound to
    tables: dict[str, bytes] = field(default_factory=dict)  # the bundled tables, once check_bundle read them


def read_submission(root: Path, limits: Limits = DEFAULT_LIMITS) -> Submission:
    """Read and schema-check ``root/submission.json``; :class:`SubmissionRejected` if it is not acceptable."""
    data = read_bounded(root / SUBMISSION_FILE, limits.submission_json_bytes, what=SUBMISSION_FILE)
    record = parse_json(data, what=SUBMISSION_FILE)
    validate_submission(record)
    return Submission(record, root, hashlib.sha256(data).hexdigest())


def _tree(root: Path, limits: Limits) -> dict[str, int]:
    """Every regular file under ``root`` (relative path -> size). Links and special files are rejected."""
    if os.path.islink(root):
        raise SubmissionRejected("the submission directory is a symbolic link.")
    files: dict[str, int] = {}
    total = 0
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for name in sorted(dirnames) + sorted(filenames):
            full = Path(dirpath) / name
            rel = full.relative_to(root).as_posix()
            mode = os.lstat(full).st_mode
            if stat.S_ISLNK(mode):
                raise SubmissionRejected(f"{printable(rel)} is a symbolic link; bundles may contain regular files only.")
            if stat.S_ISDIR(mode):
                continue
            if not stat.S_ISREG(mode):
                raise SubmissionRejected(f"{printable(rel)} is not a regular file.")
            files[rel] = os.lstat(full).st_size
            total += files[rel]
            if len(files) > limits.bundle_files or total > limits.bundle_bytes:
                raise SubmissionRejected(f"the bundle holds more than {limits.bundle_files} files or "
                                         f"{limits.bundle_bytes} bytes.")
    return files


def _expected_steps(steps_table: bytes) -> tuple[dict[tuple[str, str, int], str], set[tuple[str, str, int]]]:
    """From the per-step table: (face, session, k) -> image hash for edited images, and the refused steps."""
    images: dict[tuple[str, str, int], str] = {}
    refused: set[tuple[str, str, int]] = set()
    for row in step_rows(steps_table):
        try:
            k = int(row["k"])
        except ValueError:
            raise SubmissionRejected("steps.csv has a non-integer step number.") from None
        key = (row["face_id"], row["session_id"], k)
        if k >= 1 and row["outcome"] == "ok" and row_hash(row):
            images[key] = row_hash(row)
        elif k >= 1 and row["outcome"] == "refused":
            refused.add(key)
    return images, refused


def check_image(data: bytes, suffix: str, limits: Limits, *, what: str) -> None:
    """Decode ``data`` as the format its extension names, within the size limits."""
    fmt = FORMATS.get(suffix.lower())
    if fmt is None:
        raise SubmissionRejected(f"{what}: extension {printable(suffix)} is not one of {', '.join(FORMATS)}.")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data), formats=[fmt]) as im:
                width, height = im.size
                if width > limits.image_side or height > limits.image_side or width * height > limits.image_pixels:
                    raise SubmissionRejected(
                        f"{what} declares {width}x{height} pixels, more than the limit ({limits.image_side} per side, "
                        f"{limits.image_pixels} in all): a decompression bomb or an unusable image."
                    )
                im.load()
    except SubmissionRejected:
        raise
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise SubmissionRejected(f"{what} is a decompression bomb ({str(exc)[:200]}).") from None
    except Exception as exc:  # Pillow raises many types for malformed data
        raise SubmissionRejected(f"{what} is not a readable {fmt} image ({printable(str(exc))}).") from None


def check_bundle(sub: Submission, limits: Limits = DEFAULT_LIMITS, *, decode_images: bool = True) -> bytes:
    """Check that the bundle holds exactly the files its record lists, with the stated sizes and
    hashes, that the images and refusals are the ones the per-step table records, and (with
    ``decode_images``) that every image decodes within limits. Returns the per-step table."""
    record, root = sub.record, sub.root
    files = record["files"]
    listed: dict[str, dict[str, Any]] = {STEPS_FILE: files["steps_table"]}
    if "sessions_table" in files:
        listed[SESSIONS_FILE] = files["sessions_table"]
    by_step: dict[tuple[str, str, int], str] = {}
    for kind in ("images", "refusals"):
        for entry in files[kind]:
            path = entry["path"]
            if not files["images_bundled"]:
                if path is not None:
                    raise SubmissionRejected("files.images_bundled is false but files name bundled paths.")
                continue
            if path is None or entry["bytes"] is None:
                raise SubmissionRejected(f"files.{kind}: an entry has no path or size although images are bundled.")
            rel = safe_relative_path(path, what=f"files.{kind} path")
            suffix = REFUSED_SUFFIX if kind == "refusals" else rel.suffix
            if kind == "images" and suffix.lower() not in FORMATS:
                raise SubmissionRejected(f"{printable(path)}: images must end in one of {', '.join(FORMATS)}.")
            expected = step_path(entry["face_id"], entry["session_id"], entry["k"], suffix)
            if path != expected:
                raise SubmissionRejected(f"{printable(path)} is not where the replay layout puts "
                                         f"{printable(entry['face_id'])} {entry['session_id']} step {entry['k']}.")
            slot = (face_dir(entry["face_id"]), entry["session_id"], entry["k"])
            if slot in by_step or path in listed:
                raise SubmissionRejected(f"{printable(path)}: two files for one step (face ids that map to the same "
                                         "directory, or a step both refused and edited).")
            by_step[slot] = path
            listed[path] = entry
    present = _tree(root, limits)
    unexpected = sorted(set(present) - set(listed) - {SUBMISSION_FILE})
    if unexpected:
        raise SubmissionRejected(f"the bundle holds files its record does not list: "
                                 f"{', '.join(printable(u, 80) for u in unexpected[:5])}.")
    for path, entry in listed.items():
        what = printable(path)
        size = regular_file_size(root / PurePosixPath(path), what=what)
        limit = limits.steps_table_bytes if path in TABLES else (
            limits.refusal_bytes if path.endswith(REFUSED_SUFFIX) else limits.image_bytes)
        if size != entry["bytes"]:
            raise SubmissionRejected(f"{what} is {size} bytes; the record says {entry['bytes']}.")
        data = read_bounded(root / PurePosixPath(path), limit, what=what)
        if content_hash(data) != entry["sha256"]:
            raise SubmissionRejected(f"{what} does not match the sha256 its record states: the file was changed.")
        if path in TABLES:
            sub.tables[path] = data
        elif decode_images and not path.endswith(REFUSED_SUFFIX):
            check_image(data, PurePosixPath(path).suffix, limits, what=what)
    steps_table = sub.tables[STEPS_FILE]
    images, refused = _expected_steps(steps_table)
    listed_images = {(e["face_id"], e["session_id"], e["k"]): e["sha256"] for e in files["images"]}
    if listed_images != images:
        raise SubmissionRejected("files.images does not list exactly the edited images of steps.csv "
                                 "(a step's image or hash differs between the record and the per-step table).")
    if {(e["face_id"], e["session_id"], e["k"]) for e in files["refusals"]} != refused:
        raise SubmissionRejected("files.refusals does not list exactly the refused steps of steps.csv.")
    return steps_table


def check_consistent(sub: Submission, registered: Mapping[str, Any]) -> None:
    """After :func:`check_bundle`: the record's numbers agree with themselves and with its tables, else
    :class:`SubmissionRejected` naming the first figures that do not."""
    from faceedit_bench.leaderboard.consistency import inconsistencies

    found = inconsistencies(sub.record, sub.tables, registered)
    if found:
        more = f" (and {len(found) - 3} more)" if len(found) > 3 else ""
        raise SubmissionRejected(f"its numbers are inconsistent: {'; '.join(found[:3])}{more}. A figure must lie "
                                 "inside its own interval and equal what its bundled tables recompute: submit the "
                                 "run again, unedited.")


# -- archives ---------------------------------------------------------------------------------


def _extract_zip(archive: Path, dest: Path, limits: Limits) -> None:
    """Extract a zip bundle into the empty directory ``dest``, refusing unsafe member names,
    links, special files, encrypted members and anything over the size or ratio limits."""
    size = regular_file_size(archive, what=f"archive {archive.name}")
    if size > limits.bundle_bytes:
        raise SubmissionRejected(f"archive {archive.name} is {size} bytes, over the {limits.bundle_bytes} limit.")
    per_file = max(limits.image_bytes, limits.steps_table_bytes, limits.submission_json_bytes)
    try:
        zf = zipfile.ZipFile(archive)
    except (zipfile.BadZipFile, OSError) as exc:
        raise SubmissionRejected(f"archive {archive.name} is not a readable zip file ({exc}).") from None
    with zf:
        infos = zf.infolist()
        if len(infos) > limits.bundle_files:
            raise SubmissionRejected(f"archive holds {len(infos)} members, over the {limits.bundle_files} limit.")
        total, names = 0, set()
        for info in infos:
            mode = (info.external_attr >> 16) & 0o170000
            rel = safe_relative_path(info.filename.rstrip("/"), what="archive member")
            if stat.S_ISLNK(mode):
                raise SubmissionRejected(f"archive member {rel} is a symbolic link; bundles hold regular files only.")
            if mode and not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                raise SubmissionRejected(f"archive member {rel} is not a regular file.")
            if info.flag_bits & 0x1:
                raise SubmissionRejected(f"archive member {rel} is encrypted.")
            if rel in names:
                raise SubmissionRejected(f"archive member {rel} appears twice.")
            names.add(rel)
            if info.is_dir():
                continue
            if info.file_size > per_file:
                raise SubmissionRejected(f"archive member {rel} is {info.file_size} bytes, over the limit.")
            if info.file_size > 2**20 and info.file_size > limits.archive_ratio * max(info.compress_size, 1):
                raise SubmissionRejected(f"archive member {rel} expands {info.file_size // max(info.compress_size, 1)}"
                                         "-fold: a zip bomb.")
            total += info.file_size
            if total > limits.bundle_bytes:
                raise SubmissionRejected(f"archive expands to more than {limits.bundle_bytes} bytes.")
        for info in infos:
            target = dest / safe_relative_path(info.filename.rstrip("/"), what="archive member")
            if info.is_dir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                with zf.open(info) as src, open(target, "xb") as out:  # reads at most the declared size
                    shutil.copyfileobj(src, out, 2**20)
            except (zipfile.BadZipFile, OSError, EOFError) as exc:
                raise SubmissionRejected(f"archive member {info.filename[:80]!r} cannot be read ({exc}).") from None


@contextlib.contextmanager
def open_bundle(path: Path, limits: Limits = DEFAULT_LIMITS) -> Iterator[Path]:
    """The bundle directory for ``path``: a directory, its ``submission.json``, or a ``.zip``
    (extracted safely into a temporary directory for the duration of the ``with`` block)."""
    path = Path(path)
    if path.is_file() and path.name == SUBMISSION_FILE and not path.is_symlink():
        yield path.parent
        return
    if path.is_dir() or path.is_symlink():
        yield path
        return
    if path.is_file() and path.suffix.lower() == ".zip":
        with tempfile.TemporaryDirectory(prefix="faceedit-bundle-") as tmp:
            _extract_zip(path, Path(tmp), limits)
            root = Path(tmp)
            entries = list(root.iterdir())
            if not (root / SUBMISSION_FILE).exists() and len(entries) == 1 and entries[0].is_dir():
                root = entries[0]  # a zip of the submission's directory
            yield root
        return
    raise SubmissionRejected(f"{printable(str(path))} is not a submission: give its directory, its {SUBMISSION_FILE}, "
                             "or a .zip of the directory.")
