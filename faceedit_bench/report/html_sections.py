"""Every report section's part of report.html: its template (shipped in its package) rendered with its
context and the page's filters and globals, in registration order, each with its nav entry.

A section whose part is absent from a report, or whose context says there is nothing to show, is left out;
a report part no registered section claims (a plugin that is not installed here) is not shown.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from markupsafe import Markup

from faceedit_bench.plugin.manager import sections_in_use
from faceedit_bench.plugin.sections import ReportSection, failing_section
from faceedit_bench.report.templates import package_environment


def ci_label(confidence: Any) -> str:
    """``95% CI``: the interval label of the run's confidence level."""
    if not isinstance(confidence, (int, float)) or isinstance(confidence, bool) or not confidence:
        return "95% CI"
    return f"{int(confidence * 100 + 0.5)}% CI"


def section_pages(report: Mapping[str, Any], store: Any, page: Mapping[str, Any],
                  sections: Sequence[ReportSection] | None = None) -> list[dict[str, Any]]:
    """``[{name, anchor, nav, place, html}]`` of the sections this report has (``nav``: "" for none); ``page``:
    globals every section template gets (``display``, ``ci_label``, ``plot_error``)."""
    out = []
    for section in sections_in_use() if sections is None else sections:
        html = section.html
        if html is None:
            continue
        part = report.get(section.name)
        if html.context is not None:
            with failing_section(section.name, "html context"):
                context = html.context(report, store)
        else:
            context = {"section": part} if isinstance(part, Mapping) and part else None
        if context is None:
            continue
        with failing_section(section.name, f"template {html.folder}/{html.template}"):
            template = package_environment(html.package, html.folder).get_template(html.template)
            rendered = template.render({**page, "report": report, **context})
        nav = section.title if html.nav == "" else html.nav or ""
        out.append({"name": section.name, "anchor": html.anchor or section.name, "nav": nav, "place": html.place,
                    "html": Markup(rendered)})  # rendered with autoescape: safe to place as it is
    return out
