"""Reading a ``GenerateContentResponse``: usage, refusals, images and text.

Gemini reports a safety block as a normal answer, not an error: ``promptFeedback.blockReason``
(no candidates at all) or a candidate whose ``finishReason`` names a policy (no parts).
These helpers work on the SDK's response objects by attribute, without importing the SDK.
"""

from __future__ import annotations

from typing import Any

#: Finish reasons that mean the provider declined (safety, policy, recitation).
REFUSAL_FINISH_REASONS = frozenset({
    "SAFETY", "IMAGE_SAFETY", "PROHIBITED_CONTENT", "IMAGE_PROHIBITED_CONTENT", "BLOCKLIST", "SPII",
    "RECITATION", "IMAGE_RECITATION", "MODEL_ARMOR",
})
SNIPPET_CHARS = 200


def _name(value: Any) -> str | None:
    """An SDK enum (or the raw string the SDK keeps for values it does not know) as text."""
    if value is None:
        return None
    return str(getattr(value, "value", value))


def _first_candidate(response: Any) -> Any:
    candidates = getattr(response, "candidates", None) or []
    return candidates[0] if candidates else None


def _parts(response: Any) -> list[Any]:
    candidate = _first_candidate(response)
    content = getattr(candidate, "content", None)
    return list(getattr(content, "parts", None) or [])


def finish_reason(response: Any) -> str | None:
    return _name(getattr(_first_candidate(response), "finish_reason", None))


def refusal(response: Any) -> str | None:
    """Why the provider declined, or ``None`` when it did not."""
    feedback = getattr(response, "prompt_feedback", None)
    blocked = _name(getattr(feedback, "block_reason", None))
    if blocked:
        message = getattr(feedback, "block_reason_message", None)
        return f"prompt blocked: {blocked}" + (f" ({message})" if message else "")
    reason = finish_reason(response)
    if reason in REFUSAL_FINISH_REASONS:
        message = getattr(_first_candidate(response), "finish_message", None)
        return f"finish reason {reason}" + (f" ({message})" if message else "")
    return None


def output_images(response: Any) -> list[tuple[bytes, str]]:
    """The answer's final images as (bytes, mime type). Thought parts are skipped: thinking
    image models show interim drafts there, which are not the answer."""
    images = []
    for part in _parts(response):
        inline = getattr(part, "inline_data", None)
        mime = getattr(inline, "mime_type", None) or ""
        if inline is not None and inline.data and mime.startswith("image/") and not getattr(part, "thought", False):
            images.append((inline.data, mime))
    return images


def output_text(response: Any) -> str:
    """The answer's text parts (thoughts excluded), joined."""
    return "".join(p.text for p in _parts(response) if getattr(p, "text", None) and not getattr(p, "thought", False))


def snippet(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= SNIPPET_CHARS else text[: SNIPPET_CHARS - 1] + "…"


def _by_modality(details: Any) -> dict[str, int]:
    counts: dict[str, int] = {}
    for d in details or []:
        modality = _name(getattr(d, "modality", None)) or "UNKNOWN"
        counts[modality] = counts.get(modality, 0) + int(getattr(d, "token_count", None) or 0)
    return counts


def usage(response: Any) -> dict[str, Any]:
    """Usage in faceedit_bench.execution.cost keys, which are disjoint: ``input_tokens`` are the prompt's
    non-image tokens and ``input_image_tokens`` its image tokens; ``output_tokens`` are text and
    thinking tokens (billed as output) and ``output_image_tokens`` the generated images' tokens.
    Also ``model_version``, the exact model that answered."""
    out: dict[str, Any] = {}
    meta = getattr(response, "usage_metadata", None)
    if meta is not None:
        prompt = int(meta.prompt_token_count or 0)
        prompt_images = _by_modality(meta.prompt_tokens_details).get("IMAGE", 0)
        candidates = int(meta.candidates_token_count or 0)
        output_images_tokens = _by_modality(meta.candidates_tokens_details).get("IMAGE", 0)
        out["input_tokens"] = prompt - prompt_images
        out["input_image_tokens"] = prompt_images
        out["output_tokens"] = candidates - output_images_tokens + int(meta.thoughts_token_count or 0)
        out["output_image_tokens"] = output_images_tokens
    out["images_out"] = len(output_images(response))
    version = getattr(response, "model_version", None)
    if version:
        out["model_version"] = str(version)
    return out
