# Hydra config package of faceedit-bench-insightface (pkg://faceedit_bench_insightface.conf needs this file).
