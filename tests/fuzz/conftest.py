"""Session set-up for the fuzz suite, and the counts ``make fuzz`` prints.

Environment:

* ``FUZZ_EXAMPLES`` (default 120): mutated cases in all, shared among the families by
  weight; ``make fuzz`` sets thousands. The hostile-file matrix runs in full either way.
* ``FUZZ_SEED``: draw other cases than the fixed (derandomized) ones of ``make test``.
* ``FUZZ_KEEP_GOING=1``: record contract violations and go on instead of stopping at the
  first (``make fuzz``); the session then fails and lists each violating case.
* ``FUZZ_TIMEOUT`` (30 CPU seconds, not wall seconds: a loaded machine cannot time a case
  out) and ``FUZZ_MEMORY_MB`` (1536): the bound of each case. ``FUZZ_WALL_SAFETY`` (ten
  times ``FUZZ_TIMEOUT``, at least 60 s): the wall time after which a case that is blocked
  without using CPU is killed and reported as blocked.
* ``FUZZ_STATS=1`` prints the counts after any run; ``FUZZ_STATS_FILE=PATH`` writes them
  as JSON (with every case's verb, generator, exit, wall and CPU seconds).
* ``FUZZ_SAVE_DIR=DIR``: each violating case is written to DIR/case-NNNN (in/, args.json,
  stdin.bin, outcome.txt) to rerun by hand.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from .harness import STATS, warm_up


@pytest.fixture(scope="session", autouse=True)
def _warm() -> None:
    """Every forked case starts with the lazily imported modules loaded (``warm_up``)."""
    warm_up()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not STATS.per_verb:
        return
    if os.environ.get("FUZZ_STATS") or os.environ.get("FUZZ_KEEP_GOING"):
        terminalreporter.section("dralab fuzz")
        for line in STATS.lines():
            terminalreporter.write_line(line)
        for line in STATS.failure_lines():
            terminalreporter.write_line(line)
    path = os.environ.get("FUZZ_STATS_FILE")
    if path:
        Path(path).write_text(json.dumps(STATS.as_json(), indent=2) + "\n")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if STATS.violations and exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
