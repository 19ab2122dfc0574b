"""GET requests to the API server, as JSON, with kube-apiserver's errors as one line.

Only GET is ever sent (``ReadOnlyClient`` has no other method): dralab reads a
cluster, it never changes one. Responses are bounded (``MAX_RESPONSE_BYTES``), read
as they stream in.
"""

from __future__ import annotations

import json
import ssl
from typing import Any

import httpx2 as httpx
from lightkube.config.client_adapter import user_auth, verify_cluster
from lightkube.config.models import User
from lightkube.core.exceptions import ConfigError

from .auth import ExecCredentialAuth
from .config import ClusterConfig
from .errors import RBAC_EXAMPLE, ClusterError

# One response (a page of a list, a discovery document). kube-apiserver pages of
# LIST_PAGE_SIZE objects are a few MiB even for large ResourceSlices.
MAX_RESPONSE_BYTES = 64 * 1024 * 1024
TIMEOUT_SECONDS = 30.0
USER_AGENT = "dralab (read-only)"


class ApiStatus(Exception):
    """A non-2xx answer: the HTTP code and the Status object the server sent, if any."""

    def __init__(self, code: int, status: dict[str, Any], url: str) -> None:
        super().__init__(f"{code} {url}")
        self.code = code
        self.status = status
        self.url = url

    @property
    def reason(self) -> str:
        return str(self.status.get("reason") or "")

    @property
    def message(self) -> str:
        return " ".join(str(self.status.get("message") or "").split())


def _auth(config: ClusterConfig) -> httpx.Auth | None:
    user = config.single.user
    if user is not None and user.exec is not None and not (user.token or user.token_file):
        return ExecCredentialAuth(user.exec)
    try:
        return user_auth(user)
    except ConfigError as exc:
        raise ClusterError(f"context {config.context!r}: {exc}") from None


def _verify(config: ClusterConfig) -> ssl.SSLContext | bool:
    if not config.server.startswith("https:"):
        return False
    try:
        return verify_cluster(config.single.cluster, config.single.user or User(),
                              config.single.abs_file)
    except (OSError, ssl.SSLError, ValueError) as exc:
        raise ClusterError(f"context {config.context!r}: TLS setup failed "
                           f"(certificate-authority or client certificate): {exc}") from None


class ReadOnlyClient:
    """GETs JSON from one cluster; every failure a ``ClusterError`` naming the URL."""

    def __init__(self, config: ClusterConfig) -> None:
        self.config = config
        self.requests = 0
        self._http = httpx.Client(
            base_url=config.server, auth=_auth(config), verify=_verify(config),
            timeout=TIMEOUT_SECONDS, headers={"User-Agent": USER_AGENT,
                                              "Accept": "application/json"},
            trust_env=True, follow_redirects=False)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> ReadOnlyClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _url(self, path: str) -> str:
        return self.config.server.rstrip("/") + path

    def get(self, path: str, params: dict[str, str] | None = None) -> dict[str, Any]:
        """The JSON object at ``path``; ``ApiStatus`` for 404/410 (callers decide),
        ``ClusterError`` for every other failure."""
        url = self._url(path)
        self.requests += 1
        try:
            with self._http.stream("GET", path, params=params) as response:
                body = bytearray()
                for chunk in response.iter_bytes():
                    body.extend(chunk)
                    if len(body) > MAX_RESPONSE_BYTES:
                        raise ClusterError(f"GET {url}: response larger than "
                                           f"{MAX_RESPONSE_BYTES} bytes (MAX_RESPONSE_BYTES)")
                code = response.status_code
        except httpx.ConnectError as exc:
            text = " ".join(str(exc).split())
            if "CERTIFICATE" in text.upper() or "SSL" in text.upper():
                raise ClusterError(f"TLS failure talking to {self.config.server}: {text}; "
                                   "check the cluster's certificate-authority in the "
                                   "kubeconfig") from None
            raise ClusterError(f"cannot reach the Kubernetes API server at "
                               f"{self.config.server}: {text or type(exc).__name__}") from None
        except httpx.TimeoutException:
            raise ClusterError(f"the Kubernetes API server at {self.config.server} did not "
                               f"answer GET {path} within {TIMEOUT_SECONDS:g} s") from None
        except httpx.HTTPError as exc:
            raise ClusterError(f"GET {url}: {type(exc).__name__}: "
                               f"{' '.join(str(exc).split())}") from None
        try:
            data = json.loads(bytes(body)) if body else {}
        except ValueError:
            data = None
        if 200 <= code < 300:
            if not isinstance(data, dict):
                raise ClusterError(f"GET {url}: the answer is not a JSON object "
                                   "(is this a Kubernetes API server?)")
            return data
        status = data if isinstance(data, dict) and data.get("kind") == "Status" else {}
        error = ApiStatus(code, status, url)
        if code in (404, 410):
            raise error
        raise self._refusal(error, path)

    def _refusal(self, error: ApiStatus, path: str) -> ClusterError:
        context = self.config.context
        said = f": {error.message}" if error.message else ""
        if error.code == 401:
            return ClusterError(
                f"unauthorized (401) at {self.config.server}: the credentials of context "
                f"{context!r} are invalid or expired; log in again or refresh them{said}")
        if error.code == 403:
            return ClusterError(f"forbidden (403) at {self.config.server}: "
                                f"{forbidden_text(path, error.status)}")
        return ClusterError(f"GET {error.url}: HTTP {error.code} "
                            f"{error.reason or 'error'}{said}")


def forbidden_text(path: str, status: dict[str, Any]) -> str:
    """``cannot list resource "X" in API group "G" at the cluster scope; grant ...``."""
    details = status.get("details") if isinstance(status.get("details"), dict) else {}
    assert isinstance(details, dict)
    parts = path.strip("/").split("/")
    # /api/v1/<res> or /apis/<g>/<v>/<res>; a namespace in the path is not used here
    if parts[:1] == ["api"] and len(parts) >= 3:
        group, resource = "", parts[2]
    elif parts[:1] == ["apis"] and len(parts) >= 4:
        group, resource = parts[1], parts[3]
    else:
        return (f'cannot get path "{path}" (discovery); grant get on nonResourceURLs '
                f'"/api", "/api/*", "/apis", "/apis/*" (see {RBAC_EXAMPLE})')
    resource = str(details.get("kind") or resource)
    group = str(details.get("group") if details.get("group") is not None else group)
    return (f'cannot list resource "{resource}" in API group "{group}" at the cluster '
            f'scope; grant list on it (see {RBAC_EXAMPLE})')
