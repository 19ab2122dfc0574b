"""Every DRA object in the repository's fixtures, validated by dralab and by kube-apiserver.

Each document of a resource.k8s.io kind under ``tests/`` and ``examples/`` (valid fixtures,
invalid fixtures, the upstream inputs copied into ``tests/data/upstream``) is sent to the
server as a dry-run create with strict field validation (kubectl's default), and validated by
dralab with the server's feature gates. scheduler_perf's Go templates are rendered for object
0 first (``upstream.corpus.render``); a template that needs more than that is skipped, with
the reason printed. The counts are printed (``-s`` shows them).

The test asserts exactly the set of differences in ``KNOWN``: a new difference fails it, and
so does a listed one that is gone (then delete its entry, and the README's row).
"""

from __future__ import annotations

import contextlib
import copy
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from dralab.api.features import FeatureGates
from dralab.api.io import Document
from dralab.validation import validate_documents
from upstream.corpus import render

from .api import ApiError, Client
from .compare import Outcome, Verdict, server_verdict

REPO = Path(__file__).resolve().parents[2]
KINDS = frozenset({"ResourceClaim", "ResourceClaimTemplate", "DeviceClass", "ResourceSlice",
                   "DeviceTaintRule"})
REQUEST = "<request>"  # what is said of the request as a whole, not of one field
ADMIN_ACCESS_LABEL = "resource.kubernetes.io/admin-access"


@dataclass(frozen=True)
class Fixture:
    source: str  # path:doc, "(rendered)" after the path for a template
    obj: dict[str, Any]


def _dra_objects(doc: object) -> Iterator[dict[str, Any]]:
    items = (doc.get("items") or [] if isinstance(doc, dict) and doc.get("kind") == "List"
             else [doc])
    for item in items:
        if (isinstance(item, dict) and item.get("kind") in KINDS
                and str(item.get("apiVersion", "")).startswith("resource.k8s.io/")):
            yield item


def dra_fixtures() -> tuple[list[Fixture], list[str]]:
    """Every resource.k8s.io document in tests/ and examples/, and the files skipped (why)."""
    out: list[Fixture] = []
    skipped: list[str] = []
    for root in ("tests", "examples"):
        for path in sorted((REPO / root).rglob("*")):
            if path.suffix not in {".yaml", ".yml", ".json"} or "golden" in path.parts:
                continue
            name = str(path.relative_to(REPO))
            try:
                text = path.read_text()
            except UnicodeDecodeError:
                continue
            if "{{" in text:
                # A scheduler_perf template is a manifest only once rendered.
                try:
                    text = render(text, 0)
                except ValueError as err:
                    if "resource.k8s.io/" in text:
                        skipped.append(f"{name}: a Go template dralab's tests do not render "
                                       f"({err})")
                    continue
                name += " (rendered, .Index=0)"
            try:
                docs = list(yaml.safe_load_all(text))
            except yaml.YAMLError:
                continue
            for n, doc in enumerate(docs, start=1):
                out += [Fixture(f"{name}:{n}", obj) for obj in _dra_objects(doc)]
    return out, skipped


def kubectl_verdict(kube: Client, obj: dict[str, Any], namespace: str) -> Verdict:
    """What ``kubectl create --dry-run=server`` answers: a version the server does not serve
    never reaches it, kubectl's RESTMapper says ``no matches for kind`` from discovery."""
    api_version, kind = str(obj.get("apiVersion")), str(obj.get("kind"))
    if kube.resource(api_version, kind) is None:
        return frozenset({(REQUEST, f'no matches for kind "{kind}" in version "{api_version}"')})
    return server_verdict(kube, obj, namespace)


def dralab_answer(obj: dict[str, Any], gates: FeatureGates) -> Verdict:
    """dralab validate's problems; a problem of the whole document (an unserved version, the
    strict-decoding answer) is said of the request, as the server says it."""
    problems = validate_documents([Document("<fixture>", None, copy.deepcopy(obj))], gates)
    return frozenset((REQUEST, p.message) if p.message else (p.error.path, p.error.body())
                     for p in problems)


# --- the differences left, each with its reason ---------------------------------------------

@dataclass(frozen=True)
class Known:
    server: Verdict
    dralab: Verdict
    why: str


def _no_match(kind: str, api_version: str) -> str:
    return f'no matches for kind "{kind}" in version "{api_version}"'


def _removed(kind: str, api_version: str, hint: str) -> Known:
    return Known(frozenset({(REQUEST, _no_match(kind, api_version))}),
                 frozenset({(REQUEST, f"{_no_match(kind, api_version)}; {hint}")}),
                 "removed version: dralab adds when it was removed and what to use instead")


def _v1alpha2(kind: str) -> Known:
    return _removed(kind, "resource.k8s.io/v1alpha2",
                    "resource.k8s.io/v1alpha2 was removed in Kubernetes 1.31, use "
                    "resource.k8s.io/v1")


def _v1alpha3(kind: str) -> Known:
    return _removed(kind, "resource.k8s.io/v1alpha3",
                    f"resource.k8s.io/v1alpha3 {kind} was removed in Kubernetes 1.34, use "
                    "resource.k8s.io/v1")


def _controller(version: str) -> Known:
    return Known(
        frozenset({(REQUEST, f'ResourceClaimTemplate in version "{version}" cannot be handled '
                             'as a ResourceClaimTemplate: strict decoding error: unknown field '
                             '"spec.spec.controller"')}),
        frozenset({("spec.spec.controller",
                    "Forbidden: field removed in Kubernetes 1.32 with the "
                    "DRAControlPlaneController gate; the scheduler allocates every claim")}),
        "a removed field: dralab names the removal instead of 'unknown field' (DEVIATIONS)")


def _taint_rule(api_version: str, why: str) -> Known:
    return Known(frozenset({(REQUEST, _no_match("DeviceTaintRule", api_version))}),
                 frozenset(), why)


_ALPHA = ("v1alpha3 is served only with --runtime-config (the tier enables v1beta1 and v1beta2); "
          "dralab reads every version 1.37 can serve (DEVIATIONS)")
_QUANTITY_RE = "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
H = "tests/data/upstream/kubernetes/history/"
E2E = "test/e2e/dra/test-driver/deploy/example/"
K = "tests/data/upstream/kubernetes/"
PERF = "test/integration/scheduler_perf/dra/templates/"
GPU = "tests/data/upstream/versions/k8s-dra-driver-gpu-v25.3.2/"

KNOWN: dict[str, Known] = {
    "tests/data/invalid/seeded.yaml:5": Known(
        frozenset({(REQUEST, 'ResourceSlice in version "v1" cannot be handled as a '
                             f'ResourceSlice: quantities must match the regular expression '
                             f'{_QUANTITY_RE}')}),
        frozenset({("spec.devices[0].capacity[memory].value",
                    'Invalid value: "forty-gigs": quantities must match the regular '
                    f'expression {_QUANTITY_RE}'),
                   ("spec.devices[0].attributes[driverVersion].version",
                    'Invalid value: "v580.105.08": must be a string compatible with semver.org '
                    'spec 2.0.0')}),
        "a value that does not decode: the server stops at the first decoding error of the "
        "request; dralab names its field and goes on validating (DEVIATIONS)"),
    H + "05f451b/" + E2E + "pod-inline-multiple.yaml:2": _removed(
        "ResourceClaimTemplate", "resource.k8s.io/v1alpha1",
        "resource.k8s.io/v1alpha1 was removed in Kubernetes 1.27, use resource.k8s.io/v1"),
    H + "0e06be5/" + E2E + "pod-inline.yaml:2": _v1alpha2("ResourceClaimTemplate"),
    H + "2b02db1/" + E2E + "pod-external.yaml:2": _v1alpha2("ResourceClaim"),
    H + "71d19c8/" + E2E + "pod-shared.yaml:2": _v1alpha2("ResourceClaim"),
    H + "e0a566e/" + E2E + "resourceclaim.yaml:2": _v1alpha2("ResourceClaim"),
    K + E2E + "pod-inline.yaml:2": _v1alpha2("ResourceClaimTemplate"),
    K + E2E + "resourceclaim.yaml:1": _v1alpha3("ResourceClaim"),
    K + PERF + "resourceclaimtemplate-first-available.yaml:1": _v1alpha3("ResourceClaimTemplate"),
    K + PERF + "resourceclaimtemplate-for-patch.yaml:1": _v1alpha3("ResourceClaimTemplate"),
    K + PERF + "resourceclaimtemplate-toleration.yaml:1": _v1alpha3("ResourceClaimTemplate"),
    GPU + "selectors-claims.yaml:1": _v1alpha2("ResourceClaimTemplate"),
    GPU + "selectors-claims.yaml:2": _v1alpha2("ResourceClaimTemplate"),
    H + "95cca0b/" + PERF + "another-resourceclaimtemplate.yaml:1": _controller("v1beta2"),
    K + PERF + "another-resourceclaimtemplate.yaml:1": _controller("v1"),
    K + E2E + "devicetaintrule.yaml:1": _taint_rule(
        "resource.k8s.io/v1",
        "DeviceTaintRule is served in resource.k8s.io/v1 from 1.37 (KEP-5055 GA), dralab's "
        "version; 1.36 serves it in v1beta2 and v1alpha3 only"),
    K + E2E + "devicetaintpolicy.yaml:1": _taint_rule("resource.k8s.io/v1alpha3", _ALPHA),
    K + PERF + "devicetaintrule.yaml:1": _taint_rule("resource.k8s.io/v1alpha3", _ALPHA),
    K + PERF + "resourceslice-compatibilitygroups-devices.yaml (rendered, .Index=0):1": Known(
        frozenset({(REQUEST, 'ResourceSlice in version "v1" cannot be handled as a ResourceSlice: '
                             'strict decoding error: unknown field '
                             '"spec.devices[0].consumesCounters[0].compatibilityGroups", '
                             'unknown field '
                             '"spec.devices[1].consumesCounters[0].compatibilityGroups"')}),
        frozenset({(f"spec.devices[{i}].consumesCounters[0].compatibilityGroups",
                    "Forbidden: requires feature gate DRADeviceCompatibilityGroups")
                   for i in (0, 1)}),
        "a 1.37 field (alpha gate DRADeviceCompatibilityGroups, off): 1.36 does not have it; "
        "1.37 drops it while the gate is off, dralab names the gate (DEVIATIONS)"),
}


@pytest.fixture
def admin_namespace(kube: Client) -> Iterator[str]:
    """A namespace labelled for admin access, so that claims asking for it can be created
    (the server refuses adminAccess elsewhere; dralab only when the Namespace is in its
    input, which it is not here)."""
    name = f"t-{uuid.uuid4().hex[:10]}"
    kube.create({"apiVersion": "v1", "kind": "Namespace",
                 "metadata": {"name": name, "labels": {ADMIN_ACCESS_LABEL: "true"}}})
    yield name
    with contextlib.suppress(ApiError):
        kube.delete("v1", "Namespace", name)


def test_fixtures_validate_as_the_api_server_does(kube: Client, admin_namespace: str,
                                                  dralab_gates: FeatureGates) -> None:
    fixtures, skipped = dra_fixtures()
    outcomes = [Outcome(f.source, kubectl_verdict(kube, f.obj, admin_namespace),
                        dralab_answer(f.obj, dralab_gates)) for f in fixtures]
    differing = {o.source: o for o in outcomes if not o.agree}
    decision = [o for o in differing.values() if not o.same_decision]
    print(f"\nvalidation conformance: {len(outcomes)} fixtures compared, "
          f"{len(outcomes) - len(differing)} agree, {len(differing)} differ "
          f"({len(decision)} in accept/reject), {len(skipped)} templates skipped")
    for line in skipped:
        print(f"  skipped {line}")
    unexpected = [o.describe() for s, o in differing.items()
                  if s not in KNOWN or (o.server, o.dralab) != (KNOWN[s].server, KNOWN[s].dralab)]
    gone = sorted(set(KNOWN) - set(differing))
    assert not unexpected, "differences not in KNOWN:\n" + "\n".join(unexpected)
    assert not gone, f"listed in KNOWN but agreeing now (drop them): {gone}"
    assert len(outcomes) > 150
