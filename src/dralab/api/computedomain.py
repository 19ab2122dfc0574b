"""NVIDIA's ComputeDomain and ComputeDomainClique (``resource.nvidia.com/v1beta1``, the
only version the CRDs serve), typed and checked as the API server would check them.

Source: NVIDIA/k8s-dra-driver-gpu at 22407113785e78c7763b4637689a201eb39c6199
(Apache-2.0), ``api/nvidia.com/resource/v1beta1/computedomain{,clique}.go`` and the
generated CRDs ``deployments/helm/dra-driver-nvidia-gpu/crds/resource.nvidia.com_
computedomain{s,cliques}.yaml``. The CRD's defaults (numNodes 0, allocationMode
Single, status NotReady) are the fields' defaults here; its required fields, enums and
minimum are checked by :func:`compute_domain_problems`, which reports the API server's
field paths. Issue 36.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any, ClassVar

import msgspec

from dralab.api.base import KubeObject, Spec
from dralab.api.codec import DecodeError
from dralab.api.errors import ErrorType, FieldError

__all__ = [
    "ALLOCATION_MODES", "CD_API_VERSION", "CD_GROUP", "CD_VERSION", "CHANNEL_CONFIG_KIND",
    "DAEMON_CONFIG_KIND", "STATUSES", "ComputeDomain", "ComputeDomainChannelSpec",
    "ComputeDomainClique", "ComputeDomainDaemonInfo", "ComputeDomainNode",
    "ComputeDomainSpec", "ComputeDomainStatus", "compute_domain_problems",
    "compute_domain_uid", "decode_compute_domain", "is_compute_domain_document",
]

CD_GROUP = "resource.nvidia.com"
CD_VERSION = "v1beta1"
CD_API_VERSION = f"{CD_GROUP}/{CD_VERSION}"
# api/nvidia.com/resource/v1beta1/api.go: the kinds of the opaque claim configs.
CHANNEL_CONFIG_KIND = "ComputeDomainChannelConfig"
DAEMON_CONFIG_KIND = "ComputeDomainDaemonConfig"
ALLOCATION_MODES = ("All", "Single")
STATUSES = ("Ready", "NotReady")


class ComputeDomainResourceClaimTemplate(Spec, frozen=True):
    name: str | None = None


class ComputeDomainChannelSpec(Spec, frozen=True):
    resource_claim_template: ComputeDomainResourceClaimTemplate | None = None
    allocation_mode: str = "Single"


class ComputeDomainSpec(Spec, frozen=True):
    num_nodes: int = 0
    channel: ComputeDomainChannelSpec | None = None


class ComputeDomainNode(Spec, frozen=True):
    name: str | None = None
    ip_address: str | None = None
    clique_id: str | None = msgspec.field(default=None, name="cliqueID")
    # -1 where the controller builds an entry from a non-fabric daemon pod (cdstatus.go).
    index: int | None = None
    status: str = "NotReady"


class ComputeDomainStatus(Spec, frozen=True):
    status: str = "NotReady"
    nodes: list[ComputeDomainNode] = []


class ComputeDomain(KubeObject, frozen=True):
    API_VERSION: ClassVar[str] = CD_API_VERSION
    KIND: ClassVar[str] = "ComputeDomain"
    NAMESPACED: ClassVar[bool] = True

    spec: ComputeDomainSpec | None = None
    status: ComputeDomainStatus | None = None

    @property
    def template_name(self) -> str:
        """spec.channel.resourceClaimTemplate.name ('' only on an invalid object)."""
        channel = self.spec.channel if self.spec else None
        rct = channel.resource_claim_template if channel else None
        return (rct.name if rct else None) or ""

    @property
    def allocation_mode(self) -> str:
        channel = self.spec.channel if self.spec else None
        return channel.allocation_mode if channel else "Single"

    @property
    def num_nodes(self) -> int:
        return self.spec.num_nodes if self.spec else 0


class ComputeDomainDaemonInfo(Spec, frozen=True):
    node_name: str | None = None
    ip_address: str | None = None
    clique_id: str | None = msgspec.field(default=None, name="cliqueID")
    index: int | None = None
    status: str = "NotReady"


class ComputeDomainClique(KubeObject, frozen=True):
    """One NVLink clique's daemons of one ComputeDomain (named ``<cdUID>.<cliqueID>``,
    written by the IMEX daemons under the ComputeDomainCliques gate)."""

    API_VERSION: ClassVar[str] = CD_API_VERSION
    KIND: ClassVar[str] = "ComputeDomainClique"
    NAMESPACED: ClassVar[bool] = True

    daemons: list[ComputeDomainDaemonInfo] = []


_KINDS: dict[str, type[KubeObject]] = {
    "ComputeDomain": ComputeDomain, "ComputeDomainClique": ComputeDomainClique,
}
_PATH_SUFFIX = " - at `$"


def is_compute_domain_document(data: Mapping[str, Any]) -> bool:
    """Whether a plain document is a ComputeDomain or ComputeDomainClique of NVIDIA's
    resource.nvidia.com group (any version: an unserved one is then refused). The
    group's other kinds stay what they were: kinds dralab does not model."""
    api_version = data.get("apiVersion")
    return isinstance(api_version, str) and api_version.split("/", 1)[0] == CD_GROUP \
        and data.get("kind") in _KINDS


def decode_compute_domain(data: Mapping[str, Any]) -> KubeObject:
    """A resource.nvidia.com document as its typed object; DecodeError (with the field
    path) for a version the CRDs do not serve, an unknown kind, or a type mismatch."""
    api_version = str(data.get("apiVersion", ""))
    kind = str(data.get("kind", ""))
    if api_version != CD_API_VERSION:
        raise DecodeError("", f'no matches for kind "{kind}" in version "{api_version}" '
                              f"(the driver's CRDs serve {CD_API_VERSION})")
    cls = _KINDS.get(kind)
    if cls is None:
        raise DecodeError("", f'kind "{kind}" of {CD_GROUP} is not modelled by dralab '
                              f"(ComputeDomain, ComputeDomainClique are)")
    payload = dict(data) | {"__raw__": data}
    try:
        return msgspec.convert(payload, cls)
    except msgspec.ValidationError as err:
        text = str(err)
        at = text.rfind(_PATH_SUFFIX)
        if at < 0:
            raise DecodeError("", text) from None
        path = text[at + len(_PATH_SUFFIX):].rstrip("`").lstrip(".")
        raise DecodeError(path, text[:at]) from None


def _required(path: str) -> FieldError:
    return FieldError(path=path, type=ErrorType.REQUIRED)


def _enum(path: str, value: str, allowed: tuple[str, ...]) -> FieldError | None:
    if value in allowed:
        return None
    # The API server's structural-schema wording for an enum.
    quoted = ", ".join(f'"{v}"' for v in allowed)
    return FieldError(path=path, type=ErrorType.NOT_SUPPORTED, value=value,
                      detail=f"supported values: {quoted}")


def _node_problems(path: str, node: ComputeDomainNode | ComputeDomainDaemonInfo,
                   name_field: str) -> list[FieldError]:
    out: list[FieldError] = []
    name = node.name if isinstance(node, ComputeDomainNode) else node.node_name
    for field, value in ((name_field, name), ("ipAddress", node.ip_address),
                         ("cliqueID", node.clique_id)):
        if value is None:
            out.append(_required(f"{path}.{field}"))
    bad = _enum(f"{path}.status", node.status, STATUSES)
    return out + ([bad] if bad else [])


def compute_domain_problems(obj: KubeObject) -> list[FieldError]:
    """What the CRD's structural schema refuses in a ComputeDomain or ComputeDomainClique
    (required fields, enums, numNodes >= 0, list-map keys unique)."""
    out: list[FieldError] = []
    if isinstance(obj, ComputeDomain):
        spec = obj.spec
        if spec is None:
            return [_required("spec")]
        if spec.num_nodes < 0:
            out.append(FieldError(path="spec.numNodes", type=ErrorType.INVALID,
                                  value=spec.num_nodes,
                                  detail="should be greater than or equal to 0"))
        if spec.channel is None:
            out.append(_required("spec.channel"))
        else:
            rct = spec.channel.resource_claim_template
            if rct is None:
                out.append(_required("spec.channel.resourceClaimTemplate"))
            elif rct.name is None:
                out.append(_required("spec.channel.resourceClaimTemplate.name"))
            bad = _enum("spec.channel.allocationMode", spec.channel.allocation_mode,
                        ALLOCATION_MODES)
            out += [bad] if bad else []
        if obj.status is not None:
            bad = _enum("status.status", obj.status.status, STATUSES)
            out += [bad] if bad else []
            out += _list_map(obj.status.nodes, "status.nodes", "name")
    elif isinstance(obj, ComputeDomainClique):
        out += _list_map(obj.daemons, "daemons", "nodeName")
    return out


def _list_map(items: list[Any], path: str, key: str) -> list[FieldError]:
    out: list[FieldError] = []
    seen: set[str] = set()
    for i, item in enumerate(items):
        out += _node_problems(f"{path}[{i}]", item, key)
        name = item.name if isinstance(item, ComputeDomainNode) else item.node_name
        if name is not None and name in seen:
            # x-kubernetes-list-type: map keyed by the node's name.
            out.append(FieldError(path=f"{path}[{i}]", type=ErrorType.DUPLICATE,
                                  value={key: name}))
        if name is not None:
            seen.add(name)
    return out


def compute_domain_uid(cd: ComputeDomain) -> str:
    """The CD's uid: metadata.uid when the input has one, else a stable UUID of its
    namespace and name (the API server would draw a random one; dralab stays
    deterministic so that the node label and DaemonSet names repeat run to run)."""
    if cd.metadata.uid:
        return cd.metadata.uid
    key = f"{CD_API_VERSION}/ComputeDomain/{cd.namespace or 'default'}/{cd.name}"
    return str(uuid.uuid5(uuid.NAMESPACE_URL, key))
