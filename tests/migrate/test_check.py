"""`dralab migrate check`: the double-advertising trap in a cluster dump."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from dralab.api.io import Document
from dralab.migrate.check import check_dump
from dralab.migrate.clusterdump import read_dump
from dralab.migrate.models import models_from_fleet

from .conftest import EXAMPLE, check_golden, run


@pytest.mark.usefixtures("in_root")
def test_example_dump_golden() -> None:
    code, out, err = run("migrate", "check", "-f", "examples/migrate/cluster-dump.yaml")
    assert code == 1, err
    check_golden("check.txt", out)


def test_example_dump_json() -> None:
    code, out, _ = run("migrate", "check", "-f", str(EXAMPLE / "cluster-dump.yaml"), "-o", "json")
    assert code == 1
    data = json.loads(out)
    nodes = {n["node"]: n for n in data["doubleAdvertisedNodes"]}
    assert set(nodes) == {"l4-node-01", "l4-node-02"}
    # 3 GPUs through the device plugin plus 2 through a claim on a 4-GPU node
    assert (nodes["l4-node-01"]["allocatedDevicePlugin"], nodes["l4-node-01"]["allocatedDRA"],
            nodes["l4-node-01"]["overcommitted"]) == (3, 2, True)
    assert nodes["l4-node-02"]["overcommitted"] is False
    risky = {(w["kind"], w["name"]) for w in data["workloadsAtRisk"]}
    # the untainted H100 training jobs cannot land on the tainted L4 pool
    assert ("Deployment", "inference/vllm-mistral-7b") in risky
    assert not any(kind == "PyTorchJob" for kind, _ in risky)


def _fleet(extended: bool) -> list[Document]:
    doc = yaml.safe_load((EXAMPLE / "fleet.yaml").read_text())
    for pool in doc["spec"]["pools"]:
        pool["gpu"]["extendedResources"] = extended and pool["name"] == "h100"
    models = models_from_fleet(doc, "fleet.yaml")
    return [Document("fleet", i, d) for i, d in enumerate(models.dra, start=1)]


def test_only_dra_is_clean() -> None:
    assert not check_dump(read_dump(_fleet(False))).found


def test_fleet_with_extended_resources_is_double_advertised() -> None:
    result = check_dump(read_dump(_fleet(True)))
    assert [n.node for n in result.nodes] == ["h100-node-01", "h100-node-02", "h100-node-03"]
    assert all(n.device_plugin == {"nvidia.com/gpu": 8} and n.dra == {"gpu": 8}
               for n in result.nodes)


def test_clean_dump_exits_0(tmp_path: Path) -> None:
    from dralab.api.io import dumps, to_list
    path = tmp_path / "dump.yaml"
    path.write_text(dumps(to_list([d.data for d in _fleet(False)])))
    code, out, _ = run("migrate", "check", "-f", str(path))
    assert code == 0 and out.startswith("no node advertises")
