"""People's ratings of a run's outputs: the ratings CSV (ratings), reliability and VLM-people agreement
(agreement), the rated runs (runs), the report (report) and its section (section), ``faceedit-bench human`` (cli)."""
