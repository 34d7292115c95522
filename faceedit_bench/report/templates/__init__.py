"""Jinja2 templates of the HTML pages (run report, run comparison) and the number formats they share.

Every page is rendered with autoescape on: editor names, instructions and reasons come from
users and providers, so no string reaches the page unescaped.
"""

from __future__ import annotations

import base64
import functools
import math
from collections.abc import Mapping
from typing import Any

from jinja2 import (
    BaseLoader,
    BytecodeCache,
    ChoiceLoader,
    Environment,
    FileSystemBytecodeCache,
    PackageLoader,
    StrictUndefined,
)

from faceedit_bench.records import version_text

MISSING = "n/a"


def fmt_num(value: Any) -> str:
    """A number as a researcher reads it: ints exactly, floats to 4 significant digits, ``None`` as n/a."""
    if value is None:
        return MISSING
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            return str(value)  # shown as it is (nan, inf): never hidden behind a default
        if abs(value) >= 1000:
            return f"{value:.1f}"
        return f"{value:.4g}"
    return str(value)


def fmt_value(value: Any) -> str:
    """Any JSON value, compactly: mappings as ``k: v; ...``, lists as ``[a, b]``."""
    if isinstance(value, Mapping):
        return "; ".join(f"{k}: {fmt_value(v)}" for k, v in value.items()) or "{}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(fmt_value(v) for v in value) + "]"
    return fmt_num(value)


def fmt_ci(summary: Mapping[str, Any] | None) -> str:
    """``mean [ci_low, ci_high]``; says why when there is no mean or no interval."""
    if not summary or summary.get("mean") is None:
        return MISSING
    mean = fmt_num(summary["mean"])
    if summary.get("ci_low") is None or summary.get("ci_high") is None:
        ids = summary.get("n_identities")
        why = f"{ids} identity" if ids is not None and ids < 2 else f"n={summary.get('n', '?')}"
        return f"{mean} (no CI: {why})"
    return f"{mean} [{fmt_num(summary['ci_low'])}, {fmt_num(summary['ci_high'])}]"


def fmt_pct(count: int | float | None, total: int | float | None) -> str:
    if count is None or not total:
        return MISSING
    return f"{100.0 * count / total:.1f}%"


def fmt_usd(value: float | None) -> str:
    if value is None:
        return "unknown (no price table)"
    return f"${value:,.2f}" if abs(value) >= 0.1 else f"${value:.2g}"


#: p-values below this are shown as "< 0.001": a permutation test's smallest p says how many resamples were
#: drawn, not that the evidence is a thousand times stronger, and 1e-05 next to 0.04 reads as a different kind.
P_FLOOR = 0.001


def fmt_p(value: float | None) -> str:
    """A p-value to three decimals, ``< 0.001`` below that, n/a when none was computed."""
    if value is None:
        return MISSING
    value = float(value)
    if not math.isfinite(value):
        return str(value)
    return f"< {P_FLOOR:g}" if value < P_FLOOR else f"{value:.3f}"


def fmt_p_equation(value: float | None) -> str:
    """``p = 0.012``, ``p < 0.001`` or ``p n/a``: for running text and table sub-lines."""
    text = fmt_p(value)
    return f"p {text}" if text.startswith("<") or text == MISSING else f"p = {text}"


def fmt_counts(counts: Mapping[str, Any] | None) -> str:
    """``ok: 58, refused: 2`` (``none`` when empty): the pages' ``kv``."""
    return ", ".join(f"{k}: {v}" for k, v in counts.items()) if counts else "none"


#: The filters every page template (and every report section's template) may use.
FILTERS = {"num": fmt_num, "value": fmt_value, "ci": fmt_ci, "pct": fmt_pct, "usd": fmt_usd, "p": fmt_p,
           "version": version_text}
CORE = ("faceedit_bench.report", "templates")


def fmt(value: Any, kind: str = "num", *args: Any) -> str:
    """``value`` as the pages show it, in the format of the template filter named ``kind``: ``num`` (ints
    exactly, floats to 4 significant digits, None as n/a), ``ci`` (a summary's ``mean [ci_low, ci_high]``, or why
    there is none), ``p`` (a p-value to three decimals, ``< 0.001`` below), ``value`` (any JSON value), ``pct``
    (``fmt(count, "pct", total)``), ``usd``, ``version``: for a console table or a page built in Python."""
    if kind not in FILTERS:
        raise ValueError(f"unknown format {kind!r}; the formats are {', '.join(FILTERS)}")
    return FILTERS[kind](value, *args)


def png_data_uri(data: bytes | None) -> str | None:
    """PNG bytes (a section's plot, ``plot_png``) as the ``src`` of an ``<img>``; None stays None."""
    return None if data is None else "data:image/png;base64," + base64.b64encode(data).decode("ascii")


@functools.cache
def _compiled_templates() -> BytecodeCache | None:
    """Jinja's per-user cache of compiled templates (keyed by each template's source, written atomically):
    compiling the report's templates costs about 0.1 s of every run, reading them back 2 ms. None where the
    cache folder cannot be made safely (then templates are compiled each time)."""
    try:
        return FileSystemBytecodeCache()
    except RuntimeError:
        return None


def _environment(loader: BaseLoader) -> Environment:
    env = Environment(loader=loader, autoescape=True, undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                      keep_trailing_newline=True, bytecode_cache=_compiled_templates())
    env.filters.update(FILTERS)
    env.filters["data_uri"] = png_data_uri
    env.globals["kv"] = fmt_counts
    return env


@functools.cache
def environment() -> Environment:
    return _environment(PackageLoader(*CORE))


@functools.cache
def package_environment(package: str, folder: str = "templates") -> Environment:
    """The environment of a package's templates (a report section's), with the core's templates behind them."""
    if (package, folder) == CORE:
        return environment()
    return _environment(ChoiceLoader([PackageLoader(package, folder), PackageLoader(*CORE)]))


def render(template: str, **context: Any) -> str:
    return environment().get_template(template).render(**context)


@functools.cache
def stylesheet() -> str:
    """style.css: the one look of every page the project writes (report.html, ``compare --html``, the leaderboard,
    ``results --plot``, the web app). Each page inlines it, so a page stays one file."""
    from importlib import resources

    return (resources.files(CORE[0]) / CORE[1] / "style.css").read_text(encoding="utf-8")
