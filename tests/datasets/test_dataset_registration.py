from __future__ import annotations

import inspect
import json

import pluggy

from faceedit_bench.builtin import datasets
from faceedit_bench.plugin import hookspecs
from faceedit_bench.plugin.protocols import Dataset
from faceedit_bench.plugin.registry import Register, Registry

COMMON = {"limit", "max_references", "min_base_fss", "single_face_only"}


def _registry() -> Registry:
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    pm.register(datasets, name="builtin_datasets")
    pm.check_pending()
    reg = Registry()
    pm.hook.faceedit_register_datasets(register=Register(reg["datasets"], "builtin_datasets"))
    return reg


def test_every_format_is_registered_lazily_and_loads():
    reg = _registry()
    assert reg["datasets"].names() == ["celeba", "celebset", "fairface", "fairface_grid", "folder", "sample"]
    for name in reg["datasets"].names():
        entry = reg.get("datasets", name)
        assert isinstance(entry.target, str) and entry.description
        cls = entry.load()
        params = inspect.signature(cls).parameters
        assert COMMON <= set(params), name
        assert all(p.kind is p.KEYWORD_ONLY or p.kind is p.POSITIONAL_OR_KEYWORD for p in params.values())
        for param in params:  # every param is documented for the Hydra config
            assert f":param {param}:" in (cls.__doc__ or ""), (name, param)


def test_created_datasets_satisfy_the_protocol(make_folder, tmp_path):
    reg = _registry()
    ds = reg.create("datasets", "folder", {"root": str(make_folder([("a.jpg", "a", "base", "", "", "")]))})
    assert isinstance(ds, Dataset)
    json.dumps(ds.describe())  # plain values only
    sample = reg.create("datasets", "sample", {"cache_dir": str(tmp_path / "cache"), "limit": 1})
    assert isinstance(sample, Dataset) and json.dumps(sample.describe())
