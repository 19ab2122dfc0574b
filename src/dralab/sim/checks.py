"""Scenario values checked as the Kubernetes objects they become, when the scenario loads.

A job kind turns into Pods (name, labels, priority, requests, tolerations) and,
with ``devices``, a ResourceClaimTemplate whose CEL selectors quote its
``productName`` and ``profile``; a node event into a Node's taint. Rather than
re-stating the API server's rules for each field, the objects are generated
from the scenario once, at load, and validated like any other input
(``dralab.validation.check``). The first problem is reported at the scenario field it
came from: ``FILE: spec.workload[2].priority: ...``.

A few rules are our own or sharper than the objects': the kind name is a DNS
label short enough for the names and labels made from it (``MAX_KIND_NAME``),
a priority stays within what a PriorityClass may give a user's pod, and
``productName`` / ``profile`` are device attribute strings (at most 64
characters), so a longer value could never match a device.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from dralab.api.codec import encode
from dralab.api.core import Pod
from dralab.api.io import Document
from dralab.validation.check import validate_documents

from .jobs import Arrival, claim_template
from .limits import MAX_KIND_NAME, MAX_SCENARIO_PODS
from .model import Kind
from .modes import DRA, MODES
from .spec import DeviceShape, JobKind, NodeEvent, ScenarioError

__all__ = [
    "ATTRIBUTE_MAX_LENGTH",
    "MAX_USER_PRIORITY",
    "MIN_PRIORITY",
    "TOLERATION_FIELDS",
    "check_event",
    "check_kind",
]

# Upstream limits: a device attribute's string value (DeviceAttributeMaxValueLength),
# the highest priority a user-defined PriorityClass may have
# (HighestUserDefinablePriority; above it are the system classes), and int32.
ATTRIBUTE_MAX_LENGTH = 64
MAX_USER_PRIORITY = 1_000_000_000
MIN_PRIORITY = -(2**31)
TOLERATION_FIELDS = frozenset({"key", "operator", "value", "effect", "tolerationSeconds"})

_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
# Where a generated pod's field came from in the job kind.
_POD_FIELDS = (
    ("spec.priority", "priority"),
    ("spec.tolerations", "tolerations"),
    ("spec.containers[0].resources.requests[cpu]", "cpu"),
    ("spec.containers[0].resources.limits[cpu]", "cpu"),
    ("spec.containers[0].resources.requests[memory]", "memory"),
    ("spec.containers[0].resources.limits[memory]", "memory"),
    ("metadata", "name"),
)


def _first_problem(data: Mapping[str, Any]) -> tuple[str, str] | None:
    """(field path, whole message) of the first problem of one generated object."""
    problems = validate_documents([Document("<generated>", None, dict(data))])
    if not problems:
        return None
    return problems[0].error.path, str(problems[0].error)


def _check_shape(shape: DeviceShape, path: str, source: str) -> None:
    for field, value in (("productName", shape.product_name), ("profile", shape.profile)):
        if len(value) > ATTRIBUTE_MAX_LENGTH:
            raise ScenarioError(source, f"{path}.{field}", (
                f"longer than {ATTRIBUTE_MAX_LENGTH} characters, the most a device attribute "
                "string holds: no device could match"))
    for i, alt in enumerate(shape.first_available):
        _check_shape(alt, f"{path}.firstAvailable[{i}]", source)


def check_kind(kind: JobKind, typed: Kind, index: int, source: str,
               template: Pod | None) -> None:
    """ScenarioError for the first value of job kind ``index`` (``typed``: its typed form)
    that is not valid as the Kubernetes objects it becomes. ``template``: the kind's
    manifest pod, if it has one (checked with its manifest; only the names made from the
    kind remain)."""
    path = f"spec.workload[{index}]"
    if len(kind.name) > MAX_KIND_NAME or not _DNS_LABEL.fullmatch(kind.name):
        raise ScenarioError(source, f"{path}.name", (
            f"must be a DNS label (lower-case letters, digits and '-') of at most "
            f"{MAX_KIND_NAME} characters (MAX_KIND_NAME): it prefixes pod names and the "
            f"dralab.dev/job label"))
    if not MIN_PRIORITY <= kind.priority <= MAX_USER_PRIORITY:
        raise ScenarioError(source, f"{path}.priority", (
            f"must be between {MIN_PRIORITY} and {MAX_USER_PRIORITY} (the highest priority "
            "a user-defined PriorityClass may give)"))
    for i, toleration in enumerate(kind.tolerations):
        unknown = sorted(str(k) for k in toleration if k not in TOLERATION_FIELDS)
        if unknown:
            raise ScenarioError(source, f"{path}.tolerations[{i}].{unknown[0]}",
                                "unknown field")
    if kind.devices is not None:
        _check_shape(kind.devices, f"{path}.devices", source)
        try:
            rct = claim_template(kind)
        except ValueError as exc:  # a value CEL cannot quote (a lone surrogate)
            raise ScenarioError(source, f"{path}.devices", str(exc)) from None
        assert rct is not None
        problem = _first_problem(encode(rct))
        if problem is not None:
            raise ScenarioError(source, f"{path}.devices",
                                f"the ResourceClaimTemplate it generates is invalid: "
                                f"{problem[1]}")
    # The longest names a run can give: the last job index and replica, a restart.
    arrival = Arrival(0.0, typed, MAX_SCENARIO_PODS, (1.0,) * kind.pods_per_job)
    for mode in MODES.values() if template is None else (DRA,):
        pod = mode.make_pod(arrival, kind.pods_per_job - 1, attempt=99, prototype=template)
        data = encode(pod)
        if template is None:
            # Validate the tolerations as written (make_pod copies only what it models).
            data["spec"]["tolerations"] = [dict(t) for t in kind.tolerations]
        problem = _first_problem(data)
        if problem is not None:
            field = next((f for prefix, f in _POD_FIELDS if problem[0].startswith(prefix)),
                         None)
            where = f"{path}.{field}" if field else path
            if field == "tolerations":
                where = f"{path}.{problem[0].removeprefix('spec.')}"
            raise ScenarioError(source, where,
                                f"the Pod it generates ({mode.name} mode) is invalid: {problem[1]}")


def check_event(event: NodeEvent, index: int, source: str) -> None:
    """ScenarioError unless the event's node name and taint are valid on a Node."""
    path = f"spec.events[{index}]"
    node: dict[str, Any] = {"apiVersion": "v1", "kind": "Node",
                            "metadata": {"name": event.node or "pool-node"}}
    if event.taint is not None:
        taint = dict(event.taint)
        if event.action == "untaint":
            # Only the key names the taint to remove.
            taint.setdefault("effect", "NoSchedule")
        node["spec"] = {"taints": [taint]}
    problem = _first_problem(node)
    if problem is None:
        return
    field_path, message = problem
    if field_path.startswith("spec.taints[0]"):
        where = f"{path}.taint{field_path.removeprefix('spec.taints[0]')}"
    elif field_path.startswith("metadata"):
        where = f"{path}.node"
    else:
        where = path
    raise ScenarioError(source, where, f"invalid on a Node: {message}")
