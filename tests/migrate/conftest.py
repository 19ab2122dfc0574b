"""Shared helpers of the migrate tests: paths, the CLI runner, golden files, file hashes."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from dralab.cli.main import cli

ROOT = Path(__file__).resolve().parent.parent.parent
EXAMPLE = ROOT / "examples" / "migrate"
MANIFESTS = EXAMPLE / "manifests"
DATA = ROOT / "tests" / "data" / "migrate"
GOLDEN = ROOT / "tests" / "golden" / "migrate"


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def check_golden(name: str, actual: str) -> None:
    """Compare with tests/golden/migrate/NAME; `UPDATE_GOLDEN=1` rewrites it."""
    path = GOLDEN / name
    if os.environ.get("UPDATE_GOLDEN"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual)
    assert actual == path.read_text(), f"output differs from {path} (UPDATE_GOLDEN=1 to accept)"


def tree_hashes(root: Path) -> dict[str, str]:
    """sha256 of every file under ``root``, by relative path."""
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def in_root(monkeypatch: pytest.MonkeyPatch) -> None:
    """Run from the repository root, so that paths in outputs are relative and stable."""
    monkeypatch.chdir(ROOT)
