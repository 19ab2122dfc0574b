"""dralab.live against a loopback HTTP server answering with kube-apiserver's shapes."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest

from dralab.live import ClusterError, load_cluster_config, read_cluster

NODE = {"metadata": {"name": "n1", "resourceVersion": "7", "uid": "u1"}, "spec": {}}


def _status(code: int, reason: str, message: str, details: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": message, "reason": reason, "details": details, "code": code}


class FakeApi:
    def __init__(self) -> None:
        self.methods: list[str] = []
        self.forbid: set[str] = set()
        self.expire_once = False

    def answer(self, path: str, query: dict[str, list[str]]) -> tuple[int, dict[str, Any]]:
        if path == "/api":
            return 200, {"kind": "APIVersions", "versions": ["v1"]}
        if path == "/apis":
            return 200, {"kind": "APIGroupList", "groups": [
                {"name": "resource.k8s.io", "versions": [{"version": "v1"}],
                 "preferredVersion": {"version": "v1"}}]}
        if path == "/api/v1":
            return 200, {"kind": "APIResourceList", "resources": [
                {"name": "nodes", "verbs": ["get", "list"]},
                {"name": "pods", "verbs": ["get", "list"]}]}
        if path == "/apis/resource.k8s.io/v1":
            return 200, {"kind": "APIResourceList", "resources": [
                {"name": "resourceslices", "verbs": ["get", "list"]}]}
        resource = path.rsplit("/", 1)[-1]
        if resource in self.forbid:
            msg = (f'{resource} is forbidden: User "system:serviceaccount:x:y" cannot list '
                   f'resource "{resource}" in API group "resource.k8s.io" at the cluster scope')
            return 403, _status(403, "Forbidden", msg,
                                {"group": "resource.k8s.io", "kind": resource})
        if path == "/api/v1/nodes":
            token = query.get("continue", [""])[0]
            if token == "p2" and self.expire_once:
                self.expire_once = False
                return 410, _status(410, "Expired", "The provided continue parameter is too "
                                    "old to display a consistent list result.", {})
            if token == "p2":
                return 200, {"kind": "NodeList", "apiVersion": "v1",
                             "metadata": {"resourceVersion": "9"},
                             "items": [{**NODE, "metadata": {**NODE["metadata"], "name": "n2"}}]}
            return 200, {"kind": "NodeList", "apiVersion": "v1",
                         "metadata": {"resourceVersion": "9", "continue": "p2"}, "items": [NODE]}
        return 200, {"kind": "List", "apiVersion": "v1", "metadata": {}, "items": []}


@pytest.fixture
def api() -> Iterator[tuple[FakeApi, str]]:
    fake = FakeApi()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            fake.methods.append("GET")
            url = urlparse(self.path)
            if self.headers.get("Authorization") != "Bearer good":
                code, body = 401, _status(401, "Unauthorized", "Unauthorized", {})
            else:
                code, body = fake.answer(url.path, parse_qs(url.query))
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield fake, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _kubeconfig(tmp_path: Path, server: str, user: dict[str, Any]) -> str:
    path = tmp_path / "config"
    path.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "fake",
        "clusters": [{"name": "c", "cluster": {"server": server}}],
        "contexts": [{"name": "fake", "context": {"cluster": "c", "user": "u"}}],
        "users": [{"name": "u", "user": user}]}))
    return str(path)


def test_paginated_read_adds_kind_keeps_server_fields_and_only_gets(
        api: tuple[FakeApi, str], tmp_path: Path) -> None:
    fake, server = api
    fake.expire_once = True  # the second page's token expires once: the list restarts
    read = read_cluster(load_cluster_config(_kubeconfig(tmp_path, server, {"token": "good"})))
    nodes = [d.data for d in read.documents if d.data["kind"] == "Node"]
    assert [n["metadata"]["name"] for n in nodes] == ["n1", "n2"]
    assert nodes[0] == {"apiVersion": "v1", "kind": "Node", **NODE}
    assert set(fake.methods) == {"GET"}


def test_exec_plugin_token(api: tuple[FakeApi, str], tmp_path: Path) -> None:
    _, server = api
    plugin = tmp_path / "plugin.sh"
    plugin.write_text('#!/bin/sh\necho \'{"kind":"ExecCredential","apiVersion":'
                      '"client.authentication.k8s.io/v1","status":{"token":"good"}}\'\n')
    plugin.chmod(0o755)
    user = {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": str(plugin),
                     "interactiveMode": "Never"}}
    read = read_cluster(load_cluster_config(_kubeconfig(tmp_path, server, user)))
    assert any(d.data["kind"] == "Node" for d in read.documents)


def test_errors_are_one_line(api: tuple[FakeApi, str], tmp_path: Path) -> None:
    fake, server = api
    with pytest.raises(ClusterError, match=r"unauthorized \(401\).*context 'fake'"):
        read_cluster(load_cluster_config(_kubeconfig(tmp_path, server, {"token": "bad"})))
    fake.forbid.add("resourceslices")
    with pytest.raises(ClusterError, match=r'cannot list resource "resourceslices" in API '
                                           r'group "resource.k8s.io" at the cluster scope'):
        read_cluster(load_cluster_config(_kubeconfig(tmp_path, server, {"token": "good"})))
    with pytest.raises(ClusterError, match=r"does not serve API group 'kueue.x-k8s.io'"):
        read_cluster(load_cluster_config(_kubeconfig(tmp_path, server, {"token": "good"})),
                     require_groups=("kueue.x-k8s.io",))
    with pytest.raises(ClusterError, match="context 'nope' not found"):
        load_cluster_config(_kubeconfig(tmp_path, server, {"token": "good"}), "nope")
    with pytest.raises(ClusterError, match=r"cannot reach the Kubernetes API server at "
                                           r"http://127\.0\.0\.1:9"):
        read_cluster(load_cluster_config(_kubeconfig(tmp_path, "http://127.0.0.1:9",
                                                     {"token": "good"})))
