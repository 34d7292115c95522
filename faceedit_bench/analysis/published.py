"""Published numbers beside the ones recomputed from their released raw data (``faceedit-bench reproduce``).

A reproduction is a list of :class:`Number`: a name, the published value (None where only recomputed), ours,
and the tolerance it must match within: the published printed precision (half a unit in its last printed
digit: "53.54" matches within 0.005) unless the reproduction states another. :func:`report` prints the table,
writes the same as JSON, and gives the exit code: 0 only when every published number is matched.
:func:`read_expect` reads a user's own expected values (CSV ``name,value``), each with its printed precision.
:class:`Reproduction` is the three as one object, for a plugin's reproduction (``faceedit_register_reproductions``).
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from pathlib import Path

from faceedit_bench.errors import FaceEditBenchError
from faceedit_bench.storage.atomic import write_text


class PublishedFileError(FaceEditBenchError):
    """A file in a published layout that cannot be read as it is (exit code 2; its line and field named)."""


@dataclass(frozen=True)
class Number:
    name: str
    ours: float | None
    published: float | None = None
    tolerance: float | None = None  # None: nothing to compare with

    @property
    def difference(self) -> float | None:
        return None if self.ours is None or self.published is None else self.ours - self.published

    @property
    def matches(self) -> bool | None:
        """True/False when compared, None when there is no published value."""
        if self.published is None:
            return None
        if math.isnan(self.published):  # published as undefined (nan): matched by an undefined value only
            return self.ours is None or math.isnan(self.ours)
        diff = self.difference
        return diff is not None and math.isfinite(diff) and abs(diff) <= (self.tolerance or 0.0) + 1e-12

    def as_dict(self) -> dict:
        """JSON-safe: an undefined value (published as nan) is null."""
        finite = lambda v: v if v is None or math.isfinite(v) else None  # noqa: E731
        return {"name": self.name, "published": finite(self.published), "ours": finite(self.ours),
                "difference": finite(self.difference), "tolerance": self.tolerance, "matches": self.matches}


def printed_tolerance(text: str) -> float:
    """Half a unit in the last printed digit: "53.54" -> 0.005, "1252" -> 0.5, "1.2e3" -> 50."""
    exponent = Decimal(text.strip()).as_tuple().exponent
    return 0.5 * 10.0 ** exponent if isinstance(exponent, int) else 0.0  # nan, inf: no digits


def read_expect(path: Path) -> dict[str, tuple[float, float]]:
    """A user's expected values: CSV with a header ``name,value``; each value's tolerance is its printed
    precision. name -> (value, tolerance)."""
    path = Path(path)
    try:
        with path.open(newline="", encoding="utf-8-sig") as f:
            rows = list(csv.reader(f))
    except (OSError, UnicodeDecodeError) as exc:
        raise PublishedFileError(f"{path}: cannot be read as a UTF-8 CSV ({exc})") from exc
    if not rows or [c.strip() for c in rows[0][:2]] != ["name", "value"]:
        found = ",".join(rows[0]) if rows else "nothing"
        raise PublishedFileError(f"{path}: line 1 (header): expected 'name,value', found {found}")
    out: dict[str, tuple[float, float]] = {}
    for line, row in enumerate(rows[1:], start=2):
        if not any(c.strip() for c in row):
            continue
        if len(row) < 2 or not row[0].strip():
            raise PublishedFileError(f"{path}: line {line}: expected two fields 'name,value', found {row}")
        name, text = row[0].strip(), row[1].strip()
        try:
            value = float(text)
        except ValueError:
            raise PublishedFileError(f"{path}: line {line}, field 'value': {text!r} is not a number") from None
        if name in out:
            raise PublishedFileError(f"{path}: line {line}, field 'name': {name!r} is given twice")
        out[name] = (value, printed_tolerance(text))
    if not out:
        raise PublishedFileError(f"{path}: no expected values (only a header)")
    return out


def with_expected(numbers: Sequence[Number], expected: Mapping[str, tuple[float, float]]) -> list[Number]:
    """``numbers`` compared with a user's expected values instead of the published ones; an expected name
    not recomputed is listed as not reproduced."""
    have = {n.name for n in numbers}
    out = [replace(n, published=expected[n.name][0], tolerance=expected[n.name][1]) if n.name in expected
           else replace(n, published=None, tolerance=None) for n in numbers]
    return out + [Number(name, None, value, tol) for name, (value, tol) in expected.items() if name not in have]


def _fmt(value: float | None, digits: int = 4) -> str:
    return "—" if value is None or not math.isfinite(value) else f"{value:.{digits}f}".rstrip("0").rstrip(".")


def report(title: str, source: str, numbers: Sequence[Number], json_path: Path | None = None,
           notes: Sequence[str] = (), *, expected: Mapping[str, tuple[float, float]] | None = None) -> int:
    """Prints the table and writes it as JSON; 0 when every published number matches, 1 otherwise. With
    ``expected`` (a user's values, :func:`read_expect`) the numbers are compared with those instead
    (:func:`with_expected`)."""
    if expected is not None:
        numbers = with_expected(numbers, expected)
    compared = [n for n in numbers if n.matches is not None]
    failed = [n for n in compared if not n.matches]
    width = max([len(n.name) for n in numbers] + [4])
    lines = [f"{title}", f"source: {source}", f"{'name':<{width}}  {'published':>12}  {'ours':>12}  "
             f"{'difference':>11}  {'tolerance':>9}  "]
    for n in numbers:
        verdict = {True: "ok", False: "MISMATCH", None: "(not compared)"}[n.matches]
        lines.append(f"{n.name:<{width}}  {_fmt(n.published):>12}  {_fmt(n.ours):>12}  {_fmt(n.difference):>11}  "
                     f"{_fmt(n.tolerance, 6):>9}  {verdict}")
    lines += list(notes)
    lines.append(f"{len(compared) - len(failed)}/{len(compared)} published numbers matched"
                 + (" (nothing to compare: give --expect FILE)" if not compared else ""))
    print("\n".join(lines))
    if json_path is not None:
        write_text(Path(json_path), json.dumps({"reproduction": title, "source": source, "notes": list(notes),
                                                "matched": len(compared) - len(failed), "compared": len(compared),
                                                "numbers": [n.as_dict() for n in numbers]}, indent=1) + "\n")
    return 1 if failed else 0


class Reproduction:
    """One reproduction of published numbers (``faceedit-bench reproduce <name>``): made with the user's
    ``--expect`` CSV, which is read and checked at once, before any work (:func:`read_expect`);
    :meth:`add` gives it each recomputed number beside the published one, and :meth:`report` prints the table
    (published, ours, difference, tolerance), writes it as JSON and returns the exit code: 0 only when every
    published number (or, with ``expect``, every expected value) is matched."""

    def __init__(self, title: str, expect: Path | None = None) -> None:
        self.title = title
        self.expected = read_expect(expect) if expect is not None else None
        self.numbers: list[Number] = []

    def add(self, name: str, ours: float | None, published: float | None = None,
            tolerance: float | None = None) -> None:
        """A recomputed number (None: not reproduced), with the published value and the tolerance it must match
        within (None for both: nothing to compare with)."""
        self.numbers.append(Number(name, ours, published, tolerance))

    def report(self, source: str, json_path: Path | None = None, notes: Sequence[str] = ()) -> int:
        """The table printed and written to ``json_path``; 0 when every compared number matches, 1 otherwise."""
        return report(self.title, source, self.numbers, json_path, notes, expected=self.expected)
