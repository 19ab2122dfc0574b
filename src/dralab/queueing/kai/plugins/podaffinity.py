"""Inter-pod affinity in a KAI session: the k8s InterPodAffinity predicate KAI's
predicates plugin runs, and KAI's podaffinity plugin, which scores nodes with the k8s
InterPodAffinity score times scores.K8sPlugins (100,000), without k8s's normalisation.

The pods that count are the session's pods on a node (allocated, pipelined, bound,
running or releasing), the placements this session made included, as KAI's k8s
snapshot follows them. A term matches a pod in one of its namespaces (the owner's own
when it names none) whose labels carry all of its matchLabels.

Filter (kube-scheduler's, in its order): every required affinity term needs a matching
pod in the node's domain of the term's topology key (a node without the key fails),
unless no pod matches anywhere and the pod matches its own terms (the first of a
group); no pod the required anti-affinity selects may be in the node's domain; no
placed pod's required anti-affinity may select this pod in a domain the node is in.

Score, per (topology key, value) over every placed pod: the weights of the pod's
preferred terms that match it (anti-affinity negative), hardPodAffinityWeight (1) for a
placed pod whose required affinity selects this pod, and the placed pod's preferred
terms that select this pod; a node scores the sum over its labels.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from dralab.queueing.kai.framework import Session, SessionJob, SessionTask
from dralab.queueing.kai.model import KaiAffinityTerm, KaiNode, KaiTask
from dralab.queueing.kai.placement import ACTIVE_USED

__all__ = [
    "ERR_AFFINITY",
    "ERR_ANTI_AFFINITY",
    "ERR_EXISTING_ANTI_AFFINITY",
    "K8S_PLUGINS",
    "PlacedPod",
    "affinity_filter",
    "affinity_scores",
    "in_use",
    "placed_pods",
    "session_filter",
    "session_scores",
]

ERR_AFFINITY = "node(s) didn't match pod affinity rules"
ERR_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"
ERR_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
K8S_PLUGINS = 100000.0   # scores.K8sPlugins
_HARD_POD_AFFINITY_WEIGHT = 1   # InterPodAffinityArgs default


@dataclass(frozen=True, slots=True)
class PlacedPod:
    task: KaiTask
    namespace: str
    node_labels: Mapping[str, str]


def placed_pods(session: Session, skip: SessionTask | None = None) -> list[PlacedPod]:
    out: list[PlacedPod] = []
    for name in sorted(session.jobs):
        job = session.jobs[name]
        for pod in job.pods:
            if pod is skip or pod.node is None or pod.status not in ACTIVE_USED:
                continue
            usage = session.nodes.get(pod.node)
            if usage is None:
                continue
            out.append(PlacedPod(pod.spec, job.spec.namespace, usage.node.labels))
    return out


def _matches(term: KaiAffinityTerm, owner_namespace: str, task: KaiTask,
             namespace: str) -> bool:
    namespaces = term.namespaces or (owner_namespace,)
    if namespace not in namespaces:
        return False
    return all(task.labels.get(k) == v for k, v in term.match_labels.items())


def _bump(counts: dict[tuple[str, str], int], labels: Mapping[str, str], key: str) -> None:
    if key in labels:
        pair = (key, labels[key])
        counts[pair] = counts.get(pair, 0) + 1


def affinity_filter(task: KaiTask, namespace: str, node: KaiNode,
                    placed: Sequence[PlacedPod]) -> str | None:
    """InterPodAffinity's Filter for ``task`` (in ``namespace``) on ``node``: the
    failure's reason, or None."""
    affinity = task.pod_affinity
    required = affinity.required if affinity is not None else ()
    anti = affinity.required_anti if affinity is not None else ()
    affinity_counts: dict[tuple[str, str], int] = {}
    anti_counts: dict[tuple[str, str], int] = {}
    existing_counts: dict[tuple[str, str], int] = {}
    for other in placed:
        if required and all(_matches(t, namespace, other.task, other.namespace)
                            for t in required):
            for term in required:
                _bump(affinity_counts, other.node_labels, term.topology_key)
        for term in anti:
            if _matches(term, namespace, other.task, other.namespace):
                _bump(anti_counts, other.node_labels, term.topology_key)
        other_affinity = other.task.pod_affinity
        for term in other_affinity.required_anti if other_affinity is not None else ():
            if _matches(term, other.namespace, task, namespace):
                _bump(existing_counts, other.node_labels, term.topology_key)
    labels = node.labels
    if required:
        exists = all(term.topology_key in labels and affinity_counts.get(
            (term.topology_key, labels[term.topology_key]), 0) > 0 for term in required)
        if not exists:
            keys_present = all(term.topology_key in labels for term in required)
            own = all(_matches(t, namespace, task, namespace) for t in required)
            if not (keys_present and not affinity_counts and own):
                return ERR_AFFINITY
    for term in anti:
        key = term.topology_key
        if key in labels and anti_counts.get((key, labels[key]), 0) > 0:
            return ERR_ANTI_AFFINITY
    for (key, value), count in existing_counts.items():
        if count > 0 and labels.get(key) == value:
            return ERR_EXISTING_ANTI_AFFINITY
    return None


def _add(scores: dict[tuple[str, str], int], labels: Mapping[str, str], key: str,
         weight: int) -> None:
    if key in labels and weight:
        pair = (key, labels[key])
        scores[pair] = scores.get(pair, 0) + weight


def affinity_scores(task: KaiTask, namespace: str, nodes: Iterable[KaiNode],
                    placed: Sequence[PlacedPod]) -> dict[str, float]:
    """The podaffinity plugin's node scores: InterPodAffinity's raw Score (no
    NormalizeScore) times K8S_PLUGINS, by node name."""
    affinity = task.pod_affinity
    preferred = affinity.preferred if affinity is not None else ()
    preferred_anti = affinity.preferred_anti if affinity is not None else ()
    topology: dict[tuple[str, str], int] = {}
    for other in placed:
        for term in preferred:
            if _matches(term, namespace, other.task, other.namespace):
                _add(topology, other.node_labels, term.topology_key, term.weight)
        for term in preferred_anti:
            if _matches(term, namespace, other.task, other.namespace):
                _add(topology, other.node_labels, term.topology_key, -term.weight)
        theirs = other.task.pod_affinity
        if theirs is None:
            continue
        for term in theirs.required:
            if _matches(term, other.namespace, task, namespace):
                _add(topology, other.node_labels, term.topology_key,
                     _HARD_POD_AFFINITY_WEIGHT)
        for term in theirs.preferred:
            if _matches(term, other.namespace, task, namespace):
                _add(topology, other.node_labels, term.topology_key, term.weight)
        for term in theirs.preferred_anti:
            if _matches(term, other.namespace, task, namespace):
                _add(topology, other.node_labels, term.topology_key, -term.weight)
    out: dict[str, float] = {}
    for node in nodes:
        total = sum(topology.get((k, v), 0) for k, v in node.labels.items())
        out[node.name] = K8S_PLUGINS * total
    return out


def session_filter(session: Session, job: SessionJob, pod: SessionTask,
                   node: KaiNode) -> str | None:
    return affinity_filter(pod.spec, job.spec.namespace, node, placed_pods(session, pod))


def session_scores(session: Session, job: SessionJob, pod: SessionTask,
                   nodes: Iterable[KaiNode]) -> dict[str, float]:
    return affinity_scores(pod.spec, job.spec.namespace, nodes, placed_pods(session, pod))


def in_use(session: Session) -> bool:
    """Whether any pod of the session has inter-pod affinity (else the predicate passes
    everywhere and every score is 0, so the session skips both)."""
    key = "podaffinity.in_use"
    cached = session.plugin_state.get(key)
    if not isinstance(cached, bool):
        cached = any(p.spec.pod_affinity is not None
                     for job in session.jobs.values() for p in job.pods)
        session.plugin_state[key] = cached
    return cached
