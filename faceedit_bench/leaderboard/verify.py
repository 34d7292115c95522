"""``faceedit-bench verify``: re-score a submission's bundled images with the maintainers'
pinned embedder (and judge) and check that every number reproduces.

Order matters: the bundle is checked completely (schema, sizes, links, paths, every file's
hash, the images against the per-step table, every image decoded within limits) before
anything is composed or run. Then the components the submission names are composed from
this installation's config (the maintainers' pinned embedder and judge), and must be the
exact versions the submission records, on the same dataset images; only then does the score
stage run again on the bundled images through the ``replay`` editor.
"""

from __future__ import annotations

import json
import re
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from faceedit_bench import __version__
from faceedit_bench.keys import portable
from faceedit_bench.leaderboard.bundle import (
    IMAGES_DIR,
    Submission,
    check_bundle,
    check_consistent,
    open_bundle,
    read_submission,
)
from faceedit_bench.leaderboard.errors import SubmissionRejected, VerificationUnavailable
from faceedit_bench.leaderboard.judged_comparison import SessionTable, failures, judged_differences
from faceedit_bench.leaderboard.limits import DEFAULT_LIMITS, Limits
from faceedit_bench.leaderboard.record import SESSIONS_FILE, build_record, row_hash, step_rows
from faceedit_bench.leaderboard.reproduction import compare_records
from faceedit_bench.leaderboard.schema import printable
from faceedit_bench.leaderboard.tolerances import default_tolerance, needs_judge, registered_metrics
from faceedit_bench.report.sources import RunArtifacts, default_workspace
from faceedit_bench.storage.atomic import write_text

VERIFICATION_SCHEMA_ID = "faceedit_bench/verification"
VERIFICATION_SCHEMA_VERSION = "1.0"
DEFAULT_RECORD_DIR = Path("leaderboard") / "verifications"
#: The re-scoring run's own workspace inside the user's: its replay run, store and ledger never mix with the
#: user's runs/ (a verification is not one of their experiments), and a second verification reuses its cache.
VERIFY_WORKSPACE = "verifications"


def verification_workspace() -> Path:
    """Where ``verify`` re-scores by default: ``<default workspace>/verifications`` (not ``<workspace>/runs``)."""
    return default_workspace() / VERIFY_WORKSPACE
MAX_MISMATCHES_RECORDED = 100


@dataclass
class Verification:
    submission_id: str
    submission_sha256: str
    status: str  # "verified", "failed" or "inconclusive" (judged means neither shown equal nor shown to differ)
    reason: str | None = None
    mismatches: list[dict[str, Any]] = field(default_factory=list)
    judged: list[dict[str, Any]] = field(default_factory=list)  # judged means compared as distributions
    compared: int = 0
    verifier: dict[str, Any] = field(default_factory=dict)
    verified_at: str = ""
    run_dir: Path | None = None  # the re-scoring run (a local path: not part of the record)

    def as_record(self) -> dict[str, Any]:
        return {
            "schema": VERIFICATION_SCHEMA_ID,
            "schema_version": VERIFICATION_SCHEMA_VERSION,
            "submission_id": self.submission_id,
            "submission_sha256": self.submission_sha256,
            "status": self.status,
            "reason": self.reason,
            "verified_at": self.verified_at,
            "verifier": self.verifier,
            "compared": self.compared,
            "mismatches": self.mismatches[:MAX_MISMATCHES_RECORDED],
            "mismatches_total": len(self.mismatches),
            "judged": self.judged,
        }


#: Dataset parameter values taken from a submission: plain scalars and short plain words only.
#: Anything that could point somewhere (paths, URLs) comes from the maintainers (--set).
_PLAIN_WORD = re.compile(r"^[A-Za-z0-9_.-]{0,100}$")


def _plain(value: Any) -> bool:
    if value is None or isinstance(value, (bool, int, float)):
        return True
    if isinstance(value, str):
        return bool(_PLAIN_WORD.match(value)) and not value.startswith(".")
    if isinstance(value, list):
        return len(value) <= 100 and all(_plain(v) and not isinstance(v, list) for v in value)
    return False


def _experiment_config(record: dict[str, Any], images: Path, workspace: Path, overrides: list[str],
                       plugins: Any) -> Any:
    """The submission's measurement with ``editor=replay`` on the bundled images and no tracker.

    Components are selected by the names the submission records, but configured from this
    installation's config entries: the embedder and judge are the maintainers' pinned ones (a
    submission never sets their parameters: a judge's endpoint or an embedder's model folder
    must not come from a stranger), the dataset takes only plain scalar parameters from the
    submission, and ``overrides`` (KEY=VALUE, e.g. dataset.params.root=/data/celeba) come last.
    """
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf, open_dict

    from faceedit_bench.run.hydra_app import conf_dir, register_configs

    config = record["config"]
    names = {group: config[group]["name"] for group in ("testset", "dataset", "embedder", "judge")}
    bad = {g: n for g, n in names.items() if not n.isidentifier()}
    if bad:
        raise SubmissionRejected(f"config names {', '.join(f'{g}={printable(n, 60)}' for g, n in bad.items())} are not "
                                 "component names (Python identifiers).")
    register_configs(plugins)
    selections = [f"{group}={name}" for group, name in names.items()] + ["editor=replay", "tracking=none"]
    try:
        with initialize_config_dir(config_dir=str(conf_dir()), version_base="1.3"):
            cfg = compose(config_name="config", overrides=selections)
    except Exception as exc:  # Hydra's errors for an option that is not installed
        raise VerificationUnavailable(
            f"cannot compose {' '.join(selections[:4])} here ({printable(str(exc), 300)}). Install the plugins the "
            "submission names (`faceedit-bench plugins` lists what is installed)."
        ) from None
    with open_dict(cfg):
        cfg.editor.params = {"root": str(images)}
        for key, value in {**config["run"], "workspace": str(workspace), "progress": False,
                           "max_contact_sheets": 0}.items():
            cfg.run[key] = value
        for key, value in config["dataset"]["params"].items():
            if _plain(value) and str(key).isidentifier():
                cfg.dataset.params[key] = value
        # The image metrics it measured, by name, with their plain parameters (a model's folder is this machine's).
        measured = {n: p for n, p in (config.get("image_metrics") or {}).items() if n.isidentifier()}  # schema-checked
        cfg.image_metrics = list(measured)
        cfg.image_metric_params = {name: {k: v for k, v in params.items() if _plain(v) and str(k).isidentifier()}
                                   for name, params in measured.items() if params}
        for override in overrides:
            key, sep, value = override.partition("=")
            if not sep or not key.strip():
                raise VerificationUnavailable(
                    f"--set takes KEY=VALUE (e.g. dataset.params.root=/data/celeba), not {override!r}.")
            OmegaConf.update(cfg, key.strip(), yaml.safe_load(value), merge=True, force_add=True)
    return cfg


def _plain_json(description: Any) -> Any:
    """A description as it reads after a JSON round trip (tuples become lists), paths removed."""
    return json.loads(json.dumps(portable(dict(description)), default=str))


def _check_pinned(record: dict[str, Any], exp: Any) -> None:
    """The composed components must be the ones the submission was measured with."""
    components = exp.info.components
    if exp.testset.content_hash != record["testset"]["content_hash"]:
        raise VerificationUnavailable(
            f"test set {record['testset']['name']!r} here has content hash {exp.testset.content_hash[:12]}, the "
            f"submission's has {record['testset']['content_hash'][:12]}: install the faceedit_bench version whose "
            f"test set {record['testset']['name']} {record['testset']['version']} matches."
        )
    for kind in ("embedder", "judge", "dataset"):
        wanted = record[kind]
        here = components.get(kind)
        if wanted is None and here is None:
            continue
        if wanted is None or here is None:
            raise VerificationUnavailable(f"the submission {'has no' if wanted is None else 'has a'} {kind}; "
                                          f"this verification {'has one' if here is not None else 'has none'}.")
        if _plain_json(here.description) != wanted["description"]:
            version = here.description.get("version", here.description.get("model", "?"))
            raise VerificationUnavailable(
                f"the installed {kind} {here.name!r} ({here.provider} {here.provider_version}, version {version}) is "
                f"not the one the submission was measured with ({wanted['name']!r}, {wanted['provider']} "
                f"{wanted['provider_version']}, version {wanted['version']}); its description differs: "
                f"{json.dumps(_plain_json(here.description), sort_keys=True)[:300]} != "
                f"{json.dumps(wanted['description'], sort_keys=True)[:300]}. Install that exact version"
                + (", or supply the dataset's location with --set dataset.params.<param>=..." if kind == "dataset" else "")
                + "."
            )


def _check_dataset(steps_table: bytes, exp: Any) -> None:
    """Before re-scoring (a judge costs money): the base images of this copy of the dataset must be
    the ones measured, byte for byte (steps.csv's k=0 rows hold their hashes)."""
    from itertools import islice

    from faceedit_bench.storage.images import content_hash

    wanted = {r["face_id"]: row_hash(r) for r in step_rows(steps_table) if r["k"] == "0" and row_hash(r)}
    found: dict[str, str] = {}
    for face in islice(exp.components["dataset"].faces(), exp.conf.run.max_faces):
        if face.face_id in wanted:
            try:
                found[face.face_id] = content_hash(Path(face.image).read_bytes())
            except OSError:
                found[face.face_id] = "unreadable"
    differ = sorted(f for f in wanted if found.get(f) != wanted[f])
    if differ:
        raise VerificationUnavailable(
            f"{len(differ)} of the submission's {len(wanted)} base images are missing or different in the dataset "
            f"here (first: {printable(differ[0], 80)}): this copy of the dataset is not the one measured. Point "
            "--set dataset.params.<param>=... at the right copy."
        )


def verify_submission(path: Path, *, plugins: Any = None, workspace: Path | None = None,
                      overrides: list[str] | None = None, max_tolerance: dict[str, float] | None = None,
                      limits: Limits = DEFAULT_LIMITS) -> Verification:
    """Verify the submission at ``path`` (directory, its submission.json, or a .zip).

    Raises :class:`SubmissionRejected` when submission.json itself is unacceptable (nothing can
    be recorded under an id that did not validate) and :class:`VerificationUnavailable` when
    this installation cannot re-score it. Every other outcome is a :class:`Verification`."""
    from faceedit_bench.run.experiment import build_experiment, run_experiment

    if plugins is None:
        from faceedit_bench.plugin.manager import current_plugins

        plugins = current_plugins()
    with open_bundle(Path(path), limits) as root:
        sub = read_submission(root, limits)
        result = Verification(sub.record["id"], sub.sha256, "failed", verifier=_verifier(plugins))
        try:
            steps_table = check_bundle(sub, limits, decode_images=True)
            check_consistent(sub, registered_metrics(plugins))
        except SubmissionRejected as exc:
            result.reason = f"bundle check failed: {exc}"
            return _stamp(result)
        if not sub.record["files"]["images_bundled"]:
            raise SubmissionRejected("the submission has no bundled images, so it cannot be re-scored. "
                                     "Submit again without --no-images.")
        with tempfile.TemporaryDirectory(prefix="faceedit-verify-") as tmp:
            images = (root / IMAGES_DIR) if (root / IMAGES_DIR).is_dir() else Path(tmp)  # no image: all refused
            cfg = _experiment_config(sub.record, images.resolve(),
                                     Path(workspace or verification_workspace()).resolve(), overrides or [], plugins)
            exp = build_experiment(cfg, plugins)
            _check_pinned(sub.record, exp)
            _check_dataset(steps_table, exp)
            result.verifier |= {kind: {"name": c.name, "provider": c.provider, "version": c.provider_version}
                                for kind, c in exp.info.components.items() if kind in ("embedder", "judge")}
            report = run_experiment(exp, plugins)
        result.run_dir = exp.info.output_dir
        reproduced_steps = (exp.info.output_dir / "steps.csv").read_bytes()
        sessions = exp.info.output_dir / SESSIONS_FILE
        reproduced_sessions = sessions.read_bytes() if sessions.is_file() else b""
        return _compare(sub, report, cfg, reproduced_steps, reproduced_sessions, plugins, max_tolerance or {}, result)


def _compare(sub: Submission, report: dict[str, Any], cfg: Any, reproduced_steps: bytes, reproduced_sessions: bytes,
             plugins: Any, max_tolerance: dict[str, float], result: Verification) -> Verification:
    from omegaconf import OmegaConf

    registered = registered_metrics(plugins)
    artifacts = RunArtifacts(report, OmegaConf.to_container(cfg, resolve=True), reproduced_steps, "run_dir",  # type: ignore[arg-type]
                             "verification run")
    reproduced = build_record(artifacts, submission_id=sub.record["id"], registered=registered)
    has_judge = sub.record["judge"] is not None
    # The verifier's own tolerance of each measure (from what this installation's run states it requires: an image
    # metric is deterministic even in a judged run), unless the maintainer caps it.
    own = {name: m["tolerance"] for name, m in reproduced["metrics"].items()}
    caps = {name: max_tolerance.get(name, own.get(name, default_tolerance(name, registered, has_judge)))
            for name in sub.record["metrics"]}
    judged = frozenset(name for name in sub.record["metrics"] if needs_judge(name, registered, has_judge))
    mismatches, compared = compare_records(sub.record, reproduced, caps, judged)
    # A judged metric's margin is its stated tolerance, within the cap (a looser one is a mismatch above).
    margins = {name: min(float(sub.record["metrics"][name]["tolerance"]), caps[name]) for name in judged}
    submitted_sessions = sub.tables.get(SESSIONS_FILE)
    differences = judged_differences(
        sub.record, margins, SessionTable.parse(reproduced_sessions, margins),
        SessionTable.parse(submitted_sessions, margins) if submitted_sessions else None) if margins else []
    failed = failures(differences)
    result.compared = compared + len(differences)
    result.mismatches = [m.as_dict() for m in mismatches]
    result.judged = [d.as_dict() for d in differences]
    reasons = []
    if mismatches:
        reasons.append(f"{len(mismatches)} of {compared} values did not reproduce (first: {mismatches[0].field})")
    if failed:
        reasons.append(f"{len(failed)} judged mean(s) not reproduced (first: {failed[0].sentence()})")
    if mismatches or any(d.verdict == "differs" for d in failed):
        result.status = "failed"
    elif failed:  # neither shown equal nor shown to differ: more identities, or a steadier judge, would tell
        result.status = "inconclusive"
    else:
        result.status = "verified"
    result.reason = "; ".join(reasons) or None
    return _stamp(result)


def _verifier(plugins: Any) -> dict[str, Any]:
    return {"faceedit_bench_version": __version__,
            "plugins": {i.distribution: i.version for i in sorted(plugins.info.values(), key=lambda i: i.distribution)}}


def _stamp(result: Verification) -> Verification:
    result.verified_at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    return result


def write_verification(result: Verification, record_dir: Path = DEFAULT_RECORD_DIR) -> Path:
    """Write ``<record_dir>/<submission id>.json`` (the id passed the schema's pattern: path-safe)."""
    record_dir = Path(record_dir)
    record_dir.mkdir(parents=True, exist_ok=True)
    target = record_dir / f"{result.submission_id}.json"
    return write_text(target, json.dumps(result.as_record(), indent=2, sort_keys=True) + "\n")
