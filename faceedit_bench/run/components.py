"""Components from their config entries: the registered factory, checked parameters, and a
clear error naming the component, the full key and the value when a factory rejects a value."""

from __future__ import annotations

import dataclasses
import difflib
import inspect
import re
from collections.abc import Iterator, Mapping
from typing import Any

from faceedit_bench.builtin.datasets._common import FACE_PARAMS, check_dataset_params
from faceedit_bench.config import GROUP_KINDS, ComponentConf
from faceedit_bench.errors import ConfigError
from faceedit_bench.execution.hosted import declared_params
from faceedit_bench.execution.secrets import redact
from faceedit_bench.plugin.manager import Plugins
from faceedit_bench.plugin.payloads import ComponentInfo
from faceedit_bench.plugin.protocols import CAPABILITIES, capability
from faceedit_bench.plugin.registry import ANY_PARAMS, KINDS, Registration
from faceedit_bench.records import TestSet


def create_component(plugins: Plugins, group: str, conf: ComponentConf, *,
                     where: str | None = None) -> tuple[Any, ComponentInfo]:
    """The component ``conf`` selects. ``where``: the key of its parameters in the config
    (default ``<group>.params``; e.g. ``judge.params.members.gpt.params`` for a panel member)."""
    kind = GROUP_KINDS[group]
    registration = plugins.registry.get(kind, conf.name)
    factory = registration.load()
    where = where or f"{group}.params"
    check_params(group, conf, factory, registration=registration, where=where)
    obj = _construct(group, conf, factory, where)
    for declared in CAPABILITIES.get(group, ()):  # a wrong optional capability, refused before any work
        capability(obj, group, declared.name)
    description = dict(obj.describe()) if hasattr(obj, "describe") else {}
    if isinstance(obj, TestSet):
        description = {"name": obj.name, "version": obj.version, "content_hash": obj.content_hash}
    info = ComponentInfo(group, conf.name, registration.provider,
                         plugins.provider_version(registration.provider), description)
    return obj, info


def _construct(group: str, conf: ComponentConf, factory: Any, where: str) -> Any:
    """The component, or, when its factory rejects a value, a ConfigError naming the component and the
    full key and value of the parameter(s) meant: for a ValueError or TypeError always (every parameter
    when the message names none), for a ConfigError when it names a parameter but not its full key."""
    try:
        return factory(**conf.params)
    except (ConfigError, ValueError, TypeError) as exc:
        text = redact(f"{exc}")
        named = _named_params(conf.params, text)
        if isinstance(exc, ConfigError) and (not named or f"{where}." in text):
            raise  # not about one parameter (e.g. a missing API key), or it names the full key already
        if named:
            which = "parameter " + ", ".join(f"{where}.{path}={redact(repr(value))}" for path, value in named)
        else:
            which = f"its parameters ({', '.join(f'{where}.{n}' for n in conf.params) or 'none given'})"
        cause = text if isinstance(exc, ConfigError) else f"{type(exc).__name__}: {text}"
        raise ConfigError(f"{group} {conf.name!r} rejected {which}: {cause.rstrip('.')}. "
                          f"Fix the value on the command line or in the {group} config.") from exc


def _named_params(params: Mapping[str, Any], text: str) -> list[tuple[str, Any]]:
    """The parameters an error message is about, by the first rule that finds any: their dotted path
    (``limits.max_attempts``) or name as the subject of a sentence (``temperature must``,
    ``max_attempts=0``, ``limits.rpm (did you mean ...)``); their dotted path or name anywhere; their
    (text) value quoted. A parameter is left out when one inside it is found (``limits.max_attempts``
    rather than ``limits``)."""
    paths = list(_paths(params))

    def word(name: str, after: str = "") -> str:
        return rf"(?<![A-Za-z0-9_.]){re.escape(name)}(?![A-Za-z0-9_]){after}"

    subject = r"(?=\s*(?:=|\(|must\b|is\b|are\b|cannot\b|should\b|needs?\b))"
    rules = [
        lambda p, v: "." in p and re.search(word(p, subject), text),
        lambda p, v: re.search(word(p.rsplit(".", 1)[-1], subject), text),
        lambda p, v: "." in p and re.search(word(p), text),
        lambda p, v: re.search(word(p.rsplit(".", 1)[-1]), text),
        lambda p, v: isinstance(v, str) and len(v) > 1 and v in text,
    ]
    for rule in rules:
        named = [(p, v) for p, v in paths if rule(p, v)]
        named = [(p, v) for p, v in named if not any(q.startswith(f"{p}.") for q, _ in named)]
        if named:
            return named
    return []


def _paths(params: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    for key, value in params.items():
        yield f"{prefix}{key}", value
        if isinstance(value, Mapping):
            yield from _paths(value, f"{prefix}{key}.")


def accepted_params(factory: Any, registration: Registration | None = None) -> tuple[list[str], list[str]] | None:
    """``(accepted, required)`` parameter names of a factory: the fields of the dataclass it declares them in
    (``params_type``, every hosted component), else its signature or, for one taking ``**kwargs``, its
    registration's declaration; None when it is trusted with any parameter
    (or has no readable signature). A factory taking ``**kwargs`` that declares nothing is an error."""
    declared = registration.params if registration is not None else None
    if declared == ANY_PARAMS:
        return None
    fields = declared_params(factory)
    if fields is not None:  # a hosted component's parameters: its params dataclass, inherited fields and all
        return list(fields), [n for n, default in fields.items() if default is dataclasses.MISSING]
    try:
        sig = inspect.signature(factory)
    except (TypeError, ValueError):
        return (list(declared), []) if declared is not None else None
    named = {n: p for n, p in sig.parameters.items() if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)}
    required = [n for n, p in named.items() if p.default is p.empty]
    if any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values()):
        if declared is None:
            what = (f"{KINDS[registration.kind]} {registration.name!r} (plugin {registration.provider})"
                    if registration is not None else f"the factory {factory!r}")
            raise ConfigError(
                f"{what} takes **kwargs and does not say which parameters it accepts, so its parameters cannot be "
                "checked: the plugin must register it with params=[<names>] (or params='any' to check them "
                "itself); see docs/plugin_hooks.md.")
        return list(dict.fromkeys([*named, *declared])), required
    return list(named), required


def parameter_defaults(factory: Any) -> dict[str, Any]:
    """Each parameter of a factory with its default (``dataclasses.MISSING`` or ``inspect.Parameter.empty``
    when it has none), read the way :func:`accepted_params` reads them."""
    fields = declared_params(factory)
    if fields is not None:
        return fields
    return {n: p.default for n, p in inspect.signature(factory).parameters.items()
            if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)}


def check_params(group: str, conf: ComponentConf, factory: Any, *, registration: Registration | None = None,
                 where: str | None = None) -> None:
    """Reject unknown parameters (with the closest accepted name) and missing required ones, and a dataset's
    common parameters (``limit``, ``max_references``, ``min_base_fss``, ``single_face_only``) of the wrong
    kind, before anything runs."""
    where = where or f"{group}.params"
    if group == "dataset":  # the parameters every dataset takes mean the same in each: checked here, for all
        check_dataset_params(**{n: conf.params[n] for n in FACE_PARAMS if n in conf.params})
    known = accepted_params(factory, registration)
    if known is None:
        return
    accepted, required = known
    unknown = [n for n in conf.params if n not in accepted]
    if unknown:
        raise ConfigError(f"{group} {conf.name!r} does not take parameter(s) {', '.join(unknown)}: "
                          + "; ".join(unknown_key(where, n, accepted) for n in unknown)
                          + f". Accepted: {', '.join(accepted) or '(none)'}.")
    missing = [n for n in required if n not in conf.params]
    if missing:
        raise ConfigError(
            f"{group} {conf.name!r} needs parameter(s) {', '.join(missing)}: "
            + " ".join(f"{where}.{m}=..." for m in missing)
        )


def unknown_key(section: str, name: str, known: list[str]) -> str:
    """``"<section>.<name> is unknown (did you mean <section>.<closest>?)"``, when one is close enough."""
    def full(n: str) -> str:
        return f"{section}.{n}" if section else n

    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    return f"{full(name)} is unknown" + (f" (did you mean {full(close[0])}?)" if close else "")
