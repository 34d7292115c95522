"""Test-set format 2: sessions of any length K >= 1, free-text instructions with an optional
taxonomy binding, prompt ids and categories, and further input images per step.

```json
{"format": 2, "name": "diagnostic", "version": "1.0.0", "description": "...",
 "sessions": [{"session_id": "O-01",
               "steps": [{"instruction": "Present the person as ...",
                          "prompt_id": "O-01", "prompt_category": "Occupational/Authority",
                          "binding": {"attribute": "crimson red hair"},
                          "inputs": [{"role": "second_person", "source": "dataset", "rule": "other_gender"},
                                     {"role": "style", "source": "file", "path": "style.png"}],
                          "meta": {"repo_id": "B01"}}]}]}
```

``binding`` is optional; when given, its category, sub-axis and axis come from the taxonomy
(and must agree with it when written). ``k`` is optional and, when written, must be the
step's position. A ``file`` input's path is relative to the test-set file. ``meta`` (optional)
holds further published facts about the prompt as text values (``Step.meta``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from faceedit_bench.keys import fingerprint
from faceedit_bench.records import INPUT_RULES, Session, Step, StepInput, TestSet
from faceedit_bench.taxonomy import Taxonomy, TaxonomyError

Fail = Callable[[str], Exception]


def read_header(data: Mapping[str, Any], fail: Fail, text: Callable[..., str]) -> tuple[str, str, bool, list[Any]]:
    """What both formats start with: name, version, the reconstruction flag (false: a user's own set is
    not the paper's) and the non-empty list of raw sessions."""
    name, version = text(data, "name", "top level"), text(data, "version", "top level")
    reconstruction = data.get("reconstruction", False)
    if not isinstance(reconstruction, bool):
        raise fail(f'"reconstruction" must be true or false, got {reconstruction!r}')
    raw_sessions = data.get("sessions")
    if not isinstance(raw_sessions, list) or not raw_sessions:
        raise fail('"sessions" must be a non-empty list')
    return name, version, reconstruction, raw_sessions


def parse_format2(data: Mapping[str, Any], source: str, fail: Fail, text: Callable[..., str],
                  root: Path | None) -> TestSet:
    name, version, reconstruction, raw_sessions = read_header(data, fail, text)
    sessions, ids = [], set()
    for i, raw in enumerate(raw_sessions, start=1):
        if not isinstance(raw, dict):
            raise fail(f"session #{i} must be an object")
        sid = text(raw, "session_id", f"session #{i}")
        if sid in ids:
            raise fail(f"session {sid!r}: duplicate session_id")
        ids.add(sid)
        raw_steps = raw.get("steps")
        if not isinstance(raw_steps, list) or not raw_steps:
            raise fail(f"session {sid!r}: 'steps' must be a non-empty list (K >= 1)")
        steps = tuple(_step(st, k, f"session {sid!r}, step {k}", fail, text, root)
                      for k, st in enumerate(raw_steps, start=1))
        face = raw.get("face")
        if face is not None and (not isinstance(face, str) or not face):
            raise fail(f"session {sid!r}: 'face' must be the face id of the one base image it is written for")
        sessions.append(Session(session_id=sid, test_set=name, steps=steps, face_id=face))
    bound = any(st.bound for s in sessions for st in s.steps)
    return TestSet(name=name, version=version, content_hash=fingerprint(data),
                   taxonomy_version=Taxonomy.builtin().version if bound else "",
                   sessions=tuple(sessions), reconstruction=reconstruction,
                   description=data.get("description", "") or "")


def _step(st: Any, k: int, where: str, fail: Fail, text: Callable[..., str], root: Path | None) -> Step:
    if not isinstance(st, dict):
        raise fail(f"{where}: must be an object")
    if "k" in st and (st["k"] != k or isinstance(st["k"], bool)):
        raise fail(f"{where}: 'k' must be {k} (its position), got {st['k']!r}")
    unknown = sorted(set(st) - {"k", "instruction", "binding", "prompt_id", "prompt_category", "inputs", "meta"})
    if unknown:
        raise fail(f"{where}: unknown field(s) {', '.join(unknown)}")
    optional = {f: text(st, f, where) for f in ("prompt_id", "prompt_category") if st.get(f) is not None}
    return Step(k=k, instruction=text(st, "instruction", where), **_binding(st.get("binding"), where, fail),
                **optional, meta=_meta(st.get("meta"), where, fail), inputs=tuple(_input(x, where, fail, root) for x in _list(st.get("inputs"), where, fail)))


def _binding(raw: Any, where: str, fail: Fail) -> dict[str, str]:
    if raw is None:
        return {}
    if not isinstance(raw, dict) or not isinstance(raw.get("attribute"), str):
        raise fail(f'{where}: "binding" must be an object with an "attribute" of the taxonomy')
    try:
        entry = Taxonomy.builtin().entry(raw["attribute"])
    except TaxonomyError as exc:
        raise fail(f"{where}: {exc}") from None
    for f in ("category", "sub_axis", "axis"):
        if f in raw and raw[f] != getattr(entry, f):
            raise fail(f"{where}: attribute {entry.attribute!r} has {f} {getattr(entry, f)!r} in the taxonomy, "
                       f"but the file says {raw[f]!r}")
    return {"attribute": entry.attribute, "category": entry.category, "sub_axis": entry.sub_axis, "axis": entry.axis}


def _meta(raw: Any, where: str, fail: Fail) -> dict[str, str]:
    if raw is None:
        return {}
    if not isinstance(raw, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in raw.items()):
        raise fail(f'{where}: "meta" must be an object of text values, e.g. {{"target_occupation": "nurse"}}')
    if raw.get("stereotyped_gender", "male") not in ("male", "female"):  # read by metrics that compare an edit with a stereotype
        raise fail(f"{where}: meta 'stereotyped_gender' must be \"male\" or \"female\", got {raw['stereotyped_gender']!r}")
    return dict(raw)


def _list(raw: Any, where: str, fail: Fail) -> list[Any]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise fail(f'{where}: "inputs" must be a list')
    return raw


def _input(raw: Any, where: str, fail: Fail, root: Path | None) -> StepInput:
    if not isinstance(raw, dict) or not isinstance(raw.get("role"), str) or not raw["role"]:
        raise fail(f'{where}: each input needs a "role" (e.g. "second_person")')
    role, kind = raw["role"], raw.get("source")
    if kind == "file":
        if not isinstance(raw.get("path"), str):
            raise fail(f'{where}: input {role!r} from a file needs a "path"')
        path = Path(raw["path"]) if root is None else (root / raw["path"])
        if not path.is_file():
            raise fail(f"{where}: input {role!r}: no file {path}")
        return StepInput(role, "file", path=str(path.resolve()))
    if kind == "dataset":
        if isinstance(raw.get("face"), str) and raw["face"] and "rule" not in raw:
            return StepInput(role, "dataset", face=raw["face"])
        if raw.get("rule") not in INPUT_RULES:
            raise fail(f'{where}: input {role!r} from the dataset needs a "rule", one of {", ".join(INPUT_RULES)}, '
                       'or the "face" id of one face')
        return StepInput(role, "dataset", rule=raw["rule"])
    raise fail(f'{where}: input {role!r}: "source" must be "file" or "dataset", got {kind!r}')
