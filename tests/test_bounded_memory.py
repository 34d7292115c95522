"""The statistics hold memory bounded by a budget, not by the number of identities or sessions, and
give the results they gave before where the budget does not bind (same seed, same p-value)."""

from __future__ import annotations

import math
import tracemalloc

import numpy as np
import pytest

from faceedit_bench.analysis import group_tests, permutation
from faceedit_bench.analysis.compact import Codes, SessionRows
from faceedit_bench.analysis.disparity import GroupTest, compare_groups


def clustered(k: int, n: int, seed: int = 3, ties: bool = False, shift: float = 0.0) -> GroupTest:
    rng = np.random.default_rng(seed)
    identity = rng.integers(0, k, n)
    values = rng.normal(0, 1, n) + rng.normal(0, 0.5, k)[identity]
    in_a = (rng.random(k) < 0.5)[identity]
    values = values + shift * in_a
    if ties:
        values = np.round(values * 2) / 2
    labels = np.array([f"face{i:05d}" for i in identity])
    return GroupTest(metric="m", contrast="c", group_a="a", group_b="b", values_a=values[in_a],
                     values_b=values[~in_a], clusters_a=labels[in_a], clusters_b=labels[~in_a],
                     higher_is_better=True, name=f"k{k}")


def p_values(test: GroupTest, n_resamples: int = 1999) -> tuple[float, float]:
    (result,) = compare_groups([test], n_resamples=n_resamples, workers=1)
    return result["p_value"], result["clustered"]["p_value"]


def test_chunks_shrink_with_the_clusters_and_keep_small_tests_unchanged():
    assert permutation.cluster_chunk(10) == permutation.CHUNK  # as before: one chunk of CHUNK resamples
    assert permutation.cluster_chunk(100) * 100 <= permutation.CLUSTER_CELLS
    assert permutation.cluster_chunk(100) >= 9999  # the default 9,999 resamples are still one chunk
    assert permutation.cluster_chunk(10_000) * 10_000 <= permutation.CLUSTER_CELLS
    assert permutation.cluster_chunk(10**9) == permutation.MIN_CLUSTER_CHUNK


@pytest.mark.parametrize("ties", [False, True])
def test_the_distance_does_not_depend_on_how_sessions_are_blocked(monkeypatch, ties):
    test = clustered(60, 2000, ties=ties)
    wide = p_values(test)
    # The same chunks of resamples, the sorted sessions taken 16 at a time instead of thousands.
    monkeypatch.setattr(permutation, "cluster_chunk", lambda k: permutation.CHUNK)
    monkeypatch.setattr(permutation, "CLUSTER_CELLS", 64)
    assert p_values(test) == wide  # bit for bit


def test_narrow_chunks_agree_within_monte_carlo_error(monkeypatch):
    test = clustered(400, 4000, shift=0.15)
    n = 1999
    session_p, wide = p_values(test, n)
    monkeypatch.setattr(permutation, "CLUSTER_CELLS", 400 * 64)  # 64 resamples per chunk: another stream
    same_session_p, narrow = p_values(test, n)
    assert same_session_p == session_p  # the primary test never changes
    assert narrow != wide
    sd = math.sqrt(wide * (1 - wide) / n)
    assert abs(narrow - wide) < 5 * sd + 2 / n


@pytest.mark.slow(seconds=7)
def test_memory_of_the_clustered_analysis_does_not_grow_with_identities():
    peaks = []
    for k in (200, 4000):
        test = clustered(k, 8000)
        tracemalloc.start()
        compare_groups([test], n_resamples=2999, workers=1)
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    budget = 40 * permutation.CLUSTER_CELLS  # about 20 bytes a cell, twice over for temporaries
    assert max(peaks) < budget, peaks
    assert peaks[1] < 1.5 * peaks[0], peaks  # 20x the identities, about the same memory


def test_bootstrap_batches_fit_the_budget_and_small_samples_are_unchanged(monkeypatch):
    assert group_tests.bootstrap_batch(500) == group_tests.BOOTSTRAP_BATCH
    assert group_tests.bootstrap_batch(100_000) * 100_000 * 24 <= group_tests.BOOTSTRAP_BYTES
    assert group_tests.bootstrap_batch(10**9) == 1
    rng = np.random.default_rng(0)
    groups = {g: list(rng.normal(i, 1, 3000)) for i, g in enumerate("abc")}
    tracemalloc.start()
    result = group_tests.compare_k_groups(groups, name="big", n_resamples=999, higher_is_better=False)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 3 * group_tests.BOOTSTRAP_BYTES, peak
    low, high = result["disparity"]["ci_low"], result["disparity"]["ci_high"]
    assert low < result["disparity"]["value"] < high and high - low < 0.2
    # The interval with batches of BOOTSTRAP_BATCH resamples (another random stream) agrees.
    monkeypatch.setattr(group_tests, "BOOTSTRAP_BYTES", 2**40)
    wide = group_tests.compare_k_groups(groups, name="big", n_resamples=999, higher_is_better=False)["disparity"]
    assert (wide["ci_low"], wide["ci_high"]) != (low, high)
    assert wide["ci_low"] == pytest.approx(low, abs=0.015) and wide["ci_high"] == pytest.approx(high, abs=0.015)


def test_session_rows_read_back_as_given():
    rows = SessionRows()
    given = [({"gender": "male", "race": None}, {"drop_fss": 1.5, "sc": None}),
             ({"gender": "female"}, {"drop_fss": -0.25}),
             ({"gender": None, "race": "Black"}, {"drop_fss": 3.0, "sc": 70.0})]
    for row in given:
        rows.append(row)
    assert len(rows) == 3
    back = list(rows)
    assert back[0] == ({"gender": "male", "race": None}, {"drop_fss": 1.5, "sc": None})
    assert back[1] == ({"gender": "female", "race": None}, {"drop_fss": -0.25})  # sc never reported: absent
    assert back[2] == rows[-1] == ({"gender": None, "race": "Black"}, {"drop_fss": 3.0, "sc": 70.0})
    assert rows[1:] == back[1:]


def test_identity_codes_sort_as_their_names():
    codes = Codes()
    names = ["id9", "id10", "a", "id9", "b"]
    numbers = [codes(n) for n in names]
    assert numbers == [0, 1, 2, 0, 3]
    ranks = codes.sortable(numbers)
    assert list(np.unique(ranks, return_inverse=True)[1]) == list(np.unique(np.array(names), return_inverse=True)[1])


def test_group_trajectories_are_selected_from_the_rows_in_session_order():
    rows = SessionRows()
    trajectories = [(0.9, 0.8, 0.7), (0.95,), (0.6, 0.5), ()]
    for i, trajectory in enumerate(trajectories):
        rows.append(({"gender": "male" if i % 2 else "female"}, {"drop_fss": float(i)}), identity=10 + i,
                    trajectory=trajectory)
    assert rows.trajectory_length() == 3
    assert rows.trajectory_at(0).tolist() == [0.9, 0.95, 0.6]
    assert rows.trajectory_at(1).tolist() == [0.8, 0.5]  # only the sessions that reach k = 1
    female = rows.codes("gender")[0] == rows.label_code("gender", "female")
    assert rows.trajectory_at(0, female).tolist() == [0.9, 0.6]
    assert rows.trajectory_at(2, female).tolist() == [0.7]
    assert rows.trajectory_at(1, ~female).size == 0
    assert rows.identities().tolist() == [10, 11, 12, 13]
    assert rows.label_code("gender", "other") is None and rows.label_code("race", "x") is None


def test_tables_convert_to_parquet_slice_by_slice_as_one_stream_would(tmp_path, monkeypatch):
    import pyarrow.parquet as pq

    from faceedit_bench.report import tables

    monkeypatch.setattr(tables, "ROWS_PER_BATCH", 3)  # several slices from a few rows
    columns = ["k", "fss", "prompt", "resumed"]
    types = tables.column_types(columns)
    writer = tables.TableWriter(tmp_path / "steps.csv", columns, types)
    for i in range(10):
        # quoted newlines, commas and quotes must not cut a row in two; empty numbers are nulls
        writer.write({"k": i, "fss": "" if i == 4 else f"{i / 7:.6g}",
                      "prompt": f'line one, "{i}"\nline two' if i % 3 == 0 else "", "resumed": i % 2 == 0})
    assert len(writer._cuts) == 4
    writer.commit()
    sliced = pq.read_table(tmp_path / "steps.parquet")
    tables.csv_to_parquet(tmp_path / "steps.csv", tmp_path / "streamed.parquet", types)
    assert sliced.equals(pq.read_table(tmp_path / "streamed.parquet"))
    assert sliced.equals(tables.read_csv_table(tmp_path / "steps.csv", types))
    assert pq.ParquetFile(tmp_path / "steps.parquet").metadata.num_row_groups == 4
    assert sliced.column("prompt")[3].as_py() == 'line one, "3"\nline two' and sliced.column("fss")[4].as_py() is None


def test_large_tests_run_one_at_a_time_by_default_with_the_same_results(monkeypatch):
    from faceedit_bench.analysis import disparity

    tests = [clustered(20, 300, seed=s) for s in range(3)]
    tests = [GroupTest(**{**t.__dict__, "name": f"t{i}"}) for i, t in enumerate(tests)]
    threaded = compare_groups(tests, n_resamples=199, workers=2)
    monkeypatch.setattr(disparity, "SESSIONS_IN_FLIGHT", 400)  # less than two of these tests

    def no_threads(*args, **kwargs):
        raise AssertionError("tests over the budget must run one at a time")

    monkeypatch.setattr(disparity, "ThreadPoolExecutor", no_threads)
    monkeypatch.setattr(disparity.os, "cpu_count", lambda: 4)
    assert compare_groups(tests, n_resamples=199) == threaded
