"""Reading and writing Kubernetes manifests: the only place in the api layer that touches files.

Inputs are given like ``kubectl -f``: files, directories (recursively: ``.yaml``,
``.yml``, ``.json``) or ``-`` for standard input. A file may hold several YAML
documents, a JSON object, a JSON array, or a ``kind: List`` (what
``kubectl get -o yaml`` prints); each item becomes its own Document that
remembers where it came from, so errors can name file and document.

YAML is read by ``yamlparse`` and JSON by ``jsonparse``, both within the input
limits of ``limits.py`` (nesting depth, alias expansion, integer length). Big
YAML inputs are parsed in two worker processes (which die with dralab:
``workerpool``): parsing is the whole cost of a load. Only regular files are read:
a FIFO would block, a device never ends; a directory that cannot be listed or a
dangling link is an error, never skipped.
"""

from __future__ import annotations

import os
import re
import stat
import sys
import tempfile
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import msgspec
import yaml

from .base import KubeObject
from .codec import DecodeError, decode, encode
from .duplicates import PathPart, field_path
from .errors import MAX_VALUE_CHARS, DuplicateFieldWarning, LoadError, one_line
from .gcpause import gc_paused as _gc_paused
from .jsonparse import parse_json
from .workerpool import worker_pool
from .yamlparse import parse_yaml_chunks, parse_yaml_chunks_packed, split_yaml

__all__ = [
    "Document",
    "decode_document",
    "dump",
    "dumps",
    "load",
    "load_documents",
    "manifest_files",
    "read_documents",
    "to_list",
    "write_atomic",
    "write_files",
]

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
# Below this size parsing in-process is faster than shipping work to processes.
PARALLEL_YAML_BYTES = 4 * 1024 * 1024
# Warnings about duplicate keys per file; the rest are counted in one line.
MAX_DUPLICATE_WARNINGS = 10


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
        # Names come from the input: a hostile one must not flood or spoof the line.
        return f"{self.where} {_shown(str(kind))} {_shown(ref)}"


def _shown(text: str) -> str:
    # Line breaks stay visible as \n (as in Problem lines); the rest as one_line has it.
    return one_line(text.replace("\r", "\\r").replace("\n", "\\n"), MAX_VALUE_CHARS)


# One parsed document: its data and the field paths (relative to it) of duplicate keys.
_Raw = tuple[Any, list[tuple[PathPart, ...]]]


def _parse_yaml(text: str, source: str) -> list[_Raw]:
    chunks = [c for c in split_yaml(text) if c[1].strip()]
    if len(text) >= PARALLEL_YAML_BYTES and len(chunks) >= 4 and (os.cpu_count() or 1) > 1:
        half = len(chunks) // 2
        with worker_pool(2) as pool:
            future = pool.submit(parse_yaml_chunks_packed, chunks[half:])
            parsed = parse_yaml_chunks(chunks[:half])
            with _gc_paused():
                parsed += msgspec.msgpack.decode(future.result())
    else:
        parsed = parse_yaml_chunks(chunks)
    docs: list[_Raw] = []
    for n, item in enumerate(parsed, start=1):
        if isinstance(item, str):
            where = source if len(parsed) == 1 else f"{source}:{n}"
            raise LoadError(f"{where}: {item}")
        if item[1] is not None:
            # Paths come back from worker processes as lists.
            docs.append((item[1], [tuple(p) for p in item[2]]))
    return docs


def _parse_json(text: str, source: str) -> list[_Raw]:
    data, duplicates = parse_json(text, source)
    if not isinstance(data, list):
        return [(data, duplicates)]
    return [(item, [p[1:] for p in duplicates if p[0] == i]) for i, item in enumerate(data)]


def _looks_like_json(text: str) -> bool:
    stripped = text.lstrip()
    return stripped.startswith(("{", "["))


def _expand_lists(data: Any, prefix: tuple[PathPart, ...] = ()
                  ) -> Iterator[tuple[tuple[PathPart, ...], Any]]:
    """Flatten ``kind: List`` (and ``*List`` kinds as kubectl prints them) into items.

    Yields (path of the item in ``data``, item).
    """
    if isinstance(data, dict) and isinstance(data.get("kind"), str) \
            and data["kind"].endswith("List") and isinstance(data.get("items"), list):
        for i, item in enumerate(data["items"]):
            yield from _expand_lists(item, (*prefix, "items", i))
    else:
        yield prefix, data


def _warn_duplicates(found: list[tuple[str, tuple[PathPart, ...]]], source: str) -> None:
    """One warning per duplicate key (the first few of a file), then a count."""
    for where, path in found[:MAX_DUPLICATE_WARNINGS]:
        warnings.warn(DuplicateFieldWarning(
            f"{where}: {field_path(path)}: duplicate field; the last value is used"),
            stacklevel=4)
    if len(found) > MAX_DUPLICATE_WARNINGS:
        warnings.warn(DuplicateFieldWarning(
            f"{source}: {len(found) - MAX_DUPLICATE_WARNINGS} more duplicate field(s)"),
            stacklevel=4)


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
    items: list[tuple[Any, list[tuple[PathPart, ...]]]] = []
    unplaced: list[tuple[PathPart, ...]] = []  # e.g. a duplicate in a List's own metadata
    for data, duplicates in raw_docs:
        expanded = list(_expand_lists(data))
        first = len(items)
        items.extend((item, []) for _, item in expanded)
        if not duplicates:
            continue
        owners = {prefix: first + k for k, (prefix, _) in enumerate(expanded)}
        lengths = sorted({len(prefix) for prefix in owners}, reverse=True)
        for path in duplicates:
            n = next((n for n in lengths if path[:n] in owners), None)
            if n is None:
                unplaced.append(path)
            else:
                items[owners[path[:n]]][1].append(path[n:])
    if len(items) == 1:
        docs = [Document(source, None, items[0][0])]
    else:
        docs = [Document(source, n, item) for n, (item, _) in enumerate(items, start=1)]
    if unplaced or any(duplicates for _, duplicates in items):
        found = [(source, path) for path in unplaced]
        found += [(doc.describe(), path) for doc, (_, duplicates) in zip(docs, items, strict=True)
                  for path in duplicates]
        _warn_duplicates(found, source)
    return docs


_SPECIAL_FILES = (
    (stat.S_ISFIFO, "a named pipe"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def _not_regular(path: str, mode: int) -> LoadError:
    what = next((name for test, name in _SPECIAL_FILES if test(mode)), "a special file")
    return LoadError(f"{path}: not a regular file or directory ({what}): refusing to read it")


def _stat(path: str) -> os.stat_result:
    try:
        return os.stat(path)
    except FileNotFoundError:
        if os.path.islink(path):
            raise LoadError(f"{path}: dangling symbolic link to "
                            f"{os.readlink(path)!r}") from None
        raise LoadError(f"{path or repr(path)}: no such file or directory") from None
    except OSError as exc:
        raise LoadError(f"{path}: {exc.strerror or exc}") from None


def _walk(root: str) -> list[str]:
    """Manifest files under ``root``, sorted; any directory that cannot be read is an error.

    Like kubectl's ``-f DIR -R``, symbolic links to directories are not followed;
    links to files are, and a dangling one with a manifest suffix is an error.
    """
    def refuse(exc: OSError) -> None:
        raise LoadError(f"{exc.filename or root}: cannot read directory: "
                        f"{exc.strerror or exc}") from None

    found: list[str] = []
    for directory, _, names in os.walk(root, onerror=refuse):
        for name in names:
            if not name.lower().endswith(MANIFEST_SUFFIXES):
                continue
            path = os.path.join(directory, name)
            if not stat.S_ISREG(_stat(path).st_mode):
                raise _not_regular(path, _stat(path).st_mode)
            found.append(path)
    return sorted(found)


def _expand_paths(paths: Iterable[str | os.PathLike[str]]) -> Iterator[str]:
    for path in paths:
        p = os.fspath(path)
        if p == "-":
            yield p
            continue
        mode = _stat(p).st_mode
        if stat.S_ISDIR(mode):
            yield from _walk(p)
        elif stat.S_ISREG(mode):
            yield p
        else:
            raise _not_regular(p, mode)


def manifest_files(paths: Iterable[str | os.PathLike[str]]) -> list[str]:
    """The files ``paths`` name, as ``read_documents`` reads them (directories expanded
    recursively and sorted, ``-`` kept); LoadError as it raises. For callers that read
    file by file (one bad file reported, the others still read)."""
    return list(_expand_paths(paths))


def _utf8(raw: bytes, source: str) -> str:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise LoadError(f"{source}: not a UTF-8 text file (byte {raw[exc.start]:#04x} "
                        f"at offset {exc.start})") from None
    # As reading a file in text mode does: one newline convention.
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def _read_stdin(stdin: TextIO | None) -> str:
    stream = stdin or sys.stdin
    buffer = getattr(stream, "buffer", None)
    if buffer is not None:  # bytes, so that bad encodings are ours to report
        return _utf8(buffer.read(), "-")
    try:
        return stream.read()
    except UnicodeDecodeError:
        raise LoadError("-: not a UTF-8 text file") from None


def _read_file(path: str) -> str:
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError as exc:
        raise LoadError(f"{path}: {exc.strerror or exc}") from None
    return _utf8(raw, path)


def read_documents(paths: Iterable[str | os.PathLike[str]], stdin: TextIO | None = None
                   ) -> list[Document]:
    """Every document in ``paths`` (kubectl ``-f`` semantics), in order. Raise LoadError.

    Duplicate mapping keys keep the last value and are reported as
    DuplicateFieldWarning (the API server's strict field validation would
    refuse them). Input limits: ``limits.py``.
    """
    docs: list[Document] = []
    for p in _expand_paths(paths):
        text = _read_stdin(stdin) if p == "-" else _read_file(p)
        docs.extend(_documents_from_text(text, p, p.lower().endswith(".json")))
    return docs


def decode_document(doc: Document) -> KubeObject:
    """The typed object of ``doc``; raise LoadError naming file, document, object and field."""
    try:
        return decode(doc.data)
    except DecodeError as exc:
        raise LoadError(f"{doc.describe()}: {exc}") from None


def load_documents(docs: Iterable[Document]) -> list[KubeObject]:
    """Decode documents into typed objects; the first bad one raises LoadError naming it."""
    with _gc_paused():
        return [decode_document(doc) for doc in docs]


def load(paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
         stdin: TextIO | None = None) -> list[KubeObject]:
    """Read and decode every object in ``paths``: a path (``str`` or ``pathlib.Path``:
    a file, a directory, ``-`` for stdin) or several."""
    if isinstance(paths, str | os.PathLike):
        paths = [paths]
    return load_documents(read_documents(paths, stdin))


# --- output --------------------------------------------------------------------

# Strings that YAML 1.2 readers (or YAML 1.1 ones) would take for something else.
# Possessive quantifiers: a long run of digits must not make the match backtrack.
_AMBIGUOUS = re.compile(
    r"^(?:[-+]?(?:\d[\d_]*+)?\.?\d*+(?:[eE][-+]?\d++)?|[-+]?\.?(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)"
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


def write_files(directory: str | Path, files: Mapping[str, str]) -> list[str]:
    """Write each ``name: text`` of ``files`` into ``directory`` with ``write_atomic``;
    the paths written, in order."""
    written = []
    for name, text in files.items():
        path = os.path.join(directory, name)
        write_atomic(path, text)
        written.append(path)
    return written
