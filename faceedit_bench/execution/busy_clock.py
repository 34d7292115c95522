"""The wall time a stage was busy: while any of its concurrent units runs, counted once.

With sessions streaming through the stages, summing each unit's duration would count the
same second many times; a stage's wall time is the union of the intervals it had work."""

from __future__ import annotations

import time
from typing import Any


class BusyClock:
    """``with clock:`` around each unit of work; :attr:`total_s` is the time any unit ran."""

    def __init__(self) -> None:
        self._active = 0
        self._since = 0.0
        self._total = 0.0

    def __enter__(self) -> BusyClock:
        if self._active == 0:
            self._since = time.perf_counter()
        self._active += 1
        return self

    def __exit__(self, *exc: Any) -> None:
        self._active -= 1
        if self._active == 0:
            self._total += time.perf_counter() - self._since

    @property
    def total_s(self) -> float:
        running = time.perf_counter() - self._since if self._active else 0.0
        return self._total + running
