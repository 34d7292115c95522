"""What several of these tests share: the run report's schema with this package's sections in it."""

from __future__ import annotations

from tests.schema_support import installed_report_schema

#: The core's schema and every installed section's (this package's included).
SCHEMA = installed_report_schema()
