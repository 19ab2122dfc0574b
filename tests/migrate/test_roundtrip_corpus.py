"""The 24 public GPU manifests converted: each file's diff is the change and nothing else.

For every manifest of tests/data/real-manifests, ``convert`` rewrites the file
and the unified diff (difflib) between input and output may hold only: lines
of the GPU resources the plan removes (and the ``limits``/``requests``/
``resources`` keys left empty), the selector lines the plan moves into the
claim, the claim lines it adds (``resources.claims``, ``resourceClaims``), the
parameters it sets, and the comments of removed lines, kept (``diffcheck``). A
re-indented list, a re-quoted string or a dropped comment would show up as a
line none of these explain.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dralab.api.errors import LoadError
from dralab.api.io import read_documents
from dralab.migrate.convert import convert_sources

from .conftest import ROOT
from .diffcheck import check_minimal_diff

CORPUS = ROOT / "tests" / "data" / "real-manifests"
FILES = sorted(p for p in CORPUS.rglob("*") if p.suffix in (".yaml", ".yml"))


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(CORPUS)))
def test_converted_file_diff_is_only_the_change(path: Path) -> None:
    source = str(path)
    try:
        docs = read_documents([source])
    except LoadError:
        # An unrendered Helm template: nothing to write (migrate reports it).
        assert "{{" in path.read_text()
        return
    before = path.read_text()
    [result] = convert_sources([(source, path.name, before, docs)]).files
    check_minimal_diff(path.name, before, result)


def test_the_corpus_is_there() -> None:
    assert len(FILES) == 24
