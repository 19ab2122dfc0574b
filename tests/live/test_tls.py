"""A kubeconfig with a bearer token and a certificate-authority file (what a ServiceAccount
token for dralab-readonly gives), over https; a server certificate of another CA is one
line. Certificates are made by the openssl CLI (skipped without it)."""

from __future__ import annotations

import base64
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from dralab.cli.main import cli
from dralab.live import ClusterError, load_cluster_config, read_cluster
from live.fakeapi import FakeCluster, example_cluster, serve

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="no openssl CLI")


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def _ca(pki: Path, name: str) -> None:
    _openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
             "-nodes", "-days", "2", "-keyout", f"{name}.key", "-out", f"{name}.crt",
             "-subj", f"/CN={name}", cwd=pki)


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pki = tmp_path_factory.mktemp("pki")
    _ca(pki, "ca")
    _ca(pki, "other-ca")
    (pki / "serving.ext").write_text("subjectAltName=IP:127.0.0.1\n"
                                     "extendedKeyUsage=serverAuth\n")
    _openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
             "-keyout", "serving.key", "-out", "serving.csr", "-subj", "/CN=kube-apiserver",
             cwd=pki)
    _openssl("x509", "-req", "-in", "serving.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
             "-CAcreateserial", "-days", "2", "-out", "serving.crt", "-extfile", "serving.ext",
             cwd=pki)
    return pki


@pytest.fixture(scope="module")
def https(pki: Path) -> Iterator[tuple[FakeCluster, str]]:
    fake = FakeCluster(example_cluster())
    with serve(fake, (pki / "serving.crt", pki / "serving.key")) as url:
        yield fake, url


def _config(path: Path, server: str, cluster: dict[str, str]) -> str:
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "sa",
        "clusters": [{"name": "c", "cluster": {"server": server, **cluster}}],
        "users": [{"name": "sa", "user": {"token": "good"}}],
        "contexts": [{"name": "sa", "context": {"cluster": "c", "user": "sa"}}]}))
    return str(path)


def test_token_and_ca_file(https: tuple[FakeCluster, str], pki: Path, tmp_path: Path) -> None:
    _, url = https
    # a relative certificate-authority is relative to the kubeconfig, as kubectl reads it
    shutil.copy(pki / "ca.crt", tmp_path / "ca.crt")
    config = _config(tmp_path / "config", url, {"certificate-authority": "ca.crt"})
    result = CliRunner().invoke(cli, ["schedule", "--kubeconfig", config, "-o", "table"])
    assert result.exit_code == 0, result.stderr
    assert "ml/pair" in result.stdout and "h100-node-01" in result.stdout
    inline = base64.b64encode((pki / "ca.crt").read_bytes()).decode()
    config = _config(tmp_path / "inline", url, {"certificate-authority-data": inline})
    assert len(read_cluster(load_cluster_config(config)).documents) == 16


def test_a_server_certificate_of_another_ca(https: tuple[FakeCluster, str], pki: Path,
                                            tmp_path: Path) -> None:
    _, url = https
    config = _config(tmp_path / "config", url,
                     {"certificate-authority": str(pki / "other-ca.crt")})
    with pytest.raises(ClusterError, match=r"^TLS failure talking to https://127\.0\.0\.1:\d+: "
                                           r".*CERTIFICATE_VERIFY_FAILED.*; check the "
                                           r"cluster's certificate-authority in the kubeconfig$"):
        read_cluster(load_cluster_config(config))
    result = CliRunner().invoke(cli, ["snapshot", "--kubeconfig", config, "-o", "-"])
    assert result.exit_code == 2 and result.stdout == ""
    assert len(result.stderr.splitlines()) == 1
    assert result.stderr.startswith("error: TLS failure talking to https://127.0.0.1:")


def test_in_cluster_service_account(https: tuple[FakeCluster, str], pki: Path, tmp_path: Path,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Inside a pod, without any kubeconfig: the service account's token, CA and namespace
    (kubectl's in-cluster config), the namespace being the default of a bare NAME."""
    _, url = https
    account = tmp_path / "serviceaccount"
    account.mkdir()
    (account / "token").write_text("good")
    (account / "namespace").write_text("ml")
    shutil.copy(pki / "ca.crt", account / "ca.crt")
    monkeypatch.setattr("dralab.live.config.SERVICE_ACCOUNT_DIR", account)
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", url.rsplit(":", 1)[1])
    result = CliRunner().invoke(cli, ["explain", "pod", "pair"])
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("Pod ml/pair: scheduled on h100-node-01\n")
    result = CliRunner().invoke(cli, ["explain", "pod", "pair", "--context", "other"])
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == ("error: --context other: no kubeconfig file to find it in "
                             "(in-cluster config has one context)\n")
