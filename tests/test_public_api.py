"""The curated top-level API is exactly what __all__ says, every name resolves, and
``import dralab`` itself stays cheap (names are imported from their layers on use)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import dralab

DATA = Path(__file__).parent / "data" / "examples"


def test_all_names_exist() -> None:
    for name in dralab.__all__:
        assert hasattr(dralab, name), name


def test_all_is_exact() -> None:
    for name in dralab.__all__:  # imported on first use: bring every one in
        getattr(dralab, name)
    public = {n for n in vars(dralab) if not n.startswith("_")}
    modules = {n for n in public if type(getattr(dralab, n)).__name__ == "module"}
    typing = {"annotations", "Any", "TYPE_CHECKING"}
    assert public - modules - typing == set(dralab.__all__) - {"__version__"}
    assert set(dir(dralab)) >= set(dralab.__all__)


def test_unknown_names_are_attribute_errors() -> None:
    assert not hasattr(dralab, "no_such_name")


def test_import_dralab_loads_no_layer() -> None:
    code = ("import sys, dralab; "
            "print(sorted(m for m in sys.modules if m.startswith('dralab')), "
            "'numpy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "['dralab', 'dralab._version'] False"


def test_load_accepts_paths() -> None:
    file = DATA / "l4-4gpu-node.resourceslice.yaml"
    as_text = dralab.load(str(file))
    assert as_text
    assert dralab.load(file) == as_text
    assert dralab.load([file, str(file)]) == as_text + as_text
    assert dralab.load(DATA) == dralab.load(str(DATA))
    assert dralab.validate(file) == dralab.validate(str(file))
