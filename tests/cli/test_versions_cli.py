"""Every served API version through the CLI: upstream v1beta1/v1beta2 manifests in.

Inputs are upstream files (tests/data/upstream/versions, see its README): the
dra-example-driver demos of v0.1.0 (v1beta1) and v0.2.0 (v1), the NVIDIA
driver's v25.3.2 specs (v1beta1, and classic-DRA v1alpha2 leftovers) and the
Kubernetes DRA tutorial's v1beta2 claim.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from dralab.cli.main import cli

UPSTREAM = Path(__file__).parent.parent / "data" / "upstream" / "versions"
BETA1 = UPSTREAM / "dra-example-driver-v0.1.0"
V1 = UPSTREAM / "dra-example-driver-v0.2.0"
NVIDIA = UPSTREAM / "k8s-dra-driver-gpu-v25.3.2"
WEBSITE = UPSTREAM / "kubernetes-website"

# The kind worker of the example driver's demo cluster (its slices name it).
NODE = """
apiVersion: v1
kind: Node
metadata:
  name: dra-example-driver-cluster-worker
  labels: {kubernetes.io/hostname: dra-example-driver-cluster-worker}
status:
  allocatable: {cpu: "8", memory: 32Gi, pods: "110"}
  capacity: {cpu: "8", memory: 32Gi, pods: "110"}
"""


def run(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), input=stdin)
    return result.exit_code, result.stdout, result.stderr


def files(*paths: Path) -> list[str]:
    return [arg for p in paths for arg in ("-f", str(p))]


def demo(root: Path, *tests: int) -> list[Path]:
    return [root / f"gpu-test{n}.yaml" for n in tests]


# --- removed and unknown versions: exit 2, kubectl's words -----------------------------------
CLASSIC = NVIDIA / "selectors-claims.yaml"
CLASSIC_LINE = (f"{CLASSIC}:1 ResourceClaimTemplate kubecon-demo/inference-gpu: "
                'no matches for kind "ResourceClaimTemplate" in version '
                '"resource.k8s.io/v1alpha2"; '
                "resource.k8s.io/v1alpha2 was removed in Kubernetes 1.31, use resource.k8s.io/v1")


def test_validate_classic_dra_templates_exit_2_with_kubectl_wording() -> None:
    code, out, err = run("validate", *files(CLASSIC))
    assert code == 2
    assert out.splitlines()[0] == CLASSIC_LINE
    assert len(out.splitlines()) == 2 and err == "2 problem(s) in 2 of 2 object(s)\n"


@pytest.mark.parametrize("verb", [
    ["schedule"], ["allocate", "--node", "dra-example-driver-cluster-worker"]])
def test_schedule_and_allocate_refuse_removed_versions(verb: list[str], tmp_path: Path) -> None:
    node = tmp_path / "node.yaml"
    node.write_text(NODE)
    code, out, err = run(*verb, *files(node, BETA1 / "resourceslices.yaml", CLASSIC))
    assert code == 2 and out == ""
    assert err.splitlines()[0] == f"error: {CLASSIC_LINE}"


def test_import_refuses_removed_versions_in_one_line() -> None:
    code, out, err = run("import", *files(CLASSIC))
    assert code == 2 and out == ""
    assert err == f"error: {CLASSIC_LINE}\n"


@pytest.mark.parametrize(("doc", "line"), [
    ("apiVersion: resource.k8s.io/v9\nkind: ResourceClaim\nmetadata: {name: c, namespace: n}\n",
     '- ResourceClaim n/c: no matches for kind "ResourceClaim" in version "resource.k8s.io/v9"; '
     "ResourceClaim is served as resource.k8s.io/v1, resource.k8s.io/v1beta2 and "
     "resource.k8s.io/v1beta1"),
    ("apiVersion: apps/v1beta1\nkind: Deployment\nmetadata: {name: d}\n",
     '- Deployment d: no matches for kind "Deployment" in version "apps/v1beta1"; '
     "apps/v1beta1 was removed in Kubernetes 1.16, use apps/v1"),
    ("apiVersion: batch/v1beta1\nkind: CronJob\nmetadata: {name: c}\n",
     '- CronJob c: no matches for kind "CronJob" in version "batch/v1beta1"; '
     "batch/v1beta1 was removed in Kubernetes 1.25, use batch/v1"),
    ("apiVersion: resource.k8s.io/v1alpha2\nkind: ResourceClass\nmetadata: {name: gpu}\n"
     "driverName: gpu.nvidia.com\n",
     '- ResourceClass gpu: no matches for kind "ResourceClass" in version '
     '"resource.k8s.io/v1alpha2"; ResourceClass was removed in Kubernetes 1.31; use a '
     "DeviceClass (resource.k8s.io/v1) that selects the driver's devices with a CEL selector"),
    ("kind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: i}]}\n",
     "- Pod p: has no apiVersion (a Pod needs apiVersion: v1)"),
    ("apiVersion: v1\nmetadata: {name: p}\n", "- <no kind> p: has no kind"),
])
def test_document_level_problems_are_one_line(doc: str, line: str) -> None:
    code, out, err = run("validate", "-f", "-", stdin=doc)
    assert code == 2
    assert out == line + "\n"
    assert err == "1 problem(s) in 1 of 1 object(s)\n"


def test_removed_pod_field_names_its_replacement() -> None:
    code, out, _ = run("validate", *files(NVIDIA / "selectors-pods.yaml"))
    assert code == 2
    assert out.splitlines()[0] == (
        f"{NVIDIA / 'selectors-pods.yaml'}:1 Pod kubecon-demo/inference-pod: "
        "spec.resourceClaims[0].source: Forbidden: field removed in Kubernetes 1.31; use "
        "resourceClaimName or resourceClaimTemplateName directly")


# --- kinds dralab does not model: not checked, never "valid" ----------------------------------
UNMODELLED = """
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: default}
data: {a: b}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq}
---
apiVersion: resource.k8s.io/v1beta1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec:
  selectors:
  - cel: {expression: "device.driver == 'gpu.example.com'"}
"""


def test_unmodelled_kinds_are_listed_as_not_checked() -> None:
    code, out, err = run("validate", "-f", "-", stdin=UNMODELLED)
    assert code == 0, out
    assert err == ""
    assert out == ("-:1 ConfigMap default/settings: not checked (kind not modelled by dralab)\n"
                   "-:2 ClusterQueue cq: not checked (kind not modelled by dralab)\n"
                   "1 object(s) valid (1 DeviceClass); 2 not checked\n")


def test_only_unmodelled_kinds_are_not_called_valid() -> None:
    code, out, _ = run("validate", "-f", "-", stdin=UNMODELLED.split("---")[1])
    assert code == 0
    assert out.splitlines()[-1] == "no object checked; 1 not checked"


def test_not_checked_count_joins_the_problem_summary() -> None:
    doc = UNMODELLED + "---\napiVersion: resource.k8s.io/v1beta1\nkind: ResourceClaim\n" \
                       "metadata: {name: c, namespace: n}\nspec: {devices: {requests: " \
                       "[{name: gpu, count: 1}]}}\n"
    code, out, err = run("validate", "-f", "-", stdin=doc)
    assert code == 2
    assert "-:4 ResourceClaim n/c: spec.devices.requests[0].deviceClassName: Required value\n" \
        in out
    assert err == "1 problem(s) in 1 of 4 object(s); 2 not checked\n"


# --- served older versions: checked, and scheduled like their v1 form ---------------------
@pytest.mark.parametrize("path", [BETA1, V1, NVIDIA / "gpu-test5.yaml",
                                  NVIDIA / "gpu-test6.yaml", WEBSITE])
def test_upstream_served_versions_are_valid(path: Path) -> None:
    code, out, _ = run("validate", *files(path))
    assert code == 0, out
    assert "object(s) valid (" in out


def _schedule(node: Path, *paths: Path) -> str:
    code, out, err = run("schedule", *files(node, *paths))
    assert code == 0, err
    return out


def test_v1beta1_demos_schedule_exactly_like_their_v1_versions(tmp_path: Path) -> None:
    node = tmp_path / "node.yaml"
    node.write_text(NODE)
    # Demos 1, 3, 4 and 5 changed nothing but the API version between the two releases.
    beta = _schedule(node, BETA1 / "resourceslices.yaml", BETA1 / "deviceclass.yaml",
                     *demo(BETA1, 1, 3, 4, 5))
    v1 = _schedule(node, V1 / "resourceslices.yaml", V1 / "deviceclass-chart-v0.2.1-rendered.yaml",
                   *demo(V1, 1, 3, 4, 5))
    assert beta == v1
    placed = yaml.safe_load(v1)["items"]
    assert {i["metadata"]["name"] for i in placed if i["kind"] == "Pod"} == {"pod0", "pod1"}
    assert all(i["apiVersion"] == "resource.k8s.io/v1"
               for i in placed if i["kind"] == "ResourceClaim")


def _devices_by_pod(output: str) -> dict[str, int]:
    items: list[dict[str, Any]] = yaml.safe_load(output)["items"]
    claims = {(c["metadata"]["namespace"], c["metadata"]["name"]): c
              for c in items if c["kind"] == "ResourceClaim"}
    out: dict[str, int] = {}
    for pod in (i for i in items if i["kind"] == "Pod"):
        assert pod["spec"].get("nodeName") == "dra-example-driver-cluster-worker"
        ns = pod["metadata"]["namespace"]
        names = [s["resourceClaimName"] for s in pod.get("status", {}).get(
            "resourceClaimStatuses", [])] + [c["resourceClaimName"] for c in pod["spec"][
                "resourceClaims"] if "resourceClaimName" in c]
        out[f"{ns}/{pod['metadata']['name']}"] = sum(
            len(claims[(ns, n)]["status"]["allocation"]["devices"]["results"]) for n in names)
    return out


def test_all_five_demos_fill_the_eight_gpus_in_both_versions(tmp_path: Path) -> None:
    node = tmp_path / "node.yaml"
    node.write_text(NODE)
    beta = _devices_by_pod(_schedule(node, BETA1))
    # v0.2.0's chart still ships a v1beta1 DeviceClass: mixed versions work together.
    v1 = _devices_by_pod(_schedule(node, V1 / "resourceslices.yaml",
                                   V1 / "deviceclass-chart-v0.2.0.yaml", *demo(V1, 1, 2, 3, 4, 5)))
    assert beta == v1
    assert beta["gpu-test2/pod0"] == 2 and beta["gpu-test5/pod0"] == 2


# --- import writes objects back in their own version -----------------------------------------
def test_import_keeps_claims_and_templates_in_their_version() -> None:
    inputs = [WEBSITE / "install-use-dra-claim-v1beta2.yaml", BETA1 / "gpu-test5.yaml",
              NVIDIA / "gpu-test6.yaml", BETA1 / "resourceslices.yaml"]
    code, out, err = run("import", *files(*inputs))
    assert code == 0, err
    items = yaml.safe_load(out)["items"]
    given = [d for p in inputs for d in _items(p)]
    assert [(i["apiVersion"], i["kind"]) for i in items if i["kind"] != "ResourceSlice"] == \
        [(d["apiVersion"], d["kind"]) for d in given if d["kind"] != "ResourceSlice"]
    for before, after in zip(given, items, strict=True):
        if before["kind"] in ("ResourceClaim", "ResourceClaimTemplate"):
            assert after == before  # the same document, field for field
    assert {i["apiVersion"] for i in items if i["kind"] == "ResourceSlice"} == {
        "resource.k8s.io/v1"}
    # And the output reads back the same.
    code, again, _ = run("import", "-f", "-", stdin=out)
    assert code == 0 and yaml.safe_load(again) == yaml.safe_load(out)


def _items(path: Path) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for doc in yaml.safe_load_all(path.read_text()):
        if doc is not None:
            out.extend(doc["items"] if doc.get("kind") == "List" else [doc])
    return out


def test_import_passes_a_foreign_resourceslice_kind_through() -> None:
    crd = "apiVersion: example.com/v1\nkind: ResourceSlice\nmetadata: {name: x}\nspec: 3\n"
    code, out, err = run("import", "-f", "-", stdin=crd)
    assert code == 0, err
    assert yaml.safe_load(out)["items"] == [yaml.safe_load(crd)]


def test_kinds_read_but_not_validated_say_so() -> None:
    # A Service (its selector feeds PodTopologySpread) and a PersistentVolumeClaim (the
    # volume plugins') are modelled but have no validation rules here: not called valid,
    # and not called unmodelled either.
    stdin = ("apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: ml}\n"
             "spec: {selector: {app: web}}\n---\n"
             "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data, namespace: ml}\n"
             "spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}\n")
    code, out, _ = run("validate", "-f", "-", stdin=stdin)
    assert code == 0, out
    assert out == ("-:1 Service ml/web: not checked (kind read by dralab, not validated)\n"
                   "-:2 PersistentVolumeClaim ml/data: not checked (kind read by dralab, "
                   "not validated)\nno object checked; 2 not checked\n")
