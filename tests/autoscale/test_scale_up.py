"""Cluster Autoscaler scale-up scenarios (issue 13): which pool, how many nodes,
which pods stay pending and why, each expander's choice, gangs all or nothing."""

from __future__ import annotations

import pytest

from .helpers import PRODUCT, Doc, fleet, pod, run, summary, template

H100_8 = template("h100x8", count=8, cel=f"{PRODUCT}.contains('H100')")
MIG_1G = template("mig-1g", "mig.nvidia.com",
                  cel="device.attributes['gpu.nvidia.com'].profile == '1g.10gb'")
PCIE_PAIR = template("pcie-pair", count=2, match="resource.kubernetes.io/pcieRoot")


def _ups(*docs: Doc, expander: str = "least-waste") -> list[tuple[str, int, int]]:
    return [(u.pool, u.add, len(u.pods)) for u in run(*docs, expander=expander).scale_ups]


SCENARIOS: list[tuple[str, list[Doc], dict[str, object]]] = [
    ("MIG slice: only the DynamicMIG pool, from zero",
     [fleet(), MIG_1G, pod("notebook", "mig-1g")],
     {"scaleUp": [{"pool": "a100", "add": 1, "pods": ["default/notebook"]}],
      "pending": [], "scaleDown": []}),
    ("seven MIG slices share one A100 GPU's counters: one node",
     [fleet(), MIG_1G, *[pod(f"nb{i}", "mig-1g") for i in range(7)]],
     {"scaleUp": [{"pool": "a100", "add": 1,
                   "pods": [f"default/nb{i}" for i in range(7)]}],
      "pending": [], "scaleDown": []}),
    ("two GPUs on one pcieRoot: only the PCIe servers",
     [fleet(), PCIE_PAIR, pod("pair", "pcie-pair")],
     {"scaleUp": [{"pool": "l4", "add": 1, "pods": ["default/pair"]}],
      "pending": [], "scaleDown": []}),
    ("max size reached",
     [fleet(), H100_8, *[pod(f"train{i}", "h100x8") for i in range(4)]],
     {"scaleUp": [{"pool": "h100", "add": 3,
                   "pods": ["default/train0", "default/train1", "default/train2"]}],
      "pending": [{"pod": "default/train3", "reason": "h100: max size 3 reached"}],
      "scaleDown": []}),
    ("a pod no group can help",
     [fleet(), template("g16", count=16), pod("giant", "g16")],
     {"scaleUp": [],
      "pending": [{"pod": "default/giant", "reason": (
          "no node group fits: a100: DynamicResources: cannot allocate all claims; "
          "h100: DynamicResources: cannot allocate all claims; "
          "l4: DynamicResources: cannot allocate all claims")}],
      "scaleDown": []}),
    ("CPU too large for every template",
     [fleet(), pod("wide", cpu="500")],
     {"scaleUp": [],
      "pending": [{"pod": "default/wide", "reason": (
          "no node group fits: a100: NodeResourcesFit: Insufficient cpu; "
          "h100: NodeResourcesFit: Insufficient cpu; l4: NodeResourcesFit: Insufficient cpu")}],
      "scaleDown": []}),
    ("a pod the existing nodes take needs nothing",
     [fleet(), pod("small", cpu="2")],
     {"scaleUp": [], "pending": [], "scaleDown": []}),
    ("the example driver's GPUs",
     [fleet("cpu", "ex"), template("ex1", "gpu.example.com"), pod("e", "ex1")],
     {"scaleUp": [{"pool": "ex", "add": 1, "pods": ["default/e"]}],
      "pending": [], "scaleDown": []}),
]


@pytest.mark.parametrize(("docs", "expected"), [s[1:] for s in SCENARIOS],
                         ids=[s[0] for s in SCENARIOS])
def test_scale_up(docs: list[Doc], expected: dict[str, object]) -> None:
    assert summary(run(*docs)) == expected


def test_untolerated_taint_keeps_a_group_out() -> None:
    tainted = fleet(h100={"taints": [{"key": "dedicated", "value": "training"}]})
    docs = [tainted, template("one", cel=f"{PRODUCT}.contains('H100')"), pod("p", "one")]
    (item,) = run(*docs).pending
    assert "h100: TaintToleration: node(s) had untolerated taint" in item.reason
    tolerating = pod("p", "one")
    tolerating["spec"]["tolerations"] = [{"key": "dedicated", "operator": "Exists"}]
    assert _ups(tainted, docs[1], tolerating) == [("h100", 1, 1)]


# Two cases on which the expanders differ (pools: cpu, h100 192 CPUs $32 priority 10,
# h100s 128 CPUs $24 priority 5, l4 48 CPUs $4 priority 1).
# A: two one-GPU pods of 60 CPUs each. h100s wastes less and costs less, but its 8
#    CPUs left strand its six free GPUs (fragmentation); l4 has too few CPUs.
# B: twelve one-GPU pods, l4 limited to one node: the l4 node is cheapest per pod,
#    the H100 groups take all twelve.
CASE_A = [fleet("cpu", "h100", "h100s", "l4"), template("one"),
          pod("w0", "one", cpu="60"), pod("w1", "one", cpu="60")]
CASE_B = [fleet("cpu", "h100", "h100s", "l4", l4={"autoscaling": {"max": 1}}),
          template("one"), *[pod(f"w{i:02d}", "one") for i in range(12)]]

EXPANDERS = [
    ("A", "most-pods", [("h100", 1, 2)]),
    ("A", "least-waste", [("h100s", 1, 2)]),
    ("A", "price", [("h100s", 1, 2)]),
    ("A", "cost-per-pod", [("h100s", 1, 2)]),
    ("A", "priority", [("h100", 1, 2)]),
    ("A", "fragmentation", [("h100", 1, 2)]),
    ("A", "random", [("h100s", 1, 2)]),
    ("B", "most-pods", [("h100", 2, 12)]),
    ("B", "least-waste", [("l4", 1, 8), ("h100s", 1, 4)]),
    ("B", "price", [("l4", 1, 8), ("h100s", 1, 4)]),
    ("B", "cost-per-pod", [("l4", 1, 8), ("h100s", 1, 4)]),
    ("B", "priority", [("h100", 2, 12)]),
    ("B", "fragmentation", [("h100", 2, 12)]),
    ("B", "random", [("h100s", 2, 12)]),
]


@pytest.mark.parametrize(("case", "expander", "expected"), EXPANDERS,
                         ids=[f"{c}-{e}" for c, e, _ in EXPANDERS])
def test_expander_choice(case: str, expander: str, expected: list[tuple[str, int, int]]
                         ) -> None:
    docs = CASE_A if case == "A" else CASE_B
    assert _ups(*docs, expander=expander) == expected


def _gang(name: str, size: int, members: int) -> list[Doc]:
    labels = {"dralab.dev/gang": name, "dralab.dev/gang-size": str(size)}
    return [pod(f"{name}-{i}", "h100x8", labels=labels) for i in range(members)]


def test_gang_scales_up_whole() -> None:
    assert _ups(fleet(), H100_8, *_gang("llm", 3, 3)) == [("h100", 3, 3)]


def test_gang_larger_than_max_scales_nothing() -> None:
    decisions = run(fleet(h100={"autoscaling": {"max": 2}}), H100_8, *_gang("llm", 3, 3))
    assert decisions.scale_ups == ()
    assert [(p.pod, p.reason) for p in decisions.pending] == [
        (f"default/llm-{i}", "h100: max size 2 reached") for i in range(3)]
