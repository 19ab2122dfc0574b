"""Issue 36 item 4: NVLink scenarios -- ComputeDomain jobs on NVL72 racks under the
upstream placement (kube-scheduler, pods one by one; with and without clique pod affinity)
and dralab's opt-in domain-packing (NVLinkDomainGang). Objects as NVIDIA's driver makes
them: NVIDIA/k8s-dra-driver-gpu 22407113785e78c7763b4637689a201eb39c6199,
templates/compute-domain-workload-claim-template.tmpl.yaml and
cmd/compute-domain-controller/resourceclaimtemplate.go (WorkloadResourceClaimTemplateManager).
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from dralab.api.codec import encode
from dralab.api.computedomain import compute_domain_uid
from dralab.api.errors import InputError
from dralab.cli.main import cli
from dralab.report.nvlink import nvlink_figures, nvlink_verdict, render_nvlink
from dralab.sim.nvlink import (
    CLIQUE_LABEL,
    channel_claim_template,
    compute_domain,
    load_nvlink_scenario,
    nvl_nodes,
    parse_nvlink_scenario,
)
from dralab.sim.nvlink_run import run_nvlink

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "scenarios" / "nvl72.yaml"


@pytest.fixture(scope="module")
def runs():  # type: ignore[no-untyped-def]
    sc = load_nvlink_scenario(str(EXAMPLE))
    return {p: run_nvlink(sc, p) for p in sc.compare}


def test_channel_template_is_the_controllers() -> None:
    cd = compute_domain("job-1-cd", "ns", 4)
    rct = encode(channel_claim_template(cd))
    uid = compute_domain_uid(cd)
    assert rct["metadata"] == {
        "name": "job-1-cd-channel", "namespace": "ns",
        "finalizers": ["resource.nvidia.com/computeDomain"],
        "labels": {"resource.nvidia.com/computeDomain": uid,
                   "resource.nvidia.com/computeDomainTarget": "Workload"}}
    devices = rct["spec"]["spec"]["devices"]
    assert devices["requests"] == [{"name": "channel", "exactly": {
        "deviceClassName": "compute-domain-default-channel.nvidia.com"}}]
    params = devices["config"][0]["opaque"]
    assert params["driver"] == "compute-domain.nvidia.com"
    assert params["parameters"] == {"apiVersion": "resource.nvidia.com/v1beta1",
                                    "kind": "ComputeDomainChannelConfig",
                                    "domainID": uid, "allocationMode": "Single"}
    # nothing in the claim keeps the pods in one NVLink domain
    assert "selectors" not in str(devices) and "constraints" not in devices


def test_nvl72_nodes_carry_the_clique_label() -> None:
    sc = load_nvlink_scenario(str(EXAMPLE))
    nodes = nvl_nodes(sc)
    assert len(nodes) == 72 and {n.gpus for n in nodes} == {4}
    cliques = [dict(n.labels)[CLIQUE_LABEL] for n in nodes]
    assert len(set(cliques)) == 4
    cluster, _, clique = cliques[0].rpartition(".")
    assert clique == "0" and len(cluster) == 36   # one fabric per rack, clique ID 0
    assert cliques[17] == cliques[0] != cliques[18]


def test_the_examples_figures(runs) -> None:  # type: ignore[no-untyped-def]
    ff, pa, dp = (nvlink_figures(runs[p])
                  for p in ("first-fit", "pod-affinity", "domain-packing"))
    # upstream, pods one by one on equal-scored free nodes: nearly every job spans racks
    assert (ff.jobs, ff.started, ff.never_started, ff.spanned) == (169, 169, 0, 168)
    assert (ff.wait_p50_min, ff.wait_p90_min, ff.wait_max_min) == (0.0, 27.52, 66.65)
    assert ff.max_domains == 4   # e.g. a 16-node job over all four racks
    # upstream with clique pod affinity: one rack each, but pods hold nodes while their
    # job waits, and some jobs never start in 48 h
    assert (pa.started, pa.never_started, pa.spanned) == (155, 14, 0)
    assert (pa.wait_p50_min, pa.wait_p90_min) == (59.57, 222.62)
    assert pa.held_idle_mean == 57.0
    # dralab's opt-in gang: one rack each, nothing held idle, more GPUs stranded
    assert (dp.started, dp.never_started, dp.spanned) == (167, 2, 0)
    assert (dp.wait_p50_min, dp.wait_p90_min) == (0.0, 71.59) and dp.held_idle_mean == 0.0
    assert (ff.stranded_share, pa.stranded_share, dp.stranded_share) == (0.25, 0.184, 0.454)
    assert (ff.stranded_mean, dp.stranded_mean) == (6.5, 21.8)


def test_name_tie_break_is_opt_in(runs) -> None:  # type: ignore[no-untyped-def]
    sc = dataclasses.replace(load_nvlink_scenario(str(EXAMPLE)), tie_break="name")
    ff = nvlink_figures(run_nvlink(sc, "first-fit"))
    assert (ff.started, ff.spanned, ff.max_domains) == (169, 58, 4)


def test_jobs_carry_their_compute_domain(runs) -> None:  # type: ignore[no-untyped-def]
    job = runs["first-fit"].jobs[0]
    assert encode(job.compute_domain)["spec"]["numNodes"] == job.pods
    assert job.pod_claim() == {"name": "channel",
                               "resourceClaimTemplateName": f"{job.name}-cd-channel"}
    assert encode(job.channel_template)["metadata"]["labels"][
        "resource.nvidia.com/computeDomain"] == compute_domain_uid(job.compute_domain)


def test_report_says_a_job_spans_domains(runs) -> None:  # type: ignore[no-untyped-def]
    text = render_nvlink(list(runs.values()))
    assert "job pretrain-1 (started, 16/16 pods): spans 4 NVLink domains (0, 1, 2, 3)" \
        in text
    assert "domain-packing (dralab extension NVLinkDomainGang):" in text
    assert all(len(line) <= 80 for line in text.splitlines())
    assert nvlink_verdict(list(runs.values())).startswith(
        "first-fit: 168 of 169 started jobs span domains, wait p90 27.5 min")


def test_deterministic_and_fast() -> None:
    t0 = time.perf_counter()
    sc = load_nvlink_scenario(str(EXAMPLE))
    a = [nvlink_figures(run_nvlink(sc, p)) for p in sc.compare]
    b = [nvlink_figures(run_nvlink(sc, p)) for p in sc.compare]
    assert a == b
    assert time.perf_counter() - t0 < 5


@pytest.mark.parametrize(("doc", "message"), [
    ({"kind": "Scenario"}, "kind: want NVLinkScenario"),
    ({"kind": "NVLinkScenario", "spec": {"fleet": {"domains": 0}}},
     "spec.fleet.domains: want a positive integer, got 0"),
    ({"kind": "NVLinkScenario", "spec": {"duration": "1h", "fleet": {"domains": 1},
                                         "workload": [{"name": "a", "podsPerJob": 19,
                                                       "arrivalRate": "1/h",
                                                       "duration": "1h"}]}},
     "spec.workload[0].podsPerJob: 19 pods need 19 nodes; the fleet has 18"),
    ({"kind": "NVLinkScenario", "spec": {"duration": "1h", "fleet": {"domains": 2},
                                         "workload": [{"name": "a", "podsPerJob": 19,
                                                       "arrivalRate": "1/h",
                                                       "duration": "1h"}]}},
     "spec.workload[0].podsPerJob: 19 nodes do not fit one NVLink domain of 18"),
    ({"kind": "NVLinkScenario", "spec": {"duration": "1h", "fleet": {"domains": 1},
                                         "compare": ["gang"],
                                         "workload": [{"name": "a", "arrivalRate": "x",
                                                       "duration": "1h"}]}},
     "spec.workload[0].arrivalRate: not a rate"),
    ({"kind": "NVLinkScenario", "spec": {"duration": "1h", "fleet": {"domains": 1},
                                         "compare": ["gang"],
                                         "workload": [{"name": "a", "arrivalRate": "1/h",
                                                       "duration": "1h"}]}},
     "spec.compare: want a list of first-fit, pod-affinity, domain-packing"),
    ({"kind": "NVLinkScenario", "spec": {"duration": "1h", "fleet": {"domains": 1},
                                         "tieBreak": "best",
                                         "workload": [{"name": "a", "arrivalRate": "1/h",
                                                       "duration": "1h"}]}},
     "spec.tieBreak: want random (kube-scheduler) or name, got 'best'"),
])
def test_bad_input_is_one_line(doc: dict, message: str) -> None:  # type: ignore[type-arg]
    with pytest.raises(InputError) as err:
        parse_nvlink_scenario(doc, "s.yaml")
    text = str(err.value)
    assert message in text and "\n" not in text and text.startswith("s.yaml: ")


def test_dralab_simulate_runs_the_example(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["simulate", "--scenario", str(EXAMPLE), "--seeds", "2",
                                      "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "first-fit        169   169     0  168      0.0   27.5" in result.output
    assert "over 2 seeds:" in result.output
    assert (out / "nvlink.txt").read_text().startswith("NVLink domains")
    rows = (out / "nvlink-samples.csv").read_text().splitlines()
    assert rows[0] == "policy,minute,free_gpus,stranded_gpus,held_gpus"
    assert rows[1] == "first-fit,0,288,0,0" and len(rows) == 1 + 3 * 577
    page = (out / "index.html").read_text()
    assert f"report: {out / 'index.html'}" in result.output
    assert '<tr data-policy="first-fit"><th scope="row" title="kube-scheduler">first-fit' in page
    assert "<td>169</td><td>169</td><td>0</td><td>168</td>" in page
    assert "over 2 seeds:" in page and page.count("<svg") == 3
    assert "dralab&#x27;s opt-in extension (the NVLinkDomainGang plugin), not upstream" in page


def test_dralab_simulate_nvlink_report_is_reproducible_and_keeps_the_previous(
        tmp_path: Path) -> None:
    out = tmp_path / "out"
    args = ["simulate", "--scenario", str(EXAMPLE), "--seeds", "1", "--compare", "first-fit",
            "--out", str(out)]
    first = CliRunner().invoke(cli, args)
    assert first.exit_code == 0, first.output
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert sorted(before) == ["index.html", "nvlink-samples.csv", "nvlink.txt"]
    again = CliRunner().invoke(cli, args)
    assert again.exit_code == 0, again.output
    assert f"the previous report is kept in {out / 'previous'}" in again.output
    assert {p.name: p.read_bytes() for p in (out / "previous").iterdir()} == before
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before


def test_dralab_simulate_bad_nvlink_scenario_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: NVLinkScenario\nspec: {fleet: {domains: -1}}\n")
    result = CliRunner().invoke(cli, ["simulate", "--scenario", str(bad),
                                      "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert "spec.fleet.domains: want a positive integer, got -1" in result.output
    assert "Traceback" not in result.output


def test_dralab_simulate_compare_names_policies(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["simulate", "--scenario", str(EXAMPLE), "--seeds", "1",
                                      "--compare", "domain-packing", "--out",
                                      str(tmp_path / "o")])
    assert result.exit_code == 0, result.output
    assert "domain-packing   169   167     2    0" in result.output
    assert "first-fit " not in result.output
    result = CliRunner().invoke(cli, ["simulate", "--scenario", str(EXAMPLE),
                                      "--compare", "dra", "--out", str(tmp_path / "p")])
    assert result.exit_code == 2
    assert "unknown placement policy 'dra'" in result.output
