"""Why a pod landed where it did, or why it did not land at all.

``explain_pod`` runs the whole schedule and looks at the pod's last scheduling
cycle as it happened (other pods already placed, victims not yet evicted): per
node, every Filter plugin that rejects it (not only the first, as the scheduler
stops at), with details (resource shortfall, untolerated taint, the allocator's
per-request lines from DynamicResources); for a placed pod, the weighted scores.
The nearest node is the one with the fewest rejecting plugins, then the smallest
resource shortfall: what blocks it there is what would have to change.
``explain_claim`` does the same for the pod(s) consuming a ResourceClaim.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from dralab.api.base import KubeObject
from dralab.api.errors import InputError
from dralab.api.features import FeatureGates
from dralab.api.keys import key_of, object_key
from dralab.api.resource import ResourceClaim
from dralab.cluster import ClusterState, NodeInfo, PodInfo
from dralab.controllers.podgroups import GROUP_CLAIM_ANNOTATION
from dralab.controllers.snapshotbuild import build_cluster

from .cycle import Attempt
from .framework import Code, CycleState, Status
from .plugins import nvlink
from .result import REASON_SCHEDULER_ERROR, ScheduleResult
from .runtime import Framework

# Set by the resource-claim controller on claims it generates from a pod's template.
POD_CLAIM_ANNOTATION = "resource.kubernetes.io/pod-claim-name"

__all__ = ["ClaimExplanation", "Explanation", "NodeVerdict", "explain_claim", "explain_pod"]


@runtime_checkable
class _Explaining(Protocol):
    """Filter plugins may offer a richer Filter for explanations (details filled)."""

    def explain_filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status: ...


@runtime_checkable
class _Measuring(Protocol):
    def shortfall(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> float: ...


@dataclass(frozen=True, slots=True)
class NodeVerdict:
    """One node: every rejecting plugin's status (empty: it fits), the weighted score
    when the pod was scored there, and the resource shortfall (0 when none)."""

    node: str
    rejections: tuple[Status, ...] = ()
    scores: Mapping[str, int] = field(default_factory=dict)
    total: int | None = None
    shortfall: float = 0.0

    @property
    def fits(self) -> bool:
        return not self.rejections

    @property
    def unresolvable(self) -> bool:
        return any(s.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE for s in self.rejections)


@dataclass(frozen=True, slots=True)
class Explanation:
    pod: str
    node: str | None  # where it was bound, or None
    message: str  # the PodScheduled=False message ("" when placed)
    pre_filter: Status | None = None  # a rejection before any node was looked at
    verdicts: tuple[NodeVerdict, ...] = ()
    nominated: str | None = None
    victims: tuple[str, ...] = ()
    attempts: int = 0
    via_nomination: bool = False  # placed on the node preemption nominated, checked alone
    found: bool = True  # False: the pod was never scheduled (gated, no profile, bound)
    error: bool = False  # the cycle ended in an Error status (SchedulerError), not "no fit"
    finished: str | None = None  # Succeeded/Failed before the run (then not scheduled)
    notes: tuple[str, ...] = ()  # extra lines, e.g. a ComputeDomain's NVLink domains

    @property
    def nearest(self) -> NodeVerdict | None:
        """The rejected node closest to fitting: fewest rejecting plugins, resolvable
        before unresolvable, smallest shortfall, then node order."""
        rejected = [(i, v) for i, v in enumerate(self.verdicts) if not v.fits]
        if not rejected:
            return None
        return min(rejected, key=lambda iv: (len(iv[1].rejections), iv[1].unresolvable,
                                             iv[1].shortfall, iv[0]))[1]

    def render(self) -> str:
        state = f"scheduled on {self.node}" if self.node else "not scheduled"
        if self.finished:
            state = f"{self.finished} on {self.node}" if self.node else self.finished
        lines = [f"Pod {self.pod}: {state}"]
        if self.attempts:
            lines[0] += f" after {self.attempts} attempt(s)" if self.attempts > 1 else ""
        if self.message:
            lines.append(f"  {self.message}")
        if self.via_nomination:
            lines.append("  preemption had made room there; the nominated node was checked "
                         "first and fit")
        if not self.found:
            return "\n".join(lines) + "\n"
        if self.pre_filter is not None:
            lines.append(f"  rejected before Filter by {self.pre_filter.plugin or 'PreFilter'}: "
                         f"{self.pre_filter.message}")
            lines.extend(f"    {d}" for d in self.pre_filter.details)
        if self.verdicts:
            lines.append("")
            lines.append("Nodes:")
            width = max(len(v.node) for v in self.verdicts)
            for verdict in self.verdicts:
                if verdict.fits:
                    score = "" if verdict.total is None else f" score {verdict.total}" + (
                        " (" + ", ".join(f"{k} {v}" for k, v in sorted(verdict.scores.items()))
                        + ")" if verdict.scores else "")
                    chosen = " <- chosen" if verdict.node == self.node else ""
                    lines.append(f"  {verdict.node:<{width}}  fits{score}{chosen}")
                    continue
                for i, status in enumerate(verdict.rejections):
                    name = verdict.node if i == 0 else ""
                    lines.append(f"  {name:<{width}}  {status.plugin}: {status.message}")
                    lines.extend(f"  {'':<{width}}      {d}" for d in status.details)
        nearest = self.nearest
        if self.error:
            lines.append("")
            lines.extend(_ERROR_NOTE)
            if "CEL runtime error" in self.message:
                lines.extend(_CEL_NOTE)
        elif self.node is None and nearest is not None:
            lines.append("")
            count = len(nearest.rejections)
            lines.append(f"Nearest node: {nearest.node} ({count} plugin"
                         f"{'s' if count != 1 else ''} rejecting"
                         + (", unresolvable by preemption" if nearest.unresolvable else "")
                         + "). To fit there:")
            for status in nearest.rejections:
                lines.append(f"  {_advice(status)}")
        if self.nominated:
            lines.append("")
            lines.append(f"Preemption nominated {self.nominated}"
                         + (f", evicting {', '.join(self.victims)}" if self.victims else ""))
        if self.notes:
            lines.append("")
            lines.extend(self.notes)
        return "\n".join(lines) + "\n"


_ERROR_NOTE = (
    "The cycle ended in an error, not in \"does not fit\": a plugin returned Error, so",
    "kube-scheduler stopped at the first node where it happened (reason SchedulerError).",
    "The pod stays pending and is retried with backoff until the cause is fixed;",
    "preemption does not run.",
)
_CEL_NOTE = (
    "A CEL runtime error comes from evaluating a selector on one device: fix the expression",
    "of the claim or DeviceClass it names, or guard the attributes it reads (has(), ?).",
)

_ADVICE = {
    "NodeResourcesFit": "free or add resources",
    "TaintToleration": "tolerate the taint or untaint the node",
    "NodeAffinity": "change the node selector / affinity or the node labels",
    "NodeUnschedulable": "uncordon the node or tolerate node.kubernetes.io/unschedulable",
    "NodeName": "drop spec.nodeName or name this node",
    "DynamicResources": "make the claims allocatable on this node",
}


def _advice(status: Status) -> str:
    hint = "fix what the error names" if status.code is Code.ERROR else \
        _ADVICE.get(status.plugin, "satisfy the plugin")
    details = "; ".join(status.details)
    return f"{status.plugin}: {status.message} -> {hint}" + (f" ({details})" if details else "")


def _evaluate(framework: Framework, attempt: Attempt) -> Explanation:
    """Re-run PreFilter and every Filter plugin on every node for the attempt's pod."""
    cluster = framework.cluster
    assert cluster is not None
    pod = attempt.pod
    nominated = attempt.nominated
    if attempt.node is not None:
        by_node = {s.name: s for s in attempt.scores.per_node()} if attempt.scores else {}
        verdicts = []
        for name in cluster.node_names():
            if name in attempt.rejected:
                verdicts.append(NodeVerdict(name, (attempt.rejected[name],)))
            elif name in attempt.feasible:
                entry = by_node.get(name)
                verdicts.append(NodeVerdict(name, (), dict(entry.scores) if entry else {},
                                            entry.total if entry else None))
        return Explanation(pod.key, attempt.node, "", verdicts=tuple(verdicts),
                           attempts=pod.attempts, via_nomination=attempt.via_nomination)
    # An Error ends the cycle whatever Filter had found so far: its message is the
    # pod's (reason SchedulerError), not the histogram of the nodes seen before it.
    error = attempt.error is not None
    if attempt.error is not None:
        message = f"{REASON_SCHEDULER_ERROR}: {attempt.error.message}"
    else:
        message = attempt.diagnosis.message() if attempt.diagnosis else ""
    state = CycleState()
    _, status, _ = framework.run_pre_filter(state, pod, cluster)
    if not status.is_success():
        return Explanation(pod.key, None, message, pre_filter=status, nominated=nominated,
                           victims=attempt.victims, attempts=pod.attempts, error=error)
    plugins = {name: framework.plugins[name] for name, _ in framework.filters_for(state)}
    verdicts = []
    for node in cluster.node_infos():
        rejections: list[Status] = []
        shortfall = 0.0
        for name, plugin in plugins.items():
            result = (plugin.explain_filter(state, pod, node) if isinstance(plugin, _Explaining)
                      else plugin.filter(state, pod, node))  # type: ignore[attr-defined]
            if result.code is not Code.SUCCESS:
                rejections.append(framework.filter_failure(name, result))
                if isinstance(plugin, _Measuring):
                    shortfall += plugin.shortfall(state, pod, node)
        verdicts.append(NodeVerdict(node.name, tuple(rejections), shortfall=shortfall))
    return Explanation(pod.key, None, message, verdicts=tuple(verdicts), nominated=nominated,
                       victims=attempt.victims, attempts=pod.attempts, error=error)


def run_observed(objects: Iterable[KubeObject],
                 keys: set[str] | Callable[[ClusterState], set[str]], config: object | None,
                 features: FeatureGates | None, seed: int
                 ) -> tuple[ScheduleResult, dict[str, Explanation]]:
    """Schedule everything and explain the pods ``keys`` names (a set, or a function
    of the built cluster, for targets known only once workloads are expanded) as
    their last cycle happened."""
    from .scheduler import Scheduler

    objects = list(objects)
    cluster, pending = build_cluster(objects, features, seed)
    wanted = keys(cluster) if callable(keys) else keys
    seen: dict[str, Explanation] = {}

    def observe(attempt: Attempt) -> None:
        if attempt.pod.key in wanted:
            seen[attempt.pod.key] = _evaluate(attempt.framework, attempt)

    result = Scheduler.build(cluster, config, seed, observe=observe).run(pending)
    # A pod its last cycle placed may still have been rejected after it, while waiting
    # at Permit (its gang timed out or could not be completed): it is not scheduled.
    for item in result.unplaced:
        key = key_of(item.pod)
        found = seen.get(key)
        if found is not None and found.node is not None:
            seen[key] = dataclasses.replace(found, node=None, message=item.message)
    return result, _with_nvlink_notes(objects, result, seen)


def _room(verdict: NodeVerdict) -> bool:
    """The node has room for the pod: it fits, or only pod affinity (which follows
    the pods already placed, not free capacity) turned it away."""
    return all(s.plugin == "InterPodAffinity" for s in verdict.rejections)


def _with_nvlink_notes(objects: list[KubeObject], result: ScheduleResult,
                       seen: dict[str, Explanation]) -> dict[str, Explanation]:
    """Add, to each explained pod of a ComputeDomain, the NVLink domains its
    ComputeDomain's pods span (and the room one domain has, when it waits)."""
    domains = nvlink.compute_domains(objects)
    if not domains:
        return seen
    labels = {info.name: info.node.metadata.labels for info in result.cluster.node_infos()}
    placed = [(p.pod, p.node) for p in result.placed]
    placed += [(p, p.spec.node_name) for p in result.pods
               if p.spec.node_name and p.status.phase not in ("Succeeded", "Failed")]
    pods = {key_of(p): p for p in result.pods}
    pods.update({key_of(p.pod): p.pod for p in result.placed})
    pods.update({key_of(u.pod): u.pod for u in result.unplaced})
    out = {}
    for key, found in seen.items():
        pod = pods.get(key)
        extra = () if pod is None else nvlink.notes(
            pod, found.node, [v.node for v in found.verdicts if _room(v)], domains, placed,
            labels)
        out[key] = dataclasses.replace(found, notes=extra) if extra else found
    return out


def not_scheduled(result: ScheduleResult, key: str) -> Explanation:
    """A pod that had no scheduling cycle: gated, without profile, already bound,
    finished or being deleted. InputError if there is no such pod."""
    for item in result.unplaced:
        if key_of(item.pod) == key:
            return Explanation(key, None, f"{item.reason}: {item.message}", found=False)
    pod = next((p for p in result.pods
                if key_of(p) == key), None)
    if pod is None:
        raise InputError(f"pod {key} not found")
    node = pod.spec.node_name
    if pod.status.phase in ("Succeeded", "Failed"):
        return Explanation(key, node, "finished before the run: it holds no resources",
                           found=False, finished=pod.status.phase)
    if pod.metadata.deletion_timestamp is not None and not node:
        return Explanation(key, None, "being deleted: kube-scheduler skips it", found=False)
    return Explanation(key, node, "already bound before the run" if node else "", found=False)


def explain_pod(objects: Iterable[KubeObject], key: str, config: object | None = None,
                features: FeatureGates | None = None, seed: int = 0) -> Explanation:
    """Explain pod ``namespace/name`` (a pod of the input or one expanded from a
    workload). InputError if no such pod exists."""
    key = key if "/" in key else f"default/{key}"
    result, seen = run_observed(objects, {key}, config, features, seed)
    return seen.get(key) or not_scheduled(result, key)


@dataclass(frozen=True, slots=True)
class ClaimExplanation:
    """A ResourceClaim after the run and the pods that use it. ``origin`` says which
    pod a generated claim belongs to ("" for claims of the input)."""

    claim: str
    allocated: ResourceClaim | None  # the claim after the run (None if it vanished)
    consumers: tuple[Explanation, ...]
    origin: str = ""

    def render(self) -> str:
        claim = self.allocated
        state = "allocated" if claim is not None and claim.allocated else (
            "not created" if claim is None else "not allocated")
        lines = [f"ResourceClaim {self.claim}: {state}"]
        if self.origin:
            lines.append(f"  {self.origin}")
        if claim is not None and claim.status.allocation is not None:
            for r in claim.status.allocation.devices.results:
                lines.append(f"  request {r.request}: {r.driver}/{r.pool}/{r.device}")
            for ref in claim.status.reserved_for:
                lines.append(f"  reserved for {ref.resource}/{ref.name}")
        if not self.consumers:
            lines.append("  no pod uses this claim")
        out = "\n".join(lines) + "\n"
        for consumer in self.consumers:
            out += "\n" + consumer.render()
        return out


def _uses_claim(pod: Any, namespace: str, name: str) -> bool:
    if (pod.metadata.namespace or "default") != namespace:
        return False
    if any(c.resource_claim_name == name for c in pod.spec.resource_claims):
        return True
    return any(s.resource_claim_name == name for s in pod.status.resource_claim_statuses)


@dataclass(frozen=True, slots=True)
class _PodEntry:
    """``spec.resourceClaims[]`` entry ``entry`` of pod ``namespace/pod``."""

    namespace: str
    pod: str
    entry: str


def _claim_target(key: str, namespace: str | None) -> tuple[str, str] | _PodEntry:
    """What an ``explain claim`` argument names (see ``explain_claim``)."""
    parts = key.split("/")
    if any(not p for p in parts) or len(parts) > 3:
        raise InputError(f"{key!r}: expected NAME, NAMESPACE/NAME, POD/CLAIM (with a "
                         "namespace) or NAMESPACE/POD/CLAIM")
    if len(parts) == 1:
        return namespace or "default", parts[0]
    if len(parts) == 3:
        if namespace is not None and namespace != parts[0]:
            raise InputError(f"{key}: namespace {parts[0]!r} differs from the namespace "
                             f"option {namespace!r}")
        return _PodEntry(*parts)
    if namespace is not None:
        return _PodEntry(namespace, parts[0], parts[1])
    return parts[0], parts[1]


def _entry_claim(result: ScheduleResult, target: _PodEntry) -> tuple[str | None, str]:
    """(claim name or None if none was created, origin note) of a pod's claim entry.
    InputError if the pod or the entry does not exist."""
    key = object_key(target.namespace, target.pod)
    pod = next((p for p in result.pods if key_of(p) == key),
               None)
    if pod is None:
        raise InputError(f"pod {key} not found")
    entry = next((e for e in pod.spec.resource_claims if e.name == target.entry), None)
    if entry is None:
        names = ", ".join(e.name for e in pod.spec.resource_claims) or "none"
        raise InputError(f'pod {key} has no resource claim "{target.entry}" '
                         f"(its spec.resourceClaims: {names})")
    if entry.resource_claim_name is not None:
        return entry.resource_claim_name, f'named by pod {key} (spec.resourceClaims "{entry.name}")'
    status = next((s for s in pod.status.resource_claim_statuses if s.name == entry.name), None)
    origin = (f"generated from template {entry.resource_claim_template_name} for pod {key} "
              f'(spec.resourceClaims "{entry.name}")')
    return (status.resource_claim_name if status is not None else None), origin


def _generated_for(claim: ResourceClaim | None) -> str:
    """The origin note of a claim generated for a pod ("" for others)."""
    if claim is None or POD_CLAIM_ANNOTATION not in claim.metadata.annotations:
        return ""
    owner = next((r for r in claim.metadata.owner_references
                  if r.controller and r.kind == "Pod"), None)
    if owner is None:
        return ""
    return (f"generated for pod {object_key(claim.metadata.namespace, owner.name)} "
            f'(spec.resourceClaims "{claim.metadata.annotations[POD_CLAIM_ANNOTATION]}")')


def _group_origin(claim: ResourceClaim | None) -> str:
    """The origin note of a claim generated for a PodGroup ("" for others): the pods
    share it, so naming one of them as its origin would mislead."""
    entry = claim.metadata.annotations.get(GROUP_CLAIM_ANNOTATION) if claim else None
    if claim is None or entry is None:
        return ""
    owner = next((r for r in claim.metadata.owner_references
                  if r.controller and r.kind == "PodGroup"), None)
    if owner is None:
        return ""
    return (f"generated for PodGroup {object_key(claim.metadata.namespace, owner.name)} "
            f'(spec.resourceClaims "{entry}"), shared by its pods')


def explain_claim(objects: Iterable[KubeObject], key: str, config: object | None = None,
                  features: FeatureGates | None = None, seed: int = 0,
                  namespace: str | None = None) -> ClaimExplanation:
    """Explain a ResourceClaim through the pods that use it. ``key`` is

    * ``NAME``: the claim in ``namespace`` ("default" when None);
    * ``NAMESPACE/NAME`` (``namespace`` None): the claim; when no such claim exists
      but pod ``default/NAMESPACE`` has a claim entry ``NAME``, that entry's claim;
    * ``POD/CLAIM`` (``namespace`` given) or ``NAMESPACE/POD/CLAIM``: the claim of the
      pod's ``spec.resourceClaims[]`` entry ``CLAIM`` -- the one generated from its
      template (its name is random) or the one it names.

    InputError if nothing matches. A template entry whose claim was never created
    (missing template) is explained through its pod."""
    objects = list(objects)
    target = _claim_target(key, namespace)
    first, _ = run_observed(objects, set(), config, features, seed)
    origin = ""
    if isinstance(target, tuple) and namespace is None and "/" in key \
            and object_key(target[0], target[1]) not in first.cluster.claims:
        entry = _PodEntry("default", target[0], target[1])
        pod_key = object_key("default", entry.pod)
        if any(key_of(p) == pod_key
               and any(e.name == entry.entry for e in p.spec.resource_claims)
               for p in first.pods):
            target = entry
    if isinstance(target, _PodEntry):
        name, origin = _entry_claim(first, target)
        claim_ns = target.namespace
        if name is None:
            pod_key = object_key(target.namespace, target.pod)
            result, seen = run_observed(objects, {pod_key}, config, features, seed)
            return ClaimExplanation(
                f"for pod {pod_key}, claim {target.entry}", None,
                (seen.get(pod_key) or not_scheduled(result, pod_key),),
                origin.replace("generated from", "nothing generated yet from", 1))
    else:
        claim_ns, name = target
    claim = first.cluster.claims.get(object_key(claim_ns, name))
    owners = {ref.name for ref in claim.metadata.owner_references
              if ref.kind == "Pod"} if claim is not None else set()
    users = [object_key(claim_ns, p.metadata.name) for p in first.pods
             if _uses_claim(p, claim_ns, name) or (
                 p.metadata.name in owners and (p.metadata.namespace or "default") == claim_ns)]
    if claim is None and not users:
        raise InputError(f"resourceclaim {claim_ns}/{name} not found")
    result, seen = run_observed(objects, set(users), config, features, seed)
    consumers = tuple(seen.get(u) or not_scheduled(result, u) for u in users)
    final = result.cluster.claims.get(object_key(claim_ns, name))
    return ClaimExplanation(object_key(claim_ns, name), final, consumers,
                            _group_origin(final or claim) or origin
                            or _generated_for(final or claim))
