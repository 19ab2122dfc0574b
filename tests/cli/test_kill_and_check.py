"""Kill-and-check: start a verb as a real process, kill it mid-run, and check that no
process of the run and no partial output remain.

"Mid-run" without a wall-clock sleep: the test waits until a worker process of the run
exists (found by a marker in its environment, ``/proc/PID/environ``), then stops that
worker (SIGSTOP), so the run cannot finish before it is killed, whatever the machine's
load. A stopped worker is what a stdlib pool would leave behind: it only goes away if
dralab kills it (SIGTERM: the pool's cleanup) or the kernel does (SIGKILL of dralab:
the workers' parent-death signal).

Every wait is bounded by a generous safety limit (a hung run fails the test instead of
hanging the suite); none is a pass/fail budget.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from dralab.api.io import PARALLEL_YAML_BYTES

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="reads /proc and relies on the parent-death signal")

MARK = "DRALAB_KILL_TEST"
DRALAB = [sys.executable, "-c", "from dralab.cli.main import main; main()"]
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
# Safety limits, not budgets: only a hung run or a leaked process gets near them.
SAFETY_SECONDS = 300.0
# CPU time a process of a killed run may still use before it counts as going on working.
WORK_CPU_SECONDS = 0.5

_POD = """apiVersion: v1
kind: Pod
metadata:
  name: p{n}
  namespace: default
  labels: {{app: a{n}}}
spec:
  containers:
  - name: c
    image: registry.example/img:1
    resources:
      limits: {{cpu: "1", memory: 1Gi}}
---
"""


def marked(marker: str) -> dict[int, int]:
    """pid -> parent pid of every live process whose environment carries ``marker``."""
    needle = f"{MARK}={marker}".encode()
    found: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as fh:
                if needle not in fh.read().split(b"\0"):
                    continue
            with open(f"/proc/{entry}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:  # gone meanwhile, or not ours to read
            continue
        # Fields after the command name (which may hold spaces and parentheses).
        fields = stat[stat.rindex(b")") + 2:].split()
        if fields[0] != b"Z":  # a zombie has exited; its parent just has not reaped it
            found[int(entry)] = int(fields[1])
    return found


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _ignores_sigint(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("SigIgn:"):
                    return bool(int(line.split()[1], 16) & (1 << (signal.SIGINT - 1)))
    except OSError:
        pass
    return False


def _cpu_seconds(pid: int, tick: int) -> float:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return 0.0
    fields = stat[stat.rindex(b")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / tick  # utime, stime


def wait_until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + SAFETY_SECONDS
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"{what}: not within the {SAFETY_SECONDS:.0f} s safety limit")
        time.sleep(0.01)


class Run:
    """One dralab process with a unique environment marker, in its own session."""

    def __init__(self, args: list[str], root: Path) -> None:
        self.marker = uuid.uuid4().hex
        self.work, self.tmp, self.home = root / "work", root / "tmp", root / "home"
        for d in (self.work, self.tmp, self.home):
            d.mkdir(exist_ok=True)
        env = {k: v for k, v in os.environ.items() if k != "MPLCONFIGDIR"}
        env.update({MARK: self.marker, "TMPDIR": str(self.tmp), "HOME": str(self.home)})
        self.stderr = root / "stderr"
        with open(self.stderr, "wb") as err:
            self.proc = subprocess.Popen([*DRALAB, *args], env=env, cwd=self.work,
                                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                         stderr=err, start_new_session=True,
                                         preexec_fn=_default_sigint)

    def workers(self) -> list[int]:
        return [pid for pid, parent in marked(self.marker).items() if parent == self.proc.pid]

    def ready_workers(self) -> list[int]:
        """Workers past their pool initializer (which ends by ignoring SIGINT; dralab
        itself is started with SIGINT at its default), so their guards are set."""
        return [pid for pid in self.workers() if _ignores_sigint(pid)]

    def kill_mid_run(self, sig: int) -> int:
        """Wait for a worker, freeze the workers, send ``sig`` to dralab; its exit status.

        Once dralab is gone the frozen workers are let go again (SIGCONT): freezing them
        was the test's doing, and a worker frozen before its pool initializer ran must
        still find out by itself that its parent is gone."""
        wait_until(lambda: bool(self.ready_workers()) or self.proc.poll() is not None,
                   "a worker process to start")
        assert self.proc.poll() is None, \
            f"the run ended before any worker started: {self.stderr.read_text()}"
        for pid in self.workers():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGSTOP)
        os.kill(self.proc.pid, sig)
        wait_until(lambda: self.proc.poll() is not None, "dralab to exit")
        for pid in marked(self.marker):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)
        return self.proc.returncode

    def leftovers(self) -> dict[int, float]:
        """Processes of the run that go on working once it is gone: pid -> CPU seconds
        used since first seen here. Waits until none is left, or one has used
        ``WORK_CPU_SECONDS`` (a budget in CPU time, so a loaded machine does not
        matter: a worker that dies with dralab uses next to none)."""
        tick = os.sysconf("SC_CLK_TCK")
        first: dict[int, float] = {}
        deadline = time.monotonic() + SAFETY_SECONDS
        while (alive := marked(self.marker)) and time.monotonic() < deadline:
            used = {pid: _cpu_seconds(pid, tick) for pid in alive}
            for pid, seconds in used.items():
                first.setdefault(pid, seconds)
            working = {pid: seconds - first[pid] for pid, seconds in used.items()
                       if seconds - first[pid] > WORK_CPU_SECONDS}
            if working:
                return working
            time.sleep(0.01)
        return {pid: 0.0 for pid in alive}

    def close(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        for pid in marked(self.marker):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=SAFETY_SECONDS)


@pytest.fixture
def big_yaml(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A multi-document YAML twice the size that is parsed in worker processes."""
    path = tmp_path_factory.mktemp("big") / "pods.yaml"
    with open(path, "w") as fh:
        n = 0
        while fh.tell() < 2 * PARALLEL_YAML_BYTES:
            fh.write(_POD.format(n=n))
            n += 1
    return path


def _expected_status(sig: int) -> int:
    # SIGTERM: dralab's own orderly exit, 128 + 15. SIGKILL: killed by the kernel.
    return 128 + sig if sig == signal.SIGTERM else -sig


def _check(run: Run, sig: int, status: int) -> None:
    assert status == _expected_status(sig), run.stderr.read_text()
    assert run.leftovers() == {}, "processes of the killed run are still alive"
    assert list(run.work.iterdir()) == [], "partial output left in the working directory"
    assert list(run.tmp.iterdir()) == [], "temporary files left in TMPDIR"
    assert list(run.home.iterdir()) == [], "files written under HOME"
    if sig == signal.SIGTERM:  # an orderly exit says nothing: no traceback, no line
        assert "Traceback" not in run.stderr.read_text()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["TERM", "KILL"])
@pytest.mark.parametrize("verb", ["validate", "schedule"])
def test_big_yaml_parse_killed(tmp_path: Path, big_yaml: Path, verb: str, sig: int) -> None:
    run = Run([verb, "-f", str(big_yaml)], tmp_path)
    try:
        _check(run, sig, run.kill_mid_run(sig))
    finally:
        run.close()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["TERM", "KILL"])
def test_replay_grid_killed(tmp_path: Path, sig: int) -> None:
    out = tmp_path / "work" / "out"
    run = Run(["replay", "alibaba-2023", "--policy", "FGD,BestFit", "--seeds", "2",
               "--workers", "2", "-o", "json", "--out", str(out)], tmp_path)
    try:
        _check(run, sig, run.kill_mid_run(sig))
        assert not out.exists()
    finally:
        run.close()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["TERM", "KILL"])
def test_sweep_scenarios_killed(tmp_path: Path, sig: int) -> None:
    out = tmp_path / "work" / "out"
    run = Run(["sweep", "scenarios", "-f", str(EXAMPLES / "scenarios" / "mig-notebooks.yaml"),
               "--seeds", "4", "--workers", "2", "--out", str(out)], tmp_path)
    try:
        _check(run, sig, run.kill_mid_run(sig))
        assert not out.exists()
    finally:
        run.close()


def test_worker_whose_parent_is_gone_kills_itself() -> None:
    """The race the parent-death signal leaves open: a worker whose parent died before
    its ``prctl`` would never get the signal, so the initializer checks the parent."""
    from dralab.api.workerpool import _die_with_parent

    pid = os.fork()
    if pid == 0:  # the "worker": its expected parent is not its parent
        try:
            _die_with_parent(os.getpid())
        finally:
            os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL


def test_worker_of_a_live_parent_runs() -> None:
    from dralab.api.workerpool import _die_with_parent

    pid = os.fork()
    if pid == 0:
        try:
            _die_with_parent(os.getppid())
        finally:
            os._exit(7)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 7
