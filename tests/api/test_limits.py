"""Reader limits (issue 16): alias expansion, nesting depth, integer length, duplicate keys.

Each limit is tested at its edge (accepted at the limit, refused one past it, with
the limit named) and against a hostile input that would otherwise hang or exhaust
memory; those run under a CPU-time budget (``tests/cputime.py``: a loaded machine
stretches wall time, not CPU time).
"""

from __future__ import annotations

import io
import json
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from cputime import cpu_budget
from dralab.api.errors import DuplicateFieldWarning, LoadError
from dralab.api.io import dump, load, read_documents
from dralab.api.limits import MAX_INTEGER_DIGITS, MAX_NESTING_DEPTH, allowed_alias_ratio

HEAD = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"


def read_text(tmp_path: Path, text: str, name: str = "in.yaml") -> list[Any]:
    path = tmp_path / name
    path.write_text(text)
    return [d.data for d in read_documents([str(path)])]


def refused(tmp_path: Path, text: str, name: str = "in.yaml") -> str:
    with pytest.raises(LoadError) as info:
        read_text(tmp_path, text, name)
    message = str(info.value)
    assert "\n" not in message and str(tmp_path / name) in message
    return message


# --- aliases -----------------------------------------------------------------------

def laughs(levels: int, width: int = 9) -> str:
    """The issue's reproducer: `levels` levels of `width` aliases of the level below."""
    lines = [f"a0: &a0 [{','.join(['lol'] * width)}]"]
    lines += [f"a{i}: &a{i} [{','.join([f'*a{i - 1}'] * width)}]" for i in range(1, levels + 1)]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("levels", [5, 7, 9, 30])
def test_alias_bomb_is_refused_before_it_is_built(tmp_path: Path, levels: int) -> None:
    with cpu_budget(2.0):
        message = refused(tmp_path, laughs(levels))
    assert "excessive aliasing" in message
    assert "99%" in message and "go-yaml" in message  # the limit is named


def test_alias_bomb_in_json_looking_yaml_and_merge_keys(tmp_path: Path) -> None:
    # Merge keys expand through the same counting builder.
    lines = ["b0: &b0 {" + ", ".join(f"k{j}: [x, x, x]" for j in range(9)) + "}"]
    lines += [f"b{i}: &b{i} {{" + ", ".join(f"k{j}: *b{i - 1}" for j in range(9)) + "}"
              for i in range(1, 9)]
    lines += ["top: {<<: *b8}"]
    with cpu_budget(2.0):
        assert "excessive aliasing" in refused(tmp_path, "\n".join(lines) + "\n")


def test_one_long_string_repeated_by_aliases_is_refused(tmp_path: Path) -> None:
    # Few nodes, but the expansion would repeat 100 x 2 MiB of text.
    text = f"s: &s {'x' * (2 << 20)}\nl: [{', '.join(['*s'] * 100)}]\n" + "n: 1\n" * 10
    with cpu_budget(5.0):
        message = refused(tmp_path, text)
    assert "aliases would repeat" in message and "at least 1 MiB" in message


def test_ordinary_aliases_are_expanded_as_copies(tmp_path: Path) -> None:
    (data,) = read_text(tmp_path, HEAD + "data:\n  a: &x {k: [1, 2]}\n  b: *x\n  c: *x\n")
    assert data["data"] == {"a": {"k": [1, 2]}, "b": {"k": [1, 2]}, "c": {"k": [1, 2]}}
    assert data["data"]["a"] is not data["data"]["b"]  # no shared objects downstream


def test_recursive_alias_is_an_error(tmp_path: Path) -> None:
    assert "recursive alias" in refused(tmp_path, "a: &a [x, *a]\n")


def test_alias_ratio_follows_go_yaml() -> None:
    assert allowed_alias_ratio(1000) == 0.99
    assert allowed_alias_ratio(400_000) == 0.99
    assert allowed_alias_ratio(4_000_000) == pytest.approx(0.10)
    assert allowed_alias_ratio(10**9) == pytest.approx(0.10)
    assert allowed_alias_ratio(2_200_000) == pytest.approx(0.545)


def test_aliases_below_the_floor_are_fine(tmp_path: Path) -> None:
    # 2 levels of 9: about 930 nodes, nearly all from aliases, but under go-yaml's
    # 1,000-node floor; one level more (over 8,000 nodes) is refused above.
    (data,) = read_text(tmp_path, laughs(2))
    assert len(data["a2"]) == 9 and data["a2"][0][0] == ["lol"] * 9


MERGE_CASES = [
    "base: &b {x: 1, y: 2}\nm: {<<: *b, y: 3}\n",
    "a: &a {x: 1}\nb: &b {x: 2, z: 2}\nm: {<<: [*a, *b], w: 0}\n",
    "a: &a {x: 1}\nb: &b {x: 2}\nm: {<<: *a, <<: *b}\n",
    "m: {<<: {x: 1, y: {z: 1}}, x: 5}\n",
    "a: &a {p: &p [1, 2]}\nm: {<<: *a, q: *p}\n",
]


@pytest.mark.parametrize("text", MERGE_CASES)
def test_merge_keys_mean_what_pyyaml_says(tmp_path: Path, text: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DuplicateFieldWarning)
        (data,) = read_text(tmp_path, text)
    assert data == yaml.load(text, Loader=yaml.SafeLoader)


def test_bad_merge_is_a_load_error(tmp_path: Path) -> None:
    assert "expected a mapping or list of mappings" in refused(tmp_path, "m: {<<: [1, 2]}\n")


# --- nesting -------------------------------------------------------------------------

def nested_yaml(levels: int) -> str:
    """A ConfigMap whose document is `levels` containers deep (root mapping included)."""
    inner = levels - 2  # the root mapping and `data`
    return HEAD + "data: {k: " + "[" * inner + "]" * inner + "}\n"


def nested_block_yaml(levels: int) -> str:
    return "- " * levels + "x\n"


def nested_json(levels: int) -> str:
    inner = levels - 2
    return json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},
                       "data": {"k": "@"}}).replace('"@"', "[" * inner + "]" * inner)


@pytest.mark.parametrize(("make", "name"), [(nested_yaml, "in.yaml"),
                                            (nested_block_yaml, "in.yaml"),
                                            (nested_json, "in.json"),
                                            (nested_json, "in.yaml")])  # JSON-looking YAML
def test_nesting_limit_edge(tmp_path: Path, make: Callable[[int], str], name: str) -> None:
    assert read_text(tmp_path, make(MAX_NESTING_DEPTH), name)
    message = refused(tmp_path, make(MAX_NESTING_DEPTH + 1), name)
    assert f"nested more than {MAX_NESTING_DEPTH} levels deep" in message


@pytest.mark.parametrize("levels", [400, 1000, 5000, 100_000])
def test_very_deep_input_is_refused_quickly(tmp_path: Path, levels: int) -> None:
    with cpu_budget(5.0):
        refused(tmp_path, nested_yaml(levels))
        refused(tmp_path, nested_json(levels), "in.json")


def test_depth_counts_through_aliases(tmp_path: Path) -> None:
    half = MAX_NESTING_DEPTH // 2 + 5
    text = "a: &a " + "[" * half + "]" * half + "\nb: " + "[" * half + "*a" + "]" * half + "\n"
    assert "nested more than" in refused(tmp_path, text)


def test_document_at_the_depth_limit_can_be_written_back(tmp_path: Path) -> None:
    # The writer is recursive too: what the reader accepts, it must be able to write.
    (obj,) = load(str(_write(tmp_path, nested_yaml(MAX_NESTING_DEPTH))))
    assert yaml.safe_load(dump(obj))["data"]["k"]
    assert json.loads(dump(obj, "json"))["data"]["k"]
    assert yaml.safe_load(dump([obj, obj]))["items"][1]["data"]["k"]  # in a List: 2 more


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "deep.yaml"
    path.write_text(text)
    return path


# --- integers ----------------------------------------------------------------------

@pytest.mark.parametrize("name", ["in.yaml", "in.json"])
def test_integer_digit_limit(tmp_path: Path, name: str) -> None:
    ok = "9" * MAX_INTEGER_DIGITS
    assert read_text(tmp_path, f'{{"a": {ok}}}\n', name) == [{"a": int(ok)}]
    message = refused(tmp_path, f'{{"a": {ok}9}}\n', name)
    assert f"more than {MAX_INTEGER_DIGITS}" in message and "int-str conversion limit" in message


def test_bare_yaml_integer_reproducer(tmp_path: Path) -> None:
    message = refused(tmp_path, "a: " + "9" * 5000 + "\n")
    assert "line 1" in message and "5000 digits" in message


def test_sexagesimal_integer_is_bounded(tmp_path: Path) -> None:
    # YAML 1.1 base-60 integers multiply per part: length bounds the work too.
    with cpu_budget(2.0):
        refused(tmp_path, "a: 1" + ":59" * 3000 + "\n")


@pytest.mark.parametrize(("value", "message"), [
    ("!!bool maybe", 'not a valid bool: "maybe"'),
    ("!!timestamp x", 'not a valid timestamp: "x"'),
    ("!!int abc", 'not a valid int: "abc"'),
    ("!!float x", 'not a valid float: "x"'),
    ('!!set "python"', "expected a mapping node, but found scalar"),
    ("!!seq x", "expected a sequence node, but found scalar"),
])
def test_explicit_tags_on_wrong_values_are_load_errors(tmp_path: Path, value: str,
                                                        message: str) -> None:
    assert message in refused(tmp_path, HEAD + f"data: {{k: {value}}}\n")


# --- duplicate keys ------------------------------------------------------------------

def duplicate_warnings(tmp_path: Path, text: str, name: str = "in.yaml") -> list[str]:
    path = tmp_path / name
    path.write_text(text)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        read_documents([str(path)])
    return [str(w.message).replace(str(path), "F") for w in caught
            if issubclass(w.category, DuplicateFieldWarning)]


def test_duplicate_keys_warn_with_file_document_and_field(tmp_path: Path) -> None:
    text = ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, name: b}\n"
            "data: {x: '1', y: '2', x: '3'}\n---\n"
            "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ns}\n"
            "spec: {containers: [{name: c, image: i, image: j}]}\n")
    assert duplicate_warnings(tmp_path, text) == [
        "F:1 ConfigMap b: metadata.name: duplicate field; the last value is used",
        "F:1 ConfigMap b: data.x: duplicate field; the last value is used",
        "F:2 Pod ns/p: spec.containers[0].image: duplicate field; the last value is used",
    ]


def test_duplicate_keys_in_json_lists_and_arrays(tmp_path: Path) -> None:
    item = '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "%s"}%s}'
    text = "[" + item % ("a", "") + ", " + item % ("b", ', "data": {"k": "1", "k": "2"}') + "]"
    assert duplicate_warnings(tmp_path, text, "in.json") == [
        "F:2 ConfigMap b: data.k: duplicate field; the last value is used"]
    text = ('{"apiVersion": "v1", "kind": "List", "metadata": {"x": 1, "x": 2}, "items": ['
            + item % ("a", ', "data": {"k": "1", "k": "2"}') + "]}")
    assert duplicate_warnings(tmp_path, text, "in.json") == [
        "F: metadata.x: duplicate field; the last value is used",
        "F ConfigMap a: data.k: duplicate field; the last value is used"]


def test_no_false_duplicates(tmp_path: Path) -> None:
    # Merge keys override by design; escaped quotes and colons in strings are not keys.
    assert duplicate_warnings(tmp_path, "a: &a {x: 1}\nm: {<<: *a, x: 2}\n") == []
    text = json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},
                       "data": {"j": json.dumps({"a": 1, "b": {"c": '"":'}})}})
    assert duplicate_warnings(tmp_path, text, "in.json") == []


def test_many_duplicates_are_counted_not_listed(tmp_path: Path) -> None:
    text = HEAD + "data: {" + ", ".join(f"k{i}: '1', k{i}: '2'" for i in range(50)) + "}\n"
    found = duplicate_warnings(tmp_path, text)
    assert len(found) == 11 and found[-1] == "F: 40 more duplicate field(s)"


json_keys = st.sampled_from(["a", "b", 'q"', "c\\", "d:", "e\\\":"])
json_scalars = st.one_of(st.integers(-5, 5), st.sampled_from(['x":', "\\", 'y\\":', "", "z"]))


@st.composite
def json_with_pairs(draw: st.DrawFn, depth: int = 3) -> str:
    """JSON text built from key/value pairs, so that keys may repeat."""
    if depth == 0 or draw(st.booleans()):
        return json.dumps(draw(json_scalars))
    if draw(st.booleans()):
        items = draw(st.lists(json_with_pairs(depth - 1), max_size=3))
        return "[" + ", ".join(items) + "]"
    pairs = draw(st.lists(st.tuples(json_keys, json_with_pairs(depth - 1)), max_size=4))
    return "{" + ", ".join(f"{json.dumps(k)}: {v}" for k, v in pairs) + "}"


@settings(max_examples=200, deadline=None)
@given(body=json_with_pairs())
def test_json_duplicate_detection_is_exact(tmp_path_factory: pytest.TempPathFactory,
                                           body: str) -> None:
    repeated: dict[int, int] = {}  # id(object) -> keys given more than once

    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out = dict(pairs)
        repeated[id(out)] = len(pairs) - len(out) and len({k for k, _ in pairs
                                                           if [p[0] for p in pairs].count(k) > 1})
        return out

    text = '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "x": ' \
        + body + "}"
    root = json.loads(text, object_pairs_hook=hook)
    # Only objects that survive count: a duplicate inside an overwritten value is gone.
    truth, stack = 0, [root]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            truth += repeated[id(node)]
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    found = duplicate_warnings(tmp_path_factory.mktemp("j"), text, "in.json")
    assert len(found) == min(truth, 10) + (truth > 10)


# --- encodings and files ----------------------------------------------------------------

def test_non_utf8_stdin_is_a_load_error() -> None:
    stdin = io.TextIOWrapper(io.BytesIO(b"kind: Node\xff\n"), encoding="utf-8")
    with pytest.raises(LoadError, match=r"^-: not a UTF-8 text file \(byte 0xff at offset 10\)"):
        read_documents(["-"], stdin=stdin)


def test_non_utf8_file_is_a_load_error(tmp_path: Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes("name: caf\xe9\n".encode("latin-1"))
    with pytest.raises(LoadError, match="not a UTF-8 text file"):
        read_documents([str(path)])


def test_crlf_stdin_splits_documents_like_a_file() -> None:
    text = b"apiVersion: v1\r\nkind: ConfigMap\r\n---\r\napiVersion: v1\r\nkind: Secret\r\n"
    docs = read_documents(["-"], stdin=io.TextIOWrapper(io.BytesIO(text), encoding="utf-8"))
    assert [d.data["kind"] for d in docs] == ["ConfigMap", "Secret"]
