"""Where each part of a YAML file is: its node tree with positions, for editing it as text.

``roundtrip`` changes a file by rewriting only the lines that change; this
module says which lines those are. Documents are composed by PyYAML with the
resolution ``dralab.api.yamlparse`` uses (YAML 1.1, as Kubernetes reads it;
timestamps stay strings; keys become JSON keys), so a node's value here is the
value every verb reads.

Positions come from the composer's marks (0-based line and column, in
characters). Three facts the marks do not give directly are derived here:
where a node's text really ends (a block collection's end mark is the next
token, past comments and blank lines), which lines are inside a multi-line
scalar (a ``#`` there is text, not a comment), and where a line's trailing
comment starts. A node reached twice (an alias) has the marks of its anchor,
not of the alias, so asking where it is raises ``Unplaceable``.

Pure: text in, positions and values out.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import yaml

__all__ = [
    "Layout", "Unplaceable", "compose_documents", "is_block_scalar", "json_key", "node_value",
]

_STR = "tag:yaml.org,2002:str"
_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"
_MERGE = "tag:yaml.org,2002:merge"
_BLOCK_HEADER = re.compile(r"[|>][0-9+-]*")


class Unplaceable(Exception):
    """A node whose text cannot be located or edited in place (aliases, merge keys, ...)."""


class _Loader(yaml.CSafeLoader):
    """Composes only; the implicit types are those of ``dralab.api.yamlparse``."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.CSafeLoader.yaml_implicit_resolvers.items()
}


def compose_documents(text: str) -> list[yaml.Node]:
    """The root node of every document of ``text`` (yaml.YAMLError if it is not YAML)."""
    return list(yaml.compose_all(text, Loader=_Loader))


def json_key(key: Any) -> str:
    # sigs.k8s.io/yaml turns keys into JSON strings: `on:` is "true", `1:` is "1".
    if isinstance(key, bool):
        return "true" if key else "false"
    return "null" if key is None else str(key)


_CONSTRUCTOR = yaml.constructor.SafeConstructor()


def node_value(node: yaml.Node, memo: dict[int, Any] | None = None) -> Any:
    """The plain value of ``node`` as ``dralab.api.io`` reads it. With ``memo`` (read-only
    use) values of one node are built once and shared; without it every container is new,
    so the result may be edited freely."""
    if memo is not None and id(node) in memo:
        return memo[id(node)]
    value: Any
    if isinstance(node, yaml.ScalarNode):
        if node.tag == _STR:
            value = node.value
        else:
            construct = _CONSTRUCTOR.yaml_constructors.get(node.tag)
            value = construct(_CONSTRUCTOR, node) if construct is not None else node.value
    elif isinstance(node, yaml.MappingNode):
        value = {}
        merged: dict[str, Any] = {}
        for key, item in node.value:
            if key.tag == _MERGE:
                # Earlier merged mappings win over later ones; explicit keys over both.
                sources = item.value if isinstance(item, yaml.SequenceNode) else [item]
                for source in reversed(sources):
                    merged.update(node_value(source, memo))
                continue
            value[json_key(node_value(key, memo))] = node_value(item, memo)
        if merged:
            value = {**merged, **value}
    elif isinstance(node, yaml.SequenceNode):
        value = [node_value(item, memo) for item in node.value]
    else:  # pragma: no cover - the composer makes only these three
        raise Unplaceable(f"unexpected node {type(node).__name__}")
    if memo is not None:
        memo[id(node)] = value
    return value


def _walk(node: yaml.Node, seen: set[int], shared: set[int]) -> Iterator[yaml.Node]:
    if id(node) in seen:
        shared.add(id(node))
        return
    seen.add(id(node))
    yield node
    if isinstance(node, yaml.MappingNode):
        for key, item in node.value:
            yield from _walk(key, seen, shared)
            yield from _walk(item, seen, shared)
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            yield from _walk(item, seen, shared)


def is_block_scalar(node: yaml.Node) -> bool:
    return isinstance(node, yaml.ScalarNode) and node.style in ("|", ">")


class Layout:
    """Lines of a file and where its nodes are (see the module doc). ``lines`` have no line
    ends; line numbers are 0-based indexes into them."""

    def __init__(self, lines: list[str], roots: list[yaml.Node]) -> None:
        self.lines = lines
        self.shared: set[int] = set()
        self.nodes: list[yaml.Node] = []
        seen: set[int] = set()
        for root in roots:
            self.nodes += list(_walk(root, seen, self.shared))
        # Per line, the column where its last token ends: a comment can only follow it.
        self._token_end: dict[int, int] = {}
        self.inside: set[int] = set()  # lines within a multi-line scalar: all text
        # A block scalar ending the file (line, column, header): text after it changes its
        # value when the file has no final newline.
        self.last_block: tuple[int, int, str] | None = None
        for node in self.nodes:
            self._index(node)

    def _index(self, node: yaml.Node) -> None:
        start, end = node.start_mark, node.end_mark
        if is_block_scalar(node):
            header = _BLOCK_HEADER.match(self.lines[start.line], start.column)
            self._mark(start.line, header.end() if header else start.column + 1)
            self.inside.update(range(start.line + 1, self._end_line(node) + 1))
            if self._end_line(node) == len(self.lines) - 1 and header:
                self.last_block = (start.line, start.column, header.group())
        elif isinstance(node, yaml.ScalarNode):
            self._mark(end.line, end.column)
            self.inside.update(range(start.line + 1, end.line))
        elif getattr(node, "flow_style", False):
            self._mark(end.line, end.column)

    def _mark(self, line: int, column: int) -> None:
        self._token_end[line] = max(self._token_end.get(line, 0), column)

    def check(self, node: yaml.Node) -> None:
        if id(node) in self.shared:
            raise Unplaceable("an alias (its text is elsewhere)")

    def content_end(self, node: yaml.Node) -> int:
        """The last line holding text of ``node`` (not the comments or blank lines after)."""
        self.check(node)
        return self._end_line(node)

    def _end_line(self, node: yaml.Node) -> int:
        end = node.end_mark
        if is_block_scalar(node):
            last = end.line - 1 if end.column == 0 else end.line
            header = _BLOCK_HEADER.match(self.lines[node.start_mark.line], node.start_mark.column)
            if header and "+" in header.group():
                return last  # kept trailing blank lines are part of the value
            while last > node.start_mark.line and not self.lines[last].strip():
                last -= 1
            return last
        if isinstance(node, yaml.ScalarNode) or getattr(node, "flow_style", False):
            if end.column == 0 and end.line > node.start_mark.line:
                return end.line - 1
            return end.line
        children: list[yaml.Node] = (
            [part for pair in node.value for part in pair]
            if isinstance(node, yaml.MappingNode) else list(node.value))
        return max([node.start_mark.line, *(self.content_end(c) for c in children)])

    def span_end(self, node: yaml.Node) -> tuple[int, int]:
        """(line, column) just past the text of ``node``."""
        if (isinstance(node, yaml.ScalarNode) and not is_block_scalar(node)) \
                or getattr(node, "flow_style", False):
            self.check(node)
            return node.end_mark.line, node.end_mark.column
        last = self.content_end(node)
        if is_block_scalar(node):
            return last, len(self.lines[last])
        # A block collection ends where its last token does (a comment may follow).
        return last, self._token_end.get(last, len(self.lines[last]))

    def dash(self, item: yaml.Node) -> tuple[int, int]:
        """(line, column) of the ``-`` that starts a block sequence item."""
        self.check(item)
        line = item.start_mark.line
        text = self.lines[line][:item.start_mark.column].rstrip()
        while not text:  # `-` alone on a line, the item below it (comments between)
            line -= 1
            if line < 0:
                break
            if self.is_comment_line(line):
                continue
            comment = self.comment(line)
            whole = self.lines[line]
            text = (whole[:len(whole) - len(comment)] if comment else whole).rstrip()
        if text.endswith("-") and (len(text) == 1 or text[-2] in " \t-"):
            return line, len(text) - 1
        raise Unplaceable("a sequence item without its dash")

    def is_comment_line(self, line: int) -> bool:
        return line not in self.inside and self.lines[line].lstrip().startswith("#")

    def comment(self, line: int) -> str | None:
        """The trailing comment of ``line`` (from its ``#``), or None."""
        if line in self.inside:
            return None
        text = self.lines[line]
        start = self._token_end.get(line, 0)
        for i in range(start, len(text)):
            if text[i] == "#" and (i == 0 or text[i - 1] in " \t"):
                return text[i:].rstrip()
        return None

    def indent(self, line: int) -> str:
        text = self.lines[line]
        return text[:len(text) - len(text.lstrip(" "))]
