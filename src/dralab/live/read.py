"""Discovery and paginated lists: every kind dralab models, in a version the server serves.

The kinds: core (Namespace, Node, Pod, Service, PersistentVolumeClaim, PersistentVolume),
storage.k8s.io (StorageClass, CSINode, CSIDriver, VolumeAttachment), scheduling.k8s.io,
resource.k8s.io, apps, batch, Kueue's CRDs and the operator workloads ``dralab migrate``
converts (JobSet, LeaderWorkerSet, Kubeflow training jobs, KServe InferenceService); a
group the server does not serve (CRDs not installed) is skipped, unless a verb requires it.

Each kind is listed cluster-wide (all namespaces: claims and pods of every namespace
hold devices and node capacity) in the first version of its preference list that the
server serves. Items of a list carry no ``kind``/``apiVersion`` (the List has them);
they are added, as ``kubectl get -o yaml`` does, so each object stands on its own.
Everything else is kept as the server sent it (server-set fields too), with keys in
sorted order and objects by namespace and name, as ``kubectl get -o yaml`` prints them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dralab.api.io import Document

from .client import ApiStatus, ReadOnlyClient
from .config import ClusterConfig
from .errors import ClusterError

KUEUE_GROUP = "kueue.x-k8s.io"
# Objects per page (kubectl's default chunk size is 500).
LIST_PAGE_SIZE = 500
# Objects in one read, all kinds together: dralab's own pod bound (MAX_CREATED_PODS,
# 100,000) plus room for nodes, slices and claims of a large cluster.
MAX_CLUSTER_OBJECTS = 500_000
MAX_PAGES_PER_LIST = MAX_CLUSTER_OBJECTS // LIST_PAGE_SIZE + 1


@dataclass(frozen=True, slots=True)
class Resource:
    """A listable kind: its group, preferred versions (best first), plural and kind."""

    group: str
    versions: tuple[str, ...]
    plural: str
    kind: str


_DRA = ("v1", "v1beta2", "v1beta1")
_SCHED_WORKLOADS = ("v1", "v1beta1", "v1alpha3", "v1alpha2")
_KUEUE = ("v1beta2", "v1beta1")

# Every kind dralab models and reads from a cluster.
RESOURCES: tuple[Resource, ...] = (
    Resource("", ("v1",), "namespaces", "Namespace"),
    Resource("", ("v1",), "nodes", "Node"),
    Resource("", ("v1",), "pods", "Pod"),
    # PodTopologySpread's default constraints read the selectors of the pod's Services.
    Resource("", ("v1",), "services", "Service"),
    # The volume plugins read claims, volumes, classes and CSINodes' attach limits.
    Resource("", ("v1",), "persistentvolumeclaims", "PersistentVolumeClaim"),
    Resource("", ("v1",), "persistentvolumes", "PersistentVolume"),
    Resource("storage.k8s.io", ("v1",), "storageclasses", "StorageClass"),
    Resource("storage.k8s.io", ("v1",), "csinodes", "CSINode"),
    # NodeVolumeLimits counts attachments against a node's limit.
    Resource("storage.k8s.io", ("v1",), "volumeattachments", "VolumeAttachment"),
    # ... and, with VolumeLimitScaling, whether a driver must be installed on the node.
    Resource("storage.k8s.io", ("v1",), "csidrivers", "CSIDriver"),
    Resource("scheduling.k8s.io", ("v1",), "priorityclasses", "PriorityClass"),
    Resource("scheduling.k8s.io", _SCHED_WORKLOADS, "workloads", "Workload"),
    Resource("scheduling.k8s.io", _SCHED_WORKLOADS, "podgroups", "PodGroup"),
    Resource("resource.k8s.io", _DRA, "deviceclasses", "DeviceClass"),
    Resource("resource.k8s.io", _DRA, "resourceslices", "ResourceSlice"),
    Resource("resource.k8s.io", _DRA, "resourceclaims", "ResourceClaim"),
    Resource("resource.k8s.io", _DRA, "resourceclaimtemplates", "ResourceClaimTemplate"),
    Resource("resource.k8s.io", (*_DRA, "v1alpha3"), "devicetaintrules", "DeviceTaintRule"),
    Resource("apps", ("v1",), "deployments", "Deployment"),
    Resource("apps", ("v1",), "replicasets", "ReplicaSet"),
    Resource("apps", ("v1",), "statefulsets", "StatefulSet"),
    Resource("apps", ("v1",), "daemonsets", "DaemonSet"),
    Resource("batch", ("v1",), "jobs", "Job"),
    Resource("batch", ("v1",), "cronjobs", "CronJob"),
    Resource(KUEUE_GROUP, _KUEUE, "resourceflavors", "ResourceFlavor"),
    Resource(KUEUE_GROUP, _KUEUE, "cohorts", "Cohort"),
    Resource(KUEUE_GROUP, _KUEUE, "clusterqueues", "ClusterQueue"),
    Resource(KUEUE_GROUP, _KUEUE, "localqueues", "LocalQueue"),
    Resource(KUEUE_GROUP, _KUEUE, "workloadpriorityclasses", "WorkloadPriorityClass"),
    Resource(KUEUE_GROUP, _KUEUE, "topologies", "Topology"),
    Resource(KUEUE_GROUP, _KUEUE, "workloads", "Workload"),
    # Workloads of other operators that `dralab migrate` converts (read when installed).
    Resource("jobset.x-k8s.io", ("v1alpha2",), "jobsets", "JobSet"),
    Resource("leaderworkerset.x-k8s.io", ("v1",), "leaderworkersets", "LeaderWorkerSet"),
    Resource("kubeflow.org", ("v1",), "pytorchjobs", "PyTorchJob"),
    Resource("kubeflow.org", ("v1",), "tfjobs", "TFJob"),
    Resource("kubeflow.org", ("v2beta1", "v1"), "mpijobs", "MPIJob"),
    Resource("kubeflow.org", ("v1",), "xgboostjobs", "XGBoostJob"),
    Resource("kubeflow.org", ("v1",), "paddlejobs", "PaddleJob"),
    Resource("kubeflow.org", ("v1",), "jaxjobs", "JAXJob"),
    Resource("serving.kserve.io", ("v1beta1",), "inferenceservices", "InferenceService"),
)


@dataclass(slots=True)
class ClusterRead:
    """What one read returned: the objects as documents, and which versions were used."""

    server: str
    context: str
    documents: list[Document] = field(default_factory=list)
    versions: dict[str, str] = field(default_factory=dict)  # "group/plural" -> version
    groups: set[str] = field(default_factory=set)            # API groups served


def _path(group: str, version: str) -> str:
    return f"/api/{version}" if group == "" else f"/apis/{group}/{version}"


def _served_groups(client: ReadOnlyClient) -> dict[str, set[str]]:
    """group -> versions served (``""`` is the core group), from /api and /apis."""
    served: dict[str, set[str]] = {}
    core = _discovery(client, "/api")
    served[""] = {v for v in core.get("versions") or [] if isinstance(v, str)}
    for group in _discovery(client, "/apis").get("groups") or []:
        if not isinstance(group, dict) or not isinstance(group.get("name"), str):
            continue
        versions = {v.get("version") for v in group.get("versions") or []
                    if isinstance(v, dict) and isinstance(v.get("version"), str)}
        served[group["name"]] = {v for v in versions if v}
    return served


def _discovery(client: ReadOnlyClient, path: str) -> dict[str, Any]:
    try:
        return client.get(path)
    except ApiStatus as exc:
        raise ClusterError(f"GET {exc.url}: HTTP {exc.code} during discovery "
                           "(is this a Kubernetes API server?)") from None


def _resources_of(client: ReadOnlyClient, group: str, version: str,
                  cache: dict[str, set[str]]) -> set[str]:
    key = _path(group, version)
    if key not in cache:
        try:
            data = client.get(key)
        except ApiStatus:  # listed in /apis but gone since (a CRD being removed)
            data = {}
        cache[key] = {str(r["name"]) for r in data.get("resources") or []
                      if isinstance(r, dict) and isinstance(r.get("name"), str)
                      and "list" in (r.get("verbs") or [])}
    return cache[key]


def _pages(client: ReadOnlyClient, path: str, what: str) -> list[dict[str, Any]]:
    """The pages of one list; a 410 (continue token expired) restarts it once, dropping
    the pages read before (they belong to the expired snapshot)."""
    for attempt in (1, 2):
        token = ""
        pages: list[dict[str, Any]] = []
        try:
            while True:
                params = {"limit": str(LIST_PAGE_SIZE)}
                if token:
                    params["continue"] = token
                page = client.get(path, params)
                pages.append(page)
                meta = page.get("metadata") if isinstance(page.get("metadata"), dict) else {}
                assert isinstance(meta, dict)
                token = str(meta.get("continue") or "")
                if not token:
                    return pages
                if len(pages) >= MAX_PAGES_PER_LIST:
                    raise ClusterError(f"listing {what}: more than {MAX_PAGES_PER_LIST} pages "
                                       f"of {LIST_PAGE_SIZE} (MAX_CLUSTER_OBJECTS)")
        except ApiStatus as exc:
            if exc.code == 410 and attempt == 1:
                continue  # the list changed too much while paging: start again, once
            if exc.code == 410:
                raise ClusterError(
                    f"listing {what}: the list's continue token expired twice (410 Gone: "
                    f"{exc.message or exc.reason}); the cluster changes too fast to read "
                    "consistently, try again") from None
            raise ClusterError(f"listing {what}: HTTP {exc.code} {exc.reason or ''} at "
                               f"{exc.url}{': ' + exc.message if exc.message else ''}") from None
    raise AssertionError("unreachable: the second attempt returns or raises")


def read_cluster(config: ClusterConfig, client: ReadOnlyClient | None = None,
                 require_groups: tuple[str, ...] = ()) -> ClusterRead:
    """Every object of every modelled kind the server serves, as ``Document``s.

    ``require_groups``: API groups the caller cannot work without (``admit`` needs
    Kueue's); missing ones are a ``ClusterError`` naming the group.
    """
    own = client is None
    http = client if client is not None else ReadOnlyClient(config)
    try:
        return _read(config, http, require_groups)
    finally:
        if own:
            http.close()


def _read(config: ClusterConfig, client: ReadOnlyClient,
          require_groups: tuple[str, ...]) -> ClusterRead:
    served = _served_groups(client)
    for group in require_groups:
        if group not in served:
            hint = " (Kueue's CRDs are not installed)" if group == KUEUE_GROUP else ""
            raise ClusterError(f"the cluster at {config.server} does not serve API group "
                               f"{group!r}{hint}")
    result = ClusterRead(config.server, config.context, groups=set(served))
    cache: dict[str, set[str]] = {}
    source = f"cluster {config.context}"
    count = 0
    for res in RESOURCES:
        versions = served.get(res.group, set())
        version = next((v for v in res.versions if v in versions
                        and res.plural in _resources_of(client, res.group, v, cache)), None)
        if version is None:
            continue
        api_version = f"{res.group}/{version}" if res.group else version
        result.versions[f"{res.group or 'core'}/{res.plural}"] = version
        what = f'resource "{res.plural}" ({api_version})'
        objects: list[dict[str, Any]] = []
        for page in _pages(client, f"{_path(res.group, version)}/{res.plural}", what):
            items = page.get("items") or []
            if not isinstance(items, list):
                raise ClusterError(f"listing {what}: items is not a list")
            count += len(items)
            if count > MAX_CLUSTER_OBJECTS:
                raise ClusterError(f"the cluster holds more than {MAX_CLUSTER_OBJECTS} objects "
                                   "of the kinds dralab reads (MAX_CLUSTER_OBJECTS)")
            for item in items:
                if not isinstance(item, dict):
                    continue
                obj = {"apiVersion": api_version, "kind": res.kind, **item}
                obj["apiVersion"], obj["kind"] = api_version, res.kind
                objects.append(obj)
        # kube-apiserver lists in storage-key order (namespace/name); sorted here as well
        # so that a read, and the snapshot written from it, do not depend on the server.
        objects.sort(key=_object_order)
        first = len(result.documents) + 1
        result.documents.extend(Document(source, first + n, _sorted_keys(obj))
                                for n, obj in enumerate(objects))
    return result


def _sorted_keys(value: Any) -> Any:
    """``value`` with every mapping's keys in sorted order, as `kubectl get -o yaml` (and
    ``dralab snapshot``) write them: outputs that keep the input's key order (``-o
    json``) then read the same from a cluster as from a dump of it."""
    if isinstance(value, dict):
        return {key: _sorted_keys(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [_sorted_keys(item) for item in value]
    return value


def _object_order(obj: dict[str, Any]) -> tuple[str, str]:
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    assert isinstance(meta, dict)
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")
