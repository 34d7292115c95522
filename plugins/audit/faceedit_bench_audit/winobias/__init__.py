"""WinoBias stereotype adherence: the judge metric (metric), its share, binomial test and bounds (adherence),
the report sections (section) and their console lines and page part (view), people's annotations (annotations)
and the ``faceedit-bench human winobias`` actions (cli)."""
