"""The console examples of ``docs/*.md`` as data: which commands a page shows, and what.

A fenced block whose info string is ``console`` or ``sh`` holds commands. In a ``console``
block a command starts with ``$ `` and the lines up to the next command are its output as
shown; a ``sh`` block holds commands only (no output shown). A command goes on over lines
that end in ``\\`` or leave a quote open (``echo '...`` over three lines). A block is left
out only with its reason, in an HTML comment on the line before the fence::

    <!-- docs-test: skip: needs a live cluster -->

How an output shown is compared with the real one (``output_matches``):

* runs of spaces are one space, spaces at either end of a line go, and so do blank lines at
  either end of an output: the widths of table columns follow the terminal, and YAML's
  indentation is not compared;
* a line that is only ``...`` stands for any number of lines (none included), and ``...``
  inside a line for any text on that line (the spaces around it included), so a page shows
  what matters and elides the rest;
* an output that shows no line is not compared (only the exit code is checked).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

SKIP = re.compile(r"<!--\s*docs-test:\s*skip:\s*(?P<reason>\S.*?)\s*-->")
FENCE = re.compile(r"^```(?P<info>[A-Za-z]*)\s*$")
ELLIPSIS = "..."


@dataclass(frozen=True)
class Command:
    """One command as written (continuation lines joined) and the output lines shown."""

    page: str
    line: int
    text: str
    shown: tuple[str, ...]


@dataclass(frozen=True)
class Block:
    page: str
    line: int
    lang: str
    skip: str | None
    commands: tuple[Command, ...] = field(default=())

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"


def _complete(text: str) -> bool:
    """Whether a command is complete: no trailing backslash, no quote left open."""
    if text.endswith("\\"):
        return False
    try:
        shlex.split(text, comments=True)
    except ValueError:
        return False
    return True


def _commands(page: str, start: int, lang: str, body: list[str]) -> tuple[Command, ...]:
    commands: list[Command] = []
    i = 0
    while i < len(body):
        line = body[i]
        if lang == "console" and not line.startswith("$ "):
            # Output before any command: a block that shows only output is not ours.
            i += 1
            continue
        if lang == "sh" and (not line.strip() or line.lstrip().startswith("#")):
            i += 1
            continue
        first = i
        text = line[2:] if lang == "console" else line
        while not _complete(text) and i + 1 < len(body):
            i += 1
            text = text + "\n" + body[i]
        i += 1
        shown: list[str] = []
        if lang == "console":
            while i < len(body) and not body[i].startswith("$ "):
                shown.append(body[i])
                i += 1
        commands.append(Command(page, start + 1 + first, text, tuple(shown)))
    return tuple(commands)


def blocks(path: Path) -> list[Block]:
    """Every ``console``/``sh`` block of one page, in order."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if match is None:
            i += 1
            continue
        lang = match.group("info")
        start = i + 1
        end = start
        while end < len(lines) and not lines[end].startswith("```"):
            end += 1
        if lang in ("console", "sh"):
            skip = SKIP.search(lines[i - 1]) if i > 0 else None
            body = lines[start:end]
            found.append(Block(path.name, i + 1, lang,
                               skip.group("reason") if skip else None,
                               _commands(path.name, i + 1, lang, body)))
        i = end + 1
    return found


def _normal(line: str) -> str:
    return " ".join(line.split())


def _trimmed(lines: list[str]) -> list[str]:
    out = [_normal(line) for line in lines]
    while out and not out[0]:
        out.pop(0)
    while out and not out[-1]:
        out.pop()
    return out


def _pattern(line: str) -> re.Pattern[str]:
    # The spaces around an inline ``...`` belong to it: "a ... b" fits "a b" and "a x b".
    parts = line.split(ELLIPSIS)
    parts = [p.rstrip() if i == 0 else p.strip() if i < len(parts) - 1 else p.lstrip()
             for i, p in enumerate(parts)]
    return re.compile(".*".join(re.escape(part) for part in parts) + r"\Z")


def output_matches(shown: list[str] | tuple[str, ...], actual: str) -> bool:
    """Whether the real output fits the output shown (see the module docstring)."""
    want = _trimmed(list(shown))
    have = _trimmed(actual.splitlines())
    patterns = [None if w == ELLIPSIS else _pattern(w) for w in want]
    # Glob matching over lines, iterative with one backtracking point (the last gap).
    w = h = 0
    gap_w = gap_h = -1
    while h < len(have):
        if w < len(want) and patterns[w] is None:
            gap_w, gap_h = w, h
            w += 1
            continue
        pattern = patterns[w] if w < len(want) else None
        if pattern is not None and pattern.match(have[h]):
            w += 1
            h += 1
            continue
        if gap_w < 0:
            return False
        gap_h += 1
        w, h = gap_w + 1, gap_h
    while w < len(want) and patterns[w] is None:
        w += 1
    return w == len(want)
