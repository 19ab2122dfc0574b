"""NodeVolumeLimits, ported from upstream's tables: one test per upstream case.

kubernetes v1.36.2, pkg/scheduler/framework/plugins/nodevolumelimits/csi_test.go:

* TestCSILimits, every case under its upstream name: PreFilter, then (unless it answers
  Skip) Filter on node "node-for-max-pd-test-1", as upstream's loop does. The fixtures are
  in nodevolumelimits_cases.py.
* TestCSILimitsQHint, TestCSILimitsAddedPVCQHint, TestCSILimitsDeletedVolumeAttachmentQHint
  and TestCSILimitsAfterCSINodeUpdatedQHint: the answers of upstream's queueing hints, from
  nodevolumelimits_hints. Only the pod-deleted hint's node test is wired into dralab's queue
  (its store raises no events for volume objects and its pod-deleted event does not carry
  the pod); the others are checked as the decisions they are.
* TestVolumeLimitScalingGate, every case: the alpha gate VolumeLimitScaling and the
  CSIDriver objects it reads.

Differences: a missing claim reads ``persistentvolumeclaim "abc-xyz" not found`` where the
upstream cases say ``persistentvolumeclaims``: upstream's fake lister
(pkg/scheduler/testing/framework/fake_listers.go, PersistentVolumeClaimLister.Get) words it
with the plural resource; the informer lister a running kube-scheduler reads
(client-go listers/core/v1/persistentvolumeclaim.go) uses the singular, which dralab follows.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from dralab.api.codec import decode
from dralab.api.features import FeatureGates
from dralab.api.storage import CSINode, PersistentVolumeClaim, VolumeAttachment
from dralab.cluster import PodInfo
from dralab.scheduler.framework import CycleState, Handle
from dralab.scheduler.plugins.nodevolumelimits import ERR_REASON_MAX_VOLUME_COUNT, NodeVolumeLimits
from dralab.scheduler.plugins.nodevolumelimits_hints import (
    added_claim_may_help,
    csi_node_update_may_help,
    deleted_attachment_may_help,
    deleted_pod_may_help,
)

from . import nodevolumelimits_cases as fx
from .volumeupstream import handle, make_node, shape

EBS, GCE, EBS_IN_TREE, HOSTPATH = fx.EBS, fx.GCE, fx.EBS_IN_TREE, fx.HOSTPATH_IN_TREE
EXCEEDED = ("Unschedulable", (ERR_REASON_MAX_VOLUME_COUNT,))
SKIP = ("Skip", ())
MISSING = ("UnschedulableAndUnresolvable",
           ('looking up PVC test/abc-xyz: persistentvolumeclaim "abc-xyz" not found',))
NOT_OWNED = ("Error", ("PVC test/abc-xyz was not created for pod test/abc (pod is not owner)",))
CLAIM = fx.ephemeral_claim("ephemeralVolumePod", "xyz")
CONFLICTING = fx.ephemeral_claim("ephemeralVolumePod", "xyz", owned=False)
CLAIM_X = fx.ephemeral_claim("ephemeralTwoVolumePod", "x")
CLAIM_Y = fx.ephemeral_claim("ephemeralTwoVolumePod", "y")


def case(test: str, new_pod: str, *, drivers: tuple[str, ...], existing: tuple[str, ...] = (),
         max_vols: int = 0, limit_source: str = "", va_count: int = 0,
         extra_claims: tuple[dict[str, Any], ...] = (), want: Any = None,
         want_pre: Any = None) -> Any:
    """One element of upstream's table (filterName is "csi" in every case; migrationEnabled
    and ephemeralEnabled are not read by the code under test since both became GA)."""
    return pytest.param(new_pod, existing, drivers, max_vols, limit_source, va_count,
                        extra_claims, want_pre, want, id=test)


IN_TREE = (EBS_IN_TREE, EBS)
TEST_CSI_LIMITS = [
    case("should count VolumeAttachments towards volume limit when no pods exist",
         "csiEBSOneVolPod", max_vols=2, drivers=(EBS,), va_count=2, limit_source="csinode",
         want=EXCEEDED),
    case("should schedule pod when VolumeAttachments count does not exceed limit",
         "csiEBSOneVolPod", max_vols=2, drivers=(EBS,), va_count=1, limit_source="csinode"),
    case("fits when node volume limit >= new pods CSI volume", "csiEBSOneVolPod",
         existing=("runningPod", "csiEBSTwoVolPod"), max_vols=4, drivers=(EBS,),
         limit_source="csinode"),
    case("doesn't when node volume limit <= pods CSI volume", "csiEBSOneVolPod",
         existing=("runningPod", "csiEBSTwoVolPod"), max_vols=2, drivers=(EBS,),
         limit_source="csinode", want=EXCEEDED),
    case("should when driver does not support volume limits", "csiEBSOneVolPod",
         existing=("runningPod", "csiEBSTwoVolPod"), max_vols=2, drivers=(EBS,),
         limit_source="csinode-with-no-limit"),
    case("count pending PVCs towards volume limit <= pods CSI volume", "csiEBSOneVolPod",
         existing=("pendingVolumePod", "csiEBSTwoVolPod"), max_vols=2, drivers=(EBS,),
         limit_source="csinode", want=EXCEEDED),
    case("count multiple pending pvcs towards volume limit >= pods CSI volume",
         "csiEBSOneVolPod", existing=("pendingVolumePod", "unboundPVCPod2", "csiEBSTwoVolPod"),
         max_vols=4, drivers=(EBS,), limit_source="csinode"),
    case("should count PVCs with invalid PV name but valid SC", "csiEBSOneVolPod",
         existing=("missingPVPod", "csiEBSTwoVolPod"), max_vols=2, drivers=(EBS,),
         limit_source="csinode", want=EXCEEDED),
    case("don't count pvcs with missing SC towards volume limit", "csiEBSOneVolPod",
         existing=("runningPod", "noSCPVCPod"), max_vols=2, drivers=(EBS,),
         limit_source="csinode"),
    case("count pvcs with the same type towards volume limit", "csiEBSOneVolPod",
         existing=("gceTwoVolPod", "csiEBSTwoVolPod"), max_vols=2, drivers=(EBS, GCE),
         limit_source="csinode", want=EXCEEDED),
    case("don't count pvcs with different type towards volume limit", "gceTwoVolPod",
         existing=("csiEBSTwoVolPod", "runningPod"), max_vols=2, drivers=(EBS, GCE),
         limit_source="csinode"),
    case("should count in-tree volumes if migration is enabled", "inTreeOneVolPod",
         existing=("inTreeTwoVolPod",), max_vols=2, drivers=IN_TREE, limit_source="csinode",
         want=EXCEEDED),
    case("nil csi node", "inTreeInlineVolPod", existing=("inTreeTwoVolPod",), drivers=IN_TREE),
    case("should count unbound in-tree volumes if migration is enabled", "pendingVolumePod",
         existing=("inTreeTwoVolPod",), max_vols=2, drivers=IN_TREE, limit_source="csinode",
         want=EXCEEDED),
    case("should not limit pod if volume used does not report limits", "inTreeOneVolPod",
         existing=("inTreeTwoVolPod",), max_vols=2, drivers=IN_TREE,
         limit_source="csinode-with-no-limit"),
    case("should not count non-migratable in-tree volumes", "inTreeNonMigratableOneVolPod",
         existing=("csiEBSTwoVolPod",), max_vols=2, drivers=(HOSTPATH, EBS),
         limit_source="csinode"),
    case("should count in-tree inline volumes if migration is enabled", "inTreeInlineVolPod",
         existing=("inTreeTwoVolPod",), max_vols=2, drivers=IN_TREE, limit_source="csinode",
         want=EXCEEDED),
    case("should count in-tree and csi volumes if migration is enabled (when scheduling "
         "in-tree volumes)", "inTreeOneVolPod", existing=("csiEBSTwoVolPod",), max_vols=2,
         drivers=IN_TREE, limit_source="csinode", want=EXCEEDED),
    case("should count in-tree, inline and csi volumes if migration is enabled (when "
         "scheduling in-tree volumes)", "inTreeInlineVolPod",
         existing=("csiEBSTwoVolPod", "inTreeOneVolPod"), max_vols=3, drivers=IN_TREE,
         limit_source="csinode", want=EXCEEDED),
    case("should not count in-tree, inline and csi volumes if migration is enabled (when "
         "scheduling in-tree volumes)", "inTreeInlineVolPodWithSameCSIVolumeID",
         existing=("csiEBSTwoVolPod", "inTreeOneVolPod"), max_vols=3, drivers=IN_TREE,
         limit_source="csinode"),
    case("should count in-tree and csi volumes if migration is enabled (when scheduling csi "
         "volumes)", "csiEBSOneVolPod", existing=("inTreeTwoVolPod",), max_vols=2,
         drivers=IN_TREE, limit_source="csinode", want=EXCEEDED),
    case("ephemeral volume missing", "ephemeralVolumePod", drivers=(EBS,),
         limit_source="csinode-with-no-limit", want=MISSING),
    case("ephemeral volume not owned", "ephemeralVolumePod", extra_claims=(CONFLICTING,),
         drivers=(EBS,), limit_source="csinode-with-no-limit", want=NOT_OWNED),
    case("ephemeral volume unbound", "ephemeralVolumePod", extra_claims=(CLAIM,),
         drivers=(EBS,), limit_source="csinode-with-no-limit"),
    case("ephemeral doesn't when node volume limit <= pods CSI volume", "ephemeralVolumePod",
         extra_claims=(CLAIM,), drivers=(EBS,), existing=("runningPod", "csiEBSTwoVolPod"),
         max_vols=2, limit_source="csinode", want=EXCEEDED),
    case("ephemeral doesn't when node volume limit <= pods ephemeral CSI volume",
         "csiEBSOneVolPod", extra_claims=(CLAIM_X, CLAIM_Y), drivers=(EBS,),
         existing=("runningPod", "ephemeralTwoVolumePod"), max_vols=2, limit_source="csinode",
         want=EXCEEDED),
    case("persistent doesn't when node volume limit <= pods ephemeral CSI volume + persistent "
         "volume, ephemeral disabled", "csiEBSOneVolPod", extra_claims=(CLAIM,),
         drivers=(EBS,), existing=("runningPod", "ephemeralVolumePod", "csiEBSTwoVolPod"),
         max_vols=3, limit_source="csinode", want=EXCEEDED),
    case("persistent doesn't when node volume limit <= pods ephemeral CSI volume + persistent "
         "volume", "csiEBSOneVolPod", extra_claims=(CLAIM,), drivers=(EBS,),
         existing=("runningPod", "ephemeralVolumePod", "csiEBSTwoVolPod"), max_vols=3,
         limit_source="csinode", want=EXCEEDED),
    case("persistent okay when node volume limit > pods ephemeral CSI volume + persistent "
         "volume", "csiEBSOneVolPod", extra_claims=(CLAIM,), drivers=(EBS,),
         existing=("runningPod", "ephemeralVolumePod", "csiEBSTwoVolPod"), max_vols=5,
         limit_source="csinode"),
    case("skip Filter when the pod only uses secrets and configmaps",
         "onlyConfigmapAndSecretVolPod", max_vols=2, drivers=(EBS,), limit_source="csinode",
         want_pre=SKIP),
    case("don't skip Filter when the pod has pvcs", "pvcPodWithConfigmapAndSecret",
         max_vols=2, drivers=(EBS,), limit_source="csinode"),
    case("don't skip Filter when the pod has ephemeral volumes",
         "ephemeralPodWithConfigmapAndSecret", drivers=(EBS,),
         limit_source="csinode-with-no-limit", want=MISSING),
    case("don't skip Filter when the pod has inline migratable volumes",
         "inlineMigratablePodWithConfigmapAndSecret", existing=("inTreeTwoVolPod",),
         max_vols=2, drivers=IN_TREE, limit_source="csinode", want=EXCEEDED),
]


@pytest.mark.parametrize(("new_pod", "existing", "drivers", "max_vols", "limit_source",
                          "va_count", "extra_claims", "want_pre", "want"), TEST_CSI_LIMITS)
def test_csi_limits(new_pod: str, existing: tuple[str, ...], drivers: tuple[str, ...],
                    max_vols: int, limit_source: str, va_count: int,
                    extra_claims: tuple[dict[str, Any], ...], want_pre: Any, want: Any) -> None:
    cluster = fx.cluster(drivers=drivers, limit_source=limit_source, max_vols=max_vols,
                         existing=existing, extra_claims=extra_claims, va_count=va_count)
    plugin = NodeVolumeLimits(handle(cluster))
    state = CycleState()
    info = PodInfo(fx.pod(new_pod))
    _, pre = plugin.pre_filter(state, info, cluster)
    assert shape(pre) == want_pre
    if shape(pre) != SKIP:
        assert shape(plugin.filter(state, info, cluster.nodes[fx.NODE])) == want


def test_pod_on_a_node_without_csinode_then_with_one() -> None:
    """Not upstream's table: one cycle state answers per node, migrated volumes counting
    only where the node has a CSINode (upstream works them out in Filter, node by node)."""
    cluster = fx.cluster(drivers=IN_TREE, limit_source="csinode", max_vols=2,
                         existing=("inTreeTwoVolPod",))
    cluster.add_node(make_node("node-without-csinode"))
    cluster.add_pod(fx.pod("inTreeTwoVolPod", "node-without-csinode", name="other"))
    plugin = NodeVolumeLimits(handle(cluster))
    state = CycleState()
    info = PodInfo(fx.pod("inTreeInlineVolPod"))
    plugin.pre_filter(state, info, cluster)
    assert shape(plugin.filter(state, info, cluster.nodes["node-without-csinode"])) is None
    assert shape(plugin.filter(state, info, cluster.nodes[fx.NODE])) == EXCEEDED


# --- queueing hints ------------------------------------------------------------------------

def _st_pod(namespace: str = "", name: str = "", volumes: list[dict[str, Any]] | None = None,
            node_name: str = "") -> Any:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "pause"}],
                            "volumes": volumes or []}
    if node_name:
        spec["nodeName"] = node_name
    return decode({"apiVersion": "v1", "kind": "Pod",
                   "metadata": {"name": name or "p", "namespace": namespace or "default"},
                   "spec": spec})


def _pvc_named(name: str, namespace: str, volume_name: str = "") -> PersistentVolumeClaim:
    made = decode({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                   "metadata": {"name": name, "namespace": namespace},
                   "spec": {"volumeName": volume_name} if volume_name else {}})
    assert isinstance(made, PersistentVolumeClaim)
    return made


_PLACEHOLDER = [{"name": "placeholder", "persistentVolumeClaim": {"claimName": "placeholder"}}]


@pytest.mark.parametrize(("deleted_volumes", "scheduled", "want"), [
    pytest.param(_PLACEHOLDER, True, True, id="return a Queue when a deleted pod has a PVC"),
    pytest.param([{"name": "", "awsElasticBlockStore": {}}], True, True,
                 id="return a Queue when a deleted pod has a inline migratable volume"),
    pytest.param([], True, False,
                 id="return a QueueSkip when a deleted pod doesn't have any volume"),
    pytest.param([{"name": f"csi-{EBS}-0", "persistentVolumeClaim": {
        "claimName": f"csi-{EBS}-0"}}], False, False,
                 id="return a QueueSkip when a deleted pod is not scheduled."),
])
def test_csi_limits_qhint(deleted_volumes: list[dict[str, Any]], scheduled: bool,
                          want: bool) -> None:
    """TestCSILimitsQHint (isSchedulableAfterPodDeleted)."""
    deleted = _st_pod(volumes=deleted_volumes, node_name=fx.NODE if scheduled else "")
    assert deleted_pod_may_help(deleted) is want


def _pvc_volume(claim: str, name: str = "") -> dict[str, Any]:
    return {"name": name, "persistentVolumeClaim": {"claimName": claim}}


@pytest.mark.parametrize(("pod", "added", "want"), [
    pytest.param(("ns1", "", []), ("", "ns2"), False,
                 id="a pod isn't in the same namespace as an added PVC"),
    pytest.param(("ns1", "", [_pvc_volume("pvc1")]), ("pvc1", "ns1"), True,
                 id="a pod is in the same namespace as an added PVC"),
    pytest.param(("ns1", "pod1", [{"name": "ephemeral", "ephemeral": {}}]),
                 ("pod1-ephemeral", "ns1"), True,
                 id="a pod has an ephemeral volume related to an added PVC"),
    pytest.param(("ns1", "", [_pvc_volume("pvc1")]), ("pvc2", "ns1"), False,
                 id="a pod doesn't have the same PVC as an added PVC"),
    pytest.param(("ns1", "", []), ("pvc2", "ns1"), False,
                 id="a pod doesn't have any PVC attached"),
])
def test_csi_limits_added_pvc_qhint(pod: tuple[str, str, list[dict[str, Any]]],
                                    added: tuple[str, str], want: bool) -> None:
    """TestCSILimitsAddedPVCQHint (isSchedulableAfterPVCAdded). st.MakePersistentVolumeClaim
    without Name is named "" upstream; here "unnamed" (dralab's objects are named)."""
    namespace, name, volumes = pod
    claim = _pvc_named(added[0] or "unnamed", added[1])
    assert added_claim_may_help(PodInfo(_st_pod(namespace, name, volumes)), claim) is want


def _va(attacher: str, pv: str | None = None, inline_driver: str | None = None
        ) -> VolumeAttachment:
    source: dict[str, Any] = {}
    if pv is not None:
        source["persistentVolumeName"] = pv
    if inline_driver is not None:
        source["inlineVolumeSpec"] = {"csi": {"driver": inline_driver}}
    made = decode({"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment",
                   "metadata": {"name": "volumeattachment1"},
                   "spec": {"nodeName": "fake-node", "attacher": attacher, "source": source}})
    assert isinstance(made, VolumeAttachment)
    return made


_EBS_TEST = {"name": "", "awsElasticBlockStore": {"volumeID": "test"}}
_GCE_TEST = {"name": "", "gcePersistentDisk": {"pdName": "test"}}
_GKE = "test.storage.gke.io"


@pytest.mark.parametrize(("volumes", "va", "want"), [
    pytest.param([_pvc_volume("pvc1")], _va(_GKE, pv="pv1"), True,
                 id="a pod has PVC when VolumeAttachment is deleting"),
    pytest.param([_EBS_TEST], _va(EBS, inline_driver=EBS), True,
                 id="a pod has an Inline Migratable volume (AWSEBSDriver) when "
                    "VolumeAttachment (AWSEBSDriver) is deleting (match)"),
    pytest.param([_GCE_TEST], _va(EBS, inline_driver=EBS), False,
                 id="a pod has an Inline Migratable volume (GCEPDDriver) when "
                    "VolumeAttachment (AWSEBSDriver) is deleting (no match)"),
    pytest.param([_EBS_TEST, _pvc_volume("pvc1")], _va(EBS, inline_driver=EBS), True,
                 id="a pod has an Inline Migratable volume (AWSEBSDriver) and PVC when "
                    "VolumeAttachment (AWSEBSDriver) is deleting"),
    pytest.param([_EBS_TEST, _pvc_volume("pvc1")], _va(_GKE, pv="pv1"), True,
                 id="a pod has an Inline Migratable volume (AWSEBSDriver) and PVC when "
                    "VolumeAttachment (AWSEBSDriver)  is deleting"),
    pytest.param([], _va(_GKE, pv="pv1"), False,
                 id="a pod has no PVC when VolumeAttachment is deleting"),
])
def test_csi_limits_deleted_volume_attachment_qhint(
        volumes: list[dict[str, Any]], va: VolumeAttachment, want: bool) -> None:
    """TestCSILimitsDeletedVolumeAttachmentQHint (isSchedulableAfterVolumeAttachmentDeleted).
    Upstream's cases also give a claim lister holding pvc1; the hint reads no claim."""
    assert deleted_attachment_may_help(PodInfo(_st_pod("ns1", "", volumes)), va) is want


def _csi_node(count: int) -> CSINode:
    made = decode({"apiVersion": "storage.k8s.io/v1", "kind": "CSINode",
                   "metadata": {"name": "test-node"},
                   "spec": {"drivers": [{"name": EBS, "nodeID": "test-node",
                                         "allocatable": {"count": count}}]}})
    assert isinstance(made, CSINode)
    return made


@pytest.mark.parametrize(("old", "new", "want"), [
    pytest.param(1, 2, True, id="limit raised, queue"),
    pytest.param(2, 1, False, id="limit decreased, skip queueing"),
    pytest.param(1, 1, False, id="limit unchanged, skip queueing"),
])
def test_csi_limits_after_csi_node_updated_qhint(old: int, new: int, want: bool) -> None:
    """TestCSILimitsAfterCSINodeUpdatedQHint (isSchedulableAfterCSINodeUpdated)."""
    assert csi_node_update_may_help(_csi_node(old), _csi_node(new)) is want


def _csi_driver(prevent: bool) -> dict[str, Any]:
    """getFakeCSIDriverLister / getFakeCSIDriverListerWithPreventPodSchedulingIfMissing."""
    spec = {"preventPodSchedulingIfMissing": True} if prevent else {}
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": EBS},
            "spec": spec}


@pytest.mark.parametrize(("gate", "limit_source", "limit", "driver_present", "prevent", "want"), [
    pytest.param(True, "no-csi-driver", 0, True, False, None,
                 id="gate enabled - allow scheduling when CSIDriver exists but "
                    "PreventPodSchedulingIfMissing is not set"),
    pytest.param(True, "no-csi-driver", 0, True, True,
                 ("Unschedulable", (f"{EBS} CSI driver is not installed on the node",)),
                 id="gate enabled - fail when driver not installed and "
                    "PreventPodSchedulingIfMissing is true"),
    pytest.param(False, "no-csi-driver", 0, True, True, None,
                 id="gate disabled - skip driver presence check (regardless of CSIDriver "
                    "presence)"),
    pytest.param(True, "csinode", 2, True, True, None,
                 id="gate enabled - driver installed within limit"),
    pytest.param(True, "no-csi-driver", 0, False, False, None,
                 id="gate enabled - allow scheduling when CSIDriver object missing"),
])
def test_volume_limit_scaling_gate(gate: bool, limit_source: str, limit: int,
                                   driver_present: bool, prevent: bool, want: Any) -> None:
    """TestVolumeLimitScalingGate: the plugin made by create() from a profile whose gate
    VolumeLimitScaling is as the case says."""
    cluster = fx.cluster(drivers=(EBS,), limit_source=limit_source, max_vols=limit)
    if driver_present:
        cluster.put_volume_object(decode(_csi_driver(prevent)))  # type: ignore[arg-type]
    gates = FeatureGates().with_overrides({"VolumeLimitScaling": gate})
    plugin = NodeVolumeLimits.create({}, Handle(cluster, gates, random.Random(0), "s"))
    state = CycleState()
    info = PodInfo(fx.pod("csiEBSOneVolPod"))
    _, pre = plugin.pre_filter(state, info, cluster)
    assert shape(pre) is None  # upstream: "Ensure PreFilter doesn't skip"
    assert shape(plugin.filter(state, info, cluster.nodes[fx.NODE])) == want
