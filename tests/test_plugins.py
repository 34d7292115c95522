"""Plugin loading, registration, clashes and every hook of hookspecs.py."""

from __future__ import annotations

import inspect
import re
import types
import warnings
from pathlib import Path
from typing import Any

import pytest

from faceedit_bench import hookimpl
from faceedit_bench.errors import ClashError, ConfigError, UnknownComponentError
from faceedit_bench.plugin import hookspecs
from faceedit_bench.plugin import manager as plugins_module
from faceedit_bench.plugin.manager import PluginLoadWarning, load_plugins
from faceedit_bench.run.experiment import build_experiment, run_experiment
from tests.module_runs import composed, plugins_for_tests

ROOT = Path(__file__).resolve().parent.parent
HOOKS = sorted(n for n, f in inspect.getmembers(hookspecs, inspect.isfunction) if n.startswith("faceedit_"))


def make_module(name: str, **hooks: Any) -> types.ModuleType:
    module = types.ModuleType(name)
    for hook_name, fn in hooks.items():
        setattr(module, hook_name, hookimpl(fn))
    return module


class FakeDist:
    def __init__(self, name: str, version: str = "1.0") -> None:
        self.name, self.version = name, version


class FakeEntryPoint:
    def __init__(self, name: str, module: Any, dist: str) -> None:
        self.name, self.value, self.dist, self._module = name, f"{name}_module", FakeDist(dist), module

    def load(self) -> Any:
        if isinstance(self._module, Exception):
            raise self._module
        return self._module


@pytest.fixture
def fake_entry_points(monkeypatch):
    def install(*eps: FakeEntryPoint) -> None:
        monkeypatch.setattr(plugins_module.md, "entry_points", lambda group: list(eps))

    return install


def editor_plugin(editor_name: str) -> types.ModuleType:
    return make_module(editor_name, faceedit_register_editors=lambda register: register(editor_name, object))


# -- the hook contract --------------------------------------------------------------------


def test_every_hook_is_prefixed_documented_and_tested():
    doc = (ROOT / "docs" / "plugin_hooks.md").read_text()
    this_file = Path(__file__).read_text()
    for name in HOOKS:
        assert name.startswith("faceedit_")
        assert f"## {name}" in doc, f"{name} missing from docs/plugin_hooks.md"
        assert f"def test_hook_{name}" in this_file, f"{name} has no test_hook_{name}"
    documented = set(re.findall(r"^## (faceedit_\w+)", doc, re.M))
    assert documented == set(HOOKS)


def test_every_documented_signature_matches_its_hookspec():
    """Each hook's section opens with its signature; the argument names are the spec's."""
    doc = (ROOT / "docs" / "plugin_hooks.md").read_text()
    for name in HOOKS:
        section = doc.split(f"## {name}\n", 1)[1].split("\n## ", 1)[0]
        found = re.search(rf"^`{name}\(([^)]*)\)", section, re.M)
        assert found, f"docs/plugin_hooks.md: the {name} section does not start with its signature"
        documented = [a.split(":")[0].strip() for a in found.group(1).split(",") if a.strip()]
        spec = list(inspect.signature(getattr(hookspecs, name)).parameters)
        assert documented == spec, f"{name}: documented {documented}, hookspecs.py says {spec}"


@pytest.mark.parametrize("kind", ["editors", "judges", "metrics", "embedders", "datasets", "testsets", "trackers"])
def test_registration_hooks_record_the_provider(kind):
    p = load_plugins(entry_points=False)
    p.add(make_module("m", **{f"faceedit_register_{kind}": lambda register: register("thing", object)}),
          name="acme", distribution="faceedit-bench-acme", version="2.0")
    reg = p.registry.get(kind, "thing")
    assert reg.provider == "acme" and p.provider_version("acme") == "2.0"


def test_hook_faceedit_register_editors():
    p = load_plugins(entry_points=False)
    assert {"identity", "replay"} <= set(p.registry["editors"].names())


def test_hook_faceedit_register_judges():
    p = load_plugins(entry_points=False)
    p.add(make_module("j", faceedit_register_judges=lambda register: register("fake_judge", dict)), name="j")
    assert p.registry.create("judges", "fake_judge", {"a": 1}) == {"a": 1}


def test_hook_faceedit_register_metrics():
    p = load_plugins(entry_points=False)
    metric = p.registry.get("metrics", "drop_fss").load()
    assert metric.higher_is_better is False


def test_hook_faceedit_register_judge_metrics():
    from pydantic import BaseModel, ConfigDict

    from faceedit_bench.api.judging import JudgeMetric, PromptTemplate
    from faceedit_bench.run.experiment import session_metrics
    from faceedit_bench.run.judges import select_judge_metrics

    class Answer(BaseModel):
        model_config = ConfigDict(extra="forbid")
        score: int

    toy = JudgeMetric(name="toy", template=PromptTemplate("toy", "1", "Rate $instruction", Answer),
                      images=("source", "current"), values=(JudgeMetric.Value("toy_score", True, "1-5", "a toy score",
                                                                       point=lambda a: a["score"]),))
    p = load_plugins(entry_points=False)
    assert {"sc", "state"} <= set(p.registry["judge_metrics"].names())  # paper (a)'s, declared the same way
    p.add(make_module("t", faceedit_register_judge_metrics=lambda register: register("toy", toy)), name="t")
    assert p.registry.get("judge_metrics", "toy").provider == "t"
    (selected,) = select_judge_metrics(p, ["toy"])
    assert selected is toy
    names = [m.name for m in session_metrics(p, [selected])]
    assert names == sorted(names) and "toy_score" in names and "sc" not in names
    with pytest.raises(UnknownComponentError, match="judge_metrics 'tyo'.*toy"):
        select_judge_metrics(p, ["tyo"])


def test_hook_faceedit_register_image_metrics():
    from faceedit_bench.api.images import ImageMetric
    from faceedit_bench.run.experiment import session_metrics
    from faceedit_bench.run.image_metrics import select_image_metrics

    class Toy(ImageMetric):
        name, values = "toy", (ImageMetric.Value("toy_change", None, "grey levels", "a toy change"),)

        def __init__(self, scale: float = 1.0) -> None:
            self.scale = scale

    p = load_plugins(entry_points=False)
    assert {"background", "edit_magnitude"} <= set(p.registry["image_metrics"].names())
    p.add(make_module("t", faceedit_register_image_metrics=lambda register: register("toy", Toy)), name="t")
    assert p.registry.get("image_metrics", "toy").provider == "t"
    (selected,) = select_image_metrics(p, ["toy"], {"toy": {"scale": 2.0}}, has_detector=False, faces=True)
    assert isinstance(selected, Toy) and selected.scale == 2.0
    assert "toy_change" in [m.name for m in session_metrics(p, [], [selected])]
    with pytest.raises(UnknownComponentError, match="image_metrics 'tyo'.*toy"):
        select_image_metrics(p, ["tyo"], {}, has_detector=False, faces=True)


def test_hook_faceedit_register_embedders():
    p = load_plugins()
    assert "dlib" in p.registry["embedders"].names()  # the first-party plugin distribution


def test_hook_faceedit_register_datasets():
    p = load_plugins(entry_points=False)
    assert {"sample", "folder", "celeba", "fairface", "celebset"} <= set(p.registry["datasets"].names())


def test_hook_faceedit_register_testsets():
    p = load_plugins(entry_points=False)
    ts = p.registry.create("testsets", "pose")
    assert ts.name == "pose" and len(ts.sessions) == 5


def test_hook_faceedit_register_question_sets(tmp_path):
    """The core keeps question-set loaders by name; the protocol that answers the sets loads them."""
    p = load_plugins(entry_points=False)
    p.add(make_module("qs", faceedit_register_question_sets=lambda register: register(
        "lines", lambda path: Path(path).read_text().splitlines(), description="one question a line")), name="qs")
    (tmp_path / "q.txt").write_text("Is the hair red?\nIs the face the same?\n")
    assert p.registry.get("question_sets", "lines").load()(str(tmp_path / "q.txt")) == [
        "Is the hair red?", "Is the face the same?"]


def test_hook_faceedit_register_trackers():
    p = load_plugins(entry_points=False)
    assert "none" in p.registry["trackers"].names()


def test_hook_faceedit_register_sections():
    from tests import section_plugin

    p = load_plugins(entry_points=False)
    assert [s.name for s in p.sections()][:1] == ["overediting"]  # builtins first, in registration order
    p.add(section_plugin, name="tally_protocol", distribution="faceedit-bench-tally")
    assert p.sections()[-1] is section_plugin.TALLY
    assert p.registry.get("sections", "tally").provider == "tally_protocol"
    p.add(make_module("wrong", faceedit_register_sections=lambda register: register("wrong", object())), name="w")
    with pytest.warns(PluginLoadWarning, match="'w'.*broken.*register a ReportSection named 'wrong'"):
        names = [s.name for s in p.sections()]
    assert "wrong" not in names and "tally" in names and "register a ReportSection" in p.failed["w"]


def test_hook_faceedit_register_commands(monkeypatch, capsys):
    from faceedit_bench import cli

    def add_parser(sub):
        p = sub.add_parser("hello", help="say hello")
        p.add_argument("--name", default="you")
        p.set_defaults(func=lambda args: print(f"hello {args.name}") or 3)

    p = load_plugins(entry_points=False)
    p.add(make_module("hi", faceedit_register_commands=lambda register: register("hello", add_parser)), name="hi")
    p.add(make_module("bad", faceedit_register_commands=lambda register: register("report", add_parser)), name="bad")
    monkeypatch.setattr(plugins_module, "get_plugins", lambda: p)
    with pytest.warns(plugins_module.PluginLoadWarning, match="command 'report' of plugin bad.*its own"):
        assert cli.main(["hello", "--name", "tester"]) == 3  # the core's report command is not replaced
    assert capsys.readouterr().out == "hello tester\n"


def test_hook_faceedit_register_condition_templates():
    from faceedit_bench.run.condition_prompts import build_conditions, registered_templates
    from faceedit_bench.scoring.judge.condition_templates import REWRITE_CONDITION, ConditionTemplate

    p = load_plugins(entry_points=False)
    templates = registered_templates(p)
    assert templates["instruction_rewrite"] is REWRITE_CONDITION
    other = ConditionTemplate(REWRITE_CONDITION.template, "feature_prompt", lambda v: "x", per_instruction=False)
    p.add(make_module("c", faceedit_register_condition_templates=lambda register: (register("mine", other),
                                                                                  register("theirs", other))), name="c")
    spec = [{"name": "f", "kind": "feature_prompt", "template": None, "flagged": "keep", "judge": None,
             "position": "append"}]
    with pytest.raises(ConfigError, match="several are installed: choose one of mine, theirs"):
        build_conditions(spec, has_judge=True, templates=registered_templates(p))
    (chosen,) = build_conditions([{**spec[0], "template": "mine"}], has_judge=True, templates=registered_templates(p))
    assert chosen.template is other


def test_hook_faceedit_register_reproductions(monkeypatch, capsys):
    from faceedit_bench.cli import main

    def add_parser(sub):
        sub.add_parser("toy-table").set_defaults(func=lambda args: print("recomputed") or 0)

    p = load_plugins(entry_points=False)
    p.add(make_module("pub", faceedit_register_reproductions=lambda register: register("toy_table", add_parser)),
          name="pub")
    monkeypatch.setattr(plugins_module, "get_plugins", lambda: p)
    assert main(["reproduce", "toy-table"]) == 0 and "recomputed" in capsys.readouterr().out


def test_hook_faceedit_register_samples(monkeypatch):
    from types import SimpleNamespace

    from faceedit_bench.run.sampling import PublishedSample, find_published, published_sample

    table = PublishedSample(items=lambda model: [("f1", "s1"), ("f9", "s1")] if model == "a" else [],
                            models=("a", "b"), source="a paper's table")
    p = load_plugins(entry_points=False)
    p.add(make_module("pub", faceedit_register_samples=lambda register: register("table", table)), name="pub")
    monkeypatch.setattr(plugins_module, "get_plugins", lambda: p)
    assert find_published({"published": "table", "model": "a"}) is table
    with pytest.raises(ConfigError, match=r"run.sample.model='c'; choose one of a, b"):
        find_published({"published": "table", "model": "c"})
    with pytest.raises(ConfigError, match=r"run.sample.published='tabel'; registered published samples: table"):
        find_published({"published": "tabel", "model": "a"})
    drawn = published_sample([SimpleNamespace(face_id="f1")], [SimpleNamespace(session_id="s1")],
                             published="table", model="a")
    assert drawn.items == frozenset({("f1", "s1")})  # the item this run lacks is listed, never replaced
    assert (drawn.description["missing"], drawn.description["source"]) == (["f9|s1"], "a paper's table")


def test_hook_faceedit_config_searchpath(tmp_path):
    from faceedit_bench.run.group_options import group_options

    (tmp_path / "editor").mkdir()
    (tmp_path / "editor" / "from_yaml.yaml").write_text("name: identity\n")
    p = load_plugins(entry_points=False)
    p.add(make_module("c", faceedit_config_searchpath=lambda: [f"file://{tmp_path}"]), name="c")
    assert f"file://{tmp_path}" in p.searchpath()
    assert "from_yaml" in group_options(p)["editor"]


def test_hook_faceedit_fidelity_tables(tmp_path):
    from faceedit_bench.report.fidelity import read_tables, render_markdown

    table = tmp_path / "my_paper.yaml"
    table.write_text("paper: My paper\npresets: [my_preset]\nelements:\n  - {element: Judge, paper: gpt-4o, "
                     "config: judge.params.model, default: gpt-4o, source: Table 1, status: same}\n")
    p = load_plugins(entry_points=False)
    p.add(make_module("f", faceedit_fidelity_tables=lambda: [table]), name="f")
    tables = read_tables(p)
    assert list(tables)[-1] == "my_paper" and tables["my_paper"].presets == ["my_preset"]
    assert "## My paper" in render_markdown(tables)


class Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    @hookimpl
    def faceedit_run_start(self, run):
        self.calls.append(("start", run.run_key))

    @hookimpl
    def faceedit_step_done(self, run, step):
        self.calls.append(("step", step.outcome))

    @hookimpl
    def faceedit_run_end(self, run, report, artifacts):
        self.calls.append(("end", sorted(artifacts)))

    @hookimpl
    def faceedit_run_error(self, run, error):
        self.calls.append(("error", type(error).__name__))


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> list[tuple]:
    """The hook calls of one run (the ``synthetic`` fixture's faces), which the three tests below read."""
    tmp = tmp_path_factory.mktemp("recorded-run")
    plugins = plugins_for_tests()
    recorder = Recorder()
    plugins.pm.register(recorder, name="recorder")
    cfg = composed(tmp / "ws", "dataset=synthetic", f"+dataset.params.root={tmp / 'faces'}", "embedder=pixel",
                   "tracking=none", "run.workers=1", "testset=pose")
    run_experiment(build_experiment(cfg, plugins), plugins)
    return recorder.calls


def test_hook_faceedit_run_start(recorded):
    assert recorded[0][0] == "start" and len(recorded[0][1]) == 64


def test_hook_faceedit_step_done(recorded):
    assert [c for c in recorded if c[0] == "step"] == [("step", "ok")] * (4 * 5 * 4)


def test_hook_faceedit_run_end(recorded):
    assert recorded[-1] == ("end", ["config.yaml", "contact_sheets", "report.html", "report.json", "sessions.csv",
                                    "sessions.parquet", "steps.csv", "steps.parquet"])


def test_hook_faceedit_run_error(plugins, compose, synthetic):
    def broken_faces():
        raise KeyboardInterrupt  # an interrupted run

    cfg = compose(*synthetic, "testset=pose")
    recorder = Recorder()
    plugins.pm.register(recorder, name="recorder")
    exp = build_experiment(cfg, plugins)
    exp.components["dataset"].faces = broken_faces
    with pytest.raises(KeyboardInterrupt):
        run_experiment(exp, plugins)
    assert recorder.calls[-1] == ("error", "KeyboardInterrupt")


# -- loading ------------------------------------------------------------------------------


def test_broken_plugin_warns_names_its_distribution_and_others_load(fake_entry_points):
    fake_entry_points(
        FakeEntryPoint("broken", ImportError("no module named vendor_sdk"), "faceedit-bench-broken"),
        FakeEntryPoint("good", editor_plugin("good_editor"), "faceedit-bench-good"),
    )
    with pytest.warns(PluginLoadWarning, match="faceedit-bench-broken.*no module named vendor_sdk"):
        p = load_plugins()
    assert "good_editor" in p.registry["editors"].names()
    assert "broken" in p.failed


def test_a_misspelled_hook_breaks_only_its_plugin_which_is_listed_with_the_reason(fake_entry_points):
    typo = make_module("typo", faceedit_register_editor=lambda register: register("typo_editor", object))
    fake_entry_points(FakeEntryPoint("typo", typo, "faceedit-bench-typo"),
                      FakeEntryPoint("good", editor_plugin("good_editor"), "faceedit-bench-good"))
    with pytest.warns(PluginLoadWarning, match="'typo'.*faceedit_register_editor .did you mean "
                                               "faceedit_register_editors"):
        p = load_plugins()
    assert "good_editor" in p.registry["editors"].names() and "typo" not in p.info
    assert p.pm.get_plugin("typo") is None and "unknown hook" in p.failed["typo"]
    with pytest.raises(UnknownComponentError, match="typo_editor.*Broken plugins were skipped.*typo .implements"):
        p.registry.get("editors", "typo_editor")


@pytest.mark.parametrize("register", [
    lambda register: (register("half", object), register("not a name", object)),  # fails half-way
    lambda register: register("lazy", "no_colon_here"),  # a lazy target that cannot be imported
    lambda register: register("instance", object()),  # an object, not its factory
])
def test_a_malformed_registration_drops_everything_its_plugin_registered(fake_entry_points, register):
    fake_entry_points(FakeEntryPoint("bad", make_module("bad", faceedit_register_editors=register), "dist-bad"),
                      FakeEntryPoint("good", editor_plugin("good_editor"), "dist-good"))
    with pytest.warns(PluginLoadWarning, match="'bad' .dist-bad 1.0. is broken.*registering editors"):
        p = load_plugins()
    assert p.registry["editors"].names() == sorted(["good_editor", "identity", "replay"])
    assert "bad" in p.failed and "bad" not in {r["name"] for r in p.describe()}


def test_a_section_whose_template_is_missing_is_broken_when_loaded(tmp_path):
    from faceedit_bench.plugin.sections import ReportSection, SectionHtml

    section = ReportSection("nopage", "No page", {"type": "object"},
                            html=SectionHtml("missing.html.j2", package="faceedit_bench"))
    p = load_plugins(entry_points=False)
    p.add(make_module("np", faceedit_register_sections=lambda register: register("nopage", section)), name="np")
    with pytest.warns(PluginLoadWarning, match="report section 'nopage'.*missing.html.j2.*cannot be read"):
        assert "nopage" not in [s.name for s in p.sections()]


def test_a_section_part_that_breaks_its_schema_names_the_section_and_the_field():
    from faceedit_bench.plugin.sections import ReportSection, SectionError, validate_part
    from faceedit_bench.report.report_schema import section_part_schema

    section = ReportSection("tally2", "Tally", {"type": "object", "properties": {
        "counts": {"type": "object", "properties": {"n": {"type": "integer"}}}}})
    validate_part(section, {"counts": {"n": 3}}, section_part_schema(section))
    with pytest.raises(SectionError, match=r"'tally2'.*tally2\.counts\.n.*'three' is not of type 'integer'"):
        validate_part(section, {"counts": {"n": "three"}}, section_part_schema(section))


def test_a_failing_collector_names_its_section():
    from faceedit_bench.plugin.sections import SectionError, failing_section

    with pytest.raises(SectionError, match="report section 'tally': its collector .finish. failed .KeyError"):
        with failing_section("tally", "collector (finish)"):
            {}["sessions"]


def test_allow_list_and_block_list(fake_entry_points, monkeypatch):
    fake_entry_points(FakeEntryPoint("a", editor_plugin("ed_a"), "dist-a"),
                      FakeEntryPoint("b", editor_plugin("ed_b"), "dist-b"))
    monkeypatch.setenv("FACEEDIT_BENCH_LOAD_PLUGINS", "a")
    p = load_plugins()
    assert "ed_a" in p.registry["editors"].names() and "ed_b" not in p.registry["editors"].names()
    assert "identity" in p.registry["editors"].names()  # builtins always load
    monkeypatch.delenv("FACEEDIT_BENCH_LOAD_PLUGINS")
    monkeypatch.setenv("FACEEDIT_BENCH_DISABLE_PLUGINS", "dist-a")
    p = load_plugins()
    assert "ed_a" not in p.registry["editors"].names() and p.blocked == ["a"]


def test_two_plugins_claiming_one_name_is_reported_not_resolved(fake_entry_points):
    fake_entry_points(FakeEntryPoint("one", editor_plugin("shared"), "dist-one"),
                      FakeEntryPoint("two", editor_plugin("shared"), "dist-two"))
    with pytest.warns(PluginLoadWarning, match="'shared' is registered by several plugins"):
        p = load_plugins()
    assert p.registry.clashes() == {"editors": {"shared": ["one", "two"]}}
    with pytest.raises(ClashError, match="one, two"):
        p.registry.get("editors", "shared")


def test_entry_point_name_published_by_two_distributions_is_reported(fake_entry_points):
    fake_entry_points(FakeEntryPoint("same", editor_plugin("x1"), "dist-one"),
                      FakeEntryPoint("same", editor_plugin("x2"), "dist-two"))
    with pytest.warns(PluginLoadWarning, match="published by both dist-one and dist-two"):
        p = load_plugins()
    assert p.entry_point_clashes == {"same": ["dist-one", "dist-two"]}


def test_unknown_name_lists_available_with_did_you_mean():
    p = load_plugins(entry_points=False)
    with pytest.raises(UnknownComponentError) as err:
        p.registry.get("editors", "identiti")
    message = str(err.value)
    assert "Did you mean 'identity'?" in message and "identity, replay" in message


def test_plugins_are_not_loaded_at_import_time():
    import subprocess
    import sys

    code = "import faceedit_bench, faceedit_bench.plugin.manager as p; print(p.get_plugins.cache_info().currsize)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "0"


def test_plugins_cli_lists_plugins_versions_and_registrations(capsys):
    from faceedit_bench.cli import main

    assert main(["plugins", "--json"]) == 0
    import json

    listing = json.loads(capsys.readouterr().out)
    by_name = {row["name"]: row for row in listing["plugins"]}
    assert by_name["dlib"]["distribution"] == "faceedit-bench-dlib"
    assert by_name["dlib"]["registers"] == {"embedders": ["dlib"]}
    assert by_name["faceedit_bench.builtin.editors"]["registers"]["editors"] == ["identity", "replay"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert main(["plugins"]) == 0


def test_hook_faceedit_tracked_runs(tmp_path):
    """The first plugin that knows the URI answers; with none, the core says which plugin to install."""
    from faceedit_bench.errors import FaceEditBenchError
    from faceedit_bench.plugin.payloads import TrackedRun
    from faceedit_bench.report import sources

    files = {"report.json": b"{}", "steps.csv": b"a\n", "config.yaml": b"run: {}\n"}
    tracked = TrackedRun("r1", "FINISHED", {"plugins": "faceedit-bench-x==1.0"}, {}, files)
    plugin = make_module("tracker_reader", faceedit_tracked_runs=lambda tracking_uri, run_id, experiments, files:
                         [tracked] if tracking_uri.startswith("toy:") else None)
    plugins = load_plugins(entry_points=False)
    plugins.add(plugin, name="tracker_reader", distribution="faceedit-bench-tests")
    original = plugins_module.get_plugins
    plugins_module.get_plugins = lambda: plugins
    try:
        (run,) = sources.finished_mlflow_runs("toy://store")
        assert run.mlflow_run_id == "r1" and run.plugins == {"faceedit-bench-x": "1.0"} and run.steps_table == b"a\n"
        with pytest.raises(FaceEditBenchError, match="no installed tracker plugin reads"):
            sources.from_mlflow("0" * 32, "unknown://store", tmp_path)
    finally:
        plugins_module.get_plugins = original


def test_hook_faceedit_log_run_metrics(tmp_path):
    """The first plugin that knows the URI logs the human_* metrics; an unknown URI is a clear error."""
    from faceedit_bench_audit.human.cli import log_to_trackers
    from faceedit_bench_audit.human.runs import RatedRun

    from faceedit_bench.errors import FaceEditBenchError

    logged: dict[str, dict[str, float]] = {}

    def log(tracking_uri, run_key, metrics):
        if not tracking_uri.startswith("toy:"):
            return None
        logged[run_key] = metrics
        return "toy-run-1"

    plugins = load_plugins(entry_points=False)
    plugins.add(make_module("toy_tracker", faceedit_log_run_metrics=log), name="toy_tracker",
                distribution="faceedit-bench-tests")
    section = {"axes": {"edit_success": {"human": {"mean": 3.5}, "by_editor": {"e": {"mean": 3.0}},
                                         "fleiss_kappa": {"value": 0.2}, "krippendorff_alpha": {"value": None}}}}
    runs = [RatedRun("e", tmp_path / "runs" / "r", {"run": {"key": "k1"}}, ())]
    original = plugins_module.get_plugins
    plugins_module.get_plugins = lambda: plugins
    try:
        assert log_to_trackers(runs, section, "toy://store") == ["e: human metrics logged to tracker run toy-run-1"]
        assert logged["k1"] == {"human_edit_success_mean": 3.0, "human_edit_success_fleiss_kappa": 0.2}
        with pytest.raises(FaceEditBenchError, match="no installed tracker plugin reads unknown://"):
            log_to_trackers(runs, section, "unknown://store")
    finally:
        plugins_module.get_plugins = original


def test_hook_faceedit_log_run_artifacts(tmp_path):
    """The first plugin that knows the URI adds the files to the run of the run key; an unknown URI gives None."""

    logged: dict[str, dict[str, str]] = {}

    def log(tracking_uri, run_key, files):
        if not tracking_uri.startswith("toy:"):
            return None
        logged[run_key] = files
        return "toy-run-1"

    plugins = load_plugins(entry_points=False)
    plugins.add(make_module("toy_tracker", faceedit_log_run_artifacts=log), name="toy_tracker",
                distribution="faceedit-bench-tests")
    from faceedit_bench.api.sections import FinishedRun
    from faceedit_bench.plugin.manager import using_plugins

    with using_plugins(plugins):  # the test's own plugin set, the one FinishedRun.log reaches
        report = tmp_path / "report.json"
        run = FinishedRun({"run": {"key": "k1"}}, tmp_path)
        assert run.log("toy://store", files={report: "", tmp_path / "a.json": "extra"}) == "toy-run-1"
        assert logged["k1"] == {str(report): "", str(tmp_path / "a.json"): "extra"}
        assert run.log("unknown://store", files={report: ""}) is None


def test_a_section_template_that_does_not_parse_is_named_with_its_line(tmp_path, monkeypatch):
    from faceedit_bench.plugin.sections import ReportSection, SectionHtml, check_section

    package = tmp_path / "broken_section_templates"
    (package / "templates").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    template = package / "templates" / "part.html.j2"
    monkeypatch.syspath_prepend(str(tmp_path))
    section = ReportSection(name="part", title="Part", schema={}, html=SectionHtml("part.html.j2", package.name))
    template.write_text("<p>\n{% if x %}\n")
    for _ in range(2):  # checked again (another plugin set): the same error, from the source parsed once
        with pytest.raises(ValueError, match=r"its template templates/part.html.j2 line 2: Unexpected end"):
            check_section("part", section)
    template.write_text("<p>{% if x %}x{% endif %}</p>\n")  # a changed source is parsed anew
    check_section("part", section)
