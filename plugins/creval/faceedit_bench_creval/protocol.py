"""CREval's published protocol, read from ``plugins/creval/faceedit_bench_creval/data/protocol.json``.

The strings and settings CREval's own scripts use (the answering judge's system message, how the
questions are listed for it, its model and decoding; the question writer's model and fields) are
data, each taken verbatim from a named file, commit and sha256 of CREval's repository; they are
never retyped in code. What the repository does not publish (the prompt template files) is a
reconstruction in our own words, kept apart in the same file and labelled so.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from functools import cache
from importlib import resources
from typing import Any

PROTOCOL_FILE = "data/protocol.json"


@cache
def protocol() -> Mapping[str, Any]:
    """The whole protocol file (sources, published values, reconstruction)."""
    text = resources.files("faceedit_bench_creval").joinpath(PROTOCOL_FILE).read_text(encoding="utf-8")
    return json.loads(text)


def published(stage: str) -> Mapping[str, Any]:
    """CREval's published values of ``answer`` or ``writer``."""
    return protocol()["published"][stage]


def source(stage: str) -> Mapping[str, str]:
    """Where ``stage``'s published values come from: repo, path, commit, sha256."""
    return protocol()["sources"][stage]


def source_label(stage: str) -> str:
    s = source(stage)
    return f"{s['repo']} {s['path']} @ {s['commit'][:7]} (sha256 {s['sha256'][:12]})"


def questions_block(questions: Sequence[Any]) -> str:
    """What CREval's answer call puts in place of ``{Questions}``: its header, then per question its id and
    text and its choices, in CREval's published layout (replacements, not ``str.format``: a question may
    hold braces)."""
    answer = published("answer")
    parts = [answer["questions_header"]]
    for q in questions:
        parts.append(answer["question_line"].replace("{question_id}", q.question_id).replace("{question}", q.question))
        parts.append(answer["choices_line"].replace("{choices}", answer["choices_separator"].join(q.choices)))
    return "".join(parts)


def answer_template_text() -> str:
    """The reconstructed answer template with CREval's one placeholder as this project's ``$questions``."""
    text = protocol()["reconstruction"]["answer_template"]
    placeholder = published("answer")["template_placeholder"]
    assert text.count(placeholder) == 1 and "$" not in text, "the reconstruction fills only the one placeholder"
    return text.replace(placeholder, "${questions}")
