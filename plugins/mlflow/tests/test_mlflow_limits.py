"""The key/value policy, checked against MLflow's own validators."""

from __future__ import annotations

import hashlib
import json
import re

import pytest
from faceedit_bench_mlflow import _limits as lim
from mlflow.utils import validation


def test_limits_match_installed_mlflow():
    assert lim.MAX_PARAM_VALUE == validation.MAX_PARAM_VAL_LENGTH
    assert lim.MAX_TAG_VALUE == validation.MAX_TAG_VAL_LENGTH
    assert lim.MAX_KEY == validation.MAX_ENTITY_KEY_LENGTH
    assert lim.PARAMS_PER_BATCH == validation.MAX_PARAMS_TAGS_PER_BATCH
    assert lim.METRICS_PER_BATCH == validation.MAX_METRICS_PER_BATCH
    assert lim.BATCH_JSON_BYTES < validation.MAX_BATCH_LOG_REQUEST_SIZE


def test_truncate_keeps_short_values_and_marks_long_ones():
    assert lim.truncate("abc", 10) == ("abc", False)
    long_value = "é" * 7000
    cut, was_cut = lim.truncate(long_value, 6000)
    assert was_cut and len(cut) == 6000
    assert cut.endswith(f"…[truncated sha256:{hashlib.sha256(long_value.encode()).hexdigest()[:8]}]")


BAD_KEYS = [
    "a b/c[0]", "x=1", "/abs", "a//b", "a/./b", "../up", "..", ".", "", "trailing/", "ünïcode.ok", "k" * 300
]


@pytest.mark.parametrize("key", BAD_KEYS)
def test_param_keys_pass_mlflow_validation(key):
    safe = lim.param_key(key)
    validation._validate_param_name(safe)
    validation._validate_tag_name(safe)
    assert len(safe) <= validation.MAX_ENTITY_KEY_LENGTH


@pytest.mark.parametrize("key", ["editor.params.model", "limits/faces", "a-b c:d"])
def test_valid_param_keys_are_unchanged(key):
    assert lim.param_key(key) == key


@pytest.mark.parametrize("key", [*BAD_KEYS, "fss.mean", "FSS-mean", "1st_place", "___", "a__b"])
def test_metric_keys_are_snake_case_and_valid(key):
    safe = lim.metric_key(key)
    validation._validate_metric_name(safe)
    assert re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", safe) and len(safe) <= validation.MAX_ENTITY_KEY_LENGTH


def test_colliding_keys_stay_distinct():
    mapping = lim.unique_keys(["a b", "a_b", "a[b"])
    assert mapping["a_b"] != mapping["a b"] != mapping["a[b"] != mapping["a_b"]
    assert len(set(mapping.values())) == 3
    long_keys = lim.unique_keys(["x" * 300 + "1", "x" * 300 + "2"])
    assert len(set(long_keys.values())) == 2


def test_batches_respect_count_and_size():
    items = [(f"k{i}", "v") for i in range(250)]
    assert [len(b) for b in lim.batches(items, 100)] == [100, 100, 50]
    big = [(f"k{i}", "\u4e00" * 6000) for i in range(100)]  # JSON escapes each character to 6 bytes
    sizes = [sum(len(json.dumps(k)) + len(json.dumps(v)) for k, v in b) for b in lim.batches(big, 100)]
    assert len(sizes) > 1 and max(sizes) <= lim.BATCH_JSON_BYTES


@pytest.mark.parametrize(
    ("uri", "expected"),
    [
        ("sqlite:////tmp/x/mlflow.db", "sqlite:////tmp/x/mlflow.db"),
        ("http://127.0.0.1:5000", "http://127.0.0.1:5000"),
        ("https://bob:hunter2@mlflow.example:443/p?x=1", "https://bob@mlflow.example:443/p?x=1"),
        ("postgresql://u:p@ss@db:5432/mlflow", "postgresql://u@db:5432/mlflow"),
        ("http://:token@host", "http://host"),
    ],
)
def test_redact_uri(uri, expected):
    assert lim.redact_uri(uri) == expected


@pytest.mark.parametrize("key", ["editor.params.api_key", "judge.apiKey", "x.token", "hf/access_token",
                                 "db.password", "gcp.credentials", "editor.auth_header"])
def test_secret_keys(key):
    assert lim.is_secret(key)


@pytest.mark.parametrize(
    "key", ["editor.max_tokens", "judge.tokenizer", "author", "run.seed", "api_key.enabled"]
)
def test_not_secret_keys(key):
    assert not lim.is_secret(key)


def test_one_line():
    assert lim.one_line(ValueError("first\nsecond")) == "ValueError: first"
    assert lim.one_line(KeyboardInterrupt()) == "KeyboardInterrupt"
    assert len(lim.one_line(RuntimeError("x" * 1000), limit=100)) == 100
