"""Reading and writing manifests: formats, provenance, lossless round trips, error lines."""

from __future__ import annotations

import io
import json
from pathlib import Path

import msgspec
import pytest
import yaml

from dralab.api.codec import decode, encode
from dralab.api.core import Node, Pod
from dralab.api.errors import LoadError
from dralab.api.io import dump, dumps, load, read_documents, write_atomic
from dralab.api.quantity import parse_quantity
from dralab.api.resource import DeviceClass, ResourceClaim, ResourceSlice

DATA = Path(__file__).parent.parent / "data"
EXAMPLES = sorted((DATA / "examples").glob("*.yaml"))
KUBECTL = sorted((DATA / "kubectl").glob("*.yaml"))


@pytest.mark.parametrize("path", EXAMPLES + KUBECTL, ids=lambda p: p.name)
def test_round_trip_is_lossless(path: Path) -> None:
    docs = read_documents([str(path)])
    for doc in docs:
        assert encode(decode(doc.data)) == doc.data


@pytest.mark.parametrize("path", EXAMPLES + KUBECTL, ids=lambda p: p.name)
def test_dump_then_load_gives_same_objects(path: Path, tmp_path: Path) -> None:
    objects = load(str(path))
    out = tmp_path / "out.yaml"
    out.write_text(dump(objects))
    again = load(str(out))
    assert [encode(o) for o in again] == [encode(o) for o in objects]
    out_json = tmp_path / "out.json"
    out_json.write_text(dump(objects, "json"))
    assert [encode(o) for o in load(str(out_json))] == [encode(o) for o in objects]


def test_typed_view_of_allocated_claim() -> None:
    (claim,) = load(str(DATA / "kubectl" / "claim-allocated.yaml"))
    assert isinstance(claim, ResourceClaim)
    assert claim.ref == "ml/trainer-0-gpu-x8f2k"
    request = claim.spec.devices.requests[0]
    assert request.exactly is not None and request.exactly.count == 2
    assert claim.allocated
    assert claim.status.allocation is not None
    assert [r.device for r in claim.status.allocation.devices.results] == ["gpu-0", "gpu-1"]
    # The UID looks like a float to YAML 1.2 readers; it must stay a string.
    assert claim.metadata.uid == "0969400e51393844"


def test_unknown_fields_survive_typed_updates() -> None:
    (claim,) = load(str(DATA / "kubectl" / "claim-allocated.yaml"))
    assert isinstance(claim, ResourceClaim)
    cleared = msgspec.structs.replace(
        claim, status=msgspec.structs.replace(claim.status, allocation=None, reserved_for=[]))
    out = encode(cleared)
    assert "allocation" not in out["status"]
    assert out["status"]["futureField"] == {"somethingNew": True}  # unknown field kept
    assert out["metadata"]["managedFields"][0]["manager"] == "kube-controller-manager"


def test_list_is_flattened_and_unknown_kinds_kept() -> None:
    docs = read_documents([str(DATA / "kubectl" / "list.yaml")])
    assert [d.index for d in docs] == [1, 2, 3]
    objects = load(str(DATA / "kubectl" / "list.yaml"))
    assert [type(o).__name__ for o in objects] == ["DeviceClass", "DeviceClass", "UnknownObject"]
    assert isinstance(objects[0], DeviceClass)
    # YAML 1.1 reads the key `on` as a boolean; kubectl then writes it as "true".
    assert encode(objects[2])["data"] == {"true": "yes", "count": "010"}


def test_multi_document_and_types() -> None:
    node, pod = load(str(DATA / "kubectl" / "pod-node.yaml"))
    assert isinstance(node, Node) and isinstance(pod, Pod)
    assert node.status.allocatable["nvidia.com/gpu"] == parse_quantity("8")
    assert node.status.allocatable["cpu"] == parse_quantity("191.5")
    assert pod.spec.resource_claims[0].resource_claim_template_name == "two-h100"
    assert pod.spec.containers[0].resources.claims[0].name == "gpu"


def test_directory_is_read_recursively_in_order(tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "slice.yaml").write_text(EXAMPLES[1].read_text())
    (tmp_path / "a.json").write_text(json.dumps({
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "x"}}))
    (tmp_path / "notes.txt").write_text("not a manifest")
    objects = load(str(tmp_path))
    assert [type(o).__name__ for o in objects] == ["DeviceClass", "ResourceSlice"]


def test_stdin() -> None:
    text = EXAMPLES[2].read_text()
    objects = load("-", stdin=io.StringIO(text))
    assert isinstance(objects[0], ResourceSlice)


def test_json_array_and_single_object(tmp_path: Path) -> None:
    cls = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "c"}}
    (tmp_path / "one.json").write_text(json.dumps(cls))
    (tmp_path / "many.json").write_text(json.dumps([cls, cls]))
    assert len(load(str(tmp_path / "one.json"))) == 1
    docs = read_documents([str(tmp_path / "many.json")])
    assert [d.where for d in docs] == [f"{tmp_path / 'many.json'}:1", f"{tmp_path / 'many.json'}:2"]


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ("apiVersion: v1\nkind: Pod\nmetadata: {name: [unclosed\n", "invalid YAML"),
        ("apiVersion: v1\n  bad: indent\n", "invalid YAML"),
        ("- just\n- a list\n", "a document must be a mapping"),
        ("kind: Pod\nmetadata: {name: p}\n",
         "Pod p: has no apiVersion (a Pod needs apiVersion: v1)"),
        ("apiVersion: resource.k8s.io/v1alpha2\nkind: ResourceClaim\nmetadata: {name: c}\n",
         'ResourceClaim c: no matches for kind "ResourceClaim" in version '
         '"resource.k8s.io/v1alpha2"; resource.k8s.io/v1alpha2 was removed in Kubernetes 1.31, '
         "use resource.k8s.io/v1"),
        ("apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\n"
         "spec: {devices: 3}\n", "spec.devices"),
        ("apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\n"
         "spec: {devices: [{name: d, capacity: {memory: {value: forty gigs}}}]}\n",
         "spec.devices[0].capacity"),
    ],
)
def test_bad_input_is_one_line_load_error(tmp_path: Path, content: str, fragment: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(content)
    with pytest.raises(LoadError) as info:
        load(str(path))
    message = str(info.value)
    assert "\n" not in message
    assert str(path) in message
    assert fragment in message


def test_yaml_error_names_document_and_file_line(tmp_path: Path) -> None:
    path = tmp_path / "multi.yaml"
    path.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n---\n"
                    "apiVersion: v1\nkind: Pod\nmetadata: {name: [b\n")
    with pytest.raises(LoadError, match=r"multi\.yaml:2: invalid YAML: line \d+"):
        read_documents([str(path)])


def test_missing_file() -> None:
    with pytest.raises(LoadError, match="no such file or directory"):
        load("/nonexistent/slices.yaml")


def test_inputs_are_not_modified(tmp_path: Path) -> None:
    path = tmp_path / "claim.yaml"
    original = (DATA / "kubectl" / "claim-allocated.yaml").read_bytes()
    path.write_bytes(original)
    dump(load(str(path)))
    assert path.read_bytes() == original


def test_yaml_output_quotes_ambiguous_strings() -> None:
    text = dumps({"a": "0969400e51393844", "b": "yes", "c": "1.5", "d": "plain", "e": "8"})
    assert yaml.safe_load(text) == {"a": "0969400e51393844", "b": "yes", "c": "1.5",
                                    "d": "plain", "e": "8"}
    assert "'0969400e51393844'" in text and "'yes'" in text and "d: plain" in text


def test_list_output_shape() -> None:
    objects = load(str(EXAMPLES[1]))
    out = yaml.safe_load(dump(objects))
    assert out["apiVersion"] == "v1" and out["kind"] == "List"
    assert out["items"][0]["kind"] == "ResourceSlice"


def test_new_objects_encode_with_kind_first_and_canonical_quantities() -> None:
    claim = ResourceClaim()
    out = encode(claim)
    assert list(out)[:2] == ["apiVersion", "kind"]
    assert out["apiVersion"] == "resource.k8s.io/v1" and out["kind"] == "ResourceClaim"
    node = decode({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"},
                   "status": {"capacity": {"memory": "1024Mi", "cpu": 0.5}}})
    assert encode(node)["status"]["capacity"] == {"memory": "1Gi", "cpu": "500m"}


def test_write_atomic(tmp_path: Path) -> None:
    target = tmp_path / "deep" / "out.yaml"
    write_atomic(target, "a: 1\n")
    write_atomic(target, "a: 2\n")
    assert target.read_text() == "a: 2\n"
    assert [p.name for p in target.parent.iterdir()] == ["out.yaml"]


def test_yaml_features_anchors_merge_keys_and_kubernetes_scalars(tmp_path: Path) -> None:
    path = tmp_path / "anchors.yaml"
    path.write_text(
        "apiVersion: v1\nkind: ConfigMap\n"
        "metadata: {name: c, creationTimestamp: 2026-01-01T00:00:00Z}\n"
        "data:\n  base: &b {x: '1'}\n  copy: *b\n  merged: {<<: *b, y: '2'}\n"
        "  on: 'yes'\n  1: '2'\n")
    (doc,) = read_documents([str(path)])
    assert doc.data["metadata"]["creationTimestamp"] == "2026-01-01T00:00:00Z"
    assert doc.data["data"] == {"base": {"x": "1"}, "copy": {"x": "1"},
                                "merged": {"x": "1", "y": "2"}, "true": "yes", "1": "2"}


def test_unknown_yaml_tag_is_load_error(tmp_path: Path) -> None:
    path = tmp_path / "tag.yaml"
    path.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: !custom x\n")
    with pytest.raises(LoadError, match="could not determine a constructor"):
        read_documents([str(path)])


@pytest.mark.parametrize("text, line", [
    ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: {{ .Index }}\n", 4),
    ("apiVersion: v1\nkind: Pod\nmetadata: {name: {{ .Index }}}\n", 3),
    ("a:\n  ? [x, y]\n  : 1\n", 2),
])
def test_mapping_or_sequence_as_key_is_a_load_error(tmp_path: Path, text: str,
                                                    line: int) -> None:
    # sigs.k8s.io/yaml cannot turn such a key into JSON; an unrendered `{{ .X }}` is one.
    path = tmp_path / "t.yaml"
    path.write_text(text)
    with pytest.raises(LoadError, match=rf"line {line}: invalid map key") as err:
        read_documents([str(path)])
    assert "{'" not in str(err.value) and "None" not in str(err.value)
