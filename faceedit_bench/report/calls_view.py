"""The report's ``calls`` section as people and trackers read it: by role (``editor``, ``judge``,
``judge_<member>``), named by provider, model and endpoint host, never by the internal provider key
(``gemini:http://127.0.0.1:18977:GEMINI_API_KEY:gemini-2.5-flash``).

Reports written before the section named roles are read too: their provider keys follow one pattern
(``<provider>:<base URL or default>:<key variable>:<model>``), so provider, host and model are taken from it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

#: The provider key every hosted provider plugin writes (``local:<name>`` for local models).
_KEY = re.compile(r"^(?P<provider>[^:]+):(?P<base>default|https?://[^/:]+(?::\d+)?[^:]*):(?P<env>[A-Za-z0-9_]+)"
                  r":(?P<model>.+)$")


@dataclass(frozen=True)
class CallSource:
    role: str  # who made the calls: "editor", "judge", "judge_gemini", "editor+judge"; "" in older reports
    provider: str
    model: str
    host: str  # the endpoint's host[:port]; "" where the report does not say

    @property
    def name(self) -> str:
        """``gemini · gemini-2.5-flash · 127.0.0.1:18977``."""
        return " · ".join(p for p in (self.provider, self.model, self.host) if p)

    @property
    def metric_name(self) -> str:
        """What tracker metrics are named by: the role, else (older reports) provider and model."""
        return self.role or f"{self.provider}_{self.model}".strip("_")


def endpoint_host(url: str) -> str:
    """``127.0.0.1:18977`` of ``http://127.0.0.1:18977/v1`` (never a user or password in the URL); the text
    itself when it is no URL."""
    parts = urlsplit(url)
    if not parts.hostname:
        return url
    return parts.hostname + (f":{parts.port}" if parts.port else "")


def public_endpoint(url: str) -> str:
    """The endpoint without what may be a credential (user and password, query, fragment)."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{endpoint_host(url)}{parts.path}" if parts.scheme and parts.hostname else url


def call_source(key: str, entry: Mapping[str, Any]) -> CallSource:
    """Role, provider, model and host of one entry of ``calls`` (a report of any version)."""
    roles = [r for r in entry.get("roles") or [] if isinstance(r, Mapping) and r.get("role")]
    parsed = _KEY.match(key)
    provider = str(entry.get("provider") or (parsed["provider"] if parsed else key.split(":", 1)[0]))
    model = next((str(r["model"]) for r in roles if r.get("model")), "")
    if not model:
        model = parsed["model"] if parsed else key.split(":", 1)[1] if key.startswith("local:") else ""
    host = str(entry.get("endpoint_host") or "")
    if not host and entry.get("endpoint"):
        host = endpoint_host(str(entry["endpoint"]))
    if not host and parsed and parsed["base"] != "default":
        host = endpoint_host(parsed["base"])
    return CallSource("+".join(str(r["role"]) for r in roles), provider, model, host)


def call_sources(report: Mapping[str, Any]) -> list[tuple[CallSource, Mapping[str, Any]]]:
    """Every entry of ``calls`` with its source (a report of any version)."""
    return [(call_source(key, entry), entry) for key, entry in (report.get("calls") or {}).items()
            if isinstance(entry, Mapping)]


def calls_metrics(report: Mapping[str, Any], metric_key: Callable[..., str]) -> dict[str, float]:
    """Tracker metrics by role: ``calls_editor`` (calls made), ``calls_editor_attempts``,
    ``calls_editor_succeeded``, ``calls_editor_retries_<kind>``, ``calls_editor_gave_up_<kind>``,
    ``calls_editor_other_<kind>`` (polls, downloads). No endpoint or key variable is part of a name."""
    out: dict[str, float] = {}

    def put(key: str, value: Any) -> None:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            out[key] = float(value)

    sources = call_sources(report)
    names = [s.metric_name for s, _ in sources]
    for i, (source, stats) in enumerate(sources):
        name = source.metric_name
        if names.count(name) > 1:  # one model at two endpoints (older reports): each keeps its own metrics
            name = f"{name}_{names[: i + 1].count(name)}"
        put(metric_key("calls", name), stats.get("calls"))
        for field in ("attempts", "succeeded"):
            put(metric_key("calls", name, field), stats.get(field))
        for group, prefix in (("retries", "retries"), ("gave_up", "gave_up"), ("other_requests", "other")):
            for kind, n in (stats.get(group) or {}).items():
                put(metric_key("calls", name, prefix, kind), n)
    return out
