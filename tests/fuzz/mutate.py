"""Hypothesis building blocks that spoil well-formed inputs: structural mutations of parsed
documents (values replaced by hostile ones, fields dropped or added, subtrees moved, lists
grown, kinds and apiVersions swapped) and byte-level mutations of their text (bytes
inserted, spans deleted or repeated, lines duplicated (duplicate keys) or re-indented,
numbers made huge, other encodings), the ways a careless or hostile user breaks a file.
"""

from __future__ import annotations

import copy
import json
import math
import re
from collections.abc import Callable
from typing import Any

import yaml
from hypothesis import strategies as st

Doc = dict[str, Any]
Path_ = tuple[Any, ...]


def _deep_list(depth: int) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = [value]
    return value


# Values any field may end up holding. Big integers stay below Python's 4,300-digit
# str() limit here (the byte-level mutations write longer ones straight into the text).
HOSTILE_VALUES: list[Any] = [
    None, "", "x", 0, -1, 1, 1.5, -0.0, True, False, [], {}, ["a"], {"a": 1}, [None], [[]],
    2**31, 2**63 - 1, 2**63, 2**64, -(2**63) - 1, 10**30, 10**400,
    math.nan, math.inf, -math.inf, 1e308, 5e-324,
    "1e99999999", "1e-99999999", "9" * 4400, "1" + "0" * 100 + "Gi", "-1Gi", "0.000000001",
    "1Ei", "8Ei", "9Ei", "1e18", "NaN", ".nan", ".inf", "-.inf", "1/0",
    "a\nb", "\x1b[31mred\x1b[0m", "\u202eevil", "nul\x00byte", "\r", "\t", "\u2028",
    "x" * 70_000, "{{.Index}}", "'", '"', "\\", "Ωμέγα", "🙂" * 8, "a" * 64, "A_B",
    "device.driver == 'x'", "device.attributes['x'].y.z(", "true", "null", "~",
    "2h", "1e9h", "-1h", "0s", "nan/h", "inf/h", "1e9/s", "0/h", "-1/h", "1e400/h", "3/s",
    "1000000", "1e9", "h100-80gb-sxm", "no-such-model", "1g.5gb", "dynamic",
    _deep_list(150), _deep_list(20),
]
# Keys a mutation may add to a mapping: real field names, in the wrong places, and odd ones.
KEYS: list[str] = [
    "spec", "status", "metadata", "items", "count", "devices", "requests", "selectors",
    "nodeName", "name", "namespace", "labels", "capacity", "allocatable", "template", "fleet",
    "pools", "workload", "duration", "arrivalRate", "events", "profiles", "pluginConfig",
    "args", "scheduler", "apiVersion", "kind", "<<", "", "x" * 300, "a.b/c", "\x1b[1m",
]
KINDS = ["Pod", "Node", "ResourceClaim", "ResourceClaimTemplate", "ResourceSlice",
         "DeviceClass", "DeviceTaintRule", "Job", "Deployment", "List", "ConfigMap", "Fleet",
         "Scenario", "KubeSchedulerConfiguration", "PriorityClass", "", "x"]
API_VERSIONS = ["v1", "resource.k8s.io/v1", "resource.k8s.io/v1beta1",
                "resource.k8s.io/v1beta2", "resource.k8s.io/v1alpha3", "resource.k8s.io/v9",
                "batch/v1", "apps/v1", "dralab.dev/v1alpha1", "dralab.dev/v2",
                "kubescheduler.config.k8s.io/v1", "kubescheduler.config.k8s.io/v1beta3", "",
                "/"]


def paths(node: Any, prefix: Path_ = ()) -> list[Path_]:
    """Every path to a value inside ``node`` (mapping keys and list indexes)."""
    out = [prefix] if prefix else []
    if isinstance(node, dict):
        for k, v in node.items():
            out.extend(paths(v, (*prefix, k)))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out.extend(paths(v, (*prefix, i)))
    return out


def _get(doc: Any, path: Path_) -> Any:
    for step in path:
        doc = doc[step]
    return doc


def _containers(node: Any, prefix: Path_ = ()) -> list[Path_]:
    out: list[Path_] = []
    if isinstance(node, dict | list):
        out.append(prefix)
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for k, v in items:
            out.extend(_containers(v, (*prefix, k)))
    return out


def mutate_tree(draw: st.DrawFn, root: Any, extra_values: list[Any] | None = None) -> Any:
    """One structural mutation of ``root`` (a document or a list of them), in place where
    it can be; returns the (possibly new) root."""
    values = HOSTILE_VALUES + (extra_values or [])
    all_paths = paths(root)
    op = draw(st.sampled_from(["retype", "retype", "drop", "add", "move", "grow", "kind"]))
    if not all_paths or op == "kind":
        doc = root[0] if isinstance(root, list) and root and isinstance(root[0], dict) else root
        if isinstance(doc, dict):
            if draw(st.booleans()):
                doc["kind"] = draw(st.sampled_from(KINDS))
            else:
                doc["apiVersion"] = draw(st.sampled_from(API_VERSIONS))
        return root
    path = draw(st.sampled_from(all_paths))
    parent = _get(root, path[:-1])
    if op == "retype":
        parent[path[-1]] = copy.deepcopy(draw(st.sampled_from(values)))
    elif op == "drop":
        del parent[path[-1]]
    elif op == "add":
        target = _get(root, draw(st.sampled_from(_containers(root))))
        value = copy.deepcopy(draw(st.sampled_from(values)))
        if isinstance(target, dict):
            target[draw(st.sampled_from(KEYS))] = value
        else:
            target.insert(draw(st.integers(0, len(target))), value)
    elif op == "move":
        # A subtree pasted where another belongs: a claim spec under a pod, a pool in a list
        # of workloads.
        source = draw(st.sampled_from(all_paths))
        parent[path[-1]] = copy.deepcopy(_get(root, source))
    elif op == "grow":
        target = _get(root, path)
        if isinstance(target, list) and target:
            times = draw(st.sampled_from([2, 3, 10, 50]))
            target.extend(copy.deepcopy(target[: max(1, 2000 // times)]) * (times - 1))
        else:
            parent[path[-1]] = [copy.deepcopy(target)] * draw(st.sampled_from([2, 100]))
    return root


def donor_values(docs: list[Any], per_key: int = 40) -> dict[str, list[Any]]:
    """Key -> distinct small values found under that key in ``docs`` (in order): what a
    plausible edit puts in a field, a value another manifest uses there."""
    found: dict[str, list[Any]] = {}
    seen: dict[str, set[str]] = {}

    def walk(node: Any) -> None:
        items = node.items() if isinstance(node, dict) else (
            enumerate(node) if isinstance(node, list) else ())
        for key, value in items:
            if isinstance(key, str) and len(found.setdefault(key, [])) < per_key:
                text = repr(value)
                if len(text) <= 2000 and text not in seen.setdefault(key, set()):
                    seen[key].add(text)
                    found[key].append(value)
            walk(value)

    for doc in docs:
        walk(doc)
    return {k: v for k, v in found.items() if len(v) > 1}


def mild_mutation(draw: st.DrawFn, root: Any, donors: dict[str, list[Any]]) -> Any:
    """One plausible edit, the kind that keeps a manifest loadable so that the run gets to
    the scheduler and the allocator: a field takes a value another manifest has there, a
    number moves a little, a field or an item goes, a document comes twice."""
    all_paths = paths(root)
    if not all_paths:
        return root
    path = draw(st.sampled_from(all_paths))
    parent = _get(root, path[:-1])
    value = parent[path[-1]]
    op = draw(st.sampled_from(["donor", "donor", "donor", "tweak", "drop", "twice"]))
    if op == "donor" and isinstance(path[-1], str) and path[-1] in donors:
        parent[path[-1]] = copy.deepcopy(draw(st.sampled_from(donors[path[-1]])))
    elif op == "tweak" and isinstance(value, int) and not isinstance(value, bool):
        parent[path[-1]] = draw(st.sampled_from([value + 1, value - 1, value * 2, 0, 1, 8, 64]))
    elif op == "drop":
        del parent[path[-1]]
    elif op == "twice" and isinstance(root, list) and root:
        root.append(copy.deepcopy(root[draw(st.integers(0, len(root) - 1))]))
    return root


# --- text ----------------------------------------------------------------------------------

# libyaml when PyYAML has it (the slice files are 76 KB).
DUMPER: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def dump_yaml(docs: list[Any]) -> str:
    return yaml.dump_all(docs, Dumper=DUMPER, sort_keys=False, allow_unicode=True, width=10_000)


def dump_json(docs: list[Any]) -> str:
    """One document as JSON, or several as a v1 List (how kubectl -o json prints them)."""
    body = docs[0] if len(docs) == 1 else {"apiVersion": "v1", "kind": "List", "items": docs}
    return json.dumps(body, indent=2, ensure_ascii=False)


def serialise(draw: st.DrawFn, docs: list[Any]) -> str:
    """YAML (block or flow style) or JSON; values YAML cannot say exactly stay YAML."""
    style = draw(st.sampled_from(["yaml", "yaml", "json", "flow"]))
    try:
        if style == "json":
            return dump_json(docs)
        if style == "flow":
            return yaml.dump_all(docs, Dumper=DUMPER, default_flow_style=True, width=10_000)
        return dump_yaml(docs)
    except (ValueError, RecursionError):
        return dump_yaml(docs)


_INSERTS: list[bytes] = [
    b"\xff", b"\xc3\x28", b"\x00", b"\x1b[2J", "\u202e".encode(), b"\r", b"\t", b"\x0b",
    b": ", b"- ", b"&a ", b"*a ", b"*zz ", b"!!python/object:os.system ", b"!!binary ",
    b"!!set ", b"!!float ", b"{", b"}", b"[", b"]", b"'", b'"', b"\\", b"#", b"|\n", b">-\n",
    b"\n---\n", b"\n...\n", b"%YAML 1.1\n", b"%TAG ! tag:x,2000:\n", b"<<: *a\n",
    b"9" * 5000, b"1e99999999", b".nan", b"-.inf", b"0x7fffffffffffffffff", b"0o777",
    b"\xef\xbb\xbf", "\u2028".encode(), b"\n  ", b"\n- ", b"?", b"@", b"`", b"=cmd|' /C calc'!A0",
]

_NUMBER = re.compile(rb"(?<![\w.])\d+(?:\.\d+)?(?![\w.])")


def _offset(draw: st.DrawFn, data: bytes) -> int:
    return draw(st.integers(0, len(data)))


def _line_spans(data: bytes) -> list[tuple[int, int]]:
    spans, start = [], 0
    for line in data.splitlines(keepends=True):
        spans.append((start, start + len(line)))
        start += len(line)
    return spans


def mutate_bytes(draw: st.DrawFn, data: bytes) -> bytes:
    """One byte-level mutation."""
    op = draw(st.sampled_from([
        "insert", "insert", "delete", "repeat", "dup_line", "swap_lines", "indent", "number",
        "truncate", "crlf", "encoding", "flip"]))
    if not data:
        return draw(st.sampled_from(_INSERTS))
    if op == "insert":
        at = _offset(draw, data)
        return data[:at] + draw(st.sampled_from(_INSERTS)) + data[at:]
    if op in ("delete", "repeat"):
        start = _offset(draw, data)
        end = min(len(data), start + draw(st.integers(1, 200)))
        if op == "delete":
            return data[:start] + data[end:]
        return data[:end] + data[start:end] * draw(st.sampled_from([2, 10, 1000])) + data[end:]
    spans = _line_spans(data)
    if op == "dup_line":  # a duplicate key, or a list item twice
        start, end = draw(st.sampled_from(spans))
        return data[:end] + data[start:end] + data[end:]
    if op == "swap_lines" and len(spans) > 1:
        i = draw(st.integers(0, len(spans) - 2))
        (a0, a1), (b0, b1) = spans[i], spans[i + 1]
        return data[:a0] + data[b0:b1] + data[a0:a1] + data[b1:]
    if op == "indent":
        start, _ = draw(st.sampled_from(spans))
        if draw(st.booleans()):
            return data[:start] + b" " * draw(st.sampled_from([1, 2, 4])) + data[start:]
        return data[:start] + data[start:].lstrip(b" ")[:0] + data[start + 1:]
    if op == "number":
        numbers = list(_NUMBER.finditer(data))
        if numbers:
            m = draw(st.sampled_from(numbers))
            new = draw(st.sampled_from([b"9" * 5000, b"99999999999999999999", b"-1", b"0",
                                        b"1e308", b"1e400", b"nan", b"0.0000000001"]))
            return data[:m.start()] + new + data[m.end():]
    if op == "truncate":
        return data[:_offset(draw, data)]
    if op == "crlf":
        return data.replace(b"\n", b"\r\n")
    if op == "encoding":
        encoding = draw(st.sampled_from(["utf-16", "utf-32", "latin-1", "cp1252", "bom"]))
        if encoding == "bom":
            return b"\xef\xbb\xbf" + data
        return data.decode("utf-8", "replace").encode(encoding, "replace")
    if op == "flip":
        at = draw(st.integers(0, len(data) - 1))
        return data[:at] + bytes([data[at] ^ (1 << draw(st.integers(0, 7)))]) + data[at + 1:]
    return data


def mutated_text(draw: st.DrawFn, docs: list[Any], *,
                 tree: Callable[[st.DrawFn, Any], Any] | None = None) -> bytes:
    """``docs`` with structural mutations, serialised, then byte-level mutations: 0 to 3 of
    each, at least one in all."""
    docs = copy.deepcopy(docs)
    structural = draw(st.integers(0, 3))
    textual = draw(st.integers(0 if structural else 1, 3))
    root: Any = docs
    for _ in range(structural):
        root = (tree or mutate_tree)(draw, root)
    data = serialise(draw, root if isinstance(root, list) else [root]).encode(
        "utf-8", "surrogatepass")
    for _ in range(textual):
        data = mutate_bytes(draw, data)
    return data
