"""Device-plugin mode: GPUs and MIG slices as node extended resources, no DRA at all."""

from __future__ import annotations

from dralab.scheduler import schedule

from .builders import DRA_POST_FILTER, node, placements, pod, workload


def fleet() -> list:  # type: ignore[type-arg]
    return [
        node("h100-0", "64", "512Gi", gpus=8, labels={"gpu": "h100"}),
        node("h100-1", "64", "512Gi", gpus=8, labels={"gpu": "h100"}),
        node("a100-mig-0", "64", "512Gi", labels={"gpu": "a100"},
             mig={"1g.5gb": 14, "2g.10gb": 6, "3g.20gb": 4}),
        node("cpu-0", "32", "128Gi"),
    ]


def test_training_inference_and_mig_workload() -> None:
    result = schedule([
        *fleet(),
        workload("Job", "train", {"parallelism": 3}, cpu="8", memory="64Gi", gpus=4),
        workload("Deployment", "infer", {"replicas": 4}, cpu="2", memory="8Gi",
                 mig={"1g.5gb": 2}),
        workload("Deployment", "notebook", {"replicas": 2}, cpu="1", memory="4Gi",
                 mig={"3g.20gb": 1}),
        workload("Deployment", "api", {"replicas": 2}, cpu="2", memory="2Gi"),
    ])
    placed = placements(result)
    by_prefix: dict[str, list[str | None]] = {}
    for name, where in placed.items():
        by_prefix.setdefault(name.split("-")[0], []).append(where)
    # 3 x 4 GPUs on two 8-GPU nodes: LeastAllocated spreads, then doubles up on one.
    assert sorted(w or "" for w in by_prefix["train"]) in (
        ["h100-0", "h100-0", "h100-1"], ["h100-0", "h100-1", "h100-1"])
    assert set(by_prefix["infer"]) == {"a100-mig-0"}
    assert set(by_prefix["notebook"]) == {"a100-mig-0"}
    assert None not in by_prefix["api"]
    assert result.all_placed
    used = result.cluster.nodes["a100-mig-0"].requested
    assert used["nvidia.com/mig-1g.5gb"] == 8000
    assert used["nvidia.com/mig-3g.20gb"] == 2000


def test_gpus_run_out_with_upstream_message() -> None:
    result = schedule([
        *fleet(),
        workload("Job", "train", {"parallelism": 5}, cpu="8", memory="64Gi", gpus=4),
    ])
    (unplaced,) = result.unplaced
    # The H100 nodes are full (preemption could help, but nothing has lower priority);
    # the others have no GPUs at all (no eviction helps).
    assert unplaced.message == (
        "0/4 nodes are available: 4 Insufficient nvidia.com/gpu. "
        f"{DRA_POST_FILTER}preemption: 0/4 nodes are available: "
        "2 No preemption victims found for incoming pod, "
        "2 Preemption is not helpful for scheduling.")


def test_mig_profile_exhausted() -> None:
    result = schedule([*fleet(), *(pod(f"m{i}", "1", mig={"3g.20gb": 1}) for i in range(5))])
    assert placements(result)["m4"] is None
    assert result.unplaced[0].message.startswith(
        "0/4 nodes are available: 4 Insufficient nvidia.com/mig-3g.20gb.")


def test_whole_gpu_pod_does_not_use_mig_node() -> None:
    result = schedule([*fleet(), pod("g", "1", gpus=1, node_selector={"gpu": "a100"})])
    assert result.unplaced[0].message.startswith(
        "0/4 nodes are available: 1 Insufficient nvidia.com/gpu, 3 node(s) didn't match "
        "Pod's node affinity/selector.")
