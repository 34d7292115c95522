"""People's ratings of a run's outputs as the report section ``human_agreement``, added after the run by
``faceedit-bench human report`` (no collector): reliability, VLM vs people, paired and group tests, metric
agreement."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from faceedit_bench.api.sections import ReportSection, SectionHtml, load_schema


def _human_page(report: Mapping[str, Any], store: Any) -> dict[str, Any] | None:
    human = report.get("human_agreement")
    return {"human": human} if human else None


HUMAN_AGREEMENT = ReportSection(
    name="human_agreement", title="Human evaluation",
    schema=load_schema("faceedit_bench_audit", "schemas/human_agreement.schema.json"),
    html=SectionHtml("human_section.html.j2", "faceedit_bench_audit", context=_human_page,
                     anchor="human-agreement", nav="human evaluation"),
    description="people's ratings of a run's outputs (faceedit-bench human report): reliability, VLM vs people, "
                "paired and group tests, metric agreement")
