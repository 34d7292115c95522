"""The audit of the ``rubric`` judge metric's answers: the metric (rubric), what is collected per edit (items),
its settings, the rates, group tables and disparities (tables), the panel's rounding (sensitivity), and the
report section with its console table, tracker metrics and page part (section, console, tracking, page)."""
