"""Job kinds whose ``template`` is a real manifest: its claim templates come with it.

Scenario tables over upstream demos (``data/upstream``, see its README) and small
manifests written here: DRA mode runs the pods with their devices; device-plugin
mode asks for the translated ``nvidia.com/gpu`` / ``nvidia.com/mig-<profile>``;
what has no translation fails when the scenario loads, naming kind and claim.
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from dralab.api.core import Node
from dralab.sim.devplugin import mig_resource
from dralab.sim.jobs import Arrival
from dralab.sim.modes import DEVICE_PLUGIN, DRA, mode_objects
from dralab.sim.scenario import Scenario, ScenarioError, parse_scenario
from dralab.sim.simulate import simulate

UPSTREAM = Path(__file__).parent / "data" / "upstream"

H100 = {"name": "h100", "count": 1, "namePrefix": "h100-", "cpu": "192", "memory": "2Ti",
        "gpu": {"model": "h100-80gb-sxm", "count": 8}}
# Two A100-40GB, each cut (static MIG) the way gpu-test4 wants: 1g.5gb x2, 2g.10gb, 3g.20gb.
A100_STATIC = {"name": "a100", "count": 1, "namePrefix": "a100-", "cpu": "128", "memory": "1Ti",
               "gpu": {"model": "a100-40gb", "count": 2,
                       "mig": {"mode": "static",
                               "profiles": ["1g.5gb", "1g.5gb", "2g.10gb", "3g.20gb"]}}}
A100_DYNAMIC = {"name": "a100", "count": 1, "namePrefix": "a100-", "cpu": "128",
                "memory": "1Ti",
                "gpu": {"model": "a100-40gb", "count": 2, "mig": {"mode": "dynamic"}}}
# One A100-80GB cut into seven 1g.10gb MIG devices.
A100_80_STATIC = {"name": "a100", "count": 1, "namePrefix": "a100-", "cpu": "128",
                  "memory": "1Ti",
                  "gpu": {"model": "a100-80gb", "count": 1,
                          "mig": {"mode": "static", "profiles": ["1g.10gb"] * 7}}}
EXAMPLE = {"name": "ex", "count": 1, "namePrefix": "ex-", "driver": "example", "cpu": "16",
           "memory": "64Gi", "gpu": {"count": 2}}

RCT_TWO_GPUS = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: two-gpus, namespace: ml}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: gpu.nvidia.com, count: 2}
"""

JOB_TWO_GPUS = """
apiVersion: batch/v1
kind: Job
metadata: {name: trainer, namespace: ml}
spec:
  template:
    spec:
      restartPolicy: Never
      resourceClaims: [{name: gpus, resourceClaimTemplateName: two-gpus}]
      containers:
      - name: main
        image: trainer
        resources:
          requests: {cpu: "8", memory: 8Gi}
          claims: [{name: gpus}]
"""

# A notebook on a 1g.10gb slice, through a DeviceClass the manifest itself brings (the
# NVIDIA driver's extended-resources demo defines its MIG classes the same way).
NOTEBOOK_MIG = """
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: mig-1g-10gb.gpu.nvidia.com}
spec:
  selectors:
  - cel:
      expression: >-
        device.driver == 'gpu.nvidia.com' &&
        device.attributes['gpu.nvidia.com'].type == 'mig' &&
        device.attributes['gpu.nvidia.com'].profile == '1g.10gb'
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: notebook-slice}
spec:
  spec:
    devices:
      requests:
      - name: slice
        exactly: {deviceClassName: mig-1g-10gb.gpu.nvidia.com}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: notebook}
spec:
  selector: {matchLabels: {app: notebook}}
  template:
    metadata: {labels: {app: notebook}}
    spec:
      resourceClaims: [{name: mig, resourceClaimTemplateName: notebook-slice}]
      containers:
      - name: jupyter
        image: jupyter
        resources:
          requests: {cpu: "2", memory: 8Gi}
          claims: [{name: mig}]
"""

CPU_ONLY = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: web, image: nginx, resources: {requests: {cpu: "4", memory: 4Gi}}}
"""


def write(tmp: Path, name: str, *texts: str) -> str:
    path = tmp / name
    path.write_text("\n---\n".join(texts))
    return str(path)


def scenario(pools: list[dict[str, Any]], template: str, pods: int = 3,
             compare: list[str] | None = None, **kind: Any) -> Scenario:
    spec: dict[str, Any] = {
        "seed": 2, "duration": "3h", "sampleInterval": "30m",
        "fleet": {"spec": {"pools": pools}},
        "workload": [{"name": "k", "arrivals": ["0s"] * pods, "template": template,
                      "duration": {"distribution": "fixed", "mean": "1h"}, **kind}]}
    if compare is not None:
        spec["compare"] = compare
    # Templates come from data/upstream and from tmp_path: allowed outside the (unused)
    # base directory here; tests/hostile/test_sim_inputs.py tests the containment rule.
    return parse_scenario({"apiVersion": "dralab.dev/v1alpha1", "kind": "Scenario",
                           "metadata": {"name": "t"}, "spec": spec}, "s.yaml",
                          allow_outside=True)


@dataclass(frozen=True)
class Run:
    name: str
    pools: list[dict[str, Any]]
    template: str                       # file in data/upstream, or a key of MANIFESTS
    plugin: dict[str, int]              # device-plugin resources per pod
    starts: list[float]                 # pod start times, the same in every mode
    devices: int                        # devices each started pod holds
    gpus_per_pod: float                 # GPU share each started pod holds
    compare: list[str] = field(default_factory=lambda: ["device-plugin", "dra"])


MANIFESTS = {
    "job-two-gpus": (RCT_TWO_GPUS, JOB_TWO_GPUS),
    "notebook-mig": (NOTEBOOK_MIG,),
    "cpu-only": (CPU_ONLY,),
}

RUNS = [
    # NVIDIA quickstart gpu-test2: one pod, one GPU shared by its two containers.
    Run("nvidia-gpu-test2", [H100], "nvidia-gpu-test2.yaml", {"nvidia.com/gpu": 1},
        [0.0, 0.0, 0.0], 1, 1.0),
    # NVIDIA quickstart gpu-test4: four MIG devices of one GPU per pod; a GPU cut for it
    # serves one pod, so two run at once and the third waits an hour.
    Run("nvidia-gpu-test4", [A100_STATIC], "nvidia-gpu-test4.yaml",
        {"nvidia.com/mig-1g.5gb": 2, "nvidia.com/mig-2g.10gb": 1, "nvidia.com/mig-3g.20gb": 1},
        [0.0, 0.0, 3600.0], 4, 1.0),
    # Our own Job + template in one file: 2 GPUs per pod, four pods fill the 8-GPU node.
    Run("job-two-gpus", [H100], "job-two-gpus", {"nvidia.com/gpu": 2},
        [0.0, 0.0, 0.0, 0.0, 3600.0], 2, 2.0),
    # A MIG class from the manifest itself: seven 1g.10gb slices, the eighth pod waits.
    Run("notebook-mig", [A100_80_STATIC], "notebook-mig", {"nvidia.com/mig-1g.10gb": 1},
        [0.0] * 7 + [3600.0], 1, 1 / 7),
    # No claims, no GPUs: CPU only, in both modes.
    Run("cpu-only", [H100], "cpu-only", {}, [0.0, 0.0, 0.0], 0, 0.0),
    # Kueue's DRA sample Job (generateName, example driver): DRA only, one GPU per pod.
    Run("kueue-sample-dra-rct-job", [EXAMPLE], "kueue-sample-dra-rct-job.yaml", {},
        [0.0, 0.0, 3600.0], 1, 0.0, ["dra"]),
]


def _template(tmp: Path, key: str) -> str:
    if key in MANIFESTS:
        return write(tmp, f"{key}.yaml", *MANIFESTS[key])
    return str(UPSTREAM / key)


@pytest.mark.parametrize("case", RUNS, ids=lambda c: c.name)
def test_template_kinds_run_with_their_devices(case: Run, tmp_path: Path) -> None:
    s = scenario(case.pools, _template(tmp_path, case.template), pods=len(case.starts),
                 compare=case.compare)
    if "device-plugin" in case.compare:
        assert s.device_plugin["k"].resources() == case.plugin
    result = simulate(s)
    assert [m.mode for m in result.modes] == case.compare
    for mode in result.modes:
        starts = sorted(p.start for p in mode.pods if p.start is not None)
        assert starts == case.starts, mode.mode
        started = [p for p in mode.pods if p.start is not None]
        assert all(p.devices == case.devices for p in started), mode.mode
        if mode.mode == "device-plugin" or case.pools[0].get("driver") != "example":
            assert all(p.gpu_fraction == pytest.approx(case.gpus_per_pod) for p in started)
    # Both modes count the same physical GPUs (static MIG GPUs included).
    totals = {m.samples[0].gpus_total for m in result.modes}
    assert len(totals) == 1, totals


def test_device_plugin_pods_ask_for_the_translated_resources(tmp_path: Path) -> None:
    s = scenario([A100_STATIC], str(UPSTREAM / "nvidia-gpu-test4.yaml"))
    arrival = Arrival(0.0, s.kinds[0], 0, (3600.0,))
    dp = DEVICE_PLUGIN.make_pod(arrival, 0, prototype=DEVICE_PLUGIN.prototypes(s)["k"])
    assert dp.spec.resource_claims == []
    # Each container gets the MIG device of the request it used, as limit and request.
    per_container = {c.name: {k: str(v) for k, v in c.resources.limits.items()}
                     for c in dp.spec.containers}
    assert per_container == {"ctr0": {"nvidia.com/mig-1g.5gb": "1"},
                             "ctr1": {"nvidia.com/mig-1g.5gb": "1"},
                             "ctr2": {"nvidia.com/mig-2g.10gb": "1"},
                             "ctr3": {"nvidia.com/mig-3g.20gb": "1"}}
    assert all(c.resources.requests == c.resources.limits and not c.resources.claims
               for c in dp.spec.containers)
    dra = DRA.make_pod(arrival, 0, prototype=DRA.prototypes(s)["k"])
    assert [c.resource_claim_template_name for c in dra.spec.resource_claims] == ["mig-devices"]
    assert dra.metadata.namespace == dp.metadata.namespace == "sim"
    assert dra.metadata.labels["app"] == "pod" and dra.metadata.labels["dralab.dev/kind"] == "k"


def test_templates_travel_inside_the_scenario(tmp_path: Path) -> None:
    path = tmp_path / "job.yaml"
    path.write_text(RCT_TWO_GPUS + "\n---\n" + JOB_TWO_GPUS)
    s = scenario([H100], str(path))
    path.unlink()  # a sweep worker elsewhere has no copy of the file
    copy = pickle.loads(pickle.dumps(s))
    assert copy == s
    dp, dra = simulate(copy).modes
    assert all(p.start is not None for p in dp.pods + dra.pods)


def test_same_scenario_same_result(tmp_path: Path) -> None:
    s = scenario([A100_80_STATIC], _template(tmp_path, "notebook-mig"), pods=9)
    assert simulate(s).to_json() == simulate(s).to_json()


RCT = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: t}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: REQUEST
"""

POD = """
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  resourceClaims: [{name: gpu, resourceClaimTemplateName: t}]
  containers: [{name: c, image: x, resources: {claims: [{name: gpu}]}}]
"""


def _request(request: str) -> tuple[str, ...]:
    return RCT.replace("REQUEST", request), POD


# (name, pools, manifest documents or upstream file, compare, message fragments)
FAILURES: list[tuple[str, list[dict[str, Any]], tuple[str, ...] | str, list[str] | None,
                     list[str]]] = [
    ("example-driver-has-no-plugin", [EXAMPLE], "kueue-sample-dra-rct-job.yaml", None,
     ["job kind k: claim gpu (ResourceClaimTemplate single-gpu) request gpu: no device-plugin "
      "equivalent: it matches gpu.example.com devices", "--compare dra"]),
    ("dynamic-mig-has-no-plugin", [A100_DYNAMIC], "nvidia-gpu-test4.yaml", None,
     ["job kind k: claim mig-devices request mig-1g-5gb-0: no node of the fleet "
      "advertises nvidia.com/mig-1g.5gb in device-plugin mode"]),
    ("several-mig-profiles", [A100_STATIC], _request("{deviceClassName: mig.nvidia.com}"), None,
     ["request gpu: no device-plugin equivalent: it matches nvidia.com/mig-1g.5gb and "
      "nvidia.com/mig-2g.10gb and nvidia.com/mig-3g.20gb"]),
    ("allocation-mode-all", [H100],
     _request("{deviceClassName: gpu.nvidia.com, allocationMode: All}"), None,
     ["request gpu: no device-plugin equivalent: allocationMode All;"]),
    ("admin-access", [H100], _request("{deviceClassName: gpu.nvidia.com, adminAccess: true}"),
     None, ["request gpu: no device-plugin equivalent: adminAccess;"]),
    ("unknown-class", [H100], _request("{deviceClassName: nope.example.com}"), None,
     ["DeviceClass nope.example.com is neither in the fleet nor in the template"]),
    ("matches-nothing", [H100],
     _request("{deviceClassName: gpu.nvidia.com, selectors: [{cel: {expression: "
              "\"device.attributes['gpu.nvidia.com'].productName == 'B200'\"}}]}"), None,
     ["class gpu.nvidia.com and its selectors match no device of the fleet"]),
    ("cel-compile-error", [H100],
     _request("{deviceClassName: gpu.nvidia.com, selectors: [{cel: {expression: "
              "\"gpu.memory > 1\"}}]}"), ["dra"],
     ["ResourceClaimTemplate t: spec.spec.devices.requests[0].exactly.selectors[0].cel."
      "expression: Invalid value", "undeclared reference"]),
    ("cel-runtime-error", [H100],
     _request("{deviceClassName: gpu.nvidia.com, selectors: [{cel: {expression: "
              "\"device.attributes['gpu.nvidia.com'].nosuch == 'x'\"}}]}"), None,
     ["request gpu: no device-plugin equivalent: CEL runtime error on device gpu.nvidia.com/"]),
    ("two-pod-templates", [H100], "nvidia-gpu-test1.yaml", ["dra"],
     ["nvidia-gpu-test1.yaml: 2 pod templates", "Pod gpu-test1/pod1",
      "must hold exactly one"]),
    ("no-pod-template", [H100], (RCT.replace("REQUEST", "{deviceClassName: gpu.nvidia.com}"),),
     ["dra"], ["no pod template: expected a Pod or a workload with one"]),
    ("claim-template-not-in-the-file", [H100], (POD,), ["dra"],
     ["Pod p: spec.resourceClaims[0].resourceClaimTemplateName: ResourceClaimTemplate t is "
      "not in"]),
    ("template-in-another-namespace", [H100], (RCT_TWO_GPUS.replace("namespace: ml",
                                                                     "namespace: other"),
                                               JOB_TWO_GPUS), ["dra"],
     ["Job ml/trainer: spec.template.spec.resourceClaims[0].resourceClaimTemplateName: "
      "ResourceClaimTemplate two-gpus is in namespace other, the pod in ml"]),
    ("shared-claim", [H100], (POD.replace("resourceClaimTemplateName: t",
                                          "resourceClaimName: shared"),), ["dra"],
     ["spec.resourceClaims[0].resourceClaimName: pods of a job kind cannot share the claim "
      "shared"]),
    ("invalid-claim-template", [H100],
     _request("{deviceClassName: gpu.nvidia.com, count: -1, selectors: {a: b}}"), ["dra"],
     ["ResourceClaimTemplate t: spec.spec.devices.requests[0].exactly"]),
    ("invalid-pod-template", [H100],
     (JOB_TWO_GPUS.replace("containers:", "containers: {bad: {nested: 1}}\n      x:"),
      RCT_TWO_GPUS), ["dra"],
     ["Job ml/trainer: spec.template.spec.containers"]),
]


@pytest.mark.parametrize(("name", "pools", "manifest", "compare", "fragments"), FAILURES,
                         ids=[f[0] for f in FAILURES])
def test_unusable_templates_fail_when_the_scenario_loads(
        name: str, pools: list[dict[str, Any]], manifest: tuple[str, ...] | str,
        compare: list[str] | None, fragments: list[str], tmp_path: Path) -> None:
    template = str(UPSTREAM / manifest) if isinstance(manifest, str) \
        else write(tmp_path, "m.yaml", *manifest)
    with pytest.raises(ScenarioError) as info:
        scenario(pools, template, compare=compare)
    message = str(info.value)
    assert message.startswith("s.yaml: spec.workload[0].template: ")
    assert "\n" not in message
    for fragment in fragments:
        assert fragment in message
    # Field paths and short values, never a Python rendering of the input.
    assert "{'" not in message and "['" not in message


def test_untranslatable_kinds_run_when_only_dra_is_compared(tmp_path: Path) -> None:
    s = scenario([A100_DYNAMIC], str(UPSTREAM / "nvidia-gpu-test4.yaml"), compare=["dra"])
    assert s.device_plugin["k"].error is not None
    (dra,) = simulate(s).modes
    assert sorted(p.start for p in dra.pods if p.start is not None) == [0.0, 0.0, 3600.0]
    # Asking for device-plugin mode later fails the same way, before anything runs.
    with pytest.raises(ScenarioError, match=r"nvidia\.com/mig-1g\.5gb"):
        s.with_compare(("device-plugin", "dra"))


def test_an_empty_template_name_is_an_error() -> None:
    with pytest.raises(ScenarioError, match=r"spec\.workload\[0\]\.template: must name"):
        scenario([H100], " ")


def test_kind_devices_and_template_must_agree(tmp_path: Path) -> None:
    template = write(tmp_path, "job.yaml", RCT_TWO_GPUS, JOB_TWO_GPUS)
    with pytest.raises(ScenarioError, match="uses no ResourceClaimTemplate k, so the job "
                                            "kind's devices would be ignored"):
        scenario([H100], template, devices={"type": "gpu", "count": 1})


def test_two_kinds_cannot_bring_different_templates_of_one_name(tmp_path: Path) -> None:
    one = write(tmp_path, "one.yaml", RCT_TWO_GPUS, JOB_TWO_GPUS)
    other = write(tmp_path, "other.yaml", RCT_TWO_GPUS.replace("count: 2", "count: 1"),
                  JOB_TWO_GPUS)
    workload = [{"name": n, "arrivals": ["0s"], "template": t} for n, t in (("a", one),
                                                                             ("b", other))]
    with pytest.raises(ScenarioError) as info:
        parse_scenario({"apiVersion": "dralab.dev/v1alpha1", "kind": "Scenario",
                        "spec": {"fleet": {"spec": {"pools": [H100]}}, "workload": workload}},
                       "s.yaml", allow_outside=True)
    assert str(info.value).startswith("s.yaml: spec.workload[1].template: ")
    assert "ResourceClaimTemplate two-gpus" in str(info.value) and "job kind a" in str(info.value)
    # The same template brought twice is fine.
    workload[1]["template"] = one
    s = parse_scenario({"apiVersion": "dralab.dev/v1alpha1", "kind": "Scenario",
                        "spec": {"fleet": {"spec": {"pools": [H100]}}, "workload": workload}},
                       "s.yaml", allow_outside=True)
    assert set(s.templates) == {"a", "b"}


def test_static_mig_pools_advertise_mig_devices_to_the_device_plugin() -> None:
    # The device plugin (mixed strategy) names a MIG profile's resource with '.' for '+'.
    assert mig_resource("1g.10gb+me") == "nvidia.com/mig-1g.10gb.me"
    pools = [{"name": "a", "count": 1, "cpu": "8", "memory": "8Gi",
              "gpu": {"model": "a100-80gb", "count": 2,
                      "mig": {"mode": "static", "profiles": ["1g.10gb+me", "3g.40gb"]}}},
             {**A100_DYNAMIC, "name": "d", "namePrefix": "d-"}]
    s = parse_scenario({"apiVersion": "dralab.dev/v1alpha1", "kind": "Scenario",
                        "spec": {"fleet": {"spec": {"pools": pools}},
                                 "workload": [{"name": "k", "arrivalRate": "1/h"}]}})
    extended = {n.name: {k: str(q) for k, q in n.status.allocatable.items()
                         if k.startswith("nvidia.com/")}
                for n in mode_objects(s, "device-plugin") if isinstance(n, Node)}
    # Dynamic MIG exists only with DRA: to the device plugin those are whole GPUs.
    assert extended == {"a-01": {"nvidia.com/mig-1g.10gb.me": "2", "nvidia.com/mig-3g.40gb": "2"},
                        "d-01": {"nvidia.com/gpu": "2"}}
