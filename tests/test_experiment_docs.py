"""docs/experiments.md lists every preset of conf/experiment, and the README points there (issue 25, item 14)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_preset_is_documented_with_a_command():
    # the core's presets and the protocol packages' (plugins/audit ships experiment=paper_b ...)
    presets = {p.stem for p in [*(ROOT / "conf" / "experiment").glob("*.yaml"),
                                *(ROOT / "plugins").glob("*/faceedit_bench_*/conf/experiment/*.yaml")]}
    page = (ROOT / "docs" / "experiments.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `([a-z0-9_]+)` \|.*\| `(faceedit-bench run [^`]*)` \|$", page, flags=re.M)
    assert {name for name, _ in rows} == presets
    assert all(f"experiment={name}" in command for name, command in rows)
    assert "docs/experiments.md" in (ROOT / "README.md").read_text(encoding="utf-8")
