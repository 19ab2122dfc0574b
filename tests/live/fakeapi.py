"""A loopback fake of kube-apiserver's read API, for the live-cluster tests.

Answers as kube-apiserver 1.36.2 does to dralab's requests (GET, ``Accept:
application/json``: the legacy, unaggregated discovery):

- discovery (``/api``, ``/apis``, ``/api/v1``, ``/apis/G/V``) and the 401, 403 and 404
  bodies are the real server's, captured from the tier's binary
  (``data/kube-apiserver-v1.36.2.json``); CRD groups (Kueue, JobSet, LeaderWorkerSet,
  Kubeflow, KServe) are added to ``/apis`` when "installed" (``FakeCluster.crds``);
- lists (``NodeList`` ...) are paged by ``limit`` with the server's ``continue`` token
  shape and ``remainingItemCount``; items of built-in kinds carry no ``apiVersion`` and
  ``kind``, items of custom resources do; an expired token is etcd3's 410 ``Expired``
  Status (with the token to go on from, which dralab does not use: it lists again);
- 403 is the RBAC authorizer's Status (``details.group``, ``details.kind``), 404 the
  plain-text ``404 page not found``, every method but GET a 405 (and recorded).

Objects are made real-shaped from dralab's example manifests by ``as_served``: uid,
resourceVersion, creationTimestamp, managedFields, and the defaults the API server
writes (pod spec and status, namespace finalizers, node conditions, Job selectors).
One server per test module (``serve``); tests change its knobs and put them back.
"""

from __future__ import annotations

import base64
import copy
import json
import ssl
import threading
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import yaml

from dralab.live import KUEUE_GROUP, RESOURCES

ROOT = Path(__file__).parent.parent.parent
CREATED = "2026-12-01T10:00:00Z"
# Discovery documents and error bodies of a real kube-apiserver v1.36.2 (see its _about).
CAPTURED: dict[str, Any] = json.loads(
    (Path(__file__).parent / "data" / "kube-apiserver-v1.36.2.json").read_text())

# Groups served only when their CRDs are installed (FakeCluster.crds), with the resources
# dralab reads of them: (plural, kind, namespaced).
CRD_VERSIONS = {KUEUE_GROUP: "v1beta2", "jobset.x-k8s.io": "v1alpha2",
                "leaderworkerset.x-k8s.io": "v1", "kubeflow.org": "v1",
                "serving.kserve.io": "v1beta1"}
CRD_GROUPS = set(CRD_VERSIONS)
CRD_RESOURCES: dict[str, list[dict[str, Any]]] = {
    group: [{"name": r.plural, "singularName": r.kind.lower(),
             "namespaced": r.kind not in ("ResourceFlavor", "Cohort", "ClusterQueue",
                                          "WorkloadPriorityClass", "Topology"),
             "kind": r.kind, "verbs": ["delete", "deletecollection", "get", "list", "patch",
                                       "create", "update", "watch"]}
            for r in RESOURCES if r.group == group and version in r.versions]
    for group, version in CRD_VERSIONS.items()}
NAMESPACED = {(path.rpartition("/")[0].removeprefix("/apis/").removeprefix("/api"), r["kind"]):
              r["namespaced"] for path, doc in CAPTURED.items()
              if isinstance(doc, dict) and doc.get("kind") == "APIResourceList"
              for r in doc["resources"] if "/" not in r["name"]}
NAMESPACED.update({(g, r["kind"]): r["namespaced"] for g, rs in CRD_RESOURCES.items()
                   for r in rs})
NOT_FOUND = CAPTURED["404 /apis/kueue.x-k8s.io/v1beta2/clusterqueues?limit=1"]["text"]
# etcd3's message when a continue token's revision was compacted (apiserver's
# storage/etcd3/errors.go, inconsistentContinue), sent with a token to go on from.
CONTINUE_EXPIRED = (
    "The provided continue parameter is too old to display a consistent list result. You "
    "can start a new list without the continue parameter, or use the continue token in this "
    "response to retrieve the remainder of the results. Continuing with the provided token "
    "results in an inconsistent list - objects that were created, modified, or deleted "
    "between the time the first chunk was returned and now may show up in the list.")


def status(code: int, reason: str, message: str,
           details: dict[str, Any] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {},
                            "status": "Failure", "message": message, "reason": reason,
                            "code": code}
    if details is not None:
        body["details"] = details
    return body


def _group(api_version: str) -> str:
    return api_version.rpartition("/")[0]


def as_served(obj: dict[str, Any], rv: int) -> dict[str, Any]:
    """``obj`` as the API server stores it: server-set metadata and defaulted fields."""
    obj = copy.deepcopy(obj)
    meta = obj.setdefault("metadata", {})
    kind = obj["kind"]
    namespaced = NAMESPACED.get((_group(obj["apiVersion"]), kind), False)
    if namespaced:
        meta.setdefault("namespace", "default")
    if "name" not in meta:  # the API server completes a generateName
        meta["name"] = f"{meta['generateName']}x7k2p"
    name = f"{meta.get('namespace', '')}/{kind}/{meta['name']}"
    meta["uid"] = str(uuid.uuid5(uuid.NAMESPACE_URL, name))
    meta["resourceVersion"] = str(rv)
    meta["creationTimestamp"] = CREATED
    meta["managedFields"] = [{
        "manager": "kubectl-client-side-apply", "operation": "Update",
        "apiVersion": obj["apiVersion"], "time": CREATED, "fieldsType": "FieldsV1",
        "fieldsV1": {"f:metadata": {"f:annotations": {".": {}}}}}]
    if kind == "Namespace":
        meta.setdefault("labels", {})["kubernetes.io/metadata.name"] = meta["name"]
        obj["spec"] = {"finalizers": ["kubernetes"]}
        obj["status"] = {"phase": "Active"}
    elif kind == "Node":
        obj.setdefault("spec", {})
        obj["status"].update({
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                            "message": "kubelet is posting ready status",
                            "lastHeartbeatTime": CREATED, "lastTransitionTime": CREATED}],
            "addresses": [{"type": "Hostname", "address": meta["name"]}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {"architecture": "amd64", "kubeletVersion": "v1.36.2",
                         "operatingSystem": "linux", "machineID": "", "systemUUID": "",
                         "bootID": "", "kernelVersion": "", "osImage": "",
                         "containerRuntimeVersion": "", "kubeProxyVersion": ""}})
    elif kind == "Pod":
        _default_pod_spec(obj["spec"])
        obj.setdefault("status", {"phase": "Pending", "qosClass": "Burstable"})
    elif kind == "Job":
        meta["generation"] = 1
        uid = meta["uid"]
        labels = {"batch.kubernetes.io/controller-uid": uid,
                  "batch.kubernetes.io/job-name": meta["name"],
                  "controller-uid": uid, "job-name": meta["name"]}
        spec = obj["spec"]
        spec.setdefault("completions", spec.get("parallelism", 1))
        spec.setdefault("backoffLimit", 6)
        spec.setdefault("completionMode", "NonIndexed")
        # Kueue's webhook suspends a Job sent to a queue until it is admitted
        queued = "kueue.x-k8s.io/queue-name" in meta.get("labels", {})
        spec.setdefault("suspend", queued)
        spec.setdefault("podReplacementPolicy", "TerminatingOrFailed")
        spec["selector"] = {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
        template = spec["template"]
        template.setdefault("metadata", {}).setdefault("labels", {}).update(labels)
        _default_pod_spec(template["spec"])
        obj.setdefault("status", {})
    elif kind in ("ResourceClaim", "DeviceClass", "ResourceSlice",
                  "ResourceClaimTemplate"):
        meta["generation"] = 1
        if kind == "ResourceClaim":
            obj.setdefault("status", {})
    return obj


def _default_pod_spec(spec: dict[str, Any]) -> None:
    for container in spec.get("containers", []):
        container.setdefault("imagePullPolicy", "IfNotPresent")
        container.setdefault("terminationMessagePath", "/dev/termination-log")
        container.setdefault("terminationMessagePolicy", "File")
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("securityContext", {})
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("enableServiceLinks", True)
    spec.setdefault("preemptionPolicy", "PreemptLowerPriority")
    spec.setdefault("priority", 0)
    spec.setdefault("tolerations", [
        {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
         "tolerationSeconds": 300},
        {"key": "node.kubernetes.io/unreachable", "operator": "Exists",
         "effect": "NoExecute", "tolerationSeconds": 300}])


def load_objects(paths: Iterable[Path]) -> list[dict[str, Any]]:
    out = []
    for path in paths:
        out += [d for d in yaml.safe_load_all(path.read_text()) if d]
    return out


@dataclass
class FakeCluster:
    """The objects and the knobs of one fake API server."""

    objects: list[dict[str, Any]]
    tokens: dict[str, set[str]] = field(default_factory=lambda: {"good": set()})
    crds: set[str] = field(default_factory=lambda: {KUEUE_GROUP})  # groups installed
    page_size: int = 2
    expire_once: set[str] = field(default_factory=set)  # plurals: first continue is 410
    requests: list[tuple[str, str]] = field(default_factory=list)  # (method, path)

    def answer(self, path: str, query: dict[str, list[str]], token: str | None
               ) -> tuple[int, dict[str, Any] | str]:
        """(HTTP code, JSON body or plain text) for a GET of ``path``."""
        if token not in self.tokens:
            return 401, CAPTURED["401 /api/v1/pods?limit=1"]
        if path == "/apis":
            groups = copy.deepcopy(CAPTURED["/apis"])
            groups["groups"] += [
                {"name": g, "versions": [{"groupVersion": f"{g}/{v}", "version": v}],
                 "preferredVersion": {"groupVersion": f"{g}/{v}", "version": v}}
                for g, v in CRD_VERSIONS.items() if g in self.crds]
            return 200, groups
        if path in CAPTURED:
            return 200, CAPTURED[path]
        parts = path.strip("/").split("/")
        if parts[0] == "api" and len(parts) == 3:
            group, version, plural = "", parts[1], parts[2]
        elif parts[0] == "apis" and len(parts) in (3, 4):
            group, version = parts[1], parts[2]
            plural = parts[3] if len(parts) == 4 else ""
        else:
            return 404, NOT_FOUND
        if group in self.crds and version == CRD_VERSIONS[group]:
            resources = CRD_RESOURCES[group]
            if not plural:
                return 200, {"kind": "APIResourceList", "apiVersion": "v1",
                             "groupVersion": f"{group}/{version}", "resources": resources}
        else:
            gv = f"/apis/{group}/{version}" if group else f"/api/{version}"
            resources = CAPTURED.get(gv, {}).get("resources", [])
        kinds = [r["kind"] for r in resources if r["name"] == plural]
        if not kinds:
            return 404, NOT_FOUND
        if plural in self.tokens[token]:
            # the RBAC authorizer's words, as in the captured 403
            what = f"{plural}.{group}" if group else plural
            user = f"system:serviceaccount:default:{token}"
            return 403, status(
                403, "Forbidden", f'{what} is forbidden: User "{user}" cannot list resource '
                f'"{plural}" in API group "{group}" at the cluster scope',
                {"group": group, "kind": plural})
        return self._list(group, version, plural, kinds[0], query)

    def _list(self, group: str, version: str, plural: str, kind: str,
              query: dict[str, list[str]]) -> tuple[int, dict[str, Any]]:
        items = [o for o in self.objects
                 if _group(o["apiVersion"]) == group and o["kind"] == kind]
        gv = f"{group}/{version}" if group else version
        custom = group in CRD_GROUPS
        token = query.get("continue", [""])[0]
        start = 0
        if token:
            if plural in self.expire_once:
                self.expire_once.discard(plural)
                gone = status(410, "Expired", CONTINUE_EXPIRED)
                gone["metadata"] = {"continue": _token(-1, int(_untoken(token)["start"]))}
                return 410, gone
            start = int(_untoken(token)["start"])
        limit = int(query.get("limit", ["0"])[0] or 0)
        size = min(limit, self.page_size) if limit else len(items)
        page = items[start:start + size]
        meta: dict[str, Any] = {"resourceVersion": "1000"}
        if start + size < len(items):
            meta["continue"] = _token(1000, start + size)
            meta["remainingItemCount"] = len(items) - start - size
        out = []
        for obj in page:
            item = dict(obj)
            if custom:
                item["apiVersion"] = gv
            else:
                item.pop("apiVersion", None)
                item.pop("kind", None)
            out.append(item)
        return 200, {"kind": f"{kind}List", "apiVersion": gv, "metadata": meta,
                     "items": out}


def _token(rv: int, start: int) -> str:
    # kube-apiserver's shape: unpadded URL-safe base64 of {"v", "rv", "start"}; its
    # "start" is the next storage key, here the next index
    data = json.dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": str(start)},
                      separators=(",", ":"))
    return base64.urlsafe_b64encode(data.encode()).decode().rstrip("=")


def _untoken(token: str) -> dict[str, Any]:
    decoded: dict[str, Any] = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
    return decoded


def _handler(fake: FakeCluster) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _send(self, code: int, body: dict[str, Any] | str) -> None:
            text = isinstance(body, str)  # kube-apiserver's plain "404 page not found"
            data = body.encode() if text else json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "text/plain; charset=utf-8" if text
                             else "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            url = urlparse(self.path)
            fake.requests.append(("GET", url.path))
            auth = self.headers.get("Authorization") or ""
            token = auth.removeprefix("Bearer ") if auth.startswith("Bearer ") else None
            self._send(*fake.answer(url.path, parse_qs(url.query), token))

        def _refuse(self) -> None:
            fake.requests.append((self.command, urlparse(self.path).path))
            self._send(405, status(405, "MethodNotAllowed", "read-only fake API server"))

        do_POST = do_PUT = do_PATCH = do_DELETE = _refuse

        def log_message(self, *args: Any) -> None:
            pass

    return Handler


@contextmanager
def serve(fake: FakeCluster, tls: tuple[Path, Path] | None = None) -> Iterator[str]:
    """The fake on 127.0.0.1 (a free port) for the block: its base URL. ``tls``: the
    serving certificate and key files, for https."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(fake))
    if tls is not None:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(str(tls[0]), str(tls[1]))
        server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        scheme = "https" if tls is not None else "http"
        yield f"{scheme}://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def kubeconfig(path: Path, server: str, current: str = "fake") -> Path:
    """A kubeconfig with contexts ``fake`` (token good), ``fake-ml`` (namespace ml),
    ``expired`` (token nobody knows), ``limited`` (token limited) and ``nowhere``
    (nothing listens at its server)."""
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": current,
        "clusters": [{"name": "fake", "cluster": {"server": server}},
                     {"name": "nowhere", "cluster": {"server": "http://127.0.0.1:9"}}],
        "users": [{"name": "good", "user": {"token": "good"}},
                  {"name": "expired", "user": {"token": "expired"}},
                  {"name": "limited", "user": {"token": "limited"}}],
        "contexts": [
            {"name": "fake", "context": {"cluster": "fake", "user": "good"}},
            {"name": "fake-ml", "context": {"cluster": "fake", "user": "good",
                                            "namespace": "ml"}},
            {"name": "expired", "context": {"cluster": "fake", "user": "expired"}},
            {"name": "limited", "context": {"cluster": "fake", "user": "limited"}},
            {"name": "nowhere", "context": {"cluster": "nowhere", "user": "good"}}]}))
    return path


def example_cluster() -> list[dict[str, Any]]:
    """A GPU cluster from dralab's examples, as the API server would hold it: two GPU
    nodes (H100, L4) with their slices and classes, a named claim, a claim template, a
    Job and a pod still to schedule, Kueue's single-ClusterQueue setup with a queued Job."""
    examples = ROOT / "examples"
    raw = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}}
           for n in ("default", "ml")]
    raw += [n for n in load_objects([examples / "fleet" / "nodes.yaml"])
            if n["metadata"]["name"] != "a100-mig-node-01"]
    raw += load_objects([examples / "fleet" / "deviceclasses.yaml",
                         examples / "fleet" / "h100-8gpu-node.resourceslice.yaml",
                         examples / "fleet" / "l4-4gpu-node.resourceslice.yaml",
                         examples / "claims" / "two-h100.yaml",
                         examples / "scheduling" / "dra-workloads.yaml",
                         ROOT / "tests" / "data" / "kueue" /
                         "admin-single-clusterqueue-setup.yaml",
                         ROOT / "tests" / "data" / "kueue" / "jobs-sample-job.yaml"])
    return [as_served(obj, 100 + i) for i, obj in enumerate(raw)]


def migrate_cluster() -> list[dict[str, Any]]:
    """The migrate walkthrough's cluster (examples/migrate/cluster-dump.yaml: device
    plugin everywhere, DRA on the l4 pool, workloads of apps, batch, Kubeflow,
    LeaderWorkerSet and KServe), as the API server would hold it."""
    dump = yaml.safe_load((ROOT / "examples" / "migrate" / "cluster-dump.yaml").read_text())
    return [as_served(obj, 500 + i) for i, obj in enumerate(dump["items"])]
