"""A config composed once per command: Hydra's later compositions of it are copies equal to a composition."""

from __future__ import annotations

from hydra import compose, initialize_config_dir
from hydra._internal.config_loader_impl import ConfigLoaderImpl
from hydra.core.global_hydra import GlobalHydra
from hydra.types import RunMode
from omegaconf import OmegaConf

from faceedit_bench.run.composition import composing_once
from faceedit_bench.run.hydra_app import conf_dir, register_configs

OVERRIDES = ["editor=nano_banana", "testset=pose", "run.max_faces=2"]


def test_hydra_gets_copies_equal_to_its_own_compositions_and_composes_once(plugins, monkeypatch):
    register_configs(plugins)
    made = []
    impl = ConfigLoaderImpl._load_configuration_impl
    monkeypatch.setattr(ConfigLoaderImpl, "_load_configuration_impl",
                        lambda self, *a, **k: made.append(a) or impl(self, *a, **k))
    with initialize_config_dir(config_dir=str(conf_dir()), version_base="1.3", job_name="faceedit_bench"):
        hydra = GlobalHydra.instance().hydra

        def yaml(overrides, run_mode=RunMode.RUN):
            return OmegaConf.to_yaml(hydra.compose_config("config", overrides, run_mode))

        plain, to_run = yaml(OVERRIDES), yaml([*OVERRIDES, "hydra.mode=RUN"])  # composed, as Hydra does
        assert len(made) == 2 and plain != to_run
        made.clear()
        with composing_once():
            first = compose(config_name="config", overrides=OVERRIDES, return_hydra_config=True)  # the checks'
            first.run.max_faces = 99  # a copy was handed out: what is kept does not change
            assert hydra.get_mode("config", OVERRIDES) is None  # Hydra reads the mode, then runs with it set
            assert yaml(OVERRIDES) == plain
            assert yaml([*OVERRIDES, "hydra.mode=RUN"]) == to_run
            assert yaml(OVERRIDES, RunMode.MULTIRUN) == plain
            assert len(made) == 1
            yaml([*OVERRIDES, "run.max_sessions=1"])  # another config is composed
            assert len(made) == 2
        yaml(OVERRIDES)  # outside, every request composes
        assert len(made) == 3
