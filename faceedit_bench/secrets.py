"""API keys: read from environment variables only, checked before any work, never written.

Every value read through :func:`read_secret` is remembered so that :func:`redact` can
mask it in reasons, raw answers and log records (a filter on the root logger).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence

from faceedit_bench.errors import ConfigError

_KNOWN: set[str] = set()
MASK = "***"


class MissingSecretError(ConfigError):
    pass


def read_secret(variables: Sequence[str], *, what: str) -> str:
    """The value of the first set variable in ``variables``; a clear error naming them if none is."""
    for name in variables:
        value = os.environ.get(name, "").strip()
        if value:
            _KNOWN.add(value)
            _install_log_filter()
            return value
    names = " or ".join(variables)
    raise MissingSecretError(
        f"{what} needs an API key in the environment variable {names}, which is not set. "
        f"Export it (e.g. `export {variables[0]}=...`) and run again; keys are never read from config files."
    )


def redact(text: str) -> str:
    for secret in _KNOWN:
        if secret and secret in text:
            text = text.replace(secret, MASK)
    return text


class _RedactFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if _KNOWN:
            message = record.getMessage()
            cleaned = redact(message)
            if cleaned != message:
                record.msg, record.args = cleaned, None
        return True


_FILTER = _RedactFilter()


def _install_log_filter() -> None:
    root = logging.getLogger()
    for handler in root.handlers:
        if _FILTER not in handler.filters:
            handler.addFilter(_FILTER)
    if _FILTER not in root.filters:
        root.addFilter(_FILTER)
