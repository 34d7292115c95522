"""The report's statistics kept in the ledger: read back exactly as computed, computed anew when anything
they depend on changes, resumed after a kill, shared by processes."""

from __future__ import annotations

import json
import os
import signal
import sqlite3

import numpy as np
import pytest

import faceedit_bench.analysis.disparity as disparity
from faceedit_bench.analysis.cached import cached_statistic, caching_statistics
from faceedit_bench.analysis.disparity import GroupTest, compare_groups
from faceedit_bench.analysis.group_tests import compare_k_groups, one_vs_rest
from faceedit_bench.analysis.intersections import intersectional_groups
from faceedit_bench.analysis.paired import paired_comparison
from faceedit_bench.analysis.statistics import summarize
from faceedit_bench.storage.statistics_cache import StatisticsCache

SETTINGS = {"n_resamples": 999, "seed": 3}


def group_tests(n: int = 4) -> list[GroupTest]:
    rng = np.random.default_rng(1)
    tests = []
    for i in range(n):
        a, b = rng.normal(30, 10, 60 + i), rng.normal(33, 10, 50)
        a[:5] = b[:5] = 25.0  # ties across the groups
        tests.append(GroupTest(f"m{i}", "gender", "female", "male", a, b,
                               clusters_a=np.array([f"id{j % 20}" for j in range(a.size)]),
                               clusters_b=np.array([f"id{20 + j % 15}" for j in range(b.size)]),
                               higher_is_better=False, bounds=(0.0, None)))
    return tests


def every_statistic() -> dict:
    """One call of each cached statistic, on data that exercises its branches."""
    rng = np.random.default_rng(2)
    values = (rng.integers(0, 5, 90) * 25.0).tolist()
    groups = {"a": values[:30], "b": values[30:60], "c": values[60:]}
    return {
        "disparity": compare_groups(group_tests(), **SETTINGS, workers=2),  # on a thread pool
        "t": summarize(rng.normal(0, 1, 40)),
        "bootstrap": summarize(values, bounds=(0, 100)),
        "wilson": summarize([0.0, 100.0, 100.0, 0.0, 100.0], bounds=(0, 100)),
        "k_groups": compare_k_groups(groups, name="oer/race", higher_is_better=False, **SETTINGS),
        "one_vs_rest": one_vs_rest(groups, "a", name="oer/race/a", higher_is_better=False),
        "intersections": intersectional_groups(values, ["f", "m"] * 45, ["dark", "light", "light"] * 30,
                                               name="oer/gxs", higher_is_better=False, **SETTINGS),
        "paired": paired_comparison({i: float(i % 7) for i in range(40)}, {i: float(i % 5) for i in range(40)},
                                    name="sc/cond", higher_is_better=True),
    }


def rows(ledger) -> dict[str, int]:
    db = sqlite3.connect(ledger)
    try:
        return dict(db.execute("SELECT kind, count(*) FROM statistics GROUP BY kind").fetchall())
    finally:
        db.close()


def test_statistics_read_back_are_exactly_those_computed(tmp_path, monkeypatch):
    uncached = every_statistic()
    ledger = tmp_path / "ledger.sqlite"
    with StatisticsCache(ledger) as cache, caching_statistics(cache):
        first = every_statistic()
    assert rows(ledger)["disparity.group_test@2"] == 4
    assert set(rows(ledger)) >= {"summarize@2", "compare_k_groups@1", "one_vs_rest@1", "intersectional_groups@1",
                                 "paired_comparison@1"}

    def no_computing(*_args, **_kwargs):
        raise AssertionError("a kept statistic was computed again")

    monkeypatch.setattr(disparity, "session_test", no_computing)
    with StatisticsCache(ledger) as cache, caching_statistics(cache):
        again = every_statistic()
        assert cache.hits >= 11 and cache.stored == 0
    # the same objects, bit for bit: types, floats, key order
    for name in uncached:
        assert first[name] == uncached[name] and again[name] == uncached[name], name
        assert json.dumps(again[name]) == json.dumps(uncached[name]), name


def test_any_change_of_input_or_setting_computes_it_anew(tmp_path):
    tests = group_tests(1)
    variants = [
        dict(SETTINGS),
        {**SETTINGS, "seed": 4},
        {**SETTINGS, "n_resamples": 1999},
        {**SETTINGS, "alpha": 0.01},
    ]
    with StatisticsCache(tmp_path / "ledger.sqlite") as cache, caching_statistics(cache):
        results = [compare_groups(tests, **v)[0] for v in variants]
        changed = tests[0].values_a.copy()
        changed[0] += 1e-9  # one value, in its last digits
        results.append(compare_groups([GroupTest(**{**tests[0].__dict__, "values_a": changed})], **SETTINGS)[0])
        assert cache.stored == 5 and cache.hits == 0
        assert compare_groups(tests, **SETTINGS)[0] == results[0] and cache.hits == 1
    assert results[0]["p_value"] != results[1]["p_value"]  # another seed: another Monte Carlo estimate


def test_a_killed_report_resumes_with_the_statistics_it_finished(tmp_path, monkeypatch):
    tests, ledger = group_tests(5), tmp_path / "ledger.sqlite"
    expected = compare_groups(tests, **SETTINGS, workers=1)
    StatisticsCache(ledger).close()
    pid = os.fork()
    if pid == 0:  # a report stage killed (SIGKILL: no cleanup) once it has kept two tests
        try:
            with StatisticsCache(ledger) as cache, caching_statistics(cache):
                put = cache.put

                def put_then_die(*args):
                    put(*args)
                    if cache.stored == 2:
                        os.kill(os.getpid(), signal.SIGKILL)

                cache.put = put_then_die
                compare_groups(tests, **SETTINGS, workers=1)
        finally:
            os._exit(1)  # never reached when killed
    _, status = os.waitpid(pid, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
    assert rows(ledger) == {"disparity.group_test@2": 2}

    computed = []
    session_test = disparity.session_test
    monkeypatch.setattr(disparity, "session_test", lambda *a: computed.append(1) or session_test(*a))
    with StatisticsCache(ledger) as cache, caching_statistics(cache):
        resumed = compare_groups(tests, **SETTINGS, workers=1)
    assert len(computed) == 3  # only what the killed stage had not finished
    assert resumed == expected


def test_processes_sharing_a_workspace_share_the_statistics(tmp_path):
    tests, ledger = group_tests(6), tmp_path / "ledger.sqlite"
    expected = compare_groups(tests, **SETTINGS)
    StatisticsCache(ledger).close()
    children = []
    for _ in range(2):  # both compute every test at once, into one ledger
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                os.close(read)
                with StatisticsCache(ledger) as cache, caching_statistics(cache):
                    out = json.dumps(compare_groups(tests, **SETTINGS, workers=2))
                with os.fdopen(write, "w") as fh:
                    fh.write(out)
                code = 0
            finally:
                os._exit(code)
        os.close(write)
        children.append((pid, read))
    for pid, read in children:
        with os.fdopen(read) as fh:
            assert json.loads(fh.read()) == json.loads(json.dumps(expected))
        assert os.waitpid(pid, 0)[1] == 0
    assert rows(ledger) == {"disparity.group_test@2": 6}  # one row per test, whoever wrote it first


def test_a_result_that_would_not_come_back_identical_is_never_kept(tmp_path):
    calls = []

    @cached_statistic("test.tuple")
    def with_tuple(x: float) -> dict:
        calls.append(x)
        return {"interval": (x, x + 1)}  # JSON would give a list back

    @cached_statistic("test.plain")
    def plain(x: float) -> dict:
        calls.append(x)
        return {"interval": [x, x + 1], "n": 2, "ok": True, "why": None}

    with StatisticsCache(tmp_path / "ledger.sqlite") as cache, caching_statistics(cache):
        assert with_tuple(1.5) == with_tuple(1.5) == {"interval": (1.5, 2.5)}
        assert plain(0.1) == plain(0.1) == {"interval": [0.1, 1.1], "n": 2, "ok": True, "why": None}
    assert calls == [1.5, 1.5, 0.1]


@pytest.mark.parametrize("cached", [False, True])
def test_without_a_cache_in_use_nothing_is_kept(tmp_path, cached):
    ledger = tmp_path / "ledger.sqlite"
    StatisticsCache(ledger).close()
    if cached:
        with StatisticsCache(ledger) as cache, caching_statistics(cache):
            summarize([1.0, 2.0, 3.0])
    summarize([4.0, 5.0, 6.0])  # outside the block
    assert rows(ledger) == ({"summarize@2": 1} if cached else {})


def test_a_page_image_is_encoded_once_per_content(tmp_path, monkeypatch):
    import faceedit_bench.report.html_images as html_images
    from faceedit_bench.testing import gradient_image

    encoded = []
    encode = html_images._encoded
    monkeypatch.setattr(html_images, "_encoded", lambda *args: encoded.append(args) or encode(*args))
    with StatisticsCache(tmp_path / "ledger.sqlite") as cache, caching_statistics(cache):
        first = html_images.page_image(gradient_image(1))
        again = html_images.page_image(gradient_image(1))
        other = html_images.page_image(gradient_image(2))
        narrow = html_images.page_image(gradient_image(1), max_width=32)
    assert first == again and first.uri.startswith("data:image/") and other != first
    assert narrow.width == 32 < first.width
    assert len(encoded) == 3  # the same bytes at the same width: read back, not encoded again
    assert rows(tmp_path / "ledger.sqlite") == {"page_image@1": 3}
    assert html_images.page_image(b"not an image") is None
