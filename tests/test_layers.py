"""The package's layers, checked on the source: no hidden edges.

Every ``import`` in ``src/dralab`` counts, those inside functions included (they run
later but tie the modules together all the same). The rules:

* a module never imports a module of a higher layer (``LAYERS``, lowest first);
  the fleet layer imports only ``api`` (it describes hardware, nothing else);
* there are no import cycles between modules, imports made only for type checking
  (``if TYPE_CHECKING:``) included: they never run, but a reader still has to read
  both files to read either, so each file must be readable with only what it imports
  (a Protocol or a type defined below both breaks such a circle);
* no two public classes in dralab share a name, so that a name says which thing
  it is without its module.
"""

from __future__ import annotations

import ast
import collections
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

SOURCE = Path(__file__).resolve().parent.parent / "src"

# Lowest first. A module belongs to the layer of its longest matching prefix;
# modules of one layer may import each other (without cycles).
LAYERS: tuple[tuple[str, ...], ...] = (
    ("dralab._version",),             # anything may say which version it is
    ("dralab.api",),                  # objects, codec, YAML/JSON I/O, quantities, keys
    ("dralab.cel",),                  # the CEL language for device selectors
    ("dralab.validation",),           # what the API server accepts (uses cel)
    ("dralab.fleet",),                # GPU hardware catalog and fleet generation
    ("dralab.allocator",),            # DRA allocation on one node
    ("dralab.cluster",),              # the cluster store: state, events, forks
    ("dralab.policies",),             # node-choice policies (the FGD family)
    ("dralab.controllers",),          # kube-controller-manager's part: workloads, claims,
                                      # the snapshot a run starts from
    ("dralab.scheduler",),            # framework, plugins, queue, the scheduling loop
    ("dralab.queueing", "dralab.autoscale"),  # future: admission, node autoscaling
    ("dralab.sim", "dralab.replay"),  # the event simulator; trace replay
    ("dralab.migrate",),              # the migration assistant (device plugin -> DRA)
    ("dralab.report",),               # files and pages from results
    ("dralab.live",),                 # live clusters in: kubeconfig, get/list, snapshot
    ("dralab.cli",),                  # the command line
    ("dralab",),                      # the public facade: may import anything
)

# Layers that may import only the layers named here (besides themselves and _version).
ONLY: dict[str, frozenset[str]] = {
    "dralab.fleet": frozenset({"dralab.api"}),
}


@dataclass(frozen=True, slots=True)
class Edge:
    source: str
    target: str
    line: int
    typing_only: bool


def _modules() -> dict[str, Path]:
    out: dict[str, Path] = {}
    for path in sorted((SOURCE / "dralab").rglob("*.py")):
        parts = list(path.relative_to(SOURCE).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _is_package(module: str) -> bool:
    return MODULES[module].name == "__init__.py"


def _existing(name: str) -> str:
    """The module an imported name lives in (``a.b.func`` -> ``a.b``)."""
    while name not in MODULES and "." in name:
        name = name.rsplit(".", 1)[0]
    return name


def _targets(module: str, node: ast.Import | ast.ImportFrom) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        base = module.split(".")
        if not _is_package(module):
            base.pop()
        base = base[: len(base) - (node.level - 1)]
        prefix = ".".join(base + ([node.module] if node.module else []))
    else:
        prefix = node.module or ""
    # ``from pkg import sub`` imports the submodule; ``from mod import name`` the module.
    return [f"{prefix}.{a.name}" if f"{prefix}.{a.name}" in MODULES else prefix
            for a in node.names]


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _walk(module: str, nodes: list[ast.stmt] | list[ast.AST], typing_only: bool,
          out: list[Edge]) -> None:
    for node in nodes:
        if isinstance(node, ast.Import | ast.ImportFrom):
            for target in _targets(module, node):
                if target == "dralab" or target.startswith("dralab."):
                    out.append(Edge(module, _existing(target), node.lineno, typing_only))
            continue
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            _walk(module, node.body, True, out)
            _walk(module, node.orelse, typing_only, out)
            continue
        _walk(module, list(ast.iter_child_nodes(node)), typing_only, out)


@cache
def edges() -> tuple[Edge, ...]:
    out: list[Edge] = []
    for module, path in MODULES.items():
        _walk(module, ast.parse(path.read_text(encoding="utf-8")).body, False, out)
    return tuple(out)


def layer_of(module: str) -> tuple[int, str]:
    """(rank, layer prefix) of a module: its longest matching prefix wins."""
    best: tuple[int, str] = (-1, "")
    for rank, names in enumerate(LAYERS):
        for name in names:
            if (module == name or module.startswith(name + ".")) and len(name) > len(best[1]):
                best = (rank, name)
    assert best[0] >= 0, f"{module} is in no layer"
    return best


def layer_violations() -> list[str]:
    out = []
    for edge in edges():
        (rank, name), (target_rank, target_name) = layer_of(edge.source), layer_of(edge.target)
        where = f"{MODULES[edge.source].relative_to(SOURCE)}:{edge.line}"
        if target_rank > rank:
            out.append(f"{where}: {edge.source} ({name}) imports higher {edge.target}")
        elif name in ONLY and target_name not in ONLY[name] | {name, "dralab._version"}:
            out.append(f"{where}: {edge.source} ({name}) may import only "
                       f"{sorted(ONLY[name])}, not {edge.target}")
    return out


def cycles(found: Iterable[Edge] | None = None) -> list[list[str]]:
    """Strongly connected groups of modules (size > 1 or a self-import) over every edge,
    typing-only and function-local ones included (``found``: the source's edges)."""
    graph: dict[str, set[str]] = collections.defaultdict(set)
    for edge in edges() if found is None else found:
        graph[edge.source].add(edge.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def connect(v: str) -> None:  # Tarjan; the graph is small enough for recursion
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1 or v in graph[v]:
                groups.append(sorted(group))

    for module in sorted(set(MODULES) | set(graph)):
        if module not in index:
            connect(module)
    return sorted(groups)


def duplicate_public_classes() -> dict[str, list[str]]:
    seen: dict[str, list[str]] = collections.defaultdict(list)
    for module, path in MODULES.items():
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                seen[node.name].append(module)
    return {name: where for name, where in sorted(seen.items()) if len(where) > 1}


def test_every_module_is_in_a_layer() -> None:
    for module in MODULES:
        layer_of(module)


def test_no_lower_layer_imports_a_higher_one() -> None:
    assert layer_violations() == []


def test_no_import_cycles_between_modules() -> None:
    assert cycles() == []


def test_a_circle_through_a_type_only_import_counts() -> None:
    # Guards the guard: the framework <-> runtime circle issue 39 broke had one leg
    # under ``if TYPE_CHECKING:`` and one function-local import would hide another.
    a, b, c = "dralab.scheduler.framework", "dralab.scheduler.runtime", "dralab.scheduler.cycle"
    circle = [Edge(a, b, 1, typing_only=True), Edge(b, c, 2, typing_only=False),
              Edge(c, a, 3, typing_only=False)]
    assert cycles(circle) == [sorted([a, b, c])]
    assert cycles(circle[1:]) == []


def test_no_two_public_classes_share_a_name() -> None:
    assert duplicate_public_classes() == {}


def test_the_checker_sees_function_local_and_typing_only_imports() -> None:
    # Guards the guard: a rule that sees nothing passes trivially.
    found = edges()
    assert any(e.typing_only for e in found)
    assert len({e.source for e in found}) > 100
