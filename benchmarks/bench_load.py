"""Bulk-load benchmark (issue: foundation): 5,000 ResourceSlices / 80,000 devices.

Measures, each in a fresh process so runs do not disturb each other:
  * load of the ~57 MB YAML file (read + parse + typed decode), target <= 10 s
  * load of the same data as JSON, target <= 2 s
  * validation of all 5,000 slices (API-server rules incl. CEL-free checks), target <= 10 s
Generates the input with gen_slices.py when it is missing. Prints figures; asserts nothing.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).parent
DATA = HERE.parent / "bench-data"

CASES = {
    "load YAML (57 MB)": ("load", "slices.yaml", 10.0),
    "load JSON (52 MB)": ("load", "slices.json", 2.0),
    "validate 5,000 slices": ("validate", "slices.yaml", 10.0),
}


def run_case(what: str, name: str) -> float:
    """Time one case inside this (fresh) process."""
    from dralab.api.io import load_documents, read_documents
    from dralab.validation.check import validate_documents

    path = str(DATA / name)
    if what == "load":
        start = time.perf_counter()
        objects = load_documents(read_documents([path]))
        elapsed = time.perf_counter() - start
        assert len(objects) == 5000
        return elapsed
    docs = read_documents([path])
    start = time.perf_counter()
    problems = validate_documents(docs)
    elapsed = time.perf_counter() - start
    assert not problems, problems[:3]
    return elapsed


def main() -> None:
    if not (DATA / "slices.yaml").exists() or not (DATA / "slices.json").exists():
        subprocess.run([sys.executable, str(HERE / "gen_slices.py"), str(DATA)], check=True)
    print(f"{'case':<26} {'seconds':>8} {'target':>8}")
    for label, (what, name, target) in CASES.items():
        best = min(
            float(subprocess.run(
                [sys.executable, __file__, "--case", what, name],
                check=True, capture_output=True, text=True).stdout)
            for _ in range(2)
        )
        print(f"{label:<26} {best:>8.2f} {target:>7.1f}s  {'ok' if best <= target else 'SLOW'}")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--case":
        print(run_case(sys.argv[2], sys.argv[3]))
    else:
        main()
