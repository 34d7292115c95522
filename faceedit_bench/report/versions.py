"""Components named as people read them: ``nano_banana (gemini-2.5-flash-image)``, ``noise v1``, and the
identity baseline without a version (it has no model; its implementation version says nothing to a reader)."""

from __future__ import annotations

from typing import Any

from faceedit_bench.analysis.baselines import is_reference_editor
from faceedit_bench.records import version_text

__all__ = ["named_version", "version_text"]


def named_version(name: Any, version: Any) -> str:
    """``nano_banana (gemini-2.5-flash-image)``, ``noise v1``, ``identity``."""
    name, version = str(name), version_text(version)
    if not version or is_reference_editor(name) or version == name:
        return name
    return f"{name} {version}" if version[:1] == "v" and version[1:2].isdigit() else f"{name} ({version})"
