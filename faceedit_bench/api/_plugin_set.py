"""The public functions that reach the installed plugins or the report code (served by the topic modules of
:mod:`faceedit_bench.api`): a registered object or component by kind and name, a package's template."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def registered(kind: str, name: str) -> Any:
    """The object registered as ``name`` of ``kind`` (``datasets``, ``judges``, ``question_sets`` ...) by the
    installed plugins; an unknown name raises a ConfigError listing the known ones."""
    from faceedit_bench.plugin.manager import current_plugins

    return current_plugins().registry.get(kind, name).load()


def create_registered(kind: str, name: str, params: Mapping[str, Any] | None = None) -> Any:
    """The component registered as ``name`` of ``kind`` (``judges``, ``datasets`` ...) made with ``params``, for a
    command outside a run (e.g. a judge from ``--judge openai -p model=gpt-4o``). The parameters are checked as
    a run checks ``<kind>.params``: an unknown one is a ConfigError naming the closest accepted name, and so is
    a required one left out."""
    from faceedit_bench.config import ComponentConf
    from faceedit_bench.run.components import check_params

    factory = registered(kind, name)
    given = dict(params or {})
    check_params(kind.removesuffix("s"), ComponentConf(name, given), factory)
    return factory(**given)


def render_template(package: str, template: str, folder: str = "templates", **context: Any) -> str:
    """A template shipped in ``package``'s ``folder``, rendered with autoescape on and the pages' filters
    (``num``, ``ci``, ``p``, ``pct``, ``value``, ``usd``, ``version``) and ``kv`` (for a standalone page of a
    protocol's own; a section's part of report.html is :class:`~faceedit_bench.api.sections.SectionHtml`)."""
    from faceedit_bench.report.templates import package_environment

    return package_environment(package, folder).get_template(template).render(**context)
