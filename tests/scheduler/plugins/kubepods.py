"""A pod builder shaped like upstream's ``st.MakePod()`` chain for the affinity, ports and
image tables (kubernetes v1.36.2 pkg/scheduler/testing/wrappers.go): ``P().namespace("ns")
.labels({...}).pod_affinity_in("service", "region", ["a"], REQUIRED).obj()`` builds the
document the Go chain builds, decoded as a loaded manifest.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

from dralab.api.codec import decode
from dralab.api.core import Node, Pod

_UNNAMED = itertools.count()

# st.PodAffinityKind
REQUIRED = "required"
PREFERRED = "preferred"
REQUIRED_PREFERRED = "both"


def selector(op: str, key: str, values: Sequence[str] = ()) -> dict[str, Any]:
    expr: dict[str, Any] = {"key": key, "operator": op}
    if op in ("In", "NotIn"):
        expr["values"] = list(values)
    return {"matchExpressions": [expr]}


def term(selector_doc: Mapping[str, Any] | None, topology_key: str = "", *,
         namespaces: Sequence[str] | None = None,
         namespace_selector: Mapping[str, Any] | None = None,
         match_label_keys: Sequence[str] = (), mismatch_label_keys: Sequence[str] = ()
         ) -> dict[str, Any]:
    """A v1.PodAffinityTerm document."""
    out: dict[str, Any] = {"topologyKey": topology_key}
    if selector_doc is not None:
        out["labelSelector"] = dict(selector_doc)
    if namespaces is not None:
        out["namespaces"] = list(namespaces)
    if namespace_selector is not None:
        out["namespaceSelector"] = dict(namespace_selector)
    if match_label_keys:
        out["matchLabelKeys"] = list(match_label_keys)
    if mismatch_label_keys:
        out["mismatchLabelKeys"] = list(mismatch_label_keys)
    return out


def weighted(weight: int, term_doc: Mapping[str, Any]) -> dict[str, Any]:
    return {"weight": weight, "podAffinityTerm": dict(term_doc)}


class P:
    """st.MakePod(): name "", namespace "" unless set (upstream's default too)."""

    def __init__(self) -> None:
        self.meta: dict[str, Any] = {"name": "", "namespace": "default"}
        self.spec: dict[str, Any] = {"containers": []}

    def name(self, name: str) -> P:
        self.meta["name"] = name
        return self

    def uid(self, uid: str) -> P:
        self.meta["uid"] = uid
        return self

    def namespace(self, namespace: str) -> P:
        # upstream's "" (defaultNamespace, MakePod's unset namespace) is "default" here
        self.meta["namespace"] = namespace or "default"
        return self

    def labels(self, labels: Mapping[str, str]) -> P:
        self.meta.setdefault("labels", {}).update(labels)
        return self

    def label(self, key: str, value: str) -> P:
        return self.labels({key: value})

    def node(self, name: str) -> P:
        self.spec["nodeName"] = name
        return self

    def container(self, image: str) -> P:
        self.spec["containers"].append({"name": f"c{len(self.spec['containers'])}",
                                        "image": image})
        return self

    def init_container(self, image: str) -> P:
        init = self.spec.setdefault("initContainers", [])
        init.append({"name": f"i{len(init)}", "image": image})
        return self

    def image_volume(self, reference: str) -> P:
        volumes = self.spec.setdefault("volumes", [])
        volumes.append({"name": f"v{len(volumes)}", "image": {"reference": reference}})
        return self

    def host_port(self, port: int) -> P:
        self.spec["containers"].append({"name": "container", "image": "pause",
                                        "ports": [{"hostPort": port}]})
        return self

    def container_port(self, ports: Sequence[Mapping[str, Any]]) -> P:
        self.spec["containers"].append({"name": "container", "image": "pause",
                                        "ports": [dict(p) for p in ports]})
        return self

    def init_container_port(self, sidecar: bool, ports: Sequence[Mapping[str, Any]]) -> P:
        container: dict[str, Any] = {"name": "init-container", "image": "pause",
                                     "ports": [dict(p) for p in ports]}
        if sidecar:
            container["restartPolicy"] = "Always"
        self.spec.setdefault("initContainers", []).append(container)
        return self

    def _section(self, which: str) -> dict[str, Any]:
        section: dict[str, Any] = self.spec.setdefault("affinity", {}).setdefault(which, {})
        return section

    def _add(self, which: str, term_doc: Mapping[str, Any], kind: str) -> P:
        section = self._section(which)
        if kind in (REQUIRED, REQUIRED_PREFERRED):
            section.setdefault("requiredDuringSchedulingIgnoredDuringExecution", []).append(
                dict(term_doc))
        if kind in (PREFERRED, REQUIRED_PREFERRED):
            section.setdefault("preferredDuringSchedulingIgnoredDuringExecution", []).append(
                weighted(1, term_doc))
        return self

    def pod_affinity(self, topology_key: str, selector_doc: Mapping[str, Any] | None,
                     kind: str) -> P:
        return self._add("podAffinity", term(selector_doc, topology_key), kind)

    def pod_anti_affinity(self, topology_key: str, selector_doc: Mapping[str, Any] | None,
                          kind: str) -> P:
        return self._add("podAntiAffinity", term(selector_doc, topology_key), kind)

    def pod_affinity_in(self, key: str, topology_key: str, values: Sequence[str],
                        kind: str) -> P:
        return self.pod_affinity(topology_key, selector("In", key, values), kind)

    def pod_anti_affinity_in(self, key: str, topology_key: str, values: Sequence[str],
                             kind: str) -> P:
        return self.pod_anti_affinity(topology_key, selector("In", key, values), kind)

    def pod_affinity_not_in(self, key: str, topology_key: str, values: Sequence[str],
                            kind: str) -> P:
        return self.pod_affinity(topology_key, selector("NotIn", key, values), kind)

    def pod_anti_affinity_not_in(self, key: str, topology_key: str, values: Sequence[str],
                                 kind: str) -> P:
        return self.pod_anti_affinity(topology_key, selector("NotIn", key, values), kind)

    def pod_affinity_exists(self, key: str, topology_key: str, kind: str) -> P:
        return self.pod_affinity(topology_key, selector("Exists", key), kind)

    def pod_anti_affinity_exists(self, key: str, topology_key: str, kind: str) -> P:
        return self.pod_anti_affinity(topology_key, selector("Exists", key), kind)

    def affinity(self, affinity: Mapping[str, Any]) -> P:
        """A whole v1.Affinity document (upstream's literal &v1.Affinity{...})."""
        self.spec["affinity"] = dict(affinity)
        return self

    def obj(self) -> Pod:
        spec = dict(self.spec)
        if not spec["containers"]:
            spec["containers"] = [{"name": "c", "image": "pause"}]
        meta = dict(self.meta)
        if not meta["name"]:
            # upstream's tables leave most names empty; dralab's store keys pods by name
            meta["name"] = f"unnamed-{next(_UNNAMED)}"
        meta.setdefault("uid", f"uid-{meta['name']}")
        obj = decode({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec})
        assert isinstance(obj, Pod)
        return obj


def with_terms(namespace: str, node: str, labels: Mapping[str, str],
               affinity: Sequence[Mapping[str, Any]] | None,
               anti_affinity: Sequence[Mapping[str, Any]] | None) -> Pod:
    """filtering_test.go createPodWithAffinityTerms."""
    aff: dict[str, Any] = {"podAffinity": {}, "podAntiAffinity": {}}
    if affinity:
        aff["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] = list(affinity)
    if anti_affinity:
        aff["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] = list(
            anti_affinity)
    p = P().namespace(namespace).labels(labels or {}).affinity(aff)
    if node:
        p.node(node)
    return p.obj()


def node(name: str, labels: Mapping[str, str] | None = None,
         images: Sequence[tuple[Sequence[str], int]] = ()) -> Node:
    """v1.Node{Name, Labels} with ``status.images`` ([(names, sizeBytes)])."""
    status: dict[str, Any] = {"allocatable": {"cpu": "1", "memory": "1Gi", "pods": "110"}}
    if images:
        status["images"] = [{"names": list(n), "sizeBytes": size} for n, size in images]
    obj = decode({"apiVersion": "v1", "kind": "Node",
                  "metadata": {"name": name, "labels": dict(labels or {})}, "status": status})
    assert isinstance(obj, Node)
    return obj
