"""The curated top-level API is exactly what __all__ says, and every name resolves."""

from __future__ import annotations

import dralab


def test_all_names_exist() -> None:
    for name in dralab.__all__:
        assert hasattr(dralab, name), name


def test_all_is_exact() -> None:
    public = {n for n in vars(dralab) if not n.startswith("_") and n not in {"annotations"}}
    modules = {n for n in public if type(getattr(dralab, n)).__name__ == "module"}
    assert public - modules - {"Iterable", "Path"} == set(dralab.__all__) - {"__version__"}
