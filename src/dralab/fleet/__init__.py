"""Fleets: model the GPU nodes you have or plan to buy, as the real drivers publish them.

A Fleet spec (``kind: Fleet``, see ``dralab.fleet.spec``) lists node pools;
``generate`` turns it into the Nodes, ResourceSlices and DeviceClasses the
NVIDIA DRA driver (or the dra-example-driver, and a NIC driver) would
publish on such a cluster. ``import_slices`` reads slices captured from real
clusters, including older driver releases.

Typical use::

    from dralab import fleet
    f = fleet.load_fleet("fleet.yaml")        # or fleet.default_fleet()
    objects = fleet.generate(f, seed=1).objects()
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import yaml

from dralab.api.errors import LoadError
from dralab.api.io import read_documents

from .catalog import (
    CATALOG,
    GpuModel,
    MigGeometry,
    MigProfile,
    by_product_name,
    by_trace_name,
    get_model,
    model_keys,
)
from .generate import GeneratedFleet, generate, generate_objects
from .importer import ImportResult, import_slices, normalize_slice, upgrade_slice_document
from .mig import (
    MigPlacement,
    enumerate_layouts,
    layout_problem,
    mig_device_name,
    parse_mig_device_name,
)
from .spec import Fleet, FleetSpecError, NodePool, parse_fleet

__all__ = [
    "CATALOG",
    "DEFAULT_FLEET_RESOURCE",
    "Fleet",
    "FleetSpecError",
    "GeneratedFleet",
    "GpuModel",
    "ImportResult",
    "MigGeometry",
    "MigPlacement",
    "MigProfile",
    "NodePool",
    "by_product_name",
    "by_trace_name",
    "default_fleet",
    "default_fleet_text",
    "enumerate_layouts",
    "generate",
    "generate_objects",
    "get_model",
    "import_slices",
    "layout_problem",
    "load_fleet",
    "mig_device_name",
    "model_keys",
    "normalize_slice",
    "parse_fleet",
    "parse_mig_device_name",
    "upgrade_slice_document",
]

DEFAULT_FLEET_RESOURCE = "data/default-fleet.yaml"


def load_fleet(path: str | Path) -> Fleet:
    """Read and check the one Fleet document in ``path`` (a file or ``-``).

    Raises LoadError when the file cannot be read or holds not exactly one
    document, FleetSpecError when the Fleet is wrong.
    """
    docs = read_documents([str(path)])
    if len(docs) != 1:
        raise LoadError(f"{path}: expected one Fleet document, found {len(docs)}")
    return parse_fleet(docs[0].data, str(path))


def default_fleet_text() -> str:
    """The built-in demo fleet as YAML text (package data)."""
    return resources.files("dralab").joinpath(DEFAULT_FLEET_RESOURCE).read_text("utf-8")


def default_fleet() -> Fleet:
    """The built-in demo fleet: H100 nodes, A100 nodes with DynamicMIG, L4 VMs."""
    return parse_fleet(yaml.safe_load(default_fleet_text()), "<default fleet>")
