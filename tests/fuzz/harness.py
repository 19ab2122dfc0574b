"""Run one fuzz case: ``dralab ARGS`` in-process, in a forked child with a CPU-time and a
memory bound, then check the CLI contract on what it did.

Why a forked child: a hostile input that hangs (a regex, an alias bomb, a loop that never
ends) or eats memory must cost one bounded case, not the test session. The child inherits
the already imported dralab (fork is copy-on-write, a few milliseconds), sets
``RLIMIT_AS`` to its current size plus the memory budget and its CPU budget (``ITIMER_PROF``
and ``RLIMIT_CPU``: they end it whatever it is doing, a C call that never returns to Python
included), runs the click command through ``CliRunner`` (stdin as bytes) with its working
directory, ``TMPDIR`` and ``HOME`` inside the case's scratch directory, and writes what it saw
to a file. The parent reads its CPU time and peak RSS from ``wait4``.

The bound is CPU time, not wall time: on a loaded machine (CI shares its cores) a case
waits for a core, and a wall-clock bound would fail it for the load. The parent still kills
a child that is blocked without using CPU (a FIFO read that never ends) at a wall-clock
safety, ten times the CPU budget and at least a minute (``tests/cputime.py``); such a case
is reported as blocked.

The contract checked on every case (``violations``):

* exit status 0, 1, 2 or 3 (70 is a bug; a signal, a CPU timeout, a block or a MemoryError
  is a bug);
* no traceback anywhere, no exception escaping the command;
* every stderr line of an exit-2 or exit-3 run is an ``error:``/``warning:`` line (or
  validate's summary), so no error spans lines;
* every stderr line (and each of validate's problem lines) is at most ``MAX_LINE``
  characters and holds no raw control or format character;
* the input files are byte-identical afterwards (and special files still what they were);
* nothing was written outside ``--out``: the working directory holds only the out
  directory, ``TMPDIR`` and ``HOME`` are empty.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import resource
import select
import shutil
import signal
import stat
import tempfile
import time
import traceback
import unicodedata
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click
from click.testing import CliRunner

try:
    from cputime import CPU_LIMIT_SIGNALS, limit_child_cpu, rusage_cpu, safety_seconds
except ImportError:  # ``python -m tests.fuzz.rerun``: tests/ is a package, not on sys.path
    from ..cputime import (  # type: ignore[no-redef]
        CPU_LIMIT_SIGNALS,
        limit_child_cpu,
        rusage_cpu,
        safety_seconds,
    )

EXIT_CODES = frozenset({0, 1, 2, 3})
# One error line: the reader cuts lines at 4,096 characters (the API server's total warning
# limit); the prefix and a file name come on top.
MAX_LINE = 4096 + 200
# Output kept for the checks and the report; a verb's stdout can be megabytes of YAML.
KEEP_CHARS = 1 << 20

# Where the inputs, the working directory (cwd), TMPDIR and HOME of a case go; ``OUT`` is
# the --out directory (inside the working directory, created by dralab, never by us).
IN, WORK, TMP, HOME, OUT = "in", "work", "tmp", "home", "work/out"

_SUBCOMMANDS = {"explain": ("pod", "claim", "workload"), "sweep": ("scenarios", "alibaba-2023"),
                "migrate": ("inventory", "convert", "check", "plan")}
_STDERR_PREFIXES = ("error: ", "warning: ")
_VALIDATE_SUMMARY = ("problem(s) in", "object(s) valid", "not checked")


def _env_float(name: str, default: float) -> float:
    try:
        return float(os.environ.get(name, default))
    except ValueError:
        return default


def time_budget() -> float:
    """CPU seconds a case may use (``FUZZ_TIMEOUT``); the longest case of the CI share
    uses about 2.5."""
    return _env_float("FUZZ_TIMEOUT", 30.0)


def wall_safety(cpu_seconds: float) -> float:
    """Wall seconds after which a case is killed as blocked (``FUZZ_WALL_SAFETY``; by
    default ten times its CPU budget, at least a minute: load alone never reaches it)."""
    return _env_float("FUZZ_WALL_SAFETY", safety_seconds(cpu_seconds))


def memory_budget() -> int:
    """Bytes of address space a case may add to the process it forks from (``FUZZ_MEMORY_MB``)."""
    return int(_env_float("FUZZ_MEMORY_MB", 1536.0) * (1 << 20))


def warm_up() -> None:
    """Import, in the parent, what the verbs import lazily (the report and its plots), so
    that every forked child starts with it and a case pays for its own work only. Matplotlib's
    font cache goes to a directory of this process, not to $HOME: cases check that nothing
    is written outside --out, and no child builds a cache of its own."""
    os.environ.setdefault("MPLCONFIGDIR", tempfile.mkdtemp(prefix="dralab-fuzz-mpl-"))
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.font_manager
    import matplotlib.pyplot

    import dralab.cli.main
    import dralab.report.replay
    import dralab.report.sweep
    import dralab.sim.scenario
    import dralab.sim.scenario_sweep  # noqa: F401


# --- the case ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Special:
    """An input that is not a plain file: ``fifo``, ``dangling`` (a symbolic link to a missing
    file), ``dir`` (an empty directory), ``link`` (a symbolic link to ``target`` among the
    inputs), ``abslink`` (a symbolic link to the absolute path ``target``)."""

    kind: str
    target: str = ""


Content = bytes | Special


@dataclass(frozen=True)
class Case:
    """One invocation. ``args`` may hold ``{in}`` and ``{out}``, replaced with the absolute
    input and --out directories; ``files`` are created under ``{in}`` (relative paths)."""

    generator: str
    args: tuple[str, ...]
    files: Mapping[str, Content] = field(default_factory=dict)
    stdin: bytes | None = None

    @property
    def verb(self) -> str:
        """The stats label: the command and, for groups, the subcommand."""
        if len(self.args) > 1 and self.args[1] in _SUBCOMMANDS.get(self.args[0], ()):
            return f"{self.args[0]} {self.args[1]}"
        return self.args[0] if self.args else ""

    def argv(self, root: Path) -> list[str]:
        return [a.replace("{in}", str(root / IN)).replace("{out}", str(root / OUT))
                for a in self.args]

    def describe(self) -> str:
        """A short, printable description for messages and the stats."""
        sizes = ", ".join(f"{name}: {len(c) if isinstance(c, bytes) else c.kind}"
                          for name, c in sorted(self.files.items()))
        stdin = f", stdin {len(self.stdin)} bytes" if self.stdin is not None else ""
        args = " ".join(a if a.isprintable() and a and len(a) <= 80 else repr(a[:80])
                        for a in self.args)
        return f"[{self.generator}] dralab {args} ({sizes}{stdin})"

    def save(self, where: Path) -> None:
        """Write the case to ``where`` to rerun it by hand: its inputs under in/, the
        arguments (args.json), stdin (stdin.bin)."""
        materialise(where, self.files)
        (where / "args.json").write_text(json.dumps(list(self.args), indent=1) + "\n")
        if self.stdin is not None:
            (where / "stdin.bin").write_bytes(self.stdin)


@dataclass
class Outcome:
    """What a case did, as the parent saw it."""

    case: Case
    code: int | None  # None: no exit status (killed, timed out, blocked, died)
    stdout: str
    stderr: str
    seconds: float  # wall time
    max_rss_kb: int
    cpu_seconds: float = 0.0  # user + system time of the child (and of what it reaped)
    timed_out: bool = False  # it used its CPU budget
    blocked: bool = False  # killed at the wall-clock safety, its CPU budget not used
    signal: int | None = None
    exception: str = ""  # a traceback that escaped CliRunner (never expected)
    changed_inputs: list[str] = field(default_factory=list)
    stray_writes: list[str] = field(default_factory=list)

    def violations(self) -> list[str]:
        """Every way this run broke the contract; empty when it kept it."""
        out: list[str] = []
        if self.timed_out:
            out.append(f"timeout after {self.cpu_seconds:.1f} CPU s ({self.seconds:.1f} s)")
        elif self.blocked:
            out.append(f"blocked {self.seconds:.0f} s using {self.cpu_seconds:.2f} CPU s")
        elif self.signal is not None:
            out.append(f"killed by signal {self.signal}")
        elif self.code not in EXIT_CODES:
            if "MemoryError" in self.stderr or "MemoryError" in self.exception:
                out.append(f"memory bound hit (exit {self.code})")
            else:
                out.append(f"exit {self.code}")
        if self.exception:
            out.append("exception escaped: " + self.exception.splitlines()[-1][:300])
        if "Traceback (most recent call last)" in self.stdout + self.stderr:
            out.append("traceback in the output")
        out.extend(_line_problems(self))
        out.extend(f"input changed: {p}" for p in self.changed_inputs)
        out.extend(f"written outside --out: {p}" for p in self.stray_writes)
        return out

    def report(self) -> str:
        return (f"{self.case.describe()}\n  exit {self.code} in {self.cpu_seconds:.2f} CPU s "
                f"({self.seconds:.2f} s), "
                f"max RSS {self.max_rss_kb // 1024} MiB\n"
                f"  stderr: {self.stderr[:2000]!r}\n  stdout: {self.stdout[:500]!r}"
                + (f"\n  exception: {self.exception[-3000:]}" if self.exception else ""))


def _raw_controls(line: str) -> list[str]:
    """Control (Cc) and format (Cf: RTL overrides, zero-width) characters, and line
    separators, that a terminal would act on instead of show."""
    return sorted({f"U+{ord(ch):04X}" for ch in line
                   if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") and ch != "\t"})


def _line_problems(outcome: Outcome) -> list[str]:
    problems: list[str] = []
    lines = outcome.stderr.splitlines()
    if outcome.case.verb == "validate" and outcome.code in (1, 2):
        lines += outcome.stdout.splitlines()  # the problem lines
    for line in lines:
        if len(line) > MAX_LINE:
            problems.append(f"line of {len(line)} characters: {line[:120]!r}...")
        controls = _raw_controls(line)
        if controls:
            problems.append(f"raw control characters {', '.join(controls)}: {line[:200]!r}")
    # An error (exit 2, or 3 for an allocation error) is one line: every stderr line of
    # such a run is an error or a warning. (Exit 1 may explain on several lines: allocate's
    # "cannot allocate all claims" and one indented line per request.)
    if outcome.code in (2, 3):
        for line in outcome.stderr.splitlines():
            if not (line.startswith(_STDERR_PREFIXES) or (
                    outcome.case.verb == "validate" and any(s in line for s in _VALIDATE_SUMMARY))):
                problems.append(f"stderr line is not a one-line error: {line[:200]!r}")
                break
    return problems


# --- files: materialise, snapshot ------------------------------------------------------------

def materialise(root: Path, files: Mapping[str, Content]) -> None:
    """Create the case's inputs under ``root/in`` and its empty work, tmp and home dirs."""
    for sub in (IN, WORK, TMP, HOME):
        (root / sub).mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        path = root / IN / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        elif content.kind == "fifo":
            os.mkfifo(path)
        elif content.kind == "dangling":
            path.symlink_to(root / IN / "does-not-exist" / (content.target or "gone.yaml"))
        elif content.kind == "link":
            path.symlink_to(root / IN / content.target)
        elif content.kind == "abslink":
            path.symlink_to(content.target)
        elif content.kind == "dir":
            path.mkdir(exist_ok=True)
        else:
            raise ValueError(f"unknown special input {content.kind!r}")


def snapshot(top: Path) -> dict[str, str]:
    """Path -> what it is (file hash, link target, kind), without following links or
    opening special files."""
    found: dict[str, str] = {}
    if not top.exists():
        return found
    for dirpath, dirnames, filenames in os.walk(top, followlinks=False):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            rel = path.relative_to(top).as_posix()
            st = path.lstat()
            if stat.S_ISLNK(st.st_mode):
                found[rel] = "link:" + os.readlink(path)
            elif stat.S_ISREG(st.st_mode):
                found[rel] = "file:" + hashlib.sha256(path.read_bytes()).hexdigest()
            elif stat.S_ISDIR(st.st_mode):
                found[rel] = "dir"
            else:
                found[rel] = f"special:{stat.S_IFMT(st.st_mode)}"
    return found


def _diff(before: Mapping[str, str], after: Mapping[str, str]) -> list[str]:
    return sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))


# --- running in a child ------------------------------------------------------------------------

def _child(command: click.Command, argv: list[str], stdin: bytes | None, root: Path,
           result_path: Path, memory: int, cpu_seconds: float) -> None:
    """The forked child: bound itself, run, write the result. Never returns."""
    code = 0
    try:
        devnull = os.open(os.devnull, os.O_RDWR)
        os.dup2(devnull, 0)  # nothing may read the test session's real stdin
        stray = os.open(root / "fd-output", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        os.dup2(stray, 1)
        os.dup2(stray, 2)
        os.chdir(root / WORK)
        os.environ["TMPDIR"] = str(root / TMP)
        os.environ["HOME"] = str(root / HOME)
        os.environ.pop("DRALAB_DEBUG", None)
        tempfile.tempdir = str(root / TMP)
        limit_child_cpu(cpu_seconds)  # SIGPROF's default action kills, even inside C code
        # The soft limit only: it can be lifted again to write the result.
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        size = _address_space()
        resource.setrlimit(resource.RLIMIT_AS, (size + memory, hard))
        # color=True: what a terminal would get. Otherwise click strips ANSI escapes from
        # what it echoes and the check would miss those a message carries to a real tty.
        result = CliRunner().invoke(command, argv, input=stdin, color=True)
        escaped = ""
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            escaped = "".join(traceback.format_exception(*result.exc_info))  # type: ignore[misc]
        payload = {"code": result.exit_code, "stdout": result.stdout[:KEEP_CHARS],
                   "stderr": result.stderr[:KEEP_CHARS], "exception": escaped}
        resource.setrlimit(resource.RLIMIT_AS, (hard, hard))
        result_path.write_text(json.dumps(payload))
    except BaseException:  # the harness itself failed: say so through the exit status
        code = 99
        with contextlib.suppress(BaseException):
            result_path.with_suffix(".harness").write_text(traceback.format_exc())
    finally:
        os._exit(code)


def _address_space() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def _wait(pid: int, deadline: float) -> tuple[int, Any, bool]:
    """Wait for ``pid`` until the wall-clock ``deadline`` (the safety for a child blocked
    without using CPU); kill it there. (status, rusage, killed at the deadline)"""
    blocked = False
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        fd = -1
    try:
        while True:
            left = deadline - time.monotonic()
            if fd >= 0:
                ready, _, _ = select.select([fd], [], [], max(0.0, left))
                done = bool(ready)
            else:
                done = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
                if not done and left > 0:
                    time.sleep(min(0.01, left))
            if done:
                break
            if left <= 0:
                blocked = True
                os.kill(pid, signal.SIGKILL)
                break
        _, status, usage = os.wait4(pid, 0)
    finally:
        if fd >= 0:
            os.close(fd)
    return status, usage, blocked


def run_case(case: Case, command: click.Command | None = None, *,
             seconds: float | None = None, memory: int | None = None,
             safety: float | None = None, keep: bool = False) -> Outcome:
    """Run ``case`` in a bounded child and return what it did (contract not asserted).

    ``seconds``: its CPU budget (``time_budget()``); ``safety``: the wall seconds after
    which it is killed as blocked (``wall_safety(seconds)``)."""
    if command is None:
        from dralab.cli.main import cli

        command = cli
    seconds = time_budget() if seconds is None else seconds
    safety = wall_safety(seconds) if safety is None else safety
    memory = memory_budget() if memory is None else memory
    root = Path(tempfile.mkdtemp(prefix="dralab-fuzz-"))
    try:
        materialise(root, case.files)
        inputs_before = snapshot(root / IN)
        result_path = root / "result.json"
        argv = case.argv(root)
        started = time.monotonic()
        pid = os.fork()
        if pid == 0:
            _child(command, argv, case.stdin, root, result_path, memory, seconds)
        status, usage, blocked = _wait(pid, started + safety)
        elapsed = time.monotonic() - started
        cpu = rusage_cpu(usage)
        outcome = Outcome(case, None, "", "", elapsed, usage.ru_maxrss, cpu_seconds=cpu)
        if os.WIFSIGNALED(status):
            killed = os.WTERMSIG(status)
            # RLIMIT_CPU's last word is SIGKILL, past the budget; the safety's is SIGKILL too.
            if killed in CPU_LIMIT_SIGNALS or (killed == signal.SIGKILL and cpu >= seconds):
                outcome.timed_out = True
            elif blocked:
                outcome.blocked = True
            else:
                outcome.signal = killed
        elif os.WIFEXITED(status) and os.WEXITSTATUS(status) == 99:
            report = result_path.with_suffix(".harness")
            if not report.exists():
                # The child failed past its own error path (out of memory while reporting):
                # a broken case, not a broken harness.
                outcome.exception = ("the child exited 99 without a report: it failed while "
                                     "handling the command's end (memory bound?)")
            else:
                raise RuntimeError("the fuzz harness failed in the child:\n" + report.read_text())
        if result_path.exists():
            payload: dict[str, Any] = json.loads(result_path.read_text())
            outcome.code = payload["code"]
            # The scratch directory's name changes from run to run; messages should not.
            outcome.stdout, outcome.stderr = (
                payload[k].replace(str(root / IN), "{in}").replace(str(root / WORK), "{work}")
                .replace(str(root), "{root}") for k in ("stdout", "stderr"))
            outcome.exception = payload["exception"]
        result_path.unlink(missing_ok=True)
        (root / "fd-output").unlink(missing_ok=True)  # stray fd writes are not files written
        outs = _out_dirs(root, argv)
        # A report the user asked for among the inputs is new files there, not a change.
        outcome.changed_inputs = [p for p in _diff(inputs_before, snapshot(root / IN))
                                  if p in inputs_before or not _allowed(root / IN / p, outs)]
        outcome.stray_writes = _stray(root, outs)
        return outcome
    finally:
        if not keep:
            _remove(root)


def _out_dirs(root: Path, argv: list[str]) -> list[Path]:
    """The output directories the command line names: each --out value (relative to the
    working directory), ``migrate convert``'s -o/--output-dir, or simulate's default. An
    empty value names none: writing into the working directory for it is a violation."""
    options = ("--out", "-o", "--output-dir") if argv[:2] == ["migrate", "convert"] else ("--out",)
    outs = [Path(argv[i + 1]) for i, a in enumerate(argv[:-1]) if a in options and argv[i + 1]]
    if not any(a == "--out" for a in argv) and argv[:1] == ["simulate"]:
        outs.append(Path("dralab-report"))
    return [out if out.is_absolute() else root / WORK / out for out in outs]


def _allowed(path: Path, outs: list[Path]) -> bool:
    """Whether a new ``path`` is (under) an out directory or one of its parents (created on
    the way, as mkdir -p does)."""
    return any(path == out or out in path.parents or path in out.parents for out in outs)


def _stray(root: Path, outs: list[Path]) -> list[str]:
    """Whatever the run left outside the out directories (and outside the inputs)."""
    stray = [f"{WORK}/{p}" for p in snapshot(root / WORK) if not _allowed(root / WORK / p, outs)]
    stray += [f"{TMP}/{p}" for p in snapshot(root / TMP)]
    stray += [f"{HOME}/{p}" for p in snapshot(root / HOME)]
    stray += [p for p in os.listdir(root) if p not in (IN, WORK, TMP, HOME)]
    return sorted(stray)


def _remove(root: Path) -> None:
    for dirpath, dirnames, _ in os.walk(root):
        for name in dirnames:  # an unreadable directory would stop rmtree
            with contextlib.suppress(OSError):
                os.chmod(Path(dirpath) / name, 0o700)
    shutil.rmtree(root, ignore_errors=True)


# --- statistics for `make fuzz` ------------------------------------------------------------------

@dataclass
class Stats:
    """Counts over every case run in this session (hypothesis' shrinking included)."""

    per_verb: Counter[str] = field(default_factory=Counter)
    per_generator: Counter[str] = field(default_factory=Counter)
    exit_codes: Counter[str] = field(default_factory=Counter)
    failures: int = 0
    # (violations, case) of each violating case, kept in FUZZ_KEEP_GOING mode.
    violations: list[tuple[list[str], str]] = field(default_factory=list)
    known: Counter[str] = field(default_factory=Counter)
    # (CPU seconds, wall seconds, case) of the case that used the most CPU.
    longest: tuple[float, float, str] = (0.0, 0.0, "")
    largest: tuple[int, str] = (0, "")
    total_seconds: float = 0.0
    total_cpu_seconds: float = 0.0
    # (verb, generator, exit label, wall seconds, CPU seconds) of every case, for the JSON.
    runs: list[tuple[str, str, str, float, float]] = field(default_factory=list)

    def add(self, outcome: Outcome, failed: bool) -> None:
        verb = outcome.case.verb
        self.per_verb[verb] += 1
        self.per_generator[outcome.case.generator] += 1
        label = ("timeout" if outcome.timed_out else "blocked" if outcome.blocked
                 else f"signal {outcome.signal}" if outcome.signal is not None
                 else str(outcome.code))
        self.exit_codes[label] += 1
        self.failures += failed
        self.total_seconds += outcome.seconds
        self.total_cpu_seconds += outcome.cpu_seconds
        self.runs.append((verb, outcome.case.generator, label, round(outcome.seconds, 3),
                          round(outcome.cpu_seconds, 3)))
        if outcome.cpu_seconds > self.longest[0]:
            self.longest = (outcome.cpu_seconds, outcome.seconds, outcome.case.describe())
        if outcome.max_rss_kb > self.largest[0]:
            self.largest = (outcome.max_rss_kb, outcome.case.describe())

    def lines(self) -> Iterator[str]:
        total = sum(self.per_verb.values())
        yield (f"fuzz: {total} cases in {self.total_cpu_seconds:.0f} CPU s "
               f"({self.total_seconds:.0f} s) of case time, "
               f"{self.failures} broke the contract ({sum(self.known.values())} of them known)")
        yield "  per verb:      " + ", ".join(f"{v} {n}" for v, n in sorted(self.per_verb.items()))
        yield "  exit codes:    " + ", ".join(
            f"{c}: {n}" for c, n in sorted(self.exit_codes.items()))
        yield "  per generator: " + ", ".join(
            f"{g} {n}" for g, n in sorted(self.per_generator.items()))
        yield (f"  longest case:  {self.longest[0]:.2f} CPU s ({self.longest[1]:.2f} s) "
               f"{self.longest[2][:300]}")
        yield f"  largest RSS:   {self.largest[0] // 1024} MiB {self.largest[1][:300]}"

    def failure_lines(self) -> Iterator[str]:
        """The violating cases of a keep-going run, grouped by their first violation."""
        for reason, count in sorted(self.known.items()):
            yield f"known, fixed elsewhere: x{count}: {reason}"
        groups: dict[str, list[str]] = {}
        for problems, case in self.violations:
            head = re.sub(r"[0-9.]+ (CPU )?s\b", r"N \1s", problems[0])[:80]
            groups.setdefault(head, []).append(f"{'; '.join(problems)[:400]} -- "
                                                           f"{case[:400]}")
        for head, items in sorted(groups.items(), key=lambda kv: -len(kv[1])):
            yield f"VIOLATION x{len(items)}: {head}"
            yield from (f"    {item}" for item in items[:5])

    def as_json(self) -> dict[str, Any]:
        return {"cases": sum(self.per_verb.values()), "failures": self.failures,
                "per_verb": dict(self.per_verb), "per_generator": dict(self.per_generator),
                "exit_codes": dict(self.exit_codes),
                "violations": [{"problems": p, "case": c} for p, c in self.violations],
                "known": dict(self.known),
                "runs": self.runs,
                "longest": {"cpu_seconds": round(self.longest[0], 3),
                            "seconds": round(self.longest[1], 3), "case": self.longest[2]},
                "largest_rss_mib": {"mib": self.largest[0] // 1024, "case": self.largest[1]}}


STATS = Stats()


def check(case: Case, command: click.Command | None = None, *,
          seconds: float | None = None, known: str | None = None) -> Outcome:
    """Run ``case``, count it, and fail the test with every violation of the contract.

    ``known`` names the bug (fixed elsewhere, not merged yet) the case is expected to hit:
    the test is marked xfail, and a keep-going run lists it apart from new violations."""
    outcome = run_case(case, command, seconds=seconds)
    problems = outcome.violations()
    STATS.add(outcome, bool(problems))
    saved = os.environ.get("FUZZ_SAVE_DIR")
    if problems and saved and not known:
        where = Path(saved) / f"case-{STATS.failures:04d}"
        case.save(where)
        (where / "outcome.txt").write_text("; ".join(problems) + "\n" + outcome.report() + "\n")
    if problems and os.environ.get("FUZZ_KEEP_GOING"):
        if known:
            STATS.known[known] += 1
        else:
            STATS.violations.append((problems, outcome.report()))
        return outcome
    assert not problems, "; ".join(problems) + "\n" + outcome.report()
    return outcome
