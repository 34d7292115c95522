"""``faceedit-bench compare``: the read-only view of several finished runs side by side.

:mod:`~faceedit_bench.compare.comparison` builds the comparison (the runs read by
:mod:`faceedit_bench.report.compared_runs`, what makes them incomparable by
:mod:`faceedit_bench.report.comparability`); :mod:`~faceedit_bench.compare.rows` lays out its side-by-side rows,
:mod:`~faceedit_bench.compare.across_testsets` its all-test-sets tables; :mod:`~faceedit_bench.compare.text`
writes it for the terminal and :mod:`~faceedit_bench.compare.render` as text, Markdown or an HTML page;
:mod:`~faceedit_bench.compare.section_ranks` adds the rankings that report sections contribute.
"""
