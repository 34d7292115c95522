"""The judge: ``service`` (its interface), ``prompts`` (prompt templates), ``declared`` (judge
metrics as declarations) and ``standard`` (paper (a)'s two), ``metrics`` (the judge part of the score stage),
``panel`` (judge panels), ``anchors`` (sanity anchors), ``agreement`` (judge-human agreement),
``condition_templates`` (prompt-condition templates) and ``outside_run`` (asking a judge outside a run).
"""
