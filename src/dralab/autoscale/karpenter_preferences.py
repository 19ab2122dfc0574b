"""Karpenter's PreferencePolicy for a pod's preferred node affinity while it provisions.

Karpenter's ``--preference-policy`` (sigs.k8s.io/karpenter pkg/operator/options, default
``Respect``) makes its scheduler treat a pod's preferences as requirements first and
relax them one at a time when the pod cannot be scheduled
(pkg/controllers/provisioning/scheduling/preferences.go: the heaviest preferred node
affinity term goes first). ``Ignore`` leaves preferences out.

The model applies ``Respect`` to preferred node affinity: a pod is restricted to the
instance types (pools) whose template node meets its heaviest preferred term that some
type meets; a term no type meets is relaxed at once, and a pod that the restricted types
cannot take is relaxed by the caller. Preferred pod (anti-)affinity and ScheduleAnyway
topology spread are not applied (the estimator's filters never read them).
"""

from __future__ import annotations

from collections.abc import Mapping

from dralab.allocator.nodes import NodeSelectorError, NodeView, compile_node_selector
from dralab.api.core import Node, NodeSelector, Pod

__all__ = ["PREFERENCE_POLICIES", "RESPECT", "preferred_pools"]

RESPECT, IGNORE = "Respect", "Ignore"
PREFERENCE_POLICIES = (RESPECT, IGNORE)


def preferred_pools(pod: Pod, templates: Mapping[str, Node]) -> frozenset[str] | None:
    """The pools (of ``templates``: pool -> its template node) that meet the heaviest
    preferred node-affinity term of ``pod`` that any of them meets; None when the pod has
    no such term."""
    affinity = pod.spec.affinity
    node_affinity = affinity.node_affinity if affinity is not None else None
    if node_affinity is None:
        return None
    terms = sorted(node_affinity.preferred_during_scheduling_ignored_during_execution,
                   key=lambda t: -t.weight)  # stable: upstream's SliceStable by weight
    views = {pool: NodeView.of(node) for pool, node in templates.items()}
    for term in terms:
        try:
            selector = compile_node_selector(NodeSelector(node_selector_terms=[term.preference]))
        except NodeSelectorError:
            continue
        meeting = frozenset(pool for pool, view in views.items() if selector.matches(view))
        if meeting:
            return meeting
    return None
