"""Round-trip YAML for ``convert``: edit a file and keep its comments, key order and quoting.

ruamel.yaml keeps all of that, but it reads YAML 1.2, where a plain
``0969400e51393844`` is the float infinity (and would be written back as
``.inf``) while Kubernetes, reading YAML 1.1 like PyYAML, sees a string. So
the tree is never interpreted here: every plain scalar stays the string it was
written as (only an empty one is null), and it is written back exactly.
Meaning is always read from the PyYAML documents of ``dralab.api.io``; this
module only carries edits. Strings it inserts are quoted when a YAML 1.1 or
1.2 reader could take them for something else.

Sequence indentation follows the style most of the file uses: ``key:\\n- item``
(kubectl) or ``key:\\n  - item`` (Helm charts); flow sequences written over several
lines come out on one.
"""

from __future__ import annotations

import io
import re
import warnings
from dataclasses import dataclass
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import YAMLError
from ruamel.yaml.nodes import ScalarNode
from ruamel.yaml.resolver import VersionedResolver
from ruamel.yaml.scalarstring import SingleQuotedScalarString
from ruamel.yaml.tag import Tag

from dralab.api.errors import LoadError

__all__ = ["RoundTripFile", "load_roundtrip", "new_map", "new_seq", "text_value"]

_STR = "tag:yaml.org,2002:str"
_NULL = "tag:yaml.org,2002:null"
# Plain strings a YAML 1.1 or 1.2 reader would take for a number, bool, null, ...
_AMBIGUOUS = re.compile(
    r"^(?:[-+]?[\d._]*(?:[eE][-+]?\d+)?|[-+]?\.?(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)|0x[0-9a-fA-F]+"
    r"|0o[0-7]+|[yYnN]|yes|Yes|YES|no|No|NO|on|On|ON|off|Off|OFF|true|True|TRUE|false|False"
    r"|FALSE|null|Null|NULL|~|\d+:\d+(?::\d+)*)$")
_INDENTED_SEQ = re.compile(r"^( *)[^\s#-][^\n]*:\s*(?:#.*)?\n\1  +- ", re.MULTILINE)
_FLUSH_SEQ = re.compile(r"^( *)[^\s#-][^\n]*:\s*(?:#.*)?\n\1- ", re.MULTILINE)


class _TextResolver(VersionedResolver):
    """Every plain scalar is the string it spells (an empty one is null)."""

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        if kind is ScalarNode and implicit[0]:
            return super().resolve(kind, value, implicit) if value == "" else Tag(suffix=_STR)
        return super().resolve(kind, value, implicit)


def _yaml(indented_sequences: bool) -> YAML:
    yaml = YAML(typ="rt")
    yaml.Resolver = _TextResolver
    yaml.preserve_quotes = True
    yaml.width = 1 << 16  # never fold long lines (CEL, commands)
    if indented_sequences:
        yaml.indent(mapping=2, sequence=4, offset=2)
    else:
        yaml.indent(mapping=2, sequence=2, offset=0)
    return yaml


@dataclass(slots=True)
class RoundTripFile:
    """The documents of one YAML file as editable trees (None for an empty document)."""

    documents: list[Any]
    explicit_start: bool
    indented_sequences: bool

    def dumps(self) -> str:
        yaml = _yaml(self.indented_sequences)
        yaml.explicit_start = self.explicit_start
        out = io.StringIO()
        yaml.dump_all(self.documents, out)
        return out.getvalue()


def load_roundtrip(text: str, source: str) -> RoundTripFile:
    """Parse ``text`` for editing; LoadError naming ``source`` when ruamel cannot."""
    # One style per file (ruamel has one setting): the one most of its sequences use.
    indented = len(_INDENTED_SEQ.findall(text)) > len(_FLUSH_SEQ.findall(text))
    yaml = _yaml(indented)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            docs = list(yaml.load_all(text))
    except YAMLError as exc:
        problem = getattr(exc, "problem", None) or type(exc).__name__
        raise LoadError(f"{source}: cannot be read for round-trip editing: {problem}") from None
    explicit = text.lstrip().startswith("---")
    return RoundTripFile(docs, explicit, indented)


def text_value(value: str) -> Any:
    """A string to insert, quoted when a reader could take it for another type."""
    return SingleQuotedScalarString(value) if _AMBIGUOUS.match(value) else value


def new_map() -> CommentedMap:
    return CommentedMap()


def new_seq() -> CommentedSeq:
    return CommentedSeq()
