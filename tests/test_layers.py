"""The layer contracts of pyproject.toml hold (lint-imports), and a break of either is caught."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LINT = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or shutil.which("lint-imports")
pytestmark = pytest.mark.skipif(LINT is None, reason="import-linter is not installed (pip install -e '.[test]')")


def lint(cwd: Path, config: Path | None = None, pythonpath: Path | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = f"{pythonpath}{os.pathsep}{env.get('PYTHONPATH', '')}"
    args = [LINT, "--no-cache"] + (["--config", str(config)] if config else [])
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def as_ini(settings: dict, extra_root: str, extra_source: str) -> str:
    """The project's contracts in import-linter's INI form, with one more plugin package."""
    lines = ["[importlinter]", "root_packages =", *[f"    {p}" for p in [*settings["root_packages"], extra_root]],
             "include_external_packages = True"]
    for i, contract in enumerate(settings["contracts"]):
        lines.append(f"[importlinter:contract:{i}]")
        for key, value in contract.items():
            if key == "source_modules" and contract["type"] == "forbidden" and "faceedit_bench_dlib" in value:
                value = [*value, extra_source]
            if isinstance(value, list):
                lines += [f"{key} =", *[f"    {v}" for v in value]]
            else:
                lines.append(f"{key} = {value}")
    return "\n".join(lines) + "\n"


def test_contracts_hold():
    result = lint(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_a_lower_layer_importing_a_higher_one_and_a_plugin_importing_a_private_module_are_caught(tmp_path):
    shutil.copytree(ROOT / "faceedit_bench", tmp_path / "faceedit_bench",
                    ignore=shutil.ignore_patterns("__pycache__", "data", "conf"))
    ledger = tmp_path / "faceedit_bench" / "storage" / "ledger.py"
    ledger.write_text(ledger.read_text() + "\n\ndef _violation():\n    import faceedit_bench.run.engine  # noqa\n")
    plugin = tmp_path / "faceedit_bench_violator"
    plugin.mkdir()
    (plugin / "__init__.py").write_text("from faceedit_bench.storage.ledger import Ledger  # noqa: F401\n")
    settings = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    config = tmp_path / "contracts.ini"
    config.write_text(as_ini(settings, "faceedit_bench_violator", "faceedit_bench_violator"))
    result = lint(tmp_path, config, pythonpath=tmp_path)
    assert result.returncode != 0
    assert "faceedit_bench.storage.ledger -> faceedit_bench.run.engine" in result.stdout
    assert "faceedit_bench_violator is not allowed to import faceedit_bench.storage" in result.stdout


# -- plugin tests import the core only through the public API and faceedit_bench.testing --------------------

#: What a plugin's tests may import from the core: the public API (both audiences), the contract mixins and test
#: harness, and the root package (``hookimpl``, ``__file__``). Plugin tests are not importable packages (an
#: ``__init__.py`` would make every plugin's ``tests`` clash with the repository's), so import-linter cannot see
#: them; this walk of their syntax trees holds them to the same rule, function-level imports included.
PLUGIN_TEST_ALLOWED = ("faceedit_bench.api", "faceedit_bench.testing")


def _is_core_module(name: str) -> bool:
    core = ROOT / "faceedit_bench"
    return (core / name).is_dir() or (core / f"{name}.py").is_file()


def private_core_imports(source: str) -> list[tuple[int, str]]:
    """``(line, module)`` of every import of a core module other than the allowed ones, at any depth."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            # ``from faceedit_bench import records`` imports a module; ``import hookimpl`` a name of the root
            modules = [node.module] if node.module != "faceedit_bench" else [
                f"faceedit_bench.{alias.name}" for alias in node.names if _is_core_module(alias.name)]
        else:
            continue
        for module in modules:
            inside = module.startswith("faceedit_bench.")
            if inside and not any(module == a or module.startswith(f"{a}.") for a in PLUGIN_TEST_ALLOWED):
                found.append((node.lineno, module))
    return found


def test_plugin_tests_import_the_core_only_through_the_api_and_testing():
    broken = [f"{path.relative_to(ROOT)}:{line} imports {module}"
              for path in sorted(ROOT.glob("plugins/*/tests/**/*.py"))
              for line, module in private_core_imports(path.read_text(encoding="utf-8"))]
    assert not broken, "plugin tests import private core modules (export what they need from faceedit_bench.api " \
                       "or faceedit_bench.testing, documented):\n" + "\n".join(broken)


def test_the_plugin_test_check_sees_every_form_of_import():
    source = ("import faceedit_bench.run.engine\nfrom faceedit_bench.records import Outcome\n"
              "from faceedit_bench import records\nfrom faceedit_bench import hookimpl\n"
              "from faceedit_bench.api import Outcome\nfrom faceedit_bench.testing import EditorContract\n"
              "from faceedit_bench.api.sections import ReportSection\n"
              "def later():\n    from faceedit_bench.plugin.manager import load_plugins\n")
    assert private_core_imports(source) == [(1, "faceedit_bench.run.engine"), (2, "faceedit_bench.records"),
                                            (3, "faceedit_bench.records"), (9, "faceedit_bench.plugin.manager")]
