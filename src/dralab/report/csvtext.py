"""CSV text for the report files: the one writer, with cells safe to open in a spreadsheet.

Names in our CSV files come from inputs (scenario, job kind, node and policy
names, scheduler messages). A spreadsheet reads a cell that starts with ``=``,
``+``, ``-`` or ``@`` (or a tab or carriage return) as a formula, so a name like
``=HYPERLINK(...)`` would run when the file is opened ("CSV injection"). Text
cells that start so get a leading apostrophe, as OWASP recommends; numbers stay
numbers: a cell that is a plain decimal number (``-1.5``, ``+3``, ``2e-05``) can
never be a formula and is written unchanged, as is every int and float. Pure.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Sequence

__all__ = ["FORMULA_TRIGGERS", "csv_text", "spreadsheet_safe"]

FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")

Cell = str | int | float


def spreadsheet_safe(cell: Cell) -> Cell:
    """``cell`` unless it is text a spreadsheet would read as a formula; then ``'`` + text."""
    if isinstance(cell, str) and cell.startswith(FORMULA_TRIGGERS) \
            and not _NUMBER.fullmatch(cell):
        return "'" + cell
    return cell


def csv_text(header: Sequence[str], rows: Iterable[Sequence[Cell]]) -> str:
    """The CSV text of ``header`` and ``rows`` (lines end in ``\\n``), every cell through
    ``spreadsheet_safe``; a row with a carriage return in a cell has every field quoted."""
    buf = io.StringIO()
    plain = csv.writer(buf, lineterminator="\n")
    # The csv module quotes a field for the characters of its line terminator only: a
    # carriage return inside a cell would go out bare and split the row for readers. Such
    # rows are written with every field quoted.
    quoted = csv.writer(buf, lineterminator="\n", quoting=csv.QUOTE_ALL)
    for row in (header, *rows):
        safe = [spreadsheet_safe(c) for c in row]
        writer = quoted if any(isinstance(c, str) and "\r" in c for c in safe) else plain
        writer.writerow(safe)
    return buf.getvalue()
