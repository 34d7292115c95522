# Hydra config package of faceedit-bench-dlib (pkg://faceedit_bench_dlib.conf needs this file).
