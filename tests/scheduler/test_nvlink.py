"""ComputeDomain workloads through dralab's kube-scheduler model (issue 36).

Inputs are shaped as NVIDIA's k8s-dra-driver-gpu publishes and writes them, at
commit 22407113785e78c7763b4637689a201eb39c6199 (Apache-2.0):
- per node, one ResourceSlice of driver compute-domain.nvidia.com with devices
  channel-0 and daemon-0, attributes type (string) and id (int)
  (cmd/compute-domain-kubelet-plugin/deviceinfo.go; driver.go:110 publishes no
  channel but id 0 of nvlib.go's 2048);
- DeviceClass compute-domain-default-channel.nvidia.com with the Helm chart's CEL
  (deployments/helm/dra-driver-nvidia-gpu/templates/
  deviceclass-compute-domain-default-channel.yaml);
- the channel ResourceClaimTemplate the controller writes
  (templates/compute-domain-workload-claim-template.tmpl.yaml);
- the workloads of demo/specs/imex/nvbandwidth-test-job-1.yaml (ComputeDomain
  numNodes 2, two MPI workers with nvidia.com/gpu: 2 and the channel claim; the
  MPIJob's worker template is written out as its two pods) and
  demo/specs/imex/channel-injection.yaml (numNodes 1, one pod).
Nodes are NVL72-shaped: GB200 compute trays of 4 GPUs, labelled
nvidia.com/gpu.clique "<clusterUUID>.<cliqueID>" as GPU Feature Discovery does
(docs/install.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from dralab.api.base import KubeObject
from dralab.api.codec import decode
from dralab.api.nvlink import (
    CHANNEL_DEVICE_CLASS,
    CLIQUE_LABEL,
    COMPUTE_DOMAIN_DRIVER,
    DAEMON_DEVICE_CLASS,
)
from dralab.cli.main import cli
from dralab.scheduler import schedule
from dralab.scheduler.explain import explain_pod

CLUSTER = "a1b2c3d4-e5f6-7890-abcd-ef1234567890"
CHANNEL_IDS = (0,)  # driver.go:110: the plugin publishes channel 0 only
CHANNEL_CEL = ("device.driver == 'compute-domain.nvidia.com' && "
               "device.attributes['compute-domain.nvidia.com'].type == 'channel' && "
               "device.attributes['compute-domain.nvidia.com'].id == 0")
DAEMON_CEL = ("device.driver == 'compute-domain.nvidia.com' && "
              "device.attributes['compute-domain.nvidia.com'].type == 'daemon'")


def obj(doc: Mapping[str, Any]) -> KubeObject:
    return decode(dict(doc))


def tray(name: str, clique: int, cpu_used: str = "0") -> list[KubeObject]:
    """A GB200 compute tray: 4 GPUs (device plugin), its compute-domain slice, and
    (cpu_used != "0") a pod already bound there using that much CPU."""
    labels = {"kubernetes.io/hostname": name, CLIQUE_LABEL: f"{CLUSTER}.{clique}"}
    alloc = {"cpu": "72", "memory": "480Gi", "pods": "110", "nvidia.com/gpu": "4"}
    devices = [{"name": f"channel-{i}", "attributes": {"type": {"string": "channel"},
                                                      "id": {"int": i}}}
               for i in CHANNEL_IDS]
    devices.append({"name": "daemon-0", "attributes": {"type": {"string": "daemon"},
                                                       "id": {"int": 0}}})
    out = [obj({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
                "status": {"allocatable": alloc, "capacity": alloc}}),
           obj({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                "metadata": {"name": f"{name}-{COMPUTE_DOMAIN_DRIVER}"},
                "spec": {"driver": COMPUTE_DOMAIN_DRIVER, "nodeName": name,
                         "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                         "devices": devices}})]
    if cpu_used != "0":
        out.append(obj({"apiVersion": "v1", "kind": "Pod",
                        "metadata": {"name": f"busy-{name}", "namespace": "other"},
                        "spec": {"nodeName": name, "containers": [
                            {"name": "c", "image": "x",
                             "resources": {"requests": {"cpu": cpu_used}}}]},
                        "status": {"phase": "Running"}}))
    return out


def classes() -> list[KubeObject]:
    return [obj({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
                 "metadata": {"name": name}, "spec": {"selectors": [{"cel": {"expression": e}}]}})
            for name, e in ((CHANNEL_DEVICE_CLASS, CHANNEL_CEL),
                            (DAEMON_DEVICE_CLASS, DAEMON_CEL))]


def compute_domain(name: str, num_nodes: int, template: str) -> list[KubeObject]:
    """The ComputeDomain and the channel RCT its controller writes for it."""
    return [obj({"apiVersion": "resource.nvidia.com/v1beta1", "kind": "ComputeDomain",
                 "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
                 "spec": {"numNodes": num_nodes,
                          "channel": {"resourceClaimTemplate": {"name": template}}}}),
            obj({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                 "metadata": {"name": template, "namespace": "default",
                              "labels": {"resource.nvidia.com/computeDomain": f"uid-{name}"}},
                 "spec": {"spec": {"devices": {
                     "requests": [{"name": "channel",
                                   "exactly": {"deviceClassName": CHANNEL_DEVICE_CLASS}}],
                     "config": [{"requests": ["channel"], "opaque": {
                         "driver": COMPUTE_DOMAIN_DRIVER,
                         "parameters": {"apiVersion": "resource.nvidia.com/v1beta1",
                                        "kind": "ComputeDomainChannelConfig",
                                        "domainID": f"uid-{name}",
                                        "allocationMode": "Single"}}}]}}}})]


def worker(name: str, template: str, *, gpus: int = 2, job: str = "nvbandwidth-test-1",
           clique_affinity: bool = False) -> KubeObject:
    """A worker pod as the MPIJob's worker template makes it."""
    spec: dict[str, Any] = {
        "containers": [{"name": "mpi-worker",
                        "image": "ghcr.io/nvidia/k8s-samples:nvbandwidth-v0.7-8d103163",
                        "resources": {"limits": {"nvidia.com/gpu": str(gpus)},
                                      "claims": [{"name": "compute-domain-channel"}]}}],
        "resourceClaims": [{"name": "compute-domain-channel",
                            "resourceClaimTemplateName": template}]}
    if clique_affinity:
        # What NVIDIA recommends to keep a job in one NVLink domain.
        spec["affinity"] = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"job": job}}, "topologyKey": CLIQUE_LABEL}]}}
    return obj({"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name, "namespace": "default",
                             "labels": {"mpi-memcpy-dra-test-replica": "mpi-worker",
                                        "job": job}},
                "spec": spec})


def fleet(*trays: tuple[str, int, str]) -> list[KubeObject]:
    out = classes()
    for name, clique, used in trays:
        out.extend(tray(name, clique, used))
    return out


def placed(result: Any) -> dict[str, str | None]:
    out: dict[str, str | None] = {u.pod.metadata.name: None for u in result.unplaced}
    out.update({p.pod.metadata.name: p.node for p in result.placed})
    return out


def channels(result: Any) -> dict[str, list[tuple[str, str, str]]]:
    """Claim name -> (driver, pool, device) of its allocation."""
    out = {}
    for claim in result.cluster.claims.values():
        alloc = claim.status.allocation
        out[claim.metadata.name] = sorted(
            (r.driver, r.pool, r.device) for r in (alloc.devices.results if alloc else ()))
    return out


# --- demo/specs/imex ----------------------------------------------------------------

def test_channel_injection_one_pod_gets_channel_0() -> None:
    """channel-injection.yaml: the pod runs and its claim holds channel 0 (the demo's
    pod lists /dev/nvidia-caps-imex-channels, docs/install.md: "channel0")."""
    objects = fleet(("tray-0", 0, "0")) + compute_domain(
        "imex-channel-injection", 1, "imex-channel-0") + [obj({
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "imex-channel-injection"},
            "spec": {"containers": [{"name": "ctr", "image": "ubuntu:22.04",
                                     "resources": {"claims": [{"name": "imex-channel-0"}]}}],
                     "resourceClaims": [{"name": "imex-channel-0",
                                         "resourceClaimTemplateName": "imex-channel-0"}]}})]
    result = schedule(objects)
    assert placed(result) == {"imex-channel-injection": "tray-0"}
    assert list(channels(result).values()) == [
        [(COMPUTE_DOMAIN_DRIVER, "tray-0", "channel-0")]]


def test_nvbandwidth_job_1_two_workers_on_two_nodes() -> None:
    """nvbandwidth-test-job-1.yaml: numNodes 2, two workers of 2 GPUs (ppr:2:node,
    -np 4). The default channel class only matches channel id 0, one per node, so
    the two workers land on two nodes, each with its own node's channel-0, though
    one tray's 4 GPUs would hold both."""
    objects = fleet(("tray-0", 0, "0"), ("tray-1", 0, "0")) + compute_domain(
        "nvbandwidth-test-compute-domain-1", 2, "nvbandwidth-test-compute-domain-1-channel")
    objects += [worker(f"nvbandwidth-test-1-worker-{i}",
                       "nvbandwidth-test-compute-domain-1-channel") for i in range(2)]
    result = schedule(objects)
    where = placed(result)
    assert sorted(n for n in where.values() if n) == ["tray-0", "tray-1"]
    allocated = sorted(c for cs in channels(result).values() for c in cs)
    assert allocated == [(COMPUTE_DOMAIN_DRIVER, "tray-0", "channel-0"),
                         (COMPUTE_DOMAIN_DRIVER, "tray-1", "channel-0")]


def test_third_worker_on_two_trays_waits_for_a_channel() -> None:
    """Three workers, two trays with GPUs enough for all: the third has no channel-0
    left (one per node) and stays pending on DynamicResources."""
    objects = fleet(("tray-0", 0, "0"), ("tray-1", 0, "0")) + compute_domain(
        "cd", 3, "cd-channel")
    objects += [worker(f"w-{i}", "cd-channel", gpus=1) for i in range(3)]
    result = schedule(objects)
    assert sum(1 for n in placed(result).values() if n is None) == 1


# --- NVLink domains: upstream may split a job; pod affinity keeps it together ----------

# Clique 0: tray a0 empty, a1 busy (60 of 72 CPUs); clique 1: b0 lightly used.
# kube-scheduler's default scoring (LeastAllocated) prefers the emptier trays.
SPLIT = (("a0", 0, "0"), ("a1", 0, "60"), ("b0", 1, "8"), ("b1", 1, "60"))


def two_workers(affinity: bool, num_nodes: int = 2, count: int = 2) -> list[KubeObject]:
    objects = fleet(*SPLIT) + compute_domain("cd", num_nodes, "cd-channel")
    return objects + [worker(f"w-{i}", "cd-channel", clique_affinity=affinity)
                      for i in range(count)]


def test_without_pod_affinity_the_job_spans_two_nvlink_domains() -> None:
    """Upstream: the channel claim has no node constraint and pods are placed one by
    one, so a ComputeDomain's pods can land in two NVLink domains."""
    result = schedule(two_workers(affinity=False))
    assert placed(result) == {"w-0": "a0", "w-1": "b0"}
    text = explain_pod(two_workers(affinity=False), "default/w-1").render()
    assert ("ComputeDomain default/cd (numNodes 2): its placed pods span 2 NVLink "
            f"domain(s) on 2 node(s): {CLUSTER}.0: a0; {CLUSTER}.1: b0") in text
    assert f"without required pod affinity on {CLIQUE_LABEL}" in text


def test_required_pod_affinity_on_the_clique_keeps_one_domain() -> None:
    """InterPodAffinity on nvidia.com/gpu.clique (NVIDIA's recommendation): the second
    worker follows the first into clique 0, onto the busier tray."""
    result = schedule(two_workers(affinity=True))
    assert placed(result) == {"w-0": "a0", "w-1": "a1"}
    text = explain_pod(two_workers(affinity=True), "default/w-1").render()
    assert "span 1 NVLink domain(s)" in text
    assert "without required pod affinity" not in text


def test_waiting_pod_says_how_big_the_largest_domain_is() -> None:
    """numNodes 3 with clique affinity: clique 0 has two trays, so the third worker
    waits; explain says the domain needs 3 nodes and the largest has 2."""
    objects = two_workers(affinity=True, num_nodes=3, count=3)
    result = schedule(objects)
    assert placed(result)["w-2"] is None
    text = explain_pod(objects, "default/w-2").render()
    assert ("needs 3 nodes in one NVLink domain; the largest free domain has 2 "
            f"({CLUSTER}.0)") in text


def test_pod_outside_a_compute_domain_gets_no_nvlink_lines() -> None:
    plain = obj({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "plain"},
                 "spec": {"containers": [{"name": "c", "image": "x"}]}})
    objects = [*fleet(("a0", 0, "0")), plain]
    assert "NVLink" not in explain_pod(objects, "default/plain").render()


# --- through the CLI ----------------------------------------------------------------

def test_dralab_schedule_and_explain_pod_on_the_split_job(tmp_path: Path) -> None:
    """`dralab schedule` places the two workers on a0 and b0; `dralab explain pod`
    reads the ComputeDomain (no 'does not use' warning) and says the job spans two
    NVLink domains."""
    path = tmp_path / "split.yaml"
    path.write_text(yaml.safe_dump_all([o.raw for o in two_workers(affinity=False)]))
    runner = CliRunner()
    scheduled = runner.invoke(cli, ["schedule", "-f", str(path), "-o", "table"])
    assert scheduled.exit_code == 0, scheduled.output
    rows = {line.split()[0]: line.split()[1:] for line in scheduled.output.splitlines()}
    assert rows["default/w-0"] == [
        "a0", "Scheduled", "compute-domain-channel=compute-domain.nvidia.com/a0/channel-0"]
    assert rows["default/w-1"] == [
        "b0", "Scheduled", "compute-domain-channel=compute-domain.nvidia.com/b0/channel-0"]
    explained = runner.invoke(cli, ["explain", "pod", "w-1", "-f", str(path)])
    assert explained.exit_code == 0, explained.output
    assert "Pod default/w-1: scheduled on b0" in explained.output
    assert "span 2 NVLink domain(s)" in explained.output
    assert "does not use ComputeDomain" not in explained.output
