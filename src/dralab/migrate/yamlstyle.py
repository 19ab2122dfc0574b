"""How a file writes its YAML, and new values written the same way.

A converted file gets a few new lines (``resources.claims``, ``resourceClaims``);
they must look like the lines around them, or the diff shows a style change
reviewers did not ask for. ``detect`` reads the file's own habits from its node
tree: how far a nested mapping is indented, whether a sequence's dashes sit
under their key (kubectl) or two columns in (Helm charts), how far an item's
text is from its dash, and which quote it uses. Each is the most common case
in the file; a file without a case gets kubectl's.

Strings are written plain only when every reader takes them back as the same
string (YAML 1.1 as Kubernetes, and 1.2): names, paths, quantities; anything
else is quoted. Pure.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from .yamlnodes import Layout, Unplaceable

__all__ = ["Style", "block_entry", "block_item", "detect", "flow_text", "scalar_text"]

_STR = "tag:yaml.org,2002:str"
# Plain text that no YAML 1.1 or 1.2 reader takes for a number, bool, null, date, ...
_SAFE = re.compile(r"^[A-Za-z0-9_/][A-Za-z0-9_./@-]*$")
_AMBIGUOUS = re.compile(
    r"^(?:[yYnN]|yes|Yes|YES|no|No|NO|on|On|ON|off|Off|OFF|true|True|TRUE|false|False|FALSE"
    r"|null|Null|NULL|[-+]?\.?(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)|0x[0-9a-fA-F_]+|0o[0-7]+"
    r"|0b[01_]+|[-+]?[0-9][0-9_]*(?:\.[0-9_]*)?(?:[eE][-+]?[0-9]+)?|[0-9]+(?::[0-5]?[0-9])+|[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt].*)?)$")


@dataclass(frozen=True, slots=True)
class Style:
    """``mapping``: a nested key's column less its parent key's; ``sequence``: a dash's
    column less its key's; ``offset``: an item's text column less its dash's (at least 2);
    ``quote``: the quote for strings that need one; ``quote_all``: every string is quoted
    (a file written as JSON)."""

    mapping: int = 2
    sequence: int = 0
    offset: int = 2
    quote: str = '"'
    quote_all: bool = False


def _most_common(votes: Counter[int], default: int) -> int:
    return votes.most_common(1)[0][0] if votes else default


def detect(layout: Layout) -> Style:
    """The style most of the file's block collections and quoted strings use."""
    mapping: Counter[int] = Counter()
    sequence: Counter[int] = Counter()
    offset: Counter[int] = Counter()
    quotes: Counter[str] = Counter()
    for node in layout.nodes:
        if isinstance(node, yaml.ScalarNode) and node.tag == _STR:
            quotes[node.style or "plain"] += 1
        if not isinstance(node, yaml.MappingNode) or node.flow_style:
            continue
        for key, value in node.value:
            column = key.start_mark.column
            if id(value) in layout.shared or getattr(value, "flow_style", True):
                continue
            if isinstance(value, yaml.MappingNode) and value.start_mark.line > key.start_mark.line:
                mapping[value.value[0][0].start_mark.column - column] += 1
            elif isinstance(value, yaml.SequenceNode):
                sequence[value.start_mark.column - column] += 1
                for item in value.value:
                    if isinstance(item, yaml.MappingNode) and not item.flow_style \
                            and id(item) not in layout.shared:
                        try:
                            line, dash = layout.dash(item)
                        except Unplaceable:
                            continue
                        if line == item.start_mark.line:
                            offset[item.start_mark.column - dash] += 1
    return Style(mapping=max(1, _most_common(mapping, 2)),
                 sequence=max(0, _most_common(sequence, 0)),
                 offset=max(2, _most_common(offset, 2)),
                 quote="'" if quotes["'"] > quotes['"'] else '"',
                 quote_all=bool(quotes) and not quotes["plain"] and not quotes["|"]
                 and not quotes[">"])


def scalar_text(value: Any, style: Style) -> str:
    """``value`` (None, bool, int, float or str) as one YAML scalar."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return ".nan"
        if math.isinf(value):
            return ".inf" if value > 0 else "-.inf"
        return repr(value)
    text = str(value)
    if _SAFE.match(text) and not _AMBIGUOUS.match(text) and not style.quote_all:
        return text
    if style.quote == "'" and text.isprintable():
        return "'" + text.replace("'", "''") + "'"
    return json.dumps(text, ensure_ascii=not text.isprintable())


def flow_text(value: Any, style: Style) -> str:
    """``value`` in flow style, on one line."""
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{scalar_text(str(k), style)}: {flow_text(v, style)}"
                               for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(flow_text(v, style) for v in value) + "]"
    return scalar_text(value, style)


def block_entry(key: str, value: Any, column: int, style: Style) -> list[str]:
    """The lines of ``key: value`` in a block mapping whose keys are at ``column``."""
    head = " " * column + scalar_text(key, style) + ":"
    if isinstance(value, Mapping) and value:
        lines = [head]
        for k, v in value.items():
            lines += block_entry(str(k), v, column + style.mapping, style)
        return lines
    if isinstance(value, list) and value:
        lines = [head]
        for item in value:
            lines += block_item(item, column + style.sequence, style.offset, style)
        return lines
    return [f"{head} {flow_text(value, style)}"]


def block_item(value: Any, dash: int, offset: int, style: Style) -> list[str]:
    """The lines of one block sequence item whose ``-`` is at column ``dash`` and whose
    text starts ``offset`` columns after it."""
    offset = max(2, offset)
    prefix = " " * dash + "-" + " " * (offset - 1)
    if isinstance(value, Mapping) and value:
        lines: list[str] = []
        for k, v in value.items():
            lines += block_entry(str(k), v, dash + offset, style)
        return [prefix + lines[0][dash + offset:], *lines[1:]]
    return [prefix + flow_text(value, style)]
