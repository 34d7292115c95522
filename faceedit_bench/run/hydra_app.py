"""The Hydra entry point: ``python -m faceedit_bench editor=... testset=...``.

Hydra composes the experiment; this module turns the composed config into plain
typed objects and hands them to :func:`faceedit_bench.run.experiment.run_experiment`.
"""

from __future__ import annotations

import contextlib
import re
import sys
from typing import Any

from hydra.core.config_store import ConfigStore

from faceedit_bench.builtin.datasets._common import COMMON_PARAMS, FACE_PARAMS
from faceedit_bench.config import GROUP_KINDS, ComponentConf, conf_dir
from faceedit_bench.errors import UnknownComponentError
from faceedit_bench.plugin.manager import Plugins, current_plugins, using_plugins
from faceedit_bench.plugin.registry import suggest
from faceedit_bench.run.group_options import group_options, yaml_options
from faceedit_bench.run.section_settings import experiment_base


def register_configs(plugins: Plugins) -> None:
    """Store the schema (with every report section's settings at ``analysis.<name>``), plus a default entry
    for registered components without YAML."""
    cs = ConfigStore.instance()
    cs.store(name="base_config", node=experiment_base(plugins.sections()))
    # The parameters every dataset takes, defined once: dataset entries extend these (defaults list).
    cs.store(name="dataset_params", node=dict(COMMON_PARAMS))
    cs.store(name="face_dataset_params", node=dict(FACE_PARAMS))
    searchpath = plugins.searchpath()
    for group, kind in GROUP_KINDS.items():
        have_yaml = yaml_options(searchpath, group)
        for name in plugins.registry[kind].names():
            if name not in have_yaml:
                cs.store(group=group, name=name, node=ComponentConf(name=name))


def check_overrides(argv: list[str], plugins: Plugins) -> None:
    """Fail before any work when a group override names an option that does not exist."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    try:
        overrides = OverridesParser.create().parse_overrides([a for a in argv if not a.startswith("-")])
    except Exception:
        return  # Hydra reports malformed overrides itself, with its own clear message
    options = group_options(plugins)
    for override in overrides:
        group = override.key_or_group.lstrip("+~")
        if group not in options or override.is_delete():
            continue
        values = override.sweep_string_iterator() if override.is_sweep_override() else [override.value()]
        for value in values:
            if isinstance(value, str) and value not in options[group]:
                raise UnknownComponentError(group, value, options[group], suggest(value, options[group]),
                                            broken=plugins.failed)


#: ``run.dry_run=true`` on the command line (``faceedit-bench plan`` adds it): the plan only (run/plan.py).
HELP_FLAGS = frozenset({"--help", "-h", "--hydra-help"})
_DRY_RUN = re.compile(r"^(\+\+|\+)?run\.dry_run=(true|True|yes|1)$")


def dry_run_requested(argv: list[str]) -> bool:
    return any(_DRY_RUN.match(a) for a in argv)


def build_experiment(cfg: Any, plugins: Plugins) -> Any:
    """The experiment of a single run (imported here: ``--help`` and the other showing commands need none
    of what running an experiment imports)."""
    from faceedit_bench.run.experiment import build_experiment as build

    return build(cfg, plugins)


def main() -> None:
    import logging

    from faceedit_bench.run.composition import composing_once

    # A log file on a full disk (Hydra's job log) prints no "--- Logging error ---": the run says what failed.
    logging.raiseExceptions = False
    plugins = current_plugins()
    # The run's set is the one in use for all it calls (test sets, presets, samples, trackers): one plugin set.
    with using_plugins(plugins), composing_once():  # the checks' composition serves Hydra's two of the same config
        _check_and_run(plugins)


def _check_and_run(plugins: Plugins) -> None:
    import hydra

    from faceedit_bench.errors import FaceEditBenchError
    from faceedit_bench.execution.offline import no_provider_calls
    from faceedit_bench.run.preflight import check_command
    from faceedit_bench.run.signals import exit_code, stopping_on_signals

    dry_run = dry_run_requested(sys.argv[1:])
    try:
        with stopping_on_signals(), (no_provider_calls("a plan", "none is needed") if dry_run else contextlib.nullcontext()):
            check_overrides(sys.argv[1:], plugins)
            register_configs(plugins)
            # Every setting is checked (and a single run's experiment built) before Hydra creates its folder.
            checked = check_command(sys.argv[1:], plugins, build_experiment)
            if dry_run:  # the plan, built without keys; Hydra never runs
                from faceedit_bench.run.plan import print_plan

                print_plan(checked.experiment)
                sys.exit(0)
    except FaceEditBenchError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt as stop:
        print("\nStopped before the run started; nothing was written.", file=sys.stderr)
        sys.exit(exit_code(stop))
    sys.argv[1:] = checked.argv

    def task(cfg: Any) -> None:
        from faceedit_bench.plugin.payloads import run_title
        from faceedit_bench.report.summary import format_summary
        from faceedit_bench.run.experiment import run_experiment
        from faceedit_bench.run.multirun import current_job, job_log, record_job
        from faceedit_bench.run.signals import stopped_by

        job = current_job()
        try:
            with stopping_on_signals():  # SIGTERM (SLURM, timeout) and SIGHUP stop the run as Ctrl-C does
                exp = checked.take(cfg) or build_experiment(cfg, plugins)
                if exp.conf.run.dry_run:  # set by a preset or a sweep's job: the plan, and no call
                    from faceedit_bench.run.plan import print_plan

                    print_plan(exp)
                    return
                report = run_experiment(exp, plugins)
        except FaceEditBenchError as exc:
            print(f"Error: {exc}", file=sys.stderr)
            job_log.error("Error: %s", exc)
            # Not into a job folder that was deleted or moved (with its workspace): it is not made anew to say so.
            if job.output_dir is None or job.output_dir.is_dir():
                with contextlib.suppress(OSError):  # a full disk or read-only place: the message above says so
                    record_job(job, status="failed", error=str(exc))
            if job.multirun:
                return  # the sweep goes on; its table shows this job as failed and the exit code says so
            sys.exit(2)
        except Exception as exc:
            if not job.multirun:
                raise
            # One broken job does not stop a sweep: the traceback goes to its log, the table shows it.
            job_log.error("job %s failed", job.num, exc_info=True)
            print(f"Error: {type(exc).__name__}: {exc} (traceback in {job.output_dir}/faceedit_bench.log)",
                  file=sys.stderr)
            record_job(job, status="failed", error=f"{type(exc).__name__}: {exc}")
            return
        except KeyboardInterrupt as stop:
            print(f"\n{stopped_by(stop)} Every finished step is kept in {cfg.run.workspace}; run the same "
                  "command again to resume where this run stopped.", file=sys.stderr)
            sys.exit(exit_code(stop))  # 128 + the signal: 130 for Ctrl-C, 143 for SIGTERM
        # Hydra's job folder (hydra.run.dir, or the sweep's job dir) points to the run's outputs.
        record_job(job, status="complete" if report["run"]["complete"] else "stopped", title=run_title(exp.info),
                   run_dir=exp.info.output_dir, report=report, summary=format_summary(report, exp.info.output_dir))

    app = hydra.main(version_base="1.3", config_path=str(conf_dir()), config_name="config")(task)
    if not HELP_FLAGS.isdisjoint(sys.argv[1:]):
        from faceedit_bench.report.fit import fitted_stdout

        with fitted_stdout():  # Hydra's help lists a group's options on one line, however many
            app()
    else:
        app()
