"""Bounds and safe reading for untrusted submission files: sizes, paths, JSON."""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from faceedit_bench.leaderboard.errors import SubmissionRejected
from faceedit_bench.storage import user_files
from faceedit_bench.storage.images import MAX_PIXELS

MiB = 2**20


@dataclass(frozen=True)
class Limits:
    """The most a submission may contain. Checked before anything is parsed or decoded."""

    submission_json_bytes: int = 4 * MiB
    steps_table_bytes: int = 256 * MiB
    image_bytes: int = 32 * MiB
    refusal_bytes: int = 4096
    #: Largest width or height of a bundled image, and largest width x height (decompression bombs).
    image_side: int = 8192
    image_pixels: int = MAX_PIXELS
    bundle_files: int = 500_000
    bundle_bytes: int = 64 * 1024 * MiB
    #: Largest uncompressed/compressed size ratio of a zip member (zip bombs).
    archive_ratio: int = 200
    verification_json_bytes: int = 1 * MiB


#: One path segment: never starting with a dot (no '.', '..', hidden files), no separators.
_SEGMENT = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9._-]*$")


def safe_relative_path(name: str, *, what: str = "file") -> PurePosixPath:
    """``name`` as a relative path that stays inside its bundle, or :class:`SubmissionRejected`.

    Accepts only '/'-separated segments of ``[A-Za-z0-9._-]`` not starting with a dot: no
    absolute paths, no '..', no backslashes or drive letters, no hidden files.
    """
    shown = ascii(name[:120])
    if not name or len(name) > 300:
        raise SubmissionRejected(f"{what} name {shown} is empty or longer than 300 characters.")
    parts = name.split("/")
    if not all(_SEGMENT.match(p) for p in parts):
        raise SubmissionRejected(
            f"{what} name {shown} is not a plain relative path (only [A-Za-z0-9._-] segments, none starting "
            "with '.', separated by '/'; no '..', absolute paths or backslashes)."
        )
    return PurePosixPath(*parts)


def regular_file_size(path: Path, *, what: str) -> int:
    """The size of ``path`` if it is a regular file and not a link, else :class:`SubmissionRejected`."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        raise SubmissionRejected(f"{what} is missing from the bundle.") from None
    if stat.S_ISLNK(st.st_mode):
        raise SubmissionRejected(f"{what} is a symbolic link; bundles may contain regular files only.")
    if not stat.S_ISREG(st.st_mode):
        raise SubmissionRejected(f"{what} is not a regular file.")
    return st.st_size


def read_bounded(path: Path, limit: int, *, what: str) -> bytes:
    """Read a regular file of at most ``limit`` bytes (links and oversized files are rejected)."""
    size = regular_file_size(path, what=what)
    if size > limit:
        raise SubmissionRejected(f"{what} is {size} bytes, more than the limit of {limit} bytes.")
    with open(path, "rb") as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:  # grew while we looked
        raise SubmissionRejected(f"{what} is more than the limit of {limit} bytes.")
    return data


def parse_json(data: bytes, *, what: str) -> Any:
    """Strict JSON (UTF-8, no NaN/Infinity, depth-capped: :mod:`faceedit_bench.storage.user_files`); errors
    become :class:`SubmissionRejected`."""
    text = user_files.decode_utf8(data, what, what="JSON file", error=SubmissionRejected)
    return user_files.parse_json(text, what, what="JSON file", error=SubmissionRejected)


DEFAULT_LIMITS = Limits()
