"""Acceptance corpus: real upstream manifests through `dralab validate` and `dralab schedule`.

Every manifest copied from Kubernetes (e2e test-driver examples, scheduler_perf DRA
templates), Kueue (DRA samples) and the Kubernetes website (DRA examples) goes through
`dralab validate` in-process; its expected result is in VALIDATE below with the reason.
Sets that form a runnable case are scheduled and the outcome is compared with what
upstream's own text says (comment above each case: file and sentence).

Expected outcomes are upstream's, not dralab's: where dralab and upstream differed (issue 10
and the JSON-null bug this corpus found) the cases were strict xfails until the fix landed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from .corpus import (
    E2E,
    EXAMPLE_DRIVER,
    KUEUE,
    KUEUE_EXAMPLES,
    PERF,
    RENDERED,
    TEST_DRIVER,
    UPSTREAM,
    WEBSITE,
    Outcome,
    Run,
    assert_contract,
    corpus_manifests,
    dralab,
    fleet_objects,
    perf_driver_slices,
    perf_nodes,
    rel,
    render_all,
    schedule,
    write_docs,
)

# --- validate: every manifest ------------------------------------------------------------

@dataclass(frozen=True)
class Expect:
    """What `dralab validate -f FILE` must give for one corpus file."""

    codes: frozenset[int]
    says: str = ""          # text the output must contain
    unchecked: bool = False  # exit 0 must say that some kinds were not checked
    also: tuple[str, ...] = ()  # more text the output must contain

    def check(self, run: Run) -> None:
        assert_contract(run)
        assert run.code in self.codes, f"exit {run.code}, expected {set(self.codes)}:\n{run.output}"
        for text in (self.says, *self.also):
            assert text in run.output, f"{text!r} not in:\n{run.output}"
        if self.unchecked and run.code == 0:
            assert "not checked" in run.output, f"unmodelled kinds counted as valid:\n{run.output}"


def ok() -> Expect:
    return Expect(frozenset({0}))


def invalid(says: str) -> Expect:
    return Expect(frozenset({2}), says=says)


def no_match(kind: str, version: str, *also: str) -> Expect:
    # kubectl's wording for a version the 1.37 API server does not serve (issue 10, item 1).
    return Expect(frozenset({2}), also=also,
                  says=f'no matches for kind "{kind}" in version "resource.k8s.io/{version}"')


def unchecked() -> Expect:
    # Kinds dralab does not model are "not checked", never counted as valid (issue 10, item 1).
    return Expect(frozenset({0}), unchecked=True)


NAME = "metadata.name: Invalid value"          # a Go-template placeholder left in a name
YAML = "invalid YAML"                           # `{{$x := ...}}` lines are not YAML
# `{{ .Index }}` used as a value parses as a mapping whose key is a mapping, which
# sigs.k8s.io/yaml refuses ("yaml: invalid map key"), so kubectl cannot read the file.
MAP_KEY = "invalid map key"
SOURCE_REMOVED = ("spec.resourceClaims[{}].source: Forbidden: field removed in Kubernetes 1.31; "
                  "use resourceClaimName or resourceClaimTemplateName directly")
CONTROLLER_REMOVED = ("spec.spec.controller: Forbidden: field removed in Kubernetes 1.32 with the "
                      "DRAControlPlaneController gate")
WORKLOAD_KIND = "kind: Forbidden: requires feature gate GenericWorkload"
P, H = "kubernetes/test/integration/scheduler_perf/dra/templates/", "kubernetes/history/"
X = "kubernetes/test/e2e/dra/test-driver/deploy/example/"
W = "website/content/en/examples/dra/"
KX = "kueue/site/static/examples/dra/"

VALIDATE: dict[str, Expect] = {
    # e2e test-driver examples. v1 and v1beta1 objects are valid; removed versions are not.
    X + "admin-access-policy.yaml": unchecked(),          # ValidatingAdmissionPolicy(+Binding)
    X + "broken-resourceclass.yaml": no_match("ResourceClass", "v1alpha1"),
    X + "deviceclass.yaml": ok(),
    # v1alpha3 DeviceTaintRule is still served; `selector` is an unknown (old) field name,
    # kept as written (dralab does not do strict field decoding; README "Nothing is lost").
    X + "devicetaintpolicy.yaml": ok(),
    X + "devicetaintrule.yaml": ok(),
    X + "pod-external-toleration.yaml": ok(),
    X + "pod-external.yaml": ok(),                        # v1beta1 ResourceClaim
    X + "pod-inline-multiple.yaml": ok(),                 # v1beta1 ResourceClaimTemplate
    X + "pod-inline.yaml": no_match("ResourceClaimTemplate", "v1alpha2"),
    X + "pod-shared.yaml": ok(),                          # v1beta1 ResourceClaim
    X + "resourceclaim.yaml": no_match("ResourceClaim", "v1alpha3"),
    X + "resourcepoolstatusrequest.yaml": unchecked(),
    "kubernetes/test/e2e/testing-manifests/dra/admin-access-policy.yaml": unchecked(),
    "kubernetes/test/e2e/testing-manifests/dra/dra-test-driver-proxy.yaml": ok(),
    # Their pods still use `source:`, which kubernetes#125116 replaced in 1.31 ("Instead of
    # e.g. `source: resourceClaimTemplateName: my-template`, one can write
    # `resourceClaimTemplateName: my-template`"): the problem names the replacement.
    H + "05f451b/test/e2e/dra/test-driver/deploy/example/pod-inline-multiple.yaml":
        no_match("ResourceClaimTemplate", "v1alpha1", SOURCE_REMOVED.format(1)),
    H + "0e06be5/test/e2e/dra/test-driver/deploy/example/pod-inline.yaml":
        no_match("ResourceClaimTemplate", "v1alpha2", SOURCE_REMOVED.format(0)),
    H + "2b02db1/test/e2e/dra/test-driver/deploy/example/pod-external.yaml":
        no_match("ResourceClaim", "v1alpha2", SOURCE_REMOVED.format(0)),
    H + "30f551c/test/e2e/dra/test-driver/deploy/example/deviceclass.yaml": ok(),
    H + "71d19c8/test/e2e/dra/test-driver/deploy/example/pod-shared.yaml":
        no_match("ResourceClaim", "v1alpha2"),
    H + "e0a566e/test/e2e/dra/test-driver/deploy/example/resourceclaim.yaml":
        no_match("ResourceClaim", "v1alpha2"),
    # scheduler_perf templates, unrendered: placeholders make names invalid (exit 2), and
    # files that start with `{{$var := ...}}` are not YAML at all.
    "kubernetes/test/integration/scheduler_perf/templates/node-default.yaml": ok(),
    # `controller:` is classic DRA's claim.spec.controller, removed in 1.32 with the
    # DRAControlPlaneController gate (kubernetes#128003: "This removes ... the fields controlled
    # by it (claim.spec.controller, ...)"). kubectl's default --validate=strict rejects it as an
    # unknown field; dralab names the removal (issue 10: a removed field names its replacement).
    # scheduler_perf still creates it through client-go, whose default (Warn) drops the field.
    P + "another-resourceclaimtemplate.yaml": invalid(CONTROLLER_REMOVED),
    P + "deviceclass-consumablecapacity.yaml": ok(),
    P + "deviceclass-extended-resource-scoring.yaml": invalid(NAME),
    P + "deviceclass-extended-resource.yaml": invalid(NAME),
    P + "deviceclass-implicit-extended-resource.yaml": invalid(NAME),
    P + "deviceclass-no-devices.yaml": ok(),
    P + "deviceclass.yaml": ok(),
    P + "devicetaintrule.yaml": ok(),
    P + "node-with-dra-test-driver.yaml": ok(),
    P + "pod-in-podgroup-with-claim-ref.yaml":
        invalid("resourceClaims[0].resourceClaimName: Invalid value"),
    # Pod spec.schedulingGroup belongs to the Workload/PodGroup API, gate GenericWorkload:
    # beta and off by default in 1.37 (pkg/scheduler/features: GenericWorkload {1.37, Default:
    # false, Beta}); scheduler_perf's PodGroup workloads switch it on. dralab reports a field of
    # a disabled gate (its convention, as for compatibilityGroups below).
    P + "pod-in-podgroup-with-claim-template.yaml":
        invalid("spec.schedulingGroup: Forbidden: requires feature gate GenericWorkload"),
    P + "pod-with-claim-ref.yaml": invalid(NAME),
    P + "pod-with-claim-template.yaml": ok(),
    P + "pod-with-extended-resource-mod25.yaml": invalid(NAME),
    P + "pod-with-extended-resource-mod50.yaml": invalid(NAME),
    P + "pod-with-extended-resource-scoring.yaml": invalid(NAME),
    P + "pod-with-extended-resource.yaml": invalid(NAME),
    P + "pod-with-implicit-extended-resource-mod25.yaml": invalid(NAME),
    P + "pod-with-many-claim-templates.yaml": ok(),
    # scheduler_perf's gang templates (test/integration/scheduler_perf/gangscheduling):
    # a PodGroup needs GenericWorkload; the pod's schedulingGroup too.
    "kubernetes/test/integration/scheduler_perf/gangscheduling/templates/podgroup.yaml":
        invalid(WORKLOAD_KIND),
    "kubernetes/test/integration/scheduler_perf/gangscheduling/templates/gang-pod.yaml":
        invalid("spec.schedulingGroup: Forbidden: requires feature gate GenericWorkload"),
    # PodGroups: the kind is served only with GenericWorkload (off by default in 1.37).
    P + "podgroup-with-claim-ref.yaml": invalid(WORKLOAD_KIND),
    P + "podgroup-with-claim-template.yaml": invalid(WORKLOAD_KIND),
    P + "resourceclaim-partitionable-backtracking.yaml": invalid(NAME),
    P + "resourceclaim-partitionable.yaml": invalid(NAME),
    P + "resourceclaim-with-selector.yaml": invalid(NAME),
    P + "resourceclaim.yaml": invalid(NAME),
    P + "resourceclaimtemplate-backtracking.yaml": ok(),
    P + "resourceclaimtemplate-consumablecapacity.yaml": ok(),
    P + "resourceclaimtemplate-first-available.yaml": no_match("ResourceClaimTemplate", "v1alpha3"),
    P + "resourceclaimtemplate-for-patch.yaml": no_match("ResourceClaimTemplate", "v1alpha3"),
    P + "resourceclaimtemplate-for-two-devices.yaml": ok(),
    P + "resourceclaimtemplate-toleration.yaml": no_match("ResourceClaimTemplate", "v1alpha3"),
    P + "resourceclaimtemplate-with-selector.yaml": ok(),
    P + "resourceclaimtemplate.yaml": invalid(YAML),
    P + "resourceslice-basic-devices.yaml": invalid(YAML),
    # alpha DRADeviceCompatibilityGroups is off by default in 1.37
    P + "resourceslice-compatibilitygroups-devices.yaml":
        invalid("requires feature gate DRADeviceCompatibilityGroups"),
    P + "resourceslice-consumablecapacity.yaml": invalid(MAP_KEY),
    P + "resourceslice-list-attributes-devices.yaml": invalid(YAML),
    P + "resourceslice-partitionable-backtracking-countersets.yaml": invalid(NAME),
    P + "resourceslice-partitionable-backtracking-devices.yaml": invalid(NAME),
    # Since 1.35 counters and devices live in separate slices; upstream split this template
    # into the -countersets and -devices files for that reason.
    P + "resourceslice-partitionable-backtracking.yaml":
        invalid("only one of `sharedCounters` or `devices` is allowed"),
    P + "resourceslice-partitionable-countersets.yaml": invalid(NAME),
    P + "resourceslice-partitionable-devices.yaml": invalid(MAP_KEY),
    P + "resourceslice-partitionable.yaml": invalid(MAP_KEY),
    P + "resourceslice-podgroup.yaml": invalid(NAME),
    P + "resourceslicepatch.yaml": invalid(MAP_KEY),
    H + "3c88b69/test/integration/scheduler_perf/dra/templates/node-with-dra-test-driver.yaml":
        invalid(NAME),
    H + "4966917/test/integration/scheduler_perf/dra/templates/"
        "resourceslice-partitionable-backtracking-countersets.yaml": invalid(NAME),
    H + "95cca0b/test/integration/scheduler_perf/dra/templates/another-resourceclaimtemplate.yaml":
        invalid(CONTROLLER_REMOVED),
    # Kueue
    KX + "sample-dra-capacity-job.yaml": ok(),
    KX + "sample-dra-counter-job.yaml": ok(),
    KX + "sample-dra-extended-resource-job.yaml": ok(),
    KX + "sample-dra-rct-job.yaml": ok(),
    KX + "sample-dra-capacity-queues.yaml": unchecked(),  # ResourceFlavor, (Local)ClusterQueue
    KX + "sample-dra-counter-queues.yaml": unchecked(),
    KX + "sample-dra-queues.yaml": unchecked(),
    "kueue/site/content/en/docs/tasks/manage/setup_dra.deviceclass.yaml": ok(),
    "kueue/keps/2941-DRA/README.complete-example.yaml": unchecked(),  # + ConfigMap, Workload
    # website
    W + "deviceclass.yaml": ok(),                         # v1beta2
    W + "dra-device-metadata-pod.yaml": ok(),
    W + "dra-device-metadata-template-pod.yaml": ok(),
    W + "dra-example-job.yaml": ok(),
    W + "driver-install/all.yaml": unchecked(),           # ServiceAccount, RBAC
    W + "driver-install/clusterrole.yaml": unchecked(),
    W + "driver-install/clusterrolebinding.yaml": unchecked(),
    W + "driver-install/serviceaccount.yaml": unchecked(),
    W + "driver-install/daemonset.yaml": ok(),
    W + "driver-install/deviceclass.yaml": ok(),
    W + "driver-install/priorityclass.yaml": ok(),
    W + "driver-install/example/all.yaml": ok(),          # v1beta2 ResourceClaim
    W + "driver-install/example/pod.yaml": ok(),
    W + "driver-install/example/resourceclaim.yaml": ok(),
    # The page's YAML puts `expression:` beside `cel:` instead of under it. kube-apiserver
    # v1.36.2 answers a dry-run create with strict field validation (kubectl's default) in these
    # words, and runs no validation (tests/k8s/test_validation_conformance.py).
    W + "resourceclaim.yaml":
        invalid('ResourceClaim in version "v1" cannot be handled as a ResourceClaim: strict '
                'decoding error: unknown field '
                '"spec.devices.requests[0].exactly.selectors[0].expression"'),
    # `memory == quantity("64Gi")` is within the cost limit: kube-apiserver v1.36.2 accepts this
    # template (dry-run create, strict field validation, in tests/k8s/
    # test_validation_conformance.py): its estimator charges `==` on two quantities 1
    # (k8s.io/apiserver v1.36.2 pkg/cel/library/cost.go, EstimateCallCost, case "_==_",
    # "O(1) cost equality checks"), not cel-go's size-based default.
    W + "resourceclaimtemplate.yaml": ok(),
}


def _validate_params() -> list[object]:
    return [pytest.param(path, VALIDATE.get(rel(path)), id=rel(path))
            for path in corpus_manifests()]


def test_validate_table_covers_the_corpus() -> None:
    files = {rel(p) for p in corpus_manifests()}
    assert files == set(VALIDATE), (f"missing: {sorted(files - set(VALIDATE))}; "
                                    f"stale: {sorted(set(VALIDATE) - files)}")


@pytest.mark.parametrize(("path", "expect"), _validate_params())
def test_validate_each_manifest(path: Path, expect: Expect | None) -> None:
    assert expect is not None, f"{rel(path)} has no entry in VALIDATE"
    expect.check(dralab("validate", "-f", str(path)))


def test_validate_whole_corpus_at_once() -> None:
    # All files together: some are invalid, so exit 2, one line per problem, no crash.
    run = dralab("validate", *(a for r in ("kubernetes", "kueue", "website")
                               for a in ("-f", str(UPSTREAM / r))))
    assert_contract(run)
    assert run.code == 2


# --- schedule: runnable cases -------------------------------------------------------------

@pytest.fixture(scope="module")
def example_fleet(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """dra-example-driver fleets (`dralab fleet`, driver: example), as the demos install it:
    two nodes; the website tutorial's DaemonSet sets NUM_DEVICES=9."""
    tmp = tmp_path_factory.mktemp("example-fleet")
    plain = {"name": "kind-worker", "count": 2, "namePrefix": "kind-worker-",
             "driver": "example", "gpu": {"count": 9}}
    return {
        # the driver's own DeviceClass gpu.example.com comes with the fleet
        "with-class": fleet_objects(tmp, "with-class", plain),
        # nodes and slices only, for manifests that bring their own DeviceClass
        "no-class": fleet_objects(tmp, "no-class", plain, kinds=("Node", "ResourceSlice")),
        "partitions": fleet_objects(tmp, "partitions", {**plain, "gpu": {"count": 2,
                                                                         "partitions": 2}}),
        "shared": fleet_objects(tmp, "shared", {**plain, "gpu": {"count": 2,
                                                                 "multipleAllocations": True}}),
    }


def _one_device_of(out: Outcome, pod_name: str, driver: str) -> None:
    """The pod is placed and each of its claims got exactly one device of ``driver`` on the
    pod's node (the example and test drivers publish one pool per node, named after it)."""
    pod = out.pod(pod_name)
    assert pod.node, f"{pod_name} pending: {pod.message}"
    claims = out.claims_of(pod)
    assert claims, f"{pod_name} has no claim"
    for claim in claims:
        assert len(claim.devices) == 1, claim
        assert claim.devices[0][0] == driver and claim.devices[0][1] == pod.node, claim
        assert pod.name in claim.reserved_for, claim


# Website: Install Drivers and Allocate Devices with DRA
# (content/en/docs/tutorials/cluster-management/install-use-dra.md).

def test_website_tutorial_pod0_gets_one_mock_gpu(example_fleet: dict[str, Path]) -> None:
    d = WEBSITE / "driver-install"
    out = schedule(example_fleet["no-class"], d / "deviceclass.yaml", d / "priorityclass.yaml",
                   d / "daemonset.yaml", d / "example/resourceclaim.yaml", d / "example/pod.yaml")
    assert out.run.code == 0, out.run.output
    # "Confirm the pod has deployed: ... pod0   1/1     Running"; "any of the mock GPUs on
    # that node may be allocated"; "some-gpu   allocated,reserved"; results: device gpu-4,
    # pool kind-worker; "reservedFor: - name: pod0".
    _one_device_of(out, "dra-tutorial/pod0", EXAMPLE_DRIVER)
    assert out.claim("dra-tutorial/some-gpu").reserved_for == ["pod0"]
    # "Observe the Pods of the DRA driver DaemonSet across all worker nodes": one per node.
    plugin = [p for p in out.pods.values()
              if p.name.startswith("dra-example-driver-kubeletplugin-")]
    assert sorted(p.node or "" for p in plugin) == ["kind-worker-01", "kind-worker-02"]


def test_website_tutorial_v1beta2_claim(example_fleet: dict[str, Path]) -> None:
    # driver-install/example/all.yaml is the same claim and pod, the claim as v1beta2 (the
    # tutorial's own output shows `apiVersion: resource.k8s.io/v1beta2`): same outcome.
    d = WEBSITE / "driver-install"
    out = schedule(example_fleet["no-class"], d / "deviceclass.yaml", d / "example/all.yaml")
    assert out.run.code == 0, out.run.output
    _one_device_of(out, "default/pod0", EXAMPLE_DRIVER)


# Website: Access DRA device metadata
# (content/en/docs/tasks/configure-pod-container/assign-resources/access-dra-device-metadata.md):
# "This manifest creates a ResourceClaim named `gpu-claim` that requests a device from the
# `gpu.example.com` DeviceClass" ... "After the Pod is running".

@pytest.mark.parametrize("manifest,pod", [
    ("dra-device-metadata-pod.yaml", "gpu-metadata-reader"),
    ("dra-device-metadata-template-pod.yaml", "gpu-metadata-template-reader"),
])
def test_website_device_metadata_pods_run(example_fleet: dict[str, Path], manifest: str,
                                          pod: str) -> None:
    out = schedule(example_fleet["with-class"], WEBSITE / manifest)
    assert out.run.code == 0, out.run.output
    _one_device_of(out, pod, EXAMPLE_DRIVER)


def test_website_allocate_devices_task_is_rejected(example_fleet: dict[str, Path]) -> None:
    # allocate-devices-dra.md: deviceclass + resourceclaimtemplate + resourceclaim + Job.
    # The claim manifest is rejected (see VALIDATE), so the whole input is: exit 2. The template
    # is accepted, as kube-apiserver v1.36.2 accepts it.
    out = schedule(WEBSITE / "deviceclass.yaml", WEBSITE / "resourceclaimtemplate.yaml",
                   WEBSITE / "resourceclaim.yaml", WEBSITE / "dra-example-job.yaml")
    assert out.run.code == 2
    # schedule reads its files as stored state (no strict decoding), so validation names the
    # empty `cel` that the misplaced `expression` leaves.
    assert "selectors[0].cel: Required value" in out.run.stderr
    assert "resourceclaimtemplate.yaml" not in out.run.stderr


# Kueue: Run Workloads With DRA Devices (site/content/en/docs/tasks/run/dra.md) and the
# KEP's complete example (keps/2941-DRA/README.md, "Step 5: Resulting Workload status":
# `whole-gpus: "1" # DRA device count reflected in status`). A Job without parallelism or
# completions runs one pod.

def _job_pods(out: Outcome, prefix: str) -> list[str]:
    return [k for k, p in out.pods.items() if p.name.startswith(prefix)]


def test_kueue_kep_job_gets_one_gpu(example_fleet: dict[str, Path]) -> None:
    out = schedule(example_fleet["with-class"],
                   KUEUE / "keps/2941-DRA/README.complete-example.yaml")
    assert out.run.code == 0, out.run.output
    pods = _job_pods(out, "job0-")
    assert len(pods) == 1, sorted(out.pods)
    _one_device_of(out, pods[0], EXAMPLE_DRIVER)


@pytest.mark.parametrize("sample,fleet", [
    ("sample-dra-rct-job.yaml", "with-class"),          # "Using a ResourceClaimTemplate"
    ("sample-dra-counter-job.yaml", "partitions"),      # "Using partitionable devices"
])
def test_kueue_sample_job_gets_one_device(example_fleet: dict[str, Path], sample: str,
                                          fleet: str) -> None:
    # The samples use metadata.generateName (sample-dra-...-job-).
    out = schedule(example_fleet[fleet], KUEUE_EXAMPLES / sample)
    assert out.run.code == 0, out.run.output
    pods = list(out.pods)
    assert len(pods) == 1, pods
    _one_device_of(out, pods[0], EXAMPLE_DRIVER)


def test_kueue_sample_job_explained_by_the_name_it_got(example_fleet: dict[str, Path]) -> None:
    # The sample Job has only `generateName: sample-dra-rct-job-`: asked for by that prefix,
    # explain says which name the API server (here: the run) gave it; by that name, it
    # explains the Job's one pod (issue 10: explain pod accepts the owning workload).
    files = ("-f", str(example_fleet["with-class"]), "-f",
             str(KUEUE_EXAMPLES / "sample-dra-rct-job.yaml"))
    run = dralab("explain", "pod", "job/sample-dra-rct-job-", *files)
    assert_contract(run)
    assert run.code == 2
    match = re.search(r"this run named the Job (sample-dra-rct-job-[a-z0-9]{5}) ", run.stderr)
    assert match, run.stderr
    again = dralab("explain", "pod", f"job/{match.group(1)}", *files)
    assert again.code == 0, again.output
    assert again.stdout.startswith(f"Job default/{match.group(1)}: 1 pod(s), 1 scheduled")


def test_kueue_capacity_job_consumes_4gi(example_fleet: dict[str, Path]) -> None:
    # "Using consumable capacity (shared devices)": the claim requests
    # capacity gpu.example.com/memory: 4Gi of a shared device.
    out = schedule(example_fleet["shared"], KUEUE_EXAMPLES / "sample-dra-capacity-job.yaml")
    assert out.run.code == 0, out.run.output
    (pod,) = out.pods
    _one_device_of(out, pod, EXAMPLE_DRIVER)
    (claim,) = out.claims_of(out.pod(pod))
    assert [c.get("memory") for c in claim.consumed] == ["4Gi"], claim


def test_kueue_extended_resource_job_runs_once_class_exists(example_fleet: dict[str, Path]) -> None:
    # setup_dra.md, "Late DeviceClass creation": "Once the DeviceClass is created, the
    # Kubernetes scheduler creates a ResourceClaim and the pod runs." (DRAExtendedResource)
    out = schedule(example_fleet["no-class"],
                   KUEUE / "site/content/en/docs/tasks/manage/setup_dra.deviceclass.yaml",
                   KUEUE_EXAMPLES / "sample-dra-extended-resource-job.yaml")
    assert out.run.code == 0, out.run.output
    (pod,) = out.pods
    assert out.pod(pod).extended_claim, out.pod(pod)
    _one_device_of(out, pod, EXAMPLE_DRIVER)


def test_kueue_extended_resource_job_pending_without_class(example_fleet: dict[str, Path]) -> None:
    # setup_dra.md: "If the DeviceClass does not exist ... the pod stays Pending because the
    # Kubernetes scheduler cannot create a ResourceClaim without a DeviceClass."
    out = schedule(example_fleet["no-class"],
                   KUEUE_EXAMPLES / "sample-dra-extended-resource-job.yaml")
    assert out.run.code == 1, out.run.output
    (pod,) = out.pods
    assert out.pod(pod).node is None
    assert "example.com/gpu" in out.pod(pod).message


# Kubernetes e2e test-driver examples (test/e2e/dra/test-driver). The driver publishes
# devices per node; here the slices scheduler_perf's createResourceDriver publishes for it.

@pytest.fixture(scope="module")
def test_driver(tmp_path_factory: pytest.TempPathFactory) -> Path:
    nodes = perf_nodes(with_dra=1, without_dra=0)
    return write_docs(tmp_path_factory.mktemp("test-driver") / "cluster.yaml",
                      [*nodes, *perf_driver_slices(nodes, 8)])


def test_e2e_pod_external_claim(test_driver: Path) -> None:
    # pod-external.yaml: "One external resource claim, one pod, two containers." The README's
    # walk-through: claim "allocated,reserved", pod "1/1 Running".
    out = schedule(test_driver, E2E / "deviceclass.yaml", E2E / "pod-external.yaml")
    assert out.run.code == 0, out.run.output
    _one_device_of(out, "test-external-claim", TEST_DRIVER)


def test_e2e_pod_shared_claim(test_driver: Path) -> None:
    # pod-shared.yaml: "One external resource claim, two pods ... Pods share the same resource."
    out = schedule(test_driver, E2E / "deviceclass.yaml", E2E / "pod-shared.yaml")
    assert out.run.code == 0, out.run.output
    claim = out.claim("default/shared-claim")
    assert len(claim.devices) == 1
    assert sorted(claim.reserved_for) == ["test-shared-claim", "test-shared-claim-2"]
    node = claim.devices[0][1]
    assert out.pod("test-shared-claim").node == out.pod("test-shared-claim-2").node == node


def test_e2e_pod_inline_multiple(test_driver: Path) -> None:
    # pod-inline-multiple.yaml: one pod, two claims from the same template, one per container.
    out = schedule(test_driver, E2E / "deviceclass.yaml", E2E / "pod-inline-multiple.yaml")
    assert out.run.code == 0, out.run.output
    _one_device_of(out, "pause", TEST_DRIVER)
    devices = [c.devices[0] for c in out.claims_of(out.pod("pause"))]
    assert len(devices) == 2 and len(set(devices)) == 2


def test_e2e_pod_without_its_claim_waits_for_it(test_driver: Path, tmp_path: Path) -> None:
    # pod-external.yaml's pod applied before its claim. KEP-5501 ("Diagnosing the Pods using
    # DRA"): the DynamicResources PreEnqueue rejection is shown as the new reason
    # `NotReadyForScheduling`; `SchedulingGated` "is explicitly tied to the Scheduling Gates
    # feature" and this pod has no gates (issue 10: gate wording only for gated pods).
    pods = [d for d in yaml.safe_load_all((E2E / "pod-external.yaml").read_text())
            if d["kind"] == "Pod"]
    out = schedule(test_driver, E2E / "deviceclass.yaml", write_docs(tmp_path / "pod.yaml", pods))
    assert out.run.code == 1, out.run.output
    pod = out.pod("test-external-claim")
    assert pod.node is None
    # kube-scheduler 1.36.2 writes no condition for a PreEnqueue rejection (KEP-5501's
    # SchedulerPreEnqueuePodStatus is not there; dralab has it as an opt-in gate): the
    # reason and message are dralab's report, on stderr.
    assert pod.reason == "", pod
    (line,) = [x for x in out.run.stderr.splitlines() if "test-external-claim" in x]
    assert line.startswith("default/test-external-claim: NotReadyForScheduling: "), line
    assert '"external-claim" not found' in line, line
    assert "gate" not in line.lower()


def test_e2e_toleration_admits_tainted_devices(test_driver: Path) -> None:
    # devicetaintrule.yaml taints every device of the driver NoExecute ("Evict all pods and
    # don't schedule new ones."); pod-external-toleration.yaml's claim tolerates that taint.
    out = schedule(test_driver, E2E / "deviceclass.yaml", E2E / "devicetaintrule.yaml",
                   E2E / "pod-external-toleration.yaml")
    assert out.run.code == 0, out.run.output
    _one_device_of(out, "test-external-claim", TEST_DRIVER)


def test_e2e_taint_keeps_untolerating_pod_pending(test_driver: Path) -> None:
    # The same rule with pod-external.yaml (no toleration): "don't schedule new ones".
    out = schedule(test_driver, E2E / "deviceclass.yaml", E2E / "devicetaintrule.yaml",
                   E2E / "pod-external.yaml")
    assert out.run.code == 1, out.run.output
    pod = out.pod("test-external-claim")
    assert pod.node is None
    assert out.claim("default/external-claim").devices == []
    assert "cannot allocate all claims" in pod.message, pod.message


# scheduler_perf DRA workloads (test/integration/scheduler_perf/dra/performance-config.yaml,
# workload "fast" of each), rendered as scheduler_perf renders its templates.

def _perf_cluster(tmp: Path, *, with_dra: int, without_dra: int,
                  max_claims_per_node: int | None) -> list[Path]:
    nodes = perf_nodes(with_dra=with_dra, without_dra=without_dra)
    slices = perf_driver_slices(nodes, max_claims_per_node) if max_claims_per_node else []
    return [write_docs(tmp / "nodes.yaml", [*nodes, *slices]), PERF / "deviceclass.yaml"]


def _perf_pods(tmp: Path, template: str, count: int, namespace: str = "test") -> Path:
    return write_docs(tmp / f"pods-{template}", render_all(PERF / template, count, namespace))


def test_perf_scheduling_with_claim_template_fills_the_node(tmp_path: Path) -> None:
    # SchedulingWithResourceClaimTemplate/fast: nodesWithDRA 1, nodesWithoutDRA 1,
    # measurePods 10, maxClaimsPerNode 10. "Node, pod and device counts are chosen so that
    # the cluster gets filled up completely." The template as Go renders it holds
    # `constraints: null` and `selectors: null`, which the API server reads as unset.
    template = render_all(RENDERED / "resourceclaimtemplate.default.yaml", 1, "test")
    out = schedule(*_perf_cluster(tmp_path, with_dra=1, without_dra=1, max_claims_per_node=10),
                   write_docs(tmp_path / "rct.yaml", template),
                   _perf_pods(tmp_path, "pod-with-claim-template.yaml", 10))
    assert out.run.code == 0, out.run.output
    assert len(out.pods) == 10
    assert set(out.placed().values()) == {"scheduler-perf-dra-00000"}
    devices = {c.devices[0] for c in out.claims.values()}
    assert len(devices) == 10
    # The claims generated from the template live in the pods' namespace (issue 10).
    assert {c.namespace for c in out.claims.values()} == {"test"}


def test_perf_scheduling_with_shared_claims(tmp_path: Path) -> None:
    # SchedulingWithResourceClaim/fast: "ResourceClaims with deterministic names that are
    # shared between pods ... a fixed ratio of 1:5 between claims and pods"; measurePods 10,
    # measureClaims 2, maxClaimsPerNode 2.
    claims = write_docs(tmp_path / "claims.yaml",
                        render_all(PERF / "resourceclaim.yaml", 2, "test"))
    out = schedule(*_perf_cluster(tmp_path, with_dra=1, without_dra=1, max_claims_per_node=2),
                   claims, _perf_pods(tmp_path, "pod-with-claim-ref.yaml", 10))
    assert out.run.code == 0, out.run.output
    assert set(out.placed().values()) == {"scheduler-perf-dra-00000"} and not out.pending()
    for i in range(2):
        claim = out.claim(f"test/test-claim-{i}")
        assert len(claim.devices) == 1
        users = sorted(f"test-dra-{j}" for j in range(5 * i, 5 * i + 5))
        assert sorted(claim.reserved_for) == users
    assert out.claim("test/test-claim-0").devices != out.claim("test/test-claim-1").devices


def test_perf_selector_on_missing_attribute_is_a_cel_runtime_error(tmp_path: Path) -> None:
    # resourceclaim-with-selector.yaml reads capacity `counters` and attribute `preallocate`,
    # which the driver's default slices (createResourceDriver) do not publish. The API
    # (CELDeviceSelector.expression): "Any other result is an error and causes allocation of
    # devices to abort." kube-scheduler reports that error (SchedulerError), not a node list;
    # explain says it is a CEL runtime error (issue 10, "What a new user stumbles on").
    claim = write_docs(tmp_path / "claim.yaml",
                       render_all(PERF / "resourceclaim-with-selector.yaml", 1, "test"))
    # pod-with-claim-ref.yaml's pod 0, its claim reference pointed at that claim.
    pod = render_all(PERF / "pod-with-claim-ref.yaml", 1, "test")[0]
    pod["spec"]["resourceClaims"][0]["resourceClaimName"] = "test-claim-with-selector-0"
    files = [*_perf_cluster(tmp_path, with_dra=1, without_dra=1, max_claims_per_node=2), claim,
             write_docs(tmp_path / "pod.yaml", [pod])]
    out = schedule(*files)
    assert out.run.code == 1, out.run.output
    result = out.pod("test/test-dra-0")
    assert result.node is None and result.reason == "SchedulerError", result
    assert "CEL runtime error: no such key: counters" in result.message, result.message
    explained = dralab("explain", "pod", "test/test-dra-0",
                       *(a for f in files for a in ("-f", str(f))))
    assert_contract(explained)
    assert "A CEL runtime error" in explained.stdout, explained.stdout
    assert "nodes are available: " not in explained.stdout  # no (empty) node list


def test_perf_extended_resource_classes(tmp_path: Path) -> None:
    # dra/extendedresource/performance-config.yaml, SchedulingWithExtendedResource/fast:
    # classes 10 (test-class-<i> with extendedResourceName example.com/gpu-<i>), nodesWithDRA 1,
    # nodesWithoutDRA 1, measurePods 10 (pod i asks example.com/gpu-<i>: 1), maxClaimsPerNode 10.
    classes = write_docs(tmp_path / "classes.yaml",
                         render_all(PERF / "deviceclass-extended-resource.yaml", 10))
    cluster = _perf_cluster(tmp_path, with_dra=1, without_dra=1, max_claims_per_node=10)[0]
    out = schedule(cluster, classes, _perf_pods(tmp_path, "pod-with-extended-resource.yaml", 10))
    assert out.run.code == 0, out.run.output
    assert set(out.placed().values()) == {"scheduler-perf-dra-00000"} and len(out.pods) == 10
    for pod in out.pods.values():
        assert pod.extended_claim, pod
    used = [d for c in out.claims.values() for d in c.devices]
    assert len(used) == 10 and len(set(used)) == 10


def _backtracking_slices(tmp: Path) -> Path:
    # The current split form: one counters slice and one devices slice in pool resourceslice-0.
    docs = [*render_all(PERF / "resourceslice-partitionable-backtracking-countersets.yaml", 1),
            *render_all(PERF / "resourceslice-partitionable-backtracking-devices.yaml", 1)]
    return write_docs(tmp / "slices.yaml", docs)


def _backtracking_template(tmp: Path) -> Path:
    return write_docs(tmp / "rct.yaml",
                      render_all(PERF / "resourceclaimtemplate-backtracking.yaml", 1, "test"))


def test_perf_partitionable_backtracking_finds_the_solution(tmp_path: Path) -> None:
    # partitionabledevices/performance-config.yaml, SteadyStateClusterResourceClaimTemplate-
    # PartitionableBacktracking/fast: "a ResourceClaim that forces the allocator to backtrack
    # multiple times in order to find a solution". 7 devices of 8 under a 70Gi memory
    # counter: device-1 takes 20Gi, the others 10Gi, so the solution is device-2..device-8.
    out = schedule(*_perf_cluster(tmp_path, with_dra=1, without_dra=1, max_claims_per_node=None),
                   _backtracking_slices(tmp_path),
                   _backtracking_template(tmp_path),
                   _perf_pods(tmp_path, "pod-with-claim-template.yaml", 1))
    assert out.run.code == 0, out.run.output
    (pod,) = out.pods.values()
    assert pod.node == "scheduler-perf-dra-00000"
    (claim,) = out.claims_of(pod)
    assert sorted(d for _, _, d in claim.devices) == [f"device-{i}" for i in range(2, 9)]


def test_perf_partitionable_backtracking_with_generate_name_node(tmp_path: Path) -> None:
    # The same workload with node-with-dra-test-driver.yaml as it is (metadata.generateName:
    # scheduler-perf-dra-); the API server gives it a name with that prefix.
    out = schedule(PERF / "node-with-dra-test-driver.yaml", PERF / "deviceclass.yaml",
                   _backtracking_slices(tmp_path),
                   _backtracking_template(tmp_path),
                   _perf_pods(tmp_path, "pod-with-claim-template.yaml", 1))
    assert out.run.code == 0, out.run.output
    (pod,) = out.pods.values()
    assert (pod.node or "").startswith("scheduler-perf-dra-") and pod.node != "scheduler-perf-dra-"

