"""A thin client for the test control plane: create, get, list, delete, dry-run, over plain HTTPS.

Paths come from the object's apiVersion and kind through the server's discovery (so a kind the
server does not serve is an ``ApiError`` with the server's own answer, not a guess). Every call
returns the decoded JSON body; a non-2xx answer raises ``ApiError`` carrying the ``Status``.
"""

from __future__ import annotations

import json
import ssl
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ApiError", "Client", "Resource"]

_TIMEOUT_S = 60.0  # bounds a hung request; measures nothing


class ApiError(Exception):
    """A non-2xx answer: ``status`` is the HTTP code, ``body`` the decoded ``Status`` object."""

    def __init__(self, status: int, body: dict[str, Any]) -> None:
        super().__init__(f"{status}: {body.get('message', body)}")
        self.status = status
        self.body = body

    @property
    def causes(self) -> list[dict[str, Any]]:
        """``details.causes``: one entry per field error (``field``, ``message``, ``reason``)."""
        details = self.body.get("details") or {}
        return list(details.get("causes") or [])


@dataclass(frozen=True)
class Resource:
    """Where a kind lives: ``/api/v1`` or ``/apis/<group>/<version>``, plural, namespaced."""

    base: str
    plural: str
    namespaced: bool

    def path(self, namespace: str | None, name: str | None = None) -> str:
        out = self.base
        if self.namespaced and namespace:
            out += f"/namespaces/{urllib.parse.quote(namespace, safe='')}"
        out += f"/{self.plural}"
        if name is not None:
            out += f"/{urllib.parse.quote(name, safe='')}"
        return out


@dataclass
class Client:
    url: str
    context: ssl.SSLContext
    _resources: dict[tuple[str, str], Resource | None] = field(default_factory=dict)

    # -- raw -----------------------------------------------------------------------------------

    def request(self, method: str, path: str, body: object = None,
                query: dict[str, str] | None = None,
                content_type: str = "application/json") -> dict[str, Any]:
        url = self.url + path + ("?" + urllib.parse.urlencode(query) if query else "")
        data = None if body is None else (body if isinstance(body, bytes)
                                          else json.dumps(body).encode())
        req = urllib.request.Request(url, data=data, method=method,
                                     headers={"Content-Type": content_type,
                                              "Accept": "application/json"})
        try:
            with urllib.request.urlopen(req, context=self.context,
                                        timeout=_TIMEOUT_S) as response:
                raw = response.read()
        except urllib.error.HTTPError as err:
            raw = err.read()
            try:
                decoded = json.loads(raw)
            except ValueError:
                decoded = {"message": raw.decode(errors="replace")}
            raise ApiError(err.code, decoded) from None
        return json.loads(raw) if raw else {}

    # -- discovery -----------------------------------------------------------------------------

    def resource(self, api_version: str, kind: str) -> Resource | None:
        """The resource serving ``kind`` in ``api_version``, or None if the server does not."""
        key = (api_version, kind)
        if key not in self._resources:
            base = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
            try:
                listing = self.request("GET", base)
            except ApiError:
                self._resources[key] = None
                return None
            found = None
            for item in listing.get("resources", []):
                if item.get("kind") == kind and "/" not in item.get("name", ""):
                    found = Resource(base, item["name"], bool(item.get("namespaced")))
                    break
            self._resources[key] = found
        return self._resources[key]

    def _resource_of(self, obj: dict[str, Any]) -> Resource:
        resource = self.resource(str(obj.get("apiVersion")), str(obj.get("kind")))
        if resource is None:
            raise ApiError(404, {"message": f"no {obj.get('kind')} in {obj.get('apiVersion')}"})
        return resource

    # -- verbs ---------------------------------------------------------------------------------

    def create(self, obj: dict[str, Any], namespace: str | None = None, *,
               dry_run: bool = False, strict: bool = True) -> dict[str, Any]:
        """POST ``obj``; ``dry_run`` sends ``dryRun=All``; ``strict`` ``fieldValidation=Strict``."""
        resource = self._resource_of(obj)
        namespace = namespace or (obj.get("metadata") or {}).get("namespace")
        query = {"fieldValidation": "Strict" if strict else "Ignore"}
        if dry_run:
            query["dryRun"] = "All"
        return self.request("POST", resource.path(namespace), obj, query)

    def create_raw(self, api_version: str, kind: str, body: bytes, namespace: str | None = None,
                   *, dry_run: bool = True) -> dict[str, Any]:
        """POST a body as bytes (YAML or JSON as written) with strict field validation."""
        resource = self.resource(api_version, kind)
        if resource is None:
            raise ApiError(404, {"message": f"no {kind} in {api_version}"})
        query = {"fieldValidation": "Strict"}
        if dry_run:
            query["dryRun"] = "All"
        return self.request("POST", resource.path(namespace), body, query,
                            content_type="application/yaml")

    def get(self, api_version: str, kind: str, name: str,
            namespace: str | None = None) -> dict[str, Any]:
        resource = self.resource(api_version, kind)
        assert resource is not None, (api_version, kind)
        return self.request("GET", resource.path(namespace, name))

    def list(self, api_version: str, kind: str, namespace: str | None = None) -> list[Any]:
        resource = self.resource(api_version, kind)
        assert resource is not None, (api_version, kind)
        return list(self.request("GET", resource.path(namespace)).get("items", []))

    def delete(self, api_version: str, kind: str, name: str,
               namespace: str | None = None) -> dict[str, Any]:
        resource = self.resource(api_version, kind)
        assert resource is not None, (api_version, kind)
        return self.request("DELETE", resource.path(namespace, name))

    def patch_status(self, api_version: str, kind: str, name: str, patch: dict[str, Any],
                     namespace: str | None = None) -> dict[str, Any]:
        """Merge-patch the status subresource."""
        resource = self.resource(api_version, kind)
        assert resource is not None, (api_version, kind)
        return self.request("PATCH", resource.path(namespace, name) + "/status", patch,
                            content_type="application/merge-patch+json")

    def patch(self, api_version: str, kind: str, name: str, patch: dict[str, Any],
              namespace: str | None = None) -> dict[str, Any]:
        """Merge-patch the object."""
        resource = self.resource(api_version, kind)
        assert resource is not None, (api_version, kind)
        return self.request("PATCH", resource.path(namespace, name), patch,
                            content_type="application/merge-patch+json")
