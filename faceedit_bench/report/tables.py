"""The schemas of a run's tables (steps, sessions) and their CSV and Parquet files.

Columns come from these schemas, never from the rows that happen to be written first: a
run whose first session is excluded has the same columns as any other. Every row starts with
the run's identifiers (:data:`RUN_COLUMNS`), so the tables of many runs concatenate into one
long table (``faceedit-bench results``).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from faceedit_bench.storage.atomic import PendingFile

#: Who produced a row: the same in every row of a run.
RUN_COLUMNS = ("run_key", "run_name", "editor", "editor_version", "testset", "testset_version", "testset_hash",
               "dataset", "embedder", "embedder_version", "judge", "judge_version")
#: One row per (face, session, k); k = 0 is the base image.
#: ``prompt`` is what the editor received: the instruction, or its composition under ``condition``.
STEP_COLUMNS = ("face_id", "identity", "session_id", "condition", "k", "instruction", "prompt_id", "prompt_category",
                "prompt", "category", "sub_axis", "axis",
                "outcome", "reason", "resumed", "image_hash", "score_outcome", "faces_detected", "fss",
                "session_excluded", "sc", "sc_outcome", "state", "state_outcome", "judged_by", "judge_values",
                "judge_flags", "image_values")
#: One row per (face, session), then the demographic keys and one column per registered metric.
SESSION_COLUMNS = ("face_id", "identity", "session_id", "condition", "excluded")
DEMOGRAPHIC_KEYS = ("gender", "skin_tone", "age_group", "race", "age_bin")

STEPS_CSV = "steps.csv"
"""The run folder's table of every step (one row per face, session, condition and step)."""
SESSIONS_CSV = "sessions.csv"
"""The run folder's table of every session: its labels, exclusion and metric values."""
STEPS_PARQUET, SESSIONS_PARQUET = "steps.parquet", "sessions.parquet"

#: Rows per Parquet batch: the conversion holds one such slice of the CSV at a time.
ROWS_PER_BATCH = 8192

#: Arrow types of the columns that are not text; every other column is a string.
_STEP_TYPES = {"k": "int64", "resumed": "bool", "faces_detected": "int64", "fss": "float64", "sc": "float64"}

#: The description keys that name what a component's results depend on, most specific first.
_VERSION_KEYS = ("model_version", "model", "version")


def _get(component: Any, key: str) -> Any:
    return component.get(key) if isinstance(component, Mapping) else getattr(component, key, None)


def component_version(component: Any) -> str:
    """The model version a component states in its description, else its plugin's version."""
    description = _get(component, "description") or {}
    for key in _VERSION_KEYS:
        if description.get(key) not in (None, ""):
            return str(description[key])
    return str(_get(component, "provider_version") or "")


def run_identifiers(run_key: str, run_name: str, components: Mapping[str, Any]) -> dict[str, str]:
    """The :data:`RUN_COLUMNS` of a run, from its components (``RunInfo.components`` or the
    ``components`` of its report.json); a component the run has none of (judge) is ``""``."""
    ids = {"run_key": run_key, "run_name": run_name}
    for kind in ("editor", "testset", "dataset", "embedder", "judge"):
        component = components.get(kind)
        ids[kind] = str(_get(component, "name") or "") if component is not None else ""
        if kind in ("editor", "embedder", "judge"):
            ids[f"{kind}_version"] = component_version(component) if component is not None else ""
    testset = components.get("testset")
    testset = (_get(testset, "description") or {}) if testset is not None else {}
    ids["testset_version"] = str(testset.get("version") or "")
    ids["testset_hash"] = str(testset.get("content_hash") or "")
    return {c: ids[c] for c in RUN_COLUMNS}


def reference_condition(conditions: Iterable[str]) -> str:
    """The prompt condition a run's main sections describe: ``baseline`` when the run has it, else the
    first listed. An empty value (a table written before conditions existed) is the baseline."""
    seen = list(dict.fromkeys(c or "baseline" for c in conditions))
    return "baseline" if "baseline" in seen or not seen else seen[0]


def step_columns(demographic_keys: Sequence[str] = DEMOGRAPHIC_KEYS) -> list[str]:
    return [*RUN_COLUMNS, *STEP_COLUMNS, *demographic_keys]


def label_column(key: str, metrics: Sequence[str]) -> str:
    """The sessions table's column of a demographic label: its key, or ``label_<key>`` where a metric
    has the same name (a judge metric's ``skin_tone`` score beside the ``skin_tone`` label): neither is lost."""
    return f"label_{key}" if key in metrics else key


def session_columns(metrics: Sequence[str], demographic_keys: Sequence[str] = DEMOGRAPHIC_KEYS) -> list[str]:
    return [*RUN_COLUMNS, *SESSION_COLUMNS, *(label_column(k, metrics) for k in demographic_keys), *metrics]


def column_types(columns: Iterable[str], numeric: Iterable[str] = ()) -> dict[str, str]:
    """Arrow type names: the steps table's typed columns, ``numeric`` as float64, the rest string."""
    numeric = set(numeric)
    return {c: "float64" if c in numeric else _STEP_TYPES.get(c, "string") for c in columns}


class TableWriter:
    """A CSV table with fixed columns, written to a temporary file and moved into place by
    :meth:`commit` (with its Parquet twin), so a reader never sees a half-written table and
    two processes writing the same run never interleave rows."""

    def __init__(self, target: Path, columns: Sequence[str], types: Mapping[str, str]) -> None:
        self.target, self.columns, self.types = Path(target), list(columns), dict(types)
        self._csv = PendingFile(self.target, "w", encoding="utf-8", newline="")
        self._writer = csv.DictWriter(self._csv.fh, fieldnames=self.columns, restval="", extrasaction="raise")
        self._writer.writeheader()
        self._parquet: PendingFile | None = None
        self._cuts: list[int] = []  # byte offsets where a batch of rows starts
        self.rows = 0

    def write(self, row: Mapping[str, Any]) -> None:
        """One row; a key outside the schema raises (a value must never be dropped silently)."""
        if self.rows % ROWS_PER_BATCH == 0:
            self._cuts.append(self._csv.fh.tell())
        self._writer.writerow(row)
        self.rows += 1

    def close(self) -> None:
        self._csv.close()

    def prepare(self) -> None:
        """Close the CSV and convert it to Parquet beside it (still pending: nothing is replaced yet)."""
        self._csv.close()
        if self._parquet is None:
            self._parquet = PendingFile(self.target.with_suffix(".parquet"), "wb")
            self._parquet.close()
            csv_to_parquet(self._csv.tmp, self._parquet.tmp, self.types, cuts=self._cuts)

    def commit(self) -> list[Path]:
        """Replace the CSV and Parquet files with the complete new ones."""
        self.prepare()
        assert self._parquet is not None
        return [self._csv.commit(), self._parquet.commit()]

    def discard(self) -> None:
        self._csv.discard()
        if self._parquet is not None:
            self._parquet.discard()


# -- reading and converting -------------------------------------------------------------------


def _arrow_type(name: str) -> Any:
    import pyarrow as pa

    return {"int64": pa.int64(), "float64": pa.float64(), "bool": pa.bool_(), "string": pa.string()}[name]


def read_csv_table(source: Any, types: Mapping[str, str] | None = None) -> Any:
    """A run table (path or file-like) as a ``pyarrow.Table``: ``types`` for the columns it
    names, the steps table's known types for the rest, text otherwise; empty numbers are nulls,
    empty text stays ``""``."""
    import pyarrow.csv as pcsv

    return pcsv.read_csv(source, **_csv_options(source, types))


def _csv_options(source: Any, types: Mapping[str, str] | None) -> dict[str, Any]:
    import pyarrow.csv as pcsv

    header = _header(source)
    wanted = {**column_types(header), **dict(types or {})}
    return {"parse_options": pcsv.ParseOptions(newlines_in_values=True),
            "convert_options": pcsv.ConvertOptions(
                column_types={c: _arrow_type(wanted[c]) for c in header}, strings_can_be_null=False,
                null_values=[""], true_values=["True", "true"], false_values=["False", "false"])}


def csv_to_parquet(source: Path | str, target: Path | str, types: Mapping[str, str] | None = None, *,
                   cuts: Sequence[int] = ()) -> None:
    """The run table ``source`` as Parquet, converted batch by batch (the rows of :func:`read_csv_table`).

    ``cuts`` are byte offsets where rows start (the first one after the header), as the writer
    recorded them: each slice between two cuts is parsed on its own, so memory is one slice's,
    whatever the table's size. (pyarrow's streaming reader reads ahead, and held about as much
    memory as the file's size.) Without cuts the file is streamed by pyarrow."""
    import pyarrow as pa
    import pyarrow.csv as pcsv
    import pyarrow.parquet as pq

    options = _csv_options(source, types)
    if not cuts:
        reader = pcsv.open_csv(str(source), **options)
        with pq.ParquetWriter(str(target), reader.schema) as writer:
            for batch in reader:
                writer.write_batch(batch)
        return
    # One thread, and the pool's free memory handed back after each slice: otherwise the
    # allocator's per-thread caches hold tens of MB more (measured, benchmarks/bench_memory.py).
    options["read_options"] = pcsv.ReadOptions(use_threads=False)
    with open(source, "rb") as fh:
        header = fh.read(cuts[0])
        writer = None
        try:
            for start, end in zip(cuts, [*cuts[1:], None]):
                table = pcsv.read_csv(io.BytesIO(header + (fh.read() if end is None else fh.read(end - start))),
                                      **options)
                writer = writer or pq.ParquetWriter(str(target), table.schema)  # every column's type is given
                writer.write_table(table)
                del table
                pa.default_memory_pool().release_unused()
        finally:
            if writer is not None:
                writer.close()


def _header(source: Any) -> list[str]:
    if hasattr(source, "read"):
        position = source.tell()
        line = source.readline()
        source.seek(position)
        text = line.decode("utf-8") if isinstance(line, bytes) else line
    else:
        with open(source, encoding="utf-8", newline="") as fh:
            text = fh.readline()
    return next(csv.reader([text]), [])


def write_parquet(table: Any, path: Path | str) -> None:
    import pyarrow.parquet as pq

    pq.write_table(table, str(path))
