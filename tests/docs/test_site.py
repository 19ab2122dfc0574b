"""The documentation site builds with MkDocs (Material) and warnings as errors.

``mkdocs build --strict`` fails on a nav entry without its page, a link to a page or an
anchor that does not exist, and a page left out of the nav. The build reads only files of
the repository: no plugin that fetches anything is configured (``theme.font: false``), so
the test needs no network.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from cputime import run_with_cpu_budget

ROOT = Path(__file__).resolve().parents[2]


def test_site_builds_strict(tmp_path: Path) -> None:
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    run = run_with_cpu_budget(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet",
         "-f", str(ROOT / "mkdocs.yml"), "-d", str(tmp_path / "site")],
        30.0, cwd=ROOT, env=env)
    assert run.done.returncode == 0, run.done.stderr[-4000:]
    assert (tmp_path / "site" / "index.html").is_file()
    assert (tmp_path / "site" / "simulate" / "index.html").is_file()


def test_every_page_is_in_the_nav() -> None:
    # mkdocs only logs an INFO line for a page left out of the nav; a page nobody can reach
    # from the site's menu is a page lost.
    nav = (ROOT / "mkdocs.yml").read_text()
    pages = sorted(p.name for p in (ROOT / "docs").glob("*.md"))
    missing = [p for p in pages if f": {p}" not in nav]
    assert not missing, missing
