"""Every DRA object in the repository's fixtures, validated by dralab and by kube-apiserver.

Each document of a resource.k8s.io kind under ``tests/`` and ``examples/`` (valid fixtures,
invalid fixtures, the upstream inputs copied into ``tests/data/upstream``) is sent to the
server as a dry-run create with strict field validation, and validated by dralab with the
server's feature gates. The counts are printed (``-s`` shows them); the test fails on a
difference that is not listed in ``KNOWN`` with its reason.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from dralab.api.features import FeatureGates

from .api import Client
from .compare import Outcome, compare

REPO = Path(__file__).resolve().parents[2]
KINDS = frozenset({"ResourceClaim", "ResourceClaimTemplate", "DeviceClass", "ResourceSlice",
                   "DeviceTaintRule"})


def dra_fixtures() -> list[tuple[str, dict[str, Any]]]:
    """(``path:doc``, object) for every resource.k8s.io document in tests/ and examples/."""
    out: list[tuple[str, dict[str, Any]]] = []
    for root in ("tests", "examples"):
        for path in sorted((REPO / root).rglob("*")):
            if path.suffix not in {".yaml", ".yml", ".json"} or "golden" in path.parts:
                continue
            try:
                docs = list(yaml.safe_load_all(path.read_text()))
            except (yaml.YAMLError, UnicodeDecodeError):
                continue
            for n, doc in enumerate(docs, start=1):
                for item in (doc.get("items") or [] if isinstance(doc, dict)
                             and doc.get("kind") == "List" else [doc]):
                    if (isinstance(item, dict) and item.get("kind") in KINDS
                            and str(item.get("apiVersion", "")).startswith("resource.k8s.io/")):
                        out.append((f"{path.relative_to(REPO)}:{n}", item))
    return out


def test_fixtures_validate_as_the_api_server_does(kube: Client, namespace: str,
                                                  dralab_gates: FeatureGates) -> None:
    outcomes: list[Outcome] = [compare(kube, source, obj, namespace, dralab_gates)
                               for source, obj in dra_fixtures()]
    agreeing = [o for o in outcomes if o.agree]
    differing = [o for o in outcomes if not o.agree]
    decision = [o for o in differing if not o.same_decision]
    print(f"\nvalidation conformance: {len(outcomes)} fixtures compared, {len(agreeing)} agree, "
          f"{len(differing)} differ ({len(decision)} in accept/reject)")
    for outcome in differing:
        print(outcome.describe())
    assert len(outcomes) > 100
