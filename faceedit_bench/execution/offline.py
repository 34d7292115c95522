"""Commands that make no provider calls need no API keys.

A run checks its keys before any work, so a missing key fails in the first second rather than
after an hour. A command that re-derives a run from what the ledger holds (``faceedit-bench merge``)
builds the same components but never calls them: inside :func:`no_provider_calls` a component is
built without its key (:func:`~faceedit_bench.execution.secrets.read_secret` answers a placeholder
for an unset variable), and any call that would reach a provider raises :class:`ProviderCallsOff`
before it is made, so the placeholder is never sent and nothing is paid for by surprise.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from faceedit_bench.errors import FaceEditBenchError

_command: tuple[str, str] | None = None  # (the command running without provider calls, how to fix a call), or None


class ProviderCallsOff(FaceEditBenchError):
    """A provider call was about to be made by a command that makes none: the work it needs is
    not in the ledger."""


@contextmanager
def no_provider_calls(command: str, fix: str) -> Iterator[None]:
    """No provider call, and so no API key, for the block. ``command`` names it and ``fix`` says what to
    do when a call is needed all the same, in the message of :class:`ProviderCallsOff`."""
    global _command
    previous, _command = _command, (command, fix)
    try:
        yield
    finally:
        _command = previous


def calls_off() -> bool:
    return _command is not None


def check_call_allowed(provider_key: str) -> None:
    """Raise :class:`ProviderCallsOff` inside :func:`no_provider_calls`."""
    if _command is not None:
        command, fix = _command
        raise ProviderCallsOff(f"{command} makes no provider calls, but this experiment still needs one "
                               f"({provider_key}): some of its work is not in the workspace ledger. {fix}")
