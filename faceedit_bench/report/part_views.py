"""Typed views of the report parts that code reads field by field in many places (``cost``, ``run``), derived
from their JSON schema rather than copied: one frozen dataclass field per property the schema declares.

``CostPart.of(report.get("cost")).estimated_usd`` instead of ``(report.get("cost") or {}).get("estimated_usd")``:
a report of any version is read (a field it lacks, or a missing part, reads as None), and a field the schema
does not declare is an AttributeError where it is written, not a silent None where it is read.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from faceedit_bench.plugin.sections import load_schema
from faceedit_bench.report.report_schema import core_schema

_TYPES = {"number": float, "integer": int, "boolean": bool, "string": str, "object": Mapping[str, Any],
          "array": list[Any]}


def _annotation(schema: Mapping[str, Any]) -> Any:
    """The Python type of a property (``X | None``: every field of a view may be absent from older reports)."""
    kinds = schema.get("type")
    kinds = [kinds] if isinstance(kinds, str) else list(kinds or [])
    found = [_TYPES[k] for k in kinds if k in _TYPES]
    return (found[0] if len(found) == 1 else Any) | None


def part_view(name: str, key: str, schema: Mapping[str, Any]) -> type:
    """A frozen dataclass named ``name`` with a field (default None) per property of the object ``schema`` (of
    ``report[key]``), and ``of(part)``: the view of a report part (a mapping, or None where the report lacks it)."""
    fields = [(field, _annotation(sub), dataclasses.field(default=None))
              for field, sub in (schema.get("properties") or {}).items()]

    def of(cls: type, part: Any) -> Any:
        if not isinstance(part, Mapping):
            return cls()
        return cls(**{f.name: part.get(f.name) for f in dataclasses.fields(cls)})

    doc = f"``report[{key!r}]`` as its schema declares it (``of(part)``). {schema.get('description', '')}"
    return dataclasses.make_dataclass(name, fields, frozen=True,
                                      namespace={"of": classmethod(of), "__doc__": doc.strip()})


#: ``report["cost"]`` (and a submission record's ``cost``, a subset): estimated_usd, new_usd, by_component ...
CostPart = part_view("CostPart", "cost", load_schema("faceedit_bench", "schemas/sections/cost.schema.json"))
#: ``report["run"]``: key, name, created_at, wall_time_s, computed, complete, stopped, re_reported ...
RunPart = part_view("RunPart", "run", core_schema()["properties"]["run"])


def cost_of(report: Mapping[str, Any]) -> Any:
    """The report's (or a submission record's) ``cost`` part as a :data:`CostPart`."""
    return CostPart.of(report.get("cost"))


def run_of(report: Mapping[str, Any]) -> Any:
    """The report's ``run`` part as a :data:`RunPart`."""
    return RunPart.of(report.get("run"))
