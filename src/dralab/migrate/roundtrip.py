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
from collections.abc import Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Any

import yaml

from dralab.api.errors import InputError, LoadError

from .yamlnodes import Layout, Unplaceable, compose_documents, json_key, node_value
from .yamlstyle import Style, block_entry, block_item, detect, flow_text, scalar_text

__all__ = ["RoundTripFile", "load_roundtrip"]

_MERGE = "tag:yaml.org,2002:merge"


class _Edits:
    """Text edits on the original: spans of it replaced, by character offset.

    Every edit -- lines deleted, lines inserted, a value rewritten, a comma-separated
    entry dropped -- is one span of the original text, all applied at the end, so no
    edit moves another."""

    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        self._starts = [0]
        for line in layout.lines:
            self._starts.append(self._starts[-1] + len(line) + 1)
        self._size = self._starts[-1] - 1  # the text has no newline after its last line
        self.spans: list[tuple[int, int, int, str]] = []  # (start, end, order, text)

    def offset(self, line: int, column: int = 0) -> int:
        return min(self._starts[line] + column, self._size)

    def span(self, start: tuple[int, int], end: tuple[int, int], text: str) -> None:
        self.spans.append((self.offset(*start), self.offset(*end), len(self.spans), text))

    def insert(self, at: int, lines: list[str]) -> None:
        """``lines`` before line ``at`` (after the last line when ``at`` is past it)."""
        if not lines:
            return
        if at >= len(self.layout.lines):
            self.spans.append((self._size, self._size, len(self.spans), "\n" + "\n".join(lines)))
            block = self.layout.last_block
            if block is not None:
                # Its last line had no line break, which the value therefore lacks; once
                # lines follow it has one: strip chomping (-) keeps the value as it was.
                line, column, header = block
                self.span((line, column), (line, column + len(header)),
                          header.replace("+", "").replace("-", "") + "-")
        else:
            self.span((at, 0), (at, 0), "\n".join(lines) + "\n")

    def remove(self, first: int, last: int) -> None:
        """Delete lines ``first``..``last``; their comments stay, as whole-line comments."""
        layout = self.layout
        indent = layout.indent(first)  # the removed entry's: the comments read as its
        for line in range(first, last + 1):
            if layout.is_comment_line(line):
                continue
            comment = layout.comment(line)
            if comment is None:
                start, end = self._starts[line], self._starts[line + 1]
                if end > self._size:  # the last line, without a newline: take the one before
                    start, end = max(0, start - 1), self._size
                self.spans.append((start, end, len(self.spans), ""))
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

    def render(self, text: str) -> str:
        # At one offset: insertions in the order made, then the span that replaces text.
        pieces: list[str] = []
        done = 0
        for start, end, _, new in sorted(self.spans, key=lambda s: (s[0], s[1] > s[0], s[2])):
            if start < done:
                raise Unplaceable("overlapping edits")
            pieces += [text[done:start], new]
            done = end
        pieces.append(text[done:])
        return "".join(pieces)


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
            else:
                self._flow_sequence(node, target, key)
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
        if [k for k in keys if k in target] != [k for k in target if k in keys]:
            self._replace(node, target, key)  # reordered: written anew
            return
        for (k, item), name in zip(node.value, keys, strict=True):
            if name in target:
                self.diff(item, target[name], k)
        added = [f"{scalar_text(name, self.style)}: {flow_text(target[name], self.style)}"
                 for name in target if name not in keys]
        self._flow_edit(node, [(k.start_mark.line, k.start_mark.column) for k, _ in node.value],
                        [self.layout.span_end(v) for _, v in node.value],
                        [name in target for name in keys], added, target, key)

    def _flow_sequence(self, node: yaml.SequenceNode, target: list[Any],
                       key: yaml.Node | None) -> None:
        items = node.value
        if len(target) >= len(items):  # items changed in place, maybe more after them
            kept = [True] * len(items)
            for item, wanted in zip(items, target, strict=False):
                self.diff(item, wanted)
        else:  # only removals can be written in place
            before = [_canon(self.value(item)) for item in items]
            opcodes = SequenceMatcher(None, before, [_canon(t) for t in target],
                                      autojunk=False).get_opcodes()
            if any(op not in ("equal", "delete") for op, *_ in opcodes):
                self._replace(node, target, key)
                return
            kept = [True] * len(items)
            for op, i1, i2, _, _ in opcodes:
                if op == "delete":
                    kept[i1:i2] = [False] * (i2 - i1)
        added = [flow_text(t, self.style) for t in target[len(items):]]
        self._flow_edit(node, [(i.start_mark.line, i.start_mark.column) for i in items],
                        [self.layout.span_end(i) for i in items], kept, added, target, key)

    def _flow_edit(self, node: yaml.Node, starts: list[tuple[int, int]],
                   ends: list[tuple[int, int]], kept: list[bool], added: list[str],
                   target: Any, key: yaml.Node | None) -> None:
        """In a flow collection's text: drop the entries not ``kept`` (with their commas) and
        append ``added`` after the last one, so its layout over lines stays."""
        if not any(kept):
            self._replace(node, target, key)
            return
        i, n = 0, len(kept)
        while i < n:
            if kept[i]:
                i += 1
                continue
            j = i
            while j < n and not kept[j]:
                j += 1
            if j < n:  # up to the next entry kept
                self.edits.span(starts[i], starts[j], "")
            else:  # the last ones: from the end of the last entry kept
                self.edits.span(ends[max(k for k in range(i) if kept[k])], ends[-1], "")
            i = j
        if added:
            last = ends[max(k for k in range(n) if kept[k])]
            self.edits.span(last, last, "".join(", " + text for text in added))

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
        if len(items) == len(target):
            # Items edited where they are (the common case): pair them by position; a
            # matcher would cost quadratic time on a long list whose items all change.
            opcodes: Sequence[tuple[str, int, int, int, int]] = [
                ("replace", 0, len(items), 0, len(target))]
        else:
            before = [_canon(self.value(item)) for item in items]
            after = [_canon(t) for t in target]
            opcodes = SequenceMatcher(None, before, after, autojunk=False).get_opcodes()
        for op, i1, i2, j1, j2 in opcodes:
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
            text = edits.render("\n".join(self._layout.lines))
        except Unplaceable as exc:
            raise InputError(f"{self.source}: cannot be edited in place: {exc}; convert this "
                             "file by hand") from None
        return self._bom + text.replace("\n", self._newline)


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
