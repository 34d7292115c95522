"""Finding a run folder from what a user typed: a path, with a did-you-mean when it is misspelt.

Run folders are ``<workspace>/runs/<run name>-<first 12 hex of the run key>``. A path that does not
exist is matched (difflib) against the folders beside it and the runs of the default workspace, by
folder name and by run key, so ``runs/identity-pse-...`` or a mistyped key gets the right suggestion.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

KEY_CHARS = 12  # run folders end in -<run key[:12]>


def default_runs_dir() -> Path:
    """``runs/`` of the workspace the Hydra app uses by default (``conf/config.yaml``)."""
    return Path(os.environ.get("FACEEDIT_BENCH_HOME") or ".faceedit_bench").expanduser() / "runs"


def _candidates(path: Path) -> list[Path]:
    folders: list[Path] = []
    for parent in (path.parent, default_runs_dir()):
        try:
            folders += [p for p in parent.iterdir() if p.is_dir() and not p.name.startswith(".")]
        except OSError:
            continue
    return list(dict.fromkeys(folders))


def similar_runs(path: str | Path, n: int = 3) -> list[Path]:
    """Existing run folders whose name or run key is close to ``path``'s last part."""
    path = Path(path).expanduser()
    name = path.name if path.name != "report.json" else path.parent.name
    folders = _candidates(path if path.name != "report.json" else path.parent)
    by_name = {f.name: f for f in folders}
    by_key = {f.name.rsplit("-", 1)[-1]: f for f in folders if "-" in f.name}
    found = [by_name[m] for m in difflib.get_close_matches(name, list(by_name), n=n, cutoff=0.85)]
    key = name.rsplit("-", 1)[-1][:KEY_CHARS]
    found += [by_key[m] for m in difflib.get_close_matches(key, list(by_key), n=n, cutoff=0.6)]
    found += [f for k, f in by_key.items() if len(key) >= 6 and k.startswith(key)]  # a key prefix
    return list(dict.fromkeys(found))[:n]


def did_you_mean(path: str | Path) -> str:
    """`` Did you mean <folder>?`` for a run path that does not exist, or ``""``."""
    found = similar_runs(path)
    return f" Did you mean {' or '.join(str(f) for f in found)}?" if found else ""
