"""The documentation: the mkdocs site builds with --strict (every page in the nav, every link and anchor found,
the API reference rendered from the docstrings), and README.md is a short front door whose links resolve."""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
API_PAGE = ROOT / "docs" / "reference" / "api.md"
README_MAX_LINES = 250  # issue 22: a front door; everything else lives in docs/

LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^(```|~~~).*?^\1", flags=re.M | re.S)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site built once, as `mkdocs build --strict` builds it: any warning fails the build."""
    for module in ("mkdocs", "material", "mkdocstrings_handlers.python"):
        pytest.importorskip(module, reason="the docs extra is not installed (make setup installs it)")
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}  # mkdocs-material's banner about MkDocs 2.0, not a warning
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file",
                           str(ROOT / "mkdocs.yml"), "--site-dir", str(out)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stdout}\n{done.stderr}"
    return out


def test_site_builds_without_a_warning(site):
    assert (site / "index.html").is_file()
    assert (site / "benchmarks" / "index.html").is_file()


def _rendered_names(site: Path, module: str) -> set[str]:
    page = (site / "reference" / "api" / "index.html").read_text(encoding="utf-8")
    return set(re.findall(rf'id="{re.escape(module)}\.(\w+)"', page))


def _readable_by_griffe(obj: object) -> bool:
    """False for objects defined in a folder without __init__.py: mkdocstrings' loader (griffe) reads regular
    packages only, so it cannot follow an import into such a folder."""
    module = getattr(obj, "__module__", None)
    if not isinstance(module, str) or not module.startswith("faceedit_bench."):
        return True
    parts = module.split(".")
    return all((ROOT.joinpath(*parts[:i]) / "__init__.py").is_file() for i in range(1, len(parts)))


#: The public API's topic modules (tests/test_api_surface.py keeps the same list).
API_TOPICS = ("faceedit_bench.api", "faceedit_bench.api.sections", "faceedit_bench.api.images",
              "faceedit_bench.api.statistics", "faceedit_bench.api.judging", "faceedit_bench.api.testing")


@pytest.mark.parametrize("topic", API_TOPICS)
def test_the_api_reference_documents_every_public_name(site, topic):
    assert f"\n::: {topic}\n" in API_PAGE.read_text(encoding="utf-8") + "\n", f"docs/reference/api.md lacks {topic}"
    module = importlib.import_module(topic)
    readable = {name for name in module.__all__ if _readable_by_griffe(getattr(module, name))}
    assert readable - _rendered_names(site, topic) == set()


def _github_slug(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading (README links are read on GitHub)."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    return {_github_slug(h) for h in re.findall(r"^#{1,6}\s+(.+?)\s*#*\s*$", text, flags=re.M)}


def readme_link_problems(readme: Path) -> list[str]:
    """Every relative link of a README (outside code blocks) names a file of the repository, and an anchor
    into a Markdown file names one of its headings."""
    problems = []
    for target in LINK.findall(FENCE.sub("", readme.read_text(encoding="utf-8"))):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto: ...
            continue
        path, _, anchor = target.partition("#")
        file = (readme.parent / path).resolve() if path else readme
        if not file.exists():
            problems.append(f"{target}: no such file")
        elif anchor and file.suffix == ".md" and anchor not in _anchors(file):
            problems.append(f"{target}: {file.name} has no heading with that anchor")
    return problems


def test_readme_links_resolve():
    assert readme_link_problems(README) == []


def test_the_link_check_finds_a_missing_file_and_a_missing_anchor(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "page.md").write_text("# A page\n\n## Paper (a): sessions (FSS, SC)\n", encoding="utf-8")
    readme = tmp_path / "README.md"
    readme.write_text("[ok](docs/page.md#paper-a-sessions-fss-sc) [web](https://example.org/x.md)\n"
                      "[gone](docs/gone.md) [bad](docs/page.md#nowhere)\n```\n[in code](docs/code.md)\n```\n",
                      encoding="utf-8")
    assert readme_link_problems(readme) == ["docs/gone.md: no such file",
                                            "docs/page.md#nowhere: page.md has no heading with that anchor"]


def test_readme_is_a_front_door():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines; move detail into docs/"
