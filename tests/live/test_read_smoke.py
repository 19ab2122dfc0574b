"""dralab.live's reader against the loopback fake kube-apiserver (tests/live/fakeapi.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dralab.live import ClusterError, load_cluster_config, read_cluster
from live.fakeapi import FakeCluster, example_cluster, serve


@pytest.fixture(scope="module")
def api() -> Iterator[tuple[FakeCluster, str]]:
    fake = FakeCluster(example_cluster(), tokens={"good": set(), "limited": {"resourceslices"}})
    with serve(fake) as url:
        yield fake, url


def _kubeconfig(tmp_path: Path, server: str, user: dict[str, Any]) -> str:
    path = tmp_path / "config"
    path.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "fake",
        "clusters": [{"name": "c", "cluster": {"server": server}}],
        "contexts": [{"name": "fake", "context": {"cluster": "c", "user": "u"}}],
        "users": [{"name": "u", "user": user}]}))
    return str(path)


def test_paginated_read_adds_kind_keeps_server_fields_and_only_gets(
        api: tuple[FakeCluster, str], tmp_path: Path) -> None:
    fake, server = api
    fake.expire_once.add("nodes")  # the second page's token expires once: the list restarts
    fake.page_size = 1
    before = len(fake.requests)
    try:
        read = read_cluster(load_cluster_config(_kubeconfig(tmp_path, server,
                                                            {"token": "good"})))
    finally:
        fake.page_size = 2
        fake.expire_once.clear()
    nodes = [d.data for d in read.documents if d.data["kind"] == "Node"]
    assert [n["metadata"]["name"] for n in nodes] == ["h100-node-01", "l4-node-01"]
    served = next(o for o in fake.objects if o["kind"] == "Node")
    assert nodes[0] == served  # apiVersion and kind added back; everything else as sent
    assert [d.where for d in read.documents[:3]] == ["cluster fake:1", "cluster fake:2",
                                                     "cluster fake:3"]
    assert {method for method, _ in fake.requests[before:]} == {"GET"}


def test_exec_plugin_token(api: tuple[FakeCluster, str], tmp_path: Path) -> None:
    _, server = api
    plugin = tmp_path / "plugin.sh"
    plugin.write_text('#!/bin/sh\necho \'{"kind":"ExecCredential","apiVersion":'
                      '"client.authentication.k8s.io/v1","status":{"token":"good"}}\'\n')
    plugin.chmod(0o755)
    user = {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": str(plugin),
                     "interactiveMode": "Never"}}
    read = read_cluster(load_cluster_config(_kubeconfig(tmp_path, server, user)))
    assert any(d.data["kind"] == "Node" for d in read.documents)


def test_errors_are_one_line(api: tuple[FakeCluster, str], tmp_path: Path) -> None:
    _, server = api
    with pytest.raises(ClusterError, match=r"unauthorized \(401\).*context 'fake'"):
        read_cluster(load_cluster_config(_kubeconfig(tmp_path, server, {"token": "bad"})))
    with pytest.raises(ClusterError, match=r'cannot list resource "resourceslices" in API '
                                           r'group "resource.k8s.io" at the cluster scope'):
        read_cluster(load_cluster_config(_kubeconfig(tmp_path, server, {"token": "limited"})))
    with pytest.raises(ClusterError, match=r"does not serve API group 'kueue.x-k8s.io'"):
        fake_without = FakeCluster([], crds=set())
        with serve(fake_without) as bare:
            read_cluster(load_cluster_config(_kubeconfig(tmp_path, bare, {"token": "good"})),
                         require_groups=("kueue.x-k8s.io",))
    with pytest.raises(ClusterError, match="context 'nope' not found"):
        load_cluster_config(_kubeconfig(tmp_path, server, {"token": "good"}), "nope")
    with pytest.raises(ClusterError, match=r"cannot reach the Kubernetes API server at "
                                           r"http://127\.0\.0\.1:9"):
        read_cluster(load_cluster_config(_kubeconfig(tmp_path, "http://127.0.0.1:9",
                                                     {"token": "good"})))
