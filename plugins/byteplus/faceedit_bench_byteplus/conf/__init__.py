"""Config entries of the faceedit-bench-byteplus plugin (Hydra searches this package)."""
