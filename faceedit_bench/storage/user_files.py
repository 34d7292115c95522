"""The one path by which files a user gives are read: test sets, question sets, reports given to ``compare``,
votes, manifests, people's ratings, submissions.

Each reader caps what a hostile or broken file can cost before it is believed: its size (:data:`MAX_BYTES`),
the nesting depth of JSON and YAML (:data:`MAX_DEPTH`: the standard parsers recurse, and a file of 100,000
``[`` ends in ``RecursionError``), and the size of one CSV cell (the csv module's own limit). Every refusal is the
caller's error class, so the command exits 2 with one line naming the file, the place (line and column, or the
JSON path) and the fix. :func:`check_schema` validates parsed data against a JSON schema the same way.
"""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from faceedit_bench.errors import FaceEditBenchError

#: The largest file read whole (bytes). Larger files are refused before reading: a run report of 10,000
#: sessions is about 5 MB, a vote log of a million votes about 100 MB.
MAX_BYTES = 512 * 2**20
#: The deepest nesting of JSON or YAML containers accepted. The project's own files nest at most 12 deep.
MAX_DEPTH = 64

ErrorType = type[FaceEditBenchError]


def read_bytes(path: Path, *, what: str, error: ErrorType = FaceEditBenchError, max_bytes: int = MAX_BYTES) -> bytes:
    """The bytes of the regular file ``path``, refused when missing, not a file or over ``max_bytes``."""
    path = Path(path)
    try:
        size = os.stat(path).st_size
        if not path.is_file():
            raise error(f"{path}: the {what} must be a regular file, not a folder or a device")
        if size > max_bytes:
            raise error(f"{path}: the {what} is {size:,} bytes, more than the {max_bytes:,} read at most; "
                        "is it the right file? Split it, or pass a smaller one")
        with open(path, "rb") as f:
            data = f.read(max_bytes + 1)
    except OSError as exc:
        raise error(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    if len(data) > max_bytes:  # it grew while it was read
        raise error(f"{path}: the {what} is more than the {max_bytes:,} bytes read at most")
    return data


def decode_utf8(data: bytes, path: Path | str, *, what: str, error: ErrorType = FaceEditBenchError) -> str:
    """``data`` as UTF-8 text (a leading byte-order mark dropped); another encoding (Latin-1, Windows-1252,
    UTF-16: what spreadsheets often save) or binary data raises ``error`` naming the line and column of
    the first byte that is not UTF-8."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line_start = data.rfind(b"\n", 0, exc.start) + 1
        line = data.count(b"\n", 0, exc.start) + 1
        bad = data[exc.start:exc.start + 1].hex()
        utf16 = " (it looks like UTF-16)" if data[:2] in (b"\xff\xfe", b"\xfe\xff") else ""
        name = Path(path).name
        raise error(
            f"{path}, line {line}, column {exc.start - line_start + 1}: byte 0x{bad} is not UTF-8{utf16}; "
            f"the {what} must be UTF-8 text. Re-save it as UTF-8 (in a spreadsheet: 'CSV UTF-8'; or "
            f"`iconv -f cp1252 -t utf-8 {name} > fixed_{name}`)."
        ) from None
    if "\x00" in text:
        line = text.count("\n", 0, text.index("\x00")) + 1
        raise error(f"{path}, line {line}: a NUL character; the {what} must be text, and this looks like a "
                    "binary file")
    return text


def read_utf8(path: Path, *, what: str, error: ErrorType = FaceEditBenchError, max_bytes: int = MAX_BYTES) -> str:
    """The UTF-8 text of ``path``, size-capped (:func:`read_bytes`, :func:`decode_utf8`)."""
    return decode_utf8(read_bytes(path, what=what, error=error, max_bytes=max_bytes), path, what=what, error=error)


def _reject_constant(token: str) -> Any:
    raise ValueError(f"{token} is not a JSON number (write null, or a finite number)")


def parse_json(text: str, source: str, *, what: str, error: ErrorType = FaceEditBenchError,
               max_depth: int = MAX_DEPTH) -> Any:
    """Strict JSON (no NaN or Infinity) nested at most ``max_depth`` deep; a syntax error names its line and
    column, a truncated file says so."""
    try:
        data = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        ended = " (the file ends too early: is it truncated?)" if exc.pos >= len(text.rstrip()) else ""
        raise error(f"{source}, line {exc.lineno}, column {exc.colno}: not valid JSON: {exc.msg}{ended}; "
                    f"the {what} must be one JSON document") from None
    except RecursionError:
        raise error(f"{source}: nested deeper than {max_depth} levels; that is no {what}") from None
    except ValueError as exc:
        raise error(f"{source}: not valid JSON: {exc}") from None
    check_depth(data, source, what=what, error=error, max_depth=max_depth)
    return data


def read_json(path: Path, *, what: str, error: ErrorType = FaceEditBenchError, max_bytes: int = MAX_BYTES,
              max_depth: int = MAX_DEPTH, schema: Mapping[str, Any] | None = None, fix: str = "") -> Any:
    """A user's JSON file: size-capped, UTF-8, strict, depth-capped and, with ``schema``, validated."""
    data = parse_json(read_utf8(path, what=what, error=error, max_bytes=max_bytes), str(path), what=what,
                      error=error, max_depth=max_depth)
    if schema is not None:
        check_schema(data, schema, str(path), what=what, error=error, fix=fix)
    return data


def read_yaml(path: Path, *, what: str, error: ErrorType = FaceEditBenchError, max_bytes: int = MAX_BYTES,
              max_depth: int = MAX_DEPTH) -> Any:
    """A user's YAML file (safe loader only), size- and depth-capped."""
    import yaml

    text = read_utf8(path, what=what, error=error, max_bytes=max_bytes)
    try:
        data = yaml.safe_load(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        place = f", line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        raise error(f"{path}{place}: not valid YAML: {exc.problem or exc}") from None
    except yaml.YAMLError as exc:
        raise error(f"{path}: not valid YAML: {exc}") from None
    except RecursionError:
        raise error(f"{path}: nested deeper than {max_depth} levels; that is no {what}") from None
    check_depth(data, str(path), what=what, error=error, max_depth=max_depth)
    return data


def check_depth(data: Any, source: str, *, what: str, error: ErrorType = FaceEditBenchError,
                max_depth: int = MAX_DEPTH) -> None:
    """Raise ``error`` naming the path of the first container nested deeper than ``max_depth``.

    Iterative, and each container is visited once, so a YAML file that shares one list a billion times
    through aliases costs what its distinct containers cost."""
    seen: set[int] = set()
    stack: list[tuple[Any, int, str]] = [(data, 1, "")]
    while stack:
        node, depth, where = stack.pop()
        if not isinstance(node, (dict, list)) or id(node) in seen:
            continue
        seen.add(id(node))
        if depth > max_depth:
            raise error(f"{source}: at {where or '(top level)'}: nested deeper than {max_depth} levels; "
                        f"that is no {what}")
        items = node.items() if isinstance(node, dict) else enumerate(node)
        stack.extend((value, depth + 1, f"{where}/{key}") for key, value in items)


def check_schema(data: Any, schema: Mapping[str, Any], source: str, *, what: str,
                 error: ErrorType = FaceEditBenchError, fix: str = "") -> None:
    """Raise ``error`` with the first violations of ``schema`` (JSON Schema), each with its JSON path."""
    import jsonschema

    validator = jsonschema.validators.validator_for(schema)(schema)
    problems = sorted(validator.iter_errors(data), key=lambda e: [str(p) for p in e.absolute_path])
    if not problems:
        return
    shown = "; ".join(f"at {'/'.join(str(p) for p in e.absolute_path) or '(top level)'}: "
                      f"{_short(e.message)}" for e in problems[:3])
    more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
    raise error(f"{source}: not a valid {what}: {shown}{more}.{' ' + fix if fix else ''}")


def _short(text: str, limit: int = 160) -> str:
    text = ascii(str(text))[1:-1]
    return text if len(text) <= limit else text[:limit // 2] + "..." + text[-limit // 2:]


def csv_rows(text: str, source: str, *, what: str, error: ErrorType = FaceEditBenchError,
             delimiter: str = ",") -> Iterator[tuple[int, list[str]]]:
    """``(line number, cells)`` of each row of a CSV text, the header included. A cell longer than the csv
    module's limit (128 KiB unless a program raised it), or an unclosed quote, raises ``error`` naming the line."""
    import io

    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            if "field larger than field limit" in str(exc):
                raise error(f"{source}, line {reader.line_num}: a cell of more than {csv.field_size_limit():,} "
                            f"characters; a {what} has short cells. Is a quote left open above it?") from None
            raise error(f"{source}, line {reader.line_num}: not readable as CSV ({exc})") from None
        yield reader.line_num, row


def csv_records(text: str, source: str, *, what: str, error: ErrorType = FaceEditBenchError,
                required: tuple[str, ...] = (), delimiter: str = ",",
                problems: list[str] | None = None) -> tuple[list[str], list[tuple[int, dict[str, str]]]]:
    """The header and ``(line number, row)`` records of a CSV text with a header row. A missing column, or a
    row with more or fewer cells than the header, raises ``error`` naming the line; blank lines are skipped.
    With ``problems``, a row of the wrong length is left out and its problem added there instead, so that a
    reader that checks every row can report them all at once."""
    rows = csv_rows(text, source, what=what, error=error, delimiter=delimiter)
    header = [h.strip() for h in next(rows, (1, []))[1]]
    missing = [c for c in required if c not in header]
    if missing:
        raise error(f"{source}, line 1: the header {','.join(header) or '(empty)'} lacks column(s) "
                    f"{', '.join(missing)}")
    records = []
    for line, row in rows:
        if not row or all(not c.strip() for c in row):
            continue
        if len(row) != len(header):
            problem = f"line {line}: {len(row)} cells, but the header has {len(header)} columns ({','.join(header)})"
            if problems is None:
                raise error(f"{source}, {problem}")
            problems.append(problem)
            continue
        records.append((line, dict(zip(header, row))))
    return header, records


def file_under(root: Path, name: str, source: str, *, what: str, error: ErrorType = FaceEditBenchError,
               allow_outside: bool = False, how_to_allow: str = "") -> Path:
    """The file a user's list (a manifest, a label CSV) names, relative to the dataset's ``root``.

    A name that leaves ``root`` (``../``, an absolute path, a link pointing out) is refused unless
    ``allow_outside``: a dataset is read from its folder, and a manifest must not make the benchmark read
    (and copy into the workspace's store) any other file the user can read. ``how_to_allow`` says how to
    allow it, where a dataset can."""
    path = Path(root) / name
    if not allow_outside:
        base = Path(root).resolve()
        target = path.resolve()
        if Path(name).is_absolute() or (target != base and base not in target.parents):
            allow = f" or {how_to_allow}" if how_to_allow else ""
            raise error(f"{source}: {what} {name!r} is outside the dataset folder {root}; give a path inside it"
                        f"{allow}")
    return path
