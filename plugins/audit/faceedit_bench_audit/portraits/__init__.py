"""Paper (b)'s 84-cell FairFace portrait grid: cells and manifest (grid), portrait checks (quality, features),
the selection (select), its contact sheet (sheet), the ``fairface_grid`` dataset (dataset) and
``faceedit-bench portraits`` (cli)."""
