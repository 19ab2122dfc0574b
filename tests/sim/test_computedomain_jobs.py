"""Issue 36 item 4 in the main Scenario simulator: job kinds with ``computeDomain: true``.

Each job creates its ComputeDomain and the workload channel ResourceClaimTemplate NVIDIA's
controller writes for it (NVIDIA/k8s-dra-driver-gpu 22407113785e78c7763b4637689a201eb39c6199,
templates/compute-domain-workload-claim-template.tmpl.yaml); its pods claim a channel from
it. Under the default profile (kube-scheduler as is) jobs span NVLink domains; with
dralab's opt-in NVLinkDomainGang none does. Figures: examples/scenarios/nvl72-kube*.yaml.
"""

from __future__ import annotations

import copy
import dataclasses
import html
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from dralab.api.computedomain import compute_domain_uid
from dralab.api.errors import InputError
from dralab.cli.main import cli
from dralab.cluster import ClusterState
from dralab.report.verdict import COMPARE_MODES, COMPARE_PLACEMENTS, alone_decision
from dralab.report.writer import render_report
from dralab.sim.computedomains import (
    CHANNEL_CLAIM,
    cd_jobs,
    clique_affinity,
    gang_profile,
    gang_sizes,
    job_compute_domain,
    job_template,
    placement_label,
)
from dralab.sim.jobs import draw_arrivals
from dralab.sim.modes import DRA
from dralab.sim.results import ModeResult, SimulationResult
from dralab.sim.scenario import Scenario, load_scenario, parse_scenario
from dralab.sim.simulate import simulate

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "scenarios"
KUBE = EXAMPLES / "nvl72-kube.yaml"
GANG = EXAMPLES / "nvl72-kube-gang.yaml"
AFFINITY = EXAMPLES / "nvl72-kube-affinity.yaml"


@pytest.fixture(scope="module")
def kube() -> SimulationResult:
    return simulate(load_scenario(str(KUBE)))


@pytest.fixture(scope="module")
def gang() -> SimulationResult:
    return simulate(load_scenario(str(GANG)))


def _summary(result: SimulationResult) -> dict[str, Any]:
    cd = result.modes[0].compute_domains
    assert cd is not None
    return cd.summary()


def _doc() -> dict[str, Any]:
    data = yaml.safe_load(KUBE.read_text())
    assert isinstance(data, dict)
    return data


# --- the objects ----------------------------------------------------------------------------

def test_each_job_gets_its_compute_domain_and_channel_template() -> None:
    scenario = load_scenario(str(KUBE))
    arrival = draw_arrivals(scenario)[0]
    cd = job_compute_domain(arrival)
    assert cd.name == f"{arrival.name}-cd" and cd.namespace == "sim"
    assert cd.num_nodes == arrival.kind.pods_per_job
    assert compute_domain_uid(cd) == compute_domain_uid(job_compute_domain(arrival))
    template = job_template(arrival)
    assert template.metadata.name == f"{arrival.name}-cd-channel"
    assert template.metadata.labels["resource.nvidia.com/computeDomain"] == \
        compute_domain_uid(cd)
    request = template.spec.spec.devices.requests[0]
    assert request.name == "channel"
    # the pod: its GPUs and a channel from the job's template
    pod = DRA.make_pod(arrival, 0)
    refs = {r.name: r.resource_claim_template_name for r in pod.spec.resource_claims}
    assert refs == {"devices": arrival.kind.name, CHANNEL_CLAIM: template.metadata.name}
    assert [c.name for c in pod.spec.containers[0].resources.claims] == \
        ["devices", CHANNEL_CLAIM]
    # what NVLinkDomainGang reads: the gang's size is numNodes, by uid and by name
    sizes = gang_sizes([arrival])
    assert sizes == {f"sim/{compute_domain_uid(cd)}": cd.num_nodes,
                     f"sim/{cd.name}": cd.num_nodes}


def test_templates_are_removed_when_the_job_ends(monkeypatch: pytest.MonkeyPatch) -> None:
    added: list[str] = []
    removed: list[str] = []
    add, remove = ClusterState.add_template, ClusterState.remove_template

    def spy_add(self: ClusterState, template: Any) -> None:
        added.append(f"{template.metadata.namespace}/{template.metadata.name}")
        add(self, template)

    def spy_remove(self: ClusterState, key: str) -> Any:
        removed.append(key)
        return remove(self, key)

    monkeypatch.setattr(ClusterState, "add_template", spy_add)
    monkeypatch.setattr(ClusterState, "remove_template", spy_remove)
    doc = _doc()
    doc["spec"]["duration"] = "3h"
    doc["spec"]["workload"] = [{
        "name": "pair", "arrivals": ["0s", "10m"], "podsPerJob": 2, "computeDomain": True,
        "duration": {"distribution": "fixed", "mean": "30m"}, "cpu": "8", "memory": "8Gi",
        "devices": {"type": "gpu", "count": 4}}]
    result = simulate(parse_scenario(doc, "s.yaml"))
    jobs = [f"sim/pair-0000{i}-cd-channel" for i in range(2)]
    assert [a for a in added if a in jobs] == jobs
    assert removed == jobs  # each once, when its last pod has run its time
    cd = result.modes[0].compute_domains
    assert cd is not None and [j.placed for j in cd.jobs] == [0.0, 600.0]


# --- outcomes ---------------------------------------------------------------------------------

def test_default_profile_splits_jobs_across_nvlink_domains(kube: SimulationResult) -> None:
    """Upstream: the channel claim has no node constraint and kube-scheduler's default
    scoring spreads pods over the least allocated nodes, so jobs span both racks."""
    s = _summary(kube)
    assert kube.modes[0].compute_domains.profile == "default"  # type: ignore[union-attr]
    assert (s["jobs"], s["started"], s["spanning"], s["never_started"]) == (24, 24, 21, 0)
    assert s["wait_p50"] == 0.0
    assert s["wait_p90"] == pytest.approx(2164.99, abs=0.01)
    assert s["stranded_mean"] == pytest.approx(1.53, abs=0.01)
    assert s["held_mean"] == pytest.approx(1.10, abs=0.01)


def test_gang_profile_keeps_every_job_in_one_domain(gang: SimulationResult) -> None:
    s = _summary(gang)
    cd = gang.modes[0].compute_domains
    assert cd is not None and cd.profile == "NVLinkDomainGang"
    assert s["spanning"] == 0
    assert all(j.domains == 1 for j in cd.jobs if j.placed is not None)
    # the same demand: a job arriving at the end still waits for room in one rack
    assert (s["jobs"], s["started"], s["never_started"]) == (24, 23, 1)
    assert s["wait_p90"] == pytest.approx(3097.60, abs=0.01)
    # whole-rack placement leaves free trays in racks too full for a 4-tray job, and no
    # pod ever holds a tray while waiting for its job's others
    assert s["stranded_mean"] == pytest.approx(9.86, abs=0.01)
    assert s["held_mean"] == 0.0


def test_clique_pod_affinity_keeps_jobs_whole_upstream() -> None:
    """What NVIDIA's docs recommend, with kube-scheduler as it is: required pod affinity on
    nvidia.com/gpu.clique with the job's own pods (matchLabelKeys). No job spans; the
    first pod picks the rack, so some jobs wait for room there."""
    result = simulate(load_scenario(str(AFFINITY)))
    mode = result.modes[0]
    s = _summary(result)
    assert mode.compute_domains is not None
    assert mode.compute_domains.profile == "default, clique pod affinity"
    assert (s["jobs"], s["started"], s["spanning"], s["never_started"]) == (24, 22, 0, 2)
    assert s["wait_p90"] == pytest.approx(4123.42, abs=0.01)
    # pods placed in their job's rack hold their trays until the rest fit there
    assert s["held_mean"] == pytest.approx(19.18, abs=0.01)
    # the manifest's pod plus the channel the scenario's computeDomain adds
    arrival = draw_arrivals(load_scenario(str(AFFINITY)))[0]
    prototype = load_scenario(str(AFFINITY)).templates[arrival.kind.name].pod
    pod = DRA.make_pod(arrival, 0, 0, prototype)
    assert [r.name for r in pod.spec.resource_claims] == ["gpus", CHANNEL_CLAIM]


def test_waits_count_to_the_last_pod(kube: SimulationResult, gang: SimulationResult) -> None:
    """A job's wait is arrival -> its last pod placed; the gang's pods are placed together."""
    for result in (kube, gang):
        mode = result.modes[0]
        cd = mode.compute_domains
        assert cd is not None
        for job in cd.jobs:
            starts = [p.start for p in mode.pods if p.job == job.name and p.start is not None]
            if job.placed is None:
                assert len(starts) < job.pods
            else:
                assert job.placed == max(starts) and job.wait == job.placed - job.arrival
        if result is gang:
            for job in cd.jobs:
                together = {p.start for p in mode.pods if p.job == job.name}
                assert len(together) == 1  # all at once, or none


def test_a_jobs_work_starts_with_its_last_pod(kube: SimulationResult) -> None:
    """Pods placed before their job's last one hold their nodes and wait; then all run the
    job's drawn time and end together."""
    mode = kube.modes[0]
    cd = mode.compute_domains
    assert cd is not None
    waited = 0
    for job in cd.jobs:
        pods = [p for p in mode.pods if p.job == job.name and not p.preempted]
        ends = {p.end for p in pods}
        if job.placed is not None and None not in ends:
            assert len(ends) == 1 and min(p.start or 0 for p in pods) <= job.placed
            waited += any(p.start != job.placed for p in pods)
    assert waited > 0  # some jobs' first pods did wait for the others


def test_deterministic_for_a_seed() -> None:
    scenario = load_scenario(str(KUBE))
    one, two = simulate(scenario), simulate(scenario)
    assert one.to_json() == two.to_json()
    other = simulate(scenario.with_seed(2))
    assert other.to_json() != one.to_json()


def test_metrics_json_round_trip(kube: SimulationResult) -> None:
    data = json.loads(json.dumps(kube.to_json()))
    mode = data["modes"][0]
    assert mode["compute_domains"]["summary"]["spanning"] == 21
    assert mode["compute_domains"]["smallest_multi_node_job"] == 4
    back = ModeResult.from_json(mode)
    assert back.compute_domains == kube.modes[0].compute_domains


def test_cd_jobs_counts_first_starts_and_domains() -> None:
    cliques = {"a1": "A.0", "a2": "A.0", "b1": "B.0"}
    jobs = cd_jobs([("j", "k", 2, 10.0), ("k", "k", 2, 0.0), ("s", "k", 1, 5.0)],
                   [("j", 0, 20.0, "a1"), ("j", 1, 30.0, "b1"), ("j", 1, 50.0, "a2"),
                    ("k", 0, 1.0, "a1"), ("s", 0, 5.0, "x")],
                   cliques.get)
    assert [(j.placed, j.domains, j.wait) for j in jobs] == \
        [(30.0, 2, 20.0), (None, 1, None), (5.0, 1, 0.0)]


def test_placement_label_names_what_was_measured() -> None:
    prototype = load_scenario(str(AFFINITY)).templates["train-8"].pod
    assert clique_affinity(prototype) and not clique_affinity(None)
    gang = {"profiles": [{"plugins": {"multiPoint": {"enabled": [
        {"name": "NVLinkDomainGang"}]}}}]}
    assert placement_label(None, []) == "default"
    assert placement_label(None, [True, True]) == "default, clique pod affinity"
    assert placement_label(None, [True, False]) == \
        "default, clique pod affinity on some kinds"
    assert placement_label(gang, [True]) == "NVLinkDomainGang"


def test_gang_profile_is_named_only_when_enabled() -> None:
    assert gang_profile(None) == "default"
    assert gang_profile({"profiles": [{"plugins": {"score": {"enabled": [
        {"name": "NodeResourcesFit"}]}}}]}) == "default"
    assert gang_profile({"profiles": [{"plugins": {"multiPoint": {"enabled": [
        {"name": "NVLinkDomainGang"}]}}}]}) == "NVLinkDomainGang"


# --- bad input ----------------------------------------------------------------------------------

def _without_compute_domain_pool(doc: dict[str, Any]) -> None:
    doc["spec"]["fleet"]["spec"]["pools"][0]["computeDomains"] = False


def _device_plugin(doc: dict[str, Any]) -> None:
    doc["spec"]["compare"] = ["device-plugin", "dra"]


def _too_many_pods(doc: dict[str, Any]) -> None:
    doc["spec"]["workload"][0]["podsPerJob"] = 37


@pytest.mark.parametrize(("change", "message"), [
    (_without_compute_domain_pool, "spec.workload[0].computeDomain: the fleet has no pool "
                                   "with computeDomains: true (no compute-domain.nvidia.com "
                                   "channel devices)"),
    (_device_plugin, "spec.workload[0].computeDomain: a ComputeDomain's channel is a DRA "
                     "claim: compare dra only, not device-plugin"),
    (_too_many_pods, "spec.workload[0].podsPerJob: 37 pods of a ComputeDomain need 37 nodes "
                     "(one channel each); the fleet has 36 with computeDomains"),
])
def test_bad_input_is_one_line(change: Any, message: str) -> None:
    doc = copy.deepcopy(_doc())
    change(doc)
    with pytest.raises(InputError) as err:
        parse_scenario(doc, "s.yaml")
    text = str(err.value)
    assert text == f"s.yaml: {message}"


def test_a_manifest_naming_its_own_channel_claim_is_refused(tmp_path: Path) -> None:
    manifest = (EXAMPLES / "nvl72-kube-affinity" / "train.yaml").read_text()
    manifest = manifest.replace("claims: [{name: gpus}]", "claims: [{name: gpus}, "
                                "{name: compute-domain-channel}]")
    manifest = manifest.replace("- {name: gpus, resourceClaimTemplateName: four-gpus}",
                                "- {name: gpus, resourceClaimTemplateName: four-gpus}\n"
                                "      - {name: compute-domain-channel, "
                                "resourceClaimTemplateName: four-gpus}")
    (tmp_path / "train.yaml").write_text(manifest)
    doc = yaml.safe_load(AFFINITY.read_text())
    for kind in doc["spec"]["workload"]:
        kind["template"] = "train.yaml"
    with pytest.raises(InputError) as err:
        parse_scenario(doc, "s.yaml", str(tmp_path))
    assert str(err.value) == (
        "s.yaml: spec.workload[0].template: its pod already claims 'compute-domain-channel'; "
        "with computeDomain: true the job's ComputeDomain adds that claim (remove it from "
        "the manifest)")


def test_compare_override_is_checked_too() -> None:
    scenario: Scenario = load_scenario(str(KUBE))
    with pytest.raises(InputError, match="compare dra only, not kai"):
        load_scenario(str(KUBE), ["dra", "kai"])
    with pytest.raises(InputError, match="compare dra only, not device-plugin"):
        scenario.with_compare(("device-plugin",))


def test_dralab_simulate_reports_compute_domains(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["simulate", "--scenario", str(KUBE), "--out", str(out)])
    assert result.exit_code == 0, result.output
    text = (out / "computedomains.txt").read_text()
    assert text in result.output
    assert text.startswith("ComputeDomain jobs — seed 1\n")
    assert "24 multi-node jobs, 24 started, 21 spanning >1\n" in text
    assert "spans 2 NVLink domains" in text
    assert "default profile (upstream)" in text
    assert max(len(line) for line in text.splitlines()) <= 80
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["modes"][0]["compute_domains"]["profile"] == "default"
    # the page carries the same section, and links the file
    page = (out / "index.html").read_text()
    section = page[page.index('<section id="computedomains">'):]
    section = section[:section.index("</section>")]
    assert html.escape(text.rstrip()) in section
    assert '<a href="computedomains.txt">computedomains.txt</a> —' in page
    # one mode only (a channel is a DRA claim): the verdict says what to compare instead of
    # asking for --compare device-plugin,dra, which the scenario refuses
    assert f"Decide: {COMPARE_PLACEMENTS}" in result.output
    assert html.escape(COMPARE_PLACEMENTS) in page
    assert "--compare device-plugin,dra" not in result.output + page


def test_one_mode_decision_without_compute_domains_asks_for_both_models(
        kube: SimulationResult) -> None:
    assert alone_decision(kube) == COMPARE_PLACEMENTS
    plain = dataclasses.replace(
        kube, modes=tuple(dataclasses.replace(m, compute_domains=None) for m in kube.modes))
    assert alone_decision(plain) == COMPARE_MODES
    assert "computedomains" not in render_report(plain)["index.html"]
    assert "computedomains.txt" not in render_report(plain)


def test_dralab_simulate_bad_compute_domain_scenario_exits_2(tmp_path: Path) -> None:
    doc = _doc()
    _without_compute_domain_pool(doc)
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(doc))
    result = CliRunner().invoke(cli, ["simulate", "--scenario", str(bad),
                                      "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert "spec.workload[0].computeDomain: the fleet has no pool" in result.output
    assert "Traceback" not in result.output and len(result.output.splitlines()) == 1


def test_domains_of_nodes_removed_later_are_still_known() -> None:
    """A job's NVLink domains are read when its pods are placed: nodes the autoscaler adds
    for the job and removes afterwards still count by their clique label."""
    doc = _doc()
    doc["spec"]["duration"] = "2h"
    pool = doc["spec"]["fleet"]["spec"]["pools"][0]
    pool["count"] = 0
    pool["autoscaling"] = {"min": 0, "max": 18, "pricePerHour": 100.0}
    doc["spec"]["autoscaling"] = {"model": "cluster-autoscaler"}
    doc["spec"]["workload"] = [{
        "name": "pair", "arrivals": ["0s"], "podsPerJob": 2, "computeDomain": True,
        "duration": {"distribution": "fixed", "mean": "30m"}, "cpu": "8", "memory": "8Gi",
        "devices": {"type": "gpu", "count": 4}}]
    mode = simulate(parse_scenario(doc, "s.yaml")).modes[0]
    cd = mode.compute_domains
    assert cd is not None and len(cd.jobs) == 1
    assert cd.jobs[0].placed is not None and cd.jobs[0].domains == 1
    assert cd.samples[-1][1] == 0  # scaled down to no NVLink node at the end


def _queued(tmp_path: Path, mapped: bool) -> dict[str, Any]:
    kueue = (EXAMPLES / "queues-dra-autoscaling" / "kueue.yaml").read_text()
    if mapped:
        kueue = kueue.replace(
            "    deviceClassNames: [gpu.nvidia.com]\n",
            "    deviceClassNames: [gpu.nvidia.com]\n  - name: nvidia.com/imex-channel\n"
            "    deviceClassNames: [compute-domain-default-channel.nvidia.com]\n")
        kueue = kueue.replace("coveredResources: [cpu, memory, nvidia.com/gpu]",
                              "coveredResources: [cpu, memory, nvidia.com/gpu, "
                              "nvidia.com/imex-channel]")
        kueue = kueue.replace('      - {name: nvidia.com/gpu, nominalQuota: "24"}',
                              '      - {name: nvidia.com/gpu, nominalQuota: "72"}\n'
                              '      - {name: nvidia.com/imex-channel, nominalQuota: "18"}')
    (tmp_path / "kueue.yaml").write_text(kueue)
    doc = _doc()
    doc["spec"]["queueing"] = {"kueue": "kueue.yaml"}
    for kind, queue in zip(doc["spec"]["workload"], ("team-a", "team-b"), strict=True):
        kind.update(queue=f"{queue}/training", cpu="8", memory="8Gi")
    return doc


def test_kueue_admits_compute_domain_jobs_as_its_dra_config_says(tmp_path: Path) -> None:
    """Kueue counts DRA claims through deviceClassMappings: the channel class unmapped, no
    job of the kind is admissible (Kueue's own error); mapped and covered, they run,
    each job's pod set with its ComputeDomain's channel claim."""
    with pytest.raises(InputError) as err:
        simulate(parse_scenario(_queued(tmp_path, False), "s.yaml", str(tmp_path)))
    assert "spec.workload[0].queue: Kueue would admit none of its jobs in dra mode: " \
        "spec.podSets[0].template.spec.resourceClaims[1].resourceClaimTemplateName: " \
        "Not found: \"DeviceClass compute-domain-default-channel.nvidia.com is not mapped" \
        in str(err.value)
    result = simulate(parse_scenario(_queued(tmp_path, True), "s.yaml", str(tmp_path)))
    s = _summary(result)
    assert (s["jobs"], s["started"]) == (24, 24) and s["spanning"] > 0
