"""Session set-up for the fuzz suite, and the counts ``make fuzz`` prints.

Environment:

* ``FUZZ_EXAMPLES`` (default 150): mutated cases in all, shared among the families by
  weight; ``make fuzz`` sets thousands. The hostile-file matrix runs in full either way.
* ``FUZZ_SEED``: draw other cases than the fixed (derandomized) ones of ``make test``.
* ``FUZZ_KEEP_GOING=1``: record contract violations and go on instead of stopping at the
  first (``make fuzz``); the session then fails and lists each violating case.
* ``FUZZ_TIMEOUT`` (30 s) and ``FUZZ_MEMORY_MB`` (1536): the bound of each case.
* ``FUZZ_STATS=1`` prints the counts after any run; ``FUZZ_STATS_FILE=PATH`` writes them
  as JSON (with every case's verb, generator, exit and seconds).
* ``FUZZ_SAVE_DIR=DIR``: each violating case is written to DIR/case-NNNN (in/, args.json,
  stdin.bin, outcome.txt) to rerun by hand.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest

# Matplotlib's font cache goes to a directory of the session, not to $HOME: the cases check
# that nothing is written outside --out, and each child builds no cache of its own.
os.environ.setdefault("MPLCONFIGDIR", tempfile.mkdtemp(prefix="dralab-fuzz-mpl-"))


@pytest.fixture(scope="session", autouse=True)
def _warm() -> None:
    """Import, in the parent, what the verbs import lazily (the report and its plots), so
    that every forked child starts with it: a case pays for its own work only."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.font_manager
    import matplotlib.pyplot

    import dralab.cli.main
    import dralab.report.replay
    import dralab.report.sweep
    import dralab.sim.scenario
    import dralab.sim.scenario_sweep  # noqa: F401


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    from .harness import STATS

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
    from .harness import STATS

    if STATS.violations and exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
