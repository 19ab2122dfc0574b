"""Which (apiVersion, kind) pairs a Kubernetes 1.37 API server serves, and what replaced the rest.

dralab models one *hub* version per kind (``resource.k8s.io/v1``, ``apps/v1``,
...). Older versions that 1.37 still serves are converted to the hub (see
``_convert``); versions that were removed, or never existed, are refused with
kubectl's wording (``no matches for kind "K" in version "G/V"``) and a hint
naming the replacement. Kinds dralab does not model are left alone.

Sources: the ``+k8s:prerelease-lifecycle-gen`` tags and ``register.go`` files of
k8s.io/api at the 1.37 development branch (which versions still carry which
kinds), and the Kubernetes deprecated-API migration guide (removal releases of
the older workload and scheduling versions). Note that beta versions of new
APIs are disabled by default since 1.24: a real 1.37 cluster serves
resource.k8s.io/v1beta1 and v1beta2 only with ``--runtime-config``; dralab
accepts them because public manifests and charts still use them.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

__all__ = [
    "CONVERTIBLE",
    "HUB_OF",
    "RESOURCE_GROUP",
    "SCHEDULING_GROUP",
    "Resolution",
    "Served",
    "group_of",
    "missing_api_version",
    "resolve",
]

RESOURCE_GROUP: Final = "resource.k8s.io"
SCHEDULING_GROUP: Final = "scheduling.k8s.io"
_SCHED_V1BETA1: Final = "scheduling.k8s.io/v1beta1"
_SCHED_V1ALPHA3: Final = "scheduling.k8s.io/v1alpha3"
_SCHED_V1ALPHA2: Final = "scheduling.k8s.io/v1alpha2"
_V1: Final = "resource.k8s.io/v1"
_V1BETA2: Final = "resource.k8s.io/v1beta2"
_V1BETA1: Final = "resource.k8s.io/v1beta1"
_V1ALPHA3: Final = "resource.k8s.io/v1alpha3"

# Older resource.k8s.io versions 1.37 still serves, per kind (newest first).
# v1beta1 never carried DeviceTaintRule; v1alpha3 carries nothing else any more.
CONVERTIBLE: Final[Mapping[str, tuple[str, ...]]] = {
    "DeviceClass": (_V1BETA2, _V1BETA1),
    "ResourceClaim": (_V1BETA2, _V1BETA1),
    "ResourceClaimTemplate": (_V1BETA2, _V1BETA1),
    "ResourceSlice": (_V1BETA2, _V1BETA1),
    "DeviceTaintRule": (_V1BETA2, _V1ALPHA3),
    # The workload-aware scheduling API (gate GenericWorkload): v1beta1 is the hub,
    # v1alpha3 is 1.37's alpha (CompositePodGroup on top). v1alpha2 is 1.36's version:
    # 1.37 no longer serves it (kubernetes#140184: remove v1alpha2 objects before
    # upgrading), but the drivers' PodGroup demos are written in it and its fields
    # are the v1beta1 ones, so it is read as v1beta1 like the beta versions above.
    "Workload": (_SCHED_V1ALPHA3, _SCHED_V1ALPHA2),
    "PodGroup": (_SCHED_V1ALPHA3, _SCHED_V1ALPHA2),
}

# The version an older served version converts to, per kind (resource.k8s.io/v1 otherwise).
HUB_OF: Final[Mapping[str, str]] = {"Workload": _SCHED_V1BETA1, "PodGroup": _SCHED_V1BETA1}

# Every version of these groups that 1.37 serves; any other version is unknown there.
_SERVED_VERSIONS: Final[Mapping[str, frozenset[str]]] = {
    "": frozenset({"v1"}),
    "apps": frozenset({"v1"}),
    "batch": frozenset({"v1"}),
    RESOURCE_GROUP: frozenset({"v1", "v1beta2", "v1beta1", "v1alpha3"}),
    SCHEDULING_GROUP: frozenset({"v1", "v1beta1", "v1alpha3", "v1alpha2"}),
}


@dataclass(frozen=True, slots=True)
class _Removal:
    removed_in: str
    replacement: str = ""  # "" = the kind's hub version; otherwise the advice itself


# (apiVersion, kind) -> removal; kind "*" stands for every kind of that group version.
_REMOVED_VERSIONS: Final[Mapping[tuple[str, str], _Removal]] = {
    ("resource.k8s.io/v1alpha1", "*"): _Removal("1.27"),
    ("resource.k8s.io/v1alpha2", "*"): _Removal("1.31"),
    (_V1ALPHA3, "DeviceClass"): _Removal("1.34"),
    (_V1ALPHA3, "ResourceClaim"): _Removal("1.34"),
    (_V1ALPHA3, "ResourceClaimTemplate"): _Removal("1.34"),
    (_V1ALPHA3, "ResourceSlice"): _Removal("1.34"),
    ("apps/v1beta1", "*"): _Removal("1.16"),
    ("apps/v1beta2", "*"): _Removal("1.16"),
    ("extensions/v1beta1", "Deployment"): _Removal("1.16"),
    ("extensions/v1beta1", "DaemonSet"): _Removal("1.16"),
    ("extensions/v1beta1", "ReplicaSet"): _Removal("1.16"),
    ("extensions/v1beta1", "*"): _Removal("1.22"),
    ("batch/v1beta1", "*"): _Removal("1.25"),
    ("batch/v2alpha1", "*"): _Removal("1.21"),
    ("scheduling.k8s.io/v1alpha1", "PriorityClass"): _Removal("1.17"),
    ("scheduling.k8s.io/v1beta1", "PriorityClass"): _Removal("1.22"),
    # 1.35's Workload (pod groups inline); 1.36 replaced it with v1alpha2.
    ("scheduling.k8s.io/v1alpha1", "Workload"): _Removal("1.36"),
}

# Kinds of classic DRA (and its scheduling handshake) that no version serves any more.
_REMOVED_KINDS: Final[Mapping[tuple[str, str], _Removal]] = {
    (RESOURCE_GROUP, "ResourceClass"): _Removal(
        "1.31", "use a DeviceClass (resource.k8s.io/v1) that selects the driver's devices "
                "with a CEL selector"),
    (RESOURCE_GROUP, "ResourceClassParameters"): _Removal(
        "1.31", "use the config of a DeviceClass (resource.k8s.io/v1)"),
    (RESOURCE_GROUP, "ResourceClaimParameters"): _Removal(
        "1.31", "put selectors and opaque config in the ResourceClaim (resource.k8s.io/v1)"),
    (RESOURCE_GROUP, "PodScheduling"): _Removal(
        "1.27", "the scheduler allocates claims itself since structured parameters"),
    (RESOURCE_GROUP, "PodSchedulingContext"): _Removal(
        "1.32", "the scheduler allocates claims itself since structured parameters"),
}


class Served(enum.Enum):
    HUB = "hub"                # the version dralab models
    CONVERT = "convert"        # an older version 1.37 serves: converted to the hub
    NOT_SERVED = "not-served"  # removed, or never existed: an input error
    UNMODELLED = "unmodelled"  # a kind dralab does not model: passed through unchecked


@dataclass(frozen=True, slots=True)
class Resolution:
    """What to do with one (apiVersion, kind); ``hub`` is set for HUB and CONVERT."""

    served: Served
    hub: str = ""
    message: str = ""


def group_of(api_version: str) -> str:
    return api_version.rpartition("/")[0]


def _no_matches(kind: str, api_version: str, hint: str) -> str:
    # kubectl's RESTMapper wording, then what to use instead.
    return f'no matches for kind "{kind}" in version "{api_version}"; {hint}'


def _served_as(kind: str, hub: str) -> str:
    versions = (hub, *CONVERTIBLE.get(kind, ()))
    listed = versions[0] if len(versions) == 1 else \
        ", ".join(versions[:-1]) + " and " + versions[-1]
    return f"{kind} is served as {listed}"


def _removed_hint(kind: str, api_version: str, hub: str | None) -> str | None:
    group = group_of(api_version)
    by_kind = _REMOVED_KINDS.get((group, kind))
    if by_kind is not None:
        return f"{kind} was removed in Kubernetes {by_kind.removed_in}; {by_kind.replacement}"
    removal = _REMOVED_VERSIONS.get((api_version, kind)) or \
        _REMOVED_VERSIONS.get((api_version, "*"))
    if removal is None:
        return None
    what = f"{api_version} {kind}" if (api_version, kind) in _REMOVED_VERSIONS else api_version
    text = f"{what} was removed in Kubernetes {removal.removed_in}"
    if hub is not None:
        return f"{text}, use {hub}"
    return text


def resolve(api_version: str, kind: str, hubs: Mapping[str, str]) -> Resolution:
    """How Kubernetes 1.37 treats ``kind`` in ``api_version``; ``hubs`` maps kind -> hub version.

    Pure. Groups dralab models (and ``extensions``) are known exactly: an unknown
    or removed version there is NOT_SERVED. Kinds of other groups, and kinds
    dralab does not model in served versions, are UNMODELLED.
    """
    hub = hubs.get(kind)
    if hub is not None and hub == api_version:
        return Resolution(Served.HUB, hub)
    if hub is not None and api_version in CONVERTIBLE.get(kind, ()):
        return Resolution(Served.CONVERT, hub)
    removed = _removed_hint(kind, api_version, hub)
    if removed is not None:
        return Resolution(Served.NOT_SERVED, message=_no_matches(kind, api_version, removed))
    group, _, version = api_version.rpartition("/")
    known_groups = {group_of(h) for h in hubs.values()}
    if hub is not None and group in known_groups:
        return Resolution(Served.NOT_SERVED,
                          message=_no_matches(kind, api_version, _served_as(kind, hub)))
    served = _SERVED_VERSIONS.get(group)
    if served is not None and version not in served:
        listed = ", ".join(f"{group}/{v}" if group else v for v in sorted(served))
        return Resolution(Served.NOT_SERVED, message=_no_matches(
            kind, api_version, f"Kubernetes 1.37 serves {listed}"))
    return Resolution(Served.UNMODELLED)


def missing_api_version(kind: object, hubs: Mapping[str, str]) -> str:
    """The one-line message for a document without apiVersion (kubectl: 'apiVersion not set')."""
    hub = hubs.get(kind) if isinstance(kind, str) else None
    if hub is None:
        return "has no apiVersion"
    return f"has no apiVersion (a {kind} needs apiVersion: {hub})"
