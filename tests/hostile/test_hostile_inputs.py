"""Hostile files against every manifest-reading verb, in-process, each under a time bound.

Asserted for every case and verb: the documented exit status (2, or 0 where the
verb is entitled to accept the input), the limit or reason named in the output,
no traceback, and every stderr line one bounded, printable line. A case that
hangs is stopped by an alarm and fails; a memory bomb shows as a jump of the
process's peak RSS.
"""

from __future__ import annotations

import os
import re
import resource
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

import pytest
from click.testing import CliRunner

from dralab.api.errors import MAX_LINE_CHARS
from dralab.cli.main import cli

from .generators import HostileCase, cases, node

VERBS = {
    "validate": ["validate"],
    "import": ["import"],
    "schedule": ["schedule"],
    "allocate": ["allocate", "--node", "n"],
}
CASE_SECONDS = 10.0  # generous for a loaded CI machine; the cases take milliseconds
MAX_RSS_GROWTH_KB = 1024 * 1024
SUMMARY = re.compile(r"^\d+ problem\(s\) in \d+ of \d+ object\(s\)$")


class CaseTimeoutError(BaseException):
    """Raised by the alarm; a BaseException so that no `except Exception` swallows it."""


@contextmanager
def time_bound(seconds: float) -> Iterator[None]:
    def alarm(signum: int, frame: FrameType | None) -> Any:
        raise CaseTimeoutError(f"still running after {seconds:.0f} s")

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def run_bounded(args: list[str], stdin: bytes | None) -> tuple[int, str, str, float]:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    with time_bound(CASE_SECONDS * 3):
        result = CliRunner().invoke(cli, args, input=stdin, prog_name="dralab")
    elapsed = time.perf_counter() - start
    growth = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert growth < MAX_RSS_GROWTH_KB, f"peak memory grew by {growth} KB"
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        repr(result.exception)
    return result.exit_code, result.stdout, result.stderr, elapsed


def assert_one_line_messages(stderr: str) -> None:
    assert "Traceback" not in stderr
    for line in stderr.splitlines():
        assert line.startswith(("error: ", "warning: ")) or SUMMARY.match(line), line
        assert len(line) < MAX_LINE_CHARS + 100 and line.isprintable(), line[:200]


CASES = cases()


@pytest.mark.parametrize("verb", list(VERBS))
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_hostile_input(tmp_path: Path, case: HostileCase, verb: str) -> None:
    target, stdin = case.make(tmp_path)
    code, out, err, elapsed = run_bounded([*VERBS[verb], "-f", target], stdin)
    assert elapsed < CASE_SECONDS
    assert code != 70, err
    assert_one_line_messages(err)
    if verb in case.accepted_by:
        assert code == 0, err
        return
    assert code == 2, (out + err)[-500:]
    if verb != "validate":  # validate prints its problems on stdout
        assert out == ""
    assert case.fragment in out + err
    for line in out.splitlines():  # problem lines are bounded and printable too
        assert len(line) < MAX_LINE_CHARS + 100 and line.isprintable(), line[:200]


@pytest.mark.parametrize("verb", list(VERBS))
def test_unreadable_subdirectory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                 verb: str) -> None:
    # Tests run as root here, where permissions do not stop reading: refuse via scandir.
    (tmp_path / "node.yaml").write_text(node('"1"'))
    locked = tmp_path / "locked"
    locked.mkdir()
    real_scandir = os.scandir

    def scandir(path: Any = ".") -> Any:
        if Path(path) == locked:
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    code, out, err, _ = run_bounded([*VERBS[verb], "-f", str(tmp_path)], None)
    assert code == 2 and out == ""
    assert err == f"error: {locked}: cannot read directory: Permission denied\n"


def test_issue_reproducers_exit_2_well_under_a_second(tmp_path: Path) -> None:
    by_name = {c.name: c for c in CASES}
    for name in ("alias-bomb-9x9", "quantity-huge-exponent", "deep-yaml-flow-400",
                 "int-5000-digits-yaml", "not-utf8-stdin"):
        target, stdin = by_name[name].make(tmp_path)
        code, _, _, elapsed = run_bounded(["import", "-f", target], stdin)
        assert code == 2 and elapsed < 1.0, (name, elapsed)
