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

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from dralab.api.base import KubeObject
from dralab.api.errors import InputError
from dralab.api.features import FeatureGates
from dralab.api.resource import ResourceClaim

from .build import build_cluster
from .cluster import NodeInfo, PodInfo
from .cycle import Attempt
from .framework import Code, CycleState, Status
from .result import ScheduleResult
from .runtime import Framework

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
        lines = [f"Pod {self.pod}: " + (f"scheduled on {self.node}" if self.node else
                                        "not scheduled")]
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
        if self.node is None and nearest is not None:
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
        return "\n".join(lines) + "\n"


_ADVICE = {
    "NodeResourcesFit": "free or add resources",
    "TaintToleration": "tolerate the taint or untaint the node",
    "NodeAffinity": "change the node selector / affinity or the node labels",
    "NodeUnschedulable": "uncordon the node or tolerate node.kubernetes.io/unschedulable",
    "NodeName": "drop spec.nodeName or name this node",
    "DynamicResources": "make the claims allocatable on this node",
}


def _advice(status: Status) -> str:
    hint = _ADVICE.get(status.plugin, "satisfy the plugin")
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
    message = attempt.diagnosis.message() if attempt.diagnosis else (
        attempt.error.message if attempt.error else "")
    state = CycleState()
    _, status, _ = framework.run_pre_filter(state, pod, cluster)
    if not status.is_success():
        return Explanation(pod.key, None, message, pre_filter=status, nominated=nominated,
                           victims=attempt.victims, attempts=pod.attempts)
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
                       victims=attempt.victims, attempts=pod.attempts)


def _run(objects: Iterable[KubeObject], keys: set[str], config: object | None,
         features: FeatureGates | None, seed: int
         ) -> tuple[ScheduleResult, dict[str, Explanation]]:
    from .scheduler import Scheduler

    cluster, pending = build_cluster(objects, features, seed)
    seen: dict[str, Explanation] = {}

    def observe(attempt: Attempt) -> None:
        if attempt.pod.key in keys:
            seen[attempt.pod.key] = _evaluate(attempt.framework, attempt)

    result = Scheduler.build(cluster, config, seed, observe=observe).run(pending)
    return result, seen


def _not_scheduled(result: ScheduleResult, key: str) -> Explanation:
    for item in result.unplaced:
        if f"{item.pod.metadata.namespace}/{item.pod.metadata.name}" == key:
            return Explanation(key, None, f"{item.reason}: {item.message}", found=False)
    pod = next((p for p in result.pods
                if f"{p.metadata.namespace}/{p.metadata.name}" == key), None)
    if pod is None:
        raise InputError(f"pod {key} not found")
    node = pod.spec.node_name
    return Explanation(key, node, "already bound before the run" if node else "", found=False)


def explain_pod(objects: Iterable[KubeObject], key: str, config: object | None = None,
                features: FeatureGates | None = None, seed: int = 0) -> Explanation:
    """Explain pod ``namespace/name`` (a pod of the input or one expanded from a
    workload). InputError if no such pod exists."""
    key = key if "/" in key else f"default/{key}"
    result, seen = _run(objects, {key}, config, features, seed)
    return seen.get(key) or _not_scheduled(result, key)


@dataclass(frozen=True, slots=True)
class ClaimExplanation:
    claim: str
    allocated: ResourceClaim | None  # the claim after the run (None if it vanished)
    consumers: tuple[Explanation, ...]

    def render(self) -> str:
        lines = [f"ResourceClaim {self.claim}: " + (
            "allocated" if self.allocated is not None and self.allocated.allocated
            else "not allocated")]
        claim = self.allocated
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


def explain_claim(objects: Iterable[KubeObject], key: str, config: object | None = None,
                  features: FeatureGates | None = None, seed: int = 0) -> ClaimExplanation:
    """Explain ResourceClaim ``namespace/name`` through the pods that use it."""
    namespace, _, name = key.rpartition("/")
    namespace = namespace or "default"
    objects = list(objects)
    first, _ = _run(objects, set(), config, features, seed)
    claim = first.cluster.claims.get(f"{namespace}/{name}")
    owners = {ref.name for ref in claim.metadata.owner_references
              if ref.kind == "Pod"} if claim is not None else set()
    users = [f"{namespace}/{p.metadata.name}" for p in first.pods
             if _uses_claim(p, namespace, name) or (
                 p.metadata.name in owners and (p.metadata.namespace or "default") == namespace)]
    if claim is None and not users:
        raise InputError(f"resourceclaim {namespace}/{name} not found")
    result, seen = _run(objects, set(users), config, features, seed)
    consumers = tuple(seen.get(u) or _not_scheduled(result, u) for u in users)
    return ClaimExplanation(f"{namespace}/{name}",
                            result.cluster.claims.get(f"{namespace}/{name}"), consumers)
