"""Content-addressed image store: every image is kept once, under the hash of its bytes."""

from __future__ import annotations

from pathlib import Path

from faceedit_bench.storage import atomic
from faceedit_bench.storage.images import content_hash
from faceedit_bench.storage.workspace import WorkspaceGone


def store_root_of_run(run_dir: Path) -> Path:
    """The image store of a run directory: ``<workspace>/runs/<run>`` -> ``<workspace>/store``."""
    return Path(run_dir).resolve().parents[1] / "store"


class ImageStore:
    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)  # safe when several processes create it at once

    def path(self, digest: str) -> Path:
        return self.root / digest[:2] / digest

    def put(self, data: bytes) -> str:
        """Store ``data`` (atomically, so a killed run never leaves half a file) and return its hash."""
        digest = content_hash(data)
        target = self.path(digest)
        if not target.exists():
            if not self.root.is_dir():  # deleted or moved: never a new store made in its place
                raise WorkspaceGone("the image store", self.root)
            target.parent.mkdir(exist_ok=True)
            atomic.write_bytes(target, data)  # the umask's mode, not mkstemp's 0600
        return digest

    def get(self, digest: str) -> bytes:
        return self.path(digest).read_bytes()

    def __contains__(self, digest: str) -> bool:
        return self.path(digest).exists()
