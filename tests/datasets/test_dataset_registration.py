from __future__ import annotations

import inspect
import json
from pathlib import Path

import pluggy
import pytest

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
    assert reg["datasets"].names() == ["celeba", "celebset", "fairface", "folder", "sample"]
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


# -- the common dataset parameters (issue 20, item 8) ------------------------------------------------------

DATASET_ENTRIES = sorted(p.stem for p in (Path(__file__).resolve().parents[2] / "conf" / "dataset").glob("*.yaml"))


@pytest.mark.parametrize("entry", DATASET_ENTRIES)
def test_every_dataset_entry_lists_the_common_parameters_with_its_factorys_defaults(compose, plugins, entry):
    from faceedit_bench.builtin.datasets._common import COMMON_PARAMS, FACE_PARAMS

    dataset = compose(f"dataset={entry}").dataset
    factory = plugins.registry.get("datasets", dataset.name).load()
    defaults = {n: p.default for n, p in inspect.signature(factory).parameters.items()}
    common = FACE_PARAMS if getattr(factory, "measures_identity", True) else COMMON_PARAMS
    assert set(common) <= set(defaults), f"{dataset.name} does not take {set(common) - set(defaults)}"
    assert {k: dataset.params[k] for k in common} == {k: defaults[k] for k in common}


def test_the_common_parameters_are_set_without_plus_on_a_folder_dataset(compose, plugins, make_folder):
    from faceedit_bench.config import ComponentConf
    from faceedit_bench.run.components import create_component

    root = make_folder([("a.jpg", "a", "base", "", "", ""), ("b.jpg", "b", "base", "", "", "")])
    # README's recipe, on the folder dataset: plain overrides, as for any dataset
    cfg = compose("dataset=folder", f"dataset.params.root={root}", "dataset.params.min_base_fss=0.5",
                  "dataset.params.limit=1", "dataset.params.single_face_only=false")
    folder, info = create_component(plugins, "dataset", ComponentConf("folder", dict(cfg.dataset.params)))
    assert (folder.min_base_fss, folder.limit, folder.single_face_only) == (0.5, 1, False)
    assert info.description["n_faces"] == 1


