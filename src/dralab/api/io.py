"""Reading and writing Kubernetes manifests: the only place in the api layer that touches files.

Inputs are given like ``kubectl -f``: files, directories (recursively: ``.yaml``,
``.yml``, ``.json``) or ``-`` for standard input. A file may hold several YAML
documents, a JSON object, a JSON array, or a ``kind: List`` (what
``kubectl get -o yaml`` prints); each item becomes its own Document that
remembers where it came from, so errors can name file and document.

YAML is read with YAML 1.1 semantics (PyYAML's C loader), as Kubernetes tooling
does, except that timestamps stay strings, as they do in the API. Big YAML
inputs are parsed in two worker processes: parsing is the whole cost of a load.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import msgspec
import yaml

from .base import KubeObject
from .codec import DecodeError, decode, encode
from .errors import LoadError
from .gcpause import gc_paused as _gc_paused

__all__ = [
    "Document",
    "dump",
    "dumps",
    "load",
    "load_documents",
    "read_documents",
    "to_list",
    "write_atomic",
]

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
# Below this size parsing in-process is faster than shipping work to processes.
PARALLEL_YAML_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Document:
    """One decoded object and where it came from.

    ``source`` is the file path (``-`` for stdin); ``index`` the 1-based document
    number within a multi-document file (``None`` when the file holds one).
    """

    source: str
    index: int | None
    data: Any

    @property
    def where(self) -> str:
        return self.source if self.index is None else f"{self.source}:{self.index}"

    def describe(self) -> str:
        """``FILE[:DOC] Kind namespace/name`` as far as the document tells."""
        data: dict[str, Any] = self.data if isinstance(self.data, dict) else {}
        kind = data.get("kind") if isinstance(data.get("kind"), str) else "<no kind>"
        raw_meta = data.get("metadata")
        meta: dict[str, Any] = raw_meta if isinstance(raw_meta, dict) else {}
        # Only strings are shown: an unrendered template (`name: {{ .Index }}`) parses as a
        # mapping, whose Python repr would mean nothing to the user; the field error says it.
        names = [v for v in (meta.get("name"), meta.get("generateName")) if isinstance(v, str)]
        name = next((n for n in names if n), "<no name>")
        ns = meta.get("namespace")
        ref = f"{ns}/{name}" if isinstance(ns, str) and ns else name
        return f"{self.where} {kind} {ref}"


def _json_key(key: Any) -> str:
    # sigs.k8s.io/yaml turns YAML into JSON, where keys are strings: `on:` becomes "true".
    if isinstance(key, bool):
        return "true" if key else "false"
    if key is None:
        return "null"
    return str(key)


_STR_TAG = "tag:yaml.org,2002:str"
_MAP_TAG = "tag:yaml.org,2002:map"
_SEQ_TAG = "tag:yaml.org,2002:seq"
_MERGE_TAG = "tag:yaml.org,2002:merge"


class _Loader(yaml.CSafeLoader):
    """Safe C loader like Kubernetes': times stay strings, mapping keys become strings.

    Documents are built straight from the node tree: PyYAML's generic constructor
    (generators, recursion bookkeeping) costs 40 % more on large manifests. Merge
    keys and unusual tags go through the generic constructor.
    """

    def construct_document(self, node: yaml.Node) -> Any:
        try:
            return self._build(node)
        except RecursionError:
            raise yaml.constructor.ConstructorError(
                None, None, "recursive or too deeply nested YAML", node.start_mark) from None

    def _build(self, node: yaml.Node) -> Any:
        kind = type(node)
        if kind is yaml.ScalarNode:
            if node.tag == _STR_TAG:
                return node.value
            construct = self.yaml_constructors.get(node.tag)
            if construct is None:
                return self.construct_undefined(node)
            return construct(self, node)
        if kind is yaml.MappingNode and node.tag == _MAP_TAG:
            out: dict[str, Any] = {}
            for key_node, value_node in node.value:
                if key_node.tag == _MERGE_TAG:
                    return self._generic(node)
                key = self._build(key_node)
                out[key if type(key) is str else _json_key(key)] = self._build(value_node)
            return out
        if kind is yaml.SequenceNode and node.tag == _SEQ_TAG:
            return [self._build(item) for item in node.value]
        return self._generic(node)

    def _generic(self, node: yaml.Node) -> Any:
        data = super().construct_document(node)
        if isinstance(data, dict) and any(type(k) is not str for k in data):
            data = {_json_key(k): v for k, v in data.items()}
        return data


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.CSafeLoader.yaml_implicit_resolvers.items()
}



_DOC_MARK = re.compile(r"^(?:---|\.\.\.)(?=[ \t]|$)", re.MULTILINE)


def _split_yaml(text: str) -> list[tuple[int, str]]:
    """Split a YAML stream at document markers; returns (first line number, text) pairs.

    A marker at column 0 always ends a document in YAML, even inside block scalars,
    so splitting on it is exact. Text after ``---`` on the marker line stays with
    the new document.
    """
    chunks: list[tuple[int, str]] = []
    pos = 0
    line = 1
    for match in _DOC_MARK.finditer(text):
        chunks.append((line, text[pos:match.start()]))
        line += text.count("\n", pos, match.end())
        pos = match.end() if match.group(0) == "..." else match.start() + 3
    chunks.append((line, text[pos:]))
    return chunks


def _parse_yaml_chunks(chunks: Sequence[tuple[int, str]]) -> list[tuple[int, Any] | str]:
    """Parse chunks; a chunk that fails becomes its error message (picklable for workers)."""
    out: list[tuple[int, Any] | str] = []
    with _gc_paused():
        for first_line, chunk in chunks:
            try:
                out.append((first_line, yaml.load(chunk, Loader=_Loader)))
            except yaml.YAMLError as exc:
                mark = getattr(exc, "problem_mark", None)
                problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
                where = f"line {mark.line + first_line}: " if mark is not None else ""
                out.append(f"invalid YAML: {where}{problem}")
    return out


def _parse_yaml_chunks_packed(chunks: Sequence[tuple[int, str]]) -> bytes:
    # Workers answer in msgpack: pickling 10^6 small containers costs more than parsing them.
    return msgspec.msgpack.encode(_parse_yaml_chunks(chunks))


def _parse_yaml(text: str, source: str) -> list[Any]:
    chunks = [c for c in _split_yaml(text) if c[1].strip()]
    if len(text) >= PARALLEL_YAML_BYTES and len(chunks) >= 4 and (os.cpu_count() or 1) > 1:
        half = len(chunks) // 2
        with ProcessPoolExecutor(max_workers=2) as pool:
            future = pool.submit(_parse_yaml_chunks_packed, chunks[half:])
            parsed = _parse_yaml_chunks(chunks[:half])
            with _gc_paused():
                parsed += msgspec.msgpack.decode(future.result())
    else:
        parsed = _parse_yaml_chunks(chunks)
    docs: list[Any] = []
    for n, item in enumerate(parsed, start=1):
        if isinstance(item, str):
            where = source if len(parsed) == 1 else f"{source}:{n}"
            raise LoadError(f"{where}: {item}")
        if item[1] is not None:
            docs.append(item[1])
    return docs


def _parse_json(text: str, source: str) -> list[Any]:
    try:
        with _gc_paused():
            data = msgspec.json.decode(text)
    except msgspec.DecodeError as exc:
        raise LoadError(f"{source}: invalid JSON: {exc}") from None
    return data if isinstance(data, list) else [data]


def _looks_like_json(text: str) -> bool:
    stripped = text.lstrip()
    return stripped.startswith(("{", "["))


def _expand_lists(data: Any) -> Iterator[Any]:
    """Flatten ``kind: List`` (and ``*List`` kinds as kubectl prints them) into items."""
    if isinstance(data, dict) and isinstance(data.get("kind"), str) \
            and data["kind"].endswith("List") and isinstance(data.get("items"), list):
        for item in data["items"]:
            yield from _expand_lists(item)
    else:
        yield data


def _documents_from_text(text: str, source: str, hint_json: bool) -> list[Document]:
    if hint_json or _looks_like_json(text):
        try:
            raw_docs = _parse_json(text, source)
        except LoadError:
            if hint_json:
                raise
            raw_docs = _parse_yaml(text, source)  # JSON-looking YAML (flow style)
    else:
        raw_docs = _parse_yaml(text, source)
    items: list[Any] = []
    for doc in raw_docs:
        items.extend(_expand_lists(doc))
    if len(items) == 1:
        return [Document(source, None, items[0])]
    return [Document(source, n, item) for n, item in enumerate(items, start=1)]


def _expand_paths(paths: Iterable[str]) -> Iterator[str]:
    for p in paths:
        if p == "-":
            yield p
            continue
        path = Path(p)
        if path.is_dir():
            found = sorted(
                str(f) for f in path.rglob("*")
                if f.is_file() and f.suffix.lower() in MANIFEST_SUFFIXES
            )
            yield from found
        elif path.exists():
            yield p
        else:
            raise LoadError(f"{p}: no such file or directory")


def read_documents(paths: Iterable[str], stdin: TextIO | None = None) -> list[Document]:
    """Every document in ``paths`` (kubectl ``-f`` semantics), in order. Raise LoadError."""
    docs: list[Document] = []
    for p in _expand_paths(paths):
        if p == "-":
            text = (stdin or sys.stdin).read()
        else:
            try:
                text = Path(p).read_text(encoding="utf-8")
            except UnicodeDecodeError:
                raise LoadError(f"{p}: not a UTF-8 text file") from None
            except OSError as exc:
                raise LoadError(f"{p}: {exc.strerror or exc}") from None
        docs.extend(_documents_from_text(text, p, p.lower().endswith(".json")))
    return docs


def load_documents(docs: Iterable[Document]) -> list[KubeObject]:
    """Decode documents into typed objects; the first bad one raises LoadError naming it."""
    out: list[KubeObject] = []
    with _gc_paused():
        for doc in docs:
            try:
                out.append(decode(doc.data))
            except DecodeError as exc:
                raise LoadError(f"{doc.describe()}: {exc}") from None
    return out


def load(paths: str | Iterable[str], stdin: TextIO | None = None) -> list[KubeObject]:
    """Read and decode every object in ``paths`` (files, directories, ``-``)."""
    if isinstance(paths, str):
        paths = [paths]
    return load_documents(read_documents(paths, stdin))


# --- output --------------------------------------------------------------------

# Strings that YAML 1.2 readers (or YAML 1.1 ones) would take for something else.
_AMBIGUOUS = re.compile(
    r"^(?:[-+]?(?:\d[\d_]*)?\.?\d*(?:[eE][-+]?\d+)?|[-+]?\.?(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)"
    r"|0x[0-9a-fA-F]+|0o[0-7]+|y|Y|yes|Yes|YES|n|N|no|No|NO|on|On|ON|off|Off|OFF"
    r"|true|True|TRUE|false|False|FALSE|null|Null|NULL|~|\d+:\d+(?::\d+)*|)$"
)


class _Dumper(yaml.CSafeDumper):
    """Emits block YAML like kubectl; quotes every string a YAML reader could misread."""


def _represent_str(dumper: _Dumper, value: str) -> yaml.Node:
    if _AMBIGUOUS.match(value):
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="'")
    if "\n" in value:
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", value)


_Dumper.add_representer(str, _represent_str)


def to_list(objects: Iterable[KubeObject | dict[str, Any]]) -> dict[str, Any]:
    """A ``v1`` ``List`` holding the objects, as ``kubectl get -o yaml`` prints several."""
    items = [encode(o) if isinstance(o, KubeObject) else o for o in objects]
    return {"apiVersion": "v1", "items": items, "kind": "List",
            "metadata": {"resourceVersion": ""}}


def dumps(data: KubeObject | dict[str, Any] | list[Any], output: str = "yaml") -> str:
    """Serialise an object (or plain data) as ``yaml`` (keys sorted, like kubectl) or ``json``."""
    plain = encode(data) if isinstance(data, KubeObject) else data
    if output == "json":
        # msgspec's encoder is ~20x faster than json.dumps with indentation.
        return msgspec.json.format(msgspec.json.encode(plain), indent=4).decode() + "\n"
    if output == "yaml":
        return yaml.dump(plain, Dumper=_Dumper, sort_keys=True, default_flow_style=False,
                         allow_unicode=True, width=1 << 16)
    raise ValueError(f"unsupported output format {output!r}: use yaml or json")


def dump(objects: KubeObject | Sequence[KubeObject], output: str = "yaml") -> str:
    """One object as itself, several as a ``v1`` ``List``."""
    if isinstance(objects, KubeObject):
        return dumps(objects, output)
    return dumps(to_list(objects), output)


def write_atomic(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` so that readers see the old or the new file, never half."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with open(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        # mkstemp creates 0600 files; give the result the permissions a plain open() would.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
