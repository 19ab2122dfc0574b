"""A pod's PodGroup (gate GenericWorkload) and the group's shared claims (gate
DRAWorkloadResourceClaims), as the scheduler and the claim controller read them.

* ``group_key`` / ``pod_group_of``: the PodGroup a pod names in
  ``spec.schedulingGroup.podGroupName`` (same namespace). With GenericWorkload
  off the API server drops that field, so a pod is in no group.
* ``group_claim_entry``: the PodGroup claim a pod's ``spec.resourceClaims[]``
  entry stands for. KEP-5729: an entry that matches a group entry exactly (same
  name, same claim or template name) uses the group's claim, one per PodGroup,
  reserved for the PodGroup (``reservedFor`` resource ``podgroups``) instead of
  for each pod.
* ``group_claim_key``: where that claim is (a named claim, or the one generated
  from the group's template, found by its controlling owner).
* ``GroupIndex``: the pods of each PodGroup, kept up to date from the store's pod
  events (a pod's group never changes: ``schedulingGroup`` is immutable), so that
  per-pod questions about a group cost its size, not the cluster's.

Pure functions of the store; nothing here changes it.
"""

from __future__ import annotations

from dralab.api.core import Pod, PodResourceClaim
from dralab.api.features import Gate
from dralab.api.keys import object_key
from dralab.api.resource import ResourceClaim, ResourceClaimConsumerReference
from dralab.api.scheduling import PodGroup, PodGroupResourceClaim
from dralab.cluster import ClusterState, PodInfo
from dralab.cluster.events import PodAdded, PodRemoved

__all__ = [
    "GROUP_API",
    "GROUP_CLAIM_ANNOTATION",
    "GROUP_RESOURCE",
    "GroupIndex",
    "claim_of_group",
    "group_claim_entry",
    "group_claim_key",
    "group_key",
    "group_reference",
    "is_group_claim_of",
    "pod_group_of",
]

GROUP_API = "scheduling.k8s.io"
GROUP_RESOURCE = "podgroups"
# On a claim generated for a PodGroup: the group's claim entry it was made for.
GROUP_CLAIM_ANNOTATION = "resource.kubernetes.io/podgroup-claim-name"


def group_key(cluster: ClusterState, pod: Pod) -> str | None:
    """``namespace/name`` of the PodGroup ``pod`` names; None if it names none or the
    GenericWorkload gate is off (the field is dropped then)."""
    group = pod.spec.scheduling_group
    if group is None or not group.pod_group_name or \
            not cluster.features.is_enabled(Gate.GENERIC_WORKLOAD):
        return None
    return object_key(pod.metadata.namespace, group.pod_group_name)


def pod_group_of(cluster: ClusterState, pod: Pod) -> PodGroup | None:
    """The PodGroup object of ``pod``; None if it is in none or the group does not exist."""
    key = group_key(cluster, pod)
    return cluster.pod_groups.get(key) if key is not None else None


def group_reference(group: PodGroup) -> ResourceClaimConsumerReference:
    """The ``reservedFor`` entry naming ``group``."""
    return ResourceClaimConsumerReference(api_group=GROUP_API, resource=GROUP_RESOURCE,
                                          name=group.name, uid=group.metadata.uid or "")


def group_claim_entry(cluster: ClusterState, pod: Pod, entry: PodResourceClaim
                      ) -> tuple[PodGroup, PodGroupResourceClaim] | None:
    """The pod's PodGroup and its claim entry that ``entry`` matches exactly; None if
    there is none or DRAWorkloadResourceClaims is off (then every pod has its own)."""
    if not cluster.features.is_enabled(Gate.DRA_WORKLOAD_RESOURCE_CLAIMS):
        return None
    group = pod_group_of(cluster, pod)
    if group is None:
        return None
    for claim in group.spec.resource_claims:
        if claim.name == entry.name and \
                claim.resource_claim_name == entry.resource_claim_name and \
                claim.resource_claim_template_name == entry.resource_claim_template_name:
            return group, claim
    return None


def is_group_claim_of(claim: ResourceClaim, group: PodGroup, entry: str | None = None) -> bool:
    """Whether ``claim`` was generated for ``group`` (its controlling owner), for the
    group entry ``entry`` if given."""
    uid = group.metadata.uid
    owned = any(ref.controller and ref.kind == "PodGroup" and ref.name == group.name
                and (not uid or ref.uid == uid) for ref in claim.metadata.owner_references)
    return owned and (entry is None
                      or claim.metadata.annotations.get(GROUP_CLAIM_ANNOTATION) == entry)


def claim_of_group(cluster: ClusterState, group: PodGroup, entry: str) -> str | None:
    """Key of the claim generated for ``group``'s template entry ``entry``, if any."""
    namespace = group.metadata.namespace or "default"
    for status in group.status.resource_claim_statuses:
        if status.name == entry and status.resource_claim_name:
            key = object_key(namespace, status.resource_claim_name)
            if key in cluster.claims:
                return key
    prefix = f"{namespace}/"
    for key, claim in cluster.claims.items():
        if key.startswith(prefix) and is_group_claim_of(claim, group, entry):
            return key
    return None


def group_claim_key(cluster: ClusterState, group: PodGroup, claim: PodGroupResourceClaim
                    ) -> str | None:
    """Key of the ResourceClaim that serves the group's entry ``claim`` (None: not made yet)."""
    namespace = group.metadata.namespace or "default"
    if claim.resource_claim_name is not None:
        return object_key(namespace, claim.resource_claim_name)
    return claim_of_group(cluster, group, claim.name)


class GroupIndex:
    """Pod keys per PodGroup key, following ``cluster.events`` (rebuilt from the store
    when the log was trimmed past the cursor)."""

    def __init__(self, cluster: ClusterState) -> None:
        self.cluster = cluster
        self._cursor = -1
        self._members: dict[str, dict[str, None]] = {}   # group -> pod keys, in order
        self._group_of: dict[str, str] = {}              # pod key -> group

    def _add(self, info: PodInfo) -> None:
        group = group_key(self.cluster, info.pod)
        if group is not None:
            self._group_of[info.key] = group
            self._members.setdefault(group, {})[info.key] = None

    def _remove(self, key: str) -> None:
        group = self._group_of.pop(key, None)
        if group is not None:
            self._members.get(group, {}).pop(key, None)

    def _sync(self) -> None:
        cluster = self.cluster
        events = cluster.events
        changes = events.since(self._cursor) if self._cursor >= 0 else None
        if changes is None:
            self._members.clear()
            self._group_of.clear()
            for info in cluster.pods.values():
                self._add(info)
        else:
            for event in changes:
                if isinstance(event, PodAdded):
                    self._remove(event.key)
                    added = cluster.pods.get(event.key)
                    if added is not None:
                        self._add(added)
                elif isinstance(event, PodRemoved):
                    self._remove(event.key)
        self._cursor = events.end

    def members(self, group: str) -> list[PodInfo]:
        """The pods of PodGroup ``group`` (``namespace/name``) in the store, oldest first."""
        self._sync()
        pods = self.cluster.pods
        return [pods[k] for k in self._members.get(group, ()) if k in pods]
