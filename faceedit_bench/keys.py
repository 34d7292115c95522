"""Content-derived identities. Resume, sharing between runs and verification all rest
on one rule: a record is identified by the hash of what determines it."""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any


def canonical_json(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def fingerprint(obj: Any) -> str:
    """sha256 of the canonical JSON of ``obj``."""
    return hashlib.sha256(canonical_json(obj).encode()).hexdigest()


def portable(obj: Any) -> Any:
    """``obj`` without absolute filesystem paths, recursively.

    Descriptions record where things live (dataset roots, replay directories) for
    provenance, but identities must not depend on it: the same data at another path, or on
    another machine, is the same experiment. What the data *is* enters through content
    (file hashes, tree digests, test-set hashes) where a component describes it.
    """
    if isinstance(obj, dict):
        return {k: portable(v) for k, v in obj.items() if not _is_abs_path(v)}
    if isinstance(obj, (list, tuple)):
        return [portable(v) for v in obj if not _is_abs_path(v)]
    return obj


def _is_abs_path(value: Any) -> bool:
    return isinstance(value, str) and os.path.isabs(os.path.expanduser(value))


def shard_of(face_id: str, n_shards: int) -> int:
    """The shard (0 .. n_shards - 1) a face belongs to: from a hash of its id, so the split is the
    same on every machine and in every order the dataset lists its faces."""
    return int(fingerprint(["shard", face_id])[:16], 16) % n_shards


def step_seed(run_seed: int, base_hash: str, session_id: str, k: int) -> int:
    """A deterministic seed per (base image, session, step), for stochastic editors."""
    return int(fingerprint([run_seed, base_hash, session_id, k])[:8], 16)


def edit_key(editor_fp: str, input_hash: str, instruction: str, seed: int,
             extra_inputs: tuple[tuple[str, str], ...] = (), condition: Any = None) -> str:
    """One edit call: the editor (exact version and parameters), its input and instruction, and
    the step's further inputs as (role, image hash) pairs (none for a one-image step, whose key
    is what it always was); under a prompt condition other than baseline, the condition's
    identity too (a baseline edit's key is what it always was)."""
    parts: list[object] = ["edit", editor_fp, input_hash, instruction, seed]
    if extra_inputs:
        parts.append([list(pair) for pair in extra_inputs])
    if condition is not None:
        parts.append({"condition": condition})
    return fingerprint(parts)


#: Run settings that change how a run executes, not what it measures: not part of its identity.
RUNTIME_ONLY = ("workers", "progress", "progress_interval_s", "workspace", "max_contact_sheets", "retry_outcomes",
                "budget_usd", "shard", "one_gpu_per_shard", "allow_partial", "dry_run")


def run_key(components: dict[str, Any], run_settings: dict[str, Any], analysis: dict[str, Any]) -> str:
    """One experiment: its components (name and description, tracker excluded), the run settings
    that change results and the analysis settings. Rerunning it gets the same key, so it
    resumes the same run folder and tracked run."""
    scientific = {kind: c for kind, c in components.items() if kind != "tracking"}
    scientific["run"] = {k: v for k, v in run_settings.items() if k not in RUNTIME_ONLY}
    scientific["analysis"] = analysis
    return fingerprint(portable(scientific))
