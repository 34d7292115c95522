"""Reading answers the fake does not produce: thought images, thinking tokens, finish messages."""

from __future__ import annotations

from faceedit_bench_gemini import responses
from google.genai import types


def _answer(parts, finish="STOP", **fields):
    return types.GenerateContentResponse(
        candidates=[types.Candidate(content=types.Content(role="model", parts=parts), finish_reason=finish,
                                    finish_message=fields.pop("finish_message", None))],
        **fields,
    )


def _image(data: bytes, thought: bool = False) -> types.Part:
    return types.Part(inline_data=types.Blob(data=data, mime_type="image/png"), thought=thought or None)


def test_thought_images_are_drafts_not_answers():
    answer = _answer([_image(b"draft", thought=True), types.Part(text="thinking", thought=True), _image(b"final")])
    assert responses.output_images(answer) == [(b"final", "image/png")]
    assert responses.output_text(answer) == ""
    assert responses.output_images(_answer([_image(b"draft", thought=True)])) == []


def test_usage_keys_are_disjoint_and_count_thinking_as_output():
    meta = types.GenerateContentResponseUsageMetadata(
        prompt_token_count=300, candidates_token_count=1300, thoughts_token_count=50, total_token_count=1650,
        prompt_tokens_details=[types.ModalityTokenCount(modality="TEXT", token_count=42),
                               types.ModalityTokenCount(modality="IMAGE", token_count=258)],
        candidates_tokens_details=[types.ModalityTokenCount(modality="IMAGE", token_count=1290),
                                   types.ModalityTokenCount(modality="TEXT", token_count=10)],
    )
    usage = responses.usage(_answer([_image(b"x")], usage_metadata=meta, model_version="gemini-2.5-flash-image-001"))
    assert usage == {"input_tokens": 42, "input_image_tokens": 258, "output_tokens": 60, "output_image_tokens": 1290,
                     "images_out": 1, "model_version": "gemini-2.5-flash-image-001"}


def test_usage_without_details_counts_everything_as_text():
    meta = types.GenerateContentResponseUsageMetadata(prompt_token_count=10, candidates_token_count=5)
    usage = responses.usage(_answer([types.Part(text="hi")], usage_metadata=meta))
    assert usage["input_tokens"] == 10 and usage["output_tokens"] == 5 and usage["input_image_tokens"] == 0


def test_refusal_reasons_name_the_policy_and_message():
    assert responses.refusal(_answer(None, "PROHIBITED_CONTENT", finish_message="no")) == \
        "finish reason PROHIBITED_CONTENT (no)"
    assert responses.refusal(_answer(None, "MAX_TOKENS")) is None
    blocked = types.GenerateContentResponse(prompt_feedback=types.GenerateContentResponsePromptFeedback(
        block_reason="PROHIBITED_CONTENT", block_reason_message="policy"))
    assert responses.refusal(blocked) == "prompt blocked: PROHIBITED_CONTENT (policy)"


def test_snippet_is_short_and_single_line():
    text = responses.snippet("line one\n" + "x" * 500)
    assert "\n" not in text and len(text) == responses.SNIPPET_CHARS and text.endswith("…")
