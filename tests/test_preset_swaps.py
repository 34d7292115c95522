"""A preset never leaves parameters of a component the user can swap (issue 20, item 9): every preset
composed with every judge and every editor keeps that component exactly as its own entry has it (model,
endpoint, prices, limits ...), and a representative swap per provider sends that model to that endpoint."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from omegaconf import OmegaConf

from faceedit_bench.config import GROUP_KINDS
from faceedit_bench.run.experiment import build_experiment, run_experiment
from tests.cli_in_process import bench_in_process
from tests.fakes.bfl import bfl_server
from tests.fakes.byteplus import ark_server
from tests.fakes.creval import answer_body
from tests.fakes.gemini import gemini_server
from tests.fakes.openai import openai_server
from tests.fakes.replicate import replicate_server

ROOT = Path(__file__).resolve().parent.parent
PRESETS = sorted(p.stem for p in (ROOT / "conf" / "experiment").glob("*.yaml"))
CREVAL_BENCH = Path(__file__).parent / "data" / "creval_bench"
GEMINI_KEY, OPENAI_KEY = "test-gemini-key-swaps", "sk-test-openai-key-swaps"


def test_no_preset_sets_parameters_of_a_component_group():
    for preset in PRESETS:
        settings = yaml.safe_load((ROOT / "conf" / "experiment" / f"{preset}.yaml").read_text()) or {}
        assert not set(settings) & set(GROUP_KINDS), (
            f"experiment={preset} sets {sorted(set(settings) & set(GROUP_KINDS))}: select a config entry that "
            "carries those parameters instead (e.g. judge=creval_gpt4o), so that a swapped component keeps its own")


@contextlib.contextmanager
def composer() -> Iterator[Any]:
    """Compose with Hydra's real composition, in one initialisation for the whole matrix."""
    from hydra import compose, initialize_config_dir

    from faceedit_bench.plugin.manager import load_plugins
    from faceedit_bench.run.group_options import group_options
    from faceedit_bench.run.hydra_app import conf_dir, register_configs

    plugins = load_plugins()
    register_configs(plugins)
    with initialize_config_dir(config_dir=str(conf_dir()), version_base="1.3"):
        yield lambda *overrides: compose(config_name="config", overrides=list(overrides)), group_options(plugins)


def _show(node: dict[str, Any]) -> str:
    params = node.get("params") or {}
    return json.dumps({"name": node.get("name"), **{k: params.get(k) for k in ("model", "base_url", "prices")}})


@pytest.mark.slow(seconds=17)
def test_every_preset_keeps_every_swapped_judge_and_editor_as_its_entry_has_it():
    with composer() as (compose, options):
        _check_every_swap(compose, options)


def _check_every_swap(compose: Any, options: dict[str, list[str]]) -> None:
    judges, editors = options["judge"], options["editor"]
    alone = {(group, name): OmegaConf.to_container(compose(f"{group}={name}")[group], resolve=False)
             for group, names in (("judge", judges), ("editor", editors)) for name in names}
    wrong = []
    for preset in PRESETS:
        for i in range(max(len(judges), len(editors))):  # each judge and each editor at least once per preset
            chosen = {"judge": judges[i % len(judges)], "editor": editors[i % len(editors)]}
            cfg = compose(f"experiment={preset}", *(f"{g}={n}" for g, n in chosen.items()))
            for group, name in chosen.items():
                got = OmegaConf.to_container(cfg[group], resolve=False)
                if got != alone[(group, name)]:
                    wrong.append(f"experiment={preset} {group}={name}: {_show(got)} instead of "
                                 f"{_show(alone[(group, name)])}")
    assert not wrong, "\n".join(wrong)
    assert {"creval_gpt4o", "gemini", "openai", "paper_b_panel"} <= set(judges) and len(editors) > 10


def test_cfg_job_of_creval_with_gemini_shows_gemini_with_its_own_model_and_prices(tmp_path, monkeypatch, capfd):
    # The command's entry function in this process (tests/cli_in_process.py): Hydra's --cfg job as in a new one.
    out = bench_in_process(monkeypatch, capfd, tmp_path, "--cfg", "job", "experiment=creval", "judge=gemini",
                           env={"GEMINI_API_KEY": GEMINI_KEY})
    assert out.returncode == 0, out.stderr
    judge = yaml.safe_load(out.stdout)["judge"]
    assert (judge["name"], judge["params"]["model"], judge["params"]["prices"]) == ("gemini", "gemini-2.5-flash", None)
    assert "gpt-4o" not in out.stdout


def test_creval_with_gemini_asks_gemini_for_its_own_model(plugins, compose, monkeypatch):
    monkeypatch.setenv("GEMINI_API_KEY", GEMINI_KEY)
    with gemini_server(api_key=GEMINI_KEY, judge_answer=answer_body) as server:
        cfg = compose("experiment=creval", "judge=gemini", f"judge.params.base_url={server.url}",
                      f"dataset.params.root={CREVAL_BENCH}", "editor=identity", "embedder=pixel", "tracking=none",
                      "run.workers=1", "judge.params.limits.backoff_initial_s=0.01")
        report = run_experiment(build_experiment(cfg, plugins), plugins)
    assert server.gemini_calls and {c.model for c in server.gemini_calls} == {"gemini-2.5-flash"}
    assert report["components"]["judge"]["description"]["model"] == "gemini-2.5-flash"


def test_creval_keeps_gpt4o_with_its_prices_as_the_paper_has_it(plugins, compose, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    with openai_server(api_key=OPENAI_KEY, judge_answer=answer_body) as server:
        cfg = compose("experiment=creval", f"dataset.params.root={CREVAL_BENCH}", "editor=identity", "embedder=pixel",
                      "tracking=none", "run.workers=1", f"judge.params.base_url={server.url}/v1",
                      "judge.params.limits.backoff_initial_s=0.01")
        exp = build_experiment(cfg, plugins)
        assert exp.components["judge"].prices == {"input_tokens": 0.0000025, "output_tokens": 0.00001,
                                                  "as_of": "2026-12-01"}
        run_experiment(exp, plugins)
    assert server.received and {r.fields["model"] for r in server.received} == {"gpt-4o-2024-11-20"}
    assert {r.fields["max_completion_tokens"] for r in server.received} == {2000}


# -- hosted editors swapped into a preset: the model each provider receives -------------------------------

BFL_KEY, ARK_KEY, REPLICATE_TOKEN = "bfl-key-swaps", "ark-key-swaps", "r8_token_swaps"


def _bfl(monkeypatch: pytest.MonkeyPatch, params: dict[str, Any]) -> Any:
    monkeypatch.setenv("BFL_API_KEY", BFL_KEY)
    return bfl_server(api_key=BFL_KEY, generation_s=0.01, poll_latency_s=0.01), ["poll_interval_s=0.02"]


def _ark(monkeypatch: pytest.MonkeyPatch, params: dict[str, Any]) -> Any:
    monkeypatch.setenv("ARK_API_KEY", ARK_KEY)
    return ark_server(api_key=ARK_KEY), []


def _replicate(monkeypatch: pytest.MonkeyPatch, params: dict[str, Any]) -> Any:
    monkeypatch.setenv("REPLICATE_API_TOKEN", REPLICATE_TOKEN)
    server = replicate_server(token=REPLICATE_TOKEN, sync_wait_s=0.05)
    server.add_version(params["model"], image_param=params["image_param"])
    return server, []


def _submitted_model(request: Any) -> str | None:
    """The model a submission names: BFL in its path, BytePlus in its body, Replicate by its version."""
    if request.method != "POST":
        return None
    if request.path.startswith("/v1/flux"):
        return request.path.removeprefix("/v1/")
    if request.path == "/api/v3/images/generations":
        return request.json()["model"]
    if request.path == "/v1/predictions":
        return request.json()["version"]
    return None


@pytest.mark.parametrize(("editor", "provider", "suffix", "expected"), [
    ("kontext_pro", _bfl, "", lambda p: p["model"]),
    ("seededit", _ark, "/api/v3", lambda p: p["model"]),
    ("replicate_flux_kontext_pro", _replicate, "", lambda p: p["model"].split(":", 1)[1]),
], ids=["bfl", "byteplus", "replicate"])
def test_a_hosted_editor_swapped_into_a_preset_sends_its_own_model(plugins, compose, synthetic, monkeypatch, editor,
                                                                     provider, suffix, expected):
    params = OmegaConf.to_container(compose(f"editor={editor}").editor.params)
    server, extra = provider(monkeypatch, params)
    with server:
        cfg = compose("experiment=smoke", *synthetic, f"editor={editor}", f"editor.params.base_url={server.url}{suffix}",
                      "run.max_faces=1", "run.max_sessions=1", "editor.params.limits.backoff_initial_s=0.01",
                      *(f"editor.params.{e}" for e in extra))
        report = run_experiment(build_experiment(cfg, plugins), plugins)
    models = [m for m in map(_submitted_model, server.requests) if m is not None]
    assert len(models) == 4 and set(models) == {expected(params)}, [(r.method, r.path) for r in server.requests]
    assert report["counts"]["steps"] == {"ok": 4}
