"""The public API (issue 38): one home per topic, a kept count of names, every name documented and used by a
plugin package or the docs' code, no name for two things, and the component API (``faceedit_bench.api``)
light: importing it loads no heavy library and no module of the run, report, analysis or leaderboard layers."""

from __future__ import annotations

import importlib
import json
import re
import subprocess
import sys
from pathlib import Path

import faceedit_bench.api as api

#: The topic modules: components and records, sections, images, statistics, judging, testing.
TOPICS = ("faceedit_bench.api", "faceedit_bench.api.sections", "faceedit_bench.api.images",
          "faceedit_bench.api.statistics", "faceedit_bench.api.judging", "faceedit_bench.api.testing")
ROOT = Path(__file__).resolve().parent.parent
#: The most names the public API may hold, over all its topics: the count when this was written (184 when issue
#: 38 was filed, 207 at the start of its round, 151 before its last step). Issue 38 asks for 100: lower this as
#: names are taken out, never raise it without a decision to widen the API.
MAX_NAMES = 99
#: Libraries a plugin that is only loaded (``faceedit-bench plugins``, a run's start) must not pay for.
HEAVY = ("jinja2", "matplotlib", "pyarrow", "scipy", "pandas", "statsmodels", "hydra", "omegaconf", "rich",
         "jsonschema", "yaml", "mlflow", "torch", "numpy", "PIL", "pydantic")
#: Core packages above the component API's building blocks (records, plugin, execution, storage).
PRIVATE_LAYERS = ("faceedit_bench.run", "faceedit_bench.report", "faceedit_bench.analysis",
                  "faceedit_bench.leaderboard", "faceedit_bench.compare", "faceedit_bench.cli",
                  "faceedit_bench.testing", "faceedit_bench.testsets", "faceedit_bench.api.sections",
                  "faceedit_bench.api.statistics", "faceedit_bench.api.judging")
#: How many modules (the standard library's included) ``import faceedit_bench.api`` may load in all: a bound on
#: the work of the import that does not depend on the machine's speed (104 and, for a hosted editor's imports, 196 when this was written).
MODULE_BUDGET = 250
#: What a typical component imports (a hosted editor): measured with the import above.
COMPONENT_IMPORT = ("from faceedit_bench.api import (ConfigError, EditRequest, EditResult, HostedComponent, "
                    "HostedConnection, HostedParams, Outcome, Register, RetryableError, hookimpl)")


def loaded_by(statement: str) -> tuple[list[str], float]:
    """The modules a fresh interpreter holds after ``statement``, and the seconds the statement took."""
    code = ("import json, sys, time\nstart = time.perf_counter()\n" + statement +
            "\nprint(json.dumps([time.perf_counter() - start, sorted(sys.modules)]))")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    seconds, modules = json.loads(out.splitlines()[-1])
    return modules, seconds


def public_names() -> dict[str, dict[str, object]]:
    """Every public name -> {topic module: the object it serves}."""
    served: dict[str, dict[str, object]] = {}
    for topic in TOPICS:
        module = importlib.import_module(topic)
        for name in module.__all__:
            served.setdefault(name, {})[topic] = getattr(module, name)
    return served


def test_the_public_api_has_at_most_100_names_each_in_one_topic():
    served = public_names()
    assert len(served) <= MAX_NAMES, f"{len(served)} public names over {len(TOPICS)} topics (at most {MAX_NAMES})"
    twice = {name: sorted(by) for name, by in served.items() if len(by) > 1}
    assert not twice, f"names served by two topics (one home each): {twice}"


def test_the_component_api_lists_exactly_the_names_it_serves():
    assert sorted(api.__all__) == sorted(api._HOMES)


def test_every_public_name_is_used_by_a_plugin_package_or_the_docs_code():
    """No name used by nothing (issue 38): each appears in a plugin package (its code or its tests), an example
    package of the docs, or a Python block of a docs page."""
    code = "".join(p.read_text(encoding="utf-8") for p in (ROOT / "plugins").glob("*/**/*.py"))
    code += "".join(p.read_text(encoding="utf-8") for p in (ROOT / "docs").rglob("*.py"))
    pages = "".join(p.read_text(encoding="utf-8") for p in (ROOT / "docs").rglob("*.md"))
    code += "".join(re.findall(r"```python\n(.*?)```", pages, re.S))
    unused = sorted(name for name in public_names() if not re.search(rf"\b{re.escape(name)}\b", code))
    assert not unused, f"public names nothing uses: {unused}"


def test_every_public_name_is_documented():
    undocumented = [f"{topic}.{name}" for name, by in public_names().items() for topic, obj in by.items()
                    if not isinstance(obj, (str, tuple, frozenset, dict)) and not (getattr(obj, "__doc__", "") or "").strip()]
    assert not undocumented, f"public names without a docstring: {undocumented}"


def test_importing_the_component_api_loads_no_heavy_library_and_no_private_layer(capsys):
    for statement in ("import faceedit_bench.api", COMPONENT_IMPORT):
        modules, seconds = loaded_by(statement)
        with capsys.disabled():  # the time, for the record: machines differ, so it is printed, not asserted
            print(f"\n{statement[:60]}...: {seconds:.3f} s, {len(modules)} modules")
        heavy = [m for m in HEAVY if m in modules]
        assert not heavy, f"{statement} loads {heavy}: import them where they are used, or lazily"
        private = [m for m in modules if m.startswith(PRIVATE_LAYERS)]
        assert not private, f"{statement} loads {private}"
        assert len(modules) <= MODULE_BUDGET, f"{statement} loads {len(modules)} modules (at most {MODULE_BUDGET})"


def test_every_listed_name_resolves_and_loads_its_home_on_first_use():
    missing = [name for name in api.__all__ if getattr(api, name, None) is None]
    assert not missing
    modules, _ = loaded_by("from faceedit_bench.api import HostedComponent")
    assert "faceedit_bench.execution.hosted" in modules


def test_an_unknown_name_is_an_attribute_error():
    try:
        api.no_such_name  # noqa: B018
    except AttributeError as exc:
        assert "no_such_name" in str(exc)
    else:
        raise AssertionError("faceedit_bench.api.no_such_name resolved")
