"""Judged metrics compared as distributions, not value by value.

A judge (a hosted MLLM) answers differently when asked again, so a re-scored judged metric never equals the
submitted one; finding 8 of issue 37 failed 37 of 136 values of an honest submission that way. What
verification asks instead: do the submitted and the re-scored means differ by more than a declared margin,
beyond what the judge's run-to-run variation explains?

The evidence is the per-session values. With the submitted sessions.csv in the bundle, the same sessions are
paired: d_i = submitted_i - re-scored_i holds the judge's run-to-run variation and any tampering, and nothing
of the faces' own spread. Sessions of one face share its images, so the interval of the mean difference is
cluster-robust over identities (a t interval with G - 1 degrees of freedom, G identities). A bundle without
a sessions table (made before submit bundled it) cannot be paired: an unpaired comparison holds the spread
between faces too, and in the simulation it could tell neither an honest nor a 5-point shifted mean from the
other (every re-scoring inconclusive), so its judged means are inconclusive, with that reason.

The test is an equivalence test (two one-sided tests, TOST): a mean is *reproduced* when the (1 - 2 alpha)
interval of its difference lies inside [-margin, +margin]; it *differs* when the interval lies wholly outside;
otherwise the re-scoring is *inconclusive* (too few identities, or a judge too variable, to resolve the
margin). The margin is the metric's ``tolerance`` in the submission (in the metric's unit), capped by the
verifier.
"""

from __future__ import annotations

import csv
import io
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from scipy import stats

from faceedit_bench.leaderboard.errors import SubmissionRejected
from faceedit_bench.leaderboard.schema import printable
from faceedit_bench.report.tables import label_column, reference_condition

#: Alpha of each one-sided test: the reported interval is the (1 - 2 alpha) = 90% interval.
ALPHA = 0.05
PAIRED = "paired sessions, cluster-robust t over identities"

Key = tuple[str, str, str]  # (face_id, session_id, condition)


@dataclass(frozen=True)
class Difference:
    """Submitted minus re-scored mean of one judged figure, with its (1 - 2 alpha) interval and verdict."""

    field: str
    difference: float | None
    ci_low: float | None
    ci_high: float | None
    margin: float
    n_sessions: int
    n_identities: int
    method: str
    verdict: str  # "reproduced", "differs" or "inconclusive"
    reason: str = ""  # why it is inconclusive beyond its interval
    unpaired: int = 0  # sessions with a value on one side only

    def as_dict(self) -> dict[str, Any]:
        return {"field": self.field, "difference": self.difference, "ci_low": self.ci_low, "ci_high": self.ci_high,
                "confidence": 1 - 2 * ALPHA, "margin": self.margin, "n_sessions": self.n_sessions,
                "n_identities": self.n_identities, "method": self.method, "verdict": self.verdict,
                "unpaired_sessions": self.unpaired, "reason": self.reason or None}

    def sentence(self) -> str:
        if self.difference is None:
            return f"{self.field}: {self.verdict}, {self.reason}"
        return (f"{self.field}: submitted - re-scored = {self.difference:+.3g}, {1 - 2 * ALPHA:.0%} interval "
                f"[{self.ci_low:+.3g}, {self.ci_high:+.3g}] against a margin of ±{self.margin:g} "
                f"({self.n_sessions} sessions, {self.n_identities} identities): {self.verdict}"
                + (f", {self.reason}" if self.reason else ""))


def clustered_interval(values: Iterable[float], clusters: Iterable[str], alpha: float = ALPHA,
                       ) -> tuple[float, float, float, int]:
    """Mean of ``values`` with its two-sided (1 - 2 alpha) cluster-robust t interval (CR1, G - 1 degrees of
    freedom): (mean, low, high, G). One cluster gives an infinite interval, unless every value is equal."""
    values, clusters = list(values), list(clusters)
    n = len(values)
    mean = math.fsum(values) / n
    residuals: dict[str, float] = defaultdict(float)
    for v, c in zip(values, clusters, strict=True):
        residuals[c] += v - mean
    g = len(residuals)
    if all(v == values[0] for v in values):
        return mean, mean, mean, g
    if g < 2:
        return mean, -math.inf, math.inf, g
    se = math.sqrt(g / (g - 1) * math.fsum(r * r for r in residuals.values())) / n
    half = float(stats.t.ppf(1 - alpha, g - 1)) * se
    return mean, mean - half, mean + half, g


def verdict(low: float, high: float, margin: float) -> str:
    if -margin <= low and high <= margin:
        return "reproduced"
    if low > margin or high < -margin:
        return "differs"
    return "inconclusive"


def paired_difference(field: str, submitted: Mapping[Key, float] | None, rescored: Mapping[Key, float],
                      identities: Mapping[Key, str], margin: float) -> Difference:
    """The mean of submitted - re-scored over the sessions with a value in both, clustered by identity.

    A session with a value on one side only makes a mean that is not shown different inconclusive: leaving
    out chosen sessions (blanking their values) would move a submitted mean while every pair agrees. An
    honest run has such sessions only where a judge call failed in one run and not the other."""
    if submitted is None:
        return Difference(field, None, None, None, margin, 0, 0, PAIRED, "inconclusive",
                          reason="the bundle has no sessions.csv to pair the sessions with (submit the run again: "
                                 "submit bundles it)")
    keys = sorted(set(submitted) & set(rescored))
    one_sided = sorted(set(submitted) ^ set(rescored))
    if not keys:
        return Difference(field, None, None, None, margin, 0, 0, PAIRED, "inconclusive",
                          reason="no session has a value in both the submitted and the re-scored sessions.csv",
                          unpaired=len(one_sided))
    mean, low, high, g = clustered_interval([submitted[k] - rescored[k] for k in keys],
                                            [identities.get(k) or k[0] for k in keys])
    found, reason = verdict(low, high, margin), ""
    if one_sided and found != "differs":
        first = one_sided[0]
        found = "inconclusive"
        reason = (f"{len(one_sided)} session(s) have a value in only one of the submitted and re-scored tables "
                  f"(first: {printable(first[0], 60)} {printable(first[1], 60)}, "
                  f"{'submitted' if first in submitted else 're-scored'} only)")
    return Difference(field, mean, low, high, margin, len(keys), g, PAIRED, found, reason, len(one_sided))


def _number(text: str, column: str, key: Key) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise SubmissionRejected(f"sessions.csv: {printable(column, 60)} of {printable(key[0], 60)} "
                                 f"{printable(key[1], 60)} is {printable(text, 40)!r}, not a finite number.")
    return value


@dataclass(frozen=True)
class SessionTable:
    """The per-session values of a sessions.csv (its reference prompt condition), with identities and labels."""

    values: dict[str, dict[Key, float]]  # metric -> session -> value
    identities: dict[Key, str]
    labels: dict[str, dict[Key, str]]  # column -> session -> label

    @classmethod
    def parse(cls, table: bytes, metrics: Iterable[str]) -> SessionTable:
        try:
            rows = list(csv.DictReader(io.StringIO(table.decode("utf-8"))))
        except (UnicodeDecodeError, csv.Error) as exc:
            raise SubmissionRejected(f"sessions.csv is not a readable UTF-8 CSV table ({str(exc)[:200]}).") from None
        reference = reference_condition(r.get("condition") or "" for r in rows)
        values: dict[str, dict[Key, float]] = {m: {} for m in metrics}
        identities: dict[Key, str] = {}
        labels: dict[str, dict[Key, str]] = defaultdict(dict)
        for row in rows:
            condition = row.get("condition") or "baseline"
            if condition != reference:
                continue
            key = (row.get("face_id", ""), row.get("session_id", ""), condition)
            identities[key] = row.get("identity") or key[0]
            for column, text in row.items():
                if column in values:
                    if text not in (None, ""):
                        values[column][key] = _number(text, column, key)
                elif text:
                    labels[column][key] = text
        return cls(values, identities, dict(labels))

    def group(self, column: str, label: str) -> set[Key]:
        """The sessions whose ``column`` (a demographic label) is ``label``."""
        return {k for k, v in self.labels.get(column, {}).items() if v == label}


def judged_differences(submitted: Mapping[str, Any], margins: Mapping[str, float], rescored: SessionTable,
                       submitted_table: SessionTable | None) -> list[Difference]:
    """For every judged metric (``margins``): its overall mean and each demographic group's mean, submitted
    against re-scored, session by session. Groups are the re-scoring's (the dataset's labels, not the
    submitter's). Without ``submitted_table`` nothing can be paired: every figure is inconclusive."""
    out = []
    for name, margin in sorted(margins.items()):
        cells: list[tuple[str, set[Key] | None]] = [(f"metrics.{name}.mean", None)]
        for attribute, labels in sorted(submitted["groups"].items()):
            column = label_column(attribute, [*margins, *submitted["metrics"]])
            for label, group in sorted(labels.items()):
                if group["metrics"].get(name) is not None:
                    cells.append((f"groups.{attribute}.{label}.{name}.mean", rescored.group(column, label)))
        for field, members in cells:
            def kept(values: Mapping[Key, float], members: set[Key] | None = members) -> dict[Key, float]:
                return {k: v for k, v in values.items() if members is None or k in members}

            submitted_values = None if submitted_table is None else kept(submitted_table.values.get(name, {}))
            out.append(paired_difference(field, submitted_values, kept(rescored.values.get(name, {})),
                                         rescored.identities, margin))
    return out


def failures(differences: Iterable[Difference]) -> list[Difference]:
    """What fails a verification: an overall mean not shown reproduced, or any figure shown to differ. A
    group's inconclusive mean (few identities) is reported and does not fail: its overall mean was shown."""
    return [d for d in differences
            if d.verdict == "differs" or (d.field.startswith("metrics.") and d.verdict != "reproduced")]
