"""API keys: read from environment variables only, checked before any work, never written.

Every value read through :func:`read_secret` is remembered so that :func:`redact` can
mask it in reasons, raw answers and log records. Log records are masked where they are
created (a wrapped log-record factory), so every logger and every handler, including those
that SDKs or Hydra add later, only ever sees the masked text.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Sequence

from faceedit_bench.errors import ConfigError
from faceedit_bench.execution.offline import calls_off

_KNOWN: set[str] = set()
MASK = "***"
#: A value shorter than this is masked only where it stands alone: a test key such as "k" must not turn
#: every "ok" of a report into "o***", nor break an embedded image's base64.
SHORT = 8
_WORD = "A-Za-z0-9_+/=-"  # letters of identifiers, keys and base64
#: What :func:`read_secret` answers for an unset variable while provider calls are off (never sent).
NOT_NEEDED = "not-needed-no-provider-calls"


class MissingSecretError(ConfigError):
    pass


def read_secret(variables: Sequence[str], *, what: str) -> str:
    """The value of the first set variable in ``variables``; a clear error naming them if none is
    (or, where the command makes no provider calls, :data:`NOT_NEEDED`)."""
    for name in variables:
        value = os.environ.get(name, "").strip()
        if value:
            _KNOWN.add(value)
            _install_log_redaction()
            return value
    if calls_off():
        return NOT_NEEDED
    names = " or ".join(variables)
    raise MissingSecretError(
        f"{what} needs an API key in the environment variable {names}, which is not set. "
        f"Export it (e.g. `export {variables[0]}=...`) and run again; keys are never read from config files."
    )


def redact(text: str) -> str:
    """``text`` with every secret read so far in this process masked (for logs, errors and reports)."""
    # Longest first: a key that contains a shorter known one is masked whole, never left half visible.
    for secret in sorted(_KNOWN, key=len, reverse=True):
        if secret and secret in text:
            if len(secret) >= SHORT:
                text = text.replace(secret, MASK)
            else:
                text = re.sub(rf"(?<![{_WORD}]){re.escape(secret)}(?![{_WORD}])", MASK, text)
    return text


def _install_log_redaction() -> None:
    """Wrap the log-record factory once: a record's message is formatted and masked at
    creation when it contains a known key."""
    global _REDACTING
    if _REDACTING:
        return
    _REDACTING = True
    make_record = logging.getLogRecordFactory()

    def redacting_factory(*args: object, **kwargs: object) -> logging.LogRecord:
        record = make_record(*args, **kwargs)
        message = record.getMessage()
        cleaned = redact(message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return record

    logging.setLogRecordFactory(redacting_factory)


_REDACTING = False
