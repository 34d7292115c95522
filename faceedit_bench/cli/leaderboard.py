"""The ``submit``, ``verify`` and ``leaderboard build`` subcommands of ``faceedit-bench``.

:func:`faceedit_bench.cli.build_parser` adds them with :func:`add_parsers`. Errors are
:class:`~faceedit_bench.errors.FaceEditBenchError` (exit 2, "Error: ..."); a verification
that ran and did not reproduce exits 1.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from faceedit_bench.errors import FaceEditBenchError


def _submit_command(args: argparse.Namespace) -> int:
    from faceedit_bench.leaderboard.submit import submit

    target = submit(args.run, out=args.out, tracking_uri=args.tracking_uri, workspace=args.workspace,
                    images=not args.no_images, submission_id=args.id, submitter=args.submitter, url=args.url,
                    notes=args.notes, force=args.force)
    print(f"wrote submission {target}")
    if warning := preliminary_warning(target):
        print(warning)
    if args.no_images:
        print("no images bundled: the entry will be shown as unverified (verification re-scores the images)")
    return 0


def preliminary_warning(target: Path) -> str | None:
    """The warning ``submit`` prints for a run whose figures rest on too few identities."""
    from faceedit_bench.leaderboard.bundle import SUBMISSION_FILE

    sample = json.loads((target / SUBMISSION_FILE).read_text(encoding="utf-8")).get("sample_size") or {}
    if not sample.get("preliminary"):
        return None
    return (f"WARNING: preliminary: {sample.get('reason')}. The leaderboard lists it apart, without a rank, "
            f"until a run with at least {sample.get('preliminary_below_identities')} identities is submitted.")


def _verify_command(args: argparse.Namespace) -> int:
    from faceedit_bench.leaderboard.schema import printable
    from faceedit_bench.leaderboard.verify import verify_submission, write_verification

    caps: dict[str, float] = {}
    for item in args.max_tolerance:
        name, sep, value = item.partition("=")
        try:
            if not sep or not name:
                raise ValueError(item)
            caps[name] = float(value)
        except ValueError:
            raise FaceEditBenchError(f"--max-tolerance takes METRIC=NUMBER (e.g. sc=2.0), not {item!r}.") from None
    result = verify_submission(args.submission, workspace=args.workspace, overrides=args.set, max_tolerance=caps)
    if result.run_dir is not None:
        print(f"re-scoring run: {result.run_dir}")
    if not args.no_record:
        print(f"recorded {write_verification(result, args.record_dir)}")
    if args.json:
        print(json.dumps(result.as_record(), indent=2, sort_keys=True))
    print(f"{result.submission_id}: {result.status.upper()}"
          + (f": {printable(result.reason, 1000)}" if result.reason else f" ({result.compared} values reproduced)"))
    for d in result.judged:
        print(f"  {printable(d['field'], 120)}: submitted - re-scored {_signed(d['difference'])} "
              f"[{_signed(d['ci_low'])}, {_signed(d['ci_high'])}] ({d['confidence']:.0%}), margin ±{d['margin']:g}, "
              f"{d['n_identities']} identities: {d['verdict']}")
    for m in result.mismatches[:10]:
        print(f"  {printable(m['field'], 120)}: submitted {printable(str(m['submitted']), 80)}, reproduced "
              f"{printable(str(m['reproduced']), 80)}" + (f" (tolerance {m['tolerance']})" if m["tolerance"] else ""))
    return 0 if result.status == "verified" else 1


def _signed(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+.3g}"


def _leaderboard_command(args: argparse.Namespace) -> int:
    from faceedit_bench.leaderboard.build import build_leaderboard
    from faceedit_bench.report.sources import default_tracking_uri

    tracking_uri = args.tracking_uri or (default_tracking_uri() if args.mlflow else None)
    result = build_leaderboard(args.dir, tracking_uri=tracking_uri, experiments=args.experiment or None,
                               rank_by=args.rank_by, out=args.out)
    entries = result.collection.entries
    print(f"wrote {result.table} and {result.page}: {len(entries)} entries "
          f"({sum(e.status == 'verified' for e in entries)} verified, {result.n_runs} from MLflow)")
    for rejected in result.collection.rejected:
        print(f"REJECTED {rejected.name}: {rejected.reason}")
    return 1 if result.collection.rejected else 0


def add_parsers(sub: Any) -> None:
    """Add ``submit``, ``verify`` and ``leaderboard`` to the subparsers of ``faceedit-bench``."""
    p = sub.add_parser("submit", help="turn a finished run (directory or MLflow run id) into a leaderboard submission")
    p.add_argument("run", help="a run directory <workspace>/runs/<run>, or an MLflow run id")
    p.add_argument("--out", type=Path, default=Path("leaderboard/submissions"),
                   help="where to write <id>/ (default: leaderboard/submissions)")
    p.add_argument("--tracking-uri", help="MLflow store of the run (default: $MLFLOW_TRACKING_URI or "
                                          "sqlite:///<workspace>/mlflow.db)")
    p.add_argument("--workspace", type=Path, help="workspace holding the image store (default: the run's own)")
    p.add_argument("--no-images", action="store_true", help="do not bundle the step images (cannot be verified)")
    p.add_argument("--id", help="submission id (default: <editor>-<testset>-<dataset>-<embedder>-<run key>)")
    p.add_argument("--submitter", help="who submits (shown on the leaderboard)")
    p.add_argument("--url", help="https link about the editor (shown on the leaderboard)")
    p.add_argument("--notes", default="", help="free text shown on the leaderboard (max 4000 characters)")
    p.add_argument("--force", action="store_true", help="replace an existing submission with the same id")
    p.set_defaults(func=_submit_command)

    p = sub.add_parser("verify", help="re-score a submission's images with the pinned embedder/judge and check "
                                      "every number reproduces")
    p.add_argument("submission", type=Path, help="submission directory, its submission.json, or a .zip of it")
    p.add_argument("--workspace", type=Path,
                   help="workspace for the re-scoring run (default: <default workspace>/verifications, so the "
                        "replay run stays out of your own runs/)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="config value for the re-scoring run, e.g. dataset.params.root=/data/celeba (repeatable)")
    p.add_argument("--max-tolerance", action="append", default=[], metavar="METRIC=NUMBER",
                   help="loosest tolerance accepted for a metric (default: 1e-4 embedder metrics, 1.0 judge metrics)")
    p.add_argument("--record-dir", type=Path, default=Path("leaderboard/verifications"),
                   help="where to write <id>.json with the result (default: leaderboard/verifications)")
    p.add_argument("--no-record", action="store_true", help="do not write the verification record")
    p.add_argument("--json", action="store_true", help="print the verification record")
    p.set_defaults(func=_verify_command)

    p = sub.add_parser("leaderboard", help="build the leaderboard pages")
    p.add_argument("action", choices=["build"])
    p.add_argument("--dir", type=Path, default=Path("leaderboard"),
                   help="leaderboard directory with submissions/ and verifications/ (default: leaderboard)")
    p.add_argument("--out", type=Path, help="where to write README.md and index.html (default: --dir)")
    p.add_argument("--mlflow", action="store_true",
                   help="also list the finished runs of the MLflow store ($MLFLOW_TRACKING_URI or "
                        "<workspace>/mlflow.db) as unverified entries; default: submissions only, so the "
                        "committed pages follow from the repository alone")
    p.add_argument("--tracking-uri", help="also list the finished runs of this MLflow store (implies --mlflow)")
    p.add_argument("--experiment", action="append", default=[],
                   help="MLflow experiment to include (repeatable; default: every faceedit/* experiment)")
    p.add_argument("--rank-by", help="metric that ranks each table (default: the first metric of the reports)")
    p.set_defaults(func=_leaderboard_command)
