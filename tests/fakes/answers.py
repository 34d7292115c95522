"""What fake providers answer: an 'edited' image and schema-valid judge answers."""

from __future__ import annotations

import hashlib
import io
import random
import threading
from typing import Any

import numpy as np
from PIL import Image


def fake_edit(image: bytes, instruction: str) -> bytes:
    """A deterministic, visible but face-preserving change: a tint chosen by the instruction."""
    rgb = np.asarray(Image.open(io.BytesIO(image)).convert("RGB"), dtype=np.float32)
    tint = np.frombuffer(hashlib.sha256(instruction.encode()).digest()[:3], dtype=np.uint8).astype(np.float32)
    out = np.clip(rgb * 0.9 + tint * 0.1, 0, 255).astype(np.uint8)
    buf = io.BytesIO()
    Image.fromarray(out).save(buf, format="PNG")
    return buf.getvalue()


def example_from_schema(schema: dict[str, Any], root: dict[str, Any] | None = None) -> Any:
    """A valid instance of a JSON schema (the subset pydantic emits): first enum value,
    the middle of numeric ranges, one item for arrays, every property for objects."""
    root = root or schema
    if "$ref" in schema:
        name = schema["$ref"].split("/")[-1]
        return example_from_schema(root.get("$defs", {})[name], root)
    for combo in ("anyOf", "oneOf", "allOf"):
        if combo in schema:
            return example_from_schema(schema[combo][0], root)
    if "enum" in schema:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next(k for k in kind if k != "null")
    if kind == "object":
        return {k: example_from_schema(v, root) for k, v in schema.get("properties", {}).items()}
    if kind == "array":
        n = max(1, schema.get("minItems", 1))
        return [example_from_schema(schema.get("items", {}), root) for _ in range(n)]
    if kind in ("integer", "number"):
        low, high = schema.get("minimum", 0), schema.get("maximum", 10)
        value = (low + high) / 2
        return int(value) if kind == "integer" else value
    if kind == "boolean":
        return True
    return "fake answer"


class VariedJudge:
    """A judge that answers as a hosted MLLM does: the same question now and then gets a different score
    (``flip``: the chance that an answer moves by one point, either way), seeded so a test repeats exactly.
    ``score`` gives one answer to a question whose steady answer is ``steady``; called with a fake server's
    request body it answers an SC question (``editing_success``, ``overediting``) around a steady score
    drawn from the images, and every other schema with its example."""

    def __init__(self, seed: int, flip: float = 0.3) -> None:
        self.rng = random.Random(seed)
        self.flip = flip
        self.lock = threading.Lock()  # a fake server answers from several threads

    def score(self, steady: int, low: int = 0, high: int = 10) -> int:
        with self.lock:
            move = self.rng.choice((-1, 1)) if self.rng.random() < self.flip else 0
        return int(min(high, max(low, steady + move)))

    def __call__(self, request: dict[str, Any]) -> str:
        import json

        schema = request["generationConfig"].get("responseJsonSchema") or {}
        if "editing_success" not in schema.get("properties", {}):
            return json.dumps(example_from_schema(schema))
        images = hashlib.sha256(json.dumps(request["contents"], sort_keys=True).encode()).hexdigest()
        steady = 3 + int(images[:4], 16) % 6
        return json.dumps({"editing_success": self.score(steady), "overediting": 10, "reasoning": "-"})
