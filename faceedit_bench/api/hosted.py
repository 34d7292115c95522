"""For authors of hosted-provider components (an editor or a judge behind an HTTP API): everything a provider
shares, written once. Import it from here (``from faceedit_bench.api.hosted import HostedComponent``).

* :class:`HostedParams`: the parameters every hosted component takes (``model``, ``base_url``,
  ``api_key_env``, ``limits``, ``prices``); a component's own parameters extend this dataclass, inheriting
  these fields, and the parameter check reads its fields;
* :class:`HostedConnection`: endpoint (config, then the SDK's variable, then the provider's host), key (from
  the environment only, checked before any work, never shown), one SDK client per event loop, closed in that
  loop before it closes; a subclass names its provider and makes its SDK's client;
* :class:`HostedComponent`: the setup every hosted editor or judge shares (parameters, connection, call
  limits, prices); a subclass checks its own parameters and implements its one attempt;
* :func:`answer_failure`: what an error answer means (OpenAI's shape: HTTP status and error code), the same
  for every provider: refused, api_error, or a :class:`~faceedit_bench.api.RetryableError`;
* :func:`openai_shaped_failure`: the same, read from an exception of an SDK built like OpenAI's (status code,
  error code, message, headers), with its transport failures and answers of the wrong shape;
* :func:`transport_failure`: the retryable kind of a failed exchange (timeout, connection, truncated,
  malformed);
* :class:`UnexpectedAnswer` and :func:`unexpected_answer`: an answer not in the API's format (a binary or
  HTML body, JSON cut short), one retryable kind (``malformed``) naming the endpoint and quoting the answer;
* :func:`as_status`, :func:`as_code`: a status or an error code of whatever type an SDK gave it, made the type
  every test on it expects.

docs/providers.md shows a whole provider written on it.
"""

from __future__ import annotations

from faceedit_bench.execution.call_errors import UnexpectedAnswer, unexpected_answer
from faceedit_bench.execution.hosted import HostedComponent, HostedConnection, HostedParams
from faceedit_bench.execution.hosted_errors import (
    answer_failure,
    as_code,
    as_status,
    openai_shaped_failure,
    transport_failure,
)

__all__ = ["HostedComponent", "HostedConnection", "HostedParams", "UnexpectedAnswer", "answer_failure", "as_code",
           "as_status", "openai_shaped_failure", "transport_failure", "unexpected_answer"]
