"""The replicate editor against a fake Replicate server through the real SDK: the wait/poll
protocol, every prediction state mapped to its outcome, one attempt per call, retries that
resume the same prediction instead of paying for another."""

from __future__ import annotations

import asyncio

import pytest

from faceedit_bench.api import ConfigError, EditRequest, Outcome, RetryableError
from faceedit_bench.api.testing import EditorContract, gradient_image
from faceedit_bench.testing import MissingSecretError
from tests.fakes.answers import fake_edit
from tests.fakes.replicate import BAGEL_VERSION as BAGEL
from tests.fakes.replicate import KONTEXT_VERSION as KONTEXT


def request(seed: int = 7, session: str = "s1") -> EditRequest:
    return EditRequest(gradient_image(3), "make the hair red", "face/1", session, 1, seed)


def edit(editor, req: EditRequest | None = None):
    return asyncio.run(editor.aedit(req or request()))


class TestReplicateContract(EditorContract):
    @pytest.fixture
    def editor(self, make_editor):
        return make_editor()


def test_a_prediction_answered_at_once_is_downloaded(make_editor, server):
    editor = make_editor(inputs={"output_format": "png", "safety_tolerance": 2})
    result = edit(editor, request(seed=2**31 + 9))
    assert result.outcome is Outcome.OK and result.image == fake_edit(gradient_image(3), "make the hair red")
    (submitted,) = server.submissions
    body = submitted.json()
    assert submitted.headers["prefer"] == "wait=60"
    assert body["version"] == KONTEXT.split(":")[1]
    assert body["input"]["prompt"] == "make the hair red" and body["input"]["seed"] == 9
    assert body["input"]["input_image"].startswith("data:image/png;base64,")
    assert body["input"]["output_format"] == "png" and body["input"]["safety_tolerance"] == 2
    assert result.usage["model_version"] == KONTEXT and result.usage["images_out"] == 1
    assert editor.describe()["version"] == KONTEXT


def test_a_slow_prediction_is_polled_until_it_ends(make_editor, server):
    server.plan(["slow"])
    result = edit(make_editor())
    assert result.outcome is Outcome.OK
    assert len(server.submissions) == 1 and server.polls >= 2 and result.usage["polls"] == server.polls


def test_a_prediction_that_never_ends_is_canceled_and_is_an_api_error(make_editor, server):
    server.plan(["never"])
    result = edit(make_editor(max_wait_s=0.3))
    assert result.outcome is Outcome.API_ERROR and "max_wait_s" in result.reason and "canceled it" in result.reason
    (prediction,) = server.predictions.values()
    assert prediction.canceled


@pytest.mark.parametrize(("plan", "outcome", "reason"), [
    ("nsfw_submit", Outcome.REFUSED, "flagged as sensitive"),
    ("nsfw_result", Outcome.REFUSED, "NSFW content detected"),
    ("failed", Outcome.API_ERROR, "prediction failed: CUDA out of memory"),
    ("canceled", Outcome.API_ERROR, "prediction canceled"),
    ("no_output", Outcome.NO_IMAGE, "without an output file"),
    ("invalid_input", Outcome.API_ERROR, "HTTP 422"),
])
def test_prediction_states_map_to_outcomes(make_editor, server, plan, outcome, reason):
    server.plan([plan])
    result = edit(make_editor())
    assert result.outcome is outcome and reason in result.reason
    assert len(server.submissions) == 1


def test_an_nsfw_flag_in_an_object_output_is_a_refusal(make_editor, server):
    server.plan(["nsfw_flag"])
    result = edit(make_editor(model=BAGEL, image_param="image", output_key="image"))
    assert result.outcome is Outcome.REFUSED and "has_nsfw_concepts" in result.reason


def test_an_object_output_is_read_through_output_key(make_editor, server):
    assert edit(make_editor(model=BAGEL, image_param="image", output_key="image")).outcome is Outcome.OK
    result = edit(make_editor(model=BAGEL, image_param="image"), request(session="s2"))
    assert result.outcome is Outcome.NO_IMAGE and "set output_key" in result.reason


def test_a_failed_poll_is_retried_on_the_same_prediction(make_editor, server):
    editor = make_editor()
    server.plan(["slow"])
    server.script([None, "503"])  # the create answers; the first poll gets a 503
    with pytest.raises(RetryableError) as caught:
        edit(editor)
    assert caught.value.kind == "server_error" and server.calls == 2, "the SDK must not retry the poll itself"
    result = edit(editor)  # what the core's retry does
    assert result.outcome is Outcome.OK and len(server.submissions) == 1, "no second prediction paid for"


def test_a_cut_download_is_retried_without_a_new_prediction(make_editor, server):
    editor = make_editor()
    server.plan(["truncated_download"])
    with pytest.raises(RetryableError) as caught:
        edit(editor)
    assert caught.value.kind == "truncated"
    assert edit(editor).outcome is Outcome.OK and len(server.submissions) == 1


def test_an_expired_result_url_makes_the_retry_run_a_new_prediction(make_editor, server):
    editor = make_editor()
    server.plan(["expired"])
    with pytest.raises(RetryableError, match="expired"):
        edit(editor)
    assert edit(editor).outcome is Outcome.OK and len(server.submissions) == 2


def test_a_throttled_create_is_retryable_with_the_wait_it_names(make_editor, server):
    server.script(["429"])
    with pytest.raises(RetryableError) as caught:
        edit(make_editor())
    assert caught.value.kind == "rate_limited" and caught.value.retry_after == 2.5 and server.calls == 1


@pytest.mark.parametrize("model", ["black-forest-labs/flux-kontext-pro", "black-forest-labs/flux-kontext-pro:latest",
                                   "flux-kontext-pro:" + "0a" * 32, None, "owner/model:abc123"])
def test_an_unpinned_model_is_refused_with_how_to_pin_it(make_editor, model):
    with pytest.raises(ConfigError, match="owner/model:<version id>|no model given"):
        make_editor(model=model)


@pytest.mark.parametrize(("params", "message"), [
    ({"inputs": {"prompt": "x"}}, "both prompt_param"), ({"wait_s": 120}, "wait_s"),
    ({"max_wait_s": 30, "limits": {"timeout_s": 20}}, "must exceed max_wait_s"), ({"image_param": ""}, "image_param"),
    ({"base_url": "api.replicate.com"}, "base_url"),
])
def test_configuration_mistakes_are_clear_errors(make_editor, params, message):
    with pytest.raises(ConfigError, match=message):
        make_editor(**params)


def test_a_missing_token_fails_at_creation_and_names_the_variable(make_editor, monkeypatch):
    monkeypatch.delenv("FACEEDIT_TEST_REPLICATE_TOKEN")
    with pytest.raises(MissingSecretError, match="FACEEDIT_TEST_REPLICATE_TOKEN"):
        make_editor()
