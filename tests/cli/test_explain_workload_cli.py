"""``dralab explain workload``: why a queued workload is admitted or not, with the quota
it meets, and (with nodes in the input) whether its whole pod set fits."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from dralab.cli.main import cli

ROOT = Path(__file__).parent.parent.parent
DATA = ROOT / "tests" / "data"


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["explain", "workload", *args])
    return result.exit_code, result.stdout, result.stderr


def test_pending_workload_names_the_quota_that_blocks_it() -> None:
    code, out, err = run("team-a/finetune", "-f",
                         str(DATA / "kueue" / "dralab-two-team-cohort.yaml"))
    assert (code, err) == (1, "")
    lines = out.splitlines()
    assert lines[0] == "Workload team-a/job-finetune-d2b4e (Job team-a/finetune): Pending"
    assert lines[1] == ("  couldn't assign flavors to pod set main: insufficient unused quota "
                        "for nvidia.com/gpu in flavor h100, 4 more needed")
    # team-a's 8 GPUs plus the 4 it borrows are in use by pretrain.
    assert "    h100 nvidia.com/gpu: nominal 8, borrowing limit 8, in use 12, this workload " \
           "needs 4" in lines


def test_admitted_workload_that_cannot_be_placed() -> None:
    """Kueue admits by quota (48 GPUs); the fleet has one 8-GPU H100 node: the whole
    pod set check says only one of the five 8-GPU pods fits."""
    code, out, err = run("default/big-train", "-f", str(DATA / "queueing" / "big-gang.yaml"),
                         "-f", str(ROOT / "examples" / "fleet"))
    assert (code, err) == (0, "")
    assert "Admitted" in out.splitlines()[0]
    assert "usage cpu: 20, memory: 160Gi, nvidia.com/gpu: 40" in out
    # The queue's only flavor is a TAS flavor, so Kueue's TAS (beta, on) places the pod
    # set by node cpu and memory (it does not count DRA claims, Kueue #10548): all five
    # 8-GPU pods on the L4 node, whose 4 GPUs cannot hold one of them.
    assert "  pod set main (Kueue's topologyAssignment): 5 pods on 1 node in 1 " \
           "topology.kubernetes.io/zone domain (zone-b: 5)" in out
    assert "  pod set main (on the nodes of Kueue's topologyAssignment) does not fit: 0 of " \
           "5 pods placed; pod default/job-big-train-65434-main-0: 0/3 nodes are " \
           "available: 1 cannot allocate all claims, 2 node(s) didn't match Pod's node " \
           "affinity/selector." in out


def test_unknown_workload_is_exit_2() -> None:
    code, out, err = run("team-a/nope", "-f", str(DATA / "kueue" / "dralab-two-team-cohort.yaml"))
    assert code == 2 and out == ""
    assert err.startswith("error: no queued workload team-a/nope (workloads: ")
    assert len(err.splitlines()) == 1


def test_required_topology_of_the_flavor_is_honoured(tmp_path: Path) -> None:
    """The flavor names the Kueue Topology "zones" (zone, hostname); the pod set requires
    one zone: both 4-GPU pods fit in zone-a, on its H100 node (with the devices). With
    Kueue's TAS off (TopologyAwareScheduling: false) admission is by quota and the
    placement check finds the zone itself."""
    gang = (DATA / "queueing" / "big-gang.yaml").read_text()
    off = tmp_path / "big-gang-tas-off.yaml"
    off.write_text(gang.replace("kind: Configuration\n",
                                "kind: Configuration\nfeatureGates: "
                                "{TopologyAwareScheduling: false}\n", 1))
    code, out, err = run("default/zonal", "-f", str(off), "-f", str(ROOT / "examples" / "fleet"))
    assert (code, err) == (0, "")
    assert out.splitlines()[-1] == ("  pod set main (required topology.kubernetes.io/zone of "
                                    "topology zones): all 2 pods fit, on h100-node-01")


def test_bad_input_and_a_hostile_target_are_one_line_exit_2(tmp_path: Path) -> None:
    """Found by the fuzz suite: a YAML error escaped as a traceback, and the unknown
    target was echoed raw (escape sequences, 5,000 characters)."""
    broken = tmp_path / "broken.yaml"
    broken.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: x\n")
    code, _, err = run("default/x", "-f", str(broken))
    assert code == 2 and len(err.splitlines()) == 1 and err.startswith("error: ")
    code, _, err = run("\x1b[31m" + "a" * 5000, "-f", str(DATA / "queueing" / "big-gang.yaml"))
    assert code == 2 and len(err.splitlines()) == 1
    assert "\x1b" not in err and len(err) < 4500 and "\\x1b[31m" in err


def test_kueue_tas_places_the_zonal_pods_by_cpu_and_memory_only() -> None:
    """The same workload with Kueue's TAS on (its default): Kueue picks the node with
    the least room that holds 2 x (4 cpu, 32Gi), the A100 MIG node of zone-a, and
    writes it; the pods' 4-GPU claims cannot be allocated there (Kueue #10548)."""
    code, out, err = run("default/zonal", "-f", str(DATA / "queueing" / "big-gang.yaml"),
                         "-f", str(ROOT / "examples" / "fleet"))
    assert (code, err) == (0, "")
    assert "  pod set main (Kueue's topologyAssignment): 2 pods on 1 node in 1 " \
           "topology.kubernetes.io/zone domain (zone-a: 2)" in out
    assert out.splitlines()[-1].startswith(
        "  pod set main (on the nodes of Kueue's topologyAssignment) does not fit: 0 of 2 "
        "pods placed;")
