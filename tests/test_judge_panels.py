"""Judge panels: members asked separately and stored separately, answers combined by a stated rule.

In-process fake judges implementing the Judge protocol check every case of paper (b)'s appendix rule
(agreeing, disagreeing, a failed secondary, a failed primary) and the other rules; runs through the
engine check the report's counts and flags, with in-process judges and with the real Gemini and OpenAI
SDKs against their fake servers (``judge=paper_b_panel``).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from faceedit_bench import hookimpl
from faceedit_bench.api import CallLimits, JudgeAnswer, JudgeReply, Outcome
from faceedit_bench.errors import ConfigError
from faceedit_bench.execution.calls import Executors
from faceedit_bench.run.experiment import build_experiment, run_experiment
from faceedit_bench.scoring.judge.panel import PanelRule, PanelService, combine
from faceedit_bench.scoring.judge.prompts import SC_TEMPLATE, STATE_TEMPLATE
from faceedit_bench.scoring.judge.service import JudgeService, judgment_key
from faceedit_bench.scoring.judge.standard import sc_point
from faceedit_bench.storage.ledger import Ledger
from faceedit_bench.storage.store import ImageStore
from faceedit_bench.testing import gradient_image
from tests.fakes.answers import example_from_schema
from tests.fakes.gemini import gemini_server
from tests.fakes.openai import openai_server


def sc(success: int, over: int, why: str = "") -> str:
    return json.dumps({"editing_success": success, "overediting": over, "reasoning": why or f"{success}/{over}"})


class FakeJudge:
    """The Judge protocol, in process: ``answer(request) -> JudgeReply``; counts its calls."""

    prices: dict[str, float] = {}

    def __init__(self, name: str, answer: Any) -> None:
        self.name, self.answer, self.calls = name, answer, 0
        self.limits = CallLimits(provider_key=f"fake-{name}", max_attempts=1)

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "model": f"{self.name}-model-1"}

    async def ajudge(self, request: Any) -> JudgeReply:
        self.calls += 1
        return self.answer(request)


def ok(text: str) -> Any:
    return lambda request: JudgeReply(Outcome.OK, text)


def refused(request: Any) -> JudgeReply:
    return JudgeReply(Outcome.REFUSED, reason="fake policy block")


@pytest.fixture
def workspace(tmp_path):
    ledger, store = Ledger(tmp_path / "ledger.sqlite"), ImageStore(tmp_path / "store")
    images = [store.put(gradient_image(0)), store.put(gradient_image(1))]
    yield ledger, store, images
    ledger.close()


def ask_panel(workspace: Any, gemini: Any, gpt: Any, rule: str = "tolerance",
              instruction: str = "put a beret on the person") -> tuple[JudgeAnswer, dict[str, Any]]:
    ledger, store, images = workspace
    executors = Executors()
    judges = {"gemini": FakeJudge("gemini", gemini), "gpt": FakeJudge("gpt", gpt)}
    services = {m: JudgeService(j, f"fp-{m}", executors.get(j.limits), ledger, store) for m, j in judges.items()}
    panel = PanelService(services, PanelRule(rule, ("gemini", "gpt"), "gemini"), {})
    answer = asyncio.run(panel.ask(SC_TEMPLATE, images, 0, instruction=instruction))
    return answer, {"judges": judges, "services": services, "panel": panel}


def test_paper_b_agreeing_members_give_the_half_even_rounded_mean(workspace):
    answer, _ = ask_panel(workspace, ok(sc(4, 6, "gemini says")), ok(sc(5, 7)))
    assert answer.outcome is Outcome.OK and answer.status == "agreed" and answer.flags == ()
    # round(4.5) = 4 and round(6.5) = 6: Python's round, half to even, as paper (b)'s code
    assert answer.value == {"editing_success": 4, "overediting": 6, "reasoning": "gemini says"}
    assert sc_point(answer.value) == 0.4
    answer, _ = ask_panel(workspace, ok(sc(3, 3)), ok(sc(4, 4)), instruction="another question")
    assert (answer.value["editing_success"], answer.value["overediting"]) == (4, 4)  # round(3.5) = 4


def test_paper_b_disagreeing_members_keep_the_primary_and_flag(workspace):
    answer, _ = ask_panel(workspace, ok(sc(2, 8)), ok(sc(5, 9)))
    assert answer.status == "disagreed" and answer.flags == ("editing_success",)
    assert (answer.value["editing_success"], answer.value["overediting"]) == (2, 8)  # 2 kept; round(8.5) = 8
    assert {m: a.value["editing_success"] for m, a in answer.members.items()} == {"gemini": 2, "gpt": 5}


def test_paper_b_failed_secondary_gives_the_primary_alone(workspace):
    answer, _ = ask_panel(workspace, ok(sc(7, 3)), refused)
    assert answer.outcome is Outcome.OK and answer.status == "secondary_failed" and answer.failed == ("gpt",)
    assert answer.value == json.loads(sc(7, 3))
    assert answer.members["gpt"].outcome is Outcome.REFUSED


def test_paper_b_failed_primary_leaves_the_answer_undefined(workspace):
    answer, _ = ask_panel(workspace, refused, ok(sc(7, 3)))
    assert answer.outcome is Outcome.REFUSED and answer.value is None and answer.status == "primary_failed"
    assert answer.members["gpt"].outcome is Outcome.OK  # the secondary's answer is kept, but not used


def test_every_member_answer_is_stored_under_its_own_key_and_reused(workspace):
    ledger, _, images = workspace
    answer, parts = ask_panel(workspace, ok(sc(4, 6)), ok(sc(9, 9)))
    prompt = SC_TEMPLATE.render(instruction="put a beret on the person")
    stored = {m: ledger.get_judgment(judgment_key(f"fp-{m}", SC_TEMPLATE, prompt, images, 0)) for m in ("gemini", "gpt")}
    assert stored["gemini"].value["editing_success"] == 4 and stored["gpt"].value["editing_success"] == 9
    again = asyncio.run(parts["panel"].ask(SC_TEMPLATE, images, 0, instruction="put a beret on the person"))
    assert [j.calls for j in parts["judges"].values()] == [1, 1]  # the second ask came from the ledger
    assert again.value == answer.value and again.resumed


def member(value: Any, outcome: Outcome = Outcome.OK) -> JudgeAnswer:
    return JudgeAnswer(outcome, value, None, "", {}, "t@1", "h")


def test_mean_median_majority_and_the_quorum():
    answers = {"a": member({"editing_success": 2, "overediting": 3, "reasoning": "a"}),
               "b": member({"editing_success": 3, "overediting": 3, "reasoning": "b"}),
               "c": member({"editing_success": 7, "overediting": 3, "reasoning": "c"})}
    members = ("a", "b", "c")
    mean = combine(SC_TEMPLATE, answers, PanelRule("mean", members, "a"))
    assert mean.value == {"editing_success": 4.0, "overediting": 3.0, "reasoning": "a"}
    assert mean.flags == ("editing_success",)  # 2..7 is further apart than the tolerance: flagged, still averaged
    assert sc_point(mean.value) == 0.3
    assert combine(SC_TEMPLATE, answers, PanelRule("median", members, "a")).value["editing_success"] == 3
    majority = combine(SC_TEMPLATE, {**answers, "c": member({"editing_success": 3, "overediting": 3, "reasoning": "c"})},
                       PanelRule("majority", members, "a"))
    assert majority.value["editing_success"] == 3
    tie = combine(SC_TEMPLATE, answers, PanelRule("majority", members, "c"))
    assert tie.value["editing_success"] == 7  # a three-way tie goes to the primary
    short = {**answers, "b": member(None, Outcome.API_ERROR)}
    undefined = combine(SC_TEMPLATE, short, PanelRule("mean", members, "a"))
    assert undefined.outcome is Outcome.API_ERROR and undefined.value is None and undefined.status == "too_few"
    assert combine(SC_TEMPLATE, short, PanelRule("mean", members, "a", quorum=2)).value["editing_success"] == 4.5


def test_categorical_fields_follow_the_majority_and_are_flagged():
    base = example_from_schema(STATE_TEMPLATE.json_schema)
    other = {**base, "beard": ["goatee"]} if base["beard"] != ["goatee"] else {**base, "beard": ["clean shaven"]}
    answer = combine(STATE_TEMPLATE, {"g": member(base), "o": member(other)}, PanelRule("tolerance", ("g", "o"), "g"))
    assert answer.value == base and answer.flags == ("beard",) and answer.status == "disagreed"


def test_rule_and_members_are_checked():
    with pytest.raises(ValueError, match="rule='avg'.*tolerance"):
        PanelRule("avg", ("a", "b"), "a")
    with pytest.raises(ValueError, match="primary='z' is not a member"):
        PanelRule("tolerance", ("a", "b"), "z")
    with pytest.raises(ValueError, match="at least two members"):
        PanelRule("tolerance", ("a",), "a")
    with pytest.raises(ValueError, match="rounding='nearest'; choose one of half_even, half_up, none"):
        PanelRule("tolerance", ("a", "b"), "a", rounding="nearest")
    with pytest.raises(ValueError, match="categorical='vote'; choose one of majority, agreement"):
        PanelRule("tolerance", ("a", "b"), "a", categorical="vote")
    # the defaults leave the identity of every panel configured before these settings unchanged
    assert set(PanelRule("tolerance", ("a", "b"), "a").describe()) == {"rule", "primary", "tolerance", "quorum", "members"}


def test_a_bad_panel_setting_stops_the_run_before_any_work(plugins, compose, synthetic, monkeypatch):
    monkeypatch.setenv("GEMINI_API_KEY", GEMINI_KEY)
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    with pytest.raises(ConfigError, match="judge.params.categorical='vote'"):
        build_experiment(compose(*synthetic, "judge=paper_b_panel", "judge.params.categorical=vote"), plugins)
    with pytest.raises(ConfigError, match="judge.params.notes must be a list of sentences"):
        build_experiment(compose(*synthetic, "judge=paper_b_panel", "judge.params.notes=oops"), plugins)


# -- through the engine, in-process judges ------------------------------------------------------


class MixedJudge(FakeJudge):
    """An in-process panel member registered as a judge. ``base`` is its SC score; with
    ``mixed=true`` it answers by the question's content hash: agree (base+1), disagree (base+5)
    or refuse, and notes what it did per question (``MixedJudge.log``)."""

    log: list[tuple[str, str]] = []

    def __init__(self, model: str, base: int = 4, mixed: bool = False, refuse: bool = False) -> None:
        super().__init__(model, self._reply)
        self.base, self.mixed, self.refuse = base, mixed, refuse

    def describe(self) -> dict[str, Any]:
        return {"name": "mixed", "model": self.name, "base": self.base, "mixed": self.mixed}

    def _reply(self, request: Any) -> JudgeReply:
        if "editing_success" not in request.schema["properties"]:
            return JudgeReply(Outcome.OK, json.dumps(example_from_schema(request.schema)))
        if self.refuse:
            return refused(request)
        if not self.mixed:
            return JudgeReply(Outcome.OK, sc(self.base, self.base))
        instruction = re.search(r"Editing instruction: (.*)", request.prompt).group(1)
        how = ("agree", "disagree", "refuse")[int(hashlib.sha256(request.prompt.encode()).hexdigest(), 16) % 3]
        MixedJudge.log.append((instruction, how))
        if how == "refuse":
            return refused(request)
        return JudgeReply(Outcome.OK, sc(self.base + (1 if how == "agree" else 5), self.base + 1))


@hookimpl
def faceedit_register_judges(register: Any) -> None:
    register("mixed", MixedJudge)


def panel_overrides(rule: str = "tolerance", gpt: str = "mixed:true") -> list[str]:
    return ["judge=panel", f"judge.params.rule={rule}", "judge.params.primary=gemini",
            "+judge.params.members.gemini={name: mixed, params: {model: g, base: 4}}",
            f"+judge.params.members.gpt={{name: mixed, params: {{model: o, base: 4, {gpt}}}}}"]


def test_a_panel_run_reports_member_outcomes_statuses_and_flags(plugins, compose, synthetic):
    import sys

    plugins.add(sys.modules[__name__], name="panel_fakes")
    MixedJudge.log = []
    exp = build_experiment(compose(*synthetic, "editor=identity", "testset=pose", "run.max_faces=2",
                                   "run.max_sessions=3", "analysis.n_resamples=99", *panel_overrides()), plugins)
    report = run_experiment(exp, plugins)
    anchors = {a["instruction"] for a in report["judge_reliability"]["anchors"]}
    asked = Counter(how for instruction, how in MixedJudge.log if instruction not in anchors)
    assert sum(asked.values()) == 2 * 3 * 4 and len(asked) == 3  # every case happened
    template = "viescore-tie-sc@1"
    panel = report["judge_panel"]
    assert panel["rule"]["rule"] == "tolerance" and panel["rule"]["primary"] == "gemini"
    # agree: |4 - 5| <= 1; disagree: |4 - 9| > 1 (flagged); refuse: the primary alone (counted)
    assert panel["status"][template] == {"agreed": asked["agree"], "disagreed": asked["disagree"],
                                         "secondary_failed": asked["refuse"]}
    assert panel["flags"][template] == {"editing_success": asked["disagree"]}
    assert panel["flagged_items"] == asked["disagree"] == len(panel["flagged"])
    assert all(f["kept"] == {"editing_success": 4} and f["members"]["gpt"] == {"editing_success": 9}
               for f in panel["flagged"])
    assert report["counts"]["judge_members"][template] == {
        "gemini": {"ok": 24}, "gpt": {"ok": asked["agree"] + asked["disagree"], "refused": asked["refuse"]}}
    # Every combined SC_k: agree round(4.5) = 4 and round(5) = 5 -> min 4; disagree keeps 4; alone 4 -> SC 40
    assert report["metrics"]["sc"]["mean"] == pytest.approx(40.0) and report["metrics"]["sc"]["n"] == 6
    assert report["counts"]["judge"][template] == {"ok": 24}
    assert report["components"]["judge"]["description"]["panel"]["members"] == ["gemini", "gpt"]

    # The rule is part of the run's identity: another rule is another run (members' answers reused).
    calls = MixedJudge.log[:]
    other = build_experiment(compose(*synthetic, "editor=identity", "testset=pose", "run.max_faces=2",
                                     "run.max_sessions=3", "analysis.n_resamples=99", *panel_overrides("mean")),
                             plugins)
    assert other.info.run_key != exp.info.run_key
    report = run_experiment(other, plugins)
    assert MixedJudge.log == calls, "the members' stored answers are reused by a panel with another rule"
    assert report["judge_panel"]["status"][template]["too_few"] == asked["refuse"]  # mean needs every member


def test_a_failed_primary_leaves_sessions_undefined_and_counted(plugins, compose, synthetic):
    import sys

    plugins.add(sys.modules[__name__], name="panel_fakes")
    overrides = ["judge=panel", "+judge.params.members.gemini={name: mixed, params: {model: g, refuse: true}}",
                 "+judge.params.members.gpt={name: mixed, params: {model: o}}"]
    report = run_experiment(build_experiment(compose(*synthetic, "editor=identity", "testset=pose",
                                                     "run.max_faces=1", "run.max_sessions=1",
                                                     "analysis.n_resamples=99", *overrides), plugins), plugins)
    template = "viescore-tie-sc@1"
    assert report["judge_panel"]["status"][template] == {"primary_failed": 4}
    assert report["counts"]["judge"][template] == {"refused": 4}
    assert report["metrics"]["sc"]["n"] == 0 and report["metrics"]["sc"]["undefined_sessions"] == 1
    assert report["counts"]["judge_members"][template] == {"gemini": {"refused": 4}, "gpt": {"ok": 4}}


def test_a_panel_needs_members_and_names_how_to_give_them(plugins, compose, synthetic):
    with pytest.raises(ConfigError, match=r"at least two members.*judge\.params\.members"):
        build_experiment(compose(*synthetic, "judge=panel"), plugins)
    with pytest.raises(ConfigError, match="judge.params.members.x: .*Unknown judge 'nope'"):
        build_experiment(compose(*synthetic, "judge=panel", "+judge.params.members.x={name: nope}",
                                 "+judge.params.members.y={name: nope}"), plugins)


# -- end to end: paper (b)'s panel with the real SDKs against fake Gemini and OpenAI servers ----

GEMINI_KEY, OPENAI_KEY = "AIza-panel-gemini-key", "sk-panel-openai-key"
FAST = ["limits.max_attempts=2", "limits.requests_per_minute=6000", "limits.tokens_per_minute=null",
        "limits.backoff_initial_s=0.01", "limits.backoff_max_s=0.05", "limits.timeout_s=5"]


def _asks_sc(request: dict) -> bool:
    """Whether the request asks paper (a)'s SC question (else the state tracker's), from its prompt: paper (b)'s
    panel sends no schema, as the authors' judge code did."""
    turns = request.get("contents") or request.get("input") or request.get("messages") or []
    text = json.dumps(turns)
    return SC_TEMPLATE.text.split("\n")[0] in text


def gemini_answer(request: dict) -> str:
    return sc(6, 6) if _asks_sc(request) else json.dumps(example_from_schema(STATE_TEMPLATE.json_schema))


def openai_answer(request: dict) -> str:
    if not _asks_sc(request):
        return json.dumps(example_from_schema(STATE_TEMPLATE.json_schema))
    turns = request.get("input") or request.get("messages")
    disagree = int(hashlib.sha256(json.dumps(turns).encode()).hexdigest(), 16) % 3 == 0
    return sc(10, 10) if disagree else sc(7, 7)


def test_paper_b_panel_end_to_end_with_gemini_and_openai(plugins, compose, synthetic, monkeypatch):
    monkeypatch.setenv("GEMINI_API_KEY", GEMINI_KEY)
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    with gemini_server(api_key=GEMINI_KEY, judge_answer=gemini_answer) as g, \
            openai_server(api_key=OPENAI_KEY, judge_answer=openai_answer) as o:
        # The first OpenAI answer is a refusal: Gemini alone, counted. Which question it hits follows the order
        # of the ledger keys; an identical question asked again (the identity editor's steps) reuses it.
        o.script(["refusal"])
        overrides = [*synthetic, "editor=identity", "testset=pose", "run.max_faces=1", "run.max_sessions=2",
                     "analysis.n_resamples=99", "judge=paper_b_panel",
                     f"judge.params.members.gemini.params.base_url={g.url}",
                     f"judge.params.members.gpt.params.base_url={o.url}/v1",
                     *[f"judge.params.members.gemini.params.{s}" for s in FAST],
                     *[f"judge.params.members.gpt.params.{s}" for s in FAST]]
        report = run_experiment(build_experiment(compose(*overrides), plugins), plugins)
        calls = (g.calls, o.calls)
        rerun = run_experiment(build_experiment(compose(*overrides), plugins), plugins)
        assert (g.calls, o.calls) == calls, "a rerun takes every member's answer from the ledger"
    sc_t, state_t = "viescore-tie-sc@1", "state-tracker@1"
    members = report["counts"]["judge_members"]
    assert sum(members[sc_t]["gpt"].values()) + sum(members[state_t]["gpt"].values()) == 8 + 10
    refused = members[sc_t]["gpt"].get("refused", 0) + members[state_t]["gpt"].get("refused", 0)
    assert refused >= 1
    status = report["judge_panel"]["status"]
    assert status[sc_t].get("secondary_failed", 0) + status[state_t].get("secondary_failed", 0) == refused
    assert status[sc_t].get("disagreed", 0) == report["judge_panel"]["flags"].get(sc_t, {}).get("editing_success", 0)
    assert status[sc_t].get("disagreed", 0) >= 1 and status[sc_t].get("agreed", 0) >= 1
    # Gemini 6 and GPT 7 agree: round(6.5) = 6 (half to even); GPT 10 disagrees: Gemini's 6 -> SC 60 throughout
    assert report["metrics"]["sc"]["mean"] == pytest.approx(60.0) and report["metrics"]["sc"]["n"] == 2
    assert report["metrics"]["oer"]["n"] == 2
    description = report["components"]["judge"]["description"]
    assert description["panel"]["rule"] == "tolerance" and set(description["members"]) == {"gemini", "gpt"}
    assert description["members"]["gpt"]["model"] == "gpt-5-mini-2025-08-07"
    assert rerun["judge_panel"]["status"] == status
    (page,) = (Path(compose().run.workspace) / "runs").glob("identity-*/report.html")
    html = page.read_text()
    assert 'id="judge-panel"' in html and "Rule tolerance" in html and "secondary_failed: " in html
    assert 'id="group-tests"' in html  # gender x skin_tone: the synthetic faces have no skin tone, said so


def test_the_paper_b_panel_records_its_decoding_in_each_members_identity(plugins, compose, synthetic, monkeypatch):
    """Each member's decoding is in its description, which is its judgment keys' judge fingerprint: answers
    given under other decoding are never reused as the paper's."""
    from faceedit_bench.keys import fingerprint, portable

    monkeypatch.setenv("GEMINI_API_KEY", GEMINI_KEY)
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)

    def members(*overrides: str) -> dict:
        exp = build_experiment(compose(*synthetic, "judge=paper_b_panel", *overrides), plugins)
        return exp.info.components["judge"].description["members"]

    paper = members()
    gemini, gpt = paper["gemini"], paper["gpt"]
    assert (gemini["model"], gemini["temperature"], gemini["max_output_tokens"]) == ("gemini-3-flash-preview", 0.1, 3000)
    assert "thinking_level" not in gemini and gemini["structured_output"] == "none (JSON asked in the prompt)"
    assert (gpt["api"], gpt["reasoning_effort"], gpt["verbosity"], gpt["temperature"], gpt["max_output_tokens"]) == (
        "responses", "low", "medium", None, None)
    other = members("judge.params.members.gemini.params.temperature=1.0")["gemini"]
    identity = lambda d: fingerprint(portable({k: v for k, v in d.items() if k not in ("provider", "provider_version")}))  # noqa: E731
    assert identity(other) != identity(gemini) and identity(members()["gemini"]) == identity(gemini)
