"""Hostile files against every manifest-reading verb, in-process, each under a time bound.

Asserted for every case and verb: the documented exit status (2, or 0 where the
verb is entitled to accept the input), the limit or reason named in the output,
no traceback, and every stderr line one bounded, printable line. A case that
hangs is stopped at its CPU budget and fails (a budget in CPU seconds, so that a
loaded machine cannot fail a case by itself: ``tests/cputime.py``); a memory bomb
shows as a jump of the process's peak RSS.
"""

from __future__ import annotations

import os
import re
import resource
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from cputime import cpu_budget
from dralab.api.errors import MAX_LINE_CHARS
from dralab.cli.main import cli

from .generators import HostileCase, cases, node

VERBS = {
    "validate": ["validate"],
    "import": ["import"],
    "schedule": ["schedule"],
    "allocate": ["allocate", "--node", "n"],
}
# CPU seconds a case may use: the cases use milliseconds (the largest, a 10 MB label
# value, a third of a second); an alias bomb or a backtracking regex would use minutes.
CASE_CPU_SECONDS = 10.0
MAX_RSS_GROWTH_KB = 1024 * 1024
SUMMARY = re.compile(r"^\d+ problem\(s\) in \d+ of \d+ object\(s\)$")


def run_bounded(args: list[str], stdin: bytes | None) -> tuple[int, str, str, float]:
    """Run the CLI in-process within CASE_CPU_SECONDS of CPU (stopped there if it runs
    away, failing the test) and without growing the peak RSS by a GiB: (exit code,
    stdout, stderr, CPU seconds)."""
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with cpu_budget(CASE_CPU_SECONDS) as spent:
        result = CliRunner().invoke(cli, args, input=stdin, prog_name="dralab")
    growth = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert growth < MAX_RSS_GROWTH_KB, f"peak memory grew by {growth} KB"
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        repr(result.exception)
    return result.exit_code, result.stdout, result.stderr, spent.cpu


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
    code, out, err, _ = run_bounded([*VERBS[verb], "-f", target], stdin)
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
        code, _, _, cpu = run_bounded(["import", "-f", target], stdin)
        assert code == 2 and cpu < 1.0, (name, cpu)  # CPU seconds; they use milliseconds
