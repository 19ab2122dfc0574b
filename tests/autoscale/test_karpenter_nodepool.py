"""The Karpenter model's NodePool as input: a karpenter.sh/v1 NodePool in ``dralab
autoscale -f`` (with ``--model karpenter``) and under a scenario's ``spec.autoscaling``
gives the disruption block, limits and node template (labels, taints, requirements);
bad ones are one line naming file, document and field, exit 2."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

import dralab
from dralab.cli.main import cli

Doc = dict[str, Any]


def _pool(name: str, cpu: str, price: float, **extra: Any) -> Doc:
    return {"name": name, "count": 0, "cpu": cpu, "memory": "64Gi", "gpu": {"count": 0},
            "autoscaling": {"max": 5, "pricePerHour": price}, **extra}


FLEET: Doc = {"apiVersion": "dralab.dev/v1alpha1", "kind": "Fleet", "metadata": {"name": "f"},
              "spec": {"pools": [_pool("small", "4", 1.0),
                                 _pool("big", "16", 3.0, labels={"size": "big"})]}}


def _nodepool(spec: Doc) -> Doc:
    return {"apiVersion": "karpenter.sh/v1", "kind": "NodePool",
            "metadata": {"name": "gp"}, "spec": spec}


def _pod(name: str, cpu: str = "2", **spec: Any) -> Doc:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "x",
                                     "resources": {"requests": {"cpu": cpu}}}], **spec}}


def _autoscale(tmp_path: Path, *docs: Doc, args: tuple[str, ...] = ("--model", "karpenter")
               ) -> tuple[int, Any, str]:
    path = tmp_path / "in.yaml"
    path.write_text(yaml.safe_dump_all([FLEET, *docs]))
    result = CliRunner().invoke(cli, ["autoscale", "-f", str(path), "-o", "yaml", *args])
    out = yaml.safe_load(result.stdout) if result.exit_code != 2 else None
    return result.exit_code, out, result.stderr


def test_requirements_pick_the_instance_types(tmp_path: Path) -> None:
    # Without the NodePool the cheaper small type is launched; its requirements leave big.
    code, out, _ = _autoscale(tmp_path, _pod("p"))
    assert (code, [u["pool"] for u in out["scaleUp"]]) == (0, ["small"])
    requirements = [{"key": "dralab.dev/pool", "operator": "NotIn", "values": ["small"]}]
    code, out, _ = _autoscale(tmp_path, _pod("p"), _nodepool(
        {"template": {"spec": {"requirements": requirements}}}))
    assert (code, [u["pool"] for u in out["scaleUp"]]) == (0, ["big"])


def test_template_taints_and_labels_are_on_the_new_nodes(tmp_path: Path) -> None:
    nodepool = _nodepool({"template": {
        "metadata": {"labels": {"team": "a"}},
        "spec": {"taints": [{"key": "dedicated", "value": "a", "effect": "NoSchedule"}]}}})
    tolerant = _pod("t", tolerations=[{"key": "dedicated", "operator": "Exists"}],
                    nodeSelector={"team": "a", "karpenter.sh/nodepool": "gp"})
    code, out, _ = _autoscale(tmp_path, tolerant, _pod("q"), nodepool)
    assert code == 1
    assert [(u["pool"], u["pods"]) for u in out["scaleUp"]] == [("small", ["default/t"])]
    assert [p["pod"] for p in out["pending"]] == ["default/q"]
    assert "untolerated taint" in out["pending"][0]["reason"]


def test_limits_and_single_valued_requirements(tmp_path: Path) -> None:
    # A single-valued In on a key no pool sets labels the node (Karpenter's NodeClaim
    # labels); limits of 4 CPUs leave the 16-CPU type out.
    nodepool = _nodepool({"limits": {"cpu": "4"}, "template": {"spec": {"requirements": [
        {"key": "example.com/tier", "operator": "In", "values": ["gold"]}]}}})
    code, out, _ = _autoscale(tmp_path, _pod("p", nodeSelector={"example.com/tier": "gold"}),
                              _pod("q", cpu="8"), nodepool)
    assert code == 1
    assert [(u["pool"], u["pods"]) for u in out["scaleUp"]] == [("small", ["default/p"])]
    assert out["pending"] == [{"pod": "default/q", "reason": "all available instance types "
                               'exceed limits for nodepool "gp"'}]


def test_the_cluster_autoscaler_model_does_not_read_it(tmp_path: Path) -> None:
    nodepool = _nodepool({"template": {"spec": {"requirements": [
        {"key": "dralab.dev/pool", "operator": "NotIn", "values": ["small"]}]}}})
    result = CliRunner().invoke(cli, ["autoscale", "-f", "-", "-o", "yaml"],
                                input=yaml.safe_dump_all([FLEET, _pod("p"), nodepool]))
    assert result.exit_code == 0
    assert [u["pool"] for u in yaml.safe_load(result.stdout)["scaleUp"]] == ["small"]
    assert "does not use NodePool (karpenter.sh/v1)" in result.stderr


@pytest.mark.parametrize(("spec", "message"), [
    ({"template": {"spec": {"requirements": [{"key": "a", "operator": "Near"}]}}},
     "spec.template.spec.requirements[0].operator: must be one of In, NotIn"),
    ({"template": {"spec": {"requirements": [{"key": "a", "operator": "Gt",
                                              "values": ["x"]}]}}},
     "spec.template.spec.requirements[0].values: requirements operator 'Gt'"),
    ({"template": {"spec": {"taints": [{"key": "a", "effect": "Never"}]}}},
     "spec.template.spec.taints[0].effect: must be NoSchedule"),
    ({"disruption": {"consolidateAfter": "soon"}},
     "spec.disruption.consolidateAfter: must be a duration or Never"),
    ({"limits": {"cpu": "lots"}}, "spec.limits.cpu: not a quantity"),
])
def test_bad_nodepool_is_one_line_exit_2(tmp_path: Path, spec: Doc, message: str) -> None:
    code, _, err = _autoscale(tmp_path, _pod("p"), _nodepool(spec))
    assert code == 2
    assert err.count("\n") == 1 and "in.yaml:3 NodePool gp: " + message in err


def test_several_nodepools_by_weight(tmp_path: Path) -> None:
    # Each autoscaled pool is each NodePool's type (NODEPOOL-POOL); the heavier NodePool
    # takes the pod (the lighter one's name comes later: by name alone it would be
    # first), a pod selecting the other's label goes there; a static NodePool
    # (spec.replicas) is not provisioned for.
    heavy = {**_nodepool({"weight": 50}), "metadata": {"name": "heavy"}}
    light = {**_nodepool({"template": {"metadata": {"labels": {"team": "a"}}}}),
             "metadata": {"name": "light"}}
    static = {**_nodepool({"replicas": 1}), "metadata": {"name": "static"}}
    code, out, _ = _autoscale(tmp_path, _pod("p"), _pod("t", nodeSelector={"team": "a"}),
                              heavy, light, static)
    assert code == 0
    assert [(u["pool"], u["pods"]) for u in out["scaleUp"]] == [
        ("heavy-small", ["default/p"]), ("light-small", ["default/t"])]


def test_one_nodepool_per_name_of_version_v1(tmp_path: Path) -> None:
    code, _, err = _autoscale(tmp_path, _nodepool({}), _nodepool({}))
    assert code == 2 and "in.yaml:3 NodePool gp: metadata.name: a second NodePool named " \
        "'gp' (the first is " in err
    old = {**_nodepool({}), "apiVersion": "karpenter.sh/v1beta1"}
    code, _, err = _autoscale(tmp_path, old)
    assert code == 2 and "only karpenter.sh/v1 NodePools are read" in err


# -- simulate: spec.autoscaling.nodePool and ignoreDRARequests ---------------------------

_FULL_NODE = {"devices": {"count": 8}}


def _scenario(pools: list[Doc], **autoscaling: Any) -> dralab.Scenario:
    return dralab.scenario({
        "duration": "1h", "compare": ["dra"], "sampleInterval": "1m",
        "fleet": {"spec": {"pools": pools}},
        "workload": [{"name": "train", "arrivals": ["0s"],
                      "duration": {"distribution": "fixed", "mean": "10m"}, **_FULL_NODE}],
        "autoscaling": {"model": "karpenter", **autoscaling}})


def _gpu_pool(name: str, price: float) -> Doc:
    return {"name": name, "count": 0, "gpu": {"model": "h100-80gb", "count": 8},
            "autoscaling": {"max": 2, "pricePerHour": price}}


def _pods_nodes(scenario: dralab.Scenario) -> list[str | None]:
    [mode] = dralab.simulate(scenario).modes
    return [p.node for p in mode.pods]


def test_simulate_ignores_dra_requests_by_default() -> None:
    pools = [_gpu_pool("dear", 20), _gpu_pool("cheap", 5)]
    assert _pods_nodes(_scenario(pools)) == [None]  # Karpenter's default: no launch
    assert _pods_nodes(_scenario(pools, ignoreDRARequests=False)) == ["cheap-01"]


def test_simulate_nodepool_inline_and_from_a_file(tmp_path: Path) -> None:
    pools = [_gpu_pool("dear", 20), _gpu_pool("cheap", 5)]
    nodepool = _nodepool({"template": {"spec": {"requirements": [
        {"key": "dralab.dev/pool", "operator": "In", "values": ["dear"]}]}}})
    inline = _scenario(pools, ignoreDRARequests=False, nodePool=nodepool)
    assert _pods_nodes(inline) == ["dear-01"]
    (tmp_path / "nodepool.yaml").write_text(yaml.safe_dump(nodepool))
    from_file = dralab.scenario({
        "duration": "1h", "compare": ["dra"], "sampleInterval": "1m",
        "fleet": {"spec": {"pools": pools}},
        "workload": [{"name": "train", "arrivals": ["0s"], "duration": {
            "distribution": "fixed", "mean": "10m"}, **_FULL_NODE}],
        "autoscaling": {"model": "karpenter", "ignoreDRARequests": False,
                        "nodePool": "nodepool.yaml"}}, base_dir=tmp_path)
    assert _pods_nodes(from_file) == ["dear-01"]


def test_simulate_several_nodepools_inline_and_from_a_file(tmp_path: Path) -> None:
    # The heavier NodePool's copy of the dear pool is launched (each autoscaled pool is
    # each NodePool's type, named NODEPOOL-POOL), though the other's cheap copy is cheaper.
    pools = [_gpu_pool("dear", 20), _gpu_pool("cheap", 5)]
    # (No consolidation: a replacement across NodePools is not weighed by weight yet.)
    never = {"consolidateAfter": "Never"}
    heavy = {**_nodepool({"weight": 10, "disruption": never, "template": {"spec": {
        "requirements": [{"key": "dralab.dev/pool", "operator": "In", "values": ["a-dear"]}]}}}),
        "metadata": {"name": "a"}}
    light = {**_nodepool({"disruption": never}), "metadata": {"name": "b"}}
    inline = _scenario(pools, ignoreDRARequests=False, nodePool=[light, heavy])
    assert _pods_nodes(inline) == ["a-dear-01"]
    (tmp_path / "nodepools.yaml").write_text(yaml.safe_dump_all([light, heavy]))
    from_file = dralab.scenario({
        "duration": "1h", "compare": ["dra"], "sampleInterval": "1m",
        "fleet": {"spec": {"pools": pools}},
        "workload": [{"name": "train", "arrivals": ["0s"], "duration": {
            "distribution": "fixed", "mean": "10m"}, **_FULL_NODE}],
        "autoscaling": {"model": "karpenter", "ignoreDRARequests": False,
                        "nodePool": "nodepools.yaml"}}, base_dir=tmp_path)
    assert _pods_nodes(from_file) == ["a-dear-01"]
    with pytest.raises(dralab.DralabError, match="a second NodePool named 'b'"):
        _scenario(pools, nodePool=[light, light])


@pytest.mark.parametrize(("autoscaling", "message"), [
    ({"model": "cluster-autoscaler", "ignoreDRARequests": False},
     r"spec\.autoscaling\.ignoreDRARequests: only with model: karpenter"),
    ({"model": "cluster-autoscaler", "nodePool": {}},
     r"spec\.autoscaling\.nodePool: only with model: karpenter"),
    ({"nodePool": {"apiVersion": "v1", "kind": "ConfigMap"}},
     r"spec\.autoscaling\.nodePool: expected apiVersion karpenter\.sh/v1, kind NodePool"),
    ({"nodePool": _nodepool({"limits": {"cpu": "lots"}})},
     r"spec\.autoscaling\.nodePool: spec\.limits\.cpu: not a quantity"),
    ({"nodePool": "missing.yaml"}, r"spec\.autoscaling\.nodePool: "),
])
def test_simulate_nodepool_errors_name_the_field(autoscaling: Doc, message: str) -> None:
    with pytest.raises(dralab.DralabError, match=message):
        _scenario([_gpu_pool("cheap", 5)], **autoscaling)


def test_validate_lists_a_nodepool_as_read_not_validated(tmp_path: Path) -> None:
    path = tmp_path / "np.yaml"
    path.write_text(yaml.safe_dump(_nodepool({})))
    result = CliRunner().invoke(cli, ["validate", "-f", str(path)])
    assert result.exit_code == 0
    assert result.stdout == (f"{path} NodePool gp: not checked (kind read by dralab, not "
                             "validated)\nno object checked; 1 not checked\n")


@pytest.mark.parametrize(("policy", "pool"), [([], "big"), (["--preference-policy", "Respect"],
                                                            "big"),
                                              (["--preference-policy", "Ignore"], "small")])
def test_preference_policy(tmp_path: Path, policy: list[str], pool: str) -> None:
    # The pod prefers the dearer big type: Karpenter's default (Respect) launches it.
    prefers = _pod("p", affinity={"nodeAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1, "preference": {
            "matchExpressions": [{"key": "size", "operator": "In", "values": ["big"]}]}}]}})
    code, out, _ = _autoscale(tmp_path, prefers, args=("--model", "karpenter", *policy))
    assert (code, [u["pool"] for u in out["scaleUp"]]) == (0, [pool])


def test_simulate_preference_policy_is_checked() -> None:
    with pytest.raises(dralab.DralabError,
                       match=r"spec\.autoscaling\.preferencePolicy: must be Respect or Ignore"):
        _scenario([_gpu_pool("cheap", 5)], preferencePolicy="Sometimes")
