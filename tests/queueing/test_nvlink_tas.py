"""Kueue TAS over NVLink domains (issue 36): a Topology whose levels are GFD's
``nvidia.com/gpu.clique`` and the hostname, on nodes ``dralab fleet`` makes from an
NVL72-shaped pool (``nvlink: {nodesPerDomain: 18}``). ``dralab admit`` builds Kueue's TAS
cache from the snapshot (TopologyAwareScheduling, beta, on) and writes Kueue's
``topologyAssignment``, or keeps the workload pending with Kueue's TAS message."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from dralab.cli.main import cli
from dralab.queueing.model import TopologyAssignment
from dralab.queueing.topology_doc import parse_topology_assignment

EXAMPLE = Path(__file__).parent.parent.parent / "examples" / "nvlink-tas"
CLIQUE = "nvidia.com/gpu.clique"
HOSTNAME = "kubernetes.io/hostname"


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def inputs(*names: str) -> list[str]:
    out: list[str] = []
    for name in names:
        out += ["-f", str(EXAMPLE / name)]
    return out


def admit(*args: str) -> tuple[int, dict[str, dict[str, Any]]]:
    code, out, err = run("admit", *args)
    assert err == ""
    return code, {i["metadata"]["name"]: i for i in yaml.safe_load(out)["items"]}


def cliques() -> dict[str, str]:
    """Node -> its clique label, as ``dralab fleet`` writes them."""
    code, out, _ = run("fleet", "-f", str(EXAMPLE / "fleet.yaml"))
    assert code == 0
    return {i["metadata"]["name"]: i["metadata"]["labels"][CLIQUE]
            for i in yaml.safe_load(out)["items"] if i["kind"] == "Node"}


def assignment(workload: dict[str, Any]) -> dict[str, Any]:
    [pod_set] = workload["status"]["admission"]["podSetAssignments"]
    return pod_set["topologyAssignment"]  # type: ignore[no-any-return]


def test_the_fleet_has_two_nvlink_domains_of_18_nodes() -> None:
    labels = cliques()
    assert len(labels) == 36
    assert sorted(list(labels.values()).count(v) for v in set(labels.values())) == [18, 18]


def test_required_clique_is_admitted_with_every_pod_in_one_clique() -> None:
    code, items = admit(*inputs("fleet.yaml", "kueue.yaml", "job.yaml"))
    assert code == 0
    assigned = assignment(items["job-pretrain-3a0ed"])
    # The Topology's lowest level is the hostname: Kueue's v1beta1 writes only that level.
    assert assigned["levels"] == [HOSTNAME]
    nodes = [d["values"][0] for d in assigned["domains"]]
    assert [d["count"] for d in assigned["domains"]] == [1] * 16
    labels = cliques()
    assert len({labels[n] for n in nodes}) == 1
    job = items["pretrain"]["spec"]
    assert job["suspend"] is False
    # Kueue's FromAssignment: the pods wait behind the topology gate until its ungater
    # pins each to an assigned node.
    assert job["template"]["spec"]["schedulingGates"] == [{"name": "kueue.x-k8s.io/topology"}]


def test_nodes_printed_by_dralab_fleet_give_the_same_answer(tmp_path: Path) -> None:
    _, out, _ = run("fleet", "-f", str(EXAMPLE / "fleet.yaml"))
    nodes = tmp_path / "nodes.yaml"
    nodes.write_text(out)
    _, direct = admit(*inputs("fleet.yaml", "kueue.yaml", "job.yaml"))
    code, printed = admit("-f", str(nodes), *inputs("kueue.yaml", "job.yaml"))
    assert code == 0
    assert assignment(printed["job-pretrain-3a0ed"]) == assignment(direct["job-pretrain-3a0ed"])


def test_no_clique_with_room_keeps_it_pending_with_kueues_tas_message() -> None:
    """7 trays of each rack run inference: 11 free per NVLink domain, 16 needed."""
    code, items = admit(*inputs("fleet.yaml", "kueue.yaml", "job.yaml", "running.yaml"))
    assert code == 1
    status = items["job-pretrain-3a0ed"]["status"]
    assert "admission" not in status
    [reserved] = [c for c in status["conditions"] if c["type"] == "QuotaReserved"]
    assert (reserved["status"], reserved["reason"]) == ("False", "TopologyPlacementFailed")
    assert reserved["message"] == (
        "couldn't assign flavors to pod set main: topology \"nvlink\" allows to fit only 11 "
        "out of 16 pod(s). Total nodes: 36; excluded: resource \"nvidia.com/gpu\": 14")
    assert items["pretrain"]["spec"]["suspend"] is True


def test_preferred_clique_spreads_over_two_domains_when_none_has_room() -> None:
    """Kueue's preferred request climbs to the top level and spreads: upstream splits
    the job across NVLink domains (11 + 5), and explain says so."""
    code, items = admit(*inputs("fleet.yaml", "kueue.yaml", "job-preferred.yaml",
                                "running.yaml"))
    assert code == 0
    nodes = [d["values"][0] for d in assignment(items["job-pretrain-preferred-9755a"])["domains"]]
    labels = cliques()
    per_clique = sorted(sum(labels[n] == c for n in nodes) for c in set(labels.values()))
    assert per_clique == [5, 11]
    code, out, _ = run("explain", "workload", "default/pretrain-preferred",
                       *inputs("fleet.yaml", "kueue.yaml", "job-preferred.yaml",
                               "running.yaml"))
    assert code == 0
    [line] = [x for x in out.splitlines() if "main (Kueue's topologyAssignment):" in x]
    assert line.startswith("  pod set main (Kueue's topologyAssignment): 16 pods on 16 "
                           "nodes in 2 nvidia.com/gpu.clique domains (")
    assert "  pod set main (on the nodes of Kueue's topologyAssignment): all 16 pods fit" in out


def test_explain_names_the_one_clique_and_kueues_message() -> None:
    code, out, _ = run("explain", "workload", "default/pretrain",
                       *inputs("fleet.yaml", "kueue.yaml", "job.yaml"))
    assert code == 0
    clique = next(iter(set(cliques().values()) - {"5084a8ce-34b3-5a6c-b8d7-bfa0d3a7a076.0"}))
    assert (f"  pod set main (Kueue's topologyAssignment): 16 pods on 16 nodes in 1 "
            f"nvidia.com/gpu.clique domain ({clique}: 16)") in out
    code, out, _ = run("explain", "workload", "default/pretrain",
                       *inputs("fleet.yaml", "kueue.yaml", "job.yaml", "running.yaml"))
    assert code == 1
    assert out.splitlines()[1] == (
        "  couldn't assign flavors to pod set main: topology \"nvlink\" allows to fit only "
        "11 out of 16 pod(s). Total nodes: 36; excluded: resource \"nvidia.com/gpu\": 14")


def test_an_admitted_workload_holds_its_clique(tmp_path: Path) -> None:
    """The Workload admitted in a first run, fed back with its topologyAssignment,
    holds 16 trays of its clique: a second 16-tray job goes to the other clique, a
    third of 3 trays finds 2 free in each and waits."""
    _, first = admit(*inputs("fleet.yaml", "kueue.yaml", "job.yaml"))
    admitted = tmp_path / "admitted.yaml"
    admitted.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List",
                                        "items": [first["job-pretrain-3a0ed"]]}))
    job = (EXAMPLE / "job.yaml").read_text()
    second, third = tmp_path / "second.yaml", tmp_path / "third.yaml"
    second.write_text(job.replace("name: pretrain\n", "name: second\n"))
    third.write_text(job.replace("name: pretrain\n", "name: third\n")
                     .replace(": 16\n", ": 3\n"))
    code, items = admit(*inputs("fleet.yaml", "kueue.yaml"), "-f", str(admitted),
                        "-f", str(second), "-f", str(third))
    assert code == 1
    labels = cliques()
    held = {labels[d["values"][0]] for d in assignment(items["job-pretrain-3a0ed"])["domains"]}
    [second_wl] = [v for k, v in items.items() if k.startswith("job-second-")]
    got = {labels[d["values"][0]] for d in assignment(second_wl)["domains"]}
    assert len(held) == len(got) == 1 and held != got
    [third_wl] = [v for k, v in items.items() if k.startswith("job-third-")]
    [reserved] = [c for c in third_wl["status"]["conditions"] if c["type"] == "QuotaReserved"]
    assert reserved["message"].startswith("couldn't assign flavors to pod set main: topology "
                                          "\"nvlink\" allows to fit only 2 out of 3 pod(s)")


def test_tas_gate_off_admits_by_quota_without_an_assignment(tmp_path: Path) -> None:
    kueue = tmp_path / "kueue.yaml"
    kueue.write_text((EXAMPLE / "kueue.yaml").read_text().replace(
        "kind: Configuration\n", "kind: Configuration\n"
        "featureGates: {TopologyAwareScheduling: false}\n", 1))
    code, items = admit(*inputs("fleet.yaml", "job.yaml", "running.yaml"), "-f", str(kueue))
    assert code == 0
    [pod_set] = items["job-pretrain-3a0ed"]["status"]["admission"]["podSetAssignments"]
    assert "topologyAssignment" not in pod_set


def test_finished_pods_do_not_hold_their_trays(tmp_path: Path) -> None:
    done = tmp_path / "done.yaml"
    done.write_text((EXAMPLE / "running.yaml").read_text().replace("phase: Running",
                                                                     "phase: Succeeded"))
    code, _ = admit(*inputs("fleet.yaml", "kueue.yaml", "job.yaml"), "-f", str(done))
    assert code == 0


def test_v1beta2_slices_and_v1beta1_domains_read_alike() -> None:
    v1beta1 = {"levels": [CLIQUE, HOSTNAME],
               "domains": [{"values": ["c.0", "n-01"], "count": 2},
                           {"values": ["c.0", "n-02"], "count": 1}]}
    v1beta2 = {"levels": [CLIQUE, HOSTNAME],
               "slices": [{"domainCount": 2,
                           "valuesPerLevel": [{"universal": "c.0"},
                                              {"individual": {"prefix": "n-",
                                                              "roots": ["01", "02"]}}],
                           "podCounts": {"individual": [2, 1]}}]}
    want = TopologyAssignment((CLIQUE, HOSTNAME), ((("c.0", "n-01"), 2), (("c.0", "n-02"), 1)))
    assert parse_topology_assignment(v1beta1) == want
    assert parse_topology_assignment(v1beta2) == want
    assert parse_topology_assignment({"levels": [HOSTNAME], "slices": [{"domainCount": 2}]}) \
        is None


SCENARIO = """\
apiVersion: dralab.dev/v1alpha1
kind: Scenario
metadata: {name: tas}
spec:
  seed: 1
  duration: 1h
  compare: [device-plugin]
  queueing: {kueue: kueue.yaml}
  fleet:
    spec:
      pools:
      - {name: gb200, count: 4, cpu: "144", memory: 1800Gi, gpu: {model: gb200, count: 4},
         nvlink: {nodesPerDomain: 2}}
  workload:
  - name: train
    queue: default/training
    arrivals: [1m]
    duration: {distribution: exponential, mean: 10m}
    cpu: "8"
    memory: 64Gi
    devices: {type: gpu, count: 4}
"""


def test_simulate_says_it_does_not_model_kueues_tas(tmp_path: Path) -> None:
    """The simulator's admission has no TAS cache and does not pin an admitted
    workload's pods to assigned nodes: a TAS flavor gets a warning, not silence."""
    (tmp_path / "kueue.yaml").write_text((EXAMPLE / "kueue.yaml").read_text())
    (tmp_path / "scenario.yaml").write_text(SCENARIO)
    code, _, err = run("simulate", "--scenario", str(tmp_path / "scenario.yaml"),
                       "--out", str(tmp_path / "out"), "--quiet")
    assert code == 0
    assert err == ("warning: dralab simulate does not model Kueue's Topology Aware "
                   "Scheduling: ResourceFlavor gb200 names Topology nvlink, but workloads are "
                   "admitted by quota and their pods placed without the topology; dralab "
                   "admit on a snapshot gives Kueue's topologyAssignment\n")


def test_a_v1beta2_admitted_workload_holds_its_nodes_and_is_written_v1beta1(
        tmp_path: Path) -> None:
    """A Workload read as v1beta2, its topologyAssignment in ``slices``: its 16 trays
    are charged (the next 16-tray job goes to the other clique), and the output
    (v1beta1) lists them as ``domains``."""
    _, first = admit(*inputs("fleet.yaml", "kueue.yaml", "job.yaml"))
    workload = first["job-pretrain-3a0ed"]
    workload["apiVersion"] = "kueue.x-k8s.io/v1beta2"
    [pod_set] = workload["status"]["admission"]["podSetAssignments"]
    v1beta1 = pod_set["topologyAssignment"]
    roots = [d["values"][0].removeprefix("gb200-") for d in v1beta1["domains"]]
    pod_set["topologyAssignment"] = {"levels": v1beta1["levels"], "slices": [{
        "domainCount": len(roots),
        "valuesPerLevel": [{"individual": {"prefix": "gb200-", "roots": roots}}],
        "podCounts": {"universal": 1}}]}
    (tmp_path / "admitted.yaml").write_text(yaml.safe_dump(workload))
    job = (EXAMPLE / "job.yaml").read_text()
    (tmp_path / "second.yaml").write_text(job.replace("name: pretrain\n", "name: second\n"))
    code, items = admit(*inputs("fleet.yaml", "kueue.yaml"), "-f", str(tmp_path / "admitted.yaml"),
                        "-f", str(tmp_path / "second.yaml"))
    assert code == 0
    assert assignment(items["job-pretrain-3a0ed"]) == v1beta1
    labels = cliques()
    [second] = [v for k, v in items.items() if k.startswith("job-second-")]
    held = {labels[d["values"][0]] for d in v1beta1["domains"]}
    assert {labels[d["values"][0]] for d in assignment(second)["domains"]}.isdisjoint(held)


def test_a_computedomain_job_stays_in_one_clique_with_its_channels() -> None:
    """NVIDIA's way to run a multi-node NVLink job: a ComputeDomain whose channel
    template (written as the driver's controller does) every pod claims. Kueue charges
    the channel through deviceClassMappings; TAS keeps the 16 pods in one clique, and on
    the assigned nodes each pod gets its GPUs and the tray's IMEX channel."""
    code, items = admit(*inputs("fleet.yaml", "kueue.yaml", "computedomain-job.yaml"))
    assert code == 0
    workload = items["job-pretrain-cd-406c3"]
    [pod_set] = workload["status"]["admission"]["podSetAssignments"]
    assert pod_set["resourceUsage"]["nvidia.com/imex-channel"] == "16"
    labels = cliques()
    assert len({labels[d["values"][0]] for d in pod_set["topologyAssignment"]["domains"]}) == 1
    code, out, err = run("explain", "workload", "default/pretrain-cd",
                         *inputs("fleet.yaml", "kueue.yaml", "computedomain-job.yaml"))
    assert (code, err) == (0, "")
    assert "  pod set main (on the nodes of Kueue's topologyAssignment): all 16 pods fit" in out


def test_without_the_channel_mapping_kueue_calls_the_job_misconfigured(tmp_path: Path) -> None:
    text = (EXAMPLE / "kueue.yaml").read_text()
    kueue = tmp_path / "kueue.yaml"
    kueue.write_text(text[text.index("apiVersion: kueue.x-k8s.io"):])
    code, items = admit(*inputs("fleet.yaml", "computedomain-job.yaml"), "-f", str(kueue))
    assert code == 1
    [reserved] = [c for c in items["job-pretrain-cd-406c3"]["status"]["conditions"]
                  if c["type"] == "QuotaReserved"]
    assert (reserved["reason"], reserved["message"]) == ("Misconfigured", (
        "spec.podSets[0].template.spec.resourceClaims[0].resourceClaimTemplateName: Not "
        "found: \"DeviceClass compute-domain-default-channel.nvidia.com is not mapped in DRA "
        "configuration for podset main\""))


def test_a_huge_domain_count_is_no_assignment_not_a_memory_error() -> None:
    """Found while writing the v1beta2 reader: domainCount has no maximum in Kueue's CRD
    and a universal value repeats it; past MAX_CREATED_PODS it is not expanded."""
    huge = {"levels": [HOSTNAME], "slices": [{"domainCount": 10**12,
                                              "valuesPerLevel": [{"universal": "n-01"}],
                                              "podCounts": {"universal": 1}}]}
    assert parse_topology_assignment(huge) is None
    negative = {"levels": [HOSTNAME], "slices": [{"domainCount": 1,
                                                  "valuesPerLevel": [{"universal": "n-01"}],
                                                  "podCounts": {"universal": -1}}]}
    assert parse_topology_assignment(negative) is None
