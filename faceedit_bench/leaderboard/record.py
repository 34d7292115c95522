"""From a run (report.json, config.yaml, steps.csv) to a submission record.

The same function turns the verifier's re-scored run into a record, so the submitted and
the reproduced numbers are compared field by field in one shape. Run reports 1.0 to 1.3
are accepted: sections a report lacks (disparity, cost, judge call counts, group tests, judge
panel, a report section's part) are null, and an older report's measures are rebuilt from its metrics.
"""

from __future__ import annotations

import csv
import io
import re
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from faceedit_bench.analysis.multiplicity import NOT_TESTED, YES, bias_status
from faceedit_bench.keys import portable
from faceedit_bench.leaderboard import SUBMISSION_SCHEMA_ID, SUBMISSION_SCHEMA_VERSION
from faceedit_bench.leaderboard.errors import SubmissionRejected
from faceedit_bench.leaderboard.record_sections import record_sections
from faceedit_bench.leaderboard.tolerances import default_tolerance
from faceedit_bench.report.sources import RunArtifacts
from faceedit_bench.report.tables import reference_condition
from faceedit_bench.storage.images import content_hash

SUMMARY_FIELDS = ("n", "mean", "sd", "ci_low", "ci_high")
METRIC_FIELDS = ("higher_is_better", "unit", "description", *SUMMARY_FIELDS, "undefined_sessions")
DISPARITY_FIELDS = ("metric", "contrast", "wd", "p_value", "bias", "worst_group", "best_group", "threshold",
                    "alpha", "reason", "p_clustered", "p_holm", "q_value", "bias_status", "not_tested_reason",
                    "n_identities", "paper_rule", "family_size")
#: Config groups verification needs besides the editor, and the run settings that change results.
CONFIG_GROUPS = ("testset", "dataset", "embedder", "judge")
RUN_SETTINGS = ("max_faces", "max_sessions", "seed", "confidence")
REQUIRED_STEP_COLUMNS = ("face_id", "session_id", "k", "outcome")
#: The run's per-session table, bundled when the run has it (judged metrics are verified session by session).
SESSIONS_FILE = "sessions.csv"
_SECRET_KEY = re.compile(r"(^|_)(api_?key|token|secret|password|passwd|credentials?|auth)($|_)", re.IGNORECASE)
_SLUG = re.compile(r"[^a-z0-9._-]+")


def _text(value: Any, limit: int = 200) -> str:
    """A bounded single-line string (schema: no control characters)."""
    return re.sub(r"[\x00-\x1f\x7f]+", " ", str(value))[:limit]


def _summary(s: Mapping[str, Any] | None) -> dict[str, Any]:
    s = s or {}
    out = {f: s.get(f) if f != "n" else int(s.get("n") or 0) for f in SUMMARY_FIELDS}
    if s.get("n_identities") is not None:  # counted since the identity became the unit of the intervals
        out["n_identities"] = int(s["n_identities"])
    return out


def _component(c: Mapping[str, Any], version: Any = None) -> dict[str, Any]:
    description = portable(dict(c.get("description") or {}))
    if version is None:
        version = description.get("version") or description.get("model") or "unspecified"
    return {
        "name": _text(c.get("name", "unknown"), 100),
        "version": _text(version),
        "provider": _text(c.get("provider", "unknown")),
        "provider_version": _text(c.get("provider_version", "unknown")),
        "description": description,
    }


def _without_secrets(params: Any) -> Any:
    """Params with absolute paths and secret-named keys removed (they are machine- or person-specific)."""
    if isinstance(params, dict):
        return {k: _without_secrets(v) for k, v in portable(params).items() if not _SECRET_KEY.search(str(k))}
    return params


def _config(config: Mapping[str, Any], measured: Sequence[str] = ()) -> dict[str, Any]:
    """``measured``: the image metrics the run measured (its selection, the default resolved)."""
    out: dict[str, Any] = {}
    if measured:  # only then: the record of a run without image metrics is what it was
        params = config.get("image_metric_params") or {}
        out["image_metrics"] = {name: _without_secrets(dict(params.get(name) or {})) for name in measured}
    for group in CONFIG_GROUPS:
        entry = config.get(group) or {"name": "none", "params": {}}
        out[group] = {"name": _text(entry.get("name", "none"), 100), "params": _without_secrets(dict(entry.get("params") or {}))}
    run = config.get("run") or {}
    out["run"] = {
        "max_faces": run.get("max_faces"),
        "max_sessions": run.get("max_sessions"),
        "seed": int(run.get("seed", 0)),
        "confidence": float(run.get("confidence", 0.95)),
    }
    return out


def _disparity(rows: Any) -> list[dict[str, Any]] | None:
    if not isinstance(rows, list):
        return None
    out = []
    for row in rows:
        item = {f: row[f] for f in DISPARITY_FIELDS if f in row}
        for f in ("worst_group", "best_group", "reason", "not_tested_reason"):
            if item.get(f) is not None:
                item[f] = _text(item[f], 200 if f.endswith("_group") else 4000)
        item["groups"] = {str(label): _summary(s) for label, s in (row.get("groups") or {}).items()}
        # yes / no / not tested (None): a contrast never tested is never a "no"
        item["bias"] = None if bias_status(row) == NOT_TESTED else bias_status(row) == YES
        if "bias_status" not in row:  # a report before the honest flag: its session-level flag is the paper's
            item["paper_rule"] = {"rule": "paper (a), session-level", "bias": row.get("bias")}
        for f in ("wd", "p_value"):
            item.setdefault(f, None)
        out.append(item)
    return out


def _cost(cost: Any) -> dict[str, Any] | None:
    if not isinstance(cost, dict):
        return None
    return {
        "estimated_usd": cost.get("estimated_usd"),
        "by_component": dict(cost.get("by_component") or {}),
        "budget_usd": cost.get("budget_usd"),
        "stopped_by_budget": bool(cost.get("stopped_by_budget", False)),
    }


def _overediting(section: Any) -> dict[str, Any] | None:
    """The per-attribute overedit counts of a judged run (report 1.2), as lists: attribute names are free text."""
    counts = section.get("attribute_changes") if isinstance(section, dict) else None
    if not isinstance(counts, dict):
        return None
    return {
        "attribute_edits": [{"attribute": _text(a, 100), "edits": int(n)} for a, n in counts["edits"].items()],
        "attribute_changes": [{"attribute": _text(a, 100), "category": _text(c, 100), "count": int(n)}
                              for a, changed in counts["changed"].items() for c, n in changed.items()],
    }


def overedit_counts(record: Mapping[str, Any]) -> dict[str, Any] | None:
    """A record's overedit counts back in the run report's shape (``edits``, ``changed``), or None."""
    section = record.get("overediting")
    if not section:
        return None
    changed: dict[str, dict[str, int]] = {}
    for c in section["attribute_changes"]:
        changed.setdefault(c["attribute"], {})[c["category"]] = c["count"]
    return {"edits": {e["attribute"]: e["edits"] for e in section["attribute_edits"]}, "changed": changed}


def _outcomes(report: Mapping[str, Any]) -> dict[str, Any]:
    counts = report["counts"]
    judge = counts.get("judge")
    return {
        "faces": {"seen": counts["faces"]["seen"], "excluded": dict(counts["faces"]["excluded"])},
        "sessions": {k: counts["sessions"][k] for k in ("planned", "included")}
        | {"excluded": dict(counts["sessions"]["excluded"])},
        "steps": dict(counts["steps"]),
        "edited_images_without_face": counts.get("edited_images_without_face", 0),
        "steps_by_group": counts.get("steps_by_group"),
        "judge_calls": dict(judge["calls"]) if isinstance(judge, dict) and "calls" in judge else None,
    }


def _plugins(artifacts: RunArtifacts) -> dict[str, str]:
    if artifacts.plugins:
        return {_text(k): _text(v) for k, v in sorted(artifacts.plugins.items())}
    components = artifacts.report.get("components", {})
    return {_text(c.get("provider", "?")): _text(c.get("provider_version", "?")) for _, c in sorted(components.items())}


def step_rows(steps_table: bytes) -> Iterator[dict[str, str]]:
    """Rows of a steps.csv (any columns beyond the required ones are passed through). Of a run with
    several prompt conditions, the rows of the condition its metrics describe (baseline, else the first)."""
    try:
        reader = csv.DictReader(io.StringIO(steps_table.decode("utf-8")))
        missing = [c for c in REQUIRED_STEP_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise SubmissionRejected(f"steps.csv lacks the column(s) {', '.join(missing)}.")
        if "image_hash" not in reader.fieldnames and "output_hash" not in reader.fieldnames:  # type: ignore[operator]
            raise SubmissionRejected("steps.csv lacks the image hash column (image_hash).")
        rows = list(reader)
        reference = reference_condition(r.get("condition") or "" for r in rows)
        yield from (r for r in rows if (r.get("condition") or "baseline") == reference)
    except (UnicodeDecodeError, csv.Error) as exc:
        raise SubmissionRejected(f"steps.csv is not a readable UTF-8 CSV table ({str(exc)[:200]}).") from None


def row_hash(row: Mapping[str, str]) -> str:
    return (row.get("image_hash") or row.get("output_hash") or "").strip()


def step_files(steps_table: bytes) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The edited images (outcome ok) and the refusals of a steps table, sorted, without paths."""
    images, refusals = [], []
    for row in step_rows(steps_table):
        try:
            k = int(row["k"])
        except ValueError:
            raise SubmissionRejected(f"steps.csv has a non-integer step k={row['k'][:20]!r}.") from None
        if k < 1:
            continue
        entry = {"face_id": row["face_id"], "session_id": row["session_id"], "k": k}
        if row["outcome"] == "ok" and row_hash(row):
            images.append({**entry, "sha256": row_hash(row), "path": None, "bytes": None})
        elif row["outcome"] == "refused":
            reason = (row.get("reason") or "refused").encode()
            refusals.append({**entry, "sha256": content_hash(reason), "path": None, "bytes": None})
    order = lambda e: (e["face_id"], e["session_id"], e["k"])  # noqa: E731
    return sorted(images, key=order), sorted(refusals, key=order)


def build_record(artifacts: RunArtifacts, *, submission_id: str, registered: Mapping[str, Any],
                 submitter: str | None = None, url: str | None = None, notes: str = "",
                 created_at: str | None = None) -> dict[str, Any]:
    """The submission record of a run; ``files`` lists the step images without paths (bundling
    fills them). ``registered`` are the registered metrics (for each metric's default tolerance)."""
    report = artifacts.report
    components = report["components"]
    has_judge = "judge" in components
    images, refusals = step_files(artifacts.steps_table)
    sections = record_sections(report)
    metrics = {}
    for name, m in report["metrics"].items():
        stated = (sections["measures"].get(name) or {}).get("requires")
        metrics[name] = {f: m.get(f) for f in METRIC_FIELDS} | {
            "n": int(m.get("n") or 0),
            "undefined_sessions": int(m.get("undefined_sessions") or 0),
            "tolerance": default_tolerance(name, registered, has_judge, stated),
        }
    return {
        "schema": SUBMISSION_SCHEMA_ID,
        "schema_version": SUBMISSION_SCHEMA_VERSION,
        "id": submission_id,
        "created_at": created_at or time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "submitter": submitter,
        "url": url,
        "notes": notes,
        "editor": _component(components["editor"]),
        "embedder": _component(components["embedder"], report["scales"]["embedder_version"])
        | {"similarity": _text(report["scales"]["fss"], 4000)},
        "judge": _component(components["judge"]) if has_judge else None,
        "dataset": _component(components["dataset"]),
        "testset": {k: report["testset"][k] for k in
                    ("name", "version", "content_hash", "taxonomy_version", "reconstruction", "sessions")},
        "config": _config(artifacts.config, measured=list(report["counts"].get("image_metrics") or ())),
        "run": {
            "key": report["run"]["key"],
            "name": _text(report["run"]["name"]),
            "created_at": _text(report["run"]["created_at"]),
            "source": artifacts.source,
            "mlflow_run_id": artifacts.mlflow_run_id,
            "complete": bool(report["run"].get("complete", True)),
        },
        "framework": {
            "faceedit_bench_version": _text(report["faceedit_bench_version"]),
            "report_schema_version": _text(report["schema_version"]),
            "plugins": _plugins(artifacts),
        },
        "metrics": metrics,
        "skipped_metrics": {k: _text(v, 4000) for k, v in (report.get("skipped_metrics") or {}).items()},
        "trajectory": {name: [{"k": p["k"], **_summary(p)} for p in points]
                       for name, points in (report.get("trajectory") or {}).items()},
        "groups": {
            attribute: {
                str(label): {
                    "sessions_included": g["sessions_included"],
                    "sessions_excluded": dict(g["sessions_excluded"]),
                    "metrics": {name: _summary(s) for name, s in g["metrics"].items()},
                }
                for label, g in labels.items()
            }
            for attribute, labels in (report.get("groups") or {}).items()
        },
        "disparity": _disparity(report.get("disparity")),
        **({"sample_size": dict(report["sample_size"])} if isinstance(report.get("sample_size"), dict) else {}),
        "outcomes": _outcomes(report),
        "cost": _cost(report.get("cost")),
        "overediting": _overediting(report.get("overediting")),
        **sections,  # measures, group tests, judge panel, each report section's kept part (submission 1.2)
        "report_notes": [_text(n, 4000) for n in report.get("notes", [])],
        "files": {
            "steps_table": {"path": "steps.csv", "sha256": content_hash(artifacts.steps_table),
                            "bytes": len(artifacts.steps_table)},
            **({"sessions_table": {"path": SESSIONS_FILE, "sha256": content_hash(artifacts.tables[SESSIONS_FILE]),
                                   "bytes": len(artifacts.tables[SESSIONS_FILE])}}
               if SESSIONS_FILE in artifacts.tables else {}),
            "images_bundled": False,
            "images": images,
            "refusals": refusals,
        },
    }


def default_submission_id(report: Mapping[str, Any]) -> str:
    """``<editor>-<testset>-<dataset>-<embedder>-<run key 12>``, lowercased and path-safe."""
    c = report["components"]
    parts = [c[k]["name"] for k in ("editor", "testset", "dataset", "embedder")] + [report["run"]["key"][:12]]
    return _SLUG.sub("-", "-".join(parts).lower()).strip("-._")[:80]
