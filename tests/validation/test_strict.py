"""Strict field validation and value quoting, in kube-apiserver v1.36.2's words.

The expected texts are the server's answers to a dry-run create with
``fieldValidation=Strict`` (kubectl's default), unless a test says it shows one of dralab's
deliberate differences (``dralab.validation.DEVIATIONS``); they are taken from the conformance tier
(tests/k8s/test_validation_conformance.py, which compares the same fixtures with the real
server); this file needs no binaries.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from dralab.api.errors import format_value, go_quote
from dralab.api.io import Document
from dralab.validation import validate_documents

ROOT = Path(__file__).resolve().parents[2]
CONFORMANCE = ROOT / "tests" / "data" / "invalid" / "conformance.yaml"
RFC1123 = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
           "'-' or '.', and must start and end with an alphanumeric character (e.g. "
           "'example.com', regex used for validation is "
           "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
LABEL_VALUE = ("a valid label must be an empty string or consist of alphanumeric characters, "
               "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
               "'MyValue',  or 'my_value',  or '12345', regex used for validation is "
               "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")


def _answers(obj: dict[str, Any], *, stored: bool = False) -> list[str]:
    return [p.message or str(p.error)
            for p in validate_documents([Document("<test>", None, obj)], stored=stored)]


def _conformance(n: int) -> dict[str, Any]:
    docs = list(yaml.safe_load_all(CONFORMANCE.read_text()))
    return dict(docs[n - 1])


def test_unknown_fields_are_the_whole_answer_in_document_order() -> None:
    # conformance.yaml:1 also has an invalid name; the server decodes first and stops there.
    assert _answers(_conformance(1)) == [
        'ResourceClaim in version "v1" cannot be handled as a ResourceClaim: strict decoding '
        'error: unknown field "metadata.lables", unknown field '
        '"spec.devices.requests[0].exactly.selector"']


def test_unknown_field_under_a_map_key_is_named_with_dots() -> None:
    assert _answers(_conformance(2)) == [
        'ResourceSlice in version "v1" cannot be handled as a ResourceSlice: strict decoding '
        'error: unknown field "spec.devices[0].attributes.model.strng"']


def test_unknown_status_field_is_rejected() -> None:
    # tests/data/kubectl/claim-allocated.yaml: its status carries a field from the future.
    claim = yaml.safe_load((ROOT / "tests/data/kubectl/claim-allocated.yaml").read_text())
    assert _answers(claim) == [
        'ResourceClaim in version "v1" cannot be handled as a ResourceClaim: strict decoding '
        'error: unknown field "status.futureField"']


def test_website_claim_with_expression_beside_cel() -> None:
    # kubernetes/website content/en/examples/dra/resourceclaim.yaml (copied unchanged).
    claim = yaml.safe_load((ROOT / "tests/data/upstream/website/content/en/examples/dra/"
                                   "resourceclaim.yaml").read_text())
    assert _answers(claim) == [
        'ResourceClaim in version "v1" cannot be handled as a ResourceClaim: strict decoding '
        'error: unknown field "spec.devices.requests[0].exactly.selectors[0].expression"']


def test_stored_state_is_not_strict() -> None:
    # A dump of a newer cluster may hold fields dralab does not know; they were accepted there.
    claim = yaml.safe_load((ROOT / "tests/data/kubectl/claim-allocated.yaml").read_text())
    assert _answers(claim, stored=True) == []


def test_a_removed_field_keeps_its_own_error_and_validation_goes_on() -> None:
    # Deliberate: the server says only 'unknown field "spec.spec.controller"' (strict decoding).
    template = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                "metadata": {"name": "Bad_Name"},
                "spec": {"spec": {"controller": "gpu.example.com", "devices": {}}}}
    assert _answers(template) == [
        'metadata.name: Invalid value: "Bad_Name": ' + RFC1123,
        "spec.spec.controller: Forbidden: field removed in Kubernetes 1.32 with the "
        "DRAControlPlaneController gate; the scheduler allocates every claim"]


def test_v1beta2_has_the_same_fields() -> None:
    assert _answers(_conformance(5)) == [
        'DeviceClass in version "v1beta2" cannot be handled as a DeviceClass: strict decoding '
        'error: unknown field "spec.selector"']


def test_v1beta1_is_not_checked_for_unknown_fields() -> None:
    # A known gap: v1beta1 has a layout of its own, read by conversion.
    cls = {"apiVersion": "resource.k8s.io/v1beta1", "kind": "DeviceClass",
           "metadata": {"name": "gpu"}, "spec": {"selector": []}}
    assert _answers(cls) == []


def test_object_meta_fields_dralab_does_not_model_are_known() -> None:
    cls = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
           "metadata": {"name": "gpu", "selfLink": "/x", "deletionGracePeriodSeconds": 0,
                        "managedFields": [{"manager": "kubectl", "fieldsV1": {"f:x": {}}}]}}
    assert _answers(cls) == []


def test_non_ascii_value_is_quoted_as_go_does() -> None:
    # conformance.yaml:3: Go's %q keeps printable characters, JSON would say "gp\u00fc".
    assert _answers(_conformance(3)) == ['metadata.name: Invalid value: "gpü": ' + RFC1123]


def test_unprintable_value_is_escaped_as_go_does() -> None:
    # conformance.yaml:4: U+202E (right-to-left override) is not printable: \u202e.
    assert _answers(_conformance(4)) == [
        'metadata.labels: Invalid value: "a\\u202eb": ' + LABEL_VALUE]


@pytest.mark.parametrize(("text", "quoted"), [
    # Go strconv.Quote (go/src/strconv/quote.go, appendEscapedRune), which %q uses.
    ("gpü 日本 😀", '"gpü 日本 😀"'),
    ('say "hi" \\ bye', '"say \\"hi\\" \\\\ bye"'),
    ("\a\b\f\n\r\t\v", '"\\a\\b\\f\\n\\r\\t\\v"'),
    ("\x00\x1b\x7f", '"\\x00\\x1b\\x7f"'),
    ("\u00a0\u2028\ufeff", '"\\u00a0\\u2028\\ufeff"'),
    ("\U000e0001", '"\\U000e0001"'),
    ("\ud800", '"\ufffd"'),  # Go's JSON decoding made a lone surrogate U+FFFD
])
def test_go_quote(text: str, quoted: str) -> None:
    assert go_quote(text) == quoted


def test_long_values_are_cut_after_quoting_the_kept_part() -> None:
    assert format_value("ü" * 300) == '"' + "ü" * 256 + '"... (44 more characters)'
