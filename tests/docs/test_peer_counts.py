"""The README's per-peer counts of ported upstream cases (issue 31) are the ones
``docs/upstream-tests.md`` gives per peer, which ``pytest tests/peers`` prints as its tally
(``tests/peers/conftest.py``): a count updated on one page and not the other fails here."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PEERS = ("Kueue", "Cluster Autoscaler", "Karpenter", "KAI Scheduler")


def _counts(text: str, pattern: str) -> dict[str, tuple[int, int]]:
    found: dict[str, tuple[int, int]] = {}
    for peer in PEERS:
        match = re.search(pattern.format(peer=re.escape(peer)), " ".join(text.split()))
        assert match is not None, f"no count for {peer}"
        found[peer] = (int(match["passed"]), int(match["cases"]))
    return found


def test_readme_gives_the_per_peer_counts_of_the_upstream_tests_page() -> None:
    page = _counts((ROOT / "docs" / "upstream-tests.md").read_text(),
                   r"- {peer}: (?P<passed>\d+) of (?P<cases>\d+) decision cases pass")
    readme = _counts((ROOT / "README.md").read_text(),
                     r"{peer} (?P<passed>\d+) of (?P<cases>\d+)")
    assert readme == page
    for passed, cases in page.values():
        assert passed >= 0.98 * cases  # the acceptance: at least 98% per peer
