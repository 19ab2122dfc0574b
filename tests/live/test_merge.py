"""dralab.live.merge: files laid over a cluster replace objects of the same identity."""

from __future__ import annotations

from typing import Any

from dralab.api.io import Document
from dralab.live import merge_documents, object_identity


def _obj(api_version: str, kind: str, name: str, namespace: str | None = None,
         **spec: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    return {"apiVersion": api_version, "kind": kind, "metadata": meta, "spec": spec}


def test_identity_is_group_kind_namespace_name() -> None:
    assert object_identity(_obj("resource.k8s.io/v1beta2", "DeviceClass", "gpu")) == \
        object_identity(_obj("resource.k8s.io/v1", "DeviceClass", "gpu")) == \
        ("resource.k8s.io", "DeviceClass", "default", "gpu")
    # no namespace reads as "default", as dralab reads files
    assert object_identity(_obj("v1", "Pod", "p")) == object_identity(_obj("v1", "Pod", "p",
                                                                           "default"))
    # Kueue's Workload and scheduling.k8s.io's are different objects
    assert object_identity(_obj("kueue.x-k8s.io/v1beta2", "Workload", "w", "ns")) != \
        object_identity(_obj("scheduling.k8s.io/v1alpha2", "Workload", "w", "ns"))
    # a name is needed: generateName or nothing is no identity
    assert object_identity({"apiVersion": "v1", "kind": "Pod",
                            "metadata": {"generateName": "p-"}}) is None
    assert object_identity(["not", "an", "object"]) is None


def test_files_replace_and_are_added_after_the_cluster() -> None:
    cluster = [Document("cluster prod", i, d) for i, d in enumerate([
        _obj("resource.k8s.io/v1", "DeviceClass", "gpu", selectors=[]),
        _obj("v1", "Pod", "train", "ml", nodeName="n1"),
        _obj("v1", "Pod", "train", "other"),
        _obj("v1", "Node", "n1")], start=1)]
    files = [Document("what-if.yaml", 1, _obj("resource.k8s.io/v1beta2", "DeviceClass", "gpu",
                                              selectors=["x"])),
             Document("what-if.yaml", 2, _obj("v1", "Pod", "train", "ml")),
             Document("what-if.yaml", 3, _obj("v1", "Pod", "new", "ml"))]
    merged = merge_documents(cluster, files)
    # in place, as kubectl apply changes an object that exists; new objects after
    assert [d.where for d in merged] == ["what-if.yaml:1", "what-if.yaml:2", "cluster prod:3",
                                         "cluster prod:4", "what-if.yaml:3"]
    assert merge_documents(cluster, []) == cluster
    # a second file copy of one object stays among the files (the verb warns of both)
    twice = [*files, Document("again.yaml", None, _obj("v1", "Pod", "train", "ml"))]
    assert [d.where for d in merge_documents(cluster, twice)] == [
        "what-if.yaml:1", "what-if.yaml:2", "cluster prod:3", "cluster prod:4",
        "what-if.yaml:3", "again.yaml"]
