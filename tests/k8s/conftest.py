"""The conformance tier: dralab against real Kubernetes v1.36.2 control-plane binaries.

Runs when the binaries are in ``KUBEBUILDER_ASSETS`` (default ``/usr/local/kubebuilder/bin``:
``etcd``, ``kube-apiserver``, ``kube-scheduler``, ``kube-controller-manager``); otherwise every
test marked ``k8s`` is skipped with the reason. Select or deselect the tier with ``-m k8s`` /
``-m "not k8s"``.

Fixtures for tier tests (reuse them; see ``controlplane.py`` and ``api.py``):

``control_plane``  the session's ControlPlane, its binaries' default feature gates, the beta
                   versions of resource.k8s.io switched on (``RUNTIME_CONFIG``) so that
                   v1beta1 and v1beta2 objects can be compared as well.
``control_plane_with``  factory: ``control_plane_with({"DRAListTypeAttributes": True})`` starts
                   (once per gate set, per session) a second control plane with those gates.
``kube``           an ``api.Client`` of the session's control plane as the admin (system:masters).
``client_for``     factory: ``client_for(cp)`` an admin client of any control plane.
``server_gates``   the gate values the session's API server runs with (from its /metrics).
``dralab_gates``   those values as a dralab ``FeatureGates``: pass it to dralab when comparing,
                   since dralab's own defaults are 1.37's.
``namespace``      a fresh namespace per test, deleted afterwards.
``make_node_ready`` create-or-take a Node by name, set Ready and drop the not-ready taint as the
                   node lifecycle controller would (NodeTaint admission puts it on at create).
``readonly_token`` a ServiceAccount token bound to the read-only ClusterRole in
                   ``examples/rbac/`` (skipped until that file exists).
"""

from __future__ import annotations

import contextlib
import os
import re
import uuid
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from dralab.api.features import KNOWN_GATES, FeatureGates

from .api import ApiError, Client
from .controlplane import ControlPlane, missing_binaries

ASSETS = Path(os.environ.get("KUBEBUILDER_ASSETS") or "/usr/local/kubebuilder/bin")
RUNTIME_CONFIG = "resource.k8s.io/v1beta1=true,resource.k8s.io/v1beta2=true"
REPO = Path(__file__).resolve().parents[2]
_MISSING = missing_binaries(ASSETS)
SKIP_REASON = (f"control-plane binaries not found in KUBEBUILDER_ASSETS={ASSETS}: "
               + ", ".join(_MISSING)) if _MISSING else ""


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "k8s: conformance tier against real control-plane binaries "
                   "(KUBEBUILDER_ASSETS); skipped when they are not there")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.k8s)
            if SKIP_REASON:
                item.add_marker(pytest.mark.skip(reason=SKIP_REASON))


_PLANES: dict[tuple[tuple[str, bool], ...], ControlPlane] = {}


def _plane(gates: Mapping[str, bool]) -> ControlPlane:
    key = tuple(sorted(gates.items()))
    if key not in _PLANES:
        _PLANES[key] = ControlPlane(ASSETS, feature_gates=dict(gates),
                                    runtime_config=RUNTIME_CONFIG).start()
    return _PLANES[key]


@pytest.fixture(scope="session")
def control_plane() -> Iterator[ControlPlane]:
    plane = _plane({})
    yield plane
    for started in _PLANES.values():
        started.stop()
    _PLANES.clear()


@pytest.fixture(scope="session")
def control_plane_with(control_plane: ControlPlane) -> Callable[[Mapping[str, bool]], ControlPlane]:
    # Depends on control_plane so that its teardown stops these as well.
    return _plane


@pytest.fixture(scope="session")
def client_for() -> Callable[[ControlPlane], Client]:
    return lambda plane: Client(plane.url, plane.ssl_context())


@pytest.fixture(scope="session")
def kube(control_plane: ControlPlane) -> Client:
    return Client(control_plane.url, control_plane.ssl_context())


_METRIC = re.compile(r'^kubernetes_feature_enabled\{name="([^"]+)",stage="[^"]*"\} ([01])$')


def gates_of(client: Client) -> dict[str, bool]:
    """Every feature gate and its value, as the API server reports them on /metrics."""
    url = client.url + "/metrics"
    import urllib.request
    with urllib.request.urlopen(url, context=client.context, timeout=60) as response:
        text = response.read().decode()
    return {m[1]: m[2] == "1" for line in text.splitlines() if (m := _METRIC.match(line))}


def dralab_gates_for(server: Mapping[str, bool]) -> FeatureGates:
    """The server's gate values for dralab: gates the server has not heard of are off (their
    fields do not exist there); locked gates keep dralab's locked value."""
    overrides: dict[str, bool] = {}
    for name, info in KNOWN_GATES.items():
        value = server.get(name, False)
        if info.locked and value != info.default:
            continue
        overrides[name] = value
    return FeatureGates().with_overrides(overrides)


@pytest.fixture(scope="session")
def server_gates(kube: Client) -> dict[str, bool]:
    return gates_of(kube)


@pytest.fixture(scope="session")
def dralab_gates(server_gates: dict[str, bool]) -> FeatureGates:
    return dralab_gates_for(server_gates)


@pytest.fixture
def namespace(kube: Client) -> Iterator[str]:
    name = f"t-{uuid.uuid4().hex[:10]}"
    kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    yield name
    with contextlib.suppress(ApiError):
        kube.delete("v1", "Namespace", name)


@pytest.fixture
def make_node_ready(kube: Client) -> Iterator[Callable[..., dict[str, Any]]]:
    made: list[str] = []

    def ready(name: str, labels: Mapping[str, str] | None = None,
              allocatable: Mapping[str, str] | None = None) -> dict[str, Any]:
        try:
            kube.create({"apiVersion": "v1", "kind": "Node",
                         "metadata": {"name": name, "labels": dict(labels or {})}})
            made.append(name)
        except ApiError as err:
            if err.status != 409:
                raise
        node = kube.get("v1", "Node", name)
        taints = [t for t in (node.get("spec") or {}).get("taints") or []
                  if t.get("key") != "node.kubernetes.io/not-ready"]
        kube.patch("v1", "Node", name, {"spec": {"taints": taints or None}})
        resources = dict(allocatable or {"cpu": "8", "memory": "32Gi", "pods": "110"})
        return kube.patch_status("v1", "Node", name, {"status": {
            "capacity": resources, "allocatable": resources,
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                            "message": "set by the dralab test tier"}]}})

    yield ready
    for name in made:
        with contextlib.suppress(ApiError):
            kube.delete("v1", "Node", name)


@pytest.fixture(scope="session")
def readonly_token(kube: Client) -> str:
    """A token of ServiceAccount ``default/dralab-readonly`` bound to examples/rbac's role."""
    files = sorted((REPO / "examples" / "rbac").glob("*.yaml"))
    if not files:
        pytest.skip("examples/rbac/ has no read-only ClusterRole yet")
    roles = [doc for f in files for doc in yaml.safe_load_all(f.read_text())
             if isinstance(doc, dict) and doc.get("kind") == "ClusterRole"]
    if not roles:
        pytest.skip("examples/rbac/ holds no ClusterRole")
    role = roles[0]
    for obj in (role,
                {"apiVersion": "v1", "kind": "ServiceAccount",
                 "metadata": {"name": "dralab-readonly", "namespace": "default"}},
                {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                 "metadata": {"name": "dralab-readonly"},
                 "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                             "name": role["metadata"]["name"]},
                 "subjects": [{"kind": "ServiceAccount", "name": "dralab-readonly",
                               "namespace": "default"}]}):
        try:
            kube.create(obj)
        except ApiError as err:
            if err.status != 409:
                raise
    token_path = "/api/v1/namespaces/default/serviceaccounts/dralab-readonly/token"
    answer = kube.request("POST", token_path,
                          {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                           "spec": {"expirationSeconds": 3600}})
    return str(answer["status"]["token"])
