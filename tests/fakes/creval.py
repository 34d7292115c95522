"""A fake CREval judge behind the fake Gemini and OpenAI servers: it writes questions and answers them.

``answer_body`` (a ``judge_answer`` for either server) reads the request the real SDK sent:
* a question-writing request (its schema asks for ``questions``): five questions with weights 1-3;
* an answering request: every ``Qn:`` asked gets "Yes", except that a question about a change being
  visible (or the target being present) gets "No" when the two images have the same pixels, so an
  editor that changes nothing scores lower on IF. Questions whose text contains ``[unanswered]`` are
  left out of the answer (a missing answer).
"""

from __future__ import annotations

import base64
import io
import json
import re
from typing import Any

import numpy as np
from PIL import Image

_QUESTION = re.compile(r"^(Q\d+): (.*)$", re.M)
IF_WORDS = ("clearly visible", "now have", "now ")


def _images_and_text(body: dict[str, Any]) -> tuple[list[bytes], str]:
    images: list[bytes] = []
    texts: list[str] = []
    for content in body.get("contents", []):  # Gemini
        for part in content.get("parts", []):
            if "text" in part:
                texts.append(part["text"])
            inline = part.get("inlineData") or part.get("inline_data")
            if inline is not None:
                images.append(base64.urlsafe_b64decode(inline["data"]))
    for message in body.get("messages", []):  # OpenAI chat
        content = message.get("content")
        for part in content if isinstance(content, list) else []:
            if part.get("type") == "text":
                texts.append(part["text"])
            elif part.get("type") == "image_url":
                images.append(base64.b64decode(part["image_url"]["url"].split(",", 1)[1]))
        if isinstance(content, str):
            texts.append(content)
    return images, "\n".join(texts)


def _same_pixels(a: bytes, b: bytes) -> bool:
    x, y = (np.asarray(Image.open(io.BytesIO(i)).convert("RGB")) for i in (a, b))
    return x.shape == y.shape and bool((x == y).all())


def written_questions() -> str:
    return json.dumps({"questions": [
        {"thinking": f"requirement {i} of the instruction",
         "question": "Is the requested change now visible?" if i == 1 else f"Is requirement {i} met?",
         "choices": ["Yes", "No"], "answer": "Yes", "weight": 1 + i % 3} for i in range(1, 6)]})


def answer_body(body: dict[str, Any]) -> str:
    images, text = _images_and_text(body)
    if "Write at least" in text:
        return written_questions()
    unchanged = len(images) >= 2 and _same_pixels(images[0], images[-1])
    answers = []
    for qid, question in _QUESTION.findall(text):
        if "[unanswered]" in question:
            continue
        says_no = unchanged and "INSTRUCTION" not in question and any(w in question for w in IF_WORDS)
        answers.append({"question_id": qid, "answer": "no" if says_no else "yes",  # case differs on purpose
                        "explanation": "the images were compared"})
    return json.dumps({"answers": answers})
