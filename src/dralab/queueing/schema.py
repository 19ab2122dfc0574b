"""The ranges, enums and caps of Kueue's CRD schemas, checked on the document as read.

The API server refuses a Kueue object that breaks its CRD's structural schema before
Kueue sees it; dralab reads files, so it checks the same bounds itself. The table
is Kueue's ``config/components/crd/bases/kueue.x-k8s.io_*.yaml`` (kubebuilder
markers of ``apis/kueue/v1beta1`` and ``v1beta2``, kubernetes-sigs/kueue @
ff69552e79ad21652c36caa97038382e55625cf7) for the fields dralab reads: ``maxItems``,
``minItems``, ``maxProperties``, ``maxLength``, ``minimum`` and
``format: int32`` / ``int64``. Enums, and the required (``minItems: 1``) lists and
strings, are checked in ``checks.py`` with Kueue's wording.

The messages are the API server's field errors (``field.TooMany``, ``field.TooLong``,
``field.Invalid``) through ``dralab.api.errors.FieldError``; an integer past its
``format`` is said as dralab's validation layer says it ("must fit in a 32-bit
signed integer"). The walk reads the raw document, so a 3,000-item list costs one
``len`` and its one error, not 3,000 checks.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from dralab.api.errors import ErrorType, FieldError

__all__ = ["Rule", "schema_problems"]

_INT32 = (-(2**31), 2**31 - 1)
_INT64 = (-(2**63), 2**63 - 1)


@dataclass(frozen=True, slots=True)
class Rule:
    """Bounds of the field at ``path`` (``[*]``: every item of a list); ``versions``
    empty: every served version."""

    path: str
    max_items: int | None = None
    min_items: int | None = None
    max_properties: int | None = None
    max_length: int | None = None
    minimum: int | None = None
    bits: int | None = None          # format int32 / int64
    versions: tuple[str, ...] = ()


def _groups(prefix: str) -> tuple[Rule, ...]:
    groups = f"{prefix}.resourceGroups"
    return (
        Rule(groups, max_items=16),
        Rule(f"{groups}[*].coveredResources", max_items=64),
        Rule(f"{groups}[*].flavors", min_items=1, max_items=64),
        Rule(f"{groups}[*].flavors[*].name", max_length=253),
        Rule(f"{groups}[*].flavors[*].resources", min_items=1, max_items=64),
    )


_RULES: Mapping[str, tuple[Rule, ...]] = {
    "ResourceFlavor": (
        Rule("spec.nodeLabels", max_properties=8),
        Rule("spec.nodeTaints", max_items=8),
        Rule("spec.tolerations", max_items=8),
        Rule("spec.tolerations[*].tolerationSeconds", bits=64),
        Rule("spec.topologyName", max_length=253),
    ),
    "ClusterQueue": (
        Rule("spec.cohort", max_length=253, versions=("v1beta1",)),
        Rule("spec.cohortName", max_length=253, versions=("v1beta2",)),
        Rule("spec.preemption.borrowWithinCohort.maxPriorityThreshold", bits=32),
        *_groups("spec"),
    ),
    "Cohort": (
        Rule("spec.parentName", max_length=253),
        *_groups("spec"),
    ),
    "LocalQueue": (
        Rule("spec.clusterQueue", max_length=253),
    ),
    "Topology": (
        Rule("spec.levels", max_items=16),
        Rule("spec.levels[*].nodeLabel", max_length=316),
    ),
    "WorkloadPriorityClass": (
        Rule("value", bits=32),
        Rule("description", max_length=2048, versions=("v1beta2",)),
    ),
    "Workload": (
        Rule("spec.podSets", max_items=18),
        Rule("spec.podSets[*].name", max_length=63),
        Rule("spec.podSets[*].count", minimum=0, bits=32),
        Rule("spec.podSets[*].minCount", minimum=1, bits=32),
        Rule("spec.podSets[*].topologyRequest.required", max_length=63, versions=("v1beta2",)),
        Rule("spec.podSets[*].topologyRequest.preferred", max_length=63, versions=("v1beta2",)),
        Rule("spec.priority", bits=32),
        Rule("spec.priorityClassName", max_length=253, versions=("v1beta1",)),
        Rule("spec.priorityClassRef.name", max_length=253, versions=("v1beta2",)),
        Rule("spec.queueName", max_length=253),
        Rule("spec.maximumExecutionTimeSeconds", minimum=1, bits=32),
        Rule("status.admission.clusterQueue", max_length=253),
        Rule("status.admission.podSetAssignments[*].count", minimum=0, bits=32),
    ),
}


def _at(value: Any, parts: list[str], path: str) -> Iterator[tuple[str, Any]]:
    """Every (concrete path, value) the pattern ``parts`` names in ``value``."""
    if not parts:
        yield path, value
        return
    head, rest = parts[0], parts[1:]
    each = head.endswith("[*]")
    name = head[:-3] if each else head
    if not isinstance(value, Mapping) or name not in value:
        return
    here = f"{path}.{name}" if path else name
    found = value[name]
    if not each:
        yield from _at(found, rest, here)
    elif isinstance(found, list):
        for i, item in enumerate(found):
            yield from _at(item, rest, f"{here}[{i}]")


def _check(rule: Rule, path: str, value: Any) -> Iterator[FieldError]:
    if isinstance(value, list):
        if rule.max_items is not None and len(value) > rule.max_items:
            yield FieldError(path=path, type=ErrorType.TOO_MANY, value=len(value),
                             detail=f"must have at most {rule.max_items} items")
        if rule.min_items is not None and len(value) < rule.min_items:
            yield FieldError(path=path, type=ErrorType.INVALID, value=len(value),
                             detail=f"must have at least {rule.min_items} items")
    elif isinstance(value, Mapping):
        if rule.max_properties is not None and len(value) > rule.max_properties:
            yield FieldError(path=path, type=ErrorType.TOO_MANY, value=len(value),
                             detail=f"must have at most {rule.max_properties} items")
    elif isinstance(value, str):
        size = len(value.encode())
        if rule.max_length is not None and size > rule.max_length:
            yield FieldError(path=path, type=ErrorType.TOO_LONG,
                             detail=f"may not be more than {rule.max_length} bytes")
    elif isinstance(value, int) and not isinstance(value, bool):
        if rule.bits is not None:
            low, high = _INT32 if rule.bits == 32 else _INT64
            if not low <= value <= high:
                yield FieldError(path=path, type=ErrorType.INVALID, value=value,
                                 detail=f"must fit in a {rule.bits}-bit signed integer")
                return
        if rule.minimum is not None and value < rule.minimum:
            yield FieldError(path=path, type=ErrorType.INVALID, value=value,
                             detail=f"must be greater than or equal to {rule.minimum}")


def schema_problems(kind: str, version: str, document: Mapping[str, Any] | None
                    ) -> list[tuple[str, str]]:
    """``(field path, message)`` for every bound of ``kind``'s CRD schema that
    ``document`` breaks, in the table's order; empty for kinds without a table."""
    if document is None:
        return []
    out: list[tuple[str, str]] = []
    for rule in _RULES.get(kind, ()):
        if rule.versions and version not in rule.versions:
            continue
        for path, value in _at(document, rule.path.split("."), ""):
            out += [(e.path, e.body()) for e in _check(rule, path, value)]
    return out
