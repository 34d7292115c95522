"""Checks made before Hydra starts a run: every setting of the schema and the workspace.

Registered as a Hydra callback (``hydra.callbacks.preflight`` in ``conf/config.yaml``). Its
``on_run_start`` / ``on_multirun_start`` run after composition and before Hydra creates the
run's output folder inside the workspace, so an invalid value or an unwritable workspace ends
the command with one message and exit code 2, and nothing at all is created.
"""

from __future__ import annotations

import copy
import sys
from typing import Any

from hydra.core.hydra_config import HydraConfig
from hydra.experimental.callback import Callback
from omegaconf import DictConfig, OmegaConf, open_dict

from faceedit_bench.errors import FaceEditBenchError
from faceedit_bench.storage.workspace import check_writable_dir


def check_config(config: DictConfig, *, output_key: str) -> None:
    """Raise :class:`FaceEditBenchError` for an invalid setting or an unwritable workspace or
    Hydra output folder. Other problems are left to the run, which reports them itself."""
    HydraConfig.instance().set_config(config)  # so that ${hydra:...} in the user's config resolves
    experiment = copy.deepcopy(config)
    with open_dict(experiment):
        del experiment["hydra"]
    try:
        conf: Any = OmegaConf.to_object(experiment)  # the schema's __post_init__ checks (config.py)
    except FaceEditBenchError:
        raise
    except Exception:  # noqa: BLE001 - e.g. a missing mandatory value: the run names it in its own words
        return
    workspace = check_writable_dir(conf.run.workspace)
    output = OmegaConf.select(config, output_key, default=None)
    if output is not None:
        check_writable_dir(output, "Hydra output folder",
                           f"Choose another with {output_key}=/path/to/dir (default: inside {workspace}).")


class Preflight(Callback):
    def on_run_start(self, config: DictConfig, **kwargs: Any) -> None:
        _or_exit(config, "hydra.run.dir")

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        _or_exit(config, "hydra.sweep.dir")


def _or_exit(config: DictConfig, output_key: str) -> None:
    try:
        check_config(config, output_key=output_key)
    except FaceEditBenchError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        sys.exit(2)
