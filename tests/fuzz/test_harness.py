"""The fuzz harness catches what it is meant to catch: each kind of contract violation,
produced on purpose by a small click command, is reported, and a well-behaved run is not."""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

import click
import pytest

from .harness import MAX_LINE, Case, Outcome, Special, Stats, run_case


@click.command()
@click.argument("what")
@click.option("-f", "filename", default=None)
@click.option("--out", default=None)
def fake(what: str, filename: str | None, out: str | None) -> None:
    """Misbehaves as asked."""
    if what == "ok":
        data: bytes = sys.stdin.buffer.read()
        click.echo(data.decode("utf-8", "replace"))
        click.echo("note: fine", err=True)
    elif what == "error":
        click.echo("error: x.yaml: one line", err=True)
        sys.exit(2)
    elif what == "spin":
        while True:
            pass
    elif what == "sleep":
        time.sleep(60)
    elif what == "nap":  # a second of wall time and little CPU: what a loaded machine does
        time.sleep(1.0)
        click.echo("rested")
    elif what == "memory":
        blocks = [bytearray(1 << 30) for _ in range(16)]  # 16 GiB, never reached
        click.echo(len(blocks))
    elif what == "exit70":
        click.echo("error: internal error: KeyError: 'x'", err=True)
        sys.exit(70)
    elif what == "raise":
        raise RuntimeError("escaped")
    elif what == "multiline":
        click.echo("error: first\n  second", err=True)
        sys.exit(2)
    elif what == "control":
        click.echo("error: name \x1b[31mred\u202e", err=True)
        sys.exit(2)
    elif what == "long":
        click.echo("error: " + "v" * (MAX_LINE + 1), err=True)
        sys.exit(2)
    elif what == "explain":
        click.echo("unschedulable on node n: cannot allocate all claims\n  request r", err=True)
        sys.exit(1)
    elif what == "allocation-error":
        click.echo("error: claim c: CEL runtime error:\n  detail", err=True)
        sys.exit(3)
    elif what == "traceback":
        click.echo("Traceback (most recent call last):\n  File x", err=True)
    elif what == "touch-input" and filename:
        Path(filename).write_text("changed")
    elif what == "write-cwd":
        Path("stray.txt").write_text("x")
    elif what == "write-tmp":
        tempfile.mkstemp()
    elif what == "write-out" and out is not None:
        Path(out).mkdir(parents=True, exist_ok=True)
        Path(out, "index.html").write_text("report")
    elif what == "kill":
        os.kill(os.getpid(), 9)


def run_fake(*args: str, stdin: bytes | None = None, seconds: float = 0.5,
             safety: float | None = None) -> Outcome:
    case = Case("test", args, {"input.yaml": b"a: 1\n", "fifo": Special("fifo")}, stdin)
    return run_case(case, fake, seconds=seconds, safety=safety)


def outcome_of(*args: str, stdin: bytes | None = None, seconds: float = 0.5,
               safety: float | None = None) -> list[str]:
    return run_fake(*args, stdin=stdin, seconds=seconds, safety=safety).violations()


def test_a_well_behaved_run_passes() -> None:
    case = Case("test", ("ok",), {}, b"\xffbytes")
    outcome = run_case(case, fake)
    assert outcome.violations() == [] and outcome.code == 0
    assert outcome.stdout == "\ufffdbytes\n"
    assert outcome.stderr == "note: fine\n"


@pytest.mark.parametrize(("args", "expected"), [
    (("error",), []),
    (("write-out", "--out", "{out}"), []),
    (("write-out", "--out", "{in}/new/report"), []),  # among the inputs, asked for
    (("write-out", "--out", "relative"), []),
    (("write-out", "--out", ""), ["written outside --out: work/index.html"]),
    (("explain",), []),  # exit 1 may explain on several lines
    (("allocation-error",), ["stderr line is not a one-line error: '  detail'"]),
    (("spin",), ["timeout after"]),
    (("sleep",), ["blocked "]),
    (("nap",), []),  # its wall time is twice its CPU budget: not a violation
    (("memory",), ["exception escaped: MemoryError"]),
    (("exit70",), ["exit 70"]),
    (("raise",), ["exception escaped: RuntimeError: escaped"]),
    (("multiline",), ["stderr line is not a one-line error: '  second'"]),
    (("control",), ["raw control characters U+001B, U+202E"]),
    (("long",), [f"line of {MAX_LINE + 8} characters"]),
    (("traceback",), ["traceback in the output"]),
    (("touch-input", "-f", "{in}/input.yaml"), ["input changed: input.yaml"]),
    (("write-cwd",), ["written outside --out: work/stray.txt"]),
    (("write-tmp",), ["written outside --out: tmp/tmp"]),
    (("kill",), ["killed by signal 9"]),
])
def test_each_violation_is_reported(args: tuple[str, ...], expected: list[str]) -> None:
    # Budgets in CPU seconds (a child forked from a large test session pays for its
    # copy-on-write faults: a second, not half); "memory" asks the kernel for GiBs until
    # RLIMIT_AS stops it. Only "sleep" gets a short wall-clock safety (it blocks; the
    # others keep the minute).
    found = outcome_of(*args, seconds=5.0 if args == ("memory",) else 1.0,
                       safety=2.0 if args == ("sleep",) else None)
    assert len(found) == len(expected), found
    for problem, prefix in zip(found, expected, strict=True):
        assert problem.startswith(prefix), found


def test_the_cpu_bound_holds() -> None:
    outcome = run_fake("spin", seconds=0.5)
    assert outcome.timed_out and not outcome.blocked and outcome.signal is None
    # Stopped at its budget by the child's own CPU timer, however long it waited for a core.
    assert 0.4 <= outcome.cpu_seconds < 1.5, outcome.cpu_seconds  # rusage vs timer ticks
    assert outcome.violations()[0].startswith(f"timeout after {outcome.cpu_seconds:.1f} CPU s")


def test_a_blocked_case_is_killed_at_the_wall_clock_safety() -> None:
    outcome = run_fake("sleep", seconds=0.5, safety=1.0)
    assert outcome.blocked and not outcome.timed_out and outcome.code is None
    assert outcome.seconds >= 1.0 and outcome.cpu_seconds < 0.5
    assert outcome.violations() == [
        f"blocked {outcome.seconds:.0f} s using {outcome.cpu_seconds:.2f} CPU s"]


def test_the_stats_count_cpu_seconds() -> None:
    stats = Stats()
    stats.add(run_fake("nap"), failed=False)
    stats.add(run_fake("spin", seconds=0.3), failed=True)
    lines = list(stats.lines())
    assert lines[0].startswith("fuzz: 2 cases in ") and "1 broke the contract" in lines[0]
    assert stats.exit_codes == {"0": 1, "timeout": 1}
    cpu, wall, case = stats.longest
    assert 0.2 <= cpu < wall + 0.5 and "dralab spin" in case  # the spin, not the nap
    assert lines[4].startswith(f"  longest case:  {cpu:.2f} CPU s ({wall:.2f} s) [test]")
    assert [run[2:3] for run in stats.runs] == [("0",), ("timeout",)]


def test_a_saved_case_can_be_rerun(tmp_path: Path) -> None:
    case = Case("test", ("touch-input", "-f", "{in}/input.yaml"), {"input.yaml": b"a: 1\n"},
                b"\x00stdin")
    case.save(tmp_path)
    assert (tmp_path / "in" / "input.yaml").read_bytes() == b"a: 1\n"
    assert json.loads((tmp_path / "args.json").read_text()) == list(case.args)
    assert (tmp_path / "stdin.bin").read_bytes() == b"\x00stdin"


@pytest.mark.parametrize(("argv", "expected"), [
    (["migrate", "convert", "-f", "x", "-o", "conv"], ["work/conv"]),
    (["migrate", "convert", "-f", "x", "--output-dir", "/abs"], ["/abs"]),
    (["migrate", "inventory", "-f", "x", "-o", "json"], []),  # -o is a format there
    (["schedule", "-f", "x", "-o", "yaml"], []),
    (["migrate", "plan", "-f", "x", "--out", "p"], ["work/p"]),
    (["simulate"], ["work/dralab-report"]),
    (["simulate", "--out", ""], []),
])
def test_out_dirs_are_the_options_that_name_one(argv: list[str], expected: list[str]) -> None:
    from .harness import _out_dirs

    root = Path("/r")
    assert [str(p.relative_to(root)) if p.is_relative_to(root) else str(p)
            for p in _out_dirs(root, argv)] == expected


def test_migrate_cases_are_counted_per_subcommand() -> None:
    assert Case("g", ("migrate", "convert", "-f", "x")).verb == "migrate convert"
