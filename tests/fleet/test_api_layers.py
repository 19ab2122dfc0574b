"""The fleet package's public surface, layering, and the documented spec example."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import yaml

import dralab.fleet
from dralab.api.resource import DeviceClass
from dralab.fleet import generate, parse_fleet
from dralab.fleet import spec as spec_module
from dralab.validation.check import validate_objects

from .helpers import fleet_of

FLEET_SRC = Path(dralab.fleet.__file__).parent


def test_all_is_exact() -> None:
    public = {n for n in vars(dralab.fleet) if not n.startswith("_")}
    modules = {n for n in public if type(getattr(dralab.fleet, n)).__name__ == "module"}
    imported_helpers = {"annotations", "resources", "yaml", "Path", "LoadError", "read_documents"}
    assert set(dralab.fleet.__all__) == public - modules - imported_helpers


def test_fleet_imports_no_higher_layer() -> None:
    for path in FLEET_SRC.glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                assert not node.module.startswith(("dralab.scheduler", "dralab.sim",
                                                   "dralab.cli")), (path, node.module)


def test_the_documented_example_parses_and_generates() -> None:
    doc = spec_module.__doc__ or ""
    example = doc.split("::", 1)[1].split("\n\nParsing is strict", 1)[0]
    data = yaml.safe_load(textwrap.dedent(example))
    fleet = parse_fleet(data, "<docstring>")
    objects = generate(fleet).objects()
    assert [str(p) for p in validate_objects(objects)] == []
    assert "training-h100" in [o.name for o in objects if isinstance(o, DeviceClass)]


def test_cpu_only_pool() -> None:
    fleet = fleet_of(None, gpus=0, count=3, nics={"count": 2, "alignment": "none"})
    generated = generate(fleet)
    assert len(generated.nodes) == 3
    assert "nvidia.com/gpu.present" not in generated.nodes[0].metadata.labels
    assert {s.spec.driver for s in generated.slices} == {"sriovnetwork.k8snetworkplumbingwg.io"}
    assert [str(p) for p in validate_objects(generated.objects())] == []
