"""Every command the documentation shows runs, and gives the output shown (issue 33).

Each ``console``/``sh`` block of ``README.md`` and ``docs/*.md`` (see ``docblocks`` for the
format and how outputs are compared) runs in a fresh temporary directory holding links to the
repository's ``examples/``, ``tests/`` and ``src/``, so paths are the ones a reader types
at the repository's root and whatever a command writes stays in the temporary directory.
``dralab`` runs in-process through its click group; a block is a tiny shell: ``echo``
(``echo $?`` prints the last exit code), ``printf``, ``cat``, ``python3``, ``NAME=value``,
pipes into ``dralab`` and ``> FILE``. Anything else (kubectl, make, pip) is refused: such a
block carries ``<!-- docs-test: skip: REASON -->``.

Exit codes: where a block shows ``echo $?`` the code must be the one shown; elsewhere a
command may exit 0 or 1 (dralab's "no"), and 2 (bad input) only where the page shows the
output that says so; never 3 or 70 unless ``echo $?`` shows it. A command run again on the
same files (a slow ``simulate`` shown twice) reuses the first run's result.
"""

from __future__ import annotations

import codecs
import hashlib
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from cputime import cpu_budget
from dralab.cli.main import cli

from .docblocks import Block, Command, blocks, output_matches

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
LINKED = ("examples", "tests", "src")
# Wide enough that no table the docs show wraps.
ENV = {"COLUMNS": "200", "NO_COLOR": "1", "TERM": "dumb"}
# CPU seconds one block may use; the slowest (a 10-hour simulation) needs about 3.
BLOCK_CPU = 30.0

PAGES = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]
ALL_BLOCKS = [b for page in PAGES for b in blocks(page)]
RUN_BLOCKS = [b for b in ALL_BLOCKS if b.skip is None]


class Unsupported(Exception):
    """A command the mini shell does not run: mark its block as skipped, with a reason."""


@dataclass
class Ran:
    code: int
    stdout: bytes
    stderr: str


_CACHE: dict[tuple[object, ...], Ran] = {}


def _state(cwd: Path) -> tuple[tuple[str, str], ...]:
    """What a command could read besides the repository: the files the block made."""
    files = []
    for path in sorted(cwd.rglob("*")):
        if path.is_file() and not any(path.relative_to(cwd).parts[0] == n for n in LINKED):
            files.append((str(path.relative_to(cwd)),
                          hashlib.sha256(path.read_bytes()).hexdigest()))
    return tuple(files)


def _dralab(argv: list[str], stdin: bytes | None, cwd: Path) -> Ran:
    key = (tuple(argv), stdin, _state(cwd))
    if key in _CACHE:
        return _CACHE[key]
    result = CliRunner(env=ENV).invoke(cli, argv, input=stdin, prog_name="dralab")
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"dralab {shlex.join(argv)} raised {result.exception!r}")
    ran = Ran(result.exit_code, result.stdout_bytes, result.stderr)
    _CACHE[key] = ran
    return ran


def _expand(text: str, env: dict[str, str]) -> str:
    return re.sub(r"\$([A-Za-z_]\w*)", lambda m: env.get(m.group(1), m.group(0)), text)


def _run_one(words: list[str], stdin: bytes | None, cwd: Path, last: int,
             env: dict[str, str]) -> Ran:
    name, args = words[0], words[1:]
    if name == "dralab":
        return _dralab(args, stdin, cwd)
    if name == "echo":
        text = str(last) if args == ["$?"] else " ".join(args)
        return Ran(0, (text + "\n").encode(), "")
    if name == "printf" and len(args) == 1:
        return Ran(0, codecs.escape_decode(args[0].encode())[0], "")
    if name == "cat" and len(args) == 1:
        return Ran(0, (cwd / args[0]).read_bytes(), "")
    if name == "python3":
        done = subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True,
                              input=stdin, check=False, timeout=120)
        return Ran(done.returncode, done.stdout, done.stderr.decode())
    raise Unsupported(name)


def run_command(command: Command, cwd: Path, last: int, env: dict[str, str]) -> Ran:
    """Runs one command line (pipes, ``> FILE``) and returns what a terminal shows."""
    words = shlex.split(_expand(command.text.replace("\\\n", " "), env), comments=True)
    if len(words) == 1 and re.fullmatch(r"[A-Za-z_]\w*=.*", words[0]):
        key, _, value = words[0].partition("=")
        env[key] = value
        return Ran(last, b"", "")
    redirect = None
    if len(words) >= 2 and words[-2] == ">":
        redirect = cwd / words[-1]
        words = words[:-2]
    stages: list[list[str]] = [[]]
    for word in words:
        if word == "|":
            stages.append([])
        else:
            stages[-1].append(word)
    stdin: bytes | None = None
    stderr = ""
    ran = Ran(0, b"", "")
    for stage in stages:
        ran = _run_one(stage, stdin, cwd, last, env)
        stdin = ran.stdout
        stderr += ran.stderr
    if redirect is not None:
        redirect.write_bytes(ran.stdout)
        return Ran(ran.code, b"", stderr)
    return Ran(ran.code, ran.stdout, stderr)


def _workdir(tmp_path: Path) -> Path:
    for name in LINKED:
        (tmp_path / name).symlink_to(ROOT / name, target_is_directory=True)
    return tmp_path


def _check_block(block: Block, cwd: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(cwd)
    env: dict[str, str] = {}
    last = 0
    for command in block.commands:
        where = f"{command.page}:{command.line}: $ {command.text}"
        try:
            ran = run_command(command, cwd, last, env)
        except Unsupported as exc:
            raise AssertionError(f"{where}: '{exc}' is not run by the docs test; mark the "
                                 "block <!-- docs-test: skip: REASON -->") from None
        shown_text = "\n".join(command.shown)
        output = ran.stdout.decode(errors="replace") + ran.stderr
        is_echo_status = command.text.strip() == "echo $?"
        if not is_echo_status:
            allowed = {0, 1} | ({2} if shown_text.strip() else set())
            following = block.commands[block.commands.index(command) + 1:]
            if following and following[0].text.strip() == "echo $?":
                allowed = {ran.code}  # the next line shows it and is checked
            assert ran.code in allowed, f"{where}: exit {ran.code}\n{output}"
        if any(line.strip() for line in command.shown):
            assert output_matches(command.shown, output), (
                f"{where}: the output differs from the page\n--- shown\n{shown_text}\n"
                f"--- got\n{output}")
        last = ran.code


@pytest.mark.parametrize("block", RUN_BLOCKS, ids=[b.id for b in RUN_BLOCKS])
def test_docs_block(block: Block, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with cpu_budget(BLOCK_CPU):
        _check_block(block, _workdir(tmp_path), monkeypatch)


def test_skipped_blocks_say_why() -> None:
    # The regex requires a reason; this lists them so a reviewer sees what is not run.
    skipped = [(b.id, b.skip) for b in ALL_BLOCKS if b.skip is not None]
    assert all(reason and len(reason) > 8 for _, reason in skipped), skipped


def test_the_docs_show_commands() -> None:
    commands = [c for b in RUN_BLOCKS for c in b.commands if c.text.startswith("dralab")]
    assert len(commands) >= 40, len(commands)


@pytest.mark.parametrize(("shown", "actual", "ok"), [
    (["a  b", "c"], "a b\nc\n", True),
    (["a", "...", "d"], "a\nb\nc\nd\n", True),
    (["a", "...", "d"], "a\nd\n", True),
    (["a", "...", "d"], "a\nb\n", False),
    (["x: ...: z"], "x: y: z\n", True),
    (["a"], "a\nb\n", False),
    (["...", "b", "..."], "a\nb\nc\n", True),
    (["a", "...", "b", "c"], "a\nb\nx\nb\nc\n", True),
])
def test_output_matching(shown: list[str], actual: str, ok: bool) -> None:
    assert output_matches(shown, actual) is ok


def test_exit_status_lines_are_plain() -> None:
    # `echo $?` prints the code of the command before; that code is what the page shows.
    for block in RUN_BLOCKS:
        for command in block.commands:
            if command.text.strip() == "echo $?":
                assert [s for s in command.shown if s.strip()], f"{block.id}: no code shown"

