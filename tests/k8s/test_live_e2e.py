"""Live end to end: ``dralab schedule --kubeconfig`` and ``dralab snapshot`` on the real control
plane, with a ServiceAccount token bound to ``examples/rbac/``'s read-only ClusterRole (the API
server runs with RBAC authorization).

1. A cluster (two nodes of different sizes, devices, templates) and its pods are created; the
   pods name a scheduler that does not run (``schedulerName: dralab-held``), so they stay
   pending, and dralab is given a KubeSchedulerConfiguration whose one profile has that name.
2. ``dralab schedule --kubeconfig K`` and ``dralab snapshot --kubeconfig K -o s.yaml`` +
   ``dralab schedule -f s.yaml`` must print the same List, byte for byte.
3. Nothing was written: every object dralab read in the scenario (nodes, slices, class,
   templates, generated claims, pods) keeps its resourceVersion, and the token cannot write.
4. The same pods are then created for the real kube-scheduler (default ``schedulerName``) in a
   second namespace on the same nodes and devices: where it puts them, which devices it
   allocates and the messages of pods it leaves pending must be dralab's answer.
"""

from __future__ import annotations

import contextlib
import copy
import json
import ssl
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from dralab.api.features import FeatureGates
from dralab.cli.main import cli

from .api import ApiError, Client
from .controlplane import ControlPlane
from .scenario import CLUSTER_SCOPED, Tracker, observe, run_on_server
from .scenarios import SCENARIOS

Obj = dict[str, Any]
HELD = "dralab-held"
HELD_CONFIG = {"apiVersion": "kubescheduler.config.k8s.io/v1",
               "kind": "KubeSchedulerConfiguration", "profiles": [{"schedulerName": HELD}]}


@pytest.fixture
def namespaces(kube: Client) -> Iterator[Callable[[], str]]:
    made: list[str] = []

    def make() -> str:
        name = f"t-{uuid.uuid4().hex[:10]}"
        kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
        made.append(name)
        return name

    yield make
    for name in made:
        with contextlib.suppress(ApiError):
            kube.delete("v1", "Namespace", name)


def _token_kubeconfig(path: Path, plane: ControlPlane, token: str) -> Path:
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": "tier", "cluster": {
            "server": plane.url, "certificate-authority": str(plane.workdir / "pki" / "ca.crt")}}],
        "users": [{"name": "dralab-readonly", "user": {"token": token}}],
        "contexts": [{"name": "tier", "context": {"cluster": "tier", "user": "dralab-readonly"}}],
        "current-context": "tier"}))
    return path


def _versions(kube: Client, namespace: str, cluster_scoped: set[tuple[str, str]]
              ) -> dict[str, str]:
    """resourceVersion of every object of the scenario: its cluster-scoped objects and every
    Pod, ResourceClaim and ResourceClaimTemplate of its namespace."""
    out: dict[str, str] = {}
    listings = [("v1", "Node", None), ("resource.k8s.io/v1", "DeviceClass", None),
                ("resource.k8s.io/v1", "ResourceSlice", None),
                ("v1", "Pod", namespace), ("resource.k8s.io/v1", "ResourceClaim", namespace),
                ("resource.k8s.io/v1", "ResourceClaimTemplate", namespace)]
    for api_version, kind, ns in listings:
        for item in kube.list(api_version, kind, ns):
            meta = item["metadata"]
            if ns is None and (kind, meta["name"]) not in cluster_scoped:
                continue
            out[f"{kind} {meta.get('namespace', '')}/{meta['name']}"] = meta["resourceVersion"]
    return out


def _invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def _in_name_order(objects: list[Obj]) -> list[Obj]:
    """The pods renamed so that their names sort in creation order.

    dralab takes pending pods of one priority in input order, and a cluster is read (and
    snapshotted) in namespace/name order: the order kube-scheduler's queue gets a backlog in
    when it starts, but not the order of pods that arrive while it runs (creation order, finer
    than creationTimestamp's seconds). Named so, the two orders are the same."""
    out = copy.deepcopy(objects)
    pods = [o for o in out if o["kind"] == "Pod"]
    for n, pod in enumerate(pods):
        pod["metadata"]["name"] = f"p{n}-{pod['metadata']['name']}"
    return out


def _held(objects: list[Obj]) -> list[Obj]:
    out = copy.deepcopy(objects)
    for obj in out:
        if obj["kind"] == "Pod":
            obj["spec"]["schedulerName"] = HELD
    return out


def test_live_schedule_and_snapshot_agree_with_each_other_and_with_kube_scheduler(
        kube: Client, control_plane: ControlPlane, readonly_token: str,
        dralab_gates: FeatureGates, namespaces: Callable[[], str], tmp_path: Path) -> None:
    held_ns, real_ns = namespaces(), namespaces()
    objects = _in_name_order(SCENARIOS["selector_picks_node"](held_ns))
    tracker = Tracker(kube)
    try:
        held = run_on_server(kube, tracker, held_ns, _held(objects), wait_for_scheduler=False)
        pending = [o for o in held.after if o["kind"] == "Pod"]
        assert pending and not any(p["spec"].get("nodeName") for p in pending)
        scoped = {(o["kind"], o["metadata"]["name"]) for o in held.stored
                  if o["kind"] in CLUSTER_SCOPED}
        before = _versions(kube, held_ns, scoped)

        kubeconfig = _token_kubeconfig(tmp_path / "readonly.kubeconfig", control_plane,
                                       readonly_token)
        config = tmp_path / "held-profile.yaml"
        config.write_text(yaml.safe_dump(HELD_CONFIG))
        snapshot = tmp_path / "snapshot.yaml"
        common = ["--config", str(config), "--feature-gates", str(dralab_gates), "-o", "json"]
        live = _invoke("schedule", "--kubeconfig", str(kubeconfig), *common)
        assert _invoke("snapshot", "--kubeconfig", str(kubeconfig), "-o", str(snapshot))[0] == 0
        offline = _invoke("schedule", "-f", str(snapshot), *common)
        assert live[0] in (0, 1), live[2]
        assert live == offline

        # Read-only: nothing the verbs read changed, and the token could not have written.
        assert _versions(kube, held_ns, scoped) == before
        with pytest.raises(ApiError) as refused:
            _create_with_token(control_plane, readonly_token, held_ns)
        assert refused.value.status == 403

        answer = [o for o in json.loads(live[1])["items"]
                  if o["metadata"].get("namespace") == held_ns]
        # The real scheduler on the same pods (its own namespace, the same nodes and devices;
        # the held pods' claims are not allocated, so they take nothing away).
        namespaced = [o for o in objects if o["kind"] not in CLUSTER_SCOPED]
        real = run_on_server(kube, tracker, real_ns, namespaced)
        theirs, mine = observe(real.after), observe(answer)
        print(f"\nlive end to end: {len(theirs.nodes)} pods, "
              f"{sum(1 for n in theirs.nodes.values() if n)} placed by kube-scheduler; "
              f"dralab --kubeconfig and -f snapshot agree byte for byte")
        assert list(mine.lines()) == list(theirs.lines())
        for pod, message in theirs.events.items():
            assert mine.messages[pod] == f"Unschedulable: {message}"
    finally:
        tracker.cleanup()


def _bearer_context(plane: ControlPlane) -> ssl.SSLContext:
    """TLS that trusts the test CA and presents no client certificate (the token is the
    identity)."""
    return ssl.create_default_context(cafile=str(plane.workdir / "pki" / "ca.crt"))


def _create_with_token(plane: ControlPlane, token: str, namespace: str) -> Mapping[str, Any]:
    """A ConfigMap create with the read-only token (expected: 403 Forbidden)."""
    body = json.dumps({"apiVersion": "v1", "kind": "ConfigMap",
                       "metadata": {"name": "written-by-dralab"}}).encode()
    req = urllib.request.Request(f"{plane.url}/api/v1/namespaces/{namespace}/configmaps",
                                 data=body, method="POST",
                                 headers={"Authorization": f"Bearer {token}",
                                          "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, context=_bearer_context(plane), timeout=60) as resp:
            return dict(json.loads(resp.read()))
    except urllib.error.HTTPError as err:
        raise ApiError(err.code, json.loads(err.read() or b"{}")) from None


SAMPLE_JOB = {
    "apiVersion": "batch/v1", "kind": "Job",
    "metadata": {"name": "sample", "namespace": "default",
                 "labels": {"kueue.x-k8s.io/queue-name": "user-queue"}},
    "spec": {"suspend": True, "template": {"spec": {
        "restartPolicy": "Never",
        "containers": [{"name": "main", "image": "busybox",
                        "resources": {"requests": {"cpu": "1", "memory": "200Mi"}}}]}}}}


def test_every_reading_verb_works_with_the_read_only_token_and_writes_nothing(
        kube: Client, control_plane: ControlPlane, readonly_token: str,
        namespaces: Callable[[], str], tmp_path: Path) -> None:
    """Issue 38: with a ServiceAccount token bound to examples/rbac's ClusterRole, every verb
    that reads objects reads the cluster (no 403, no other cluster error) and nothing the
    scenario holds changes its resourceVersion."""
    repo = Path(__file__).resolve().parents[2]
    held_ns = namespaces()
    objects = _in_name_order(SCENARIOS["selector_picks_node"](held_ns))
    tracker = Tracker(kube)
    try:
        held = run_on_server(kube, tracker, held_ns, _held(objects), wait_for_scheduler=False)
        scoped = {(o["kind"], o["metadata"]["name"]) for o in held.stored
                  if o["kind"] in CLUSTER_SCOPED}
        before = _versions(kube, held_ns, scoped)
        pod = next(o for o in held.after if o["kind"] == "Pod")
        pod_name = f"{held_ns}/{pod['metadata']['name']}"
        claim = pod["spec"]["resourceClaims"][0]["name"]
        k = ["--kubeconfig", str(_token_kubeconfig(tmp_path / "ro.kubeconfig", control_plane,
                                                   readonly_token))]
        queues = str(repo / "tests/data/kueue/admin-single-clusterqueue-setup.yaml")
        job = tmp_path / "job.yaml"
        job.write_text(yaml.safe_dump(SAMPLE_JOB))
        runs = {
            "schedule": ["schedule", *k, "-o", "table"],
            "explain pod": ["explain", "pod", pod_name, *k],
            "explain claim": ["explain", "claim", f"{pod_name}/{claim}", *k],
            "admit": ["admit", *k, "-f", queues, "-f", str(job)],
            "explain workload": ["explain", "workload", "default/sample", *k,
                                 "-f", queues, "-f", str(job)],
            "autoscale": ["autoscale", *k, "-f", str(repo / "tests/data/autoscale/fleet.yaml")],
            "import": ["import", *k],
            "migrate inventory": ["migrate", "inventory", *k],
            "migrate check": ["migrate", "check", *k],
            "migrate plan": ["migrate", "plan", *k],
            "migrate convert --verify": ["migrate", "convert", *k, "-f",
                                         str(repo / "examples/migrate/manifests"),
                                         "-o", str(tmp_path / "converted")],
            "snapshot": ["snapshot", *k, "-o", str(tmp_path / "snap.yaml")],
        }
        # The scenario's devices are the example driver's, not NVIDIA's: plan and convert's
        # verification read the cluster and then say, naming it, what their model lacks.
        domain_answers = {
            "migrate plan": "error: cluster tier: no GPU nodes in the dump",
            "migrate convert --verify": "error: cluster tier: no ResourceSlices of gpu.nvidia.com",
        }
        failed = {}
        for verb, args in runs.items():
            code, out, err = _invoke(*args)
            expected = domain_answers.get(verb)
            if expected is not None:
                ok = code == 2 and err.startswith(expected)
            else:
                # 0/1 are the verbs' answers; 2 would be a cluster or input problem.
                ok = code in (0, 1) and "forbidden" not in err.lower()
            if not ok:
                failed[verb] = (code, err.strip().splitlines()[-1:] if err else out[-200:])
        assert not failed, failed
        assert _versions(kube, held_ns, scoped) == before
    finally:
        tracker.cleanup()
