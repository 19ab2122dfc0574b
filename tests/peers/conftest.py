"""The peers' tally: per test module, how the ported upstream cases came out.

At the end of a run that collected ``tests/peers`` cases, pytest prints one row per
module: passed, failed, strict expected failures, and the skips split by their
reason's first words -- "not applicable offline:" (the case needs what an offline
engine cannot have: API write failures, wall clocks, concurrency), "not a decision:"
(it asserts metrics, events or internal memos), and the rest, capabilities not built
yet. These are the figures the README's peers table quotes.

Our own tests beside the ported cases -- whole modules that drive a ported behaviour
through the CLI, and the bookkeeping checks that every upstream case is ported or listed
-- are counted apart in the "ours" column and left out of the upstream totals.
"""

from __future__ import annotations

from collections import Counter, defaultdict

import pytest

OFFLINE = "not applicable offline:"
NOT_A_DECISION = "not a decision:"
COLUMNS = ("passed", "failed", "xfailed", "offline", "not a decision", "not built", "ours")
UPSTREAM_COLUMNS = COLUMNS[:-1]
# Modules of our own end-to-end tests (not upstream cases) under tests/peers.
OWN_MODULES = frozenset({"ca/test_scaledown_cli.py", "kueue/test_priority_boost.py",
                         "kueue/test_queue_order.py"})
# Bookkeeping checks in ported modules: the case list is upstream's, names are unique.
OWN_TESTS = frozenset({"test_every_ported_case_is_upstream",
                       "test_every_upstream_case_is_accounted_for",
                       "test_case_names_are_unique"})

_tally: dict[str, Counter[str]] = defaultdict(Counter)


def _skip_reason(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)


def skip_category(reason: str) -> str:
    """The column of a skip with this reason."""
    if reason.startswith(OFFLINE):
        return "offline"
    if reason.startswith(NOT_A_DECISION):
        return "not a decision"
    return "not built"


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if "tests/peers/" not in report.nodeid.replace("\\", "/"):
        return
    module = "/".join(report.nodeid.split("::", 1)[0].replace("\\", "/").split("/")[-2:])
    function = report.nodeid.split("::")[-1].split("[", 1)[0]
    if module in OWN_MODULES or function in OWN_TESTS:
        if report.when == "call":
            # A failure of ours still fails the run; the tally only sets it apart.
            _tally[module]["ours"] += 1
        return
    if report.when == "call" or (report.when == "setup" and report.skipped):
        if hasattr(report, "wasxfail"):
            _tally[module]["xfailed" if report.skipped else "failed"] += 1
        elif report.skipped:
            _tally[module][skip_category(_skip_reason(report))] += 1
        elif report.passed:
            _tally[module]["passed"] += 1
        else:
            _tally[module]["failed"] += 1
    elif report.failed:
        _tally[module]["failed"] += 1


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not _tally:
        return
    write = terminalreporter.write_line
    terminalreporter.section("peers' ported cases (tests/peers/conftest.py)")
    width = max(len(m) for m in _tally)
    write(f"{'module':<{width}}  " + "  ".join(f"{c:>14}" for c in COLUMNS))
    total: Counter[str] = Counter()
    for module in sorted(_tally):
        counts = _tally[module]
        total.update(counts)
        write(f"{module:<{width}}  " + "  ".join(f"{counts[c]:>14}" for c in COLUMNS))
    write(f"{'total':<{width}}  " + "  ".join(f"{total[c]:>14}" for c in COLUMNS))
    write(f"(ours: {total['ours']} tests of our own beside the upstream cases, not counted)")
    decided = sum(total[c] for c in ("passed", "failed", "xfailed", "not built"))
    if decided:
        write(f"passing: {total['passed']} of {decided} decision cases "
              f"({100 * total['passed'] / decided:.1f}%; offline and not-a-decision skips "
              "left out)")
