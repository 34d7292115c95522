"""``python -m faceedit_bench editor=<name> testset=<name> ...`` (Hydra overrides)."""

from faceedit_bench.run.hydra_app import main

if __name__ == "__main__":
    main()
