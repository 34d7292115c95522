"""``faceedit-bench data check <dataset> [root]``: is a dataset's folder laid out as its reader expects?

Checked with the dataset's own reader, before any run: it reads every annotation and checks that every
listed image is there, and says what is missing or misnamed (the reader's errors name the file and what is
near it). Then it decodes every image a run would use, base images and references, as a run decodes them, and
lists those it could not read (random bytes, a truncated download, an HTML page saved as .jpg); ``--quick``
leaves that out. A dataset may check itself its own way (a lighter check of a large release, or one without side
effects): a ``check(**params)`` classmethod on its factory, returning the lines to print and raising
:class:`~faceedit_bench.errors.DatasetError` for a problem (:class:`~faceedit_bench.plugin.protocols.Dataset`).
Nothing is written.
"""

from __future__ import annotations

import inspect
import textwrap
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from faceedit_bench.config import ComponentConf
from faceedit_bench.errors import ConfigError, FaceEditBenchError
from faceedit_bench.plugin.manager import Plugins
from faceedit_bench.records import Face
from faceedit_bench.run.components import check_params
from faceedit_bench.storage.images import unreadable_images

#: Where each shipped dataset's page is: source, licence, version, layout, and this check (stable paths:
#: error messages and the docs site link to them).
DOCS = "docs/datasets/{name}.md"
PAGES = ("celeba", "celebset", "fairface", "folder", "sample")


def docs_page(name: str) -> str | None:
    """The docs page of a shipped dataset, or the one a plugin's dataset names (its factory's ``docs_page``)."""
    if name in PAGES:
        return DOCS.format(name=name)
    from faceedit_bench.plugin.manager import current_plugins

    table = current_plugins().registry["datasets"]
    return getattr(table.get(name).load(), "docs_page", None) if name in table.names() else None


@dataclass
class DataCheck:
    dataset: str
    root: str | None
    problem: str | None = None
    found: list[str] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)
    decoded: int | None = None  # images decoded; None when not checked (--quick, or the check failed before)

    @property
    def ok(self) -> bool:
        return self.problem is None and not self.unreadable

    def describe(self, docs: str | None, width: int = 100) -> str:
        """What was found, or the problem wrapped at ``width`` (paths and URLs are never broken)."""
        where = f" at {self.root}" if self.root else ""
        lines = [f"{self.dataset}{where}: {'usable' if self.ok else 'NOT usable'}"]
        lines += [f"  {line}" for line in self.found]
        if self.decoded is not None:
            lines.append(f"  images decoded: {self.decoded - len(self.unreadable)} of {self.decoded} readable")
        shown = UNREADABLE_SHOWN
        lines += [f"  unreadable: {u}" for u in self.unreadable[:shown]]
        if len(self.unreadable) > shown:
            lines.append(f"  ... and {len(self.unreadable) - shown} more unreadable images")
        if self.unreadable:
            lines.append("  Replace or remove the unreadable images (a run would skip their faces as unusable).")
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
            *Face.label_summary(f.demographics for f in faces)]


def default_check(dataset: Any) -> list[str]:
    """Read every face (annotations parsed, each image's presence checked) and summarise what was found."""
    description: Mapping[str, Any] = dataset.describe() if hasattr(dataset, "describe") else {}
    found = [f"format: {description['format']}"] if description.get("format") else []
    return found + face_summary(dataset.faces()) + [f"note: {n}" for n in description.get("notes") or []]


#: How many unreadable images a check lists by name.
UNREADABLE_SHOWN = 20


def check_dataset(plugins: Plugins, name: str, root: str | None, params: Mapping[str, Any], *,
                  decode: bool = True) -> DataCheck:
    """The check of dataset ``name`` at ``root`` (``params``: further ``dataset.params``). An unknown dataset or
    parameter raises (a mistake in the command); a problem of the data is the result's ``problem``. With
    ``decode``, every image the dataset's faces use is decoded
    (:func:`~faceedit_bench.storage.images.unreadable_images`); a dataset with its own ``check`` decodes its
    images there, when it takes ``decode``."""
    factory = plugins.registry.get("datasets", name).load()
    params = {**params, **({"root": root} if root is not None else {})}
    check_params("dataset", ComponentConf(name, dict(params)), factory)
    result = DataCheck(name, root)
    try:
        checker = getattr(factory, "check", None)
        if callable(checker):  # its own check decodes what it can without side effects, unless told not to
            takes_decode = "decode" in inspect.signature(checker).parameters
            result.found = list(checker(**params, **({"decode": decode} if takes_decode else {})))
        else:
            dataset = factory(**params)
            result.found = default_check(dataset)
            if decode:
                result.decoded, result.unreadable = unreadable_images(
                    path for face in dataset.faces() for path in (face.image, *face.references))
    except ConfigError:
        raise  # a parameter of the command, not the data
    except FaceEditBenchError as exc:  # the reader's own errors: what is missing or malformed, and where
        result.problem = str(exc)
    return result
