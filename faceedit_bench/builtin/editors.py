"""Builtin editors: ``identity`` (the no-edit baseline) and ``replay`` (edits made elsewhere)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from faceedit_bench import hookimpl
from faceedit_bench.errors import ConfigError
from faceedit_bench.keys import fingerprint
from faceedit_bench.records import EditRequest, EditResult, Outcome
from faceedit_bench.storage.replay_layout import REPLAY_EXTENSIONS, face_dir


@hookimpl
def faceedit_register_editors(register: Any) -> None:
    register("identity", IdentityEditor, description="Returns its input unchanged (no-edit baseline).")
    register("replay", ReplayEditor, description="Reads pre-generated step images from a directory.")


class IdentityEditor:
    """Returns I_{k-1} unchanged: the lower bound of Drop_FSS and of any edit metric."""

    def describe(self) -> dict[str, Any]:
        return {"name": "identity", "version": "1"}

    def edit(self, request: EditRequest) -> EditResult:
        return EditResult.ok(request.image)


class ReplayEditor:
    """Serves edits produced elsewhere, laid out as::

        <root>/<face_dir(face_id)>/<session_id>/step_<k>.<png|jpg|jpeg|webp|bmp|gif|tiff|tif>

    ``step_<k>.refused`` (its text, if any, is the reason) records a provider refusal.
    A missing step image is the outcome ``no_image``. The replayed step k is used as the
    input of step k+1, exactly as a live editor's output would be.
    """

    def __init__(self, root: str) -> None:
        self.root = Path(root).expanduser().resolve()
        if not self.root.is_dir():
            raise ConfigError(
                f"replay root {self.root} is not a directory. Set editor.params.root to a directory laid out as "
                "<root>/<face>/<session_id>/step_<k>.png"
            )
        # The tree's listing is part of the editor's identity: replacing a file
        # invalidates the ledger entries made from the old one.
        listing = sorted(
            (str(p.relative_to(self.root)), p.stat().st_size, p.stat().st_mtime_ns)
            for p in self.root.rglob("*") if p.is_file()
        )
        self._tree_digest = fingerprint(listing)

    def describe(self) -> dict[str, Any]:
        return {"name": "replay", "version": "1", "root": str(self.root), "tree_digest": self._tree_digest}

    def edit(self, request: EditRequest) -> EditResult:
        step_dir = self.root / face_dir(request.face_id) / request.session_id
        refused = step_dir / f"step_{request.k}.refused"
        if refused.is_file():
            return EditResult(Outcome.REFUSED, reason=refused.read_text(errors="replace").strip() or "refused")
        for ext in REPLAY_EXTENSIONS:
            candidate = step_dir / f"step_{request.k}{ext}"
            if candidate.is_file():
                return EditResult.ok(candidate.read_bytes(), source=str(candidate.relative_to(self.root)))
        return EditResult(Outcome.NO_IMAGE, reason=f"no file {step_dir.relative_to(self.root)}/step_{request.k}.*")
