"""Issue 38: an operation the public API names once gives what its parts gave (paired_tests, Reproduction,
fmt, load_testset of parsed JSON)."""

from __future__ import annotations

import json

import pytest

from faceedit_bench.analysis.paired import paired_comparison, paired_family
from faceedit_bench.analysis.published import Number, report
from faceedit_bench.api.judging import Taxonomy, load_testset
from faceedit_bench.api.sections import fmt
from faceedit_bench.api.statistics import Reproduction, paired_tests
from faceedit_bench.report.templates import fmt_ci, fmt_num, fmt_p
from faceedit_bench.testsets import frozen_content


def test_paired_tests_is_the_family_of_the_comparisons():
    first = {i: float(i % 5) for i in range(30)}
    second = {i: float((i * 3) % 7) for i in range(30)}
    other = {i: float(i % 3) for i in range(30)}
    family = paired_tests({"a": (first, second), "b": (first, other)}, first_label="x", second_label="y")
    expected = paired_family([paired_comparison(first, second, name="a", first_label="x", second_label="y"),
                              paired_comparison(first, other, name="b", first_label="x", second_label="y")])
    assert family == expected


def test_a_reproduction_reports_as_the_table_did(tmp_path, capsys):
    expect = tmp_path / "e.csv"
    expect.write_text("name,value\nx,1.25\n", encoding="utf-8")
    reproduction = Reproduction("t", expect)
    reproduction.add("x", 1.251, 9.0, 0.1)
    assert reproduction.report("src", tmp_path / "a.json") == 0  # compared with the user's 1.25 +- 0.005
    mine = capsys.readouterr().out
    assert report("t", "src", [Number("x", 1.251, 9.0, 0.1)], tmp_path / "b.json",
                  expected={"x": (1.25, 0.005)}) == 0
    assert capsys.readouterr().out == mine
    assert json.loads((tmp_path / "a.json").read_text()) == json.loads((tmp_path / "b.json").read_text())


def test_fmt_is_the_pages_formats():
    assert (fmt(0.123456), fmt(0.0001, "p"), fmt({"mean": 1.0, "ci_low": 0.5, "ci_high": 1.5}, "ci")) == (
        fmt_num(0.123456), fmt_p(0.0001), fmt_ci({"mean": 1.0, "ci_low": 0.5, "ci_high": 1.5}))
    with pytest.raises(ValueError, match="unknown format"):
        fmt(1, "nope")


def test_load_testset_of_parsed_json_is_the_builtin_set():
    name = Taxonomy.TESTSETS[0]
    assert load_testset(frozen_content(name), "frozen").content_hash == load_testset(name).content_hash
