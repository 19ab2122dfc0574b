"""Hostile inputs (issue 16): files made to hang, exhaust memory or crash a manifest reader.

Each case builds its input under a scratch directory and says what every verb
must answer: the exit status (2 unless a verb is entitled to accept the input,
e.g. ``import`` does not validate) and a fragment of the message. Sizes follow
the issue's reproducers; ``scale`` makes them larger for longer runs.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

# What a case gives the CLI: the -f argument and the bytes for stdin (for "-").
Input = tuple[str, bytes | None]

CONFIGMAP = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"


@dataclass(frozen=True)
class HostileCase:
    name: str
    make: Callable[[Path], Input]
    fragment: str
    # Verbs that may accept the input (exit 0), e.g. import does not validate values.
    accepted_by: frozenset[str] = field(default_factory=frozenset)


def _file(name: str, content: str | bytes) -> Callable[[Path], Input]:
    def make(scratch: Path) -> Input:
        path = scratch / name
        path.write_bytes(content.encode() if isinstance(content, str) else content)
        return str(path), None
    return make


def _stdin(content: bytes) -> Callable[[Path], Input]:
    return lambda _: ("-", content)


def laughs(levels: int, width: int = 9) -> str:
    """The issue's alias bomb: each level holds `width` aliases of the level below."""
    lines = [f"a0: &a0 [{','.join(['lol'] * width)}]"]
    lines += [f"a{i}: &a{i} [{','.join([f'*a{i - 1}'] * width)}]" for i in range(1, levels + 1)]
    return "\n".join(lines) + "\n"


def merge_bomb(levels: int) -> str:
    lines = ["b0: &b0 {" + ", ".join(f"k{j}: [x, x, x]" for j in range(9)) + "}"]
    lines += [f"b{i}: &b{i} {{" + ", ".join(f"k{j}: *b{i - 1}" for j in range(9)) + "}"
              for i in range(1, levels + 1)]
    return "\n".join([*lines, f"top: {{<<: *b{levels}}}"]) + "\n"


def deep_yaml(levels: int) -> str:
    return CONFIGMAP + "data: {k: " + "[" * levels + "]" * levels + "}\n"


def deep_json(levels: int) -> str:
    return json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"},
                       "data": {"k": "@"}}).replace('"@"', "[" * levels + "]" * levels)


def node(capacity_cpu: str, name: str = "n", labels: str = "{}") -> str:
    return (f"apiVersion: v1\nkind: Node\nmetadata: {{name: {name}, labels: {labels}}}\n"
            f"status: {{capacity: {{cpu: {capacity_cpu}}}}}\n")


def _fifo(scratch: Path) -> Input:
    path = scratch / "pipe.yaml"
    os.mkfifo(path)
    return str(path), None


def _dangling(scratch: Path) -> Input:
    tree = scratch / "tree"
    tree.mkdir()
    (tree / "node.yaml").write_text(node('"1"'))
    (tree / "gone.yaml").symlink_to(scratch / "nowhere.yaml")
    return str(tree), None


def cases(scale: int = 1) -> list[HostileCase]:
    """Every hostile case; ``scale`` > 1 makes the big ones bigger."""
    big = 10 * 1024 * 1024 * scale
    return [
        HostileCase("alias-bomb-9x9", _file("l.yaml", laughs(9)), "excessive aliasing"),
        HostileCase("alias-bomb-40x9", _file("l.yaml", laughs(40)), "excessive aliasing"),
        HostileCase("alias-bomb-merge-keys", _file("m.yaml", merge_bomb(8)),
                    "excessive aliasing"),
        HostileCase("alias-repeats-long-string",
                    _file("s.yaml", f"s: &s {'x' * (2 << 20)}\nl: [{', '.join(['*s'] * 200)}]\n"),
                    "aliases would repeat"),
        HostileCase("alias-recursive", _file("r.yaml", "a: &a [x, *a]\n"), "recursive alias"),
        HostileCase("deep-yaml-flow-400", _file("d.yaml", deep_yaml(400)),
                    "nested more than 100 levels deep"),
        HostileCase("deep-yaml-block-150", _file("d.yaml", "- " * 150 + "x\n"),
                    "nested more than 100 levels deep"),
        HostileCase("deep-yaml-100000", _file("d.yaml", deep_yaml(100_000 * scale)),
                    "exceeded maximum nesting depth"),  # libyaml's own limit comes first
        HostileCase("deep-json-1000", _file("d.json", deep_json(1000)),
                    "nested more than 100 levels deep"),
        HostileCase("deep-json-100000", _file("d.json", deep_json(100_000 * scale)),
                    "nested more than 100 levels deep"),
        HostileCase("deep-json-on-stdin", _stdin(deep_json(5000).encode()),
                    "exceeded maximum nesting depth"),  # JSON-looking, read as YAML then
        HostileCase("deep-through-aliases",
                    _file("a.yaml", "a: &a " + "[" * 60 + "]" * 60 + "\nb: "
                          + "[" * 60 + "*a" + "]" * 60 + "\n"),
                    "nested more than 100 levels deep"),
        HostileCase("int-5000-digits-yaml", _file("i.yaml", "a: " + "9" * 5000 + "\n"),
                    "more than 4300"),
        HostileCase("int-5000-digits-json", _file("i.json", '{"a": ' + "9" * 5000 + "}"),
                    "more than 4300"),
        HostileCase("int-sexagesimal", _file("i.yaml", "a: 1" + ":59" * 3000 + "\n"),
                    "more than 4300"),
        HostileCase("float-out-of-range-json", _file("f.json", '{"a": 1e999999}'),
                    "out of the range of a 64-bit float"),
        HostileCase("quantity-huge-exponent", _file("q.yaml", node('"1e99999999"')),
                    "more than 64 integer digits"),
        HostileCase("quantity-5000-digits", _file("q.yaml", node('"' + "9" * 5000 + '"')),
                    "more than 64 integer digits"),
        HostileCase("quantity-exponent-beyond-int32", _file("q.yaml", node('"1e2147483648"')),
                    "unable to parse quantity's suffix"),
        HostileCase("quantity-backtracking", _file("q.yaml", node('"' + "1" * 100_000 + 'x"')),
                    "quantities must match the regular expression"),
        HostileCase("not-utf8-file", _file("e.yaml", b"kind: Node\nmetadata: {name: caf\xe9}\n"),
                    "not a UTF-8 text file"),
        HostileCase("not-utf8-stdin", _stdin(b"kind: Node\xff\n"), "not a UTF-8 text file"),
        HostileCase("utf16-file", _file("u.yaml", "kind: Node\n".encode("utf-16")),
                    "not a UTF-8 text file"),
        HostileCase("nul-bytes", _file("z.yaml", b"kind: Node\x00\n"),
                    "control characters are not allowed"),
        HostileCase("fifo", _fifo, "(a named pipe): refusing to read it"),
        HostileCase("character-device", lambda _: ("/dev/zero", None),
                    "(a character device): refusing to read it"),
        HostileCase("dangling-symlink-in-dir", _dangling, "dangling symbolic link"),
        HostileCase("label-value-10mb", _file("b.yaml", node('"1"', labels='{a: "' + "b" * big
                                                            + '"}')),
                    "more characters", accepted_by=frozenset({"import"})),
        HostileCase("right-to-left-override-name",
                    _file("rtl.yaml", node('"1"', name='"evil\\u202egnp.exe"',
                                           labels='{"x\\e[31m": v}')),
                    "evil\\u202egnp.exe", accepted_by=frozenset({"import"})),
    ]
