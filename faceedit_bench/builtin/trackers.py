"""Builtin tracker ``none``: results stay in the run directory only."""

from __future__ import annotations

from typing import Any

from faceedit_bench import hookimpl


@hookimpl
def faceedit_register_trackers(register: Any) -> None:
    register("none", NullTracker, description="No experiment tracking; artifacts stay in the run directory.")


class NullTracker:
    def describe(self) -> dict[str, Any]:
        return {"name": "none"}
