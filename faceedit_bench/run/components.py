"""Components from their config entries: the registered factory, checked parameters, and a
clear error naming the component and parameter when a factory rejects a value."""

from __future__ import annotations

import inspect
import re
from typing import Any

from faceedit_bench.config import GROUP_KINDS, ComponentConf
from faceedit_bench.errors import ConfigError, FaceEditBenchError
from faceedit_bench.execution.secrets import redact
from faceedit_bench.plugin.manager import Plugins
from faceedit_bench.plugin.payloads import ComponentInfo
from faceedit_bench.records import TestSet


def create_component(plugins: Plugins, group: str, conf: ComponentConf) -> tuple[Any, ComponentInfo]:
    kind = GROUP_KINDS[group]
    registration = plugins.registry.get(kind, conf.name)
    factory = registration.load()
    check_params(group, conf, factory)
    obj = _construct(group, conf, factory)
    description = dict(obj.describe()) if hasattr(obj, "describe") else {}
    if isinstance(obj, TestSet):
        description = {"name": obj.name, "version": obj.version, "content_hash": obj.content_hash}
    info = ComponentInfo(group, conf.name, registration.provider,
                         plugins.provider_version(registration.provider), description)
    return obj, info


def _construct(group: str, conf: ComponentConf, factory: Any) -> Any:
    """The component, or, when its factory rejects a parameter value (ValueError, TypeError),
    a ConfigError naming the component and the parameter(s) its message mentions."""
    try:
        return factory(**conf.params)
    except FaceEditBenchError:
        raise
    except (ValueError, TypeError) as exc:
        text = redact(f"{exc}")
        # The parameter(s) the message is about: named in it, or else whose (text) value it quotes.
        named = [n for n in conf.params if re.search(rf"(?<![A-Za-z0-9_]){re.escape(n)}(?![A-Za-z0-9_])", text)] or [
            n for n, v in conf.params.items() if isinstance(v, str) and len(v) > 1 and v in text]
        if named:
            which = "parameter " + ", ".join(f"{group}.params.{n}={redact(repr(conf.params[n]))}" for n in named)
        else:
            which = f"its parameters ({', '.join(f'{group}.params.{n}' for n in conf.params) or 'none given'})"
        raise ConfigError(f"{group} {conf.name!r} rejected {which}: {type(exc).__name__}: {text}. "
                          f"Fix the value on the command line or in the {group} config.") from exc


def check_params(group: str, conf: ComponentConf, factory: Any) -> None:
    """Reject unknown parameters with the list of accepted ones, before anything runs."""
    try:
        sig = inspect.signature(factory)
    except (TypeError, ValueError):
        return
    if any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values()):
        return
    accepted = [n for n, p in sig.parameters.items() if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)]
    unknown = sorted(set(conf.params) - set(accepted))
    if unknown:
        raise ConfigError(
            f"{group} {conf.name!r} does not take parameter(s) {', '.join(unknown)}. "
            f"Accepted: {', '.join(accepted) or '(none)'}."
        )
    missing = [n for n, p in sig.parameters.items()
               if p.default is p.empty and p.kind is not p.VAR_POSITIONAL and n not in conf.params]
    if missing:
        raise ConfigError(
            f"{group} {conf.name!r} needs parameter(s) {', '.join(missing)}: "
            + " ".join(f"{group}.params.{m}=..." for m in missing)
        )
