"""``PluginDistributionContract``: the packaging checks every plugin distribution should pass."""

from __future__ import annotations

import importlib
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

from faceedit_bench.run.components import parameter_defaults


class PluginDistributionContract:
    """Checks every plugin distribution should pass: its built wheel carries the entry point,
    the code and the config entry; it is found through its entry point like any third-party
    plugin; and its config entry lists every factory parameter with the same default and a
    comment above it. Subclass and set the class attributes."""

    plugin_root: Path  # the directory holding the plugin's pyproject.toml
    distribution: str  # e.g. "faceedit-bench-dlib"
    module: str  # e.g. "faceedit_bench_dlib"
    group: str  # Hydra config group, e.g. "embedder"
    kind: str  # registry kind, e.g. "embedders"
    component: str  # registered name, also the config-entry name
    entry_point: str = ""  # the plugin's entry-point name when it differs from ``component``
    dependencies: tuple[str, ...] = ()

    @property
    def plugin_name(self) -> str:
        return self.entry_point or self.component

    @property
    def config_path(self) -> str:
        return f"{self.module}/conf/{self.group}/{self.component}.yaml"

    @pytest.fixture(scope="class")
    @classmethod
    def wheel(cls, tmp_path_factory: Any) -> Path:
        out = tmp_path_factory.mktemp("wheel")
        subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out),
                        str(cls.plugin_root)], check=True, capture_output=True)
        (built,) = out.glob(f"{cls.module}-*.whl")
        return built

    def test_wheel_holds_entry_point_code_and_config(self, wheel: Path) -> None:
        with zipfile.ZipFile(wheel) as zf:
            names = set(zf.namelist())
            entry_points = zf.read(next(n for n in names if n.endswith(".dist-info/entry_points.txt"))).decode()
            metadata = zf.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
            conf = zf.read(self.config_path).decode()
        assert f"{self.module}/__init__.py" in names and f"{self.module}/conf/__init__.py" in names
        assert not any(n.endswith(".pyc") or "/tests/" in n for n in names)
        assert "[faceedit_bench]" in entry_points and f"{self.plugin_name} = {self.module}" in entry_points
        assert f"name: {self.component}" in conf
        for dep in ("faceedit-bench", *self.dependencies):
            assert f"Requires-Dist: {dep}" in metadata, dep

    def test_discovered_through_its_entry_point(self, wheel: Path, tmp_path: Path, monkeypatch: Any) -> None:
        from faceedit_bench.plugin.manager import load_plugins

        with zipfile.ZipFile(wheel) as zf:
            zf.extractall(tmp_path)
        monkeypatch.syspath_prepend(str(tmp_path))
        monkeypatch.setenv("FACEEDIT_BENCH_LOAD_PLUGINS", self.plugin_name)
        plugins = load_plugins()
        assert plugins.info[self.plugin_name].distribution == self.distribution
        registration = plugins.registry.get(self.kind, self.component)
        assert registration.provider == self.plugin_name and registration.description
        assert f"pkg://{self.module}.conf" in plugins.searchpath()

    def test_config_entry_matches_the_factory(self) -> None:
        import yaml

        from faceedit_bench.plugin.registry import Register, Registry

        module = importlib.import_module(self.module)
        registry = Registry()
        getattr(module, f"faceedit_register_{self.kind}")(register=Register(registry[self.kind], self.component))
        factory = registry.get(self.kind, self.component).load()
        lines = (self.plugin_root / self.config_path).read_text().splitlines()
        entry = yaml.safe_load("\n".join(lines))
        assert entry["name"] == self.component
        defaults = parameter_defaults(factory)
        params = entry.get("params") or {}
        assert set(params) == set(defaults), "every factory parameter, and only those, in the config entry"
        for name, value in params.items():
            default = list(defaults[name]) if isinstance(defaults[name], tuple) else defaults[name]
            assert value == default, f"{name}: config {value!r} != factory default {default!r}"
            line = next(i for i, t in enumerate(lines) if t.strip().startswith(f"{name}:"))
            assert lines[line - 1].strip().startswith("#"), f"param {name} has no comment above it"
