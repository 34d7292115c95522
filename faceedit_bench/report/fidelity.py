"""Where each experiment preset follows its paper and where it does not, from one set of data files.

A fidelity table (``faceedit_bench/data/fidelity/<paper>.yaml`` for paper (a); a protocol package provides its
own through the ``faceedit_fidelity_tables`` hook) lists a paper's protocol elements in reading order: the paper's
value, the setting that holds it (a dotted key of the preset's composed config, or null when it is not a
setting), the project's default, the source, and the status (``same``, ``reconstruction``, ``deviation``) with
the measured effect where one is known. Every table of the core and of the installed plugins is read, so a
paper's table is added without touching this module. An element whose setting a listed preset does not have (``run.sample.published`` in
``experiment=paper_celeba``) belongs to the file's other presets; each setting exists in at least one of them.

The same data make ``docs/fidelity.md`` (:func:`render_markdown`; a test checks that the page is its rendering
and that every default is what the preset composes to) and the notes of a run's "Read first" box
(:func:`preset_notes`): the deviations of the run's preset, and every element whose setting the run changed.

Regenerate the page after editing a data file::

    python -m faceedit_bench.report.fidelity docs/fidelity.md
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from faceedit_bench.errors import FaceEditBenchError

STATUSES = ("same", "reconstruction", "deviation")
DOC = "docs/fidelity.md"


class FidelityError(FaceEditBenchError):
    """A fidelity data file that does not have the documented shape."""


class Element(BaseModel):
    model_config = ConfigDict(extra="forbid")

    element: str
    paper: str
    config: str | None
    default: Any
    source: str
    status: Literal["same", "reconstruction", "deviation"]
    effect: str | None = None


class PaperFidelity(BaseModel):
    model_config = ConfigDict(extra="forbid")

    paper: str
    presets: list[str]
    elements: list[Element]


#: libyaml's safe loader where PyYAML has it (the same documents, a tenth of the CPU): every report reads
#: every paper's table.
SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def parse(text: str, name: str) -> PaperFidelity:
    try:
        return PaperFidelity.model_validate(yaml.load(text, Loader=SAFE_LOADER))  # noqa: S506 - a safe loader
    except yaml.YAMLError as exc:
        raise FidelityError(f"fidelity data {name}: not YAML: {exc}") from exc
    except ValidationError as exc:
        where = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise FidelityError(f"fidelity data {name}: {where} (the format: faceedit_bench/report/fidelity.py)") from exc


@lru_cache(maxsize=1)
def load_all() -> dict[str, PaperFidelity]:
    """Every fidelity table of this installation (:func:`read_tables` of the loaded plugins)."""
    from faceedit_bench.plugin.manager import current_plugins

    return read_tables(current_plugins())


def read_tables(plugins: Any) -> dict[str, PaperFidelity]:
    """Every fidelity table by file stem: the core's (paper (a)) first, then the plugins' by name."""
    folder = resources.files("faceedit_bench") / "data" / "fidelity"
    core = sorted((f for f in folder.iterdir() if f.name.endswith(".yaml")), key=lambda f: f.name)
    provided = sorted(plugins.fidelity_tables(), key=lambda f: Path(str(f)).name)
    out: dict[str, PaperFidelity] = {}
    for table in [*core, *provided]:
        name = Path(str(table)).name.removesuffix(".yaml")
        if name in out:
            raise FidelityError(f"two fidelity tables are named {name}.yaml: name each paper's table uniquely")
        text = table.read_text(encoding="utf-8") if hasattr(table, "read_text") else Path(table).read_text("utf-8")
        out[name] = parse(text, f"{name}.yaml")
    return out


def for_preset(preset: str | None) -> list[PaperFidelity]:
    return [p for p in load_all().values() if preset is not None and preset in p.presets]


def matches(default: Any, value: Any) -> bool:
    """Whether a composed setting is the documented default: equal, or equal once the documented text is read
    as YAML (``"0.1"`` is 0.1, ``"null"`` is None)."""
    if default == value:
        return True
    if isinstance(default, str):
        try:
            return yaml.safe_load(default) == value
        except yaml.YAMLError:
            return False
    return False


def select(config: Mapping[str, Any], key: str) -> tuple[bool, Any]:
    """(found, value) of a dotted key in a plain config (list items by index: ``conditions.1.position``)."""
    node: Any = config
    for part in key.split("."):
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return False, None
    return True, node


def _text(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_text(v) for v in value) + "]"
    return str(value)


def preset_notes(preset: str | None, config: Mapping[str, Any]) -> list[str]:
    """The "Read first" notes of a run of ``preset``: each deviation from its paper, and each element whose
    setting this run changed from the preset's default (docs/fidelity.md)."""
    notes = []
    for paper in for_preset(preset):
        for e in paper.elements:
            found, value = select(config, e.config) if e.config else (False, None)
            if e.config and not found:
                continue  # a setting this run does not have: an element of another preset of the paper
            if found and not matches(e.default, value):
                notes.append(f"Differs from {paper.paper} by this run's setting: {e.element}: {e.config}={_text(value)} "
                             f"(the paper: {e.paper}; the preset: {_text(e.default)}).")
            elif e.status == "deviation":
                here = f"{e.config}={_text(e.default)}" if e.config else _text(e.default)
                effect = f" Effect: {e.effect}" if e.effect else " Effect: not measured."
                notes.append(f"Differs from {paper.paper} (docs/fidelity.md): {e.element}: the paper: {e.paper}; "
                             f"here: {here}.{effect}")
    return notes


def _cell(value: Any) -> str:
    return _text(value).replace("|", "\\|").replace("\n", " ")


def render_markdown(papers: Mapping[str, PaperFidelity] | None = None) -> str:
    papers = load_all() if papers is None else papers
    lines = [
        "# Fidelity: each preset against its paper",
        "",
        "Every protocol element of the three papers, with the paper's value, the project's default, where the",
        "paper's value comes from, and whether the default is the `same`, a `reconstruction` (the paper does not",
        "publish it, so the project chose a value that follows every fact it states) or a `deviation` (the project",
        "knowingly differs), with the measured effect where one is known. \"Setting\" is the key of the composed",
        "config that holds the default (`python -m faceedit_bench experiment=<preset> --cfg job` shows it); a test",
        "composes every preset and checks each default against it, and checks that this page is the rendering of",
        "the fidelity tables of the core and of the protocol packages. A run of a preset lists the deviations, and every setting it",
        "changed, in the \"Read first\" box of its report.",
        "",
        "Regenerate this page after editing a data file: `python -m faceedit_bench.report.fidelity docs/fidelity.md`.",
    ]
    for paper in papers.values():
        counts = {s: sum(e.status == s for e in paper.elements) for s in STATUSES}
        lines += ["", f"## {paper.paper}", "",
                  f"Presets: {', '.join(f'`experiment={p}`' for p in paper.presets)}. "
                  + ", ".join(f"{n} {s}" for s, n in counts.items()) + ".", "",
                  "| element | paper | project default | setting | source | status | effect |",
                  "|---|---|---|---|---|---|---|"]
        for e in paper.elements:
            setting = f"`{e.config}`" if e.config else ""
            lines.append(f"| {_cell(e.element)} | {_cell(e.paper)} | {_cell(e.default)} | {setting} | "
                         f"{_cell(e.source)} | {e.status} | {_cell(e.effect) if e.effect else ''} |")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    text = render_markdown()
    if not args:
        sys.stdout.write(text)
        return 0
    from faceedit_bench.storage import atomic

    atomic.write_text(Path(args[0]), text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
