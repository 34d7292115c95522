"""Config entries of the faceedit-bench-replicate plugin (Hydra searches this package)."""
