"""The replay layout: where edits made elsewhere (or exported from a run) lie on disk.

``<root>/<face_dir>/<session_id>/step_<k>.<ext>``, with ``step_<k>.refused`` for a refusal.
The ``replay`` editor reads it, ``export-replay`` and leaderboard bundles write it.
"""

from __future__ import annotations

import re

REPLAY_EXTENSIONS = (".png", ".jpg", ".jpeg", ".webp", ".bmp", ".gif", ".tiff", ".tif")


def face_dir(face_id: str) -> str:
    """The directory name of a face in the replay layout (path-safe form of its id)."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", face_id).lstrip(".") or "_"


def replay_step_path(face_id: str, session_id: str, k: int, suffix: str) -> str:
    """Where step k's image (``suffix`` its extension) or refusal marker lives in the replay layout."""
    return f"{face_dir(face_id)}/{session_id}/step_{k}{suffix}"


def replay_extension(image_format: str | None) -> str:
    """The replay-layout extension of an image in Pillow format ``image_format``."""
    return ".jpg" if image_format == "JPEG" else f".{(image_format or 'png').lower()}"
