"""The run report's schema as the builtin plugins make it (the core's and every builtin report section's), and
as the installed plugins make it."""

from __future__ import annotations

import copy
import functools
from typing import Any


@functools.cache
def _schema() -> dict[str, Any]:
    from faceedit_bench.plugin.manager import load_plugins
    from faceedit_bench.report.report_schema import run_report_schema

    return run_report_schema(load_plugins(entry_points=False).sections())


def builtin_report_schema() -> dict[str, Any]:
    return copy.deepcopy(_schema())  # a test may change its copy


@functools.cache
def _installed() -> dict[str, Any]:
    from faceedit_bench.plugin.manager import load_plugins
    from faceedit_bench.report.report_schema import run_report_schema

    return run_report_schema(load_plugins().sections())


def installed_report_schema() -> dict[str, Any]:
    """The schema with every installed plugin's sections too (a protocol package's, e.g. plugins/audit)."""
    return copy.deepcopy(_installed())
