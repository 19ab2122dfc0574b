"""Helpers for the upstream acceptance corpus: where the manifests are, how to run the CLI
in-process, how to render scheduler_perf's Go templates and what the test drivers publish.

The manifests under ``tests/data/upstream`` are copied unchanged from upstream (origins in
its README). Whatever the tests add to them (a rendered template, the slices a driver would
publish) is built here, with the upstream source it imitates named in the docstring.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from dralab.cli.main import cli

ROOT = Path(__file__).resolve().parents[2]
UPSTREAM = ROOT / "tests" / "data" / "upstream"
# The folders of this corpus; dra-example-driver/ and k8s-dra-driver-gpu/ have their own tests.
CORPUS_REPOS = ("kubernetes", "kueue", "website")
K8S = UPSTREAM / "kubernetes"
E2E = K8S / "test/e2e/dra/test-driver/deploy/example"
PERF = K8S / "test/integration/scheduler_perf/dra/templates"
PERF_NODE_DEFAULT = K8S / "test/integration/scheduler_perf/templates/node-default.yaml"
HISTORY = K8S / "history"
KUEUE = UPSTREAM / "kueue"
KUEUE_EXAMPLES = KUEUE / "site/static/examples/dra"
WEBSITE = UPSTREAM / "website/content/en/examples/dra"
RENDERED = Path(__file__).resolve().parent / "rendered"

EXIT_CODES = {0, 1, 2, 3}  # 70 is a bug in dralab; nothing else is documented
TEST_DRIVER = "test-driver.cdi.k8s.io"
EXAMPLE_DRIVER = "gpu.example.com"


def corpus_manifests() -> list[Path]:
    """Every manifest of this corpus, in a stable order."""
    return sorted(p for repo in CORPUS_REPOS for p in (UPSTREAM / repo).rglob("*.yaml"))


def rel(path: Path) -> str:
    return path.relative_to(UPSTREAM).as_posix()


# --- running the CLI ------------------------------------------------------------------

@dataclass(frozen=True)
class Run:
    """One in-process ``dralab`` invocation."""

    args: tuple[str, ...]
    code: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


def dralab(*args: str, stdin: str | None = None) -> Run:
    """Run ``dralab ARGS`` in-process. An exception that escapes the CLI counts as exit 70."""
    result = CliRunner().invoke(cli, list(args), input=stdin)
    code = result.exit_code
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        code = 70
    return Run(tuple(args), code, result.stdout, result.stderr)


_ERROR_PREFIXES = ("error: ", "warning: ")
# validate's summary; kinds dralab does not model are counted apart ("; N not checked").
_PROBLEM_SUMMARY = re.compile(r"^\d+ problem\(s\) in \d+ of \d+ object\(s\)(; \d+ not checked)?$")


# validate's last line when nothing is wrong.
_VALID_SUMMARY = re.compile(r"^(\d+ object\(s\) valid \(.*\)|no object checked|no objects found)"
                            r"(; \d+ not checked)?$")


def assert_contract(run: Run) -> None:
    """The CLI contract for any input: a documented exit code, never a traceback, and
    every error reported as one line (stderr lines of an exit-2 run are ``error:``/
    ``warning:`` lines or the validate summary; validate's problem and "not checked"
    lines name a source, whatever the exit code)."""
    assert run.code in EXIT_CODES, f"exit {run.code} for dralab {' '.join(run.args)}:\n{run.output}"
    assert "Traceback" not in run.output, run.output
    if run.args and run.args[0] == "validate" and run.code in (0, 2):
        sources = tuple(a for a in run.args[1:] if a not in ("-f", "--filename"))
        lines = run.stdout.splitlines()
        if run.code == 0 and lines:
            assert _VALID_SUMMARY.match(lines[-1]), f"not a summary: {lines[-1]!r}"
            lines = lines[:-1]
        for line in lines:
            assert line.startswith(sources) or line.startswith(("-", "<stdin>")), (
                f"validate line does not name its source: {line!r}\n{run.stdout}")
    if run.code != 2:
        return
    for line in run.stderr.splitlines():
        assert line.startswith(_ERROR_PREFIXES) or _PROBLEM_SUMMARY.match(line), (
            f"stderr line is not a one-line error: {line!r}\n{run.stderr}")


# --- schedule output ---------------------------------------------------------------------

@dataclass
class PodResult:
    name: str
    namespace: str
    node: str | None
    message: str
    claim_names: dict[str, str]  # pod claim name -> ResourceClaim name (direct or generated)
    extended_claim: str | None
    owner_kind: str | None
    reason: str = ""  # of the PodScheduled=False condition


@dataclass
class ClaimResult:
    name: str
    namespace: str
    devices: list[tuple[str, str, str]]  # (driver, pool, device) per result
    requests: list[str]
    reserved_for: list[str]
    consumed: list[dict[str, str]] = field(default_factory=list)


@dataclass
class Outcome:
    run: Run
    pods: dict[str, PodResult]  # "namespace/name"
    claims: dict[str, ClaimResult]

    def placed(self) -> dict[str, str]:
        return {k: p.node for k, p in self.pods.items() if p.node}

    def pending(self) -> list[str]:
        return sorted(k for k, p in self.pods.items() if not p.node)

    def pod(self, name: str) -> PodResult:
        """The pod named ``name`` (``ns/name`` or a unique bare name)."""
        if name in self.pods:
            return self.pods[name]
        found = [p for k, p in self.pods.items() if k.split("/", 1)[1] == name]
        assert len(found) == 1, f"no single pod {name!r} in {sorted(self.pods)}"
        return found[0]

    def claim(self, name: str) -> ClaimResult:
        if name in self.claims:
            return self.claims[name]
        found = [c for k, c in self.claims.items() if k.split("/", 1)[1] == name]
        assert len(found) == 1, f"no single claim {name!r} in {sorted(self.claims)}"
        return found[0]

    def claims_of(self, pod: PodResult) -> list[ClaimResult]:
        names = list(pod.claim_names.values())
        if pod.extended_claim:
            names.append(pod.extended_claim)
        return [self.claim(f"{pod.namespace}/{n}") for n in names]


def _pod(item: Mapping[str, Any]) -> PodResult:
    meta, spec, status = item["metadata"], item.get("spec", {}), item.get("status", {})
    message = reason = ""
    for cond in status.get("conditions", []):
        if cond.get("type") == "PodScheduled" and cond.get("status") == "False":
            message, reason = cond.get("message", ""), cond.get("reason", "")
    owners = meta.get("ownerReferences") or [{}]
    ext = status.get("extendedResourceClaimStatus") or {}
    return PodResult(
        # Every namespaced object dralab writes names its namespace (issue 10: "generated
        # claims carry their namespace"); a missing one fails the lookups below.
        name=meta["name"], namespace=meta.get("namespace", "<none>"),
        node=spec.get("nodeName") or None, message=message,
        claim_names={
            **{c["name"]: c["resourceClaimName"] for c in spec.get("resourceClaims", [])
               if c.get("resourceClaimName")},
            **{s["name"]: s["resourceClaimName"] for s in status.get("resourceClaimStatuses", [])
               if s.get("resourceClaimName")}},
        extended_claim=ext.get("resourceClaimName"), owner_kind=owners[0].get("kind"),
        reason=reason)


def _claim(item: Mapping[str, Any]) -> ClaimResult:
    meta, status = item["metadata"], item.get("status", {})
    results = ((status.get("allocation") or {}).get("devices") or {}).get("results") or []
    return ClaimResult(
        name=meta["name"], namespace=meta.get("namespace", "<none>"),
        devices=[(r["driver"], r["pool"], r["device"]) for r in results],
        requests=[r["request"] for r in results],
        reserved_for=[r["name"] for r in status.get("reservedFor", [])],
        consumed=[r.get("consumedCapacity", {}) for r in results])


def schedule(*files: Path | str, extra: Sequence[str] = ()) -> Outcome:
    """``dralab schedule -f FILE... -o yaml`` in-process, parsed (contract checked)."""
    args = ["schedule", *(a for f in files for a in ("-f", str(f))), "-o", "yaml", *extra]
    run = dralab(*args)
    assert_contract(run)
    pods: dict[str, PodResult] = {}
    claims: dict[str, ClaimResult] = {}
    if run.code in (0, 1):
        for item in yaml.safe_load(run.stdout)["items"]:
            if item["kind"] == "Pod":
                p = _pod(item)
                pods[f"{p.namespace}/{p.name}"] = p
            elif item["kind"] == "ResourceClaim":
                c = _claim(item)
                claims[f"{c.namespace}/{c.name}"] = c
    return Outcome(run, pods, claims)


# --- scheduler_perf templates ----------------------------------------------------------

_ACTION = re.compile(r"\{\{-?\s*(.*?)\s*-?\}\}")


def render(text: str, index: int, **params: int) -> str:
    """Render one scheduler_perf template for object ``index``.

    scheduler_perf runs each template through Go's text/template with ``.Index`` and a few
    helpers (``Mod``, ``DivideInt``, in ``test/integration/scheduler_perf/util.go``).
    Only those simple actions are supported here; a template with variables, ``range`` or
    ``if`` raises ValueError and is rendered by hand under ``tests/upstream/rendered``.
    """
    values = {".Index": index, **{f".{k}": v for k, v in params.items()}}

    def arg(token: str) -> int:
        if token in values:
            return values[token]
        if token.isdigit():
            return int(token)
        raise ValueError(f"unsupported template argument {token!r}")

    def action(m: re.Match[str]) -> str:
        words = m.group(1).split()
        if len(words) == 1:
            return str(arg(words[0]))
        if len(words) == 3 and words[0] == "Mod":
            return str(arg(words[1]) % arg(words[2]))
        if len(words) == 3 and words[0] == "DivideInt":
            return str(arg(words[1]) // arg(words[2]))
        raise ValueError(f"unsupported template action {m.group(0)!r}")

    return _ACTION.sub(action, text)


def render_all(path: Path, count: int, namespace: str | None = None,
               **params: int) -> list[dict[str, Any]]:
    """Objects ``0..count-1`` of a template, as scheduler_perf's createAny/createPods
    create them (``namespace`` set on each when the op names one)."""
    text = path.read_text()
    docs = []
    for i in range(count):
        doc = yaml.safe_load(render(text, i, **params))
        if namespace is not None:
            doc.setdefault("metadata", {})["namespace"] = namespace
        docs.append(doc)
    return docs


def named_like_apiserver(doc: Mapping[str, Any], index: int) -> dict[str, Any]:
    """``doc`` with ``metadata.generateName`` replaced by a name, as the API server does
    on create (prefix + 5 characters; a counter here so that the test stays readable)."""
    out = yaml.safe_load(yaml.safe_dump(dict(doc)))
    meta = out["metadata"]
    meta["name"] = f"{meta.pop('generateName')}{index:05d}"
    return out


def perf_nodes(with_dra: int, without_dra: int) -> list[dict[str, Any]]:
    """The Nodes of scheduler_perf's ``createNodes`` ops: ``without_dra`` from the default
    node template, then ``with_dra`` from ``node-with-dra-test-driver.yaml``, named as the
    API server names ``generateName`` objects."""
    plain = yaml.safe_load(PERF_NODE_DEFAULT.read_text())
    dra = yaml.safe_load((PERF / "node-with-dra-test-driver.yaml").read_text())
    return ([named_like_apiserver(plain, i) for i in range(without_dra)]
            + [named_like_apiserver(dra, i) for i in range(with_dra)])


def perf_driver_slices(nodes: Iterable[Mapping[str, Any]],
                       max_claims_per_node: int) -> list[dict[str, Any]]:
    """The ResourceSlices of scheduler_perf's ``createResourceDriver`` op for the nodes named
    ``scheduler-perf-dra-*`` (``resourceSlice()`` in ``test/integration/scheduler_perf/dra.go``):
    one slice and pool per node, named after it, with ``max_claims_per_node`` devices
    ``instance-<i>`` (model A100, family GPU, driverVersion 1.2.3, dra.example.com/numa = i,
    memory 1Gi). The binding-condition fields that function also sets are left out: its own
    comment says they are only used by the binding-conditions tests and stripped otherwise."""
    slices = []
    for node in nodes:
        name = node["metadata"]["name"]
        if not name.startswith("scheduler-perf-dra-"):
            continue
        slices.append({
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": name},
            "spec": {
                "driver": TEST_DRIVER, "nodeName": name,
                "pool": {"name": name, "generation": 0, "resourceSliceCount": 1},
                "devices": [{
                    "name": f"instance-{i}",
                    "attributes": {"model": {"string": "A100"}, "family": {"string": "GPU"},
                                   "driverVersion": {"version": "1.2.3"},
                                   "dra.example.com/numa": {"int": i}},
                    "capacity": {"memory": {"value": "1Gi"}},
                } for i in range(max_claims_per_node)],
            },
        })
    return slices


def write_docs(path: Path, docs: Iterable[Mapping[str, Any]]) -> Path:
    path.write_text(yaml.safe_dump_all(list(docs), sort_keys=False))
    return path


# --- drivers -------------------------------------------------------------------------------

def fleet_objects(tmp: Path, name: str, pool: Mapping[str, Any],
                  kinds: Sequence[str] = ("Node", "ResourceSlice", "DeviceClass")) -> Path:
    """``dralab fleet`` for a one-pool Fleet, keeping only ``kinds``; written to ``tmp``."""
    spec = {"apiVersion": "dralab.dev/v1alpha1", "kind": "Fleet", "metadata": {"name": name},
            "spec": {"pools": [dict(pool)]}}
    spec_path = tmp / f"{name}.fleet.yaml"
    spec_path.write_text(yaml.safe_dump(spec))
    run = dralab("fleet", "-f", str(spec_path))
    assert run.code == 0, run.output
    items = [i for i in yaml.safe_load(run.stdout)["items"] if i["kind"] in kinds]
    return write_docs(tmp / f"{name}.objects.yaml", items)
