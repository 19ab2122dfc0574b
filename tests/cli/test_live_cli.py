"""Live clusters through the command line, against the loopback fake API server.

``tests/live/fakeapi.py`` answers with kube-apiserver's shapes (discovery, paged lists
with continue tokens, Status objects for 401/403/404/410). One server per module; the
objects are dralab's examples as the API server holds them (server-set fields and
defaults). What is checked: every verb that reads objects gives, on the live cluster,
the answer it gives on `dralab snapshot`'s file of it (schedule byte for byte); files
laid over the cluster replace its objects; the context's namespace; errors as one line
with exit 2; only GET requests; the kubectl-dralab plugin.
"""

from __future__ import annotations

import copy
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from dralab.api.io import read_documents
from dralab.cli.main import cli
from dralab.live import load_cluster_config, read_cluster
from live.fakeapi import (
    CRD_GROUPS,
    FakeCluster,
    example_cluster,
    kubeconfig,
    migrate_cluster,
    serve,
)

ROOT = Path(__file__).parent.parent.parent
AUTOSCALE = ROOT / "tests" / "data" / "autoscale"
MANIFESTS = ROOT / "examples" / "migrate" / "manifests"


@dataclass
class Live:
    fake: FakeCluster
    url: str
    dir: Path
    kubeconfig: str
    snapshot: str  # `dralab snapshot` of the cluster, taken once

    def swap(self, text: str) -> str:
        """Output of a run on the snapshot, with the snapshot named as the cluster is."""
        return text.replace(self.snapshot, "cluster fake")


def run(*args: str, env: dict[str, str | None] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), env=env)
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        result.exception
    return result.exit_code, result.stdout, result.stderr


def _live(tmp: Path, fake: FakeCluster) -> Iterator[Live]:
    with serve(fake) as url:
        config = str(kubeconfig(tmp / "config", url))
        snapshot = str(tmp / "cluster.yaml")
        code, out, err = run("snapshot", "--kubeconfig", config, "-o", snapshot)
        assert (code, err) == (0, ""), err
        assert out.endswith(f"from context fake ({url}); wrote {snapshot}\n")
        yield Live(fake, url, tmp, config, snapshot)


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    fake = FakeCluster(example_cluster(), tokens={"good": set(), "limited": {"resourceslices"}})
    yield from _live(tmp_path_factory.mktemp("live"), fake)


@pytest.fixture(scope="module")
def migrating(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    fake = FakeCluster(migrate_cluster(), crds=set(CRD_GROUPS), page_size=5)
    yield from _live(tmp_path_factory.mktemp("migrate"), fake)


# --- dralab snapshot ---------------------------------------------------------------------

def test_snapshot_holds_exactly_what_was_read(live: Live) -> None:
    read = read_cluster(load_cluster_config(live.kubeconfig))
    docs = read_documents([live.snapshot])
    assert [d.data for d in docs] == [d.data for d in read.documents]
    assert len(docs) == len(live.fake.objects) == 16
    pod = next(d.data for d in docs if d.data["kind"] == "Pod")
    # server-set fields kept, kind and apiVersion added to list items
    assert pod["apiVersion"] == "v1" and pod["metadata"]["uid"]
    assert pod["metadata"]["managedFields"][0]["manager"] == "kubectl-client-side-apply"
    assert pod["status"] == {"phase": "Pending", "qosClass": "Burstable"}
    text = Path(live.snapshot).read_text()
    assert text.startswith(f"# dralab snapshot of context fake ({live.url}): 16 objects\n")
    # kinds in the reader's order, then namespace and name
    kinds = [d.data["kind"] for d in docs]
    assert kinds[:5] == ["Namespace", "Namespace", "Node", "Node", "Pod"]


def test_snapshot_does_not_depend_on_the_servers_order(live: Live) -> None:
    objects = live.fake.objects
    live.fake.objects = objects[::-1]
    try:
        code, out, err = run("snapshot", "--kubeconfig", live.kubeconfig, "-o", "-")
    finally:
        live.fake.objects = objects
    assert code == 0
    assert out == Path(live.snapshot).read_text()
    assert err == f"read 16 object(s) of 11 kind(s) from context fake ({live.url})\n"


def test_snapshot_never_writes_over_its_inputs(live: Live, tmp_path: Path) -> None:
    for out, message in ((live.kubeconfig, f"error: -o/--output {live.kubeconfig}: is the "
                                           f"input {live.kubeconfig}"),
                         (str(live.dir), f"error: -o/--output {live.dir}: contains the "
                                         f"input {live.kubeconfig}"),
                         (str(tmp_path), f"error: -o/--output {tmp_path}: is a directory")):
        code, stdout, err = run("snapshot", "--kubeconfig", live.kubeconfig, "-o", out)
        assert (code, stdout) == (2, "")
        assert err.startswith(message) and len(err.splitlines()) == 1, err
    assert yaml.safe_load(Path(live.kubeconfig).read_text())["kind"] == "Config"


# --- every verb: the live cluster gives the snapshot's answer ------------------------------

def test_schedule_from_the_snapshot_is_byte_equal(live: Live) -> None:
    for output in ("yaml", "table"):
        on_cluster = run("schedule", "--kubeconfig", live.kubeconfig, "-o", output)
        offline = run("schedule", "-f", live.snapshot, "-o", output)
        assert on_cluster[:2] == offline[:2]
        assert on_cluster[2] == live.swap(offline[2])
    code, out, _ = on_cluster
    assert code == 0
    rows = {line.split()[0]: line.split()[1:] for line in out.splitlines()[1:]}
    assert rows["ml/pair"] == ["h100-node-01", "Scheduled",
                               "gpus=gpu.nvidia.com/h100-node-01/gpu-0,"
                               "gpu.nvidia.com/h100-node-01/gpu-1"]
    # the queued Job stays suspended (Kueue's): no pods of it; finetune's two are placed
    assert "sample-job" not in out
    assert out.count("ml/finetune-") == 2


@pytest.mark.parametrize("args", [
    ("explain", "pod", "pair", "-n", "ml"),
    ("explain", "pod", "job/finetune", "-n", "ml"),
    ("explain", "claim", "two-h100", "-n", "ml"),
    ("explain", "workload", "default/sample-job-x7k2p"),
    ("admit",),
    ("admit", "-o", "json"),
    ("import",),
], ids=lambda a: "-".join(a[:2]))
def test_verb_on_the_cluster_answers_as_on_its_snapshot(live: Live, args: tuple[str, ...]
                                                        ) -> None:
    on_cluster = run(*args, "--kubeconfig", live.kubeconfig)
    offline = run(*args, "-f", live.snapshot)
    assert on_cluster[0] == offline[0] and on_cluster[0] in (0, 1)
    assert on_cluster[1] == live.swap(offline[1]) and on_cluster[1]
    assert on_cluster[2] == live.swap(offline[2])


def test_an_invalid_cluster_object_is_named_as_in_the_snapshot(live: Live, tmp_path: Path
                                                               ) -> None:
    claim = next(o for o in live.fake.objects if o["kind"] == "ResourceClaim")
    broken = copy.deepcopy(claim)
    broken["metadata"]["name"] = "broken"
    broken["spec"]["devices"]["requests"][0]["exactly"]["count"] = -1
    live.fake.objects.append(broken)
    try:
        err = _one_line_error(run("schedule", "--kubeconfig", live.kubeconfig))
        snapshot = tmp_path / "broken.yaml"
        assert run("snapshot", "--kubeconfig", live.kubeconfig, "-o", str(snapshot))[0] == 0
    finally:
        live.fake.objects.remove(broken)
    # the document number is the object's place in the read, and in the snapshot
    assert err == _one_line_error(run("schedule", "-f", str(snapshot))).replace(
        str(snapshot), "cluster fake")
    assert err == ("error: cluster fake:10 ResourceClaim ml/broken: spec.devices.requests[0]."
                   "exactly.count: Invalid value: -1: must be greater than zero\n")


def test_autoscale_takes_its_fleet_from_files_over_the_cluster(live: Live) -> None:
    err = _one_line_error(run("autoscale", "--kubeconfig", live.kubeconfig))
    assert err == ("error: dralab autoscale reads its node pools from a Fleet "
                   "(dralab.dev/v1alpha1), which cluster fake cannot hold: give one with -f "
                   "FLEET alongside the cluster\n")
    files = ["-f", str(AUTOSCALE / "fleet.yaml"), "-f", str(AUTOSCALE / "pending.yaml")]
    on_cluster = run("autoscale", *files, "--kubeconfig", live.kubeconfig, "-o", "yaml")
    offline = run("autoscale", "-f", live.snapshot, *files, "-o", "yaml")
    assert on_cluster == (offline[0], offline[1], live.swap(offline[2]))
    decisions = yaml.safe_load(on_cluster[1])
    # pending.yaml's pods fit the cluster's two GPU nodes, but for the 16-GPU claim
    assert [p["pod"] for p in decisions["pending"]] == ["ml/giant"], decisions


@pytest.mark.parametrize("args", [
    ("migrate", "inventory"),
    ("migrate", "inventory", "-o", "json"),
    ("migrate", "check"),
    ("migrate", "plan"),
], ids=lambda a: "-".join(a))
def test_migrate_on_the_cluster_answers_as_on_its_snapshot(migrating: Live,
                                                           args: tuple[str, ...]) -> None:
    on_cluster = run(*args, "--kubeconfig", migrating.kubeconfig)
    offline = run(*args, "-f", migrating.snapshot)
    assert on_cluster[0] == offline[0]
    assert on_cluster[1] == migrating.swap(offline[1]) and on_cluster[1]
    assert on_cluster[2] == migrating.swap(offline[2])


def test_migrate_reads_the_operator_workloads_of_a_cluster(migrating: Live) -> None:
    code, out, _ = run("migrate", "inventory", "--kubeconfig", migrating.kubeconfig)
    assert code == 0
    kinds = {line.split()[0] for line in out.splitlines()[1:]}
    assert {"PyTorchJob", "LeaderWorkerSet", "InferenceService", "Deployment"} <= kinds
    code, out, _ = run("migrate", "check", "--kubeconfig", migrating.kubeconfig)
    assert code == 1 and "OVERCOMMITTED" in out  # the l4 pool advertises twice


def test_convert_verifies_on_the_cluster(migrating: Live, tmp_path: Path) -> None:
    manifests = ["-f", str(MANIFESTS / "pytorch-8gpu-job.yaml"),
                 "-f", str(MANIFESTS / "mig-inference-deployment.yaml")]
    on_cluster = run("migrate", "convert", *manifests, "-o", str(tmp_path / "a"),
                     "--kubeconfig", migrating.kubeconfig)
    offline = run("migrate", "convert", *manifests, "-o", str(tmp_path / "b"),
                  "--verify", migrating.snapshot)
    assert on_cluster[0] == offline[0]
    assert "verify on cluster fake:" in on_cluster[1]
    assert on_cluster[1].replace(str(tmp_path / "a"), "OUT") == \
        migrating.swap(offline[1]).replace(str(tmp_path / "b"), "OUT")
    # one verification model only
    code, out, err = run("migrate", "convert", *manifests, "-o", str(tmp_path / "c"),
                         "--verify", migrating.snapshot, "--context", "fake")
    assert (code, out) == (2, "") and len(err.splitlines()) == 1
    assert "--verify FILE and --kubeconfig/--context each name the verification model" in err
    assert not (tmp_path / "c").exists()


# --- files over the cluster; where the cluster comes from ---------------------------------

WHAT_IF = """
apiVersion: v1
kind: Pod
metadata: {name: pair, namespace: ml}
spec:
  containers:
  - name: main
    image: registry.example.com/pair:1
    resources: {requests: {cpu: "500"}}
---
apiVersion: v1
kind: Pod
metadata: {name: extra, namespace: ml}
spec:
  containers:
  - name: main
    image: registry.example.com/extra:1
    resources: {requests: {cpu: "1"}}
"""


def test_files_replace_cluster_objects_of_the_same_identity(live: Live, tmp_path: Path
                                                            ) -> None:
    what_if = tmp_path / "what-if.yaml"
    what_if.write_text(WHAT_IF)
    code, out, err = run("schedule", "--kubeconfig", live.kubeconfig, "-f", str(what_if),
                         "-o", "table")
    assert code == 1
    rows = {line.split()[0]: line for line in out.splitlines()[1:]}
    assert "Insufficient cpu" in rows["ml/pair"]  # the file's pair, not the cluster's
    assert rows["ml/extra"].split()[1] != "<none>"
    assert sum(name.startswith("ml/finetune-") for name in rows) == 2  # the cluster's Job
    assert "given twice" not in err
    # as the snapshot and the file read together: the file's pair in the cluster's place
    offline = run("schedule", "-f", live.snapshot, "-f", str(what_if))
    assert offline[:2] == run("schedule", "--kubeconfig", live.kubeconfig, "-f",
                              str(what_if))[:2]
    assert f"warning: Pod ml/pair is given twice ({live.snapshot}:5 and {what_if}:1)" \
        in offline[2]


def test_current_context_without_flags(live: Live, tmp_path: Path) -> None:
    env = {"KUBECONFIG": live.kubeconfig, "HOME": str(tmp_path)}
    assert run("schedule", env=env) == run("schedule", "--kubeconfig", live.kubeconfig)
    # --context picks another context of the same file; a bare NAME is looked up in the
    # context's namespace, as kubectl does
    code, out, _ = run("explain", "pod", "pair", "--context", "fake-ml", env=env)
    assert (code, out.splitlines()[0]) == (0, "Pod ml/pair: scheduled on h100-node-01")
    code, out, _ = run("explain", "claim", "two-h100", "--context", "fake-ml", env=env)
    assert (code, out.splitlines()[0]) == (0, "ResourceClaim ml/two-h100: allocated")
    # without it, "default": no such pod there
    code, _, err = run("explain", "pod", "pair", env=env)
    assert code == 2 and "default/pair" in err


def _one_line_error(result: tuple[int, str, str]) -> str:
    code, out, err = result
    assert (code, out) == (2, ""), result
    assert len(err.splitlines()) == 1 and err.startswith("error: "), err
    assert "Traceback" not in err
    return err


@pytest.mark.parametrize(("args", "message"), [
    (("--context", "expired"), "error: unauthorized (401) at {url}: the credentials of "
                               "context 'expired' are invalid or expired; log in again or "
                               "refresh them: Unauthorized"),
    (("--context", "limited"), 'error: forbidden (403) at {url}: cannot list resource '
                               '"resourceslices" in API group "resource.k8s.io" at the cluster '
                               'scope; grant list on it (see examples/rbac/dralab-readonly.yaml)'),
    (("--context", "nowhere"), "error: cannot reach the Kubernetes API server at "
                               "http://127.0.0.1:9: "),
    (("--context", "nope"), "error: kubeconfig {config}: context 'nope' not found (contexts: "
                            "expired, fake, fake-ml, limited, nowhere)"),
], ids=["401", "403", "unreachable", "unknown-context"])
@pytest.mark.parametrize("verb", [("schedule",), ("explain", "pod", "pair"), ("admit",),
                                  ("migrate", "plan"), ("snapshot", "-o", "-")],
                         ids=lambda v: v[0])
def test_cluster_problems_are_one_line_and_exit_2(live: Live, verb: tuple[str, ...],
                                                  args: tuple[str, ...], message: str) -> None:
    err = _one_line_error(run(*verb, "--kubeconfig", live.kubeconfig, *args))
    assert err.startswith(message.format(url=live.url, config=live.kubeconfig)), err


def test_no_cluster_anywhere(tmp_path: Path) -> None:
    env = {"KUBECONFIG": None, "HOME": str(tmp_path), "KUBERNETES_SERVICE_HOST": None}
    for verb in (("schedule",), ("import",), ("migrate", "inventory"), ("snapshot", "-o", "-")):
        err = _one_line_error(run(*verb, env=env))
        assert err.startswith("error: no cluster to read: no -f given and no kubeconfig "
                              "found (--kubeconfig, KUBECONFIG, ~/.kube/config) nor an "
                              "in-cluster service account"), err
    err = _one_line_error(run("schedule", "--kubeconfig", str(tmp_path / "none"), env=env))
    assert err == f"error: --kubeconfig {tmp_path / 'none'}: no such file\n"
    # -f alone never looks for a cluster
    code, _, _ = run("schedule", "-f", str(ROOT / "examples" / "scheduling" / "cluster.yaml"),
                     env=env)
    assert code in (0, 1)


def test_kueue_verbs_need_kueue_without_files(live: Live) -> None:
    live.fake.crds.discard("kueue.x-k8s.io")
    try:
        for verb in (("admit",), ("explain", "workload", "default/sample-job-x7k2p")):
            err = _one_line_error(run(*verb, "--kubeconfig", live.kubeconfig))
            assert err == (f"error: the cluster at {live.url} does not serve API group "
                           "'kueue.x-k8s.io' (Kueue's CRDs are not installed)\n")
        # files may bring the queues: the cluster's Jobs and nodes, the files' Kueue objects
        queues = ROOT / "tests" / "data" / "kueue" / "admin-single-clusterqueue-setup.yaml"
        code, out, _ = run("admit", "--kubeconfig", live.kubeconfig, "-f", str(queues))
        assert code == 0 and "kind: List" in out
    finally:
        live.fake.crds.add("kueue.x-k8s.io")


def test_an_expired_continue_token_restarts_the_list(live: Live) -> None:
    live.fake.expire_once.update({"nodes", "resourceslices"})
    live.fake.page_size = 1
    before = len(live.fake.requests)
    try:
        on_cluster = run("schedule", "--kubeconfig", live.kubeconfig)
    finally:
        live.fake.expire_once.clear()
        live.fake.page_size = 2
    assert on_cluster[:2] == run("schedule", "-f", live.snapshot)[:2]
    listed = [p for _, p in live.fake.requests[before:] if p == "/api/v1/nodes"]
    # two nodes a page each: page 1, page 2 refused (410 Expired), then pages 1 and 2 again
    assert len(listed) == 4


def test_only_get_requests_are_made(live: Live, migrating: Live) -> None:
    run("schedule", "--kubeconfig", live.kubeconfig)
    run("migrate", "plan", "--kubeconfig", migrating.kubeconfig)
    for fake in (live.fake, migrating.fake):
        assert fake.requests
        assert {method for method, _ in fake.requests} == {"GET"}
        assert all(p in ("/api", "/apis") or p.startswith(("/api/v1", "/apis/"))
                   for _, p in fake.requests)


def test_help_names_the_cluster_options_and_exit_status() -> None:
    for verb in (("schedule",), ("explain", "pod"), ("explain", "claim"),
                 ("explain", "workload"), ("admit",), ("autoscale",), ("import",),
                 ("migrate", "inventory"), ("migrate", "check"), ("migrate", "plan"),
                 ("migrate", "convert"), ("snapshot",)):
        code, out, _ = run(*verb, "--help")
        text = " ".join(out.split())
        assert code == 0 and "--kubeconfig PATH" in text and "--context NAME" in text, verb
        assert "Exit 2 when the cluster cannot be read" in text or \
            "2 on a usage error, an output that cannot be written, or a cluster that " \
            "cannot be read" in text, verb


# --- kubectl dralab ----------------------------------------------------------------------

def _script(name: str) -> str:
    path = Path(sys.executable).parent / name
    assert path.is_file() and os.access(path, os.X_OK), f"{path}: pip install -e . first"
    return str(path)


def test_kubectl_plugin_reads_the_current_context(live: Live, tmp_path: Path) -> None:
    env = {**os.environ, "KUBECONFIG": live.kubeconfig, "HOME": str(tmp_path)}
    args = ["explain", "pod", "pair", "-n", "ml"]
    plugin = subprocess.run([_script("kubectl-dralab"), *args], env=env, capture_output=True,
                            text=True, timeout=120, check=False)
    direct = subprocess.run([_script("dralab"), *args], env=env, capture_output=True,
                            text=True, timeout=120, check=False)
    assert (plugin.returncode, plugin.stdout, plugin.stderr) == \
        (direct.returncode, direct.stdout, direct.stderr)
    assert plugin.returncode == 0
    assert plugin.stdout.startswith("Pod ml/pair: scheduled on h100-node-01\n")
    usage = subprocess.run([_script("kubectl-dralab"), "schedule", "--bogus"], env=env,
                           capture_output=True, text=True, timeout=120, check=False)
    assert usage.returncode == 2
    assert usage.stderr.startswith("error: No such option")
    assert usage.stderr.endswith(" (see 'kubectl dralab schedule -h')\n")
