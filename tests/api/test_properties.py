"""Property tests: valid objects survive load -> dump -> load; garbage only ever gives LoadError."""

from __future__ import annotations

import string
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dralab.api.codec import decode, encode
from dralab.api.errors import LoadError
from dralab.api.io import _documents_from_text, dumps, load_documents

dns_label = st.from_regex(r"\A[a-z]([a-z0-9-]{0,10}[a-z0-9])?\Z")
c_identifier = st.from_regex(r"\A[A-Za-z_][A-Za-z0-9_]{0,12}\Z")
quantity_text = st.builds(
    lambda n, s: f"{n}{s}", st.integers(0, 10**6),
    st.sampled_from(["", "m", "k", "M", "G", "Ki", "Mi", "Gi"]))
safe_text = st.text(alphabet=string.ascii_letters + string.digits + " .:-_/", max_size=20)

attribute = st.one_of(
    st.builds(lambda v: {"int": v}, st.integers(-(2**40), 2**40)),
    st.builds(lambda v: {"bool": v}, st.booleans()),
    st.builds(lambda v: {"string": v}, safe_text),
    st.builds(lambda a, b, c: {"version": f"{a}.{b}.{c}"},
              st.integers(0, 99), st.integers(0, 99), st.integers(0, 99)),
)
device = st.fixed_dictionaries(
    {"name": dns_label},
    optional={
        "attributes": st.dictionaries(c_identifier, attribute, max_size=4),
        "capacity": st.dictionaries(c_identifier, st.builds(lambda q: {"value": q}, quantity_text),
                                    max_size=3),
        "allowMultipleAllocations": st.booleans(),
    },
)


@st.composite
def resource_slice(draw: st.DrawFn) -> dict[str, Any]:
    node = draw(dns_label)
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node}-gpu", "labels": draw(st.dictionaries(dns_label, dns_label,
                                                                             max_size=2))},
        "spec": {
            "driver": "gpu.example.com",
            "nodeName": node,
            "pool": {"name": node, "generation": draw(st.integers(0, 5)),
                     "resourceSliceCount": 1},
            "devices": draw(st.lists(device, max_size=4, unique_by=lambda d: d["name"])),
        },
        # An unknown top-level field must survive too.
        **({"extra": {"note": draw(safe_text)}} if draw(st.booleans()) else {}),
    }


@st.composite
def resource_claim(draw: st.DrawFn) -> dict[str, Any]:
    requests = []
    for i in range(draw(st.integers(0, 3))):
        exactly: dict[str, Any] = {"deviceClassName": "gpu.example.com"}
        if draw(st.booleans()):
            exactly["count"] = draw(st.integers(1, 8))
        if draw(st.booleans()):
            exactly["selectors"] = [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]
        requests.append({"name": f"r{i}", "exactly": exactly})
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": draw(dns_label), "namespace": draw(dns_label)},
        "spec": {"devices": {"requests": requests}},
    }


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(resource_slice(), resource_claim()), st.sampled_from(["yaml", "json"]))
def test_valid_objects_survive_round_trip(obj: dict[str, Any], output: str) -> None:
    first = decode(obj)
    text = dumps(first, output)
    (again,) = load_documents(_documents_from_text(text, "mem", output == "json"))
    assert encode(again) == encode(first)
    assert again.metadata == first.metadata
    assert again.spec == first.spec  # type: ignore[attr-defined]


garbage_leaf = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False),
                         st.text(max_size=10))
garbage = st.recursive(
    garbage_leaf,
    lambda children: st.one_of(st.lists(children, max_size=4),
                               st.dictionaries(st.text(max_size=8), children, max_size=4)),
    max_leaves=20,
)


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=200))
def test_random_text_gives_only_load_errors(text: str) -> None:
    try:
        load_documents(_documents_from_text(text, "garbage.yaml", False))
    except LoadError as exc:
        assert "\n" not in str(exc)


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(garbage, st.sampled_from(["ResourceSlice", "ResourceClaim", "DeviceClass", "Pod", "Node",
                                 "Job", "DeviceTaintRule"]))
def test_random_structures_give_only_load_errors(junk: Any, kind: str) -> None:
    api = {"Pod": "v1", "Node": "v1", "Job": "batch/v1"}.get(kind, "resource.k8s.io/v1")
    doc = {"apiVersion": api, "kind": kind, "metadata": {"name": "x"}, "spec": junk}
    try:
        encode(decode(doc))
    except LoadError as exc:
        assert "\n" not in str(exc)
