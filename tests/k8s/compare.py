"""Compare dralab's validation of one object with the API server's answer to a dry-run create.

``server_verdict(client, obj, namespace)`` POSTs the object with ``dryRun=All`` and
``fieldValidation=Strict`` and returns the set of ``(field, message)`` the server rejects it with
(empty: accepted). ``dralab_verdict(obj, gates)`` is the same set from ``validate_documents``.
``Outcome`` says whether they agree and how they differ.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from dralab.api.features import FeatureGates
from dralab.api.io import Document
from dralab.validation import validate_documents

from .api import ApiError, Client

__all__ = ["Outcome", "compare", "dralab_verdict", "server_verdict"]

Verdict = frozenset[tuple[str, str]]


def server_verdict(client: Client, obj: dict[str, Any], namespace: str) -> Verdict:
    """What the API server says about creating ``obj`` in ``namespace`` (dry run, strict)."""
    body = copy.deepcopy(obj)
    resource = client.resource(str(body.get("apiVersion")), str(body.get("kind")))
    metadata = body.get("metadata")
    if resource is not None and resource.namespaced and isinstance(metadata, dict):
        # Fixtures name namespaces that do not exist here; the object is validated in ours.
        metadata["namespace"] = namespace
    try:
        client.create(body, namespace, dry_run=True)
    except ApiError as err:
        causes = err.causes
        if causes:
            return frozenset((str(c.get("field", "")), str(c.get("message", ""))) for c in causes)
        return frozenset({("<request>", str(err.body.get("message", err)))})
    return frozenset()


def dralab_verdict(obj: dict[str, Any], gates: FeatureGates) -> Verdict:
    problems = validate_documents([Document("<fixture>", None, obj)], gates)
    return frozenset((p.error.path, p.message or p.error.body()) for p in problems)


@dataclass(frozen=True)
class Outcome:
    source: str
    server: Verdict
    dralab: Verdict

    @property
    def same_decision(self) -> bool:
        return bool(self.server) == bool(self.dralab)

    @property
    def agree(self) -> bool:
        return self.server == self.dralab

    def describe(self) -> str:
        lines = [f"{self.source}:"]
        lines += [f"  server only: {f}: {m}" for f, m in sorted(self.server - self.dralab)]
        lines += [f"  dralab only: {f}: {m}" for f, m in sorted(self.dralab - self.server)]
        return "\n".join(lines)


def compare(client: Client, source: str, obj: dict[str, Any], namespace: str,
            gates: FeatureGates) -> Outcome:
    return Outcome(source, server_verdict(client, obj, namespace), dralab_verdict(obj, gates))
