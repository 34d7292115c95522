"""Who made a run's provider calls: the role of each component that calls a provider (``editor``, ``judge``,
``judge_<member>`` of a panel, ``<condition>_judge``), with its component name and model.

The execution layer counts calls per provider key (provider, endpoint, key variable, model: what shares
limits); a reader wants them by role, named by provider, model and endpoint host. The report's calls
section carries both, so a run through a gateway and a direct run have the same metric names in MLflow.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from faceedit_bench.report.calls_view import endpoint_host, public_endpoint


def _model(description: Mapping[str, Any]) -> str:
    return str(next((description[k] for k in ("model_version", "model") if description.get(k)), ""))


def _callers(components: Mapping[str, Any], infos: Mapping[str, Any],
             condition_judges: Mapping[str, tuple[Any, Any]]) -> Iterator[tuple[str, Any, str, Mapping[str, Any]]]:
    """(role, component, its registered name, its description) of every component that may call a provider."""
    for kind in ("editor", "judge"):
        if kind in components:
            yield kind, components[kind], infos[kind].name, infos[kind].description
    for condition, (judge, info) in condition_judges.items():
        yield f"{condition}_judge", judge, info.name, info.description


def call_roles(components: Mapping[str, Any], infos: Mapping[str, Any],
               condition_judges: Mapping[str, tuple[Any, Any]] | None = None) -> dict[str, list[dict[str, str]]]:
    """``{provider key: [{role, component, model, endpoint}]}``; a panel's members are ``<role>_<member>``."""
    out: dict[str, list[dict[str, str]]] = {}

    def add(role: str, component: Any, name: str, description: Mapping[str, Any]) -> None:
        limits = getattr(component, "limits", None)
        key = getattr(limits, "provider_key", None)
        if key:
            out.setdefault(str(key), []).append({"role": role, "component": name, "model": _model(description),
                                                 "endpoint": str(getattr(limits, "endpoint", "") or "")})

    for role, component, name, description in _callers(components, infos, condition_judges or {}):
        members = getattr(component, "members", None)
        if isinstance(members, Mapping):  # a judge panel: each member calls its own provider
            member_descriptions = description.get("members") or {}
            for member, judge in members.items():
                described = member_descriptions.get(member) or {}
                add(f"{role}_{member}", judge, str(described.get("name") or member), described)
        else:
            add(role, component, name, description)
    return out


def calls_section(stats: Mapping[str, Mapping[str, Any]],
                  roles: Mapping[str, list[dict[str, str]]]) -> dict[str, dict[str, Any]]:
    """The report's ``calls``: counts per provider key, each with ``provider`` (the key's first part, as every
    provider plugin writes it), the ``roles`` that called it (role, component, model) and ``endpoint_host``
    where the endpoint is known."""
    out = {}
    for key, counts in stats.items():
        entry = {**counts, "provider": key.split(":", 1)[0],
                 "roles": [{k: v for k, v in r.items() if k != "endpoint"} for r in roles.get(key) or []]}
        raw = str(entry.get("endpoint") or "")
        if raw:  # provenance, without what may be a credential in the URL (the key holds the URL too)
            entry["endpoint"] = public_endpoint(raw)
            entry["endpoint_host"] = endpoint_host(raw)
        out[key.replace(raw, entry["endpoint"]) if raw else key] = entry
    return out


def call_tags(roles: Mapping[str, list[dict[str, str]]]) -> dict[str, str]:
    """Tracker tags naming where each role's calls go: ``calls.<role>.endpoint`` (the endpoint stays out of
    metric names, so a run through a gateway and a direct run compare metric by metric)."""
    return {f"calls.{r['role']}.endpoint": public_endpoint(r["endpoint"]) for callers in roles.values()
            for r in callers if r.get("endpoint")}
