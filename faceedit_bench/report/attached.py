"""What a new report of a finished run keeps from the one it replaces.

* Sections attached after the run (an arena, people's ratings or annotations): :func:`attach_section`
  adds one to report.json and report.html and records it under ``attached``; a later report of the run (a
  rerun, ``make run``, a merge) carries every recorded section over, since no launch of the run computes them.
* The launch's provenance: a launch that did no work (nothing embedded, edited or judged, no call, nothing
  spent) only re-reports, so the report keeps the wall time (:data:`WORK_FIELDS`), the calls table and the
  performance (:data:`~faceedit_bench.report.run_report.LAUNCH_SECTIONS`) of the launch that did the work, and
  gives its own wall time as ``run.re_reported``. What the invocation itself did stays its own: ``run.computed``
  and ``cost.new_usd`` (0 in a re-report), the judge anchors' ``asked_now``. ``run.launches`` lists every launch
  that did work, oldest first, with its wall time, work and new cost.

Neither changes the run's results digest: attached sections and the launch fields are left out of it
(:func:`~faceedit_bench.report.run_report.results_digest`), so a tracker that logged the launch, and got the
attached sections from the commands that attached them, has nothing new to log.
"""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from faceedit_bench.plugin.manager import sections_in_use
from faceedit_bench.report.html_file import store_for_run_dir, write_html_report
from faceedit_bench.report.part_views import cost_of, run_of
from faceedit_bench.report.run_report import LAUNCH_SECTIONS
from faceedit_bench.storage import atomic
from faceedit_bench.storage.locks import directory_lock

#: The report's record of the sections attached after the run: ``{name: {"attached_at": ...}}``.
ATTACHED = "attached"
REPORT_JSON = "report.json"
#: The run's fields that describe the launch that did the work, kept by a re-report (with LAUNCH_SECTIONS).
WORK_FIELDS = ("wall_time_s",)


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def attach_section(run_dir: Path, name: str, part: Mapping[str, Any]) -> dict[str, Any]:
    """Add ``part`` as ``report[name]`` to the finished run in ``run_dir`` (report.json, then report.html), under
    the run folder's lock, and record it so every later report of the run keeps it. Returns the new report."""
    run_dir = Path(run_dir)
    with directory_lock(run_dir.parent.parent, f"run-{run_dir.name}", what=f"adding {name} to {run_dir}"):
        report = json.loads((run_dir / REPORT_JSON).read_text(encoding="utf-8"))
        report[name] = part
        report[ATTACHED] = {**(report.get(ATTACHED) or {}), name: {"attached_at": _now()}}
        atomic.write_text(run_dir / REPORT_JSON, json.dumps(report, indent=2, default=str))
        # After report.json: a rendering problem can never lose the numbers.
        write_html_report(run_dir, report, store=store_for_run_dir(run_dir))
    return report


def read_previous(run_dir: Path, run_key: str) -> dict[str, Any] | None:
    """The run folder's current report when it is one of this run (the same run key) and can be read."""
    try:
        previous = json.loads((Path(run_dir) / REPORT_JSON).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    same = isinstance(previous, dict) and (previous.get("run") or {}).get("key") == run_key
    return previous if same else None


def did_work(report: Mapping[str, Any]) -> bool:
    """Whether the launch that wrote ``report`` embedded, edited or judged anything, made a call or spent."""
    computed = run_of(report).computed or {}
    calls = sum(int(e.get("calls") or 0) for e in (report.get("calls") or {}).values() if isinstance(e, Mapping))
    return any(computed.values()) or calls > 0 or bool(cost_of(report).new_usd)


def _launch(report: Mapping[str, Any]) -> dict[str, Any]:
    run = run_of(report)
    return {"created_at": run.created_at, "wall_time_s": run.wall_time_s, "computed": run.computed,
            "new_usd": cost_of(report).new_usd}


def _work_launches(previous: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """The launches that did work, as ``previous`` lists them (a report written before the list: itself, if it
    did work)."""
    if previous is None:
        return []
    listed = (previous.get("run") or {}).get("launches")
    return list(listed) if listed is not None else [_launch(previous)] if did_work(previous) else []


def keep_derived(report: dict[str, Any], previous: Mapping[str, Any] | None) -> None:
    """Carry into ``report`` (this launch's, about to replace ``previous``) the sections attached to the run and,
    when this launch did no work, the provenance of the launch that did (in place)."""
    if previous is not None and not did_work(report):
        _keep_provenance(report, previous)
    else:
        report["run"]["launches"] = [*_work_launches(previous), *([_launch(report)] if did_work(report) else [])]
    for name, about in _attached(previous).items():
        if name not in report:
            report[name] = copy.deepcopy(previous[name])
            report.setdefault(ATTACHED, {})[name] = about


def _attached(previous: Mapping[str, Any] | None) -> dict[str, Any]:
    """The sections attached to ``previous``: those it records and, in a report written before the record, every
    registered section it holds that has no collector (no launch computes those: an arena, people's ratings)."""
    if previous is None:
        return {}
    found = {name: about for name, about in (previous.get(ATTACHED) or {}).items() if name in previous}
    for section in sections_in_use():
        if section.collector is None and section.name in previous:
            found.setdefault(section.name, {"attached_at": None})
    return found


def _keep_provenance(report: dict[str, Any], previous: Mapping[str, Any]) -> None:
    run, before = report["run"], previous.get("run") or {}
    run["re_reported"] = {"wall_time_s": run["wall_time_s"]}
    for field in WORK_FIELDS:
        if field in before:
            run[field] = before[field]
    for section in LAUNCH_SECTIONS:
        if section in previous:
            report[section] = copy.deepcopy(previous[section])
    run["launches"] = _work_launches(previous)
