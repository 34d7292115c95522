"""The run ledger's tables (:mod:`~faceedit_bench.storage.ledger`): their SQL, and the columns added in place
since the first ledgers."""

from __future__ import annotations

from faceedit_bench.storage import claims

#: Columns added since the first ledgers: (table, column, SQL type). Added in place on open.
MIGRATIONS = (("edits", "latency_s", "REAL"),)
EDIT_COLUMNS = ("edit_key", "editor_fp", "face_id", "session_id", "k", "instruction", "input_hash", "output_hash",
                "outcome", "reason", "usage", "duration_s", "created_at", "latency_s")

SCHEMA = """
CREATE TABLE IF NOT EXISTS edits (
    edit_key TEXT PRIMARY KEY,
    editor_fp TEXT NOT NULL,
    face_id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    k INTEGER NOT NULL,
    instruction TEXT NOT NULL,
    input_hash TEXT NOT NULL,
    output_hash TEXT,
    outcome TEXT NOT NULL,
    reason TEXT NOT NULL,
    usage TEXT NOT NULL,
    duration_s REAL NOT NULL,
    created_at REAL NOT NULL,
    latency_s REAL
);
CREATE TABLE IF NOT EXISTS components (
    fingerprint TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    description TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS judgments (
    judgment_key TEXT PRIMARY KEY,
    judge_fp TEXT NOT NULL,
    template TEXT NOT NULL,
    template_hash TEXT NOT NULL,
    image_hashes TEXT NOT NULL,
    outcome TEXT NOT NULL,
    value TEXT,
    raw TEXT,
    reason TEXT NOT NULL,
    usage TEXT NOT NULL,
    created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS anchors (
    anchor_key TEXT NOT NULL,
    value TEXT NOT NULL,
    created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS embeddings (
    embedder_fp TEXT NOT NULL,
    image_hash TEXT NOT NULL,
    outcome TEXT NOT NULL,
    reason TEXT NOT NULL,
    n_faces INTEGER NOT NULL,
    vector BLOB,
    created_at REAL NOT NULL,
    PRIMARY KEY (embedder_fp, image_hash)
);
CREATE TABLE IF NOT EXISTS image_values (
    metric_fp TEXT NOT NULL,
    step_key TEXT NOT NULL,
    outcome TEXT NOT NULL,
    reason TEXT NOT NULL,
    value TEXT,
    created_at REAL NOT NULL,
    PRIMARY KEY (metric_fp, step_key)
);
CREATE TABLE IF NOT EXISTS detections (
    detector_fp TEXT NOT NULL,
    image_hash TEXT NOT NULL,
    faces TEXT NOT NULL,
    created_at REAL NOT NULL,
    PRIMARY KEY (detector_fp, image_hash)
);
CREATE TABLE IF NOT EXISTS statistics (
    key TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    value TEXT NOT NULL,
    created_at REAL NOT NULL
);
""" + claims.SCHEMA
