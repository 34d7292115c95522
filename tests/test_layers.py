"""The layer contracts of pyproject.toml hold (lint-imports), and a break of either is caught."""

from __future__ import annotations

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
