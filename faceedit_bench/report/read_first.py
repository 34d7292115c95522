"""What a reader must be told before any number: a measurement that is mostly missing or failed, and a judge
that failed its sanity anchors.

A measurement is *mostly missing* when more than half of what it was meant to cover (:data:`MOST`) has no
value: faces or reference images excluded, sessions excluded, edit steps without a usable image (per
prompt condition), sessions where a metric is undefined, judge answers that are not ``ok``, condition pairs
dropped, and what each report section finds mostly missing in its own part
(its ``warnings``, built with :func:`warning`). Each warning says what, how many of how many, and why (the
reasons, most frequent first). Judge anchors that failed (over half of them) are a different warning, of kind
``judge_reliability``: the judge answered, and its answers contradict edits whose score is known.

:func:`mostly_missing` builds report.json's ``warnings`` (schema ``$defs.warning``); the console summary,
report.html's "Read first" box and the MLflow tracker show them first (:func:`warning_lines`). Reports
written before the list existed get it recomputed from their counts.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from faceedit_bench.plugin.manager import sections_in_use
from faceedit_bench.plugin.sections import ReportSection

#: "Most" is more than this share of a measurement's units: over half.
MOST = 0.5
#: Reasons named in a warning's message (all of them are in ``reasons``).
MAX_REASONS = 3
#: A metric's undefined sessions that are not missing: the judge answered, and the value does not apply.
NOT_APPLICABLE = "answered_without_value"


def mostly_missing(report: Mapping[str, Any], sections: Sequence[ReportSection] | None = None,
                   ) -> list[dict[str, Any]]:
    """Every measurement of ``report`` with more than half of its units missing or failed (module docstring);
    ``sections``: the report sections whose own warnings are asked (default: those in use)."""
    found: list[dict[str, Any] | None] = []
    counts = report.get("counts") or {}
    faces = counts.get("faces") or {}
    found.append(warning("faces_excluded", "faces", "excluded before editing", faces.get("seen"),
                         faces.get("excluded") or {}))
    references = counts.get("references") or {}
    found.append(warning("references_ignored", "reference images", "could not be used", references.get("listed"),
                         references.get("ignored") or {}))
    sessions = counts.get("sessions") or {}
    found.append(warning("sessions_excluded", "sessions", "excluded from the metrics", sessions.get("planned"),
                         sessions.get("excluded") or {}))
    found += _steps(report)
    for name, m in (report.get("metrics") or {}).items():
        # a value the judge answered but that does not apply (aging accuracy outside the aging prompt) is
        # not missing; reports before the reasons were counted give the undefined sessions as one number
        reasons = {k: v for k, v in (m.get("undefined_by_reason") or {"undefined": m.get("undefined_sessions") or 0})
                   .items() if k != NOT_APPLICABLE}
        found.append(warning(f"metric_undefined:{name}", f"included sessions for {name}", "have no value",
                             (m.get("n") or 0) + sum(reasons.values()), reasons))
    for template, outcomes in (counts.get("judge") or {}).items():
        found.append(warning(f"judge_answers:{template}", f"judge answers ({template})", "are not usable",
                             sum(outcomes.values()), _not_ok(outcomes)))
    found.append(_anchors(report.get("judge_reliability") or {}))
    for section in sections_in_use() if sections is None else sections:
        part = report.get(section.name)
        if section.warnings is not None and isinstance(part, Mapping):
            found += [dict(w) for w in section.warnings(part) if w]  # a section may give None: nothing missing
    found += _pairs(report)
    return [w for w in found if w is not None]


def report_warnings(report: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The report's own ``warnings``, or (a report written before they existed) recomputed."""
    stated = report.get("warnings")
    return [dict(w) for w in stated if isinstance(w, Mapping)] if isinstance(stated, list) else mostly_missing(report)


#: How a warning of each kind is introduced wherever it is shown (console, report.html, MLflow): a mostly
#: missing measurement says what "most" means; a judge that failed its sanity anchors is not missing data.
LABELS = {"missing": f"MOSTLY MISSING (over {MOST:.0%})", "judge_reliability": "JUDGE RELIABILITY"}


def label(w: Mapping[str, Any]) -> str:
    """The label a warning is shown under (reports written before warnings had a kind: by their code)."""
    kind = w.get("kind") or ("judge_reliability" if w.get("code") == "judge_anchors" else "missing")
    return LABELS.get(str(kind), LABELS["missing"])


def warning_lines(report: Mapping[str, Any]) -> list[str]:
    """The warnings as the first lines of the console summary: ``MOSTLY MISSING (over 50%): ...``,
    ``JUDGE RELIABILITY: ...``."""
    return [f"{label(w)}: {w['message']}" for w in report_warnings(report)]


# -- the measurements --------------------------------------------------------------------------------------


def _steps(report: Mapping[str, Any]) -> list[dict[str, Any] | None]:
    """Edit steps without a usable image, for the run and for every prompt condition (the run's counts
    describe the reference condition; another condition's failed prompts are only in ``conditions``)."""
    counts = report.get("counts") or {}
    conditions = (report.get("conditions") or {}).get("per_condition") or {}
    per = {name: c.get("steps") or {} for name, c in conditions.items()} or {"": counts.get("steps") or {}}
    return [warning(f"steps:{name}" if name else "steps", f"edit steps{f' under {name}' if name else ''}",
                    "have no usable image", sum(steps.values()), _not_ok(steps)) for name, steps in per.items()]


def _anchors(reliability: Mapping[str, Any]) -> dict[str, Any] | None:
    """Judge anchors that failed: a warning about the judge's reliability, each failure said in words
    ("unchanged: editing_success 8, expected 0-3")."""
    anchors = reliability.get("anchors") or []
    reasons = Counter(_anchor_failure(a) for a in anchors if not a.get("passed"))
    found = warning("judge_anchors", "judge sanity anchors", "failed", len(anchors), reasons, verb="passed")
    if found is not None:
        found["kind"] = "judge_reliability"
        found["message"] = (f"the judge failed {found['missing']} of {found['total']} sanity anchors, edits whose "
                            f"score is known in advance ({'; '.join(found['reasons'])}): its scores may not mean "
                            "what they should")
    return found


def _anchor_failure(anchor: Mapping[str, Any]) -> str:
    name, value = anchor.get("name", "?"), anchor.get("value")
    if anchor.get("outcome") != "ok" or not isinstance(value, Mapping):
        return f"{name}: no usable answer ({anchor.get('outcome')})"
    wrong = [f"{field} {value.get(field)}, expected {lo}-{hi}"
             for field, (lo, hi) in (anchor.get("expect") or {}).items()
             if not (isinstance(value.get(field), (int, float)) and lo <= value[field] <= hi)]
    return f"{name}: {', '.join(wrong) or 'answer out of range'}"


def _pairs(report: Mapping[str, Any]) -> list[dict[str, Any] | None]:
    """Prompt-condition pairs dropped from a paired comparison (a side without a value)."""
    out: list[dict[str, Any] | None] = []
    for condition, comparison in ((report.get("conditions") or {}).get("comparisons") or {}).items():
        for metric, t in ((comparison.get("overall") or {}).get("metrics") or {}).items():
            dropped = t.get("dropped") or 0
            reasons = {f"no value under {side}": n for side, n in (t.get("undefined") or {}).items() if n}
            out.append(warning(f"pairs_dropped:{condition}:{metric}",
                               f"{condition} - {comparison.get('vs')} pairs for {metric}", "were dropped",
                               (t.get("n_pairs") or 0) + dropped, reasons or {"dropped": dropped}, missing=dropped))
    return out


# -- one warning ---------------------------------------------------------------------------------------------


def _not_ok(outcomes: Mapping[str, int]) -> dict[str, int]:
    return {o: n for o, n in outcomes.items() if o != "ok" and n}


def warning(code: str, what: str, failure: str, total: Any, reasons: Mapping[str, Any], *,
            missing: int | None = None, verb: str = "") -> dict[str, Any] | None:
    """A warning (schema ``$defs.warning``) when ``missing`` (default: the sum of ``reasons``) is more than
    :data:`MOST` of ``total``, else None: ``code`` identifies it (``<what>`` or ``<what>:<name>``), ``what`` names
    the units, ``failure`` says what happened to the missing ones (``"have no value"``); with ``verb`` the message
    counts the units that did not fail instead (``"3 of 10 items scored"``)."""
    total = int(total or 0)
    missing = int(sum(int(n) for n in reasons.values()) if missing is None else missing)
    if total <= 0 or missing <= MOST * total:
        return None
    ordered = dict(sorted(((str(k), int(v)) for k, v in reasons.items() if v), key=lambda kv: (-kv[1], kv[0])))
    shown = ", ".join(f"{k} {v}" for k, v in list(ordered.items())[:MAX_REASONS])
    more = f" and {len(ordered) - MAX_REASONS} more" if len(ordered) > MAX_REASONS else ""
    if verb:  # "0 of 3 judge anchors passed"
        head = f"{total - missing} of {total} {what} {verb}"
    else:  # "180 of 180 edit steps under features_prepend have no usable image"
        head = f"{missing} of {total} {what} {failure}"
    return {"code": code, "what": what, "missing": missing, "total": total, "share": missing / total,
            "reasons": ordered, "message": f"{head} ({shown}{more})" if shown else head}


def codes(warnings: Iterable[Mapping[str, Any]]) -> list[str]:
    return [str(w.get("code")) for w in warnings]
