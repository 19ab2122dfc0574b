"""Golden-file comparison: `UPDATE_GOLDEN=1 pytest` rewrites the files after a deliberate change."""

from __future__ import annotations

import os
from pathlib import Path

GOLDEN = Path(__file__).parent.parent / "golden"


def check_golden(name: str, actual: str) -> None:
    path = GOLDEN / name
    if os.environ.get("UPDATE_GOLDEN"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual)
    expected = path.read_text()
    assert actual == expected, f"output differs from {path} (UPDATE_GOLDEN=1 to accept)"
