"""Autoscaling whole NVL72 racks (issue 36 item 3): the autoscaler sees the NVLink domain.

Cluster Autoscaler (release-1.37) has no rack: its unit is the node group, and a
scale-up adds copies of the group's template node. Whole racks are scaled, upstream's
way, by one node group per rack (max = the rack's 18 compute trays) with
ZeroOrMaxNodeScaling (NodeGroupAutoscalingOptions.ZeroOrMaxNodeScaling: 0 -> max at
once, removed only whole), the way GKE's multi-host TPU slices are autoscaled. The
NVLink domain reaches the autoscaler only as GPU Feature Discovery's node label
``nvidia.com/gpu.clique``, which every template node of a rack group carries, and
through the job's required pod affinity on that label (NVIDIA's recommended way to
keep a ComputeDomain's pods in one domain; the channel claim has no node constraint).

The job is examples/nvlink-racks: a ComputeDomain, 16 pods of a Job, each claiming one
tray's four GPUs and an IMEX channel, with pod affinity on the clique label.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from dralab.api.features import FeatureGates
from dralab.api.io import Document
from dralab.api.nvlink import CLIQUE_LABEL
from dralab.autoscale import (
    AutoscalerOptions,
    ClusterAutoscaler,
    LoopDecisions,
    read_input,
    run_once,
)
from dralab.autoscale.groups import TemplateNodes
from dralab.autoscale.inputs import cluster_objects
from dralab.cli.main import cli
from dralab.fleet import parse_fleet
from dralab.fleet.nvlink import NvlinkGroupWarning, group_warnings
from dralab.scheduler import Scheduler, build_cluster

from .helpers import pod as plain_pod

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "nvlink-racks"
RACK = 18
Doc = dict[str, Any]


def _fleet(atomic: bool = True, count: int = 0, max_size: int = RACK) -> Doc:
    doc: Doc = yaml.safe_load((EXAMPLE / "fleet.yaml").read_text())
    for pool in doc["spec"]["pools"]:
        pool["count"] = count if pool["name"] == "rack-a" else 0
        pool["autoscaling"].update(max=max_size, zeroOrMaxNodeScaling=atomic)
    return doc


def _job(pods: int = 16) -> list[Doc]:
    docs = list(yaml.safe_load_all((EXAMPLE / "job.yaml").read_text()))
    for doc in docs:
        if doc["kind"] == "Job":
            doc["spec"].update(completions=pods, parallelism=pods)
    return docs


def _documents(*docs: Doc) -> list[Document]:
    return [Document("test.yaml", i + 1, d) for i, d in enumerate(docs)]


def _run(fleet: Doc, *docs: Doc, options: AutoscalerOptions | None = None) -> LoopDecisions:
    return run_once(read_input(_documents(fleet, *docs), FeatureGates()), options=options)


def _clique_of_new_nodes(fleet: Doc, pool: str, names: tuple[str, ...]) -> set[str]:
    data = read_input(_documents(fleet), FeatureGates())
    templates = TemplateNodes(data.fleet, {pool: 0}, ())
    made = {templates.node(pool, i)[0].metadata.name: templates.node(pool, i)[0]
            for i in range(RACK)}
    return {made[n].metadata.labels[CLIQUE_LABEL] for n in names}


def test_one_atomic_rack_scales_up_whole_for_a_16_tray_job() -> None:
    decisions = _run(_fleet(), *_job())
    assert [(u.pool, u.add, len(u.pods)) for u in decisions.scale_ups] == [("rack-a", 18, 16)]
    assert decisions.pending == ()
    # The estimator put the 16 pods on 16 of the rack's template nodes: one clique.
    (up,) = decisions.scale_ups
    assert len(up.nodes) == 16
    assert len(_clique_of_new_nodes(_fleet(), "rack-a", up.nodes)) == 1


def test_template_nodes_of_an_empty_rack_group_share_one_clique() -> None:
    # CA's template for an empty group (here the Fleet's next nodes): 18 of one domain.
    data = read_input(_documents(_fleet()), FeatureGates())
    templates = TemplateNodes(data.fleet, {"rack-a": 0, "rack-b": 0}, ())
    cliques = {pool: {templates.node(pool, i)[0].metadata.labels[CLIQUE_LABEL]
                      for i in range(RACK)} for pool in ("rack-a", "rack-b")}
    assert all(len(c) == 1 for c in cliques.values())
    assert cliques["rack-a"] != cliques["rack-b"]


def test_template_copies_a_real_node_and_its_clique() -> None:
    # With a node of the group in the cluster, CA copies it, labels included
    # (mixed_nodeinfos_processor.go): every new node joins that node's clique.
    data = read_input(_documents(_fleet(atomic=False, count=2)), FeatureGates())
    cluster, _ = build_cluster(cluster_objects(data))
    model = ClusterAutoscaler(Scheduler.build(cluster, None, 0), data.fleet)
    real = cluster.nodes["rack-a-01"].node.metadata.labels[CLIQUE_LABEL]
    templates = model.templates()
    assert "rack-a" in templates.examples
    assert {templates.node("rack-a", i)[0].metadata.labels[CLIQUE_LABEL]
            for i in range(RACK - 2)} == {real}


def test_the_joined_rack_takes_all_16_pods_in_its_clique() -> None:
    # After the scale-up the rack's 18 nodes are in the cluster: kube-scheduler places
    # the pods one by one, the pod affinity keeping them in the rack's clique.
    data = read_input(_documents(_fleet(count=RACK), *_job()), FeatureGates())
    cluster, pending = build_cluster(cluster_objects(data))
    result = Scheduler.build(cluster, None, 0).run(pending)
    assert len(result.placed) == 16 and not result.unplaced
    nodes = {p.node for p in result.placed}
    assert all(n.startswith("rack-a-") for n in nodes) and len(nodes) == 16
    assert len({cluster.nodes[n].node.metadata.labels[CLIQUE_LABEL] for n in nodes}) == 1


def test_without_zero_or_max_ca_adds_only_the_trays_the_job_needs() -> None:
    # Upstream without ZeroOrMaxNodeScaling: the binpacking estimator adds 16 nodes of
    # one rack group (the pods' affinity keeps them together; the group's template
    # nodes share its clique) and the rack's two other trays stay unprovisioned.
    decisions = _run(_fleet(atomic=False), *_job())
    assert [(u.pool, u.add, len(u.pods)) for u in decisions.scale_ups] == [("rack-a", 16, 16)]
    assert len(_clique_of_new_nodes(_fleet(), "rack-a", decisions.scale_ups[0].nodes)) == 1


@pytest.mark.parametrize("atomic", [True, False])
def test_a_job_larger_than_a_rack_never_fits_one_clique(atomic: bool) -> None:
    # 20 trays with clique affinity: one rack takes 18 pods; the other 2 cannot go to
    # the second rack (no pod of the job there), so CA leaves them pending.
    decisions = _run(_fleet(atomic=atomic), *_job(20))
    assert [(u.pool, u.add, len(u.pods)) for u in decisions.scale_ups] == [("rack-a", 18, 18)]
    assert len(decisions.pending) == 2
    assert all("rack-b: InterPodAffinity" in p.reason for p in decisions.pending)


def test_balancing_never_splits_an_atomic_rack() -> None:
    # The racks differ only by their clique label; told to ignore it, CA's balancing
    # finds them similar, but ComputeSimilarNodeGroups gives a ZeroOrMaxNodeScaling
    # group none: the rack comes whole, the other is untouched (fidelity fix: dralab
    # balanced it, rack-a +18 and rack-b +8).
    options = AutoscalerOptions(balance_similar_node_groups=True,
                                balancing_ignore_labels=(CLIQUE_LABEL,))
    decisions = _run(_fleet(), *_job(), options=options)
    assert [(u.pool, u.add) for u in decisions.scale_ups] == [("rack-a", 18)]


def test_a_template_without_the_clique_label_cannot_scale_from_zero() -> None:
    # GFD writes the clique label only once a tray runs. A group template without it
    # (no nvlink here: e.g. a cloud template without the label) fails the pods'
    # affinity: InterPodAffinity needs the topology key on the node, so no scale-up.
    fleet = _fleet()
    for pool in fleet["spec"]["pools"]:
        del pool["nvlink"]
    decisions = _run(fleet, *_job())
    assert decisions.scale_ups == () and len(decisions.pending) == 16
    assert all(p.reason.count("InterPodAffinity") == 2 for p in decisions.pending)


def _scale_down(atomic: bool, blocked: bool) -> tuple[list[str], dict[str, str]]:
    """Two loops ten minutes and a bit apart over rack-a at 18 empty nodes (one running
    a pod no controller re-creates when ``blocked``)."""
    docs = [plain_pod("lonely", node="rack-a-01", owned=False)] if blocked else []
    data = read_input(_documents(_fleet(atomic=atomic, count=RACK), *docs), FeatureGates())
    cluster, _ = build_cluster(cluster_objects(data))
    model = ClusterAutoscaler(Scheduler.build(cluster, None, 0), data.fleet)
    model.loop([], 0.0)
    later = model.loop([], 601.0)
    return sorted(d.node for d in later.scale_downs), {u.node: u.reason
                                                      for u in later.unremovable}


def test_an_unneeded_atomic_rack_goes_whole() -> None:
    # All 18 at once, beyond --max-scale-down-parallelism 10 (budgets.CropNodes).
    gone, kept = _scale_down(atomic=True, blocked=False)
    assert gone == [f"rack-a-{i:02d}" for i in range(1, RACK + 1)] and kept == {}


def test_an_atomic_rack_with_one_needed_tray_stays_whole() -> None:
    gone, kept = _scale_down(atomic=True, blocked=True)
    assert gone == []
    assert kept["rack-a-01"] == "BlockedByPod"
    assert {r for n, r in kept.items() if n != "rack-a-01"} == {"AtomicScaleDownFailed"}
    assert len(kept) == RACK


def test_a_regular_rack_group_loses_trays_and_is_left_partial() -> None:
    gone, _ = _scale_down(atomic=False, blocked=False)
    assert len(gone) == 10  # --max-scale-down-parallelism: 8 trays of the rack remain


def test_group_warnings_name_the_field() -> None:
    assert group_warnings(parse_fleet(_fleet(), "f")) == []
    lines = group_warnings(parse_fleet(_fleet(max_size=20), "f"))
    assert lines[0] == ("spec.pools[0].autoscaling.max: 20 nodes make NVLink domains of "
                        "18+2 nodes, not whole racks of nvlink.nodesPerDomain 18")
    assert lines[1].startswith("spec.pools[0].autoscaling.zeroOrMaxNodeScaling: pool "
                               "rack-a grows to its max 20 nodes (2 NVLink domains) at once")
    assert len(lines) == 4  # both pools, both findings
    lines = group_warnings(parse_fleet(_fleet(atomic=False, max_size=36), "f"))
    # two whole racks in a regular group: CA's copies would put new trays in one domain
    assert lines[0].startswith("spec.pools[0].autoscaling.max: 36 nodes are 2 NVLink "
                               "domains in one node group: Cluster Autoscaler makes new "
                               "nodes as copies of a node of the group, clique label")
    assert len(lines) == 2


def test_group_warnings_follow_zones() -> None:
    # Domains are filled inside each zone (fleet.nvlink): 30 nodes over two zones are
    # two domains of 15, without zones 18 + 12.
    fleet = _fleet(atomic=False, max_size=30)
    fleet["spec"]["pools"][0]["topology"] = {"zones": ["a", "b"]}
    lines = group_warnings(parse_fleet(fleet, "f"))
    assert [line.split(" nodes, ")[0] for line in lines if " make " in line] == [
        "spec.pools[0].autoscaling.max: 30 nodes make NVLink domains of 15+15",
        "spec.pools[1].autoscaling.max: 30 nodes make NVLink domains of 18+12"]


def test_autoscale_warns_once_per_finding() -> None:
    with pytest.warns(NvlinkGroupWarning) as caught:
        read_input(_documents(_fleet(max_size=20)), FeatureGates())
    assert len(caught) == 4
    assert str(caught[0].message).startswith("test.yaml:1: spec.pools[0].autoscaling.max")


def _cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_the_example_readme_shows_the_real_output() -> None:
    code, out, err = _cli("autoscale", "-f", str(EXAMPLE / "fleet.yaml"),
                          "-f", str(EXAMPLE / "job.yaml"))
    assert code == 0 and err == ""  # no 'does not use ComputeDomain': autoscale does
    readme = (EXAMPLE / "README.md").read_text()
    blocks = re.findall(r"```text\n(.*?)```", readme, re.S)
    assert out in blocks


def test_validate_and_fleet_warn_about_a_multi_rack_atomic_group(tmp_path: Path) -> None:
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump(_fleet(max_size=36)))
    code, out, err = _cli("validate", "-f", str(path))
    assert code == 0 and out == "1 object(s) valid (1 Fleet)\n"
    assert err.count("warning: ") == 2 and "zeroOrMaxNodeScaling" in err
    code, _, err = _cli("fleet", "-f", str(path))
    assert code == 0 and err.count("warning: ") == 2


def _busy_rack(count: int) -> list[Doc]:
    """A two-rack group (max 36, not atomic) with rack 0's 18 trays full: 16 run pods
    of job ``train`` (its label), 2 run other work; then 4 more ``train`` pods pending,
    with the job's clique affinity."""
    fleet = _fleet(atomic=False, count=count, max_size=2 * RACK)
    fleet["spec"]["pools"] = fleet["spec"]["pools"][:1]
    affinity = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
        "labelSelector": {"matchLabels": {"job": "train"}}, "topologyKey": CLIQUE_LABEL}]}}
    docs: list[Doc] = [fleet]
    for i in range(RACK):
        docs.append(plain_pod(f"run-{i}", cpu="140", memory="8Gi", node=f"rack-a-{i + 1:02d}",
                              labels={"job": "train" if i < 16 else "other"}))
    for i in range(4):
        extra = plain_pod(f"more-{i}", cpu="100", memory="8Gi", labels={"job": "train"})
        extra["spec"]["affinity"] = affinity
        docs.append(extra)
    return docs


def test_a_multi_rack_group_copies_the_full_racks_clique() -> None:
    # CA's template for a group with nodes is a copy of one of them, clique label
    # included: it takes the 4 new trays to join rack 0's NVLink domain, where the
    # job runs, and scales up +4 ...
    fleet, *docs = _busy_rack(RACK)
    with pytest.warns(NvlinkGroupWarning, match="2 NVLink domains in one node group"):
        decisions = _run(fleet, *docs)
    assert [(u.pool, u.add, len(u.pods)) for u in decisions.scale_ups] == [("rack-a", 4, 4)]
    # ... but trays 19-22 are rack 1's: GFD labels them with its clique, and the pods'
    # affinity keeps them off those trays. Upstream's answer, and why each rack should be
    # its own group.
    fleet, *docs = _busy_rack(RACK + 4)
    with pytest.warns(NvlinkGroupWarning):
        data = read_input(_documents(fleet, *docs), FeatureGates())
    cluster, pending = build_cluster(cluster_objects(data))
    result = Scheduler.build(cluster, None, 0).run(pending)
    assert result.placed == () and len(result.unplaced) == 4
    assert all("InterPodAffinity" in u.message or "pod affinity" in u.message
               for u in result.unplaced)
