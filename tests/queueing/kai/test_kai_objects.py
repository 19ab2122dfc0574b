"""KAI's objects: the served versions decode (KAI's own docs examples among them),
anything else is refused in one line with the field path, and KAI's webhook and CRD
rules name the field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dralab.api.codec import DecodeError
from dralab.api.io import read_documents
from dralab.queueing.kai.objects import (
    KaiOperatorConfig,
    KaiPodGroup,
    KaiQueueObject,
    KaiTopology,
    SchedulingShard,
    decode_kai,
    is_kai_document,
)
from dralab.queueing.kai.validate import enabled_actions, object_problems

DATA = Path(__file__).parent.parent.parent / "data" / "kai"


def _docs(name: str) -> list[dict[str, Any]]:
    return [d.data for d in read_documents([str(DATA / name)])]


def test_docs_queues_decode_as_written() -> None:
    parent, child = (decode_kai(d) for d in _docs("quickstart-default-queues.yaml"))
    assert isinstance(parent, KaiQueueObject) and isinstance(child, KaiQueueObject)
    assert child.spec.parent_queue == "default-parent-queue"
    assert child.spec.resources is not None
    assert child.spec.resources.gpu.limit == -1 and child.spec.resources.gpu.quota == 0
    assert object_problems(parent) == [] and object_problems(child) == []


def test_docs_topology_decodes() -> None:
    (doc,) = _docs("topology-cluster-topology.yaml")
    topology = decode_kai(doc)
    assert isinstance(topology, KaiTopology)
    assert [level.node_label for level in topology.spec.levels][-1] == "kubernetes.io/hostname"
    assert object_problems(topology) == []


def _queue(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "scheduling.run.ai/v2", "kind": "Queue",
            "metadata": {"name": "q"}, "spec": spec}


def test_absent_queue_fields_read_as_zero() -> None:
    # KAI's QueueResource is float64 without omitempty: absent is 0, not "unlimited"
    queue = decode_kai(_queue(resources={"gpu": {"quota": 2}}))
    assert isinstance(queue, KaiQueueObject) and queue.spec.resources is not None
    gpu = queue.spec.resources.gpu
    assert (gpu.quota, gpu.over_quota_weight, gpu.limit) == (2, 0, 0)


def test_queue_without_resources_is_refused_by_the_webhook() -> None:
    # pkg/apis/scheduling/v2/queue_webhook.go: missingResourcesError
    assert object_problems(decode_kai(_queue(priority=3))) == \
        [("spec.resources", "resources must be specified")]


def test_unknown_queue_field_is_refused_as_strict_decoding_does() -> None:
    # docs/operator/scheduling-shards.md writes a Queue's resources as resourceQuota
    with pytest.raises(DecodeError, match=r'unknown field "spec\.resourceQuota"'):
        decode_kai(_queue(resourceQuota={"cpu": {"quota": 200}}))


@pytest.mark.parametrize(("doc", "message"), [
    ({"apiVersion": "scheduling.run.ai/v1", "kind": "Queue"},
     'no matches for kind "Queue" in version "scheduling.run.ai/v1" '
     "(KAI serves scheduling.run.ai/v2)"),
    ({"apiVersion": "scheduling.run.ai/v2", "kind": "PodGroup"},
     "(KAI serves scheduling.run.ai/v2alpha2)"),
    ({"apiVersion": "kai.scheduler/v1", "kind": "Widget"}, 'no matches for kind "Widget"'),
    ({"apiVersion": "scheduling.run.ai/v1alpha2", "kind": "BindRequest"}, "not modelled"),
])
def test_versions_kai_does_not_serve_are_refused(doc: dict[str, Any], message: str) -> None:
    with pytest.raises(DecodeError, match=message.replace("(", r"\(").replace(")", r"\)")):
        decode_kai(doc)


def test_type_mismatch_names_the_field() -> None:
    with pytest.raises(DecodeError) as err:
        decode_kai(_queue(resources={"gpu": {"quota": "two"}}))
    assert err.value.path == "spec.resources.gpu.quota"


def _group(**spec: Any) -> KaiPodGroup:
    obj = decode_kai({"apiVersion": "scheduling.run.ai/v2alpha2", "kind": "PodGroup",
                      "metadata": {"name": "pg", "namespace": "ns"}, "spec": spec})
    assert isinstance(obj, KaiPodGroup)
    return obj


def test_pod_group_fields() -> None:
    group = _group(minMember=2, queue="team-a", priorityClassName="train",
                   preemptibility="non-preemptible",
                   topologyConstraint={"topology": "t", "requiredTopologyLevel": "rack"},
                   subGroups=[{"name": "workers", "minMember": 2}])
    assert group.spec.min_member == 2 and group.spec.sub_groups[0].name == "workers"
    assert group.spec.topology_constraint is not None
    assert group.spec.topology_constraint.required_topology_level == "rack"
    assert object_problems(group) == []


@pytest.mark.parametrize(("spec", "problem"), [
    ({"minMember": 0},
     ("spec.minMember", "Invalid value: 0: spec.minMember in body should be greater than "
                        "or equal to 1")),
    ({"preemptibility": "sometimes"},
     ("spec.preemptibility", 'Unsupported value: "sometimes": supported values: '
                             '"preemptible", "non-preemptible"')),
    ({"subGroups": [{"name": "a"}, {"name": "a"}]},
     ("spec.subGroups[1].name", "duplicate subgroup name a")),
    ({"subGroups": [{"name": "a", "parent": "b"}]},
     ("spec.subGroups[0].parent", "parent b of a was not found")),
    ({"subGroups": [{"name": "a", "parent": "b"}, {"name": "b", "parent": "a"}]},
     ("spec.subGroups[0].parent", "cycle detected in subgroups")),
    ({"subGroups": [{"name": ""}]}, ("spec.subGroups[0].name", "Required value")),
])
def test_pod_group_problems(spec: dict[str, Any], problem: tuple[str, str]) -> None:
    # podgroup_webhook.go validateSubGroups and the CRD's minimum/enum/minLength
    assert object_problems(_group(**spec))[:1] == [problem]


def _shard(**spec: Any) -> SchedulingShard:
    obj = decode_kai({"apiVersion": "kai.scheduler/v1", "kind": "SchedulingShard",
                      "metadata": {"name": "default"}, "spec": spec})
    assert isinstance(obj, SchedulingShard)
    return obj


def test_shard_actions_in_the_operators_order() -> None:
    assert enabled_actions(None) == ("allocate", "consolidation", "reclaim", "preempt",
                                     "stalegangeviction")
    # setDefaultActions: consolidation off when either placement spreads
    assert "consolidation" not in enabled_actions(_shard(placementStrategy={"cpu": "spread"}))
    shard = _shard(actions={"preempt": {"priority": 600}, "stalegangeviction": {"enabled": False}})
    assert enabled_actions(shard) == ("preempt", "allocate", "consolidation", "reclaim")


@pytest.mark.parametrize(("spec", "path"), [
    ({"placementStrategy": {"gpu": "pack"}}, "spec.placementStrategy.gpu"),
    ({"actions": {"backfill": {"enabled": True}}}, "spec.actions.backfill"),
    ({"queueDepthPerAction": {"consolidation": 3}, "placementStrategy": {"gpu": "spread"}},
     "spec.queueDepthPerAction.consolidation"),
    ({"minRuntime": {"preemptMinRuntime": "ten minutes"}}, "spec.minRuntime.preemptMinRuntime"),
    ({"plugins": {"proportion": {"arguments": {"kValue": "high"}}}},
     "spec.plugins.proportion.arguments.kValue"),
])
def test_shard_problems(spec: dict[str, Any], path: str) -> None:
    assert [p for p, _ in object_problems(_shard(**spec))] == [path]


def test_operator_config_reads_gpu_sharing_only() -> None:
    config = decode_kai({"apiVersion": "kai.scheduler/v1", "kind": "Config",
                         "metadata": {"name": "kai-config"},
                         "spec": {"admission": {"gpuSharing": True, "replicas": 2},
                                  "binder": {"service": {"enabled": True}}}})
    assert isinstance(config, KaiOperatorConfig)
    assert config.spec.admission is not None and config.spec.admission.gpu_sharing


@pytest.mark.parametrize(("levels", "message"), [
    ([], "Required value"),
    ([{"nodeLabel": "rack"}, {"nodeLabel": "rack"}], "must be unique"),
    ([{"nodeLabel": "kubernetes.io/hostname"}, {"nodeLabel": "rack"}],
     "can only be used at the lowest level"),
    ([{"nodeLabel": "not a label"}], "should match"),
])
def test_topology_problems(levels: list[dict[str, str]], message: str) -> None:
    topology = decode_kai({"apiVersion": "kai.scheduler/v1alpha1", "kind": "Topology",
                           "metadata": {"name": "t"}, "spec": {"levels": levels}})
    assert any(message in m for _, m in object_problems(topology))


def test_is_kai_document() -> None:
    assert is_kai_document({"apiVersion": "scheduling.run.ai/v2"})
    assert is_kai_document({"apiVersion": "kai.scheduler/v1"})
    assert not is_kai_document({"apiVersion": "scheduling.k8s.io/v1"})
