"""What a scheduling run writes into pods and claims, compared with what the real
API server, kube-scheduler and resourceclaim controller (v1.36.2) write when no
kubelet runs:

* pods and claims created by the run: creationTimestamp; pods also generation 1,
  phase Pending, qosClass (pkg/registry/core/pod/strategy.go,
  podStrategy.PrepareForCreate);
* bound pods: PodScheduled=True with lastTransitionTime and no observedGeneration
  (pkg/registry/core/pod/storage/storage.go, BindingREST.setPodNodeAndMetadata);
  no nominatedNodeName (ClearingNominatedNodeNameAfterBinding, on since 1.35);
* pending pods: PodScheduled=False, reason Unschedulable, the full message,
  lastTransitionTime and observedGeneration (pkg/scheduler/schedule_one.go,
  handleSchedulingFailure; PodObservedGenerationTracking is locked on since 1.35);
* preemption victims: DisruptionTarget with observedGeneration
  (pkg/scheduler/framework/preemption/executor.go), then a graceful delete
  (deletionTimestamp = now + grace period, generation + 1);
* claims: status.allocation.allocationTimestamp with DRADeviceBindingConditions and
  DRAResourceClaimDeviceStatus on, their default
  (pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go, bindClaim);
  reservedFor entries with resource "pods", name and uid, no apiGroup;
  resourceClaimStatuses name + resourceClaimName for template claims only.

Times come from the run's clock: the newest creationTimestamp of the input.
"""

from __future__ import annotations

from typing import Any

from dralab.api.codec import decode, encode
from dralab.api.features import FeatureGates
from dralab.scheduler import schedule

NS = "ml"
MOMENT = "2026-11-20T08:05:00Z"
DRIVER = "gpu.example.com"


def _docs(gpus: int = 2, pods: int = 2, *, shared: bool = False) -> list[dict[str, Any]]:
    nodes = [{"apiVersion": "v1", "kind": "Node",
              "metadata": {"name": "gpu-node-1", "creationTimestamp": "2026-11-20T08:00:00Z",
                           "labels": {"kubernetes.io/hostname": "gpu-node-1"}},
              "status": {"allocatable": {"cpu": "32", "memory": "256Gi", "pods": "110"}}}]
    devices = [{"name": f"gpu-{i}", "attributes": {"index": {"int": i}}} for i in range(gpus)]
    docs: list[dict[str, Any]] = [
        *nodes,
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
         "metadata": {"name": DRIVER},
         "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
         "metadata": {"name": "gpu-node-1-gpus"},
         "spec": {"driver": DRIVER, "nodeName": "gpu-node-1",
                  "pool": {"name": "gpu-node-1", "generation": 1, "resourceSliceCount": 1},
                  "devices": devices}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
         "metadata": {"name": "one-gpu", "namespace": NS,
                      "creationTimestamp": MOMENT},
         "spec": {"spec": {"devices": {"requests": [
             {"name": "gpu", "exactly": {"deviceClassName": DRIVER}}]}}}},
    ]
    if shared:
        docs.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                     "metadata": {"name": "shared", "namespace": NS},
                     "spec": {"devices": {"requests": [
                         {"name": "gpu", "exactly": {"deviceClassName": DRIVER}}]}}})
    for i in range(pods):
        claim = {"name": "gpu", "resourceClaimName": "shared"} if shared else \
            {"name": "gpu", "resourceClaimTemplateName": "one-gpu"}
        docs.append({"apiVersion": "v1", "kind": "Pod",
                     "metadata": {"name": f"train-{i}", "namespace": NS},
                     "spec": {"containers": [{"name": "main", "image": "train:1",
                                              "resources": {"requests": {"cpu": "4"},
                                                            "claims": [{"name": "gpu"}]}}],
                              "resourceClaims": [claim]}})
    return docs


def _run(docs: list[dict[str, Any]], gates: FeatureGates | None = None,
         ) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
    result = schedule([decode(d) for d in docs], features=gates)
    pods = {p.metadata.name or "": encode(p) for p in result.pods}
    claims = {c.metadata.name or "": encode(c) for c in result.claims}
    return pods, claims


def test_bound_pod_and_its_template_claim() -> None:
    pods, claims = _run(_docs(gpus=1, pods=1))
    pod = pods["train-0"]
    assert pod["metadata"]["generation"] == 1
    assert pod["metadata"]["creationTimestamp"] == MOMENT
    claim_name = pod["status"]["resourceClaimStatuses"][0]["resourceClaimName"]
    assert pod["status"] == {
        "phase": "Pending", "qosClass": "Burstable",
        "conditions": [{"type": "PodScheduled", "status": "True",
                        "lastTransitionTime": MOMENT}],
        "resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": claim_name}]}
    claim = claims[claim_name]
    assert claim["metadata"]["creationTimestamp"] == MOMENT
    assert claim["status"]["allocation"]["allocationTimestamp"] == MOMENT
    assert claim["status"]["reservedFor"] == [
        {"resource": "pods", "name": "train-0", "uid": pod["metadata"]["uid"]}]


def test_pending_pod_condition_has_observed_generation_and_time() -> None:
    pods, _ = _run(_docs(gpus=1, pods=2))
    pending = pods["train-1"]
    assert pending["status"]["phase"] == "Pending"
    assert pending["status"]["conditions"] == [{
        "type": "PodScheduled", "status": "False", "reason": "Unschedulable",
        "message": "0/1 nodes are available: 1 cannot allocate all claims. still not "
                   "schedulable, preemption: 0/1 nodes are available: 1 Preemption is not "
                   "helpful for scheduling.",
        "lastTransitionTime": MOMENT, "observedGeneration": 1}]
    assert "resourceClaimStatuses" in pending["status"]  # its claim was created anyway


def test_allocation_timestamp_follows_the_gates() -> None:
    _, claims = _run(_docs(gpus=1, pods=1),
                     FeatureGates().with_overrides({"DRADeviceBindingConditions": False}))
    (claim,) = claims.values()
    assert "allocation" in claim["status"]
    assert "allocationTimestamp" not in claim["status"]["allocation"]


def test_an_allocated_claim_without_timestamp_gets_one_when_reserved_again() -> None:
    # bindClaim sets the timestamp on every claim it reserves for a pod, if unset.
    docs = _docs(gpus=1, pods=1, shared=True)
    shared = next(d for d in docs if d["kind"] == "ResourceClaim")
    shared["status"] = {"allocation": {
        "devices": {"results": [{"request": "gpu", "driver": DRIVER, "pool": "gpu-node-1",
                                 "device": "gpu-0"}]},
        "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": ["gpu-node-1"]}]}]}},
        "reservedFor": [{"resource": "pods", "name": "other", "uid": "uid-other"}]}
    pods, claims = _run(docs)
    assert claims["shared"]["status"]["allocation"]["allocationTimestamp"] == MOMENT
    assert [r["name"] for r in claims["shared"]["status"]["reservedFor"]] == [
        "other", "train-0"]
    # A claim named directly gets no resourceClaimStatuses entry.
    assert "resourceClaimStatuses" not in pods["train-0"]["status"]


def test_a_pod_from_a_dump_keeps_its_status() -> None:
    docs = _docs(gpus=1, pods=0)
    docs.append({"apiVersion": "v1", "kind": "Pod",
                 "metadata": {"name": "running", "namespace": NS, "uid": "uid-running",
                              "creationTimestamp": "2026-11-20T08:01:00Z"},
                 "spec": {"nodeName": "gpu-node-1", "containers": [{"name": "c"}]},
                 "status": {"phase": "Running", "qosClass": "BestEffort"}})
    pods, _ = _run(docs)
    assert pods["running"]["status"] == {"phase": "Running", "qosClass": "BestEffort"}
    assert "generation" not in pods["running"]["metadata"]


def test_preemption_victim_gets_disruption_target() -> None:
    docs = _docs(gpus=0, pods=0)
    docs[0]["status"]["allocatable"] = {"cpu": "4", "memory": "8Gi", "pods": "110"}
    docs.append({"apiVersion": "v1", "kind": "Pod",
                 "metadata": {"name": "low", "namespace": NS, "uid": "uid-low",
                              "generation": 3},
                 "spec": {"nodeName": "gpu-node-1", "priority": 0,
                          "containers": [{"name": "c", "resources": {"requests": {"cpu": "4"}}}]},
                 "status": {"phase": "Running", "qosClass": "Burstable"}})
    docs.append({"apiVersion": "v1", "kind": "Pod",
                 "metadata": {"name": "high", "namespace": NS},
                 "spec": {"priority": 100,
                          "containers": [{"name": "c", "resources": {"requests": {"cpu": "4"}}}]}})
    docs[-2]["spec"]["terminationGracePeriodSeconds"] = 45
    pods, _ = _run(docs)
    low = pods["low"]
    assert low["status"]["conditions"] == [{
        "type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler",
        "message": "default-scheduler: preempting to accommodate a higher priority pod",
        "lastTransitionTime": MOMENT, "observedGeneration": 3}]
    # Then deleted gracefully (apiserver rest.BeforeDelete): terminating, its grace period
    # after now, the generation raised. Seen so on kube-apiserver v1.36.2 (default 30 s).
    assert (low["metadata"]["deletionTimestamp"], low["metadata"]["deletionGracePeriodSeconds"],
            low["metadata"]["generation"]) == ("2026-11-20T08:05:45Z", 45, 4)


def test_generated_uids_are_unique_and_deterministic() -> None:
    # Names and UIDs the API server hands out (the Job's, its pods') and those of
    # claims made from templates come from separate seeded streams: with one seed
    # for both, the first claim drew the Job's generated name suffix and UID.
    docs = _docs(gpus=2, pods=0)
    docs.append({"apiVersion": "batch/v1", "kind": "Job",
                 "metadata": {"generateName": "finetune-", "namespace": NS},
                 "spec": {"parallelism": 3, "completions": 3, "template": {"spec": {
                     "restartPolicy": "Never",
                     "containers": [{"name": "main", "image": "train:1",
                                     "resources": {"claims": [{"name": "gpu"}]}}],
                     "resourceClaims": [{"name": "gpu",
                                         "resourceClaimTemplateName": "one-gpu"}]}}}})
    first = _run(docs)
    assert first == _run(docs)
    pods, claims = first
    uids = [o["metadata"]["uid"] for o in [*pods.values(), *claims.values()]]
    owners = {r["uid"] for o in pods.values() for r in o["metadata"]["ownerReferences"]}
    assert len(pods) == 3 and len(claims) == 3
    assert len(set(uids)) == len(uids)
    assert not owners & set(uids)


def test_unmodelled_pod_fields_are_named_not_ignored() -> None:
    # Fields of plugins dralab leaves out are named once per field for the pending pods;
    # InterPodAffinity, PodTopologySpread and the volume plugins are modelled: no warning.
    docs = _docs(gpus=0, pods=0)
    for i, extra in enumerate(({"affinity": {"podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [{
                "labelSelector": {"matchLabels": {"app": "web"}},
                "topologyKey": "kubernetes.io/hostname"}]}}},
            {"topologySpreadConstraints": [{
                "maxSkew": 1, "topologyKey": "kubernetes.io/hostname",
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": "web"}}}]},
            {"volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]},
            {})):
        docs.append({"apiVersion": "v1", "kind": "Pod",
                     "metadata": {"name": f"web-{i}", "namespace": NS, "labels": {"app": "web"}},
                     "spec": {"containers": [{"name": "c"}], **extra}})
    result = schedule([decode(d) for d in docs])
    # The volume plugins are modelled (issue 39): no warning; the missing claim is named.
    assert result.warnings == ()
    (left,) = [u for u in result.unplaced if u.pod.metadata.name == "web-2"]
    assert left.message.startswith(
        '0/1 nodes are available: persistentvolumeclaim "data" not found.')
    assert schedule([decode(d) for d in _docs()]).warnings == ()


def test_a_gated_pod_gets_its_claims_from_the_controller() -> None:
    # The resourceclaim controller creates claims from templates for every pod, gates or
    # not (v1.36.2 pkg/controller/resourceclaim/controller.go, syncPod); the pod stays
    # SchedulingGated as the API server set it at create.
    docs = _docs(gpus=1, pods=1)
    docs[-1]["spec"]["schedulingGates"] = [{"name": "example.com/wait"}]
    pods, claims = _run(docs)
    status = pods["train-0"]["status"]
    (entry,) = status["resourceClaimStatuses"]
    assert entry["name"] == "gpu" and entry["resourceClaimName"] in claims
    assert "allocation" not in claims[entry["resourceClaimName"]].get("status", {})
    assert [(c["reason"], c["lastTransitionTime"]) for c in status["conditions"]] == [
        ("SchedulingGated", MOMENT)]
