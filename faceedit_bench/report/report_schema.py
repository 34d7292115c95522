"""The run report's JSON schema: the core's (``schemas/run_report.schema.json``) with every report section's
schema under ``properties[<name>]``.

A section's schema may use the core's definitions (``{"$ref": "#/$defs/summary"}``) and bring its own in its
``$defs``, which join the core's: a name already defined differently is an error, never a silent override.
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Mapping, Sequence
from importlib import resources
from typing import Any

from faceedit_bench.errors import FaceEditBenchError
from faceedit_bench.plugin.manager import sections_in_use
from faceedit_bench.plugin.sections import ReportSection


@functools.cache
def core_schema() -> dict[str, Any]:
    text = (resources.files("faceedit_bench") / "schemas" / "run_report.schema.json").read_text(encoding="utf-8")
    return json.loads(text)


def run_report_schema(sections: Sequence[ReportSection] | None = None) -> dict[str, Any]:
    """The schema of a report written with ``sections`` (default: those in use)."""
    schema = copy.deepcopy(core_schema())
    for section in sections_in_use() if sections is None else sections:
        add_section(schema, section.name, section.schema)
    return schema


def add_section(schema: dict[str, Any], name: str, section_schema: Mapping[str, Any]) -> None:
    part = dict(copy.deepcopy(section_schema))
    defs = schema.setdefault("$defs", {})
    for key, definition in (part.pop("$defs", None) or {}).items():
        if key in defs and defs[key] != definition:
            raise FaceEditBenchError(f"report section {name}: its schema defines $defs/{key}, which the run report "
                                     "schema (or another section) defines differently; rename it")
        defs[key] = definition
    part.pop("$schema", None)
    schema.setdefault("properties", {})[name] = part


def section_part_schema(section: ReportSection) -> dict[str, Any]:
    """A schema for ``report[section.name]`` on its own (with the definitions it may refer to)."""
    merged = run_report_schema([section])
    return {"$schema": merged.get("$schema"), "$defs": merged.get("$defs", {}), **merged["properties"][section.name]}
