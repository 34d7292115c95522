"""The run's spending budget: estimated USD spent against an optional limit."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from faceedit_bench.execution.cost import cost_usd


class BudgetReached(Exception):
    """The run's spending budget is used up; no new call is started."""


@dataclass
class Budget:
    """Estimated spending of this invocation, in USD, against an optional limit."""

    limit_usd: float | None = None
    spent_usd: float = 0.0
    # Edits are charged on the threads that record their answers, judge calls on the event loop.
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def check(self) -> None:
        if self.limit_usd is not None and self.spent_usd >= self.limit_usd:
            raise BudgetReached(
                f"run.budget_usd={self.limit_usd:g} reached (estimated spend {self.spent_usd:.4f} USD); "
                "rerun the same command to resume from here, with a higher run.budget_usd to go further"
            )

    def add(self, usd: float) -> None:
        with self._lock:
            self.spent_usd += usd

    def charge(self, usage: Mapping[str, Any], prices: Mapping[str, float] | None) -> dict[str, Any]:
        """``usage`` with its estimated ``cost_usd`` (when there is a price table), counted
        against the budget."""
        spent = cost_usd(usage, prices)
        if spent is None:
            return dict(usage)
        self.add(spent)
        return {**usage, "cost_usd": spent}
