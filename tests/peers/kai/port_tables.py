"""Writes KAI Scheduler's action-test tables as JSON fixtures (run by hand, not by tests).

    python tests/peers/kai/port_tables.py /work/.mirror/NVIDIA+KAI-Scheduler/repo

reads every ``*_test.go`` under ``pkg/scheduler/actions`` at ``COMMIT`` (git, no work
tree needed), finds the case tables -- slice literals of
``integration_tests_utils.TestTopologyMetadata``, ``test_utils.TestTopologyBasic`` or a
test's own ``testMetadata`` struct -- reads them with ``goliteral`` and writes one file
per upstream test file under ``tests/peers/kai/tables/`` (same relative path, ``.json``).
Each case keeps upstream's values as written plus where it comes from: repository,
commit, file, the test function that runs it, the function the table is in, its index
and its name. Test functions in those files that are not table-driven are listed under
``"unported"`` with the reason, so the test modules can count them.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.peers.kai.goliteral import Parser, Resolver

REPO = "NVIDIA/KAI-Scheduler"
COMMIT = "72de64fc8eca10fa8cca26a20156178f3edbe092"
ROOT = "pkg/scheduler/actions"
OUT = Path(__file__).resolve().parent / "tables"

_TABLE = re.compile(r"\[\](?:integration_tests_utils\.TestTopologyMetadata|"
                    r"test_utils\.TestTopologyBasic|testMetadata)\{")
_FUNC = re.compile(r"^func (?:\([^)]*\)\s*)?(\w+)\(", re.MULTILINE)
_ACTION = re.compile(r"\b(allocate|consolidation|reclaim|preempt|stalegangeviction)\.New\(\)")
_INTEGRATION = re.compile(r"integration_tests_utils\.(?:RunTests|RunTest)\(")
INTEGRATION_ACTIONS = ("allocate", "consolidation", "reclaim", "preempt", "stalegangeviction")

# Test functions in the ported files that are not tables: why each is not ported.
NOT_TABLES = {
    "TestHandleElasticJobCommitFailure":
        "not applicable offline: the bind request fails (a failing cache); an API write "
        "failure, which an offline engine does not have",
}


def functions(src: str) -> list[tuple[str, int, int]]:
    """(name, start, end) of every top-level function."""
    marks = [(m.group(1), m.start()) for m in _FUNC.finditer(src)]
    return [(name, start, marks[k + 1][1] if k + 1 < len(marks) else len(src))
            for k, (name, start) in enumerate(marks)]


def enclosing(funcs: list[tuple[str, int, int]], offset: int) -> str:
    for name, start, end in funcs:
        if start <= offset < end:
            return name
    return ""


Funcs = list[tuple[str, int, int]]


def runner(src: str, funcs: Funcs, holder: str) -> tuple[str, str, tuple[str, ...]]:
    """The Test function that runs the table in ``holder``, its mode and actions."""
    for name, start, end in funcs:
        if not name.startswith("Test"):
            continue
        body = src[start:end]
        if name != holder and not re.search(r"\b" + re.escape(holder) + r"\(", body):
            continue
        # A Test function may hand the table to a runner of the same file.
        body += "".join(src[s:e] for n, s, e in funcs
                        if n not in (name, holder) and re.search(r"\b" + n + r"\(", body))
        if _INTEGRATION.search(body):
            return name, "integration", INTEGRATION_ACTIONS
        actions = tuple(dict.fromkeys(_ACTION.findall(body)))
        if actions:
            return name, "action", actions
    raise SystemExit(f"no test function runs {holder}")


def session_overrides(src: str, test_function: str, funcs: Funcs) -> dict[str, Any]:
    """What a Test function changes on the session besides the table (by reading it)."""
    body = next(src[s:e] for n, s, e in funcs if n == test_function)
    out: dict[str, Any] = {}
    m = re.search(r"OverrideGlobalDefaultStalenessGracePeriod\((\d+) \* time\.Second\)", body)
    if m:
        out["staleness_grace_period_seconds"] = int(m.group(1))
    if "features.DynamicResourceAllocation, true" in body:
        out["feature_gates"] = {"DynamicResourceAllocation": True}
    return out


def case_of(element: dict[str, Any]) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """(name, TestTopologyBasic values, runner settings) of one table element."""
    if element.get("$type") == "test_utils.TestTopologyBasic":
        return str(element.get("Name", "")), element, {}
    if "topology" in element:       # a test's own {name, topology} struct
        return str(element.get("name", "")), element["topology"], {}
    topology = dict(element.get("TestTopologyBasic", {}))
    settings: dict[str, Any] = {k: element[k] for k in ("RoundsUntilMatch", "RoundsAfterMatch",
                                                  "SchedulingDuration") if k in element}
    name = str(topology.get("Name") or element.get("Name") or "")
    return name, topology, settings


def port_file(resolver: Resolver, path: str) -> dict[str, Any] | None:
    src = resolver.show(path)
    tables = list(_TABLE.finditer(src))
    if not tables:
        return None
    funcs = functions(src)
    parser = Parser(src, resolver.for_file(path))
    cases: list[dict[str, Any]] = []
    ported_functions: set[str] = set()
    for table in tables:
        holder = enclosing(funcs, table.start())
        test_function, mode, actions = runner(src, funcs, holder)
        ported_functions.add(test_function)
        parser.seek(table.start())
        elements = parser.parse_expr()
        for index, element in enumerate(elements):
            name, topology, settings = case_of(element)
            cases.append({
                "repo": REPO, "commit": resolver.commit, "file": path,
                "function": test_function, "table": holder, "index": index,
                "name": name, "mode": mode, "actions": list(actions),
                "session": session_overrides(src, test_function, funcs),
                "settings": settings, "topology": topology,
            })
    unported = [{"repo": REPO, "commit": resolver.commit, "file": path, "function": name,
                 "reason": NOT_TABLES.get(name, "not built: generated by code")}
                for name, _, _ in funcs
                if name.startswith("Test") and name not in ported_functions]
    return {"source": {"repo": REPO, "commit": resolver.commit, "file": path,
                       "license": "Apache-2.0"},
            "cases": cases, "unported": unported}


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: port_tables.py MIRROR_GIT_DIR", file=sys.stderr)
        return 2
    resolver = Resolver(argv[1], COMMIT)
    listing = subprocess.run(["git", "-C", argv[1], "ls-tree", "-r", "--name-only", COMMIT, ROOT],
                             check=True, capture_output=True, text=True).stdout.split()
    total = 0
    for path in sorted(p for p in listing if p.endswith("_test.go")):
        ported = port_file(resolver, path)
        if ported is None:
            continue
        target = OUT / (path[len(ROOT) + 1:].removesuffix(".go") + ".json")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(ported, indent=1, sort_keys=False) + "\n")
        total += len(ported["cases"])
        print(f"{len(ported['cases']):4d} cases, {len(ported['unported'])} unported  {path}")
    print(f"{total} cases")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
