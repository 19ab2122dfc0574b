"""No kind silently ignored (issue 38, part 3): a Fleet given to a verb is expanded as
`dralab fleet` prints it, read by the verbs that model its pools, or refused in one line;
every other kind a verb does not use gets one `warning:` line (count, first file:doc)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from dralab.cli.main import cli

ROOT = Path(__file__).parent.parent.parent
FLEET = ROOT / "examples" / "migrate" / "fleet.yaml"
CLAIM = ROOT / "examples" / "claims" / "two-h100.yaml"
WORKLOADS = ROOT / "examples" / "scheduling" / "dra-workloads.yaml"
AUTOSCALE_FLEET = ROOT / "tests" / "data" / "autoscale" / "fleet.yaml"
AUTOSCALE_PODS = ROOT / "tests" / "data" / "autoscale" / "pending.yaml"

CONFIG_MAPS = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: one, namespace: ml}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: two, namespace: ml}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq}
spec: {}
"""


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(scope="module")
def expanded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`dralab fleet -f FLEET -o yaml`, written to a file."""
    code, out, err = run("fleet", "-f", str(FLEET), "-o", "yaml")
    assert (code, err) == (0, "")
    path = tmp_path_factory.mktemp("fleet") / "expanded.yaml"
    path.write_text(out)
    return path


def fleet_nodes(expanded: Path) -> set[str]:
    items = yaml.safe_load(expanded.read_text())["items"]
    return {i["metadata"]["name"] for i in items if i["kind"] == "Node"}


def test_schedule_places_pods_on_the_fleets_nodes(expanded: Path) -> None:
    code, out, err = run("schedule", "-f", str(FLEET), "-f", str(CLAIM), "-f", str(WORKLOADS))
    assert code == 0, err
    assert err == ""  # nothing ignored: every kind given is used
    pods = [i for i in yaml.safe_load(out)["items"] if i["kind"] == "Pod"]
    assert len(pods) == 3  # two Job pods and the pair
    assert {p["spec"]["nodeName"] for p in pods} <= fleet_nodes(expanded)
    # The pair's two H100s come from the Fleet's generated slices.
    claims = {i["metadata"]["name"]: i for i in yaml.safe_load(out)["items"]
              if i["kind"] == "ResourceClaim"}
    results = claims["two-h100"]["status"]["allocation"]["devices"]["results"]
    assert len(results) == 2 and all(r["pool"].startswith("h100-node-") for r in results)


@pytest.mark.parametrize("output", ["yaml", "table"])
def test_schedule_with_a_fleet_equals_schedule_of_its_expansion(expanded: Path,
                                                               output: str) -> None:
    rest = ["-f", str(CLAIM), "-f", str(WORKLOADS), "-o", output]
    assert run("schedule", "-f", str(FLEET), *rest) == \
        run("schedule", "-f", str(expanded), *rest)


def test_explain_claim_with_a_fleet_equals_its_expansion(expanded: Path) -> None:
    rest = ["-f", str(CLAIM), "-f", str(WORKLOADS)]
    code, out, err = run("explain", "claim", "ml/two-h100", "-f", str(FLEET), *rest)
    assert code == 0 and "h100-node-" in out
    assert (code, out, err) == run("explain", "claim", "ml/two-h100", "-f", str(expanded), *rest)


def test_allocate_with_a_fleet_equals_its_expansion(expanded: Path) -> None:
    node = sorted(n for n in fleet_nodes(expanded) if n.startswith("h100-node-"))[0]
    got = run("allocate", "--node", node, "-f", str(FLEET), "-f", str(CLAIM))
    assert got[0] == 0 and f"pool: {node}" in got[1]
    assert got == run("allocate", "--node", node, "-f", str(expanded), "-f", str(CLAIM))


def test_admit_with_a_fleet_equals_its_expansion(expanded: Path) -> None:
    rest = ["-f", str(CLAIM), "-f", str(WORKLOADS)]
    assert run("admit", "-f", str(FLEET), *rest) == run("admit", "-f", str(expanded), *rest)


def test_a_bad_fleet_is_one_line_naming_file_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "fleet.yaml"
    bad.write_text(FLEET.read_text().replace("count: 3", "count: -3", 1))
    code, out, err = run("schedule", "-f", str(bad), "-f", str(WORKLOADS))
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith(f"error: {bad}")
    assert "count" in err


@pytest.mark.parametrize("verb", [["import"], ["migrate", "check"], ["migrate", "plan"]])
def test_verbs_that_refuse_a_fleet_say_so_in_one_line(verb: list[str]) -> None:
    code, out, err = run(*verb, "-f", str(WORKLOADS), "-f", str(FLEET))
    assert code == 2 and out == ""
    verb_name = " ".join(verb)
    assert err == (f"error: {FLEET} Fleet (dralab.dev/v1alpha1): dralab {verb_name} does not "
                   f"read a Fleet; `dralab fleet -f {FLEET}` prints its Nodes, ResourceSlices "
                   "and DeviceClasses\n")


WARNING = re.compile(r"^warning: dralab (?P<verb>[a-z ]+) does not use (?P<kind>\S+) "
                     r"\((?P<version>[^)]*)\): (?P<count>\d+) objects? ignored "
                     r"\(the first at (?P<where>\S+)\)$")


@pytest.mark.parametrize("verb", [
    ["schedule"], ["explain", "claim", "ml/two-h100"], ["explain", "pod", "ml/pair"],
    ["allocate", "--node", "h100-node-01"],
])
def test_unused_kinds_get_one_warning_each(tmp_path: Path, verb: list[str]) -> None:
    extra = tmp_path / "extra.yaml"
    extra.write_text(CONFIG_MAPS)
    args = ["-f", str(FLEET), "-f", str(CLAIM)] + \
        (["-f", str(WORKLOADS)] if verb[0] != "allocate" else [])
    code, out, err = run(*verb, *args, "-f", str(extra))
    assert (code, out) == run(*verb, *args)[:2]  # the answer does not change
    lines = err.splitlines()
    warnings = [m.groupdict() for line in lines if (m := WARNING.match(line))]
    verb_name = "explain " + verb[1] if verb[0] == "explain" else verb[0]
    assert warnings == [
        {"verb": verb_name, "kind": "ConfigMap", "version": "v1", "count": "2",
         "where": f"{extra}:1"},
        {"verb": verb_name, "kind": "ClusterQueue", "version": "kueue.x-k8s.io/v1beta1",
         "count": "1", "where": f"{extra}:3"},
    ]


def test_admit_uses_kueue_kinds_and_warns_of_the_rest(tmp_path: Path) -> None:
    extra = tmp_path / "extra.yaml"
    extra.write_text(CONFIG_MAPS)
    _code, _out, err = run("admit", "-f", str(FLEET), "-f", str(extra))
    assert err.splitlines()[0] == ("warning: dralab admit does not use ConfigMap (v1): "
                                   f"2 objects ignored (the first at {extra}:1)")
    assert "ClusterQueue" not in err


def test_allocate_warns_of_workloads_it_does_not_expand() -> None:
    code, _out, err = run("allocate", "--node", "h100-node-01", "-f", str(FLEET), "-f",
                         str(CLAIM), "-f", str(WORKLOADS))
    assert code == 0
    assert err.splitlines() == [
        "warning: dralab allocate does not use ResourceClaimTemplate (resource.k8s.io/v1): "
        f"1 object ignored (the first at {WORKLOADS}:1)",
        f"warning: dralab allocate does not use Job (batch/v1): 1 object ignored (the first "
        f"at {WORKLOADS}:2)",
        f"warning: dralab allocate does not use Pod (v1): 1 object ignored (the first at "
        f"{WORKLOADS}:3)",
    ]


def test_autoscale_reads_its_fleet_without_a_warning(tmp_path: Path) -> None:
    extra = tmp_path / "extra.yaml"
    extra.write_text(CONFIG_MAPS)
    base = run("autoscale", "-f", str(AUTOSCALE_FLEET), "-f", str(AUTOSCALE_PODS))
    code, out, err = run("autoscale", "-f", str(AUTOSCALE_FLEET), "-f", str(AUTOSCALE_PODS),
                         "-f", str(extra))
    assert (code, out) == base[:2] and "Fleet" not in err
    assert len([line for line in err.splitlines() if WARNING.match(line)]) == 2


def test_a_fleet_of_another_version_is_not_silently_ignored(tmp_path: Path) -> None:
    other = tmp_path / "fleet.yaml"
    other.write_text(FLEET.read_text().replace("dralab.dev/v1alpha1", "dralab.dev/v1"))
    code, _out, err = run("schedule", "-f", str(other), "-f", str(WORKLOADS))
    assert code == 1  # no nodes: the pods stay pending, and stderr says why
    assert err.splitlines()[0] == (f"warning: dralab schedule does not use Fleet "
                                   f"(dralab.dev/v1): 1 object ignored (the first at {other})")


def test_validate_checks_a_fleet_as_dralab_fleet_reads_it(tmp_path: Path) -> None:
    code, out, err = run("validate", "-f", str(FLEET), "-f", str(CLAIM))
    assert (code, err) == (0, "")
    assert out == "2 object(s) valid (1 Fleet, 1 ResourceClaim)\n"
    bad = tmp_path / "fleet.yaml"
    bad.write_text(FLEET.read_text().replace("count: 3", "count: -3", 1))
    code, out, err = run("validate", "-f", str(bad), "-f", str(CLAIM))
    assert code == 2
    assert out == f"{bad} Fleet migrate-example: spec.pools[0].count: must be at least 1: -3\n"
    assert err == "1 problem(s) in 1 of 2 object(s)\n"


def test_a_fleet_on_stdin_is_read_once_and_expanded(expanded: Path) -> None:
    rest = ["-f", str(CLAIM), "-f", str(WORKLOADS), "-o", "table"]
    result = CliRunner().invoke(cli, ["schedule", "-f", "-", *rest], input=FLEET.read_text())
    assert (result.exit_code, result.stdout) == run("schedule", "-f", str(expanded), *rest)[:2]
