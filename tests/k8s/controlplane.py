"""A real Kubernetes control plane on loopback for the conformance tier (envtest convention).

``ControlPlane(assets, feature_gates=...)`` starts etcd, kube-apiserver, kube-scheduler and
kube-controller-manager from the binaries in ``assets`` (``KUBEBUILDER_ASSETS``), each on free
loopback ports with certificates made at start by the ``openssl`` CLI, and stops them all in
``stop()``. The binaries live outside the repository; nothing here builds them.

Identities (all client certificates signed by one throw-away CA):

- ``admin``: ``O=system:masters``, what the tests use to create and dry-run objects;
- ``system:kube-scheduler`` and ``system:kube-controller-manager``: the components' own users,
  bound by the API server's bootstrap RBAC policy.

No process outlives the test session: each child runs in its own process group with
``PR_SET_PDEATHSIG`` = SIGKILL (it dies with the pytest process, even on SIGKILL), and
``stop()`` is registered with ``atexit`` and kills each group (SIGTERM, then SIGKILL).
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import resource
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["BINARIES", "ControlPlane", "StartupError", "missing_binaries"]

BINARIES = ("etcd", "kube-apiserver", "kube-scheduler", "kube-controller-manager")
_PR_SET_PDEATHSIG = 1  # linux/prctl.h
# Wall-clock limits for waiting on a process that is starting (a loaded 2-core machine needs
# a minute for the API server's post-start hooks); they bound a hang, they measure nothing.
_READY_TIMEOUT_S = 180.0


class StartupError(RuntimeError):
    """A component did not come up; the message carries the tail of its log."""


def missing_binaries(assets: Path) -> list[str]:
    """The control-plane binaries not found (or not executable) in ``assets``."""
    return [name for name in BINARIES
            if not (assets / name).is_file() or not os.access(assets / name, os.X_OK)]


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _die_with_parent() -> None:
    """preexec_fn: own process group, SIGKILL when the pytest process dies."""
    os.setpgid(0, 0)
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def _make_pki(pki: Path) -> None:
    """CA, serving cert for 127.0.0.1/localhost, client certs, service-account key."""
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-keyout", "ca.key",
             "-out", "ca.crt", "-subj", "/CN=dralab-test-ca", cwd=pki)
    (pki / "serving.ext").write_text(
        "subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes.default.svc,IP:10.0.0.1\n"
        "extendedKeyUsage=serverAuth\n")
    (pki / "client.ext").write_text("extendedKeyUsage=clientAuth\n")
    subjects = {"serving": "/CN=kube-apiserver", "admin": "/O=system:masters/CN=dralab-admin",
                "scheduler": "/CN=system:kube-scheduler",
                "controller-manager": "/CN=system:kube-controller-manager"}
    for name, subject in subjects.items():
        _openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key",
                 "-out", f"{name}.csr", "-subj", subject, cwd=pki)
        ext = "serving.ext" if name == "serving" else "client.ext"
        _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
                 "-CAcreateserial", "-days", "2", "-out", f"{name}.crt", "-extfile", ext, cwd=pki)
    _openssl("genrsa", "-out", "sa.key", "2048", cwd=pki)
    _openssl("rsa", "-in", "sa.key", "-pubout", "-out", "sa.pub", cwd=pki)


def _kubeconfig(path: Path, server: str, pki: Path, user: str) -> None:
    path.write_text(
        "apiVersion: v1\nkind: Config\n"
        f"clusters:\n- name: test\n  cluster:\n    server: {server}\n"
        f"    certificate-authority: {pki / 'ca.crt'}\n"
        f"users:\n- name: {user}\n  user:\n    client-certificate: {pki / (user + '.crt')}\n"
        f"    client-key: {pki / (user + '.key')}\n"
        f"contexts:\n- name: test\n  context:\n    cluster: test\n    user: {user}\n"
        "current-context: test\n")


@dataclass
class ControlPlane:
    """One control plane. ``start()`` blocks until the API server is ready.

    ``feature_gates`` is passed to every component as ``--feature-gates`` (empty: the
    binaries' own defaults); ``runtime_config`` as the API server's ``--runtime-config``.
    """

    assets: Path
    feature_gates: Mapping[str, bool] = field(default_factory=dict)
    runtime_config: str = ""
    components: tuple[str, ...] = ("kube-scheduler", "kube-controller-manager")
    workdir: Path = field(init=False)
    url: str = field(init=False, default="")
    startup_cpu_s: float = field(init=False, default=0.0)
    _procs: dict[str, subprocess.Popen[bytes]] = field(init=False, default_factory=dict)

    # -- lifecycle -----------------------------------------------------------------------------

    def start(self) -> ControlPlane:
        cpu0 = _children_cpu()
        self.workdir = Path(tempfile.mkdtemp(prefix="dralab-k8s-"))
        atexit.register(self.stop)
        pki = self.workdir / "pki"
        pki.mkdir()
        _make_pki(pki)
        etcd_port, etcd_peer, api_port = _free_port(), _free_port(), _free_port()
        etcd_url = f"http://127.0.0.1:{etcd_port}"
        self._spawn("etcd", [
            f"--data-dir={self.workdir / 'etcd'}", f"--listen-client-urls={etcd_url}",
            f"--advertise-client-urls={etcd_url}",
            f"--listen-peer-urls=http://127.0.0.1:{etcd_peer}", "--unsafe-no-fsync"])
        self.url = f"https://127.0.0.1:{api_port}"
        gates = ",".join(f"{k}={str(v).lower()}" for k, v in sorted(self.feature_gates.items()))
        args = [
            f"--etcd-servers={etcd_url}", "--bind-address=127.0.0.1",
            "--advertise-address=127.0.0.1", f"--secure-port={api_port}",
            f"--cert-dir={self.workdir / 'apiserver-certs'}",
            f"--tls-cert-file={pki / 'serving.crt'}",
            f"--tls-private-key-file={pki / 'serving.key'}",
            f"--client-ca-file={pki / 'ca.crt'}",
            f"--service-account-key-file={pki / 'sa.pub'}",
            f"--service-account-signing-key-file={pki / 'sa.key'}",
            "--service-account-issuer=https://kubernetes.default.svc",
            "--service-cluster-ip-range=10.0.0.0/24", "--authorization-mode=Node,RBAC",
            "--allow-privileged=true", "--enable-priority-and-fairness=false",
        ]
        if gates:
            args.append(f"--feature-gates={gates}")
        if self.runtime_config:
            args.append(f"--runtime-config={self.runtime_config}")
        self._spawn("kube-apiserver", args)
        self._wait_ready()
        for user in ("admin", "scheduler", "controller-manager"):
            _kubeconfig(self.workdir / f"{user}.kubeconfig", self.url, pki, user)
        gate_args = [f"--feature-gates={gates}"] if gates else []
        if "kube-scheduler" in self.components:
            self._spawn("kube-scheduler", [
                f"--kubeconfig={self.workdir / 'scheduler.kubeconfig'}",
                f"--authentication-kubeconfig={self.workdir / 'scheduler.kubeconfig'}",
                f"--authorization-kubeconfig={self.workdir / 'scheduler.kubeconfig'}",
                "--bind-address=127.0.0.1", f"--secure-port={_free_port()}",
                "--leader-elect=false", *gate_args])
        if "kube-controller-manager" in self.components:
            cm = self.workdir / "controller-manager.kubeconfig"
            self._spawn("kube-controller-manager", [
                f"--kubeconfig={cm}", f"--authentication-kubeconfig={cm}",
                f"--authorization-kubeconfig={cm}",
                "--bind-address=127.0.0.1", f"--secure-port={_free_port()}",
                "--leader-elect=false", "--use-service-account-credentials=true",
                f"--service-account-private-key-file={pki / 'sa.key'}",
                f"--root-ca-file={pki / 'ca.crt'}", "--controllers=*",
                "--service-cluster-ip-range=10.0.0.0/24",
                # Nodes here have no kubelet to post heartbeats: without this the node
                # lifecycle controller marks them unreachable (and taints them) 50 s after
                # they are made Ready, in the middle of a slow test on a loaded machine.
                "--node-monitor-grace-period=1h", *gate_args])
        self.startup_cpu_s = _children_cpu() - cpu0 + self._live_cpu()
        return self

    def stop(self) -> None:
        """Kill every component's process group (SIGTERM, then SIGKILL); remove the temp dir."""
        for proc in reversed(list(self._procs.values())):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in reversed(list(self._procs.values())):
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        self._procs.clear()
        if getattr(self, "workdir", None) is not None and self.workdir.exists():
            shutil.rmtree(self.workdir, ignore_errors=True)

    # -- access --------------------------------------------------------------------------------

    def ssl_context(self, user: str = "admin") -> ssl.SSLContext:
        pki = self.workdir / "pki"
        context = ssl.create_default_context(cafile=str(pki / "ca.crt"))
        context.load_cert_chain(str(pki / f"{user}.crt"), str(pki / f"{user}.key"))
        return context

    def kubeconfig(self, user: str = "admin") -> Path:
        return self.workdir / f"{user}.kubeconfig"

    def log(self, name: str) -> str:
        path = self.workdir / f"{name}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    # -- internals -----------------------------------------------------------------------------

    def _spawn(self, name: str, args: list[str]) -> None:
        log = (self.workdir / f"{name}.log").open("wb")
        self._procs[name] = subprocess.Popen(
            [str(self.assets / name), *args], stdout=log, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, preexec_fn=_die_with_parent, cwd=self.workdir)
        log.close()

    def _live_cpu(self) -> float:
        """CPU seconds used so far by the running components (from /proc)."""
        total = 0.0
        tick = os.sysconf("SC_CLK_TCK")
        for proc in self._procs.values():
            with contextlib.suppress(OSError, IndexError, ValueError):
                fields = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
                total += (int(fields[11]) + int(fields[12])) / tick
        return total

    def _wait_ready(self) -> None:
        context = self.ssl_context()
        deadline = time.monotonic() + _READY_TIMEOUT_S
        while True:
            for name, proc in self._procs.items():
                if proc.poll() is not None:
                    raise StartupError(f"{name} exited {proc.returncode}:\n"
                                       + self.log(name)[-3000:])
            try:
                with urllib.request.urlopen(self.url + "/readyz", context=context,
                                            timeout=5) as response:
                    if response.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            if time.monotonic() > deadline:
                raise StartupError("kube-apiserver not ready:\n"
                                   + self.log("kube-apiserver")[-3000:])
            time.sleep(0.5)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime
