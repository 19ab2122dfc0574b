"""The topology plugin in a session (plugins/topology: topology_plugin.go's hooks): the
trees of the session's KAI Topologies, built once per session; the subset-nodes hook
for a job's sub-group (the plugin itself is :mod:`dralab.queueing.kai.topology`), its
fit errors put on the job; the preferred-level node scores kept per sub-group for the
job's turn (PreJobAllocation clears them). Node sets of a sub-group are found inside
those of its parent.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from dralab.queueing.kai.framework import Session, SessionJob, SessionTask
from dralab.queueing.kai.model import TopologyConstraint
from dralab.queueing.kai.placement import NodeUsage
from dralab.queueing.kai.topology import (
    KaiDomain,
    KaiTopologyTree,
    TopologyError,
    subset_node_sets,
)

__all__ = ["KaiDomain", "KaiTopologyTree", "node_scores_for", "reset_scores",
           "subset_nodes"]


def _trees(session: Session) -> dict[str, KaiTopologyTree]:
    trees = session.plugin_state.get("topology")
    if not isinstance(trees, dict):
        trees = {name: KaiTopologyTree.build(name, levels, session.nodes)
                 for name, levels in sorted(session.state.topologies.items())}
        session.plugin_state["topology"] = trees
    return trees


def node_scores_for(session: Session, keys: Sequence[str]) -> Mapping[str, float] | None:
    """The topology node scores of the first of ``keys`` (a pod set, then its ancestor
    sets) that has any this job turn."""
    scores = session.plugin_state.get("topology_scores")
    if not isinstance(scores, dict):
        return None
    for key in keys:
        if key in scores:
            found: Mapping[str, float] = scores[key]
            return found
    return None


def reset_scores(session: Session) -> None:
    """PreJobAllocation: every job starts without sub-group node scores."""
    session.plugin_state["topology_scores"] = {}


def subset_nodes(session: Session, job: SessionJob, group: str, key: str,
                 constraint: TopologyConstraint | None, podset_pods: Sequence[SessionTask],
                 tasks: Sequence[SessionTask], nodes: list[NodeUsage]) -> list[list[NodeUsage]]:
    """subSetNodesFn: the node sets to try, best first. ``group``: the sub-group's name
    (messages), ``key``: where its node scores are kept, ``podset_pods``: the pods of
    the pod sets it covers (for the running-pods rule). An error the plugin returns
    leaves no node set (KAI logs it and gives up on the job)."""
    try:
        found = subset_node_sets(_trees(session), constraint, job.name, job.spec.namespace,
                                 group, podset_pods, tasks, nodes)
    except TopologyError:
        return []
    job.fit_errors.extend((e.reason, e.detailed_message()) for e in found.fit_errors)
    if found.scores is not None:
        scores = session.plugin_state.setdefault("topology_scores", {})
        if isinstance(scores, dict):
            scores[key] = found.scores
    return found.node_sets
