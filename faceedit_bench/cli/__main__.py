"""``python -m faceedit_bench.cli <command> ...``: the ``faceedit-bench`` command without its console script."""

import sys

from faceedit_bench.cli import main

sys.exit(main())
