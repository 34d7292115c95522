"""The qwen_vl judge on tiny random Qwen2.5-VL and Qwen3-VL checkpoints: loading from a local
directory, one attempt per call, usage, and answers validated (or recorded as parse errors)
by the core's JudgeService."""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from faceedit_bench_transformers.judge import QwenVLJudge

from faceedit_bench.api import ConfigError, Judge, JudgeRequest, Outcome
from faceedit_bench.api.testing import JudgeContract, gradient_image
from faceedit_bench.testing import SC_TEMPLATE, Executor, JudgeService, load_plugins

VALID = '{"editing_success": 7, "overediting": 8, "reasoning": "hair is red, face kept"}'


def make_judge(model: Path, **params: Any) -> QwenVLJudge:
    return load_plugins().registry.create(
        "judges", "qwen_vl", {"model": str(model), "dtype": "float32", "device": "cpu", "max_new_tokens": 8, **params})


def judge_request(seed: int = 0) -> JudgeRequest:
    return JudgeRequest(SC_TEMPLATE.render(instruction="make the hair red"),
                        (gradient_image(1, size=64), gradient_image(2, size=48)),
                        SC_TEMPLATE.json_schema, "viescore_tie_sc", seed)


@pytest.mark.parametrize("family", ["qwen2_5_vl", "qwen3_vl"])
def test_the_judge_answers_with_text_and_usage(family: str, tiny_vlm: Callable[[str], Path]) -> None:
    judge = make_judge(tiny_vlm(family))
    assert isinstance(judge, Judge) and judge.prices == {}
    reply = asyncio.run(judge.ajudge(judge_request()))
    assert reply.outcome is Outcome.OK and isinstance(reply.text, str), reply.reason
    assert reply.usage["input_tokens"] > 100  # the prompt plus both images' tokens
    assert 1 <= reply.usage["output_tokens"] <= 8 and reply.usage["truncated"] in (0, 1)
    assert judge.describe()["family"] == family


def test_greedy_answers_repeat_and_seeded_samples_follow_the_seed(tiny_vlm: Callable[[str], Path]) -> None:
    greedy = make_judge(tiny_vlm("qwen2_5_vl"))
    assert greedy.judge(judge_request(1)).text == greedy.judge(judge_request(2)).text
    sampled = make_judge(tiny_vlm("qwen2_5_vl"), temperature=1.0)
    assert sampled.judge(judge_request(3)).text == sampled.judge(judge_request(3)).text
    texts = {sampled.judge(judge_request(seed)).text for seed in range(4)}
    assert len(texts) > 1


@pytest.mark.parametrize("family", ["qwen2_5_vl", "qwen3_vl"])
def test_questions_asked_together_share_a_call_and_get_their_own_answers(family: str,
                                                                         tiny_vlm: Callable[[str], Path]) -> None:
    judge = make_judge(tiny_vlm(family), batch_size=4, max_new_tokens=12)
    assert judge.limits.max_concurrency == 8  # the next batch fills while one runs
    # Prompts of different lengths, with different numbers and sizes of images.
    requests = [judge_request(),
                JudgeRequest("Describe the hair.", (gradient_image(3, size=96),), {}, "x", 0),
                JudgeRequest(SC_TEMPLATE.render(instruction="add round glasses and a beard") * 2,
                             (gradient_image(4, size=64), gradient_image(5, size=80)), {}, "x", 0)]
    alone = [judge.judge(r) for r in requests]

    async def together() -> list:
        return list(await asyncio.gather(*(judge.ajudge(r) for r in requests)))

    batched = asyncio.run(together())
    assert [r.usage["batch_size"] for r in alone] == [1, 1, 1]
    assert [r.usage["batch_size"] for r in batched] == [3, 3, 3]
    assert [r.text for r in batched] == [r.text for r in alone]
    for one, many in zip(alone, batched):  # usage counts each prompt's own tokens, not the padding
        assert (many.usage["input_tokens"], many.usage["output_tokens"]) == \
            (one.usage["input_tokens"], one.usage["output_tokens"])
    assert len({r.usage["input_tokens"] for r in batched}) == 3


def test_a_batch_that_runs_out_of_memory_is_split_until_it_fits(tiny_vlm: Callable[[str], Path]) -> None:
    import torch

    judge = make_judge(tiny_vlm("qwen2_5_vl"), batch_size=4)
    requests = [judge_request(seed) for seed in range(3)] + [
        JudgeRequest("Describe the hair.", (gradient_image(3, size=96),), {}, "x", 0)]
    alone = [judge.judge(r) for r in requests]
    model, _ = judge._loaded()
    real, sizes = model.generate, []

    def small_device(**inputs: Any) -> Any:  # holds at most 2 prompts
        sizes.append(inputs["input_ids"].shape[0])
        if sizes[-1] > 2:
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 20.00 GiB")
        return real(**inputs)

    model.generate = small_device

    async def together() -> list:
        return list(await asyncio.gather(*(judge.ajudge(r) for r in requests)))

    replies = asyncio.run(together())
    assert sizes == [4, 2, 2]
    assert [r.outcome for r in replies] == [Outcome.OK] * 4 and [r.usage["batch_size"] for r in replies] == [2] * 4
    assert [r.text for r in replies] == [r.text for r in alone]


def test_out_of_memory_of_a_single_question_says_how_to_fit(tiny_vlm: Callable[[str], Path]) -> None:
    import torch

    judge = make_judge(tiny_vlm("qwen2_5_vl"))
    model, _ = judge._loaded()

    def no_memory(**inputs: Any) -> Any:
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 20.00 GiB")

    model.generate = no_memory
    reply = judge.judge(judge_request())
    assert reply.outcome is Outcome.API_ERROR and "batch_size" in reply.reason


def test_sampled_questions_are_answered_one_at_a_time(tiny_vlm: Callable[[str], Path]) -> None:
    judge = make_judge(tiny_vlm("qwen2_5_vl"), temperature=1.0, batch_size=4)

    async def together() -> list:
        return list(await asyncio.gather(*(judge.ajudge(judge_request(seed)) for seed in range(3))))

    replies = asyncio.run(together())
    assert [r.usage["batch_size"] for r in replies] == [1, 1, 1]
    assert replies[0].text == judge.judge(judge_request(0)).text  # each answer follows its own seed


class FakeLedger:
    def __init__(self) -> None:
        self.rows: dict[str, Any] = {}

    def get_judgment(self, key: str) -> Any:
        return self.rows.get(key)

    def put_judgment(self, key: str, **fields: Any) -> None:
        self.rows[key] = fields["answer"]


class FakeStore(dict):
    def get(self, key: str) -> bytes:  # type: ignore[override]
        return self[key]


def ask(judge: QwenVLJudge) -> Any:
    store = FakeStore(a=gradient_image(1, size=64), b=gradient_image(2, size=48))

    async def run() -> Any:
        service = JudgeService(judge, "fp", Executor(judge.limits), FakeLedger(), store)
        return await service.ask(SC_TEMPLATE, ["a", "b"], instruction="make the hair red")

    return asyncio.run(run())


def test_an_answer_off_the_schema_is_a_parse_error_never_a_score(tiny_vlm: Callable[[str], Path]) -> None:
    answer = ask(make_judge(tiny_vlm("qwen2_5_vl")))  # a random model writes noise
    assert answer.outcome is Outcome.PARSE_ERROR and answer.value is None
    assert answer.reason and answer.raw is not None


def test_an_answer_on_the_schema_is_validated(tiny_vlm: Callable[[str], Path],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The model is replaced at generate() only: prompt building, token slicing and decoding
    are the real ones."""
    judge = make_judge(tiny_vlm("qwen2_5_vl"), max_new_tokens=512)
    model, processor = judge._loaded()
    answer_ids = processor.tokenizer(VALID + "<|im_end|>", return_tensors="pt")["input_ids"]

    def fake_generate(**inputs: Any) -> Any:
        import torch

        return torch.cat([inputs["input_ids"], answer_ids], dim=1)

    monkeypatch.setattr(model, "generate", fake_generate)
    answer = ask(judge)
    assert answer.outcome is Outcome.OK, answer.reason
    assert answer.value == json.loads(VALID)


def test_describe_names_model_and_decoding_not_the_path(tiny_vlm: Callable[[str], Path]) -> None:
    described = make_judge(tiny_vlm("qwen3_vl")).describe()
    assert json.loads(json.dumps(described)) == described
    assert described["decoding"] == "greedy" and described["top_p"] is None
    assert described["max_new_tokens"] == 8 and described["dtype"] == "float32"
    assert "device" not in described and str(tiny_vlm("qwen3_vl")) not in json.dumps(described)


def test_a_missing_model_names_the_repository_and_the_command() -> None:
    with pytest.raises(ConfigError, match="hf download Qwen/Qwen2.5-VL-7B-Instruct"):
        QwenVLJudge()


def test_a_model_of_another_family_is_refused(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text('{"model_type": "llava"}')
    with pytest.raises(ValueError, match="qwen2_5_vl"):
        QwenVLJudge(model=str(tmp_path))


def test_a_load_failure_is_an_api_error_with_the_reason(tiny_vlm: Callable[[str], Path], tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    shutil.copytree(tiny_vlm("qwen2_5_vl"), broken)
    for weights in broken.glob("*.safetensors"):
        weights.unlink()
    reply = make_judge(broken).judge(judge_request())
    assert reply.outcome is Outcome.API_ERROR and reply.reason and reply.text is None


@pytest.mark.parametrize("bad", [{"dtype": "int4"}, {"max_new_tokens": 0}, {"temperature": -1}, {"top_p": 0},
                                 {"timeout_s": 0}])
def test_bad_parameters_are_refused(bad: dict[str, Any], tiny_vlm: Callable[[str], Path]) -> None:
    with pytest.raises(ValueError):
        make_judge(tiny_vlm("qwen2_5_vl"), **bad)


class TestQwenVLJudgeContract(JudgeContract):
    @pytest.fixture
    def judge(self, tiny_vlm: Callable[[str], Path]) -> QwenVLJudge:
        return make_judge(tiny_vlm("qwen2_5_vl"))


def test_image_labels_precede_their_images_in_the_chat_turn(tiny_vlm: Callable[[str], Path],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A judge metric's image labels reach the model: the user turn is label, image, label, image, prompt."""
    judge = make_judge(tiny_vlm("qwen2_5_vl"))
    request = JudgeRequest("Rate the edit.", (gradient_image(1, size=64), gradient_image(2, size=48)), {}, "s", 0,
                           image_labels=("SOURCE IMAGE:", "EDITED IMAGE:"))
    labelled = judge.judge(request)
    assert labelled.outcome is Outcome.OK, labelled.reason
    plain = judge.judge(JudgeRequest("Rate the edit.", request.images, {}, "s", 0))
    assert labelled.usage["input_tokens"] > plain.usage["input_tokens"]  # the labels were in what the model read
    assert [kind for kind, _ in request.parts()] == ["text", "image", "text", "image", "text"]
