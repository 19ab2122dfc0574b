"""Multi-node NVLink domains in fleets (issue 36): clique labels, compute-domain slices.

Shapes are those of NVIDIA's k8s-dra-driver-gpu at 22407113785e78c7763b4637689a201eb39c6199:
the clique label ``nvidia.com/gpu.clique=<clusterUUID>.<cliqueID>`` (docs/install.md,
cmd/compute-domain-kubelet-plugin/nvlib.go getCliqueID), the compute-domain kubelet
plugin's one slice per node with ``channel-0`` and ``daemon-0`` (driver.go skips channels
other than 0; deviceinfo.go: attributes ``type`` and ``id``), the chart's two
DeviceClasses, and 18 nodes per IMEX domain on GB200/GB300
(cmd/compute-domain-controller/main.go defaultMaxNodesPerIMEXDomain).
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from dralab.api.nvlink import (
    CHANNEL_DEVICE_CLASS,
    CLIQUE_LABEL,
    COMPUTE_DOMAIN_DRIVER,
    DAEMON_DEVICE_CLASS,
    MAX_NODES_PER_IMEX_DOMAIN,
    clique_of,
)
from dralab.cli.main import cli
from dralab.fleet import Fleet, FleetSpecError, generate, parse_fleet
from dralab.fleet.generate import grown_pool_nodes
from dralab.fleet.nvlink import nodes_by_domain

UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.[0-9]+$")

NVL72 = """\
apiVersion: dralab.dev/v1alpha1
kind: Fleet
metadata: {name: nvl72}
spec:
  pools:
  - name: gb200
    count: 36
    cpu: "144"
    memory: 960Gi
    gpu: {model: gb200, count: 4}
    computeDomains: true
    nvlink: {nodesPerDomain: 18}
    topology: {zone: zone-a, nodesPerRack: 18}
  - name: gb300
    count: 18
    gpu: {model: gb300, count: 4}
    computeDomains: true
    nvlink: {cliqueId: 32766}
"""


def run(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), input=stdin)
    return result.exit_code, result.stdout, result.stderr


def fleet(text: str = NVL72) -> Fleet:
    return parse_fleet(yaml.safe_load(text), "<test>")


def test_default_domain_size_is_the_drivers_imex_limit() -> None:
    assert MAX_NODES_PER_IMEX_DOMAIN == 18
    spec = fleet().spec
    assert spec.pools[1].nvlink is not None
    assert spec.pools[1].nvlink.nodes_per_domain == 18


def test_each_rack_is_one_clique_with_its_own_cluster_uuid() -> None:
    out = generate(fleet())
    cliques = [clique_of(n.metadata.labels or {}) for n in out.nodes]
    assert all(c is not None and UUID.match(c) for c in cliques)
    counts = Counter(cliques)
    assert sorted(counts.values()) == [18, 18, 18]
    # The two gb200 racks: nodes 01-18 and 19-36, aligned with the rack label.
    by_rack: dict[str, set[str | None]] = {}
    for n in out.nodes[:36]:
        labels = n.metadata.labels or {}
        by_rack.setdefault(labels["dralab.dev/topology-rack"], set()).add(labels[CLIQUE_LABEL])
    assert [len(v) for v in by_rack.values()] == [1, 1]
    assert len(set.union(*by_rack.values())) == 2
    assert all(str(c).endswith(".0") for c in cliques[:36])
    assert all(str(c).endswith(".32766") for c in cliques[36:])


def test_labels_are_deterministic_per_seed() -> None:
    f = fleet()
    first = [n.metadata.labels for n in generate(f).nodes]
    assert first == [n.metadata.labels for n in generate(f).nodes]
    other = [n.metadata.labels for n in generate(f, seed=7).nodes]
    assert first != other


def test_compute_domain_slice_per_node_as_the_plugin_publishes_it() -> None:
    out = generate(fleet())
    cd = [s for s in out.slices if s.spec.driver == COMPUTE_DOMAIN_DRIVER]
    assert len(cd) == 54
    for s in cd:
        assert s.spec.pool.name == s.spec.node_name
        assert [d.name for d in s.spec.devices] == ["channel-0", "daemon-0"]
        for d in s.spec.devices:
            assert d.attributes["id"].int_ == 0
            assert d.attributes["type"].string == d.name.split("-")[0]
    names = {c.name for c in out.classes}
    assert {CHANNEL_DEVICE_CLASS, DAEMON_DEVICE_CLASS} <= names


def test_gpu_devices_carry_no_clique_attribute() -> None:
    # cmd/gpu-kubelet-plugin/deviceinfo.go publishes no clique/NVLink attribute.
    out = generate(fleet())
    gpu = [d for s in out.slices if s.spec.driver == "gpu.nvidia.com" for d in s.spec.devices]
    assert len(gpu) == 54 * 4
    assert not any("clique" in k.lower() or "nvlink" in k.lower()
                   for d in gpu for k in d.attributes)
    products = {d.attributes["productName"].string for d in gpu}
    assert products == {"NVIDIA GB200", "NVIDIA GB300"}


def test_grown_nodes_continue_the_domains() -> None:
    f = fleet()
    grown = grown_pool_nodes(f, "gb200", 20)
    cliques = [clique_of(n.metadata.labels or {}) for n, _ in grown]
    # Nodes 37..54 fill a third rack, 55..56 open a fourth.
    assert Counter(cliques).most_common() == [(cliques[0], 18), (cliques[-1], 2)]
    existing = {clique_of(n.metadata.labels or {}) for n in generate(f).nodes}
    assert not existing & set(cliques)


@pytest.mark.parametrize(("pool", "field"), [
    ("{name: p, count: 2, nvlink: {}}", "nvlink"),
    ("{name: p, count: 2, gpu: {model: gb200, count: 4}, nvlink: {nodesPerDomain: 0}}",
     "nvlink.nodesPerDomain"),
    ("{name: p, count: 2, gpu: {model: gb200, count: 4}, nvlink: {cliqueId: -1}}",
     "nvlink.cliqueId"),
    ("{name: p, count: 2, gpu: {model: gb200, count: 4}, nvlink: {size: 4}}", "nvlink"),
])
def test_bad_nvlink_spec_is_one_line_exit_2(pool: str, field: str, tmp_path: Path) -> None:
    text = ("apiVersion: dralab.dev/v1alpha1\nkind: Fleet\nmetadata: {name: bad}\n"
            f"spec:\n  pools:\n  - {pool}\n")
    with pytest.raises(FleetSpecError):
        fleet(text)
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    code, out, err = run("fleet", "-f", str(path))
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and field in err and "Traceback" not in err


def test_dralab_fleet_output_validates_and_import_keeps_domains(tmp_path: Path) -> None:
    spec = tmp_path / "nvl72.yaml"
    spec.write_text(NVL72)
    code, out, err = run("fleet", "-f", str(spec))
    assert code == 0, err
    dump = tmp_path / "out.yaml"
    dump.write_text(out)
    code, vout, verr = run("validate", "-f", str(dump))
    assert code == 0, vout + verr
    assert "valid (5 DeviceClass, 54 Node, 108 ResourceSlice)" in vout
    code, imported, ierr = run("import", "-f", str(dump))
    assert code == 0, ierr
    nodes = [o for o in yaml.safe_load(imported)["items"] if o["kind"] == "Node"]
    domains = nodes_by_domain((n["metadata"]["name"], n["metadata"]["labels"]) for n in nodes)
    assert sorted(len(v) for v in domains.values()) == [18, 18, 18]
    lines = [ln for ln in ierr.splitlines() if ln.startswith("NVLink domain ")]
    assert len(lines) == 3
    assert any(ln.endswith(": 18 node(s), gb200-01 .. gb200-18") for ln in lines)


def test_a_dump_of_labelled_nodes_groups_by_label() -> None:
    nodes = [("a", {CLIQUE_LABEL: "u.1"}), ("b", {}), ("c", {CLIQUE_LABEL: "u.1"}),
             ("d", {CLIQUE_LABEL: "v.0"})]
    assert nodes_by_domain(nodes) == {"u.1": ["a", "c"], "v.0": ["d"]}


DOCS_NODES = """\
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata:
    name: gpu-node-001
    labels: {nvidia.com/gpu.clique: a1b2c3d4-e5f6-7890-abcd-ef1234567890.0}
- apiVersion: v1
  kind: Node
  metadata:
    name: gpu-node-002
    labels: {nvidia.com/gpu.clique: a1b2c3d4-e5f6-7890-abcd-ef1234567890.0}
- apiVersion: v1
  kind: Node
  metadata: {name: cpu-node-001}
"""


def test_import_of_the_driver_docs_nodes_keeps_their_domain(tmp_path: Path) -> None:
    # The two nodes of docs/install.md's clique-label check (k8s-dra-driver-gpu 22407113).
    path = tmp_path / "nodes.yaml"
    path.write_text(DOCS_NODES)
    code, out, err = run("import", "-f", str(path))
    assert code == 0, err
    labels = [n["metadata"].get("labels", {}) for n in yaml.safe_load(out)["items"]]
    assert [lb.get(CLIQUE_LABEL) for lb in labels] == [
        "a1b2c3d4-e5f6-7890-abcd-ef1234567890.0"] * 2 + [None]
    assert err.strip() == ("NVLink domain a1b2c3d4-e5f6-7890-abcd-ef1234567890.0: 2 node(s), "
                           "gpu-node-001 .. gpu-node-002")


def test_no_domain_spans_two_zones() -> None:
    # 30 nodes over two zones: 15 each; domains of 18 fill each zone separately.
    text = ("apiVersion: dralab.dev/v1alpha1\nkind: Fleet\nmetadata: {name: z}\n"
            "spec:\n  pools:\n  - {name: p, count: 30, gpu: {model: gb200, count: 4},\n"
            "     nvlink: {}, topology: {zones: [zone-a, zone-b]}}\n")
    nodes = generate(fleet(text)).nodes
    zones: dict[str | None, set[str]] = {}
    for n in nodes:
        labels = n.metadata.labels or {}
        zones.setdefault(clique_of(labels), set()).add(labels["topology.kubernetes.io/zone"])
    assert len(zones) == 2
    assert all(len(z) == 1 for z in zones.values())
