"""The ResourceClaim lifecycle around pods: what the resource-claim controller and
the scheduler's DRA plugin do to claims outside of allocation itself.

* ``ensure_pod_claims`` plays the resource-claim controller: one claim per
  ``spec.resourceClaims[]`` entry that names a template, owned by the pod, named
  like the controller names it, recorded in ``pod.status.resourceClaimStatuses``.
  With DRAWorkloadResourceClaims, an entry that matches its PodGroup's claim uses
  the group's one claim instead (made once, owned by the PodGroup; ``podgroups``).
* ``resolve_pod_claims`` is the scheduler's view: the claim objects a pod uses,
  or the reason the pod has to wait (upstream's wording).
* ``release_pod_claims`` is what happens when a pod goes away: it stops being a
  consumer, claims without consumers are deallocated, its generated claims are
  deleted. ``delete_pod`` removes a pod from the store and does that (the store
  itself leaves claims alone).

Every function works on ``ClusterState`` through ``add_claim``/``remove_claim``
only, so the allocated-device bookkeeping stays in step. API objects are never
mutated; an update stores a new object (``msgspec.structs.replace``).
Randomness (generated names, UIDs) comes from the ``random.Random`` passed in,
so a seed reproduces a run.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass

from msgspec.structs import replace

from dralab.api.base import ObjectMeta, OwnerReference
from dralab.api.core import Pod, PodResourceClaim, PodResourceClaimStatus
from dralab.api.keys import key_of, object_key, random_uid
from dralab.api.resource import (
    V1,
    ResourceClaim,
    ResourceClaimConsumerReference,
    ResourceClaimStatus,
)
from dralab.api.scheduling import PodGroup
from dralab.cluster import ClusterState, PodInfo

from .podgroups import (
    GROUP_CLAIM_ANNOTATION,
    group_claim_entry,
    group_claim_key,
    group_reference,
    is_group_claim_of,
    pod_group_of,
)

__all__ = [
    "DELETE_PROTECTION_FINALIZER",
    "EXTENDED_CLAIM_ANNOTATION",
    "NAME_ALPHABET",
    "POD_CLAIM_ANNOTATION",
    "RESERVED_FOR_MAX",
    "PodClaims",
    "add_consumer",
    "claim_consumer",
    "deallocate",
    "delete_pod",
    "ensure_pod_claims",
    "ensure_pod_uid",
    "generate_name",
    "is_controlled_by",
    "is_reserved_for",
    "pod_claim_keys",
    "pod_reference",
    "release_pod_claims",
    "remove_consumer",
    "resolve_pod_claims",
    "template_claim_base",
]

POD_CLAIM_ANNOTATION = "resource.kubernetes.io/pod-claim-name"
EXTENDED_CLAIM_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"
DELETE_PROTECTION_FINALIZER = "resource.kubernetes.io/delete-protection"
RESERVED_FOR_MAX = 256

# The API server's name generator: consonants and digits that cannot spell words.
NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_RANDOM_LENGTH = 5
# generateName bases are cut to this length before the random suffix is added.
_MAX_GENERATED_BASE = 58
# The claim controller keeps its own base one shorter (63 - hyphen - 5 random).
_MAX_TEMPLATE_BASE = 57


def generate_name(base: str, rng: random.Random) -> str:
    """What the API server makes of ``metadata.generateName``: the base cut to 58
    characters plus five random characters from ``NAME_ALPHABET``."""
    suffix = "".join(rng.choice(NAME_ALPHABET) for _ in range(_RANDOM_LENGTH))
    return base[:_MAX_GENERATED_BASE] + suffix


def template_claim_base(pod_name: str, entry_name: str) -> str:
    """The generateName the claim controller uses for a template entry.

    Normally ``<pod>-<entry>-``. When that exceeds 57 characters both parts are
    cut in proportion to their length, so the entry name is not lost entirely;
    upstream then drops the trailing hyphen, and so do we.
    """
    base = f"{pod_name}-{entry_name}-"
    if len(base) <= _MAX_TEMPLATE_BASE:
        return base
    total = len(base)
    return (pod_name[: len(pod_name) * _MAX_TEMPLATE_BASE // total] + "-"
            + entry_name[: len(entry_name) * _MAX_TEMPLATE_BASE // total])


def _set_pod(cluster: ClusterState | None, info: PodInfo, pod: Pod) -> None:
    # Known pods are updated through the cluster; others (tests, what-ifs) in place.
    if cluster is not None and cluster.pods.get(info.key) is info:
        cluster.update_pod(info, pod)
    else:
        info.pod = pod


def ensure_pod_uid(info: PodInfo, rng: random.Random, cluster: ClusterState | None = None
                   ) -> str:
    """The pod's UID; a pod without one gets a UUID drawn from ``rng`` (the pod
    object in ``info`` is replaced)."""
    uid = info.pod.metadata.uid
    if uid:
        return uid
    uid = random_uid(rng)
    pod = info.pod
    _set_pod(cluster, info, replace(pod, metadata=replace(pod.metadata, uid=uid)))
    return uid


def pod_reference(pod: Pod) -> ResourceClaimConsumerReference:
    """The ``reservedFor`` entry naming ``pod``."""
    return ResourceClaimConsumerReference(resource="pods", name=pod.metadata.name or "",
                                          uid=pod.metadata.uid or "")


def is_controlled_by(claim: ResourceClaim, pod: Pod) -> bool:
    """Whether ``pod`` is the claim's controlling owner (matched by UID)."""
    uid = pod.metadata.uid
    return bool(uid) and any(ref.controller and ref.uid == uid
                             for ref in claim.metadata.owner_references)


def is_reserved_for(claim: ResourceClaim, uid: str | None) -> bool:
    return bool(uid) and any(r.uid == uid for r in claim.status.reserved_for)


def _status_entry(pod: Pod, entry: str) -> PodResourceClaimStatus | None:
    for status in pod.status.resource_claim_statuses:
        if status.name == entry:
            return status
    return None


def _claim_from_template(cluster: ClusterState, namespace: str, template_name: str,
                         base: str, annotation: tuple[str, str], owner: OwnerReference,
                         rng: random.Random) -> ResourceClaim | None:
    """A new claim from a template (None if the template is missing): a fresh name from
    ``base``, the template's labels and annotations plus ``annotation``, owned by
    ``owner`` (a pod or a PodGroup)."""
    template = cluster.template(namespace, template_name)
    if template is None:
        return None
    name = generate_name(base, rng)
    while object_key(namespace, name) in cluster.claims:
        name = generate_name(base, rng)
    annotations = dict(template.spec.metadata.annotations)
    annotations[annotation[0]] = annotation[1]
    return ResourceClaim(
        api_version=V1,
        kind="ResourceClaim",
        metadata=ObjectMeta(name=name, generate_name=base, namespace=namespace,
                            uid=random_uid(rng), creation_timestamp=cluster.clock.now(),
                            labels=dict(template.spec.metadata.labels),
                            annotations=annotations, owner_references=[owner]),
        # Specs are immutable: the template's is shared, not copied.
        spec=template.spec.spec,
    )


def _new_template_claim(cluster: ClusterState, pod: Pod, entry: PodResourceClaim,
                        template_name: str, rng: random.Random) -> ResourceClaim | None:
    # Exactly the reference the resourceclaim controller writes (kubernetes v1.36.2,
    # pkg/controller/resourceclaim/controller.go, handleClaim): controller, and no
    # blockOwnerDeletion.
    owner = OwnerReference(api_version="v1", kind="Pod", name=pod.metadata.name or "",
                           uid=pod.metadata.uid or "", controller=True)
    return _claim_from_template(
        cluster, pod.metadata.namespace or "default", template_name,
        template_claim_base(pod.metadata.name or "", entry.name),
        (POD_CLAIM_ANNOTATION, entry.name), owner, rng)


def _new_group_claim(cluster: ClusterState, group: PodGroup, entry: str, template_name: str,
                     rng: random.Random) -> ResourceClaim | None:
    """The claim of a PodGroup's template entry: like a pod's, but named after and
    owned by the group (KEP-5729), so it lives as long as the group."""
    owner = OwnerReference(api_version=group.api_version or group.API_VERSION, kind="PodGroup",
                           name=group.name, uid=group.metadata.uid or "", controller=True)
    return _claim_from_template(
        cluster, group.metadata.namespace or "default", template_name,
        template_claim_base(group.name, entry), (GROUP_CLAIM_ANNOTATION, entry), owner, rng)


def _group_claim_name(cluster: ClusterState, pod: Pod, entry: PodResourceClaim,
                      rng: random.Random) -> str | bool | None:
    """For an entry that stands for its PodGroup's claim (DRAWorkloadResourceClaims):
    the name of the group's claim, generated on first use (None: its template is
    missing). False: the entry is the pod's own."""
    found = group_claim_entry(cluster, pod, entry)
    if found is None:
        return False
    group, group_entry = found
    key = group_claim_key(cluster, group, group_entry)
    if key is not None:
        return key.partition("/")[2]
    template_name = group_entry.resource_claim_template_name
    claim = _new_group_claim(cluster, group, group_entry.name, template_name or "", rng)
    if claim is None:
        return None
    cluster.add_claim(claim)
    return claim.metadata.name


def ensure_pod_claims(cluster: ClusterState, info: PodInfo, rng: random.Random) -> PodInfo:
    """Create the claims of ``info``'s template entries, as the resource-claim controller does.

    For every ``spec.resourceClaims[]`` entry with ``resourceClaimTemplateName``
    and no claim yet, a claim is generated from the template (spec shared,
    template labels and annotations copied, ``pod-claim-name`` annotation, the
    pod as controlling owner) and added to ``cluster``; the pod gets a
    ``status.resourceClaimStatuses`` entry for it. A pod without UID gets one.

    Idempotent: entries whose recorded claim exists are left alone. An entry
    whose template is missing gets nothing, so the pod keeps waiting (see
    ``resolve_pod_claims``). An entry whose recorded claim has disappeared (the
    pod was released and re-queued) gets a fresh claim. Returns ``info``, whose
    ``pod`` was replaced if anything changed.
    """
    pod = info.pod
    entries = pod.spec.resource_claims
    if not entries:
        return info
    namespace = pod.metadata.namespace or "default"
    statuses = list(pod.status.resource_claim_statuses)
    changed = False
    for entry in entries:
        template_name = entry.resource_claim_template_name
        if entry.resource_claim_name is not None or template_name is None:
            continue
        current = _status_entry(pod, entry.name)
        if current is not None and (current.resource_claim_name is None or object_key(
                namespace, current.resource_claim_name) in cluster.claims):
            continue
        ensure_pod_uid(info, rng, cluster)
        pod = info.pod
        claim_name = _group_claim_name(cluster, pod, entry, rng)
        if claim_name is None:
            continue
        if claim_name is False:
            claim = _new_template_claim(cluster, pod, entry, template_name, rng)
            if claim is None:
                continue
            cluster.add_claim(claim)
            claim_name = claim.metadata.name
        fresh = PodResourceClaimStatus(name=entry.name, resource_claim_name=str(claim_name))
        statuses = [s for s in statuses if s.name != entry.name] + [fresh]
        changed = True
    if changed:
        _set_pod(cluster, info,
                 replace(pod, status=replace(pod.status, resource_claim_statuses=statuses)))
    return info


@dataclass(frozen=True, slots=True)
class PodClaims:
    """The claims a pod uses, in ``spec.resourceClaims`` order, each claim once.

    ``keys[i]`` is the ``ClusterState.claims`` key of ``claims[i]``.
    """

    keys: tuple[str, ...]
    claims: tuple[ResourceClaim, ...]


def _entry_claim_name(pod: Pod, entry: PodResourceClaim) -> tuple[str | None, bool, str | None]:
    """(claim name, must check owner, wait reason) for one pod claim entry.

    Mirrors upstream's name lookup: a direct name is used as is; a template
    entry needs its status entry (no entry: the claim is not created yet; an
    entry without name: intentionally no claim, skip it).
    """
    if entry.resource_claim_name is not None:
        return entry.resource_claim_name, False, None
    if entry.resource_claim_template_name is not None:
        status = _status_entry(pod, entry.name)
        if status is None:
            return None, False, f'pod "{key_of(pod)}": ResourceClaim not created yet'
        return status.resource_claim_name, True, None
    return None, False, (f'pod "{key_of(pod)}", '
                         f'spec.resourceClaim "{entry.name}": none of the supported fields '
                         f"are set")


def pod_claim_keys(pod: Pod) -> Iterator[str]:
    """Keys of every claim ``pod`` names (entries and the extended-resource claim),
    each once, whether the claim exists or not."""
    namespace = pod.metadata.namespace or "default"
    seen: set[str] = set()
    for entry in pod.spec.resource_claims:
        name, _, _ = _entry_claim_name(pod, entry)
        if name is None:
            continue
        key = object_key(namespace, name)
        if key not in seen:
            seen.add(key)
            yield key
    extended = pod.status.extended_resource_claim_status
    if extended is not None and extended.resource_claim_name:
        key = object_key(namespace, extended.resource_claim_name)
        if key not in seen:
            yield key


def resolve_pod_claims(cluster: ClusterState, pod: Pod) -> PodClaims | str:
    """The claims of ``pod``'s ``spec.resourceClaims`` or, if one is not usable
    yet, the reason (upstream's wording): not created yet, not found, being
    deleted, or generated for another pod. Pure.

    A claim named by two entries is listed once (allocating it twice would
    double-book its devices).
    """
    namespace = pod.metadata.namespace or "default"
    keys: list[str] = []
    claims: list[ResourceClaim] = []
    for entry in pod.spec.resource_claims:
        name, check_owner, reason = _entry_claim_name(pod, entry)
        if reason is not None:
            return reason
        if name is None:
            continue
        key = object_key(namespace, name)
        if key in keys:
            continue
        claim = cluster.claims.get(key)
        if claim is None:
            return f'resourceclaim.resource.k8s.io "{name}" not found'
        if claim.metadata.deletion_timestamp is not None:
            return f'resourceclaim "{name}" is being deleted'
        if check_owner and not is_controlled_by(claim, pod) and \
                not _is_group_claim(cluster, claim, pod):
            return (f"ResourceClaim {namespace}/{name} was not created for pod "
                    f"{namespace}/{pod.metadata.name} (pod is not owner)")
        keys.append(key)
        claims.append(claim)
    return PodClaims(tuple(keys), tuple(claims))


def _is_group_claim(cluster: ClusterState, claim: ResourceClaim, pod: Pod) -> bool:
    group = pod_group_of(cluster, pod)
    return group is not None and is_group_claim_of(claim, group)


def claim_consumer(cluster: ClusterState, key: str, pod: Pod) -> ResourceClaimConsumerReference:
    """Who ``pod`` uses the claim ``key`` as: its PodGroup when one of its entries
    stands for the group's claim (DRAWorkloadResourceClaims), else the pod itself."""
    for entry in pod.spec.resource_claims:
        found = group_claim_entry(cluster, pod, entry)
        if found is not None and group_claim_key(cluster, *found) == key:
            return group_reference(found[0])
    return pod_reference(pod)


def add_consumer(claim: ResourceClaim, pod: Pod | ResourceClaimConsumerReference
                 ) -> ResourceClaim:
    """``claim`` with ``pod`` (or the consumer reference given) in ``reservedFor``
    (unchanged if already there)."""
    ref = pod if isinstance(pod, ResourceClaimConsumerReference) else pod_reference(pod)
    if is_reserved_for(claim, ref.uid):
        return claim
    reserved = [*claim.status.reserved_for, ref]
    return replace(claim, status=replace(claim.status, reserved_for=reserved))


def remove_consumer(claim: ResourceClaim, uid: str) -> ResourceClaim:
    """``claim`` without the consumer ``uid`` (unchanged if it is not one)."""
    if not is_reserved_for(claim, uid):
        return claim
    reserved = [r for r in claim.status.reserved_for if r.uid != uid]
    return replace(claim, status=replace(claim.status, reserved_for=reserved))


def deallocate(claim: ResourceClaim) -> ResourceClaim:
    """``claim`` without allocation, consumers, device status or delete-protection
    finalizer: what the controller writes once nobody uses the claim."""
    finalizers = [f for f in claim.metadata.finalizers if f != DELETE_PROTECTION_FINALIZER]
    metadata = claim.metadata
    if len(finalizers) != len(metadata.finalizers):
        metadata = replace(metadata, finalizers=finalizers)
    return replace(claim, metadata=metadata, status=ResourceClaimStatus())


def release_pod_claims(cluster: ClusterState, info: PodInfo) -> None:
    """The pod ``info`` is gone (finished or preempted): release its claims.

    For every claim the pod names: claims it controls (generated from a
    template, the extended-resource claim) are deleted; on any other claim the
    pod is removed from ``reservedFor`` and, if no consumer is left, the claim is
    deallocated. All through ``cluster.add_claim``/``remove_claim``, so the
    devices are free for the next pod. The pod's status entries for deleted
    claims are dropped, so a re-queued pod gets fresh claims.

    Only claims the pod names are visited (upstream's controller scans all
    claims); a pod listed in ``reservedFor`` of a claim it does not name is not
    found. Safe to call any number of times.
    """
    pod = info.pod
    uid = pod.metadata.uid or ""
    deleted: set[str] = set()
    for key in list(pod_claim_keys(pod)):
        claim = cluster.claims.get(key)
        if claim is None:
            continue
        if is_controlled_by(claim, pod):
            cluster.remove_claim(key)
            deleted.add(claim.metadata.name or "")
            continue
        updated = remove_consumer(claim, uid) if uid else claim
        if updated.status.allocation is not None and not updated.status.reserved_for:
            updated = deallocate(updated)
        if updated is not claim:
            cluster.add_claim(updated)
    status = pod.status
    kept = [s for s in status.resource_claim_statuses if s.resource_claim_name not in deleted]
    extended = status.extended_resource_claim_status
    if extended is not None and extended.resource_claim_name in deleted:
        extended = None
    if len(kept) != len(status.resource_claim_statuses) or \
            extended is not status.extended_resource_claim_status:
        _set_pod(cluster, info, replace(pod, status=replace(
            status, resource_claim_statuses=kept, extended_resource_claim_status=extended)))


def delete_pod(cluster: ClusterState, key: str) -> PodInfo | None:
    """Delete the pod ``key`` (finished, preempted, its node gone) and release its
    claims (``release_pod_claims``); None if there is no such pod."""
    info = cluster.remove_pod(key)
    if info is None:
        return None
    if info.pod.spec.resource_claims or info.pod.status.extended_resource_claim_status is not None:
        release_pod_claims(cluster, info)
    return info
