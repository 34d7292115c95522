"""Leaderboard entries: the submissions in ``leaderboard/submissions/`` (with their verification
status) and, optionally, finished MLflow runs, grouped by measurement protocol.

Only numbers measured the same way share a table: same test set (version and content hash),
same dataset, same embedder version, same judge, same limits and confidence level. FSS from
different embedders are on different scales and are never ranked together.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from faceedit_bench.keys import fingerprint
from faceedit_bench.leaderboard.bundle import check_bundle, check_consistent, read_submission
from faceedit_bench.leaderboard.errors import SubmissionRejected
from faceedit_bench.leaderboard.limits import DEFAULT_LIMITS, Limits, parse_json, read_bounded
from faceedit_bench.leaderboard.record import build_record, default_submission_id
from faceedit_bench.leaderboard.schema import printable, validate_submission
from faceedit_bench.leaderboard.verify import VERIFICATION_SCHEMA_ID
from faceedit_bench.report.sources import RunArtifacts

SUBMISSIONS_DIR = "submissions"
VERIFICATIONS_DIR = "verifications"
STATUSES = ("verified", "unverified", "failed")


@dataclass
class Entry:
    id: str
    record: dict[str, Any]
    source: str  # "submission" or "mlflow"
    status: str  # one of STATUSES
    status_note: str

    @property
    def protocol(self) -> dict[str, Any]:
        return protocol_of(self.record)

    @property
    def protocol_key(self) -> str:
        return fingerprint(self.protocol)


@dataclass
class Rejected:
    name: str  # printable directory name
    reason: str


@dataclass
class Collection:
    entries: list[Entry] = field(default_factory=list)
    rejected: list[Rejected] = field(default_factory=list)


def protocol_of(record: Mapping[str, Any]) -> dict[str, Any]:
    """What must be equal for two numbers to be comparable."""
    judge = record["judge"]
    run = record["config"]["run"]
    return {
        "testset": {k: record["testset"][k] for k in ("name", "version", "content_hash")},
        "dataset": {"name": record["dataset"]["name"], "description": record["dataset"]["description"]},
        # Whole descriptions: an embedder's settings (dlib's upsampling) or a judge's prompt change its numbers.
        "embedder": {"name": record["embedder"]["name"], "description": record["embedder"]["description"]},
        "judge": None if judge is None else {"name": judge["name"], "description": judge["description"]},
        "limits": {"max_faces": run["max_faces"], "max_sessions": run["max_sessions"]},
        "confidence": run["confidence"],
    }


def _verification_status(record_dir: Path, submission_id: str, sha256: str, limits: Limits) -> tuple[str, str]:
    path = record_dir / f"{submission_id}.json"
    if not path.exists() and not path.is_symlink():
        return "unverified", "not re-scored by the maintainers yet"
    try:
        v = parse_json(read_bounded(path, limits.verification_json_bytes, what=path.name), what=path.name)
        if not isinstance(v, dict) or v.get("schema") != VERIFICATION_SCHEMA_ID:
            raise SubmissionRejected("not a verification record")
    except SubmissionRejected as exc:
        return "unverified", f"its verification record is unreadable ({exc})"
    when = str(v.get("verified_at", "?"))[:20]
    if v.get("submission_sha256") != sha256:
        return "unverified", f"changed after its verification of {when}: not re-scored since"
    if v.get("status") == "verified":
        return "verified", f"re-scored {when}: all {int(v.get('compared') or 0)} values reproduced"
    if v.get("status") == "inconclusive":
        return "unverified", f"re-scored {when}, inconclusive: {str(v.get('reason') or '')[:300]}"
    if v.get("status") == "failed":
        return "failed", f"re-scored {when}: {str(v.get('reason') or 'did not reproduce')[:300]}"
    return "unverified", "its verification record has no known status"


def collect_submissions(leaderboard_dir: Path, limits: Limits = DEFAULT_LIMITS,
                        registered: Mapping[str, Any] | None = None) -> Collection:
    """Every submission directory under ``<leaderboard_dir>/submissions``, checked (schema, sizes,
    links, every file's hash; images are not decoded here; its numbers consistent with themselves and
    with its tables, :mod:`~faceedit_bench.leaderboard.consistency`), with its verification status."""
    out = Collection()
    root = Path(leaderboard_dir) / SUBMISSIONS_DIR
    if not root.is_dir():
        return out
    for child in sorted(root.iterdir()):
        if child.name.startswith("."):  # staging directories of an unfinished submit
            continue
        name = printable(child.name, 80)
        try:
            if child.is_symlink() or not child.is_dir():
                raise SubmissionRejected("not a directory (submissions are directories, links are not followed)")
            sub = read_submission(child, limits)
            if sub.record["id"] != child.name:
                raise SubmissionRejected(f"its id {printable(sub.record['id'], 80)} differs from its directory name")
            check_bundle(sub, limits, decode_images=False)
            check_consistent(sub, registered or {})
        except SubmissionRejected as exc:
            out.rejected.append(Rejected(name, str(exc)))
            continue
        status, note = _verification_status(Path(leaderboard_dir) / VERIFICATIONS_DIR, sub.record["id"], sub.sha256,
                                            limits)
        out.entries.append(Entry(sub.record["id"], sub.record, "submission", status, note))
    return out


def add_runs(collection: Collection, runs: Iterable[RunArtifacts], registered: Mapping[str, Any]) -> None:
    """Add tracked runs not already submitted (same run key), as unverified entries."""
    submitted = {e.record["run"]["key"] for e in collection.entries}
    for run in runs:
        key = run.report.get("run", {}).get("key")
        if key in submitted or not run.report.get("run", {}).get("complete", True):
            continue
        try:
            record = build_record(run, submission_id=default_submission_id(run.report), registered=registered)
            validate_submission(record, what=run.label)
        except (KeyError, TypeError, ValueError, SubmissionRejected) as exc:
            collection.rejected.append(Rejected(printable(run.label, 80), f"not a usable run report ({exc})"))
            continue
        collection.entries.append(Entry(record["id"], record, "mlflow", "unverified",
                                        f"an MLflow run ({run.mlflow_run_id}), not a submission"))
        submitted.add(key)
