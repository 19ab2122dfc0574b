"""Writes the tables of KAI's dynamicresources plugin tests as JSON fixtures (run by hand).

    python tests/peers/kai/port_dra_tables.py /work/.mirror/NVIDIA+KAI-Scheduler/repo

reads ``pkg/scheduler/plugins/dynamicresources/*_test.go`` at ``COMMIT`` with
``goliteral`` (as ``port_tables.py`` does for the action tests) and writes one file per
test file under ``tables/plugins/dynamicresources/``: each ``[]testMetadata{...}`` element
with its repository, commit, file, the test function it is in, its index and its name,
values as written.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.peers.kai.goliteral import Parser, Resolver
from tests.peers.kai.port_tables import COMMIT, REPO, enclosing, functions

ROOT = "pkg/scheduler/plugins/dynamicresources"
FILES = ("dynamicresources_test.go", "dynamicresources_statement_test.go")
OUT = Path(__file__).resolve().parent / "tables" / "plugins" / "dynamicresources"
_TABLE = re.compile(r"\[\]testMetadata\{")


def port(resolver: Resolver, path: str) -> dict[str, Any]:
    src = resolver.show(path)
    funcs = functions(src)
    parser = Parser(src, resolver.for_file(path))
    cases: list[dict[str, Any]] = []
    for table in _TABLE.finditer(src):
        function = enclosing(funcs, table.start())
        parser.seek(table.start())
        for index, element in enumerate(parser.parse_expr()):
            cases.append({"repo": REPO, "commit": resolver.commit, "file": path,
                          "function": function, "table": function, "index": index,
                          "name": str(element.get("name", "")), "values": element})
    return {"source": {"repo": REPO, "commit": resolver.commit, "file": path,
                       "license": "Apache-2.0"}, "cases": cases}


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: port_dra_tables.py MIRROR_GIT_DIR", file=sys.stderr)
        return 2
    resolver = Resolver(argv[1], COMMIT)
    OUT.mkdir(parents=True, exist_ok=True)
    for name in FILES:
        ported = port(resolver, f"{ROOT}/{name}")
        (OUT / name.replace(".go", ".json")).write_text(json.dumps(ported, indent=1) + "\n")
        print(f"{len(ported['cases']):4d} cases  {ROOT}/{name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
