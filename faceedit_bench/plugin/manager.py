"""Loading plugins: builtins first, then the ``faceedit_bench`` entry points.

Environment variables (read at load time):

- ``FACEEDIT_BENCH_LOAD_PLUGINS``: comma-separated allow-list of entry-point or
  distribution names; when set, only those external plugins load (empty: none).
- ``FACEEDIT_BENCH_DISABLE_PLUGINS``: comma-separated names never to load.

A plugin that fails to import, implements a hook that does not exist (a misspelled name) or
fails while registering (an exception, a malformed registration) is *broken*: it is named in a
warning, unregistered with everything it registered, and listed by ``faceedit-bench plugins``
with the reason; every other plugin and command works as before. Asking for a name only a broken
plugin could give is a configuration error that names it. Two distributions publishing one
entry-point name, or two plugins registering one component name, are recorded as clashes and reported.
"""

from __future__ import annotations

import difflib
import functools
import importlib
import importlib.metadata as md
import os
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import pluggy

from faceedit_bench import __version__
from faceedit_bench.plugin import hookspecs
from faceedit_bench.plugin.registry import KINDS, Register, Registry
from faceedit_bench.plugin.sections import ReportSection, check_section

ENTRY_POINT_GROUP = "faceedit_bench"
BUILTIN_PROVIDER = "faceedit-bench"

#: Builtin plugins, registered like external ones (pytest, datasette, llm do the same).
DEFAULT_PLUGINS = (
    "faceedit_bench.builtin.editors",
    "faceedit_bench.builtin.datasets",
    "faceedit_bench.builtin.testsets",
    "faceedit_bench.builtin.metrics",
    "faceedit_bench.builtin.judge_metrics",
    "faceedit_bench.builtin.image_metrics",
    "faceedit_bench.builtin.trackers",
    "faceedit_bench.builtin.reproductions",
    "faceedit_bench.builtin.report_parts",
)


class PluginLoadWarning(UserWarning):
    """A plugin could not be loaded; faceedit_bench goes on without it."""


@dataclass(frozen=True)
class PluginInfo:
    name: str  # entry-point name, or module name for builtins
    distribution: str
    version: str
    module: str


@dataclass
class Plugins:
    """The loaded plugin manager with what each plugin registered."""

    pm: pluggy.PluginManager
    registry: Registry
    info: dict[str, PluginInfo] = field(default_factory=dict)
    blocked: list[str] = field(default_factory=list)
    entry_point_clashes: dict[str, list[str]] = field(default_factory=dict)
    #: Report sections already checked (name -> the section): a launch lists them several times, and checking
    #: one parses its HTML template (13 sections: about 0.08 s of CPU a listing).
    _checked_sections: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def failed(self) -> dict[str, str]:
        """The broken plugins, skipped: plugin name -> why."""
        return self.registry.broken

    def provider_version(self, provider: str) -> str:
        info = self.info.get(provider)
        return info.version if info else "unknown"

    def add(self, plugin: Any, name: str, distribution: str = "local", version: str = "0") -> None:
        """Register a plugin object that is not installed (tests, notebooks, inline plugins)."""
        self.pm.register(plugin, name=name)
        self.info[name] = PluginInfo(name, distribution, version, getattr(plugin, "__name__", name))
        if _check_hooks(self, name, distribution):
            _run_registrations(self, only=name)

    def mark_broken(self, name: str, distribution: str, reason: str) -> None:
        """Skip plugin ``name`` from now on: unregistered with all it registered, named in a warning and in
        :attr:`failed` (so ``faceedit-bench plugins`` lists it, and asking for what it would give says why)."""
        self.registry.broken[name] = reason
        self.registry.remove_provider(name)
        if self.pm.get_plugin(name) is not None:
            self.pm.unregister(name=name)
        self.info.pop(name, None)
        warnings.warn(f"Plugin {name!r} ({distribution}) is broken and was skipped: {reason}. Every other plugin "
                      f"works; fix or upgrade {distribution}, or block it with FACEEDIT_BENCH_DISABLE_PLUGINS={name}.",
                      PluginLoadWarning, stacklevel=3)

    def searchpath(self) -> list[str]:
        return [p for paths in self.pm.hook.faceedit_config_searchpath() for p in paths]

    def fidelity_tables(self) -> list[Any]:
        """The fidelity tables (YAML files) every plugin provides (``faceedit_fidelity_tables``)."""
        return [t for tables in self.pm.hook.faceedit_fidelity_tables() for t in tables]

    def sections(self) -> tuple[ReportSection, ...]:
        """Every registered report section, in registration order (builtins first, then plugins by name).
        A name two plugins register raises :class:`~faceedit_bench.errors.ClashError`: both would write it."""
        table = self.registry["sections"]
        found = []
        for name in list(table.entries):
            registration = table.get(name)
            try:
                section = registration.load()
                if self._checked_sections.get(name) is not section:
                    check_section(name, section)
                    self._checked_sections[name] = section
            except Exception as exc:  # a malformed section breaks only the plugin that registered it
                self.mark_broken(registration.provider, self._distribution(registration.provider),
                                 f"report section {name!r}: {type(exc).__name__}: {exc}")
                continue
            found.append(section)
        return tuple(found)

    def _distribution(self, name: str) -> str:
        info = self.info.get(name)
        return f"{info.distribution} {info.version}" if info else name

    def describe(self) -> list[dict[str, Any]]:
        """A JSON-ready listing for ``faceedit-bench plugins`` (its sections loaded first: a broken one is listed
        as broken, not as working)."""
        self.sections()
        rows = []
        for name, info in sorted(self.info.items()):
            registers = {
                kind: sorted(n for n, regs in table.entries.items() if any(r.provider == name for r in regs))
                for kind, table in self.registry.tables.items()
            }
            hooks = sorted(h.name for h in self.pm.get_hookcallers(self.pm.get_plugin(name)) or [])
            rows.append(
                {
                    "name": name,
                    "distribution": info.distribution,
                    "version": info.version,
                    "module": info.module,
                    "hooks": hooks,
                    "registers": {k: v for k, v in registers.items() if v},
                }
            )
        return rows


def _names_from_env(var: str) -> set[str] | None:
    raw = os.environ.get(var)
    if raw is None:
        return None
    return {n.strip() for n in raw.split(",") if n.strip()}


def _new_manager() -> pluggy.PluginManager:
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    return pm


def _load_builtins(plugins: Plugins) -> None:
    for module_name in DEFAULT_PLUGINS:
        module = importlib.import_module(module_name)
        plugins.pm.register(module, name=module_name)
        plugins.info[module_name] = PluginInfo(module_name, BUILTIN_PROVIDER, __version__, module_name)


def _load_entry_points(plugins: Plugins) -> None:
    allow = _names_from_env("FACEEDIT_BENCH_LOAD_PLUGINS")
    block = _names_from_env("FACEEDIT_BENCH_DISABLE_PLUGINS") or set()
    seen: dict[str, str] = {}
    for ep in sorted(md.entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        dist = ep.dist.name if ep.dist else "unknown"
        version = ep.dist.version if ep.dist else "unknown"
        if ep.name in seen:
            if seen[ep.name] != dist:
                plugins.entry_point_clashes.setdefault(ep.name, [seen[ep.name]]).append(dist)
                warnings.warn(
                    f"Plugin name {ep.name!r} is published by both {seen[ep.name]} and {dist}; "
                    f"only {seen[ep.name]} was loaded. Uninstall one of them.",
                    PluginLoadWarning,
                    stacklevel=3,
                )
            continue
        seen[ep.name] = dist
        if ep.name in block or dist in block or (allow is not None and not ({ep.name, dist} & allow)):
            plugins.blocked.append(ep.name)
            continue
        try:
            module = ep.load()
            plugins.pm.register(module, name=ep.name)
        except Exception as exc:  # a broken plugin must not take the others down
            plugins.mark_broken(ep.name, f"{dist} {version}", f"failed to load ({type(exc).__name__}: {exc})")
            continue
        plugins.info[ep.name] = PluginInfo(ep.name, dist, version, ep.value)
        _check_hooks(plugins, ep.name, f"{dist} {version}")


def _check_hooks(plugins: Plugins, name: str, distribution: str) -> bool:
    """False (and the plugin marked broken) when it implements a hook that does not exist: a misspelled
    name would otherwise never be called, or stop every command (pluggy's ``check_pending``)."""
    unknown = sorted(caller.name for caller in plugins.pm.get_hookcallers(plugins.pm.get_plugin(name)) or []
                     if not caller.has_spec() and any(not impl.optionalhook and impl.plugin_name == name
                                                      for impl in caller.get_hookimpls()))
    if not unknown:
        return True
    known = [n for n in dir(hookspecs) if n.startswith("faceedit_")]
    hints = [f"{hook}" + (f" (did you mean {close[0]}?)" if (close := difflib.get_close_matches(hook, known, 1))
                          else "") for hook in unknown]
    plugins.mark_broken(name, distribution, f"implements unknown hook(s) {', '.join(hints)}")
    return False


def _run_registrations(plugins: Plugins, only: str | None = None) -> None:
    """Call each plugin's registration hooks one by one, so every entry knows its provider."""
    for kind in KINDS:
        caller = getattr(plugins.pm.hook, f"faceedit_register_{kind}")
        for impl in caller.get_hookimpls():
            if only is not None and impl.plugin_name != only:
                continue
            if impl.plugin_name in plugins.failed:
                continue  # broken by an earlier registration hook: nothing more of it is taken
            register = Register(plugins.registry[kind], provider=impl.plugin_name)
            try:
                impl.function(register=register)
            except Exception as exc:
                plugins.mark_broken(impl.plugin_name, plugins._distribution(impl.plugin_name),
                                    f"failed while registering {kind} ({type(exc).__name__}: {exc})")
    for kind, clashes in plugins.registry.clashes().items():
        for name, providers in clashes.items():
            warnings.warn(
                f"{KINDS[kind]} {name!r} is registered by several plugins ({', '.join(providers)}); "
                "it cannot be used until one is removed or blocked.",
                PluginLoadWarning,
                stacklevel=3,
            )


def load_plugins(*, entry_points: bool = True) -> Plugins:
    """A fresh plugin manager with builtins and (optionally) installed plugins."""
    plugins = Plugins(pm=_new_manager(), registry=Registry())
    _load_builtins(plugins)
    if entry_points:
        _load_entry_points(plugins)
    _run_registrations(plugins)
    return plugins


@functools.lru_cache(maxsize=1)
def get_plugins() -> Plugins:
    """The installed plugins, loaded once per process on first use (never at import time): the plugin set of a
    command or run that was given no other. Code reads the set in use with :func:`current_plugins`."""
    return load_plugins()


#: The plugin set of the run, command or test in progress (:func:`using_plugins`).
_CURRENT: ContextVar[Plugins | None] = ContextVar("faceedit_bench_plugins", default=None)


@contextmanager
def using_plugins(plugins: Plugins) -> Iterator[Plugins]:
    """Make ``plugins`` the set :func:`current_plugins` gives while the block runs: a run's own set, or a set a
    test built (with a loader, dataset or tracker of its own)."""
    token = _CURRENT.set(plugins)
    try:
        yield plugins
    finally:
        _CURRENT.reset(token)


def current_plugins() -> Plugins:
    """The plugin set in use, the one way code reaches it: the set of the enclosing :func:`using_plugins` (a
    run's, a test's), else the installed plugins (:func:`get_plugins`)."""
    current = _CURRENT.get()
    return current if current is not None else get_plugins()


# -- which report sections are in use ----------------------------------------------------------------------

#: The sections of the run in progress (the plugin set it was built with): trackers and reports read them.
_IN_USE: ContextVar[tuple[ReportSection, ...] | None] = ContextVar("faceedit_bench_sections", default=None)


@contextmanager
def using_sections(sections: Sequence[ReportSection]) -> Iterator[None]:
    """Make ``sections`` the ones :func:`sections_in_use` gives while the block runs (a run's own plugin set)."""
    token = _IN_USE.set(tuple(sections))
    try:
        yield
    finally:
        _IN_USE.reset(token)


def sections_in_use(plugins: Plugins | None = None) -> tuple[ReportSection, ...]:
    """The registered sections in registration order: ``plugins``' own; else those of the run in progress;
    else those of the plugin set in use (:func:`current_plugins`)."""
    if plugins is not None:
        return plugins.sections()
    current = _IN_USE.get()
    return current if current is not None else current_plugins().sections()
