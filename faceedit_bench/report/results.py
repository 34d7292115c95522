"""``faceedit-bench results``: the runs of workspaces (or of an MLflow store) as one long table,
one row per step (or per session) with the run's identifiers in every row.

    faceedit-bench results .faceedit_bench --out steps.parquet
    faceedit-bench results ws_a/runs/identity-pose-... ws_b --table sessions --out sessions.csv
    faceedit-bench results --tracking-uri sqlite:///$PWD/.faceedit_bench/mlflow.db --out steps.parquet
"""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from faceedit_bench.errors import FaceEditBenchError
from faceedit_bench.report import tables
from faceedit_bench.storage.atomic import PendingFile

TABLES = {"steps": (tables.STEPS_PARQUET, tables.STEPS_CSV), "sessions": (tables.SESSIONS_PARQUET, tables.SESSIONS_CSV)}
#: Added by the gathering: a run stopped by its budget is partial, and says so in every row.
COMPLETE_COLUMN = "run_complete"


class ResultsError(FaceEditBenchError):
    """A path that holds no runs, or an output the table cannot be written to."""


@dataclass
class Gathered:
    table: Any  # pyarrow.Table
    runs: list[str] = field(default_factory=list)  # run folders or MLflow run ids, in table order
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (where, why)


# -- finding runs ---------------------------------------------------------------------------------


def run_dirs(paths: Iterable[Path | str], skipped: list[tuple[str, str]] | None = None) -> list[Path]:
    """The run folders named by ``paths``: each a run folder (with report.json), a workspace
    (with runs/) or a workspace's runs/ folder. Folders of runs that never finished are listed
    in ``skipped``."""
    found: dict[Path, None] = {}
    for raw in paths:
        path = Path(raw).expanduser().resolve()
        if (path / "report.json").is_file():
            found[path] = None
            continue
        runs = path / "runs" if (path / "runs").is_dir() else path if path.name == "runs" and path.is_dir() else None
        if runs is None:
            raise ResultsError(
                f"{raw}: neither a run folder (<workspace>/runs/<run>, holding report.json) nor a workspace "
                "(holding runs/). Pass a workspace such as .faceedit_bench, or run folders under its runs/.")
        for run in sorted(p for p in runs.iterdir() if p.is_dir() and not p.name.startswith(".")):
            if (run / "report.json").is_file():
                found[run] = None
            elif skipped is not None:
                skipped.append((str(run), "no report.json: the run has not finished; rerun it to complete it"))
    return list(found)


# -- one run's table ------------------------------------------------------------------------------


def _load_report(path: Path) -> dict[str, Any]:
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ResultsError(f"{path}: not a readable run report ({exc})") from None
    if not isinstance(report, dict) or "run" not in report or "components" not in report:
        raise ResultsError(f"{path}: not a faceedit_bench run report")
    return report


def _metric_names(report: Mapping[str, Any]) -> list[str]:
    return [*(report.get("metrics") or {}), *(report.get("skipped_metrics") or {})]


def with_identifiers(table: Any, report: Mapping[str, Any]) -> Any:
    """``table`` with the run's identifier columns first, taken from its report where the table
    lacks them (runs written before tables carried them: their ``embedder`` column named the
    scorer and its version, and is replaced by the identifiers)."""
    import pyarrow as pa

    run = report.get("run") or {}
    ids: dict[str, Any] = tables.run_identifiers(str(run.get("key", "")), str(run.get("name", "")),
                                                 report.get("components") or {})
    ids[COMPLETE_COLUMN] = bool(run.get("complete", True))
    older = "run_key" not in table.column_names
    columns: dict[str, Any] = {}
    for name, value in ids.items():
        if name in table.column_names and not older:
            columns[name] = table.column(name)
        else:
            columns[name] = constant_column(value, table.num_rows)
    for name in table.column_names:
        if name not in columns:
            columns[name] = table.column(name)
    return pa.table(columns)


def constant_column(value: bool | str, rows: int) -> Any:
    """``rows`` copies of ``value`` as an Arrow column, made from its buffers: ``pa.array`` of Python values
    imports pandas to check whether they are pandas objects, and that import was half of what
    ``faceedit-bench results`` took (median 0.56 s; 0.31 s without it, measured)."""
    import numpy as np
    import pyarrow as pa

    if isinstance(value, bool):
        bits = np.packbits(np.full(rows, value), bitorder="little")  # Arrow's bit order
        return pa.Array.from_buffers(pa.bool_(), rows, [None, pa.py_buffer(bits)])
    data = value.encode("utf-8")
    offsets = np.arange(rows + 1, dtype=np.int64) * len(data)
    if offsets[-1] > np.iinfo(np.int32).max:  # a string column's offsets are 32-bit
        return pa.array([value] * rows, type=pa.string())
    return pa.Array.from_buffers(pa.string(), rows, [None, pa.py_buffer(offsets.astype(np.int32)),
                                                     pa.py_buffer(data * rows)])


def run_table(run_dir: Path, which: str = "steps") -> Any:
    """One run folder's steps (or sessions) table, from its Parquet file, else its CSV."""
    return _with_report(run_dir, which)[0]


def _with_report(run_dir: Path, which: str) -> tuple[Any, dict[str, Any]]:
    import pyarrow.parquet as pq

    report = _load_report(run_dir / "report.json")
    parquet, csv_name = TABLES[which]
    if (run_dir / parquet).is_file():
        with pq.ParquetFile(run_dir / parquet) as file:  # not pq.read_table: its pyarrow.dataset imports pandas
            table = file.read()
    elif (run_dir / csv_name).is_file():
        table = tables.read_csv_table(run_dir / csv_name, {m: "float64" for m in _metric_names(report)})
    else:
        raise ResultsError(f"{run_dir}: no {parquet} or {csv_name}; rerun the experiment to rewrite its tables")
    return with_identifiers(table, report), report


def _mlflow_tables(tracking_uri: str, experiments: Sequence[str] | None, which: str,
                   skipped: list[tuple[str, str]]) -> Iterator[tuple[str, Any, dict[str, Any]]]:
    """The steps (or sessions) table of every finished faceedit_bench run in an MLflow store (its artifacts)."""
    from faceedit_bench.report.sources import finished_mlflow_runs

    name = TABLES[which][1]
    also = () if name == tables.STEPS_CSV else (name,)
    for artifacts in finished_mlflow_runs(tracking_uri, list(experiments or []) or None, skipped, also=also):
        data = artifacts.tables.get(name, artifacts.steps_table)
        table = tables.read_csv_table(io.BytesIO(data), {m: "float64" for m in _metric_names(artifacts.report)})
        yield artifacts.label, with_identifiers(table, artifacts.report), artifacts.report


def conform(parts: Sequence[tuple[str, Any, Mapping[str, Any]]], which: str = "steps") -> list[Any]:
    """The runs' tables under one schema, whatever protocol each ran: every label a string and, in
    the sessions table, every metric (of any of the runs) a double, with each demographic label named
    as a run's own sessions table names it (:func:`tables.label_column`) against the metrics of all
    the runs: a judge metric's ``skin_tone`` score never shares a column with a dataset's ``skin_tone``
    label. A column whose type still differs between runs is an error naming it and the runs."""
    import pyarrow as pa

    sessions = which == "sessions"
    metrics = sorted({m for _, _, report in parts for m in _metric_names(report)}) if sessions else []
    out = []
    for _, table, report in parts:
        own = sorted(_metric_names(report)) if sessions else []
        held = {tables.label_column(key, own): tables.label_column(key, metrics) for key in tables.DEMOGRAPHIC_KEYS}
        names = [held.get(n, n) for n in table.column_names]
        wanted = {**{n: pa.float64() for n in metrics}, **{n: pa.string() for n in held.values()}}
        columns = [c.cast(wanted[n]) if n in wanted and c.type != wanted[n] else c
                   for n, c in zip(names, table.columns)]
        out.append(pa.table(columns, names=names))
    _check_types([label for label, _, _ in parts], out)
    return out


def _check_types(labels: Sequence[str], parts: Sequence[Any]) -> None:
    import pyarrow as pa

    seen: dict[str, tuple[Any, str]] = {}
    for label, table in zip(labels, parts):
        for column in table.schema:
            kind, first = seen.setdefault(column.name, (column.type, label))
            if kind != column.type and not (pa.types.is_null(kind) or pa.types.is_null(column.type)):
                raise ResultsError(f"column {column.name!r} is {kind} in {first} but {column.type} in {label}: "
                                   "these runs' tables cannot be joined; rerun the older run to rewrite its tables")


def gather(paths: Iterable[Path | str] = (), *, which: str = "steps", tracking_uri: str | None = None,
           experiments: Sequence[str] | None = None) -> Gathered:
    """One table of the runs under ``paths`` (and of the MLflow store at ``tracking_uri``).
    Columns that only some runs have (a judge's, other demographic labels) are null elsewhere."""
    import pyarrow as pa

    if which not in TABLES:
        raise ResultsError(f"unknown table {which!r}; choose one of {', '.join(TABLES)}")
    skipped: list[tuple[str, str]] = []
    parts: list[tuple[str, Any, dict[str, Any]]] = []
    for run_dir in run_dirs(paths, skipped):
        try:
            parts.append((str(run_dir), *_with_report(run_dir, which)))
        except ResultsError as exc:
            skipped.append((str(run_dir), str(exc)))
    if tracking_uri:
        parts.extend(_mlflow_tables(tracking_uri, experiments, which, skipped))
    if not parts:
        where = ", ".join(str(p) for p in paths) or tracking_uri or "(nothing given)"
        raise ResultsError(f"no finished runs in {where}"
                           + (f" ({len(skipped)} skipped: {skipped[0][0]}: {skipped[0][1]})" if skipped else "")
                           + ". Run an experiment first, or pass the workspace it wrote to.")
    table = pa.concat_tables(conform(parts, which), promote_options="default")
    return Gathered(table, [label for label, _, _ in parts], skipped)


def check_out(out: Path | None) -> None:
    if out is not None and out.suffix.lower() not in (".parquet", ".csv"):
        raise ResultsError(f"--out {out}: give a .parquet or a .csv file, e.g. --out steps.parquet")


def write_table(table: Any, out: Path | None) -> None:
    """To ``out`` (.parquet or .csv, replaced atomically), or as CSV to stdout."""
    import pyarrow.csv as pcsv
    import pyarrow.parquet as pq

    if out is None:
        pcsv.write_csv(table, sys.stdout.buffer)
        sys.stdout.flush()
        return
    check_out(out)
    suffix = out.suffix.lower()
    out.parent.mkdir(parents=True, exist_ok=True)
    pending = PendingFile(out, "wb")
    try:
        pending.close()
        (pq.write_table if suffix == ".parquet" else pcsv.write_csv)(table, pending.tmp)
    except BaseException:
        pending.discard()
        raise
    pending.commit()
