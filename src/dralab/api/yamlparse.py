"""YAML text -> plain data, bounded: the YAML half of ``io``'s reader.

YAML is read with YAML 1.1 semantics (PyYAML's C parser), as Kubernetes tooling
does, except that timestamps stay strings, as they do in the API, and mapping
keys become strings, as sigs.k8s.io/yaml's conversion to JSON makes them.

Hostile input is refused before it costs anything (limits in ``limits.py``):

* aliases: the composed node graph shares aliased nodes, so a 1 KB "billion
  laughs" file is small until it is built. Building counts nodes as go-yaml
  does and, at each alias, measures what the alias would expand to (memoised
  per node, so the measurement is linear in the file) and refuses it before
  building when go-yaml's alias ratio or dralab's aliased-text budget would be
  exceeded. Merge keys (``<<``) are expanded by the same builder, so they are
  counted too.
* nesting: more than MAX_NESTING_DEPTH levels, counted through aliases.
* integers longer than MAX_INTEGER_DIGITS digits.

Duplicate keys keep the last value (as Kubernetes' lenient decoding does) and
are reported with their field paths, for the caller to warn about.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from types import GeneratorType
from typing import Any

import msgspec
import yaml
from yaml.constructor import ConstructorError

from .duplicates import PathPart, paths_of_duplicates
from .gcpause import gc_paused
from .limits import (
    ALIAS_MIN_ALIASED,
    ALIAS_MIN_NODES,
    MAX_ALIASED_CHARS_FLOOR,
    MAX_INTEGER_DIGITS,
    MAX_NESTING_DEPTH,
    allowed_alias_ratio,
    too_deep_message,
)

__all__ = ["ParsedChunk", "parse_yaml_chunks", "parse_yaml_chunks_packed", "split_yaml"]

# (first line of the chunk, data, field paths of duplicate keys) or an error message.
ParsedChunk = tuple[int, Any, list[tuple[PathPart, ...]]] | str

_STR_TAG = "tag:yaml.org,2002:str"
_INT_TAG = "tag:yaml.org,2002:int"
_MAP_TAG = "tag:yaml.org,2002:map"
_SEQ_TAG = "tag:yaml.org,2002:seq"
_MERGE_TAG = "tag:yaml.org,2002:merge"
_ScalarNode = yaml.ScalarNode
_MappingNode = yaml.MappingNode
_SequenceNode = yaml.SequenceNode


def _json_key(key: Any, node: yaml.Node) -> str:
    # sigs.k8s.io/yaml turns YAML into JSON, where keys are strings: `on:` becomes "true".
    # A mapping or sequence cannot become a JSON key; sigs.k8s.io/yaml refuses it too. It is
    # what an unrendered template (`name: {{ .Index }}`) parses into.
    if isinstance(key, (dict, list)):
        raise _error(node, "invalid map key: a mapping or sequence cannot be a key "
                           "(an unrendered template such as {{ .Name }}?)")
    if isinstance(key, bool):
        return "true" if key else "false"
    if key is None:
        return "null"
    return str(key)


def _error(node: yaml.Node, problem: str) -> ConstructorError:
    return ConstructorError(None, None, problem, node.start_mark)


class _Loader(yaml.CSafeLoader):
    """Safe C loader like Kubernetes': times stay strings, mapping keys become strings.

    Documents are built straight from the node tree: PyYAML's generic constructor
    (generators, recursion bookkeeping) costs 40 % more on large manifests, and
    it would share aliased objects instead of counting them. Unusual tags go
    through the generic constructor, after the same measurement as an alias.

    Alias bookkeeping is needed only when the text can hold an anchor and an
    alias at all (an ``&`` and a ``*``); other documents take the plain path.
    """

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._may_alias = "&" in stream and "*" in stream
        self._aliased_chars_limit = max(MAX_ALIASED_CHARS_FLOOR, len(stream))
        self.duplicates: list[tuple[PathPart, ...]] = []
        self._reset()

    def _reset(self) -> None:
        self._seen: set[int] = set()
        self._measured: dict[int, tuple[int, int, int]] = {}
        self._measuring: set[int] = set()
        self._in_alias = False
        self._nodes = 0
        self._aliased = 0
        self._aliased_chars = 0
        self._duplicated: dict[int, tuple[dict[str, Any], list[str]]] = {}

    def construct_document(self, node: yaml.Node) -> Any:
        self._reset()
        try:
            data = self._build(node, 1)
        except RecursionError:  # a safety net: the depth limit comes first
            raise _error(node, "recursive or too deeply nested YAML") from None
        if self._duplicated:
            self.duplicates = paths_of_duplicates(data, self._duplicated)
        return data

    # --- building ------------------------------------------------------------

    def _build(self, node: yaml.Node, depth: int) -> Any:
        # The hot loop of every load: node classes and tags are compared as module
        # globals, plain string keys skip the recursion, and the rare cases (merge
        # keys, duplicates, aliases, other tags) leave it for helpers.
        if self._may_alias and not self._in_alias:
            ident = id(node)
            if ident in self._seen:
                return self._build_alias(node, depth)
            self._seen.add(ident)
            self._nodes += 1
        kind = type(node)
        if kind is _ScalarNode:
            if node.tag == _STR_TAG:
                return node.value
            return self._scalar(node)
        if depth > MAX_NESTING_DEPTH:
            raise _error(node, too_deep_message())
        child = depth + 1
        if kind is _MappingNode and node.tag == _MAP_TAG:
            out: dict[str, Any] = {}
            plain_keys = not self._may_alias  # else every key node is counted
            merges: list[yaml.Node] | None = None
            for key_node, value_node in node.value:
                tag = key_node.tag
                if tag == _STR_TAG and plain_keys and type(key_node) is _ScalarNode:
                    key = key_node.value
                elif tag == _MERGE_TAG:
                    merges = [*(merges or ()), value_node]
                    continue
                else:
                    key = self._build(key_node, child)
                    if type(key) is not str:
                        key = _json_key(key, key_node)
                out[key] = self._build(value_node, child)
            if len(out) != len(node.value):  # merge keys or duplicate keys
                return self._finish_mapping(node, out, merges or [], depth)
            return out
        if kind is _SequenceNode and node.tag == _SEQ_TAG:
            return [self._build(item, child) for item in node.value]
        return self._generic(node, depth)

    def _scalar(self, node: yaml.Node) -> Any:
        if node.tag == _INT_TAG and len(node.value) > MAX_INTEGER_DIGITS:
            raise _error(node, f"integer has {len(node.value)} digits: more than "
                               f"{MAX_INTEGER_DIGITS} (Python's int-str conversion limit)")
        construct = self.yaml_constructors.get(node.tag)
        if construct is None:
            return self.construct_undefined(node)
        try:
            value = construct(self, node)
        except (ValueError, KeyError, AttributeError, TypeError):
            # An explicit tag on a value that is not of it (`!!bool maybe`), or an
            # integer beyond a lower PYTHONINTMAXSTRDIGITS.
            raise _error(node, f"not a valid {node.tag.rsplit(':', 1)[-1]}: "
                               f"{json.dumps(node.value[:64])}") from None
        if isinstance(value, GeneratorType):  # a collection's tag on a scalar (`!!set x`)
            return self._generic(node, 1)
        return value

    def _finish_mapping(self, node: yaml.Node, out: dict[str, Any], merges: list[yaml.Node],
                        depth: int) -> dict[str, Any]:
        explicit = len(node.value) - len(merges)
        duplicated = self._duplicate_keys(node, depth) if len(out) != explicit else []
        if merges:
            # Explicit keys win over merged ones.
            merged = self._merged(node, merges, depth)
            merged.update(out)
            out = merged
        if duplicated:
            self._duplicated[id(out)] = (out, duplicated)
        return out

    def _duplicate_keys(self, node: yaml.Node, depth: int) -> list[str]:
        """The keys of ``node`` given more than once (rare: computed only then)."""
        was_in_alias, self._in_alias = self._in_alias, True  # already counted
        try:
            keys = []
            for key_node, _ in node.value:
                if key_node.tag != _MERGE_TAG:
                    key = self._build(key_node, depth + 1)
                    keys.append(key if type(key) is str else _json_key(key, key_node))
        finally:
            self._in_alias = was_in_alias
        seen: set[str] = set()
        repeated: list[str] = []
        for key in keys:
            if key in seen and key not in repeated:
                repeated.append(key)
            seen.add(key)
        return repeated

    def _merged(self, node: yaml.Node, merges: list[yaml.Node], depth: int) -> dict[str, Any]:
        merged: dict[str, Any] = {}
        # Built last-to-first, so that earlier mappings win, as the YAML merge spec says
        # of `<<: [a, b]` (and PyYAML of `<<: a` given twice).
        for source in reversed(merges):
            maps = source.value if type(source) is yaml.SequenceNode else [source]
            for sub in reversed(maps):
                if type(sub) is not yaml.MappingNode:
                    raise ConstructorError(
                        "while constructing a mapping", node.start_mark,
                        f"expected a mapping or list of mappings for merging, but found {sub.id}",
                        sub.start_mark)
                built = self._build(sub, depth)
                if not isinstance(built, dict):
                    raise _error(sub, "expected a mapping for merging")
                merged.update(built)
        return merged

    def _generic(self, node: yaml.Node, depth: int) -> Any:
        # PyYAML shares aliased objects here instead of copying them, so what the
        # subtree expands to when written out is charged like an alias.
        self._charge(node, depth, aliased=self._may_alias and not self._in_alias)
        data = super().construct_document(node)
        if isinstance(data, dict) and any(type(k) is not str for k in data):
            data = {_json_key(k, node): v for k, v in data.items()}
        return data

    # --- aliases ---------------------------------------------------------------

    def _build_alias(self, node: yaml.Node, depth: int) -> Any:
        self._charge(node, depth, aliased=True)
        self._in_alias = True
        try:
            return self._build(node, depth)
        finally:
            self._in_alias = False

    def _charge(self, node: yaml.Node, depth: int, aliased: bool) -> None:
        """Count what ``node`` expands to; refuse it before it is built if too much."""
        size, height, chars = self._measure(node, MAX_NESTING_DEPTH)
        if depth + height - 1 > MAX_NESTING_DEPTH:
            raise _error(node, too_deep_message())
        if not aliased:
            return
        self._nodes += size
        self._aliased += size
        self._aliased_chars += chars
        ratio = allowed_alias_ratio(self._nodes)
        if self._aliased > ALIAS_MIN_ALIASED and self._nodes > ALIAS_MIN_NODES \
                and self._aliased > ratio * self._nodes:
            raise _error(node, (
                f"document contains excessive aliasing: {self._aliased} of {self._nodes} "
                f"nodes would come from aliases; the limit at this size is {ratio:.0%} "
                f"(go-yaml's alias ratio)"))
        if self._aliased_chars > self._aliased_chars_limit:
            raise _error(node, (
                f"document contains excessive aliasing: aliases would repeat "
                f"{self._aliased_chars} characters; the limit is {self._aliased_chars_limit} "
                f"(the document's size, at least 1 MiB)"))

    def _measure(self, node: yaml.Node, budget: int) -> tuple[int, int, int]:
        """(nodes, container height, scalar characters) of ``node`` fully expanded.

        Memoised per node, so a chain of aliases costs one visit per distinct node;
        the recursion is bounded by the depth limit, and a cycle is an error.
        """
        key = id(node)
        known = self._measured.get(key)
        if known is not None:
            return known
        if type(node) is yaml.ScalarNode:
            result = (1, 0, len(node.value))
        else:
            if budget <= 0:
                raise _error(node, too_deep_message())
            if key in self._measuring:
                raise _error(node, "recursive alias: a node contains itself")
            self._measuring.add(key)
            size, height, chars = 1, 0, 0
            children: Sequence[yaml.Node] = (
                [part for pair in node.value for part in pair]
                if type(node) is yaml.MappingNode else node.value)
            for child in children:
                s, h, c = self._measure(child, budget - 1)
                size += s
                chars += c
                height = max(height, h)
            self._measuring.discard(key)
            result = (size, height + 1, chars)
        self._measured[key] = result
        return result


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.CSafeLoader.yaml_implicit_resolvers.items()
}


_DOC_MARK = re.compile(r"^(?:---|\.\.\.)(?=[ \t]|$)", re.MULTILINE)


def split_yaml(text: str) -> list[tuple[int, str]]:
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


def _parse_one(chunk: str) -> tuple[Any, list[tuple[PathPart, ...]]]:
    loader = _Loader(chunk)
    try:
        return loader.get_single_data(), loader.duplicates
    finally:
        loader.dispose()


def parse_yaml_chunks(chunks: Sequence[tuple[int, str]]) -> list[ParsedChunk]:
    """Parse chunks; a chunk that fails becomes its error message (picklable for workers)."""
    out: list[ParsedChunk] = []
    with gc_paused():
        for first_line, chunk in chunks:
            try:
                data, duplicates = _parse_one(chunk)
                out.append((first_line, data, duplicates))
            except yaml.YAMLError as exc:
                mark = getattr(exc, "problem_mark", None)
                problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
                where = f"line {mark.line + first_line}: " if mark is not None else ""
                out.append(f"invalid YAML: {where}{problem}")
    return out


def parse_yaml_chunks_packed(chunks: Sequence[tuple[int, str]]) -> bytes:
    # Workers answer in msgpack: pickling 10^6 small containers costs more than parsing them.
    return msgspec.msgpack.encode(parse_yaml_chunks(chunks))
