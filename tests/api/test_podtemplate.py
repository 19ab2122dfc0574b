"""Pod-template access (``dralab.api.podtemplate``) and the claim-shape vocabulary
(``dralab.api.claimshape``): the low-layer helpers the simulator and a migration
assistant share."""

from __future__ import annotations

import msgspec
import pytest

from dralab.api.base import KubeObject, ObjectMeta
from dralab.api.claimshape import ClaimShape, claim_template, mig_fraction
from dralab.api.codec import decode
from dralab.api.core import Node, Pod, PodSpec, PodTemplateSpec, Toleration
from dralab.api.podtemplate import (
    pod_template,
    pod_template_data,
    template_path,
    with_pod_template,
)
from dralab.validation.check import validate_objects

SPEC = {"containers": [{"name": "main", "image": "busybox"}]}
TEMPLATE = {"metadata": {"labels": {"app": "a"}}, "spec": SPEC}
SELECTOR = {"matchLabels": {"app": "a"}}
DOCS = {
    "Pod": {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "namespace": "ns", "labels": {"app": "a"}}, "spec": SPEC},
    "Job": {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
            "spec": {"template": {**TEMPLATE, "spec": {**SPEC, "restartPolicy": "Never"}}}},
    "CronJob": {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "c"},
                "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": {
                    **TEMPLATE, "spec": {**SPEC, "restartPolicy": "Never"}}}}}},
    "Deployment": {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
                   "spec": {"selector": SELECTOR, "template": TEMPLATE}},
    "ReplicaSet": {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "r"},
                   "spec": {"selector": SELECTOR, "template": TEMPLATE}},
    "StatefulSet": {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "s"},
                    "spec": {"selector": SELECTOR, "serviceName": "s", "template": TEMPLATE}},
    "DaemonSet": {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "ds"},
                  "spec": {"selector": SELECTOR, "template": TEMPLATE}},
}


@pytest.mark.parametrize("kind", sorted(DOCS))
def test_every_carrier_gives_its_template_and_takes_a_new_one(kind: str) -> None:
    obj = decode(DOCS[kind])
    template = pod_template(obj)
    assert template is not None
    assert template.metadata["labels"] == {"app": "a"}
    assert template.spec.containers[0].image == "busybox"
    assert pod_template_data(DOCS[kind]) is not None
    path = template_path(kind)
    assert path is not None and (path == "") == (kind == "Pod")

    tolerant = msgspec.structs.replace(template.spec, tolerations=[Toleration(operator="Exists")])
    changed = with_pod_template(obj, PodTemplateSpec(metadata=template.metadata, spec=tolerant))
    assert type(changed) is type(obj) and changed.raw is None
    again = pod_template(changed)
    assert again is not None and again.spec.tolerations == [Toleration(operator="Exists")]
    assert again.metadata["labels"] == {"app": "a"}
    assert changed.name == obj.name
    assert validate_objects([changed]) == []


def test_kinds_without_a_template() -> None:
    node = Node(api_version="v1", kind="Node", metadata=ObjectMeta(name="n"))
    assert pod_template(node) is None
    assert template_path("Node") is None
    assert pod_template_data({"kind": "Node"}) is None
    with pytest.raises(TypeError):
        with_pod_template(node, PodTemplateSpec(spec=PodSpec()))


def test_a_pod_takes_labels_and_annotations_from_the_template() -> None:
    pod = decode(DOCS["Pod"])
    assert isinstance(pod, Pod)
    out = with_pod_template(pod, PodTemplateSpec(metadata={"annotations": {"x": "y"}},
                                                 spec=pod.spec))
    assert out.metadata.labels == {} and out.metadata.annotations == {"x": "y"}
    assert out.metadata.namespace == "ns"


@pytest.mark.parametrize("shape", [
    ClaimShape(count=2, product_name="NVIDIA H100", match_attribute="gpu.nvidia.com/clique"),
    ClaimShape(type="mig", profile="3g.40gb"),
    ClaimShape(type="share", memory="10Gi"),
    ClaimShape(first_available=(ClaimShape(type="mig", profile="1g.10gb"), ClaimShape())),
])
def test_claim_shapes_are_valid_templates(shape: ClaimShape) -> None:
    template = claim_template("t", "ns", shape)
    assert template.ref == "ns/t"
    objects: list[KubeObject] = [template]
    assert validate_objects(objects) == []


def test_mig_fraction() -> None:
    assert mig_fraction("3g.40gb") == 3 / 7
    assert mig_fraction("odd") == 1.0
