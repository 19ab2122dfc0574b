"""Exec credential plugins (``users[].user.exec``: EKS, GKE, AKS, kubelogin).

client-go's protocol: run the command with the kubeconfig's args and env, with
``KUBERNETES_EXEC_INFO`` holding an ``ExecCredential`` (spec.interactive false: dralab
never prompts), and read an ``ExecCredential`` from its stdout whose
``status.token`` is the bearer token. The token is reused until the server answers
401, then the plugin runs once more (as client-go does on expiry). lightkube's own
plugin runner knows v1alpha1/v1beta1 only; ``client.authentication.k8s.io/v1`` is what
current plugins print, so dralab runs them itself.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Generator

import httpx2 as httpx
from lightkube.config.models import UserExec

from .errors import ClusterError

EXEC_API_VERSIONS = (
    "client.authentication.k8s.io/v1",
    "client.authentication.k8s.io/v1beta1",
    "client.authentication.k8s.io/v1alpha1",
)
# A plugin that hangs (waiting for a browser login, a network call) must not hang dralab.
EXEC_TIMEOUT_SECONDS = 60
MAX_EXEC_OUTPUT_BYTES = 1024 * 1024


def _stderr_tail(data: bytes) -> str:
    lines = data.decode("utf-8", "replace").strip().splitlines()
    return lines[-1] if lines else ""


def run_exec_plugin(spec: UserExec) -> str:
    """The bearer token the plugin prints; ``ClusterError`` naming the command otherwise."""
    name = spec.command
    if spec.apiVersion not in EXEC_API_VERSIONS:
        raise ClusterError(f"exec credential plugin {name}: apiVersion {spec.apiVersion!r} "
                           f"is not one of {', '.join(EXEC_API_VERSIONS)}")
    env = dict(os.environ)
    env.update((var.name, var.value) for var in spec.env or ())
    env["KUBERNETES_EXEC_INFO"] = json.dumps({
        "kind": "ExecCredential", "apiVersion": spec.apiVersion,
        "spec": {"interactive": False}})
    try:
        proc = subprocess.run([name, *(spec.args or [])], env=env, stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=EXEC_TIMEOUT_SECONDS, check=False)
    except FileNotFoundError:
        hint = f" ({' '.join(spec.installHint.split())})" if spec.installHint else ""
        raise ClusterError(f"exec credential plugin {name}: command not found{hint}") from None
    except subprocess.TimeoutExpired:
        raise ClusterError(f"exec credential plugin {name}: no answer within "
                           f"{EXEC_TIMEOUT_SECONDS} s") from None
    except OSError as exc:
        raise ClusterError(f"exec credential plugin {name}: cannot run it: "
                           f"{exc.strerror or exc}") from None
    if proc.returncode != 0:
        tail = _stderr_tail(proc.stderr)
        raise ClusterError(f"exec credential plugin {name} failed (exit status "
                           f"{proc.returncode}){': ' + tail if tail else ''}")
    if len(proc.stdout) > MAX_EXEC_OUTPUT_BYTES:
        raise ClusterError(f"exec credential plugin {name}: output larger than "
                           f"{MAX_EXEC_OUTPUT_BYTES} bytes")
    try:
        credential = json.loads(proc.stdout)
        token = credential["status"]["token"]
    except (ValueError, KeyError, TypeError):
        raise ClusterError(f"exec credential plugin {name}: its output is not an "
                           "ExecCredential with status.token") from None
    if not isinstance(token, str) or not token:
        raise ClusterError(f"exec credential plugin {name}: status.token is empty")
    return token


class ExecCredentialAuth(httpx.Auth):
    """httpx auth running the plugin on first use and again after a 401."""

    def __init__(self, spec: UserExec) -> None:
        self._spec = spec
        self._token: str | None = None

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        if self._token is not None:
            request.headers["Authorization"] = f"Bearer {self._token}"
            response = yield request
            if response.status_code != 401:
                return
        self._token = run_exec_plugin(self._spec)
        request.headers["Authorization"] = f"Bearer {self._token}"
        yield request
