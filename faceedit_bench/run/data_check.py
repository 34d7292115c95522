"""``faceedit-bench data check <dataset> [root]``: is a dataset's folder laid out as its reader expects?

Checked with the dataset's own reader, before any run: it reads every annotation and checks that every
listed image is there, and says what is missing or misnamed (the reader's errors name the file and what is
near it). A dataset may check itself its own way (a lighter check of a large release, or one without side
effects): a ``check(**params)`` classmethod on its factory, returning the lines to print and raising
:class:`~faceedit_bench.errors.DatasetError` for a problem (:class:`~faceedit_bench.plugin.protocols.Dataset`).
Nothing is written.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from faceedit_bench.builtin.datasets._common import label_summary
from faceedit_bench.config import ComponentConf
from faceedit_bench.errors import ConfigError, FaceEditBenchError
from faceedit_bench.plugin.manager import Plugins
from faceedit_bench.run.components import check_params

#: Where each shipped dataset's page is: source, licence, version, layout, and this check (stable paths:
#: error messages and the docs site link to them).
DOCS = "docs/datasets/{name}.md"
PAGES = ("celeba", "celebset", "fairface", "folder", "sample")


def docs_page(name: str) -> str | None:
    """The docs page of a shipped dataset, or the one a plugin's dataset names (its factory's ``docs_page``)."""
    if name in PAGES:
        return DOCS.format(name=name)
    from faceedit_bench.plugin.manager import get_plugins

    table = get_plugins().registry["datasets"]
    return getattr(table.get(name).load(), "docs_page", None) if name in table.names() else None


@dataclass
class DataCheck:
    dataset: str
    root: str | None
    problem: str | None = None
    found: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.problem is None

    def describe(self, docs: str | None, width: int = 100) -> str:
        """What was found, or the problem wrapped at ``width`` (paths and URLs are never broken)."""
        where = f" at {self.root}" if self.root else ""
        lines = [f"{self.dataset}{where}: {'usable' if self.ok else 'NOT usable'}"]
        lines += [f"  {line}" for line in self.found]
        if self.problem:
            lines += textwrap.wrap(self.problem, width, initial_indent="  problem: ", subsequent_indent="    ",
                                   break_long_words=False, break_on_hyphens=False)
        if docs:
            lines.append(f"  where to get it and the layout expected: {docs}")
        return "\n".join(lines)


def face_summary(faces: Iterable[Any]) -> list[str]:
    """``N faces (M identities, R reference images)`` and each label's values with their counts."""
    faces = list(faces)
    return [f"{len(faces)} faces ({len({f.identity for f in faces})} identities, "
            f"{sum(len(f.references) for f in faces)} reference images)",
            *label_summary(f.demographics for f in faces)]


def default_check(dataset: Any) -> list[str]:
    """Read every face (annotations parsed, each image's presence checked) and summarise what was found."""
    description: Mapping[str, Any] = dataset.describe() if hasattr(dataset, "describe") else {}
    found = [f"format: {description['format']}"] if description.get("format") else []
    return found + face_summary(dataset.faces()) + [f"note: {n}" for n in description.get("notes") or []]


def check_dataset(plugins: Plugins, name: str, root: str | None, params: Mapping[str, Any]) -> DataCheck:
    """The check of dataset ``name`` at ``root`` (``params``: further ``dataset.params``). An unknown dataset or
    parameter raises (a mistake in the command); a problem of the data is the result's ``problem``."""
    factory = plugins.registry.get("datasets", name).load()
    params = {**params, **({"root": root} if root is not None else {})}
    check_params("dataset", ComponentConf(name, dict(params)), factory)
    result = DataCheck(name, root)
    try:
        checker = getattr(factory, "check", None)
        result.found = list(checker(**params)) if callable(checker) else default_check(factory(**params))
    except ConfigError:
        raise  # a parameter of the command, not the data
    except FaceEditBenchError as exc:  # the reader's own errors: what is missing or malformed, and where
        result.problem = str(exc)
    return result
