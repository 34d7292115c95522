"""Checks made before Hydra creates anything: every key and setting, the components' parameters, the
workspace and Hydra's output folder.

Hydra creates the run's folder (``hydra.run.dir``, by default inside the workspace) before it calls the
task, so a check made in the task would leave that folder behind. Two steps run earlier:

* :func:`check_command`, called by ``python -m faceedit_bench`` before Hydra: it composes the command's
  config with Hydra's compose API (each job of a multirun sweep: every value of every swept key at
  least once), refuses unknown keys with the closest known one, unset mandatory settings and invalid
  values; for a single run it also builds the experiment (every component, so a value a factory
  rejects is found now) and hands it to the task, which does not build it again.
* :class:`Preflight`, a Hydra callback (``hydra.callbacks.preflight`` in ``conf/config.yaml``), checks the
  workspace and Hydra's output folder of the config Hydra composed, before Hydra creates the folder.

Either way an invalid setting ends the command with one message, exit code 2, and nothing created.
"""

from __future__ import annotations

import contextlib
import copy
import io
import sys
from dataclasses import dataclass
from typing import Any

from hydra.core.hydra_config import HydraConfig
from hydra.experimental.callback import Callback
from omegaconf import DictConfig, OmegaConf, open_dict

from faceedit_bench.config import GROUP_KINDS
from faceedit_bench.errors import FaceEditBenchError
from faceedit_bench.plugin.manager import Plugins
from faceedit_bench.run.required import check_no_missing
from faceedit_bench.storage.workspace import check_writable_dir

#: Sections whose keys a plain ``key=value`` may add when the config entry does not list them (the
#: schema or the component's factory decides whether they are known).
VALUE_SECTIONS = frozenset({"run", "analysis", *GROUP_KINDS})
#: A sweep is checked with at most this many composed configs (each takes about 0.2 s).
MAX_CHECKED_JOBS = 40


@dataclass
class Preflighted:
    """What :func:`check_command` found: the arguments Hydra is to run with, and for a single run the
    experiment already built from the same config."""

    argv: list[str]
    config: Any = None  # the composed experiment (no hydra node), as a plain container
    experiment: Any = None

    def take(self, cfg: Any) -> Any:
        """The prebuilt experiment if ``cfg`` is the config it was built from (once), else None."""
        experiment, self.experiment = self.experiment, None
        if experiment is None or OmegaConf.to_container(cfg, resolve=False) != self.config:
            return None
        return experiment


def check_command(argv: list[str], plugins: Plugins, build: Any) -> Preflighted:
    """Check the command's config(s) before Hydra runs; raise :class:`FaceEditBenchError` for a bad
    setting. ``build(cfg, plugins)`` builds the experiment of a single run. Commands that only show
    something (``--help``, ``--cfg``, ``--info``) and configs this cannot compose are left to Hydra."""
    args = _hydra_args(argv)
    if args is None:
        return Preflighted(argv)
    jobs = _jobs(args.overrides, multirun=args.multirun)
    if not jobs:
        return Preflighted(argv)
    configs = _compose_all(jobs)
    if configs is None:  # a plain key=value the config entry lacks: compose again with it added (++)
        absent = _absent_keys(jobs)
        jobs = [[_added(o, absent) for o in job] for job in jobs]
        errors: list[Exception] = []
        configs = _compose_all(jobs, errors)
        if configs is None:
            check_value_types(errors[0])
            return Preflighted(argv)  # Hydra reports what it cannot compose, in its own words
        argv = [_added(a, absent) if a in args.overrides else a for a in argv]
    multirun = args.multirun or str(configs[0].hydra.mode) == "RunMode.MULTIRUN"
    for cfg in configs:
        HydraConfig.instance().set_config(cfg)  # ${hydra:...} and the preset's name
        experiment_cfg = _without_hydra(cfg)
        if multirun or _uses_run_time_values(experiment_cfg):
            check_settings(experiment_cfg, plugins)
            continue
        experiment = build(experiment_cfg, plugins)
        return Preflighted(argv, OmegaConf.to_container(experiment_cfg, resolve=False), experiment)
    return Preflighted(argv)


def check_settings(cfg: Any, plugins: Plugins) -> None:
    """What can be checked of one job's config without building its components."""
    from faceedit_bench.run.setting_keys import check_setting_keys  # reads the judges' settings: a run's import

    check_setting_keys(cfg, plugins)
    check_no_missing(cfg)
    try:
        OmegaConf.to_object(cfg)  # the schema's checks (config.py)
    except FaceEditBenchError:
        raise
    except Exception:  # noqa: BLE001 - e.g. an interpolation only the job can resolve: the job reports it
        return


def _hydra_args(argv: list[str]) -> Any:
    """Hydra's own reading of the command line, or None when it only shows something or is not ours."""
    from hydra._internal.utils import get_args_parser

    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            args = get_args_parser().parse_args(argv)
    except SystemExit:
        return None  # --version, or arguments Hydra refuses with its own message
    shows = args.help or args.hydra_help or args.cfg or args.info or args.shell_completion
    elsewhere = args.config_path or args.config_dir or args.experimental_rerun or args.config_name not in (
        None, "config")
    return None if shows or elsewhere else args


def _jobs(overrides: list[str], *, multirun: bool) -> list[list[str]]:
    """The override lists to check: the command's, or for a sweep its first job and, per swept key,
    a job for each further value (the others at their first value)."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    try:
        parsed = OverridesParser.create().parse_overrides(overrides)
    except Exception:  # noqa: BLE001 - Hydra reports a malformed override itself
        return []
    choices: list[list[str]] = []
    for override in parsed:
        key = override.get_key_element()
        if not override.is_sweep_override():
            # As typed: Hydra composes the same text again to run, and composing_once answers it with a copy.
            choices.append([override.input_line or f"{key}={override.get_value_element_as_str()}"])
        elif multirun and override.is_discrete_sweep():
            choices.append([f"{key}={value}" for value in override.sweep_string_iterator()])
        else:
            return []  # a sweep without -m (Hydra refuses it), or one only its sweeper can draw
    first = [c[0] for c in choices]
    jobs = [first] + [first[:i] + [v] + first[i + 1:] for i, c in enumerate(choices) for v in c[1:]]
    return jobs[:MAX_CHECKED_JOBS]


def _compose_all(jobs: list[list[str]], errors: list[Exception] | None = None) -> list[DictConfig] | None:
    """The composed configs, or None (the error appended to ``errors``)."""
    from hydra import compose, initialize_config_dir

    from faceedit_bench.config import conf_dir

    configs = []
    try:
        with initialize_config_dir(config_dir=str(conf_dir()), version_base="1.3", job_name="faceedit_bench"):
            for job in jobs:
                configs.append(compose(config_name="config", overrides=job, return_hydra_config=True))
    except Exception as exc:  # noqa: BLE001 - whatever Hydra cannot compose, Hydra reports when it runs
        if errors is not None:
            errors.append(exc)
        return None
    return configs


#: What OmegaConf names a type in "could not be converted to <type>", as the user is told what to give.
_TYPES = {"Integer": "a whole number", "Float": "a number", "Boolean": "true or false", "String": "text"}


def check_value_types(error: Exception) -> None:
    """Raise :class:`ConfigError` (one line, exit 2) for a value of the wrong type (``run.max_faces=abc``),
    which Hydra would report as a composition error with its traceback advice."""
    from omegaconf.errors import ValidationError

    from faceedit_bench.setting_checks import reject

    cause = error if isinstance(error, ValidationError) else error.__cause__
    if not isinstance(cause, ValidationError) or not getattr(cause, "full_key", None):
        return
    message = str(getattr(cause, "msg", "") or cause).splitlines()[0]
    wanted = message.rsplit(" to ", 1)[-1].strip() if "could not be converted to" in message else ""
    if "not a valid bool" in message:
        wanted = "Boolean"
    allowed = _TYPES.get(wanted) or (f"a value of type {wanted}" if wanted else message.rstrip("."))
    reject(cause.full_key, getattr(cause, "value", "?"), allowed)


def _settable(override: str) -> str | None:
    """The key of a plain ``key=value`` in a value section (``run.max_faces``, ``editor.params.x``) or at the
    top (``max_faces``: the checks then say where it belongs), else None."""
    key = override.partition("=")[0]
    if key[:1] in "+~" or "@" in key or "/" in key or ("." in key and key.split(".", 1)[0] not in VALUE_SECTIONS):
        return None
    return key


def _absent_keys(jobs: list[list[str]]) -> set[str]:
    """The keys of plain ``key=value`` overrides that the config composed without them lacks."""
    keys = {k for job in jobs for o in job if (k := _settable(o))}
    base = _compose_all([[o for o in jobs[0] if not _settable(o)]])
    if base is None:
        return keys
    return {k for k in keys if OmegaConf.select(base[0], k, default=_ABSENT, throw_on_missing=False) is _ABSENT}


_ABSENT = object()


def _added(override: str, absent: set[str]) -> str:
    """``run.max_face=1`` -> ``++run.max_face=1`` (set, or add when absent) for a key the config lacks, so
    that it reaches the checks (a typo, or a parameter the factory takes) instead of failing composition."""
    return f"++{override}" if _settable(override) in absent else override


def _without_hydra(cfg: DictConfig) -> DictConfig:
    experiment = copy.deepcopy(cfg)
    with open_dict(experiment):
        del experiment["hydra"]
    return experiment


def _uses_run_time_values(cfg: DictConfig) -> bool:
    """Whether the config refers to values only Hydra's run sets (``${hydra:runtime.output_dir}``, the
    time): then the experiment is built in the task, from those values."""
    text = OmegaConf.to_yaml(cfg)
    return "${hydra:" in text or "${now:" in text


# -- the Hydra callback ------------------------------------------------------------------------


def check_config(config: DictConfig, *, output_key: str) -> None:
    """Raise :class:`FaceEditBenchError` for an invalid setting or an unwritable workspace or
    Hydra output folder. Other problems are left to the run, which reports them itself."""
    HydraConfig.instance().set_config(config)  # so that ${hydra:...} in the user's config resolves
    experiment = _without_hydra(config)
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
