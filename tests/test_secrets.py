"""Keys come from the environment only and are masked in every log record."""

from __future__ import annotations

import io
import logging

import pytest

from faceedit_bench.execution.secrets import MASK, MissingSecretError, read_secret, redact

KEY = "sk-test-PLANTED-0123456789"


def test_a_missing_key_names_every_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FACEEDIT_TEST_KEY_A", raising=False)
    monkeypatch.delenv("FACEEDIT_TEST_KEY_B", raising=False)
    with pytest.raises(MissingSecretError, match="FACEEDIT_TEST_KEY_A or FACEEDIT_TEST_KEY_B"):
        read_secret(["FACEEDIT_TEST_KEY_A", "FACEEDIT_TEST_KEY_B"], what="the test editor")


def test_the_first_set_variable_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FACEEDIT_TEST_KEY_A", "")
    monkeypatch.setenv("FACEEDIT_TEST_KEY_B", KEY)
    assert read_secret(["FACEEDIT_TEST_KEY_A", "FACEEDIT_TEST_KEY_B"], what="the test editor") == KEY
    assert redact(f"Bearer {KEY} rejected") == f"Bearer {MASK} rejected"


def test_a_handler_added_after_the_key_was_read_never_sees_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FACEEDIT_TEST_KEY_A", KEY)
    read_secret(["FACEEDIT_TEST_KEY_A"], what="the test editor")
    # An SDK's own logger with its own handler, not propagating to the root logger.
    stream = io.StringIO()
    logger = logging.getLogger("faceedit_test_sdk")
    handler = logging.StreamHandler(stream)
    logger.addHandler(handler)
    logger.propagate = False
    try:
        logger.warning("request with key=%s failed", KEY)
        logger.warning(f"header x-goog-api-key: {KEY}")
    finally:
        logger.removeHandler(handler)
    text = stream.getvalue()
    assert KEY not in text
    assert text.count(MASK) == 2 and "request with key=*** failed" in text


def test_a_key_that_contains_another_known_key_is_masked_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keys remembered by earlier runs in the same process: replacing a short one first left the long one
    mostly visible ("s***-test-PLANTED-…")."""
    monkeypatch.setenv("SHORT_KEY", "k")
    monkeypatch.setenv("LONG_KEY", "sk-test-PLANTED-0123456789")
    read_secret(["SHORT_KEY"], what="a test")
    read_secret(["LONG_KEY"], what="a test")
    assert redact("Bearer sk-test-PLANTED-0123456789 rejected") == "Bearer *** rejected"
    # a value too short to be a real key is masked where it stands alone, never inside words
    assert redact("answers ok: 3; key: k; k") == "answers ok: 3; key: ***; ***"
    assert redact("data:image/png;base64,iVBk/k+k=") == "data:image/png;base64,iVBk/k+k="
