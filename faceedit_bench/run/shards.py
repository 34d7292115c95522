"""One experiment split into shards of its faces (``run.shard=i/n``), run as separate processes,
GPUs or machines over a shared workspace, then merged (:mod:`faceedit_bench.run.merge`).

A face belongs to shard ``keys.shard_of(face_id, n)``: a hash of its id, the same on every
machine. A shard is a run of its own, beside the experiment's run rather than in it:

- its ledger is ``<workspace>/shards/<run folder>/shard-<i>-of-<n>/ledger.sqlite`` (one writer per
  SQLite file); it reads through to the workspace ledger, so work done before is not redone;
- images go to the workspace's shared content-addressed store, as for any run;
- its report, tables and tracked run (tagged ``faceedit_bench.shard``, in the MLflow experiment
  ``<experiment>/shards``) cover its own faces and are kept in that folder, with ``shard.json``:
  the composed config the merge reruns the experiment from.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from faceedit_bench.config import RunConf
from faceedit_bench.keys import fingerprint, shard_of
from faceedit_bench.plugin.payloads import RunInfo
from faceedit_bench.records import Face
from faceedit_bench.setting_checks import parse_shard
from faceedit_bench.storage.atomic import write_text
from faceedit_bench.storage.ledger import Ledger
from faceedit_bench.storage.shard_ledgers import ShardLedger

SHARDS_DIR = "shards"
MANIFEST = "shard.json"
SHARD_TAG = "faceedit_bench.shard"
SHARD_OF_TAG = "faceedit_bench.shard_of"  # the run key of the experiment a shard belongs to


def shard_dir_name(i: int, n: int) -> str:
    return f"shard-{i}-of-{n}"


def shard_run_info(info: RunInfo, shard: str | None) -> RunInfo:
    """The run a shard is: its own key, name, folder and MLflow experiment; or ``info`` unsharded."""
    if shard is None:
        return info
    i, n = parse_shard(shard)
    return dataclasses.replace(
        info,
        run_key=fingerprint(["shard", info.run_key, i, n]),
        run_name=f"{info.run_name} [shard {i}/{n}]",
        experiment_name=f"{info.experiment_name}/shards",
        tags={**info.tags, SHARD_TAG: f"{i}/{n}", SHARD_OF_TAG: info.run_key},
        output_dir=info.workspace / SHARDS_DIR / info.output_dir.name / shard_dir_name(i, n),
    )


def select_faces(faces: Iterable[Face], shard: str | None) -> Iterator[Face]:
    """The faces of the shard (all faces unsharded), in the dataset's order."""
    if shard is None:
        yield from faces
        return
    i, n = parse_shard(shard)
    yield from (face for face in faces if shard_of(face.face_id, n) == i)


def open_ledger(workspace: Path, info: RunInfo, shard: str | None) -> Ledger:
    """The workspace ledger, or for a shard its own ledger (reading through to the workspace's),
    after writing the shard's manifest."""
    main = workspace / "ledger.sqlite"
    if shard is None:
        return Ledger(main)
    import json

    i, n = parse_shard(shard)
    info.output_dir.mkdir(parents=True, exist_ok=True)
    manifest = {"shard": [i, n], "run_key": info.tags[SHARD_OF_TAG], "shard_run_key": info.run_key,
                "config": info.config}
    write_text(info.output_dir / MANIFEST, json.dumps(manifest, indent=2, sort_keys=True, default=str) + "\n")
    return ShardLedger(info.output_dir / "ledger.sqlite", base=main)


def bind_gpu(run: RunConf, environ: Any = os.environ) -> str | None:
    """For a shard that sees several GPUs, keep one in ``CUDA_VISIBLE_DEVICES`` (before any
    component initialises CUDA): the ``SLURM_LOCALID``-th (one task per GPU of a SLURM job), else
    the shard index modulo the GPUs seen (submitit_local or joblib on one multi-GPU node). A
    launcher or SLURM that gave the process one GPU already is left alone. Returns the device kept."""
    if run.shard is None or not run.one_gpu_per_shard:
        return None
    devices = [d for d in environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if d.strip()]
    if len(devices) < 2:
        return None
    local = environ.get("SLURM_LOCALID")
    index = int(local) if local is not None and local.isdigit() else parse_shard(run.shard)[0]
    environ["CUDA_VISIBLE_DEVICES"] = devices[index % len(devices)]
    return environ["CUDA_VISIBLE_DEVICES"]
