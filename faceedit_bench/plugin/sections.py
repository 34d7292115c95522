"""Report sections: what a protocol adds to a run's results, as one registered object.

A protocol (a paper's tables, a question-answering benchmark, a third party's analysis) registers a
:class:`ReportSection` with the ``faceedit_register_sections`` hook. The core then drives it; no generic
module names it:

* during the run, the section's collector (:class:`SectionCollector`) sees every session result, judged or
  not, and at the end gives the section's part of ``report.json`` (``report[name]``), described by the
  section's JSON ``schema`` (merged into the run report's schema under ``properties[name]``);
* its settings (a dataclass) are composed by Hydra at ``analysis.<name>``: ``analysis.<name>.<key>=...``
  overrides them, and an unknown key is refused with the closest known one;
* from ``report[name]``: its MLflow metrics (``tracking``), its console lines (``console``), its part of
  report.html (``html``: a package template and its context, with a nav entry; ``headline``: its figures on
  the page's first screen), its "mostly missing"
  warnings (``warnings``), what a leaderboard submission keeps of it (``record``), how verification compares
  that kept part (``verify``), the leaderboard's named views that read it (``views``) and what
  ``faceedit-bench compare`` ranks the run by beside its metrics (``ranking``);
* when the experiment is built, before any work: ``prepare`` may check the run's settings and bind the
  selected judge metrics to them (e.g. to the run's question sets and failure rule).

Every part but ``name``, ``title`` and ``schema`` is optional: a section filled in after the run by a command
(people's ratings) has no collector; one shown only on the page has no tracking. docs/plugin_hooks.md has an
example; :class:`faceedit_bench.testing.SectionContract` checks a section.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from faceedit_bench.errors import FaceEditBenchError
from faceedit_bench.plugin.launch import RunLaunch, no_launch
from faceedit_bench.plugin.needs import NO_NEEDS, Needs

if TYPE_CHECKING:
    from faceedit_bench.records import SessionResult

#: A section's name: its key in report.json, in ``analysis.<name>`` and in a submission record.
NAME = re.compile(r"^[a-z][a-z0-9_]*$")
#: Keys the core writes in report.json and in a submission record: no section may take one. (The core's account
#: of a launch, ``cost``, ``calls``, ``performance``, ``prompts`` and ``judge_reliability``, is built-in sections:
#: a plugin's section of one of those names clashes with the builtin's registration.)
CORE_KEYS = frozenset({
    "schema", "schema_version", "faceedit_bench_version", "run", "components", "testset", "scales", "counts",
    "metrics", "trajectory", "groups", "skipped_metrics", "notes", "disparity", "group_tests",
    "measures", "conditions", "sample", "sample_size", "multiplicity", "warnings", "judge_panel",
    "id", "created_at", "submitter", "url", "editor", "embedder", "judge", "dataset", "config", "framework",
    "outcomes", "report_notes", "files", "attached",
})


@runtime_checkable
class SectionCollector(Protocol):
    """Receives the run's sessions and gives the section's part of ``report.json``.

    A collector may also define ``files(output_dir: Path) -> list[Path]``: tables it writes into the run
    folder once the run is done (e.g. every answered question), listed with the run's artifacts.
    """

    def add_session(self, result: SessionResult) -> None:
        """Every session of the run, in order: judged, excluded or unsupported alike (count what you leave out)."""

    def finish(self) -> Mapping[str, Any] | None:
        """``report[name]``, or None to leave the section out of this run's report."""


@dataclass(frozen=True)
class SectionRun:
    """What a section's collector may know about the run it collects for."""

    #: The judge metrics asked in this run, by name (the configured objects: question sets and rules bound).
    judge_metrics: Mapping[str, Any]
    #: The section's settings (its ``settings`` dataclass, as composed at ``analysis.<name>``), or None.
    settings: Any = None
    confidence: float = 0.95
    #: Resamples, seed and significance level of the run's statistical tests (``analysis.*``).
    n_resamples: int = 9999
    seed: int = 0
    alpha: float = 0.05
    #: The judge panel's rule (its ``describe()``), when a panel judged; None otherwise.
    panel: Mapping[str, Any] | None = None
    #: Whether a judge was configured at all.
    judged: bool = False
    #: The run's images, read-only (:class:`~faceedit_bench.api.RunImages`: bytes, decoded pixels and the faces the
    #: run's detector finds, by the hashes in ``result.image_hashes``); None where no run stands behind the report.
    images: Any = None
    #: The run's folder (report.json, steps.csv ... are written there at the end; a collector's ``files`` too).
    run_dir: Path | None = None
    #: The run's components by role: ``detector`` (None when the embedder detects no faces), ``embedder`` and
    #: ``judge`` (None without one). Use them to measure, never to change the run.
    components: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    #: What this launch did (:class:`RunLaunch`), once its work is done: call it in ``finish``, never before.
    #: It gives None where no launch stands behind the report.
    launch: Callable[[], RunLaunch | None] = no_launch


@dataclass(frozen=True)
class SectionSetup:
    """What a section's ``prepare`` may read when the experiment is built, before any work or call."""

    #: The selected judge metrics, by name, as configured so far (an earlier section may have bound them).
    judge_metrics: Mapping[str, Any]
    #: The section's settings (``analysis.<name>``), or None.
    settings: Any
    #: The resolved experiment config, as plain containers (e.g. a protocol's own top-level keys).
    config: Mapping[str, Any]
    #: The run's test set (a :class:`~faceedit_bench.records.TestSet`).
    testset: Any
    judged: bool
    #: A registered object by kind and name, e.g. ``load("question_sets", "file")``.
    load: Callable[[str, str], Any]


@dataclass(frozen=True)
class SectionHtml:
    """A section's part of report.html: a Jinja2 template shipped in a package, and its variables.

    The template is rendered with autoescape on and the page's filters (``num``, ``ci``, ``p``, ``pct``,
    ``value``, ``usd``, ``version``; ``data_uri``: PNG bytes, a ``plot_png``, as an ``<img>``'s ``src``) and
    globals (``kv(mapping)``, ``display(name)``, ``ci_label``, ``plot_error``, ``report``).
    ``context(report, store)`` gives its own variables (``store``: the run's image store, or None), or None to
    show nothing; without it the template gets ``section = report[name]``.
    """

    template: str  # file name inside ``package``'s ``folder``
    package: str  # the importable package that ships the template
    folder: str = "templates"
    context: Callable[[Mapping[str, Any], Any], Mapping[str, Any] | None] | None = None
    anchor: str = ""  # the heading's id, the nav entry's target; default: the section's name
    nav: str | None = ""  # the nav entry's text; default: the section's title; None: no nav entry
    #: Where on the page (``PLACES``): ``results`` (after the core's results), ``launch`` (with what the launch
    #: did and cost, before the worst sessions) or ``components`` (in the run's details, under its components).
    place: str = "results"

    def __post_init__(self) -> None:
        if self.place not in PLACES:
            raise ValueError(f"SectionHtml {self.template}: place {self.place!r}; use one of {', '.join(PLACES)}")


#: ``SectionHtml.place``: where a section's part of report.html goes.
PLACES = ("results", "launch", "components")


#: ``ValueSpec.read``: a section's part of a submission record -> the value as shown:
#: ``{"mean", "ci_low", "ci_high", "n"}`` (numbers or None), optionally ``"sub"`` (a line under it).
ValueReader = Callable[[Mapping[str, Any]], Mapping[str, Any] | None]


@dataclass(frozen=True)
class ValueSpec:
    """One column of a leaderboard view.

    ``source="metrics"`` reads a session metric (``record.metrics[name]``); any other source names the
    section whose record part ``read`` reads. Label, unit, direction, description and bounds come from the
    submissions' ``measures`` (else this installation's registration of ``name``); ``label`` (formatted with
    ``{label}``), ``unit``, ``bounds``, ``description`` and ``higher_is_better`` override them, e.g. for a gap
    between groups (lower is better, in percentage points). ``key`` names the column when one measure gives
    several (default: ``name``).
    """

    name: str
    source: str = "metrics"
    read: ValueReader | None = None
    key: str = ""
    label: str = ""
    unit: str | None = None
    bounds: tuple[float, float] | None = None
    description: str = ""
    higher_is_better: bool | None = None  # a fixed direction; None: the measure's own

    def __post_init__(self) -> None:
        if self.source != "metrics" and not NAME.match(self.source):
            raise ValueError(f"value {self.name}: source {self.source!r}; use 'metrics' or a section's name")
        if (self.source == "metrics") == (self.read is not None):
            raise ValueError(f"value {self.name}: a section's value needs a read function (and a session metric "
                             "none): ValueSpec(name, source=<section>, read=...)")

    @property
    def column(self) -> str:
        return self.key or self.name


@dataclass(frozen=True)
class ViewSpec:
    """A named leaderboard view: entries ranked by one value (``rank_by``: a value's column) in its stated
    direction, with the other values beside it."""

    key: str  # the page's view name and URL fragment
    title: str
    description: str
    values: tuple[ValueSpec, ...]
    rank_by: str
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not any(v.column == self.rank_by for v in self.values):
            raise ValueError(f"view {self.key}: rank_by {self.rank_by!r} is not one of its values "
                             f"({', '.join(v.column for v in self.values)})")


@dataclass(frozen=True)
class ReportSection:
    """A protocol's part of a run's results (module docstring); register it with ``faceedit_register_sections``."""

    name: str
    title: str
    schema: Mapping[str, Any]  # JSON schema of report[name]; may use the run report's $defs (summary ...)
    collector: Callable[[SectionRun], SectionCollector | None] | None = None  # None: not active in this run
    settings: type | None = None  # a dataclass with defaults for every field, composed at analysis.<name>
    tracking: Callable[[Mapping[str, Any]], Mapping[str, float]] | None = None  # part -> MLflow metrics
    console: Callable[[Mapping[str, Any], int], Sequence[Any]] | None = None  # part, width -> rich renderables
    #: ``console`` is given the whole report instead of its part (e.g. to name the run's components).
    console_reads_report: bool = False
    html: SectionHtml | None = None
    warnings: Callable[[Mapping[str, Any]], Sequence[Mapping[str, Any]]] | None = None  # part -> mostly missing
    record: Callable[[Mapping[str, Any]], Mapping[str, Any] | None] | None = None  # part -> submission's part
    verify: Callable[[Any, Mapping[str, Any] | None, Mapping[str, Any] | None], None] | None = None
    views: tuple[ViewSpec, ...] = ()
    #: Called once when the experiment is built: check the run's settings (raise ConfigError) and give the
    #: judge metrics to use instead of the selected ones, by name (e.g. bound to the run's question sets).
    prepare: Callable[[SectionSetup], Mapping[str, Any] | None] | None = None
    #: Its numbers need a judge: a judge-free reference row lent to a judged table leaves this part out.
    needs_judge: bool = True
    description: str = ""
    #: part -> the figures report.html opens with, each ``{"label", "mean", "ci_low", "ci_high", "n"}`` (numbers
    #: or None) and optionally ``"unit"``, ``"higher_is_better"``, ``"bounds"``, ``"sub"`` (a line under it).
    #: None: the values of its first leaderboard view that it reads from its record part.
    headline: Callable[[Mapping[str, Any]], Sequence[Mapping[str, Any]]] | None = None
    #: part -> what ``faceedit-bench compare`` ranks this run by, beside its session metrics: ``{"name", "label",
    #: "value", "higher_is_better"}`` and optionally ``"ci_low"``, ``"ci_high"``, ``"n"`` and ``"scope"`` (values
    #: are comparable only within one scope, e.g. one set of battles: compare ranks runs of different scopes
    #: apart and says so). compare shows it as a row and ranks it with Kendall's tau against every metric.
    #: None: nothing to rank (docs/plugin_hooks.md).
    ranking: Callable[[Mapping[str, Any]], Mapping[str, Any] | None] | None = None
    #: What it needs of the faces (e.g. the labels its group tables compare), checked before the run's first
    #: paid call when the section collects in the run (:class:`~faceedit_bench.plugin.needs.Needs`).
    needs: Needs = NO_NEEDS

    def __post_init__(self) -> None:
        if not NAME.match(self.name):
            raise ValueError(f"report section {self.name!r}: a name of lowercase letters, digits and '_'")
        if self.name in CORE_KEYS:
            raise ValueError(f"report section {self.name!r}: the run report's own key; choose another name")
        if not isinstance(self.schema, Mapping) or not isinstance(self.schema.get("type", "object"), (str, list)):
            raise ValueError(f"report section {self.name}: schema must be a JSON schema (a mapping)")
        if self.settings is not None:
            _check_settings(self.name, self.settings)
        for view in self.views:
            wrong = [v.name for v in view.values if v.source not in ("metrics", self.name)]
            if wrong:
                raise ValueError(f"report section {self.name}: view {view.key} reads {wrong} from another "
                                 "section; a section's views read its own record part or the session metrics")


def _check_settings(name: str, settings: type) -> None:
    if not dataclasses.is_dataclass(settings):
        raise ValueError(f"report section {name}: settings must be a dataclass (composed at analysis.{name})")
    lacking = [f.name for f in dataclasses.fields(settings)
               if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
    if lacking:
        raise ValueError(f"report section {name}: settings field(s) {lacking} need a default")


def check_section(name: str, section: Any) -> None:
    """What a registration of ``section`` as ``name`` must be, checked when its plugin loads: a
    :class:`ReportSection` of that name whose HTML template exists and parses (else a ValueError saying which)."""
    if not isinstance(section, ReportSection) or section.name != name:
        raise ValueError(f"registered as report section {name!r} but it is {section!r}; register a "
                         f"ReportSection named {name!r}")
    if section.html is not None:
        html = section.html
        try:
            source = (resources.files(html.package) / html.folder / html.template).read_text(encoding="utf-8")
        except (ImportError, OSError) as exc:
            raise ValueError(f"report section {name}: its template {html.folder}/{html.template} in package "
                             f"{html.package} cannot be read ({type(exc).__name__}: {exc})") from exc
        if (error := _syntax_error(source)) is not None:
            raise ValueError(f"report section {name}: its template {html.folder}/{html.template} line {error}")


@functools.lru_cache(maxsize=128)
def _syntax_error(source: str) -> str | None:
    """``line: message`` where a template's source does not parse, else None. Each source is parsed once per
    process: every plugin set checks its sections (a test suite builds one per test; about 0.03 s a template)."""
    import jinja2

    try:
        jinja2.Environment(autoescape=True).parse(source)
    except jinja2.TemplateSyntaxError as exc:
        return f"{exc.lineno}: {exc.message}"
    return None


class SectionError(FaceEditBenchError):
    """A report section failed while the run used it (its collector, its template, its output's schema);
    the message names the section and what failed."""


@contextmanager
def failing_section(name: str, what: str) -> Iterator[None]:
    """Any error inside the block becomes a :class:`SectionError` naming section ``name`` and ``what`` of it
    failed (its collector, its template): a bare traceback says neither."""
    try:
        yield
    except FaceEditBenchError:
        raise
    except Exception as exc:
        raise SectionError(f"report section {name!r}: its {what} failed ({type(exc).__name__}: {exc}). The "
                           "plugin that registers it must be fixed; `faceedit-bench plugins` names it.") from exc


def validate_part(section: ReportSection, part: Mapping[str, Any], schema: Mapping[str, Any]) -> None:
    """A SectionError naming the section and the field when ``part`` (``report[section.name]``) breaks
    ``schema`` (the section's part schema)."""
    import jsonschema

    error = jsonschema.exceptions.best_match(jsonschema.validators.validator_for(schema)(schema).iter_errors(part))
    if error is not None:
        where = ".".join(str(p) for p in error.absolute_path) or "(the whole part)"
        raise SectionError(f"report section {section.name!r} gave a part that breaks its schema at "
                           f"{section.name}.{where}: {error.message[:300]}. Fix the section's collector or its "
                           "schema.")


def load_schema(package: str, resource: str) -> dict[str, Any]:
    """A JSON schema shipped as package data, e.g. ``load_schema("my_protocol", "schemas/section.json")``."""
    return json.loads((resources.files(package) / resource).read_text(encoding="utf-8"))


def settings_of(analysis: Any, section: ReportSection) -> Any:
    """The section's settings object of a composed run (``analysis.<name>``), or its defaults when absent."""
    found = getattr(analysis, section.name, None) if analysis is not None else None
    if found is None and section.settings is not None:
        return section.settings()
    return found


def collector_files(collector: Any, output_dir: Path) -> list[Path]:
    """The tables a collector writes into the run folder (none unless it defines ``files``)."""
    files = getattr(collector, "files", None)
    return list(files(output_dir)) if callable(files) else []
