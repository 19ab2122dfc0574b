"""A claim's capacity request is not bounded by the API server: follow upstream.

kubernetes/kubernetes pkg/apis/resource/validation/validation.go (commit
009801d930e2e3c8b3671a3ec28e31a2f64865ac as indexed): validateExactDeviceRequest and
validateDeviceSubRequest check the class, selectors, derived attributes, allocation
mode and tolerations, and nothing of ``capacity.requests``; the v1 type
(staging/src/k8s.io/api/resource/v1/types.go, CapacityRequirements.Requests) has no
declarative bound either. So ``memory: -8Gi`` is accepted there and here; what
dralab refuses is generating one (``migrate --share-memory``, tests/migrate).
"""

from __future__ import annotations

from typing import Any

import pytest

from dralab.validation import validate_object


def _template(amount: Any) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": "t", "namespace": "default"},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                "deviceClassName": "gpu.nvidia.com",
                "capacity": {"requests": {"memory": amount}}}}]}}}}


@pytest.mark.parametrize("amount", ["-8Gi", "0", "8Gi", "+8Gi", "500m"])
def test_any_quantity_is_accepted_as_upstream(amount: str) -> None:
    assert validate_object(_template(amount)) == []


@pytest.mark.parametrize("amount", ["８Gi", "٨Gi", "lots"])
def test_a_malformed_quantity_is_not(amount: str) -> None:
    [error] = validate_object(_template(amount))
    assert error.path == "spec.spec.devices.requests[0].exactly.capacity.requests[memory]"
