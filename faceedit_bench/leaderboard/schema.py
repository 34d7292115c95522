"""The submission schema (``faceedit_bench/schemas/submission.schema.json``, with a property for each report
section that keeps a part of its own: :func:`submission_schema`) and its validation."""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Sequence
from importlib import resources
from typing import Any

from faceedit_bench.errors import FaceEditBenchError
from faceedit_bench.leaderboard.errors import SubmissionRejected
from faceedit_bench.plugin.manager import sections_in_use
from faceedit_bench.plugin.sections import ReportSection

MAX_ERRORS_SHOWN = 5


@functools.cache
def core_submission_schema() -> dict[str, Any]:
    text = (resources.files("faceedit_bench") / "schemas" / "submission.schema.json").read_text(encoding="utf-8")
    return json.loads(text)


def submission_schema(sections: Sequence[ReportSection] | None = None) -> dict[str, Any]:
    """The schema of a record: the core's, and a bounded (or null) part for each report section that keeps
    one (``sections``: default, those in use). A part no installed section keeps is refused, like any
    unknown field."""
    return _schema(tuple((s.name, s.description) for s in (sections_in_use() if sections is None else sections)
                         if s.record is not None))


@functools.cache
def _schema(kept: tuple[tuple[str, str], ...]) -> dict[str, Any]:
    schema = copy.deepcopy(core_submission_schema())
    for name, description in kept:
        schema["properties"].setdefault(name, {"description": f"{description} (what the submission keeps of "
                                                              f"report.json's {name}); since 1.2.",
                                               "$ref": "#/$defs/reportSection"})
    return schema


@functools.cache
def _validator(kept: tuple[tuple[str, str], ...]) -> Any:
    try:
        import jsonschema
    except ImportError:
        raise FaceEditBenchError("checking submissions needs the jsonschema package: pip install 'jsonschema>=4.20'") from None

    schema = _schema(kept)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def printable(text: str, limit: int = 200) -> str:
    """Untrusted text made safe for a terminal or a log line: escaped, and bounded by cutting
    the middle (a validation message quotes the value first and says what is wrong last)."""
    escaped = ascii(str(text))[1:-1]
    if len(escaped) <= limit:
        return escaped
    half = max(limit // 2, 1)
    return escaped[:half] + "..." + escaped[-half:]


def validate_submission(record: Any, *, what: str = "submission.json") -> None:
    """Raise :class:`SubmissionRejected` listing the first schema violations of ``record``."""
    kept = tuple((s.name, s.description) for s in sections_in_use() if s.record is not None)
    errors = sorted(_validator(kept).iter_errors(record), key=lambda e: [str(p) for p in e.absolute_path])
    if not errors:
        return
    lines = []
    for error in errors[:MAX_ERRORS_SHOWN]:
        where = "/".join(str(p) for p in error.absolute_path) or "(top level)"
        # oneOf/anyOf: say why each alternative failed, not only that none fitted.
        reasons = [e.message for e in error.context[:3]] if error.context else [error.message]
        lines.append(f"  at {printable(where, 120)}: " + "; or ".join(printable(r) for r in reasons))
    more = f"\n  ... and {len(errors) - MAX_ERRORS_SHOWN} more" if len(errors) > MAX_ERRORS_SHOWN else ""
    raise SubmissionRejected(
        f"{what} does not follow the submission schema (faceedit_bench/schemas/submission.schema.json, "
        "see docs/submissions.md):\n" + "\n".join(lines) + more
    )
