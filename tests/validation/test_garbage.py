"""Validation never raises, whatever garbage sits anywhere in otherwise valid objects."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dralab.api.errors import FieldError
from dralab.api.features import FeatureGates
from dralab.validation import validate_across, validate_object

from .builders import BUILDERS

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12),
    st.sampled_from(["", "-1", "1.5", "0", "GPU", "a/b/c", "Exists", "All", "10Gi", "v1.2.3"]),
)
garbage = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.one_of(st.text(max_size=8), st.integers(0, 3)), inner, max_size=4),
    ),
    max_leaves=12,
)


def _slots(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every (container path, key) in a document, so garbage can go anywhere."""
    out: list[tuple[Any, ...]] = []
    if isinstance(node, dict):
        for k, v in node.items():
            out.append((*path, k))
            out.extend(_slots(v, (*path, k)))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out.append((*path, i))
            out.extend(_slots(v, (*path, i)))
    return out


def _replace(doc: Any, slot: tuple[Any, ...], value: Any) -> None:
    node = doc
    for k in slot[:-1]:
        node = node[k]
    node[slot[-1]] = value


def _base(name: str) -> Any:
    return BUILDERS[name]()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), base=st.sampled_from(["slice", "allocated", "counters"]))
def test_garbage_in_slices_and_claims(data: st.DataObject, base: str) -> None:
    doc = _base(base)
    slots = _slots(doc)
    for _ in range(data.draw(st.integers(1, 4))):
        slot = data.draw(st.sampled_from(slots))
        try:
            _replace(doc, slot, data.draw(garbage))
        except (KeyError, IndexError, TypeError):
            continue  # an earlier replacement removed this slot's parent
    errors = validate_object(doc)
    assert isinstance(errors, list)
    assert all(isinstance(e, FieldError) for e in errors)
    for e in errors:
        str(e)  # every error must also render


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), base=st.sampled_from(sorted(BUILDERS)))
def test_garbage_in_every_kind(data: st.DataObject, base: str) -> None:
    doc = _base(base)
    slot = data.draw(st.sampled_from(_slots(doc)))
    _replace(doc, slot, data.draw(garbage))
    errors = validate_object(doc)
    assert all(isinstance(e, FieldError) for e in errors)
    for e in errors:
        str(e)


@settings(max_examples=100, deadline=None)
@given(doc=st.dictionaries(st.sampled_from(["apiVersion", "kind", "metadata", "spec", "status"]),
                           garbage),
       kind=st.sampled_from(sorted(BUILDERS)))
def test_garbage_whole_documents(doc: dict[str, Any], kind: str) -> None:
    template = BUILDERS[kind]()
    doc = {**doc, "apiVersion": template["apiVersion"], "kind": template["kind"]}
    assert all(isinstance(e, FieldError) for e in validate_object(doc))


_ALL_ON = FeatureGates.parse("GenericWorkload=true,DRAWorkloadResourceClaims=true")


def _podgroup() -> Any:
    return {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
            "metadata": {"name": "g", "namespace": "team-a"},
            "spec": {"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "t"}]}}


def _grouped_deployment() -> Any:
    doc = BUILDERS["deployment"]()
    doc["spec"]["template"]["spec"]["schedulingGroup"] = {"podGroupName": "g"}
    doc["spec"]["template"]["spec"]["resourceClaims"] = [
        {"name": "gpu", "resourceClaimTemplateName": "t"}]
    return doc


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_garbage_across_objects(data: st.DataObject) -> None:
    # Namespaces, admin claims and grouped workloads with garbage anywhere: the checks
    # across objects never raise and every problem renders.
    docs = [BUILDERS["namespace"](), BUILDERS["allocated"](), BUILDERS["template"](),
            _podgroup(), _grouped_deployment()]
    docs[1]["spec"]["devices"]["requests"][0]["exactly"]["adminAccess"] = True
    docs[0]["metadata"]["labels"] = {}
    for _ in range(data.draw(st.integers(1, 4))):
        n = data.draw(st.integers(0, len(docs) - 1))
        slot = data.draw(st.sampled_from([(), *_slots(docs[n])]))
        try:
            if slot:
                _replace(docs[n], slot, data.draw(garbage))
            else:
                docs[n] = data.draw(garbage)
        except (KeyError, IndexError, TypeError):
            continue
    for n, error in validate_across(docs, _ALL_ON):
        assert 0 <= n < len(docs)
        str(error)
