"""The YAML writer of ``convert``: a file edited in place, its untouched lines kept byte for byte.

A converted file is reviewed as a diff, so the diff must be the change: the
resource lines removed and the claim lines added, nothing re-indented. A YAML
library that reads a file and writes it again (ruamel.yaml's round trip, used
here before) normalises what it cannot represent -- one indentation per file,
flow lists, block scalar indentation, comments on removed lines -- and a
4-line change became a 63-line diff. So the file is never written again:

1. the caller gets every document as plain data (``RoundTripFile.documents``,
   read as ``dralab.api.io`` reads it) and edits it in place;
2. ``dumps`` compares each document's node tree (``yamlnodes``, with positions)
   with its edited data and turns each difference into a text edit: a mapping
   entry or sequence item removed deletes its lines, a new entry or item is
   written after the last one in the file's own style (``yamlstyle``), a
   changed scalar or flow collection is replaced where it stands. Everything
   else -- indentation, sequence style, block scalars, quotes, comments, blank
   lines, document markers, key order, anchors elsewhere -- is the original
   text. A comment on a removed line stays, as a comment line where that line
   was.

Editing text by position needs each node's own text: a difference reaching an
alias (its text is the anchor's), a merge key or a duplicate key cannot be
written in place and raises InputError ("convert this file by hand"); the rest
of such a file is kept. ``convert`` reads every output back and compares it
with the plan, so a mistake here can refuse a file but never write a wrong one.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Any

import yaml

from dralab.api.errors import InputError, LoadError

from .yamlnodes import Layout, Unplaceable, compose_documents, json_key, node_value
from .yamlstyle import Style, block_entry, block_item, detect, flow_text

__all__ = ["RoundTripFile", "load_roundtrip"]

_MERGE = "tag:yaml.org,2002:merge"


class _Edits:
    """Line edits on the original text: deletions, span replacements, insertions."""

    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        self.deleted: set[int] = set()
        self.spans: dict[int, list[tuple[int, int, int, str]]] = defaultdict(list)
        self.inserts: dict[int, list[str]] = defaultdict(list)

    def insert(self, at: int, lines: list[str]) -> None:
        """``lines`` before line ``at``; several insertions at one place keep their order."""
        self.inserts[at] += lines

    def span(self, start: tuple[int, int], end: tuple[int, int], text: str) -> None:
        self.spans[start[0]].append((start[1], end[0], end[1], text))

    def remove(self, first: int, last: int) -> None:
        """Delete lines ``first``..``last``; their comments stay, as whole-line comments."""
        layout = self.layout
        indent = layout.indent(first)  # the removed entry's: the comments read as its
        for line in range(first, last + 1):
            if layout.is_comment_line(line):
                continue
            comment = layout.comment(line)
            if comment is None:
                self.deleted.add(line)
            else:
                self.span((line, 0), (line, len(layout.lines[line])), indent + comment)

    def kept_comments(self, first: int, last: int) -> list[str]:
        """The comments of lines ``first``..``last`` (replaced as a whole), as comment lines."""
        layout = self.layout
        out = []
        for line in range(first, last + 1):
            if layout.is_comment_line(line):
                out.append(layout.lines[line])
            else:
                comment = layout.comment(line)
                if comment is not None:
                    out.append(layout.indent(first) + comment)
        return out

    def render(self) -> list[str]:
        lines = self.layout.lines
        out: list[str] = []
        skip = set(self.deleted)
        for number, line in enumerate(lines):
            out += self.inserts.get(number, [])
            spans = self.spans.get(number, [])
            if number in skip:
                if spans:
                    raise Unplaceable("overlapping edits")
                continue
            text = line
            for column, end_line, end_column, new in sorted(spans, reverse=True):
                tail = text[end_column:] if end_line == number else lines[end_line][end_column:]
                text = text[:column] + new + tail
                skip.update(range(number + 1, end_line + 1))
            out.append(text)
        out += self.inserts.get(len(lines), [])
        return out


def _canon(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=repr)


class _Differ:
    """Turns the differences between node trees and edited data into ``_Edits``."""

    def __init__(self, layout: Layout, style: Style, edits: _Edits) -> None:
        self.layout = layout
        self.style = style
        self.edits = edits
        self.memo: dict[int, Any] = {}

    def value(self, node: yaml.Node) -> Any:
        return node_value(node, self.memo)

    def diff(self, node: yaml.Node, target: Any, key: yaml.Node | None = None) -> None:
        if self.value(node) == target:
            return
        self.layout.check(node)
        if isinstance(node, yaml.MappingNode) and isinstance(target, dict) and target:
            if node.flow_style:
                self._flow_mapping(node, target, key)
            else:
                self._block_mapping(node, target, key)
        elif isinstance(node, yaml.SequenceNode) and isinstance(target, list) and target:
            if not node.flow_style:
                self._block_sequence(node, target)
            elif len(node.value) == len(target):
                for item, wanted in zip(node.value, target, strict=True):
                    self.diff(item, wanted)
            else:
                self._replace(node, target, key)
        else:
            self._replace(node, target, key)

    # --- a value replaced where it stands -------------------------------------------------

    def _replace(self, node: yaml.Node, target: Any, key: yaml.Node | None) -> None:
        layout = self.layout
        text = flow_text(target, self.style)
        start = (node.start_mark.line, node.start_mark.column)
        block = not isinstance(node, yaml.ScalarNode) and not getattr(node, "flow_style", False)
        if block and key is not None:
            # A block collection starts on the lines below its key: the new value goes
            # after the key's colon (an indentless sequence's dash is at the key's column).
            line = layout.lines[key.end_mark.line]
            colon = line.find(":", key.end_mark.column)
            if colon < 0:
                raise Unplaceable("a key without its colon")
            start, text = (key.end_mark.line, colon + 1), " " + text
        elif isinstance(node, yaml.ScalarNode) and node.value == "" and not node.style:
            text = " " + text  # `key:` with nothing after it
        end = layout.span_end(node)
        if end[0] > start[0]:
            self.edits.insert(start[0], self.edits.kept_comments(start[0], end[0] - 1))
        self.edits.span(start, end, text)

    # --- mappings ---------------------------------------------------------------------------

    def _keys(self, node: yaml.MappingNode) -> list[str]:
        keys = []
        for key, _ in node.value:
            if key.tag == _MERGE:
                raise Unplaceable("a merge key (<<) in a mapping that changes")
            if not isinstance(key, yaml.ScalarNode):
                raise Unplaceable("a complex key in a mapping that changes")
            keys.append(json_key(self.value(key)))
        if len(set(keys)) != len(keys):
            raise Unplaceable("a duplicate key in a mapping that changes")
        return keys

    def _flow_mapping(self, node: yaml.MappingNode, target: dict[str, Any],
                      key: yaml.Node | None) -> None:
        keys = self._keys(node)
        if keys != list(target):
            self._replace(node, target, key)
            return
        for (k, item), name in zip(node.value, keys, strict=True):
            self.diff(item, target[name], k)

    def _block_mapping(self, node: yaml.MappingNode, target: dict[str, Any],
                       key: yaml.Node | None) -> None:
        layout = self.layout
        keys = self._keys(node)
        kept = [i for i, name in enumerate(keys) if name in target]
        column = node.value[0][0].start_mark.column
        first_line = node.value[0][0].start_mark.line
        prefix = layout.lines[first_line][:column]
        new = [name for name in target if name not in keys]
        lines: list[str] = []
        for name in new:
            lines += block_entry(name, target[name], column, self.style)
        if not kept and prefix.strip():
            # Every entry goes and the first shared its line with the item's dash
            # (`- name: x`): the new entries take that line.
            self.edits.remove(first_line, layout.content_end(node))
            self.edits.insert(layout.content_end(node) + 1,
                              [prefix + lines[0][column:], *lines[1:]])
            return
        done = 0
        if kept and kept[0] > 0 and prefix.strip():
            # The first entry kept moves up to the dash's line.
            j = kept[0]
            line = node.value[j][0].start_mark.line
            self.edits.remove(first_line, line - 1)
            self.edits.span((line, 0), (line, column), prefix)
            done = j
        for i in range(done, len(keys)):
            k, item = node.value[i]
            if i not in kept:
                if layout.lines[k.start_mark.line][:column].strip():
                    raise Unplaceable("an entry that does not start its line")
                self.edits.remove(k.start_mark.line, layout.content_end(item))
            else:
                self.diff(item, target[keys[i]], k)
        if lines:
            self.edits.insert(layout.content_end(node) + 1, lines)

    # --- sequences --------------------------------------------------------------------------

    def _block_sequence(self, node: yaml.SequenceNode, target: list[Any]) -> None:
        layout = self.layout
        items = node.value
        dash_line, dash = layout.dash(items[0])
        offset = self.style.offset
        for item in items:
            if isinstance(item, yaml.MappingNode) and not item.flow_style \
                    and id(item) not in layout.shared \
                    and layout.dash(item)[0] == item.start_mark.line:
                offset = item.start_mark.column - layout.dash(item)[1]
                break
        before = [_canon(self.value(item)) for item in items]
        after = [_canon(t) for t in target]
        matcher = SequenceMatcher(None, before, after, autojunk=False)
        for op, i1, i2, j1, j2 in matcher.get_opcodes():
            if op == "equal":
                continue
            paired = min(i2 - i1, j2 - j1) if op == "replace" else 0
            for n in range(paired):
                self.diff(items[i1 + n], target[j1 + n])
            for item in items[i1 + paired:i2]:
                line, column = layout.dash(item)
                if layout.lines[line][:column].strip():
                    raise Unplaceable("a sequence item that does not start its line")
                self.edits.remove(line, layout.content_end(item))
            if j2 > j1 + paired:
                last = i1 + paired - 1
                at = layout.content_end(items[last]) + 1 if last >= 0 else dash_line
                lines: list[str] = []
                for wanted in target[j1 + paired:j2]:
                    lines += block_item(wanted, dash, offset, self.style)
                self.edits.insert(at, lines)


@dataclass(slots=True)
class RoundTripFile:
    """The documents of one YAML file as plain data (None for an empty document), to edit
    in place; ``dumps`` gives the file's text with those edits and nothing else changed."""

    documents: list[Any]
    source: str
    _roots: list[yaml.Node] = field(repr=False)
    _layout: Layout = field(repr=False)
    _newline: str = "\n"
    _bom: str = ""

    def dumps(self) -> str:
        """The edited text; InputError when a change cannot be written in place."""
        edits = _Edits(self._layout)
        differ = _Differ(self._layout, detect(self._layout), edits)
        try:
            for root, target in zip(self._roots, self.documents, strict=True):
                differ.diff(root, target)
            lines = edits.render()
        except Unplaceable as exc:
            raise InputError(f"{self.source}: cannot be edited in place: {exc}; convert this "
                             "file by hand") from None
        return self._bom + "\n".join(lines).replace("\n", self._newline)


def load_roundtrip(text: str, source: str) -> RoundTripFile:
    """Read ``text`` for editing; LoadError naming ``source`` when that cannot be done."""
    newline = "\r\n" if "\r\n" in text else "\n"
    # A lone CR is a line break to YAML, as to dralab.api.io: written back as LF.
    body = text.replace("\r\n", "\n").replace("\r", "\n")
    bom = "\ufeff" if body.startswith("\ufeff") else ""
    body = body[len(bom):]
    if any(c in body for c in "\x85\u2028\u2029"):
        # YAML 1.1 line breaks too: the marks would count lines that are not ours.
        raise LoadError(f"{source}: NEL, LS or PS line breaks cannot be edited in place; "
                        "convert this file by hand")
    try:
        roots = compose_documents(body)
    except yaml.YAMLError as exc:
        problem = getattr(exc, "problem", None) or type(exc).__name__
        raise LoadError(f"{source}: cannot be read for editing: {problem}") from None
    layout = Layout(body.split("\n"), roots)
    return RoundTripFile([node_value(r) for r in roots], source, roots, layout, newline, bom)
