"""Compact per-session storage for the aggregator: a few bytes per session, not Python objects.

A run keeps each included session's metric values, labels and identity until the report is
built (the statistics need them all). As Python floats in lists and dicts per session that is a
few hundred bytes per session; here it is 8 bytes per number (``array('d')``) and a small code per
label or identity, so 100K sessions take a few MB. The per-group views the report needs (a
group's values, identities and FSS trajectory) are selected from these columns when the report is
built, never stored per group: memory does not grow with the number of groups either.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np


def series() -> array:
    """A growing series of float64 values (appends like a list, reads as a numpy buffer)."""
    return array("d")


class Codes:
    """Strings to small integer codes (first seen, first numbered), and back."""

    def __init__(self) -> None:
        self._codes: dict[str, int] = {}
        self.names: list[str] = []

    def __call__(self, name: str) -> int:
        code = self._codes.get(name)
        if code is None:
            code = self._codes[name] = len(self.names)
            self.names.append(name)
        return code

    def sortable(self, codes: Sequence[int]) -> np.ndarray:
        """``codes`` as ranks of their names in sorted order: ``np.unique`` orders them as it orders
        the names, so a computation over the names (the clustered permutation) is unchanged."""
        rank = np.empty(len(self.names), dtype=np.int64)
        rank[np.argsort(np.array(self.names, dtype=object), kind="stable")] = np.arange(len(self.names))
        return rank[np.asarray(codes, dtype=np.int64)] if len(codes) else np.zeros(0, dtype=np.int64)


class SessionRows(Sequence):
    """The (labels, metric values) of every included session, as columns; reads back as
    :data:`faceedit_bench.analysis.group_report.Row` tuples, made one at a time."""

    def __init__(self) -> None:
        self._labels: dict[str, array] = {}  # attribute -> label code per session (-1: none)
        self._label_codes: dict[str, Codes] = {}
        self._values: dict[str, array] = {}  # metric -> value per session (NaN: undefined)
        self._present: dict[str, array] = {}  # metric -> 1 where the session reported the metric
        self._identity = array("i")  # identity code per session (-1: none given)
        self._fss = array("d")  # FSS_0..FSS_K of every session, one after another
        self._fss_length = array("i")  # K + 1 per session (sessions of a test set may differ in length)
        self._n = 0

    def append(self, row: tuple[Mapping[str, Any], Mapping[str, float | None]], *, identity: int = -1,
               trajectory: Sequence[float] = ()) -> None:
        """One session's labels and metric values, its identity code and its FSS trajectory."""
        labels, values = row
        self._identity.append(identity)
        self._fss.extend(trajectory)
        self._fss_length.append(len(trajectory))
        for key in labels.keys() - self._labels.keys():
            self._labels[key] = array("i", [-1] * self._n)
            self._label_codes[key] = Codes()
        for key, column in self._labels.items():
            label = labels.get(key)
            column.append(-1 if label is None else self._label_codes[key](str(label)))
        for name in values.keys() - self._values.keys():
            self._values[name] = array("d", [math.nan] * self._n)
            self._present[name] = array("b", [0] * self._n)
        for name, column in self._values.items():
            present = name in values
            value = values.get(name)
            column.append(math.nan if value is None else float(value))
            self._present[name].append(1 if present else 0)
        self._n += 1

    @classmethod
    def of(cls, rows: Any) -> SessionRows:
        """``rows`` (any iterable of Row tuples) as SessionRows."""
        if isinstance(rows, SessionRows):
            return rows
        out = cls()
        for row in rows:
            out.append(row)
        return out

    def __len__(self) -> int:
        return self._n

    # -- columns, for statistics over all sessions without a dict per session ----------------

    def attributes(self) -> list[str]:
        """The attributes some session has a label for."""
        return sorted(k for k, column in self._labels.items() if any(code >= 0 for code in column))

    def codes(self, attribute: str) -> tuple[np.ndarray, list[str]]:
        """Each session's label code for ``attribute`` (-1: none), and the labels by code."""
        if attribute not in self._labels:
            return np.full(self._n, -1, dtype=np.int32), []
        return np.frombuffer(self._labels[attribute], dtype=np.int32), self._label_codes[attribute].names

    def labels(self, attribute: str) -> list[str | None]:
        codes, names = self.codes(attribute)
        return [None if c < 0 else names[c] for c in codes.tolist()]

    def values(self, metric: str) -> np.ndarray:
        """Each session's value of ``metric``, NaN where undefined or not reported."""
        if metric not in self._values:
            return np.full(self._n, math.nan)
        return np.frombuffer(self._values[metric], dtype=np.float64)

    def label_code(self, attribute: str, label: str) -> int | None:
        """The code of ``label`` in ``attribute``'s column, None if no session has it."""
        codes = self._label_codes.get(attribute)
        return None if codes is None else codes._codes.get(label)

    def identities(self) -> np.ndarray:
        """Each session's identity code (-1: none given)."""
        return np.frombuffer(self._identity, dtype=np.int32)

    def trajectory_length(self) -> int:
        """The longest trajectory's number of points (K + 1), 0 without any."""
        return max(self._fss_length, default=0)

    def trajectory_at(self, k: int, selected: np.ndarray | None = None) -> np.ndarray:
        """FSS_k of the (``selected``) sessions whose trajectory reaches k, in session order."""
        lengths = np.frombuffer(self._fss_length, dtype=np.int32)
        reach = lengths > k
        if selected is not None:
            reach &= selected
        starts = np.cumsum(lengths, dtype=np.int64) - lengths
        return np.frombuffer(self._fss, dtype=np.float64)[starts[reach] + k]

    def trajectory_identities(self, k: int, selected: np.ndarray | None = None) -> np.ndarray:
        """The identity codes of the sessions :meth:`trajectory_at` gives, in the same order."""
        reach = np.frombuffer(self._fss_length, dtype=np.int32) > k
        return self.identities()[reach & selected if selected is not None else reach]

    def _row(self, i: int) -> tuple[dict[str, str | None], dict[str, float | None]]:
        labels = {}
        for key, column in self._labels.items():
            code = column[i]
            labels[key] = None if code < 0 else self._label_codes[key].names[code]
        values = {name: (None if math.isnan(column[i]) else column[i])
                  for name, column in self._values.items() if self._present[name][i]}
        return labels, values

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self._row(j) for j in range(*i.indices(self._n))]
        if i < 0:
            i += self._n
        if not 0 <= i < self._n:
            raise IndexError(i)
        return self._row(i)

    def __iter__(self) -> Iterator[tuple[dict[str, str | None], dict[str, float | None]]]:
        return (self._row(i) for i in range(self._n))
