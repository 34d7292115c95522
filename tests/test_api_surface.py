"""The component API (``faceedit_bench.api``) stays light: importing it loads no heavy library and no module of
the run, report, analysis or leaderboard layers, and every name it lists resolves (the lazy ones included)."""

from __future__ import annotations

import json
import subprocess
import sys

import faceedit_bench.api as api

#: Libraries a plugin that is only loaded (``faceedit-bench plugins``, a run's start) must not pay for.
HEAVY = ("jinja2", "matplotlib", "pyarrow", "scipy", "pandas", "statsmodels", "hydra", "omegaconf", "rich",
         "jsonschema", "yaml", "mlflow", "torch")
#: Core packages above the component API's building blocks (records, plugin, execution, storage, scoring).
PRIVATE_LAYERS = ("faceedit_bench.run", "faceedit_bench.report", "faceedit_bench.analysis",
                  "faceedit_bench.leaderboard", "faceedit_bench.compare", "faceedit_bench.cli",
                  "faceedit_bench.builtin", "faceedit_bench.testsets", "faceedit_bench.testing",
                  "faceedit_bench.api.protocol")
#: How many core modules ``import faceedit_bench.api`` may load (35 when this was written; 47 before).
MODULE_BUDGET = 40


def loaded_by(statement: str) -> list[str]:
    """The modules a fresh interpreter holds after ``statement``."""
    code = f"import json, sys\n{statement}\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    return json.loads(out.splitlines()[-1])


def test_importing_the_component_api_loads_no_heavy_library_and_no_private_layer():
    modules = loaded_by("import faceedit_bench.api")
    heavy = [m for m in HEAVY if m in modules]
    assert not heavy, f"import faceedit_bench.api loads {heavy}: import them where they are used, or lazily"
    private = [m for m in modules if m.startswith(PRIVATE_LAYERS)]
    assert not private, f"import faceedit_bench.api loads {private}: serve such names lazily (api._LAZY)"
    core = [m for m in modules if m == "faceedit_bench" or m.startswith("faceedit_bench.")]
    assert len(core) <= MODULE_BUDGET, f"import faceedit_bench.api loads {len(core)} core modules: {core}"


def test_every_listed_name_resolves_and_the_lazy_ones_load_on_first_use():
    missing = [name for name in api.__all__ if not hasattr(api, name)]
    assert not missing
    assert set(api._LAZY) <= set(api.__all__)
    modules = loaded_by("from faceedit_bench.api import metrics_for_tracking")
    assert "faceedit_bench.report.run_report" in modules


def test_an_unknown_name_is_an_attribute_error():
    try:
        api.no_such_name  # noqa: B018
    except AttributeError as exc:
        assert "no_such_name" in str(exc)
    else:
        raise AssertionError("faceedit_bench.api.no_such_name resolved")


#: ``faceedit_bench.api.hosted``: what the hosted-provider plugins share (docs/providers.md). Pinned: a name
#: added or removed is a change of the public API, made here on purpose.
HOSTED = ["HostedComponent", "HostedConnection", "HostedParams", "UnexpectedAnswer", "answer_failure", "as_code",
          "as_status", "openai_shaped_failure", "transport_failure", "unexpected_answer"]


def test_the_hosted_provider_api_is_pinned_light_and_resolves():
    import faceedit_bench.api.hosted as hosted

    assert sorted(hosted.__all__) == sorted(HOSTED)
    assert all(hasattr(hosted, name) for name in hosted.__all__)
    modules = loaded_by("import faceedit_bench.api.hosted")
    heavy = [m for m in HEAVY if m in modules]
    private = [m for m in modules if m.startswith(PRIVATE_LAYERS)]
    assert not heavy and not private, (heavy, private)


def test_a_name_served_by_two_public_modules_is_one_thing():
    """No one name for two things (issue 38): a name that ``faceedit_bench.api`` and its submodules both list is
    the same object in each (the settings checks of ``api.protocol`` and the dataset-parameter checks of
    ``api.datasets`` once shared ``check_flag`` and ``check_positive``)."""
    import faceedit_bench.api.datasets as datasets
    import faceedit_bench.api.hosted as hosted
    import faceedit_bench.api.protocol as protocol

    served: dict[str, dict[str, object]] = {}
    for module in (api, protocol, datasets, hosted):
        for name in module.__all__:
            served.setdefault(name, {})[module.__name__] = getattr(module, name)
    two_things = {name: sorted(by) for name, by in served.items() if len({id(o) for o in by.values()}) > 1}
    assert not two_things, f"one name, different objects: {two_things}"
