"""Frozen, versioned test sets: loading, validation, hashing and display.

The four builtin sets (Hair, Accessories, Pose, Multi-Axis; METHODOLOGY §2.4) are a
RECONSTRUCTION of paper (a)'s unpublished App. D, produced once by
:mod:`faceedit_bench.testsets.generator` and frozen in ``data/testsets/*.json``. Users
can add their own sets as JSON files of the same format and pass the path wherever a
test-set name is accepted.

A test set's ``content_hash`` is the sha256 of the canonical JSON of the whole file,
so reformatting a file keeps its hash and any change of content changes it.

Two formats: version 1 (the frozen sets; 4 taxonomy-bound steps per session, below) and
format 2 (``"format": 2``: sessions of any length, free-text steps, extra inputs; see
:mod:`faceedit_bench.testsets.format2`). :mod:`faceedit_bench.testsets.mllm` has an MLLM judge write a set's
instructions and freezes them into a new set (``faceedit-bench write-instructions``).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from faceedit_bench.errors import FaceEditBenchError
from faceedit_bench.keys import fingerprint
from faceedit_bench.records import STEPS_PER_SESSION, Session, Step, TestSet, version_text
from faceedit_bench.storage.user_files import parse_json, read_utf8
from faceedit_bench.taxonomy import Taxonomy, TaxonomyError

__all__ = [
    "BUILTIN_NAMES",
    "TESTSET_NAMES",
    "TestSetError",
    "describe_testset",
    "frozen_content",
    "frozen_matches_generator",
    "load_testset",
    "parse_testset",
    "regenerate",
]

TESTSET_NAMES = Taxonomy.TESTSETS
#: Every frozen builtin test set (protocol packages register their own with ``faceedit_register_testsets``).
BUILTIN_NAMES = TESTSET_NAMES


class TestSetError(FaceEditBenchError):
    """A test-set file is missing or does not have the expected structure."""

    __test__ = False


def _builtin_resource(name: str) -> Any:
    return resources.files("faceedit_bench") / "data" / "testsets" / f"{name}.json"


def _read(name_or_path: str | Path) -> tuple[dict[str, Any], str]:
    """The parsed file content and a label naming its source, for error messages."""
    if isinstance(name_or_path, str) and name_or_path in BUILTIN_NAMES:
        res = _builtin_resource(name_or_path)
        text, source = res.read_text(encoding="utf-8"), f"builtin test set {name_or_path!r} ({res})"
    else:
        path = Path(name_or_path)
        if not path.is_file():
            import difflib

            near = difflib.get_close_matches(str(name_or_path), BUILTIN_NAMES, n=2, cutoff=0.5)
            hint = f" Did you mean {' or '.join(repr(n) for n in near)}?" if near else ""
            raise TestSetError(
                f"test set {str(name_or_path)!r} is neither a builtin name ({', '.join(BUILTIN_NAMES)}) "
                f"nor an existing JSON file.{hint}"
            )
        text, source = read_utf8(path, what="test-set JSON file", error=TestSetError), str(path)
    data = parse_json(text, source, what="test-set JSON file", error=TestSetError)
    if not isinstance(data, dict):
        raise TestSetError(f"{source}: the top level must be a JSON object")
    return data, source


def frozen_content(name: str) -> dict[str, Any]:
    """The parsed content of a builtin frozen file."""
    if name not in BUILTIN_NAMES:
        raise TestSetError(f"unknown builtin test set {name!r}; builtin: {', '.join(BUILTIN_NAMES)}")
    return _read(name)[0]


def parse_testset(data: Mapping[str, Any], source: str = "<data>", root: Path | None = None) -> TestSet:
    """Validate file content against its format and the taxonomy; build the TestSet.
    ``root`` is the directory that relative input paths (format 2) are resolved against."""

    def fail(msg: str) -> TestSetError:
        return TestSetError(f"{source}: {msg}")

    def text(obj: Mapping[str, Any], key: str, where: str) -> str:
        value = obj.get(key)
        if not isinstance(value, str) or not value.strip():
            raise fail(f"{where}: {key!r} must be a non-empty string, got {value!r}")
        return value

    if "format" in data:
        if data["format"] != 2:
            raise fail(f'"format" must be 2 (or absent for the version-1 format), got {data["format"]!r}')
        from faceedit_bench.testsets.format2 import parse_format2

        return parse_format2(data, source, fail, text, root)
    from faceedit_bench.testsets.format2 import read_header

    name, version, reconstruction, raw_sessions = read_header(data, fail, text)
    tax = Taxonomy.builtin()
    ref = data.get("taxonomy")
    if not isinstance(ref, dict):
        raise fail('"taxonomy" must be an object {"name", "version", "content_hash"}')
    if (ref.get("name"), ref.get("version")) != (tax.name, tax.version):
        raise fail(
            f"made for taxonomy {ref.get('name')!r} {ref.get('version')!r}, "
            f"but the installed taxonomy is {tax.name!r} {tax.version!r}"
        )
    if "content_hash" in ref and ref["content_hash"] != tax.content_hash:
        raise fail(
            f"taxonomy content_hash {ref['content_hash']!r} differs from the installed {tax.content_hash!r}"
        )
    sessions, ids = [], set()
    for i, s in enumerate(raw_sessions, start=1):
        where = f"session #{i}"
        if not isinstance(s, dict):
            raise fail(f"{where} must be an object")
        sid = text(s, "session_id", where)
        where = f"session {sid!r}"
        if sid in ids:
            raise fail(f"{where}: duplicate session_id")
        ids.add(sid)
        if s.get("test_set") != name:
            raise fail(f"{where}: test_set is {s.get('test_set')!r}, expected {name!r}")
        raw_steps = s.get("steps")
        if not isinstance(raw_steps, list) or len(raw_steps) != STEPS_PER_SESSION:
            raise fail(f"{where}: 'steps' must be a list of exactly {STEPS_PER_SESSION} steps")
        steps = []
        for k, st in enumerate(raw_steps, start=1):
            if not isinstance(st, dict):
                raise fail(f"{where}, step {k}: must be an object")
            if st.get("k") != k or isinstance(st.get("k"), bool):
                got = st.get("k")
                raise fail(f"{where}, step {k}: 'k' must be {k} (steps run 1..4), got {got!r}")
            names = ("attribute", "category", "sub_axis", "axis", "instruction")
            fields = {f: text(st, f, f"{where}, step {k}") for f in names}
            try:
                entry = tax.entry(fields["attribute"])
            except TaxonomyError as exc:
                raise fail(f"{where}, step {k}: {exc}") from None
            for f in ("category", "sub_axis", "axis"):
                if fields[f] != getattr(entry, f):
                    raise fail(
                        f"{where}, step {k}: attribute {entry.attribute!r} has {f} "
                        f"{getattr(entry, f)!r} in the taxonomy, but the file says {fields[f]!r}"
                    )
            steps.append(Step(k=k, **fields))
        sessions.append(Session(session_id=sid, test_set=name, steps=tuple(steps)))

    return TestSet(
        name=name,
        version=version,
        content_hash=fingerprint(data),
        taxonomy_version=tax.version,
        sessions=tuple(sessions),
        reconstruction=reconstruction,
        description=data.get("description", "") or "",
    )


@functools.cache
def _load_builtin(name: str) -> TestSet:
    data, source = _read(name)
    return parse_testset(data, source)


def load_testset(name_or_path: str | Path | Mapping[str, Any], source: str = "<data>") -> TestSet:
    """A builtin test set by name (cached; :attr:`Taxonomy.TESTSETS`), a plugin's frozen set by its registered
    name, a user's test-set JSON file by path, or a test-set file's parsed content (a plugin's frozen JSON;
    ``source`` names it in errors), validated against its format and the taxonomy (:func:`parse_testset`)."""
    if isinstance(name_or_path, Mapping):
        return parse_testset(name_or_path, source)
    if isinstance(name_or_path, str) and name_or_path in BUILTIN_NAMES:
        return _load_builtin(name_or_path)
    if isinstance(name_or_path, str) and (loader := _plugin_loader(name_or_path)) is not None:
        return loader()
    data, source = _read(name_or_path)
    return parse_testset(data, source, Path(name_or_path).parent)


def _plugin_loader(name: str) -> Any:
    """The loader a plugin registered as ``name`` when it takes no parameter (a frozen set), else None."""
    from faceedit_bench.plugin.manager import current_plugins

    table = current_plugins().registry["testsets"]
    if name in (*BUILTIN_NAMES, "file") or name not in table.names() or Path(name).suffix:
        return None
    loader = table.get(name).load()
    return loader if callable(getattr(loader, "check", None)) else None


def describe_testset(ts: TestSet, label: str | None = None) -> str:
    """Human-readable rendering (``faceedit-bench testset show``): header, then every step. ``label`` says what
    a set that is no reconstruction is (a registered loader's ``label``, e.g. a paper's published prompts)."""
    label = ("RECONSTRUCTION (not the paper's sessions)" if ts.reconstruction else label or "user-defined")
    lengths = sorted({len(s.steps) for s in ts.sessions})
    lines = [
        f"Test set {ts.name} {version_text(ts.version)} [{label}]",
        f"  content hash: {ts.content_hash}",
        f"  taxonomy:     {Taxonomy.builtin().name} v{ts.taxonomy_version}" if ts.taxonomy_version
        else "  taxonomy:     none (free-text steps)",
        f"  sessions:     {len(ts.sessions)} x {'/'.join(map(str, lengths))} steps",
    ]
    if ts.description:
        lines.append(f"  {ts.description}")
    for s in ts.sessions:
        lines.append("")
        lines.append(f"{s.session_id}")
        for st in s.steps:
            tags = [t for t in (st.prompt_id, st.prompt_category) if t]
            if st.bound:
                tags.append(f"{st.category} / {st.sub_axis}")
            tags += [f"+{i.role}" for i in st.inputs]
            lines.append(f"  {st.k}. {st.instruction}" + (f"  [{'; '.join(tags)}]" if tags else ""))
    return "\n".join(lines) + "\n"


def regenerate(name: str) -> dict[str, Any]:
    """What the generator produces for a builtin set (for checks; never overwrite the file)."""
    from faceedit_bench.testsets.generator import generate  # imported lazily: only checks need it

    if name not in TESTSET_NAMES:
        raise TestSetError(
            f"only builtin test sets can be regenerated ({', '.join(BUILTIN_NAMES)}), not {name!r}"
        )
    seed = frozen_content(name).get("generator", {}).get("seed", 0)
    return generate(name, seed=seed)


def frozen_matches_generator(name: str) -> bool:
    """True when the frozen file's content equals a fresh generation (whitespace aside)."""
    return frozen_content(name) == regenerate(name)
