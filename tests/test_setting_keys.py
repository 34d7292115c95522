"""Settings that cannot be silently wrong (issue 20, items 6, 7 and 10), through the real CLI: a key that no
schema and no factory knows is refused with the closest known one; a value a component's factory rejects
is named by its full key; a preset's unset required setting gets one line saying what to give. Each ends
the command with exit code 2 before anything at all is created."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from faceedit_bench.errors import ConfigError
from faceedit_bench.plugin.registry import Register
from tests.test_settings_errors import assert_user_error, refused

ROOT = Path(__file__).resolve().parent.parent
FAST = ["run.max_faces=1", "run.max_sessions=1", "run.workers=1", "run.progress=false"]
KEYS = {"GEMINI_API_KEY": "test-gemini-key-settings", "OPENAI_API_KEY": "sk-test-openai-key-settings"}
PRESETS = sorted(p.stem for p in (ROOT / "conf" / "experiment").glob("*.yaml"))


def bench(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **KEYS, "FACEEDIT_BENCH_HOME": str(tmp_path / "ws")}
    return subprocess.run([sys.executable, "-m", "faceedit_bench", *args], capture_output=True, text=True,
                          cwd=tmp_path, env=env, timeout=600)


def assert_nothing_created(tmp_path: Path) -> None:
    assert not (tmp_path / "ws").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # not even Hydra's folder or an outputs/


# -- item 6: unknown keys ------------------------------------------------------------------------


@pytest.mark.parametrize(("args", "expected"), [
    (["+run.max_face=1"], "run.max_face is unknown (did you mean run.max_faces"),
    (["run.max_face=2"], "run.max_face is unknown (did you mean run.max_faces"),
    (["+run.bogus_key=1"], "run.bogus_key is unknown. The settings of run: workspace, max_faces"),
    (["+analysis.audit.disparity=race"], "analysis.audit.disparity is unknown (did you mean analysis.audit.disparity_by?)"),
    (["+judge_metric=[sc]"], "judge_metric is unknown (did you mean judge_metrics?)"),
    (["embedder.params.upsampel=2"],
     "embedder 'dlib' does not take parameter(s) upsampel: embedder.params.upsampel is unknown (did you mean "
     "embedder.params.upsample?)"),
    (["+editor.params.strenght=3"], "editor 'identity' does not take parameter(s) strenght"),
    (["judge=paper_b_panel", "judge.params.members.gpt.params.reasoning_efort=low"],
     "judge.params.members.gpt.params.reasoning_efort is unknown (did you mean "
     "judge.params.members.gpt.params.reasoning_effort?)"),
    (["judge=none", "+judge.params.model=gpt-4o"], "judge=none takes no parameters"),
    # A top-level key that exists one level down, written as Hydra advises or not (issue 41, item 5).
    (["max_faces=2"], "max_faces is not a top-level setting (did you mean run.max_faces?)"),
    (["+max_faces=2"], "max_faces is not a top-level setting (did you mean run.max_faces?)"),
    # A value of the wrong type: the key, the value and what it must be, not Hydra's composition error.
    (["run.seed=abc"], "run.seed=abc is not allowed: it must be a whole number."),
    (["run.one_gpu_per_shard=maybe"], "run.one_gpu_per_shard=maybe is not allowed: it must be true or false."),
    (["run.confidence=high"], "run.confidence=high is not allowed: it must be a number."),
    # A key nested in a parameter: the component names it, the full key and the closest known one are given.
    (["editor=nano_banana", "editor.params.limits.max_concurency=3"],
     "rejected parameter editor.params.limits.max_concurency=3: editor nano_banana: unknown limits key(s) "
     "limits.max_concurency (did you mean limits.max_concurrency?)"),
])
def test_an_unknown_key_is_refused_with_the_closest_known_one_and_nothing_is_created(tmp_path, monkeypatch, capsys,
                                                                                     args, expected):
    out = refused(monkeypatch, capsys, tmp_path, *args, *FAST, env=KEYS)
    assert_user_error(out, expected)
    assert out.stderr.startswith("Error: ") and out.stderr.count("\n") == 1  # one line
    assert_nothing_created(tmp_path)


@pytest.fixture
def loose_editors(plugins):
    """Editors whose factory takes **kwargs: one declaring nothing, one declaring its parameters, one trusted."""

    def loose(**kwargs):  # noqa: ANN003, ANN202 - a factory that takes anything
        raise AssertionError("never built by a key check")

    register = Register(plugins.registry["editors"], "loose_plugin")
    register("undeclared", loose)
    register("declared", loose, params=["strength", "seed"])
    register("trusted", loose, params="any")
    return plugins


def test_a_factory_taking_kwargs_must_declare_its_parameters_or_be_trusted(loose_editors):
    from faceedit_bench.run.setting_keys import check_setting_keys

    def check(name, **params):
        check_setting_keys({"editor": {"name": name, "params": params}}, loose_editors)

    with pytest.raises(ConfigError, match=r"editor 'undeclared' \(plugin loose_plugin\) takes \*\*kwargs and does "
                                          r"not say which parameters it accepts.*params=\[<names>\]"):
        check("undeclared", strength=1)
    check("declared", strength=1, seed=2)
    with pytest.raises(ConfigError, match=r"editor\.params\.strenght is unknown \(did you mean editor\.params\."
                                          r"strength\?\)\. Accepted: strength, seed"):
        check("declared", strenght=1)
    check("trusted", anything=1)
    with pytest.raises(ValueError, match="must be parameter names"):
        Register(loose_editors.registry["editors"], "p")("bad", dict, params="strength")


def test_a_conditions_judge_and_a_panel_member_are_checked_with_their_full_key(plugins):
    from faceedit_bench.run.setting_keys import check_setting_keys

    condition = {"name": "features", "kind": "feature_prompt",
                 "judge": {"name": "gemini", "params": {"temprature": 0.0}}}
    with pytest.raises(ConfigError, match=r"conditions\[1\]\.judge\.params\.temprature is unknown \(did you mean "
                                          r"conditions\[1\]\.judge\.params\.temperature\?\)"):
        check_setting_keys({"conditions": ["baseline", condition]}, plugins)
    panel = {"name": "panel", "params": {"rule": "mean", "quorom": 2, "members": {}}}
    with pytest.raises(ConfigError, match=r"judge\.params\.quorom is unknown \(did you mean judge\.params\.quorum\?\)"):
        check_setting_keys({"judge": panel}, plugins)


# -- item 7: a rejected value is found before anything is created, by its full key -----------------------


@pytest.mark.parametrize(("args", "expected"), [
    (["editor=nano_banana", "editor.params.limits.max_concurrency=-2"],
     "editor 'nano_banana' rejected parameter editor.params.limits.max_concurrency=-2: editor nano_banana: invalid "
     "limits: max_concurrency=-2 is not allowed: it must be at least 1"),
    (["editor=nano_banana", "editor.params.limits.max_attempts=0"],
     "rejected parameter editor.params.limits.max_attempts=0: "),
    (["editor=nano_banana", "editor.params.temperature=7"],
     "editor 'nano_banana' rejected parameter editor.params.temperature=7: editor nano_banana: temperature must be "
     "between 0 and 2"),
    (["judge=gemini", "judge.params.limits.requests_per_minute=0"],
     "rejected parameter judge.params.limits.requests_per_minute=0: "),
    (["judge=paper_b_panel", "judge.params.members.gemini.params.temperature=5"],
     "judge 'gemini' rejected parameter judge.params.members.gemini.params.temperature=5: "),
    (["+dataset.params.min_base_fss=1.5"], "dataset.params.min_base_fss must be a number in [0, 1] or null, got 1.5"),
])
def test_a_value_a_component_rejects_is_named_and_nothing_is_created(tmp_path, monkeypatch, capsys, args, expected):
    # MLflow tracking, Hydra's folder inside the workspace: the defaults
    out = refused(monkeypatch, capsys, tmp_path, *args, *FAST, env=KEYS)
    assert_user_error(out, expected)
    assert_nothing_created(tmp_path)


def test_a_given_hydra_run_dir_is_not_created_either(tmp_path, monkeypatch, capsys):
    job = tmp_path / "job"
    out = refused(monkeypatch, capsys, tmp_path, "editor=nano_banana", "editor.params.temperature=7",
                  f"hydra.run.dir={job}", *FAST, env=KEYS)
    assert_user_error(out, "editor.params.temperature=7")
    assert_nothing_created(tmp_path)


def test_a_missing_api_key_is_reported_as_it_is_before_anything_is_created(tmp_path):
    env_less = {k: v for k, v in os.environ.items() if k not in ("GEMINI_API_KEY", "GOOGLE_API_KEY")}
    out = subprocess.run([sys.executable, "-m", "faceedit_bench", "editor=nano_banana", *FAST], capture_output=True,
                         text=True, cwd=tmp_path, env={**env_less, "FACEEDIT_BENCH_HOME": str(tmp_path / "ws")},
                         timeout=600)
    assert_user_error(out, "Error: editor nano_banana needs an API key in the environment variable GEMINI_API_KEY")
    assert "rejected" not in out.stderr  # not mistaken for a parameter's value
    assert_nothing_created(tmp_path)


# -- item 10: every preset's required settings ---------------------------------------------------------


def _unset(node: object, prefix: str = "") -> list[str]:
    if isinstance(node, dict):
        return [k for key, value in node.items() for k in _unset(value, f"{prefix}{key}.")]
    return [prefix[:-1]] if node == "???" else []


def test_only_the_smoke_preset_needs_no_setting(compose):
    from omegaconf import OmegaConf

    needs = {p: _unset(OmegaConf.to_container(compose(f"experiment={p}"), resolve=False)) for p in PRESETS}
    assert {p for p, keys in needs.items() if not keys} == {"smoke"}
    assert all(keys == ["dataset.params.root"] for p, keys in needs.items() if p != "smoke"), needs


@pytest.mark.parametrize("preset", [p for p in PRESETS if p != "smoke"])
def test_a_preset_without_its_required_setting_says_what_to_give(tmp_path, monkeypatch, capsys, preset):
    out = refused(monkeypatch, capsys, tmp_path, f"experiment={preset}", env=KEYS)
    assert_user_error(out, f"Error: experiment={preset} needs dataset.params.root: ",
                      f"(e.g. python -m faceedit_bench experiment={preset} dataset.params.root=/data/")
    assert out.stderr.count("\n") == 1
    assert "(docs/" in out.stderr or "official layout" in out.stderr  # where to read what the setting is
    assert_nothing_created(tmp_path)


def test_a_parameter_the_factory_takes_is_set_without_plus_where_its_entry_does_not_list_it(tmp_path):
    cache = tmp_path / "sample_cache"  # `sample` takes cache_dir; conf/dataset/sample.yaml does not list it
    out = bench(tmp_path, f"dataset.params.cache_dir={cache}", "tracking=none", "testset=pose", *FAST)
    assert out.returncode == 0, out.stderr[-3000:]
    assert cache.is_dir()
    (overrides,) = (tmp_path / "ws" / "hydra").glob("*/.hydra/overrides.yaml")
    assert f"++dataset.params.cache_dir={cache}" in overrides.read_text()  # added, as Hydra's + would
    assert "\n- run.max_faces=1" in overrides.read_text()  # keys the config has stay as given


def test_the_task_runs_the_experiment_built_before_hydra_started(compose, plugins):
    from faceedit_bench.run.preflight import Preflighted

    cfg = compose("tracking=none")
    checked = Preflighted([], OmegaConf.to_container(cfg, resolve=False), experiment="built")
    assert checked.take(compose("tracking=none", "run.seed=1")) is None  # another config: built anew
    checked = Preflighted([], OmegaConf.to_container(cfg, resolve=False), experiment="built")
    assert checked.take(cfg) == "built" and checked.take(cfg) is None  # once: a sweep's next job builds its own
