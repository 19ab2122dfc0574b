"""Importing slices published by older NVIDIA driver releases (notes §2.6)."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from dralab.allocator import Allocated, allocate
from dralab.api.codec import decode
from dralab.api.errors import LoadError
from dralab.api.resource import ResourceSlice
from dralab.fleet import generate, import_slices, normalize_slice
from dralab.validation.check import validate_objects

from .helpers import claim, devices_of, fleet_of, request

# What a v25.3-era driver published on a node with one A100 partitioned by the admin:
# index/minor on the GPU, driver-specific pcieBusID, MIG names <GI id>-<start>-<size>,
# index/parentIndex on MIG devices. Served through resource.k8s.io/v1beta1 (`basic`).
OLD_SLICE = """
apiVersion: resource.k8s.io/v1beta1
kind: ResourceSlice
metadata:
  name: node-a-gpu.nvidia.com-abcde
spec:
  driver: gpu.nvidia.com
  nodeName: node-a
  pool: {name: node-a, generation: 3, resourceSliceCount: 1}
  devices:
  - name: gpu-1
    basic:
      attributes:
        type: {string: gpu}
        uuid: {string: GPU-4404041a-04cf-1ccf-9e70-f139a9b1e23c}
        index: {int: 1}
        minor: {int: 1}
        productName: {string: NVIDIA A100-SXM4-40GB}
        brand: {string: Nvidia}
        architecture: {string: Ampere}
        cudaComputeCapability: {version: 8.0.0}
        driverVersion: {string: "550.54.15"}
        cudaDriverVersion: {version: 12.4.0}
        pcieBusID: {string: "0000:4E:00.0"}
        resource.kubernetes.io/pcieRoot: {string: pci0000:4a}
      capacity:
        memory: {value: 40Gi}
  - name: gpu-0-mig-9-4-4
    basic:
      attributes:
        type: {string: mig}
        uuid: {string: MIG-b0c3ab38-6d3c-5a24-b7e6-5c3ff1f1c8d4}
        index: {int: 0}
        parentIndex: {int: 0}
        parentUUID: {string: GPU-9ad6cb3e-1d5b-3f2e-8d1f-1f1b62a4b0b2}
        profile: {string: 3g.20gb}
        productName: {string: NVIDIA A100-SXM4-40GB}
        brand: {string: Nvidia}
        architecture: {string: Ampere}
        cudaComputeCapability: {version: 8.0.0}
        driverVersion: {string: "550.54.15"}
        cudaDriverVersion: {version: 12.4.0}
        pcieBusID: {string: "0000:0F:00.0"}
      capacity:
        multiprocessors: {value: "42"}
        copyEngines: {value: "3"}
        decoders: {value: "2"}
        encoders: {value: "0"}
        jpegEngines: {value: "0"}
        ofaEngines: {value: "0"}
        memory: {value: 19968Mi}
        memorySlice4: {value: "1"}
        memorySlice5: {value: "1"}
        memorySlice6: {value: "1"}
        memorySlice7: {value: "1"}
"""

CURRENT = {"type", "uuid", "productName", "brand", "architecture", "cudaComputeCapability",
           "driverVersion", "cudaDriverVersion", "resource.kubernetes.io/pciBusID"}


def test_old_release_slice_is_normalised() -> None:
    result = import_slices([yaml.safe_load(OLD_SLICE)])
    (slice_,) = result.slices
    assert validate_objects([slice_]) == []
    gpu, mig = slice_.spec.devices
    # index/minor/parentIndex have no current counterpart but are kept: claims still
    # select on them.
    assert set(gpu.attributes) == CURRENT | {"resource.kubernetes.io/pcieRoot", "index",
                                             "minor"}
    assert (gpu.attributes["index"].int_, gpu.attributes["minor"].int_) == (1, 1)
    assert gpu.attributes["resource.kubernetes.io/pciBusID"].string == "0000:4e:00.0"
    assert gpu.attributes["driverVersion"].version == "550.54.15"
    assert mig.name == "gpu-0-mig-3g20gb-9-4"
    assert set(mig.attributes) == CURRENT | {"parentUUID", "profile", "index", "parentIndex"}
    assert "memorySlice4" in mig.capacity
    assert result.renamed == {("gpu.nvidia.com", "node-a", "gpu-0-mig-9-4-4"):
                              "gpu-0-mig-3g20gb-9-4"}
    assert result.changes == ("node-a-gpu.nvidia.com-abcde: normalised 2 device(s), renamed 1",)


def test_claims_selecting_on_old_attributes_still_match() -> None:
    # The driver's quickstart gpu-test6 selects `index` in {0, 2, 4, 6}; on a slice
    # from a release that published it, the claim must still find gpu-1 by index 1.
    (slice_,) = import_slices([yaml.safe_load(OLD_SLICE)]).slices
    gpu_class = decode({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
                        "metadata": {"name": "gpu.nvidia.com"}, "spec": {"selectors": [{"cel": {
                            "expression": "device.driver == 'gpu.nvidia.com' && "
                                          "device.attributes['gpu.nvidia.com'].type == 'gpu'"}}]}})
    by_index = claim("c", request("gpu", "gpu.nvidia.com",
                                  "device.attributes['gpu.nvidia.com'].index == 1"))
    outcome = allocate([by_index], "node-a", [gpu_class, slice_])
    assert isinstance(outcome, Allocated) and devices_of(outcome) == ["gpu-1"]


def test_versions_are_semver_normalised() -> None:
    data: dict[str, Any] = yaml.safe_load(OLD_SLICE)
    attrs = data["spec"]["devices"][0]["basic"]["attributes"]
    attrs["driverVersion"] = {"string": "580.105.08"}
    attrs["cudaDriverVersion"] = {"string": "13.0"}
    (slice_,) = import_slices([data]).slices
    gpu = slice_.spec.devices[0]
    assert gpu.attributes["driverVersion"].version == "580.105.8"
    assert gpu.attributes["cudaDriverVersion"].version == "13.0.0"


def test_v04_vfio_numa_becomes_standard() -> None:
    doc = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
           "metadata": {"name": "n-gpu.nvidia.com-x"},
           "spec": {"driver": "gpu.nvidia.com", "nodeName": "n",
                    "pool": {"name": "n", "generation": 1, "resourceSliceCount": 1},
                    "devices": [{"name": "gpu-vfio-0", "attributes": {
                        "type": {"string": "vfio"}, "numa": {"int": 1}}}]}}
    (slice_,) = import_slices([doc]).slices
    assert slice_.spec.devices[0].attributes["resource.kubernetes.io/numaNode"].int_ == 1
    assert "numa" not in slice_.spec.devices[0].attributes


def test_current_and_foreign_slices_pass_unchanged() -> None:
    objects = generate(fleet_of("h100", gpus=2, nics={"count": 2})).objects()
    slices = [o for o in objects if isinstance(o, ResourceSlice)]
    result = import_slices(objects)
    assert all(a is b for a, b in zip(result.slices, slices, strict=True))
    assert result.renamed == {} and result.changes == ()
    assert normalize_slice(slices[1])[0] is slices[1]


def test_alpha3_bare_capacities_and_bad_documents() -> None:
    data: dict[str, Any] = yaml.safe_load(OLD_SLICE)
    data["apiVersion"] = "resource.k8s.io/v1alpha3"
    data["spec"]["devices"][0]["basic"]["capacity"] = {"memory": "40Gi"}
    (slice_,) = import_slices([data]).slices
    assert str(slice_.spec.devices[0].capacity["memory"].value) == "40Gi"
    with pytest.raises(LoadError):
        import_slices([{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                        "spec": {"devices": "nope"}}])
    assert import_slices([decode({"apiVersion": "v1", "kind": "Node",
                                  "metadata": {"name": "n"}})]).slices == ()
