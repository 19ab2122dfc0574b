"""Rerun a case saved by ``FUZZ_SAVE_DIR``: ``python -m tests.fuzz.rerun DIR [DIR...]``
(from the repository root, with dralab importable). Prints what the case did and each
violation of the contract; exit status 1 if any case still violates it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from .harness import Case, Content, Special, run_case, warm_up


def load(where: Path) -> Case:
    files: dict[str, Content] = {}
    for path in sorted((where / "in").rglob("*")):
        name = path.relative_to(where / "in").as_posix()
        if path.is_symlink():
            target = str(path.readlink())
            files[name] = (Special("abslink", target) if path.exists()
                           else Special("dangling"))
        elif path.is_fifo():
            files[name] = Special("fifo")
        elif path.is_dir():
            if not any(path.iterdir()):
                files[name] = Special("dir")
        else:
            files[name] = path.read_bytes()
    stdin = where / "stdin.bin"
    return Case(f"rerun:{where.name}", tuple(json.loads((where / "args.json").read_text())),
                files, stdin.read_bytes() if stdin.exists() else None)


def main(argv: list[str]) -> int:
    warm_up()
    failed = 0
    for arg in argv:
        outcome = run_case(load(Path(arg)))
        problems = outcome.violations()
        failed += bool(problems)
        print(outcome.report())
        print("  violations: " + ("; ".join(problems) if problems else "none"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
