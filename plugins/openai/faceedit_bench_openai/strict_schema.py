"""A pydantic JSON schema in the form OpenAI's strict structured output accepts.

Strict mode wants every object closed (``additionalProperties: false``) with every property
required, no ``$ref`` with sibling keywords, ``anyOf`` instead of ``oneOf``, and none of
the keywords it does not support. Dropping a keyword only loosens what the model is held
to: the core still validates every answer against the full pydantic schema, so an answer
that breaks a dropped constraint is a ``parse_error``, never a score.

Same rules as the openai SDK's private ``to_strict_json_schema``, on a copy, with the
unsupported keywords removed. :data:`SCHEMA_FORM` names these rules in ``describe()``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

SCHEMA_FORM = "openai-strict-1"

#: Keywords strict mode rejects (OpenAI structured-outputs guide, "supported schemas").
UNSUPPORTED = frozenset({
    "default", "examples", "minLength", "maxLength", "uniqueItems", "minProperties", "maxProperties",
    "patternProperties", "propertyNames", "unevaluatedProperties", "unevaluatedItems", "contains",
    "minContains", "maxContains", "dependentRequired", "dependentSchemas", "if", "then", "else", "not",
    "discriminator", "contentEncoding", "contentMediaType", "readOnly", "writeOnly", "deprecated",
})


def to_strict_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """A strict-mode copy of ``schema``; the input is left untouched (it is part of cache keys)."""
    root = copy.deepcopy(dict(schema))
    if root.get("type") != "object":
        raise ValueError("OpenAI strict structured output needs an object at the root of the schema; "
                         f"got type {root.get('type')!r}. Wrap the answer in a pydantic model.")
    return _strict(root, root)


def _resolve(ref: str, root: dict[str, Any]) -> dict[str, Any]:
    if not ref.startswith("#/"):
        raise ValueError(f"only local $ref are supported in a judge schema, got {ref!r}")
    node: Any = root
    for part in ref[2:].split("/"):
        node = node[part]
    return copy.deepcopy(node)


def _strict(node: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    if "$ref" in node and len(node) > 1:  # siblings of a $ref are not allowed: inline it
        ref = node.pop("$ref")
        node = {**_resolve(ref, root), **node}
    for keyword in UNSUPPORTED & node.keys():
        del node[keyword]
    if "oneOf" in node:
        node["anyOf"] = node.pop("oneOf")
    if isinstance(node.get("allOf"), list) and len(node["allOf"]) == 1:
        node = {**_strict(node.pop("allOf")[0], root), **node}
    for key in ("$defs", "definitions", "properties"):
        if isinstance(node.get(key), dict):
            node[key] = {name: _strict(sub, root) for name, sub in node[key].items()}
    for key in ("anyOf", "allOf", "prefixItems"):
        if isinstance(node.get(key), list):
            node[key] = [_strict(sub, root) for sub in node[key]]
    if isinstance(node.get("items"), dict):
        node["items"] = _strict(node["items"], root)
    if node.get("type") == "object" or "properties" in node:
        if isinstance(node.get("additionalProperties"), dict) and not node.get("properties"):
            raise ValueError("OpenAI strict structured output cannot express a map (an object with free keys, "
                             "e.g. a dict[str, ...] field): use fixed fields, or set the judge's strict: false")
        node["additionalProperties"] = False
        node["required"] = list(node.get("properties", {}))
        node.setdefault("properties", {})
    return node
