"""Workloads the API server would refuse, and options no claim can carry: migrate reads none.

A manifest that Kubernetes refuses (``nvidia.com/gpu: -1``, ``0.5`` GPUs, requests
unequal to limits of an extended resource) has no meaning to migrate: converting
it would hide the problem in a claim, and counting it would mislead the plan. So
every verb refuses its input first, naming every problem (file, document,
object, field path, in the API server's words): the container resource rules
of pod validation (``ValidateResourceRequirements``: resource names, amounts
not negative, extended resources whole, requests equal to limits for them,
limits set) on every container of every pod template migrate reads, built-in
kinds and custom resources alike (the controllers of JobSet, LeaderWorkerSet,
Kubeflow and KServe create the Pods the API server then checks, so such a
template never runs). The rest of an object is left to ``dralab validate``:
migrate also reads fragments and rendered charts that carry less than a whole
object (a template without a selector), and the plan must not stop at a
workload's unrelated label.

Pure: documents in, problems out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from dralab.api.errors import ValidationFailed
from dralab.api.io import Document
from dralab.api.quantity import parse_quantity
from dralab.validation import Problem, validate_container_resources

from .podsets import at_path, path_text, workload_of

__all__ = ["refuse_invalid", "share_memory_amount", "workload_problems"]


def _template_problems(doc: Document) -> list[Problem]:
    workload = workload_of(doc.data)
    if workload is None:
        return []
    out: list[Problem] = []
    for pod_set in workload.pod_sets:
        spec = at_path(doc.data, pod_set.spec_path)
        if not isinstance(spec, Mapping):
            continue
        base = path_text(pod_set.spec_path)
        for key in ("initContainers", "containers"):
            containers = spec.get(key)
            for i, container in enumerate(containers if isinstance(containers, list) else []):
                if isinstance(container, Mapping):
                    where = f"{base}.{key}[{i}].resources"
                    out += [Problem(doc.describe(), e)
                            for e in validate_container_resources(container.get("resources"),
                                                                  where)]
        for path in pod_set.extra_containers:  # KServe's model: one more container
            container = at_path(spec, path)
            key = pod_set.resources_key
            if isinstance(container, Mapping):
                out += [Problem(doc.describe(), e) for e in validate_container_resources(
                    container.get(key), f"{path_text((*pod_set.spec_path, *path))}.{key}")]
    return out


def workload_problems(docs: Iterable[Document]) -> list[Problem]:
    """Every problem the API server's container resource rules find in the pod templates
    of the workloads among ``docs`` (documents that are not workloads, e.g. Nodes or
    Services, are not looked at), in input order."""
    problems: list[Problem] = []
    for doc in docs:
        problems += _template_problems(doc)
    return problems


def refuse_invalid(docs: Sequence[Document]) -> None:
    """Raise ValidationFailed (its ``errors``: every Problem) if any workload is invalid."""
    problems = workload_problems(docs)
    if problems:
        more = f" (and {len(problems) - 1} more problem(s))" if len(problems) > 1 else ""
        raise ValidationFailed(f"{problems[0]}{more}", problems)


def share_memory_amount(text: str) -> str:
    """The GPU memory of a time-sliced pod's share, canonical (``+8Gi`` and ``8192Mi`` are
    ``8Gi``, so they name one template). ValueError unless a whole, positive number of
    bytes: a share of nothing (or less) is no share, and a capacity request in a claim,
    which the API server does not bound, would take it as written."""
    amount = parse_quantity(text)
    if amount.sign() <= 0:
        raise ValueError(f'"{text}": must be greater than zero')
    if not amount.is_integer():
        # Upstream's wording for a fractional memory amount (a warning on Pods).
        raise ValueError(f'fractional byte value "{text}" is invalid, must be an integer')
    return str(amount)
