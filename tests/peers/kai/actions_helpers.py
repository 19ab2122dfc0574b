"""Shared by the ported unit tests of KAI's actions package (pkg/scheduler/actions:
common/, common/solvers/, utils/): where a case is, cited as the plugin tables cite
theirs."""

from __future__ import annotations

from dataclasses import dataclass

REPO = "NVIDIA/KAI-Scheduler"
COMMIT = "72de64fc8eca10fa8cca26a20156178f3edbe092"
ACTIONS = "pkg/scheduler/actions"


@dataclass(frozen=True)
class Cite:
    """file (under pkg/scheduler/actions), Go test function, case (name or index), line."""

    file: str
    function: str
    case: str
    line: int

    def __str__(self) -> str:
        return f"{REPO}@{COMMIT} {ACTIONS}/{self.file}:{self.line} {self.function} / {self.case}"
