"""Content-derived identities. Resume, sharing between runs and verification all rest
on one rule: a record is identified by the hash of what determines it."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def canonical_json(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def fingerprint(obj: Any) -> str:
    """sha256 of the canonical JSON of ``obj``."""
    return hashlib.sha256(canonical_json(obj).encode()).hexdigest()


def step_seed(run_seed: int, base_hash: str, session_id: str, k: int) -> int:
    """A deterministic seed per (base image, session, step), for stochastic editors."""
    return int(fingerprint([run_seed, base_hash, session_id, k])[:8], 16)


def edit_key(editor_fp: str, input_hash: str, instruction: str, seed: int) -> str:
    """One edit call: the editor (exact version and parameters), its input and instruction."""
    return fingerprint(["edit", editor_fp, input_hash, instruction, seed])
