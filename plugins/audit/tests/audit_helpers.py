"""What several of these tests share: the run report's schema with this package's sections in it."""

from __future__ import annotations

from faceedit_bench.api.protocol import run_report_schema
from faceedit_bench.plugin.manager import load_plugins

#: The core's schema and every installed section's (this package's included).
SCHEMA = run_report_schema(load_plugins().sections())
