"""Position-swapped pairwise judging: hand-made answers, and a fake OpenAI judge through the real SDK."""

from __future__ import annotations

import asyncio
import io
import json

import numpy as np
import pytest
from faceedit_bench_arena.pairwise_judge import CRITERIA, TEMPLATE, ask_battle, combine, position_bias
from PIL import Image

from faceedit_bench.api import JudgeAnswer, Outcome, registered
from faceedit_bench.api.judging import JudgeSession
from tests.fakes.openai import _chat_images, openai_server

KEY_ENV = "FACEEDIT_TEST_OPENAI_KEY"
FAST = {"requests_per_minute": None, "tokens_per_minute": None, "backoff_initial_s": 0.01, "backoff_max_s": 0.05,
        "timeout_s": 10.0}


def answer(*labels: str, outcome: Outcome = Outcome.OK) -> JudgeAnswer:
    value = None if outcome is not Outcome.OK else {
        c: {"label": lab, "explanation": "because"} for c, lab in zip(CRITERIA, labels)}
    return JudgeAnswer(outcome, value, None, "" if value else "no answer", {}, "arena-pairwise@1", TEMPLATE.hash)


@pytest.mark.parametrize(("x_first", "y_first", "label", "score", "inconsistent"), [
    ("A", "B", "x", 1.0, False),  # x named in both positions
    ("B", "A", "y", 0.0, False),
    ("both_good", "both_good", "both_good", 0.5, False),
    ("both_bad", "both_bad", "both_bad", 0.5, False),
    ("A", "A", "inconsistent", 0.5, True),  # the first position wins both times: a tie, counted
    ("A", "both_bad", "inconsistent", 0.5, True),
])
def test_both_orders_combine(x_first, y_first, label, score, inconsistent):
    v = combine(answer(x_first, x_first, x_first), answer(y_first, y_first, y_first), "overall")
    assert (v.status, v.label, v.score, v.position_inconsistent) == ("decided", label, score, inconsistent)


def test_one_failed_order_is_recorded_not_invented():
    v = combine(answer("A", "A", "A"), answer(outcome=Outcome.PARSE_ERROR), "overall")
    assert v.status == "incomplete" and v.score is None and v.label is None
    assert v.missing == ({"order": "y_first", "outcome": "parse_error", "reason": "no answer"},)


def test_position_bias_counts_first_position_wins_and_leaves_failures_out():
    answers = [answer("A", "B", "A")] * 8 + [answer("B", "both_good", "B")] * 2 + [answer(outcome=Outcome.REFUSED)]
    bias = position_bias(answers)
    overall = bias["criteria"]["overall"]
    assert (overall["decisive"], overall["first_position_wins"], overall["first_position_share"]) == (10, 8, 0.8)
    assert bias["criteria"]["identity_preservation"]["decisive"] == 8
    assert bias["failed_answers"] == {"refused": 1}


def png(level: int) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(np.full((16, 16, 3), level, np.uint8)).save(buf, format="PNG")
    return buf.getvalue()


def brighter_wins(body) -> str:
    """A fake judge that prefers the brighter output, and cannot answer when output A is black."""
    _, a, b = (np.asarray(Image.open(io.BytesIO(i))).mean() for i in _chat_images(body))
    if a == 0:
        return "I cannot compare these."
    label = "A" if a > b else "B"
    return json.dumps({c: {"label": label, "explanation": "brighter"} for c in CRITERIA})


def test_battles_against_a_fake_judge_are_swapped_cached_and_failures_recorded(tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-test-key-0123456789")
    with openai_server(api_key="sk-test-key-0123456789", judge_answer=brighter_wins) as server:
        judge = registered("judges", "openai")(base_url=f"{server.url}/v1", api_key_env=KEY_ENV, limits=FAST)

        def run():
            with JudgeSession.open(judge, "openai", tmp_path) as wj:
                src, bright, mid, black = (wj.put_image(png(v)) for v in (128, 250, 100, 0))
                pairs = [(bright, mid), (mid, black)]
                answers = [asyncio.run(ask_battle(wj, src, x, y, "make the hair red")) for x, y in pairs]
                return answers, wj.calls_made

        answers, calls = run()
        assert calls == server.calls == 2 + 1 + 2  # (bright, mid): 2; (mid, black): 1 + 2 parse attempts
        first = combine(*answers[0], "overall")
        assert (first.status, first.label, first.score) == ("decided", "x", 1.0)
        second = combine(*answers[1], "overall")
        assert second.status == "incomplete" and second.missing[0]["order"] == "y_first"
        assert second.missing[0]["outcome"] == "parse_error"
        # the images reached the judge in labelled positions: source, A, B
        kinds = [(k, v if k == "text" else "<image>") for k, v in server.last("/v1/chat/completions").parts]
        assert [k for k in kinds[:6]] == [("text", "SOURCE IMAGE:"), ("image", "<image>"), ("text", "OUTPUT A:"),
                                          ("image", "<image>"), ("text", "OUTPUT B:"), ("image", "<image>")]

        again, calls_again = run()
        assert calls_again == 0 and server.calls == 5  # a rerun asks nothing, the failed order included
        assert [a.outcome for a in again[1]] == [a.outcome for a in answers[1]]
