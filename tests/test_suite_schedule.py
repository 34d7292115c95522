"""How the suite orders its tests for pytest-xdist (tests/conftest.py): the modules with a test marked slow
first, every module whole and in its own order, so no long test starts last and holds up the run."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from tests.conftest import pytest_collection_modifyitems


@dataclass
class Item:
    nodeid: str
    slow: bool = False

    def get_closest_marker(self, name: str) -> object | None:
        return object() if self.slow and name == "slow" else None


def test_modules_with_a_slow_test_run_first_whole_and_in_order():
    items = [Item("tests/a.py::one"), Item("tests/b.py::one"), Item("tests/b.py::two", slow=True),
             Item("tests/b.py::three"), Item("tests/c.py::one"), Item("plugins/x/tests/d.py::one", slow=True)]
    pytest_collection_modifyitems(None, items)  # type: ignore[arg-type]
    assert [i.nodeid for i in items] == ["tests/b.py::one", "tests/b.py::two", "tests/b.py::three",
                                         "plugins/x/tests/d.py::one", "tests/a.py::one", "tests/c.py::one"]


def test_the_suite_steals_work_between_xdist_workers(pytestconfig: pytest.Config):
    # read from the ini: inside an xdist worker the option itself reads "no" (the controller distributes)
    assert "--dist worksteal" in " ".join(pytestconfig.getini("addopts"))
