"""API versions: what Kubernetes 1.37 serves, and conversion of older versions to v1.

dralab's objects are the v1 (hub) kinds. A document in an older version that
1.37 still serves (resource.k8s.io/v1beta2, v1beta1; v1alpha3 for
DeviceTaintRule) is converted to v1 on the way in, exactly as the API server's
conversion does, and can be converted back on the way out. Removed and unknown
versions of the groups dralab models are refused with kubectl's wording and a
hint naming the replacement::

    >>> from dralab.api.versions import to_v1
    >>> claim = {"apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceClaim",
    ...          "spec": {"devices": {"requests": [
    ...              {"name": "gpu", "deviceClassName": "gpu.example.com"}]}}}
    >>> to_v1(claim)["spec"]["devices"]["requests"]
    [{'name': 'gpu', 'exactly': {'deviceClassName': 'gpu.example.com'}}]

Everything here is pure and works on plain documents.
"""

from __future__ import annotations

from ._convert import from_v1, legacy_slice_to_v1, to_v1
from ._paths import path_in_version
from ._served import (
    CONVERTIBLE,
    RESOURCE_GROUP,
    Resolution,
    Served,
    group_of,
    missing_api_version,
    resolve,
)

__all__ = [
    "CONVERTIBLE",
    "RESOURCE_GROUP",
    "Resolution",
    "Served",
    "from_v1",
    "group_of",
    "legacy_slice_to_v1",
    "missing_api_version",
    "path_in_version",
    "resolve",
    "to_v1",
]
