"""A fake CREval judge behind the fake Gemini and OpenAI servers: it writes questions and answers them.

``answer_body`` (a ``judge_answer`` for either server) reads the request the real SDK sent:
* a question-writing request: five questions, with weights 1-3 when the prompt asks for weights (VC);
* an answering request (CREval's layout: ``Qn: question`` then ``Choices: ...``): every question asked gets
  "yes" (lower case on purpose), except that a question about a change being visible (or the target
  being present) gets "no" when the two images have the same pixels, so an editor that changes nothing
  scores lower on IF. A question whose text holds ``[unanswered]`` is left out of the answer (a missing
  answer); ``[Yes.]`` is answered "Yes." (normalised to a choice); ``[maybe]`` is answered "Maybe" (none
  of the choices). The answer is one JSON object keyed by question ID, as the answer schema asks.
"""

from __future__ import annotations

import io
import json
import re
from typing import Any

import numpy as np
from PIL import Image

from tests.fakes.gemini import _parse as parse_gemini
from tests.fakes.openai import _chat_images as chat_images

_QUESTION = re.compile(r"^(Q\d+): (.*)$", re.M)
IF_WORDS = ("clearly visible", "now have", "now ")


def _images_and_text(body: dict[str, Any]) -> tuple[list[bytes], str]:
    """The images and text of a Gemini or an OpenAI chat request, read by those fakes' own parsers."""
    if "contents" in body:
        call = parse_gemini("v1beta", "", body)
        return call.images, call.text
    texts: list[str] = []
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, str):
            texts.append(content)
        texts.extend(p["text"] for p in (content if isinstance(content, list) else []) if p.get("type") == "text")
    return chat_images(body), "\n".join(texts)


def _same_pixels(a: bytes, b: bytes) -> bool:
    x, y = (np.asarray(Image.open(io.BytesIO(i)).convert("RGB")) for i in (a, b))
    return x.shape == y.shape and bool((x == y).all())


def written_questions(weighted: bool = True, n: int = 5) -> str:
    return json.dumps({"questions": [
        {"thinking": f"requirement {i} of the instruction",
         "question": "Is the requested change now visible?" if i == 1 else f"Is requirement {i} met?",
         "choices": ["Yes", "No"], "answer": "Yes", **({"weight": 1 + i % 3} if weighted else {})}
        for i in range(1, n + 1)]})


def _answer(question: str, unchanged: bool) -> str:
    if "[Yes.]" in question:
        return "Yes."
    if "[maybe]" in question:
        return "Maybe"
    says_no = unchanged and "Apart from" not in question and any(w in question for w in IF_WORDS)
    return "no" if says_no else "yes"  # case differs on purpose


def answer_body(body: dict[str, Any]) -> str:
    images, text = _images_and_text(body)
    if "Write at least" in text:
        return written_questions(weighted='"weight"' in text)
    unchanged = len(images) >= 2 and _same_pixels(images[0], images[-1])
    return json.dumps({qid: {"answer": _answer(question, unchanged), "explanation": "the images were compared"}
                       for qid, question in _QUESTION.findall(text) if "[unanswered]" not in question})
