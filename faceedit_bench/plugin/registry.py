"""Name -> factory tables filled by the registration hooks.

Each registration remembers which plugin made it, so listings, run tags and clash
reports can name the provider. Two plugins registering one name is a *clash*: both
are kept, the clash is reported, and using the name raises :class:`ClashError`
naming both providers instead of silently picking one.
"""

from __future__ import annotations

import difflib
import importlib
import re
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any, Literal

from faceedit_bench.errors import ClashError, UnknownComponentError

#: The registration kinds, with what names each in messages: the Hydra config group that selects a
#: component, or what a name stands for (a report section, a CLI subcommand, a prompt-condition template).
KINDS: dict[str, str] = {
    "editors": "editor",
    "judges": "judge",
    "metrics": "metric",
    "embedders": "embedder",
    "datasets": "dataset",
    "testsets": "testset",
    "trackers": "tracking",
    "judge_metrics": "judge_metrics",
    "image_metrics": "image_metrics",
    "question_sets": "question-set loader",
    "sections": "report section",
    "commands": "command",
    "condition_templates": "condition template",
    "samples": "published sample",
    "reproductions": "reproduction",
}


#: Kinds whose registrations are factories: called with the config entry's parameters.
FACTORY_KINDS = frozenset({"editors", "judges", "embedders"})

#: ``register(..., params=ANY_PARAMS)``: the factory is trusted with any parameter (it checks them itself).
ANY_PARAMS = "any"


@dataclass(frozen=True)
class Registration:
    kind: str
    name: str
    target: Any  # the object, or a lazy "module:attribute" string
    provider: str  # plugin name
    description: str = ""
    # The parameters the factory accepts, for a factory whose signature cannot say (``**kwargs``):
    # their names, or ANY_PARAMS to pass every parameter through unchecked. None: its signature says.
    params: tuple[str, ...] | Literal["any"] | None = None

    def load(self) -> Any:
        """The registered object; lazy targets are imported on first use."""
        if isinstance(self.target, str) and ":" in self.target:
            module, _, attr = self.target.partition(":")
            obj: Any = importlib.import_module(module)
            for part in attr.split("."):
                obj = getattr(obj, part)
            return obj
        return self.target


class Register:
    """The callable handed to a ``faceedit_register_*`` hook."""

    def __init__(self, table: ComponentTable, provider: str) -> None:
        self._table = table
        self._provider = provider

    def __call__(self, name: str, target: Any, *, description: str = "",
                 params: Collection[str] | Literal["any"] | None = None) -> None:
        """Register ``target`` (an object or a lazy ``"module:attr"``) as ``name``. ``params``: only for a
        factory taking ``**kwargs``, the parameter names it accepts, or ``"any"`` to trust it with any."""
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"{self._provider}: component name {name!r} must be a Python identifier")
        if isinstance(target, str) and not _LAZY_TARGET.match(target):
            raise ValueError(f"{self._provider}: {name!r} is registered as {target!r}; a lazy target is "
                             "'package.module:attribute'")
        if target is None or (self._table.kind in FACTORY_KINDS and not isinstance(target, str)
                              and not callable(target)):
            raise ValueError(f"{self._provider}: {KINDS[self._table.kind]} {name!r} is registered as {target!r}; "
                             "register its factory (a class or function) or a lazy 'package.module:attribute'")
        if params is not None and params != ANY_PARAMS and (isinstance(params, str) or not all(
                isinstance(p, str) and p.isidentifier() for p in params)):
            raise ValueError(f"{self._provider}: params of {name!r} must be parameter names or {ANY_PARAMS!r}")
        declared = params if params is None or params == ANY_PARAMS else tuple(params)
        self._table.add(Registration(self._table.kind, name, target, self._provider, description, declared))


#: A lazy registration target, ``"package.module:attribute.path"``.
_LAZY_TARGET = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")


@dataclass
class ComponentTable:
    kind: str
    entries: dict[str, list[Registration]] = field(default_factory=dict)
    #: Plugins skipped as broken (name -> why), shared by every table: an unknown name mentions them.
    broken: dict[str, str] = field(default_factory=dict)

    def add(self, registration: Registration) -> None:
        self.entries.setdefault(registration.name, []).append(registration)

    def names(self) -> list[str]:
        return sorted(self.entries)

    def clashes(self) -> dict[str, list[str]]:
        return {n: [r.provider for r in regs] for n, regs in self.entries.items() if len(regs) > 1}

    def get(self, name: str) -> Registration:
        regs = self.entries.get(name)
        if not regs:
            raise UnknownComponentError(KINDS[self.kind], name, self.names(), suggest(name, self.names()),
                                        broken=self.broken)
        if len(regs) > 1:
            raise ClashError(KINDS[self.kind], name, [r.provider for r in regs])
        return regs[0]


def suggest(name: str, candidates: Collection[str]) -> list[str]:
    return difflib.get_close_matches(name, list(candidates), n=3, cutoff=0.5)


class Registry:
    """All component tables, one per kind."""

    def __init__(self) -> None:
        self.broken: dict[str, str] = {}
        self.tables = {kind: ComponentTable(kind, broken=self.broken) for kind in KINDS}

    def remove_provider(self, provider: str) -> None:
        """Forget everything ``provider`` registered (a plugin found broken half-way through)."""
        for table in self.tables.values():
            for name in list(table.entries):
                kept = [r for r in table.entries[name] if r.provider != provider]
                if kept:
                    table.entries[name] = kept
                else:
                    del table.entries[name]

    def __getitem__(self, kind: str) -> ComponentTable:
        return self.tables[kind]

    def get(self, kind: str, name: str) -> Registration:
        return self.tables[kind].get(name)

    def create(self, kind: str, name: str, params: dict[str, Any] | None = None) -> Any:
        """Resolve ``name`` and call its factory with ``params`` as keyword arguments."""
        factory: Callable[..., Any] = self.get(kind, name).load()
        return factory(**(params or {}))

    def clashes(self) -> dict[str, dict[str, list[str]]]:
        return {kind: c for kind, table in self.tables.items() if (c := table.clashes())}
