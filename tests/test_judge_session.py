"""Asking a judge outside a run (faceedit_bench.api.judging.JudgeSession.open, faceedit_bench.api.create_registered):
the run's judge service and caches in a workspace of the command's own."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic import BaseModel

from faceedit_bench.api import CallLimits, ConfigError, JudgeReply, Outcome, create_registered
from faceedit_bench.api.images import encode_png
from faceedit_bench.api.judging import JudgeSession, PromptTemplate


class Score(BaseModel):
    score: int


TEMPLATE = PromptTemplate("score_test", "1", "Score the edit {instruction}.", Score)


class CountingJudge:
    limits = CallLimits(provider_key="fake:judge-session", max_attempts=1)
    prices: dict[str, float] = {}

    def __init__(self, text: str = '{"score": 4}') -> None:
        self.text, self.requests = text, []

    def describe(self) -> dict[str, Any]:
        return {"model": "counting-1", "root": "/home/someone/models"}  # an absolute path: not in the identity

    async def ajudge(self, request: Any) -> JudgeReply:
        self.requests.append(request)
        return JudgeReply(Outcome.OK, text=self.text)


def _image(tmp_path, value: int):
    import numpy as np

    path = tmp_path / f"img{value}.png"
    path.write_bytes(encode_png(np.full((8, 8, 3), value, np.uint8)))
    return path


def test_an_answer_is_asked_once_and_read_back_from_the_workspace(tmp_path):
    judge = CountingJudge()
    for _ in range(2):  # the second command finds the answer in the ledger
        with JudgeSession.open(judge, "counting", tmp_path / "ws") as session:
            image = session.put_image(_image(tmp_path, 7))
            answer = asyncio.run(session.ask(TEMPLATE, [image], instruction="make it red"))
        assert answer.outcome is Outcome.OK and answer.value == {"score": 4}
    assert len(judge.requests) == 1 and judge.requests[0].images
    assert session.identity == {"name": "counting", "model": "counting-1"}
    assert (tmp_path / "ws" / "ledger.sqlite").is_file() and any((tmp_path / "ws" / "store").rglob("*"))


def test_an_unparsable_answer_is_an_answer_with_its_outcome(tmp_path):
    with JudgeSession.open(CountingJudge("not json"), "counting", tmp_path / "ws") as session:
        answer = asyncio.run(session.ask(TEMPLATE, [session.put_image(_image(tmp_path, 3))], instruction="x"))
    assert answer.outcome is Outcome.PARSE_ERROR and answer.value is None and session.calls_made >= 1


def test_create_registered_checks_parameters_like_a_run(plugins, monkeypatch):
    import faceedit_bench.plugin.manager as manager

    monkeypatch.setattr(manager, "get_plugins", lambda: plugins)
    with pytest.raises(ConfigError, match="does not take parameter"):
        create_registered("datasets", "synthetic", {"root": "/tmp/x", "nmae": 3})
