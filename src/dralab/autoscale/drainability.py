"""Whether scale-down may move a pod: Cluster Autoscaler's drainability rules
(``simulator/drainability``, ``utils/drain``), for its default rule list.

Each rule looks at one pod and answers with an outcome: undefined (no opinion: the
next rule decides), DrainOk (move it), SkipDrain (it goes with the node: mirror and
long-terminating pods), WaitForCompletion (``safe-to-evict: on-completion``) or
BlockDrain with CA's BlockingPodReason. The rules run in CA's order and the first
answer wins, unless an earlier answer named it among its overrides:

    mirror, long-terminating, replica count (with
    --skip-nodes-with-custom-controller-pods), DaemonSet, safe-to-evict "true",
    terminal (succeeded or failed), safe-to-evict "on-completion", replicated (a
    controller; with
    --skip-nodes-with-custom-controller-pods one of ReplicationController, Job,
    ReplicaSet, StatefulSet), system (a kube-system pod no PodDisruptionBudget
    covers, younger than --blocking-system-pod-distruption-timeout; with
    --skip-nodes-with-system-pods), safe-to-evict "false", local storage (an emptyDir
    not in memory or a hostPath volume not listed in
    ``safe-to-evict-local-volumes``; with --skip-nodes-with-local-storage),
    PodDisruptionBudget.

CA's replica-count rule (a pod whose controller object is missing, or has fewer
replicas than --min-replica-count, blocks) and PodDisruptionBudget rule (a matching
budget allowing no disruption blocks) are in the list too, but read the controllers
and budgets from the drain context, which the Cluster Autoscaler model leaves empty:
dralab's snapshots often leave the controllers out and dralab reads no
PodDisruptionBudgets. With no controller listers CA's replica-count rule has no
opinion either.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from dralab.api.core import Pod

from .utilization import is_daemonset_pod, is_long_terminating, is_mirror_pod, unix_time

__all__ = ["BLOCK_DRAIN", "DRAIN_OK", "SAFE_TO_EVICT", "SAFE_TO_EVICT_LOCAL_VOLUMES",
           "SKIP_DRAIN", "UNDEFINED", "WAIT_FOR_COMPLETION", "ControllerListers",
           "DeleteOptions", "DrainContext", "DrainRule", "DrainStatus", "PodDisruptionBudget",
           "PodMoveInfo", "daemonset_rule", "default_rules", "drainable", "local_storage_rule",
           "long_terminating_rule", "mirror_rule", "not_safe_to_evict_rule",
           "on_completion_rule", "pdb_rule", "pods_to_move", "replica_count_rule",
           "replicated_rule", "safe_to_evict_rule", "system_rule", "terminal_rule"]

UNDEFINED = "UndefinedOutcome"
DRAIN_OK = "DrainOk"
BLOCK_DRAIN = "BlockDrain"
SKIP_DRAIN = "SkipDrain"
WAIT_FOR_COMPLETION = "WaitForCompletion"

SAFE_TO_EVICT = "cluster-autoscaler.kubernetes.io/safe-to-evict"
SAFE_TO_EVICT_LOCAL_VOLUMES = "cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes"
KUBE_SYSTEM = "kube-system"
# The replicated rule's controller kinds when pods of custom controllers block.
REPLICATED_KINDS = frozenset({"ReplicationController", "Job", "ReplicaSet", "StatefulSet"})


@dataclass(frozen=True, slots=True)
class DrainStatus:
    """One rule's answer. ``reason``: CA's BlockingPodReason (BlockDrain only);
    ``error``: its message (BlockDrain only)."""

    outcome: str = UNDEFINED
    overrides: tuple[str, ...] = ()
    reason: str = ""
    error: str | None = None


def _blocked(reason: str, error: str) -> DrainStatus:
    return DrainStatus(BLOCK_DRAIN, (), reason, error)


@dataclass(frozen=True, slots=True)
class PodDisruptionBudget:
    """What the system rule reads of a PodDisruptionBudget: its namespace and its
    selector's matchLabels (None: no selector, which matches no pod)."""

    namespace: str
    match_labels: Mapping[str, str] | None
    disruptions_allowed: int = 0


@dataclass(frozen=True, slots=True)
class ControllerListers:
    """The controllers the replica-count rule can look up, by (namespace, name): the
    ReplicationControllers and ReplicaSets with their spec.replicas (None: unset)."""

    replication_controllers: Mapping[tuple[str, str], int | None] = field(default_factory=dict)
    replica_sets: Mapping[tuple[str, str], int | None] = field(default_factory=dict)
    daemon_sets: frozenset[tuple[str, str]] = frozenset()
    jobs: frozenset[tuple[str, str]] = frozenset()
    stateful_sets: frozenset[tuple[str, str]] = frozenset()


@dataclass(frozen=True, slots=True)
class DrainContext:
    """``now``: unix seconds (None: no clock: nothing is long-terminating or old);
    ``listers``: None, no controller can be looked up (the replica-count rule has no
    opinion)."""

    pdbs: Sequence[PodDisruptionBudget] = ()
    now: float | None = None
    listers: ControllerListers | None = None


@dataclass(frozen=True, slots=True)
class DeleteOptions:
    """CA's node-delete flags the rules read (defaults as CA's)."""

    skip_nodes_with_system_pods: bool = True
    skip_nodes_with_local_storage: bool = True
    skip_nodes_with_custom_controller_pods: bool = True
    blocking_system_pod_disruption_timeout: float = 3600.0
    min_replica_count: int = 0


DrainRule = Callable[[DrainContext, Pod], DrainStatus]


def _annotation(pod: Pod, key: str) -> str | None:
    return (pod.metadata.annotations or {}).get(key)


def _pod_name(pod: Pod) -> str:
    return pod.metadata.name or ""


def mirror_rule(ctx: DrainContext, pod: Pod) -> DrainStatus:
    return DrainStatus(SKIP_DRAIN) if is_mirror_pod(pod) else DrainStatus()


def long_terminating_rule(ctx: DrainContext, pod: Pod) -> DrainStatus:
    return DrainStatus(SKIP_DRAIN) if is_long_terminating(pod, ctx.now) else DrainStatus()


def _group(api_version: str) -> str:
    """The API group of an apiVersion ("apps/v1" -> "apps", "v1" -> "")."""
    return api_version.rpartition("/")[0]


def replica_count_rule(min_replica_count: int) -> DrainRule:
    """CA's replicacount rule: the pod's controller must exist (ReplicationController,
    apps DaemonSet, Job, ReplicaSet, apps StatefulSet) and a ReplicationController or
    ReplicaSet must ask for at least ``min_replica_count`` replicas."""
    def rule(ctx: DrainContext, pod: Pod) -> DrainStatus:
        listers = ctx.listers
        controller = next((r for r in pod.metadata.owner_references if r.controller), None)
        if listers is None or controller is None:
            return DrainStatus()
        key = (pod.metadata.namespace or "", controller.name)
        who = f"{pod.metadata.namespace or ''}/{_pod_name(pod)}"
        kind, group = controller.kind, _group(controller.api_version)
        if kind == "ReplicationController":
            if key not in listers.replication_controllers:
                return _blocked("ControllerNotFound",
                                f"replication controller for {who} is not available")
            replicas = listers.replication_controllers[key]
            if replicas is not None and replicas < min_replica_count:
                return _blocked("MinReplicasReached", f"replication controller for {who} has "
                                f"too few replicas spec: {replicas} min: {min_replica_count}")
        elif is_daemonset_pod(pod):
            if group != "apps" or kind != "DaemonSet":
                return DrainStatus()  # CA has no lister for other DaemonSet kinds
            if key not in listers.daemon_sets:
                return _blocked("ControllerNotFound", f"daemonset for {who} is not present")
        elif kind == "Job":
            if key not in listers.jobs:
                return _blocked("ControllerNotFound", f"job for {who} is not available")
        elif kind == "ReplicaSet":
            if key not in listers.replica_sets:
                return _blocked("ControllerNotFound",
                                f"replication controller for {who} is not available")
            replicas = listers.replica_sets[key]
            if replicas is not None and replicas < min_replica_count:
                return _blocked("MinReplicasReached", f"replication controller for {who} has "
                                f"too few replicas spec: {replicas} min: {min_replica_count}")
        elif kind == "StatefulSet" and group == "apps" and key not in listers.stateful_sets:
            return _blocked("ControllerNotFound", f"statefulset for {who} is not available")
        return DrainStatus()
    return rule


def daemonset_rule(ctx: DrainContext, pod: Pod) -> DrainStatus:
    return DrainStatus(DRAIN_OK) if is_daemonset_pod(pod) else DrainStatus()


def safe_to_evict_rule(ctx: DrainContext, pod: Pod) -> DrainStatus:
    return DrainStatus(DRAIN_OK) if _annotation(pod, SAFE_TO_EVICT) == "true" else DrainStatus()


def terminal_rule(ctx: DrainContext, pod: Pod) -> DrainStatus:
    """Succeeded or failed for good: restartPolicy Never and Succeeded/Failed,
    OnFailure and Succeeded, or Failed (the kubelet rejected it)."""
    phase, policy = pod.status.phase, pod.spec.restart_policy
    terminal = (policy == "Never" and phase in ("Succeeded", "Failed")) or \
        (policy == "OnFailure" and phase == "Succeeded") or phase == "Failed"
    return DrainStatus(DRAIN_OK) if terminal else DrainStatus()


def on_completion_rule(ctx: DrainContext, pod: Pod) -> DrainStatus:
    if _annotation(pod, SAFE_TO_EVICT) == "on-completion":
        return DrainStatus(WAIT_FOR_COMPLETION)
    return DrainStatus()


def replicated_rule(skip_custom_controller_pods: bool) -> DrainRule:
    def rule(ctx: DrainContext, pod: Pod) -> DrainStatus:
        controller = next((r for r in pod.metadata.owner_references if r.controller), None)
        replicated = controller is not None and \
            (not skip_custom_controller_pods or controller.kind in REPLICATED_KINDS)
        if replicated:
            return DrainStatus()
        return _blocked("NotReplicated",
                        f"{pod.metadata.namespace or ''}/{_pod_name(pod)} is not replicated")
    return rule


def _covering(ctx: DrainContext, pod: Pod) -> list[PodDisruptionBudget]:
    """The budgets of the pod's namespace whose selector matches its labels."""
    labels = pod.metadata.labels or {}
    return [p for p in ctx.pdbs if p.namespace == (pod.metadata.namespace or "") and
            p.match_labels is not None and
            all(labels.get(k) == v for k, v in p.match_labels.items())]


def system_rule(disruption_timeout: float) -> DrainRule:
    def rule(ctx: DrainContext, pod: Pod) -> DrainStatus:
        if pod.metadata.namespace != KUBE_SYSTEM or _covering(ctx, pod):
            return DrainStatus()
        created = unix_time(pod.metadata.creation_timestamp or "")
        if created is not None and ctx.now is not None and \
                ctx.now > created + disruption_timeout:
            return DrainStatus(DRAIN_OK)  # old enough: CA evicts it after the timeout
        return _blocked("UnmovableKubeSystemPod",
                        "non-daemonset, non-mirrored, non-pdb-assigned kube-system pod "
                        f"present: {_pod_name(pod)}")
    return rule


def not_safe_to_evict_rule(ctx: DrainContext, pod: Pod) -> DrainStatus:
    if _annotation(pod, SAFE_TO_EVICT) == "false":
        return _blocked("NotSafeToEvictAnnotation",
                        f"pod annotated as not safe to evict present: {_pod_name(pod)}")
    return DrainStatus()


def _volumes(pod: Pod) -> list[dict[str, object]]:
    spec = pod.raw.get("spec") if isinstance(pod.raw, dict) else None
    volumes = spec.get("volumes") if isinstance(spec, dict) else None
    return [v for v in volumes if isinstance(v, dict)] if isinstance(volumes, list) else []


def _is_local(volume: Mapping[str, object]) -> bool:
    if volume.get("hostPath") is not None:
        return True
    empty_dir = volume.get("emptyDir")
    if empty_dir is None:
        return False
    medium = empty_dir.get("medium") if isinstance(empty_dir, dict) else None
    return medium != "Memory"


def local_storage_rule(ctx: DrainContext, pod: Pod) -> DrainStatus:
    allowed = set((_annotation(pod, SAFE_TO_EVICT_LOCAL_VOLUMES) or "").split(",")) - {""}
    if any(_is_local(v) and v.get("name") not in allowed for v in _volumes(pod)):
        return _blocked("LocalStorageRequested",
                        f"pod with local storage present: {_pod_name(pod)}")
    return DrainStatus()


def pdb_rule(ctx: DrainContext, pod: Pod) -> DrainStatus:
    """A PodDisruptionBudget covering the pod that allows no disruption blocks."""
    for budget in _covering(ctx, pod):
        if budget.disruptions_allowed < 1:
            return _blocked("NotEnoughPdb", "not enough pod disruption budget to move "
                            f"{pod.metadata.namespace or ''}/{_pod_name(pod)}")
    return DrainStatus()


def default_rules(options: DeleteOptions = DeleteOptions()) -> list[DrainRule]:
    """CA's ``rules.Default``: the rules in CA's order, those its flags switch off left
    out."""
    rules: list[DrainRule] = [mirror_rule, long_terminating_rule]
    if options.skip_nodes_with_custom_controller_pods:
        rules.append(replica_count_rule(options.min_replica_count))
    rules += [daemonset_rule, safe_to_evict_rule, terminal_rule, on_completion_rule,
              replicated_rule(options.skip_nodes_with_custom_controller_pods)]
    if options.skip_nodes_with_system_pods:
        rules.append(system_rule(options.blocking_system_pod_disruption_timeout))
    rules.append(not_safe_to_evict_rule)
    if options.skip_nodes_with_local_storage:
        rules.append(local_storage_rule)
    rules.append(pdb_rule)
    return rules


@dataclass(slots=True)
class _Candidate:
    status: DrainStatus
    overrides: frozenset[str] = field(default_factory=frozenset)


def drainable(rules: Sequence[DrainRule], ctx: DrainContext, pod: Pod) -> DrainStatus:
    """CA's ``Rules.Drainable``: the first rule with an answer decides, unless an
    earlier answer that names overrides covers it (then that earlier answer wins)."""
    candidates: list[_Candidate] = []
    for rule in rules:
        status = rule(ctx, pod)
        if status.overrides:
            candidates.append(_Candidate(status, frozenset(status.overrides)))
            continue
        for candidate in candidates:
            if status.outcome in candidate.overrides:
                return candidate.status
        if status.outcome != UNDEFINED:
            return status
    return DrainStatus()


@dataclass(slots=True)
class PodMoveInfo:
    """CA's ``PodMoveInfo``: the pods a node's removal moves, its DaemonSet pods (they
    go with it), the on-completion pods it waits for, and the first pod that blocks
    the removal (with its BlockingPodReason and message)."""

    pods: list[Pod] = field(default_factory=list)
    daemon_set_pods: list[Pod] = field(default_factory=list)
    on_completion_pods: list[Pod] = field(default_factory=list)
    blocking: tuple[Pod, str, str] | None = None


def pods_to_move(pods: Iterable[Pod], rules: Sequence[DrainRule], ctx: DrainContext
                 ) -> PodMoveInfo:
    """CA's ``GetPodsToMove`` over a node's pods, in order: the first blocking pod
    ends the walk (what was found so far is kept)."""
    out = PodMoveInfo()
    for pod in pods:
        status = drainable(rules, ctx, pod)
        if status.outcome in (UNDEFINED, DRAIN_OK):
            (out.daemon_set_pods if is_daemonset_pod(pod) else out.pods).append(pod)
        elif status.outcome == WAIT_FOR_COMPLETION:
            out.on_completion_pods.append(pod)
        elif status.outcome == BLOCK_DRAIN:
            out.blocking = (pod, status.reason, status.error or "")
            return out
    return out
