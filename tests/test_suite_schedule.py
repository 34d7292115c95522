"""How the suite orders its tests for pytest-xdist (tests/conftest.py): each worker's first share starts with
its part of the slow tests, dealt out longest first, every module whole and in its own order, so the long
tests all start at once and no long test starts last to hold up the run."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from tests.conftest import pytest_collection_modifyitems


@dataclass
class Item:
    nodeid: str
    slow: float | None = None  # seconds; 0: marked slow without seconds

    def get_closest_marker(self, name: str) -> Any:
        if self.slow is None or name != "slow":
            return None
        return (pytest.mark.slow(seconds=self.slow) if self.slow else pytest.mark.slow).mark


def ordered(items: list[Item], workers: int, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    monkeypatch.setenv("PYTEST_XDIST_WORKER_COUNT", str(workers))
    pytest_collection_modifyitems(None, items)  # type: ignore[arg-type]
    return [i.nodeid for i in items]


def worksteal_shares(ids: list[str], workers: int) -> list[list[str]]:
    """The first tests pytest-xdist's worksteal scheduler hands each worker: the next len(pending) // (workers
    - k) in order."""
    shares, pending = [], list(ids)
    for k in range(workers):
        size = len(pending) // (workers - k)
        shares.append(pending[:size])
        pending = pending[size:]
    return shares


def test_one_worker_runs_the_slow_modules_first_longest_first_each_whole_and_in_order(monkeypatch):
    items = [Item("tests/a.py::one"), Item("tests/b.py::one"), Item("tests/b.py::two", slow=0),
             Item("tests/b.py::three"), Item("tests/c.py::one"), Item("plugins/x/tests/d.py::one", slow=30)]
    assert ordered(items, 1, monkeypatch) == [
        "plugins/x/tests/d.py::one", "tests/b.py::one", "tests/b.py::two", "tests/b.py::three",
        "tests/a.py::one", "tests/c.py::one"]


def test_each_worker_starts_with_its_share_of_the_slow_time(monkeypatch):
    fast = [Item(f"tests/fast_{i}.py::t") for i in range(12)]
    slow = [Item("tests/kill.py::loop", slow=60), Item("tests/shards.py::four", slow=35),
            Item("tests/resume.py::one", slow=20), Item("tests/resume.py::two", slow=20),
            Item("tests/resume.py::plain"), Item("tests/presets.py::a", slow=0), Item("tests/presets.py::b", slow=0)]
    ids = ordered(fast[:6] + slow + fast[6:], 3, monkeypatch)
    assert sorted(ids) == sorted(i.nodeid for i in fast + slow)  # every test, once
    shares = worksteal_shares(ids, 3)
    assert [len(s) for s in shares] == [6, 6, 7]
    # longest first, each to the worker with the least slow time so far: 60 | 40 | 35 + 10
    assert shares[0][:1] == ["tests/kill.py::loop"]
    assert shares[1][:3] == ["tests/resume.py::one", "tests/resume.py::two", "tests/resume.py::plain"]
    assert shares[2][:3] == ["tests/shards.py::four", "tests/presets.py::a", "tests/presets.py::b"]
    # the rest fill each share in collection order: a stolen tail is short tests
    assert [i for i in ids if i.startswith("tests/fast_")] == [i.nodeid for i in fast]


def test_the_suite_steals_work_between_xdist_workers(pytestconfig: pytest.Config):
    # read from the ini: inside an xdist worker the option itself reads "no" (the controller distributes)
    assert "--dist worksteal" in " ".join(pytestconfig.getini("addopts"))
