"""``python -m faceedit_bench editor=<name> testset=<name> ...`` (Hydra overrides)."""

from faceedit_bench.collector import collect_less_often

collect_less_often()  # before the imports below: they make most of what the command keeps

from faceedit_bench.run.hydra_app import main  # noqa: E402

if __name__ == "__main__":
    main()
