"""faceedit-bench-replicate: any Replicate model, pinned to an immutable version, as an editor.

Loading this module is cheap: the ``replicate`` SDK is imported only when a call is made.
Select it with ``editor=replicate editor.params.model=owner/model:<version id>``, or one of the
ready entries (``editor=replicate_flux_kontext_pro``, ``editor=replicate_bagel`` ...); the token
is read from ``$REPLICATE_API_TOKEN``. Parameters are in ``conf/editor/replicate.yaml``.
"""

from __future__ import annotations

from faceedit_bench.api import Register, hookimpl

__all__ = ["faceedit_config_searchpath", "faceedit_register_editors"]


@hookimpl
def faceedit_register_editors(register: Register) -> None:
    register("replicate", "faceedit_bench_replicate.editor:ReplicateEditor",
             description="any Replicate model pinned to owner/model:version, through predictions (wait, then poll)")


@hookimpl
def faceedit_config_searchpath() -> list[str]:
    return ["pkg://faceedit_bench_replicate.conf"]
