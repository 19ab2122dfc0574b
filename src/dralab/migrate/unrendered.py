"""Files that are Helm (or other Go) templates not rendered yet: reported, never read.

A chart's ``templates/*.yaml`` holds ``{{ ... }}`` actions that are no YAML: reading one
fails somewhere inside, far from what the user must do. A file that does not read as
YAML and holds a ``{{ ... }}`` action is taken for such a template: the verbs of
``dralab migrate`` skip it with one line saying to render it first, and read the other
files. A file that reads as YAML is read as it is, template braces or not (a ConfigMap
of alert rules holds ``{{ $labels.instance }}`` in its strings and is valid). Any other
read error stays an error of the whole run (exit 2), as for every verb.
"""

from __future__ import annotations

import io
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TextIO

from dralab.api.errors import LoadError
from dralab.api.io import Document, manifest_files, read_documents

__all__ = ["SkippedFile", "read_rendered", "unrendered_file", "unrendered_template"]

_ACTION = re.compile(r"\{\{.*?\}\}", re.S)


@dataclass(frozen=True, slots=True)
class SkippedFile:
    """A file the verb did not read, and the one line saying why and what to do."""

    path: str
    why: str

    def line(self) -> str:
        return f"skipped: {self.path}: {self.why}"


def unrendered_template(path: str, text: str) -> SkippedFile | None:
    """The skip of a file that failed to read as YAML, when it is an unrendered template."""
    match = _ACTION.search(text)
    if match is None:
        return None
    line = text.count("\n", 0, match.start()) + 1
    return SkippedFile(path, f"an unrendered Helm template ('{{{{' at line {line}); render "
                             "it first: helm template RELEASE CHART > rendered.yaml, then "
                             "give rendered.yaml")


def unrendered_file(path: str) -> SkippedFile | None:
    """``unrendered_template`` of a file that failed to read (None if it cannot be opened)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return unrendered_template(path, fh.read())
    except OSError:
        return None


def _stdin(stdin: TextIO | None) -> io.StringIO:
    """Standard input read once (a failed parse cannot read it again), as UTF-8."""
    stream = stdin or sys.stdin
    buffer = getattr(stream, "buffer", None)
    try:
        text = buffer.read().decode("utf-8") if buffer is not None else stream.read()
    except UnicodeDecodeError:
        raise LoadError("-: not a UTF-8 text file") from None
    return io.StringIO(text)


def read_rendered(paths: Iterable[str], stdin: TextIO | None = None
                  ) -> tuple[list[Document], list[SkippedFile]]:
    """Every document of ``paths`` (kubectl ``-f`` semantics, file by file) and the
    unrendered templates skipped; LoadError for any other problem."""
    docs: list[Document] = []
    skipped: list[SkippedFile] = []
    for path in manifest_files(paths):
        given = _stdin(stdin) if path == "-" else None
        try:
            docs += read_documents([path], stdin=given)
        except LoadError:
            skip = unrendered_template(path, given.getvalue()) if given is not None \
                else unrendered_file(path)
            if skip is None:
                raise
            skipped.append(skip)
    return docs, skipped
