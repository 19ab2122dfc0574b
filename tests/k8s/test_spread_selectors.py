"""PodTopologySpread's default selector from a Service, on kube-scheduler v1.36.2 and dralab.

Bare pods (no owner) that a Service selects get the system default constraints too: upstream's
DefaultSelector merges the selectors of the Services selecting the pod. The packing shape's
nodes and pods (``test_packing``), fewer of them: 10 eight-GPU nodes, 40 one-GPU pods labelled
``app: web``. Without a Service they pack 8 by 8 (``test_packing.test_bare_pods_pack``); with
one they spread over every node.
"""

from __future__ import annotations

from dralab.api.features import FeatureGates

from .api import Client
from .scenario import Obj, run_in_dralab
from .test_packing import _cluster, _gpu_pod, _pods, _run, _shape

NODES = 10
PODS = 40


def _web_pod(name: str) -> Obj:
    pod = _gpu_pod(name)
    pod["metadata"]["labels"] = {"app": "web"}
    return pod


def _service() -> Obj:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
            "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": 8080}]}}


def test_bare_pods_a_service_selects_spread(kube: Client, dralab_gates: FeatureGates) -> None:
    def build(p: str) -> list[Obj]:
        names = {f"{p}-n{i:02d}" for i in range(NODES)}
        kept = [o for o in _cluster(p)
                if (o["kind"] != "Node" or o["metadata"]["name"] in names)
                and (o["kind"] != "ResourceSlice" or o["spec"]["nodeName"] in names)]
        return [*kept, _service(), *(_web_pod(f"p{i:03d}") for i in range(PODS))]

    _, stored, server = _run(kube, build)
    real = _shape(_pods(server))
    ours = _shape(_pods(run_in_dralab(stored, dralab_gates)))
    without = _shape(_pods(run_in_dralab([o for o in stored if o.get("kind") != "Service"],
                                         dralab_gates)))
    print(f"\nbare pods and a Service, {NODES} nodes / {PODS} pods: kube-scheduler {real}, "
          f"dralab {ours} (without the Service {without})")
    assert real[0] == NODES and real[2] == 0
    assert ours == (NODES, {PODS // NODES: NODES}, 0)
    assert real[1].get(PODS // NODES, 0) >= NODES * 8 // 10
    assert without == (PODS // 8, {8: PODS // 8}, 0)
