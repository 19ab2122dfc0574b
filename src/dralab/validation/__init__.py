"""Validation of Kubernetes objects as the 1.37 API server performs it on create.

A layer of its own above ``dralab.cel`` (device selectors are compiled to be
checked), so that ``dralab.api`` stays below the CEL language.

Works on decoded documents (plain dicts from YAML/JSON) rather than typed
models, so that one pass reports every problem, type errors included, with the
API server's field paths, error types and wording::

    >>> from dralab.validation import validate_object
    >>> slice_ = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
    ...           "metadata": {"name": "s"},
    ...           "spec": {"driver": "gpu.example.com", "nodeName": "n",
    ...                    "pool": {"name": "n", "resourceSliceCount": 0}}}
    >>> [str(e) for e in validate_object(slice_)]
    ['spec.pool.resourceSliceCount: Invalid value: 0: must be greater than zero']

Deliberate differences from the API server are listed in ``DEVIATIONS``.
"""

from __future__ import annotations

from typing import Final

from dralab.validation._across import validate_across
from dralab.validation._dispatch import SUPPORTED_KINDS, validate_object
from dralab.validation._pod import validate_container_resources
from dralab.validation.check import Problem, not_checked, validate_documents, validate_objects

__all__ = ["DEVIATIONS", "SUPPORTED_KINDS", "Problem", "not_checked", "validate_across",
           "validate_container_resources", "validate_documents", "validate_object",
           "validate_objects"]

DEVIATIONS: Final = (
    "Fields of a disabled feature gate are reported as Forbidden "
    "('requires feature gate X') instead of being silently dropped.",
    "Wrong JSON types are FieldErrors (Invalid value: \"<type>\": must be of type T) at the "
    "field's path; the API server stops at the first decoding error.",
    "Defaulted fields may be missing (count, allocationMode, restartPolicy, operator, ...); "
    "missing namespaces are not errors.",
    "v1beta1-style request fields directly under a v1 DeviceRequest, `basic` in a v1 Device, "
    "`exactly` in a v1beta1 DeviceRequest, device fields outside `basic` in v1beta1, fields "
    "removed in earlier releases (pod claim `source`, classic-DRA claim and class fields) and "
    "adminAccess in a firstAvailable entry are Forbidden, naming what to use, instead of the "
    "strict-decoding answer (... cannot be handled as a <Kind>: strict decoding error: unknown "
    "field \"...\").",
    "Unknown fields get the API server's strict-decoding answer in resource.k8s.io/v1 and "
    "v1beta2 DRA objects only; other kinds and resource.k8s.io/v1beta1 are not checked for "
    "them, nor are documents read as a cluster's stored state.",
    "Objects in resource.k8s.io/v1beta1 are reported with v1beta1 field paths "
    "(spec.devices.requests[0].count, spec.devices[0].basic.attributes[x]); the API server's "
    "handwritten checks name the internal, v1-shaped path.",
    "resource.k8s.io/v1beta1, v1beta2 and (DeviceTaintRule) v1alpha3 are accepted although a "
    "default 1.37 API server serves these versions only when enabled with --runtime-config.",
    "A removed version adds to kubectl's 'no matches for kind \"K\" in version \"G/V\"' "
    "when it was removed and what to use instead.",
    "Duplicates are reported at the duplicate item, in document order, not after all items.",
    "A constraint with both matchAttribute and distinctAttribute is an error.",
    "Node taints are reported under spec.taints (upstream says metadata.taints) and node "
    "quantities as status.capacity[name] (upstream: status.capacity.name).",
    "Template labels are reported under spec.template.metadata.labels.",
    "A DaemonSet without selector gets 'Required value' at spec.selector.",
    "StatefulSet pod templates are validated like every other pod template.",
    "Derived-attribute expressions are checked for presence and length only, not compiled.",
    "Status (allocation, reservedFor, devices) is validated as if newly written; the API server "
    "clears status on create and checks it on status updates.",
    "Admin access refused for a namespace without the admin-access label is reported at the "
    "field's real path (upstream: spec.devices.requests[i].adminAccess, for templates too), and "
    "only when the claim's Namespace is part of the input.",
)
